package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/proc"
	"github.com/flameox/flameox/internal/unit"
)

// Process ownership timings.
const (
	// Grace is how long a tree has between TERM and KILL.
	Grace = 3 * time.Second
	// Settle bounds each wait for the console pipes to drain after the main
	// process exits: once before the rest of the tree is ended, once after.
	Settle = 2 * time.Second
	// pollEvery is the /proc and output-directory polling period.
	pollEvery = 100 * time.Millisecond
)

// monitor enforces one request's budget across its executions.
type monitor struct {
	budget    Budget
	deadline  time.Time // zero: none
	started   time.Time
	outputDir string
	baseline  int64
	progress  io.Writer
	label     string
	lastShown time.Time
	// mu orders the progress line and the tee on a shared terminal.
	mu      sync.Mutex
	lineUp  bool // a progress line is on screen
	midLine bool // the tee's last byte was not a newline
}

// execResult is how one execution ended.
type execResult struct {
	exitCode  *int
	signal    string
	startErr  error
	cancelled bool
	limit     *evidence.LimitReceipt
	ended     []*endedProc // processes still running after the main process exited
	endErr    error
}

// ok reports whether the execution completed with an accepted status.
func (r *execResult) ok(accept []int) bool {
	if r.startErr != nil || r.cancelled || r.limit != nil || r.exitCode == nil {
		return false
	}
	for _, a := range accept {
		if *r.exitCode == a {
			return true
		}
	}
	return false
}

func (r *execResult) status() string {
	switch {
	case r.exitCode != nil:
		return fmt.Sprintf("exit status %d", *r.exitCode)
	case r.signal != "":
		return "signal " + r.signal
	}
	return "no exit status"
}

// run executes argv under a shepherd (see shepherd.go), in its own
// process group, with stdout and stderr piped into the request's console
// streams, enforcing the budget and ctx. It returns only after every
// process of the tree has ended and the pipes are closed.
func (m *monitor) run(ctx context.Context, argv, env []string, dir string, stdout, stderr *stream) *execResult {
	res := &execResult{}
	outR, outW, err := os.Pipe()
	if err != nil {
		res.startErr = err
		return res
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		res.startErr = err
		return res
	}
	sh, err := startShepherded(argv, env, dir, outW, errW)
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		res.startErr = err
		return res
	}
	tr := newTree(sh.cmd.Process.Pid, sh.pid)

	var copies sync.WaitGroup
	drained := make(chan struct{})
	for _, p := range []struct {
		r *os.File
		s *stream
	}{{outR, stdout}, {errR, stderr}} {
		copies.Go(func() { _, _ = io.Copy(p.s, p.r) })
	}
	go func() { copies.Wait(); close(drained) }()

	var timeout <-chan time.Time
	if !m.deadline.IsZero() {
		t := time.NewTimer(time.Until(m.deadline))
		defer t.Stop()
		timeout = t.C
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	m.poll(tr, res) // an already crossed free-space floor stops at once
loop:
	for res.limit == nil {
		select {
		case <-sh.exited:
			break loop
		case <-ctx.Done():
			res.cancelled = true
			break loop
		case <-timeout:
			res.limit = &evidence.LimitReceipt{Name: LimitTimeout, Value: m.budget.TimeoutSeconds,
				Observed: time.Since(m.started).Seconds(), Unit: unit.Seconds}
		case <-tick.C:
			m.poll(tr, res)
		}
	}
	if res.cancelled || res.limit != nil {
		_, res.endErr = tr.end(Grace)
		<-sh.exited
	}
	// The main process has exited. Let the pipes drain, end whatever of
	// the tree is left (it may hold the pipes open), then stop reading.
	settle(drained)
	ended, err := tr.end(Grace)
	if err != nil && res.endErr == nil {
		res.endErr = err
	}
	if !res.cancelled && res.limit == nil {
		res.ended = ended
	}
	sh.release()
	if !settle(drained) {
		// A process outside the tree holds a pipe: stop reading it.
		_ = outR.SetReadDeadline(time.Now())
		_ = errR.SetReadDeadline(time.Now())
		<-drained
	}
	outR.Close()
	errR.Close()

	if sh.status == nil {
		if res.endErr == nil {
			res.endErr = errors.New(sh.lost)
		}
		return res
	}
	ws := *sh.status
	switch {
	case ws.Exited():
		code := ws.ExitStatus()
		res.exitCode = &code
	case ws.Signaled():
		res.signal = unix.SignalName(ws.Signal())
		if res.signal == "" {
			res.signal = fmt.Sprintf("signal %d", int(ws.Signal()))
		}
	}
	return res
}

// settle waits up to Settle for the console pipes to reach EOF.
func settle(drained <-chan struct{}) bool {
	t := time.NewTimer(Settle)
	defer t.Stop()
	select {
	case <-drained:
		return true
	case <-t.C:
		return false
	}
}

// poll checks the memory, output-growth and free-space limits once.
func (m *monitor) poll(tr *tree, res *execResult) {
	var rss int64
	if m.budget.MaxMemoryBytes > 0 || m.progress != nil {
		if procs, err := proc.Scan(); err == nil {
			rss = tr.rss(procs)
		}
	}
	if b := m.budget.MaxMemoryBytes; b > 0 && rss > b {
		res.limit = &evidence.LimitReceipt{Name: LimitMemory, Value: b, Observed: rss, Unit: unit.Bytes}
		return
	}
	if b := m.budget.MaxOutputBytes; b > 0 {
		if size, err := treeSize(m.outputDir); err == nil && size-m.baseline > b {
			res.limit = &evidence.LimitReceipt{Name: LimitOutput, Value: b, Observed: size - m.baseline, Unit: unit.Bytes}
			return
		}
	}
	if b := m.budget.MinFreeBytes; b > 0 {
		var st unix.Statfs_t
		if err := unix.Statfs(m.outputDir, &st); err == nil {
			if free := int64(st.Bavail) * st.Bsize; free < b {
				res.limit = &evidence.LimitReceipt{Name: LimitFreeSpace, Value: b, Observed: free, Unit: unit.Bytes}
				return
			}
		}
	}
	m.show(rss)
}

// show prints a one-line progress report on a terminal, from the second
// second on, at most once a second.
func (m *monitor) show(rss int64) {
	if m.progress == nil || time.Since(m.started) < 2*time.Second || time.Since(m.lastShown) < time.Second {
		return
	}
	m.lastShown = time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.midLine {
		// Keep the workload's unfinished line; progress goes below it.
		fmt.Fprint(m.progress, "\n")
		m.midLine = false
	}
	fmt.Fprintf(m.progress, "\r\033[Kflameox-capture: %s running %ds, rss %d MiB", m.label,
		int(time.Since(m.started).Seconds()), rss>>20)
	m.lineUp = true
}

// clear removes the progress line, if one was shown.
func (m *monitor) clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.progress != nil && m.lineUp {
		fmt.Fprint(m.progress, "\r\033[K")
		m.lineUp = false
	}
}
