package capture

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/evidence"
)

// TestDetachedDescendantsEnded: processes that leave the workload's tree
// by every usual means (setsid, a double fork, Node's detached spawn) are
// still ended when the workload exits, before Run returns, and the capture
// block names each one with the signal that ended it.
func TestDetachedDescendantsEnded(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv func(pidfile string) []string
	}{
		{"setsid", func(f string) []string {
			return []string{"bash", "-c", `setsid sleep 300 & echo $! > "$1"; sleep 0.3`, "bash", f}
		}},
		{"double fork", func(f string) []string {
			// The middle process exits at once: the sleep is orphaned
			// before any poll could see its parent.
			return []string{"bash", "-c", `( setsid sleep 300 & echo $! > "$1" ); sleep 0.3`, "bash", f}
		}},
		{"node detached spawn", func(f string) []string {
			return []string{"node", "-e", `const c = require("child_process").spawn("sleep", ["300"], {detached: true, stdio: "ignore"});
require("fs").writeFileSync(process.argv[1], String(c.pid)); c.unref();`, f}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			p := testProvider(nil, func(pl *Plan, _ string) { pl.Command = tc.argv(pidfile) })
			res := run(t, context.Background(), p, []string{"unused"}, Options{})
			if res.err != nil {
				t.Fatal(res.err)
			}
			b, err := os.ReadFile(pidfile)
			if err != nil {
				t.Fatal(err)
			}
			pid := pidsIn(t, b)[0]
			if !gone(pid) {
				defer syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("detached sleep %d still runs after the capture returned", pid)
			}
			if res.capture.Outcome != evidence.OutcomeCompleted {
				t.Errorf("outcome %q", res.capture.Outcome)
			}
			notes := strings.Join(res.capture.Notes, "\n")
			if !strings.Contains(notes, "ended 1 process(es)") || !strings.Contains(notes, "(sleep) by SIGTERM") {
				t.Errorf("notes %q do not record the ended sleep", res.capture.Notes)
			}
		})
	}
}

// TestEscapedWriterCannotChangeEvidence: a detached child appending to the
// output after the workload exits is ended before the outputs are hashed,
// so the artifact still names the file's bytes afterwards.
func TestEscapedWriterCannotChangeEvidence(t *testing.T) {
	p := testProvider(outRole, func(pl *Plan, _ string) {
		out := filepath.Join(pl.OutputDir, "a.out")
		pl.Command = []string{"bash", "-c", `setsid bash -c 'while :; do echo x >> "$1"; sleep 0.01; done' bash "$1" & sleep 0.3`, "bash", out}
	})
	res := run(t, context.Background(), p, []string{"unused"}, Options{})
	if res.err != nil {
		t.Fatal(res.err)
	}
	arts := res.artifacts(t)
	if len(arts) != 1 {
		t.Fatalf("%d artifacts", len(arts))
	}
	time.Sleep(200 * time.Millisecond)
	if id, err := hashSettled(arts[0].Path, arts[0].Size); err != nil || id != arts[0].ID {
		t.Fatalf("output changed after the capture: %v", err)
	}
}

// syncBuffer is a buffer safe to read while the capture writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTeeShowsConsoleWhileRunning: with Options.Tee the workload's stdout
// and stderr reach it as they are written, before the workload exits, and
// the capture block still keeps them.
func TestTeeShowsConsoleWhileRunning(t *testing.T) {
	release := filepath.Join(t.TempDir(), "release")
	p := testProvider(nil, func(pl *Plan, _ string) {
		pl.Command = []string{"bash", "-c", `echo to-stdout; echo to-stderr >&2; while [ ! -e "$1" ]; do sleep 0.02; done`, "bash", release}
	})
	var tee syncBuffer
	done := make(chan *result, 1)
	go func() { done <- run(t, context.Background(), p, []string{"unused"}, Options{Tee: &tee}) }()
	for i := 0; !strings.Contains(tee.String(), "to-stdout\n") || !strings.Contains(tee.String(), "to-stderr\n"); i++ {
		if i == 500 {
			_ = os.WriteFile(release, nil, 0o600)
			<-done
			t.Fatalf("tee holds %q while the workload runs", tee.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.capture.Console["stdout"].Text != "to-stdout\n" || res.capture.Console["stderr"].Text != "to-stderr\n" {
		t.Errorf("console %q %q", res.capture.Console["stdout"].Text, res.capture.Console["stderr"].Text)
	}
}

// TestShepherdReleasesConsole: the shepherd, alive while a detached
// descendant lives, does not hold the console pipes, so a capture whose
// leftover process let go of them is not kept waiting for them to settle.
func TestShepherdReleasesConsole(t *testing.T) {
	p := testProvider(nil, func(pl *Plan, _ string) {
		pl.Command = []string{"bash", "-c", `setsid sleep 300 </dev/null >/dev/null 2>&1 & sleep 0.2`}
	})
	start := time.Now()
	res := run(t, context.Background(), p, []string{"unused"}, Options{})
	if res.err != nil {
		t.Fatal(res.err)
	}
	if d := time.Since(start); d >= Settle {
		t.Fatalf("the capture took %v", d)
	}
	if !strings.Contains(strings.Join(res.capture.Notes, "\n"), "(sleep) by SIGTERM") {
		t.Errorf("notes %q", res.capture.Notes)
	}
}

// TestShepherdDeathKillsWorkload: a shepherd killed from outside takes
// the workload's exit status with it; the capture claims none, says so,
// and still leaves nothing running.
func TestShepherdDeathKillsWorkload(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	p := testProvider(nil, func(pl *Plan, _ string) {
		pl.Command = []string{"bash", "-c", `echo $$ $PPID > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 300`, "bash", pidfile}
	})
	done := make(chan *result, 1)
	go func() { done <- run(t, context.Background(), p, []string{"unused"}, Options{}) }()
	var pids []int
	for i := 0; pids == nil; i++ {
		if b, err := os.ReadFile(pidfile); err == nil {
			pids = pidsIn(t, b)
		} else if i == 1000 {
			t.Fatal("the workload never published its pids")
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	workload, shepherd := pids[0], pids[1]
	if err := syscall.Kill(shepherd, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		// Its status died with the shepherd: none is claimed and a note
		// says why. Killed in the instant between the workload's exec and
		// the shepherd's "started" report (a loaded machine meets it), the
		// start itself is what failed, and the failure names the shepherd.
		notes := strings.Join(res.capture.Notes, "\n")
		if res.capture.Outcome == evidence.OutcomeStartFailed {
			notes = fmt.Sprint(res.err)
		} else if res.capture.Outcome != evidence.OutcomeWorkloadFailed {
			t.Errorf("outcome %q", res.capture.Outcome)
		}
		if res.capture.ExitCode != nil || res.capture.Signal != "" || !strings.Contains(notes, "shepherd") {
			t.Errorf("exit %v signal %q outcome %q notes %q err %v", res.capture.ExitCode, res.capture.Signal, res.capture.Outcome, res.capture.Notes, res.err)
		}
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(workload, syscall.SIGKILL)
		<-done
		t.Fatal("the workload outlived its shepherd")
	}
	if !gone(workload) {
		t.Errorf("workload %d still runs", workload)
	}
}
