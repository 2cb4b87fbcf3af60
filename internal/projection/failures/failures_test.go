package failures

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/pytestevents"
	"github.com/flameox/flameox/internal/projection/projectiontest"
	"github.com/flameox/flameox/internal/table"
)

const fixtures = "../../../testdata/pytest-events"

func project(t *testing.T, args evidence.Object, files ...string) *projectiontest.Result {
	t.Helper()
	var inputs []*projectiontest.Input
	for _, name := range files {
		inputs = append(inputs, projectiontest.Decode(t, pytestevents.Spec, filepath.Join(fixtures, name), nil)...)
	}
	r, err := projectiontest.Run(Spec, args, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	return r
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
	if got := ids(r.Rows); !slices.Equal(got, want) {
		t.Fatalf("rows\n got %q\nwant %q", got, want)
	}
	if r.Rows[0]["kind"] != table.KindCollector || r.Rows[0]["phase"] != table.PhaseCollect {
		t.Fatalf("the collection error keeps its collector identity: %v", r.Rows[0])
	}
	s := r.Summary
	if !s.Complete || s.Truncation != nil || s.RowsObserved != 12 || s.RowsEmitted != 12 {
		t.Fatalf("summary %+v", s)
	}
	for name, n := range map[string]int64{"passed": 6, "failed": 8, "error": 3, "skipped": 3, "xfailed": 1, "xpassed": 1,
		"collection_errors": 1, "collection_skipped": 1, "collected": 21, "deselected": 0, "exit_status": 1} {
		if got := s.Metrics[name].Value; got != n {
			t.Errorf("metric %s = %v, want %d", name, got, n)
		}
	}
	// flameox-rank stamps the operation and projection.
	if r.Header.Name != table.PytestFailures.Name || r.Header.Evidence != evidence.Derived || r.Header.Projection != "" ||
		r.Header.Format != pytestevents.Spec.Name || r.Rows[0]["artifact_id"] != r.Header.ArtifactIDs[0] {
		t.Fatalf("header %+v", r.Header)
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
			for _, row := range r.Rows {
				got = append(got, junitName(row["nodeid"].(string))+" "+row["outcome"].(string))
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("identities\n got %q\nwant %q", got, want)
			}
			s := r.Summary.Metrics
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
			if got := ids(r.Rows); !slices.Equal(got, c.want) {
				t.Fatalf("rows %q, want %q", got, c.want)
			}
			if r.Summary.RowsObserved != c.observed {
				t.Fatalf("rows_observed %d, want %d", r.Summary.RowsObserved, c.observed)
			}
			if (r.Summary.Truncation == nil) != (c.trunc == nil) || (c.trunc != nil && *r.Summary.Truncation != *c.trunc) {
				t.Fatalf("truncation %+v, want %+v", r.Summary.Truncation, c.trunc)
			}
			if c.trunc != nil && r.Summary.Complete {
				t.Fatal("a truncated projection says complete")
			}
		})
	}
}

func TestIncompleteInputs(t *testing.T) {
	for _, f := range []string{"keyboard-interrupt", "xdist-crash", "collection-interrupted", "internal-error"} {
		t.Run(f, func(t *testing.T) {
			r := project(t, nil, f+".pytest-events.jsonl")
			if r.Summary.Complete || len(r.Summary.Limitations) == 0 {
				t.Fatalf("complete=%v limitations=%q", r.Summary.Complete, r.Summary.Limitations)
			}
		})
	}
	t.Run("table without summary", func(t *testing.T) {
		p, _ := New(evidence.Object{"top": int64(5)}, nil)
		tb := &evidence.Table{ID: "x.pytest.outcomes", Name: table.PytestOutcomes.Name, Columns: table.PytestOutcomes.EvidenceColumns("")}
		if err := p.Table(tb, formats.Caps{}); err != nil {
			t.Fatal(err)
		}
		r, err := projectiontest.Finish(p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Summary.Complete || r.Summary.Metrics["exit_status"].Value != nil || r.Summary.Metrics["session_finished"].Value != false {
			t.Fatalf("summary %+v", r.Summary)
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
	tb := &evidence.Table{ID: "x.pytest.outcomes", Name: table.PytestOutcomes.Name, Columns: table.PytestOutcomes.EvidenceColumns("")}
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
	r, err := projectiontest.Finish(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(r.Rows); !slices.Equal(got, []string{"failed t::the_failure"}) || r.Summary.RowsObserved != 1 || r.Summary.Truncation != nil {
		t.Fatalf("rows %q observed %d truncation %+v", got, r.Summary.RowsObserved, r.Summary.Truncation)
	}
	if r.Summary.Metrics["passed"].Value != int64(750) {
		t.Fatalf("passed %v", r.Summary.Metrics["passed"].Value)
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
			if _, err := projectiontest.Start(Spec, c.args); evidence.CodeOf(err) != c.code {
				t.Fatalf("want %s, got %v", c.code, err)
			}
		})
	}
	p, _ := New(evidence.Object{"top": int64(1)}, nil)
	if err := p.Table(&evidence.Table{ID: "x", Name: "cpu.frames"}, formats.Caps{}); evidence.CodeOf(err) != evidence.CodeUnsupportedFormat {
		t.Fatalf("other table: %v", err)
	}
}

func BenchmarkFailures(b *testing.B) {
	var inputs []*projectiontest.Input
	for _, f := range []string{"suite.pytest-events.jsonl", "xdist.pytest-events.jsonl", "keyboard-interrupt.pytest-events.jsonl"} {
		inputs = append(inputs, projectiontest.Decode(b, pytestevents.Spec, filepath.Join(fixtures, f), nil)...)
	}
	projectiontest.Bench(b, Spec, evidence.Object{"top": int64(5)}, inputs...)
}

func FuzzFailures(f *testing.F) {
	in := projectiontest.Decode(f, pytestevents.Spec, filepath.Join(fixtures, "suite.pytest-events.jsonl"), nil)[0]
	projectiontest.FuzzRows(f, Spec, in, nil, evidence.Object{"top": int64(2), "nodeid_glob": "*fail*", "outcomes": []any{"failed", "unexecuted"}})
}

// Every metric of the failures summary states its unit, as the decoder's
// do (8.9: pytest metrics had unit null), one input or several.
func TestMetricUnits(t *testing.T) {
	for _, files := range [][]string{{"suite.pytest-events.jsonl"}, {"suite.pytest-events.jsonl", "no-tests.pytest-events.jsonl"}} {
		r := project(t, nil, files...)
		if len(r.Summary.Metrics) == 0 {
			t.Fatal("no metrics")
		}
		for name, m := range r.Summary.Metrics {
			if m.Unit == "" {
				t.Errorf("%v: metric %s has no unit", files, name)
			}
		}
	}
}
