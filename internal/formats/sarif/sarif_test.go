package sarif

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/formats/jsonpreview"
)

const testdata = "../../../testdata/sarif"

// Fixed roots the real producers ran in (see testdata/sarif/regen.sh).
const (
	gosecRoot  = "/tmp/flameox-sarif-fixture/gosec"
	eslintRoot = "/tmp/flameox-sarif-fixture/eslint"
)

func limits(over map[string]int64) map[string]int64 {
	l, err := formats.EffectiveLimits(Spec, over)
	if err != nil {
		panic(err)
	}
	return l
}

// decodeFile runs the decoder through formats.Run, as the CLI does.
type (
	sink     = formatstest.Sink
	recorded = formatstest.Table
)

func decodeFile(t testing.TB, path string, opts evidence.Object, over map[string]int64) (*sink, error) {
	t.Helper()
	return formatstest.DecodeFile(t, Spec, path, over, opts)
}

// decodeBytes runs the decoder on an in-memory reader.
func decodeBytes(r io.Reader, opts evidence.Object, over map[string]int64) (*sink, error) {
	s := &sink{}
	in, err := formatstest.Input(Spec, &evidence.Artifact{Path: "/nonexistent/dir/log.sarif"}, r, limits(over), opts)
	if err != nil {
		return s, err
	}
	return s, Spec.Decoder.Decode(context.Background(), in, s)
}

func one(t *testing.T, s *sink) *recorded {
	t.Helper()
	if len(s.Tables) != 1 {
		t.Fatalf("got %d tables, want 1", len(s.Tables))
	}
	tb := s.Tables[0]
	if tb.Summary == nil {
		t.Fatal("table was not ended")
	}
	return tb
}

func TestDecodeFixtures(t *testing.T) {
	cases := []struct {
		file     string
		root     string
		rows     int
		code     evidence.Code
		complete bool
	}{
		{file: "gosec.sarif", root: gosecRoot, rows: 14, complete: true},
		{file: "eslint.sarif", root: eslintRoot, rows: 8, complete: true},
		{file: "gitleaks-sarif_simple.sarif", rows: 1, complete: true},
		{file: "sarif-sdk-clang-RealLog.xml.sarif", rows: 4, complete: true},
		{file: "rules-and-levels.sarif", rows: 7, complete: false},
		{file: "hostile-uris.sarif", rows: 14, complete: true},
		{file: "binskim-clang.execstack.sarif", code: evidence.CodeUnsupportedFormat},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			var opts evidence.Object
			if c.root != "" {
				opts = evidence.Object{OptSourceRoot: c.root}
			}
			s, err := decodeFile(t, filepath.Join(testdata, c.file), opts, nil)
			if c.code != "" {
				if evidence.CodeOf(err) != c.code {
					t.Fatalf("error %v, want code %s", err, c.code)
				}
				if len(s.Tables) != 0 {
					t.Fatalf("a rejected document produced %d tables", len(s.Tables))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tb := one(t, s)
			if len(tb.Rows) != c.rows || tb.Summary.RowsObserved != int64(c.rows) {
				t.Fatalf("got %d rows (observed %d), want %d", len(tb.Rows), tb.Summary.RowsObserved, c.rows)
			}
			if tb.Summary.Complete != c.complete {
				t.Fatalf("complete = %v, want %v (limitations %v)", tb.Summary.Complete, c.complete, tb.Summary.Limitations)
			}
			for i, r := range tb.Rows {
				ri, _ := evidence.AsInt(r["result_index"])
				if _, ok := r["run_index"]; !ok || ri < 0 {
					t.Fatalf("row %d lacks native coordinates: %v", i, r)
				}
			}
		})
	}
}

func TestBinskimDialectMessage(t *testing.T) {
	_, err := decodeFile(t, filepath.Join(testdata, "binskim-clang.execstack.sarif"), nil, nil)
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeUnsupportedFormat || !strings.Contains(f.Message, `"2.0.0"`) {
		t.Fatalf("want UNSUPPORTED_FORMAT naming version 2.0.0 (after skipping the BOM), got %v", err)
	}
}

type finding struct {
	path                   string
	line, col, eline, ecol int64
	rule, level            string
}

func (f finding) String() string {
	return fmt.Sprintf("%s:%d:%d-%d:%d %s %s", f.path, f.line, f.col, f.eline, f.ecol, f.rule, f.level)
}

func sortedStrings[T fmt.Stringer](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	slices.Sort(out)
	return out
}

func rowFinding(r evidence.Object, withEnd bool) finding {
	f := finding{}
	f.path, _ = r["path"].(string)
	f.line, _ = evidence.AsInt(r["start_line"])
	f.col, _ = evidence.AsInt(r["start_column"])
	if withEnd {
		f.eline, _ = evidence.AsInt(r["end_line"])
		f.ecol, _ = evidence.AsInt(r["end_column"])
	}
	f.rule, _ = r["rule_id"].(string)
	f.level, _ = r["level"].(string)
	return f
}

// gosec's own JSON report lists the same issues as its SARIF log.
func TestGosecMatchesItsJSON(t *testing.T) {
	var native struct {
		Issues []struct {
			RuleID   string `json:"rule_id"`
			File     string `json:"file"`
			Line     string `json:"line"`
			Column   string `json:"column"`
			Severity string `json:"severity"`
		}
	}
	b, err := os.ReadFile(filepath.Join(testdata, "gosec.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &native); err != nil {
		t.Fatal(err)
	}
	var want []finding
	for _, is := range native.Issues {
		rel, err := filepath.Rel(gosecRoot, is.File)
		if err != nil {
			t.Fatal(err)
		}
		line, _ := strconv.ParseInt(strings.SplitN(is.Line, "-", 2)[0], 10, 64)
		col, _ := strconv.ParseInt(is.Column, 10, 64)
		want = append(want, finding{path: rel, line: line, col: col, rule: is.RuleID})
	}
	s, err := decodeFile(t, filepath.Join(testdata, "gosec.sarif"), evidence.Object{OptSourceRoot: gosecRoot}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []finding
	for _, r := range one(t, s).Rows {
		if r["location_status"] != StatusOK {
			t.Fatalf("gosec location rejected: %v", r)
		}
		f := rowFinding(r, false)
		f.level = ""
		got = append(got, f)
	}
	if g, w := sortedStrings(got), sortedStrings(want); !slices.Equal(g, w) {
		t.Fatalf("SARIF findings differ from gosec JSON:\n got %v\nwant %v", g, w)
	}
}

// ESLint's JSON formatter reports the same messages as the SARIF log.
func TestESLintMatchesItsJSON(t *testing.T) {
	var native []struct {
		FilePath string `json:"filePath"`
		Messages []struct {
			RuleID    string `json:"ruleId"`
			Severity  int    `json:"severity"`
			Line      int64  `json:"line"`
			Column    int64  `json:"column"`
			EndLine   int64  `json:"endLine"`
			EndColumn int64  `json:"endColumn"`
		}
	}
	b, err := os.ReadFile(filepath.Join(testdata, "eslint.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &native); err != nil {
		t.Fatal(err)
	}
	var want []finding
	for _, f := range native {
		rel, _ := filepath.Rel(eslintRoot, f.FilePath)
		for _, m := range f.Messages {
			lv := map[int]string{1: "warning", 2: "error"}[m.Severity]
			want = append(want, finding{rel, m.Line, m.Column, m.EndLine, m.EndColumn, m.RuleID, lv})
		}
	}
	s, err := decodeFile(t, filepath.Join(testdata, "eslint.sarif"), evidence.Object{OptSourceRoot: eslintRoot}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []finding
	for _, r := range one(t, s).Rows {
		if r["location_status"] != StatusOK {
			t.Fatalf("eslint location rejected: %v", r)
		}
		got = append(got, rowFinding(r, true))
	}
	if g, w := sortedStrings(got), sortedStrings(want); !slices.Equal(g, w) {
		t.Fatalf("SARIF findings differ from ESLint JSON:\n got %v\nwant %v", g, w)
	}
}

// Without the right source root, ESLint's absolute file:// URIs lie outside
// the artifact's directory: they are rejected per result, never dropped.
func TestWrongRootRejectsButKeepsRows(t *testing.T) {
	s, err := decodeFile(t, filepath.Join(testdata, "eslint.sarif"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tb := one(t, s)
	if len(tb.Rows) != 8 {
		t.Fatalf("got %d rows, want all 8", len(tb.Rows))
	}
	for _, r := range tb.Rows {
		if r["location_status"] != StatusFileOutsideRoot || r["path"] != nil {
			t.Fatalf("want file_uri_outside_root with null path, got %v", r)
		}
	}
	if m := tb.Summary.Metrics["rejected_locations"]; m.Value != int64(8) {
		t.Fatalf("rejected_locations = %v", m.Value)
	}
	if len(tb.Summary.Limitations) == 0 {
		t.Fatal("rejections must be stated as a limitation")
	}
	abs, _ := filepath.Abs(testdata)
	if got := tb.Header.Arguments["options"].(evidence.Object)[OptSourceRoot]; got != abs {
		t.Fatalf("header source_root = %v, want the artifact's directory %s", got, abs)
	}
}

func TestHostileURIs(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(testdata, "hostile-uris.sarif"))
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(root, "hostile.sarif")
	if err := os.WriteFile(logPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := decodeFile(t, logPath, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ status, path string }{
		{StatusOK, "src/ok.go"},
		{StatusTraversal, ""},
		{StatusFileOutsideRoot, ""},
		{StatusRemote, ""},
		{StatusRemote, ""},
		{StatusUnsupportedBase, ""},
		{StatusSymlink, ""},
		{StatusOutsideRoot, ""},
		{StatusOK, "sub/x.go"},
		{StatusRemote, ""},
		{StatusScheme, ""},
		{StatusTraversal, ""},
		{StatusAbsent, ""},
		{StatusFileOutsideRoot, ""},
	}
	tb := one(t, s)
	if len(tb.Rows) != len(want) {
		t.Fatalf("got %d rows, want %d", len(tb.Rows), len(want))
	}
	for i, w := range want {
		r := tb.Rows[i]
		if ri, _ := evidence.AsInt(r["result_index"]); ri != int64(i) {
			t.Fatalf("row %d has result_index %d: native order lost", i, ri)
		}
		p, _ := r["path"].(string)
		if r["location_status"] != w.status || p != w.path {
			t.Errorf("result %d (%v): got %v %q, want %s %q", i, r["message"], r["location_status"], p, w.status, w.path)
		}
		if r["level"] != "note" || r["level_source"] != "rule_default" {
			t.Errorf("result %d: level %v from %v, want note from the rule default", i, r["level"], r["level_source"])
		}
	}
	// The rejections are stated in status order: the summary is the same
	// on every run.
	var rejected []string
	for _, l := range tb.Summary.Limitations {
		if _, rest, ok := strings.Cut(l, " result locations rejected as "); ok {
			rejected = append(rejected, strings.SplitN(rest, ":", 2)[0])
		}
	}
	if len(rejected) < 5 || !slices.IsSorted(rejected) {
		t.Errorf("rejection limitations %v, want all five statuses in order", rejected)
	}
	// A symlink that stays inside the root is followed and accepted.
	if err := os.Mkdir(filepath.Join(root, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "inner")); err != nil {
		t.Fatal(err)
	}
	rt, err := NewRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	if p, st := rt.locate(resolve("inner/a.go", "", nil)); st != StatusOK || p != "inner/a.go" {
		t.Fatalf("inner symlink: got %q %s", p, st)
	}
}

func TestRulesAndLevels(t *testing.T) {
	s, err := decodeFile(t, filepath.Join(testdata, "rules-and-levels.sarif"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tb := one(t, s)
	want := []struct {
		rule   any
		index  int64
		level  string
		source string
		msg    string
	}{
		{"D0", 0, "error", "rule_default", "x is used before assignment {literal}"},
		{"D1", -1, "warning", "sarif_default", "no default level"},
		{"D0", -1, "error", "rule_default", "default by id"},
		{"D0", -1, "none", "kind", "kind pass gives none"},
		{"D0", -1, "warning", "result", "explicit level"},
		{"P0", 0, "note", "rule_default", "extension rule"},
		{nil, -1, "warning", "sarif_default", "no rule at all"},
	}
	for i, w := range want {
		r := tb.Rows[i]
		idx, _ := evidence.AsInt(r["rule_index"])
		if r["rule_id"] != w.rule || idx != w.index || r["level"] != w.level || r["level_source"] != w.source || r["message"] != w.msg {
			t.Errorf("row %d = %v, want %+v", i, r, w)
		}
	}
	if tb.Summary.Complete {
		t.Fatal("a run with results: null must make the table incomplete")
	}
}

func TestHostileDocuments(t *testing.T) {
	const run = `{"tool":{"driver":{"name":"t","rules":[{"id":"A"}]}},"results":[%s]}`
	doc := func(results string) string {
		return `{"version":"2.1.0","runs":[` + fmt.Sprintf(run, results) + `]}`
	}
	cases := []struct {
		name string
		doc  string
		lim  map[string]int64
		code evidence.Code
	}{
		{"byte-order mark", "\xEF\xBB\xBF" + doc(`{"ruleId":"A"}`), nil, ""},
		{"two byte-order marks", "\xEF\xBB\xBF\xEF\xBB\xBF" + doc(`{}`), nil, evidence.CodeDecodeFailure},
		{"not json", "not json", nil, evidence.CodeDecodeFailure},
		{"empty", "", nil, evidence.CodeDecodeFailure},
		{"top-level array", "[]", nil, evidence.CodeDecodeFailure},
		{"duplicate key in result", doc(`{"ruleId":"A","ruleId":"B"}`), nil, evidence.CodeDecodeFailure},
		{"duplicate runs", `{"version":"2.1.0","runs":[],"runs":[]}`, nil, evidence.CodeDecodeFailure},
		{"dotted key does not impersonate", doc(`{"rule.id":"X","message":{"text":"m"}}`), nil, ""},
		{"unresolved ruleIndex", doc(`{"ruleIndex":3}`), nil, evidence.CodeDecodeFailure},
		{"negative ruleIndex", doc(`{"ruleIndex":-2}`), nil, evidence.CodeDecodeFailure},
		{"disagreeing indexes", doc(`{"ruleIndex":0,"rule":{"index":1}}`), nil, evidence.CodeDecodeFailure},
		{"ruleId disagrees with ruleIndex", doc(`{"ruleId":"B","ruleIndex":0}`), nil, evidence.CodeDecodeFailure},
		{"hierarchical ruleId", doc(`{"ruleId":"A/sub","ruleIndex":0}`), nil, ""},
		{"unresolved toolComponent", doc(`{"rule":{"index":0,"toolComponent":{"index":2}}}`), nil, evidence.CodeDecodeFailure},
		{"unresolved artifact index", doc(`{"locations":[{"physicalLocation":{"artifactLocation":{"index":4}}}]}`), nil, evidence.CodeDecodeFailure},
		{"bad level", doc(`{"level":"fatal"}`), nil, evidence.CodeDecodeFailure},
		{"bad kind", doc(`{"kind":"maybe"}`), nil, evidence.CodeDecodeFailure},
		{"string line", doc(`{"locations":[{"physicalLocation":{"region":{"startLine":"3"}}}]}`), nil, evidence.CodeDecodeFailure},
		{"fractional line", doc(`{"locations":[{"physicalLocation":{"region":{"startLine":3.5}}}]}`), nil, evidence.CodeDecodeFailure},
		{"version 2.0.0", `{"version":"2.0.0","runs":[]}`, nil, evidence.CodeUnsupportedFormat},
		{"no version", `{"runs":[]}`, nil, evidence.CodeDecodeFailure},
		{"no runs", `{"version":"2.1.0"}`, nil, evidence.CodeDecodeFailure},
		{"runs null", `{"version":"2.1.0","runs":null}`, nil, ""},
		{"result limit", doc(`{},{},{}`), map[string]int64{LimitResults: 2}, evidence.CodeLimitExceeded},
		{"rule limit", doc(`{}`), map[string]int64{LimitRules: 1}, ""},
		{"pending limit", `{"runs":[` + fmt.Sprintf(run, `{},{},{},{}`) + `],"version":"2.1.0"}`, map[string]int64{LimitPending: 600}, evidence.CodeLimitExceeded},
		{"pending within limit", `{"runs":[` + fmt.Sprintf(run, `{},{},{},{}`) + `],"version":"2.1.0"}`, map[string]int64{LimitPending: 2000}, ""},
		{"token limit", doc(`{"message":{"text":"` + strings.Repeat("m", 100) + `"}}`), map[string]int64{formats.LimitToken: 64}, evidence.CodeLimitExceeded},
		{"token within limit", doc(`{"message":{"text":"` + strings.Repeat("m", 64) + `"}}`), map[string]int64{formats.LimitToken: 64}, ""},
		{"artifact limit", `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"artifacts":[{},{}],"results":[]}]}`, map[string]int64{LimitArtifacts: 1}, evidence.CodeLimitExceeded},
		{"invalid utf-8", doc("{\"message\":{\"text\":\"\xff\"}}"), nil, evidence.CodeDecodeFailure},
		{"trailing data", doc(`{}`) + "{}", nil, evidence.CodeDecodeFailure},
		{"deep nesting", `{"version":"2.1.0","runs":[],"x":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, nil, evidence.CodeDecodeFailure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := decodeBytes(strings.NewReader(c.doc), nil, c.lim)
			if c.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			// Run's wrapping classifies untyped parse errors as DECODE_FAILURE.
			got := evidence.CodeOf(err)
			if got == "" && err != nil {
				got = evidence.CodeDecodeFailure
			}
			if got != c.code {
				t.Fatalf("error %v, want %s", err, c.code)
			}
			if got == evidence.CodeLimitExceeded {
				// The one receipt shape: the limit that was set.
				var f *evidence.Failure
				errors.As(err, &f)
				r, _ := f.Details["limit"].(evidence.Object)
				for name, v := range c.lim {
					l, _ := Spec.Limit(name)
					if len(r) != 4 || r["name"] != name || r["value"] != v || r["unit"] != l.Unit {
						t.Fatalf("details.limit = %v, want %s=%d %s", f.Details["limit"], name, v, l.Unit)
					}
				}
				if f.Location.Offset <= 0 {
					t.Fatalf("limit failure without a location: %v", f)
				}
			}
			for _, tb := range s.Tables {
				if tb.Summary == nil || tb.Summary.Complete {
					t.Fatalf("a failed decode left a table that is open or complete: %+v", tb.Summary)
				}
			}
		})
	}
}

// A truncated log is incomplete evidence even when every result parsed
// before the cut fit in the table.
func TestNullRunsIsIncomplete(t *testing.T) {
	s, err := decodeBytes(strings.NewReader(`{"version":"2.1.0","runs":null}`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tb := one(t, s); tb.Summary.Complete || len(tb.Rows) != 0 {
		t.Fatalf("runs: null must give an empty, incomplete table: %+v", tb.Summary)
	}
}

func TestTruncatedDocumentIsIncomplete(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testdata, "eslint.sarif"))
	if err != nil {
		t.Fatal(err)
	}
	cut := b[:bytes.LastIndex(b, []byte(`"ruleId"`))]
	s, err := decodeBytes(bytes.NewReader(cut), evidence.Object{OptSourceRoot: eslintRoot}, nil)
	if err == nil {
		t.Fatal("a truncated log decoded without failure")
	}
	tb := one(t, s)
	if len(tb.Rows) == 0 || tb.Summary.Complete || tb.Summary.Truncation == nil {
		t.Fatalf("want rows and an incomplete, truncated summary; got %d rows, %+v", len(tb.Rows), tb.Summary)
	}
}

func TestSourceRootOption(t *testing.T) {
	for _, bad := range []any{"relative/dir", "", 3} {
		_, err := decodeBytes(strings.NewReader(`{"version":"2.1.0","runs":[]}`), evidence.Object{OptSourceRoot: bad}, nil)
		if evidence.CodeOf(err) != evidence.CodeInvalidArgument {
			t.Errorf("source_root %v: got %v, want INVALID_ARGUMENT", bad, err)
		}
	}
}

func rowsOf(t *testing.T, s *sink, err error) []evidence.Object {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return one(t, s).Rows
}

func TestIOTestReaders(t *testing.T) {
	for _, file := range []string{"gosec.sarif", "eslint.sarif", "binskim-clang.execstack.sarif"} {
		b, err := os.ReadFile(filepath.Join(testdata, file))
		if err != nil {
			t.Fatal(err)
		}
		opts := evidence.Object{OptSourceRoot: gosecRoot}
		ref, refErr := decodeBytes(bytes.NewReader(b), opts, nil)
		for name, r := range map[string]io.Reader{
			"one-byte": iotest.OneByteReader(bytes.NewReader(b)),
			"half":     iotest.HalfReader(bytes.NewReader(b)),
			"data-err": iotest.DataErrReader(bytes.NewReader(b)),
		} {
			t.Run(file+"/"+name, func(t *testing.T) {
				s, err := decodeBytes(r, opts, nil)
				if evidence.CodeOf(err) != evidence.CodeOf(refErr) || (err == nil) != (refErr == nil) {
					t.Fatalf("error %v, want %v", err, refErr)
				}
				if refErr != nil {
					return
				}
				got, want := rowsOf(t, s, err), rowsOf(t, ref, refErr)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatal("rows differ from a plain reader")
				}
			})
		}
	}
	t.Run("read error", func(t *testing.T) {
		_, err := decodeBytes(iotest.TimeoutReader(iotest.OneByteReader(strings.NewReader(`{"version":"2.1.0"}`))), nil, nil)
		if err == nil {
			t.Fatal("a read error was not reported")
		}
	})
}

func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testdata, "*.sarif"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":"2.1.0","runs":[{"results":[{"ruleIndex":0}],"tool":{"driver":{"rules":[]}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeBytes(bytes.NewReader(b), evidence.Object{OptSourceRoot: "/src"}, map[string]int64{LimitResults: 1000})
		if err != nil {
			var f *evidence.Failure
			var se interface{ Error() string }
			if !errors.As(err, &f) && !errors.As(err, &se) {
				t.Fatalf("untyped error %T", err)
			}
		}
		for _, tb := range s.Tables {
			if tb.Summary == nil {
				t.Fatal("table left open")
			}
			if tb.Summary.RowsObserved != int64(len(tb.Rows)) {
				t.Fatalf("rows_observed %d for %d rows", tb.Summary.RowsObserved, len(tb.Rows))
			}
			if err != nil && tb.Summary.Complete {
				t.Fatal("failed decode with a complete table")
			}
			for _, r := range tb.Rows {
				if r["location_status"] == StatusOK {
					p := r["path"].(string)
					if hasDotDot(p) || strings.HasPrefix(p, "/") {
						t.Fatalf("accepted path escapes the root: %q", p)
					}
				} else if r["path"] != nil {
					t.Fatalf("rejected location kept a path: %v", r)
				}
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	// A synthetic log of many results shaped like gosec's, built once.
	var buf bytes.Buffer
	buf.WriteString(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"bench","rules":[{"id":"G1","defaultConfiguration":{"level":"warning"}},{"id":"G2"}]}},"results":[`)
	for i := range 20000 {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"ruleId":"G%d","ruleIndex":%d,"level":"error","message":{"text":"finding number %d in a file"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"pkg/dir%d/file%d.go"},"region":{"startLine":%d,"startColumn":3,"endLine":%d,"endColumn":9,"snippet":{"text":"x := y"}}}}]}`,
			1+i%2, i%2, i, i%50, i%7, i%400+1, i%400+1)
	}
	buf.WriteString(`]}]}`)
	data := buf.Bytes()
	opts := evidence.Object{OptSourceRoot: "/nonexistent/flameox-bench"}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := decodeBytes(bytes.NewReader(data), opts, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Tables[0].Rows) != 20000 {
			b.Fatal("wrong row count")
		}
	}
}

// SARIF is recognized by its own top-level shape. A JSON file with a
// top-level "version" (pyperf's benchmark file, made by the real pyperf)
// is not SARIF: detection leaves it to the generic JSON preview, and
// forcing the format says it is not a SARIF log rather than an
// unsupported SARIF version.
func TestSniffShape(t *testing.T) {
	pyperf := filepath.Join(testdata, "not-sarif", "pyperf-timeit.json")
	logs, _ := filepath.Glob(filepath.Join(testdata, "*.sarif"))
	for _, p := range logs {
		prefix, err := formats.ReadPrefix(p)
		if err != nil {
			t.Fatal(err)
		}
		if v := Sniff(prefix); v != formats.Yes {
			t.Errorf("%s: %v, want Yes", filepath.Base(p), v)
		}
	}
	prefix, err := formats.ReadPrefix(pyperf)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		in   []byte
		want formats.Verdict
	}{
		{"pyperf", prefix, formats.No},
		{"version alone", []byte(`{"version":"2.1.0"}`), formats.No},
		{"version and other keys", []byte(`{"version":"1.0","runs_total":3,"driver":"x"}`), formats.No},
		{"nested runs", []byte(`{"benchmarks":[{"runs":[{"tool":{}}]}],"version":"1.0"}`), formats.No},
		{"pyperf with a driver", []byte(`{"benchmarks":[{"runs":[{"values":[1e-7]}]}],"metadata":{"driver":"nvidia"},"version":"1.0"}`), formats.No},
		{"runs with a tool", []byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}}}]}`), formats.Yes},
		{"runs with results first", []byte(`{"runs":[{"results":[],"tool":{}}]}`), formats.Yes},
		{"runs of numbers", []byte(`{"runs":[1,2]}`), formats.No},
		{"schema", []byte(`{"$schema":"https://json.schemastore.org/sarif-2.1.0.json"}`), formats.Yes},
		{"other schema", []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema","version":"1"}`), formats.No},
		{"old dialect", []byte(`{"version":"1.0.0","runs":[{"tool":{"name":"x"}}]}`), formats.Yes},
	} {
		if got := Sniff(c.in); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	got, err := formats.Detect([]*formats.Spec{Spec, jsonpreview.JSON}, pyperf, prefix, "")
	if err != nil || got != jsonpreview.JSON {
		t.Fatalf("pyperf JSON detected as %v (%v), want the JSON preview", got, err)
	}
	s, err := decodeFile(t, pyperf, nil, nil)
	if evidence.CodeOf(err) != evidence.CodeDecodeFailure || strings.Contains(err.Error(), "is not supported") || len(s.Tables) != 0 {
		t.Fatalf("forced SARIF on pyperf JSON: %v (%d tables), want DECODE_FAILURE: not a SARIF log", err, len(s.Tables))
	}
	// An old dialect keeps its own message once the log shows SARIF's shape,
	// whichever member comes first.
	for _, doc := range []string{
		`{"version":"1.0.0","runs":[]}`,
		`{"runs":[],"version":"2.0.0"}`,
		`{"version":"2.0.0","$schema":"http://json.schemastore.org/sarif-2.0.0"}`,
	} {
		if _, err := decodeBytes(strings.NewReader(doc), nil, nil); evidence.CodeOf(err) != evidence.CodeUnsupportedFormat {
			t.Errorf("%s: %v, want UNSUPPORTED_FORMAT", doc, err)
		}
	}
}
