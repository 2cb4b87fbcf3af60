package pyperf

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	pyperfformat "github.com/flameox/flameox/internal/formats/pyperf"
	"github.com/flameox/flameox/internal/table"
)

const repoRoot = "../../../.."

func venvPython(t *testing.T) string {
	t.Helper()
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = filepath.Join(repoRoot, ".venv")
	}
	p, _ := filepath.Abs(filepath.Join(venv, "bin", "python"))
	if _, err := os.Stat(p); err != nil {
		t.Skip("needs the project venv (FLAMEOX_VENV) with pyperf")
	}
	return p
}

func TestPlan(t *testing.T) {
	scratch := t.TempDir()
	r := &capture.Resolved{Executable: &evidence.Executable{Path: "/usr/bin/python3"}}
	req := &capture.Request{Argv: []string{"/bin/echo", "a b"}, Cwd: "/", Args: evidence.Object{"processes": int64(2), "values": int64(3)}}
	p, err := Plan(req, scratch, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/usr/bin/python3", "-m", "pyperf", "command", "--quiet", "-o", filepath.Join(scratch, OutputDir, File),
		"-p", "2", "-n", "3", "--", "/bin/echo", "a b"}
	if !slices.Equal(p.Command, want) || len(p.Support) != 0 {
		t.Fatalf("plan %q", p.Command)
	}
	// A newline in an argument: the launcher carries the exact argv.
	req.Argv = []string{"/bin/echo", "line 1\nline 2"}
	p, err = Plan(req, scratch, r)
	if err != nil {
		t.Fatal(err)
	}
	n := len(p.Command)
	if len(p.Support) != 1 || p.Command[n-3] != "/usr/bin/python3" || p.Command[n-2] != p.Support[0].Path {
		t.Fatalf("launcher plan %q", p.Command)
	}
	raw, _ := hex.DecodeString(p.Command[n-1])
	var argv []string
	if err := json.Unmarshal(raw, &argv); err != nil || !slices.Equal(argv, req.Argv) {
		t.Fatalf("launcher argv %q (%v)", argv, err)
	}
}

func TestResolveWithoutPyperf(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3")
	}
	if exec.Command(py, "-c", "import pyperf").Run() == nil {
		t.Skip("the system python3 has pyperf")
	}
	_, err = Resolve(context.Background(), &capture.Request{Argv: []string{"/bin/true"}, Cwd: "/", Args: evidence.Object{"python": py}})
	if f := evidence.AsFailure(err, ""); f == nil || f.Code != evidence.CodeProviderUnavailable || f.Retry == nil {
		t.Fatalf("want PROVIDER_UNAVAILABLE with a retry, got %v", err)
	}
}

// TestCapture benchmarks a real command whose argument holds a newline,
// through the launcher, and decodes pyperf's result.
func TestCapture(t *testing.T) {
	py := venvPython(t)
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Skip("needs echo")
	}
	req := &capture.Request{Provider: "pyperf", Argv: []string{echo, "two\nlines"}, Cwd: t.TempDir(),
		Args: evidence.Object{"python": py, "processes": int64(2), "values": int64(2), "warmups": int64(1), "loops": int64(1), "name": "echo"}}
	r, err := Resolve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	p, err := Plan(req, scratch, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Support {
		os.MkdirAll(filepath.Dir(s.Path), 0o755)
		if err := os.WriteFile(s.Path, s.Content, fs.FileMode(s.Mode)); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(p.OutputDir, 0o755)
	cmd := exec.Command(p.Command[0], p.Command[1:]...)
	cmd.Dir = p.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pyperf: %v\n%s", err, out)
	}
	art, err := formats.ArtifactFromPath(filepath.Join(p.OutputDir, File), Role)
	if err != nil {
		t.Fatal(err)
	}
	s := &formatstest.Sink{Artifact: art.ID}
	if err := formats.Run(context.Background(), pyperfformat.Spec, art, nil, nil, s); err != nil {
		t.Fatal(err)
	}
	var values int
	for _, row := range s.Table(table.BenchSamples.Name).Rows {
		if row["kind"] == table.BenchSampleKind {
			values++
		}
	}
	if values != 4 || s.Table(table.BenchSeries.Name).Rows[0]["benchmark"] != "echo" {
		t.Fatalf("%d values, series %v", values, s.Table(table.BenchSeries.Name).Rows)
	}
}
