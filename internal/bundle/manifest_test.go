package bundle

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

// FuzzManifest feeds hostile manifests to the decoder: it must never
// panic, must fail with an error (typed when it is a Failure), and what it
// accepts must encode back to exactly the bytes it read.
func FuzzManifest(f *testing.F) {
	src, store := f.TempDir(), f.TempDir()
	bl := sampleEvidence(f, src).build(f, store)
	data, err := os.ReadFile(filepath.Join(bl.Path, manifestName))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data) // layout 2
	// The same manifest as layout 1 wrote it.
	f.Add(bytes.ReplaceAll(bytes.ReplaceAll(data, []byte(Layout), []byte(layoutV1)), []byte("tables/cpu.frames/0.parquet"), []byte("tables/0-cpu.frames.parquet")))
	f.Add([]byte(`{"layout":"flameox-bundle/1"}`))
	f.Add([]byte(`{"artifacts":[],"captures":[],"failures":[],"layout":"flameox-bundle/1","members":[{"path":"../x","role":"native","sha256":"00","size":1}],"tables":[],"writer":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeManifest(data)
		if err != nil {
			var fail *evidence.Failure
			if errors.As(err, &fail) && fail.Code != evidence.CodeUnsupportedFormat && fail.Code != evidence.CodeInvalidArgument && fail.Code != evidence.CodeLimitExceeded {
				t.Fatalf("unexpected failure code %s: %v", fail.Code, fail)
			}
			return
		}
		again, err := m.encode()
		if err != nil || string(again) != string(data) {
			t.Fatalf("accepted manifest encodes to other bytes (%v)", err)
		}
		for _, mb := range m.Members {
			if !filepath.IsLocal(mb.Path) {
				t.Fatalf("accepted member path %q outside the bundle", mb.Path)
			}
		}
	})
}
