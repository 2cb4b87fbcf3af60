package stacks

import (
	"bufio"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/pprof"
	"github.com/flameox/flameox/internal/formats/v8heap"
	"github.com/flameox/flameox/internal/projection/memory"
	"github.com/flameox/flameox/internal/projection/projectiontest"
	"github.com/flameox/flameox/internal/table"
)

// decodeMemory decodes a fixture and keeps the tables memory-stacks reads.
func decodeMemory(t *testing.T, spec *formats.Spec, path string, opts evidence.Object) []*projectiontest.Input {
	t.Helper()
	var out []*projectiontest.Input
	for _, x := range projectiontest.Decode(t, spec, path, opts) {
		if Memory.Consumes(x.Header.Name) {
			out = append(out, x)
		}
	}
	return out
}

var (
	rawSample = regexp.MustCompile(`^\s*(-?\d+(?:\s+-?\d+)*): ([\d ]*)$`)
	rawLoc    = regexp.MustCompile(`^\s*(\d+): 0x[0-9a-f]+(?: M=\d+)?(?: (.+) \S+:\d+:\d+ s=-?\d+)?\s*$`)
	// Function names may hold spaces (generic shapes); file names do not.
	rawInline = regexp.MustCompile(`^\s+(.+) \S+:\d+:\d+ s=-?\d+\s*$`)
)

// pprofRawStacks runs the native reader, go tool pprof -raw, and sums
// the values of sample type index per stack of function names, root
// first, joined by ';' (an inlined call is a frame of its own).
func pprofRawStacks(t *testing.T, path, index string) (map[string]int64, int64) {
	t.Helper()
	out, err := exec.Command("go", "tool", "pprof", "-raw", path).Output()
	if err != nil {
		t.Fatalf("go tool pprof -raw: %v", err)
	}
	type sample struct {
		v    int64
		locs []string
	}
	var samples []sample
	col := -1
	locs := map[string][]string{} // id → function names, innermost first
	var last string
	section := ""
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch line {
		case "Samples:", "Locations", "Mappings":
			section = line
			continue
		}
		switch section {
		case "Samples:":
			if col < 0 {
				for i, f := range strings.Fields(line) {
					if strings.HasPrefix(f, index+"/") {
						col = i
					}
				}
				if col < 0 {
					t.Fatalf("no sample type %s in %q", index, line)
				}
				continue
			}
			if m := rawSample.FindStringSubmatch(line); m != nil {
				v, _ := strconv.ParseInt(strings.Fields(m[1])[col], 10, 64)
				samples = append(samples, sample{v: v, locs: strings.Fields(m[2])})
			}
		case "Locations":
			if m := rawLoc.FindStringSubmatch(line); m != nil {
				last = m[1]
				if m[2] != "" {
					locs[last] = []string{m[2]}
				} else {
					locs[last] = nil
				}
			} else if m := rawInline.FindStringSubmatch(line); m != nil && last != "" {
				locs[last] = append(locs[last], m[1])
			}
		}
	}
	want := map[string]int64{}
	var total int64
	for _, s := range samples {
		total += s.v
		var names []string // leaf first
		for _, id := range s.locs {
			fs, ok := locs[id]
			if !ok {
				t.Fatalf("pprof -raw: location %s not listed", id)
			}
			if len(fs) == 0 {
				t.Fatalf("pprof -raw: location %s unsymbolized; this comparison expects a symbolized fixture", id)
			}
			names = append(names, fs...)
		}
		if len(names) == 0 {
			continue
		}
		slices.Reverse(names)
		want[strings.Join(names, ";")] += s.v
	}
	for k, v := range want {
		if v == 0 {
			delete(want, k)
		}
	}
	return want, total
}

func foldedRows(t *testing.T, r *projectiontest.Result) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	for _, row := range r.Rows {
		labels, _ := row["stack"].([]string)
		w, _ := evidence.AsFloat(row["weight"])
		if w != float64(int64(w)) {
			t.Fatalf("weight %v is not whole", w)
		}
		if w != 0 {
			got[strings.Join(labels, ";")] += int64(w)
		}
	}
	return got
}

// Per-stack bytes (and objects) of the committed Go heap profile equal go
// tool pprof -raw's, exactly, for each population; the total equals the
// memory hotspots' population bytes of the same decode.
func TestMemoryStacksMatchPprofRaw(t *testing.T) {
	path := fixtures + "pprof/heap-allocs.pb.gz"
	for _, c := range []struct{ index, weight, unit string }{
		{"inuse_space", WeightBytes, "bytes"},
		{"alloc_space", WeightBytes, "bytes"},
		{"alloc_objects", WeightCount, pprof.CountUnit},
		{"inuse_objects", WeightCount, pprof.CountUnit},
	} {
		t.Run(c.index, func(t *testing.T) {
			in := decodeMemory(t, pprof.Spec, path, evidence.Object{pprof.OptionSampleIndex: c.index})
			r, err := projectiontest.Run(Memory, evidence.Object{"weight": c.weight}, in...)
			if err != nil {
				t.Fatal(err)
			}
			if r.Header.Name != table.MemoryFolded.Name {
				t.Fatalf("result %s", r.Header.Name)
			}
			if col, _ := r.Header.Column("weight"); col.Unit != c.unit {
				t.Errorf("weight unit %q, want %q", col.Unit, c.unit)
			}
			want, total := pprofRawStacks(t, path, c.index)
			got := foldedRows(t, r)
			if len(got) != len(want) {
				t.Errorf("%d stacks, pprof -raw %d", len(got), len(want))
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("stack %s: %d, pprof -raw %d", k, got[k], v)
				}
			}
			tw, _ := evidence.AsFloat(r.Summary.Metrics[table.MetricTotalWeight].Value)
			if int64(tw) != total {
				t.Errorf("total %v, pprof -raw %d", tw, total)
			}
			// The memory hotspots of the same decode state the same bytes;
			// the decoded memory.frames the same count.
			h, err := projectiontest.Run(memory.Hotspots, evidence.Object{}, in[:1]...)
			if err != nil {
				t.Fatal(err)
			}
			hv, _ := evidence.AsFloat(h.Summary.Metrics[table.MetricPopulationBytes].Value)
			if c.weight == WeightCount {
				hv, _ = evidence.AsFloat(in[0].Summary.Metrics[table.MetricPopulationCount].Value)
			}
			if hv != tw {
				t.Errorf("hotspots total %v, stacks total %v", hv, tw)
			}
		})
	}
}

// Per-stack bytes and sample counts of the V8 heap profiles equal an
// independent Python walk of the .heapprofile call tree, exactly; the
// totals equal the memory hotspots' population bytes.
func TestMemoryStacksMatchHeapprofileWalk(t *testing.T) {
	for _, name := range []string{"node20-app", "node10-speedscope", "crafted-unresolved"} {
		t.Run(name, func(t *testing.T) {
			path := fixtures + "v8heap/" + name + ".heapprofile"
			out, err := exec.Command("python3", "testdata/heapwalk.py", path).Output()
			if err != nil {
				t.Fatalf("heapwalk.py: %v", err)
			}
			wantB, wantN := map[string]int64{}, map[string]int64{}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				f := strings.SplitN(line, "\t", 3)
				b, _ := strconv.ParseInt(f[0], 10, 64)
				n, _ := strconv.ParseInt(f[1], 10, 64)
				if b != 0 {
					wantB[f[2]] = b
				}
				if n != 0 {
					wantN[f[2]] = n
				}
			}
			in := decodeMemory(t, v8heap.Spec, path, nil)
			for weight, want := range map[string]map[string]int64{WeightBytes: wantB, WeightCount: wantN} {
				r, err := projectiontest.Run(Memory, evidence.Object{"weight": weight}, in...)
				if weight == WeightCount && name == "node10-speedscope" {
					if err == nil {
						t.Fatal("weight=count of a profile without samples is not refused")
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				got := foldedRows(t, r)
				if len(got) != len(want) {
					t.Errorf("%s: %d stacks, the walk %d", weight, len(got), len(want))
				}
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s: stack %s: %d, the walk %d", weight, k, got[k], v)
					}
				}
				if weight == WeightBytes {
					h, err := projectiontest.Run(memory.Hotspots, evidence.Object{}, in[:1]...)
					if err != nil {
						t.Fatal(err)
					}
					hv, _ := evidence.AsFloat(h.Summary.Metrics[table.MetricPopulationBytes].Value)
					tw, _ := evidence.AsFloat(r.Summary.Metrics[table.MetricTotalWeight].Value)
					if hv != tw {
						t.Errorf("hotspots population bytes %v, stacks total %v", hv, tw)
					}
				}
				if name == "crafted-unresolved" && r.Summary.Complete {
					t.Errorf("%s: unresolved samples, yet complete", weight)
				}
			}
		})
	}
}

// BenchmarkFoldMemory folds 100000 distinct allocation stacks of depth 24
// over 2000 frames, by bytes.
func BenchmarkFoldMemory(b *testing.B) {
	fh := &evidence.Table{ID: "a.memory.frames", Name: table.MemoryFrames.Name, Format: "pprof", Columns: table.MemoryFrames.EvidenceColumns("objects"), ArtifactIDs: []string{"sha256:a"}}
	sh := &evidence.Table{ID: "a.memory.stacks", Name: table.MemoryStacks.Name, Format: "pprof", Columns: table.MemoryStacks.EvidenceColumns("objects"), ArtifactIDs: []string{"sha256:a"}}
	frames := &projectiontest.Input{Header: fh, Summary: &evidence.Summary{Complete: true}}
	for i := range 2000 {
		frames.Rows = append(frames.Rows, &table.MemoryFrame{FrameSite: table.FrameSite{FrameID: fmt.Sprint("f", i), Function: fmt.Sprint("function_", i), Line: -1, Column: -1, Symbolization: table.Symbolized}, Population: table.PopulationInuse})
	}
	stacks := &projectiontest.Input{Header: sh, Summary: &evidence.Summary{Complete: true, Metrics: map[string]evidence.Metric{}}}
	var total int64
	for i := range 100000 {
		fs := make([]string, 24)
		for d := range fs {
			fs[d] = fmt.Sprint("f", (i*7+d*131+d*d*i)%2000)
		}
		w := int64(16 * (1 + i%17))
		total += w
		stacks.Rows = append(stacks.Rows, &table.MemoryStack{Frames: fs, Bytes: w, Count: table.Some(int64(1 + i%3))})
	}
	stacks.Summary.Metrics[table.MetricPopulationBytes] = evidence.Metric{Value: total, Unit: "bytes"}
	projectiontest.Bench(b, Memory, nil, frames, stacks)
}
