package chrometrace

import (
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// samplesReference is what testdata/chrome-samples/reference.py prints.
type samplesReference struct {
	Total    int64               `json:"total"`
	Unplaced int64               `json:"unplaced"`
	Frames   map[string][2]int64 `json:"frames"`
}

// TestSamplesReference: the V8 samples of a chromium trace and of a
// Chrome 141 DevTools export give, per profile and frame, self and
// inclusive samples equal to an independent json-module reading.
func TestSamplesReference(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: cannot run the independent reference reading")
	}
	for _, name := range []string{"chromium-headless-cpu-profiler.json", "chrome-141-no-arg-data.json"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(formatstest.Testdata(), "chrome-samples", name)
			out, err := exec.Command(py, filepath.Join(formatstest.Testdata(), "chrome-samples", "reference.py"), path).Output()
			if err != nil {
				t.Fatal(err)
			}
			var ref samplesReference
			if err := json.Unmarshal(out, &ref); err != nil {
				t.Fatal(err)
			}
			sink := formatstest.MustDecodeFile(t, Spec, path, nil, nil)
			ft := sink.Table(table.CPUFrames.Name)
			if ft == nil {
				t.Fatal("no cpu.frames table")
			}
			m := ft.Summary.Metrics
			if n, _ := evidence.AsInt(m[table.MetricTotalWeight].Value); n != ref.Total {
				t.Errorf("total %d, reference %d", n, ref.Total)
			}
			if n, _ := evidence.AsInt(m["unplaced_samples"].Value); n != ref.Unplaced {
				t.Errorf("unplaced %d, reference %d", n, ref.Unplaced)
			}
			if ft.Summary.Complete != (ref.Unplaced == 0) {
				t.Errorf("complete %v with %d unplaced samples", ft.Summary.Complete, ref.Unplaced)
			}
			got := map[string][2]int64{}
			for _, r := range ft.Typed {
				f := r.(*table.Frame)
				k := fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%d", f.Process.V, f.Thread.V, f.Function, f.File.V, f.Line, f.Column)
				got[k] = [2]int64{int64(f.SelfWeight), int64(f.InclusiveWeight)}
			}
			if len(got) != len(ref.Frames) {
				t.Errorf("%d frames, reference %d", len(got), len(ref.Frames))
			}
			for k, w := range ref.Frames {
				if got[k] != w {
					t.Errorf("%q: self/inclusive %v, reference %v", k, got[k], w)
				}
			}
			var stacked float64
			for _, r := range sink.Table(table.CPUStacks.Name).Typed {
				stacked += r.(*table.Stack).Weight
			}
			var placed int64
			for _, w := range ref.Frames {
				_ = w
			}
			placed = ref.Total - ref.Unplaced
			if int64(stacked) > placed || stacked == 0 {
				t.Errorf("stacks weigh %v of %d placed samples", stacked, placed)
			}
			// Each profile's edges: the callee's self weight under its
			// callers sums to the callee's self weight minus the roots'.
			if et := sink.Table(table.CPUEdges.Name); et == nil || len(et.Rows) == 0 && len(ft.Rows) > 1 {
				t.Error("no cpu.edges rows")
			}
		})
	}
}

// TestSamplesAbsent: a trace without V8 profiles has no CPU tables.
func TestSamplesAbsent(t *testing.T) {
	sink, err := formatstest.DecodeFile(t, Spec, filepath.Join(formatstest.Testdata(), "chrome-trace", "node-20-trace-events.json"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sink.Table(table.CPUFrames.Name) != nil || len(sink.Tables) != len(table.TraceTables) {
		t.Errorf("%d tables", len(sink.Tables))
	}
}

// TestSamplesMalformed: chunks naming nodes never defined, nodes without
// callFrames and samples that are not ids are counted and stated, and
// the evidence says it is incomplete.
func TestSamplesMalformed(t *testing.T) {
	doc := `{"traceEvents":[
{"ph":"P","name":"Profile","id":"0x1","pid":1,"tid":7,"ts":1,"args":{"data":{"startTime":1}}},
{"ph":"P","name":"ProfileChunk","id":"0x1","pid":1,"tid":9,"ts":2,"args":{"data":{"cpuProfile":{"nodes":[
 {"id":1,"callFrame":{"functionName":"(root)","scriptId":0}},
 {"id":2,"parent":1,"callFrame":{"functionName":"main","url":"a.js","scriptId":"3","lineNumber":0,"columnNumber":4}},
 {"id":3,"parent":2},
 {"id":4,"parent":2,"callFrame":{"functionName":"leaf","url":"a.js","scriptId":"3","lineNumber":5,"columnNumber":1}}],
 "samples":[2,4,4,99,"x"]},"timeDeltas":[1,1,1,1,1]}}},
{"ph":"P","name":"ProfileChunk","pid":1,"tid":9,"ts":3,"args":{}}
]}`
	sink, err := formatstest.Run(t, Spec, "t.json", []byte(doc), nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	ft := sink.Table(table.CPUFrames.Name)
	s := ft.Summary
	if s.Complete {
		t.Error("complete with an unplaced sample")
	}
	if n, _ := evidence.AsInt(s.Metrics[table.MetricTotalWeight].Value); n != 4 {
		t.Errorf("total %d, want 4", n)
	}
	want := map[string][2]float64{"main": {1, 3}, "leaf": {2, 2}}
	for _, r := range ft.Typed {
		f := r.(*table.Frame)
		if w := want[f.Function]; w != [2]float64{f.SelfWeight, f.InclusiveWeight} || f.Thread.V != "7" || f.Process.V != "1" {
			t.Errorf("%+v", f)
		}
	}
	if len(ft.Rows) != 2 {
		t.Errorf("%d frames", len(ft.Rows))
	}
	t.Log(s.Limitations)
	for _, l := range []string{"1 samples name a node", "1 × a cpuProfile node without a callFrame", "1 × a sample that is not a node id", "1 × ProfileChunk without id"} {
		found := false
		for _, x := range s.Limitations {
			found = found || len(x) >= len(l) && x[:len(l)] == l
		}
		if !found {
			t.Errorf("no limitation %q in %q", l, s.Limitations)
		}
	}
}

// TestArgsKeyAfterLargeValue: an args key keeps its name when its value
// is large enough for the scanner to refill its buffer while reading it
// (the key was once taken after the value, from reused bytes).
func TestArgsKeyAfterLargeValue(t *testing.T) {
	big := `[` + strings.Repeat(`1,`, 200_000) + `1]`
	doc := `{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1,"args":{"data":{"v":` + big + `}}}]}`
	sink, err := formatstest.Run(t, Spec, "t.json", []byte(doc), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	args := sink.Table(table.TraceSlices.Name).Typed[0].(*table.TraceSlice).Args
	if _, ok := args["data"]; !ok {
		t.Errorf("args keys %v", slices.Collect(maps.Keys(args)))
	}
}

// FuzzSamples: V8 profile events never panic or give an untyped failure,
// and CPU frames keep self within inclusive weight.
func FuzzSamples(f *testing.F) {
	f.Add([]byte(`{"traceEvents":[{"ph":"P","name":"Profile","id":"0x1","pid":1,"tid":7,"ts":1,"args":{"data":{"startTime":1}}},` +
		`{"ph":"P","name":"ProfileChunk","id":"0x1","pid":1,"tid":9,"ts":2,"args":{"data":{"cpuProfile":{"nodes":[` +
		`{"id":1,"callFrame":{"functionName":"(root)","scriptId":0}},{"id":2,"parent":1,"callFrame":{"functionName":"f","url":"a.js","scriptId":"3","lineNumber":0,"columnNumber":4}},` +
		`{"id":3,"parent":2,"callFrame":{"functionName":"f","url":"a.js","scriptId":"3","lineNumber":0,"columnNumber":4}}],"samples":[2,3,3,1]},"timeDeltas":[1,1,1,1]}}}]}`))
	f.Add([]byte(`[{"ph":"P","name":"ProfileChunk","id":1,"pid":1,"tid":1,"ts":0,"args":{"data":{"cpuProfile":{"nodes":[{"id":1,"parent":1,"callFrame":{}}],"samples":[1]}}}}]`))
	// The format's own samples (legacy.go): stackFrames after the samples
	// that name it, a parent cycle, stack arrays, weights.
	f.Add([]byte(`{"samples":[{"tid":1,"ts":1,"sf":"3","weight":2},{"ts":2,"stack":["a","0x1"]}],"traceEvents":[` +
		`{"ph":"P","pid":1,"tid":2,"ts":3,"sf":2},{"ph":"P","pid":1,"tid":2,"ts":4,"name":"Idle","cat":"c"},{"ph":"X","pid":1,"tid":2,"ts":1,"dur":1,"sf":"1","esf":"2"}],` +
		`"stackFrames":{"1":{"name":"main","category":"app"},"2":{"name":"f","parent":"1"},"3":{"name":"g","parent":"4"},"4":{"name":"h","parent":"3"}}}`))
	f.Add(formatstest.Read(f, "chrome-samples/legacy-negative.json"))
	f.Add(formatstest.Read(f, "chrome-samples/legacy-stackframes.json")[:2<<10])
	f.Fuzz(func(t *testing.T, b []byte) {
		sink, err := fuzzDecode(Spec, b)
		formatstest.CheckInvariants(t, sink, err)
		if err != nil {
			return
		}
		if ft := sink.Table(table.CPUFrames.Name); ft != nil {
			var self float64
			for _, r := range ft.Typed {
				fr := r.(*table.Frame)
				if fr.SelfWeight > fr.InclusiveWeight {
					t.Fatalf("frame %+v", fr)
				}
				self += fr.SelfWeight
			}
			// Every placed sample is the leaf of one stack.
			var stacked float64
			for _, r := range sink.Table(table.CPUStacks.Name).Typed {
				stacked += r.(*table.Stack).Weight
			}
			total, _ := evidence.AsInt(ft.Summary.Metrics[table.MetricTotalWeight].Value)
			if stacked != self || stacked > float64(total) {
				t.Fatalf("stacks weigh %v, self weights %v, total %d", stacked, self, total)
			}
		}
	})
}
