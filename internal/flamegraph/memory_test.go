package flamegraph_test

import (
	"math"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/flamegraph"
	"github.com/flameox/flameox/internal/table"
)

// A heap profile given to --format svg|folded draws its memory stacks
// (summarize_memory_stacks, inferred): titled in bytes, the folded bytes
// summing to the stacked bytes; a CPU profile's picture stays a CPU one.
func TestMemoryPictures(t *testing.T) {
	for _, fx := range [][]string{{"pprof", "heap-allocs.pb.gz"}, {"v8heap", "node20-app.heapprofile"}} {
		t.Run(fx[1], func(t *testing.T) {
			text, s := draw(t, flamegraph.Folded, false, nil, fixture(fx...))
			if u := s.Metrics[table.MetricTotalWeight].Unit; u != "bytes" {
				t.Fatalf("total in %q, want bytes", u)
			}
			want := int64(math.Round(metric(t, s, "stacked_weight")))
			if got := sum(foldedLines(t, text)); got != want || want == 0 {
				t.Fatalf("folded bytes sum to %d, stacked %d", got, want)
			}
			svg, _ := draw(t, flamegraph.SVG, false, nil, fixture(fx...))
			if !strings.Contains(svg, ">Memory Flame Graph (bytes)<") || !strings.Contains(svg, `data-unit="bytes"`) {
				t.Errorf("the SVG is not titled as a memory flame graph in bytes:\n%.600s", svg)
			}
		})
	}
	svg, _ := draw(t, flamegraph.SVG, false, nil, fixture("pprof", "cpu.pb.gz"))
	if strings.Contains(svg, "Memory") {
		t.Error("a CPU profile's flame graph is titled as memory")
	}
}
