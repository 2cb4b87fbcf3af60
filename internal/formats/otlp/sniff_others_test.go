package otlp

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

// TestSniffOthers: no other fixture of the repository (pprof, Perfetto,
// Chrome JSON, every other format) is taken for OTLP.
func TestSniffOthers(t *testing.T) {
	root := formatstest.Testdata()
	n := 0
	filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || strings.Contains(path, string(filepath.Separator)+"otlp"+string(filepath.Separator)) {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		b := make([]byte, formats.SniffBytes)
		k, _ := f.Read(b)
		n++
		if sniff(b[:k]) == formats.Yes {
			t.Errorf("%s sniffed as OTLP", path)
		}
		return nil
	})
	if n < 50 {
		t.Fatalf("only %d fixtures seen", n)
	}
}
