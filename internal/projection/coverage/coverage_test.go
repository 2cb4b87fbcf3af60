package coverage

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/coveragepy"
	"github.com/flameox/flameox/internal/formats/coveragepy/datafile"
	"github.com/flameox/flameox/internal/projection/projectiontest"
	"github.com/flameox/flameox/internal/table"
)

const testdata = "../../../testdata/coverage"

func decode(t *testing.T, spec *formats.Spec, file string) *projectiontest.Input {
	t.Helper()
	return projectiontest.Decode(t, spec, filepath.Join(testdata, file), nil)[0]
}

func run(t *testing.T, args evidence.Object, inputs ...*projectiontest.Input) (*projectiontest.Result, error) {
	t.Helper()
	return projectiontest.Run(Spec, args, inputs...)
}

func files(rows []evidence.Object) []string {
	var out []string
	for _, r := range rows {
		out = append(out, filepath.Base(r["file"].(string)))
	}
	return out
}

func TestRankAndFilter(t *testing.T) {
	report := decode(t, coveragepy.JSONSpec, "branch.coverage.json")
	cases := []struct {
		name     string
		args     evidence.Object
		want     string // files in order
		observed int64
		complete bool
	}{
		{"default ranks missing lines", nil, "[shapes.py app.py]", 2, true},
		{"lowest percent first", evidence.Object{"rank_by": "percent_covered"}, "[shapes.py app.py]", 2, true},
		{"executed lines", evidence.Object{"rank_by": "executed_lines"}, "[app.py shapes.py]", 2, true},
		{"missing branches", evidence.Object{"rank_by": "missing_branches"}, "[shapes.py app.py]", 2, true},
		{"by file", evidence.Object{"rank_by": "file"}, "[app.py shapes.py]", 2, true},
		{"include", evidence.Object{"include": []any{"app.py"}}, "[app.py]", 1, true},
		{"exclude", evidence.Object{"exclude": []any{"shapes.py"}}, "[app.py]", 1, true},
		{"bound after ranking", evidence.Object{"top": 1}, "[shapes.py]", 2, false},
		{"filter before bound", evidence.Object{"top": 1, "include": []any{"app.py"}}, "[app.py]", 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := run(t, c.args, report)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(files(out.Rows)); got != c.want {
				t.Fatalf("rows %s, want %s", got, c.want)
			}
			if out.Summary.RowsObserved != c.observed || out.Summary.Complete != c.complete {
				t.Fatalf("observed %d complete %v", out.Summary.RowsObserved, out.Summary.Complete)
			}
			// The native totals pass through unchanged, filtered or not.
			for k, m := range report.Summary.Metrics {
				if fmt.Sprint(out.Summary.Metrics[k].Value) != fmt.Sprint(m.Value) {
					t.Errorf("metric %s = %v, native %v", k, out.Summary.Metrics[k].Value, m.Value)
				}
			}
			// flameox-rank stamps the operation and projection.
			if out.Header.Operation != "" || out.Header.Projection != "" || out.Header.Format != coveragepy.JSONSpec.Name ||
				out.Header.Name != table.CoverageRankedFiles.Name || out.Header.Decoder != report.Header.Decoder {
				t.Fatalf("header %+v", out.Header)
			}
		})
	}
	out, err := run(t, evidence.Object{"include": []any{"app.py"}}, report)
	if err != nil {
		t.Fatal(err)
	}
	app := report.Values()[0]
	if out.Summary.Metrics["selected_statements"].Value != app["statements"] || out.Summary.Metrics["selected_percent_covered"].Value != app["percent_covered"] {
		t.Fatalf("selected totals %v do not equal the one selected file %v", out.Summary.Metrics, app)
	}
}

func TestDataFileAlone(t *testing.T) {
	data := decode(t, datafile.Spec, "branch.coverage")
	out, err := run(t, nil, data)
	if err != nil {
		t.Fatal(err)
	}
	if out.Header.Arguments["rank_by"] != ByExecutedLines || fmt.Sprint(files(out.Rows)) != "[app.py shapes.py]" {
		t.Fatalf("default rank over a data file: %v %v", out.Header.Arguments["rank_by"], files(out.Rows))
	}
	if _, err := run(t, evidence.Object{"rank_by": "missing_lines"}, data); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("rank_by=missing_lines on a data file: %v", err)
	}
	if _, err := run(t, evidence.Object{"include": []any{"**/app.py"}}, data); err != nil {
		t.Fatal(err)
	}
}

func TestBothFormats(t *testing.T) {
	data := decode(t, datafile.Spec, "branch.coverage")
	report := decode(t, coveragepy.JSONSpec, "branch.coverage.json")
	out, err := run(t, nil, data, report)
	if err != nil {
		t.Fatal(err)
	}
	if out.Header.Format != coveragepy.JSONSpec.Name || len(out.Rows) != 2 || out.Rows[0]["statements"] == nil {
		t.Fatalf("the report must be ranked: %+v %v", out.Header, out.Rows)
	}
	if out.Summary.Metrics["data_executed_arcs"].Value == nil || len(out.Header.ArtifactIDs) != 2 {
		t.Fatalf("data-file metrics missing: %v", out.Summary.Metrics)
	}
	if _, err := run(t, nil, report, decode(t, coveragepy.JSONSpec, "contexts.coverage.json")); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("two reports: %v", err)
	}
	if _, err := run(t, nil, data, decode(t, datafile.Spec, "branch.coverage")); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("one data file twice: %v", err)
	}
}

func TestNoInput(t *testing.T) {
	out, err := run(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Summary.Complete || len(out.Summary.Limitations) == 0 {
		t.Fatal("no input must not be complete")
	}
}

func BenchmarkCoverage(b *testing.B) {
	report := projectiontest.Decode(b, coveragepy.JSONSpec, filepath.Join(testdata, "pdf_toolbox.coverage.json"), nil)[0]
	projectiontest.Bench(b, Spec, evidence.Object{"top": int64(10), "exclude": []any{"**/test_*.py"}}, report)
}

func FuzzCoverage(f *testing.F) {
	report := projectiontest.Decode(f, coveragepy.JSONSpec, filepath.Join(testdata, "branch.coverage.json"), nil)[0]
	projectiontest.FuzzRows(f, Spec, report, nil, evidence.Object{"rank_by": "percent_covered", "include": []any{"app.py"}, "top": int64(1)},
		evidence.Object{"rank_by": "missing_branches"})
}
