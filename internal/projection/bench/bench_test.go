package bench_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/pyperf"
	"github.com/flameox/flameox/internal/projection/bench"
	"github.com/flameox/flameox/internal/projection/projectiontest"
)

func fixture(tb testing.TB, name string) []*projectiontest.Input {
	p, _ := filepath.Abs(filepath.Join(repoRoot, "testdata", "pyperf", name))
	return projectiontest.Decode(tb, pyperf.Spec, p, nil)
}

func BenchmarkSummarize(b *testing.B) {
	projectiontest.Bench(b, bench.Summarize, nil, fixture(b, "pyperf-mult_list_py37.json")...)
}

func BenchmarkCompare(b *testing.B) {
	base, slow := fixture(b, "timeit-sorted.pyperf.json"), fixture(b, "timeit-sorted-slow.pyperf.json")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := runCompare(evidence.Object{"resamples": int64(2000)}, base, slow); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStatsEdges: statistics of small and awkward samples, against values
// worked out by hand (Python's statistics gives the same).
func TestStatsEdges(t *testing.T) {
	one := bench.Compute([]float64{5})
	if one.N != 1 || one.Mean != 5 || one.Median != 5 || !math.IsNaN(one.Stdev) || one.P5 != 5 {
		t.Errorf("one value: %+v", one)
	}
	two := bench.Compute([]float64{3, 1})
	if two.Median != 2 || two.Mean != 2 || two.Stdev != math.Sqrt2 || two.P95 != 2.8999999999999995 { // pyperf: 1*(1-0.95) + 3*0.95 in doubles
		t.Errorf("two values: %+v", two)
	}
	// The exact mean of 0.1 three times is the double nearest 0.3 × 1,
	// not the float sum's 0.30000000000000004 / 3.
	three := bench.Compute([]float64{0.1, 0.1, 0.1})
	if three.Mean != 0.1 || three.Stdev != 0 {
		t.Errorf("0.1 thrice: mean %v stdev %v", three.Mean, three.Stdev)
	}
	big := bench.Compute([]float64{1e300, 1e300, 1e300})
	if big.Mean != 1e300 || big.Stdev != 0 {
		t.Errorf("1e300 thrice: %+v", big)
	}
}
