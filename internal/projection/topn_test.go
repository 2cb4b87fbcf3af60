package projection

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

// Every row bound speaks one vocabulary: TopN's reason is the shared
// constant, and no projection spells a reason as a literal of its own.
func TestTruncationVocabulary(t *testing.T) {
	top := NewTopN(1, func(a, b int) bool { return a > b })
	top.Add(1)
	if top.Truncation() != nil {
		t.Fatal("nothing was cut")
	}
	top.Add(2)
	if tr := top.Truncation(); tr == nil || tr.Reason != evidence.ReasonRowLimit || tr.Limit != 1 || tr.Omitted != 1 {
		t.Fatalf("truncation %+v", tr)
	}
	literal := regexp.MustCompile(`Reason:\s*"|\.Truncation\("|\.cut\s*=+\s*"`)
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if literal.MatchString(line) {
				t.Errorf("%s:%d: a truncation reason spelled as a literal: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
