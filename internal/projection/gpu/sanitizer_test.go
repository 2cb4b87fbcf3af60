package gpu

import (
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/sanitizer"
	"github.com/flameox/flameox/internal/projection/projectiontest"
)

func decodeSanitizer(t testing.TB, file string) *projectiontest.Input {
	t.Helper()
	return projectiontest.Decode(t, sanitizer.Spec, filepath.Join("../../../testdata/sanitizer", file), nil)[0]
}

func TestFindings(t *testing.T) {
	in := decodeSanitizer(t, "guide-snippets.txt")
	res, err := projectiontest.Run(Findings, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 16 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	// Errors first, then warnings, each in report order.
	seenWarning := false
	for _, r := range res.Rows {
		if r["severity"] == "warning" {
			seenWarning = true
		} else if seenWarning {
			t.Fatalf("an error after a warning: %v", r)
		}
	}
	res, err = projectiontest.Run(Findings, evidence.Object{"kinds": []any{"race", "hazard"}, "severities": []any{"error"}}, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0]["kind"] != "hazard" {
		t.Fatalf("%v", res.Rows)
	}
	res, err = projectiontest.Run(Findings, evidence.Object{"mode": "groups", "kinds": []any{"invalid_access"}}, in)
	if err != nil {
		t.Fatal(err)
	}
	// The two cluster reads share kernel and line; the OptiX write is its own.
	if len(res.Rows) != 2 || res.Rows[0]["count"] != int64(2) || res.Header.Name != "gpu.sanitizer_groups" {
		t.Fatalf("%v", res.Rows)
	}
}

func TestFindingsCarryCoverage(t *testing.T) {
	in := decodeSanitizer(t, "leakcheck-demo.txt")
	res, err := projectiontest.Run(Findings, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Complete || len(res.Summary.Limitations) == 0 {
		t.Fatalf("a report that printed fewer errors than it counted is incomplete: %+v", res.Summary)
	}
}

func FuzzFindingRows(f *testing.F) {
	projectiontest.FuzzRows(f, Findings, decodeSanitizer(f, "memcheck-demo.txt"), nil, evidence.Object{"mode": "groups"})
}

func BenchmarkFindings(b *testing.B) {
	projectiontest.Bench(b, Findings, evidence.Object{"mode": "groups"}, decodeSanitizer(b, "guide-snippets.txt"))
}
