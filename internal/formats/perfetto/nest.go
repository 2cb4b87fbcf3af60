package perfetto

import (
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// Nesting on a track. Slices nest by a stack per track: an END closes
// the innermost slice begun on its track. Trace Processor sorts the
// whole trace by time before it applies them, and a track may be
// written by several sequences (or one sequence writes some events with
// explicit earlier times), so file order is not time order. Each
// track's begin, end and instant events pass through a reorder window
// (at most reorder_window events, released in time order, ties in file
// order): within it, the result is the stack a time-sorted reading
// builds. An event earlier than one its track already released
// is late: applied at once (in file order), and counted. The window also
// releases what is more than reorder_window_ns older than the track's
// latest event, so memory is bounded in time as well as in count.

const (
	itemBegin uint8 = iota
	itemEnd
	itemInstant
)

// item is one slice event waiting in its track's window.
type item struct {
	ts   int64
	seq  int64
	typ  uint8
	skip bool
	row  *table.TraceSlice
	args evidence.Object // an END's debug annotations, merged into its slice
}

// window is a track's held events in release order (time, then file
// order), the next to release at head. Events mostly come in time order,
// so an insert is mostly an append; one earlier than the latest held
// moves the later ones up. Items are held by value: one allocation less
// per event than a heap of pointers.
type window struct {
	items []item
	head  int
}

func (w *window) len() int { return len(w.items) - w.head }

// first is the next event to release; the window is not empty.
func (w *window) first() *item { return &w.items[w.head] }

// push inserts it after every held event of a time at or before its own:
// its seq is the largest yet, so that is its place in (ts, seq) order.
func (w *window) push(it item) {
	if w.head > 0 && w.head >= len(w.items)/2 && len(w.items) == cap(w.items) {
		// Reclaim the released front before the slice grows.
		n := copy(w.items, w.items[w.head:])
		clear(w.items[n:])
		w.items, w.head = w.items[:n], 0
	}
	n := len(w.items)
	if n == w.head || w.items[n-1].ts <= it.ts {
		w.items = append(w.items, it)
		return
	}
	lo, hi := w.head, n-1 // the first held event later than it is in [lo, hi]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if w.items[m].ts > it.ts {
			hi = m
		} else {
			lo = m + 1
		}
	}
	w.items = append(w.items, item{})
	copy(w.items[lo+1:], w.items[lo:n])
	w.items[lo] = it
}

// pop releases the first event; the window is not empty.
func (w *window) pop() item {
	it := w.items[w.head]
	w.items[w.head] = item{}
	w.head++
	if w.head == len(w.items) {
		w.head = 0
		if cap(w.items) > maxIdleWindow {
			w.items = nil // a burst's room is not kept for the rest of the trace
		} else {
			w.items = w.items[:0]
		}
	}
	return it
}

// maxIdleWindow is the room an emptied window keeps.
const maxIdleWindow = 64

// enqueue queues a slice event on its track.
func (d *decoder) enqueue(tr *track, it item, at int64) error {
	d.itemSeq++
	it.seq = d.itemSeq
	if tr.released && it.ts < tr.releasedTS {
		d.st.late++
		return d.apply(tr, &it, at)
	}
	tr.win.push(it)
	d.open++
	if d.open > d.maxOpen {
		return d.in.ExceededAt(LimitOpen, d.open, at)
	}
	if !tr.anyMax || it.ts > tr.maxTS {
		tr.anyMax, tr.maxTS = true, it.ts
	}
	// Held at most window events, and none more than horizon ns before
	// the track's latest: memory stays bounded by time as well as count.
	for tr.win.len() > d.window || (tr.win.len() > 0 && tr.maxTS-tr.win.first().ts > d.horizon) {
		d.open--
		x := tr.win.pop()
		tr.released, tr.releasedTS = true, x.ts
		if err := d.apply(tr, &x, at); err != nil {
			return err
		}
	}
	return nil
}

// apply applies one event to its track's stack.
func (d *decoder) apply(tr *track, it *item, at int64) error {
	switch it.typ {
	case itemBegin, itemInstant:
		r := it.row
		if n := len(tr.stack); n > 0 && !tr.stack[n-1].skip {
			r.ParentID = table.Some(tr.stack[n-1].row.SliceID)
		}
		r.Depth = table.Some(int64(len(tr.stack)))
		if it.typ == itemInstant {
			r.SelfNS = table.Some(int64(0))
			d.nSlices++
			return d.slices.Row(r)
		}
		d.open++
		if d.open > d.maxOpen {
			return d.in.ExceededAt(LimitOpen, d.open, at)
		}
		tr.stack = append(tr.stack, open{row: r, skip: it.skip})
		return nil
	}
	n := len(tr.stack)
	if n == 0 {
		d.st.unmatchedEnd++
		return nil
	}
	o := tr.stack[n-1]
	tr.stack[n-1] = open{}
	tr.stack = tr.stack[:n-1]
	d.open--
	r := o.row
	r.EndNS, r.DurationNS = it.ts, it.ts-r.StartNS
	if n > 1 {
		tr.stack[n-2].children += r.DurationNS
	}
	if o.skip {
		d.st.skippedSlices++
		return nil
	}
	if r.DurationNS < 0 {
		d.st.endBeforeBegin++
	}
	r.SelfNS = table.Some(r.DurationNS - o.children)
	for k, v := range it.args {
		if r.Args == nil {
			r.Args = evidence.Object{}
		}
		if _, dup := r.Args[k]; dup {
			d.st.duplicateArgs++
			continue
		}
		r.Args[k] = v
	}
	d.nSlices++
	return d.slices.Row(r)
}

// drain releases every track's window at the end of the trace.
func (d *decoder) drain(tracks []*track) error {
	for _, tr := range tracks {
		for tr.win.len() > 0 {
			d.open--
			x := tr.win.pop()
			tr.released, tr.releasedTS = true, x.ts
			if err := d.apply(tr, &x, -1); err != nil {
				return err
			}
		}
	}
	return nil
}
