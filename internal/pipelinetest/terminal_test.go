package pipelinetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/render"
)

// TestTerminalWidth runs the real flameox-rank on a pseudo-terminal
// (script(1)) sized with stty, COLUMNS unset, on the committed V8, pstats
// and pytest fixtures: the table view must be chosen by itself (stdout is
// a terminal), take the terminal's width, and print no line wider, in
// display cells (East Asian wide characters count two).
func TestTerminalWidth(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) is not installed") // util-linux; present wherever the suite is run
	}
	root, _ := filepath.Abs("../..")
	fixtures := []string{
		"testdata/v8/hotspot.cpuprofile",
		"testdata/pstats/cprofile-workload.pstats",
		"testdata/pytest-events/suite.pytest-events.jsonl",
	}
	for _, cols := range []string{"100", "72"} {
		for _, f := range fixtures {
			t.Run(cols+"/"+filepath.Base(f), func(t *testing.T) {
				cmd := exec.Command("script", "-qec", "stty cols "+cols+" rows 60; exec flameox-rank "+filepath.Join(root, f), "/dev/null")
				var env []string
				for _, e := range os.Environ() {
					if !strings.HasPrefix(e, "COLUMNS=") && !strings.HasPrefix(e, "PATH=") {
						env = append(env, e)
					}
				}
				cmd.Env = append(env, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				text := strings.ReplaceAll(string(out), "\r\n", "\n")
				if !strings.Contains(text, "\n----") {
					t.Fatalf("no table view on a terminal:\n%s", text)
				}
				width := map[string]int{"100": 100, "72": 72}[cols]
				widest := 0
				for i, l := range strings.Split(text, "\n") {
					n := render.Width(l)
					widest = max(widest, n)
					if n > width {
						t.Errorf("line %d is %d cells wide on a %d-column terminal: %q", i+1, n, width, l)
					}
					if strings.ContainsAny(l, "\x1b\r\a") {
						t.Errorf("line %d carries a terminal control: %q", i+1, l)
					}
				}
				// The terminal's width is used, not merely stayed under.
				if widest < width-12 {
					t.Errorf("widest line %d cells on a %d-column terminal", widest, width)
				}
			})
		}
	}
}

// TestPytestOutcomeLine runs real pytest (the project venv) with the
// flameox plugin on the bundled suite, then renders its events: the
// table view's outcome line must say what pytest's own terminal summary
// said, count for count, and a session time that fits inside the pytest
// process's own wall time (the plugin and pytest's terminal reporter take
// the time at nearby, not identical, hooks, so on a loaded machine the two
// figures drift apart: only the bound is exact).
func TestPytestOutcomeLine(t *testing.T) {
	root, _ := filepath.Abs("../..")
	py := filepath.Join(venv(root), "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Skip("no project venv with pytest (FLAMEOX_VENV)")
	}
	events := filepath.Join(t.TempDir(), "suite.pytest-events.jsonl")
	cmd := exec.Command(py, "-m", "pytest", "-p", "flameox_pytest", "--continue-on-collection-errors", ".")
	cmd.Dir = filepath.Join(root, "testdata", "pytest-suite")
	cmd.Env = append(os.Environ(), "FLAMEOX_PYTEST_EVENTS="+events, "PYTHONDONTWRITEBYTECODE=1",
		"PYTHONPATH="+filepath.Join(root, "internal", "capture", "providers", "pytest"))
	start := time.Now()
	out, _ := cmd.Output() // pytest exits 1: the suite has failures
	wall := time.Since(start).Seconds()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	native := strings.Trim(lines[len(lines)-1], "= ")
	counts, secs, ok := strings.Cut(native, " in ")
	if !ok {
		t.Fatalf("pytest's last line %q is not its summary", native)
	}

	rank := exec.Command(filepath.Join(binDir, "flameox-rank"), "--format", "table", events)
	rank.Env = append(os.Environ(), "COLUMNS=200")
	view, err := rank.Output()
	if err != nil {
		t.Fatalf("flameox-rank: %v\n%s", err, view)
	}
	got := strings.Split(string(view), "\n")[2]
	ours, oursSecs, ok := strings.Cut(got, " in ")
	t.Logf("pytest: %q; flameox: %q", native, got)
	if !ok || ours != counts {
		t.Errorf("outcome line %q; pytest said %q", got, native)
	}
	var a, b float64
	if _, err := fmt.Sscanf(secs, "%gs", &a); err != nil {
		t.Fatalf("pytest's time %q: %v", secs, err)
	}
	if _, err := fmt.Sscanf(oursSecs, "%gs", &b); err != nil || b <= 0 || b > wall {
		t.Errorf("session time %q; pytest said %q, and its process ran %.2fs", oursSecs, secs, wall)
	}
	t.Logf("session time: flameox %.2fs, pytest %.2fs, process %.2fs", b, a, wall)
}
