package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/wire"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"flameox-capture": main})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("FLAMEOX_SCRATCH", filepath.Join(env.WorkDir, "scratch"))
			env.Setenv("FLAMEOX_HOME", filepath.Join(env.WorkDir, "home"))
			return nil
		},
	})
}

// TestProvidersFromRegistry checks that every registered provider is a
// subcommand whose help lists each of its params as a flag, and that a
// managed provider's binding is complete enough for setup to find it.
func TestProvidersFromRegistry(t *testing.T) {
	for _, p := range registry.Providers() {
		t.Run(p.Name, func(t *testing.T) {
			if b := p.Binding; b.Managed {
				if b.Setup == nil || b.Setup.Provider != p.Name || b.Setup.Version != b.Pinned || b.Setup.Executable == "" {
					t.Fatalf("managed binding %+v: Setup must name this provider, the pinned version and the executable", b)
				}
				if _, err := capture.ManagedDir(*b.Setup); err != nil {
					t.Error(err)
				}
			}
			var out, errb bytes.Buffer
			if code := run(context.Background(), []string{p.Name, "--help"}, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
			}
			help := out.String()
			for _, prm := range p.Params {
				if !strings.Contains(help, "--"+prm.Flag()) {
					t.Errorf("help lacks --%s", prm.Flag())
				}
			}
			if !strings.Contains(help, "flameox-capture "+p.Name+" -- ") {
				t.Errorf("help lacks an example:\n%s", help)
			}
		})
	}
}

// TestNeverPanics feeds malformed command lines; each must end in a
// typed failure block, a one-line message and the matching exit status.
func TestNeverPanics(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"no-such-provider"},
		{"node-cpu-profile"},
		{"node-cpu-profile", "--"},
		{"node-cpu-profile", "--sampling-interval-us", "x", "--", "node", "a.js"},
		{"node-cpu-profile", "--request", "[1]", "--", "node", "a.js"},
		{"node-cpu-profile", "--request", "{", "--", "node", "a.js"},
		{"node-cpu-profile", "--workload-budget", "timeout_seconds=-1", "--", "node", "a.js"},
		{"node-cpu-profile", "--limits", "max_nodes=x", "--", "node", "a.js"},
		{"node-cpu-profile", "--console-output", "loud", "--", "node", "a.js"},
		{"setup"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), args, &out, &errb)
			r := wire.NewReader(&out)
			b, err := r.Next()
			if err != nil || b.Kind() != evidence.KindFailure {
				t.Fatalf("stdout %q: %v", out.String(), err)
			}
			f, err := evidence.FailureFrom(b.Obj)
			if err != nil {
				t.Fatal(err)
			}
			if code != evidence.ExitCode(f.Code) || f.Code != evidence.CodeInvalidArgument {
				t.Errorf("exit %d for %s", code, f.Code)
			}
			if lines := strings.Count(errb.String(), "\n"); lines != 1 {
				t.Errorf("stderr has %d lines: %q", lines, errb.String())
			}
		})
	}
}

const grandchildJS = `const { spawn } = require('child_process');
const fs = require('fs');
const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
fs.writeFileSync(process.argv[2] + '.tmp', process.pid + '\n' + child.pid + '\n');
fs.renameSync(process.argv[2] + '.tmp', process.argv[2]);
setInterval(() => {}, 1000);
`

// TestSignalEndsWorkload sends SIGINT (Ctrl-C) or SIGTERM to a running
// flameox-capture: the workload's whole tree must end, its scratch go,
// and the command exit CANCELLED with a capture and a failure block.
func TestSignalEndsWorkload(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("needs node on PATH")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "grandchild.js")
			if err := os.WriteFile(script, []byte(grandchildJS), 0o600); err != nil {
				t.Fatal(err)
			}
			pidfile := filepath.Join(dir, "pids")
			root := filepath.Join(dir, "scratch")
			cmd := exec.Command("flameox-capture", "node-cpu-profile", "--scratch", root, "--", "node", script, pidfile)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			var pids []string
			for pids == nil {
				select {
				case err := <-waited:
					t.Fatalf("flameox-capture ended early (%v): %s %s", err, out.String(), errb.String())
				default:
				}
				if b, err := os.ReadFile(pidfile); err == nil {
					pids = strings.Fields(string(b))
				} else {
					time.Sleep(10 * time.Millisecond)
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			<-waited
			if code := cmd.ProcessState.ExitCode(); code != evidence.ExitCode(evidence.CodeCancelled) {
				t.Fatalf("exit %d, stderr %s", code, errb.String())
			}
			var kinds []string
			r := wire.NewReader(&out)
			for {
				b, err := r.Next()
				if err != nil {
					break
				}
				kinds = append(kinds, b.Kind())
				if b.Kind() == evidence.KindCapture && b.Obj["outcome"] != evidence.OutcomeCancelled {
					t.Errorf("outcome %v", b.Obj["outcome"])
				}
			}
			if strings.Join(kinds, ",") != "capture,failure" {
				t.Errorf("blocks %v", kinds)
			}
			for _, pid := range pids {
				n, _ := strconv.Atoi(pid)
				if alive(n) {
					t.Errorf("process %d survived %s", n, sig)
				}
			}
			if ents, _ := os.ReadDir(root); len(ents) != 0 {
				t.Errorf("scratch root keeps %d entries", len(ents))
			}
		})
	}
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || len(b) < i+3 || b[i+2] != 'Z'
}

// TestKill9EndsWorkload: SIGKILL of flameox-capture leaves nothing of the
// workload running, neither its main process nor a descendant that left
// the process group and session (setsid).
func TestKill9EndsWorkload(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pids")
	cmd := exec.Command("flameox-capture", "process", "--scratch", filepath.Join(dir, "scratch"), "--",
		"bash", "-c", `setsid sleep 300 & echo $$ $! > "$1.tmp"; mv "$1.tmp" "$1"; sleep 300`, "bash", pidfile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids := waitPids(t, pidfile, cmd)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for _, pid := range pids {
		for i := 0; alive(pid); i++ {
			if i == 500 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("process %d survived SIGKILL of flameox-capture", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// waitPids waits for a workload to publish its pids in file.
func waitPids(t *testing.T, file string, cmd *exec.Cmd) []int {
	t.Helper()
	for i := 0; ; i++ {
		if b, err := os.ReadFile(file); err == nil {
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				n, err := strconv.Atoi(f)
				if err != nil {
					t.Fatal(err)
				}
				pids = append(pids, n)
			}
			return pids
		}
		if i == 1000 {
			_ = cmd.Process.Kill()
			t.Fatal("the workload never published its pids")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReaderGoneEndsWorkload: when the process reading flameox-capture's
// stdout dies (flameox-mcp killed with SIGKILL holds the only read end),
// the capture is cancelled and its whole tree ended, not left to run
// until the workload finishes.
func TestReaderGoneEndsWorkload(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pids")
	cmd := exec.Command("flameox-capture", "process", "--scratch", filepath.Join(dir, "scratch"), "--",
		"bash", "-c", `setsid sleep 300 & echo $$ $! > "$1.tmp"; mv "$1.tmp" "$1"; sleep 300`, "bash", pidfile)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	pids := waitPids(t, pidfile, cmd)
	r.Close()
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-waited
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatal("flameox-capture kept running after its reader went away")
	}
	for _, pid := range pids {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d survived", pid)
		}
	}
	if !strings.Contains(errb.String(), "stdout") {
		t.Errorf("stderr does not say why: %s", errb.String())
	}
}

// openPty returns a pseudo-terminal's controller and its terminal end.
func openPty(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ptmx, tty
}

// TestTeeToTerminal: with stderr on a terminal the workload's stdout and
// stderr are shown there, stdout (a pipe) carries only blocks, and
// --quiet shows nothing of the workload.
func TestTeeToTerminal(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		t.Run(map[bool]string{false: "tee", true: "quiet"}[quiet], func(t *testing.T) {
			ptmx, tty := openPty(t)
			defer ptmx.Close()
			args := []string{"process", "--scratch", filepath.Join(t.TempDir(), "scratch")}
			if quiet {
				args = append(args, "--quiet")
			}
			args = append(args, "--", "sh", "-c", "echo workload-out; echo workload-err >&2")
			cmd := exec.Command("flameox-capture", args...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, tty
			err := cmd.Run()
			tty.Close()
			if err != nil {
				t.Fatalf("%v: %s", err, out.String())
			}
			var term bytes.Buffer
			_ = ptmx.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, _ = term.ReadFrom(ptmx) // EIO once the terminal end is closed
			shown := strings.Contains(term.String(), "workload-out") && strings.Contains(term.String(), "workload-err")
			if shown == quiet {
				t.Errorf("terminal shows %q", term.String())
			}
			r := wire.NewReader(bytes.NewReader(out.Bytes()))
			n := 0
			for {
				if _, err := r.Next(); err != nil {
					break
				}
				n++
			}
			if n == 0 || strings.Count(out.String(), "\n") != n || strings.Contains(out.String(), "workload-out\n") {
				t.Errorf("stdout is not blocks only: %q", out.String())
			}
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if !strings.HasPrefix(line, "{") {
					t.Errorf("stdout line %q is not a block", line)
				}
			}
		})
	}
}

// TestPdeathsigWhenShepherdAndCaptureDie: with both the shepherd and
// flameox-capture killed by SIGKILL nobody is left to end the tree; the
// workload's main process still dies, by its PDEATHSIG.
func TestPdeathsigWhenShepherdAndCaptureDie(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pids")
	cmd := exec.Command("flameox-capture", "process", "--scratch", filepath.Join(dir, "scratch"), "--",
		"bash", "-c", `echo $$ $PPID > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 300`, "bash", pidfile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids := waitPids(t, pidfile, cmd)
	workload, shepherd := pids[0], pids[1]
	_ = syscall.Kill(shepherd, syscall.SIGKILL)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for i := 0; alive(workload); i++ {
		if i == 300 {
			_ = syscall.Kill(workload, syscall.SIGKILL)
			t.Fatalf("workload %d outlived its shepherd and capture", workload)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A workload word that is not UTF-8 is refused before anything runs:
// kong would hand the workload U+FFFD in its place, and the capture block
// would record a command that was not the one asked for.
func TestArgvNotUTF8(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"process", "--cwd", dir, "--", "sh", "-c", "touch " + marker, "\xff"}, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), `workload argument 3 is not valid UTF-8 ("\xff")`) {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the workload ran")
	}
}
