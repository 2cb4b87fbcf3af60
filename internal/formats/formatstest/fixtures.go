package formatstest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

// Testdata is the repository's testdata directory.
func Testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata")
}

// Read returns a fixture's bytes; rel is relative to Testdata.
func Read(tb testing.TB, rel string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(Testdata(), rel))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// ReadJSON reads a fixture holding one JSON object, such as what a native
// reader saw in another fixture.
func ReadJSON(tb testing.TB, rel string) evidence.Object {
	tb.Helper()
	v, err := evidence.ParseValue(Read(tb, rel), 0)
	if err != nil {
		tb.Fatal(err)
	}
	o, ok := v.(evidence.Object)
	if !ok {
		tb.Fatalf("%s holds a %T, not an object", rel, v)
	}
	return o
}

// Seeds returns the files directly under Testdata()/dir, for fuzz corpora.
// max > 0 keeps at most max bytes of each, so a large fixture seeds the
// corpus without making every execution slow.
func Seeds(tb testing.TB, dir string, max int) [][]byte {
	tb.Helper()
	ents, err := os.ReadDir(filepath.Join(Testdata(), dir))
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b := Read(tb, filepath.Join(dir, e.Name()))
		if max > 0 && len(b) > max {
			b = b[:max]
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		tb.Fatalf("no seed files under testdata/%s", dir)
	}
	return out
}

// Canonical encodes v canonically (RFC 8785), failing the test on error,
// so values from different readers compare byte for byte.
func Canonical(tb testing.TB, v any) string {
	tb.Helper()
	b, err := evidence.AppendCanonical(nil, v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// PerfBinaryDir is where the perf fixtures' binaries were recorded
// (testdata/perf/regen.sh): a perf.data names its binaries by path, and
// perf reads their symbols and lines from there.
const PerfBinaryDir = "/tmp/flameox-perf-fixture"

// InstallPerfBinary puts the committed binary testdata/perf/bin/NAME at
// PerfBinaryDir/NAME, as regen.sh built it, when it is not there already,
// so that perf resolves the fixtures' symbols and source lines on any
// machine: perf looks a binary up by its recorded path and build id, and
// one built again elsewhere has another build id and resolves nothing.
func InstallPerfBinary(tb testing.TB, name string) {
	tb.Helper()
	want := Read(tb, filepath.Join("perf", "bin", name))
	dst := filepath.Join(PerfBinaryDir, name)
	if have, err := os.ReadFile(dst); err == nil && bytes.Equal(have, want) {
		return
	}
	if err := os.MkdirAll(PerfBinaryDir, 0o755); err != nil {
		tb.Fatal(err)
	}
	// A rename, so a test running in parallel never runs a half-written file.
	tmp, err := os.CreateTemp(PerfBinaryDir, name+".*")
	if err != nil {
		tb.Fatal(err)
	}
	_, err = tmp.Write(want)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o755)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
		tb.Fatal(err)
	}
}

// RunReference runs an independent reference reader, the Python script
// testdata/SCRIPT, with interpreter py on path, and decodes the JSON it
// prints into v.
func RunReference(tb testing.TB, py, script, path string, v any) {
	tb.Helper()
	out, err := exec.Command(py, filepath.Join(Testdata(), script), path).Output()
	if err != nil {
		tb.Fatalf("%s %s: %v", script, path, err)
	}
	if err := json.Unmarshal(out, v); err != nil {
		tb.Fatalf("%s %s: %v", script, path, err)
	}
}
