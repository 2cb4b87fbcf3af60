package perfetto

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// fixtures are the traces real writers made: Chromium's startup trace,
// an Android system trace (traced v25), and the perfetto package's trace
// builder (plain and in compressed_packets).
var fixtures = []string{
	"perfetto/chromium-startup.pftrace.gz",
	"perfetto/android13-system.perfetto-trace.gz",
	"perfetto/builder-tracks.pftrace",
	"perfetto/builder-compressed.pftrace",
	"perfetto/builder-zstd.pftrace",
	"perfetto/builder-legacy.pftrace",
	"perfetto/neg-needs-state.pftrace",
	"perfetto/neg-missing-iid.pftrace",
	"perfetto/neg-unmatched.pftrace",
	"perfetto/builder-perf.pftrace",
	"perfetto/builder-chrome-sampler.pftrace",
	"perfetto/neg-samples.pftrace",
}

// reference is what testdata/perfetto/reference.py reads.
type reference struct {
	Packets int64            `json:"packets"`
	Fields  map[string]int64 `json:"fields"`
	ByType  map[string]int64 `json:"by_type"`
	Skipped int64            `json:"skipped_needing_state"`
	Slices  map[string]struct {
		Count   int64 `json:"count"`
		TotalNS int64 `json:"total_ns"`
	} `json:"slices"`
	UnmatchedEnd  int64 `json:"unmatched_end"`
	UnclosedBegin int64 `json:"unclosed_begin"`
	Counters      int64 `json:"counters"`
	FlowPoints    int64 `json:"flow_points"`
	CPU           struct {
		Frames map[string]struct {
			Self      int64 `json:"self"`
			Inclusive int64 `json:"inclusive"`
		} `json:"frames"`
		Placed            int64            `json:"placed"`
		Unplaced          int64            `json:"unplaced"`
		Missing           map[string]int64 `json:"missing"`
		KernelRecordsLost int64            `json:"kernel_records_lost"`
		Skipped           int64            `json:"skipped"`
		PerfSamples       int64            `json:"perf_samples"`
		StreamingSamples  int64            `json:"streaming_samples"`
		WithoutThread     int64            `json:"without_thread"`
		FirstNS           *int64           `json:"first_ns"`
		LastNS            *int64           `json:"last_ns"`
	} `json:"cpu"`
}

// python is the project venv's interpreter, where tools/requirements.txt
// installs perfetto.
func python(t *testing.T) string {
	t.Helper()
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = filepath.Join(formatstest.Testdata(), "..", ".venv")
	}
	p, err := filepath.Abs(filepath.Join(venv, "bin", "python"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skip("needs the project venv (FLAMEOX_VENV) with perfetto: pip install -r tools/requirements.txt")
	}
	if out, err := exec.Command(p, "-c", "import perfetto.protos.perfetto.trace.perfetto_trace_pb2").CombinedOutput(); err != nil {
		t.Fatalf("perfetto is not installed in %s (pip install -r tools/requirements.txt): %s", p, out)
	}
	return p
}

func runReference(t *testing.T, py, path string) reference {
	t.Helper()
	var ref reference
	formatstest.RunReference(t, py, "perfetto/reference.py", path, &ref)
	return ref
}

func decodeFixture(t *testing.T, rel string) *formatstest.Sink {
	t.Helper()
	sink, err := formatstest.DecodeFile(t, Spec, filepath.Join(formatstest.Testdata(), rel), nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	return sink
}

// packetFieldNumber is the number of a TracePacket field by name.
func packetFieldNumber(name string) int32 {
	for n, s := range packetFields {
		if s == name {
			return n
		}
	}
	return -1
}

// TestMatchesReference: per (kind, name) slice counts and exact ns
// totals, unmatched ends, unclosed begins, track events by type, counter
// samples, flow points and every TracePacket field this decoder reads
// past (counted by number) or reads as a packet's data equal the
// reading of the same file with perfetto_trace_pb2.
func TestMatchesReference(t *testing.T) {
	py := python(t)
	for _, f := range fixtures {
		t.Run(f, func(t *testing.T) {
			ref := runReference(t, py, filepath.Join(formatstest.Testdata(), f))
			sink := decodeFixture(t, f)
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
			formatstest.CheckMetrics(t, "summary", sum, map[string]int64{
				"packets": ref.Packets, "unmatched_end": ref.UnmatchedEnd, "unclosed_begin": ref.UnclosedBegin,
				"slice_begin": ref.ByType["1"], "slice_end": ref.ByType["2"], "instant": ref.ByType["3"],
				"counter_events": ref.ByType["4"], "packets_needing_missing_state": ref.Skipped,
			})
			if n := int64(len(sink.Table(table.TraceCounters.Name).Rows)); n != ref.Counters {
				t.Errorf("%d counter rows, reference %d", n, ref.Counters)
			}
			if n := int64(len(sink.Table(table.TraceFlows.Name).Rows)); n != ref.FlowPoints {
				t.Errorf("%d flow rows, reference %d", n, ref.FlowPoints)
			}
			data, _ := sum.Coverage["packets_by_data"].(evidence.Object)
			ni, _ := sum.Coverage["fields_not_interpreted"].(evidence.Object)
			notInterp, _ := ni["trace_packet"].(evidence.Object)
			checked := 0
			for name, want := range ref.Fields {
				num := packetFieldNumber(name)
				key := strconv.Itoa(int(num)) + " " + name
				v, ok := data[key]
				if !ok {
					v, ok = notInterp[key]
				}
				if !ok {
					continue // a field read for every packet (timestamp, sequence…)
				}
				checked++
				if g, _ := evidence.AsInt(v); g != want {
					t.Errorf("field %s: %d, reference %d", key, g, want)
				}
			}
			if checked == 0 {
				t.Error("no packet field compared")
			}
			for k := range notInterp {
				name := k[strings.IndexByte(k, ' ')+1:]
				if _, ok := ref.Fields[name]; !ok && strings.Contains(k, " ") {
					t.Errorf("field %s counted, not in the reference", k)
				}
			}
		})
	}
}

// TestBuilderRows checks the rows of the builder trace field by field:
// interning, defaults, nesting and self time, flows across sequences,
// incremental and absolute counters, clock conversion (MONOTONIC and an
// incremental sequence clock in µs) and debug annotations.
func TestBuilderRows(t *testing.T) {
	sink := decodeFixture(t, "perfetto/builder-tracks.pftrace")
	var frame, req, mono *table.TraceSlice
	for _, r := range sink.Table(table.TraceSlices.Name).Typed {
		s := r.(*table.TraceSlice)
		switch {
		case s.Name == "frame" && frame == nil:
			frame = s
		case s.Name == "request":
			req = s
		case s.Name == "on-monotonic":
			mono = s
		}
	}
	if frame == nil || req == nil || mono == nil {
		t.Fatal("missing slices")
	}
	want := `{"frame_id":0,"label":"interned value","scales":[0.5,1],"shape":{"h":480,"w":640}}`
	if g := formatstest.Canonical(t, frame.Args); g != want {
		t.Errorf("args %s, want %s", g, want)
	}
	if frame.StartNS != 2000 || frame.DurationNS != 800 || frame.SelfNS != table.Some(int64(300)) || frame.Depth != table.Some(int64(0)) ||
		frame.Category != table.Some("render") || frame.Thread != table.Some("101") || frame.Process != table.Some("100") || frame.Kind != table.SliceThread {
		t.Errorf("frame %+v", frame)
	}
	// Clock 64: µs deltas from the snapshot's 2 µs (BOOTTIME 1000 ns).
	if req.StartNS != 3000 || req.EndNS != 5000 || req.Kind != table.SliceAsync || req.Track != table.Some("13") {
		t.Errorf("request %+v", req)
	}
	// MONOTONIC 2500 = BOOTTIME 3000 (snapshot 6:1000, 3:500).
	if mono.StartNS != 3000 || mono.Kind != table.SliceInstant {
		t.Errorf("on-monotonic %+v", mono)
	}
	var cpu []float64
	for _, r := range sink.Table(table.TraceCounters.Name).Typed {
		c := r.(*table.TraceCounter)
		if c.Name == "thread_time_ns" {
			cpu = append(cpu, c.Value)
		}
	}
	// Incremental deltas 5,3,2,4 per frame, times unit_multiplier 1000.
	if len(cpu) != 12 || cpu[0] != 5000 || cpu[1] != 8000 || cpu[3] != 14000 || cpu[11] != 42000 {
		t.Errorf("thread time %v", cpu)
	}
	steps := map[string]int{}
	for _, r := range sink.Table(table.TraceFlows.Name).Typed {
		steps[r.(*table.TraceFlow).Step]++
	}
	if steps[table.FlowStart] != 3 || steps[table.FlowStep] != 3 || steps[table.FlowEnd] != 2 {
		t.Errorf("flow steps %v", steps)
	}
	names := map[string]string{}
	for _, r := range sink.Table(table.TraceTracks.Name).Typed {
		tr := r.(*table.TraceTrack)
		names[tr.Kind+":"+tr.Name.V] = tr.Process.V
	}
	for _, k := range []string{"process:builder-proc", "thread:main", "thread:worker", "track:requests", "track:heap_bytes"} {
		if names[k] != "100" {
			t.Errorf("track %s: process %q (%v)", k, names[k], names)
		}
	}
	// The compressed copies read to the same rows.
	for _, zf := range []string{"perfetto/builder-compressed.pftrace", "perfetto/builder-zstd.pftrace"} {
		checkSameRows(t, sink, decodeFixture(t, zf))
	}
}

func checkSameRows(t *testing.T, sink, z *formatstest.Sink) {
	t.Helper()
	for _, name := range []string{table.TraceSlices.Name, table.TraceCounters.Name, table.TraceFlows.Name, table.TraceTracks.Name} {
		a, b := sink.Table(name).Rows, z.Table(name).Rows
		if len(a) != len(b) {
			t.Fatalf("%s: %d rows, compressed %d", name, len(a), len(b))
		}
		for i := range a {
			for _, k := range []string{"offset", "artifact_id", "slice_id", "parent_id"} {
				delete(a[i], k) // packet indexes and offsets count the compressed_packets carriers
				delete(b[i], k)
			}
			if ga, gb := formatstest.Canonical(t, a[i]), formatstest.Canonical(t, b[i]); ga != gb {
				t.Fatalf("%s row %d: %s, compressed %s", name, i, ga, gb)
			}
		}
	}
	if n, _ := evidence.AsInt(z.Table(table.TraceSlices.Name).Summary.Coverage["compressed_packets"]); n != 3 {
		t.Errorf("compressed_packets %d", n)
	}
}

// TestNegative: each crafted case gives its typed failure or its count.
func TestNegative(t *testing.T) {
	for _, c := range []struct {
		file, metric string
		want         int64
	}{
		{"neg-needs-state.pftrace", "packets_needing_missing_state", 3},
		{"neg-needs-state.pftrace", "previous_packet_dropped", 1},
		{"neg-missing-iid.pftrace", "interned_name_missing", 1},
		{"neg-clock.pftrace", "clock_conversions_failed", 1},
		{"neg-unmatched.pftrace", "unmatched_end", 1},
		{"neg-unmatched.pftrace", "unclosed_begin", 1},
	} {
		t.Run(c.file+"/"+c.metric, func(t *testing.T) {
			sink := decodeFixture(t, "perfetto/"+c.file)
			s := sink.Table(table.TraceSlices.Name).Summary
			if n := formatstest.MetricInt(t, s, c.metric); n != c.want {
				t.Errorf("%s %d, want %d", c.metric, n, c.want)
			}
			if c.metric != "unmatched_end" && s.Complete {
				t.Error("complete despite the loss")
			}
		})
	}
	// The missing name hides its slice, not its parent's: "known" keeps
	// its 100 ns.
	sink := decodeFixture(t, "perfetto/neg-missing-iid.pftrace")
	rows := sink.Table(table.TraceSlices.Name).Typed
	if len(rows) != 1 || rows[0].(*table.TraceSlice).Name != "known" || rows[0].(*table.TraceSlice).DurationNS != 100 || rows[0].(*table.TraceSlice).SelfNS != table.Some(int64(90)) {
		t.Errorf("rows %+v", rows)
	}
	// Truncated: every whole packet read, the cut stated.
	sink = decodeFixture(t, "perfetto/neg-truncated.pftrace")
	s := sink.Table(table.TraceSlices.Name).Summary
	if s.Complete || s.Coverage["truncated_at"] == nil {
		t.Errorf("truncated trace: %+v", s)
	}
	// Corrupt: DECODE_FAILURE at the packet's offset.
	_, err := formatstest.DecodeFile(t, Spec, filepath.Join(formatstest.Testdata(), "perfetto/neg-corrupt.pftrace"), nil, nil)
	f, ok := err.(*evidence.Failure)
	if !ok || f.Code != evidence.CodeDecodeFailure || !strings.Contains(f.Message, "byte offset 0") {
		t.Errorf("corrupt: %v", err)
	}
}

// TestDetection: Perfetto traces are recognized by content, other
// protobuf streams that open with a field 1 message are not.
func TestDetection(t *testing.T) {
	for _, f := range append(fixtures, "perfetto/neg-clock.pftrace") {
		if v := sniff(head(formatstest.Read(t, f))); v != formats.Yes {
			t.Errorf("%s: %v", f, v)
		}
	}
	for _, f := range []string{"otlp/python-sdk.pb", "chrome-trace/node-20-trace-events.json", "chrome-trace/node-20-trace-events.json.gz"} {
		if v := sniff(head(formatstest.Read(t, f))); v != formats.No {
			t.Errorf("%s: %v", f, v)
		}
	}
	pprofs, _ := filepath.Glob(filepath.Join(formatstest.Testdata(), "pprof", "*"))
	for _, p := range pprofs {
		b, err := os.ReadFile(p)
		if err != nil || filepath.Ext(p) == ".md" || filepath.Ext(p) == ".sh" {
			continue
		}
		if v := sniff(head(b)); v == formats.Yes {
			t.Errorf("%s: a pprof profile read as a Perfetto trace", p)
		}
	}
}

func head(b []byte) []byte { return b[:min(len(b), formats.SniffBytes)] }

// TestReaders: the rows are the same however the bytes arrive.
func TestReaders(t *testing.T) {
	data := formatstest.Read(t, "perfetto/builder-compressed.pftrace")
	want, err := formatstest.Decode(Spec, "x", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := formatstest.Decode(Spec, "x", data, nil, iotest.OneByteReader)
	if err != nil {
		t.Fatal(err)
	}
	for i, tb := range want.Tables {
		if len(tb.Rows) != len(got.Tables[i].Rows) {
			t.Errorf("%s: %d rows one byte at a time, %d", tb.Header.Name, len(got.Tables[i].Rows), len(tb.Rows))
		}
	}
}

// TestLimits: the packet and inflated-byte bounds are typed failures.
func TestLimits(t *testing.T) {
	data := formatstest.Read(t, "perfetto/builder-compressed.pftrace")
	for _, l := range []string{LimitPacket, LimitDecompressed, LimitOpen} {
		_, err := formatstest.Run(t, Spec, "x", data, map[string]int64{l: 1}, nil)
		f, ok := err.(*evidence.Failure)
		if !ok || f.Code != evidence.CodeLimitExceeded {
			t.Errorf("%s=1: %v", l, err)
		}
	}
}

// TestValueBound: max_value_bytes bounds every native string.
func TestValueBound(t *testing.T) {
	checkValueBound(t, "perfetto/builder-tracks.pftrace", table.TraceSlices.Name, table.TraceCounters.Name, table.TraceTracks.Name)
}

// checkValueBound decodes a fixture whole and with max_value_bytes=16
// and checks the named tables' strings are bounded.
func checkValueBound(t *testing.T, fixture string, tables ...string) {
	t.Helper()
	data := formatstest.Read(t, fixture)
	full, err := formatstest.Decode(Spec, "x", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := formatstest.Decode(Spec, "x", data, evidence.Object{formats.ValueBytesParam.Name: int64(16)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pick := func(s *formatstest.Sink) *formatstest.Sink {
		out := &formatstest.Sink{}
		for _, name := range tables {
			out.Tables = append(out.Tables, s.Table(name))
		}
		return out
	}
	formatstest.CheckValueBound(t, pick(cut), pick(full), 16)
}
