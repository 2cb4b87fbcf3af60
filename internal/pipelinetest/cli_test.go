package pipelinetest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The command-line surface as a person meets it: a terminal on stdin or
// stdout, --version, the examples of README.md and of every --help.

var commands = []string{"flameox-capture", "flameox-decode", "flameox-rank", "flameox-preserve", "flameox-mcp"}

// openPTY opens a pseudo-terminal: the child gets tty, a real terminal,
// and what it writes there is read from ptm.
func openPTY(t *testing.T) (ptm, tty *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptm.Close(); tty.Close() })
	return ptm, tty
}

// runWithin runs cmd, killing it after d; it reports the exit status, or
// -1 when cmd had to be killed.
func runWithin(t *testing.T, d time.Duration, cmd *exec.Cmd) int {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		return -1
	}
}

// A command that would read stdin, started on a terminal with nothing
// piped in, prints its usage and exits 2 at once instead of waiting for
// Ctrl-D.
func TestNoInputOnTerminal(t *testing.T) {
	for _, argv := range [][]string{
		{"flameox-rank"},
		{"flameox-rank", "--top", "5"},
		{"flameox-decode"},
		{"flameox-preserve", "--store", t.TempDir()},
	} {
		t.Run(strings.Join(argv, " "), func(t *testing.T) {
			_, tty := openPTY(t)
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(filepath.Join(binDir, argv[0]), argv[1:]...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, &stderr
			code := runWithin(t, 10*time.Second, cmd)
			if code == -1 {
				t.Fatalf("still waiting on the terminal after 10s")
			}
			if code != 2 {
				t.Errorf("exit %d, want 2\nstderr: %s", code, stderr.String())
			}
			if !strings.HasPrefix(stderr.String(), "Usage: "+argv[0]) || !strings.Contains(stderr.String(), argv[0]+": INVALID_ARGUMENT: no input") {
				t.Errorf("stderr %q: want the usage, then the failure", stderr.String())
			}
		})
	}
}

// On a terminal a failure is one line (and the fix, when there is one),
// not a JSON block beside a stderr line.
func TestFailureOnTerminal(t *testing.T) {
	dir := t.TempDir()
	blob := filepath.Join(dir, "blob.bin")
	if err := os.WriteFile(blob, []byte{0, 1, 2}, 0o644); err != nil {
		t.Fatal(err)
	}
	hotspot, _ := filepath.Abs("../../testdata/v8/hotspot.cpuprofile")
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"flameox-rank", blob}, `^flameox-rank: UNSUPPORTED_FORMAT: [^\n{]+ name one with --artifact-format \(` + regexp.QuoteMeta(blob) + `\)\n$`},
		{[]string{"flameox-rank", "--top", "0", hotspot}, `^flameox-rank: INVALID_ARGUMENT: [^\n{]*--top[^\n{]*\n$`},
		{[]string{"flameox-decode", filepath.Join(dir, "missing.cpuprofile")}, `^flameox-decode: IO_FAILURE: [^\n{]+\n$`},
		{[]string{"flameox-decode", blob, filepath.Join(dir, "missing.cpuprofile")}, `^flameox-decode: UNSUPPORTED_FORMAT: [^\n{]+\nflameox-decode: IO_FAILURE: [^\n{]+\n$`},
		{[]string{"flameox-capture", "setup", "--provider", "nope"}, `^flameox-capture: INVALID_ARGUMENT: unknown provider "nope"[^\n{]*\n$`},
		{[]string{"flameox-preserve"}, `^flameox-preserve: INVALID_ARGUMENT: [^\n{]*--store[^\n{]*\n$`},
		// A fresh FLAMEOX_HOME has no managed py-spy: the fix is the exact command.
		{[]string{"flameox-capture", "py-spy", "--", "python3", "-c", "pass"},
			`^flameox-capture: PROVIDER_UNAVAILABLE: [^\n{]+\nflameox-capture: to fix: [^\n{]*: flameox-capture setup --provider py-spy\n$`},
	} {
		t.Run(strings.Join(tc.argv, " "), func(t *testing.T) {
			ptm, tty := openPTY(t)
			cmd := exec.Command(filepath.Join(binDir, tc.argv[0]), tc.argv[1:]...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), tty, tty
			cmd.Env = append(os.Environ(), "FLAMEOX_HOME="+filepath.Join(dir, "home"))
			out := make(chan string, 1)
			go func() {
				b, _ := io.ReadAll(ptm) // ends with EIO once no one holds the terminal
				out <- strings.ReplaceAll(string(b), "\r\n", "\n")
			}()
			code := runWithin(t, 20*time.Second, cmd)
			tty.Close()
			got := <-out
			if code <= 0 {
				t.Errorf("exit %d, want a failure's status", code)
			}
			// Tables and artifact blocks are decode's output; the failures
			// are the lines for people.
			var text strings.Builder
			for l := range strings.Lines(got) {
				if !strings.HasPrefix(l, "{") {
					text.WriteString(l)
				}
			}
			if !regexp.MustCompile(tc.want).MatchString(text.String()) || strings.Contains(got, `"kind":"failure"`) {
				t.Errorf("the terminal shows %q, want no failure block and lines matching %s", got, tc.want)
			}
		})
	}
}

// flameox-rank on a terminal with one good and one bad path: the table of
// the good one, and the bad one's failure once, as its stderr line with
// its location, not again as a note inside the table.
func TestRankFailureShownOnce(t *testing.T) {
	dir := t.TempDir()
	blob := filepath.Join(dir, "cut.cpuprofile")
	if err := os.WriteFile(blob, []byte(`{"nodes":[`), 0o644); err != nil {
		t.Fatal(err)
	}
	hotspot, _ := filepath.Abs("../../testdata/v8/hotspot.cpuprofile")
	ptm, tty := openPTY(t)
	cmd := exec.Command(filepath.Join(binDir, "flameox-rank"), hotspot, blob)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), tty, tty
	out := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(ptm)
		out <- strings.ReplaceAll(string(b), "\r\n", "\n")
	}()
	code := runWithin(t, 20*time.Second, cmd)
	tty.Close()
	got := <-out
	if code != 4 {
		t.Errorf("exit %d, want 4 (DECODE_FAILURE)", code)
	}
	if n := strings.Count(got, "DECODE_FAILURE"); n != 1 || !strings.Contains(got, "flameox-rank: DECODE_FAILURE: ") ||
		!strings.Contains(got, "("+blob+", line 1, byte 10)") || !strings.Contains(got, "crunchPrimes") {
		t.Errorf("the failure shows %d times (want once, with its path, beside the table):\n%s", n, got)
	}
}

// Every binary says what it is: version, commit and Go version.
func TestVersion(t *testing.T) {
	for _, name := range commands {
		out, err := exec.Command(filepath.Join(binDir, name), "--version").CombinedOutput()
		if err != nil {
			t.Errorf("%s --version: %v\n%s", name, err, out)
			continue
		}
		want := `^` + name + ` \S+, commit [^\n]+, ` + regexp.QuoteMeta(runtime.Version()) + `\n$`
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("%s --version printed %q, want %s", name, out, want)
		}
	}
}

// The input format is --artifact-format on every command that decodes;
// flameox-decode's former --format is refused with the new name, not
// taken silently.
func TestArtifactFormatFlag(t *testing.T) {
	hotspot, _ := filepath.Abs("../../testdata/v8/hotspot.cpuprofile")
	for _, name := range []string{"flameox-decode", "flameox-rank"} {
		out, err := exec.Command(filepath.Join(binDir, name), "--artifact-format", "v8-cpuprofile", hotspot).Output()
		if err != nil || !strings.Contains(string(out), `"kind":"summary"`) {
			t.Errorf("%s --artifact-format v8-cpuprofile: %v\n%s", name, err, out)
		}
		help, _ := exec.Command(filepath.Join(binDir, name), "--help").Output()
		if !strings.Contains(string(help), "--artifact-format=NAME") {
			t.Errorf("%s --help does not list --artifact-format", name)
		}
	}
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(binDir, "flameox-decode"), "--format", "v8-cpuprofile", hotspot)
	cmd.Stderr = &stderr
	out, _ := cmd.Output()
	if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(stderr.String(), "--artifact-format v8-cpuprofile") || strings.Contains(string(out), `"kind":"table"`) {
		t.Errorf("flameox-decode --format: exit %d, stderr %q, stdout %q; want exit 2 naming --artifact-format and no tables",
			cmd.ProcessState.ExitCode(), stderr.String(), out)
	}
}

// Ctrl-C ends a command waiting on a silent pipe within moments, with
// CANCELLED's status.
func TestInterruptWhileWaiting(t *testing.T) {
	for _, name := range []string{"flameox-decode", "flameox-rank"} {
		t.Run(name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close() // held open: the pipe is silent, not ended
			cmd := exec.Command(filepath.Join(binDir, name))
			cmd.Stdin = r
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			r.Close()
			time.Sleep(300 * time.Millisecond)
			start := time.Now()
			_ = cmd.Process.Signal(os.Interrupt)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(8 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("%s still waiting 8s after Ctrl-C", name)
			}
			if d := time.Since(start); d > 3*time.Second || cmd.ProcessState.ExitCode() != 130 {
				t.Errorf("ended %s after Ctrl-C with exit %d, want within 3s and 130", d, cmd.ProcessState.ExitCode())
			}
		})
	}
}

// /dev/null is a character device but not a terminal: stdin from it is
// an empty input, answered as one, not with the usage.
func TestDevNullIsNotATerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(binDir, "flameox-rank"))
	cmd.Stdin, cmd.Stderr = null, &stderr
	_ = cmd.Run()
	if strings.Contains(stderr.String(), "stdin is a terminal") || !strings.Contains(stderr.String(), "no decoded table") {
		t.Errorf("flameox-rank < /dev/null: %q; want the empty input's failure", stderr.String())
	}
}

// In a pipe too, a command's failure block names the flag that was given,
// and keeps the request model's name in its location.
func TestFailureBlockNamesFlags(t *testing.T) {
	readme, _ := filepath.Abs("../../README.md")
	for _, name := range []string{"flameox-decode", "flameox-rank"} {
		out, _ := exec.Command(filepath.Join(binDir, name), "--artifact-format", "text", "--option", "max_lines=x", readme).Output()
		if !strings.Contains(string(out), `"field":"options.max_lines"`) || !strings.Contains(string(out), `decoder option: --option max_lines: want an integer`) {
			t.Errorf("%s: failure block %q; want --option max_lines in the message, options.max_lines in the location", name, out)
		}
	}
}
