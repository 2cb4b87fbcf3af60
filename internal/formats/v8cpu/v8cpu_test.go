package v8cpu

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
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

const testdata = "../../../testdata/v8"

// decodeReader decodes size bytes from r, as the runner hands them over:
// the size is known, the digest is not.
func decodeReader(t testing.TB, r io.Reader, size int64, limits map[string]int64) (*formatstest.Sink, error) {
	t.Helper()
	in := formatstest.MustInput(t, Spec, &evidence.Artifact{Path: "/virtual/x.cpuprofile", Size: size}, r, limits)
	sink := &formatstest.Sink{}
	return sink, Spec.Decoder.Decode(context.Background(), in, sink)
}

func decodeBytes(t testing.TB, b []byte) (*formatstest.Sink, error) {
	return decodeReader(t, bytes.NewReader(b), int64(len(b)), nil)
}

// independentCounts counts samples per frame straight from the file with
// encoding/json: a second implementation the decoder must agree with.
func independentCounts(t *testing.T, b []byte) (map[string]int64, int64) {
	var p struct {
		Nodes []struct {
			ID        int64 `json:"id"`
			CallFrame struct {
				FunctionName string `json:"functionName"`
				URL          string `json:"url"`
				LineNumber   int64  `json:"lineNumber"`
				ColumnNumber int64  `json:"columnNumber"`
			} `json:"callFrame"`
		} `json:"nodes"`
		Samples []int64 `json:"samples"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	key := map[int64]string{}
	for _, n := range p.Nodes {
		cf := n.CallFrame
		key[n.ID] = fmt.Sprintf("%s|%s|%d|%d", cf.FunctionName, cf.URL, cf.LineNumber, cf.ColumnNumber)
	}
	out := map[string]int64{}
	for _, s := range p.Samples {
		out[key[s]]++
	}
	return out, int64(len(p.Samples))
}

func rowKey(v evidence.Object) string {
	file, _ := v["file"].(string)
	return fmt.Sprintf("%s|%s|%v|%v", v["function"], file, v["line"], v["column"])
}

func TestSelfCountsEqualIndependentCount(t *testing.T) {
	for _, name := range []string{"hotspot.cpuprofile", "recursive-main.cpuprofile", "recursive-worker.cpuprofile", "chrome-65-simple.cpuprofile"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(testdata, name))
			if err != nil {
				t.Fatal(err)
			}
			want, total := independentCounts(t, b)
			sink, err := decodeBytes(t, b)
			if err != nil {
				t.Fatal(err)
			}
			frames := sink.Table(table.CPUFrames.Name)
			got := map[string]int64{}
			var sum int64
			for _, r := range frames.Rows {
				n, _ := evidence.AsInt(r["self_weight"])
				got[rowKey(r)] += n
				sum += n
			}
			for k, n := range want {
				if got[k] != n {
					t.Errorf("%s: self %d, independent count %d", k, got[k], n)
				}
			}
			if sum != total {
				t.Errorf("self weights sum to %d, file has %d samples", sum, total)
			}
			if tw := frames.Summary.Metrics[table.MetricTotalWeight].Value; tw != total {
				t.Errorf("total_weight %v, want %d", tw, total)
			}
			if !frames.Summary.Complete {
				t.Error("summary not complete")
			}
		})
	}
}

func find(rows []evidence.Object, fn string) evidence.Object {
	for _, r := range rows {
		if r["function"] == fn {
			return r
		}
	}
	return nil
}

func TestHotFunctionAndCoordinates(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join(testdata, "hotspot.cpuprofile"))
	sink, err := decodeBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	rows := sink.Table(table.CPUFrames.Name).Rows
	var top evidence.Object
	var best int64 = -1
	for _, r := range rows {
		if n, _ := evidence.AsInt(r["self_weight"]); n > best {
			best, top = n, r
		}
	}
	if top["function"] != "crunchPrimes" {
		t.Fatalf("hottest frame is %v, want crunchPrimes", top["function"])
	}
	// app.js declares crunchPrimes on its 5th line: V8 lines are zero-based.
	if top["line"] != int64(4) || top["symbolization"] != table.Symbolized {
		t.Errorf("crunchPrimes at line %v (%v), want zero-based line 4", top["line"], top["symbolization"])
	}
	root := find(rows, "(root)")
	if root == nil || root["line"] != int64(-1) || root["symbolization"] != table.Synthetic || root["file"] != nil {
		t.Errorf("(root) row = %v", root)
	}
	// An anonymous top-level function is exported at line 0, column 0: a
	// real first line and column, not "unavailable".
	for _, r := range rows {
		if r["function"] == "" && r["line"] == int64(0) && r["column"] == int64(0) {
			if r["symbolization"] != table.Anonymous {
				t.Errorf("anonymous frame symbolization %v", r["symbolization"])
			}
			return
		}
	}
	t.Error("no anonymous frame at 0:0")
}

func TestRecursionInclusiveRepeats(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join(testdata, "recursive-main.cpuprofile"))
	// Count independently: per sample, walk to the root and count fib
	// occurrences (what the occurrence weight sums) and stacks containing
	// fib (what inclusive weight counts).
	var p struct {
		Nodes []struct {
			ID        int64
			CallFrame struct{ FunctionName string }
			Children  []int64
		}
		Samples []int64
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	parent, name := map[int64]int64{}, map[int64]string{}
	for _, n := range p.Nodes {
		name[n.ID] = n.CallFrame.FunctionName
		for _, c := range n.Children {
			parent[c] = n.ID
		}
	}
	var occurrences, stacks int64
	for _, s := range p.Samples {
		k := int64(0)
		for id, ok := s, true; ok; id, ok = parent[id] {
			if name[id] == "fib" {
				k++
			}
		}
		occurrences += k
		if k > 0 {
			stacks++
		}
	}
	sink, err := decodeBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	fib := find(sink.Table(table.CPUFrames.Name).Rows, "fib")
	if fib == nil {
		t.Fatal("no fib frame")
	}
	incl, _ := evidence.AsInt(fib["inclusive_weight"])
	occ, _ := evidence.AsInt(fib["inclusive_occurrence_weight"])
	if incl != stacks {
		t.Errorf("fib inclusive %d, independent count of stacks holding fib %d", incl, stacks)
	}
	if occ != occurrences || occ <= stacks {
		t.Errorf("fib occurrence weight %d, independent occurrence count %d (over the %d stacks: recursion repeats)", occ, occurrences, stacks)
	}
	edges := sink.Table(table.CPUEdges.Name)
	self := 0
	for _, e := range edges.Rows {
		if e["caller_function"] == "fib" && e["callee_function"] == "fib" {
			self++
		}
	}
	if self != 1 {
		t.Errorf("want one fib→fib edge, got %d", self)
	}
}

func TestTimeDeltasAndIotest(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join(testdata, "recursive-worker.cpuprofile"))
	want, err := decodeBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	readers := map[string]io.Reader{
		"one-byte": iotest.OneByteReader(bytes.NewReader(b)),
		"half":     iotest.HalfReader(bytes.NewReader(b)),
		"data-err": iotest.DataErrReader(bytes.NewReader(b)),
	}
	for name, r := range readers {
		t.Run(name, func(t *testing.T) {
			got, err := decodeReader(t, r, int64(len(b)), nil)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := evidence.Canonical(toAny(got))
			w, _ := evidence.Canonical(toAny(want))
			if !bytes.Equal(a, w) {
				t.Fatal("decode differs from the whole-buffer decode")
			}
		})
	}
	if _, ok := want.Table(table.CPUFrames.Name).Summary.Metrics["sampled_duration"]; !ok {
		t.Error("no sampled_duration metric")
	}
	t.Run("read-error", func(t *testing.T) {
		_, err := decodeReader(t, io.MultiReader(bytes.NewReader(b[:100]), iotest.ErrReader(errors.New("disk gone"))), int64(len(b)), nil)
		if err == nil || !strings.Contains(err.Error(), "disk gone") {
			t.Fatalf("want the read error, got %v", err)
		}
	})
}

func toAny(m *formatstest.Sink) []any {
	var out []any
	for _, t := range m.Tables {
		rows := make([]any, len(t.Rows))
		for i, r := range t.Rows {
			rows[i] = r
		}
		out = append(out, t.Header.Name, rows, t.Summary.CanonicalValue())
	}
	return out
}

func TestMalformed(t *testing.T) {
	good := `{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2]},{"id":2,"callFrame":{"functionName":"f","scriptId":"1","url":"a.js","lineNumber":0,"columnNumber":0}}],"samples":[2,2,1],"timeDeltas":[1,1,1]}`
	if _, err := decodeBytes(t, []byte(good)); err != nil {
		t.Fatalf("baseline: %v", err)
	}
	cases := []struct{ name, doc, want string }{
		{"empty", ``, "empty input"},
		{"truncated", good[:len(good)/2], "unexpected end"},
		{"not an object", `[1,2]`, "JSON object"},
		{"no nodes", `{"samples":[]}`, "no nodes"},
		{"no samples", strings.Replace(good, `"samples":[2,2,1],"timeDeltas":[1,1,1]`, `"x":1`, 1), "no samples"},
		{"unresolved sample", strings.Replace(good, `[2,2,1]`, `[2,9,1]`, 1), "node 9"},
		{"unresolved child", strings.Replace(good, `"children":[2]`, `"children":[2,7]`, 1), "child 7"},
		{"children not an array", strings.Replace(good, `"children":[2]`, `"children":{"0":2}`, 1), "children must be an array"},
		{"child not an id", strings.Replace(good, `"children":[2]`, `"children":["2"]`, 1), "must be an integer"},
		{"duplicate field", strings.Replace(good, `"id":2,`, `"id":2,"id":3,`, 1), "duplicate"},
		{"duplicate callFrame field", strings.Replace(good, `"url":"a.js"`, `"url":"a.js","url":"b.js"`, 1), "duplicate"},
		{"duplicate node id", strings.Replace(good, `"id":2,`, `"id":1,`, 1), "appears twice"},
		{"own child", strings.Replace(good, `"lineNumber":0,"columnNumber":0}}`, `"lineNumber":0,"columnNumber":0},"children":[2]}`, 1), "two parents"},
		{"two parents", strings.Replace(good, `"children":[2]}`, `"children":[2]},{"id":3,"callFrame":{"functionName":"g"},"children":[2]}`, 1), "two parents"},
		{"delta count", strings.Replace(good, `[1,1,1]`, `[1,1]`, 1), "timeDeltas"},
		{"dotted key is not a node", strings.Replace(good, `"samples":[2,2,1]`, `"samples.0":9,"samples":[2,2,1]`, 1), ""},
		{"trailing garbage", good + `{}`, "after top-level"},
		{"float id", strings.Replace(good, `"id":2,`, `"id":2.5,`, 1), "integer"},
		{"heap profile", `{"head":{"callFrame":{}}}`, "no nodes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeBytes(t, []byte(c.doc))
			if c.want == "" {
				if err != nil {
					t.Fatalf("want success, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want error containing %q, got %v", c.want, err)
			}
		})
	}
}

func TestCycleAndLimits(t *testing.T) {
	cycle := `{"nodes":[{"id":1,"callFrame":{"functionName":"a"},"children":[2]},{"id":2,"callFrame":{"functionName":"b"},"children":[1]}],"samples":[]}`
	if _, err := decodeBytes(t, []byte(cycle)); err == nil || !strings.Contains(err.Error(), "two parents") && !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("cycle accepted: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(testdata, "hotspot.cpuprofile"))
	for _, c := range []struct {
		limit    string
		value    int64
		observed any
	}{{LimitNodes, 3, nil}, {LimitSamples, 5, nil}, {formats.LimitBytes, 100, int64(len(b))}} {
		var read int64
		counted := readFunc(func(p []byte) (int, error) {
			n, err := bytes.NewReader(b[read:]).Read(p)
			read += int64(n)
			return n, err
		})
		_, err := decodeReader(t, counted, int64(len(b)), map[string]int64{c.limit: c.value})
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeLimitExceeded {
			t.Fatalf("%s=%d: want LIMIT_EXCEEDED, got %v", c.limit, c.value, err)
		}
		// The one receipt shape every limit failure carries.
		want := evidence.Object{"name": c.limit, "value": c.value, "observed": c.observed, "unit": limitUnit(c.limit)}
		if got := f.Details["limit"]; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: details.limit = %v, want %v", c.limit, got, want)
		}
		// The size ceiling holds before the first byte is read.
		if c.limit == formats.LimitBytes && read != 0 {
			t.Errorf("max_bytes: %d bytes read before failing", read)
		}
	}
	// A limit equal to the file size is not exceeded.
	if _, err := decodeReader(t, bytes.NewReader(b), int64(len(b)), map[string]int64{formats.LimitBytes: int64(len(b))}); err != nil {
		t.Errorf("max_bytes = size: %v", err)
	}
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

func limitUnit(name string) string {
	l, _ := Spec.Limit(name)
	return l.Unit
}

// A sink that declines cpu.edges gets no edge rows, and the same frames.
func TestDeclinedEdges(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testdata, "recursive-main.cpuprofile"))
	if err != nil {
		t.Fatal(err)
	}
	all, err := decodeBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	in := formatstest.MustInput(t, Spec, &evidence.Artifact{Path: "/virtual/x.cpuprofile", Size: int64(len(b))}, bytes.NewReader(b), nil)
	framesOnly := &formatstest.Sink{Only: []string{table.CPUFrames.Name}}
	if err := Spec.Decoder.Decode(context.Background(), in, framesOnly); err != nil {
		t.Fatal(err)
	}
	if len(framesOnly.Tables) != 1 || framesOnly.Tables[0].Header.Name != table.CPUFrames.Name {
		t.Fatalf("tables %d, want cpu.frames only", len(framesOnly.Tables))
	}
	a, _ := evidence.Canonical(toAny(framesOnly))
	w, _ := evidence.Canonical(toAny(all)[:3])
	if !bytes.Equal(a, w) {
		t.Fatal("frames differ when edges are declined")
	}
	if len(all.Table(table.CPUEdges.Name).Rows) == 0 {
		t.Fatal("the fixture has no edges: the test proves nothing")
	}
}

func TestSniff(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join(testdata, "hotspot.cpuprofile"))
	if sniff(b[:min(len(b), formats.SniffBytes)]) != formats.Yes {
		t.Error("real profile not recognized")
	}
	heap, err := os.ReadFile(filepath.Join(testdata, "node-10.11.0-Heap-20181003T105432.heapprofile"))
	if err != nil {
		t.Fatal(err)
	}
	if sniff(heap[:min(len(heap), formats.SniffBytes)]) == formats.Yes {
		t.Error("heap profile taken for a CPU profile")
	}
	if sniff([]byte(`[{"name":"x"}]`)) != formats.No {
		t.Error("array taken for a profile")
	}
}

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"chrome-65-simple.cpuprofile", "hotspot.cpuprofile"} {
		b, err := os.ReadFile(filepath.Join(testdata, name))
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"nodes":[{"id":1,"callFrame":{"functionName":"a"},"parent":2},{"id":2,"callFrame":{}}],"samples":[1]}`))
	f.Add([]byte(`{"nodes":[{"id":1,"callFrame":{"functionName":"a"},"positionTicks":[{"line":3,"ticks":1},{"line":0,"ticks":2}],"children":[2]},{"id":2,"callFrame":{},"positionTicks":[{"line":1,"ticks":9}]}],"samples":[1,2,2]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		sink, err := decodeReader(t, bytes.NewReader(b), int64(len(b)), map[string]int64{LimitNodes: 10000})
		if err != nil {
			var se interface{ Error() string }
			if !errors.As(err, &se) {
				t.Fatal("untyped error")
			}
			return
		}
		frames := sink.Table(table.CPUFrames.Name)
		if frames == nil || frames.Summary == nil {
			t.Fatal("success without a frames table and summary")
		}
		var sum int64
		for _, r := range frames.Rows {
			n, _ := evidence.AsInt(r["self_weight"])
			sum += n
		}
		if sum != frames.Summary.Metrics[table.MetricSamples].Value.(int64) {
			t.Fatalf("self weights %d do not add up to the samples", sum)
		}
		// The lines split the same samples: they add up to them too.
		lines := sink.Table(table.CPULines.Name)
		if lines == nil || lines.Summary == nil {
			t.Fatal("success without a lines table and summary")
		}
		var lsum int64
		for _, r := range lines.Rows {
			n, _ := evidence.AsInt(r["self_weight"])
			lsum += n
		}
		if lsum != sum {
			t.Fatalf("line weights %d, frame self weights %d", lsum, sum)
		}
	})
}

// BenchmarkDecode decodes a profile built from a real one with its sample
// sequence repeated to about 8 MiB.
func BenchmarkDecode(b *testing.B) {
	seed, err := os.ReadFile(filepath.Join(testdata, "recursive-worker.cpuprofile"))
	if err != nil {
		b.Fatal(err)
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(seed, &p); err != nil {
		b.Fatal(err)
	}
	samples := bytes.Trim(p["samples"], "[]")
	deltas := bytes.Trim(p["timeDeltas"], "[]")
	var doc bytes.Buffer
	fmt.Fprintf(&doc, `{"nodes":%s,"samples":[%s`, p["nodes"], samples)
	n := 1
	for doc.Len() < 4<<20 {
		doc.WriteByte(',')
		doc.Write(samples)
		n++
	}
	doc.WriteString(`],"timeDeltas":[`)
	doc.Write(deltas)
	for range n - 1 {
		doc.WriteByte(',')
		doc.Write(deltas)
	}
	doc.WriteString("]}")
	data := doc.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeReader(b, bytes.NewReader(data), int64(len(data)), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// inclusive_weight counts each sample once per frame on its stack (pprof's
// cum) and inclusive_occurrence_weight keeps the call tree's occurrence
// sum; both checked per frame against fib.cum.json, which node computed
// from the samples alone (testdata/v8/cum.js).
func TestInclusiveOncePerSample(t *testing.T) {
	var ref struct {
		Samples int64
		Frames  []struct {
			Function, URL          string
			Line, Column           int64
			Self, Cum, Occurrences int64
		}
	}
	if err := json.Unmarshal(formatstest.Read(t, "v8/fib.cum.json"), &ref); err != nil {
		t.Fatal(err)
	}
	sink, err := decodeBytes(t, formatstest.Read(t, "v8/fib.cpuprofile"))
	if err != nil {
		t.Fatal(err)
	}
	rows := sink.Table(table.CPUFrames.Name).Rows
	if len(rows) != len(ref.Frames) {
		t.Fatalf("%d frames, reference %d", len(rows), len(ref.Frames))
	}
	for _, f := range ref.Frames {
		var row evidence.Object
		for _, r := range rows {
			file, _ := r["file"].(string)
			if r["function"] == f.Function && file == f.URL && r["line"] == f.Line && r["column"] == f.Column {
				row = r
			}
		}
		if row == nil {
			t.Fatalf("no row for %+v", f)
		}
		self, _ := evidence.AsInt(row["self_weight"])
		incl, _ := evidence.AsInt(row["inclusive_weight"])
		occ, _ := evidence.AsInt(row["inclusive_occurrence_weight"])
		if self != f.Self || incl != f.Cum || occ != f.Occurrences {
			t.Errorf("%s:%d:%d self/inclusive/occurrence %d/%d/%d, reference %d/%d/%d", f.Function, f.Line, f.Column, self, incl, occ, f.Self, f.Cum, f.Occurrences)
		}
		if incl > ref.Samples {
			t.Errorf("%s inclusive %d exceeds the %d samples", f.Function, incl, ref.Samples)
		}
	}
	// An edge's weight counts a sample once too, however often the pair
	// recurs on its stack.
	for _, e := range sink.Table(table.CPUEdges.Name).Rows {
		if w, _ := evidence.AsInt(e["weight"]); w > ref.Samples {
			t.Errorf("edge %s→%s weight %d exceeds the %d samples", e["caller_function"], e["callee_function"], w, ref.Samples)
		}
	}
}

// timeDeltas: a sum that overflows int64 is a located DECODE_FAILURE, not
// a wrapped duration; negative deltas (V8 writes samples slightly out of
// time order) are the format's own and keep the net duration, said in the
// summary; a sample before startTime is malformed.
func TestTimeDeltas(t *testing.T) {
	doc := func(deltas string) []byte {
		return []byte(`{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2]},` +
			`{"id":2,"callFrame":{"functionName":"f","scriptId":"1","url":"a.js","lineNumber":0,"columnNumber":0}}],` +
			`"startTime":0,"endTime":100,"samples":[2,2,2],"timeDeltas":` + deltas + `}`)
	}
	for _, deltas := range []string{`[1,9223372036854775807,1]`, `[5,-9,1]`} {
		b := doc(deltas)
		_, err := formatstest.Run(t, Spec, "x.cpuprofile", b, nil, nil)
		if err == nil {
			t.Fatalf("%s decoded", deltas)
		}
		f := evidence.AsFailure(err, evidence.CodeInternal)
		if evidence.CodeOf(err) != evidence.CodeDecodeFailure || f.Location.Offset <= int64(bytes.Index(b, []byte(`"timeDeltas"`))) {
			t.Fatalf("%s: %v (location %+v)", deltas, err, f.Location)
		}
	}
	// profile_duration = endTime - startTime must not wrap either.
	for _, times := range [][2]string{{"-9223372036854775807", "9223372036854775807"}, {"100", "50"}} {
		b := bytes.Replace(doc(`[1,1,1]`), []byte(`"startTime":0,"endTime":100`), []byte(`"startTime":`+times[0]+`,"endTime":`+times[1]), 1)
		_, err := formatstest.Run(t, Spec, "x.cpuprofile", b, nil, nil)
		if f := evidence.AsFailure(err, evidence.CodeInternal); f == nil || f.Code != evidence.CodeDecodeFailure || f.Location.Field != "endTime" {
			t.Fatalf("start %s end %s: %v", times[0], times[1], err)
		}
	}
	sink, err := formatstest.Run(t, Spec, "x.cpuprofile", doc(`[10,-3,5]`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := sink.Table(table.CPUFrames.Name).Summary
	d, _ := evidence.AsFloat(s.Metrics["sampled_duration"].Value)
	neg, _ := evidence.AsInt(s.Metrics["negative_time_deltas"].Value)
	if d != 12e-6 || neg != 1 || !s.Complete || !slices.ContainsFunc(s.Limitations, func(l string) bool { return strings.Contains(l, "negative") }) {
		t.Fatalf("summary %+v", s)
	}
}

// cpu.lines equals, per (function, url, line), the positionTicks counted
// by an independent Python script from the JSON alone (testdata/v8/
// lines.py, in lines.ref.json), with the samples its ticks do not cover
// as line -1; the rows add up to the samples, and the header says the
// lines are 1-based sampled lines.
func TestLinesEqualPositionTicks(t *testing.T) {
	var ref map[string]struct {
		Samples int64
		Lines   []struct {
			Function, URL string
			Line, Weight  int64
		}
	}
	if err := json.Unmarshal(formatstest.Read(t, "v8/lines.ref.json"), &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref) < 7 {
		t.Fatalf("reference covers %d profiles", len(ref))
	}
	for name, want := range ref {
		path := "v8/" + name
		if strings.HasPrefix(name, "base.") || strings.HasPrefix(name, "slow.") {
			path = "diff/" + name
		}
		sink, err := decodeBytes(t, formatstest.Read(t, path))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lt := sink.Table(table.CPULines.Name)
		if lt == nil || lt.Summary == nil {
			t.Fatalf("%s: no cpu.lines table", name)
		}
		if !table.SampledLines(lt.Header) {
			t.Errorf("%s: the header does not say its lines are sampled", name)
		}
		if c, _ := lt.Header.Column("line"); !strings.HasPrefix(c.Description, "1-based") {
			t.Errorf("%s: line column %q", name, c.Description)
		}
		type key struct {
			fn, url string
			line    int64
		}
		got := map[key]int64{}
		var sum int64
		for _, r := range lt.Rows {
			file, _ := r["file"].(string)
			line, _ := evidence.AsInt(r["line"])
			w, _ := evidence.AsInt(r["self_weight"])
			incl, _ := evidence.AsInt(r["inclusive_weight"])
			if incl != w {
				t.Errorf("%s: row %v inclusive %d, self %d", name, r["frame_id"], incl, w)
			}
			got[key{r["function"].(string), file, line}] += w
			sum += w
		}
		if sum != want.Samples {
			t.Errorf("%s: lines weigh %d samples, the profile has %d", name, sum, want.Samples)
		}
		if len(got) != len(want.Lines) {
			t.Errorf("%s: %d lines, reference %d", name, len(got), len(want.Lines))
		}
		for _, l := range want.Lines {
			if g := got[key{l.Function, l.URL, l.Line}]; g != l.Weight {
				t.Errorf("%s: %s %s:%d weighs %d, reference %d", name, l.Function, l.URL, l.Line, g, l.Weight)
			}
		}
	}
}

// positionTicks that are not a tick list, or negative, are typed
// failures at their offset; a line below 1 and a node whose ticks exceed
// its samples are kept as line -1 and stated.
func TestLinesEdges(t *testing.T) {
	for _, bad := range []string{
		`{"nodes":[{"id":1,"callFrame":{},"positionTicks":[{"line":1,"ticks":-1}]}],"samples":[1]}`,
		`{"nodes":[{"id":1,"callFrame":{},"positionTicks":[3]}],"samples":[1]}`,
		`{"nodes":[{"id":1,"callFrame":{},"positionTicks":{"line":1}}],"samples":[1]}`,
	} {
		if _, err := decodeBytes(t, []byte(bad)); err == nil || !strings.Contains(err.Error(), "positionTicks") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	b := `{"nodes":[{"id":1,"callFrame":{"functionName":"a"},"positionTicks":[{"line":0,"ticks":1},{"line":4,"ticks":1}],"children":[2]},` +
		`{"id":2,"callFrame":{"functionName":"b"},"positionTicks":[{"line":7,"ticks":5}]}],"samples":[1,1,2,2]}`
	sink, err := decodeBytes(t, []byte(b))
	if err != nil {
		t.Fatal(err)
	}
	lt := sink.Table(table.CPULines.Name)
	var rows []string
	for _, r := range lt.Rows {
		rows = append(rows, fmt.Sprintf("%s:%v=%v", r["function"], r["line"], r["self_weight"]))
	}
	if got, want := strings.Join(rows, " "), "a:4=1 a:-1=1 b:-1=2"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
	m := lt.Summary.Metrics
	if m["line_unknown_weight"].Value != int64(3) || m["position_ticks_over_samples_nodes"].Value != int64(1) {
		t.Errorf("metrics %v", m)
	}
	if !slices.ContainsFunc(lt.Summary.Limitations, func(l string) bool { return strings.Contains(l, "more positionTicks than samples") }) {
		t.Errorf("limitations %q", lt.Summary.Limitations)
	}
}
