package nvbench

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	nvbenchformat "github.com/flameox/flameox/internal/formats/nvbench"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/wire"
)

const repoRoot = "../../../.."

// TestRefusesOtherPrograms: real programs that are not NVBench binaries
// (GNU echo answers --version with its own line; true prints nothing)
// are PROVIDER_UNAVAILABLE before anything runs, naming what they said.
func TestRefusesOtherPrograms(t *testing.T) {
	for _, prog := range []string{"echo", "true", "ls"} {
		path, err := exec.LookPath(prog)
		if err != nil {
			t.Fatalf("%s: %v", prog, err)
		}
		_, err = Resolve(context.Background(), &capture.Request{Argv: []string{path}, Cwd: t.TempDir()})
		f := evidence.AsFailure(err, "")
		if f == nil || f.Code != evidence.CodeProviderUnavailable || f.Retry == nil || !strings.Contains(f.Message, "not an NVBench benchmark binary") {
			t.Errorf("%s: want PROVIDER_UNAVAILABLE with a retry, got %v", prog, err)
		}
	}
	_, err := Resolve(context.Background(), &capture.Request{Argv: []string{"/nonexistent/nvbench.bin"}, Cwd: "/"})
	if f := evidence.AsFailure(err, ""); f == nil || f.Code != evidence.CodeInvalidArgument {
		t.Errorf("a missing binary: %v", err)
	}
}

// fakeNVBench writes a test-only stand-in for an NVBench binary (no CUDA
// device here): it answers --version as NVBench does and, given --json
// FILE, writes the shared real NVBench JSON (testdata/nvbench) there.
func fakeNVBench(t *testing.T, version string) string {
	t.Helper()
	ref, _ := filepath.Abs(filepath.Join(repoRoot, "testdata", "nvbench", "nvbench-axes-test_ref.json"))
	dir := t.TempDir()
	script := `#!/bin/sh
set -eu
for a in "$@"; do
	case "$a" in
	--version) echo '` + version + `'; exit 0 ;;
	--help) echo 'usage: see docs/cli_help.md'; exit 0 ;;
	esac
done
out=
while [ $# -gt 0 ]; do
	case "$1" in
	--json) out=$2; shift ;;
	esac
	shift
done
[ -n "$out" ] || { echo "no --json" >&2; exit 3; }
cp '` + ref + `' "$out"
`
	p := filepath.Join(dir, "nvbench.fake")
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlan(t *testing.T) {
	r := &capture.Resolved{Executable: &evidence.Executable{Path: "/opt/bench/nvbench.example.axes"}}
	req := &capture.Request{Argv: []string{"./nvbench.example.axes", "-b", "0", "--devices", "0"}, Cwd: "/opt/bench"}
	p, err := Plan(req, "/scratch", r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/opt/bench/nvbench.example.axes", "-b", "0", "--devices", "0", "--json", "/scratch/out/nvbench.json"}
	if !slices.Equal(p.Command, want) || p.OutputDir != "/scratch/out" || !slices.Equal(p.AcceptExit, []int{0}) {
		t.Fatalf("plan %q in %s", p.Command, p.OutputDir)
	}
	for _, owned := range [][]string{{"--json", "x.json"}, {"--jsonbin=x"}} {
		_, err := Resolve(context.Background(), &capture.Request{Argv: append([]string{fakeNVBench(t, "NVBench v0.1.0")}, owned...), Cwd: "/"})
		if f := evidence.AsFailure(err, ""); f == nil || f.Code != evidence.CodeInvalidArgument {
			t.Errorf("ARGV %q: want INVALID_ARGUMENT, got %v", owned, err)
		}
	}
}

// TestCapture runs the fake binary through the capture runner: the probe
// reads its version, the plan hands it --json, and the artifact it
// writes decodes as NVBench JSON with its states' series.
func TestCapture(t *testing.T) {
	bin := fakeNVBench(t, "NVBench v0.1.0 (main:348acbd)")
	r, err := Resolve(context.Background(), &capture.Request{Argv: []string{bin}, Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "0.1.0" || r.Executable.SHA256 == "" {
		t.Fatalf("resolved %+v", r)
	}
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	c, err := capture.Run(context.Background(), Provider, &capture.Request{Argv: []string{bin, "-b", "0"}, Cwd: t.TempDir()},
		capture.Options{ScratchRoot: t.TempDir()}, w)
	if ferr := w.Flush(); ferr != nil {
		t.Fatal(ferr)
	}
	if err != nil {
		t.Fatal(err)
	}
	var arts []*evidence.Artifact
	rd := wire.NewReader(&buf)
	for {
		b, err := rd.Next()
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
	if c == nil || len(arts) != 1 || arts[0].Role != Role || arts[0].Format != nvbenchformat.FormatName || arts[0].Name != File {
		t.Fatalf("capture %+v, artifacts %+v", c, arts)
	}
	s, err := formatstest.DecodeFile(t, nvbenchformat.Spec, arts[0].Path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Table(table.BenchSeries.Name).Rows); n < 10 {
		t.Fatalf("%d series", n)
	}
}

// TestHelpOnly: a binary whose --version line is not NVBench's but whose
// --help is NVBench's option help is accepted, with no version.
func TestHelpOnly(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bench")
	os.WriteFile(p, []byte("#!/bin/sh\ncase \"$1\" in --help) echo '* `--json <filename>`'; echo 'NVBench options';; esac\n"), 0o755)
	r, err := Resolve(context.Background(), &capture.Request{Argv: []string{p}, Cwd: dir})
	if err != nil || r.Version != "" {
		t.Fatalf("%+v %v", r, err)
	}
}
