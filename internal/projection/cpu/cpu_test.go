package cpu

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/perfscript"
	"github.com/flameox/flameox/internal/formats/pprof"
	"github.com/flameox/flameox/internal/formats/pstats"
	"github.com/flameox/flameox/internal/formats/speedscope"
	"github.com/flameox/flameox/internal/formats/v8cpu"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/projection/projectiontest"
	"github.com/flameox/flameox/internal/table"
)

const fixtures = "../../../testdata/"

func frames(id, format, unit string) *evidence.Table {
	return &evidence.Table{ID: id, Name: table.CPUFrames.Name, Format: format, Columns: table.CPUFrames.EvidenceColumns(unit), ArtifactIDs: []string{"sha256:" + id}}
}

func frame(fn string, self, incl float64) *table.Frame {
	return &table.Frame{FrameSite: table.FrameSite{FrameID: fn, Function: fn, Line: -1, Column: -1, Symbolization: table.Symbolized}, SelfWeight: self, InclusiveWeight: incl}
}

// input is a closed table of typed rows.
func input(h *evidence.Table, rows ...any) *projectiontest.Input {
	return &projectiontest.Input{Header: h, Rows: rows, Summary: &evidence.Summary{Complete: true}}
}

func framesOf(h *evidence.Table, rows ...*table.Frame) *projectiontest.Input {
	in := input(h)
	for _, r := range rows {
		in.Rows = append(in.Rows, r)
	}
	return in
}

// asObjects is the same table as a block stream carries it: each typed
// row as its values, with the artifact column.
func asObjects(t testing.TB, in *projectiontest.Input) *projectiontest.Input {
	t.Helper()
	out := *in
	out.Rows = nil
	s := table.Lookup(in.Header.Name)
	for _, r := range in.Rows {
		if _, ok := r.(evidence.Object); !ok {
			o, err := s.Values(r, in.Header.ArtifactIDs[0])
			if err != nil {
				t.Fatal(err)
			}
			r = o
		}
		out.Rows = append(out.Rows, r)
	}
	return &out
}

// rank runs spec over the inputs twice, with typed rows (a decoder in the
// same process) and with their values (a block stream), and requires the
// same result from both.
func rank(t *testing.T, spec *projection.Spec, args evidence.Object, inputs ...*projectiontest.Input) *projectiontest.Result {
	t.Helper()
	typed, err := projectiontest.Run(spec, args, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	var objs []*projectiontest.Input
	for _, in := range inputs {
		objs = append(objs, asObjects(t, in))
	}
	stream, err := projectiontest.Run(spec, args, objs...)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := evidence.Canonical(evidence.Object{"rows": typed.Rows, "summary": typed.Summary.CanonicalValue(), "header": typed.Header.CanonicalValue()})
	b, _ := evidence.Canonical(evidence.Object{"rows": stream.Rows, "summary": stream.Summary.CanonicalValue(), "header": stream.Header.CanonicalValue()})
	if string(a) != string(b) {
		t.Fatalf("typed rows and their values rank differently:\n%s\n%s", a, b)
	}
	return typed
}

func TestSelectionBeforeBound(t *testing.T) {
	// Unrelated hot frames come first in the input; they must not consume
	// the bound or the observed count.
	r := rank(t, Hotspots, evidence.Object{"top": int64(2), "function_pattern": "^app"}, framesOf(frames("a", "v8-cpuprofile", "samples"),
		frame("lib1", 100, 100), frame("lib2", 90, 90), frame("appC", 5, 5), frame("appA", 7, 9), frame("appB", 7, 8)))
	if len(r.Rows) != 2 || r.Rows[0]["function"] != "appA" || r.Rows[1]["function"] != "appB" {
		t.Fatalf("rows = %v", r.Rows)
	}
	if r.Summary.RowsObserved != 3 || r.Summary.Complete || r.Summary.Truncation.Omitted != 1 {
		t.Fatalf("summary = %+v", r.Summary)
	}
	// Shares are of the whole profile, not of the selection.
	if got := r.Rows[0]["self_share"].(float64); got != 7.0/209 {
		t.Fatalf("self_share %v", got)
	}
	if r.Rows[0]["rank"] != int64(1) || r.Rows[0]["artifact_id"] != "sha256:a" || r.Header.Name != table.CPUHotspots.Name {
		t.Fatalf("row %v of %s", r.Rows[0], r.Header.Name)
	}
}

func TestFilters(t *testing.T) {
	tab := frames("a", "v8-cpuprofile", "samples")
	mk := func(fn string, mut func(*table.Frame)) *table.Frame {
		f := frame(fn, 1, 1)
		mut(f)
		return f
	}
	in := framesOf(tab,
		mk("gc", func(f *table.Frame) { f.Symbolization = table.Synthetic }),
		mk("t1", func(f *table.Frame) { f.Thread = table.Some("worker") }),
		mk("p1", func(f *table.Frame) { f.Process = table.Some("42") }),
		mk("js", func(f *table.Frame) { f.File = table.Some("/app/app.js") }),
		mk("plain", func(*table.Frame) {}))
	for _, c := range []struct {
		args evidence.Object
		want []any
	}{
		{evidence.Object{"include_synthetic": false}, []any{"js", "p1", "plain", "t1"}},
		{evidence.Object{"thread": "worker"}, []any{"t1"}},
		{evidence.Object{"process": "42"}, []any{"p1"}},
		{evidence.Object{"file_pattern": `app\.js$`}, []any{"js"}},
		{evidence.Object{"file_pattern": `^$`}, []any{"gc", "p1", "plain", "t1"}}, // a null file matches as ""
	} {
		r := rank(t, Hotspots, c.args, in)
		if got := r.Column("function"); !slices.Equal(got, c.want) {
			t.Errorf("%v: rows %v, want %v", c.args, got, c.want)
		}
	}
}

func TestAdmission(t *testing.T) {
	h := projectiontest.MustStart(t, Hotspots, nil)
	if err := h.Table(frames("a", "v8-cpuprofile", "samples"), formats.Caps{}); err != nil {
		t.Fatal(err)
	}
	if err := h.Table(frames("b", "pstats", "s"), formats.Caps{}); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("mixed dimensions accepted: %v", err)
	}
	if err := h.Table(frames("a", "v8-cpuprofile", "samples"), formats.Caps{}); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("a table twice: %v", err)
	}
	if err := h.Table(&evidence.Table{ID: "e", Name: table.CPUEdges.Name, Columns: table.CPUEdges.EvidenceColumns("samples")}, formats.Caps{}); evidence.CodeOf(err) != evidence.CodeUnsupportedFormat {
		t.Fatalf("an edges table: %v", err)
	}
	h = projectiontest.MustStart(t, Hotspots, nil)
	h.Table(frames("a", "v8-cpuprofile", "samples"), formats.Caps{})
	if err := h.Table(frames("b", "perf-data", "samples"), formats.Caps{}); err == nil {
		t.Fatal("mixed formats accepted")
	}
	h = projectiontest.MustStart(t, Hotspots, nil)
	for i := range MaxProfiles + 1 {
		err := h.Table(frames(fmt.Sprint(i), "v8-cpuprofile", "samples"), formats.Caps{})
		if i < MaxProfiles && err != nil {
			t.Fatal(err)
		}
		if i == MaxProfiles {
			var f *evidence.Failure
			if evidence.CodeOf(err) != evidence.CodeLimitExceeded {
				t.Fatalf("33rd profile: %v", err)
			}
			f = err.(*evidence.Failure)
			lim, _ := f.Details["limit"].(evidence.Object)
			if lim["name"] != "max_profiles" || lim["value"] != int64(MaxProfiles) || lim["observed"] != int64(MaxProfiles+1) || lim["unit"] != "profiles" {
				t.Fatalf("limit receipt %v", f.Details)
			}
		}
	}
}

func TestRowFaults(t *testing.T) {
	tab := frames("a", "v8-cpuprofile", "samples")
	h := projectiontest.MustStart(t, Hotspots, nil)
	if err := h.Row(tab, frame("f", 1, 1)); evidence.CodeOf(err) != evidence.CodeInternal {
		t.Fatalf("row before its header: %v", err)
	}
	if err := h.Table(tab, formats.Caps{}); err != nil {
		t.Fatal(err)
	}
	other, _ := table.CPUFrames.Values(frame("g", 1, 1), "sha256:b")
	if err := h.Row(tab, other); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("a row of another artifact: %v", err)
	}
	bad, _ := table.CPUFrames.Values(frame("g", 1, 1), "sha256:a")
	bad["self_weight"] = nil
	if err := h.Row(tab, bad); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("a row without weights: %v", err)
	}
	if err := h.Summary(tab, &evidence.Summary{Complete: true}); err != nil {
		t.Fatal(err)
	}
	if err := h.Summary(tab, &evidence.Summary{Complete: true}); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("a second summary: %v", err)
	}
	if err := h.Row(tab, frame("late", 1, 1)); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("a row after the summary: %v", err)
	}
}

func TestConvertibleUnitsPool(t *testing.T) {
	r := rank(t, Hotspots, nil, framesOf(frames("a", "speedscope", "s"), frame("f", 1, 1)),
		framesOf(frames("b", "speedscope", "ms"), frame("g", 500, 500)))
	if r.Rows[1]["self_weight"] != 0.5 || r.Header.Columns[11].Unit != "s" || r.Summary.Metrics["total_weight"].Value != 1.5 {
		t.Fatalf("rows %v unit %v total %v", r.Rows, r.Header.Columns[11].Unit, r.Summary.Metrics["total_weight"])
	}
	if r.Summary.Metrics["profile_count"].Value != 2 || r.Summary.Coverage["input_tables"] != int64(2) {
		t.Fatalf("summary %+v", r.Summary)
	}
}

// Equal weights rank by identity, artifact first, whatever the input order.
func TestTiesRankByIdentity(t *testing.T) {
	a := framesOf(frames("a", "v8-cpuprofile", "samples"), frame("y", 1, 1), frame("x", 1, 1))
	b := framesOf(frames("b", "v8-cpuprofile", "samples"), frame("x", 1, 1))
	want := []any{"sha256:a x", "sha256:a y", "sha256:b x"}
	for _, order := range [][]*projectiontest.Input{{a, b}, {b, a}} {
		r := rank(t, Hotspots, nil, order...)
		var got []any
		for _, row := range r.Rows {
			got = append(got, fmt.Sprint(row["artifact_id"], " ", row["frame_id"]))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

func TestIncompleteInput(t *testing.T) {
	in := framesOf(frames("a", "v8-cpuprofile", "samples"), frame("f", 1, 1))
	in.Summary = nil // no summary arrived: the input was cut
	r := rank(t, Hotspots, nil, in)
	if r.Summary.Complete || len(r.Summary.Limitations) == 0 {
		t.Fatalf("summary %+v", r.Summary)
	}
	in.Summary = &evidence.Summary{Complete: false, Limitations: []string{"the profile was cut"}}
	r = rank(t, Hotspots, nil, in)
	if r.Summary.Complete || !slices.Contains(r.Summary.Limitations, "the profile was cut") ||
		!slices.Equal(r.Summary.Coverage["incomplete_input_tables"].([]string), []string{"a"}) {
		t.Fatalf("summary %+v", r.Summary)
	}
	if err := (&hotspots{}).Finish(&projectiontest.Result{}); err == nil {
		t.Fatal("an empty input must not rank as 'nothing is hot'")
	}
	if _, err := projectiontest.Run(Edges, nil); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("edges of no input: %v", err)
	}
}

func TestMetricCheck(t *testing.T) {
	given := map[string]bool{"metric": true}
	counted := &formats.Spec{Name: "counted", Caps: formats.Caps{CallCounts: true}}
	sampled := &formats.Spec{Name: "sampled"}
	if err := Check([]*formats.Spec{counted}, given, nil); err != nil {
		t.Fatal(err)
	}
	if err := Check([]*formats.Spec{counted, sampled}, given, nil); err == nil {
		t.Error("metric accepted for a format without call counts")
	}
	if err := Check([]*formats.Spec{sampled}, map[string]bool{}, nil); err != nil {
		t.Fatal(err)
	}
}

// A real profile through its decoder: the hottest function, and weights
// that add up to the profile's own total.
func TestV8Profile(t *testing.T) {
	in := projectiontest.Decode(t, v8cpu.Spec, fixtures+"v8/hotspot.cpuprofile", nil)
	r := rank(t, Hotspots, evidence.Object{"top": int64(3)}, in[0])
	if r.Rows[0]["function"] != "crunchPrimes" || r.Rows[0]["symbolization"] != table.Symbolized || len(r.Rows) != 3 || r.Summary.Complete {
		t.Fatalf("rows %v, summary %+v", r.Column("function"), r.Summary)
	}
	total, _ := evidence.AsFloat(in[0].Summary.Metrics[table.MetricTotalWeight].Value)
	if got := r.Summary.Metrics[table.MetricTotalWeight].Value.(float64); math.Abs(got-total) > 1e-9*total {
		t.Fatalf("total weight %v, the decoder's %v", got, total)
	}
	if r.Header.Format != v8cpu.Spec.Name || !slices.Equal(r.Header.ArtifactIDs, in[0].Header.ArtifactIDs) {
		t.Fatalf("header %+v", r.Header)
	}
	e := rank(t, Edges, evidence.Object{"callee_pattern": "^fib$", "top": int64(5)},
		projectiontest.Decode(t, v8cpu.Spec, fixtures+"v8/recursive-main.cpuprofile", nil)[1])
	if len(e.Rows) != 2 || e.Rows[0]["callee_function"] != "fib" || e.Header.Name != table.CPUCallerEdges.Name {
		t.Fatalf("edges %v", e.Rows)
	}
}

// pstats records calls: the calls metric ranks by them.
func TestPstatsCalls(t *testing.T) {
	in := projectiontest.Decode(t, pstats.Spec, fixtures+"pstats/cprofile-workload.pstats", nil)
	r := rank(t, Hotspots, evidence.Object{"metric": MetricCalls, "top": int64(5)}, in[0])
	calls := r.Column("calls")
	for i := 1; i < len(calls); i++ {
		if calls[i-1].(int64) < calls[i].(int64) {
			t.Fatalf("calls not descending: %v", calls)
		}
	}
}

// The profile module's pstats record only call counts on edges: such edges
// rank after weighted ones, by calls, keep null weights, and say so.
func TestEdgesWithoutWeights(t *testing.T) {
	edge := func(callee string, w table.Null[float64], calls int64) *table.Edge {
		return &table.Edge{CallerID: "a", CallerFunction: "a", CallerLine: 1, CalleeID: callee, CalleeFunction: callee, CalleeLine: 2,
			Weight: w, SelfWeight: w, Calls: table.Some(calls)}
	}
	tab := &evidence.Table{ID: "e", Name: table.CPUEdges.Name, Format: "pstats", Columns: table.CPUEdges.EvidenceColumns("s"), ArtifactIDs: []string{"sha256:a"}}
	in := input(tab, edge("b", table.Null[float64]{}, 5), edge("c", table.Some(0.5), 1), edge("d", table.Null[float64]{}, 9))
	r := rank(t, Edges, nil, in)
	if order := r.Column("callee_function"); !slices.Equal(order, []any{"c", "d", "b"}) || r.Rows[1]["weight"] != nil {
		t.Fatalf("order %v, rows %v", order, r.Rows)
	}
	if r.Summary.Metrics["unweighted_edges"].Value != int64(2) || len(r.Summary.Limitations) == 0 {
		t.Fatalf("summary %+v", r.Summary)
	}
	bad, _ := table.CPUEdges.Values(edge("e", table.Some(1.0), 1), "sha256:a")
	bad["weight"] = "x"
	if _, err := projectiontest.Run(Edges, nil, input(tab, bad)); err == nil {
		t.Fatal("a string weight accepted")
	}
	half, _ := table.CPUEdges.Values(edge("e", table.Some(1.0), 1), "sha256:a")
	half["self_weight"] = nil
	if _, err := projectiontest.Run(Edges, nil, input(tab, half)); evidence.CodeOf(err) != evidence.CodeDecodeFailure {
		t.Fatalf("one weight null: %v", err)
	}
}

func benchFrames(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = &table.Frame{
			FrameSite: table.FrameSite{
				FrameID:       fmt.Sprint("f", i),
				Function:      fmt.Sprint("fn", i),
				File:          table.Some("/app/a.js"),
				Line:          int64(i),
				Column:        1,
				Symbolization: table.Symbolized,
				Thread:        table.Some("main"),
			},
			SelfWeight:      float64(i % 977),
			InclusiveWeight: float64(i % 1231),
		}
	}
	return out
}

func benchEdges(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = &table.Edge{CallerID: fmt.Sprint("c", i%1000), CallerFunction: fmt.Sprint("caller", i%1000), CallerLine: 1,
			CalleeID: fmt.Sprint("f", i), CalleeFunction: fmt.Sprint("fn", i), CalleeLine: 2, Thread: table.Some("main"),
			Weight: table.Some(float64(i % 1231)), SelfWeight: table.Some(float64(i % 977))}
	}
	return out
}

// bench ranks 100k rows, typed (from a decoder in process) and as their
// values (from a block stream).
func bench(b *testing.B, spec *projection.Spec, schema *table.Schema, typed []any) {
	h := &evidence.Table{ID: "a." + schema.Name, Name: schema.Name, Format: "v8-cpuprofile", Columns: schema.EvidenceColumns("samples"), ArtifactIDs: []string{"sha256:a"}}
	in := input(h, typed...)
	objects := asObjects(b, in)
	b.Run("typed", func(b *testing.B) { projectiontest.Bench(b, spec, evidence.Object{"top": int64(20)}, in) })
	b.Run("stream", func(b *testing.B) { projectiontest.Bench(b, spec, evidence.Object{"top": int64(20)}, objects) })
}

func BenchmarkHotspots(b *testing.B) { bench(b, Hotspots, table.CPUFrames.Schema, benchFrames(100000)) }

func BenchmarkEdges(b *testing.B) { bench(b, Edges, table.CPUEdges.Schema, benchEdges(100000)) }

func FuzzHotspots(f *testing.F) {
	in := projectiontest.Decode(f, v8cpu.Spec, fixtures+"v8/hotspot.cpuprofile", nil)[0]
	projectiontest.FuzzRows(f, Hotspots, in, nil, evidence.Object{"top": int64(2), "function_pattern": "^c", "include_synthetic": false})
}

func FuzzEdges(f *testing.F) {
	in := projectiontest.Decode(f, pstats.Spec, fixtures+"pstats/profile-workload.pstats", nil)[1]
	projectiontest.FuzzRows(f, Edges, in, nil, evidence.Object{"top": int64(3), "callee_pattern": "a"})
}

// Shares describe the selected population: the decoder's total (empty
// stacks included), narrowed by --thread to the selected profiles' totals,
// and profile_count counts profiles, not artifacts (py-spy 0.4.1 fixture:
// two threads, 9 empty-stack samples in MainThread).
func TestSharesOfSelectedPopulation(t *testing.T) {
	in := projectiontest.Decode(t, speedscope.Spec, fixtures+"speedscope/pyspy-0.4.1-two-threads.speedscope.json", nil)
	frames := in[0]
	decoded, _ := evidence.AsFloat(frames.Summary.Metrics[table.MetricTotalWeight].Value)
	perThread := map[string]float64{}
	for _, p := range frames.Summary.Coverage["profiles"].([]any) {
		o := p.(evidence.Object)
		perThread[o["thread"].(string)], _ = evidence.AsFloat(o["total_weight"])
	}
	main := perThread[`Thread 32482 "MainThread"`]
	if !slices.Contains(frames.Summary.Limitations, "9 samples have no frames (profile 0: 9): their weight is in total_weight but on no frame") {
		t.Fatalf("limitations %q", frames.Summary.Limitations)
	}
	if math.Abs(decoded-1.99) > 1e-9 || math.Abs(main-1.18) > 1e-9 {
		t.Fatalf("fixture totals %v %v", decoded, perThread)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for _, tc := range []struct {
		args     evidence.Object
		total    float64
		profiles int
	}{
		{nil, decoded, 2},
		{evidence.Object{"thread": `Thread 32482 "MainThread"`}, main, 1},
	} {
		r := rank(t, Hotspots, tc.args, frames)
		got := r.Summary.Metrics[table.MetricTotalWeight].Value.(float64)
		if !near(got, tc.total) || r.Summary.Metrics["profile_count"].Value != tc.profiles {
			t.Fatalf("%v: total %v profiles %v, want %v %v", tc.args, got, r.Summary.Metrics["profile_count"].Value, tc.total, tc.profiles)
		}
		self := r.Rows[0]["self_weight"].(float64)
		if share := r.Rows[0]["self_share"].(float64); !near(share, self/tc.total) {
			t.Fatalf("%v: self_share %v, want %v/%v", tc.args, share, self, tc.total)
		}
		e := rank(t, Edges, tc.args, in[1])
		if got := e.Summary.Metrics[table.MetricTotalWeight].Value.(float64); !near(got, tc.total) {
			t.Fatalf("%v: edges total %v, want %v", tc.args, got, tc.total)
		}
	}
}

// A CPU ranking cut by --top says row_limit, as every other projection's
// row bound does.
func TestTruncationReason(t *testing.T) {
	in := framesOf(frames("a", "v8-cpuprofile", "samples"), frame("f", 2, 2), frame("g", 1, 1))
	r := rank(t, Hotspots, evidence.Object{"top": int64(1)}, in)
	if tr := r.Summary.Truncation; tr == nil || tr.Reason != "row_limit" || tr.Omitted != 1 {
		t.Fatalf("truncation %+v", tr)
	}
}

// A filter that selects nothing says so in the summary and names the
// nearest values it was tested against.
func TestFilterMatchedNothing(t *testing.T) {
	in := projectiontest.Decode(t, v8cpu.Spec, fixtures+"v8/hotspot.cpuprofile", nil)
	hint := func(r *projectiontest.Result, arg, near string) {
		t.Helper()
		for _, l := range r.Summary.Limitations {
			if strings.Contains(l, arg) && strings.Contains(l, "matched nothing") && strings.Contains(l, near) {
				return
			}
		}
		t.Fatalf("no hint naming %s for %s: %q", near, arg, r.Summary.Limitations)
	}
	r := rank(t, Hotspots, evidence.Object{"function_pattern": "^crunchPrime$"}, in[0])
	if len(r.Rows) != 0 || r.Summary.RowsObserved != 0 {
		t.Fatalf("rows %v", r.Column("function"))
	}
	hint(r, "function_pattern", `"crunchPrimes"`)
	e := rank(t, Edges, evidence.Object{"callee_pattern": "^crunchPrime$"}, in[1])
	hint(e, "callee_pattern", `"crunchPrimes"`)
	th := rank(t, Hotspots, evidence.Object{"thread": "main"}, projectiontest.Decode(t, speedscope.Spec, fixtures+"speedscope/pyspy-0.4.1-two-threads.speedscope.json", nil)[0])
	hint(th, "thread", `MainThread`)
	// A filter that matches says nothing of the kind.
	ok := rank(t, Hotspots, evidence.Object{"function_pattern": "^crunchPrimes$"}, in[0])
	for _, l := range ok.Summary.Limitations {
		if strings.Contains(l, "matched nothing") {
			t.Fatalf("hint on a filter that matched: %q", l)
		}
	}
}

// A table whose decoder lists no per-series totals: a thread filter takes
// the selected rows' self weight, and the result says so; unfiltered, the
// summary's total_weight stands.
func TestSeriesTotalFallback(t *testing.T) {
	a, b := frame("a", 2, 2), frame("b", 3, 3)
	a.Thread, b.Thread = table.Some("t1"), table.Some("t2")
	in := framesOf(frames("x", "perf-script", "samples"), a, b)
	in.Summary = &evidence.Summary{Complete: true, Metrics: map[string]evidence.Metric{table.MetricTotalWeight: {Value: int64(10), Unit: "samples"}}}
	r := rank(t, Hotspots, nil, in)
	if r.Summary.Metrics[table.MetricTotalWeight].Value != 10.0 || r.Summary.Metrics["profile_count"].Value != 2 {
		t.Fatalf("unfiltered %+v", r.Summary.Metrics)
	}
	r = rank(t, Hotspots, evidence.Object{"thread": "t2"}, in)
	if r.Summary.Metrics[table.MetricTotalWeight].Value != 3.0 || r.Summary.Metrics["profile_count"].Value != 1 ||
		!slices.ContainsFunc(r.Summary.Limitations, func(l string) bool { return strings.Contains(l, "lists no total per thread or process") }) {
		t.Fatalf("filtered %+v", r.Summary)
	}
}

// perf script split by thread lists each series' total, so --thread
// divides by the selected threads' own samples (stackless ones included)
// and needs no fallback: hot.perf.txt's thread 16753 is 1 sample in
// flameox-hot and 71 after it became hot-child.
func TestPerfThreadTotals(t *testing.T) {
	in := projectiontest.Decode(t, perfscript.ScriptSpec, fixtures+"perf/hot.perf.txt", evidence.Object{"threads": true})[0]
	r := rank(t, Hotspots, nil, in)
	if r.Summary.Metrics[table.MetricTotalWeight].Value != 267.0 || r.Summary.Metrics["profile_count"].Value != 3 {
		t.Fatalf("unfiltered %+v", r.Summary.Metrics)
	}
	r = rank(t, Hotspots, evidence.Object{"thread": "16753"}, in)
	if r.Summary.Metrics[table.MetricTotalWeight].Value != 72.0 || r.Summary.Metrics["profile_count"].Value != 2 ||
		slices.ContainsFunc(r.Summary.Limitations, func(l string) bool { return strings.Contains(l, "lists no total") }) {
		t.Fatalf("filtered %+v", r.Summary)
	}
}

// A perf.data recorded with two events (perf record -e cpu-clock,task-clock)
// decodes into one table per event; rank pools them, and says so: the
// result is incomplete and names the events, so no share reads as one
// event's.
func TestPooledEventsSaid(t *testing.T) {
	ins := projectiontest.Decode(t, perfscript.ScriptSpec, fixtures+"perf/two.perf.txt", nil)
	var frames []*projectiontest.Input
	for _, in := range ins {
		if in.Header.Name == table.CPUFrames.Name {
			frames = append(frames, in)
		}
	}
	if len(frames) != 2 {
		t.Fatalf("%d frames tables, want one per event", len(frames))
	}
	r := rank(t, Hotspots, nil, frames...)
	if r.Summary.Complete || !slices.ContainsFunc(r.Summary.Limitations, func(l string) bool {
		return strings.Contains(l, "2 events (cpu-clock, task-clock) and they are pooled")
	}) {
		t.Fatalf("summary %+v", r.Summary)
	}
	one := rank(t, Hotspots, nil, frames[0])
	if !one.Summary.Complete {
		t.Fatalf("one event alone: %+v", one.Summary)
	}
}

// group_by function pools a py-spy profile's per-line frames into one row
// per function and thread: its self and inclusive weights are the sums of
// its frames', the total is unchanged, and the pooling is stated.
func TestGroupByFunction(t *testing.T) {
	in := projectiontest.Decode(t, speedscope.Spec, fixtures+"speedscope/pyspy-0.4.1-two-threads.speedscope.json", nil)[0]
	frames := rank(t, Hotspots, evidence.Object{"top": int64(100000), "group_by": GroupFrame}, in)
	funcs := rank(t, Hotspots, evidence.Object{"top": int64(100000), "group_by": GroupFunction}, in)
	type key struct{ fn, file, thread any }
	want := map[key][2]float64{}
	for _, r := range frames.Rows {
		k := key{r["function"], r["file"], r["thread"]}
		s, _ := evidence.AsFloat(r["self_weight"])
		i, _ := evidence.AsFloat(r["inclusive_weight"])
		w := want[k]
		want[k] = [2]float64{w[0] + s, w[1] + i}
	}
	if len(funcs.Rows) != len(want) || len(funcs.Rows) >= len(frames.Rows) {
		t.Fatalf("%d function rows for %d functions of %d frame rows", len(funcs.Rows), len(want), len(frames.Rows))
	}
	for _, r := range funcs.Rows {
		s, _ := evidence.AsFloat(r["self_weight"])
		i, _ := evidence.AsFloat(r["inclusive_weight"])
		if w := want[key{r["function"], r["file"], r["thread"]}]; math.Abs(w[0]-s) > 1e-9 || math.Abs(w[1]-i) > 1e-9 {
			t.Fatalf("%v: %v/%v, frames sum to %v", r["function"], s, i, w)
		}
	}
	if funcs.Summary.Metrics[table.MetricTotalWeight] != frames.Summary.Metrics[table.MetricTotalWeight] {
		t.Fatal("grouping changed the total")
	}
	if n, _ := evidence.AsInt(funcs.Summary.Metrics["pooled_functions"].Value); n == 0 {
		t.Fatalf("summary %+v", funcs.Summary)
	}
}

// group_by line ranks py-spy's sampled lines: a row per (function, file,
// line) of a thread with the frames' weights, the line 1-based as py-spy
// wrote it and stated so in the header, the total unchanged. A profile
// whose frames are functions and that brings no cpu.lines (V8, perf,
// pstats) is refused with a typed failure rather than given function
// start lines as hot lines.
func TestGroupByLine(t *testing.T) {
	in := projectiontest.Decode(t, speedscope.Spec, fixtures+"speedscope/pyspy-0.4.1-two-threads.speedscope.json", nil)[0]
	if !table.SampledLines(in.Header) {
		t.Fatal("py-spy frames table does not state sampled lines")
	}
	frames := rank(t, Hotspots, evidence.Object{"top": int64(100000), "group_by": GroupFrame}, in)
	lines := rank(t, Hotspots, evidence.Object{"top": int64(100000), "group_by": GroupLine}, in)
	type key struct{ fn, file, line, thread any }
	want := map[key][2]float64{}
	for _, r := range frames.Rows {
		k := key{r["function"], r["file"], r["line"], r["thread"]}
		s, _ := evidence.AsFloat(r["self_weight"])
		i, _ := evidence.AsFloat(r["inclusive_weight"])
		w := want[k]
		want[k] = [2]float64{w[0] + s, w[1] + i}
	}
	if len(lines.Rows) != len(want) {
		t.Fatalf("%d line rows for %d lines", len(lines.Rows), len(want))
	}
	hot := 0
	for _, r := range lines.Rows {
		s, _ := evidence.AsFloat(r["self_weight"])
		i, _ := evidence.AsFloat(r["inclusive_weight"])
		n, _ := evidence.AsInt(r["line"])
		if n < 1 {
			t.Fatalf("%v: line %v", r["function"], r["line"])
		}
		if w := want[key{r["function"], r["file"], r["line"], r["thread"]}]; math.Abs(w[0]-s) > 1e-9 || math.Abs(w[1]-i) > 1e-9 {
			t.Fatalf("%v:%v: %v/%v, frames sum to %v", r["function"], r["line"], s, i, w)
		}
		if s > 0 {
			hot++
		}
	}
	if hot < 2 {
		t.Fatalf("%d lines with self weight", hot)
	}
	if lines.Summary.Metrics[table.MetricTotalWeight] != frames.Summary.Metrics[table.MetricTotalWeight] {
		t.Fatal("grouping changed the total")
	}
	if c, _ := lines.Header.Column("line"); !strings.HasPrefix(c.Description, "1-based") {
		t.Fatalf("line column %q", c.Description)
	}

	for _, refused := range []*projectiontest.Input{
		projectiontest.Decode(t, v8cpu.Spec, fixtures+"v8/hotspot.cpuprofile", nil)[0],
		framesTable(t, projectiontest.Decode(t, pstats.Spec, fixtures+"pstats/cprofile-workload.pstats", nil)),
		projectiontest.Decode(t, perfscript.ScriptSpec, fixtures+"perf/hot.perf.txt", nil)[0],
		projectiontest.Decode(t, speedscope.Spec, fixtures+"speedscope/simple-sampled.speedscope.json", nil)[0],
	} {
		_, err := projectiontest.Run(Hotspots, evidence.Object{"group_by": GroupLine}, refused)
		if evidence.CodeOf(err) != evidence.CodeInvalidArgument || !strings.Contains(err.Error(), "use group_by function") {
			t.Errorf("%s: %v", refused.Header.Format, err)
		}
	}
}

// function is the default grouping: py-spy's per-line frames pool into
// functions, and a profile whose frames are functions ranks exactly as
// group_by frame (V8's anonymous functions of one file stay apart).
func TestGroupByDefault(t *testing.T) {
	py := projectiontest.Decode(t, speedscope.Spec, fixtures+"speedscope/pyspy-0.4.1-two-threads.speedscope.json", nil)[0]
	v8 := projectiontest.Decode(t, v8cpu.Spec, fixtures+"v8/hotspot.cpuprofile", nil)[0]
	for _, c := range []struct {
		in   *projectiontest.Input
		same string
	}{{py, GroupFunction}, {v8, GroupFrame}} {
		def := rank(t, Hotspots, evidence.Object{"top": int64(100000)}, c.in)
		ex := rank(t, Hotspots, evidence.Object{"top": int64(100000), "group_by": c.same}, c.in)
		a, _ := evidence.Canonical(def.Rows)
		b, _ := evidence.Canonical(ex.Rows)
		if string(a) != string(b) {
			t.Errorf("%s: the default ranks otherwise than group_by %s", c.in.Header.Format, c.same)
		}
	}
}

// framesTable is the cpu.frames table of a decode.
func framesTable(t *testing.T, ins []*projectiontest.Input) *projectiontest.Input {
	t.Helper()
	for _, in := range ins {
		if in.Header.Name == table.CPUFrames.Name {
			return in
		}
	}
	t.Fatal("no cpu.frames table")
	return nil
}

// BenchmarkHotspotsLines pools 100k per-line frames (as py-spy writes
// them: 1000 functions of 100 lines) by function and by line.
func BenchmarkHotspotsLines(b *testing.B) {
	h := table.SampledLinesHeader("samples", 1)
	h.ID, h.Format, h.ArtifactIDs = "a.cpu.frames", "speedscope", []string{"sha256:a"}
	typed := benchFrames(100000)
	for i, r := range typed {
		f := r.(*table.Frame)
		f.Function, f.Line, f.Column = fmt.Sprint("fn", i%1000), int64(1+i/1000), -1
	}
	in := input(h, typed...)
	for _, g := range []string{GroupFunction, GroupLine} {
		b.Run(g, func(b *testing.B) {
			projectiontest.Bench(b, Hotspots, evidence.Object{"top": int64(20), "group_by": g}, in)
		})
	}
}

// tablesNamed are the tables of a decode with the given names, in order.
func tablesNamed(ins []*projectiontest.Input, names ...string) []*projectiontest.Input {
	var out []*projectiontest.Input
	for _, in := range ins {
		if slices.Contains(names, in.Header.Name) {
			out = append(out, in)
		}
	}
	return out
}

// group_by line on a V8 profile ranks its cpu.lines (positionTicks):
// per (function, file, line) the ticks an independent script counted
// from the JSON (testdata/v8/lines.ref.json), the samples without a line
// as rows of their own, the total the profile's; the function table is
// not read, whichever table comes first, and group_by function ranks
// the function table alone as before. Without its cpu.lines table, the
// function table is refused with the fix.
func TestGroupByLineV8(t *testing.T) {
	var ref map[string]struct {
		Samples int64
		Lines   []struct {
			Function, URL string
			Line, Weight  int64
		}
	}
	if err := json.Unmarshal(mustRead(t, fixtures+"v8/lines.ref.json"), &ref); err != nil {
		t.Fatal(err)
	}
	all := projectiontest.Decode(t, v8cpu.Spec, fixtures+"diff/slow.cpuprofile", nil)
	ins := tablesNamed(all, table.CPUFrames.Name, table.CPULines.Name)
	if len(ins) != 2 {
		t.Fatalf("%d tables", len(ins))
	}
	want := ref["slow.cpuprofile"]
	for _, order := range [][]*projectiontest.Input{ins, {ins[1], ins[0]}} {
		res := rank(t, Hotspots, evidence.Object{"top": int64(100000), "group_by": GroupLine}, order...)
		type key struct {
			fn, url string
			line    int64
		}
		got := map[key]int64{}
		for _, r := range res.Rows {
			file, _ := r["file"].(string)
			line, _ := evidence.AsInt(r["line"])
			w, _ := evidence.AsInt(r["self_weight"])
			got[key{r["function"].(string), file, line}] += w
		}
		if len(got) != len(want.Lines) {
			t.Errorf("%d lines, reference %d", len(got), len(want.Lines))
		}
		for _, l := range want.Lines {
			if g := got[key{l.Function, l.URL, l.Line}]; g != l.Weight {
				t.Errorf("%s %s:%d weighs %d, reference %d", l.Function, l.URL, l.Line, g, l.Weight)
			}
		}
		if res.Rows[0]["function"] != "parse" || res.Summary.Metrics[table.MetricTotalWeight].Value != float64(want.Samples) {
			t.Errorf("first %v, total %v", res.Rows[0], res.Summary.Metrics[table.MetricTotalWeight])
		}
		if c, _ := res.Header.Column("line"); !strings.HasPrefix(c.Description, "1-based") {
			t.Errorf("line column %q", c.Description)
		}
	}
	both := rank(t, Hotspots, evidence.Object{"top": int64(100000)}, ins...)
	alone := rank(t, Hotspots, evidence.Object{"top": int64(100000)}, ins[0])
	a, _ := evidence.Canonical(both.Rows)
	b, _ := evidence.Canonical(alone.Rows)
	if string(a) != string(b) {
		t.Error("group_by function reads the lines table")
	}
	_, err := projectiontest.Run(Hotspots, evidence.Object{"group_by": GroupLine}, ins[0])
	if evidence.CodeOf(err) != evidence.CodeInvalidArgument || !strings.Contains(err.Error(), "no cpu.lines table") {
		t.Errorf("frames without lines: %v", err)
	}
}

// group_by line on pprof reads its cpu.lines table, whichever order the
// tables come in: the rows are that table's (function, file, line) rows
// with their weights, the total unchanged; function grouping does not
// read it; cpu.frames alone (blocks of a decode without cpu.lines) is
// refused with the way to get the lines.
func TestGroupByLinePprof(t *testing.T) {
	all := projectiontest.Decode(t, pprof.Spec, fixtures+"pprof/cpu.pb.gz", nil)
	ins := tablesNamed(all, table.CPUFrames.Name, table.CPULines.Name)
	if len(ins) != 2 || ins[1].Header.Name != table.CPULines.Name {
		t.Fatalf("%d tables", len(ins))
	}
	type key struct {
		fn, file string
		line     int64
	}
	sums := func(rows []evidence.Object) map[key][2]float64 {
		m := map[key][2]float64{}
		for _, r := range rows {
			file, _ := r["file"].(string)
			line, _ := evidence.AsInt(r["line"])
			s, _ := evidence.AsFloat(r["self_weight"])
			i, _ := evidence.AsFloat(r["inclusive_weight"])
			k := key{r["function"].(string), file, line}
			w := m[k]
			m[k] = [2]float64{w[0] + s, w[1] + i}
		}
		return m
	}
	want := sums(ins[1].Values())
	for _, order := range [][]*projectiontest.Input{ins, {ins[1], ins[0]}} {
		res := rank(t, Hotspots, evidence.Object{"top": int64(100000), "group_by": GroupLine}, order...)
		got := sums(res.Rows)
		if len(got) != len(want) || len(want) < 5 {
			t.Errorf("%d lines ranked, cpu.lines has %d", len(got), len(want))
		}
		for k, w := range want { // ranked in seconds, decoded in ns
			if g := got[k]; math.Abs(g[0]*1e9-w[0]) > 1e-3 || math.Abs(g[1]*1e9-w[1]) > 1e-3 {
				t.Errorf("%v: %v s, cpu.lines %v ns", k, g, w)
			}
		}
		if res.Rows[0]["function"] != "main.spin" || !strings.HasSuffix(res.Rows[0]["file"].(string), "main.go") {
			t.Errorf("first %v", res.Rows[0])
		}
		tr, _ := evidence.AsFloat(res.Summary.Metrics[table.MetricTotalWeight].Value)
		td, _ := evidence.AsFloat(ins[0].Summary.Metrics[table.MetricTotalWeight].Value)
		if math.Abs(tr*1e9-td) > 1e-3 || td == 0 {
			t.Errorf("total %v s, decoder's %v ns", tr, td)
		}
	}
	both := rank(t, Hotspots, evidence.Object{"top": int64(100000)}, ins...)
	alone := rank(t, Hotspots, evidence.Object{"top": int64(100000)}, ins[0])
	a, _ := evidence.Canonical(both.Rows)
	b, _ := evidence.Canonical(alone.Rows)
	if string(a) != string(b) {
		t.Error("group_by function reads the lines table")
	}
	_, err := projectiontest.Run(Hotspots, evidence.Object{"group_by": GroupLine}, ins[0])
	if evidence.CodeOf(err) != evidence.CodeInvalidArgument || !strings.Contains(err.Error(), "no cpu.lines table") ||
		!strings.Contains(err.Error(), "flameox-decode") || strings.Contains(err.Error(), "srcline") {
		t.Errorf("frames without lines: %v", err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
