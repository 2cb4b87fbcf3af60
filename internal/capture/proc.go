package capture

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flameox/flameox/internal/proc"
)

// tree is one execution's process tree: every descendant of its shepherd
// (which, as a subreaper, keeps even detached ones), its process group,
// and every process seen in it before.
type tree struct {
	root      int // the shepherd, never a member
	rootStart uint64
	pgid      int
	known     map[int]uint64 // pid → start time of every process seen in the tree
}

func newTree(root, pid int) *tree {
	t := &tree{root: root, pgid: pid, known: map[int]uint64{}}
	if procs, err := proc.Scan(); err == nil {
		if p, ok := procs[pid]; ok {
			t.known[pid] = p.Start
		}
		if p, ok := procs[root]; ok {
			t.rootStart = p.Start
		}
	}
	return t
}

// members returns the tree's live processes in procs and remembers them.
func (t *tree) members(procs map[int]proc.Info) []proc.Info {
	if p, ok := procs[t.root]; ok && p.Start == t.rootStart {
		in := map[int]bool{t.root: true}
		proc.AddDescendants(procs, in)
		for pid := range in {
			if pid != t.root {
				t.known[pid] = procs[pid].Start
			}
		}
	}
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

// endedProc is one process the capture ended, and the last signal it was
// sent.
type endedProc struct {
	pid    int
	comm   string
	signal syscall.Signal
}

// signal sends sig to the process group and to every live member, and
// records each in ended.
func (t *tree) signal(sig syscall.Signal, ended map[int]*endedProc) (int, error) {
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
		if e := ended[p.PID]; e != nil {
			e.signal = sig
		} else {
			ended[p.PID] = &endedProc{pid: p.PID, comm: p.Comm, signal: sig}
		}
	}
	return len(live), nil
}

// end terminates the whole tree: TERM, up to grace for it to exit, then
// KILL until nothing is left. It returns the processes that were alive,
// each with the last signal it needed. Zombies count as gone: they hold
// no resources but a table slot, and the shepherd reaps them.
func (t *tree) end(grace time.Duration) ([]*endedProc, error) {
	ended := map[int]*endedProc{}
	list := func() []*endedProc {
		return slices.SortedFunc(maps.Values(ended), func(a, b *endedProc) int { return a.pid - b.pid })
	}
	n, err := t.signal(syscall.SIGTERM, ended)
	if err != nil || n == 0 {
		return list(), err
	}
	if t.waitGone(grace) {
		return list(), nil
	}
	// KILL repeatedly: a process may fork between scans.
	for range 50 {
		if _, err := t.signal(syscall.SIGKILL, ended); err != nil {
			return list(), err
		}
		if t.waitGone(100 * time.Millisecond) {
			return list(), nil
		}
	}
	return list(), fmt.Errorf("capture: process group %d survived SIGKILL", t.pgid)
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

// describeEnded lists ended processes for a note: pid, command name and
// signal, the first maxListed of them.
func describeEnded(ended []*endedProc) string {
	const maxListed = 20
	var parts []string
	for i, e := range ended {
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(ended)-maxListed))
			break
		}
		parts = append(parts, fmt.Sprintf("pid %d (%s) by %s", e.pid, e.comm, unix.SignalName(e.signal)))
	}
	return strings.Join(parts, ", ")
}
