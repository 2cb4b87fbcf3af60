package pipelinetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// make install PREFIX=DIR puts the five commands into DIR/bin, where they
// run and flameox-mcp finds its siblings.
func TestMakeInstall(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed to test make install: %v", err)
	}
	prefix, build := t.TempDir(), t.TempDir()
	cmd := exec.Command("make", "--no-print-directory", "install", "PREFIX="+prefix, "BIN="+build)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	entries, err := os.ReadDir(filepath.Join(prefix, "bin"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got, want := strings.Join(names, " "), "flameox-capture flameox-decode flameox-mcp flameox-preserve flameox-rank"; got != want {
		t.Errorf("installed %q, want %q", got, want)
	}
	for _, n := range names {
		out, err := exec.Command(filepath.Join(prefix, "bin", n), "--version").Output()
		if err != nil || !strings.HasPrefix(string(out), n+" ") {
			t.Errorf("installed %s --version: %v %q", n, err, out)
		}
	}
	// Nothing missing: served with no client (stdin at its end), the
	// server would name on stderr any command it cannot find beside it.
	cmd = exec.Command(filepath.Join(prefix, "bin", "flameox-mcp"))
	cmd.Env = append(os.Environ(), "FLAMEOX_BIN_DIR=")
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("installed flameox-mcp: %v\n%.300s", err, out)
	}
}
