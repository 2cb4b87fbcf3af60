package projection

import (
	"container/heap"
	"sort"

	"github.com/flameox/flameox/internal/evidence"
)

// TopN keeps the best n items of a stream and counts every item offered,
// so a projection can report rows_observed and truncation for exactly the
// population it selected. Memory is O(n).
type TopN[T any] struct {
	n        int
	before   func(a, b T) bool // a ranks ahead of b; must be a strict total order
	h        topHeap[T]
	observed int64
}

// NewTopN returns a TopN keeping n items (n <= 0 keeps all).
func NewTopN[T any](n int, before func(a, b T) bool) *TopN[T] {
	return &TopN[T]{n: n, before: before, h: topHeap[T]{before: before}}
}

// Add offers one item.
func (t *TopN[T]) Add(x T) {
	t.observed++
	if t.n <= 0 || t.h.Len() < t.n {
		heap.Push(&t.h, x)
		return
	}
	// The heap's root is the worst kept item.
	if t.before(x, t.h.items[0]) {
		t.h.items[0] = x
		heap.Fix(&t.h, 0)
	}
}

// Observed is the number of items offered.
func (t *TopN[T]) Observed() int64 { return t.observed }

// Sorted returns the kept items, best first.
func (t *TopN[T]) Sorted() []T {
	out := append([]T(nil), t.h.items...)
	sort.Slice(out, func(i, j int) bool { return t.before(out[i], out[j]) })
	return out
}

// Truncation describes what the bound omitted, or nil when nothing was.
// Its reason is always evidence.ReasonRowLimit: every projection's row
// bound says the same.
func (t *TopN[T]) Truncation() *evidence.Truncation {
	kept := int64(t.h.Len())
	if t.observed == kept {
		return nil
	}
	return &evidence.Truncation{Reason: evidence.ReasonRowLimit, Limit: int64(t.n), Omitted: t.observed - kept}
}

// topHeap is a heap whose root is the worst kept item.
type topHeap[T any] struct {
	items  []T
	before func(a, b T) bool
}

func (h topHeap[T]) Len() int           { return len(h.items) }
func (h topHeap[T]) Less(i, j int) bool { return h.before(h.items[j], h.items[i]) }
func (h topHeap[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *topHeap[T]) Push(x any)        { h.items = append(h.items, x.(T)) }
func (h *topHeap[T]) Pop() any {
	n := len(h.items)
	x := h.items[n-1]
	h.items = h.items[:n-1]
	return x
}
