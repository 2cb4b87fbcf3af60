package worker

import (
	"bytes"
	"os"
	"strconv"
)

var pageSize = int64(os.Getpagesize())

// groupRSS sums the resident memory of every process in process group
// pgid, read from /proc/<pid>/stat (field 5 is the group, field 24 the
// resident pages). Processes that vanish while being read are skipped.
// It returns 0 when /proc is unavailable.
func groupRSS(pgid int) int64 {
	d, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0
	}
	var total int64
	buf := make([]byte, 1024)
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		f, err := os.Open("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		k, _ := f.Read(buf)
		f.Close()
		grp, rss, ok := parseStat(buf[:k])
		if ok && grp == pgid {
			total += rss * pageSize
		}
	}
	return total
}

// parseStat reads the process group and resident pages from a stat line.
// The command name (field 2) may hold spaces and parentheses, so fields
// are counted from the last ')'.
func parseStat(b []byte) (pgrp int, rssPages int64, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(b[i+1:])
	// fields[0] is field 3 (state): pgrp is field 5, rss field 24.
	if len(fields) < 22 {
		return 0, 0, false
	}
	g, err1 := strconv.Atoi(string(fields[2]))
	r, err2 := strconv.ParseInt(string(fields[21]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return g, r, true
}
