package trace

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/chrometrace"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

const artifact = "sha256:0000000000000000000000000000000000000000000000000000000000000001"

func decode(t testing.TB, spec *formats.Spec, rel string) *formatstest.Sink {
	t.Helper()
	sink, err := formatstest.DecodeFile(t, spec, filepath.Join(formatstest.Testdata(), rel), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sink
}

func decodeDoc(t testing.TB, doc string) *formatstest.Sink {
	t.Helper()
	sink, err := formatstest.Decode(chrometrace.Spec, "t.json", []byte(doc), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sink
}

// only keeps the tables a projection reads, as flameox-rank passes them.
func only(s *formatstest.Sink, spec *projection.Spec) *formatstest.Sink {
	out := &formatstest.Sink{}
	for _, t := range s.Tables {
		if spec.Consumes(t.Header.Name) {
			out.Tables = append(out.Tables, t)
		}
	}
	return out
}

func run(t testing.TB, spec *projection.Spec, args evidence.Object, sink *formatstest.Sink, typed bool) *formatstest.Emitter {
	t.Helper()
	eff, given, err := param.Validate(spec.Params, args)
	if err != nil {
		t.Fatal(err)
	}
	p, err := spec.New(eff, given)
	if err != nil {
		t.Fatal(err)
	}
	id := sink.Artifact
	if id == "" {
		id = artifact
	}
	return formatstest.Project(t, p, chrometrace.Spec, id, only(sink, spec), typed)
}

func opsOf(t testing.TB, e *formatstest.Emitter) []table.TraceOperation {
	t.Helper()
	var out []table.TraceOperation
	for _, r := range e.Table(table.TraceOperations.Name).Rows {
		o, err := table.TraceOperations.Scan(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, *o)
	}
	return out
}

// TestOperationsTotals: over a real Kineto trace, the groups hold every
// slice once: per name, their counts and totals are the slices' own, fed
// as values or typed alike.
func TestOperationsTotals(t *testing.T) {
	sink := decode(t, chrometrace.KinetoSpec, "kineto/hta-simple_add-a100.trace.json.gz")
	want := map[string][2]int64{}
	for _, r := range sink.Table(table.TraceSlices.Name).Typed {
		s := r.(*table.TraceSlice)
		w := want[s.Name]
		want[s.Name] = [2]int64{w[0] + 1, w[1] + s.DurationNS}
	}
	for _, typed := range []bool{false, true} {
		res := run(t, Operations, evidence.Object{"top": 100000}, sink, typed)
		got := map[string][2]int64{}
		for _, o := range opsOf(t, res) {
			g := got[o.Name]
			got[o.Name] = [2]int64{g[0] + o.Count, g[1] + o.TotalNS}
			if o.P50NS > o.P90NS || o.P90NS > o.P99NS || o.P99NS > o.MaxNS || o.FirstNS > o.LastNS {
				t.Errorf("%s: percentiles out of order: %+v", o.Name, o)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("typed=%v: groups %v, slices %v", typed, got, want)
		}
		s := res.Table(table.TraceOperations.Name).Summary
		if n, _ := evidence.AsInt(s.Metrics["slices_in_rows"].Value); n != int64(len(sink.Table(table.TraceSlices.Name).Rows)) {
			t.Errorf("slices_in_rows %d", n)
		}
	}
	// Kernels are a series of their device and stream, named by trace.tracks.
	res := run(t, Operations, evidence.Object{"category": "kernel", "top": 1}, sink, false)
	k := opsOf(t, res)[0]
	if k.Device != table.Some("0") || k.Stream != table.Some("7") || k.ThreadName != table.Some("stream 7 ") || k.ProcessName != table.Some("python3.10") {
		t.Errorf("kernel group: %+v", k)
	}
	if s := res.Table(table.TraceOperations.Name).Summary; s.Truncation == nil || s.RowsObserved != 16 {
		t.Errorf("category selects before top: %+v", s)
	}
}

const nested = `{"traceEvents":[
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}},
{"ph":"M","name":"process_name","pid":1,"args":{"name":"app"}},
{"ph":"X","name":"step","pid":1,"tid":1,"ts":0,"dur":100},
{"ph":"X","name":"op","pid":1,"tid":1,"ts":10,"dur":10},
{"ph":"X","name":"op","pid":1,"tid":1,"ts":30,"dur":20},
{"ph":"X","name":"op","pid":1,"tid":1,"ts":60,"dur":30},
{"ph":"X","name":"leaf","pid":1,"tid":1,"ts":65,"dur":5},
{"ph":"X","name":"op","pid":1,"tid":2,"ts":0,"dur":40},
{"ph":"C","name":"mem","pid":1,"ts":15,"args":{"heap":1}},
{"ph":"C","name":"mem","pid":1,"ts":95,"args":{"heap":2}},
{"ph":"i","name":"tick","pid":1,"tid":1,"ts":50}
]}`

// TestOperationsStats: count, total, self, mean, percentiles and times of
// a group; threads are distinct series; names and ids select alike.
func TestOperationsStats(t *testing.T) {
	sink := decodeDoc(t, nested)
	ops := opsOf(t, run(t, Operations, evidence.Object{"name_pattern": "^op$", "thread": "main"}, sink, false))
	if len(ops) != 1 {
		t.Fatalf("%d groups for thread main: %+v", len(ops), ops)
	}
	o := ops[0]
	if o.Count != 3 || o.TotalNS != 60000 || o.SelfNS != table.Some(int64(55000)) || o.MeanNS != 20000 ||
		o.P50NS != 20000 || o.P90NS != 30000 || o.MaxNS != 30000 || o.FirstNS != 10000 || o.LastNS != 90000 ||
		o.ThreadName != table.Some("main") || o.ProcessName != table.Some("app") {
		t.Errorf("op on main: %+v", o)
	}
	if ops := opsOf(t, run(t, Operations, evidence.Object{"name_pattern": "^op$", "thread": "2", "process": "app"}, sink, false)); len(ops) != 1 || ops[0].TotalNS != 40000 {
		t.Errorf("op on thread 2: %+v", ops)
	}
	// The window keeps slices that overlap it, whole.
	ops = opsOf(t, run(t, Operations, evidence.Object{"name_pattern": "^op$", "thread": "1", "start_ns": 45000, "end_ns": 61000}, sink, false))
	if len(ops) != 1 || ops[0].Count != 2 || ops[0].TotalNS != 50000 {
		t.Errorf("windowed: %+v", ops)
	}
	byCount := opsOf(t, run(t, Operations, evidence.Object{"rank_by": "count", "top": 1}, sink, false))
	if byCount[0].Name != "op" || byCount[0].Count != 3 {
		t.Errorf("rank_by count: %+v", byCount)
	}
	if _, _, err := param.Validate(Operations.Params, evidence.Object{"rank_by": "nope"}); err == nil {
		t.Error("an unknown rank_by is accepted")
	}
	eff, given, _ := param.Validate(Operations.Params, evidence.Object{"start_ns": 10, "end_ns": 5})
	if _, err := Operations.New(eff, given); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Errorf("an empty window: %v", err)
	}
}

// TestWindow: the slices overlapping the window in start order, parents
// first, with depth and parent; pages by cursor visit each once; the
// counters sampled in the window come beside them.
func TestWindow(t *testing.T) {
	sink := decodeDoc(t, nested)
	res := run(t, Window, evidence.Object{"start_ns": 12000, "end_ns": 66000}, sink, false)
	var names []string
	for _, r := range res.Table(table.TraceWindowSlices.Name).Rows {
		names = append(names, r["name"].(string)+"@"+fmt.Sprint(r["depth"]))
	}
	if want := "[step@0 op@0 op@1 op@1 tick@<nil> op@1 leaf@2]"; fmt.Sprint(names) != want {
		t.Errorf("window: %v, want %s", names, want)
	}
	counters := res.Table(table.TraceWindowCounters.Name).Rows
	if len(counters) != 1 || counters[0]["ts_ns"] != int64(15000) {
		t.Errorf("counters: %v", counters)
	}
	// Pages of two.
	var paged []string
	cursor := ""
	for page := 0; page < 10; page++ {
		args := evidence.Object{"start_ns": 12000, "end_ns": 66000, "top": 2, "counters": false}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res := run(t, Window, args, sink, page%2 == 1)
		tb := res.Table(table.TraceWindowSlices.Name)
		for _, r := range tb.Rows {
			paged = append(paged, r["name"].(string)+"@"+fmt.Sprint(r["depth"]))
		}
		next, _ := tb.Summary.Coverage["next_cursor"].(string)
		if next == "" {
			if tb.Summary.Truncation != nil {
				t.Fatal("truncated without a cursor")
			}
			break
		}
		cursor = next
	}
	if fmt.Sprint(paged) != fmt.Sprint(names) {
		t.Errorf("pages %v, whole %v", paged, names)
	}
	eff, given, _ := param.Validate(Window.Params, evidence.Object{"start_ns": 0, "end_ns": 1, "cursor": "nonsense"})
	if _, err := Window.New(eff, given); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Errorf("a bad cursor: %v", err)
	}
	if _, _, err := param.Validate(Window.Params, evidence.Object{"start_ns": 0}); err == nil {
		t.Error("a window without end_ns is accepted")
	}
}

func BenchmarkOperations(b *testing.B) {
	sink := decode(b, chrometrace.KinetoSpec, "kineto/hta-cupti_profiler-a100.trace.json.gz")
	benchProjection(b, Operations, evidence.Object{"top": 20}, sink)
}

func BenchmarkWindow(b *testing.B) {
	sink := decode(b, chrometrace.KinetoSpec, "kineto/hta-cupti_profiler-a100.trace.json.gz")
	benchProjection(b, Window, evidence.Object{"start_ns": 0, "end_ns": int64(1) << 62, "top": 100}, sink)
}

func benchProjection(b *testing.B, spec *projection.Spec, args evidence.Object, sink *formatstest.Sink) {
	in := only(sink, spec)
	var rows int64
	for _, t := range in.Tables {
		rows += int64(len(t.Rows))
	}
	b.ReportAllocs()
	for b.Loop() {
		eff, given, _ := param.Validate(spec.Params, args)
		p, _ := spec.New(eff, given)
		formatstest.Project(b, p, chrometrace.Spec, sink.Artifact, in, true)
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
