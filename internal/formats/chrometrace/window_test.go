package chrometrace

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The window releases its events in Less order, pushes and pops
// interleaved, ties on time broken as Less breaks them.
func TestWindowOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var w window
	var out, all []*item
	for i := range 20000 {
		it := &item{ts: int64(r.IntN(500)), order: int8(r.IntN(2)), dur: int64(r.IntN(3)), seq: int64(i)}
		all = append(all, it)
		w.push(it)
		if r.IntN(3) == 0 {
			out = append(out, w.pop())
		}
	}
	for len(w) > 0 {
		out = append(out, w.pop())
	}
	if len(out) != len(all) {
		t.Fatalf("%d popped of %d", len(out), len(all))
	}
	// Each pop is the least of what was held then: replay and check.
	var held window
	next := 0
	r = rand.New(rand.NewPCG(3, 4))
	for i := range 20000 {
		r.IntN(500)
		r.IntN(2)
		r.IntN(3)
		held = append(held, all[i])
		if r.IntN(3) == 0 {
			least := slices.MinFunc(held, func(a, b *item) int { return cmpItems(a, b) })
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
	w := window{a, b}
	switch {
	case w.Less(0, 1):
		return -1
	case w.Less(1, 0):
		return 1
	}
	return 0
}
