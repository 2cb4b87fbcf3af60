// Package worker runs unsafe or heavy native converters (perf script, for
// one) as isolated subprocesses under a typed protocol:
//
//   - Inputs: the worker receives only the files it declares, as inherited
//     descriptors 3, 4, … (InputPath names them /dev/fd/N); no other path
//     is passed. Its environment is exactly Spec.Env, its directory Spec.Dir.
//   - Budgets: wall time and resident memory are enforced here, at the
//     harness boundary, not by the worker. On a breach the worker's whole
//     process group is killed and Run returns LIMIT_EXCEEDED with a limit
//     receipt (name, value, observed, unit).
//   - Output: stdout streams to the caller's consumer; stderr is retained up
//     to StderrBytes, replacement-decoded, with retained and omitted counts.
//   - Acceptance: Run succeeds only when the worker exited 0 and the
//     consumer accepted the whole stream. A consumer therefore parses as the
//     rows arrive but commits nothing until Run returns nil. A nonzero exit
//     or a signal is DECODE_FAILURE carrying the exit code or signal and the
//     retained stderr.
//
// It imports evidence, proc and durable.
package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
)

// StderrBytes is how much of a worker's stderr is retained.
const StderrBytes = 4 << 10

// Spec declares one worker run.
type Spec struct {
	Name    string     // converter identity, used in messages, e.g. "perf script"
	Path    string     // absolute path of the executable
	Args    []string   // argv after the program name; inputs appear as InputPath(i)
	Inputs  []*os.File // inherited as descriptors 3, 4, …
	Env     []string   // the complete environment; nothing else is inherited
	Dir     string     // working directory; "" means a fresh empty temporary one
	Timeout time.Duration
	MaxRSS  int64 // bytes, summed over the worker's process group; 0: unbounded
	// Poll is how often resident memory is sampled; 0 means 50ms.
	Poll time.Duration
}

// InputPath is how a worker's argv names its i-th declared input.
func InputPath(i int) string { return fmt.Sprintf("/dev/fd/%d", 3+i) }

// Stderr is a worker's retained diagnostic stream.
type Stderr struct {
	Text     string // at most StderrBytes of the stream's start, invalid UTF-8 replaced
	Retained int64
	Omitted  int64
}

// Result describes a finished worker.
type Result struct {
	ExitCode int    // -1 when a signal ended it
	Signal   string // "" unless a signal ended it
	Stderr   Stderr
	PeakRSS  int64 // bytes: the largest of the sampled group total and the kernel's maxrss
	Elapsed  time.Duration
}

// Details renders the result's termination and stderr for a failure.
func (r *Result) Details() evidence.Object {
	d := evidence.Object{
		"stderr":                r.Stderr.Text,
		"stderr_retained_bytes": r.Stderr.Retained,
		"stderr_omitted_bytes":  r.Stderr.Omitted,
	}
	if r.Signal != "" {
		d["signal"] = r.Signal
	} else {
		d["exit_code"] = int64(r.ExitCode)
	}
	return d
}

// boundedBuffer keeps the first max bytes written and counts the rest.
type boundedBuffer struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	omitted int64
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.max - len(b.buf)
	if room > len(p) {
		room = len(p)
	}
	b.buf = append(b.buf, p[:room]...)
	b.omitted += int64(len(p) - room)
	return len(p), nil
}

func (b *boundedBuffer) stderr() Stderr {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stderr{Text: replaceInvalid(b.buf), Retained: int64(len(b.buf)), Omitted: b.omitted}
}

// replaceInvalid decodes b as UTF-8, replacing each invalid byte with
// U+FFFD (a sequence cut at the retention bound is invalid too).
func replaceInvalid(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}

// limitFailure builds LIMIT_EXCEEDED with its receipt.
func limitFailure(s *Spec, name string, value, observed any, unit string, res *Result) *evidence.Failure {
	d := res.Details()
	d["worker"] = s.Name
	d["limit"] = evidence.Object{"name": name, "value": value, "observed": observed, "unit": unit}
	return &evidence.Failure{Code: evidence.CodeLimitExceeded,
		Message: fmt.Sprintf("%s exceeded %s=%v (observed %v %s); its process group was killed", s.Name, name, value, observed, unit),
		Details: d}
}

// Run starts the worker, streams its stdout to consume and waits for it.
// It returns nil only when the worker exited 0 and consume returned nil
// having read stdout to its end. The Result is returned in every case
// where the worker started.
func Run(ctx context.Context, s *Spec, consume func(io.Reader) error) (*Result, error) {
	if s.Path == "" || !strings.HasPrefix(s.Path, "/") {
		return nil, evidence.Failf(evidence.CodeInternal, "worker %s: executable path %q is not absolute", s.Name, s.Path)
	}
	dir := s.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "flameox-worker-")
		if err != nil {
			return nil, evidence.Wrap(evidence.CodeIOFailure, err, "worker %s: scratch directory", s.Name)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	// Both streams are plain pipes read here, so Wait returns when the
	// leader exits even if a descendant still holds them open.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "worker %s: pipe", s.Name)
	}
	defer pr.Close()
	er, ew, err := os.Pipe()
	if err != nil {
		pw.Close()
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "worker %s: pipe", s.Name)
	}
	defer er.Close()
	cmd := &exec.Cmd{
		Path:        s.Path,
		Args:        append([]string{s.Path}, s.Args...),
		Env:         append([]string{}, s.Env...), // non-nil: never the parent's environment
		Dir:         dir,
		Stdin:       nil,
		Stdout:      pw,
		Stderr:      ew,
		ExtraFiles:  s.Inputs,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	start := time.Now()
	err = cmd.Start()
	pw.Close()
	ew.Close()
	if err != nil {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("worker %s could not start: %v", s.Name, err), Err: err}
	}
	pgid := cmd.Process.Pid
	killGroup := func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
	errBuf := &boundedBuffer{max: StderrBytes}
	stderrDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(errBuf, er)
		close(stderrDone)
	}()
	// When the leader exits, descendants that outlive it are part of the
	// worker: they are killed, which also closes any stream they hold.
	var werr error
	exited := make(chan struct{})
	go func() {
		werr = cmd.Wait()
		killGroup()
		close(exited)
	}()

	// The watchdog enforces the budgets; its verdict is read after Wait.
	var (
		breachMu sync.Mutex
		breach   string // "timeout", "rss", "cancel"
		peak     int64
	)
	setBreach := func(b string) {
		breachMu.Lock()
		if breach == "" {
			breach = b
		}
		breachMu.Unlock()
		killGroup()
	}
	done := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		poll := s.Poll
		if poll <= 0 {
			poll = 50 * time.Millisecond
		}
		tick := time.NewTicker(poll)
		defer tick.Stop()
		gw := newGroupWatch(pgid)
		var deadline <-chan time.Time
		if s.Timeout > 0 {
			t := time.NewTimer(s.Timeout)
			defer t.Stop()
			deadline = t.C
		}
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				setBreach("cancel")
				return
			case <-deadline:
				setBreach("timeout")
				return
			case <-tick.C:
				if rss := gw.rss(); rss > 0 {
					breachMu.Lock()
					if rss > peak {
						peak = rss
					}
					breachMu.Unlock()
					if s.MaxRSS > 0 && rss > s.MaxRSS {
						setBreach("rss")
						return
					}
				}
			}
		}
	}()

	// Consume stdout; on a consumer failure the worker is killed, and the
	// rest of stdout is drained so the worker never blocks on a full pipe.
	cerr := consume(pr)
	if cerr != nil {
		killGroup()
	}
	rest, _ := io.Copy(io.Discard, pr)
	if cerr == nil && rest > 0 {
		cerr = evidence.Failf(evidence.CodeInternal, "worker %s: consumer stopped with %d bytes of output unread", s.Name, rest)
	}
	<-exited
	<-stderrDone
	close(done)
	watch.Wait()

	res := &Result{ExitCode: -1, Stderr: errBuf.stderr(), Elapsed: time.Since(start)}
	st := cmd.ProcessState
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal().String()
	} else {
		res.ExitCode = st.ExitCode()
	}
	breachMu.Lock()
	res.PeakRSS = peak
	breachMu.Unlock()
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok && ru.Maxrss*1024 > res.PeakRSS {
		res.PeakRSS = ru.Maxrss * 1024
	}
	switch {
	case breach == "cancel":
		return res, evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "worker %s", s.Name)
	case breach == "timeout":
		return res, limitFailure(s, "timeout_seconds", s.Timeout.Seconds(), res.Elapsed.Seconds(), "s", res)
	case breach == "rss" || (s.MaxRSS > 0 && res.PeakRSS > s.MaxRSS):
		// The kernel's maxrss also catches a spike between two samples.
		return res, limitFailure(s, "max_memory_bytes", s.MaxRSS, res.PeakRSS, "bytes", res)
	}
	var exitErr *exec.ExitError
	if werr != nil && !errors.As(werr, &exitErr) {
		return res, evidence.Wrap(evidence.CodeInternal, werr, "worker %s: wait", s.Name)
	}
	if cerr != nil && res.Signal == syscall.SIGKILL.String() {
		return res, cerr // the kill was ours, after the consumer refused the output
	}
	if res.Signal != "" || res.ExitCode != 0 {
		how := fmt.Sprintf("exited with status %d", res.ExitCode)
		if res.Signal != "" {
			how = "was killed by signal " + res.Signal
		}
		d := res.Details()
		d["worker"] = s.Name
		if cerr != nil {
			d["consumer_error"] = cerr.Error()
		}
		return res, &evidence.Failure{Code: evidence.CodeDecodeFailure,
			Message: fmt.Sprintf("%s %s; its output was not accepted", s.Name, how), Details: d}
	}
	if cerr != nil {
		return res, cerr
	}
	return res, nil
}
