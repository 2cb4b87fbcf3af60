package speedscope

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/wire"
)

type capture = formatstest.Sink

const testdata = "../../../testdata/speedscope"

// input is the decoder input for a file of size bytes, with limits over
// the spec's defaults.
func input(t testing.TB, size int, over map[string]int64) *formats.Input {
	in, err := formatstest.Input(Spec, &evidence.Artifact{Path: "/virtual/x.speedscope.json", Size: int64(size)}, nil, over, nil)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func verified() error { return nil }

// decodeBytes decodes b, each section reader wrapped by wrap.
func decodeBytes(t testing.TB, b []byte, over map[string]int64, wrap func(io.Reader) io.Reader) (*capture, error) {
	ra := bytes.NewReader(b)
	open := func(off int64) io.Reader { return wrap(io.NewSectionReader(ra, off, int64(len(b))-off)) }
	// The tables these tests check; cpu.stacks has its own test.
	c := &capture{Only: []string{table.CPUFrames.Name, table.CPUEdges.Name}}
	return c, decodeFrom(context.Background(), input(t, len(b), over), open, verified, c)
}

func plain(r io.Reader) io.Reader { return r }

func decodeString(t testing.TB, s string, over map[string]int64) (*capture, error) {
	return decodeBytes(t, []byte(s), over, plain)
}

func readFile(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join(testdata, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func validFixtures(t testing.TB) []string {
	paths, _ := filepath.Glob(filepath.Join(testdata, "*.json"))
	var out []string
	for _, p := range paths {
		if !strings.HasPrefix(filepath.Base(p), "invalid-") {
			out = append(out, filepath.Base(p))
		}
	}
	if len(out) < 5 {
		t.Fatalf("fixtures missing in %s", testdata)
	}
	return out
}

func float(t *testing.T, v any) float64 {
	t.Helper()
	f, ok := evidence.AsFloat(v)
	if !ok {
		t.Fatalf("%v is not a double", v)
	}
	return f
}

func close(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// key of a frame row: its series and frame.
func rowKey(r evidence.Object) string { return fmt.Sprint(r["thread"], "|", r["frame_id"]) }

func edgeKeyOf(r evidence.Object) string {
	return fmt.Sprint(r["thread"], "|", r["caller_id"], ">", r["callee_id"])
}

// naive recomputes frames and edges from the whole document held in
// memory, stack by stack, without a trie: an independent oracle for the
// streaming decoder. Weights are in each profile's native unit.
type naiveAgg struct {
	self, incl map[string]float64
	eWeight    map[string]float64
	eSelf      map[string]float64
	calls      map[string]int64
	total      map[string]float64 // per thread
	unit       map[string]string  // per thread
}

func naive(t *testing.T, b []byte) naiveAgg {
	var doc struct {
		Shared   struct{ Frames []json.RawMessage }
		Profiles []struct {
			Type, Name, Unit string
			Samples          [][]int
			Weights          []float64
			Events           []struct {
				Type  string
				Frame int
				At    float64
			}
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	n := naiveAgg{map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]int64{}, map[string]float64{}, map[string]string{}}
	names := map[string]int{}
	for _, p := range doc.Profiles {
		names[p.Name]++
	}
	add := func(thread string, stack []int, w float64) {
		seen := map[int]bool{}
		seenE := map[[2]int]bool{}
		for i, f := range stack {
			k := fmt.Sprint(thread, "|", f)
			if !seen[f] {
				n.incl[k] += w
				seen[f] = true
			}
			if i > 0 {
				e := [2]int{stack[i-1], f}
				ek := fmt.Sprint(thread, "|", e[0], ">", e[1])
				if !seenE[e] {
					n.eWeight[ek] += w
					seenE[e] = true
				}
				if i == len(stack)-1 {
					n.eSelf[ek] += w
				}
			}
		}
		if len(stack) > 0 {
			n.self[fmt.Sprint(thread, "|", stack[len(stack)-1])] += w
		}
		n.total[thread] += w
	}
	for i, p := range doc.Profiles {
		thread := p.Name
		if names[p.Name] > 1 {
			thread = fmt.Sprintf("%s (profile %d)", p.Name, i)
		}
		n.unit[thread] = p.Unit
		n.total[thread] += 0
		if p.Type == "sampled" {
			for j, s := range p.Samples {
				add(thread, s, p.Weights[j])
			}
			continue
		}
		var stack []int
		last := 0.0
		for _, e := range p.Events {
			if len(stack) > 0 {
				add(thread, stack, e.At-last)
			}
			last = e.At
			if e.Type == "O" {
				stack = append(stack, e.Frame)
				n.calls[fmt.Sprint(thread, "|", e.Frame)]++
			} else {
				stack = stack[:len(stack)-1]
			}
		}
	}
	return n
}

var factors = map[string]float64{"seconds": 1, "milliseconds": 1e-3, "microseconds": 1e-6, "nanoseconds": 1e-9, "none": 1, "bytes": 1}

// TestAgainstNaiveOracle checks every valid fixture against a whole-file,
// stack-by-stack recomputation: every frame and edge row, and the totals.
func TestAgainstNaiveOracle(t *testing.T) {
	for _, name := range validFixtures(t) {
		t.Run(name, func(t *testing.T) {
			b := readFile(t, name)
			c, err := decodeBytes(t, b, nil, plain)
			if err != nil {
				t.Fatal(err)
			}
			want := naive(t, b)
			seen := map[string]bool{}
			for _, tb := range c.Named(table.CPUFrames.Name) {
				for _, r := range tb.Rows {
					k := rowKey(r)
					if seen[k] {
						t.Fatalf("frame %s twice", k)
					}
					seen[k] = true
					f := factors[want.unit[r["thread"].(string)]]
					if !close(float(t, r["self_weight"]), want.self[k]*f) || !close(float(t, r["inclusive_weight"]), want.incl[k]*f) {
						t.Errorf("%s: self %v incl %v, want %v %v", k, r["self_weight"], r["inclusive_weight"], want.self[k]*f, want.incl[k]*f)
					}
					if c, ok := want.calls[k]; ok && r["calls"] != c {
						t.Errorf("%s: calls %v, want %d", k, r["calls"], c)
					}
				}
			}
			if len(seen) != len(want.incl) {
				t.Errorf("%d frame rows, want %d", len(seen), len(want.incl))
			}
			edges := 0
			for _, tb := range c.Named(table.CPUEdges.Name) {
				for _, r := range tb.Rows {
					k := edgeKeyOf(r)
					f := factors[want.unit[r["thread"].(string)]]
					if !close(float(t, r["weight"]), want.eWeight[k]*f) || !close(float(t, r["self_weight"]), want.eSelf[k]*f) {
						t.Errorf("edge %s: %v %v, want %v %v", k, r["weight"], r["self_weight"], want.eWeight[k]*f, want.eSelf[k]*f)
					}
					edges++
				}
			}
			if edges != len(want.eWeight) {
				t.Errorf("%d edge rows, want %d", edges, len(want.eWeight))
			}
			var total float64
			for _, tb := range c.Named(table.CPUFrames.Name) {
				total += float(t, tb.Summary.Metrics[table.MetricTotalWeight].Value)
			}
			var wantTotal float64
			for th, w := range want.total {
				wantTotal += w * factors[want.unit[th]]
			}
			if !close(total, wantTotal) {
				t.Errorf("total_weight %v, want %v", total, wantTotal)
			}
		})
	}
}

func TestKnownValues(t *testing.T) {
	type fr struct {
		self, incl float64
		calls      any
	}
	cases := []struct {
		file   string
		unit   string
		frames map[string]fr // thread|frame → values
		total  float64
	}{
		{"simple.speedscope.json", "samples", map[string]fr{
			"simple.txt|0": {0, 14, int64(1)}, "simple.txt|1": {5, 14, int64(1)},
			"simple.txt|2": {5, 5, int64(2)}, "simple.txt|3": {4, 4, int64(1)},
		}, 14},
		{"simple-sampled.speedscope.json", "s", map[string]fr{
			"simple.speedscope.json|0": {0, 14, nil}, "simple.speedscope.json|1": {5, 14, nil},
			"simple.speedscope.json|2": {5, 5, nil}, "simple.speedscope.json|3": {4, 4, nil},
		}, 14},
		{"two-sampled.speedscope.json", "s", map[string]fr{
			"one|2": {5, 5, nil}, "two|2": {5, 5, nil}, "one|0": {0, 14, nil}, "two|3": {4, 4, nil},
		}, 28},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got, err := decodeBytes(t, readFile(t, c.file), nil, plain)
			if err != nil {
				t.Fatal(err)
			}
			frames := got.Named(table.CPUFrames.Name)
			if len(frames) != 1 {
				t.Fatalf("%d frame tables", len(frames))
			}
			if col, _ := frames[0].Header.Column("self_weight"); col.Unit != c.unit {
				t.Fatalf("unit %q, want %q", col.Unit, c.unit)
			}
			rows := map[string]evidence.Object{}
			for _, r := range frames[0].Rows {
				rows[rowKey(r)] = r
			}
			for k, w := range c.frames {
				r := rows[k]
				if r == nil {
					t.Fatalf("no row %s", k)
				}
				if float(t, r["self_weight"]) != w.self || float(t, r["inclusive_weight"]) != w.incl || r["calls"] != w.calls {
					t.Errorf("%s: %v", k, r)
				}
			}
			if m := frames[0].Summary.Metrics[table.MetricTotalWeight]; float(t, m.Value) != c.total || m.Unit != c.unit {
				t.Errorf("total %v", m)
			}
		})
	}
}

// Profiles with time and byte units go to separate tables; milliseconds
// normalize to seconds beside a seconds profile.
func TestMixedUnits(t *testing.T) {
	c, err := decodeBytes(t, readFile(t, "mixed-units.speedscope.json"), nil, plain)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, tb := range c.Tables {
		col, _ := tb.Header.Column("self_weight")
		order = append(order, tb.Header.Name+":"+col.Unit)
		if !slices.Contains(tb.Summary.Limitations, "the file's profiles use units of different dimensions; each dimension has its own table and they are never pooled") {
			t.Errorf("%s lacks the split limitation", tb.Header.Name)
		}
	}
	if want := []string{"cpu.frames:s", "cpu.edges:s", "cpu.frames:bytes", "cpu.edges:bytes"}; !slices.Equal(order, want) {
		t.Fatalf("tables %v, want %v", order, want)
	}
	secs, byts := c.Tables[0], c.Tables[2]
	if m := secs.Summary.Metrics[table.MetricTotalWeight]; float(t, m.Value) != 3+10*1e-3 || m.Unit != "s" {
		t.Errorf("seconds total %v", m)
	}
	if m := byts.Summary.Metrics[table.MetricTotalWeight]; float(t, m.Value) != 4096 || m.Unit != "bytes" {
		t.Errorf("bytes total %v", m)
	}
	for _, r := range secs.Rows {
		if r["thread"] == "trace-ms" && r["frame_id"] == "2" {
			if float(t, r["self_weight"]) != 4*1e-3 || r["calls"] != int64(1) || r["primitive_calls"] != int64(1) {
				t.Errorf("trace-ms work: %v", r)
			}
		}
		if r["frame_id"] == "1" {
			t.Errorf("bytes frame in the seconds table: %v", r)
		}
	}
	alloc := map[string]evidence.Object{}
	for _, r := range c.Tables[3].Rows {
		alloc[edgeKeyOf(r)] = r
	}
	if e := alloc["heap|1>1"]; e == nil || float(t, e["weight"]) != 3072 || e["calls"] != nil {
		t.Errorf("recursive alloc edge: %v", e)
	}
	if e := alloc["heap|0>1"]; e == nil || float(t, e["weight"]) != 4096 || float(t, e["self_weight"]) != 1024 {
		t.Errorf("main→alloc edge: %v", e)
	}
	for _, r := range byts.Rows {
		if r["frame_id"] == "1" && (r["line"] != int64(7) || r["column"] != int64(3) || r["file"] != "app.py") {
			t.Errorf("alloc frame coordinates: %v", r)
		}
	}
}

// py-spy output: one profile per thread, never blended, thread column =
// profile name; empty stacks are counted.
func TestPySpyThreads(t *testing.T) {
	for _, name := range []string{"pyspy-threads.speedscope.json", "cs336-bpe-py-spy-0.4.2.speedscope.json"} {
		t.Run(name, func(t *testing.T) {
			b := readFile(t, name)
			c, err := decodeBytes(t, b, nil, plain)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Profiles []struct {
					Name    string
					Samples [][]int
					Weights []float64
				}
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			frames := c.Named(table.CPUFrames.Name)
			if len(frames) != 1 {
				t.Fatalf("%d frame tables", len(frames))
			}
			threads := map[any]bool{}
			for _, r := range frames[0].Rows {
				threads[r["thread"]] = true
				if r["calls"] != nil {
					t.Fatalf("sampled frame with calls: %v", r)
				}
			}
			var samples int64
			for _, p := range doc.Profiles {
				if !threads[p.Name] {
					t.Errorf("thread %q has no rows", p.Name)
				}
				samples += int64(len(p.Samples))
			}
			if len(threads) != len(doc.Profiles) || len(doc.Profiles) < 2 {
				t.Errorf("%d threads for %d profiles", len(threads), len(doc.Profiles))
			}
			if got := frames[0].Summary.Metrics[table.MetricSamples].Value; got != samples {
				t.Errorf("samples %v, want %d", got, samples)
			}
			cov := frames[0].Summary.Coverage
			if cov["exporter"] != "py-spy@0.4.2" {
				t.Errorf("exporter %v", cov["exporter"])
			}
			for i, p := range cov["profiles"].([]any) {
				var sum float64
				for _, w := range doc.Profiles[i].Weights {
					sum += w
				}
				if got := p.(evidence.Object)["total_weight"]; got != sum {
					t.Errorf("profile %d total %v, want %v (summed in sample order)", i, got, sum)
				}
			}
		})
	}
	t.Run("hot function per thread", func(t *testing.T) {
		c, err := decodeBytes(t, readFile(t, "pyspy-threads.speedscope.json"), nil, plain)
		if err != nil {
			t.Fatal(err)
		}
		top := map[any]evidence.Object{}
		for _, r := range c.Named(table.CPUFrames.Name)[0].Rows {
			if cur := top[r["thread"]]; cur == nil || float(t, r["self_weight"]) > float(t, cur["self_weight"]) {
				top[r["thread"]] = r
			}
		}
		var hot []string
		for _, r := range top {
			hot = append(hot, r["function"].(string))
		}
		slices.Sort(hot)
		if !slices.Contains(hot, "crunch") || !slices.Contains(hot, "fib") {
			t.Fatalf("hottest functions per thread %v, want crunch and fib in separate threads", hot)
		}
	})
}

func TestReaders(t *testing.T) {
	b := readFile(t, "pyspy-threads.speedscope.json")
	want, err := decodeBytes(t, b, nil, plain)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := evidence.Canonical(want.Tables[1].Rows)
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+err": iotest.DataErrReader,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := decodeBytes(t, b, nil, wrap)
			if err != nil {
				t.Fatal(err)
			}
			if j, _ := evidence.Canonical(got.Tables[1].Rows); !bytes.Equal(j, wantJSON) {
				t.Fatal("edges differ from a plain read")
			}
		})
	}
	t.Run("read error", func(t *testing.T) {
		boom := func(r io.Reader) io.Reader {
			return io.MultiReader(io.LimitReader(r, 300), iotest.ErrReader(errors.New("disk on fire")))
		}
		_, err := decodeBytes(t, b, nil, boom)
		assertCode(t, err, evidence.CodeIOFailure)
	})
}

// Through formats.Run: the decoder verifies the file and reads it at
// random; the runner accepts that.
func TestRun(t *testing.T) {
	art, err := formats.ArtifactFromPath(filepath.Join(testdata, "pyspy-threads.speedscope.json"), "explicit")
	if err != nil {
		t.Fatal(err)
	}
	lims, err := formats.EffectiveLimits(Spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	if err := formats.Run(context.Background(), Spec, art, lims, nil, &formats.StreamSink{W: w, Stamper: formats.Stamper{Spec: Spec, Artifact: art}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `"kind":"summary"`); n != 3 { // frames, edges, stacks
		t.Fatalf("%d summaries", n)
	}
	// A file that changed after its artifact was recorded is refused.
	tmp := filepath.Join(t.TempDir(), "x.speedscope.json")
	if err := os.WriteFile(tmp, readFile(t, "simple.speedscope.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	art, _ = formats.ArtifactFromPath(tmp, "explicit")
	if err := os.WriteFile(tmp, readFile(t, "simple-sampled.speedscope.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = formats.Run(context.Background(), Spec, art, lims, nil, &formats.StreamSink{W: wire.NewWriter(io.Discard), Stamper: formats.Stamper{Spec: Spec, Artifact: art}})
	assertCode(t, err, evidence.CodeIntegrity)
}

func assertCode(t *testing.T, err error, code evidence.Code) {
	t.Helper()
	var f *evidence.Failure
	if !errors.As(err, &f) {
		t.Fatalf("got %v (%T), want a %s failure", err, err, code)
	}
	if f.Code != code {
		t.Fatalf("got %s (%v), want %s", f.Code, f, code)
	}
}

// assertReceipt checks the one receipt shape of a limit failure: the
// limit that was set (or the decoder's own nesting bound), its value and
// unit.
func assertReceipt(t *testing.T, err error, set map[string]int64) {
	t.Helper()
	var f *evidence.Failure
	errors.As(err, &f)
	r, ok := f.Details["limit"].(evidence.Object)
	if !ok || len(r) != 4 {
		t.Fatalf("details.limit = %v, want {name, value, observed, unit}", f.Details["limit"])
	}
	for name, v := range set {
		l, _ := Spec.Limit(name)
		if r["name"] != name || r["value"] != v || r["unit"] != l.Unit {
			t.Fatalf("receipt %v, want %s=%d %s", r, name, v, l.Unit)
		}
		return
	}
	if r["name"] != "json_nesting" || r["value"] != int64(maxNesting) {
		t.Fatalf("receipt %v, want the nesting bound", r)
	}
}

// A sink that declines cpu.edges gets none, and the same frames.
func TestDeclinedEdges(t *testing.T) {
	for _, name := range []string{"pyspy-threads.speedscope.json", "mixed-units.speedscope.json"} {
		b := readFile(t, name)
		all, err := decodeBytes(t, b, nil, plain)
		if err != nil {
			t.Fatal(err)
		}
		ra := bytes.NewReader(b)
		open := func(off int64) io.Reader { return io.NewSectionReader(ra, off, int64(len(b))-off) }
		only := &capture{Only: []string{table.CPUFrames.Name}}
		if err := decodeFrom(context.Background(), input(t, len(b), nil), open, verified, only); err != nil {
			t.Fatal(err)
		}
		want := all.Named(table.CPUFrames.Name)
		if len(only.Tables) != len(want) || len(all.Named(table.CPUEdges.Name)) == 0 {
			t.Fatalf("%s: %d tables, want the %d frame tables only", name, len(only.Tables), len(want))
		}
		for i, tb := range only.Tables {
			a, _ := evidence.Canonical([]any{tb.Header.CanonicalValue(), tb.Rows, tb.Summary.CanonicalValue()})
			w, _ := evidence.Canonical([]any{want[i].Header.CanonicalValue(), want[i].Rows, want[i].Summary.CanonicalValue()})
			if !bytes.Equal(a, w) {
				t.Fatalf("%s: frame table %d differs when edges are declined", name, i)
			}
		}
	}
}

// doc builds a small document around profiles and frames JSON.
func doc(frames, profiles string) string {
	return `{"$schema":"` + SchemaURL + `","shared":{"frames":` + frames + `},"profiles":` + profiles + `}`
}

const twoFrames = `[{"name":"a"},{"name":"b"}]`

func sampled(samples, weights string) string {
	return `[{"type":"sampled","name":"p","unit":"seconds","startValue":0,"endValue":1,"samples":` + samples + `,"weights":` + weights + `}]`
}

func evented(events string) string {
	return `[{"type":"evented","name":"p","unit":"none","startValue":0,"endValue":9,"events":` + events + `}]`
}

func TestHostile(t *testing.T) {
	cases := []struct {
		name   string
		data   string
		limits map[string]int64
		code   evidence.Code
		msg    string
	}{
		{"fixture: incomplete trace", string(readFile(t, "invalid-incomplete-trace.json")), nil, evidence.CodeDecodeFailure, "still open"},
		{"fixture: out-of-order events", string(readFile(t, "invalid-out-of-order-events.json")), nil, evidence.CodeDecodeFailure, "innermost open frame is 0"},
		{"empty", "", nil, evidence.CodeDecodeFailure, "empty input"},
		{"not an object", `[1]`, nil, evidence.CodeDecodeFailure, "must be a JSON object"},
		{"no schema", `{"shared":{"frames":[]},"profiles":[]}`, nil, evidence.CodeDecodeFailure, "$schema is missing"},
		{"wrong schema", `{"$schema":"https://example.com/x.json","shared":{"frames":[]},"profiles":[]}`, nil, evidence.CodeDecodeFailure, "$schema is"},
		{"no shared", `{"$schema":"` + SchemaURL + `","profiles":[]}`, nil, evidence.CodeDecodeFailure, "shared.frames is missing"},
		{"no profiles", `{"$schema":"` + SchemaURL + `","shared":{"frames":[]}}`, nil, evidence.CodeDecodeFailure, "profiles is missing"},
		{"duplicate top-level key", `{"$schema":"` + SchemaURL + `","profiles":[],"shared":{"frames":[]},"profiles":[]}`, nil, evidence.CodeDecodeFailure, "duplicate object key"},
		{"duplicate frame key", doc(`[{"name":"a","name":"b"}]`, `[]`), nil, evidence.CodeDecodeFailure, "duplicate object key"},
		{"duplicate event key", doc(twoFrames, evented(`[{"type":"O","frame":0,"at":0,"at":1}]`)), nil, evidence.CodeDecodeFailure, "duplicate object key"},
		{"frame without name", doc(`[{"file":"x.py"}]`, `[]`), nil, evidence.CodeDecodeFailure, "has no name"},
		{"frame line not integer", doc(`[{"name":"a","line":1.5}]`, `[]`), nil, evidence.CodeDecodeFailure, "not an index"},
		{"frame line negative", doc(`[{"name":"a","line":-1}]`, `[]`), nil, evidence.CodeDecodeFailure, "not an index"},
		{"bad unit", doc(twoFrames, strings.Replace(sampled(`[[0]]`, `[1]`), "seconds", "hours", 1)), nil, evidence.CodeDecodeFailure, `unit "hours"`},
		{"unit case", doc(twoFrames, strings.Replace(sampled(`[[0]]`, `[1]`), "seconds", "Seconds", 1)), nil, evidence.CodeDecodeFailure, `unit "Seconds"`},
		{"no type", doc(twoFrames, `[{"name":"p"}]`), nil, evidence.CodeDecodeFailure, "type is missing"},
		{"unknown type", doc(twoFrames, `[{"type":"flat","name":"p"}]`), nil, evidence.CodeDecodeFailure, `type "flat"`},
		{"sampled without weights", doc(twoFrames, `[{"type":"sampled","name":"p","unit":"seconds","startValue":0,"endValue":1,"samples":[]}]`), nil, evidence.CodeDecodeFailure, "weights is missing"},
		{"sampled with events", doc(twoFrames, `[{"type":"sampled","events":[],"name":"p","unit":"seconds","startValue":0,"endValue":1,"samples":[],"weights":[]}]`), nil, evidence.CodeDecodeFailure, "cannot have events"},
		{"end before start", doc(twoFrames, strings.Replace(sampled(`[[0]]`, `[1]`), `"endValue":1`, `"endValue":-1`, 1)), nil, evidence.CodeDecodeFailure, "before startValue"},
		{"frame index out of range", doc(twoFrames, sampled(`[[0,2]]`, `[1]`)), nil, evidence.CodeDecodeFailure, "frame 2 is out of range"},
		{"frame index out of range, frames last", `{"$schema":"` + SchemaURL + `","profiles":` + sampled(`[[5]]`, `[1]`) + `,"shared":{"frames":` + twoFrames + `}}`, nil, evidence.CodeDecodeFailure, "frame 5 is out of range"},
		{"frame index not integer", doc(twoFrames, sampled(`[[0.5]]`, `[1]`)), nil, evidence.CodeDecodeFailure, "want an integer"},
		{"frame index exponent", doc(twoFrames, sampled(`[[1e0]]`, `[1]`)), nil, evidence.CodeDecodeFailure, "want an integer"},
		{"frame index negative", doc(twoFrames, sampled(`[[-1]]`, `[1]`)), nil, evidence.CodeDecodeFailure, "frame -1 is out of range"},
		{"frame index a string", doc(twoFrames, sampled(`[["0"]]`, `[1]`)), nil, evidence.CodeDecodeFailure, "in integer array"},
		{"sample not an array", doc(twoFrames, sampled(`[0]`, `[1]`)), nil, evidence.CodeDecodeFailure, "must be an array of frame indices"},
		{"more samples than weights", doc(twoFrames, sampled(`[[0],[1]]`, `[1]`)), nil, evidence.CodeDecodeFailure, "weights runs out after 1"},
		{"more weights than samples", doc(twoFrames, sampled(`[[0]]`, `[1,2]`)), nil, evidence.CodeDecodeFailure, "samples runs out after 1"},
		{"negative weight", doc(twoFrames, sampled(`[[0]]`, `[-1]`)), nil, evidence.CodeDecodeFailure, "non-negative"},
		{"weight a string", doc(twoFrames, sampled(`[[0]]`, `["1"]`)), nil, evidence.CodeDecodeFailure, "must be a number"},
		{"weight overflow", doc(twoFrames, sampled(`[[0]]`, `[1e999]`)), nil, evidence.CodeDecodeFailure, "finite"},
		{"event frame out of range", doc(twoFrames, evented(`[{"type":"O","frame":7,"at":0},{"type":"C","frame":7,"at":1}]`)), nil, evidence.CodeDecodeFailure, "frame 7 is out of range"},
		{"event frame out of range, frames last", `{"$schema":"` + SchemaURL + `","profiles":` + evented(`[{"type":"O","frame":7,"at":0},{"type":"C","frame":7,"at":1}]`) + `,"shared":{"frames":` + twoFrames + `}}`, nil, evidence.CodeDecodeFailure, "uses frame 7"},
		{"close without open", doc(twoFrames, evented(`[{"type":"C","frame":0,"at":0}]`)), nil, evidence.CodeDecodeFailure, "no frame is open"},
		{"close of the wrong frame", doc(twoFrames, evented(`[{"type":"O","frame":0,"at":0},{"type":"O","frame":1,"at":1},{"type":"C","frame":0,"at":2}]`)), nil, evidence.CodeDecodeFailure, "innermost open frame is 1"},
		{"unclosed", doc(twoFrames, evented(`[{"type":"O","frame":0,"at":0}]`)), nil, evidence.CodeDecodeFailure, "1 frames are still open"},
		{"time goes back", doc(twoFrames, evented(`[{"type":"O","frame":0,"at":5},{"type":"C","frame":0,"at":4}]`)), nil, evidence.CodeDecodeFailure, "comes before"},
		{"event type", doc(twoFrames, evented(`[{"type":"X","frame":0,"at":5}]`)), nil, evidence.CodeDecodeFailure, `type "X"`},
		{"event without at", doc(twoFrames, evented(`[{"type":"O","frame":0}]`)), nil, evidence.CodeDecodeFailure, "at is missing"},
		{"invalid UTF-8", doc(`[{"name":"a`+"\xff"+`"}]`, `[]`), nil, evidence.CodeDecodeFailure, "invalid UTF-8"},
		{"key without value", `{"profiles":},{"type":`, nil, evidence.CodeDecodeFailure, "unexpected '}'"},
		{"nested key without value", `{"shared":{"x":}}`, nil, evidence.CodeDecodeFailure, "unexpected '}'"},
		{"first frame key without value", `{"$schema":"` + SchemaURL + `","shared":{"frames":[{"zz":}]},"profiles":[]}`, nil, evidence.CodeDecodeFailure, "unexpected '}'"},
		{"later frame key without value", `{"$schema":"` + SchemaURL + `","shared":{"frames":[{"name":"a","zz":}]},"profiles":[]}`, nil, evidence.CodeDecodeFailure, "unexpected '}'"},
		{"trailing data", doc(twoFrames, `[]`) + `{}`, nil, evidence.CodeDecodeFailure, "data after top-level value"},
		{"truncated", doc(twoFrames, sampled(`[[0]]`, `[1]`))[:60], nil, evidence.CodeDecodeFailure, "unexpected end of input"},
		{"deep nesting", `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, nil, evidence.CodeLimitExceeded, "nesting too deep"},
		{"max_bytes", doc(twoFrames, `[]`), map[string]int64{formats.LimitBytes: 10}, evidence.CodeLimitExceeded, "max_bytes=10"},
		{"max_frames", doc(twoFrames, `[]`), map[string]int64{LimitFrames: 1}, evidence.CodeLimitExceeded, "max_frames=1"},
		{"max_profiles", doc(twoFrames, "["+strings.Trim(sampled(`[[0]]`, `[1]`), "[]")+","+strings.Trim(sampled(`[[0]]`, `[1]`), "[]")+"]"), map[string]int64{LimitProfiles: 1}, evidence.CodeLimitExceeded, "max_profiles=1"},
		{"max_samples", doc(twoFrames, sampled(`[[0],[1]]`, `[1,1]`)), map[string]int64{LimitSamples: 1}, evidence.CodeLimitExceeded, "max_samples=1"},
		{"max_events", doc(twoFrames, evented(`[{"type":"O","frame":0,"at":0},{"type":"C","frame":0,"at":1}]`)), map[string]int64{LimitEvents: 1}, evidence.CodeLimitExceeded, "max_events=1"},
		{"max_stack_depth", doc(twoFrames, sampled(`[[0,1,0]]`, `[1]`)), map[string]int64{LimitDepth: 2}, evidence.CodeLimitExceeded, "max_stack_depth=2"},
		{"max_stacks", doc(twoFrames, sampled(`[[0],[1],[0,1]]`, `[1,1,1]`)), map[string]int64{LimitStacks: 2}, evidence.CodeLimitExceeded, "max_stacks=2"},
		{"max_string_bytes", doc(`[{"name":"`+strings.Repeat("x", 5000)+`"}]`, `[]`), map[string]int64{LimitString: 1000}, evidence.CodeLimitExceeded, "max_string_bytes"},
		{"huge frame index", doc(twoFrames, sampled(`[[99999999999]]`, `[1]`)), nil, evidence.CodeDecodeFailure, "frame 99999999999 is out of range"},
		{"frame index beyond int64", doc(twoFrames, sampled(`[[99999999999999999999]]`, `[1]`)), nil, evidence.CodeDecodeFailure, "out of range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeString(t, c.data, c.limits)
			assertCode(t, err, c.code)
			if !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("%q lacks %q", err, c.msg)
			}
			if c.code == evidence.CodeLimitExceeded {
				assertReceipt(t, err, c.limits)
			}
		})
	}
	t.Run("every truncation of a real file", func(t *testing.T) {
		b := readFile(t, "pyspy-threads.speedscope.json")
		for n := 0; n < len(b); n += 53 {
			_, err := decodeBytes(t, b[:n], nil, plain)
			assertCode(t, err, evidence.CodeDecodeFailure)
		}
	})
	t.Run("failures carry offsets", func(t *testing.T) {
		d := doc(twoFrames, sampled(`[[0],[0,9]]`, `[1,1]`))
		_, err := decodeString(t, d, nil)
		var f *evidence.Failure
		errors.As(err, &f)
		if want := int64(strings.Index(d, "9]]")); f.Location.Offset != want {
			t.Fatalf("offset %d, want %d", f.Location.Offset, want)
		}
	})
}

func TestEmptyAndEdgeCases(t *testing.T) {
	t.Run("no profiles", func(t *testing.T) {
		c, err := decodeString(t, doc(twoFrames, `[]`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Tables) != 2 || len(c.Tables[0].Rows) != 0 || !c.Tables[0].Summary.Complete {
			t.Fatalf("%+v", c.Tables)
		}
	})
	t.Run("empty stack", func(t *testing.T) {
		c, err := decodeString(t, doc(twoFrames, sampled(`[[],[0]]`, `[2,1]`)), nil)
		if err != nil {
			t.Fatal(err)
		}
		s := c.Tables[0].Summary
		if float(t, s.Metrics[table.MetricTotalWeight].Value) != 3 || len(c.Tables[0].Rows) != 1 {
			t.Fatalf("%+v", s)
		}
		if !slices.ContainsFunc(s.Limitations, func(l string) bool { return strings.HasPrefix(l, "1 samples have no frames") }) {
			t.Fatalf("limitations %v", s.Limitations)
		}
	})
	t.Run("duplicate profile names stay apart", func(t *testing.T) {
		p := strings.TrimSuffix(strings.TrimPrefix(sampled(`[[0]]`, `[1]`), "["), "]")
		c, err := decodeString(t, doc(twoFrames, "["+p+","+p+"]"), nil)
		if err != nil {
			t.Fatal(err)
		}
		var threads []string
		for _, r := range c.Tables[0].Rows {
			threads = append(threads, r["thread"].(string))
		}
		if !slices.Equal(threads, []string{"p (profile 0)", "p (profile 1)"}) {
			t.Fatalf("threads %v", threads)
		}
	})
	t.Run("keys in any order, unknown keys skipped", func(t *testing.T) {
		d := `{"profiles":[{"weights":[2],"extra":{"x":[1,2]},"samples":[[1,0]],"endValue":2,"startValue":0,"unit":"microseconds","name":"q","type":"sampled"}],` +
			`"version":"0.1.2","shared":{"frames":[{"name":"a","col":null,"line":null,"file":null,"other":1},{"name":"b"}]},"$schema":"` + SchemaURL + `"}`
		c, err := decodeString(t, d, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := c.Tables[1].Rows
		if len(r) != 1 || r[0]["caller_id"] != "1" || r[0]["callee_id"] != "0" || float(t, r[0]["weight"]) != 2e-6 {
			t.Fatalf("edges %v", r)
		}
		if f := c.Tables[0].Rows[0]; f["file"] != nil || f["line"] != int64(-1) || f["column"] != int64(-1) {
			t.Fatalf("frame %v", f)
		}
	})
}

func TestSniff(t *testing.T) {
	real := readFile(t, "cs336-bpe-py-spy-0.4.2.speedscope.json")
	pretty := readFile(t, "simple.speedscope.json")
	late := readFile(t, "simple-sampled.speedscope.json") // "version" comes first
	cases := []struct {
		name string
		data []byte
		want formats.Verdict
	}{
		{"py-spy", real[:formats.SniffBytes], formats.Yes},
		{"pretty", pretty, formats.Yes},
		{"schema after another key", late, formats.Yes},
		{"cut before schema value", real[:20], formats.NeedMore},
		{"empty", nil, formats.NeedMore},
		{"other schema", []byte(`{"$schema":"https://json-schema.org/draft-07/schema"}`), formats.No},
		{"no schema", []byte(`{"a":1}`), formats.No},
		{"array", []byte(`[{"$schema":"` + SchemaURL + `"}]`), formats.No},
		{"nested schema only", []byte(`{"x":{"$schema":"` + SchemaURL + `"}}`), formats.No},
		{"not json", []byte("\x1f\x8b\x08"), formats.No},
		{"key without value", []byte(`{"profiles":},{"type":`), formats.No},
		{"big first value", []byte(`{"profiles":[` + strings.Repeat(`1,`, 5000)), formats.NeedMore},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Sniff(c.data); got != c.want {
				t.Fatalf("Sniff = %d, want %d", got, c.want)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"simple.speedscope.json", "simple-sampled.speedscope.json", "two-sampled.speedscope.json",
		"mixed-units.speedscope.json", "invalid-incomplete-trace.json", "invalid-out-of-order-events.json", "pyspy-threads.speedscope.json"} {
		f.Add(readFile(f, name))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = Sniff(b)
		c, err := decodeBytes(t, b, map[string]int64{LimitStacks: 1 << 14, LimitFrames: 1 << 14}, plain)
		if err != nil {
			var fl *evidence.Failure
			if !errors.As(err, &fl) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		if len(c.Tables)%2 != 0 || len(c.Tables) == 0 {
			t.Fatalf("%d tables", len(c.Tables))
		}
		for i := 0; i < len(c.Tables); i += 2 {
			frames, edges := c.Tables[i], c.Tables[i+1]
			if frames.Header.Name != table.CPUFrames.Name || edges.Header.Name != table.CPUEdges.Name {
				t.Fatal("tables out of order")
			}
			ids := map[string]bool{}
			for _, r := range frames.Rows {
				ids[rowKey(r)] = true
			}
			for _, e := range edges.Rows {
				if !ids[fmt.Sprint(e["thread"], "|", e["caller_id"])] || !ids[fmt.Sprint(e["thread"], "|", e["callee_id"])] {
					t.Fatalf("edge %v does not resolve", e)
				}
			}
			if int64(len(frames.Rows)) != frames.Summary.RowsObserved {
				t.Fatal("rows and summary disagree")
			}
		}
	})
}

// BenchmarkDecode decodes a generated py-spy-like file: 4 thread profiles
// of 25,000 samples each, drawn with skew from 3,000 call paths 8-40 deep
// over 600 frames (paths share prefixes, as real stacks do).
func BenchmarkDecode(b *testing.B) {
	seed := uint32(1)
	rnd := func(n int) int { seed = seed*1664525 + 1013904223; return int(seed>>8) % n }
	paths := make([]string, 3000)
	for i := range paths {
		var p []string
		if i > 0 && rnd(4) > 0 {
			parent := strings.Split(paths[rnd(i)], ",")
			p = parent[:1+rnd(len(parent))]
		}
		for len(p) < 8+rnd(33) {
			p = append(p, strconv.Itoa(rnd(600)))
		}
		paths[i] = strings.Join(p, ",")
	}
	var sb strings.Builder
	sb.WriteString(`{"$schema":"` + SchemaURL + `","profiles":[`)
	for p := range 4 {
		if p > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"type":"sampled","name":"Thread %d \"t\"","unit":"seconds","startValue":0.0,"endValue":250.0,"samples":[`, p)
		for i := range 25000 {
			if i > 0 {
				sb.WriteByte(',')
			}
			// Skewed: low path indices are hot.
			sb.WriteString("[" + paths[rnd(1+rnd(len(paths)))] + "]")
		}
		sb.WriteString(`],"weights":[`)
		for i := range 25000 {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString("0.01")
		}
		sb.WriteString(`]}`)
	}
	sb.WriteString(`],"shared":{"frames":[`)
	for i := range 600 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"name":"function_%d","file":"/src/pkg/module_%d.py","line":%d,"col":null}`, i, i%37, i*3+1)
	}
	sb.WriteString(`]},"activeProfileIndex":null,"exporter":"py-spy@0.4.2","name":"py-spy profile"}`)
	data := []byte(sb.String())
	ra := bytes.NewReader(data)
	open := func(off int64) io.Reader { return io.NewSectionReader(ra, off, int64(len(data))-off) }
	in := input(b, len(data), nil)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := decodeFrom(context.Background(), in, open, verified, formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
}

// Row values are bounded (max_value_bytes): a long frame or profile name
// is cut at a character boundary, marked, and the table says it is
// incomplete, so no row line outgrows what a block-stream reader takes.
func TestLongValuesAreBounded(t *testing.T) {
	long := "x" + strings.Repeat("é", 300_000) // 600,001 bytes, under max_string_bytes; the cut falls inside a rune
	doc := `{"$schema":"` + SchemaURL + `","shared":{"frames":[{"name":"` + long + `a"},{"name":"` + long + `b","file":"` + long + `"}]},` +
		`"profiles":[{"type":"sampled","name":"` + long + `","unit":"seconds","startValue":0,"endValue":2,"samples":[[0,1],[0]],"weights":[1,1]}]}`
	c, err := decodeString(t, doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{table.CPUFrames.Name, table.CPUEdges.Name} {
		tab := c.Table(name)
		if tab.Summary.Complete || !slices.ContainsFunc(tab.Summary.Limitations, func(l string) bool { return strings.Contains(l, formats.OptionValueBytes) }) {
			t.Fatalf("%s summary %+v", name, tab.Summary)
		}
		if n, _ := evidence.AsInt(tab.Summary.Metrics["cut_values"].Value); n == 0 {
			t.Fatalf("%s: no cut_values metric", name)
		}
		for _, r := range tab.Rows {
			for col, v := range r {
				s, ok := v.(string)
				if !ok {
					continue
				}
				if len(s) > formats.DefaultValueBytes+32 || !utf8.ValidString(s) {
					t.Fatalf("%s.%s: %d bytes, valid UTF-8 %v", name, col, len(s), utf8.ValidString(s))
				}
				if strings.HasPrefix(s, "xé") && !strings.HasSuffix(s, " bytes cut]") {
					t.Fatalf("%s.%s cut without its marker", name, col)
				}
			}
		}
		for _, p := range tab.Summary.Coverage["profiles"].([]any) {
			if th := p.(evidence.Object)["thread"].(string); len(th) > formats.DefaultValueBytes+32 {
				t.Fatalf("coverage thread of %d bytes", len(th))
			}
		}
	}
}

// A failure names where it happened: the byte offset and the JSON path,
// also for the samples and weights read in the second pass, whose scanner
// knows no lines (the message then says "at byte N", never "line 0").
func TestFailureLocations(t *testing.T) {
	doc := func(frames, profile string) string {
		return `{"$schema":"` + SchemaURL + `","shared":{"frames":` + frames + `},"profiles":[` + profile + `]}`
	}
	const sampled = `{"type":"sampled","name":"t","unit":"seconds","startValue":0,"endValue":2,`
	for _, c := range []struct{ doc, field string }{
		{doc(`[{"name":"a"}]`, sampled+`"samples":[[0],[5]],"weights":[1,1]}`), "profiles[0].samples[1]"},
		{doc(`[{"name":"a"}]`, sampled+`"samples":[[0],[0]],"weights":[1,"x"]}`), "profiles[0].weights[1]"},
		{doc(`[{"name":"a"},{"name":"b","line":-3}]`, sampled+`"samples":[],"weights":[]}`), "shared.frames[1]"},
		{doc(`[{"name":"a"}]`, `{"type":"evented","name":"t","unit":"seconds","startValue":0,"endValue":2,"events":[{"type":"O","frame":0,"at":1},{"type":"X","frame":0,"at":2}]}`), "profiles[0].events[1]"},
		{doc(`[{"name":"a"}]`, `{"type":"sampled","name":"t","unit":"furlongs","startValue":0,"endValue":2,"samples":[],"weights":[]}`), "profiles[0]"},
	} {
		_, err := decodeString(t, c.doc, nil)
		f := evidence.AsFailure(err, evidence.CodeInternal)
		if f == nil || f.Code != evidence.CodeDecodeFailure || f.Location.Field != c.field || f.Location.Offset <= 0 || strings.Contains(f.Message, "line 0") {
			t.Errorf("%s: %+v", c.field, f)
		}
	}
}
