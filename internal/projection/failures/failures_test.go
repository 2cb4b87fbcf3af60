package failures

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/pytestevents"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

const fixtures = "../../../testdata/pytest-events"

// feed passes a decoder's tables straight into a projector.
type feed struct {
	p   projection.Projector
	art *evidence.Artifact
}

type feedTable struct {
	p projection.Projector
	t *evidence.Table
}

func (f *feed) Wants(*table.Schema) bool { return true }

func (f *feed) Begin(t *evidence.Table) (formats.TableWriter, error) {
	t.ID = f.art.Digest()[:12] + "." + t.Name
	t.ArtifactIDs = []string{f.art.ID}
	t.Format = pytestevents.FormatName
	return &feedTable{f.p, t}, f.p.Table(t, formats.Caps{})
}

func (f *feedTable) Row(v any) error               { return f.p.Row(f.t, v) }
func (f *feedTable) End(s *evidence.Summary) error { return f.p.Summary(f.t, s) }
func (r *result) Begin(t *evidence.Table) error    { r.t = t; return nil }
func (r *result) Row(v evidence.Object) error      { return r.add(v) }
func (r *result) End(s *evidence.Summary) error    { r.sum = s; return nil }
func (r *result) add(v evidence.Object) error {
	if err := formats.CheckRow(r.t, v); err != nil {
		return err
	}
	r.rows = append(r.rows, v)
	return nil
}

type result struct {
	t    *evidence.Table
	rows []evidence.Object
	sum  *evidence.Summary
}

func project(t *testing.T, args evidence.Object, files ...string) *result {
	t.Helper()
	eff, given, err := param.Validate(Spec.Params, args)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Spec.New(eff, given)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		art, err := formats.ArtifactFromPath(filepath.Join(fixtures, name), "explicit")
		if err != nil {
			t.Fatal(err)
		}
		if err := formats.Run(context.Background(), pytestevents.Spec, art, map[string]int64{pytestevents.LimitItems: pytestevents.DefaultItems}, nil, &feed{p, art}); err != nil {
			t.Fatal(err)
		}
	}
	var r result
	if err := p.Finish(&r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func ids(rows []evidence.Object) []string {
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%s %s", r["outcome"], r["nodeid"]))
	}
	return out
}

func TestSuite(t *testing.T) {
	r := project(t, nil, "suite.pytest-events.jsonl")
	want := []string{
		"error test_collect_error.py",
		"error test_outcomes.py::test_fixture_error",
		"error test_outcomes.py::test_teardown_error",
		"error test_outcomes.py::test_fail_and_teardown_error",
		"failed test_outcomes.py::test_fail_assert",
		"failed test_outcomes.py::test_fail_exception",
		"failed test_outcomes.py::test_param[2]",
		"failed test_outcomes.py::test_xpass_strict",
		"failed test_outcomes.py::test_fail_and_teardown_error",
		"failed test_outcomes.py::TestGroup::test_method_fail",
		`failed test_outcomes.py::test_unicode_ids[na\xefve]`,
		`failed test_outcomes.py::test_unicode_ids[\u65e5\u672c\u8a9e]`,
	}
	if got := ids(r.rows); !slices.Equal(got, want) {
		t.Fatalf("rows\n got %q\nwant %q", got, want)
	}
	if r.rows[0]["kind"] != table.KindCollector || r.rows[0]["phase"] != table.PhaseCollect {
		t.Fatalf("the collection error keeps its collector identity: %v", r.rows[0])
	}
	s := r.sum
	if !s.Complete || s.Truncation != nil || s.RowsObserved != 12 || s.RowsEmitted != 12 {
		t.Fatalf("summary %+v", s)
	}
	for name, n := range map[string]int64{"passed": 6, "failed": 8, "error": 3, "skipped": 3, "xfailed": 1, "xpassed": 1,
		"collection_errors": 1, "collection_skipped": 1, "collected": 21, "deselected": 0, "exit_status": 1} {
		if got := s.Metrics[name].Value; got != n {
			t.Errorf("metric %s = %v, want %d", name, got, n)
		}
	}
	if r.t.Name != Table || r.t.Evidence != evidence.Derived || r.t.Projection != Name {
		t.Fatalf("header %+v", r.t)
	}
}

// TestJUnitFailures: the projected identities are exactly the testcases
// pytest's own JUnit XML marks failure or error, for the same runs.
func TestJUnitFailures(t *testing.T) {
	for _, run := range []string{"suite", "suite-pytest-8.3.0", "xdist"} {
		t.Run(run, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(fixtures, run+".junit.xml"))
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Suites []struct {
					Failures int `xml:"failures,attr"`
					Errors   int `xml:"errors,attr"`
					Cases    []struct {
						Classname string    `xml:"classname,attr"`
						Name      string    `xml:"name,attr"`
						Failure   *struct{} `xml:"failure"`
						Error     *struct{} `xml:"error"`
					} `xml:"testcase"`
				} `xml:"testsuite"`
			}
			if err := xml.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, c := range doc.Suites[0].Cases {
				switch {
				case c.Failure != nil:
					want = append(want, c.Classname+"|"+c.Name+" failed")
				case c.Error != nil:
					want = append(want, c.Classname+"|"+c.Name+" error")
				}
			}
			r := project(t, nil, run+".pytest-events.jsonl")
			var got []string
			for _, row := range r.rows {
				got = append(got, junitName(row["nodeid"].(string))+" "+row["outcome"].(string))
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("identities\n got %q\nwant %q", got, want)
			}
			s := r.sum.Metrics
			if s["failed"].Value != int64(doc.Suites[0].Failures) ||
				s["error"].Value.(int64)+s["collection_errors"].Value.(int64) != int64(doc.Suites[0].Errors) {
				t.Fatalf("totals %v, JUnit failures %d errors %d", s, doc.Suites[0].Failures, doc.Suites[0].Errors)
			}
		})
	}
}

func junitName(nodeid string) string {
	path, params, hasParams := strings.Cut(nodeid, "[")
	names := strings.Split(path, "::")
	names[0] = strings.TrimSuffix(strings.ReplaceAll(names[0], "/", "."), ".py")
	if hasParams {
		names[len(names)-1] += "[" + params
	}
	return strings.Join(names[:len(names)-1], ".") + "|" + names[len(names)-1]
}

func TestBoundsAndFilters(t *testing.T) {
	cases := []struct {
		name     string
		args     evidence.Object
		file     string
		want     []string
		observed int64
		trunc    *evidence.Truncation
	}{
		{"top 2", evidence.Object{"top": 2}, "suite.pytest-events.jsonl",
			[]string{"error test_collect_error.py", "error test_outcomes.py::test_fixture_error"}, 12,
			&evidence.Truncation{Reason: "row_limit", Limit: 2, Omitted: 10}},
		{"glob before the bound", evidence.Object{"top": 1, "nodeid_glob": "*::TestGroup::*"}, "suite.pytest-events.jsonl",
			[]string{"failed test_outcomes.py::TestGroup::test_method_fail"}, 1, nil},
		{"brackets are literal", evidence.Object{"nodeid_glob": "*test_param[2]"}, "suite.pytest-events.jsonl",
			[]string{"failed test_outcomes.py::test_param[2]"}, 1, nil},
		{"outcome filter", evidence.Object{"outcomes": []any{"unexecuted"}}, "keyboard-interrupt.pytest-events.jsonl",
			[]string{"unexecuted test_interrupt.py::test_after", "unexecuted test_interrupt.py::test_after_too"}, 2, nil},
		{"interrupted before unexecuted", evidence.Object{"top": 1}, "keyboard-interrupt.pytest-events.jsonl",
			[]string{"interrupted test_interrupt.py::test_interrupted"}, 3,
			&evidence.Truncation{Reason: "row_limit", Limit: 1, Omitted: 2}},
		{"crash first", evidence.Object{}, "xdist-crash.pytest-events.jsonl",
			[]string{"crashed test_crash.py::test_worker_crash", "failed test_crash.py::test_fail_after"}, 2, nil},
		{"collection interrupted", evidence.Object{"top": 1}, "collection-interrupted.pytest-events.jsonl",
			[]string{"error test_collect_error.py"}, 22,
			&evidence.Truncation{Reason: "row_limit", Limit: 1, Omitted: 21}},
		{"nothing failed", evidence.Object{}, "no-tests.pytest-events.jsonl", nil, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := project(t, c.args, c.file)
			if got := ids(r.rows); !slices.Equal(got, c.want) {
				t.Fatalf("rows %q, want %q", got, c.want)
			}
			if r.sum.RowsObserved != c.observed {
				t.Fatalf("rows_observed %d, want %d", r.sum.RowsObserved, c.observed)
			}
			if (r.sum.Truncation == nil) != (c.trunc == nil) || (c.trunc != nil && *r.sum.Truncation != *c.trunc) {
				t.Fatalf("truncation %+v, want %+v", r.sum.Truncation, c.trunc)
			}
			if c.trunc != nil && r.sum.Complete {
				t.Fatal("a truncated projection says complete")
			}
		})
	}
}

func TestIncompleteInputs(t *testing.T) {
	for _, f := range []string{"keyboard-interrupt", "xdist-crash", "collection-interrupted", "internal-error"} {
		t.Run(f, func(t *testing.T) {
			r := project(t, nil, f+".pytest-events.jsonl")
			if r.sum.Complete || len(r.sum.Limitations) == 0 {
				t.Fatalf("complete=%v limitations=%q", r.sum.Complete, r.sum.Limitations)
			}
		})
	}
	t.Run("table without summary", func(t *testing.T) {
		p, _ := New(evidence.Object{"top": int64(5)}, nil)
		tb := &evidence.Table{ID: "x.pytest.outcomes", Name: table.PytestOutcomes.Name, Columns: Columns()}
		if err := p.Table(tb, formats.Caps{}); err != nil {
			t.Fatal(err)
		}
		var r result
		if err := p.Finish(&r); err != nil {
			t.Fatal(err)
		}
		if r.sum.Complete || r.sum.Metrics["exit_status"].Value != nil || r.sum.Metrics["session_finished"].Value != false {
			t.Fatalf("summary %+v", r.sum)
		}
	})
}

// TestPassingNeverConsumesBudget: thousands of passing and skipped tests
// ahead of one failure leave the whole budget to the failure.
func TestPassingNeverConsumesBudget(t *testing.T) {
	p, err := New(evidence.Object{"top": int64(1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tb := &evidence.Table{ID: "x.pytest.outcomes", Name: table.PytestOutcomes.Name, Columns: Columns()}
	if err := p.Table(tb, formats.Caps{}); err != nil {
		t.Fatal(err)
	}
	row := func(id, kind, outcome string) evidence.Object {
		return evidence.Object{"artifact_id": "a", "nodeid": id, "kind": kind, "outcome": outcome, "phase": "call",
			"duration": 0.1, "file": nil, "line": int64(-1), "worker": nil, "message": nil, "longrepr": nil, "longrepr_truncated": false}
	}
	for i := range 3000 {
		o := []string{"passed", "skipped", "xfailed", "xpassed"}[i%4]
		if err := p.Row(tb, row(fmt.Sprint("t::pass", i), table.KindTest, o)); err != nil {
			t.Fatal(err)
		}
		if err := p.Row(tb, row(fmt.Sprint("mod", i), table.KindCollector, "passed")); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Row(tb, row("t::the_failure", table.KindTest, "failed")); err != nil {
		t.Fatal(err)
	}
	var r result
	if err := p.Finish(&r); err != nil {
		t.Fatal(err)
	}
	if got := ids(r.rows); !slices.Equal(got, []string{"failed t::the_failure"}) || r.sum.RowsObserved != 1 || r.sum.Truncation != nil {
		t.Fatalf("rows %q observed %d truncation %+v", got, r.sum.RowsObserved, r.sum.Truncation)
	}
	if r.sum.Metrics["passed"].Value != int64(750) {
		t.Fatalf("passed %v", r.sum.Metrics["passed"].Value)
	}
}

func TestArguments(t *testing.T) {
	cases := []struct {
		name string
		args evidence.Object
		code evidence.Code
	}{
		{"passing outcome", evidence.Object{"outcomes": []any{"passed"}}, evidence.CodeInvalidArgument},
		{"top zero", evidence.Object{"top": 0}, evidence.CodeInvalidArgument},
		{"unknown argument", evidence.Object{"metric": "x"}, evidence.CodeInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eff, given, err := param.Validate(Spec.Params, c.args)
			if err == nil {
				_, err = Spec.New(eff, given)
			}
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != c.code {
				t.Fatalf("want %s, got %v", c.code, err)
			}
		})
	}
	p, _ := New(evidence.Object{"top": int64(1)}, nil)
	var f *evidence.Failure
	if err := p.Table(&evidence.Table{ID: "x", Name: "cpu.frames"}, formats.Caps{}); !errors.As(err, &f) || f.Code != evidence.CodeUnsupportedFormat {
		t.Fatalf("other table: %v", err)
	}
}
