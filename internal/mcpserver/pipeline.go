package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/wire"
)

// stderrBound is how much of each stage's stderr a failure reports: the
// last bytes, where a flameox command writes its one-line failure.
const stderrBound = 4 << 10

// tail keeps the last n bytes written to it and counts the rest.
type tail struct {
	mu    sync.Mutex
	n     int
	buf   []byte
	total int64
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.n {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.n:]...)
	}
	return len(p), nil
}

func (t *tail) report() evidence.Object {
	t.mu.Lock()
	defer t.mu.Unlock()
	return evidence.Object{
		"text":           strings.ToValidUTF8(string(t.buf), "\uFFFD"),
		"retained_bytes": len(t.buf),
		"omitted_bytes":  t.total - int64(len(t.buf)),
	}
}

// lastLine is the last non-empty line of the retained stderr.
func (t *tail) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "\uFFFD")), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// stage is one running command.
type stage struct {
	spec   stageSpec
	path   string
	cmd    *exec.Cmd
	stderr *tail
}

// exit describes how a stage ended, as a JSON object.
func (s *stage) exit() evidence.Object {
	st := s.cmd.ProcessState
	switch {
	case st == nil:
		return evidence.Object{"started": false}
	case st.Exited():
		return evidence.Object{"code": st.ExitCode()}
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return evidence.Object{"signal": ws.Signal().String()}
	}
	return evidence.Object{"status": st.String()}
}

func (s *stage) report() evidence.Object {
	return evidence.Object{"stage": s.spec.bin, "argv": append([]string{s.spec.bin}, s.spec.args...),
		"exit": s.exit(), "stderr": s.stderr.report()}
}

// outcome is what running a job's stages produced, besides its blocks.
type outcome struct {
	stages    []*stage
	start     *evidence.Failure // the stages could not all be started
	cancelled bool              // the request's context ended first
	survivors int               // processes that outlived SIGKILL (should be 0)
}

// runner starts the composed binaries.
type runner struct {
	binDir string
	grace  time.Duration // SIGTERM → SIGKILL on cancellation
}

// resolve finds a binary in the bin dir.
func (r *runner) resolve(bin string) (string, *evidence.Failure) {
	p := filepath.Join(r.binDir, bin)
	st, err := os.Stat(p)
	if err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return p, nil
	}
	code := evidence.CodeInternal
	if bin == binCapture {
		// Capture tools stay listed without flameox-capture; the call says why.
		code = evidence.CodeProviderUnavailable
	}
	return "", &evidence.Failure{Code: code,
		Message:  fmt.Sprintf("%s is not installed in %s", bin, r.binDir),
		Location: evidence.Location{Path: p},
		Retry:    &evidence.Retry{Action: fmt.Sprintf("install %s beside flameox-mcp, or set FLAMEOX_BIN_DIR to the directory holding the flameox commands", bin)}}
}

// run executes the job's stages connected by OS pipes, each in its own
// process group, feeding the last stage's output (and, for a capture, the
// first stage's blocks as they pass) to c. When ctx ends, every process of
// the request is ended: SIGTERM to each group, then SIGKILL to every
// remaining member after the grace period. Nothing outlives run.
func (r *runner) run(ctx context.Context, j *job, c *collector) *outcome {
	out := &outcome{}
	if ctx.Err() != nil {
		out.cancelled = true // nothing starts for a request already given up
		return out
	}
	beginRequest()
	defer endRequest()
	for _, s := range j.stages {
		p, f := r.resolve(s.bin)
		if f != nil {
			out.start = f
			return out
		}
		out.stages = append(out.stages, &stage{spec: s, path: p, stderr: &tail{n: stderrBound}})
	}
	t := newTree()
	var (
		in             *os.File // what the next stage reads; nil: /dev/null
		teeSrc, teeDst *os.File
	)
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				_ = f.Close()
			}
		}
	}
	for i, s := range out.stages {
		rd, wr, err := os.Pipe()
		if err != nil {
			closeAll(in, teeSrc, teeDst)
			out.start = evidence.Wrap(evidence.CodeIOFailure, err, "pipe for %s", s.spec.bin)
			break
		}
		s.cmd = exec.Command(s.path, s.spec.args...)
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		// Failures name arguments as MCP does (format, top), not as flags.
		// Not for capture, whose environment its workload inherits; the
		// server has validated a capture's arguments before it runs.
		s.cmd.Env = append(os.Environ(), s.spec.env...)
		if s.spec.bin != binCapture {
			s.cmd.Env = append(s.cmd.Env, param.EnvSpelling+"="+param.SpellingRequest)
		}
		if in != nil {
			s.cmd.Stdin = in
		} else if i == 0 && j.stdin != nil {
			s.cmd.Stdin = bytes.NewReader(j.stdin) // kept blocks, replayed
		}
		s.cmd.Stdout = wr
		s.cmd.Stderr = s.stderr
		// A descendant holding stderr open must not stall Wait forever.
		s.cmd.WaitDelay = r.grace
		err = s.cmd.Start()
		closeAll(in, wr)
		in = nil
		if err != nil {
			closeAll(rd, teeSrc, teeDst)
			s.cmd = nil
			out.start = evidence.Wrap(evidence.CodeInternal, err, "start %s", s.spec.bin)
			break
		}
		t.add(s.cmd.Process.Pid)
		stageStarted(s.cmd.Process.Pid)
		in = rd
		if i == 0 && j.tee && len(out.stages) > 1 {
			nr, nw, err := os.Pipe()
			if err != nil {
				closeAll(rd)
				out.start = evidence.Wrap(evidence.CodeIOFailure, err, "pipe after %s", s.spec.bin)
				break
			}
			teeSrc, teeDst, in = rd, nw, nr
		}
	}
	var wg sync.WaitGroup
	for _, s := range out.stages {
		if s.cmd != nil {
			wg.Go(func() {
				_ = s.cmd.Wait()
				stageReaped(s.cmd.Process.Pid)
			})
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	stopWatch := make(chan struct{})
	go t.watch(500*time.Millisecond, stopWatch)

	// The watcher ends the request's processes when ctx ends, or at once
	// when not every stage could start.
	abort := make(chan struct{})
	ended := make(chan struct{})
	watcher := make(chan struct{})
	if out.start != nil {
		closeAll(in, teeSrc, teeDst)
		in, teeSrc, teeDst = nil, nil, nil
		close(abort)
	}
	go func() {
		defer close(watcher)
		select {
		case <-ctx.Done():
			out.cancelled = true
		case <-abort:
		case <-ended:
			return
		}
		t.term()
		// Wait for the stages themselves, not for their pipes: a descendant
		// holding one open is the sweep's business.
		deadline := time.Now().Add(r.grace)
		for !t.leadersExited() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		t.sweep()
	}()

	var readers sync.WaitGroup
	if teeSrc != nil {
		readers.Go(func() { tee(teeSrc, teeDst, c) })
	}
	if in != nil {
		readers.Go(func() { c.read(in) })
	}
	<-done
	// The stages have exited. Whatever they left running is swept now, which
	// also closes any pipe end a stray descendant held.
	t.sweep()
	readers.Wait()
	close(ended)
	<-watcher
	close(stopWatch)
	out.survivors = t.sweep()
	return out
}

// tee forwards the capture stage's output to flameox-decode and hands
// each line's block to c as it passes. Bytes are forwarded as they are
// read, before they are split into lines, so decode sees them unchanged
// and at once. If decode stops reading, the rest is still read (and kept),
// so the capture can finish and its blocks survive.
func tee(src, dst *os.File, c *collector) {
	defer src.Close()
	fw := &forwarder{dst: dst, ok: true}
	lr := lines.NewReader(io.TeeReader(src, fw), wire.DefaultMaxLine)
	for {
		l, err := lr.Next()
		if err != nil {
			break
		}
		// The bound counts the newline, as wire.Reader's does.
		c.teeLine(l.Bytes, l.End()-l.Offset > wire.DefaultMaxLine)
	}
	if fw.ok {
		_ = dst.Close()
	}
}

// forwarder writes to dst until a write fails, then closes it and drops
// the rest without failing the read.
type forwarder struct {
	dst *os.File
	ok  bool
}

func (f *forwarder) Write(p []byte) (int, error) {
	if f.ok {
		if _, err := f.dst.Write(p); err != nil {
			f.ok = false
			_ = f.dst.Close()
		}
	}
	return len(p), nil
}

// read collects the last stage's blocks until EOF.
func (c *collector) read(src *os.File) {
	defer src.Close()
	rd := wire.NewReader(src)
	for {
		raw, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			c.malformed(err)
			_, _ = io.Copy(io.Discard, src)
			return
		}
		c.add(raw.Obj, false)
	}
}
