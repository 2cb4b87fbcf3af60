// Package proc reads the Linux process table from /proc: the stat fields
// flameox needs to own a workload's process tree — parent, process group,
// start time (with the pid, an identity that survives pid reuse), resident
// set and zombie state.
//
// It imports nothing of flameox.
package proc

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
)

// Info is one process as /proc/PID/stat describes it.
type Info struct {
	PID, PPID, PGRP int
	Comm            string // the command name (at most 15 bytes, as the kernel keeps it)
	Start           uint64 // clock ticks after boot
	RSS             int64  // resident set, bytes
	Zombie          bool
}

var pageSize = int64(os.Getpagesize())

// Scan reads every process's stat line. Processes that exit while being
// read are skipped.
func Scan() (map[int]Info, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("proc: read /proc: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("proc: read /proc: %w", err)
	}
	out := make(map[int]Info, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, ok := Read(pid); ok {
			out[pid] = p
		}
	}
	return out, nil
}

// Read reads one process; false when it is gone or unreadable.
func Read(pid int) (Info, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Info{}, false
	}
	return ParseStat(pid, b)
}

// ParseStat reads proc(5) stat fields. The command name may hold spaces
// and parentheses, so fields are counted after its last ')'.
func ParseStat(pid int, b []byte) (Info, bool) {
	i := bytes.LastIndexByte(b, ')')
	o := bytes.IndexByte(b, '(')
	if i < 0 || o < 0 || o > i {
		return Info{}, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); field N is f[N-3].
	if len(f) < 22 || len(f[0]) == 0 {
		return Info{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	rss, err4 := strconv.ParseInt(string(f[21]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return Info{}, false
	}
	return Info{PID: pid, PPID: ppid, PGRP: pgrp, Comm: string(b[o+1 : i]), Start: start, RSS: rss * pageSize, Zombie: f[0][0] == 'Z'}, true
}

// AddDescendants adds to in every process of procs whose chain of parents
// reaches a member of in.
func AddDescendants(procs map[int]Info, in map[int]bool) {
	children := map[int][]int{}
	for pid, p := range procs {
		children[p.PPID] = append(children[p.PPID], pid)
	}
	queue := make([]int, 0, len(in))
	for pid := range in {
		queue = append(queue, pid)
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !in[c] {
				in[c] = true
				queue = append(queue, c)
			}
		}
	}
}

// Live returns the live (non-zombie) processes of a tree and remembers
// them in known. A tree is the members of its process groups, every
// process in known (pid and start time, so a reused pid is never taken
// for one), and their descendants; known keeps a process that left its
// group (setsid) or was orphaned once it has been seen. The calling
// process is never a member.
func Live(procs map[int]Info, known map[int]uint64, groups ...int) []Info {
	in := map[int]bool{}
	for pid, p := range procs {
		if start, ok := known[pid]; (ok && start == p.Start) || slices.Contains(groups, p.PGRP) {
			in[pid] = true
		}
	}
	AddDescendants(procs, in)
	self := os.Getpid()
	var out []Info
	for pid := range in {
		p := procs[pid]
		if pid == self || p.Zombie {
			continue
		}
		known[pid] = p.Start
		out = append(out, p)
	}
	return out
}
