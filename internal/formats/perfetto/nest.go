package perfetto

import (
	"container/heap"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// Nesting on a track. Slices nest by a stack per track: an END closes
// the innermost slice begun on its track. Trace Processor sorts the
// whole trace by time before it applies them, and a track may be
// written by several sequences (or one sequence writes some events with
// explicit earlier times), so file order is not time order. Each
// track's begin, end and instant events pass through a reorder window
// (a heap of at most reorder_window events, released in time order,
// ties in file order): within it, the result is the stack a time-sorted
// reading builds. An event earlier than one its track already released
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

type window []*item

func (w window) Len() int { return len(w) }
func (w window) Less(i, j int) bool {
	if w[i].ts != w[j].ts {
		return w[i].ts < w[j].ts
	}
	return w[i].seq < w[j].seq
}
func (w window) Swap(i, j int) { w[i], w[j] = w[j], w[i] }
func (w *window) Push(x any)   { *w = append(*w, x.(*item)) }
func (w *window) Pop() any {
	old := *w
	n := len(old)
	x := old[n-1]
	old[n-1] = nil
	*w = old[:n-1]
	return x
}

// enqueue queues a slice event on its track.
func (d *decoder) enqueue(tr *track, it *item, at int64) error {
	d.itemSeq++
	it.seq = d.itemSeq
	if tr.released && it.ts < tr.releasedTS {
		d.st.late++
		return d.apply(tr, it, at)
	}
	heap.Push(&tr.win, it)
	d.open++
	if d.open > d.maxOpen {
		return d.in.ExceededAt(LimitOpen, d.open, at)
	}
	if !tr.anyMax || it.ts > tr.maxTS {
		tr.anyMax, tr.maxTS = true, it.ts
	}
	// Held at most window events, and none more than horizon ns before
	// the track's latest: memory stays bounded by time as well as count.
	for len(tr.win) > d.window || (len(tr.win) > 0 && tr.maxTS-tr.win[0].ts > d.horizon) {
		d.open--
		x := heap.Pop(&tr.win).(*item)
		tr.released, tr.releasedTS = true, x.ts
		if err := d.apply(tr, x, at); err != nil {
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
		tr.stack = append(tr.stack, &open{row: r, skip: it.skip})
		return nil
	}
	n := len(tr.stack)
	if n == 0 {
		d.st.unmatchedEnd++
		return nil
	}
	o := tr.stack[n-1]
	tr.stack[n-1] = nil
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
		for len(tr.win) > 0 {
			d.open--
			x := heap.Pop(&tr.win).(*item)
			tr.released, tr.releasedTS = true, x.ts
			if err := d.apply(tr, x, -1); err != nil {
				return err
			}
		}
	}
	return nil
}
