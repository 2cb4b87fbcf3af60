package xctrace

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// sliceCols are the columns a non-CPU table's slices are made of: -1
// where the schema has none. A table is sliced when it has both a start
// (engineering type start-time) and a duration column.
type sliceCols struct {
	start, dur, name, thread, process int
}

// maxSliceArgs bounds the other cells kept in a slice's args.
const maxSliceArgs = 64

func (d *decoder) sliceColumns() *sliceCols {
	c := &sliceCols{-1, -1, -1, -1, -1}
	for i, col := range d.cols {
		switch {
		case col.engType == "start-time" && c.start < 0:
			c.start = i
		case col.engType == "duration" && c.dur < 0:
			c.dur = i
		case col.engType == "thread" && c.thread < 0:
			c.thread = i
		case col.engType == "process" && c.process < 0:
			c.process = i
		case col.mnemonic == "name" && c.name < 0:
			c.name = i
		}
	}
	return c
}

// text is a cell's display value: its fmt, else its text.
func text(e *elem) string {
	if e.fmt != "" {
		return e.fmt
	}
	return e.text
}

// slice makes a trace.slices row of a row of a table with a start and a
// duration; the rows of other tables are counted.
func (d *decoder) slice() error {
	if d.sl == nil {
		d.sl = d.sliceColumns()
	}
	c := d.sl
	if c.start < 0 || c.dur < 0 {
		d.other[d.schema]++
		return nil
	}
	cell := func(i int) *elem {
		if i < 0 || d.cells[i].name == "sentinel" {
			return nil
		}
		return d.cells[i]
	}
	st, du := cell(c.start), cell(c.dur)
	if st == nil || du == nil {
		d.other[d.schema+" (rows without start or duration)"]++
		return nil
	}
	start, err1 := strconv.ParseInt(st.text, 10, 64)
	dur, err2 := strconv.ParseInt(du.text, 10, 64)
	if err1 != nil || err2 != nil || dur < 0 || start > 1<<62 || dur > 1<<62 {
		return d.fail("%s start %q or duration %q is not an integer of nanoseconds", d.schema, st.text, du.text)
	}
	v := d.sliceVals
	name := d.schema
	if e := cell(c.name); e != nil {
		name = text(e)
	}
	r := &table.TraceSlice{
		SliceID:  fmt.Sprintf("%d:%d", d.nodes, d.nodeRow),
		Kind:     table.SliceThread,
		Name:     v.Bound(name),
		Category: table.Some(v.Bound(d.schema)),
		StartNS:  start, EndNS: start + dur, DurationNS: dur,
	}
	if e := cell(c.thread); e != nil {
		r.Thread = table.Some(v.Bound(text(e)))
		if p := e.kid("process"); p != nil {
			r.Process = table.Some(v.Bound(text(p)))
		}
	}
	if e := cell(c.process); e != nil {
		r.Process = table.Some(v.Bound(text(e)))
	}
	args := evidence.Object{}
	for i, e := range d.cells {
		if i == c.start || i == c.dur || i == c.name || i == c.thread || i == c.process || e.name == "sentinel" {
			continue
		}
		if len(args) == maxSliceArgs {
			args["…"] = int64(len(d.cells) - i)
			break
		}
		k := d.cols[i].mnemonic
		if k == "" {
			k = strconv.Itoa(i)
		}
		args[v.Bound(k)] = v.Bound(text(e))
	}
	if len(args) > 0 {
		r.Args = args
	}
	d.nSlices++
	d.sliced[d.schema]++
	return d.slices.Row(r)
}

// endSlices closes trace.slices when some table was sliced.
func (d *decoder) endSlices() error {
	if d.nSlices == 0 {
		return nil
	}
	s := &evidence.Summary{RowsObserved: d.nSlices, Complete: true, Metrics: map[string]evidence.Metric{
		"slices": {Value: d.nSlices, Unit: "slices"},
	}}
	names := make([]string, 0, len(d.sliced))
	for k := range d.sliced {
		names = append(names, k)
	}
	slices.Sort(names)
	per := evidence.Object{}
	for _, k := range names {
		per[k] = d.sliced[k]
	}
	s.Coverage = evidence.Object{"slices_by_table": per}
	s.Limit("slices are the rows of tables with a start-time and a duration column, named by their name column (else the table's schema), category the schema; they are not nested: parent, depth and self time are null")
	s.Limit("args hold the other cells' display text (fmt) by column mnemonic")
	d.sliceVals.Summarize(s)
	return d.slices.End(s)
}
