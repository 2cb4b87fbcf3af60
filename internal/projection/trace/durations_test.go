package trace

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDurations: the packed store gives back exactly the nearest-rank
// percentiles and the maximum of the durations added, whether they stay
// in the buffer or fill many runs, with negative and huge values.
func TestDurations(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ins := [][]int64{
		{5},
		{5, 3, 9, 0, 3},
		{7, math.MaxUint32, 1, math.MaxUint32 + 1, 2, 12_000_000_000},
		{-1, 4, 2},
		{math.MaxInt64, math.MinInt64, 0},
	}
	for _, n := range []int{runLen - 1, runLen, runLen + 1, 5*runLen + 17, 40_000} {
		in := make([]int64, n)
		for i := range in {
			switch i % 7 {
			case 0:
				in[i] = rng.Int64N(1000) // many repeats
			case 1:
				in[i] = rng.Int64() - math.MaxInt64/2
			case 2:
				in[i] = math.MinInt64 + rng.Int64N(3)
			case 3:
				in[i] = math.MaxInt64 - rng.Int64N(3)
			default:
				in[i] = rng.Int64N(1 << 40)
			}
		}
		ins = append(ins, in)
	}
	ps := []int{0, 1, 50, 90, 99, 100}
	for _, in := range ins {
		var d durations
		for _, v := range in {
			d.add(v)
		}
		want := slices.Sorted(slices.Values(in))
		if d.max != want[len(want)-1] {
			t.Fatalf("%d values: max %d, want %d", len(in), d.max, want[len(want)-1])
		}
		got := d.percentiles(ps...)
		for i, p := range ps {
			r := (len(want)*p + 99) / 100
			if w := want[max(r-1, 0)]; got[i] != w {
				t.Fatalf("%d values: p%d %d, want %d", len(in), p, got[i], w)
			}
		}
	}
}
