package chrometrace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// legacyReference is what testdata/chrome-samples/legacy_reference.py
// prints.
type legacyReference struct {
	Read           int64               `json:"read"`
	Unplaced       int64               `json:"unplaced"`
	UnplacedWeight int64               `json:"unplaced_weight"`
	TotalWeight    int64               `json:"total_weight"`
	EventStacks    int64               `json:"event_stacks"`
	Frames         map[string][2]int64 `json:"frames"`
}

// TestLegacySamplesReference: the format's own samples (top-level samples
// before traceEvents, stackFrames after both; P events with sf, with a
// stack array and with neither; negative cases) give per series and frame
// the self and inclusive weights, and the totals, of an independent
// json-module reading.
func TestLegacySamplesReference(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: cannot run the independent reference reading")
	}
	dir := filepath.Join(formatstest.Testdata(), "chrome-samples")
	for _, name := range []string{"legacy-stackframes.json", "legacy-negative.json"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			out, err := exec.Command(py, filepath.Join(dir, "legacy_reference.py"), path).Output()
			if err != nil {
				t.Fatal(err)
			}
			var ref legacyReference
			if err := json.Unmarshal(out, &ref); err != nil {
				t.Fatal(err)
			}
			sink := formatstest.MustDecodeFile(t, Spec, path, nil, nil)
			ft := sink.Table(table.CPUFrames.Name)
			if ft == nil {
				t.Fatal("no cpu.frames table")
			}
			formatstest.CheckMetrics(t, "cpu.frames", ft.Summary, map[string]int64{table.MetricTotalWeight: ref.TotalWeight, table.MetricSamples: ref.Read,
				"trace_samples_read": ref.Read, "trace_samples_unplaced": ref.Unplaced, "trace_samples_resolved": ref.Read - ref.Unplaced,
				"unplaced_samples": ref.UnplacedWeight, "event_stacks": ref.EventStacks})
			if n := formatstest.MetricInt(t, sink.Table(table.TraceSlices.Name).Summary, "event_stacks"); n != ref.EventStacks {
				t.Errorf("trace.slices event_stacks %d, reference %d", n, ref.EventStacks)
			}
			got := map[string][2]int64{}
			for _, r := range ft.Typed {
				f := r.(*table.Frame)
				k := fmt.Sprintf("%s\t%s\t%s\t%s", f.Process.V, f.Thread.V, f.Function, f.Module.V)
				if _, dup := got[k]; dup {
					t.Errorf("frame %q twice", k)
				}
				got[k] = [2]int64{int64(f.SelfWeight), int64(f.InclusiveWeight)}
				if !strings.HasPrefix(f.FrameID, "tef:") || f.Line != -1 || f.File.Valid {
					t.Errorf("frame %+v", f)
				}
				if wantSym := map[bool]string{true: table.Unresolved, false: table.Symbolized}[strings.HasPrefix(f.Function, "0x")]; f.Function != "" && f.Symbolization != wantSym {
					t.Errorf("%s: symbolization %s", f.Function, f.Symbolization)
				}
			}
			if len(got) != len(ref.Frames) {
				t.Errorf("%d frames, reference %d", len(got), len(ref.Frames))
			}
			for k, w := range ref.Frames {
				if got[k] != w {
					t.Errorf("%q: self/inclusive %v, reference %v", k, got[k], w)
				}
			}
			// Stacks weigh every placed sample once; their leaves are the
			// self weights.
			var stacked float64
			for _, r := range sink.Table(table.CPUStacks.Name).Typed {
				stacked += r.(*table.Stack).Weight
			}
			if int64(stacked) != ref.TotalWeight-ref.UnplacedWeight {
				t.Errorf("stacks weigh %v, placed weight %d", stacked, ref.TotalWeight-ref.UnplacedWeight)
			}
			// The series' totals in the coverage add up to the total.
			var series int64
			for _, p := range ft.Summary.Coverage[table.CoverageProfiles].([]any) {
				n, _ := evidence.AsInt(p.(evidence.Object)["total_weight"])
				series += n
			}
			if series != ref.TotalWeight {
				t.Errorf("series weigh %d, total %d", series, ref.TotalWeight)
			}
			if ft.Summary.Complete != (ref.Unplaced == 0) {
				t.Errorf("complete %v with %d unplaced", ft.Summary.Complete, ref.Unplaced)
			}
			if et := sink.Table(table.CPUEdges.Name); et == nil || len(et.Typed) == 0 {
				t.Error("no cpu.edges rows")
			}
		})
	}
}

// TestLegacySamplesNegative: each bad case is counted under its reason, a
// parent cycle ends (bounded), and samples without a tid keep a null
// thread.
func TestLegacySamplesNegative(t *testing.T) {
	done := make(chan struct{})
	var sink *formatstest.Sink
	var err error
	go func() {
		defer close(done)
		sink, err = formatstest.DecodeFile(t, Spec, filepath.Join(formatstest.Testdata(), "chrome-samples", "legacy-negative.json"), nil, nil)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("a stackFrames cycle did not end")
	}
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	s := sink.Table(table.CPUFrames.Name).Summary
	if s.Complete {
		t.Error("complete with unplaced samples")
	}
	for _, l := range []string{
		"2 samples whose sf names no stackFrames entry (weight 2)",
		"3 samples whose stackFrames parent chain loops (weight 4)",
		"1 samples whose stackFrames parent chain reaches a missing id (weight 1)",
		"2 samples with both sf and stack (weight 2)",
		"1 samples with neither sf nor stack (weight 1)",
		"1 samples with an empty stack (weight 1)",
		"2 samples whose stack is not an array of strings",
		"3 samples whose weight is not a non-negative integer",
		"2 top-level samples carry no tid",
		"1 × stackFrames entries that are not objects: skipped",
		"1 × samples entries that are not objects: skipped",
		"2 events of other phases carry a stack",
	} {
		if !slices.ContainsFunc(s.Limitations, func(x string) bool { return strings.HasPrefix(x, l) }) {
			t.Errorf("no limitation %q in %q", l, s.Limitations)
		}
	}
	nullThread := false
	for _, r := range sink.Table(table.CPUFrames.Name).Typed {
		f := r.(*table.Frame)
		if !f.Thread.Valid && !f.Process.Valid && f.Function == "work" {
			nullThread = true
		}
		if f.Function == "" && f.Symbolization != table.Anonymous {
			t.Errorf("nameless frame %+v", f)
		}
	}
	if !nullThread {
		t.Error("the samples without tid are not a null-thread series")
	}
}

// TestLegacySamplesOrder: stackFrames before or after the samples that
// name it, and samples before or after traceEvents, give the same rows
// (in the order series and frames first appear).
func TestLegacySamplesOrder(t *testing.T) {
	sf := `"stackFrames":{"1":{"name":"main","category":"app"},"2":{"name":"f","category":"app","parent":"1"},"3":{"name":"g","category":"lib","parent":2}}`
	ev := `"traceEvents":[{"ph":"P","name":"s","pid":1,"tid":2,"ts":1,"sf":"3"},{"ph":"P","name":"s","pid":1,"tid":2,"ts":2,"sf":2}]`
	sm := `"samples":[{"tid":2,"ts":3,"sf":"3","weight":4},{"tid":2,"ts":4,"sf":"1"}]`
	var first []string
	for i, doc := range []string{"{" + sf + "," + ev + "," + sm + "}", "{" + sm + "," + ev + "," + sf + "}", "{" + ev + "," + sf + "," + sm + "}"} {
		sink, err := formatstest.Run(t, Spec, "t.json", []byte(doc), nil, nil)
		formatstest.CheckInvariants(t, sink, err)
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		for _, name := range []string{table.CPUFrames.Name, table.CPUEdges.Name, table.CPUStacks.Name} {
			for _, r := range sink.Table(name).Typed {
				rows = append(rows, fmt.Sprintf("%+v", r))
			}
		}
		slices.Sort(rows)
		if i == 0 {
			first = rows
			if len(rows) == 0 {
				t.Fatal("no rows")
			}
			continue
		}
		if !slices.Equal(rows, first) {
			t.Errorf("order %d:\n%v\nwant\n%v", i, rows, first)
		}
	}
}

// TestLegacySamplesDuplicateKeys: a stackFrames dictionary with an id
// twice, or a frame with a member twice, is refused by the scanner.
func TestLegacySamplesDuplicateKeys(t *testing.T) {
	for _, doc := range []string{
		`{"traceEvents":[],"stackFrames":{"1":{"name":"a"},"1":{"name":"b"}}}`,
		`{"traceEvents":[],"stackFrames":{"1":{"name":"a","name":"b"}}}`,
		`{"traceEvents":[],"samples":[{"tid":1,"sf":"1","sf":"2"}]}`,
	} {
		_, err := formatstest.Run(t, Spec, "t.json", []byte(doc), nil, nil)
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeDecodeFailure {
			t.Errorf("%s: %v", doc, err)
		}
	}
}

// TestLegacyWithV8: V8 profiles and the format's own samples in one trace
// share the CPU tables, each its own series; the totals add up.
func TestLegacyWithV8(t *testing.T) {
	doc := `{"traceEvents":[
{"ph":"P","name":"Profile","id":"0x1","pid":1,"tid":7,"ts":1,"args":{"data":{"startTime":1}}},
{"ph":"P","name":"ProfileChunk","id":"0x1","pid":1,"tid":7,"ts":2,"args":{"data":{"cpuProfile":{"nodes":[
 {"id":1,"callFrame":{"functionName":"(root)","scriptId":0}},
 {"id":2,"parent":1,"callFrame":{"functionName":"main","url":"a.js","scriptId":"3","lineNumber":0,"columnNumber":4}}],
 "samples":[2,2]},"timeDeltas":[1,1]}}},
{"ph":"P","name":"s","pid":1,"tid":8,"ts":3,"sf":"1"},
{"ph":"P","name":"s","pid":1,"tid":9,"ts":4,"sf":"1"}],
"stackFrames":{"1":{"name":"native_main","category":"libc.so"}}}`
	sink, err := formatstest.Run(t, Spec, "t.json", []byte(doc), nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	ft := sink.Table(table.CPUFrames.Name)
	got := map[string]float64{}
	for _, r := range ft.Typed {
		f := r.(*table.Frame)
		got[f.Function+"/"+f.Thread.V] = f.SelfWeight
	}
	// Two series share the sf's resolved stack: each must see it once.
	if got["main/7"] != 2 || got["native_main/8"] != 1 || got["native_main/9"] != 1 || len(got) != 3 {
		t.Errorf("frames %v", got)
	}
	m := ft.Summary.Metrics
	if n, _ := evidence.AsInt(m[table.MetricTotalWeight].Value); n != 4 {
		t.Errorf("total %d", n)
	}
	if n, _ := evidence.AsInt(m["profiles"].Value); n != 1 {
		t.Errorf("profiles %d", n)
	}
	if l := ft.Summary.Coverage[table.CoverageProfiles].([]any); len(l) != 3 {
		t.Errorf("series %v", l)
	}
}

// TestEventContainerText: an event whose name (or another text member) is
// an object or an array is read on, that member taken as absent, rather
// than the walk losing its place.
func TestEventContainerText(t *testing.T) {
	doc := `{"traceEvents":[{"ph":"X","name":{"a":[1]},"cat":[1,2],"ts":1,"dur":1,"pid":1,"tid":1},{"ph":"X","name":"b","ts":3,"dur":1,"pid":1,"tid":1}]}`
	sink, err := formatstest.Run(t, Spec, "t.json", []byte(doc), nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	rows := sink.Table(table.TraceSlices.Name).Typed
	if len(rows) != 2 || rows[0].(*table.TraceSlice).Name != "" || rows[0].(*table.TraceSlice).Category.Valid || rows[1].(*table.TraceSlice).Name != "b" {
		t.Errorf("%+v", rows)
	}
}

// TestLegacyMembersOfAnotherShape: a samples member that is not an array
// and a stackFrames member that is not an object are named as not read,
// and the CPU tables say so and are incomplete.
func TestLegacyMembersOfAnotherShape(t *testing.T) {
	sink, err := formatstest.Run(t, Spec, "t.json", []byte(`{"traceEvents":[],"samples":{"a":1},"stackFrames":[1]}`), nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	if got := sink.Table(table.TraceSlices.Name).Summary.Coverage["members_not_interpreted"]; fmt.Sprint(got) != "[samples stackFrames]" {
		t.Errorf("members_not_interpreted %v", got)
	}
	ft := sink.Table(table.CPUFrames.Name)
	if ft == nil || ft.Summary.Complete || len(ft.Typed) != 0 {
		t.Fatalf("cpu.frames %+v", ft)
	}
	for _, l := range []string{"1 × samples that is not an array: skipped", "1 × stackFrames that is not an object: skipped"} {
		if !slices.Contains(ft.Summary.Limitations, l) {
			t.Errorf("no limitation %q in %q", l, ft.Summary.Limitations)
		}
	}
}

// TestLegacyDetection: a trace whose samples or stackFrames come before
// traceEvents, longer than the sniffed prefix, is still a Chrome trace;
// other objects with such members are not.
func TestLegacyDetection(t *testing.T) {
	b := formatstest.Read(t, "chrome-samples/legacy-stackframes.json")
	if len(b) <= formats.SniffBytes {
		t.Fatalf("fixture of %d bytes does not outgrow the sniffed prefix", len(b))
	}
	p := b[:formats.SniffBytes]
	if c, k := sniffChrome(p), sniffKineto(p); c != formats.Yes || k != formats.No {
		t.Errorf("legacy-stackframes.json: chrome %v kineto %v", c, k)
	}
	pad := strings.Repeat(" ", formats.SniffBytes)
	for doc, want := range map[string]formats.Verdict{
		`{"samples":[{"tid":1,"sf":"2","weight":1},` + pad:         formats.Yes,
		`{"stackFrames":{"1":{"name":"a","category":"b"},` + pad:   formats.Yes,
		`{"stackFrames":{"1":{"name":"a","other":1},` + pad:        formats.No,
		`{"samples":[{"tid":1,"value":2},` + pad:                   formats.No,
		`{"samples":[1,2],"nodes":[` + pad:                         formats.No,
		`{"samples":[{"sf":1}],"stackFrames":{}}`:                  formats.No, // no traceEvents
		`{"samples":[{"sf":1}],"traceEvents":[],"stackFrames":{}}`: formats.Yes,
		`{"stackFrames":{"1":{"name":"a"}},"traceEvents":{"a":1}}`: formats.No,
	} {
		v := sniffChrome([]byte(doc))
		if want == formats.No && v == formats.Yes || want == formats.Yes && v != formats.Yes {
			t.Errorf("%.60q: %v, want %v", doc, v, want)
		}
	}
}

// TestLegacyCancelled: a decode cancelled while it reads a top-level
// samples array or stackFrames (before any event) stops with a typed
// cancellation.
func TestLegacyCancelled(t *testing.T) {
	for _, doc := range []string{
		`{"samples":[` + strings.Repeat(`{"tid":1,"sf":"1"},`, 3000) + `{"tid":1,"sf":"1"}],"traceEvents":[]}`,
		`{"stackFrames":{` + func() string {
			var b strings.Builder
			for i := range 3000 {
				fmt.Fprintf(&b, `"%d":{"name":"a"},`, i)
			}
			return b.String()
		}() + `"x":{"name":"b"}},"traceEvents":[]}`,
	} {
		art := &evidence.Artifact{Path: "/virtual/t.json", Name: "t.json", Size: int64(len(doc)), Role: "explicit"}
		in, err := formatstest.Input(Spec, art, strings.NewReader(doc), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err = Spec.Decoder.Decode(ctx, in, &formatstest.Sink{})
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeCancelled {
			t.Errorf("%.30s…: %v", doc, err)
		}
	}
}

// TestLegacyWeightOverflow: weights whose sum would pass 2^62 are left
// out and counted, never wrapped around.
func TestLegacyWeightOverflow(t *testing.T) {
	doc := `{"traceEvents":[{"ph":"P","pid":1,"tid":1,"ts":1,"sf":"1"}],"samples":[{"tid":1,"sf":"1","weight":4611686018427387903},{"tid":1,"sf":"1","weight":9223372036854775807},{"tid":1,"sf":"1","weight":1}],"stackFrames":{"1":{"name":"a"}}}`
	sink, err := formatstest.Run(t, Spec, "t.json", []byte(doc), nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	ft := sink.Table(table.CPUFrames.Name)
	if n, _ := evidence.AsInt(ft.Summary.Metrics[table.MetricTotalWeight].Value); n != 1<<62 {
		t.Errorf("total %d, want %d", n, int64(1<<62))
	}
	if !slices.ContainsFunc(ft.Summary.Limitations, func(l string) bool {
		return strings.HasPrefix(l, "2 samples whose weight would take the total past 2^62")
	}) {
		t.Errorf("limitations %q", ft.Summary.Limitations)
	}
}
