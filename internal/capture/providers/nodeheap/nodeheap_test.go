package nodeheap

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/formats/v8heap"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/wire"
)

func needNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("needs node (Node.js 12 or newer) on PATH")
	}
}

func capt(t *testing.T, argv []string, args evidence.Object) (*evidence.Capture, []*evidence.Artifact, error) {
	t.Helper()
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	c, err := capture.Run(context.Background(), Provider, &capture.Request{Argv: argv, Cwd: testdata, Args: args},
		capture.Options{ScratchRoot: t.TempDir()}, w)
	if ferr := w.Flush(); ferr != nil {
		t.Fatal(ferr)
	}
	var arts []*evidence.Artifact
	r := wire.NewReader(&buf)
	for {
		b, err := r.Next()
		if err != nil {
			break
		}
		if b.Kind() == evidence.KindArtifact {
			a, err := evidence.ArtifactFrom(b.Obj)
			if err != nil {
				t.Fatal(err)
			}
			arts = append(arts, a)
		}
	}
	return c, arts, err
}

// heapName is Node's generated name: Heap.<date>.<time>.<pid>.<tid>.<seq>.heapprofile.
var heapName = regexp.MustCompile(`^Heap\.\d{8}\.\d{6}\.(\d+)\.(\d+)\.(\d+)\.heapprofile$`)

// TestWorkersOneProfileEach: the main thread and two workers each leave a
// profile under Node's own name, and each decodes into memory.frames.
func TestWorkersOneProfileEach(t *testing.T) {
	needNode(t)
	_, arts, err := capt(t, []string{"node", "workers.js"}, evidence.Object{"sampling_interval_bytes": 4096})
	if err != nil {
		t.Fatal(err)
	}
	var tids []string
	for _, a := range arts {
		m := heapName.FindStringSubmatch(a.Name)
		if m == nil || a.Role != "heap-profile" || a.Format != v8heap.Spec.Name {
			t.Fatalf("artifact %+v", a)
		}
		tids = append(tids, m[2])
		s, err := formatstest.DecodeFile(t, v8heap.Spec, a.Path, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		if tab := s.Table(table.MemoryFrames.Name); tab == nil || len(tab.Rows) == 0 {
			t.Errorf("%s: no frames", a.Name)
		}
	}
	slices.Sort(tids)
	if !slices.Equal(tids, []string{"0", "1", "2"}) {
		t.Errorf("thread ids %v, want 0, 1, 2", tids)
	}
}

func TestRefusals(t *testing.T) {
	for _, argv := range [][]string{{"python3", "x.py"}, {"node", "--heap-prof-dir=/tmp", "x.js"}} {
		_, err := resolve(context.Background(), &capture.Request{Argv: argv})
		if evidence.CodeOf(err) != evidence.CodeInvalidArgument {
			t.Errorf("%v: %v", argv, err)
		}
	}
}
