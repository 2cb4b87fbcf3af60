package coverage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/coveragepy"
	"github.com/flameox/flameox/internal/formats/coveragepy/datafile"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/wire"
)

const repo = "../../../.."

func TestPlan(t *testing.T) {
	r := &capture.Resolved{Executable: &evidence.Executable{Path: "/venv/bin/python"}, Version: "7.17.5"}
	cases := []struct {
		name string
		argv []string
		args evidence.Object
		want string
		code evidence.Code
	}{
		{"script", []string{"python", "app.py", "x"}, nil,
			"/venv/bin/python -m coverage run --data-file=/s/.coverage app.py x", ""},
		{"module with branch", []string{"python3", "-m", "pytest", "-q"}, evidence.Object{"branch": true},
			"/venv/bin/python -m coverage run --data-file=/s/.coverage --branch -m pytest -q", ""},
		{"source", []string{"python", "app.py"}, evidence.Object{"source": []string{"pkg", "lib"}},
			"/venv/bin/python -m coverage run --data-file=/s/.coverage --source=pkg,lib app.py", ""},
		{"bad source", []string{"python", "app.py"}, evidence.Object{"source": []string{"a,b"}}, "", evidence.CodeInvalidArgument},
		{"-c", []string{"python", "-c", "print(1)"}, nil, "", evidence.CodeInvalidArgument},
		{"interpreter option", []string{"python", "-X", "dev", "app.py"}, nil, "", evidence.CodeInvalidArgument},
		{"bare -m", []string{"python", "-m"}, nil, "", evidence.CodeInvalidArgument},
		{"no script", []string{"python"}, nil, "", evidence.CodeInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Plan(&capture.Request{Provider: "coverage", Argv: c.argv, Cwd: "/w", Args: c.args}, "/s", r)
			if c.code != "" {
				if evidence.CodeOf(err) != c.code {
					t.Fatalf("got %v, want %s", err, c.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(p.Command, " "); got != c.want {
				t.Fatalf("command %q\nwant    %q", got, c.want)
			}
			if p.Dir != "/w" || p.OutputDir != "/s" {
				t.Fatalf("dir %s output %s", p.Dir, p.OutputDir)
			}
			wantPost := "/venv/bin/python -m coverage json --data-file=/s/.coverage -o /s/coverage.json"
			if len(p.Post) != 1 || strings.Join(p.Post[0], " ") != wantPost {
				t.Fatalf("post %q", p.Post)
			}
		})
	}
}

// fakePython writes an executable that answers the probe with out.
func fakePython(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "python")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestResolveProbe(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		code  evidence.Code
		retry bool
	}{
		{"no coverage", `echo '{"executable": "/opt/py/bin/python3", "python": "3.11.7", "coverage": null}'`, evidence.CodeProviderUnavailable, true},
		{"coverage 6", `echo '{"executable": "/opt/py/bin/python3", "python": "3.11.7", "coverage": "6.5.0"}'`, evidence.CodeProviderUnavailable, true},
		{"not python", `echo "usage: tool" >&2; exit 2`, evidence.CodeInvalidArgument, false},
		{"garbage", `echo hello`, evidence.CodeInvalidArgument, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			py := fakePython(t, c.body)
			_, err := Resolve(context.Background(), &capture.Request{Argv: []string{py, "app.py"}, Cwd: t.TempDir()})
			if evidence.CodeOf(err) != c.code {
				t.Fatalf("got %v, want %s", err, c.code)
			}
			var f *evidence.Failure
			errors.As(err, &f)
			if c.retry {
				want := []string{"/opt/py/bin/python3", "-m", "pip", "install", "coverage==" + Pinned}
				if f.Retry == nil || !slices.Equal(f.Retry.Argv, want) {
					t.Fatalf("retry %+v, want argv %v (the workload interpreter's pip)", f.Retry, want)
				}
			}
		})
	}
	_, err := Resolve(context.Background(), &capture.Request{Argv: []string{"flameox-no-such-python", "a.py"}, Cwd: t.TempDir()})
	if evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("missing interpreter: %v", err)
	}
}

func venvPython(t *testing.T) string {
	t.Helper()
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = filepath.Join(repo, ".venv")
	}
	py, err := filepath.Abs(filepath.Join(venv, "bin", "python"))
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(py, "-c", "import coverage").Run(); err != nil {
		t.Skipf("coverage.py is not installed in %s (python3 -m venv .venv && .venv/bin/pip install -r tools/requirements.txt): %v", py, err)
	}
	return py
}

func run(t *testing.T, dir string, argv []string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out.String())
	}
	return out.String()
}

func decodeOut(t *testing.T, spec *formats.Spec, path string) *formatstest.Table {
	t.Helper()
	s, err := formatstest.DecodeFile(t, spec, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.Tables[0]
}

// A real capture: the plan's command and post command run with coverage.py
// in the workload interpreter; the decoded outputs equal coverage.py's own
// report and API on the same data.
func TestCaptureWithRealCoverage(t *testing.T) {
	py := venvPython(t)
	work := t.TempDir()
	prog := filepath.Join(repo, "testdata", "coverage", "prog")
	for _, f := range []string{"app.py", "shapes.py"} {
		b, err := os.ReadFile(filepath.Join(prog, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scratch := t.TempDir()
	req := &capture.Request{Provider: "coverage", Argv: []string{py, "app.py"}, Cwd: work, Args: evidence.Object{"branch": true}}
	r, err := Resolve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != Pinned || len(r.Executable.SHA256) != 64 {
		t.Fatalf("resolved %+v %+v", r, r.Executable)
	}
	plan, err := Plan(req, scratch, r)
	if err != nil {
		t.Fatal(err)
	}
	run(t, plan.Dir, plan.Command)
	for _, p := range plan.Post {
		run(t, plan.Dir, p)
	}
	data := filepath.Join(scratch, DataFile)
	report := filepath.Join(scratch, ReportFile)

	rep := decodeOut(t, coveragepy.JSONSpec, report)
	total := run(t, work, []string{py, "-m", "coverage", "report", "--data-file=" + data, "--format=total", "--precision=6"})
	var pc float64
	fmt.Sscan(total, &pc)
	got, _ := evidence.AsFloat(rep.Summary.Metrics["total_percent_covered"].Value)
	if fmt.Sprintf("%.6f", got) != strings.TrimSpace(total) || pc == 0 {
		t.Fatalf("decoded total %v%%, coverage report --format=total says %s", got, total)
	}
	var native struct{ Totals map[string]any }
	b, _ := os.ReadFile(report)
	json.Unmarshal(b, &native)
	for k, v := range native.Totals {
		if fmt.Sprint(rep.Summary.Metrics["total_"+k].Value) != fmt.Sprint(v) {
			t.Errorf("total %s: decoded %v, coverage json %v", k, rep.Summary.Metrics["total_"+k].Value, v)
		}
	}

	lines := run(t, work, []string{py, "-c", `import json, sys, coverage
d = coverage.CoverageData(basename=sys.argv[1]); d.read()
print(json.dumps({f: len(d.lines(f)) for f in d.measured_files()}))`, data})
	var want map[string]int64
	if err := json.Unmarshal([]byte(lines), &want); err != nil {
		t.Fatal(err)
	}
	dat := decodeOut(t, datafile.Spec, data)
	if len(dat.Rows) != len(want) {
		t.Fatalf("%d data rows for %d measured files", len(dat.Rows), len(want))
	}
	for _, row := range dat.Rows {
		n, _ := evidence.AsInt(row["executed_lines"])
		if n != want[row["file"].(string)] {
			t.Errorf("%s: decoded %d executed lines, CoverageData.lines has %d", row["file"], n, want[row["file"].(string)])
		}
	}
}

// flameox never substitutes its own interpreter: a Python without
// coverage.py is unavailable even when the venv has it.
func TestResolveUsesTheWorkloadInterpreter(t *testing.T) {
	venvPython(t)
	sys, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH")
	}
	if exec.Command(sys, "-c", "import coverage").Run() == nil {
		t.Skipf("%s has coverage.py installed; this case needs an interpreter without it", sys)
	}
	_, err = Resolve(context.Background(), &capture.Request{Argv: []string{sys, "app.py"}, Cwd: t.TempDir()})
	if evidence.CodeOf(err) != evidence.CodeProviderUnavailable {
		t.Fatalf("got %v, want PROVIDER_UNAVAILABLE", err)
	}
}

// TestFailingSuiteStillGivesCoverage: a pytest suite with a failing test
// exits 1; the exit status is recorded as provenance and the coverage of
// that run (data file and JSON report) is still the capture's evidence.
func TestFailingSuiteStillGivesCoverage(t *testing.T) {
	py := venvPython(t)
	if err := exec.Command(py, "-c", "import pytest").Run(); err != nil {
		t.Fatalf("pytest is not installed in %s: %v", py, err)
	}
	work := t.TempDir()
	suite := "def add(a, b):\n    return a + b\n\ndef test_ok():\n    assert add(1, 2) == 3\n\ndef test_fails():\n    assert add(1, 1) == 3\n"
	if err := os.WriteFile(filepath.Join(work, "test_suite.py"), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	req := &capture.Request{Argv: []string{py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_suite.py"}, Cwd: work}
	c, err := capture.Run(context.Background(), Provider, req, capture.Options{ScratchRoot: t.TempDir()}, w)
	if err != nil {
		t.Fatalf("%v (notes %q)", err, c.Notes)
	}
	if c.Outcome != evidence.OutcomeCompleted || c.ExitCode == nil || *c.ExitCode != 1 {
		t.Fatalf("outcome %q exit %v", c.Outcome, c.ExitCode)
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "exited with status 1") {
		t.Errorf("notes %q do not record the failing status", c.Notes)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	roles := map[string]string{}
	r := wire.NewReader(&buf)
	for {
		b, err := r.Next()
		if err != nil {
			break
		}
		if b.Kind() == evidence.KindArtifact {
			roles[b.Obj["role"].(string)] = b.Obj["path"].(string)
		}
	}
	report, ok := roles["coverage-report"]
	if !ok || roles["coverage-data"] == "" {
		t.Fatalf("artifacts %v", roles)
	}
	if got := decodeOut(t, coveragepy.JSONSpec, report); len(got.Rows) == 0 {
		t.Fatal("the report holds no file")
	}
}
