package previewtest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

// Dir is the preview fixture directory, testdata/preview at the repo root.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "testdata", "preview")
}

// Read returns a fixture's bytes, relative to Dir.
func Read(tb testing.TB, rel string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), rel))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Expected reads what a native reader saw in a fixture, as recorded by
// regen.sh in testdata/preview/expected/<base>.json.
func Expected(tb testing.TB, base string) evidence.Object {
	tb.Helper()
	v, err := evidence.ParseValue(Read(tb, filepath.Join("expected", base+".json")), 0)
	if err != nil {
		tb.Fatal(err)
	}
	return v.(evidence.Object)
}

// Canonical encodes v canonically, failing the test on error, so values
// from different readers compare byte for byte.
func Canonical(tb testing.TB, v any) string {
	tb.Helper()
	b, err := evidence.AppendCanonical(nil, v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// Seeds lists fixture files under Dir()/sub, for fuzz corpora.
func Seeds(tb testing.TB, sub string) [][]byte {
	tb.Helper()
	ents, err := os.ReadDir(filepath.Join(Dir(), sub))
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for _, e := range ents {
		if !e.IsDir() {
			out = append(out, Read(tb, filepath.Join(sub, e.Name())))
		}
	}
	return out
}
