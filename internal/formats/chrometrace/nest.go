package chrometrace

import (
	"math"

	"github.com/flameox/flameox/internal/table"
)

// Nesting on a thread. Chrome's viewer nests the synchronous slices of a
// thread (X events and B/E pairs) by time: a slice encloses the slices
// that start and end within it. The events of a thread usually come in
// time order, but not always (Kineto writes some X events late; several
// writers flush per-thread buffers), so each thread's events pass through
// a reorder window: a heap of at most window events, released in time
// order. An event that arrives after a later one was released is late:
// it is emitted, counted, and its nesting left unknown, never guessed.
//
// A released begin (B) opens a slice whose end is not known until its E
// is released; an X opens one whose end is. A slice is emitted when it
// closes, after the slices it encloses, with its self time.

// item is one event waiting in a thread's window.
type item struct {
	ts    int64
	order int8  // at one time: ends (0) before starts (1)
	dur   int64 // starts: duration, math.MaxInt64 for a B whose end is unknown
	seq   int64 // arrival order, the last tie-break
	kind  int8  // itemX, itemB or itemE
	row   *table.TraceSlice
	args  map[string]any // an E's args, merged into its B's
	name  string         // an E's name, when it has one
}

const (
	itemX int8 = iota
	itemB
	itemE
)

// less is the release order: by time, ends before starts, the enclosing
// slice first, then arrival. It is a total order (seq breaks every tie),
// so the order of release does not depend on how the window holds its
// events.
func less(a, b *item) bool {
	if a.ts != b.ts {
		return a.ts < b.ts
	}
	if a.order != b.order {
		return a.order < b.order
	}
	if a.dur != b.dur {
		return a.dur > b.dur // the enclosing slice first
	}
	return a.seq < b.seq
}

// window holds a thread's events not yet released and gives back the
// least by less. Most events arrive in order, or a few places early, so
// they join run, a queue kept sorted, at or near its end: pushing and
// popping them is cheap. An event further out of place goes to heap, a
// min-heap, so no arrival order costs more than a logarithm; the least
// event is the lesser of the two fronts.
type window struct {
	run  []*item // run[head:] sorted by less
	head int
	heap []*item
}

// shiftMax bounds the places an event is moved back into run (a copy of
// at most 8 KiB: Kineto writes some events a few hundred places late).
const shiftMax = 1024

func (w *window) len() int { return len(w.run) - w.head + len(w.heap) }

func (w *window) push(it *item) {
	r := w.run
	j := len(r)
	if j > w.head && less(it, r[j-1]) {
		// Its place is in the last shiftMax of run, found by bisection,
		// or it goes to the heap.
		lo := max(w.head, j-shiftMax)
		if less(it, r[lo]) {
			w.heapPush(it)
			return
		}
		// r[lo] ≤ it < r[j-1]: the first element above it is in (lo, j-1].
		lo, hi := lo+1, j-1
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if less(it, r[m]) {
				hi = m
			} else {
				lo = m + 1
			}
		}
		j = lo
	}
	if len(r) == cap(r) && w.head >= len(r)/2 {
		// Reuse the room popped from the front rather than grow.
		n := copy(r, r[w.head:])
		clear(r[n:])
		r, j, w.head = r[:n], j-w.head, 0
	}
	r = append(r, nil)
	copy(r[j+1:], r[j:])
	r[j] = it
	w.run = r
}

func (w *window) pop() *item {
	if len(w.heap) > 0 && (w.head == len(w.run) || less(w.heap[0], w.run[w.head])) {
		return w.heapPop()
	}
	it := w.run[w.head]
	w.run[w.head] = nil
	w.head++
	if w.head == len(w.run) {
		w.run, w.head = w.run[:0], 0
	}
	return it
}

// heapPush and heapPop keep heap a min-heap by less, written for the one
// element type (container/heap's interface calls cost more than the
// comparisons).
func (w *window) heapPush(it *item) {
	h := append(w.heap, it)
	for j := len(h) - 1; j > 0; {
		i := (j - 1) / 2
		if !less(h[j], h[i]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
	w.heap = h
}

func (w *window) heapPop() *item {
	h := w.heap
	n := len(h) - 1
	top := h[0]
	h[0] = h[n]
	h[n] = nil
	h = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && less(h[r], h[l]) {
			j = r
		}
		if !less(h[j], h[i]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
	w.heap = h
	return top
}

// open is a slice on a thread's nesting stack.
type open struct {
	row      *table.TraceSlice
	end      int64 // math.MaxInt64 while a B waits for its E
	begin    bool  // a B
	children int64 // durations of the slices it directly encloses
	late     bool  // nesting unknown
}

// thread is one thread's timeline.
type thread struct {
	win      window
	stack    []*open
	released int64 // time of the last released event
	any      bool  // an event was released
}

// nester nests the synchronous slices of every thread.
type nester struct {
	window int
	seq    int64
	emit   func(*table.TraceSlice) error
	stats  *stats
	// pending counts the events held in windows, held the slices on
	// nesting stacks: what the open-slice bound counts.
	pending, held int64
	// Items and opens done with, for reuse: one of each per slice
	// otherwise costs two allocations.
	freeItems freeList[item]
	freeOpens freeList[open]
}

func (n *nester) newItem() *item { return n.freeItems.get() }

// done takes back an item released or emitted.
func (n *nester) done(it *item) { n.freeItems.put(it) }

// newOpen returns a zero open (filled by the caller: a value parameter
// would escape and cost the allocation saved).
func (n *nester) newOpen() *open { return n.freeOpens.get() }

// closed takes back an open slice emitted or dropped.
func (n *nester) closed(o *open) { n.freeOpens.put(o) }

// freeList keeps values done with, zeroed, for reuse.
type freeList[T any] []*T

func (f *freeList[T]) get() *T {
	if k := len(*f); k > 0 {
		p := (*f)[k-1]
		*f = (*f)[:k-1]
		return p
	}
	return new(T)
}

func (f *freeList[T]) put(p *T) {
	var zero T
	*p = zero
	*f = append(*f, p)
}

// add queues an event on th and releases what the window no longer holds.
func (n *nester) add(th *thread, it *item) error {
	n.seq++
	it.seq = n.seq
	if th.any && it.ts < th.released {
		// Later events of this thread are out already.
		return n.late(th, it)
	}
	th.win.push(it)
	n.pending++
	for th.win.len() > n.window {
		if err := n.release(th, th.win.pop()); err != nil {
			return err
		}
	}
	return nil
}

// late handles an event that arrived after its thread released a later
// one: an X or a B/E pair still becomes a slice, but not placed.
func (n *nester) late(th *thread, it *item) error {
	n.stats.late++
	switch it.kind {
	case itemX:
		r := it.row
		n.done(it)
		r.Depth, r.ParentID, r.SelfNS = table.Null[int64]{}, table.Null[string]{}, table.Null[int64]{}
		return n.emit(r)
	case itemB:
		o := n.newOpen()
		*o = open{row: it.row, end: math.MaxInt64, begin: true, late: true}
		th.stack = append(th.stack, o)
		n.held++
		n.done(it)
		return nil
	}
	n.pending++ // release counts it out
	return n.release(th, it)
}

// release takes the next event of th in time order.
func (n *nester) release(th *thread, it *item) error {
	n.pending--
	if !th.any || it.ts > th.released {
		th.released = it.ts
	}
	th.any = true
	if err := n.closeBefore(th, it.ts); err != nil {
		return err
	}
	if it.kind == itemE {
		err := n.end(th, it)
		n.done(it)
		return err
	}
	o := n.newOpen()
	if it.kind == itemX {
		*o = open{row: it.row, end: it.ts + it.dur}
	} else {
		*o = open{row: it.row, end: math.MaxInt64, begin: true}
	}
	n.done(it)
	return n.push(th, o)
}

// closeBefore emits the slices of th that end at or before ts.
func (n *nester) closeBefore(th *thread, ts int64) error {
	for len(th.stack) > 0 {
		top := th.stack[len(th.stack)-1]
		if top.end > ts {
			return nil
		}
		th.stack = th.stack[:len(th.stack)-1]
		n.held--
		if err := n.finish(th, top); err != nil {
			return err
		}
	}
	return nil
}

// push places a slice inside the innermost open slice that encloses it.
// One that starts inside the innermost slice but ends after it overlaps
// it: it is counted, and emitted without a place (not re-parented into a
// slice it does not nest in).
func (n *nester) push(th *thread, o *open) error {
	r := o.row
	if len(th.stack) > 0 {
		top := th.stack[len(th.stack)-1]
		if o.end > top.end {
			n.stats.overlapping++
			o.late = true
			if !o.begin {
				n.closed(o)
				r.Depth, r.ParentID, r.SelfNS = table.Null[int64]{}, table.Null[string]{}, table.Null[int64]{}
				return n.emit(r)
			}
		} else if !top.late {
			r.ParentID = table.Some(top.row.SliceID)
		}
	}
	if !o.late {
		r.Depth = table.Some(int64(len(th.stack)))
		if len(th.stack) > 0 && th.stack[len(th.stack)-1].late {
			o.late = true // inside a slice that has no place
		}
	}
	th.stack = append(th.stack, o)
	n.held++
	return nil
}

// end closes the innermost B of th at an E. X slices still open above it
// end after it: they overlap its end, are counted, and close with it.
func (n *nester) end(th *thread, it *item) error {
	i := len(th.stack) - 1
	for i >= 0 && !th.stack[i].begin {
		i--
	}
	if i < 0 {
		n.stats.unmatchedEnd++
		return nil
	}
	for len(th.stack)-1 > i {
		top := th.stack[len(th.stack)-1]
		th.stack = th.stack[:len(th.stack)-1]
		n.held--
		n.stats.overlapping++
		top.late = true
		top.row.Depth, top.row.ParentID = table.Null[int64]{}, table.Null[string]{}
		if err := n.finish(th, top); err != nil {
			return err
		}
	}
	b := th.stack[i]
	th.stack = th.stack[:i]
	n.held--
	r := b.row
	if it.name != "" && it.name != r.Name {
		n.stats.endNameMismatch++
	}
	r.EndNS = it.ts
	r.DurationNS = it.ts - r.StartNS
	b.end = it.ts
	for k, v := range it.args {
		if r.Args == nil {
			r.Args = map[string]any{}
		}
		if _, dup := r.Args[k]; !dup {
			r.Args[k] = v
		}
	}
	return n.finish(th, b)
}

// finish emits a closed slice with its self time and adds its duration
// to its parent's children.
func (n *nester) finish(th *thread, o *open) error {
	r := o.row
	if o.late {
		r.Depth, r.SelfNS = table.Null[int64]{}, table.Null[int64]{}
	} else {
		r.SelfNS = table.Some(r.DurationNS - o.children)
		if len(th.stack) > 0 {
			th.stack[len(th.stack)-1].children += r.DurationNS
		}
	}
	n.closed(o)
	return n.emit(r)
}

// drain releases everything at the end of the trace. B slices still open
// are unclosed: counted, not emitted (their end is unknown).
func (n *nester) drain(threads []*thread) error {
	for _, th := range threads {
		for th.win.len() > 0 {
			if err := n.release(th, th.win.pop()); err != nil {
				return err
			}
		}
		for len(th.stack) > 0 {
			top := th.stack[len(th.stack)-1]
			th.stack = th.stack[:len(th.stack)-1]
			n.held--
			if top.begin {
				n.stats.unclosedBegin++
				n.stats.noteUnclosed(top.row.Name)
				n.closed(top)
				// What it enclosed keeps its place; the parent's self
				// time is unknown.
				continue
			}
			if err := n.finish(th, top); err != nil {
				return err
			}
		}
	}
	return nil
}
