package capture

import (
	"fmt"
	"syscall"
	"time"

	"github.com/flameox/flameox/internal/proc"
)

// tree is one execution's process tree: its process group plus every
// descendant of its main process, including descendants that left the
// group (setsid) and were seen while their parent lived.
type tree struct {
	pgid  int
	known map[int]uint64 // pid → start time of every process seen in the tree
}

func newTree(pid int) *tree {
	t := &tree{pgid: pid, known: map[int]uint64{}}
	if procs, err := proc.Scan(); err == nil {
		if p, ok := procs[pid]; ok {
			t.known[pid] = p.Start
		}
	}
	return t
}

// members returns the tree's live processes in procs and remembers them.
func (t *tree) members(procs map[int]proc.Info) []proc.Info {
	return proc.Live(procs, t.known, t.pgid)
}

// rss sums the resident set sizes of the tree's live processes. Shared
// pages count once per process that maps them.
func (t *tree) rss(procs map[int]proc.Info) int64 {
	var n int64
	for _, p := range t.members(procs) {
		n += p.RSS
	}
	return n
}

// signal sends sig to the process group and to every live member.
func (t *tree) signal(sig syscall.Signal) (int, error) {
	procs, err := proc.Scan()
	if err != nil {
		return 0, err
	}
	live := t.members(procs)
	if len(live) == 0 {
		return 0, nil
	}
	_ = syscall.Kill(-t.pgid, sig)
	for _, p := range live {
		_ = syscall.Kill(p.PID, sig)
		if sig == syscall.SIGTERM {
			// A stopped process acts on TERM only once continued.
			_ = syscall.Kill(p.PID, syscall.SIGCONT)
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
		procs, err := proc.Scan()
		if err == nil && len(t.members(procs)) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
