package sarifresults

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/sarif"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

const (
	testdata  = "../../../testdata/sarif"
	gosecRoot = "/tmp/flameox-sarif-fixture/gosec"
)

// decoded holds one decoder table as the projection sees it.
type decoded struct {
	header  *evidence.Table
	rows    []evidence.Object
	summary *evidence.Summary
}

type sink struct{ tables []*decoded }

func (s *sink) Wants(*table.Schema) bool { return true }

func (s *sink) Begin(t *evidence.Table) (formats.TableWriter, error) {
	t.ID = "t" + string(rune('0'+len(s.tables)))
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
func (e *emitted) Begin(t *evidence.Table) error { e.header = t; return nil }
func (e *emitted) Row(v evidence.Object) error   { e.rows = append(e.rows, v); return nil }
func (e *emitted) End(s *evidence.Summary) error { e.summary = s; return nil }

type emitted struct {
	header  *evidence.Table
	rows    []evidence.Object
	summary *evidence.Summary
}

func decode(t *testing.T, file string, opts evidence.Object) *decoded {
	t.Helper()
	art, err := formats.ArtifactFromPath(filepath.Join(testdata, file), "explicit")
	if err != nil {
		t.Fatal(err)
	}
	lim, _ := formats.EffectiveLimits(sarif.Spec, nil)
	s := &sink{}
	if err := formats.Run(context.Background(), sarif.Spec, art, lim, opts, s); err != nil {
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
		{"errors", evidence.Object{"levels": []any{"error"}}, isErr, count(gosec.rows, isErr), true},
		{"include dir", evidence.Object{"include": []any{"util"}}, inUtil, count(gosec.rows, inUtil), true},
		{"include absolute inside root", evidence.Object{"include": []any{gosecRoot + "/util"}}, inUtil, count(gosec.rows, inUtil), true},
		{"exclude glob", evidence.Object{"exclude": []any{"util/**"}}, func(r evidence.Object) bool { return !inUtil(r) }, 14 - count(gosec.rows, inUtil), true},
		{"rule", evidence.Object{"rules": []any{"G104"}}, func(r evidence.Object) bool { return r["rule_id"] == "G104" }, count(gosec.rows, func(r evidence.Object) bool { return r["rule_id"] == "G104" }), true},
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
			pop := count(gosec.rows, c.want)
			if len(out.rows) != c.rows || out.summary.RowsObserved != int64(pop) {
				t.Fatalf("got %d rows of %d observed; want %d of %d", len(out.rows), out.summary.RowsObserved, c.rows, pop)
			}
			for _, r := range out.rows {
				if !c.want(r) {
					t.Fatalf("row outside the selection: %v", r)
				}
			}
			if out.summary.Complete != c.complete {
				t.Fatalf("complete = %v", out.summary.Complete)
			}
			if tr := out.summary.Truncation; (tr != nil) != (c.rows < pop) || tr != nil && tr.Omitted != int64(pop-c.rows) {
				t.Fatalf("truncation %+v for %d of %d", tr, c.rows, pop)
			}
			for i := 1; i < len(out.rows); i++ {
				a, b := out.rows[i-1], out.rows[i]
				if severity(a["level"].(string)) > severity(b["level"].(string)) {
					t.Fatalf("rows not ranked by severity: %v before %v", a["level"], b["level"])
				}
			}
			if out.header.Operation != "" || out.header.Projection != Name {
				t.Fatalf("header %+v", out.header)
			}
			if roots := out.header.Arguments["source_roots"].([]string); !slices.Equal(roots, []string{gosecRoot}) {
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
			if _, err := run(t, args, gosec); code(err) != evidence.CodeInvalidArgument {
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
	if len(out.rows) != 14 {
		t.Fatalf("got %d rows", len(out.rows))
	}
	if out.rows[0]["path"] == nil {
		t.Fatal("rows with an accepted path must rank before unlocated ones")
	}
	out, err = run(t, evidence.Object{"include": []any{"**"}}, hostile)
	if err != nil {
		t.Fatal(err)
	}
	// src/ok.go, sub/x.go and link/secret.txt (no symlink exists under this root).
	if len(out.rows) != 3 {
		t.Fatalf("include ** kept %d rows, want the 3 with accepted paths", len(out.rows))
	}
}

func TestIncompleteInput(t *testing.T) {
	levels := decode(t, "rules-and-levels.sarif", nil)
	out, err := run(t, nil, levels)
	if err != nil {
		t.Fatal(err)
	}
	if out.summary.Complete || len(out.summary.Limitations) == 0 {
		t.Fatalf("incomplete input must stay incomplete: %+v", out.summary)
	}
	empty, err := run(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if empty.summary.Complete {
		t.Fatal("no input is not complete evidence of no findings")
	}
}
