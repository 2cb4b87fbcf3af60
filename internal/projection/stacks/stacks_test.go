package stacks

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/collapsed"
	"github.com/flameox/flameox/internal/formats/v8cpu"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/projection/projectiontest"
	"github.com/flameox/flameox/internal/table"
)

const fixtures = "../../../testdata/"

// decode decodes a fixture and keeps the tables the projection reads, as
// flameox-rank's sink does.
func decode(t *testing.T, spec *formats.Spec, path string) []*projectiontest.Input {
	t.Helper()
	var out []*projectiontest.Input
	for _, x := range projectiontest.Decode(t, spec, path, nil) {
		if Spec.Consumes(x.Header.Name) {
			out = append(out, x)
		}
	}
	return out
}

// foldedFile reads a folded file as stack → count, as flamegraph.pl
// would (duplicate stacks add).
func foldedFile(t *testing.T, path string) map[string]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		ln := strings.TrimSpace(sc.Text())
		if ln == "" || strings.HasPrefix(ln, "#") {
			continue
		}
		i := strings.LastIndexByte(ln, ' ')
		n, err := strconv.ParseFloat(ln[i+1:], 64)
		if err != nil {
			t.Fatalf("line %q", ln)
		}
		// A trailing ';' (an empty symbol) carries no frame, for
		// flamegraph.pl as for the decoder.
		out[strings.TrimRight(strings.TrimSpace(ln[:i]), ";")] += n
	}
	return out
}

func rows(t *testing.T, r *projectiontest.Result) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, v := range r.Rows {
		var labels []string
		switch s := v["stack"].(type) {
		case []string:
			labels = s
		case []any:
			for _, x := range s {
				labels = append(labels, x.(string))
			}
		}
		w, _ := evidence.AsFloat(v["weight"])
		out[strings.Join(labels, ";")] += w
	}
	return out
}

// Folded stacks decoded and folded again are the file's own stacks, each
// with its count: the projection loses and invents nothing.
func TestRoundTripFolded(t *testing.T) {
	for _, name := range []string{"perf-vertx-stacks-01-collapsed-all.txt", "hot.folded", "tmpl.folded"} {
		t.Run(name, func(t *testing.T) {
			in := decode(t, collapsed.Spec, fixtures+"collapsed/"+name)
			r, err := projectiontest.Run(Spec, nil, in...)
			if err != nil {
				t.Fatal(err)
			}
			want, got := foldedFile(t, fixtures+"collapsed/"+name), rows(t, r)
			if len(got) != len(want) {
				t.Fatalf("%d stacks, the file has %d", len(got), len(want))
			}
			for k, w := range want {
				if got[k] != w {
					t.Fatalf("stack %q: %v, the file says %v", k, got[k], w)
				}
			}
			if !r.Summary.Complete || r.Summary.Truncation != nil {
				t.Fatalf("summary %+v", r.Summary)
			}
		})
	}
}

// min_share and max_stacks omit stacks and state the omitted weight:
// kept plus omitted is the stacked weight.
func TestBounds(t *testing.T) {
	in := decode(t, collapsed.Spec, fixtures+"collapsed/perf-vertx-stacks-01-collapsed-all.txt")
	for _, args := range []evidence.Object{{"min_share": 0.01}, {"max_stacks": int64(10)}} {
		r, err := projectiontest.Run(Spec, args, in...)
		if err != nil {
			t.Fatal(err)
		}
		var kept float64
		for _, w := range rows(t, r) {
			kept += w
		}
		omitted, _ := evidence.AsFloat(r.Summary.Metrics["omitted_weight"].Value)
		stacked, _ := evidence.AsFloat(r.Summary.Metrics["stacked_weight"].Value)
		if omitted <= 0 || kept+omitted != stacked || r.Summary.Complete || r.Summary.Truncation == nil {
			t.Fatalf("%v: kept %v omitted %v stacked %v, summary %+v", args, kept, omitted, stacked, r.Summary)
		}
		if n, ok := args["max_stacks"]; ok && int64(len(r.Rows)) != n.(int64) {
			t.Fatalf("%d rows", len(r.Rows))
		}
	}
}

// V8: the (root) node is no frame of a stack, and every sample of the
// profile is on a stack.
func TestV8Stacks(t *testing.T) {
	in := decode(t, v8cpu.Spec, fixtures+"v8/fib.cpuprofile")
	r, err := projectiontest.Run(Spec, nil, in...)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for k, w := range rows(t, r) {
		if strings.HasPrefix(k, "(root)") {
			t.Fatalf("stack %q", k)
		}
		sum += w
	}
	total, _ := evidence.AsFloat(r.Summary.Metrics[table.MetricTotalWeight].Value)
	if sum != total || total == 0 {
		t.Fatalf("stacks hold %v of %v", sum, total)
	}
}

// A stack naming a frame its artifact's cpu.frames lacks is refused.
func TestUnknownFrame(t *testing.T) {
	in := decode(t, collapsed.Spec, fixtures+"collapsed/hot.folded")
	var st *projectiontest.Input
	for _, x := range in {
		if x.Header.Name == table.CPUStacks.Name {
			st = x
		}
	}
	bad := *st
	bad.Rows = append([]any{evidence.Object{"frames": []any{"nope"}, "thread": nil, "process": nil, "weight": 1.0}}, st.Rows...)
	var frames []*projectiontest.Input
	for _, x := range in {
		if x != st {
			frames = append(frames, x)
		}
	}
	_, err := projectiontest.Run(Spec, nil, append(frames, &bad)...)
	if f, ok := err.(*evidence.Failure); !ok || f.Code != evidence.CodeInvalidArgument {
		t.Fatalf("got %v", err)
	}
}

// benchInputs is a profile of n distinct stacks of depth 24 over 2000
// frames.
func benchInputs(n int) []*projectiontest.Input {
	fh := &evidence.Table{ID: "a.cpu.frames", Name: table.CPUFrames.Name, Format: "collapsed", Columns: table.CPUFrames.EvidenceColumns("samples"), ArtifactIDs: []string{"sha256:a"}}
	sh := &evidence.Table{ID: "a.cpu.stacks", Name: table.CPUStacks.Name, Format: "collapsed", Columns: table.CPUStacks.EvidenceColumns("samples"), ArtifactIDs: []string{"sha256:a"}}
	frames := &projectiontest.Input{Header: fh, Summary: &evidence.Summary{Complete: true}}
	for i := range 2000 {
		frames.Rows = append(frames.Rows, &table.Frame{FrameSite: table.FrameSite{FrameID: fmt.Sprint("f", i), Function: fmt.Sprint("function_", i), Line: -1, Column: -1, Symbolization: table.Symbolized}})
	}
	stacks := &projectiontest.Input{Header: sh, Summary: &evidence.Summary{Complete: true, Metrics: map[string]evidence.Metric{}}}
	var total float64
	for i := range n {
		fs := make([]string, 24)
		for d := range fs {
			fs[d] = fmt.Sprint("f", (i*7+d*131+d*d*i)%2000)
		}
		w := float64(1 + i%17)
		total += w
		stacks.Rows = append(stacks.Rows, &table.Stack{Frames: fs, Weight: w})
	}
	stacks.Summary.Metrics[table.MetricTotalWeight] = evidence.Metric{Value: total, Unit: "samples"}
	return []*projectiontest.Input{frames, stacks}
}

func BenchmarkFold(b *testing.B) {
	projectiontest.Bench(b, Spec, nil, benchInputs(100000)...)
}

// BenchmarkFoldDiff folds the same profile on both sides.
func BenchmarkFoldDiff(b *testing.B) {
	in := benchInputs(50000)
	b.ReportAllocs()
	for b.Loop() {
		p, err := projectiontest.Start(Diff, nil)
		if err != nil {
			b.Fatal(err)
		}
		c := p.(projection.Comparer)
		for _, sd := range []projection.Side{projection.SideBase, projection.SideNew} {
			for _, x := range in {
				h := *x.Header
				h.ID = sd.String() + "." + h.ID
				c.Side(h.ID, h.ArtifactIDs, sd)
				if err := projectiontest.Feed(p, &projectiontest.Input{Header: &h, Rows: x.Rows, Summary: x.Summary}); err != nil {
					b.Fatal(err)
				}
			}
		}
		if _, err := projectiontest.Finish(p); err != nil {
			b.Fatal(err)
		}
	}
}
