package memory

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/memray"
	"github.com/flameox/flameox/internal/formats/v8heap"
	"github.com/flameox/flameox/internal/projection/projectiontest"
	"github.com/flameox/flameox/internal/table"
)

var leaked = evidence.Object{memray.OptionPopulation: table.PopulationLeaked}

var capture = filepath.Join("..", "..", "..", "testdata", "memray", "lz4-pyalloc.bin")

func num(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := evidence.AsInt(v)
	if !ok {
		t.Fatalf("%v is not an integer", v)
	}
	return n
}

// TestSharesAndMerge: with every row kept, self bytes sum to the decoder's
// population and the shares to 1; merging threads keeps the sums of the
// per-thread rows.
func TestSharesAndMerge(t *testing.T) {
	// The leaks hold both threads' allocations (the high watermark is
	// reached before the worker thread starts).
	in := decodeFrames(t, memray.Spec, capture, leaked)
	pop := num(t, in[0].Summary.Metrics[table.MetricPopulationBytes].Value)
	merged, err := projectiontest.Run(Hotspots, evidence.Object{"top": 100000}, in...)
	if err != nil {
		t.Fatal(err)
	}
	per, err := projectiontest.Run(Hotspots, evidence.Object{"top": 100000, "per_thread": true}, in...)
	if err != nil {
		t.Fatal(err)
	}
	sum := func(r *projectiontest.Result, col string) (n int64) {
		for _, row := range r.Rows {
			n += num(t, row[col])
		}
		return n
	}
	if got := sum(merged, "self_bytes"); got != pop {
		t.Errorf("self bytes sum to %d, population %d", got, pop)
	}
	for _, col := range []string{"self_bytes", "self_count", "inclusive_bytes", "inclusive_count"} {
		if a, b := sum(merged, col), sum(per, col); a != b {
			t.Errorf("%s: merged %d, per thread %d", col, a, b)
		}
	}
	if len(per.Rows) <= len(merged.Rows) {
		t.Errorf("per-thread rows %d, merged %d: the workload has two threads", len(per.Rows), len(merged.Rows))
	}
	var share float64
	for _, row := range merged.Rows {
		if row["thread"] != nil {
			t.Fatalf("merged row keeps a thread: %v", row)
		}
		share += row["self_share"].(float64)
	}
	if share < 0.999999 || share > 1.000001 {
		t.Errorf("self shares sum to %v", share)
	}
	if !merged.Summary.Complete {
		t.Errorf("incomplete: %v", merged.Summary.Limitations)
	}
}

// TestRankAndFilters: rank_by orders the rows; a thread and a pattern
// select before the bound.
func TestRankAndFilters(t *testing.T) {
	in := decodeFrames(t, memray.Spec, capture, nil)
	for _, by := range []string{RankSelfBytes, RankInclusiveBytes, RankSelfCount, RankInclusiveCount} {
		r, err := projectiontest.Run(Hotspots, evidence.Object{"top": 5, "rank_by": by}, in...)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(r.Rows); i++ {
			if num(t, r.Rows[i-1][by]) < num(t, r.Rows[i][by]) {
				t.Errorf("%s: row %d ranks above a larger one", by, i)
			}
		}
		if r.Summary.Truncation == nil {
			t.Errorf("%s: top 5 of more rows without truncation", by)
		}
	}
	in = decodeFrames(t, memray.Spec, capture, leaked)
	var worker string
	for _, row := range in[0].Rows {
		if th := row.(evidence.Object)["thread"].(string); strings.Contains(th, "flameox-worker") {
			worker = th
		}
	}
	if worker == "" {
		t.Fatal("no row of the workload's named thread")
	}
	r, err := projectiontest.Run(Hotspots, evidence.Object{"thread": worker, "per_thread": true, "top": 1000, "file_pattern": `workload\.py$`}, in...)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) == 0 {
		t.Fatal("the worker thread has no workload.py rows")
	}
	for _, row := range r.Rows {
		if row["thread"] != worker || !strings.HasSuffix(row["file"].(string), "workload.py") {
			t.Errorf("row outside the selection: %v", row)
		}
	}
	r, err = projectiontest.Run(Hotspots, evidence.Object{"thread": "no such thread"}, in...)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 0 || r.Summary.Complete {
		t.Errorf("unknown thread: %d rows, complete %v", len(r.Rows), r.Summary.Complete)
	}
}

// TestLeakedPopulation: the result says which population it ranks, and
// its denominator is that population's bytes.
func TestLeakedPopulation(t *testing.T) {
	in := decodeFrames(t, memray.Spec, capture, leaked)
	r, err := projectiontest.Run(Hotspots, evidence.Object{}, in...)
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary.Coverage["population"] != table.PopulationLeaked {
		t.Errorf("population %v", r.Summary.Coverage["population"])
	}
	if num(t, r.Summary.Metrics[table.MetricPopulationBytes].Value) != num(t, in[0].Summary.Metrics["leaked_bytes"].Value) {
		t.Error("population bytes are not the leaks")
	}
}

func BenchmarkHotspots(b *testing.B) {
	in := decodeFrames(b, memray.Spec, capture, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := projectiontest.Run(Hotspots, evidence.Object{"top": 20}, in...); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPopulationsDoNotPool: a high-watermark table and a leaks table do
// not rank together.
func TestPopulationsDoNotPool(t *testing.T) {
	hwm := decodeFrames(t, memray.Spec, capture, nil)
	lk := decodeFrames(t, memray.Spec, capture, leaked)
	lk[0].Header.ID += ".leaked" // the same artifact decoded twice
	_, err := projectiontest.Run(Hotspots, evidence.Object{}, append(hwm, lk...)...)
	if evidence.CodeOf(err) != evidence.CodeInvalidArgument || !strings.Contains(err.Error(), "populations do not rank together") {
		t.Fatalf("%v", err)
	}
}

// TestSeveralHeapProfiles: V8 profiles rank together without merging
// frames across profiles, with a profile_count; Memray and V8 rows do not
// pool.
func TestSeveralHeapProfiles(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "testdata", "v8heap")
	a := decodeFrames(t, v8heap.Spec, filepath.Join(dir, "node20-app.heapprofile"), nil)
	b := decodeFrames(t, v8heap.Spec, filepath.Join(dir, "crafted-unresolved.heapprofile"), nil)
	r, err := projectiontest.Run(Hotspots, evidence.Object{"top": 100000}, append(a, b...)...)
	if err != nil {
		t.Fatal(err)
	}
	if n := num(t, r.Summary.Metrics["profile_count"].Value); n != 2 {
		t.Errorf("profile_count %d", n)
	}
	if len(r.Rows) != len(a[0].Rows)+len(b[0].Rows) {
		t.Errorf("%d rows, want %d + %d (frames are not merged across profiles)", len(r.Rows), len(a[0].Rows), len(b[0].Rows))
	}
	want := num(t, a[0].Summary.Metrics["unresolved_sample_count"].Value) + num(t, b[0].Summary.Metrics["unresolved_sample_count"].Value)
	if got := num(t, r.Summary.Metrics["unresolved_sample_count"].Value); got != want || r.Summary.Complete {
		t.Errorf("unresolved samples %d (want %d), complete %v", got, want, r.Summary.Complete)
	}
	if r.Summary.Coverage["count_unit"] != "samples" {
		t.Errorf("count unit %v", r.Summary.Coverage["count_unit"])
	}
	m := decodeFrames(t, memray.Spec, capture, nil)
	if _, err := projectiontest.Run(Hotspots, evidence.Object{}, append(a, m...)...); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Errorf("memray and V8 pooled: %v", err)
	}
}

// decodeFrames decodes a fixture and keeps the tables the hotspots read,
// as flameox-rank does (memory decoders emit memory.stacks too).
func decodeFrames(tb testing.TB, spec *formats.Spec, path string, opts evidence.Object) []*projectiontest.Input {
	tb.Helper()
	var out []*projectiontest.Input
	for _, x := range projectiontest.Decode(tb, spec, path, opts) {
		if Hotspots.Consumes(x.Header.Name) {
			out = append(out, x)
		}
	}
	return out
}
