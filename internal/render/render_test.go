package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func names(cols []evidence.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// Identity columns are hidden by what the declared schema says, not by
// their names; the artifact column stays when several artifacts mix.
func TestVisibleColumns(t *testing.T) {
	frames := table.CPUFrames.EvidenceColumns("samples")
	edges := table.CPUEdges.EvidenceColumns("samples")
	for _, tc := range []struct {
		name      string
		h         *evidence.Table
		hidden    []string
		mustShow  []string
		wantCount int
	}{
		{"declared, one artifact", &evidence.Table{Name: table.CPUFrames.Name, Columns: frames, ArtifactIDs: []string{digestA}},
			[]string{"artifact_id", "frame_id"}, []string{"function", "self_weight"}, len(frames) - 2},
		{"declared, two artifacts", &evidence.Table{Name: table.CPUFrames.Name, Columns: frames, ArtifactIDs: []string{digestA, digestB}},
			[]string{"frame_id"}, []string{"artifact_id", "function"}, len(frames) - 1},
		{"declared edges", &evidence.Table{Name: table.CPUEdges.Name, Columns: edges, ArtifactIDs: []string{digestA}},
			[]string{"artifact_id", "caller_id", "callee_id"}, []string{"caller_function", "callee_function"}, len(edges) - 3},
		// Without a declared schema nothing says which columns are
		// opaque, so every column shows, whatever its name.
		{"undeclared", &evidence.Table{Name: "x.results", Columns: frames, ArtifactIDs: []string{digestA}},
			nil, []string{"artifact_id", "frame_id"}, len(frames)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := names(visible(tc.h))
			if len(got) != tc.wantCount {
				t.Errorf("visible %v: %d columns, want %d", got, len(got), tc.wantCount)
			}
			for _, n := range tc.hidden {
				if slices.Contains(got, n) {
					t.Errorf("%s is shown: %v", n, got)
				}
			}
			for _, n := range tc.mustShow {
				if !slices.Contains(got, n) {
					t.Errorf("%s is hidden: %v", n, got)
				}
			}
		})
	}
}

func render(t *testing.T, h *evidence.Table, rows []evidence.Object, s *evidence.Summary, pass ...evidence.Block) string {
	t.Helper()
	return renderWidth(t, 100, h, rows, s, pass...)
}

func renderWidth(t *testing.T, width int, h *evidence.Table, rows []evidence.Object, s *evidence.Summary, pass ...evidence.Block) string {
	t.Helper()
	var b strings.Builder
	r := &Text{W: &b, Width: width}
	for _, p := range pass {
		if err := r.Pass(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Begin(h); err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if err := r.Row(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.End(s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func resultHeader() *evidence.Table {
	return &evidence.Table{Name: "x.results", Operation: "op", Evidence: evidence.Derived, Columns: []evidence.Column{
		{Name: "rank", Type: evidence.TypeInt},
		{Name: "function", Type: evidence.TypeString},
		{Name: "self_weight", Type: evidence.TypeDouble, Unit: "seconds"},
		{Name: "share", Type: evidence.TypeDouble, Unit: "ratio"},
		{Name: "calls", Type: evidence.TypeInt},
	}}
}

// tableLines returns the column header, the rule and the rows.
func tableLines(t *testing.T, out string) []string {
	t.Helper()
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "----") {
			end := i + 1
			for end < len(lines) && lines[end] != "" {
				end++
			}
			return lines[i-1 : end]
		}
	}
	t.Fatalf("no table in:\n%s", out)
	return nil
}

func TestTextTable(t *testing.T) {
	long := strings.Repeat("a", 30) + strings.Repeat("z", 30)
	out := render(t, resultHeader(), []evidence.Object{
		{"rank": int64(1), "function": "main", "self_weight": 1.5, "share": 0.75, "calls": nil},
		{"rank": int64(10), "function": long, "self_weight": float64(2), "share": 0.25, "calls": nil},
		{"rank": int64(11), "function": "", "self_weight": 1e-7, "share": 0.0, "calls": nil},
	}, &evidence.Summary{RowsObserved: 3, Complete: true})
	lines := strings.Split(out, "\n")
	if lines[0] != "x.results (op, derived evidence)" {
		t.Errorf("title %q", lines[0])
	}
	// What is shown of what comes before the table, as in pprof -top.
	if lines[1] != "rows: 3 shown of 3 selected; complete" {
		t.Errorf("rows line %q", lines[1])
	}
	tl := tableLines(t, out)
	// Units in the header, but not "ratio"; a column null in every row is
	// left out, and said so under the table.
	if !strings.Contains(tl[0], "self_weight (seconds)") || strings.Contains(tl[0], "ratio") || strings.Contains(tl[0], "calls") {
		t.Errorf("head %q", tl[0])
	}
	if !strings.Contains(out, "hidden: calls (empty); --format jsonl shows every column") {
		t.Errorf("no footer naming the hidden column:\n%s", out)
	}
	// Numbers are right-aligned, shares are percentages, an empty string
	// is shown as such; the long name fits, whole, in 100 columns.
	if !strings.HasPrefix(tl[2], "   1  main") || !strings.Contains(tl[2], "75.0%") {
		t.Errorf("row 1 %q", tl[2])
	}
	if !strings.Contains(tl[3], long) {
		t.Errorf("row 2 %q, want the function whole", tl[3])
	}
	if !strings.Contains(tl[4], `""`) || !strings.Contains(tl[4], "1e-07") || strings.Contains(tl[4], "anonymous") {
		t.Errorf("row 3 %q", tl[4])
	}
	// Every row has the same width: columns are aligned.
	for _, l := range tl[:2] {
		if n, want := Width(l), Width(tl[3]); n != want {
			t.Errorf("line %q is %d cells wide, the widest row %d", l, n, want)
		}
	}
}

// With several artifacts, their rows are told apart by a short digest.
func TestTextShortArtifact(t *testing.T) {
	h := &evidence.Table{Name: table.CPUFrames.Name, Operation: "op", Evidence: evidence.Observed,
		Columns: table.CPUFrames.EvidenceColumns("samples"), ArtifactIDs: []string{digestA, digestB}}
	out := render(t, h, []evidence.Object{
		{"artifact_id": digestA, "frame_id": "f1", "function": "a", "self_weight": 1.0},
		{"artifact_id": digestB, "frame_id": "f2", "function": "b", "self_weight": 2.0},
	}, &evidence.Summary{RowsObserved: 2, Complete: true})
	if !strings.Contains(out, "aaaaaaaaaaaa  a") || strings.Contains(out, "sha256:") || strings.Contains(out, "frame_id") {
		t.Errorf("artifact column not shortened, or identity shown:\n%s", out)
	}
}

func TestTextSummaries(t *testing.T) {
	row := []evidence.Object{{"rank": int64(1), "function": "f", "self_weight": 1.0, "share": 1.0, "calls": int64(3)}}
	for _, tc := range []struct {
		name string
		s    *evidence.Summary
		want []string
	}{
		{"bounded", &evidence.Summary{RowsObserved: 9, Truncation: &evidence.Truncation{Reason: "row_limit", Limit: 1, Omitted: 8}},
			[]string{"rows: 1 shown of 9 selected; bounded: 8 omitted by row_limit=1\n"}},
		{"incomplete inputs", &evidence.Summary{RowsObserved: 9, Truncation: &evidence.Truncation{Reason: "row_limit", Limit: 1, Omitted: 8},
			Coverage: evidence.Object{"incomplete_input_tables": []any{"t1", "t2"}}},
			[]string{"; 8 omitted by row_limit=1; INCOMPLETE evidence (incomplete inputs: t1, t2)\n"}},
		{"incomplete", &evidence.Summary{RowsObserved: 1}, []string{"rows: 1 shown of 1 selected; INCOMPLETE evidence\n"}},
		{"metrics and limitations", &evidence.Summary{RowsObserved: 1, Complete: true,
			Metrics:     map[string]evidence.Metric{"b_total": {Value: 2.5, Unit: "seconds"}, "a_count": {Value: int64(3), Unit: "count"}},
			Limitations: []string{"a limit"}},
			[]string{"a_count: 3; b_total: 2.5 seconds\n", "\nlimitation: a limit\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := renderWidth(t, 200, resultHeader(), row, tc.s)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tc.s.RowsEmitted != 1 {
				t.Errorf("rows emitted %d, want the rows rendered", tc.s.RowsEmitted)
			}
		})
	}
}

// Passed captures and failures are noted under the next table; tables
// after the first are set apart by a blank line; an empty table keeps its
// columns.
func TestTextNotesAndSeveralTables(t *testing.T) {
	code := 0
	var b strings.Builder
	r := &Text{W: &b}
	_ = r.Pass(&evidence.Capture{ID: "cap1", Provider: evidence.Producer{Name: "node", Version: "v22"}, ExitCode: &code, Outcome: "completed"})
	_ = r.Pass(&evidence.Failure{Code: evidence.CodeLimitExceeded, Message: "too big"})
	_ = r.Pass(&evidence.Artifact{ID: digestA})
	for range 2 {
		if err := r.Begin(resultHeader()); err != nil {
			t.Fatal(err)
		}
		if err := r.End(&evidence.Summary{Complete: true}); err != nil {
			t.Fatal(err)
		}
	}
	out := b.String()
	for _, w := range []string{"capture cap1: node v22, exit 0, outcome completed\n", "failure LIMIT_EXCEEDED: too big\n", "\n\nx.results (op"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if strings.Count(out, "capture cap1") != 1 {
		t.Errorf("notes repeated under the second table:\n%s", out)
	}
	if !strings.Contains(out, "rank  function  self_weight (seconds)  share%  calls") {
		t.Errorf("an empty table lost its columns:\n%s", out)
	}
}
