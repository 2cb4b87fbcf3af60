package benchsamples

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	bsformat "github.com/flameox/flameox/internal/formats/benchsamples"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

const repoRoot = "../../../.."

func python(t *testing.T) string {
	t.Helper()
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = filepath.Join(repoRoot, ".venv")
	}
	if p, err := filepath.Abs(filepath.Join(venv, "bin", "python")); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3 (or the project venv) to run a Python workload")
	}
	return p
}

func TestPlan(t *testing.T) {
	scratch := t.TempDir()
	t.Setenv("PYTHONPATH", "")
	p, err := plan(&capture.Request{Argv: []string{"python3", "b.py"}, Cwd: "/w"}, scratch,
		&capture.Resolved{Executable: &evidence.Executable{Path: "/usr/bin/python3"}})
	if err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(scratch, SupportDir, SDKZip)
	if !slices.Equal(p.Command, []string{"/usr/bin/python3", "b.py"}) ||
		!slices.Equal(p.Env, []string{"FLAMEOX_BENCH_SAMPLES=" + filepath.Join(p.OutputDir, File), "PYTHONPATH=" + zipPath}) {
		t.Fatalf("plan %+v", p)
	}
	if _, err := resolve(context.Background(), &capture.Request{Cwd: scratch}); evidence.AsFailure(err, "").Code != evidence.CodeInvalidArgument {
		t.Fatalf("no argv: %v", err)
	}
}

// runCapture does what the runtime does with a plan and returns the
// decoded artifact.
func runCapture(t *testing.T, argv []string, cwd string) *formatstest.Sink {
	t.Helper()
	req := &capture.Request{Provider: Name, Argv: argv, Cwd: cwd}
	r, err := Provider.Resolve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	p, err := Provider.Plan(req, scratch, r)
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
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Dir = p.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("workload: %v\n%s", err, out)
	}
	art, err := formats.ArtifactFromPath(filepath.Join(p.OutputDir, File), Role)
	if err != nil {
		t.Fatal(err)
	}
	s := &formatstest.Sink{Artifact: art.ID}
	if err := formats.Run(context.Background(), bsformat.Spec, art, nil, nil, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCapturePython(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	// The harness imports the SDK from the provider's archive: nothing is installed.
	script := "import time, flameox_bench as fb\nw = fb.Writer(producer='pyharness')\n" +
		"vals = []\nfor _ in range(5):\n    t = time.perf_counter(); sorted(range(1000)); vals.append(time.perf_counter() - t)\n" +
		"w.series('s', name='sorted', unit='ns', samples=fb.seconds_to_ns(vals), clock='wall')\nw.close()\n"
	if err := os.WriteFile(filepath.Join(dir, "b.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	s := runCapture(t, []string{py, "b.py"}, dir)
	if n := len(s.Table(table.BenchSamples.Name).Rows); n != 5 {
		t.Fatalf("%d samples", n)
	}
	if rows := s.Table(table.BenchSeries.Name).Rows; len(rows) != 1 || rows[0]["benchmark"] != "sorted" {
		t.Fatalf("series %v", rows)
	}
}

func TestCaptureGo(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go tool to build the Go workload")
	}
	bin := filepath.Join(t.TempDir(), "goworkload")
	build := exec.Command(gobin, "build", "-o", bin, "./testdata/benchsamples/goworkload")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	s := runCapture(t, []string{bin}, t.TempDir())
	if n := len(s.Table(table.BenchSamples.Name).Rows); n != 12 {
		t.Fatalf("%d values", n)
	}
}
