package rank_test

import (
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

// A format whose content decides its tables (formats.Spec.ByContent:
// pprof) gets the operation that reads the first table it decodes: a
// heap profile memory hotspots, a CPU profile CPU hotspots; a named
// operation still decides, and arguments are checked against the one
// chosen.
func TestOperationInferredFromContent(t *testing.T) {
	for _, c := range []struct{ file, table string }{
		{"../../testdata/pprof/heap-allocs.pb.gz", "memory.hotspots"},
		{"../../testdata/pprof/cpu.pb.gz", "cpu.hotspots"},
	} {
		r := paths(t, request("", evidence.Object{"top": 3}), c.file)
		if r.err != nil {
			t.Fatalf("%s: %v", c.file, r.err)
		}
		tables := r.all("table")
		if len(tables) != 1 || tables[0]["name"] != c.table {
			t.Fatalf("%s: tables %v", c.file, tables)
		}
		if rows := r.all("row"); len(rows) != 3 {
			t.Errorf("%s: %d rows", c.file, len(rows))
		}
	}
	r := paths(t, request("", evidence.Object{"rank_by": "self_count"}), "../../testdata/pprof/cpu.pb.gz")
	if r.err == nil || !strings.Contains(r.err.Error(), "INVALID_ARGUMENT") || !strings.Contains(r.err.Error(), "rank_by") {
		t.Errorf("a memory argument on a CPU profile: %v", r.err)
	}
	r = paths(t, request("summarize_cpu_hotspots", nil), "../../testdata/pprof/heap-allocs.pb.gz")
	if r.err == nil || !strings.Contains(r.err.Error(), "summarize_memory_hotspots") {
		t.Errorf("CPU hotspots of a heap profile: %v", r.err)
	}
}

// Two pprof profiles of different sample types in one unit (CPU time and
// mutex delay, both ns) are not pooled silently: the result says so and
// is incomplete.
func TestSampleTypesPooledStated(t *testing.T) {
	r := paths(t, request("", nil), "../../testdata/pprof/cpu.pb.gz", "../../testdata/pprof/mutex.pb.gz")
	if r.err != nil {
		t.Fatal(r.err)
	}
	sums := r.all("summary")
	last := sums[len(sums)-1]
	lims, _ := last["limitations"].([]any)
	found := false
	for _, l := range lims {
		found = found || strings.Contains(l.(string), "different sample types (cpu, delay)")
	}
	if !found || last["complete"] != false {
		t.Errorf("summary %v", last)
	}
}
