package trace

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Window is the trace-window projection.
var Window = &projection.Spec{
	Name:   "trace-window",
	Tables: []*table.Schema{table.TraceSlices.Schema, table.TraceCounters.Schema},
	Params: append([]param.Param{
		{Name: "top", Type: param.Int, Default: int64(100), Min: param.F(1), Max: param.F(100000),
			Doc: "slices to return (and, apart, counter samples)"},
		{Name: "cursor", Type: param.String,
			Doc: "continue after the last row of an earlier result: its summary's coverage.next_cursor"},
		{Name: "counters", Type: param.Bool, Default: true, Doc: "also return the counter samples in the window"},
	}, windowParams()...),
	New: newWindow,
}

// windowParams are the selection parameters, with a window required.
func windowParams() []param.Param {
	out := make([]param.Param, 0, len(selectParams))
	for _, p := range selectParams {
		switch p.Name {
		case "start_ns":
			p.Required = true
			p.Doc = "window start on the trace's clock, ns (inclusive)"
		case "end_ns":
			p.Required = true
			p.Doc = "window end on the trace's clock, ns (exclusive)"
		case "process", "thread":
			p.Doc = "keep only this native " + p.Name + " id (exact)"
		}
		out = append(out, p)
	}
	return out
}

// position is where a slice stands in the window's order: by start, the
// longer (enclosing) slice first, then table and slice id.
type position struct {
	start, dur int64
	table      int
	id         string
}

func comparePos(a, b position) int {
	return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.dur, a.dur), cmp.Compare(a.table, b.table), compareID(a.id, b.id))
}

// compareID orders ids numerically when both are integers (Chrome's
// event indexes), else as text.
func compareID(a, b string) int {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}

func (p position) cursor() string {
	return fmt.Sprintf("%d/%d/%d/%s", p.start, p.dur, p.table, p.id)
}

func parseCursor(s string) (position, error) {
	parts := strings.SplitN(s, "/", 4)
	bad := &evidence.Failure{Code: evidence.CodeInvalidArgument,
		Message: "argument cursor is not a cursor of inspect_trace_window: pass coverage.next_cursor of an earlier result as it is", Location: evidence.Location{Field: "cursor"}}
	if len(parts) != 4 {
		return position{}, bad
	}
	var p position
	var err1, err2, err3 error
	p.start, err1 = strconv.ParseInt(parts[0], 10, 64)
	p.dur, err2 = strconv.ParseInt(parts[1], 10, 64)
	var t int64
	t, err3 = strconv.ParseInt(parts[2], 10, 32)
	if err1 != nil || err2 != nil || err3 != nil || t < 0 {
		return position{}, bad
	}
	p.table, p.id = int(t), parts[3]
	return p, nil
}

type windowSlice struct {
	pos      position
	row      table.TraceSlice
	artifact string
}

type windowCounter struct {
	row      table.TraceCounter
	artifact string
	table    int
	seq      int64
}

type window struct {
	projection.Inputs[struct{}]
	sel      selection
	top      int
	after    *position
	counters bool
	args     evidence.Object
	slices   *projection.TopN[windowSlice]
	samples  *projection.TopN[windowCounter]
	seq      int64
}

func newWindow(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	sel, err := selectionOf(args, given)
	if err != nil {
		return nil, err
	}
	top, _ := evidence.AsInt(args["top"])
	w := &window{Inputs: projection.NewInputs[struct{}](table.TraceSlices.Schema, table.TraceCounters.Schema),
		sel: sel, top: int(top), counters: true, args: args}
	if b, ok := args["counters"].(bool); ok {
		w.counters = b
	}
	if c, _ := args["cursor"].(string); c != "" {
		p, err := parseCursor(c)
		if err != nil {
			return nil, err
		}
		w.after = &p
	}
	w.slices = projection.NewTopN(w.top, func(a, b windowSlice) bool { return comparePos(a.pos, b.pos) < 0 })
	w.samples = projection.NewTopN(w.top, func(a, b windowCounter) bool {
		return cmp.Or(cmp.Compare(a.row.TS, b.row.TS), cmp.Compare(a.table, b.table), cmp.Compare(a.seq, b.seq)) < 0
	})
	w.Bound(projection.ArtifactBound{Name: "max_artifacts", Max: MaxArtifacts, Unit: "traces"})
	return w, nil
}

func (w *window) Row(t *evidence.Table, row any) error {
	if t.Name == table.TraceCounters.Name {
		c, x, artifact, err := projection.Read(&w.Inputs, table.TraceCounters, t, row)
		if err != nil {
			return err
		}
		w.seq++
		if !w.counters || !w.sel.overlaps(c.TS, c.TS) || (w.sel.category != "" && c.Category != table.Some(w.sel.category)) ||
			(w.sel.name != nil && !w.sel.name.MatchString(c.Name)) ||
			(w.sel.process != "" && c.Process != table.Some(w.sel.process)) || (w.sel.thread != "" && c.Thread != table.Some(w.sel.thread)) {
			return nil
		}
		if w.after != nil && c.TS < w.after.start {
			return nil // shown with the slices before the cursor
		}
		w.samples.Add(windowCounter{row: *c, artifact: artifact, table: x.Index, seq: w.seq})
		return nil
	}
	r, x, artifact, err := projection.Read(&w.Inputs, table.TraceSlices, t, row)
	if err != nil {
		return err
	}
	if !w.sel.row(r) || (w.sel.process != "" && r.Process != table.Some(w.sel.process)) ||
		(w.sel.thread != "" && r.Thread != table.Some(w.sel.thread)) {
		return nil
	}
	p := position{start: r.StartNS, dur: r.DurationNS, table: x.Index, id: r.SliceID}
	if w.after != nil && comparePos(p, *w.after) <= 0 {
		return nil
	}
	w.slices.Add(windowSlice{pos: p, row: *r, artifact: artifact})
	return nil
}

func (w *window) Finish(em projection.Emitter) error {
	if err := w.Ready(); err != nil {
		return err
	}
	res, err := projection.Begin(em, w.Header(table.TraceWindowSlices.Schema, "", evidence.Observed, w.args))
	if err != nil {
		return err
	}
	kept := w.slices.Sorted()
	for i := range kept {
		if err := res.Row(&kept[i].row, kept[i].artifact); err != nil {
			return err
		}
	}
	s := w.Summarize(w.slices.Observed(), w.slices.Truncation())
	s.Coverage["window"] = evidence.Object{"start_ns": w.sel.start, "end_ns": w.sel.end}
	s.Coverage["next_cursor"] = nil
	if s.Truncation != nil && len(kept) > 0 {
		s.Coverage["next_cursor"] = kept[len(kept)-1].pos.cursor()
		s.Limit("more slices overlap the window: pass coverage.next_cursor as cursor to continue")
	}
	if w.after != nil {
		s.Coverage["after_cursor"] = w.after.cursor()
	}
	if err := res.End(s); err != nil {
		return err
	}
	if !w.counters {
		return nil
	}
	cres, err := projection.Begin(em, w.Header(table.TraceWindowCounters.Schema, "", evidence.Observed, w.args))
	if err != nil {
		return err
	}
	for _, c := range w.samples.Sorted() {
		if err := cres.Row(&c.row, c.artifact); err != nil {
			return err
		}
	}
	cs := w.Summarize(w.samples.Observed(), w.samples.Truncation())
	cs.Coverage["window"] = evidence.Object{"start_ns": w.sel.start, "end_ns": w.sel.end}
	if cs.Truncation != nil {
		cs.Limit("more counter samples fall in the window than top: narrow the window")
	}
	return cres.End(cs)
}
