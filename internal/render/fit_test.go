package render

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/decode"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/rank"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/wire"
)

func fixture(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...)
}

// rankView ranks a committed fixture through the real decoders and
// projection, as flameox-rank PATH does, and renders it at width.
func rankView(t *testing.T, width int, op, format string, args evidence.Object, path string) string {
	t.Helper()
	var b strings.Builder
	req := rank.Request{Operation: op, Args: args, Decode: decode.Options{Specs: registry.Formats(), Format: format}}
	if err := rank.Paths(context.Background(), req, []string{path}, &Text{W: &b, Width: width}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// rankJSONL is the same ranking as canonical JSONL.
func rankJSONL(t *testing.T, op, format string, args evidence.Object, path string) string {
	t.Helper()
	var b bytes.Buffer
	w := wire.NewWriter(&b)
	req := rank.Request{Operation: op, Args: args, Decode: decode.Options{Specs: registry.Formats(), Format: format}}
	if err := rank.Paths(context.Background(), req, []string{path}, &rank.JSONL{W: w}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkFits fails on any line wider than width cells, and on any byte
// that would act on a terminal.
func checkFits(t *testing.T, out string, width int) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		if n := Width(l); n > width {
			t.Errorf("line %d is %d cells wide, more than %d:\n%s", i+1, n, width, l)
		}
		for _, r := range l {
			if unsafeRune(r) {
				t.Errorf("line %d carries control or bidi character %U: %q", i+1, r, l)
			}
		}
	}
}

type view struct {
	name, op, format string
	path             string
}

var views = []view{
	{"v8", "", "", fixture("v8", "hotspot.cpuprofile")},
	{"v8 edges", "summarize_cpu_caller_edges", "", fixture("v8", "hotspot.cpuprofile")},
	{"pstats", "", "", fixture("pstats", "cprofile-workload.pstats")},
	{"pytest", "", "", fixture("pytest-events", "suite.pytest-events.jsonl")},
	{"pytest xdist", "", "", fixture("pytest-events", "xdist.pytest-events.jsonl")},
	{"perf report as text", "preview_text_fragment", "text", fixture("perf", "hot.report.txt")},
	{"text preview", "preview_artifact", "", fixture("preview", "text", "python-importtime.txt")},
	{"json preview", "preview_artifact", "json", fixture("preview", "json", "aiperf-profile_export_aiperf.json")},
	{"inference", "", "", fixture("aiperf", "mock-0.13", "profile_export.jsonl")},
	{"inference runs", "", "", fixture("aiperf", "run1-2025", "profile_export_aiperf.json")},
	{"csv preview", "preview_artifact", "csv", fixture("preview", "csv", "rocprofv3-kernel_trace.csv")},
	{"rocprof trace", "", "", fixture("preview", "csv", "rocprofv3-kernel_trace.csv")},
	{"jsonl preview", "preview_artifact", "", fixture("preview", "jsonl", "go-test.jsonl")},
	{"coverage", "", "", fixture("coverage", "branch.coverage.json")},
	{"observations", "", "", fixture("observations", "python.observations.jsonl")},
}

// 8.10: every table fits the terminal, at the usual widths and at a
// narrow one, whatever the fixture.
func TestFixturesFitWidth(t *testing.T) {
	for _, v := range views {
		for _, w := range []int{60, 80, 100, 132} {
			out := rankView(t, w, v.op, v.format, nil, v.path)
			t.Run(v.name, func(t *testing.T) { checkFits(t, out, w) })
		}
	}
}

// flat joins wrapped prose back into single lines.
func flat(out string) string { return strings.ReplaceAll(out, "\n  ", " ") }

// jsonlRow is the JSONL line of the row that holds needle.
func jsonlRow(t *testing.T, jsonl, needle string) string {
	t.Helper()
	for _, l := range strings.Split(jsonl, "\n") {
		if strings.Contains(l, `"kind":"row"`) && strings.Contains(l, needle) {
			return l
		}
	}
	t.Fatalf("no JSONL row with %s", needle)
	return ""
}

func rowOf(t *testing.T, out, needle string) string {
	t.Helper()
	for _, l := range tableLines(t, out)[2:] {
		if strings.Contains(l, needle) {
			return l
		}
	}
	t.Fatalf("no row with %q in:\n%s", needle, out)
	return ""
}

// 8.10: V8 counts lines and columns from 0; the view shows editor
// coordinates (crunchPrimes is on app.js's 5th line), the JSONL keeps
// V8's; pstats counts from 1 and is shown as it is. Anonymous functions
// read "(anonymous)", seconds read in ms and µs, and the columns empty or
// constant in every row are named in the footer.
func TestEditorView(t *testing.T) {
	v8 := rankView(t, 100, "", "", nil, fixture("v8", "hotspot.cpuprofile"))
	if r := rowOf(t, v8, "crunchPrimes"); !strings.Contains(r, "app.js:5:22") {
		t.Errorf("crunchPrimes at native 0-based 4:21 should read app.js:5:22: %q", r)
	}
	if !strings.Contains(flat(v8), "the JSONL keeps the native 0-based line, column") {
		t.Errorf("the view does not say its coordinates differ from V8's:\n%s", v8)
	}
	if r := jsonlRow(t, rankJSONL(t, "", "", nil, fixture("v8", "hotspot.cpuprofile")), `"function":"crunchPrimes"`); !strings.Contains(r, `"column":21,`) || !strings.Contains(r, `"line":4,`) {
		t.Errorf("the JSONL lost V8's native coordinates: %s", r)
	}
	if r := rowOf(t, v8, "89.5%"); !strings.Contains(r, "(anonymous)") || !strings.Contains(r, "app.js:1:1") {
		t.Errorf("V8's unnamed top-level function: %q", r)
	}
	if !strings.Contains(flat(v8), "hidden: module, thread, process, calls, primitive_calls (empty)") || !strings.Contains(flat(v8), "--format jsonl shows every column") {
		t.Errorf("no footer naming the hidden columns:\n%s", v8)
	}
	for _, want := range []string{"artifact: hotspot.cpuprofile (v8-cpuprofile, ", "total_weight: 114 samples", "rows: 20 shown of 60 selected"} {
		if !strings.Contains(v8, want) {
			t.Errorf("header lacks %q:\n%s", want, v8)
		}
	}

	ps := rankView(t, 100, "", "", nil, fixture("pstats", "cprofile-workload.pstats"))
	if r := rowOf(t, ps, "hot "); !strings.Contains(r, "workload.py:8 ") || !strings.Contains(r, "91.9ms") {
		t.Errorf("pstats' 1-based line 8, 0.0919221 s: %q", r)
	}
	if r := rowOf(t, ps, "<genexpr>"); !strings.Contains(r, "893µs") {
		t.Errorf("0.000892861 s: %q", r)
	}
	if strings.Contains(ps, "e-05") || strings.Contains(ps, "0-based") {
		t.Errorf("raw seconds, or a base note where nothing was converted:\n%s", ps)
	}
	// pstats' builtins have no place (line 0 in pstats' 1-based count).
	if r := rowOf(t, ps, "<built-in method fromkeys>"); strings.Contains(r, ":0") {
		t.Errorf("builtin with a line: %q", r)
	}
	if !strings.Contains(flat(ps), "symbolization=symbolized (every row)") {
		t.Errorf("a constant column is not stated once:\n%s", ps)
	}
}

// 8.10: COLUMNS sets the width when the caller does not; without it (and
// without a terminal) the width is 100.
func TestWidthFromEnvironment(t *testing.T) {
	path := fixture("pstats", "cprofile-workload.pstats")
	t.Setenv("COLUMNS", "70")
	out := rankView(t, 0, "", "", nil, path)
	checkFits(t, out, 70)
	if !strings.Contains(flat(out), "(no room in 70 columns)") {
		t.Errorf("COLUMNS=70 not used:\n%s", out)
	}
	t.Setenv("COLUMNS", "")
	out = rankView(t, 0, "", "", nil, path)
	checkFits(t, out, DefaultWidth)
	if !strings.Contains(flat(out), "(no room in 100 columns)") {
		t.Errorf("default width not 100:\n%s", out)
	}
}

// 8.11: one line per failure with the first line of its message, the
// longrepr left to the JSONL, and pytest's own outcome line — the counts
// of the fixture's run as pytest's terminal summary reported them
// ("8 failed, 7 passed, 4 skipped, 1 xfailed, 1 xpassed, 4 errors"; a
// test whose teardown failed after it passed is both passed and an
// error) — instead of twenty counter lines.
func TestPytestFailuresView(t *testing.T) {
	path := fixture("pytest-events", "suite.pytest-events.jsonl")
	out := rankView(t, 100, "", "", nil, path)
	lines := strings.Split(out, "\n")
	if lines[2] != "8 failed, 7 passed, 4 skipped, 1 xfailed, 1 xpassed, 4 errors in 0.44s" {
		t.Errorf("outcome line %q", lines[2])
	}
	if lines[3] != "collected 21 items; exit status 1" {
		t.Errorf("session line %q", lines[3])
	}
	if strings.Contains(out, "passed: 6") || strings.Contains(out, "xfailed: ") {
		t.Errorf("counter lines:\n%s", out)
	}
	if n := len(tableLines(t, out)) - 2; n != 12 {
		t.Errorf("%d table rows, want one per failure (12):\n%s", n, out)
	}
	if r := rowOf(t, out, "test_fail_assert "); !strings.Contains(r, "assert [1, 2, 4] == [1, 2, 3] …") {
		t.Errorf("first message line: %q", r)
	}
	if strings.Contains(out, "def test_fail_assert") || !strings.Contains(flat(out), "longrepr, longrepr_truncated (full text)") {
		t.Errorf("longrepr printed, or its hiding not said:\n%s", out)
	}
	if j := rankJSONL(t, "", "", nil, path); !strings.Contains(j, `def test_fail_assert():`) {
		t.Error("the JSONL lost the longrepr")
	}
}

// 8.12: a text fragment shows whole lines as wide as the terminal (perf
// report's 82-character lines were cut at 72), and says when it cut one.
func TestFragmentWholeLines(t *testing.T) {
	path := fixture("perf", "hot.report.txt")
	native, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var longest string
	for _, l := range strings.Split(string(native), "\n") {
		if len(l) > len(longest) {
			longest = l
		}
	}
	if len(longest) <= 72 {
		t.Fatalf("fixture's longest line has %d bytes; the test needs one over 72", len(longest))
	}
	out := rankView(t, 100, "preview_text_fragment", "text", nil, path)
	if !strings.Contains(out, longest) {
		t.Errorf("the %d-byte line is not shown whole at 100 columns:\n%s", len(longest), out)
	}
	if strings.Contains(out, "cut to fit") {
		t.Errorf("a cut is reported where nothing was cut:\n%s", out)
	}
	out = rankView(t, 60, "preview_text_fragment", "text", nil, path)
	checkFits(t, out, 60)
	if !strings.Contains(flat(out), "cut to fit 60 columns (…): text in ") {
		t.Errorf("cut lines not reported at 60 columns:\n%s", out)
	}
}

// 9.8: native text cannot act on the terminal: clear the screen,
// retitle it, return the carriage over a row or reverse what follows.
// The view escapes; the rows keep the exact text.
func TestEscapesTerminalControls(t *testing.T) {
	evil := []string{"\x1b[2Jcleared", "\x1b]0;pwned\a", "ok\rfake row", "abc\u202edef", "bad\xffutf8", "tab\there"}
	h := table.CPUHotspots.Header("samples")
	h.Operation, h.Evidence = "op", evidence.Derived
	var rows []evidence.Object
	for i, f := range evil {
		rows = append(rows, evidence.Object{"rank": int64(i + 1), "function": f, "file": "file:///x\x1b[31m.js", "line": int64(-1), "column": int64(-1),
			"symbolization": table.Symbolized, "self_weight": 1.0, "inclusive_weight": 1.0})
	}
	out := render(t, h, rows, &evidence.Summary{RowsObserved: 6, Complete: true, Limitations: []string{"a limit \x1b[2J"}},
		&evidence.Failure{Code: evidence.CodeDecodeFailure, Message: "bad \x1b]0;x\a"})
	checkFits(t, out, 100)
	for _, want := range []string{`\x1b[2Jcleared`, `\x1b]0;pwned\x07`, `ok\rfake row`, `abc\u202edef`, `bad\xffutf8`, `tab\there`, `file:///x\x1b[31m.js`, `a limit \x1b[2J`, `bad \x1b]0;x\x07`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks the escaped %q:\n%s", want, out)
		}
	}
	if rows[0]["function"] != evil[0] {
		t.Error("rendering changed a row")
	}
	// The real pytest fixture's message carries \x01\x1b[31m.
	pytest := rankView(t, 200, "", "", nil, fixture("pytest-events", "suite.pytest-events.jsonl"))
	checkFits(t, pytest, 200)
	if !strings.Contains(pytest, `\x01\x1b[31m`) {
		t.Errorf("the fixture's escape is not shown escaped:\n%s", pytest)
	}
}

// East Asian wide characters take two cells: rows stay aligned.
func TestWideCharacters(t *testing.T) {
	if Width("日本語") != 6 || Width("naïve") != 5 || Width("e\u0301") != 1 {
		t.Errorf("widths %d %d %d", Width("日本語"), Width("naïve"), Width("e\u0301"))
	}
	out := rankView(t, 100, "", "", nil, fixture("pytest-events", "suite.pytest-events.jsonl"))
	tl := tableLines(t, out)
	// Every row ends where its message ends; the outcome column starts at
	// the same cell in every row.
	col := -1
	for _, l := range tl[2:] {
		i := strings.Index(l, "  error  ")
		if i < 0 {
			i = strings.Index(l, "  failed  ")
		}
		if i < 0 {
			t.Fatalf("no outcome in %q", l)
		}
		at := Width(l[:i])
		if col >= 0 && at != col {
			t.Errorf("outcome at cell %d, not %d: %q", at, col, l)
		}
		col = at
	}
}

func TestCutAndWrap(t *testing.T) {
	// A place keeps two thirds of its cells for the end.
	if got := cutMiddle("/very/long/path/to/some/file.py:12", 16, 3); got != "/very…file.py:12" {
		t.Errorf("cutMiddle %q (%d cells)", got, Width(got))
	}
	if got := cutMiddle("package.Type.method", 12, 2); got != "packa…method" {
		t.Errorf("cutMiddle %q (%d cells)", got, Width(got))
	}
	if got := cutEnd("日本語日本語", 7); got != "日本語…" {
		t.Errorf("cutEnd %q", got)
	}
	for _, w := range []int{20, 33, 80} {
		text := "limitation: " + strings.Repeat("word ", 30) + strings.Repeat("x", 100)
		for _, l := range wrap(text, w) {
			if Width(l) > w {
				t.Errorf("wrap at %d: %q", w, l)
			}
		}
	}
	if got := wrap("short", 80); len(got) != 1 || got[0] != "short" {
		t.Errorf("wrap %q", got)
	}
}

// Whatever native text a row holds, the view fits the width and nothing
// in it acts on the terminal.
func FuzzView(f *testing.F) {
	f.Add("\x1b[2J\x1b]0;t\a\r\u202e日本語", "file:///a/b/c.js", int64(3), 40)
	f.Add("", "", int64(-1), 20)
	f.Add(strings.Repeat("é\u0301", 80), "\xff\xfe", int64(0), 100)
	f.Fuzz(func(t *testing.T, name, file string, line int64, width int) {
		if width < minWidth || width > 400 {
			return
		}
		h := table.CPUHotspots.HeaderBased("samples", 0)
		h.Operation, h.Evidence = "op", evidence.Derived
		rows := []evidence.Object{
			{"rank": int64(1), "function": name, "file": file, "line": line, "column": line, "symbolization": table.Anonymous, "self_weight": 1.0, "inclusive_weight": 2.0, "thread": name},
			{"rank": int64(2), "function": file, "file": name, "line": int64(7), "column": int64(-1), "symbolization": table.Symbolized, "self_weight": 0.5, "inclusive_weight": 2.0},
		}
		out := renderWidth(t, width, h, rows, &evidence.Summary{RowsObserved: 2, Limitations: []string{name + " " + file}})
		checkFits(t, out, width)
	})
}

// Rows of several profiles say which profile they come from, by file
// name less the shared extension, even when room is short.
func TestSeveralArtifacts(t *testing.T) {
	var b strings.Builder
	req := rank.Request{Decode: decode.Options{Specs: registry.Formats()}}
	paths := []string{fixture("v8", "recursive-main.cpuprofile"), fixture("v8", "recursive-worker.cpuprofile")}
	if err := rank.Paths(context.Background(), req, paths, &Text{W: &b, Width: 80}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	checkFits(t, out, 80)
	if !strings.Contains(out, "2 artifacts: recursive-main.cpuprofile, recursive-worker.cpuprofile") {
		t.Errorf("header does not name the artifacts:\n%s", out)
	}
	if r := rowOf(t, out, "spin"); !strings.Contains(r, "worker ") {
		t.Errorf("row does not say its artifact: %q", r)
	}
	if r := rowOf(t, out, "(idle)"); !strings.Contains(r, "-main ") {
		t.Errorf("row does not say its artifact: %q", r)
	}
}

// A location unknown in every row (collapsed stacks have no places) is
// an empty column like any other.
func TestEmptyLocation(t *testing.T) {
	h := table.CPUHotspots.HeaderBased("samples", 1)
	h.Operation, h.Evidence = "op", evidence.Derived
	rows := []evidence.Object{
		{"rank": int64(1), "function": "a", "line": int64(-1), "column": int64(-1), "symbolization": table.Symbolized, "self_weight": 2.0, "inclusive_weight": 2.0},
		{"rank": int64(2), "function": "b", "line": int64(-1), "column": int64(-1), "symbolization": table.Symbolized, "self_weight": 1.0, "inclusive_weight": 2.0},
	}
	out := render(t, h, rows, &evidence.Summary{RowsObserved: 2, Complete: true})
	if strings.Contains(tableLines(t, out)[0], "location") || !strings.Contains(flat(out), "file, line, column") {
		t.Errorf("an empty location is shown, or its hiding not said:\n%s", out)
	}
}

// BenchmarkView lays out the largest table --top allows.
func BenchmarkView(b *testing.B) {
	h := table.CPUHotspots.HeaderBased("samples", 0)
	h.Operation, h.Evidence = "op", evidence.Derived
	rows := make([]evidence.Object, 10000)
	for i := range rows {
		rows[i] = evidence.Object{"rank": int64(i + 1), "function": strings.Repeat("fn", i%40), "file": "file:///srv/app/" + strings.Repeat("dir/", i%12) + "main.js",
			"line": int64(i), "column": int64(i % 80), "symbolization": table.Symbolized, "self_weight": float64(i), "inclusive_weight": float64(2 * i), "self_share": 0.01}
	}
	b.ReportAllocs()
	for b.Loop() {
		r := &Text{W: io.Discard, Width: 100}
		_ = r.Begin(h)
		for _, row := range rows {
			_ = r.Row(row)
		}
		if err := r.End(&evidence.Summary{RowsObserved: 10000, Complete: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// The same function ranked once per process (perf's warm_spin before and
// after the fork renamed it) keeps its process column before module and
// other labels: without it the two rows read as one frame listed twice.
func TestSeriesTellRowsApart(t *testing.T) {
	out := rankView(t, 100, "", "perf-script", evidence.Object{"top": int64(5)}, fixture("perf", "hot.perf.txt"))
	checkFits(t, out, 100)
	a, b := rowOf(t, out, "hot-child"), rowOf(t, out, "  24 ")
	if !strings.Contains(a, "warm_spin") || !strings.Contains(b, "warm_spin") || !strings.Contains(b, "flameox-hot") {
		t.Fatalf("the two warm_spin rows are not told apart:\n%s", out)
	}
}
