package trace

import (
	"math"
	"slices"
	"testing"
)

// TestDurations: the compact store gives back exactly the durations
// added, sorted, and their maximum, also once one does not fit uint32.
func TestDurations(t *testing.T) {
	for _, in := range [][]int64{
		{5, 3, 9, 0, 3},
		{7, math.MaxUint32, 1, math.MaxUint32 + 1, 2, 12_000_000_000},
		{-1, 4, 2},
		{math.MaxUint32 + 5, 1},
	} {
		var d durations
		for _, v := range in {
			d.add(v)
		}
		want := slices.Sorted(slices.Values(in))
		if d.max != want[len(want)-1] {
			t.Fatalf("%v: max %d, want %d", in, d.max, want[len(want)-1])
		}
		if got := d.sorted(); !slices.Equal(got, want) {
			t.Fatalf("%v: sorted %v, want %v", in, got, want)
		}
	}
}
