package chrometrace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// fixtures are the real traces, with the spec that reads each.
var fixtures = []struct {
	path string
	spec *formats.Spec
}{
	{"chrome-trace/node-20-trace-events.json", Spec},
	{"chrome-trace/node-20-trace-events.json.gz", Spec},
	{"chrome-trace/node-20-unterminated.json", Spec},
	{"chrome-trace/chrome-141-no-arg-data.json", Spec},
	{"kineto/hta-simple_add-a100.trace.json.gz", KinetoSpec},
	{"kineto/torch-2.5.1-cpu.pt.trace.json", KinetoSpec},
	{"kineto/hta-cupti_profiler-a100.trace.json.gz", KinetoSpec},
	{"kineto/hta-mi250-rocm6.2.kineto.json.gz", KinetoSpec},
	{"kineto/hta-triton_example.json.gz", KinetoSpec},
	{"kineto/hta-cpu_only-rank34.pt.trace.json.gz", KinetoSpec},
	{"kineto/hta-simple_add.trace.json.gz", KinetoSpec},
}

// reference is what testdata/chrome-trace/reference.py reads.
type reference struct {
	Events        int64            `json:"events"`
	ByPhase       map[string]int64 `json:"by_phase"`
	UnmatchedEnd  int64            `json:"unmatched_end"`
	UnclosedBegin int64            `json:"unclosed_begin"`
	Slices        map[string]struct {
		Count   int64 `json:"count"`
		TotalNS int64 `json:"total_ns"`
	} `json:"slices"`
	CounterSamples int64 `json:"counter_samples"`
	Tracks         int64 `json:"tracks"`
	FlowPoints     int64 `json:"flow_points"`
}

func runReference(t *testing.T, path string) reference {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: cannot run the independent reference reading")
	}
	var ref reference
	formatstest.RunReference(t, py, "chrome-trace/reference.py", path, &ref)
	return ref
}

// TestMatchesReference: the per-name counts and exact ns totals of every
// kind of slice, the events by phase and the other tables' row counts
// equal an independent Python reading of the same file.
func TestMatchesReference(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.path, func(t *testing.T) {
			path := filepath.Join(formatstest.Testdata(), f.path)
			ref := runReference(t, path)
			sink, err := formatstest.DecodeFile(t, f.spec, path, nil, nil)
			formatstest.CheckInvariants(t, sink, err)
			if err != nil {
				t.Fatal(err)
			}
			st := sink.Table(table.TraceSlices.Name)
			got := map[string][2]int64{}
			for _, r := range st.Typed {
				s := r.(*table.TraceSlice)
				k := s.Kind + "\t" + s.Name
				g := got[k]
				got[k] = [2]int64{g[0] + 1, g[1] + s.DurationNS}
			}
			if len(got) != len(ref.Slices) {
				t.Errorf("%d slice names, reference %d", len(got), len(ref.Slices))
			}
			for k, want := range ref.Slices {
				if g := got[k]; g != [2]int64{want.Count, want.TotalNS} {
					t.Errorf("%q: count %d total %d ns; reference %d, %d ns", k, g[0], g[1], want.Count, want.TotalNS)
				}
			}
			sum := st.Summary
			if n := formatstest.MetricInt(t, sum, "events"); n != ref.Events {
				t.Errorf("events %d, reference %d", n, ref.Events)
			}
			phases := sum.Coverage["events_by_phase"].(evidence.Object)
			for ph, n := range ref.ByPhase {
				if g, _ := evidence.AsInt(phases[ph]); g != n {
					t.Errorf("phase %s: %d events, reference %d", ph, g, n)
				}
			}
			if n := formatstest.MetricInt(t, sum, "unmatched_end"); n != ref.UnmatchedEnd {
				t.Errorf("unmatched_end %d, reference %d", n, ref.UnmatchedEnd)
			}
			if n := formatstest.MetricInt(t, sum, "unclosed_begin"); n != ref.UnclosedBegin {
				t.Errorf("unclosed_begin %d, reference %d", n, ref.UnclosedBegin)
			}
			for _, c := range []struct {
				table string
				want  int64
			}{{table.TraceCounters.Name, ref.CounterSamples}, {table.TraceTracks.Name, ref.Tracks}, {table.TraceFlows.Name, ref.FlowPoints}} {
				if n := int64(len(sink.Table(c.table).Rows)); n != c.want {
					t.Errorf("%s: %d rows, reference %d", c.table, n, c.want)
				}
			}
		})
	}
}

// TestReaders: the rows are the same however the bytes arrive.
func TestReaders(t *testing.T) {
	for _, f := range fixtures[:5] {
		data := formatstest.Read(t, f.path)
		want, err := formatstest.Decode(f.spec, f.path, data, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, wrap := range map[string]func(io.Reader) io.Reader{"one-byte": iotest.OneByteReader, "half": iotest.HalfReader, "data-err": iotest.DataErrReader} {
			got, err := formatstest.Decode(f.spec, f.path, data, nil, wrap)
			if err != nil {
				t.Fatalf("%s %s: %v", f.path, name, err)
			}
			if a, b := formatstest.Canonical(t, rowsOf(got)), formatstest.Canonical(t, rowsOf(want)); a != b {
				t.Errorf("%s %s: rows differ", f.path, name)
			}
		}
	}
}

func rowsOf(s *formatstest.Sink) []any {
	var out []any
	for _, t := range s.Tables {
		for _, r := range t.Rows {
			out = append(out, map[string]any(r))
		}
	}
	return out
}

// TestKinetoMeaning: device work carries device, stream and correlation;
// runtime calls their correlation; rows the trace's rank; the summary
// the trace's metadata.
func TestKinetoMeaning(t *testing.T) {
	sink, err := formatstest.DecodeFile(t, KinetoSpec, filepath.Join(formatstest.Testdata(), "kineto/hta-simple_add-a100.trace.json.gz"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := sink.Table(table.TraceSlices.Name)
	kernels, runtime, linked := 0, 0, 0
	byCorr := map[int64]bool{}
	for _, r := range st.Typed {
		s := r.(*table.TraceSlice)
		if s.DistRank != table.Some(int64(0)) {
			t.Fatalf("slice %s has rank %+v, want 0", s.SliceID, s.DistRank)
		}
		switch s.Category.V {
		case "kernel":
			kernels++
			if !s.Device.Valid || !s.Stream.Valid || !s.Correlation.Valid {
				t.Fatalf("kernel without device, stream or correlation: %+v", s)
			}
			byCorr[s.Correlation.V] = true
		case "cuda_runtime":
			if s.Correlation.Valid {
				runtime++
			}
		}
	}
	for _, r := range st.Typed {
		s := r.(*table.TraceSlice)
		if s.Category.V == "cuda_runtime" && s.Correlation.Valid && byCorr[s.Correlation.V] {
			linked++
		}
	}
	if kernels != 79 || runtime == 0 || linked != kernels {
		t.Errorf("%d kernels, %d runtime calls with correlation, %d linked to a kernel", kernels, runtime, linked)
	}
	meta, _ := st.Summary.Coverage["metadata"].(evidence.Object)
	if meta["deviceProperties"] == nil || meta["distributedInfo"] == nil {
		t.Errorf("metadata not kept: %v", meta)
	}
	if st.Summary.Coverage["format_family"] != "kineto" {
		t.Errorf("format_family %v", st.Summary.Coverage["format_family"])
	}
}

// TestDetection: each spec claims its own files and not the other's;
// a PyTorch execution trace (not a Kineto trace), other JSON and text are
// neither.
func TestDetection(t *testing.T) {
	prefix := func(rel string) []byte {
		b := formatstest.Read(t, rel)
		return b[:min(len(b), formats.SniffBytes)]
	}
	for _, f := range fixtures {
		p := prefix(f.path)
		chrome, kineto := sniffChrome(p), sniffKineto(p)
		want := [2]formats.Verdict{formats.Yes, formats.No}
		if f.spec == KinetoSpec {
			want = [2]formats.Verdict{formats.No, formats.Yes}
		}
		if [2]formats.Verdict{chrome, kineto} != want {
			t.Errorf("%s: chrome %v kineto %v, want %v", f.path, chrome, kineto, want)
		}
	}
	for _, doc := range [][]byte{
		prefix("kineto/hta-simple_add.et.json.gz"),
		[]byte(`{"nodes":[],"samples":[],"timeDeltas":[]}`),
		[]byte(`[1,2,3]`),
		[]byte(`[{"a":1}]`),
		[]byte("hello\n"),
		[]byte(`{"traceEvents":{}}`),
	} {
		if v, w := sniffChrome(doc), sniffKineto(doc); v != formats.No || w != formats.No {
			t.Errorf("%.40q: chrome %v kineto %v, want No", doc, v, w)
		}
	}
}

func decodeDoc(t *testing.T, doc string, opts evidence.Object) (*formatstest.Sink, error) {
	t.Helper()
	sink, err := formatstest.Decode(Spec, "t.json", []byte(doc), opts, nil)
	formatstest.CheckInvariants(t, sink, err)
	return sink, err
}

func slicesBy(s *formatstest.Sink) map[string]*table.TraceSlice {
	out := map[string]*table.TraceSlice{}
	for _, r := range s.Table(table.TraceSlices.Name).Typed {
		x := r.(*table.TraceSlice)
		out[x.Name] = x
	}
	return out
}

// TestNesting: depth, parent and self time of X and B/E slices on a
// thread, events out of order within the window, and what is counted:
// an E with no B, a B with no E, a slice that overlaps its parent's end.
func TestNesting(t *testing.T) {
	doc := `{"traceEvents":[
	{"ph":"X","name":"child","pid":1,"tid":1,"ts":2,"dur":3},
	{"ph":"B","name":"outer","pid":1,"tid":1,"ts":0},
	{"ph":"X","name":"sibling","pid":1,"tid":1,"ts":6,"dur":2},
	{"ph":"X","name":"grandchild","pid":1,"tid":1,"ts":2.5,"dur":1.25},
	{"ph":"E","pid":1,"tid":1,"ts":10},
	{"ph":"E","pid":1,"tid":1,"ts":11},
	{"ph":"X","name":"straddle","pid":1,"tid":2,"ts":0,"dur":5},
	{"ph":"X","name":"over","pid":1,"tid":2,"ts":4,"dur":5},
	{"ph":"B","name":"never","pid":1,"tid":3,"ts":1}
	]}`
	sink, err := decodeDoc(t, doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	by := slicesBy(sink)
	check := func(name string, depth int64, parent string, dur, self int64) {
		t.Helper()
		s := by[name]
		if s == nil {
			t.Fatalf("no slice %s", name)
		}
		p := table.Null[string]{}
		if parent != "" {
			p = table.Some(by[parent].SliceID)
		}
		if s.Depth != table.Some(depth) || s.ParentID != p || s.DurationNS != dur || s.SelfNS != table.Some(self) {
			t.Errorf("%s: depth %+v parent %+v dur %d self %+v; want %d %q %d %d", name, s.Depth, s.ParentID, s.DurationNS, s.SelfNS, depth, parent, dur, self)
		}
	}
	check("outer", 0, "", 10000, 10000-3000-2000)
	check("child", 1, "outer", 3000, 3000-1250)
	check("grandchild", 2, "child", 1250, 1250)
	check("sibling", 1, "outer", 2000, 2000)
	check("straddle", 0, "", 5000, 5000)
	if o := by["over"]; o.Depth.Valid || o.ParentID.Valid || o.SelfNS.Valid {
		t.Errorf("overlapping slice placed: %+v", o)
	}
	if by["never"] != nil {
		t.Error("an unclosed B became a row")
	}
	s := sink.Table(table.TraceSlices.Name).Summary
	for name, want := range map[string]int64{"unmatched_end": 1, "unclosed_begin": 1, "overlapping_slices": 1, "late_events": 0} {
		if n := formatstest.MetricInt(t, s, name); n != want {
			t.Errorf("%s = %d, want %d", name, n, want)
		}
	}
	if s.Complete {
		t.Error("a trace with an unclosed B is complete")
	}

	// With a window of one event, an event after a later one left the
	// window is late: a row, unplaced, counted.
	late := `{"traceEvents":[
	{"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"dur":1},
	{"ph":"X","name":"b","pid":1,"tid":1,"ts":7,"dur":1},
	{"ph":"X","name":"c","pid":1,"tid":1,"ts":1,"dur":1}]}`
	sink, err = decodeDoc(t, late, evidence.Object{OptionWindow: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n := formatstest.MetricInt(t, sink.Table(table.TraceSlices.Name).Summary, "late_events"); n != 1 {
		t.Errorf("%d late events with a window of 1, want 1", n)
	}
	if c := slicesBy(sink)["c"]; c == nil || c.Depth.Valid || c.SelfNS.Valid {
		t.Errorf("late slice placed: %+v", c)
	}
	if a := slicesBy(sink)["a"]; a.Depth != table.Some(int64(0)) {
		t.Errorf("slice in order not placed: %+v", a)
	}
}

// TestPhases: async (b/e/n, S/T/F), object (N/O/D), instants with their
// scopes, counters, flows (s/t/f and bind_id), metadata, samples.
func TestPhases(t *testing.T) {
	doc := `[
	{"ph":"M","name":"process_name","pid":7,"args":{"name":"app"}},
	{"ph":"M","name":"thread_name","pid":7,"tid":8,"args":{"name":"main"}},
	{"ph":"M","name":"thread_sort_index","pid":7,"tid":8,"args":{"sort_index":-1}},
	{"ph":"b","name":"req","cat":"net","id":"0x1","pid":7,"tid":8,"ts":100},
	{"ph":"b","name":"dns","cat":"net","id":"0x1","pid":7,"tid":8,"ts":110},
	{"ph":"n","name":"mark","cat":"net","id":"0x1","pid":7,"tid":8,"ts":115},
	{"ph":"e","name":"dns","cat":"net","id":"0x1","pid":7,"tid":8,"ts":120},
	{"ph":"e","name":"req","cat":"net","id":"0x1","pid":7,"tid":8,"ts":200,"args":{"status":200}},
	{"ph":"b","name":"req","cat":"net","id2":{"local":"0x1"},"pid":9,"tid":8,"ts":100},
	{"ph":"S","name":"old","cat":"c","id":5,"pid":7,"tid":8,"ts":1},
	{"ph":"T","name":"old","cat":"c","id":5,"pid":7,"tid":8,"ts":2},
	{"ph":"F","name":"old","cat":"c","id":5,"pid":7,"tid":8,"ts":3},
	{"ph":"N","name":"obj","id":"0xa","pid":7,"tid":8,"ts":10},
	{"ph":"O","name":"obj","id":"0xa","pid":7,"tid":8,"ts":11,"args":{"snapshot":{}}},
	{"ph":"D","name":"obj","id":"0xa","pid":7,"tid":8,"ts":30},
	{"ph":"i","name":"global","s":"g","pid":7,"tid":8,"ts":5},
	{"ph":"I","name":"proc","s":"p","pid":7,"tid":8,"ts":6},
	{"ph":"C","name":"mem","pid":7,"ts":7,"args":{"heap":10,"rss":20.5,"label":"x"}},
	{"ph":"C","name":"mem","id":"2","pid":7,"ts":8,"args":{"heap":11}},
	{"ph":"s","name":"f","cat":"flow","id":1,"pid":7,"tid":8,"ts":100},
	{"ph":"t","name":"f","cat":"flow","id":1,"pid":7,"tid":8,"ts":105},
	{"ph":"f","name":"f","cat":"flow","id":1,"bp":"e","pid":7,"tid":8,"ts":110},
	{"ph":"X","name":"x","pid":7,"tid":8,"ts":300,"dur":1,"bind_id":"0x9","flow_out":true},
	{"ph":"P","name":"sample","cat":"st","pid":7,"tid":8,"ts":301},
	{"ph":"c","name":"clock_sync","pid":7,"tid":8,"ts":302,"args":{"sync_id":"a"}},
	{"ph":"e","name":"nothing","cat":"net","id":"0x77","pid":7,"tid":8,"ts":400}
	`
	sink, err := decodeDoc(t, doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]*table.TraceSlice{}
	for _, r := range sink.Table(table.TraceSlices.Name).Typed {
		x := r.(*table.TraceSlice)
		by[x.Name] = append(by[x.Name], x)
	}
	req := by["req"]
	if len(req) != 1 || req[0].Kind != table.SliceAsync || req[0].DurationNS != 100000 || req[0].Args["status"] == nil ||
		req[0].Track != table.Some("net:0x1") || req[0].Depth != table.Some(int64(0)) {
		t.Errorf("req: %+v", req)
	}
	if dns := by["dns"]; len(dns) != 1 || dns[0].ParentID != table.Some(req[0].SliceID) || dns[0].Depth != table.Some(int64(1)) {
		t.Errorf("dns: %+v", dns)
	}
	if m := by["mark"]; len(m) != 1 || m[0].Kind != table.SliceInstant {
		t.Errorf("mark: %+v", m)
	}
	if o := by["old"]; len(o) != 1 || o[0].DurationNS != 2000 {
		t.Errorf("old: %+v", o)
	}
	if o := by["obj"]; len(o) != 1 || o[0].Kind != table.SliceObject || o[0].DurationNS != 20000 {
		t.Errorf("obj: %+v", o)
	}
	if g := by["global"]; len(g) != 1 || g[0].Process.Valid || g[0].Thread.Valid {
		t.Errorf("global instant: %+v", g)
	}
	if p := by["proc"]; len(p) != 1 || !p[0].Process.Valid || p[0].Thread.Valid {
		t.Errorf("process instant: %+v", p)
	}
	counters := sink.Table(table.TraceCounters.Name).Typed
	if len(counters) != 3 {
		t.Fatalf("%d counter rows, want 3", len(counters))
	}
	if c := counters[2].(*table.TraceCounter); c.Name != "mem 2" || c.Series != table.Some("heap") || c.Value != 11 || c.TS != 8000 {
		t.Errorf("counter with id: %+v", c)
	}
	flows := sink.Table(table.TraceFlows.Name).Typed
	if len(flows) != 4 || flows[2].(*table.TraceFlow).Step != table.FlowEnd || flows[2].(*table.TraceFlow).Binding != table.Some("e") ||
		flows[3].(*table.TraceFlow).FlowID != "bind:0x9" {
		t.Errorf("flows: %d %+v", len(flows), flows)
	}
	tracks := sink.Table(table.TraceTracks.Name).Typed
	if len(tracks) != 3 || tracks[2].(*table.TraceTrack).SortIndex != table.Some(int64(-1)) {
		t.Errorf("tracks: %+v", tracks)
	}
	s := sink.Table(table.TraceSlices.Name).Summary
	for name, want := range map[string]int64{"async_unclosed": 1, "async_unmatched_end": 1, "async_steps": 1, "object_snapshots": 1, "uninterpreted_events": 1} {
		if n := formatstest.MetricInt(t, s, name); n != want {
			t.Errorf("%s = %d, want %d", name, n, want)
		}
	}
	if !s.Coverage["unterminated"].(bool) {
		t.Error("the bare array without its bracket is not said")
	}
	if n := formatstest.MetricInt(t, sink.Table(table.TraceCounters.Name).Summary, "counter_values_not_numeric"); n != 1 {
		t.Errorf("non-numeric counter values %d", n)
	}
	// A P event without sf or stack is one sample whose frame is the event
	// (catapult's reading).
	if ft := sink.Table(table.CPUFrames.Name); ft == nil || len(ft.Typed) != 1 {
		t.Errorf("cpu.frames: %+v", ft)
	} else if f := ft.Typed[0].(*table.Frame); f.Function != "sample" || f.Module != table.Some("st") || f.SelfWeight != 1 || f.Thread != table.Some("8") {
		t.Errorf("P sample frame: %+v", f)
	}
}

// TestTimes: microseconds become integer nanoseconds exactly.
func TestTimes(t *testing.T) {
	for _, c := range []struct {
		lit     string
		ns      int64
		rounded bool
		err     bool
	}{
		{"0", 0, false, false},
		{"1", 1000, false, false},
		{"1694039968955744", 1694039968955744000, false, false},
		{"1694039968955744.123", 1694039968955744123, false, false},
		{"0.001", 1, false, false},
		{"0.0015", 2, true, false},
		{"0.0025", 2, true, false},
		{"0.00251", 3, true, false},
		{"0.0004", 0, true, false},
		{"-1.5", -1500, false, false},
		{"1e3", 1000000, false, false},
		{"1.5E-3", 2, true, false},
		{"12.000", 12000, false, false},
		{"9223372036854775.807", 9223372036854775807, false, false},
		{"9223372036854775.808", 0, false, true},
		{"1e30", 0, false, true},
		{"abc", 0, false, true},
	} {
		ns, rounded, err := microsToNanos([]byte(c.lit))
		if (err != nil) != c.err || (!c.err && (ns != c.ns || rounded != c.rounded)) {
			t.Errorf("%s: %d %v %v; want %d %v err=%v", c.lit, ns, rounded, err, c.ns, c.rounded, c.err)
		}
	}
}

// TestFailures: what cannot be read is a typed failure, and a table begun
// before it says it is incomplete.
func TestFailures(t *testing.T) {
	node := formatstest.Read(t, "chrome-trace/node-20-trace-events.json")
	gz := formatstest.Read(t, "chrome-trace/node-20-trace-events.json.gz")
	for _, c := range []struct {
		name string
		data []byte
		code evidence.Code
	}{
		{"truncated object", node[:len(node)/2], evidence.CodeDecodeFailure},
		{"truncated gzip", gz[:len(gz)/2], evidence.CodeDecodeFailure},
		{"corrupt gzip", append(append([]byte{}, gz[:10]...), bytes.Repeat([]byte{0xff}, 64)...), evidence.CodeDecodeFailure},
		{"no traceEvents", []byte(`{"a":1}`), evidence.CodeDecodeFailure},
		{"not an array", []byte(`{"traceEvents":{}}`), evidence.CodeDecodeFailure},
		{"duplicate key", []byte(`{"traceEvents":[{"ph":"X","ph":"B"}]}`), evidence.CodeDecodeFailure},
		{"trailing data", []byte(`{"traceEvents":[]} x`), evidence.CodeDecodeFailure},
		{"scalar", []byte(`42`), evidence.CodeDecodeFailure},
	} {
		t.Run(c.name, func(t *testing.T) {
			sink, err := formatstest.Decode(Spec, "t.json", c.data, nil, nil)
			formatstest.CheckInvariants(t, sink, err)
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != c.code {
				t.Fatalf("got %v, want %s", err, c.code)
			}
			for _, tb := range sink.Tables {
				if tb.Summary != nil && tb.Summary.Complete {
					t.Errorf("%s complete after a failure", tb.Header.Name)
				}
			}
		})
	}
	// Events that cannot be read are counted, not rows, and not guessed.
	sink, err := decodeDoc(t, `{"traceEvents":[{"ph":"X","name":"a","ts":1},{"ph":"X","name":"b","ts":"1","dur":1},{"ph":"X","name":"c","ts":1,"dur":-1},3]}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := sink.Table(table.TraceSlices.Name).Summary
	if n := formatstest.MetricInt(t, s, "malformed_events"); n != 4 || s.Complete || len(sink.Table(table.TraceSlices.Name).Rows) != 0 {
		t.Errorf("malformed %d complete %v rows %d", n, s.Complete, len(sink.Table(table.TraceSlices.Name).Rows))
	}
	// The open-slice ceiling is a limit with its receipt.
	_, err = formatstest.Run(t, Spec, "t.json", []byte(`{"traceEvents":[{"ph":"B","name":"a","pid":1,"tid":1,"ts":1},{"ph":"B","name":"b","pid":1,"tid":1,"ts":2}]}`),
		map[string]int64{LimitOpen: 1}, nil)
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeLimitExceeded {
		t.Errorf("open-slice limit: %v", err)
	}
}

// TestValueBound: names, categories, ids and args are bounded by
// max_value_bytes, and the tables say so.
func TestValueBound(t *testing.T) {
	long := strings.Repeat("n", 200)
	doc := fmt.Sprintf(`{"traceEvents":[{"ph":"X","name":%q,"cat":%q,"pid":1,"tid":1,"ts":1,"dur":1,"args":{"k":%q}},{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":%q}},`+
		`{"ph":"B","name":"b","pid":1,"tid":1,"ts":2},{"ph":"E","pid":1,"tid":1,"ts":3,"args":{"e":%q}}]}`, long, long, long, long, long)
	cut, err := formatstest.Decode(Spec, "t.json", []byte(doc), evidence.Object{formats.OptionValueBytes: 32}, nil)
	if err != nil {
		t.Fatal(err)
	}
	full, err := formatstest.Decode(Spec, "t.json", []byte(doc), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pick := func(s *formatstest.Sink) *formatstest.Sink {
		return &formatstest.Sink{Tables: []*formatstest.Table{s.Table(table.TraceSlices.Name), s.Table(table.TraceTracks.Name)}}
	}
	formatstest.CheckValueBound(t, pick(cut), pick(full), 32)
	// Args are bounded inside too, an E's merged into its B's included.
	for _, r := range cut.Table(table.TraceSlices.Name).Typed {
		for k, v := range r.(*table.TraceSlice).Args {
			if s, _ := v.(string); len(s) > 32+len("…[9999 bytes cut]") {
				t.Errorf("args %s is %d bytes", k, len(s))
			}
		}
	}
}

// TestGzipConcatenated: a gzip file of two members reads as their
// concatenation, as gzip -d does.
func TestGzipConcatenated(t *testing.T) {
	var b bytes.Buffer
	for _, part := range []string{`{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1},`, `{"ph":"X","name":"b","ts":2,"dur":1}]}`} {
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(part))
		zw.Close()
	}
	sink, err := formatstest.Decode(Spec, "t.json.gz", b.Bytes(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sink.Table(table.TraceSlices.Name).Rows); n != 2 {
		t.Errorf("%d rows", n)
	}
}

// TestPlainMicros: the fast path of microsToNanos gives what the general
// one gives, or leaves the literal to it.
func TestPlainMicros(t *testing.T) {
	lits := []string{"0", "7", "1694039968955744", "1694039968955744.1", "1694039968955744.12",
		"1694039968955744.123", "1694039968955744.1234", "9223372036854775", "9223372036854775.807",
		"9223372036854775.808", "9223372036854775.999", "9223372036854776", "99999999999999999",
		"12.", ".5", "1.5e3", "-1.5", "1x", "", "00012.5", "0.000", "0.0005"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		lit := strconv.FormatUint(r.Uint64N(1<<uint(r.IntN(60)+1)), 10)
		if r.IntN(2) == 0 {
			lit += "." + strconv.Itoa(100000 + r.IntN(100000))[1:r.IntN(5)+2]
		}
		lits = append(lits, lit)
	}
	for _, lit := range lits {
		ns, ok := plainMicros([]byte(lit))
		want, rounded, err := microsToNanosAny([]byte(lit))
		if ok && (err != nil || rounded || ns != want) {
			t.Errorf("%q: fast %d; general %d rounded=%v err=%v", lit, ns, want, rounded, err)
		}
	}
	for _, lit := range []string{"0", "1694039968955744", "1694039968955744.123", "9223372036854775.807"} {
		if _, ok := plainMicros([]byte(lit)); !ok {
			t.Errorf("%q is not read by the fast path", lit)
		}
	}
}

// TestValueBoundCollision: two keys of a nested args object that the
// bound cuts to the same key keep one value, the same on every run (the
// first key in byte order), not whichever map order gives.
func TestValueBoundCollision(t *testing.T) {
	long := strings.Repeat("k", 40)
	doc := fmt.Sprintf(`{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"o":{"%[1]sB":"b","%[1]sA":"a","%[1]sC":"c","short":"s"}}}]}`, long)
	for range 30 {
		sink, err := formatstest.Decode(Spec, "t.json", []byte(doc), evidence.Object{formats.OptionValueBytes: 32}, nil)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := sink.Table(table.TraceSlices.Name).Typed[0].(*table.TraceSlice).Args["o"].(map[string]any)
		want := map[string]any{long[:32] + "…[9 bytes cut]": "a", "short": "s"}
		if !reflect.DeepEqual(o, want) {
			t.Fatalf("nested args %v, want %v", o, want)
		}
	}
}
