package pytestevents

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/formats/jsonpreview"
	"github.com/flameox/flameox/internal/table"
)

const fixtures = "../../../testdata/pytest-events"

var testArtifact = &evidence.Artifact{ID: "sha256:" + strings.Repeat("0", 64), Path: "/test", Name: "test"}

// decode runs the decoder over r with default limits.
type (
	sink     = formatstest.Sink
	recorded = formatstest.Table
)

func decode(t testing.TB, r io.Reader, limits map[string]int64) (*recorded, error) {
	t.Helper()
	if limits == nil {
		limits = map[string]int64{LimitItems: DefaultItems}
	}
	var s sink
	err := Decode(context.Background(), formatstest.MustInput(t, Spec, testArtifact, r, limits), &s)
	if err != nil {
		return nil, err
	}
	if len(s.Tables) != 1 || s.Tables[0].Summary == nil {
		t.Fatalf("want one closed table, got %d", len(s.Tables))
	}
	return s.Tables[0], nil
}

func decodeFile(t *testing.T, name string) *recorded {
	t.Helper()
	path := filepath.Join(fixtures, name)
	art, err := formats.ArtifactFromPath(path, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	s, err := formatstest.DecodeFile(t, Spec, path, map[string]int64{LimitItems: DefaultItems}, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	tb := s.Tables[0]
	for _, r := range tb.Rows {
		if r["artifact_id"] != art.ID {
			t.Fatalf("row artifact_id %v, want %s", r["artifact_id"], art.ID)
		}
	}
	return tb
}

func metric(t *testing.T, s *evidence.Summary, name string) any {
	t.Helper()
	m, ok := s.Metrics[name]
	if !ok {
		t.Fatalf("summary lacks metric %s", name)
	}
	return m.Value
}

func rowsWhere(tb *recorded, outcome string) []evidence.Object {
	var out []evidence.Object
	for _, r := range tb.Rows {
		if r["outcome"] == outcome {
			out = append(out, r)
		}
	}
	return out
}

func TestFixtures(t *testing.T) {
	type want struct {
		counts   map[string]int64 // outcome and count metrics
		complete bool
		exit     any
		workers  int64
		limits   []string // substrings of limitations
	}
	suiteCounts := map[string]int64{
		table.OutcomePassed: 6, table.OutcomeFailed: 8, table.OutcomeError: 3, table.OutcomeSkipped: 3,
		table.OutcomeXFailed: 1, table.OutcomeXPassed: 1, table.OutcomeCrashed: 0, table.OutcomeInterrupted: 0,
		table.OutcomeUnexecuted: 0, table.MetricCollectionErrors: 1, table.MetricCollectionSkipped: 1,
		table.MetricCollected: 21, table.MetricDeselected: 0,
	}
	xdistCounts := maps(suiteCounts)
	delete(xdistCounts, table.MetricDeselected)
	cases := []struct {
		file string
		want want
	}{
		{"suite.pytest-events.jsonl", want{counts: suiteCounts, complete: true, exit: int64(1)}},
		{"suite-pytest-8.3.0.pytest-events.jsonl", want{counts: suiteCounts, complete: true, exit: int64(1)}},
		{"xdist.pytest-events.jsonl", want{counts: xdistCounts, complete: true, exit: int64(1), workers: 2,
			limits: []string{"deselected count is not observable"}}},
		{"collection-interrupted.pytest-events.jsonl", want{counts: map[string]int64{
			table.OutcomeUnexecuted: 21, table.MetricCollectionErrors: 1, table.MetricCollected: 21, table.OutcomePassed: 0,
		}, exit: int64(2), limits: []string{"interrupted: Interrupted: 1 error during collection"}}},
		{"xdist-crash.pytest-events.jsonl", want{counts: map[string]int64{
			table.OutcomePassed: 6, table.OutcomeFailed: 1, table.OutcomeCrashed: 1, table.MetricCrashedWorkers: 1,
			table.OutcomeUnexecuted: 0, table.MetricCollected: 8,
		}, exit: int64(1), workers: 3, limits: []string{"xdist worker gw0 crashed"}}},
		{"keyboard-interrupt.pytest-events.jsonl", want{counts: map[string]int64{
			table.OutcomePassed: 1, table.OutcomeInterrupted: 1, table.OutcomeUnexecuted: 2, table.MetricCollected: 4,
		}, exit: int64(2), limits: []string{"interrupted: KeyboardInterrupt"}}},
		// pytest lists the items before the failing modifyitems hook raises;
		// they never run.
		{"internal-error.pytest-events.jsonl", want{counts: map[string]int64{
			table.MetricInternalErrors: 1, table.MetricCollected: 1, table.OutcomeUnexecuted: 1,
		}, exit: int64(3), limits: []string{"1 internal error"}}},
		{"no-tests.pytest-events.jsonl", want{counts: map[string]int64{
			table.MetricCollected: 0, table.MetricDeselected: 4, table.OutcomePassed: 0,
		}, complete: true, exit: int64(5)}},
		{"bounds.pytest-events.jsonl", want{counts: map[string]int64{
			table.OutcomeFailed: 2, table.OutcomeSkipped: 1, table.MetricCollected: 3,
		}, complete: true, exit: int64(1)}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			tb := decodeFile(t, c.file)
			s := tb.Summary
			for name, n := range c.want.counts {
				if got := metric(t, s, name); got != n {
					t.Errorf("%s = %v, want %d", name, got, n)
				}
			}
			if s.Complete != c.want.complete {
				t.Errorf("complete = %v, want %v (limitations %q)", s.Complete, c.want.complete, s.Limitations)
			}
			if got := metric(t, s, table.MetricExitStatus); got != c.want.exit {
				t.Errorf("exit_status = %v, want %v", got, c.want.exit)
			}
			if got := metric(t, s, table.MetricWorkers); got != c.want.workers {
				t.Errorf("workers = %v, want %d", got, c.want.workers)
			}
			for _, l := range c.want.limits {
				if !slices.ContainsFunc(s.Limitations, func(x string) bool { return strings.Contains(x, l) }) {
					t.Errorf("no limitation contains %q: %q", l, s.Limitations)
				}
			}
			if s.RowsObserved != int64(len(tb.Rows)) {
				t.Errorf("rows_observed %d, rows %d", s.RowsObserved, len(tb.Rows))
			}
		})
	}
}

func maps(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestRowDetails(t *testing.T) {
	tb := decodeFile(t, "suite.pytest-events.jsonl")
	byID := map[string][]evidence.Object{}
	for _, r := range tb.Rows {
		byID[r["nodeid"].(string)] = append(byID[r["nodeid"].(string)], r)
	}
	one := func(id string) evidence.Object {
		t.Helper()
		if len(byID[id]) != 1 {
			t.Fatalf("%s: %d rows", id, len(byID[id]))
		}
		return byID[id][0]
	}
	cases := []struct {
		id, outcome, phase, message string
	}{
		{"test_collect_error.py", "error", "collect", ""},
		{"test_skipped_module.py", "skipped", "collect", "could not import 'flameox_optional_dependency'"},
		{"test_outcomes.py::test_fail_assert", "failed", "call", "assert [1, 2, 4] == [1, 2, 3]"},
		{"test_outcomes.py::test_fixture_error", "error", "setup", "RuntimeError: fixture could not connect"},
		{"test_outcomes.py::test_teardown_error", "error", "teardown", "OSError: teardown could not remove"},
		{"test_outcomes.py::test_skip_marker", "skipped", "setup", "always skipped by marker"},
		{"test_outcomes.py::test_fixture_skip", "skipped", "setup", "fixture needs a GPU"},
		{"test_outcomes.py::test_xfail", "xfailed", "call", "assert False"},
		{"test_outcomes.py::test_xpass", "xpassed", "call", "fixed but still marked"},
		{"test_outcomes.py::test_xpass_strict", "failed", "call", ""},
		{"test_outcomes.py::TestGroup::test_method_pass", "passed", "call", ""},
		{"test_outcomes.py::test_unicode_ids[\\u65e5\\u672c\\u8a9e]", "failed", "call", "non-ASCII text: 日本語 \x01\x1b[31m"},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			r := one(c.id)
			if r["outcome"] != c.outcome || r["phase"] != c.phase {
				t.Fatalf("outcome/phase = %v/%v, want %s/%s", r["outcome"], r["phase"], c.outcome, c.phase)
			}
			msg, _ := r["message"].(string)
			if !strings.Contains(msg, c.message) {
				t.Fatalf("message %q lacks %q", msg, c.message)
			}
		})
	}
	// A test that fails and then errors in teardown has two rows, as pytest counts it.
	two := byID["test_outcomes.py::test_fail_and_teardown_error"]
	if len(two) != 2 || two[0]["outcome"] != "failed" || two[1]["outcome"] != "error" || two[1]["phase"] != "teardown" {
		t.Fatalf("fail+teardown error rows: %v", two)
	}
	if lr, _ := one("test_outcomes.py::test_fixture_error")["longrepr"].(string); strings.Contains(lr, "flameox_pytest") {
		t.Fatalf("the plugin's fixture timer leaks into the traceback: %s", lr)
	}
	// Fixture timing: the session fixture sleeps 20 ms, the slow one 50 ms.
	if n := tb.Summary.Metrics[table.MetricFixtureSetups].Value; n != int64(12) {
		t.Fatalf("fixture_setups = %v, want 12", n)
	}
	if s := tb.Summary.Metrics[table.MetricFixtureSeconds].Value.(float64); s < 0.07 {
		t.Fatalf("fixture_setup_seconds = %v, below the fixtures' 70 ms of sleep", s)
	}
	slow := one("test_outcomes.py::test_slow_fixture")
	if d := slow["duration"].(float64); d < 0.05 {
		t.Fatalf("slow fixture test duration %v < the fixture's 50ms sleep", d)
	}
	if got := one("test_outcomes.py::test_pass")["line"]; got != int64(3) {
		t.Fatalf("line = %v, want pytest's zero-based 3", got)
	}
}

func TestXdistWorkerIdentity(t *testing.T) {
	tb := decodeFile(t, "xdist.pytest-events.jsonl")
	workers := map[any]int{}
	for _, r := range tb.Rows {
		if r["kind"] == table.KindTest {
			workers[r["worker"]]++
		}
	}
	if len(workers) != 2 || workers["gw0"] == 0 || workers["gw1"] == 0 {
		t.Fatalf("test rows by worker: %v (want gw0 and gw1, no nulls)", workers)
	}
	crash := decodeFile(t, "xdist-crash.pytest-events.jsonl")
	c := rowsWhere(crash, table.OutcomeCrashed)
	if len(c) != 1 || c[0]["nodeid"] != "test_crash.py::test_worker_crash" || c[0]["worker"] != "gw0" || c[0]["phase"] != "crash" {
		t.Fatalf("crashed rows: %v", c)
	}
	if !strings.Contains(c[0]["message"].(string), "crashed while running") {
		t.Fatalf("crash message: %v", c[0]["message"])
	}
}

func TestInterruptedRows(t *testing.T) {
	tb := decodeFile(t, "keyboard-interrupt.pytest-events.jsonl")
	in := rowsWhere(tb, table.OutcomeInterrupted)
	if len(in) != 1 || in[0]["nodeid"] != "test_interrupt.py::test_interrupted" || in[0]["phase"] != "call" {
		t.Fatalf("interrupted: %v", in)
	}
	var un []string
	for _, r := range rowsWhere(tb, table.OutcomeUnexecuted) {
		un = append(un, r["nodeid"].(string))
		if r["phase"] != nil || r["duration"] != nil {
			t.Fatalf("unexecuted row with phase or duration: %v", r)
		}
	}
	if want := []string{"test_interrupt.py::test_after", "test_interrupt.py::test_after_too"}; !slices.Equal(un, want) {
		t.Fatalf("unexecuted %v, want %v", un, want)
	}
}

func TestBoundsFixture(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures, "bounds.pytest-events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range bytes.SplitAfter(raw, []byte("\n")) {
		if len(l) > MaxLine {
			t.Fatalf("line %d has %d bytes", i+1, len(l))
		}
	}
	var start struct {
		Args    []string `json:"args"`
		Omitted int      `json:"args_omitted"`
	}
	if err := json.Unmarshal(raw[:bytes.IndexByte(raw, '\n')], &start); err != nil {
		t.Fatal(err)
	}
	if len(start.Args) != 64 || start.Omitted != 79 {
		t.Fatalf("run_start args %d omitted %d, want 64 and 79", len(start.Args), start.Omitted)
	}
	tb := decodeFile(t, "bounds.pytest-events.jsonl")
	hashed := regexp.MustCompile(`^test_bounds\.py::test_long_nodeid\[x+\.\.\.\[sha256:[0-9a-f]{64}\]\]?`)
	var sawLong, sawHuge bool
	for _, r := range tb.Rows {
		id := r["nodeid"].(string)
		switch {
		case strings.HasPrefix(id, "test_bounds.py::test_long_nodeid"):
			sawLong = true
			if !hashed.MatchString(id) || len(id) > 4096 {
				t.Fatalf("long node id not bounded with its digest: %d bytes %.80q", len(id), id)
			}
		case id == "test_bounds.py::test_huge_longrepr":
			sawHuge = true
			lr := r["longrepr"].(string)
			if r["longrepr_truncated"] != true || len(lr) > 16384 {
				t.Fatalf("longrepr %d bytes, truncated=%v", len(lr), r["longrepr_truncated"])
			}
		case id == "test_bounds.py::test_huge_skip_reason":
			if m := r["message"].(string); len(m) > 1024 {
				t.Fatalf("skip reason %d bytes", len(m))
			}
		}
	}
	if !sawLong || !sawHuge {
		t.Fatal("bounds fixture rows missing")
	}
}

// junitCase is one <testcase> with its result.
type junitCase struct {
	Classname string    `xml:"classname,attr"`
	Name      string    `xml:"name,attr"`
	Failure   *struct{} `xml:"failure"`
	Error     *struct{} `xml:"error"`
	Skipped   *struct{} `xml:"skipped"`
}

type junitSuite struct {
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

// ReadJUnit parses pytest's JUnit XML: one <testsuites> with one suite.
func readJUnit(t *testing.T, path string) junitSuite {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []junitSuite `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%s: %d suites", path, len(doc.Suites))
	}
	return doc.Suites[0]
}

// junitName maps a node id to JUnit's classname and name the way pytest's
// junitxml plugin does: path segments dotted, ".py" dropped, parameters
// kept on the last name.
func junitName(nodeid string) string {
	path, params, hasParams := strings.Cut(nodeid, "[")
	names := strings.Split(path, "::")
	names[0] = strings.TrimSuffix(strings.ReplaceAll(names[0], "/", "."), ".py")
	if hasParams {
		names[len(names)-1] += "[" + params
	}
	return strings.Join(names[:len(names)-1], ".") + "|" + names[len(names)-1]
}

func junitResult(c junitCase) string {
	switch {
	case c.Failure != nil:
		return "failure"
	case c.Error != nil:
		return "error"
	case c.Skipped != nil:
		return "skipped"
	}
	return "pass"
}

// TestJUnitAgreement compares every row with pytest's own JUnit XML of the
// same run: identities, results and the suite's totals.
func TestJUnitAgreement(t *testing.T) {
	for _, run := range []string{"suite", "suite-pytest-8.3.0", "xdist"} {
		t.Run(run, func(t *testing.T) {
			ju := readJUnit(t, filepath.Join(fixtures, run+".junit.xml"))
			tb := decodeFile(t, run+".pytest-events.jsonl")
			var want, got []string
			for _, c := range ju.Cases {
				want = append(want, c.Classname+"|"+c.Name+" "+junitResult(c))
			}
			var failures, errs, skipped, tests int
			for _, r := range tb.Rows {
				res := map[any]string{
					"passed": "pass", "xpassed": "pass", "failed": "failure", "error": "error",
					"skipped": "skipped", "xfailed": "skipped",
				}[r["outcome"]]
				if r["kind"] == table.KindCollector && r["outcome"] == table.OutcomePassed {
					continue // JUnit lists only collectors that did not pass
				}
				if res == "" {
					t.Fatalf("row outcome %v has no JUnit counterpart", r["outcome"])
				}
				got = append(got, junitName(r["nodeid"].(string))+" "+res)
				tests++
				switch res {
				case "failure":
					failures++
				case "error":
					errs++
				case "skipped":
					skipped++
				}
			}
			sort.Strings(want)
			sort.Strings(got)
			if !slices.Equal(want, got) {
				t.Fatalf("identities differ\njunit: %q\nours:  %q", want, got)
			}
			if tests != ju.Tests || failures != ju.Failures || errs != ju.Errors || skipped != ju.Skipped {
				t.Fatalf("totals tests/failures/errors/skipped = %d/%d/%d/%d, JUnit %d/%d/%d/%d",
					tests, failures, errs, skipped, ju.Tests, ju.Failures, ju.Errors, ju.Skipped)
			}
		})
	}
}

func TestTruncatedStream(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures, "suite.pytest-events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// Cut in the middle of the call report of test_fail_exception.
	at := bytes.Index(raw, []byte(`"nodeid":"test_outcomes.py::test_fail_exception","when":"call"`))
	if at < 0 {
		t.Fatal("fixture changed")
	}
	tb, err := decode(t, bytes.NewReader(raw[:at]), nil)
	if err != nil {
		t.Fatalf("truncation must not fail: %v", err)
	}
	s := tb.Summary
	if s.Complete {
		t.Fatal("truncated stream reported complete")
	}
	if !slices.ContainsFunc(s.Limitations, func(l string) bool { return strings.Contains(l, "unterminated line") }) {
		t.Fatalf("limitations %q", s.Limitations)
	}
	if n := metric(t, s, table.MetricTruncatedBytes).(int64); n <= 0 {
		t.Fatalf("unterminated_bytes %d", n)
	}
	in := rowsWhere(tb, table.OutcomeInterrupted)
	if len(in) != 1 || in[0]["nodeid"] != "test_outcomes.py::test_fail_exception" || in[0]["phase"] != "call" {
		t.Fatalf("interrupted %v", in)
	}
	if got := metric(t, s, table.OutcomeUnexecuted); got != int64(18) {
		t.Fatalf("unexecuted %v, want 18", got)
	}
	// Nothing but a partial first line: an empty, incomplete table.
	tb, err = decode(t, bytes.NewReader(raw[:40]), nil)
	if err != nil || tb.Summary.Complete || len(tb.Rows) != 0 {
		t.Fatalf("partial first line: err=%v complete=%v rows=%d", err, tb != nil && tb.Summary.Complete, len(tb.Rows))
	}
}

// event builds one valid event line.
func event(seq int, ev string, extra string) string {
	s := fmt.Sprintf(`{"event":%q,"seq":%d,"time":1.5`, ev, seq)
	if extra != "" {
		s += "," + extra
	}
	return s + "}\n"
}

const runStart = `"format":"flameox-pytest-events","version":1,"pid":1,"pytest":"9.2.0","python":"3.11.7","platform":"linux","xdist":null,"args":[],"args_omitted":0,"rootdir":"/r","invocation_dir":"/r","limits":{}`

func stream(lines ...string) string {
	var b strings.Builder
	b.WriteString(event(0, "run_start", runStart))
	for i, l := range lines {
		ev, extra, _ := strings.Cut(l, " ")
		b.WriteString(event(i+1, ev, extra))
	}
	return b.String()
}

func TestHostile(t *testing.T) {
	report := func(when, outcome string) string {
		return `test_report "nodeid":"t::a","when":"` + when + `","outcome":"` + outcome + `","duration":0.1,"file":"t","line":1,"worker":null,"wasxfail":null,"message":null,"longrepr":null,"longrepr_truncated":false`
	}
	// A valid event padded with spaces to exactly MaxLine bytes.
	exact := strings.TrimSuffix(event(1, "session_start", ""), "}\n") + strings.Repeat(" ", MaxLine) + "}\n"
	exact = exact[:len(exact)-2-(len(exact)-MaxLine)] + "}\n"
	cases := []struct {
		name  string
		in    string
		code  evidence.Code
		line  int
		limit map[string]int64
	}{
		{"line of 64 KiB + 1", event(0, "run_start", runStart) + `{"event":"session_start","seq":1,"time":1` + strings.Repeat(" ", MaxLine) + "}\n", evidence.CodeDecodeFailure, 2, nil},
		{"unterminated line beyond the bound", event(0, "run_start", runStart) + strings.Repeat("x", MaxLine+1), evidence.CodeDecodeFailure, 2, nil},
		{"not JSON", event(0, "run_start", runStart) + "hello\n", evidence.CodeDecodeFailure, 2, nil},
		{"blank line", event(0, "run_start", runStart) + "\n", evidence.CodeDecodeFailure, 2, nil},
		{"not an object", "[1]\n", evidence.CodeDecodeFailure, 1, nil},
		{"first event not run_start", event(0, "session_start", ""), evidence.CodeDecodeFailure, 1, nil},
		{"other format", event(0, "run_start", strings.Replace(runStart, "flameox-pytest-events", "x", 1)), evidence.CodeDecodeFailure, 1, nil},
		{"other version", event(0, "run_start", strings.Replace(runStart, `"version":1`, `"version":2`, 1)), evidence.CodeDecodeFailure, 1, nil},
		{"seq gap", event(0, "run_start", runStart) + event(2, "session_start", ""), evidence.CodeDecodeFailure, 2, nil},
		{"unknown event", stream("bogus"), evidence.CodeDecodeFailure, 2, nil},
		{"second session_start", stream("session_start", "session_start"), evidence.CodeDecodeFailure, 3, nil},
		{"unknown field", stream(`session_start "extra":1`), evidence.CodeDecodeFailure, 2, nil},
		{"missing field", stream(`collect_item`), evidence.CodeDecodeFailure, 2, nil},
		{"mistyped field", stream(`collect_item "nodeid":7`), evidence.CodeDecodeFailure, 2, nil},
		{"NaN duration", stream(strings.Replace(report("setup", "passed"), "0.1", "NaN", 1)), evidence.CodeDecodeFailure, 2, nil},
		{"infinite duration", stream(strings.Replace(report("setup", "passed"), "0.1", "1e999", 1)), evidence.CodeDecodeFailure, 2, nil},
		{"boolean seq", strings.Replace(event(0, "run_start", runStart), `"seq":0`, `"seq":false`, 1), evidence.CodeDecodeFailure, 1, nil},
		{"duplicate key", stream(`collect_item "nodeid":"a","nodeid":"b"`), evidence.CodeDecodeFailure, 2, nil},
		{"invalid UTF-8", stream("collect_item \"nodeid\":\"\xff\""), evidence.CodeDecodeFailure, 2, nil},
		{"lone surrogate", stream(`collect_item "nodeid":"\udc80"`), evidence.CodeDecodeFailure, 2, nil},
		{"deep nesting", stream(`session_start "x":[[[[[[1]]]]]]`), evidence.CodeDecodeFailure, 2, nil},
		{"unknown outcome", stream(report("setup", "rerun")), evidence.CodeDecodeFailure, 2, nil},
		{"call without setup", stream(report("call", "passed")), evidence.CodeDecodeFailure, 2, nil},
		{"setup twice", stream(report("setup", "passed"), report("setup", "passed")), evidence.CodeDecodeFailure, 3, nil},
		{"event after run_finish", stream("run_finish", "session_start"), evidence.CodeDecodeFailure, 3, nil},
		{"collection count mismatch", stream(`collect_item "nodeid":"a"`, `collection_finish "count":2,"deselected":0,"worker":null`), evidence.CodeDecodeFailure, 3, nil},
		{"session_finish without start", stream(`session_finish "exit_status":0,"tests_collected":0,"tests_failed":0`), evidence.CodeDecodeFailure, 2, nil},
		{"negative duration", stream(strings.Replace(report("setup", "passed"), "0.1", "-1", 1)), evidence.CodeDecodeFailure, 2, nil},
		{"negative fixture duration", stream(`fixture_setup "nodeid":"a","fixture":"f","scope":"function","duration":-0.5,"outcome":"passed","worker":null`), evidence.CodeDecodeFailure, 2, nil},
		{"item limit", stream(`collect_item "nodeid":"a"`, `collect_item "nodeid":"b"`), evidence.CodeLimitExceeded, 3, map[string]int64{LimitItems: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decode(t, strings.NewReader(c.in), c.limit)
			var f *evidence.Failure
			if !errors.As(err, &f) {
				t.Fatalf("want a typed failure, got %v", err)
			}
			if f.Code != c.code || f.Location.Line != c.line {
				t.Fatalf("got %s at line %d, want %s at line %d: %v", f.Code, f.Location.Line, c.code, c.line, f)
			}
			if f.Code == evidence.CodeLimitExceeded {
				lim, _ := f.Details["limit"].(evidence.Object)
				if lim["name"] != LimitItems || lim["value"] != c.limit[LimitItems] || lim["unit"] != "items" {
					t.Fatalf("receipt %v", f.Details["limit"])
				}
			}
		})
	}
	t.Run("one node id collected and run counts once", func(t *testing.T) {
		in := stream(`collect_item "nodeid":"a"`, `collection_finish "count":1,"deselected":0,"worker":null`, `test_start "nodeid":"a"`)
		if _, err := decode(t, strings.NewReader(in), map[string]int64{LimitItems: 1}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("line of exactly 64 KiB", func(t *testing.T) {
		if len(exact) != MaxLine {
			t.Fatalf("built a %d-byte line", len(exact))
		}
		if _, err := decode(t, strings.NewReader(event(0, "run_start", runStart)+exact), nil); err != nil {
			t.Fatal(err)
		}
	})
}

func TestIOTestReaders(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures, "xdist.pytest-events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := decode(t, bytes.NewReader(raw), nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := evidence.Canonical(append([]any{base.Summary}, rowsAny(base.Rows)...))
	readers := map[string]func(io.Reader) io.Reader{
		"OneByteReader": iotest.OneByteReader,
		"HalfReader":    iotest.HalfReader,
		"DataErrReader": iotest.DataErrReader,
	}
	for name, wrap := range readers {
		t.Run(name, func(t *testing.T) {
			tb, err := decode(t, wrap(bytes.NewReader(raw)), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := evidence.Canonical(append([]any{tb.Summary}, rowsAny(tb.Rows)...))
			if !bytes.Equal(got, want) {
				t.Fatal("output differs from a plain reader's")
			}
		})
	}
	t.Run("ErrReader", func(t *testing.T) {
		_, err := decode(t, io.MultiReader(bytes.NewReader(raw[:1000]), iotest.ErrReader(errors.New("disk gone"))), nil)
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeIOFailure {
			t.Fatalf("want IO_FAILURE, got %v", err)
		}
	})
}

func rowsAny(rows []evidence.Object) []any {
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out
}

func TestSniff(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures, "suite.pytest-events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		in   []byte
		want formats.Verdict
	}{
		{"fixture", raw[:min(len(raw), formats.SniffBytes)], formats.Yes},
		{"first 60 bytes", raw[:60], formats.NeedMore},
		{"empty", nil, formats.NeedMore},
		{"after a byte order mark", append(slices.Clip(formats.BOM), raw[:min(len(raw), formats.SniffBytes-3)]...), formats.Yes},
		// Never No: the name decides (TestNameClaims).
		{"other jsonl", []byte(`{"event":"run_start","format":"other"}` + "\n"), formats.NeedMore},
		{"other event", []byte(`{"event":"x","format":"flameox-pytest-events"}`), formats.NeedMore},
		{"array", []byte(`[1,2]`), formats.NeedMore},
		{"text", []byte("hello"), formats.NeedMore},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Sniff(c.in); got != c.want {
				t.Fatalf("Sniff = %v, want %v", got, c.want)
			}
		})
	}
}

// FuzzDecode: no panic, typed failures, a consistent summary.
//
// The fuzzer minimizes every new input with a number of executions
// quadratic in its length, and an execution costs a few hundred
// microseconds: whole fixtures as seeds (up to 48 KB) left it minimizing
// instead of fuzzing. So the seeds are the fixtures cut into small valid
// streams (fuzzSeeds), whole and cut off mid-line, and inputs are the
// events after a real run_start line that the harness supplies, which
// minimizing need not keep. An input whose first line is a run_start is
// decoded as it is: one seed is a lone run_start, to fuzz its fields.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(fixtures, "*.pytest-events.jsonl"))
	seen := map[string]bool{}
	var runStart []byte
	for _, p := range files {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, seed := range fuzzSeeds(f, raw, seen) {
			first, events, _ := bytes.Cut(seed, []byte("\n"))
			if runStart == nil {
				runStart = append(first, '\n')
			}
			f.Add(events)
			f.Add(events[:len(events)*2/3]) // cut off mid-line, tests in flight
		}
	}
	f.Add(runStart)
	_, events, _ := strings.Cut(stream(`collect_item "nodeid":"a"`, `collection_finish "count":1,"deselected":0,"worker":null`), "\n")
	f.Add([]byte(events))
	f.Fuzz(func(t *testing.T, data []byte) {
		if first, _, _ := bytes.Cut(data, []byte("\n")); !bytes.Contains(first, []byte(`"event":"run_start"`)) {
			data = append(slices.Clip(runStart), data...)
		}
		Sniff(data[:min(len(data), formats.SniffBytes)])
		tb, err := decode(t, bytes.NewReader(data), nil)
		if err != nil {
			var fl *evidence.Failure
			if !errors.As(err, &fl) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if tb.Summary.RowsObserved != int64(len(tb.Rows)) {
			t.Fatalf("rows_observed %d, rows %d", tb.Summary.RowsObserved, len(tb.Rows))
		}
		if tb.Summary.Complete && (tb.Summary.Metrics[table.MetricSessionFinished].Value != true || tb.Summary.Metrics[table.MetricTruncatedBytes].Value != int64(0)) {
			t.Fatalf("complete without a finished, whole session: %v", tb.Summary.Metrics)
		}
	})
}

// fuzzSeeds cuts a real stream into small valid ones: its opening events,
// then one unit (the collection, cut to two items; one test's events from
// start to teardown or crash; or one other event), then its closing
// events, renumbered, with strings cut to a few characters. Units whose
// shape (events, phases, outcomes) seen already has are skipped.
func fuzzSeeds(tb testing.TB, raw []byte, seen map[string]bool) [][]byte {
	tb.Helper()
	var open, closing, collection []map[string]any
	var units [][]map[string]any
	tests := map[string]int{} // nodeid+worker → index in units
	ids := map[string]string{}
	items := 0
	for _, ln := range bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n")) {
		dec := json.NewDecoder(bytes.NewReader(ln))
		dec.UseNumber()
		var ev map[string]any
		if err := dec.Decode(&ev); err != nil {
			tb.Fatal(err)
		}
		for k, v := range ev {
			switch {
			case k == "event" || k == "format":
			case k == "nodeid":
				// Short, but still one id per test.
				id, _ := v.(string)
				if _, ok := ids[id]; !ok {
					ids[id] = fmt.Sprintf("%s~%d", shorten(id), len(ids))
				}
				ev[k] = ids[id]
			default:
				ev[k] = shortenAll(v)
			}
		}
		name, _ := ev["event"].(string)
		switch name {
		case "run_start", "session_start":
			open = append(open, ev)
		case "session_finish", "run_finish":
			closing = append(closing, ev)
		case "collect_item":
			if items++; items <= 2 {
				collection = append(collection, ev)
			}
		case "collection_finish":
			ev["count"] = json.Number(strconv.Itoa(min(items, 2)))
			collection = append(collection, ev)
		case "collect_report", "worker_ready":
			collection = append(collection, ev)
		case "test_start", "fixture_setup", "test_report", "test_crash":
			k := fmt.Sprint(ev["nodeid"], "\x00", ev["worker"])
			i, ok := tests[k]
			if !ok || name == "test_start" && len(units[i]) > 1 {
				i = len(units)
				units = append(units, nil)
				tests[k] = i
			}
			units[i] = append(units[i], ev)
			if name == "test_crash" || name == "test_report" && ev["when"] == "teardown" {
				delete(tests, k)
			}
		default:
			units = append(units, []map[string]any{ev})
		}
	}
	units = append(units, collection)
	var out [][]byte
	for _, u := range units {
		shape := ""
		for _, ev := range u {
			shape += fmt.Sprint(ev["event"], ev["when"], ev["outcome"], ev["wasxfail"] != nil, ev["message"] != nil, ev["worker"] != nil, ev["crashed"], "|")
		}
		if seen[shape] {
			continue
		}
		seen[shape] = true
		var b []byte
		seq := 0
		for _, part := range [][]map[string]any{open, u, closing} {
			for _, ev := range part {
				ev["seq"] = json.Number(strconv.Itoa(seq))
				seq++
				line, err := json.Marshal(ev)
				if err != nil {
					tb.Fatal(err)
				}
				b = append(append(b, line...), '\n')
			}
		}
		out = append(out, b)
	}
	return out
}

func shorten(s string) string {
	if len(s) <= 12 {
		return s
	}
	return strings.ToValidUTF8(s[:12], "")
}

func shortenAll(v any) any {
	switch x := v.(type) {
	case string:
		return shorten(x)
	case []any:
		for i := range x {
			x[i] = shortenAll(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = shortenAll(x[k])
		}
	}
	return v
}

// synthetic builds a large valid stream: n tests, every tenth failing with
// a traceback.
func synthetic(n int) []byte {
	var b bytes.Buffer
	seq := 0
	emit := func(ev, extra string) {
		b.WriteString(event(seq, ev, extra))
		seq++
	}
	emit("run_start", runStart)
	emit("session_start", "")
	for i := range n {
		emit("collect_item", fmt.Sprintf(`"nodeid":"tests/test_mod.py::TestClass::test_case[%d]"`, i))
	}
	emit("collection_finish", fmt.Sprintf(`"count":%d,"deselected":0,"worker":null`, n))
	tb, _ := json.Marshal(strings.Repeat("    assert compute(x) == expected\nE   AssertionError\n", 20))
	for i := range n {
		id := fmt.Sprintf("tests/test_mod.py::TestClass::test_case[%d]", i)
		emit("test_start", fmt.Sprintf(`"nodeid":%q`, id))
		for _, when := range []string{"setup", "call", "teardown"} {
			outcome, msg, lr := "passed", "null", "null"
			if when == "call" && i%10 == 0 {
				outcome, msg, lr = "failed", `"AssertionError"`, string(tb)
			}
			emit("test_report", fmt.Sprintf(`"nodeid":%q,"when":%q,"outcome":%q,"duration":0.00123,"file":"tests/test_mod.py","line":41,"worker":null,"wasxfail":null,"message":%s,"longrepr":%s,"longrepr_truncated":false`, id, when, outcome, msg, lr))
		}
	}
	emit("session_finish", fmt.Sprintf(`"exit_status":1,"tests_collected":%d,"tests_failed":%d`, n, n/10))
	emit("run_finish", "")
	return b.Bytes()
}

func BenchmarkDecode(b *testing.B) {
	data := synthetic(5000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Decode(context.Background(), formatstest.MustInput(b, Spec, testArtifact, bytes.NewReader(data), nil), formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
}

// A file whose name claims the format fails as it when malformed, and a
// stream after a UTF-8 byte order mark is decoded (the mark skipped,
// offsets those of the file); neither becomes a generic JSONL preview.
func TestNameClaims(t *testing.T) {
	specs := []*formats.Spec{Spec, jsonpreview.JSONL}
	raw, err := os.ReadFile(filepath.Join(fixtures, "suite.pytest-events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) (string, []byte) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p, b[:min(len(b), formats.SniffBytes)]
	}
	p, prefix := write("bom.pytest-events.jsonl", append(slices.Clip(formats.BOM), raw...))
	if got, err := formats.Detect(specs, p, prefix, ""); err != nil || got != Spec {
		t.Fatalf("BOM stream detected as %s (%v)", specName(got), err)
	}
	s, err := formatstest.DecodeFile(t, Spec, p, map[string]int64{LimitItems: DefaultItems}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := decodeFile(t, "suite.pytest-events.jsonl")
	if got := s.Tables[0]; len(got.Rows) != len(want.Rows) || got.Summary.Complete != want.Summary.Complete {
		t.Fatalf("BOM stream: %d rows complete %v, want %d rows complete %v", len(got.Rows), got.Summary.Complete, len(want.Rows), want.Summary.Complete)
	}
	// A bad second line is located by its offset in the file, BOM included.
	first, _, _ := bytes.Cut(raw, []byte("\n"))
	p, _ = write("bom-bad.pytest-events.jsonl", append(append(slices.Clip(formats.BOM), first...), "\n{bad\n"...))
	_, err = formatstest.DecodeFile(t, Spec, p, nil, nil)
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeDecodeFailure || f.Location.Line != 2 || f.Location.Offset < int64(len(first)+4) {
		t.Fatalf("got %v at %+v, want DECODE_FAILURE at line 2, offset >= %d", err, f, len(first)+4)
	}
	for _, body := range []string{`{"event":"session_start","seq":0}` + "\n", "garbage\n"} {
		p, prefix := write("bad.pytest-events.jsonl", []byte(body))
		if got, err := formats.Detect(specs, p, prefix, ""); err != nil || got != Spec {
			t.Fatalf("%q detected as %s (%v), want pytest-events", body, specName(got), err)
		}
		_, err := formatstest.DecodeFile(t, Spec, p, nil, nil)
		if evidence.CodeOf(err) != evidence.CodeDecodeFailure {
			t.Fatalf("%q: %v, want DECODE_FAILURE", body, err)
		}
	}
}

func specName(s *formats.Spec) string {
	if s == nil {
		return "nothing"
	}
	return s.Name
}

// session_finish's own counts are checked against the stream: a count the
// stream contradicts makes the table incomplete, stating the
// disagreement, because the stream then lacks part of the session. The
// real fixtures (xdist, crashes, interrupts, internal errors and
// collection errors among them) all agree with their own counts.
func TestSessionCountsContradicted(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(fixtures, "*.pytest-events.jsonl"))
	for _, p := range files {
		tb := decodeFile(t, filepath.Base(p))
		for _, l := range tb.Summary.Limitations {
			if strings.Contains(l, "session_finish says") {
				t.Errorf("%s: %s", filepath.Base(p), l)
			}
		}
	}
	raw, err := os.ReadFile(filepath.Join(fixtures, "suite.pytest-events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"tests_collected":21,"tests_failed":12`)) {
		t.Fatal("the fixture's session_finish changed; update the test")
	}
	want := decodeFile(t, "suite.pytest-events.jsonl")
	if !want.Summary.Complete {
		t.Fatal("the unedited fixture is incomplete")
	}
	for _, c := range []struct{ name, counts, says string }{
		{"collected", `"tests_collected":30,"tests_failed":12`, "30 tests were collected but the stream lists 21"},
		{"failed", `"tests_collected":21,"tests_failed":5`, "5 reports failed but the stream holds 12"},
	} {
		t.Run(c.name, func(t *testing.T) {
			edited := bytes.Replace(raw, []byte(`"tests_collected":21,"tests_failed":12`), []byte(c.counts), 1)
			tb, err := decode(t, bytes.NewReader(edited), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tb.Summary.Complete || len(tb.Rows) != len(want.Rows) {
				t.Fatalf("complete %v with %d rows, want incomplete with %d", tb.Summary.Complete, len(tb.Rows), len(want.Rows))
			}
			if !slices.ContainsFunc(tb.Summary.Limitations, func(l string) bool { return strings.Contains(l, c.says) }) {
				t.Fatalf("limitations %q lack %q", tb.Summary.Limitations, c.says)
			}
		})
	}
}

// Every summary metric states its unit, null values included.
func TestMetricUnits(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(fixtures, "*.pytest-events.jsonl"))
	for _, p := range files {
		tb := decodeFile(t, filepath.Base(p))
		for name, m := range tb.Summary.Metrics {
			if m.Unit == "" {
				t.Errorf("%s: metric %s has no unit", filepath.Base(p), name)
			}
		}
	}
}
