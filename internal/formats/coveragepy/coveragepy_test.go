package coveragepy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

const testdata = "../../../testdata/coverage"

type (
	sink     = formatstest.Sink
	recorded = formatstest.Table
)

func decodeFile(t testing.TB, spec *formats.Spec, path string, over map[string]int64) (*sink, error) {
	t.Helper()
	return formatstest.DecodeFile(t, spec, path, over, nil)
}

func decodeJSONBytes(r io.Reader, over map[string]int64) (*sink, error) {
	s := &sink{}
	in, err := formatstest.Input(JSONSpec, &evidence.Artifact{Path: "/x/coverage.json"}, r, over, nil)
	if err != nil {
		return nil, err
	}
	return s, JSONSpec.Decoder.Decode(context.Background(), in, s)
}

func one(t *testing.T, s *sink, err error) *recorded {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tables) != 1 || s.Tables[0].Summary == nil {
		t.Fatalf("want one closed table, got %d", len(s.Tables))
	}
	return s.Tables[0]
}

// reportTotal parses the TOTAL line of `coverage report`.
func reportTotal(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	head := strings.Fields(lines[0])
	out := map[string]string{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) > 0 && (f[0] == "TOTAL" || strings.HasSuffix(f[0], ".py")) && len(f) == len(head) {
			for i, h := range head[1:] {
				out[f[0]+"/"+h] = strings.TrimSuffix(f[i+1], "%")
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no rows in %s", path)
	}
	return out
}

// Totals and per-file numbers equal `coverage json`'s own totals and the
// table `coverage report` printed from the same data.
//
// The reports of every release layout are checked: testdata/coverage/ (the
// current coverage.py, format 3) and versions/<release>/ (regen-versions.sh:
// 5.5, 6.5.0 and 7.3.2, which write no meta.format).
func TestJSONMatchesNativeReports(t *testing.T) {
	dirs := map[string]string{"7.17.5": testdata}
	for _, v := range []string{"5.5", "6.5.0", "7.3.2"} {
		dirs[v] = filepath.Join(testdata, "versions", v)
	}
	for release, dir := range dirs {
		for _, name := range []string{"branch", "contexts"} {
			t.Run(release+"/"+name, func(t *testing.T) { matchNative(t, dir, name, release) })
		}
	}
}

func matchNative(t *testing.T, dir, name, release string) {
	path := filepath.Join(dir, name+".coverage.json")
	s, err := decodeFile(t, JSONSpec, path, nil)
	tb := one(t, s, err)
	checkOwnTotals(t, path, tb)
	if got := tb.Summary.Coverage["coverage_version"]; got != release {
		t.Errorf("coverage_version %v, want %s", got, release)
	}
	rep := reportTotal(t, filepath.Join(dir, name+".report.txt"))
	m := tb.Summary.Metrics
	cover := m["total_percent_covered_display"].Value
	if cover == nil {
		// 5.x writes no display string; its report rounds.
		cover = fmt.Sprint(math.Round(m["total_percent_covered"].Value.(float64)))
	}
	want := map[string]any{
		"TOTAL/Stmts": m["total_num_statements"].Value,
		"TOTAL/Miss":  m["total_missing_lines"].Value,
		"TOTAL/Cover": cover,
	}
	if name == "branch" {
		want["TOTAL/Branch"] = m["total_num_branches"].Value
		want["TOTAL/BrPart"] = m["total_num_partial_branches"].Value
	}
	for _, r := range tb.Rows {
		f := r["file"].(string)
		want[f+"/Stmts"] = r["statements"]
		want[f+"/Miss"] = r["missing_lines"]
		if name == "branch" {
			want[f+"/Branch"] = r["num_branches"]
			want[f+"/BrPart"] = r["partial_branches"]
		}
	}
	for k, v := range want {
		if rep[k] != fmt.Sprint(v) {
			t.Errorf("%s: coverage report says %q, decoded %v", k, rep[k], v)
		}
	}
}

// checkOwnTotals compares the decoded summary metrics with the report's
// "totals" block read by encoding/json.
func checkOwnTotals(t *testing.T, path string, tb *recorded) {
	t.Helper()
	var doc struct {
		Files  map[string]json.RawMessage
		Totals map[string]any
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for k, v := range doc.Totals {
		m, ok := tb.Summary.Metrics["total_"+k]
		if !ok {
			t.Errorf("totals.%s is not a metric", k)
			continue
		}
		if fmt.Sprint(m.Value) != fmt.Sprint(v) {
			t.Errorf("totals.%s = %v, decoded %v", k, v, m.Value)
		}
	}
	if len(tb.Rows) != len(doc.Files) || tb.Summary.RowsObserved != int64(len(doc.Files)) {
		t.Errorf("got %d rows for %d files", len(tb.Rows), len(doc.Files))
	}
}

func TestJSONSharedFixture(t *testing.T) {
	path := filepath.Join(testdata, "pdf_toolbox.coverage.json")
	s, err := decodeFile(t, JSONSpec, path, nil)
	tb := one(t, s, err)
	checkOwnTotals(t, path, tb)
	if tb.Summary.Coverage["coverage_version"] != "7.12.0" || !tb.Summary.Complete {
		t.Fatalf("summary %+v", tb.Summary)
	}
}

// A report without meta.format is accepted only from the releases that
// wrote one, and a format this decoder does not know is refused as such.
func TestJSONFormatVersions(t *testing.T) {
	doc := func(meta string) string {
		return `{"meta":{` + meta + `,"branch_coverage":false,"show_contexts":false},"files":{},"totals":{"covered_lines":0,"num_statements":0,"percent_covered":100.0,"missing_lines":0,"excluded_lines":0}}`
	}
	for _, c := range []struct {
		meta   string
		code   evidence.Code
		format int64
	}{
		{`"version":"5.0"`, "", 1},
		{`"version":"7.3.2"`, "", 1},
		{`"version":"7.0b1"`, "", 1},
		{`"format":2,"version":"7.4.0"`, "", 2},
		{`"format":3,"version":"7.17.5"`, "", 3},
		{`"version":"7.4.0"`, evidence.CodeUnsupportedFormat, 0},
		{`"version":"4.5"`, evidence.CodeUnsupportedFormat, 0},
		{`"timestamp":"x"`, evidence.CodeUnsupportedFormat, 0},
		{`"format":4,"version":"8.0"`, evidence.CodeUnsupportedFormat, 0},
		{`"format":0,"version":"7.3.2"`, evidence.CodeUnsupportedFormat, 0},
	} {
		t.Run(c.meta, func(t *testing.T) {
			s, err := decodeJSONBytes(strings.NewReader(doc(c.meta)), nil)
			if evidence.CodeOf(err) != c.code {
				t.Fatalf("error %v, want %q", err, c.code)
			}
			if c.code == "" && s.Tables[0].Summary.Coverage["report_format"] != c.format {
				t.Fatalf("report_format %v, want %d", s.Tables[0].Summary.Coverage["report_format"], c.format)
			}
			if err != nil && strings.Contains(err.Error(), "written by coverage.py 7.x") {
				t.Fatalf("message names the wrong releases: %v", err)
			}
		})
	}
}

func TestJSONHostile(t *testing.T) {
	const meta = `"meta":{"format":3,"version":"7.17.5","branch_coverage":false,"show_contexts":false}`
	file := func(exec, miss, stmts int) string {
		return fmt.Sprintf(`{"executed_lines":[%s],"missing_lines":[%s],"excluded_lines":[],"summary":{"covered_lines":%d,"num_statements":%d,"percent_covered":50.0,"missing_lines":%d,"excluded_lines":0}}`,
			seq(exec, 1), seq(miss, 100), exec, stmts, miss)
	}
	totals := func(exec, miss int) string {
		return fmt.Sprintf(`"totals":{"covered_lines":%d,"num_statements":%d,"percent_covered":50.0,"missing_lines":%d,"excluded_lines":0}`, exec, exec+miss, miss)
	}
	good := `{` + meta + `,"files":{"a.py":` + file(2, 1, 3) + `},` + totals(2, 1) + `}`
	cases := []struct {
		name string
		doc  string
		code evidence.Code
		rows int // rows emitted before a failure
	}{
		{"good", good, "", 1},
		{"format 4", strings.Replace(good, `"format":3`, `"format":4`, 1), evidence.CodeUnsupportedFormat, 0},
		{"files before meta", `{"files":{},` + meta + `,` + totals(0, 0) + `}`, evidence.CodeDecodeFailure, 0},
		{"totals disagree", `{` + meta + `,"files":{"a.py":` + file(2, 1, 3) + `},` + totals(5, 1) + `}`, evidence.CodeDecodeFailure, 1},
		{"missing list disagrees", strings.Replace(good, `"missing_lines":[100]`, `"missing_lines":[100,101]`, 1), evidence.CodeDecodeFailure, 0},
		{"duplicate file", `{` + meta + `,"files":{"a.py":` + file(1, 0, 1) + `,"a.py":` + file(1, 0, 1) + `},` + totals(2, 0) + `}`, evidence.CodeDecodeFailure, 1},
		{"no totals", `{` + meta + `,"files":{}}`, evidence.CodeDecodeFailure, 0},
		{"no meta", `{"totals":{}}`, evidence.CodeDecodeFailure, 0},
		{"string line", strings.Replace(good, `"executed_lines":[1,`, `"executed_lines":["1",`, 1), evidence.CodeDecodeFailure, 0},
		{"truncated", good[:len(good)-40], evidence.CodeDecodeFailure, 1},
		{"trailing data", good + "{}", evidence.CodeDecodeFailure, 1},
		{"not an object", `[1]`, evidence.CodeDecodeFailure, 0},
		{"negative count", strings.Replace(good, `"excluded_lines":0}}}`, `"excluded_lines":-1}}}`, 1), evidence.CodeDecodeFailure, 0},
		{"statements disagree", strings.Replace(good, `"num_statements":3,`, `"num_statements":4,`, 1), evidence.CodeDecodeFailure, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := decodeJSONBytes(strings.NewReader(c.doc), nil)
			if c.code == "" {
				one(t, s, err)
				return
			}
			got := evidence.CodeOf(err)
			if got == "" && err != nil {
				got = evidence.CodeDecodeFailure // formats.Run's classification of untyped errors
			}
			if got != c.code {
				t.Fatalf("error %v, want %s", err, c.code)
			}
			var rows int
			for _, tb := range s.Tables {
				rows += len(tb.Rows)
				if tb.Summary == nil || tb.Summary.Complete {
					t.Fatal("a failed decode left an open or complete table")
				}
			}
			if rows != c.rows {
				t.Fatalf("%d rows before the failure, want %d", rows, c.rows)
			}
		})
	}
}

// Every parser ceiling fails with LIMIT_EXCEEDED and the one receipt
// shape, located in the report, after closing the table as incomplete.
func TestJSONLimits(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testdata, "contexts.coverage.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		value int64
	}{{LimitFiles, 1}, {LimitContexts, 1}, {formats.LimitToken, 8}} {
		t.Run(c.name, func(t *testing.T) {
			s, err := decodeJSONBytes(bytes.NewReader(b), map[string]int64{c.name: c.value})
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != evidence.CodeLimitExceeded {
				t.Fatalf("got %v, want LIMIT_EXCEEDED", err)
			}
			r, _ := f.Details["limit"].(evidence.Object)
			l, _ := JSONSpec.Limit(c.name)
			if len(r) != 4 || r["name"] != c.name || r["value"] != c.value || r["unit"] != l.Unit {
				t.Fatalf("details.limit = %v, want %s=%d %s", f.Details["limit"], c.name, c.value, l.Unit)
			}
			if f.Location.Offset <= 0 {
				t.Fatalf("limit failure without a location: %v", f)
			}
			for _, tb := range s.Tables {
				if tb.Summary == nil || tb.Summary.Complete {
					t.Fatal("a table left open or complete after a limit failure")
				}
			}
		})
	}
	if _, err := decodeJSONBytes(bytes.NewReader(b), map[string]int64{LimitContexts: 3}); err != nil {
		t.Fatalf("the fixture's 3 contexts within max_contexts=3: %v", err)
	}
}

func seq(n, from int) string {
	var parts []string
	for i := range n {
		parts = append(parts, strconv.Itoa(from+i))
	}
	return strings.Join(parts, ",")
}

func TestJSONIOTestReaders(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testdata, "contexts.coverage.json"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := decodeJSONBytes(bytes.NewReader(b), nil)
	want := one(t, ref, err)
	for name, r := range map[string]io.Reader{
		"one-byte": iotest.OneByteReader(bytes.NewReader(b)),
		"half":     iotest.HalfReader(bytes.NewReader(b)),
		"data-err": iotest.DataErrReader(bytes.NewReader(b)),
	} {
		t.Run(name, func(t *testing.T) {
			s, err := decodeJSONBytes(r, nil)
			got := one(t, s, err)
			if fmt.Sprint(got.Rows) != fmt.Sprint(want.Rows) || fmt.Sprint(got.Summary) != fmt.Sprint(want.Summary) {
				t.Fatal("result differs from a plain reader")
			}
		})
	}
	t.Run("read error", func(t *testing.T) {
		_, err := decodeJSONBytes(iotest.TimeoutReader(iotest.OneByteReader(bytes.NewReader(b))), nil)
		if err == nil {
			t.Fatal("read error not reported")
		}
	})
}

func TestSniff(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(testdata, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > formats.SniffBytes {
			b = b[:formats.SniffBytes]
		}
		return b
	}
	cases := []struct {
		name  string
		sniff func([]byte) formats.Verdict
		in    []byte
		want  formats.Verdict
	}{
		{"json report", SniffJSON, read("branch.coverage.json"), formats.Yes},
		{"shared json report", SniffJSON, read("pdf_toolbox.coverage.json"), formats.Yes},
		{"sqlite as json", SniffJSON, read("branch.coverage"), formats.No},
		{"other json", SniffJSON, []byte(`{"a":1}`), formats.No},
		{"5.5 report", SniffJSON, read("versions/5.5/branch.coverage.json"), formats.Yes},
		{"6.5.0 report", SniffJSON, read("versions/6.5.0/contexts.coverage.json"), formats.Yes},
		{"7.3.2 report", SniffJSON, read("versions/7.3.2/branch.coverage.json"), formats.Yes},
		{"meta not first", SniffJSON, []byte(`{"files":{},"meta":{"version":"7.3.2","branch_coverage":true,"show_contexts":false}}`), formats.No},
		{"meta without its keys", SniffJSON, []byte(`{"meta":{"version":"1.0"},"benchmarks":[]}`), formats.No},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.sniff(c.in); got != c.want {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

// FuzzDecode: no panic, typed failures, an incomplete table for a failed
// decode, a consistent summary.
//
// The fuzzer minimizes every input that finds new coverage before it
// counts it, with executions roughly quadratic in the input's length, and
// executions are not counted while it minimizes: the whole 8-10 KB reports
// of the current coverage.py as seeds kept it minimizing (9 counted
// executions in 20 s). So the seeds are small real reports: the older
// releases' reports (1-2 KB each, versions/) and the current ones cut to
// one file with one function and class region each (fuzzSeedsCurrent).
func FuzzDecode(f *testing.F) {
	old, _ := filepath.Glob(filepath.Join(testdata, "versions", "*", "*.coverage.json"))
	if len(old) == 0 {
		f.Fatal("no reports under versions/")
	}
	for _, p := range old {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, name := range []string{"branch.coverage.json", "contexts.coverage.json"} {
		for _, b := range fuzzSeedsCurrent(f, filepath.Join(testdata, name)) {
			// A cut seed must still be a valid report, or it seeds nothing.
			if _, err := decodeJSONBytes(bytes.NewReader(b), nil); err != nil || len(b) > 4096 {
				f.Fatalf("seed cut from %s (%d bytes): %v", name, len(b), err)
			}
			f.Add(b)
		}
	}
	// A small report, so mutations reach every field cheaply.
	f.Add([]byte(`{"meta":{"format":3,"version":"7.17.5","branch_coverage":true,"show_contexts":true},"files":{"a.py":{"executed_lines":[1,2],"missing_lines":[3],"excluded_lines":[],"contexts":{"1":["","t"]},"summary":{"covered_lines":2,"num_statements":3,"percent_covered":50.0,"missing_lines":1,"excluded_lines":0,"num_branches":2,"num_partial_branches":1,"covered_branches":1,"missing_branches":1}}},"totals":{"covered_lines":2,"num_statements":3,"percent_covered":50.0,"missing_lines":1,"excluded_lines":0,"num_branches":2,"num_partial_branches":1,"covered_branches":1,"missing_branches":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeJSONBytes(bytes.NewReader(b), map[string]int64{LimitFiles: 1000})
		for _, tb := range s.Tables {
			if tb.Summary == nil {
				t.Fatal("table left open")
			}
			if err != nil && tb.Summary.Complete {
				t.Fatal("failed decode with a complete table")
			}
			if err == nil && tb.Summary.RowsObserved != int64(len(tb.Rows)) {
				t.Fatalf("rows_observed %d for %d rows", tb.Summary.RowsObserved, len(tb.Rows))
			}
		}
	})
}

// fuzzSeedsCurrent cuts a current report into one report per file: meta
// as written, the file with its regions cut to the first of each, and
// totals equal to the file's summary (as coverage.py would compute them).
func fuzzSeedsCurrent(tb testing.TB, path string) [][]byte {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var doc struct {
		Meta  json.RawMessage
		Files map[string]map[string]any
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for name, file := range doc.Files {
		for _, k := range []string{"functions", "classes"} {
			regions, _ := file[k].(map[string]any)
			for r := range regions {
				if len(regions) > 1 {
					delete(regions, r)
				}
			}
		}
		fb, err := json.Marshal(file)
		if err != nil {
			tb.Fatal(err)
		}
		sum, err := json.Marshal(file["summary"])
		if err != nil {
			tb.Fatal(err)
		}
		key, _ := json.Marshal(name)
		out = append(out, []byte(`{"meta":`+string(doc.Meta)+`,"files":{`+string(key)+`:`+string(fb)+`},"totals":`+string(sum)+`}`))
	}
	return out
}

func BenchmarkDecode(b *testing.B) {
	b.Run("json", func(b *testing.B) {
		data, err := os.ReadFile(filepath.Join(testdata, "pdf_toolbox.coverage.json"))
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeJSONBytes(bytes.NewReader(data), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
