package observations

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	obsformat "github.com/flameox/flameox/internal/formats/observations"
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

func TestResolve(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	script := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := resolve(ctx, &capture.Request{Argv: []string{"./run.sh", "a"}, Cwd: dir})
	if err != nil || r.Executable.Path != script || len(r.Executable.SHA256) != 64 {
		t.Fatalf("resolve: %+v %v", r, err)
	}
	for name, argv := range map[string][]string{
		"empty":          nil,
		"missing":        {"./nope"},
		"not on PATH":    {"flameox-no-such-program"},
		"not executable": {"./data"},
	} {
		t.Run(name, func(t *testing.T) {
			os.WriteFile(filepath.Join(dir, "data"), nil, 0o644)
			_, err := resolve(ctx, &capture.Request{Argv: argv, Cwd: dir})
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != evidence.CodeInvalidArgument {
				t.Fatalf("want INVALID_ARGUMENT, got %v", err)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	scratch := t.TempDir()
	t.Setenv("PYTHONPATH", "")
	p, err := plan(&capture.Request{Argv: []string{"python3", "w.py", "--x"}, Cwd: "/w"}, scratch,
		&capture.Resolved{Executable: &evidence.Executable{Path: "/usr/bin/python3"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Command, []string{"/usr/bin/python3", "w.py", "--x"}) || p.Dir != "/w" || !slices.Equal(p.AcceptExit, []int{0}) {
		t.Fatalf("plan %+v", p)
	}
	zipPath := filepath.Join(scratch, SupportDir, SDKZip)
	if !slices.Equal(p.Env, []string{"FLAMEOX_OBSERVATIONS=" + filepath.Join(p.OutputDir, File), "PYTHONPATH=" + zipPath}) {
		t.Fatalf("env %q", p.Env)
	}
	for _, s := range p.Support {
		if rel, _ := filepath.Rel(p.OutputDir, s.Path); !strings.HasPrefix(rel, "..") {
			t.Fatalf("support file %s inside the output dir", s.Path)
		}
	}
}

func files(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, ierr := d.Info()
			if ierr != nil {
				return ierr
			}
			out[p] = info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// capture does what the runtime does with a plan and returns the decoded
// rows of the artifact.
func runCapture(t *testing.T, argv []string, cwd string) []evidence.Object {
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
	baseline := files(t, scratch)
	cmd := exec.Command(p.Command[0], p.Command[1:]...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Dir = p.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("workload: %v\n%s", err, out)
	}
	artifact := filepath.Join(p.OutputDir, File)
	for f := range files(t, scratch) {
		if _, ok := baseline[f]; !ok && f != artifact {
			t.Fatalf("the run added %s to the scratch", f)
		}
	}
	art, err := formats.ArtifactFromPath(artifact, Role)
	if err != nil {
		t.Fatal(err)
	}
	s := &formatstest.Sink{Artifact: art.ID}
	if err := formats.Run(context.Background(), obsformat.Spec, art, nil, nil, s); err != nil {
		t.Fatal(err)
	}
	tb := s.Tables[0]
	if !tb.Summary.Complete {
		t.Fatalf("incomplete: %q", tb.Summary.Limitations)
	}
	return tb.Rows
}

func TestCapturePython(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	// The workload imports the SDK from the provider's archive: nothing is installed.
	script := "import flameox_observe as fo\nwith fo.phase('p'):\n    fo.observe('x', [1, 2.5, 'three'], unit='ms')\n"
	if err := os.WriteFile(filepath.Join(dir, "w.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := runCapture(t, []string{py, "w.py"}, dir)
	if len(rows) != 3 || rows[1]["name"] != "x" || rows[1]["phase"] != "p" || rows[1]["unit"] != "ms" {
		t.Fatalf("rows %v", rows)
	}
	if v, _ := evidence.Canonical(rows[1]["value"]); string(v) != `[1,2.5,"three"]` {
		t.Fatalf("value %s", v)
	}
}

func TestCaptureGo(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go tool to build the Go workload")
	}
	bin := filepath.Join(t.TempDir(), "goworkload")
	build := exec.Command(gobin, "build", "-o", bin, "./testdata/observations/goworkload")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	rows := runCapture(t, []string{bin}, t.TempDir())
	if len(rows) != 11 || rows[0]["kind"] != "phase_start" || rows[10]["value"] != "done" {
		t.Fatalf("rows %v", rows)
	}
}
