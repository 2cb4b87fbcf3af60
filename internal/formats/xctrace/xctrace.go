// Package xctrace decodes the XML that Apple's `xctrace export --xpath …`
// writes for a table of an Instruments trace: a <trace-query-result> with
// one <node> per exported table, each with its <schema> (a <col> per
// column: mnemonic, name, engineering-type) and <row>s whose cells follow
// the columns in order.
//
// xctrace writes every repeated value once: the first occurrence of an
// element carries id="N" and every later one is an empty element with
// ref="N". The decoder keeps the elements that carry an id (the format's
// own de-duplication table, bounded by max_ids) and resolves each ref
// against it; a ref to an id not seen earlier is a DECODE_FAILURE at its
// position. <sentinel/> is an empty cell.
//
// The CPU sampling schemas (time-profile, time-sample, cpu-profile) become
// cpu.frames, cpu.edges and cpu.stacks, one table of each per schema:
// a row is one sample, its backtrace (frames leaf first, each with its
// symbol name, address and binary) its stack, its thread and process the
// series, and its weight column (time-profile: weight, in nanoseconds;
// cpu-profile: cycle-weight, in cycles) its weight; a schema without a
// weight column counts samples. Rows of every other table are counted per
// schema and stated in the summaries, not interpreted.
//
// The document streams through encoding/xml's RawToken; memory grows with
// the id'd elements, distinct frames and stacks, never with the rows.
//
// It imports formats, formats/collapsed (the stack aggregation the perf
// decoders share), evidence, param, table and unit.
package xctrace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/collapsed"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// Version is the decoder version recorded in table headers.
const Version = "1"

// Limit names.
const (
	LimitIDs   = "max_ids"
	LimitDepth = "max_depth"
	LimitText  = "max_text_bytes"
)

// Spec is the xctrace export format.
var Spec = withSlices(formats.WithLines(formats.CPUStackProfile(formats.Spec{
	Name:  "xctrace-xml",
	Title: "xctrace export XML",
	Sniff: sniff,
	Limits: []formats.Limit{
		{Name: formats.LimitBytes, Default: 64 << 30, Unit: "bytes", Doc: "bytes in the export"},
		{Name: LimitIDs, Default: 20_000_000, Unit: "count", Doc: "elements with an id (the export's de-duplication table)"},
		{Name: LimitDepth, Default: 64, Unit: "count", Doc: "nested elements"},
		{Name: LimitText, Default: 1 << 20, Unit: "bytes", Doc: "bytes in one text or attribute value"},
		{Name: collapsed.LimitStack, Default: 16384, Unit: "frames", Doc: "frames in one backtrace"},
		{Name: collapsed.LimitFrames, Default: 1 << 22, Unit: "frames", Doc: "distinct frames (symbol, binary)"},
	},
	Options:  []param.Param{formats.ValueBytesParam},
	Producer: "xcrun xctrace export --xpath '/trace-toc/run[@number=\"1\"]/data/table[@schema=\"time-profile\"]'",
	Version:  Version,
	Decoder:  formats.DecoderFunc(decode),
})))

// withSlices adds trace.slices, made of the tables with a start time and
// a duration column.
func withSlices(s *formats.Spec) *formats.Spec {
	s.Tables = append(s.Tables, table.TraceSlices.Schema)
	return s
}

// root is the document element of an xctrace query export.
var root = []byte("<trace-query-result")

// sniff says Yes when the first element is <trace-query-result>, after
// an optional BOM, XML declaration, comments and whitespace. xctrace's
// --toc output (<trace-toc>) and Instruments' own files are not query
// results.
func sniff(prefix []byte) formats.Verdict {
	p := bytes.TrimPrefix(prefix, formats.BOM)
	for {
		p = bytes.TrimLeft(p, " \t\r\n")
		switch {
		case len(p) == 0:
			return formats.NeedMore
		case bytes.HasPrefix(p, []byte("<?")), bytes.HasPrefix(p, []byte("<!--")):
			end := []byte("?>")
			if p[1] == '!' {
				end = []byte("-->")
			}
			i := bytes.Index(p, end)
			if i < 0 {
				return need(prefix)
			}
			p = p[i+len(end):]
			continue
		case p[0] != '<':
			return formats.No
		case len(p) <= len(root):
			if bytes.HasPrefix(root, p) {
				return need(prefix)
			}
			return formats.No
		case bytes.HasPrefix(p, root) && strings.IndexByte(" \t\r\n>/", p[len(root)]) >= 0:
			return formats.Yes
		}
		return formats.No
	}
}

func need(prefix []byte) formats.Verdict {
	if len(prefix) < formats.SniffBytes {
		return formats.NeedMore
	}
	return formats.No
}

// elem is one element inside a row: its name, fmt attribute, other
// attributes, text and children. Elements with an id stay in the
// document's table for the refs after them.
type elem struct {
	name  string
	fmt   string
	text  string
	attrs []attr
	kids  []*elem
}

type attr struct{ key, val string }

func (e *elem) attr(k string) string {
	for _, a := range e.attrs {
		if a.key == k {
			return a.val
		}
	}
	return ""
}

func (e *elem) kid(name string) *elem {
	for _, k := range e.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}

// idTable holds the elements that carry an id. xctrace numbers them,
// so an integer key saves a string per element; another id is kept by
// its text.
type idTable struct {
	num map[uint64]*elem
	str map[string]*elem
}

func (t *idTable) get(id string) *elem {
	if n, err := strconv.ParseUint(id, 10, 64); err == nil && id[0] != '0' {
		return t.num[n]
	}
	return t.str[id]
}

func (t *idTable) put(id string, e *elem) {
	if n, err := strconv.ParseUint(id, 10, 64); err == nil && id[0] != '0' {
		t.num[n] = e
		return
	}
	t.str[id] = e
}

func (t *idTable) len() int64 { return int64(len(t.num) + len(t.str)) }

// column is one <col> of a schema.
type column struct{ mnemonic, name, engType string }

// CPU schemas and the engineering types their cells are read by.
var (
	cpuSchemas = []string{"time-profile", "time-sample", "cpu-profile"}
	btTypes    = []string{"backtrace", "tagged-backtrace", "kperf-bt"}
)

// open is one open element on the decoder's stack.
type open struct {
	name string
	e    *elem // element being built (inside a row); nil above
	id   string
	ref  *elem // the element a ref names
}

type decoder struct {
	ctx  context.Context
	in   *formats.Input
	x    *xml.Decoder
	ids  idTable
	st   []open
	maxT int

	schema   string
	cols     []column
	colBuf   *column
	colField string
	text     []byte

	cells []*elem

	tables []*cpuTable
	other  map[string]int64 // rows per non-CPU schema, not interpreted

	slices    *formats.LazyTable
	sliceVals *formats.Values
	nSlices   int64
	sliced    map[string]int64 // slices per schema
	sl        *sliceCols       // the current node's, once its first row is read
	nodeRow   int64
	rows      int64
	nodes     int64
	sentinels int64
	off       int64
}

// cpuTable is one CPU schema's samples.
type cpuTable struct {
	schema   string
	unit     string // "" for samples
	weightAt int    // column of the weight; -1 when none
	prof     *collapsed.Profile
	frameOf  map[*elem]uint32
	leaf     []uint32
	// lines is the profile of source lines: frames (symbol, binary,
	// file, line) from each frame's <source>, its function's row (line
	// -1) where a frame has none.
	lines    *collapsed.Profile
	lineOf   map[*elem]uint32
	lineLeaf []uint32
	sourced  int64 // distinct frames with a source line
	rows     int64
	noStack  int64
	noWeight int64
	first    int64
	last     int64
	timed    bool
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if err := in.CheckSize(); err != nil {
		return err
	}
	d := &decoder{ctx: ctx, in: in, ids: idTable{num: map[uint64]*elem{}, str: map[string]*elem{}}, other: map[string]int64{}, maxT: int(in.Limit(LimitText)),
		slices: formats.NewLazyTable(out, table.TraceSlices.Header("")), sliceVals: in.Values(), sliced: map[string]int64{}}
	d.x = xml.NewDecoder(bufio.NewReaderSize(formats.FileReader(in.R), 256<<10))
	d.x.Strict = true
	if err := d.run(); err != nil {
		if d.nSlices > 0 {
			s := &evidence.Summary{RowsObserved: d.nSlices}
			s.Limit("decoding stopped at a failure: " + err.Error())
			return d.slices.Abort(err, s)
		}
		return err
	}
	if err := d.endSlices(); err != nil {
		return err
	}
	return d.emit(out)
}

// fail is a DECODE_FAILURE at the token being read.
func (d *decoder) fail(format string, args ...any) error {
	line, col := d.x.InputPos()
	return &evidence.Failure{Code: evidence.CodeDecodeFailure,
		Message:  fmt.Sprintf("%s: ", d.in.Spec.Title) + fmt.Sprintf(format, args...),
		Location: evidence.Location{Line: line, Column: col, Offset: d.off}}
}

func (d *decoder) run() error {
	var n int64
	sawRoot := false
	for {
		d.off = d.x.InputOffset()
		tok, err := d.x.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return d.fail("malformed XML: %s", se.Msg)
			}
			return d.in.Typed(err, nil)
		}
		if n++; n&0xFFFF == 0 && d.ctx.Err() != nil {
			return d.ctx.Err()
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(d.st) == 0 {
				if sawRoot {
					return d.fail("a second document element <%s>", t.Name.Local)
				}
				if t.Name.Local != "trace-query-result" {
					return d.fail("not an xctrace export: the document element is <%s>, not <trace-query-result>", t.Name.Local)
				}
				sawRoot = true
			}
			if err := d.start(t); err != nil {
				return err
			}
		case xml.EndElement:
			if err := d.end(t); err != nil {
				return err
			}
		case xml.CharData:
			if err := d.chars(t); err != nil {
				return err
			}
		}
	}
	if !sawRoot {
		return d.fail("not an xctrace export: no <trace-query-result> element")
	}
	if len(d.st) > 0 {
		return d.fail("the export ends inside <%s>: the document is truncated", d.st[len(d.st)-1].name)
	}
	return nil
}

func (d *decoder) start(t xml.StartElement) error {
	if int64(len(d.st)) >= d.in.Limit(LimitDepth) {
		return d.at(d.in.Exceeded(LimitDepth, nil))
	}
	o := open{name: t.Name.Local}
	depth := len(d.st) // 0 root, 1 node, 2 schema/row, 3 cell
	switch {
	case depth == 1 && o.name == "node":
		d.nodes++
		d.schema, d.cols, d.sl, d.nodeRow = "", nil, nil, 0
	case depth == 2 && o.name == "schema":
		for _, a := range t.Attr {
			if a.Name.Local == "name" {
				d.schema = a.Value
			}
		}
	case depth == 3 && o.name == "col" && d.parent() == "schema":
		d.colBuf = &column{}
	case depth == 4 && d.colBuf != nil:
		d.colField = o.name
		d.text = d.text[:0]
	case depth == 2 && o.name == "row":
		d.cells = d.cells[:0]
	case depth >= 3 && d.inRow():
		e := &elem{name: o.name}
		for _, a := range t.Attr {
			if len(a.Value) > d.maxT {
				return d.at(d.in.Exceeded(LimitText, len(a.Value)))
			}
			switch a.Name.Local {
			case "id":
				o.id = a.Value
			case "ref":
				r := d.ids.get(a.Value)
				if r == nil {
					return d.fail("<%s ref=%q> names no element with id=%q before it", o.name, a.Value, a.Value)
				}
				o.ref = r
			case "fmt":
				e.fmt = a.Value
			default:
				e.attrs = append(e.attrs, attr{a.Name.Local, a.Value})
			}
		}
		o.e = e
	}
	d.st = append(d.st, o)
	return nil
}

// at locates a failure at the current offset.
func (d *decoder) at(f *evidence.Failure) error {
	line, col := d.x.InputPos()
	f.Location.Offset, f.Location.Line, f.Location.Column = d.off, line, col
	return f
}

func (d *decoder) parent() string {
	if len(d.st) == 0 {
		return ""
	}
	return d.st[len(d.st)-1].name
}

// inRow says whether the stack is inside a <row> of a <node>.
func (d *decoder) inRow() bool {
	return len(d.st) >= 3 && d.st[2].name == "row" && d.st[1].name == "node"
}

func (d *decoder) chars(t xml.CharData) error {
	if len(d.st) == 0 {
		return nil
	}
	top := &d.st[len(d.st)-1]
	switch {
	case top.e != nil:
		if len(top.e.text)+len(t) > d.maxT {
			return d.at(d.in.Exceeded(LimitText, len(top.e.text)+len(t)))
		}
		top.e.text += string(t)
	case d.colBuf != nil && len(d.st) == 5:
		if len(d.text)+len(t) > d.maxT {
			return d.at(d.in.Exceeded(LimitText, len(d.text)+len(t)))
		}
		d.text = append(d.text, t...)
	}
	return nil
}

func (d *decoder) end(t xml.EndElement) error {
	if len(d.st) == 0 {
		return d.fail("</%s> closes no element", t.Name.Local)
	}
	o := d.st[len(d.st)-1]
	if o.name != t.Name.Local {
		return d.fail("</%s> closes <%s>", t.Name.Local, o.name)
	}
	d.st = d.st[:len(d.st)-1]
	depth := len(d.st)
	switch {
	case o.e != nil:
		e := o.e
		e.text = strings.TrimSpace(e.text)
		if o.ref != nil {
			if len(e.kids) > 0 || e.text != "" {
				return d.fail("<%s ref=…> has content; a ref element stands for the element it names", o.name)
			}
			e = o.ref
		}
		if o.id != "" {
			if d.ids.get(o.id) != nil {
				return d.fail("id=%q appears twice", o.id)
			}
			if d.ids.len() >= d.in.Limit(LimitIDs) {
				return d.at(d.in.Exceeded(LimitIDs, nil))
			}
			d.ids.put(o.id, e)
		}
		if depth == 3 {
			d.cells = append(d.cells, e)
		} else {
			p := &d.st[depth-1]
			p.e.kids = append(p.e.kids, e)
		}
	case depth == 4 && d.colBuf != nil:
		v := strings.TrimSpace(string(d.text))
		switch d.colField {
		case "mnemonic":
			d.colBuf.mnemonic = v
		case "name":
			d.colBuf.name = v
		case "engineering-type":
			d.colBuf.engType = v
		}
	case depth == 3 && o.name == "col" && d.colBuf != nil:
		d.cols = append(d.cols, *d.colBuf)
		d.colBuf = nil
	case depth == 2 && o.name == "row" && d.st[1].name == "node":
		return d.row()
	}
	return nil
}

// row handles one complete row of the current node.
func (d *decoder) row() error {
	d.rows++
	for _, c := range d.cells {
		if c.name == "sentinel" {
			d.sentinels++
		}
	}
	if d.schema == "" {
		return d.fail("a <row> before its node's <schema>")
	}
	if len(d.cells) != len(d.cols) {
		return d.fail("a %s row has %d cells for %d columns", d.schema, len(d.cells), len(d.cols))
	}
	d.nodeRow++
	if !slices.Contains(cpuSchemas, d.schema) {
		return d.slice()
	}
	t, err := d.table()
	if err != nil {
		return err
	}
	return d.sample(t)
}

// table returns the CPU table of the current schema, made at its first
// row from the columns.
func (d *decoder) table() (*cpuTable, error) {
	wat, u := -1, ""
	for i, c := range d.cols {
		switch c.engType {
		case "weight":
			wat, u = i, "ns"
		case "cycle-weight":
			wat, u = i, unit.Events
		}
		if wat >= 0 {
			break
		}
	}
	for _, t := range d.tables {
		if t.schema == d.schema {
			if t.weightAt != wat || t.unit != u {
				return nil, d.fail("two %s nodes with different weight columns", d.schema)
			}
			return t, nil
		}
	}
	t := newCPUTable(d.schema, u, wat)
	d.tables = append(d.tables, t)
	return t, nil
}

func newCPUTable(schema, unit string, weightAt int) *cpuTable {
	p := collapsed.NewProfile()
	p.KeepStacks = true
	return &cpuTable{schema: schema, unit: unit, weightAt: weightAt, prof: p, frameOf: map[*elem]uint32{},
		lines: collapsed.NewProfile(), lineOf: map[*elem]uint32{}}
}

func (d *decoder) sample(t *cpuTable) error {
	t.rows++
	var w int64 = 1
	var thread, process string
	var bt *elem
	weighed := t.weightAt < 0
	for i, c := range d.cells {
		if c.name == "sentinel" {
			continue
		}
		col := d.cols[i]
		switch {
		case i == t.weightAt:
			n, err := strconv.ParseInt(c.text, 10, 64)
			if err != nil || n < 0 {
				return d.fail("%s weight %q is not a non-negative integer", t.schema, c.text)
			}
			w, weighed = n, true
		case col.engType == "thread":
			thread = c.fmt
			if thread == "" {
				if tid := c.kid("tid"); tid != nil {
					thread = tid.text
				}
			}
			if p := c.kid("process"); p != nil && process == "" {
				process = p.fmt
			}
		case col.engType == "process":
			process = c.fmt
		case col.engType == "sample-time":
			ts, err := strconv.ParseInt(c.text, 10, 64)
			if err != nil {
				return d.fail("%s sample-time %q is not an integer of nanoseconds", t.schema, c.text)
			}
			if !t.timed || ts < t.first {
				t.first = ts
			}
			if !t.timed || ts > t.last {
				t.last = ts
			}
			t.timed = true
		case slices.Contains(btTypes, col.engType):
			bt = c
		}
	}
	if !weighed {
		t.noWeight++
		w = 0
	}
	ser := collapsed.Series{Process: process, Thread: thread, Event: t.schema}
	series := t.prof.SeriesID(ser)
	t.leaf, t.lineLeaf = t.leaf[:0], t.lineLeaf[:0]
	if bt != nil {
		if err := d.frames(t, bt); err != nil {
			return err
		}
	}
	if len(t.leaf) == 0 {
		t.noStack++
	}
	t.prof.Add(series, t.leaf, w, 1)
	t.lines.Add(t.lines.SeriesID(ser), t.lineLeaf, w, 1)
	return nil
}

// frames appends the frames of backtrace bt to t.leaf, leaf first as
// xctrace lists them. A tagged or kperf backtrace holds its frames in a
// nested backtrace; frames are never nested in frames.
func (d *decoder) frames(t *cpuTable, bt *elem) error {
	for _, k := range bt.kids {
		if k.name != "frame" {
			if slices.Contains(btTypes, k.name) {
				if err := d.frames(t, k); err != nil {
					return err
				}
			}
			continue
		}
		if int64(len(t.leaf)) >= d.in.Limit(collapsed.LimitStack) {
			return d.at(d.in.Exceeded(collapsed.LimitStack, nil))
		}
		id, ok := t.frameOf[k]
		if !ok {
			id = t.prof.Frame(frameOf(k))
			if int64(len(t.prof.Frames)) > d.in.Limit(collapsed.LimitFrames) {
				return d.at(d.in.Exceeded(collapsed.LimitFrames, int64(len(t.prof.Frames))))
			}
			t.frameOf[k] = id
		}
		t.leaf = append(t.leaf, id)
		lid, ok := t.lineOf[k]
		if !ok {
			f, sourced, err := d.lineFrameOf(t.prof.Frames[id], k)
			if err != nil {
				return err
			}
			if sourced {
				t.sourced++
			}
			lid = t.lines.Frame(f)
			t.lineOf[k] = lid
		}
		t.lineLeaf = append(t.lineLeaf, lid)
	}
	return nil
}

// lineFrameOf is frame fr (read from element f) at its source line:
// the <source line="N"><path>FILE</path></source> xctrace writes for a
// frame with debug information. A frame without one keeps line 0 (its
// function's row, line -1 in cpu.lines); a line that is not a positive
// integer is a DECODE_FAILURE.
func (d *decoder) lineFrameOf(fr collapsed.Frame, f *elem) (collapsed.Frame, bool, error) {
	src := f.kid("source")
	if src == nil {
		return fr, false, nil
	}
	v := src.attr("line")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return fr, false, d.fail("<source line=%q> of frame %q is not a line number", v, fr.Function)
	}
	if p := src.kid("path"); p != nil {
		fr.File = p.text
	}
	fr.Line = n
	return fr, n > 0, nil
}

// frameOf is a frame's identity: its symbol name and binary. An
// unsymbolicated frame is named by its address (xctrace writes the
// address as the name) and marked unresolved.
func frameOf(f *elem) collapsed.Frame {
	name, addr := f.attr("name"), f.attr("addr")
	var mod string
	if b := f.kid("binary"); b != nil {
		mod = b.attr("path")
		if mod == "" {
			mod = b.attr("name")
		}
	}
	fr := collapsed.Frame{Function: name, Module: mod}
	if name == "" || name == addr || isHex(name) {
		fr.Unresolved = true
		if name == "" {
			fr.Function = addr
		}
	}
	return fr
}

func isHex(s string) bool {
	if !strings.HasPrefix(s, "0x") || len(s) < 3 {
		return false
	}
	_, err := strconv.ParseUint(s[2:], 16, 64)
	return err == nil
}

func (d *decoder) emit(out formats.Sink) error {
	var notes []string
	var otherRows int64
	names := make([]string, 0, len(d.other))
	for s := range d.other {
		names = append(names, s)
	}
	slices.Sort(names)
	for _, s := range names {
		otherRows += d.other[s]
		notes = append(notes, fmt.Sprintf("%d rows of table %q are counted, not interpreted (only the CPU sampling schemas time-profile, time-sample and cpu-profile are decoded)", d.other[s], s))
	}
	tables := d.tables
	if len(tables) == 0 {
		// No CPU table: empty tables still state what the export held.
		tables = []*cpuTable{newCPUTable("", "", -1)}
		notes = append(notes, "the export holds no CPU sampling table (time-profile, time-sample or cpu-profile)")
	}
	for _, t := range tables {
		cov := evidence.Object{"nodes": d.nodes}
		if len(names) > 0 {
			other := evidence.Object{}
			for _, s := range names {
				other[s] = d.other[s]
			}
			cov["tables_not_interpreted"] = other
		}
		o := collapsed.EmitOptions{
			In:       d.in,
			Unit:     t.unit,
			Complete: true,
			Coverage: cov,
			Metrics: map[string]evidence.Metric{
				"samples":               {Value: t.rows, Unit: unit.Samples},
				"samples_without_stack": {Value: t.noStack, Unit: unit.Samples},
				"rows_not_interpreted":  {Value: otherRows, Unit: "count"},
				"sentinel_cells":        {Value: d.sentinels, Unit: "count"},
				"ids":                   {Value: d.ids.len(), Unit: "count"},
			},
			Limitations: slices.Clone(notes),
		}
		if t.timed {
			o.Metrics["first_sample_time"] = evidence.Metric{Value: t.first, Unit: "ns"}
			o.Metrics["last_sample_time"] = evidence.Metric{Value: t.last, Unit: "ns"}
		}
		switch t.unit {
		case "ns":
			o.Limitations = append(o.Limitations, "weights are the time-profile weight column, in nanoseconds (the sampling interval each sample stands for)")
		case unit.Events:
			o.Limitations = append(o.Limitations, "weights are the cycle-weight column: CPU cycles, counted as events")
		default:
			if t.schema != "" {
				o.Limitations = append(o.Limitations, "the table has no weight column: each sample weighs one")
			}
		}
		if t.noStack > 0 {
			o.Limitations = append(o.Limitations, fmt.Sprintf("%d samples have no backtrace frames (a <sentinel/> or an unsymbolicated kperf backtrace): they count in the totals but in no frame", t.noStack))
		}
		if t.noWeight > 0 {
			o.Limitations = append(o.Limitations, fmt.Sprintf("%d samples have an empty weight cell: they weigh zero", t.noWeight))
		}
		o.Limitations = append(o.Limitations, "frames are (symbol, binary path); addresses are not kept in rows, source lines are in cpu.lines")
		if err := t.prof.Emit(out, o); err != nil {
			return err
		}
		o.Metrics["frames_with_source_line"] = evidence.Metric{Value: t.sourced, Unit: "count"}
		o.Limitations = append(o.Limitations,
			"lines are each frame's <source line> and path as xctrace exported them; a frame without one is its function's row, line -1",
			"a line's inclusive_weight counts each sample once however often the line is on its stack")
		if err := t.lines.EmitLines(out, o); err != nil {
			return err
		}
	}
	return nil
}
