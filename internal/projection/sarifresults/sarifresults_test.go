package sarifresults

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/sarif"
	"github.com/flameox/flameox/internal/projection/projectiontest"
	"github.com/flameox/flameox/internal/table"
)

const (
	testdata  = "../../../testdata/sarif"
	gosecRoot = "/tmp/flameox-sarif-fixture/gosec"
)

func decode(t *testing.T, file string, opts evidence.Object) *projectiontest.Input {
	t.Helper()
	return projectiontest.Decode(t, sarif.Spec, filepath.Join(testdata, file), opts)[0]
}

func run(t *testing.T, args evidence.Object, inputs ...*projectiontest.Input) (*projectiontest.Result, error) {
	t.Helper()
	return projectiontest.Run(Spec, args, inputs...)
}

func count(rows []evidence.Object, pred func(evidence.Object) bool) int {
	n := 0
	for _, r := range rows {
		if pred(r) {
			n++
		}
	}
	return n
}

func TestSelectAndRank(t *testing.T) {
	gosec := decode(t, "gosec.sarif", evidence.Object{"source_root": gosecRoot})
	isErr := func(r evidence.Object) bool { return r["level"] == "error" }
	inUtil := func(r evidence.Object) bool { return strings.HasPrefix(r["path"].(string), "util/") }
	cases := []struct {
		name     string
		args     evidence.Object
		want     func(evidence.Object) bool // the selected population
		rows     int                        // rows emitted
		complete bool
	}{
		{"all", nil, func(evidence.Object) bool { return true }, 14, true},
		{"errors", evidence.Object{"levels": []any{"error"}}, isErr, count(gosec.Values(), isErr), true},
		{"include dir", evidence.Object{"include": []any{"util"}}, inUtil, count(gosec.Values(), inUtil), true},
		{"include absolute inside root", evidence.Object{"include": []any{gosecRoot + "/util"}}, inUtil, count(gosec.Values(), inUtil), true},
		{"exclude glob", evidence.Object{"exclude": []any{"util/**"}}, func(r evidence.Object) bool { return !inUtil(r) }, 14 - count(gosec.Values(), inUtil), true},
		{"rule", evidence.Object{"rules": []any{"G104"}}, func(r evidence.Object) bool { return r["rule_id"] == "G104" }, count(gosec.Values(), func(r evidence.Object) bool { return r["rule_id"] == "G104" }), true},
		// Filters apply before the bound: every kept row is in util/.
		{"filter then bound", evidence.Object{"include": []any{"util"}, "top": 1}, inUtil, 1, false},
		{"bound", evidence.Object{"top": 3}, func(evidence.Object) bool { return true }, 3, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := run(t, c.args, gosec)
			if err != nil {
				t.Fatal(err)
			}
			pop := count(gosec.Values(), c.want)
			if len(out.Rows) != c.rows || out.Summary.RowsObserved != int64(pop) {
				t.Fatalf("got %d rows of %d observed; want %d of %d", len(out.Rows), out.Summary.RowsObserved, c.rows, pop)
			}
			for _, r := range out.Rows {
				if !c.want(r) {
					t.Fatalf("row outside the selection: %v", r)
				}
			}
			if out.Summary.Complete != c.complete {
				t.Fatalf("complete = %v", out.Summary.Complete)
			}
			if tr := out.Summary.Truncation; (tr != nil) != (c.rows < pop) || tr != nil && tr.Omitted != int64(pop-c.rows) {
				t.Fatalf("truncation %+v for %d of %d", tr, c.rows, pop)
			}
			for i := 1; i < len(out.Rows); i++ {
				a, b := out.Rows[i-1], out.Rows[i]
				if severity(a["level"].(string)) > severity(b["level"].(string)) {
					t.Fatalf("rows not ranked by severity: %v before %v", a["level"], b["level"])
				}
			}
			// flameox-rank stamps the operation and projection.
			if out.Header.Operation != "" || out.Header.Projection != "" || out.Header.Name != table.SARIFCandidates.Name ||
				out.Header.Format != sarif.Spec.Name || out.Header.Decoder != gosec.Header.Decoder || out.Header.Evidence != evidence.Observed {
				t.Fatalf("header %+v", out.Header)
			}
			if roots := out.Header.Arguments["source_roots"].([]string); !slices.Equal(roots, []string{gosecRoot}) {
				t.Fatalf("source roots %v", roots)
			}
		})
	}
}

func TestBadFilters(t *testing.T) {
	gosec := decode(t, "gosec.sarif", evidence.Object{"source_root": gosecRoot})
	for name, args := range map[string]evidence.Object{
		"outside root":  {"include": []any{"/etc"}},
		"traversal":     {"exclude": []any{"../x"}},
		"bad glob":      {"include": []any{"a/[b"}},
		"unknown level": {"levels": []any{"fatal"}},
		"top zero":      {"top": 0},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := run(t, args, gosec); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
				t.Fatalf("got %v, want INVALID_ARGUMENT", err)
			}
		})
	}
}

// Results with rejected locations are kept when no include filter is set
// and never match one.
func TestUnlocatedResults(t *testing.T) {
	hostile := decode(t, "hostile-uris.sarif", evidence.Object{"source_root": "/nonexistent/root"})
	out, err := run(t, nil, hostile)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Rows) != 14 {
		t.Fatalf("got %d rows", len(out.Rows))
	}
	if out.Rows[0]["path"] == nil {
		t.Fatal("rows with an accepted path must rank before unlocated ones")
	}
	out, err = run(t, evidence.Object{"include": []any{"**"}}, hostile)
	if err != nil {
		t.Fatal(err)
	}
	// src/ok.go, sub/x.go and link/secret.txt (no symlink exists under this root).
	if len(out.Rows) != 3 {
		t.Fatalf("include ** kept %d rows, want the 3 with accepted paths", len(out.Rows))
	}
}

func TestIncompleteInput(t *testing.T) {
	levels := decode(t, "rules-and-levels.sarif", nil)
	out, err := run(t, nil, levels)
	if err != nil {
		t.Fatal(err)
	}
	if out.Summary.Complete || len(out.Summary.Limitations) == 0 {
		t.Fatalf("incomplete input must stay incomplete: %+v", out.Summary)
	}
	empty, err := run(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Summary.Complete {
		t.Fatal("no input is not complete evidence of no findings")
	}
	cut := *decode(t, "gosec.sarif", evidence.Object{"source_root": gosecRoot})
	cut.Summary = nil // the stream ended before the table's summary
	out, err = run(t, nil, &cut)
	if err != nil {
		t.Fatal(err)
	}
	if out.Summary.Complete || len(out.Rows) != 14 {
		t.Fatalf("a table cut before its summary ranks as complete: %+v", out.Summary)
	}
}

func BenchmarkSARIF(b *testing.B) {
	in := projectiontest.Decode(b, sarif.Spec, filepath.Join(testdata, "sarif-sdk-clang-RealLog.xml.sarif"), nil)[0]
	projectiontest.Bench(b, Spec, evidence.Object{"top": int64(10), "levels": []any{"error", "warning"}}, in)
}

func FuzzSARIF(f *testing.F) {
	gosec := projectiontest.Decode(f, sarif.Spec, filepath.Join(testdata, "gosec.sarif"), evidence.Object{"source_root": gosecRoot})[0]
	projectiontest.FuzzRows(f, Spec, gosec, nil, evidence.Object{"include": []any{"util"}, "rules": []any{"G104"}, "top": int64(1)})
}
