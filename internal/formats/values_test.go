package formats

import (
	"reflect"
	"strings"
	"testing"
)

// TestBoundIntoOrder: keys that the bound cuts to one key keep the value
// of the first in byte order, a key left whole keeps its own, and the
// result is the same whatever order the map gives.
func TestBoundIntoOrder(t *testing.T) {
	long := strings.Repeat("k", 20)
	v := &Values{max: 16}
	cutKey := v.Bound(long + "A")
	m := map[string]int{long + "C": 3, long + "A": 1, long + "B": 2, "short": 4}
	want := map[string]any{cutKey: 10, "short": 40}
	for range 50 {
		got := map[string]any{}
		BoundInto(v, got, m, func(x int) any { return x * 10 })
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
