package memray

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	memrayformat "github.com/flameox/flameox/internal/formats/memray"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/wire"
)

func TestPlan(t *testing.T) {
	r := &capture.Resolved{Executable: &evidence.Executable{Path: "/venv/bin/python"}, Version: Pinned}
	for _, c := range []struct {
		argv []string
		args evidence.Object
		want string
	}{
		{[]string{"python", "app.py", "x"}, evidence.Object{}, "/venv/bin/python -m memray run -q -o /s/capture.bin app.py x"},
		{[]string{"python", "-m", "pkg"}, evidence.Object{"native": true, "no_compress": true}, "/venv/bin/python -m memray run -q -o /s/capture.bin --native --no-compress -m pkg"},
		{[]string{"python", "app.py"}, evidence.Object{"trace_python_allocators": true, "aggregate": true},
			"/venv/bin/python -m memray run -q -o /s/capture.bin --trace-python-allocators --aggregate app.py"},
	} {
		p, err := Plan(&capture.Request{Argv: c.argv, Args: c.args}, "/s", r)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(p.Command, " "); got != c.want {
			t.Errorf("%v: %s, want %s", c.argv, got, c.want)
		}
	}
	for _, argv := range [][]string{{"python"}, {"python", "-c", "x"}, {"python", "-m"}} {
		if _, err := Plan(&capture.Request{Argv: argv}, "/s", r); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
			t.Errorf("%v: %v", argv, err)
		}
	}
}

// TestInterpreterWithoutMemray: an interpreter without memray is a typed
// unavailability with the exact install command for that interpreter,
// never flameox's own.
func TestInterpreterWithoutMemray(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3")
	}
	if exec.Command(py, "-c", "import memray").Run() == nil {
		t.Skip("the system python3 has memray")
	}
	_, err = Resolve(context.Background(), &capture.Request{Argv: []string{py, "app.py"}})
	f, ok := err.(*evidence.Failure)
	if !ok || f.Code != evidence.CodeProviderUnavailable || f.Retry == nil || !strings.Contains(strings.Join(f.Retry.Argv, " "), "memray=="+Pinned) {
		t.Fatalf("%v", err)
	}
}

// venvPython is the project venv's interpreter, which has the pinned memray.
func venvPython(t *testing.T) string {
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = "../../../../.venv"
	}
	py, _ := filepath.Abs(filepath.Join(venv, "bin", "python"))
	if exec.Command(py, "-c", "import memray").Run() != nil {
		t.Skipf("no memray in %s (python3 -m venv .venv && .venv/bin/pip install -r tools/requirements.txt)", py)
	}
	return py
}

// TestCaptureDecodes: a real capture in the venv interpreter stages the
// memray capture, which decodes complete with the workload's frames.
func TestCaptureDecodes(t *testing.T) {
	py := venvPython(t)
	testdata, _ := filepath.Abs("testdata")
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	c, err := capture.Run(context.Background(), Provider, &capture.Request{Argv: []string{py, "workload.py"}, Cwd: testdata,
		Args: evidence.Object{"no_compress": false, "native": false, "aggregate": false, "trace_python_allocators": false}},
		capture.Options{ScratchRoot: t.TempDir()}, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if c.Provider.Version != Pinned {
		t.Errorf("provider %+v", c.Provider)
	}
	var art *evidence.Artifact
	r := wire.NewReader(&buf)
	for {
		b, err := r.Next()
		if err != nil {
			break
		}
		if b.Kind() == evidence.KindArtifact {
			if art, err = evidence.ArtifactFrom(b.Obj); err != nil {
				t.Fatal(err)
			}
		}
	}
	if art == nil || art.Role != "memray-capture" || art.Format != memrayformat.Spec.Name {
		t.Fatalf("artifact %+v", art)
	}
	s, err := formatstest.DecodeFile(t, memrayformat.Spec, art.Path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tab := s.Table(table.MemoryFrames.Name)
	if !tab.Summary.Complete || !tab.Summary.Coverage["compressed"].(bool) {
		t.Errorf("summary %+v", tab.Summary)
	}
	found := false
	for _, row := range tab.Rows {
		if row["function"] == "peak" && row["file"] == "workload.py" {
			found = true
		}
	}
	if !found {
		t.Error("no row for the workload's peak()")
	}
}
