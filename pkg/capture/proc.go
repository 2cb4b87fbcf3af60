package capture

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// procInfo is what capture reads about one process from /proc/PID/stat.
type procInfo struct {
	pid, ppid, pgrp int
	start           uint64 // clock ticks after boot; with pid, a stable identity
	rss             int64  // bytes
	zombie          bool
}

var pageSize = int64(os.Getpagesize())

// scanProcs reads every process's stat line. Processes that exit while
// being read are skipped.
func scanProcs() (map[int]procInfo, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("capture: read /proc: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("capture: read /proc: %w", err)
	}
	out := make(map[int]procInfo, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		if p, ok := parseStat(pid, b); ok {
			out[pid] = p
		}
	}
	return out, nil
}

// parseStat reads proc(5) stat fields. The command name may hold spaces
// and parentheses, so fields are counted after its last ')'.
func parseStat(pid int, b []byte) (procInfo, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); field N is f[N-3].
	if len(f) < 22 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	rss, err4 := strconv.ParseInt(string(f[21]), 10, 64)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return procInfo{}, false
	}
	return procInfo{pid: pid, ppid: ppid, pgrp: pgrp, start: start, rss: rss * pageSize, zombie: f[0][0] == 'Z'}, true
}

// tree is one execution's process tree: its process group plus every
// descendant of its main process, including descendants that left the
// group (setsid) and were seen while their parent lived.
type tree struct {
	pgid  int
	known map[int]uint64 // pid → start time of every process seen in the tree
}

func newTree(pid int) *tree {
	t := &tree{pgid: pid, known: map[int]uint64{}}
	if procs, err := scanProcs(); err == nil {
		if p, ok := procs[pid]; ok {
			t.known[pid] = p.start
		}
	}
	return t
}

// members returns the tree's live processes in procs and remembers them.
func (t *tree) members(procs map[int]procInfo) []procInfo {
	in := map[int]bool{}
	for pid, p := range procs {
		if p.pgrp == t.pgid {
			in[pid] = true
		}
		if start, ok := t.known[pid]; ok && start == p.start {
			in[pid] = true
		}
	}
	children := map[int][]int{}
	for pid, p := range procs {
		children[p.ppid] = append(children[p.ppid], pid)
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
	self := os.Getpid()
	var out []procInfo
	for pid := range in {
		p := procs[pid]
		if pid == self || p.zombie {
			continue
		}
		t.known[pid] = p.start
		out = append(out, p)
	}
	return out
}

// rss sums the resident set sizes of the tree's live processes. Shared
// pages count once per process that maps them.
func (t *tree) rss(procs map[int]procInfo) int64 {
	var n int64
	for _, p := range t.members(procs) {
		n += p.rss
	}
	return n
}

// signal sends sig to the process group and to every live member.
func (t *tree) signal(sig syscall.Signal) (int, error) {
	procs, err := scanProcs()
	if err != nil {
		return 0, err
	}
	live := t.members(procs)
	if len(live) == 0 {
		return 0, nil
	}
	_ = syscall.Kill(-t.pgid, sig)
	for _, p := range live {
		_ = syscall.Kill(p.pid, sig)
		if sig == syscall.SIGTERM {
			// A stopped process acts on TERM only once continued.
			_ = syscall.Kill(p.pid, syscall.SIGCONT)
		}
	}
	return len(live), nil
}

// end terminates the whole tree: TERM, up to grace for it to exit, then
// KILL until nothing is left. It returns how many processes were alive
// when it started. Zombies count as gone: they hold no resources but a
// table slot, and their parent (or init) reaps them.
func (t *tree) end(grace time.Duration) (int, error) {
	n, err := t.signal(syscall.SIGTERM)
	if err != nil || n == 0 {
		return n, err
	}
	if t.waitGone(grace) {
		return n, nil
	}
	// KILL repeatedly: a process may fork between scans.
	for range 50 {
		if _, err := t.signal(syscall.SIGKILL); err != nil {
			return n, err
		}
		if t.waitGone(100 * time.Millisecond) {
			return n, nil
		}
	}
	return n, fmt.Errorf("capture: process group %d survived SIGKILL", t.pgid)
}

func (t *tree) waitGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		procs, err := scanProcs()
		if err == nil && len(t.members(procs)) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
