package chrometrace

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The window releases its events in less order, pushes and pops
// interleaved, ties on time broken as less breaks them, whether events
// arrive at random (the heap), nearly in order (the run), or in order
// with some far out of place (both), and when time runs backwards.
func TestWindowOrder(t *testing.T) {
	for _, c := range []struct {
		name string
		ts   func(r *rand.Rand, i int) int64
	}{
		{"random", func(r *rand.Rand, i int) int64 { return int64(r.IntN(500)) }},
		{"nearly in order", func(r *rand.Rand, i int) int64 { return int64(i - r.IntN(40)) }},
		{"in order, some far back", func(r *rand.Rand, i int) int64 {
			if r.IntN(10) == 0 {
				return int64(i - 100 - r.IntN(300))
			}
			return int64(i / 3)
		}},
		{"backwards", func(r *rand.Rand, i int) int64 { return int64(-i / 2) }},
	} {
		t.Run(c.name, func(t *testing.T) { windowOrder(t, c.ts) })
	}
}

func windowOrder(t *testing.T, ts func(r *rand.Rand, i int) int64) {
	const n = 20000
	r := rand.New(rand.NewPCG(3, 4))
	var all []*item
	var pops []bool
	for i := range n {
		all = append(all, &item{ts: ts(r, i), order: int8(r.IntN(2)), dur: int64(r.IntN(3)), seq: int64(i)})
		// Pop about as often as push once the window is a few hundred
		// long, as a full window does.
		pops = append(pops, r.IntN(3) == 0 || (i > 300 && r.IntN(5) != 0))
	}
	var w window
	var out []*item
	for i, it := range all {
		w.push(it)
		if pops[i] {
			out = append(out, w.pop())
		}
	}
	for w.len() > 0 {
		out = append(out, w.pop())
	}
	if len(out) != len(all) {
		t.Fatalf("%d popped of %d", len(out), len(all))
	}
	// Each pop is the least of what was held then: replay and check.
	var held []*item
	next := 0
	for i, it := range all {
		held = append(held, it)
		if pops[i] {
			least := slices.MinFunc(held, cmpItems)
			if out[next] != least {
				t.Fatalf("pop %d: got seq %d, want seq %d", next, out[next].seq, least.seq)
			}
			held = slices.DeleteFunc(held, func(x *item) bool { return x == least })
			next++
		}
	}
	slices.SortFunc(held, cmpItems)
	for _, it := range held {
		if out[next] != it {
			t.Fatalf("drain %d: got seq %d, want seq %d", next, out[next].seq, it.seq)
		}
		next++
	}
}

func cmpItems(a, b *item) int {
	switch {
	case less(a, b):
		return -1
	case less(b, a):
		return 1
	}
	return 0
}
