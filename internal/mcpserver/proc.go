package mcpserver

import (
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/flameox/flameox/internal/proc"
)

// tree is every process one request started: the process group of each
// stage and every descendant seen while its parent lived, including ones
// that left the group (setsid) or were orphaned since. Membership is
// remembered by (pid, start time), so a reused pid is never signalled.
type tree struct {
	mu      sync.Mutex
	pgids   []int
	known   map[int]uint64
	leaders map[int]uint64 // the stages themselves
}

func newTree() *tree { return &tree{known: map[int]uint64{}, leaders: map[int]uint64{}} }

// add records a started stage; each stage leads its own process group.
func (t *tree) add(pid int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pgids = append(t.pgids, pid)
	if p, ok := proc.Read(pid); ok {
		t.known[pid] = p.Start
		t.leaders[pid] = p.Start
	}
}

// leadersExited reports whether every stage process has exited; their
// descendants may live on.
func (t *tree) leadersExited() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for pid, start := range t.leaders {
		if p, ok := proc.Read(pid); ok && p.Start == start && !p.Zombie {
			return false
		}
	}
	return true
}

// live returns the tree's live (non-zombie) processes and remembers them.
func (t *tree) live() []proc.Info {
	procs, _ := proc.Scan()
	if procs == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// A group with no member is gone for good: its number may be reused by
	// an unrelated group, so it is forgotten rather than signalled.
	groups := map[int]bool{}
	for _, p := range procs {
		groups[p.PGRP] = true
	}
	t.pgids = slices.DeleteFunc(t.pgids, func(g int) bool { return !groups[g] })
	return proc.Live(procs, t.known, t.pgids...)
}

// watch refreshes the tree's membership every interval until stop closes,
// so that a descendant orphaned mid-run is still known at the end.
func (t *tree) watch(interval time.Duration, stop <-chan struct{}) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			t.live()
		}
	}
}

// term asks each stage's process group to stop. Only the groups: a stage
// such as flameox-capture ends its own workload tree and records the
// cancellation; the sweep below catches whatever it leaves.
func (t *tree) term() {
	t.live()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, g := range t.pgids {
		_ = syscall.Kill(-g, syscall.SIGTERM)
		_ = syscall.Kill(-g, syscall.SIGCONT) // a stopped process acts on TERM only once continued
	}
}

// sweep kills every live process of the tree until none is left, and
// returns how many survived (0 unless SIGKILL itself failed). A process may
// fork between scans, so it repeats.
func (t *tree) sweep() int {
	for range 50 {
		left := t.live()
		t.mu.Lock()
		for _, g := range t.pgids {
			_ = syscall.Kill(-g, syscall.SIGKILL)
		}
		t.mu.Unlock()
		if len(left) == 0 {
			return 0
		}
		for _, p := range left {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return len(t.live())
}

// prSetChildSubreaper is prctl(2)'s PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// orphans ends processes that left their request's tree before the tree
// saw them: a descendant that detached (setsid) and whose parent exited
// between two scans. The server is a child subreaper, so such a process is
// reparented to it rather than to init, and is found as a child of the
// server that is no stage. Which request it came from is unknown, so it is
// ended when no request is in flight: nothing outlives the requests.
var orphans struct {
	once   sync.Once
	mu     sync.Mutex
	active int
	stages map[int]bool // stage pids that os/exec has yet to reap
}

// beginRequest marks a request in flight and makes the server a subreaper.
func beginRequest() {
	orphans.once.Do(func() {
		_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
		orphans.stages = map[int]bool{}
	})
	orphans.mu.Lock()
	orphans.active++
	orphans.mu.Unlock()
}

// stageStarted and stageReaped bracket a stage's life as os/exec's child.
func stageStarted(pid int) {
	orphans.mu.Lock()
	orphans.stages[pid] = true
	orphans.mu.Unlock()
}

func stageReaped(pid int) {
	orphans.mu.Lock()
	delete(orphans.stages, pid)
	orphans.mu.Unlock()
}

// endRequest marks a request done; the last one out ends every orphan.
func endRequest() {
	orphans.mu.Lock()
	defer orphans.mu.Unlock()
	orphans.active--
	if orphans.active > 0 {
		return
	}
	self := os.Getpid()
	for range 50 {
		procs, _ := proc.Scan()
		t := newTree()
		var children []int
		for pid, p := range procs {
			if p.PPID == self && !orphans.stages[pid] {
				children = append(children, pid)
				t.known[pid] = p.Start
			}
		}
		if len(children) == 0 {
			return
		}
		for _, p := range t.live() {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
		// Reap them: they are the server's children now.
		for _, pid := range children {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
	}
}
