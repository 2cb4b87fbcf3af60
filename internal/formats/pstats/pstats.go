// Package pstats decodes the statistics files that Python's cProfile and
// profile modules write (`python -m cProfile -o out.pstats`,
// Stats.dump_stats): a marshalled dict mapping each function
// (file, line, name) to (primitive calls, calls, tottime, cumtime, callers).
//
// Decoding is native Go: no Python runs at analysis time. The dict is read
// as a stream of typed marshal tokens, so no entry is built as a generic
// value. Each function key is interned once, as it is first seen (as an
// entry or as a caller), so every caller is resolved once; every caller
// must itself be a function of the file, or the file is corrupt
// (DECODE_FAILURE), and that is checked before anything is emitted.
// Memory grows with the number of functions, and with the number of caller
// edges only when a consumer wants the cpu.edges table.
//
// It imports formats, table, evidence, unit and its marshal reader.
package pstats

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"iter"
	"maps"
	"math"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/pstats/marshal"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// Limit names.
const (
	LimitDepth     = "max_depth"
	LimitObjects   = "max_objects"
	LimitFunctions = "max_functions"
	LimitEdges     = "max_edges"
)

var limits = []formats.Limit{
	{Name: formats.LimitBytes, Default: marshal.DefaultMaxBytes, Unit: "bytes", Doc: "bytes in the file"},
	{Name: LimitDepth, Default: marshal.DefaultMaxDepth, Unit: "levels", Doc: "nesting of marshal containers"},
	{Name: LimitObjects, Default: marshal.DefaultMaxObjects, Unit: "objects", Doc: "marshal objects decoded"},
	{Name: LimitFunctions, Default: 1_000_000, Unit: "functions", Doc: "functions (entries of the stats dict)"},
	{Name: LimitEdges, Default: 10_000_000, Unit: "edges", Doc: "caller entries over all functions"},
}

// Spec is the pstats format.
var Spec = formats.CPUProfile(formats.Spec{
	Name:     "pstats",
	Title:    "cProfile/profile pstats",
	Suffixes: []string{".pstats", ".prof", ".cprofile"},
	Sniff:    Sniff,
	Limits:   limits,
	Options:  []param.Param{formats.ValueBytesParam},
	Caps:     formats.Caps{CallCounts: true},
	Producer: "Python cProfile / profile",
	Version:  "1",
	Decoder:  formats.DecoderFunc(decode),
})

// funcKey is a function's identity as pstats writes it. A pure-Python
// profile dump names the profiled statement by a code object; such a name
// is described (without its memory address, which the file lacks) and
// flagged.
type funcKey struct {
	file   string
	line   int64
	name   string
	isCode bool
}

func (k funcKey) String() string {
	// pstats' own notation, file:line(name).
	return fmt.Sprintf("%s:%d(%s)", k.file, k.line, k.name)
}

// function is one function key of the file: the function of an entry of
// the stats dict, or (until its entry comes, if it does) a key named only
// as a caller. The key's fields are inline (not a funcKey) so that the
// flags share its padding: there is one of these per function.
type function struct {
	file, name string
	line       int64
	off        int64 // byte offset of its entry's key
	cc, nc     int64
	tt, ct     float64
	callers    int32 // caller entries of its entry
	// lastEntry is the entry whose callers named it last (so a caller
	// that appears twice in one entry is found without a set per entry);
	// firstBy is the function whose entry named it first, for the failure
	// when it never gets an entry.
	lastEntry, firstBy int32
	isCode, defined    bool
}

func (f *function) key() funcKey {
	return funcKey{file: f.file, line: f.line, name: f.name, isCode: f.isCode}
}

// edge is one caller entry. cProfile writes (calls, primitive calls,
// tottime, cumtime) per caller; the pure-Python profile module writes only
// a call count (timed=false).
type edge struct {
	caller int32
	timed  bool
	nc, cc int64
	tt, ct float64
}

// chunks is an append-only list in fixed-size chunks: growing never
// copies what it holds, so a list of a million entries costs its size,
// not twice that at a regrowth.
type chunks[T any] struct {
	c [][]T
	n int
}

const chunkLen = 4096

func (c *chunks[T]) add(v T) {
	if c.n%chunkLen == 0 {
		c.c = append(c.c, make([]T, 0, chunkLen))
	}
	last := &c.c[len(c.c)-1]
	*last = append(*last, v)
	c.n++
}

func (c *chunks[T]) at(i int) *T { return &c.c[i/chunkLen][i%chunkLen] }

// all yields the values in order.
func (c *chunks[T]) all() iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, chunk := range c.c {
			for _, v := range chunk {
				if !yield(v) {
					return
				}
			}
		}
	}
}

// parser reads one stats dict.
type parser struct {
	d         *marshal.Decoder
	keepEdges bool // a consumer wants cpu.edges: keep every caller entry
	maxEdges  int64
	fns       chunks[function]
	// slots index fns by key (open addressing, function index + 1, 0 for
	// empty): each key is stored once, where a map would hold a copy.
	slots   []int32
	seed    maphash.Seed
	defs    chunks[int32] // functions with an entry, in file order
	edges   chunks[edge]
	nedges  int64
	untimed bool // some caller entries carry only a call count
}

func newParser(r io.Reader, lim marshal.Limits, keepEdges bool, maxEdges int64) *parser {
	return &parser{d: marshal.NewDecoder(r, lim), keepEdges: keepEdges, maxEdges: maxEdges, seed: maphash.MakeSeed()}
}

func (p *parser) hash(k *funcKey) int {
	h := maphash.String(p.seed, k.name)
	h = h*0x100000001b3 ^ maphash.String(p.seed, k.file)
	h = h*0x100000001b3 ^ uint64(k.line)
	if k.isCode {
		h = ^h
	}
	return int(h ^ h>>32)
}

// intern returns the index of k's function, adding it (named first by the
// entry of function by) when it is new.
func (p *parser) intern(k funcKey, by int32) (int32, error) {
	// At most 3/4 full: probes stay short.
	if (p.fns.n+1)*4 > len(p.slots)*3 {
		if p.fns.n >= math.MaxInt32-1 {
			return 0, fmt.Errorf("more than %d function keys", p.fns.n)
		}
		p.grow()
	}
	mask := len(p.slots) - 1
	for i := p.hash(&k) & mask; ; i = (i + 1) & mask {
		s := p.slots[i]
		if s == 0 {
			n := int32(p.fns.n)
			p.fns.add(function{file: k.file, line: k.line, name: k.name, isCode: k.isCode, lastEntry: -1, firstBy: by})
			p.slots[i] = n + 1
			return n, nil
		}
		if f := p.fns.at(int(s - 1)); f.line == k.line && f.name == k.name && f.file == k.file && f.isCode == k.isCode {
			return s - 1, nil
		}
	}
}

func (p *parser) grow() {
	slots := make([]int32, max(1024, 2*len(p.slots)))
	mask := len(slots) - 1
	for n := range p.fns.n {
		k := p.fns.at(n).key()
		i := p.hash(&k) & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = int32(n + 1)
	}
	p.slots = slots
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	// The runner has fstat'ed the file; its size is known before a byte
	// is read (and a file that grows during the read fails its digest).
	if err := in.CheckSize(); err != nil {
		return err
	}
	p := newParser(in.R, marshal.Limits{
		MaxBytes:   in.Limit(formats.LimitBytes),
		MaxDepth:   int(in.Limit(LimitDepth)),
		MaxObjects: in.Limit(LimitObjects),
	}, out.Wants(table.CPUEdges.Schema), in.Limit(LimitEdges))
	if err := p.read(ctx, in); err != nil {
		return err
	}
	// The reader's back-reference table holds every shared object of the
	// file; none is needed once the keys are resolved.
	p.d = nil
	return p.emit(in, out)
}

// read reads the whole dict and checks every caller reference.
func (p *parser) read(ctx context.Context, in *formats.Input) error {
	if err := p.d.BeginDict(); err != nil {
		return failure(in, err, "the file is not a pstats dict")
	}
	maxFuncs := in.Limit(LimitFunctions)
	for i := int32(0); ; i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return evidence.Wrap(evidence.CodeCancelled, err, "pstats")
			}
		}
		off := p.d.Offset()
		// Keys are claimed: a shared key tuple is bound to its function
		// (keyIndex), never built.
		t, err := p.d.Claim()
		if err != nil {
			return failure(in, err, "entry %d", i)
		}
		if t.Kind == marshal.KindEnd {
			break
		}
		fi, err := p.keyIndex(t, -1)
		err = p.settle(err)
		if isMarshal(err) {
			return failure(in, err, "entry %d", i)
		}
		if int64(i) >= maxFuncs {
			return located(in.Exceeded(LimitFunctions, int64(i)+1), off)
		}
		if err != nil {
			return located(evidence.Failf(evidence.CodeDecodeFailure, "pstats: entry %d: key: %v", i, err), off)
		}
		k := p.fns.at(int(fi)).key()
		st, err := p.entry(fi, i)
		err = p.settle(err)
		switch {
		case errors.Is(err, errEdges):
			return located(in.Exceeded(LimitEdges, p.nedges), off)
		case isMarshal(err):
			return failure(in, err, "entry %d (%s)", i, k)
		case err != nil:
			return located(evidence.Failf(evidence.CodeDecodeFailure, "pstats: entry %d (%s): %v", i, k, err), off)
		}
		f := p.fns.at(int(fi))
		if f.defined {
			return located(evidence.Failf(evidence.CodeDecodeFailure, "pstats: entry %d: function %s appears twice", i, k), off)
		}
		f.defined, f.off = true, off
		f.cc, f.nc, f.tt, f.ct, f.callers = st.cc, st.nc, st.tt, st.ct, st.callers
		p.defs.add(fi)
	}
	if err := p.d.CheckEnd(); err != nil {
		return failure(in, err, "after the stats dict")
	}
	// Check every reference before anything is emitted. Keys are numbered
	// as first seen, so the first one without an entry is the caller that
	// a walk of the entries in file order would find first.
	for n := range p.fns.n {
		if f := p.fns.at(n); !f.defined {
			by := p.fns.at(int(f.firstBy))
			return located(evidence.Failf(evidence.CodeDecodeFailure,
				"pstats: caller %s of %s is not a function of this file", f.key(), by.key()), by.off)
		}
	}
	return nil
}

// errEdges ends the read of an entry once the file holds more caller
// entries than max_edges allows.
var errEdges = errors.New("too many caller entries")

func isMarshal(err error) bool {
	if err == nil {
		return false
	}
	var me *marshal.Error
	return errors.As(err, &me)
}

// settle finishes the dict item being read after a shape error: the rest
// of it is read, so that a marshal failure in it (a truncation, a
// crossed bound) is reported first, as a reader of whole objects would.
func (p *parser) settle(err error) error {
	if err == nil || isMarshal(err) || errors.Is(err, errEdges) {
		return err
	}
	if cerr := p.d.Close(1); cerr != nil {
		return cerr
	}
	return err
}

// failure types an error from the marshal reader. A crossed bound is the
// one LIMIT_EXCEEDED of the input, with the reader's account of it.
func failure(in *formats.Input, err error, format string, args ...any) error {
	var me *marshal.Error
	isME := errors.As(err, &me)
	if isME && errors.Is(err, marshal.ErrLimit) {
		name := map[marshal.Bound]string{marshal.BoundBytes: formats.LimitBytes, marshal.BoundDepth: LimitDepth, marshal.BoundObjects: LimitObjects}[me.Bound]
		var observed any
		if me.Observed > 0 {
			observed = me.Observed
		}
		f := in.Exceeded(name, observed)
		f.Message += ": " + fmt.Sprintf(format, args...) + ": " + err.Error()
		f.Err = err
		return located(f, me.Offset)
	}
	code := evidence.CodeDecodeFailure
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		code = evidence.CodeCancelled
	case isME && me.Err != nil && !errors.Is(err, marshal.ErrTruncated):
		code = evidence.CodeIOFailure // the reader failed, not the data
	}
	f := evidence.Wrap(code, err, "pstats: "+format, args...)
	if isME {
		f.Location.Offset = me.Offset
	}
	return f
}

func located(f *evidence.Failure, off int64) *evidence.Failure {
	f.Location.Offset = off
	return f
}

// keyIndex reads a (file, line, name) key whose head t was claimed and
// returns its function, interned (as named first by the entry of function
// by) when new. A key tuple that back-references can name is bound to its
// index, so each later reference resolves without being read again.
func (p *parser) keyIndex(t marshal.Token, by int32) (int32, error) {
	if t.Kind == marshal.KindBound {
		return int32(t.Int), nil // only keys are bound
	}
	k, err := p.key(t)
	if err != nil {
		return 0, err
	}
	fi, err := p.intern(k, by)
	if err != nil {
		return 0, err
	}
	if t.Slot >= 0 {
		p.d.Bind(t.Slot, int64(fi))
	}
	return fi, nil
}

// key reads a (file, line, name) tuple whose head is t.
func (p *parser) key(t marshal.Token) (funcKey, error) {
	if t.Kind != marshal.KindTuple || t.Len != 3 {
		return funcKey{}, fmt.Errorf("want a (file, line, name) tuple, found %s", describe(t))
	}
	file, err := p.d.Next()
	if err != nil {
		return funcKey{}, err
	}
	if file.Kind != marshal.KindStr {
		return funcKey{}, fmt.Errorf("file is %s, not str", typeName(file))
	}
	lt, err := p.d.Next()
	if err != nil {
		return funcKey{}, err
	}
	line, err := asInt(lt, "line")
	if err != nil {
		return funcKey{}, err
	}
	nt, err := p.d.Next()
	if err != nil {
		return funcKey{}, err
	}
	k := funcKey{file: file.Str, line: line}
	switch nt.Kind {
	case marshal.KindStr:
		k.name = nt.Str
	case marshal.KindCode:
		c := nt.Value.(*marshal.Code)
		k.name = fmt.Sprintf("<code object %s, file %q, line %d>", c.Name, c.Filename, c.FirstLineNo)
		k.isCode = true
	default:
		return funcKey{}, fmt.Errorf("name is %s, not str", typeName(nt))
	}
	return k, nil
}

func describe(t marshal.Token) string {
	switch t.Kind {
	case marshal.KindTuple:
		return fmt.Sprintf("a tuple of %d", t.Len)
	case marshal.KindBound:
		return "a tuple of 3"
	}
	return t.Kind.String()
}

// typeName is the Python type of a token; a bound reference names a key.
func typeName(t marshal.Token) string {
	if t.Kind == marshal.KindBound {
		return "tuple"
	}
	return t.Kind.String()
}

func asInt(t marshal.Token, what string) (int64, error) {
	switch {
	case t.Kind == marshal.KindInt && t.Value != nil:
		return 0, fmt.Errorf("%s %v is out of range", what, t.Value)
	case t.Kind == marshal.KindInt:
		return t.Int, nil
	}
	return 0, fmt.Errorf("%s is %s, not int", what, typeName(t))
}

func (p *parser) count(what string) (int64, error) {
	t, err := p.d.Next()
	if err != nil {
		return 0, err
	}
	return asCount(t, what)
}

func asCount(t marshal.Token, what string) (int64, error) {
	n, err := asInt(t, what)
	if err == nil && n < 0 {
		err = fmt.Errorf("%s %d is negative", what, n)
	}
	return n, err
}

// time reads a time: a float, or an int (the profile module writes 0 for
// functions it never timed). Ints beyond 2^53 have no exact double.
func (p *parser) time(what string) (float64, error) {
	t, err := p.d.Next()
	if err != nil {
		return 0, err
	}
	switch {
	case t.Kind == marshal.KindFloat:
		return t.Float, nil
	case t.Kind == marshal.KindInt && t.Value == nil && t.Int <= 1<<53 && t.Int >= -(1<<53):
		return float64(t.Int), nil
	case t.Kind == marshal.KindInt:
		return 0, fmt.Errorf("%s %v has no exact double", what, intText(t))
	}
	return 0, fmt.Errorf("%s is %s, not a number", what, typeName(t))
}

func intText(t marshal.Token) any {
	if t.Value != nil {
		return t.Value
	}
	return t.Int
}

// stats is an entry's value without its callers.
type stats struct {
	cc, nc  int64
	tt, ct  float64
	callers int32
}

// entry reads the value of entry e, whose function is fi:
// (primitive calls, calls, tottime, cumtime, callers).
func (p *parser) entry(fi, e int32) (stats, error) {
	var st stats
	t, err := p.d.Next()
	if err != nil {
		return st, err
	}
	if t.Kind != marshal.KindTuple || t.Len != 5 {
		return st, fmt.Errorf("want a (primitive calls, calls, tottime, cumtime, callers) tuple, found %s", describe(t))
	}
	if st.cc, err = p.count("primitive calls"); err != nil {
		return st, err
	}
	if st.nc, err = p.count("calls"); err != nil {
		return st, err
	}
	if st.tt, err = p.time("tottime"); err != nil {
		return st, err
	}
	if st.ct, err = p.time("cumtime"); err != nil {
		return st, err
	}
	if t, err = p.d.Next(); err != nil {
		return st, err
	}
	if t.Kind != marshal.KindDict {
		return st, fmt.Errorf("callers is %s, not dict", typeName(t))
	}
	for i := 0; ; i++ {
		t, err := p.d.Claim()
		if err != nil {
			return st, err
		}
		if t.Kind == marshal.KindEnd {
			return st, nil
		}
		if err := p.caller(t, fi, e, i); err != nil {
			return st, err
		}
		st.callers++
	}
}

// caller reads caller entry i of entry e (function fi), whose key's head
// is t, and resolves its key.
func (p *parser) caller(t marshal.Token, fi, e int32, i int) error {
	ci, err := p.keyIndex(t, fi)
	if err != nil {
		return fmt.Errorf("caller %d: %w", i, err)
	}
	f := p.fns.at(int(ci))
	k := f.key()
	v, err := p.d.Next()
	if err != nil {
		return fmt.Errorf("caller %d: %w", i, err)
	}
	c := edge{caller: ci}
	switch {
	case v.Kind == marshal.KindInt:
		// profile module: calls from this caller, nothing else.
		c.nc, err = asCount(v, "calls")
	case v.Kind == marshal.KindTuple && v.Len == 4:
		c.timed = true
		c.nc, c.cc, c.tt, c.ct, err = p.timed()
	default:
		err = fmt.Errorf("%s: want (calls, primitive calls, tottime, cumtime) or a call count, found %s", k, describe(v))
	}
	if err != nil {
		return fmt.Errorf("caller %d: %w", i, err)
	}
	if f.lastEntry == e {
		return fmt.Errorf("caller %s appears twice", k)
	}
	f.lastEntry = e
	if p.nedges++; p.nedges > p.maxEdges {
		return errEdges
	}
	if !c.timed {
		p.untimed = true
	}
	if p.keepEdges {
		p.edges.add(c)
	}
	return nil
}

// timed reads the rest of cProfile's (calls, primitive calls, tottime,
// cumtime) caller tuple.
func (p *parser) timed() (nc, cc int64, tt, ct float64, err error) {
	if nc, err = p.count("calls"); err != nil {
		return
	}
	if cc, err = p.count("primitive calls"); err != nil {
		return
	}
	if tt, err = p.time("tottime"); err != nil {
		return
	}
	ct, err = p.time("cumtime")
	return
}

// classify maps a key to its file column and symbolization. cProfile names
// built-in (C) functions ('~', 0, name); the profile module names them
// (”, 0, name) and adds a fake frame ('profile', 0, 'profiler') and one
// for the profiled statement. None of those "files" is a file.
func classify(k *function) (file table.Null[string], sym string) {
	switch {
	case k.isCode, k.file == "profile" && k.line == 0 && k.name == "profiler":
		return file, table.Synthetic
	case k.line == 0 && (k.file == "~" || k.file == ""):
		return file, table.Symbolized
	case k.name == "<lambda>":
		return table.Some(k.file), table.Anonymous
	}
	return table.Some(k.file), table.Symbolized
}

// boundFile bounds a file column's value (formats.Values).
func boundFile(v *formats.Values, f table.Null[string]) table.Null[string] {
	if f.Valid {
		f.V = v.Bound(f.V)
	}
	return f
}

// siteLine is a function's line for the line columns: pstats counts lines
// from 1 and writes 0 for built-ins and the profile module's fake frames,
// which have no line, so 0 is the schema's -1 (unavailable). Frame ids
// keep the key as written.
func siteLine(f *function) int64 {
	if f.line <= 0 {
		return -1
	}
	return f.line
}

// rows hands out rows allocated rowBlock at a time: each row given to the
// sink is its own (a sink may keep it), without an allocation each.
type rows[T any] []T

const rowBlock = 256

func (r *rows[T]) next() *T {
	if len(*r) == 0 {
		*r = make([]T, rowBlock)
	}
	row := &(*r)[0]
	*r = (*r)[1:]
	return row
}

func (p *parser) emit(in *formats.Input, out formats.Sink) error {
	var totalTT float64
	var calls, prim int64
	for fi := range p.defs.all() {
		f := p.fns.at(int(fi))
		// Summed in file order from zero, exactly as pstats computes
		// total_tt, so the two agree bit for bit.
		totalTT += f.tt
		calls += f.nc
		prim += f.cc
	}
	metrics := map[string]evidence.Metric{
		table.MetricTotalWeight: {Value: totalTT, Unit: unit.Seconds},
		"functions":             {Value: int64(p.defs.n)},
		"total_calls":           {Value: calls, Unit: unit.Calls},
		"primitive_calls":       {Value: prim, Unit: unit.Calls},
		"edges":                 {Value: p.nedges},
	}
	if err := p.frames(in, out, metrics); err != nil {
		return err
	}
	tw, err := out.Begin(table.CPUEdges.HeaderBased(unit.Seconds, 1))
	if err != nil {
		return err
	}
	vals := in.Values()
	if p.keepEdges {
		var block rows[table.Edge]
		var buf []byte
		e := 0
		for fi := range p.defs.all() {
			f := p.fns.at(int(fi))
			calleeFile, _ := classify(f)
			if buf, err = frameID(buf[:0], f); err != nil {
				return err
			}
			calleeID := string(buf)
			for range f.callers {
				c := p.edges.at(e)
				e++
				from := p.fns.at(int(c.caller))
				callerFile, _ := classify(from)
				// Ids are made per row rather than kept for every
				// function: a row's strings are the sink's to keep.
				if buf, err = frameID(buf[:0], from); err != nil {
					return err
				}
				r := block.next()
				*r = table.Edge{
					CallerID: string(buf), CallerFunction: vals.Bound(from.name), CallerFile: boundFile(vals, callerFile), CallerLine: siteLine(from),
					CalleeID: calleeID, CalleeFunction: vals.Bound(f.name), CalleeFile: boundFile(vals, calleeFile), CalleeLine: siteLine(f),
					Calls: table.Some(c.nc),
				}
				if c.timed {
					r.Weight, r.SelfWeight, r.PrimitiveCalls = table.Some(c.ct), table.Some(c.tt), table.Some(c.cc)
				}
				if err := tw.Row(r); err != nil {
					return err
				}
			}
		}
	}
	edgeSum := &evidence.Summary{RowsObserved: p.nedges, Complete: true, Metrics: maps.Clone(metrics)}
	vals.Summarize(edgeSum)
	if p.untimed {
		edgeSum.Limit("this file (from the pure-Python profile module) records only call counts per caller: edge weights and primitive calls are null")
	}
	return tw.End(edgeSum)
}

// frames emits cpu.frames.
func (p *parser) frames(in *formats.Input, out formats.Sink, metrics map[string]evidence.Metric) error {
	tw, err := out.Begin(table.CPUFrames.HeaderBased(unit.Seconds, 1))
	if err != nil {
		return err
	}
	vals := in.Values()
	if out.Wants(table.CPUFrames.Schema) {
		var buf []byte
		var block rows[table.Frame]
		for fi := range p.defs.all() {
			f := p.fns.at(int(fi))
			if buf, err = frameID(buf[:0], f); err != nil {
				return err
			}
			r := block.next()
			file, sym := classify(f)
			*r = table.Frame{
				FrameSite: table.FrameSite{
					FrameID:       string(buf),
					Function:      vals.Bound(f.name),
					File:          boundFile(vals, file),
					Line:          siteLine(f),
					Column:        -1,
					Symbolization: sym,
				},
				SelfWeight:      f.tt,
				InclusiveWeight: f.ct,
				Calls:           table.Some(f.nc),
				PrimitiveCalls:  table.Some(f.cc),
			}
			if err := tw.Row(r); err != nil {
				return err
			}
		}
	}
	sum := &evidence.Summary{RowsObserved: int64(p.defs.n), Complete: true, Metrics: maps.Clone(metrics)}
	sum.Limit("cumtime of a recursive function counts its outermost calls only, as pstats does")
	vals.Summarize(sum)
	return tw.End(sum)
}

// frameID appends a function's identity: the canonical JSON of its key,
// which is stable across runs of the same code and unambiguous.
func frameID(dst []byte, f *function) ([]byte, error) {
	dst = append(dst, '[')
	dst, err := evidence.AppendString(dst, f.file)
	if err == nil {
		dst = evidence.AppendInt(append(dst, ','), f.line)
		dst, err = evidence.AppendString(append(dst, ','), f.name)
	}
	if err != nil {
		// Keys hold valid UTF-8 (the marshal reader rejects anything
		// else), so this is a defect, not bad input.
		return dst, evidence.Wrap(evidence.CodeInternal, err, "pstats: frame id of %s", f.key())
	}
	return append(dst, ']'), nil
}

// Sniff recognizes a marshalled dict whose first key is a
// (file, line, name) tuple. It runs the decoder's own parsing over the
// prefix, so detection and decoding cannot disagree. gzip and protobuf
// (pprof's .prof) start with bytes that are not a dict and get No.
func Sniff(prefix []byte) formats.Verdict {
	if len(prefix) == 0 {
		return formats.NeedMore
	}
	p := newParser(bytes.NewReader(prefix), marshal.Limits{MaxBytes: formats.SniffBytes}, false, math.MaxInt64)
	cut := func(err error) bool {
		return errors.Is(err, marshal.ErrTruncated) || errors.Is(err, marshal.ErrLimit)
	}
	if err := p.d.BeginDict(); err != nil {
		return formats.No
	}
	t, err := p.d.Claim()
	switch {
	case err != nil && cut(err):
		return formats.NeedMore
	case err != nil:
		return formats.No
	case t.Kind == marshal.KindEnd:
		// An empty dict: a valid, empty profile, or anything else.
		return formats.NeedMore
	}
	fi, err := p.keyIndex(t, -1)
	if err = p.settle(err); err != nil {
		if cut(err) {
			return formats.NeedMore
		}
		return formats.No
	}
	_, err = p.entry(fi, 0)
	switch err = p.settle(err); {
	case err != nil && cut(err):
		return formats.Yes
	case err != nil:
		return formats.No
	}
	return formats.Yes
}
