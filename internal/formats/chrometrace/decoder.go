package chrometrace

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/table"
)

// event is one traceEvents element as read, reused from event to event.
type event struct {
	ph, name, cat, pid, tid, id, scope, bp, s, bindID string
	hasName, hasCat, hasPid, hasTid, hasID            bool
	idLocal, idGlobal                                 bool // id came from id2
	ts, dur                                           int64
	hasTS, hasDur                                     bool
	flowIn, flowOut                                   bool
	args                                              []arg // the args kept, in the order read; reused
	argsCut                                           int64
	sf                                                string   // stackFrames id of the event's stack (legacy.go)
	stack                                             []string // the stack member's frames, root first; reused
	hasSF, hasStack, badStack, endStack               bool     // endStack: esf or estack
	offset                                            int64
	index                                             int64
	bad                                               string // why the event cannot be read; "" when it can
}

// arg is one kept member of an event's args. The members are kept in a
// slice reused from event to event, and become a row's map only when a
// row carries them.
type arg struct {
	key string
	val any
}

// arg is the value of the kept args member k, or nil.
func (e *event) arg(k string) any {
	for i := range e.args {
		if e.args[i].key == k {
			return e.args[i].val
		}
	}
	return nil
}

type threadKey struct{ pid, tid string }

// asyncOpen is an async, legacy-async or object slice waiting for its end.
type asyncOpen struct {
	row *table.TraceSlice
}

// decoder is the state of one decode.
type decoder struct {
	ctx        context.Context
	in         *formats.Input
	kineto     bool
	compressed bool
	keepArgs   bool
	maxArgs    int
	maxOpen    int64

	slices, counters, flows, tracks          *formats.LazyTable
	sliceVals, counterVals, flowVals, trVals *formats.Values
	nSlices, nCounters, nFlows, nTracks      int64

	w       *jsonscan.Walker
	ev      event
	st      stats
	threads map[threadKey]*thread
	order   []*thread
	// lastKey's thread, the one the previous slice event was on.
	lastKey    threadKey
	lastThread *thread
	nest       nester
	async      map[string][]*asyncOpen
	legacy     map[string]*asyncOpen
	objects    map[string]*asyncOpen
	open       int64 // async, legacy and object slices open
	intern     *texts
	boxes      *boxes
	scratch    []byte // for texts made before they are interned
	// boxNumber is d.boxes.number as a ValueLimits.Number, made once.
	boxNumber func([]byte) (any, error)

	rank            table.Null[int64]
	rankLate        bool // distributedInfo came after events
	meta            evidence.Object
	displayTimeUnit string
	bareArray       bool
	unterminated    bool
	sawEvents       bool

	cpu cpuSamples // V8 CPU profiles in P events (samples.go)
	tef tefSamples // the format's own samples: stackFrames, samples, P with sf or stack (legacy.go)
}

func newDecoder(ctx context.Context, in *formats.Input, out formats.Sink, kineto bool) *decoder {
	d := &decoder{ctx: ctx, in: in, kineto: kineto, keepArgs: in.Bool(OptionArgs), maxArgs: int(in.Int(OptionMaxArgs)),
		maxOpen: in.Limit(LimitOpen),
		threads: map[threadKey]*thread{}, async: map[string][]*asyncOpen{}, legacy: map[string]*asyncOpen{},
		objects: map[string]*asyncOpen{}, intern: &texts{}, boxes: &boxes{}, meta: evidence.Object{},
		sliceVals: in.Values(), counterVals: in.Values(), flowVals: in.Values(), trVals: in.Values()}
	d.boxNumber = func(b []byte) (any, error) { return d.boxes.number(b), nil }
	if _, ok := in.Options[OptionArgs]; !ok {
		d.keepArgs = true // an Input built by hand carries no defaults
	}
	if _, ok := in.Options[OptionMaxArgs]; !ok {
		d.maxArgs = 64
	}
	window := int(in.Int(OptionWindow))
	if window <= 0 {
		window = 4096
	}
	d.st.byPhase = map[string]int64{}
	d.st.malformed = map[string]int64{}
	d.st.metadata = map[string]int64{}
	d.nest = nester{window: window, stats: &d.st, emit: d.emitSlice}
	d.slices = formats.NewLazyTable(out, table.TraceSlices.Header(""))
	d.counters = formats.NewLazyTable(out, table.TraceCounters.Header(""))
	d.flows = formats.NewLazyTable(out, table.TraceFlows.Header(""))
	d.tracks = formats.NewLazyTable(out, table.TraceTracks.Header(""))
	return d
}

func (d *decoder) emitSlice(r *table.TraceSlice) error {
	d.nSlices++
	return d.slices.Row(r)
}

// run walks the document.
func (d *decoder) run(r io.Reader) error {
	s := d.in.JSONScanner(r, maxNesting, formats.LimitToken)
	d.w = &jsonscan.Walker{S: s}
	tok, err := d.w.Value()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonscan.ArrayStart:
		d.bareArray = true
		if err := d.events(tok); err != nil {
			return err
		}
		if d.unterminated {
			return nil
		}
	case jsonscan.ObjectStart:
		if err := d.w.Members(tok, "trace", d.member); err != nil {
			return err
		}
		if !d.sawEvents {
			return evidence.Failf(evidence.CodeDecodeFailure, "%s: the object has no traceEvents array", d.in.Spec.Title)
		}
	default:
		return s.Errorf(tok, "a trace must be a JSON object with traceEvents or an array of events, found %s", tok.Kind)
	}
	return s.CheckEnd()
}

// Top-level members kept whole in the summary (bounded).
var kept = map[string]bool{
	"displayTimeUnit": true, "otherData": true, "metadata": true, "schemaVersion": true, "deviceProperties": true,
	"distributedInfo": true, "baseTimeNanoseconds": true, "traceName": true, "controllerTraceDataKey": true,
	"cupti_version": true, "cuda_runtime_version": true, "cuda_driver_version": true, "hip_runtime_version": true,
	"roctracer_version": true, "trace_id": true, "record_shapes": true, "profile_memory": true, "with_stack": true,
	"with_flops": true, "with_modules": true,
}

func (d *decoder) member(key []byte) error {
	switch k := string(key); {
	case k == "traceEvents":
		if d.sawEvents {
			return nil // duplicate keys are refused by the scanner
		}
		d.sawEvents = true
		tok, err := d.w.Expect(jsonscan.ArrayStart, "traceEvents")
		if err != nil {
			return err
		}
		return d.events(tok)
	case k == "stackFrames":
		return d.stackFrames()
	case k == "samples":
		return d.topSamples()
	case kept[k]:
		tok, err := d.w.Value()
		if err != nil {
			return err
		}
		v, err := d.w.S.Value(tok, jsonscan.ValueLimits{MaxDepth: 32, MaxEntries: 1 << 16})
		if err != nil {
			return err
		}
		switch k {
		case "displayTimeUnit":
			d.displayTimeUnit, _ = v.(string)
		case "distributedInfo":
			if o, ok := v.(map[string]any); ok {
				if n, ok := o["rank"].(json.Number); ok {
					if r, err := n.Int64(); err == nil {
						d.rank = table.Some(r)
						d.rankLate = d.nSlices+d.nCounters+d.nFlows > 0
					}
				}
			}
		}
		d.meta[k] = boundValue(d.sliceVals, v)
		return nil
	default:
		// systemTraceEvents (ftrace text), powerTraceAsString…: counted
		// by name, not read.
		d.st.notKeys = append(d.st.notKeys, d.sliceVals.Bound(k))
		return d.w.SkipValue()
	}
}

// events walks an array of events.
func (d *decoder) events(tok jsonscan.Token) error {
	err := d.w.Elements(tok, "traceEvents", func(i int, el jsonscan.Token) error {
		if i&1023 == 0 {
			if err := d.cancelled(); err != nil {
				return err
			}
		}
		return d.event(int64(i), el)
	})
	if err != nil && d.bareArray && d.w.S.Depth() == 1 && !errors.Is(err, jsonscan.ErrRead) && errors.Is(err, io.ErrUnexpectedEOF) {
		// The format allows a bare array without its closing bracket
		// (a writer killed mid-trace leaves one).
		d.unterminated = true
		return nil
	}
	return err
}

// text is a string, or a number's literal, copied out of the scanner.
func (d *decoder) text(tok jsonscan.Token) (string, bool) {
	if tok.Kind != jsonscan.String && tok.Kind != jsonscan.Number {
		return "", false
	}
	return d.internBytes(tok.Bytes), true
}

// internBytes returns b as a string, shared with earlier equal ones
// (names, categories and ids repeat).
func (d *decoder) internBytes(b []byte) string { return d.intern.get(b) }

// event reads one element of traceEvents and acts on it.
func (d *decoder) event(index int64, tok jsonscan.Token) error {
	d.st.events++
	e := &d.ev
	args, stack := e.args[:0], e.stack[:0]
	*e = event{index: index, offset: tok.Offset, args: args, stack: stack}
	if tok.Kind != jsonscan.ObjectStart {
		d.st.malformed["not an object"]++
		return d.w.Skip(tok)
	}
	err := d.w.Members(tok, "event", func(key []byte) error {
		v, err := d.w.Value()
		if err != nil {
			return err
		}
		if (v.Kind == jsonscan.ObjectStart || v.Kind == jsonscan.ArrayStart) && isTextMember(key) {
			// Not a name or an id (as a boolean is not); skipped, so the
			// walk keeps its place.
			return d.w.Skip(v)
		}
		switch string(key) {
		case "sf":
			e.sf, e.hasSF = d.text(v)
		case "stack":
			return d.readStack(v)
		case "esf", "estack":
			e.endStack = true
			return d.w.Skip(v)
		case "ph":
			e.ph, _ = d.text(v)
		case "name":
			e.name, e.hasName = d.text(v)
		case "cat":
			e.cat, e.hasCat = d.text(v)
		case "pid":
			e.pid, e.hasPid = d.text(v)
		case "tid":
			e.tid, e.hasTid = d.text(v)
		case "id":
			e.id, e.hasID = d.text(v)
		case "id2":
			return d.id2(v)
		case "scope":
			e.scope, _ = d.text(v)
		case "bp":
			e.bp, _ = d.text(v)
		case "s":
			e.s, _ = d.text(v)
		case "bind_id":
			e.bindID, _ = d.text(v)
		case "flow_in":
			e.flowIn = v.Kind == jsonscan.True
		case "flow_out":
			e.flowOut = v.Kind == jsonscan.True
		case "ts":
			e.ts, e.hasTS = d.micros(v, "ts")
		case "dur":
			e.dur, e.hasDur = d.micros(v, "dur")
		case "args":
			return d.readArgs(v)
		default:
			return d.w.Skip(v)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return d.act()
}

// isTextMember: the event member is read as text (a string or a number).
// A switch, not a map: every event's args asks.
func isTextMember(key []byte) bool {
	switch string(key) {
	case "ph", "name", "cat", "pid", "tid", "id", "scope", "bp", "s", "bind_id", "sf":
		return true
	}
	return false
}

// micros reads a time in microseconds as nanoseconds; a value that is
// not a representable number marks the event bad.
func (d *decoder) micros(tok jsonscan.Token, field string) (int64, bool) {
	if tok.Kind != jsonscan.Number {
		d.ev.bad = field + " is not a number"
		return 0, false
	}
	ns, rounded, err := microsToNanos(tok.Bytes)
	if err != nil {
		d.ev.bad = field + " is out of range"
		return 0, false
	}
	if rounded {
		d.st.rounded++
	}
	return ns, true
}

func (d *decoder) id2(tok jsonscan.Token) error {
	e := &d.ev
	if tok.Kind != jsonscan.ObjectStart {
		return d.w.Skip(tok)
	}
	return d.w.Members(tok, "id2", func(key []byte) error {
		v, err := d.w.Value()
		if err != nil {
			return err
		}
		switch string(key) {
		case "local":
			e.id, e.hasID = d.text(v)
			e.idLocal = true
		case "global":
			e.id, e.hasID = d.text(v)
			e.idGlobal = true
		default:
			return d.w.Skip(v)
		}
		return nil
	})
}

// readArgs keeps the first maxArgs members of args, strings bounded.
func (d *decoder) readArgs(tok jsonscan.Token) error {
	e := &d.ev
	if tok.Kind != jsonscan.ObjectStart {
		return d.w.Skip(tok)
	}
	return d.w.Members(tok, "args", func(key []byte) error {
		v, err := d.w.Value()
		if err != nil {
			return err
		}
		// Counters and metadata need their args whatever the option says;
		// the phase may come after args, so they are read when wanted.
		if !d.keepArgs && !needArgs(e.ph) && (!d.kineto || !kinetoArgs[string(key)]) {
			return d.w.Skip(v)
		}
		if len(e.args) >= d.maxArgs {
			e.argsCut++
			return d.w.Skip(v)
		}
		k := d.internBytes(key) // before Value: reading it may reuse key's bytes
		x, err := d.argValue(v)
		if err != nil {
			return err
		}
		e.args = append(e.args, arg{k, x})
		return nil
	})
}

// argValue reads an args member's value as Scanner.Value builds it; a
// scalar (most are) is taken from d.boxes without reading further.
func (d *decoder) argValue(v jsonscan.Token) (any, error) {
	switch v.Kind {
	case jsonscan.Number:
		return d.boxes.number(v.Bytes), nil
	case jsonscan.String:
		return d.boxes.str(v.Bytes), nil
	case jsonscan.True:
		return true, nil
	case jsonscan.False:
		return false, nil
	case jsonscan.Null:
		return nil, nil
	}
	return d.w.S.Value(v, jsonscan.ValueLimits{MaxDepth: 32, Number: d.boxNumber})
}

// needArgs: the phase's rows are made of its args (or the phase is not
// known yet, for an event that writes args first).
func needArgs(ph string) bool { return ph == "C" || ph == "M" || ph == "P" || ph == "" }

// kinetoArgs are the args Kineto's meaning reads.
var kinetoArgs = map[string]bool{"device": true, "stream": true, "correlation": true}

// boundValue bounds every string in v (keys included) with vals.
func boundValue(vals *formats.Values, v any) any {
	switch x := v.(type) {
	case string:
		return vals.Bound(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		formats.BoundInto(vals, out, x, func(y any) any { return boundValue(vals, y) })
		return out
	case []any:
		for i, y := range x {
			x[i] = boundValue(vals, y)
		}
		return x
	}
	return v
}

// rowArgs is the args column of a row: bounded, with the count of
// entries left out, or null.
func (d *decoder) rowArgs(vals *formats.Values) evidence.Object {
	e := &d.ev
	if !d.keepArgs || (len(e.args) == 0 && e.argsCut == 0) {
		return nil
	}
	out := make(evidence.Object, len(e.args)+1)
	for _, a := range e.args {
		out[vals.Bound(a.key)] = boundValue(vals, a.val)
	}
	if e.argsCut > 0 {
		out["…"] = e.argsCut
		d.st.argsCut += e.argsCut
	}
	return out
}

func null(s string, ok bool) table.Null[string] { return table.Null[string]{V: s, Valid: ok} }

// ids is the TraceIDs of the current event.
func (d *decoder) ids(vals *formats.Values) table.TraceIDs {
	e := &d.ev
	t := table.TraceIDs{Process: null(vals.Bound(e.pid), e.hasPid), Thread: null(vals.Bound(e.tid), e.hasTid), DistRank: d.rank}
	if d.kineto && len(e.args) > 0 {
		t.Device = argText(e.arg("device"))
		t.Stream = argText(e.arg("stream"))
		if t.Stream.Valid {
			t.Stream.V = vals.Bound(t.Stream.V)
		}
		if t.Device.Valid {
			t.Device.V = vals.Bound(t.Device.V)
		}
	}
	return t
}

// argText is an args value that names something (a number or a string).
func argText(v any) table.Null[string] {
	switch x := v.(type) {
	case json.Number:
		return table.Some(string(x))
	case string:
		return table.Some(x)
	}
	return table.Null[string]{}
}

// slice builds a slice row of the current event.
func (d *decoder) slice(kind string) *table.TraceSlice {
	e := &d.ev
	r := &table.TraceSlice{
		SliceID:  strconv.FormatInt(e.index, 10),
		Kind:     kind,
		Name:     d.sliceVals.Bound(e.name),
		Category: null(d.sliceVals.Bound(e.cat), e.hasCat),
		TraceIDs: d.ids(d.sliceVals),
		StartNS:  e.ts,
		EndNS:    e.ts,
		Offset:   table.Some(e.offset),
		Args:     d.rowArgs(d.sliceVals),
	}
	if d.kineto && len(e.args) > 0 {
		if n, ok := e.arg("correlation").(json.Number); ok {
			if c, err := n.Int64(); err == nil {
				r.Correlation = table.Some(c)
			}
		}
	}
	return r
}

func (d *decoder) thread() *thread {
	e := &d.ev
	k := threadKey{e.pid, e.tid}
	if d.lastThread != nil && k == d.lastKey {
		return d.lastThread // runs of events share a thread: no map access
	}
	th := d.threads[k]
	if th == nil {
		th = &thread{}
		d.threads[k] = th
		d.order = append(d.order, th)
	}
	d.lastKey, d.lastThread = k, th
	return th
}

// act interprets the event just read.
func (d *decoder) act() error {
	e := &d.ev
	d.st.phase(e.ph)
	if e.ph != "P" && (e.hasSF || e.hasStack || e.endStack) {
		d.tef.eventStacks++ // the stack of a slice or instant: not a sample
	}
	if e.bad != "" {
		d.st.malformed[e.bad]++
		return nil
	}
	needTS := e.ph != "M"
	if needTS && !e.hasTS {
		d.st.malformed["no ts"]++
		return nil
	}
	if err := d.bindFlow(); err != nil {
		return err
	}
	switch e.ph {
	case "X":
		if !e.hasDur {
			d.st.malformed["X without dur"]++
			return nil
		}
		if e.dur < 0 {
			d.st.malformed["negative dur"]++
			return nil
		}
		if err := d.checkOpen(); err != nil {
			return err
		}
		r := d.slice(table.SliceThread)
		r.EndNS, r.DurationNS = e.ts+e.dur, e.dur
		it := d.nest.newItem()
		*it = item{ts: e.ts, order: 1, dur: e.dur, kind: itemX, row: r}
		return d.nest.add(d.thread(), it)
	case "B":
		if err := d.checkOpen(); err != nil {
			return err
		}
		r := d.slice(table.SliceThread)
		it := d.nest.newItem()
		*it = item{ts: e.ts, order: 1, dur: 1<<63 - 1, kind: itemB, row: r}
		return d.nest.add(d.thread(), it)
	case "E":
		if err := d.checkOpen(); err != nil {
			return err
		}
		it := d.nest.newItem()
		*it = item{ts: e.ts, order: 0, kind: itemE}
		if e.hasName {
			it.name = e.name
		}
		if d.keepArgs {
			it.args = d.rowArgs(d.sliceVals) // bounded like the B's own
		}
		return d.nest.add(d.thread(), it)
	case "b", "e", "n":
		return d.asyncNestable()
	case "S", "F", "T", "p":
		return d.asyncLegacy()
	case "i", "I", "R":
		r := d.slice(table.SliceInstant)
		switch e.s {
		case "g":
			r.Process, r.Thread = table.Null[string]{}, table.Null[string]{}
		case "p":
			r.Thread = table.Null[string]{}
		}
		return d.emitSlice(r)
	case "C":
		return d.counter()
	case "M":
		return d.metadata()
	case "s", "t", "f":
		return d.flow()
	case "N", "D", "O":
		return d.object()
	case "P":
		if d.sample() { // Profile and ProfileChunk: samples.go
			return nil
		}
		d.eventSample() // legacy.go
		return nil
	}
	// Memory dumps (V, v), clock sync (c), context ((, )) and anything
	// else: counted by phase, not interpreted.
	d.st.uninterpreted++
	return nil
}

func (d *decoder) checkOpen() error {
	if d.nest.pending+d.nest.held+d.open >= d.maxOpen {
		return d.in.ExceededAt(LimitOpen, nil, d.ev.offset)
	}
	return nil
}

// scopeKey is the identity of an async or object id: category, scope
// and id, with the process for ids that are not global (id2.local ids
// are process-scoped, and so are plain ids, as Perfetto's importer
// treats them).
func (d *decoder) scopeKey() string {
	e := &d.ev
	k := e.cat + "\x00" + e.scope + "\x00" + e.id
	if !e.idGlobal {
		k += "\x00" + e.pid
	}
	return k
}

// trackName is the track column of an async slice.
func (d *decoder) trackName() table.Null[string] {
	e := &d.ev
	t := e.cat + ":" + e.id
	if e.scope != "" {
		t = e.scope + ":" + t
	}
	if e.idGlobal {
		t = "global:" + t
	}
	return table.Some(d.sliceVals.Bound(t))
}

func (d *decoder) asyncNestable() error {
	e := &d.ev
	if !e.hasID {
		d.st.malformed["async event without id"]++
		return nil
	}
	key := d.scopeKey()
	stack := d.async[key]
	switch e.ph {
	case "b":
		if err := d.checkOpen(); err != nil {
			return err
		}
		r := d.slice(table.SliceAsync)
		r.Track = d.trackName()
		r.Depth = table.Some(int64(len(stack)))
		if len(stack) > 0 {
			r.ParentID = table.Some(stack[len(stack)-1].row.SliceID)
		}
		d.async[key] = append(stack, &asyncOpen{row: r})
		d.open++
		return nil
	case "n":
		r := d.slice(table.SliceInstant)
		r.Track = d.trackName()
		return d.emitSlice(r)
	}
	// e: the innermost open b of that name; an e without a name closes
	// the innermost.
	i := len(stack) - 1
	if e.hasName {
		for i >= 0 && stack[i].row.Name != d.sliceVals.Bound(e.name) {
			i--
		}
	}
	if i < 0 {
		d.st.asyncUnmatchedEnd++
		return nil
	}
	o := stack[i]
	// Slices opened inside it and not yet ended stay open.
	d.async[key] = append(stack[:i:i], stack[i+1:]...)
	if len(d.async[key]) == 0 {
		delete(d.async, key)
	}
	d.open--
	return d.closeAsync(o)
}

// closeAsync ends an open async or object slice at the current event.
func (d *decoder) closeAsync(o *asyncOpen) error {
	e := &d.ev
	r := o.row
	if e.ts < r.StartNS {
		d.st.malformed["end before its begin"]++
		return nil
	}
	r.EndNS, r.DurationNS = e.ts, e.ts-r.StartNS
	if d.keepArgs && len(e.args) > 0 {
		extra := d.rowArgs(d.sliceVals)
		for k, v := range extra {
			if r.Args == nil {
				r.Args = evidence.Object{}
			}
			if _, dup := r.Args[k]; !dup {
				r.Args[k] = v
			}
		}
	}
	return d.emitSlice(r)
}

func (d *decoder) asyncLegacy() error {
	e := &d.ev
	if !e.hasID {
		d.st.malformed["async event without id"]++
		return nil
	}
	key := d.scopeKey() + "\x00" + e.name
	switch e.ph {
	case "S":
		if d.legacy[key] != nil {
			d.st.asyncUnmatchedBegin++
			return nil
		}
		if err := d.checkOpen(); err != nil {
			return err
		}
		r := d.slice(table.SliceAsync)
		r.Track = d.trackName()
		d.legacy[key] = &asyncOpen{row: r}
		d.open++
		return nil
	case "T", "p":
		d.st.asyncSteps++
		return nil
	}
	o := d.legacy[key]
	if o == nil {
		d.st.asyncUnmatchedEnd++
		return nil
	}
	delete(d.legacy, key)
	d.open--
	return d.closeAsync(o)
}

func (d *decoder) object() error {
	e := &d.ev
	if !e.hasID {
		d.st.malformed["object event without id"]++
		return nil
	}
	key := d.scopeKey() + "\x00" + e.name
	switch e.ph {
	case "O":
		d.st.objectSnapshots++
		return nil
	case "N":
		if d.objects[key] != nil {
			d.st.objectsUnmatched++
			return nil
		}
		if err := d.checkOpen(); err != nil {
			return err
		}
		r := d.slice(table.SliceObject)
		r.Track = d.trackName()
		d.objects[key] = &asyncOpen{row: r}
		d.open++
		return nil
	}
	o := d.objects[key]
	if o == nil {
		d.st.objectsUnmatched++
		return nil
	}
	delete(d.objects, key)
	d.open--
	return d.closeAsync(o)
}

// counter writes one row per numeric args member of a C event.
func (d *decoder) counter() error {
	e := &d.ev
	name := e.name
	if e.hasID {
		name += " " + e.id // the format names a counter series by name and id
	}
	ids := d.ids(d.counterVals)
	// One row per series, in key order (the counter's last use of args).
	slices.SortFunc(e.args, func(a, b arg) int { return strings.Compare(a.key, b.key) })
	for _, a := range e.args {
		k, v := a.key, a.val
		var f float64
		switch x := v.(type) {
		case json.Number:
			var err error
			if f, err = x.Float64(); err != nil {
				d.st.counterNotNumeric++
				continue
			}
		default:
			d.st.counterNotNumeric++
			continue
		}
		d.nCounters++
		row := &table.TraceCounter{Name: d.counterVals.Bound(name), Series: table.Some(d.counterVals.Bound(k)),
			Category: null(d.counterVals.Bound(e.cat), e.hasCat), TraceIDs: ids, TS: e.ts, Value: f,
			Offset: table.Some(e.offset)}
		if err := d.counters.Row(row); err != nil {
			return err
		}
	}
	if e.argsCut > 0 {
		d.st.counterCut += e.argsCut
	}
	return nil
}

// metadata writes a trace.tracks row for the M events that name or
// order processes and threads.
func (d *decoder) metadata() error {
	e := &d.ev
	v := d.trVals
	row := &table.TraceTrack{Process: null(v.Bound(e.pid), e.hasPid)}
	arg := func(k string) any {
		return e.arg(k)
	}
	switch e.name {
	case "process_name", "process_labels", "process_sort_index":
		row.Kind = table.TrackProcess
	case "thread_name", "thread_sort_index":
		row.Kind = table.TrackThread
		row.Thread = null(v.Bound(e.tid), e.hasTid)
	case "trace_buffer_overflowed":
		d.st.bufferOverflowed++
		return nil
	default:
		d.st.metadata[v.Bound(e.name)]++
		return nil
	}
	switch e.name {
	case "process_name", "thread_name":
		s, ok := arg("name").(string)
		if !ok {
			d.st.malformed["name metadata without args.name"]++
			return nil
		}
		row.Name = table.Some(v.Bound(s))
	case "process_labels":
		s, ok := arg("labels").(string)
		if !ok {
			d.st.malformed["labels metadata without args.labels"]++
			return nil
		}
		row.Labels = table.Some(v.Bound(s))
	default:
		n, ok := arg("sort_index").(json.Number)
		i, err := n.Int64()
		if !ok || err != nil {
			d.st.malformed["sort_index metadata without an integer args.sort_index"]++
			return nil
		}
		row.SortIndex = table.Some(i)
	}
	d.nTracks++
	return d.tracks.Row(row)
}

// flow writes a trace.flows row for s/t/f events.
func (d *decoder) flow() error {
	e := &d.ev
	if !e.hasID {
		d.st.malformed["flow event without id"]++
		return nil
	}
	var step string
	switch e.ph {
	case "s":
		step = table.FlowStart
	case "t":
		step = table.FlowStep
	case "f":
		step = table.FlowEnd
	}
	// The id is made in scratch and interned: a flow's start and end
	// share it.
	b := d.scratch[:0]
	if e.idLocal {
		b = append(append(b, e.pid...), '/')
	}
	b = append(append(append(b, e.cat...), ':'), e.id...)
	d.scratch = b
	return d.flowRow(d.internBytes(b), step, e.bp)
}

// bindFlow writes the flow points of a slice event that carries
// flow_in/flow_out (the v2 flow form, bound by bind_id or id).
func (d *decoder) bindFlow() error {
	e := &d.ev
	if !e.flowIn && !e.flowOut {
		return nil
	}
	id := e.bindID
	if id == "" {
		id = e.id
	}
	if id == "" {
		d.st.malformed["flow_in/flow_out without bind_id or id"]++
		return nil
	}
	if e.flowIn {
		if err := d.flowRow("bind:"+id, table.FlowEnd, "e"); err != nil {
			return err
		}
	}
	if e.flowOut {
		return d.flowRow("bind:"+id, table.FlowStart, "e")
	}
	return nil
}

func (d *decoder) flowRow(id, step, bp string) error {
	e := &d.ev
	v := d.flowVals
	d.nFlows++
	return d.flows.Row(&table.TraceFlow{FlowID: v.Bound(id), Step: step, Name: null(v.Bound(e.name), e.hasName),
		Category: null(v.Bound(e.cat), e.hasCat), TraceIDs: d.ids(v), TS: e.ts, Binding: table.NonEmpty(v.Bound(bp)),
		Offset: table.Some(e.offset)})
}
