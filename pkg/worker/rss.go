package worker

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

var pageSize = int64(os.Getpagesize())

// groupWatch samples the resident memory of a process group. Finding the
// group's members means reading every /proc/<pid>/stat, which costs
// milliseconds on a busy host, so it does that at most once per rescan and
// otherwise reads only the members it knows. A member started since the
// last rescan is missed until the next one; the kernel's maxrss at exit
// still covers the leader.
type groupWatch struct {
	pgid    int
	members []int
	rescan  time.Duration
	last    time.Time
	buf     []byte
}

func newGroupWatch(pgid int) *groupWatch {
	return &groupWatch{pgid: pgid, members: []int{pgid}, rescan: time.Second, buf: make([]byte, 1024)}
}

// rss returns the group's resident bytes, 0 when /proc cannot tell.
func (g *groupWatch) rss() int64 {
	if time.Since(g.last) >= g.rescan {
		g.last = time.Now()
		if pids, ok := g.scan(); ok {
			g.members = pids
		}
	}
	var total int64
	kept := g.members[:0]
	for _, pid := range g.members {
		grp, pages, ok := g.stat(pid)
		if ok && grp == g.pgid {
			total += pages * pageSize
			kept = append(kept, pid)
		}
	}
	g.members = kept
	return total
}

func (g *groupWatch) stat(pid int) (pgrp int, rssPages int64, ok bool) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	k, _ := f.Read(g.buf)
	f.Close()
	return parseStat(g.buf[:k])
}

// scan lists every process in the group.
func (g *groupWatch) scan() ([]int, bool) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, false
	}
	var pids []int
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if grp, _, ok := g.stat(pid); ok && grp == g.pgid {
			pids = append(pids, pid)
		}
	}
	return pids, true
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
