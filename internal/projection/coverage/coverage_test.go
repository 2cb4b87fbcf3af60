package coverage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/coveragepy"
	"github.com/flameox/flameox/internal/formats/coveragepy/datafile"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

const testdata = "../../../testdata/coverage"

type decoded struct {
	header  *evidence.Table
	rows    []evidence.Object
	summary *evidence.Summary
}

type sink struct {
	spec   *formats.Spec
	tables []*decoded
}

func (s *sink) Wants(*table.Schema) bool { return true }

func (s *sink) Begin(t *evidence.Table) (formats.TableWriter, error) {
	t.ID = s.spec.Name + strconv.Itoa(len(s.tables))
	t.Format = s.spec.Name
	t.ArtifactIDs = []string{"sha256:" + t.ID}
	d := &decoded{header: t}
	s.tables = append(s.tables, d)
	return d, nil
}
func (d *decoded) Row(v any) error {
	o, err := projection.Values(d.header, v)
	d.rows = append(d.rows, o)
	return err
}
func (d *decoded) End(s *evidence.Summary) error { d.summary = s; return nil }

type emitted struct {
	header  *evidence.Table
	rows    []evidence.Object
	summary *evidence.Summary
}

func (e *emitted) Begin(t *evidence.Table) error { e.header = t; return nil }
func (e *emitted) Row(v evidence.Object) error   { e.rows = append(e.rows, v); return nil }
func (e *emitted) End(s *evidence.Summary) error { e.summary = s; return nil }

func decode(t *testing.T, spec *formats.Spec, file string) *decoded {
	t.Helper()
	art, err := formats.ArtifactFromPath(filepath.Join(testdata, file), "explicit")
	if err != nil {
		t.Fatal(err)
	}
	lim, _ := formats.EffectiveLimits(spec, nil)
	s := &sink{spec: spec}
	if err := formats.Run(context.Background(), spec, art, lim, nil, s); err != nil {
		t.Fatal(err)
	}
	return s.tables[0]
}

func run(t *testing.T, args evidence.Object, inputs ...*decoded) (*emitted, error) {
	t.Helper()
	eff, given, err := param.Validate(Spec.Params, args)
	if err != nil {
		return nil, err
	}
	p, err := Spec.New(eff, given)
	if err != nil {
		return nil, err
	}
	for _, in := range inputs {
		if err := p.Table(in.header, formats.Caps{}); err != nil {
			return nil, err
		}
		for _, r := range in.rows {
			if err := p.Row(in.header, r); err != nil {
				return nil, err
			}
		}
		if err := p.Summary(in.header, in.summary); err != nil {
			return nil, err
		}
	}
	out := &emitted{}
	return out, p.Finish(out)
}

func code(err error) evidence.Code {
	var f *evidence.Failure
	if errors.As(err, &f) {
		return f.Code
	}
	return ""
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
			if got := fmt.Sprint(files(out.rows)); got != c.want {
				t.Fatalf("rows %s, want %s", got, c.want)
			}
			if out.summary.RowsObserved != c.observed || out.summary.Complete != c.complete {
				t.Fatalf("observed %d complete %v", out.summary.RowsObserved, out.summary.Complete)
			}
			// The native totals pass through unchanged, filtered or not.
			for k, m := range report.summary.Metrics {
				if fmt.Sprint(out.summary.Metrics[k].Value) != fmt.Sprint(m.Value) {
					t.Errorf("metric %s = %v, native %v", k, out.summary.Metrics[k].Value, m.Value)
				}
			}
			if out.header.Operation != "" || out.header.Projection != Name || out.header.Format != FormatJSON {
				t.Fatalf("header %+v", out.header)
			}
		})
	}
	out, err := run(t, evidence.Object{"include": []any{"app.py"}}, report)
	if err != nil {
		t.Fatal(err)
	}
	app := report.rows[0]
	if out.summary.Metrics["selected_statements"].Value != app["statements"] || out.summary.Metrics["selected_percent_covered"].Value != app["percent_covered"] {
		t.Fatalf("selected totals %v do not equal the one selected file %v", out.summary.Metrics, app)
	}
}

func TestDataFileAlone(t *testing.T) {
	data := decode(t, datafile.Spec, "branch.coverage")
	out, err := run(t, nil, data)
	if err != nil {
		t.Fatal(err)
	}
	if out.header.Arguments["rank_by"] != ByExecutedLines || fmt.Sprint(files(out.rows)) != "[app.py shapes.py]" {
		t.Fatalf("default rank over a data file: %v %v", out.header.Arguments["rank_by"], files(out.rows))
	}
	if _, err := run(t, evidence.Object{"rank_by": "missing_lines"}, data); code(err) != evidence.CodeInvalidArgument {
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
	if out.header.Format != FormatJSON || len(out.rows) != 2 || out.rows[0]["statements"] == nil {
		t.Fatalf("the report must be ranked: %+v %v", out.header, out.rows)
	}
	if out.summary.Metrics["data_executed_arcs"].Value == nil || len(out.header.ArtifactIDs) != 2 {
		t.Fatalf("data-file metrics missing: %v", out.summary.Metrics)
	}
	if _, err := run(t, nil, report, decode(t, coveragepy.JSONSpec, "contexts.coverage.json")); code(err) != evidence.CodeInvalidArgument {
		t.Fatalf("two reports: %v", err)
	}
}

func TestNoInput(t *testing.T) {
	out, err := run(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.summary.Complete || len(out.summary.Limitations) == 0 {
		t.Fatal("no input must not be complete")
	}
}
