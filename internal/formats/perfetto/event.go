package perfetto

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
	"google.golang.org/protobuf/encoding/protowire"
)

// TrackEvent types.
const (
	typeUnspecified = 0
	typeBegin       = 1
	typeEnd         = 2
	typeInstant     = 3
	typeCounter     = 4
)

// trackEvent is one TrackEvent's fields as read (its slices reused).
type trackEvent struct {
	typ                    uint64
	name                   []byte
	hasName                bool
	nameIID                uint64
	hasNameIID             bool
	catIIDs                []uint64
	cats                   [][]byte
	trackUUID              uint64
	hasTrack               bool
	counterInt             int64
	counterDbl             float64
	hasCounter, counterIsD bool
	extraTracks, extraDbl  []uint64
	extraVals              []uint64
	extraDblVals           []uint64
	flows, terminating     []uint64
	annotations            [][]byte
	correlation            uint64
	hasCorrelation         bool
	corrStr                []byte
	corrStrIID             uint64
	hasCorrStr, hasCorrIID bool
	legacy                 bool
}

func (e *trackEvent) reset() {
	*e = trackEvent{catIIDs: e.catIIDs[:0], cats: e.cats[:0], extraTracks: e.extraTracks[:0], extraDbl: e.extraDbl[:0],
		extraVals: e.extraVals[:0], extraDblVals: e.extraDblVals[:0], flows: e.flows[:0], terminating: e.terminating[:0],
		annotations: e.annotations[:0]}
}

// trackEvent reads a TrackEvent at time ts.
func (d *decoder) trackEvent(s *seqState, b []byte, ts int64, at int64) error {
	e := &d.ev
	e.reset()
	f := field{b: b}
	for f.next() {
		num, typ, v, body := f.num, f.typ, f.v, f.body
		switch num {
		case 9:
			e.typ = v
		case 23:
			e.name, e.hasName = body, true
		case 10:
			e.nameIID, e.hasNameIID = v, true
		case 3:
			e.catIIDs = appendUints(e.catIIDs, typ, v, body)
		case 22:
			e.cats = append(e.cats, body)
		case 11:
			e.trackUUID, e.hasTrack = v, true
		case 30:
			e.counterInt, e.hasCounter, e.counterIsD = int64(v), true, false
		case 44:
			e.counterDbl, e.hasCounter, e.counterIsD = f64(v), true, true
		case 31:
			e.extraTracks = appendUints(e.extraTracks, typ, v, body)
		case 12:
			e.extraVals = appendUints(e.extraVals, typ, v, body)
		case 45:
			e.extraDbl = appendUints(e.extraDbl, typ, v, body)
		case 46:
			e.extraDblVals = appendFixed64s(e.extraDblVals, typ, v, body)
		case 36:
			e.flows = appendUints(e.flows, typ, v, body)
		case 47:
			e.flows = appendFixed64s(e.flows, typ, v, body)
		case 42:
			e.terminating = appendUints(e.terminating, typ, v, body)
		case 48:
			e.terminating = appendFixed64s(e.terminating, typ, v, body)
		case 4:
			e.annotations = append(e.annotations, body)
		case 52:
			e.correlation, e.hasCorrelation = v, true
		case 53:
			e.corrStr, e.hasCorrStr = body, true
		case 54:
			e.corrStrIID, e.hasCorrIID = v, true
		case 1, 16:
			// timestamp_delta_us, timestamp_absolute_us: read with the
			// packet (legacy thread sequences)
		case 6:
			e.legacy = true
			d.st.notInterpreted(msgTrackEvent, num)
		default:
			d.st.notInterpreted(msgTrackEvent, num)
		}
	}
	if f.err != nil {
		return d.malformed(at, "track_event", f.err)
	}
	d.st.events++
	uuid := e.trackUUID
	var tr *track
	if !e.hasTrack {
		switch {
		case s.hasDefTrack:
			uuid = s.defTrack
		case s.legacy != nil:
			tr = s.legacy
		default:
			d.st.defaultTrack++
		}
	}
	if tr == nil {
		tr = d.track(uuid)
	}
	if !tr.described {
		d.st.undescribed++
	}
	if tr.anyTS && ts < tr.lastTS {
		d.st.outOfOrder++
	}
	tr.anyTS, tr.lastTS = true, ts
	if err := d.extraCounters(s, e, ts, at); err != nil {
		return err
	}
	switch e.typ {
	case typeBegin, typeInstant:
		d.st.byType[e.typ]++
		name, ok := d.eventName(s, e)
		if !ok {
			if e.typ == typeBegin {
				// Its END still closes it: held, never a row.
				return d.enqueue(tr, item{ts: ts, typ: itemBegin, skip: true, row: &table.TraceSlice{StartNS: ts}}, at)
			}
			return nil
		}
		row := &table.TraceSlice{SliceID: strconv.FormatInt(d.st.packets, 10), Name: name, Category: d.category(s, e),
			TraceIDs: d.ids(tr), StartNS: ts, EndNS: ts, Offset: table.Some(at)}
		row.Kind = tr.slot
		if e.hasCorrelation && e.correlation <= math.MaxInt64 {
			row.Correlation = table.Some(int64(e.correlation))
		}
		if d.keepArgs {
			row.Args = d.args(s, e, nil)
		}
		if err := d.flowPoints(e, row.TraceIDs, ts, at); err != nil {
			return err
		}
		it := item{ts: ts, typ: itemBegin, row: row}
		if e.typ == typeInstant {
			row.Kind = table.SliceInstant
			it.typ = itemInstant
		}
		return d.enqueue(tr, it, at)
	case typeEnd:
		d.st.byType[e.typ]++
		if err := d.flowPoints(e, d.ids(tr), ts, at); err != nil {
			return err
		}
		it := item{ts: ts, typ: itemEnd}
		if d.keepArgs && len(e.annotations) > 0 {
			it.args = d.args(s, e, nil)
		}
		return d.enqueue(tr, it, at)
	case typeCounter:
		d.st.byType[e.typ]++
		if !e.hasCounter {
			d.st.counterNoValue++
			return nil
		}
		v := float64(e.counterInt)
		if e.counterIsD {
			v = e.counterDbl
		}
		return d.counter(s, tr, v, ts, at)
	case typeUnspecified:
		if e.legacy {
			d.st.legacy++
		} else {
			d.st.byType[0]++
		}
		return nil
	}
	d.st.otherTypes[e.typ]++
	return nil
}

// eventName resolves a slice's name: its own, or interned.
func (d *decoder) eventName(s *seqState, e *trackEvent) (string, bool) {
	switch {
	case e.hasName:
		return d.sliceVals.Bound(d.text(string(e.name))), true
	case e.hasNameIID:
		n, ok := d.lookupText(s, strNames, e.nameIID)
		if !ok {
			d.st.missingName++
			return "", false
		}
		return d.sliceVals.Bound(n), true
	}
	d.st.unnamed++
	return "", true
}

// category is the event's categories, joined by "," as Trace Processor
// joins them; an interned category that is missing is counted.
func (d *decoder) category(s *seqState, e *trackEvent) table.Null[string] {
	if len(e.catIIDs)+len(e.cats) == 0 {
		return table.Null[string]{}
	}
	if len(e.cats) == 0 && len(e.catIIDs) == 1 {
		c, ok := d.lookupText(s, strCats, e.catIIDs[0])
		if !ok {
			d.st.missingCategory++
			return table.Null[string]{}
		}
		return table.Some(d.sliceVals.Bound(c))
	}
	var sb strings.Builder
	for _, iid := range e.catIIDs {
		c, ok := d.lookup(s, strCats, iid)
		if !ok {
			d.st.missingCategory++
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(c)
	}
	for _, c := range e.cats {
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.Write(c)
	}
	if sb.Len() == 0 {
		return table.Null[string]{}
	}
	return table.Some(d.sliceVals.Bound(d.text(sb.String())))
}

// flowPoints emits the event's flow points: a flow id first seen starts
// its flow, seen again steps it, a terminating id ends it.
func (d *decoder) flowPoints(e *trackEvent, ids table.TraceIDs, ts int64, at int64) error {
	for _, id := range e.flows {
		// One map operation per point, not a lookup then an insert or
		// delete: whether the set grew or shrank says what the id was.
		step := table.FlowStep
		n := len(d.flowSet)
		d.flowSet[id] = struct{}{}
		if len(d.flowSet) > n {
			step = table.FlowStart
			d.open++
			if d.open > d.maxOpen {
				return d.in.ExceededAt(LimitOpen, d.open, at)
			}
		}
		if err := d.flow(id, step, ids, ts, at); err != nil {
			return err
		}
	}
	for _, id := range e.terminating {
		n := len(d.flowSet)
		delete(d.flowSet, id)
		if len(d.flowSet) < n {
			d.open--
		} else {
			d.st.flowEndUnstarted++
		}
		if err := d.flow(id, table.FlowEnd, ids, ts, at); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) flow(id uint64, step string, ids table.TraceIDs, ts, at int64) error {
	d.nFlows++
	if !d.wantFlows {
		return nil
	}
	r := d.flowRows.next()
	*r = table.TraceFlow{FlowID: strconv.FormatUint(id, 10), Step: step, TraceIDs: ids, TS: ts, Offset: table.Some(at)}
	return d.flows.Row(r)
}

// extraCounters emits extra_counter_values (and their double
// counterpart) on the tracks extra_counter_track_uuids names, or the
// sequence's defaults.
func (d *decoder) extraCounters(s *seqState, e *trackEvent, ts, at int64) error {
	for _, x := range []struct {
		vals, tracks, def []uint64
		dbl               bool
	}{{e.extraVals, e.extraTracks, s.defExtra, false}, {e.extraDblVals, e.extraDbl, s.defExtraDbl(), true}} {
		if len(x.vals) == 0 {
			continue
		}
		tracks := x.tracks
		if len(tracks) == 0 {
			tracks = x.def
		}
		for i, raw := range x.vals {
			if i >= len(tracks) {
				d.st.extraNoTrack += int64(len(x.vals) - i)
				break
			}
			v := float64(int64(raw))
			if x.dbl {
				v = f64(raw)
			}
			if err := d.counter(s, d.track(tracks[i]), v, ts, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// counter emits one counter sample: an incremental track's value is
// the running sum on its sequence, times the track's unit multiplier.
func (d *decoder) counter(s *seqState, tr *track, v float64, ts, at int64) error {
	if !tr.counter {
		d.st.counterNotCounterTrack++
	}
	if tr.incremental {
		v = s.addCounter(tr.uuid, v)
	}
	if tr.mult > 1 {
		v *= float64(tr.mult)
	}
	d.nCounters++
	if !d.wantCounters {
		return nil // declined by the sink: counted, not built
	}
	name := d.ctrVals.Bound(tr.rawName)
	if name == "" {
		if tr.typeName == "" || tr.typeNameOf != tr.ctype {
			tr.typeName, tr.typeNameOf = counterTypeName(tr), tr.ctype
		}
		name = tr.typeName
	}
	r := d.ctrRows.next()
	*r = table.TraceCounter{Name: name, TraceIDs: d.ids(tr), TS: ts, Value: v, Offset: table.Some(at)}
	return d.counters.Row(r)
}

func counterTypeName(tr *track) string {
	switch tr.ctype {
	case 1:
		return "thread_time_ns" // COUNTER_THREAD_TIME_NS
	case 2:
		return "thread_instruction_count" // COUNTER_THREAD_INSTRUCTION_COUNT
	}
	return "track " + strconv.FormatUint(tr.uuid, 10)
}

// track is the track of uuid, described or not yet.
func (d *decoder) track(uuid uint64) *track {
	// Consecutive events are mostly on a few tracks (a slice's track, its
	// thread-time counter): a small cache by uuid spares the map.
	c := &d.trkCache[uuid%uint64(len(d.trkCache))]
	if *c != nil && (*c).uuid == uuid {
		return *c
	}
	tr := d.trks[uuid]
	if tr == nil {
		tr = &track{uuid: uuid, kind: table.TrackOther, gen: -1}
		d.trks[uuid] = tr
	}
	*c = tr
	return tr
}

// ids are the row ids of a track's events: its process (its own pid or
// an ancestor's), its thread for a thread track, its uuid otherwise.
func (d *decoder) ids(tr *track) table.TraceIDs {
	if tr.gen == d.gen {
		return tr.ids
	}
	tr.gen = d.gen
	tr.ids = table.TraceIDs{}
	tr.slot = table.SliceAsync
	if tr.hasTid {
		tr.ids.Thread = table.Some(strconv.FormatInt(tr.tid, 10))
		tr.slot = table.SliceThread
	} else {
		tr.ids.Track = table.Some(strconv.FormatUint(tr.uuid, 10))
	}
	for t, hops := tr, 0; t != nil && hops < 64; hops++ {
		if t.hasPid {
			tr.ids.Process = table.Some(strconv.FormatInt(t.pid, 10))
			break
		}
		if !t.hasParent {
			break
		}
		t = d.trks[t.parent]
	}
	return tr.ids
}

// descriptor reads a TrackDescriptor and emits its trace.tracks row
// when it says something new.
func (d *decoder) descriptor(b []byte, at int64) error {
	var uuid, parent uint64
	var hasParent, hasUUID bool
	var name, procName, threadName []byte
	var pid, tid int64
	var hasPid, hasTid, isProc, isThread, isCounter, incr bool
	var mult, ctype int64
	var sortIndex table.Null[int64]
	var cmdline, labels []string
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
		switch num {
		case 1:
			uuid, hasUUID = v, true
		case 5:
			parent, hasParent = v, true
		case 2, 10, 13:
			name = body
		case 3:
			isProc = true
			return fields(body, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
				switch num {
				case 1:
					pid, hasPid = int64(int32(v)), true
				case 6:
					procName = body
				case 2:
					cmdline = append(cmdline, d.trVals.Bound(d.text(string(body))))
				case 8:
					labels = append(labels, d.trVals.Bound(d.text(string(body))))
				case 3:
					sortIndex = table.Some(int64(int32(v)))
				}
				return nil
			}, nil)
		case 4:
			isThread = true
			return fields(body, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
				switch num {
				case 1:
					pid, hasPid = int64(int32(v)), true
				case 2:
					tid, hasTid = int64(v), true
				case 5:
					threadName = body
				case 3:
					sortIndex = table.Some(int64(int32(v)))
				}
				return nil
			}, nil)
		case 8:
			isCounter = true
			return fields(body, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
				switch num {
				case 1:
					ctype = int64(v)
				case 4:
					mult = int64(v)
				case 5:
					incr = v != 0
				}
				return nil
			}, nil)
		default:
			d.st.notInterpreted(msgDescriptor, num)
		}
		return nil
	}, d.fieldErr(at, "track_descriptor"))
	if err != nil {
		return err
	}
	if !hasUUID {
		d.st.descriptorNoUUID++
		return nil
	}
	tr := d.track(uuid)
	tr.described = true
	tr.parent, tr.hasParent = parent, hasParent
	tr.pid, tr.hasPid = pid, hasPid
	tr.tid, tr.hasTid = tid, hasTid && isThread
	tr.counter, tr.incremental, tr.mult, tr.ctype = isCounter, incr, mult, ctype
	row := &table.TraceTrack{Kind: table.TrackOther, SortIndex: sortIndex}
	nm := name
	switch {
	case isThread && hasTid:
		row.Kind = table.TrackThread
		if len(threadName) > 0 {
			nm = threadName
		}
	case isProc:
		row.Kind = table.TrackProcess
		if len(procName) > 0 {
			nm = procName
		}
	}
	tr.rawName = ""
	if len(nm) > 0 {
		tr.rawName = d.text(string(nm))
		row.Name = table.Some(d.trVals.Bound(tr.rawName))
	} else if row.Kind == table.TrackProcess && len(cmdline) > 0 {
		row.Name = table.Some(cmdline[0])
	}
	if len(cmdline)+len(labels) > 0 {
		o := evidence.Object{}
		if len(cmdline) > 0 {
			o["cmdline"] = toAny(cmdline)
		}
		if len(labels) > 0 {
			o["labels"] = toAny(labels)
		}
		if c, err := evidence.Canonical(o); err == nil {
			row.Labels = table.Some(d.trVals.Bound(string(c)))
		}
	}
	if hasParent {
		row.Parent = table.Some(strconv.FormatUint(parent, 10))
	}
	d.gen++
	ids := d.ids(tr)
	row.Process = ids.Process
	switch row.Kind {
	case table.TrackThread:
		row.Thread = ids.Thread
	case table.TrackOther:
		row.Track = table.Some(strconv.FormatUint(uuid, 10))
	}
	if tr.emitted != nil && *tr.emitted == *row {
		return nil
	}
	tr.emitted = row
	d.nTrks++
	return d.tracks.Row(row)
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// args are a slice's debug annotations (and its correlation string),
// merged into into (an END's into its BEGIN's).
func (d *decoder) args(s *seqState, e *trackEvent, into evidence.Object) evidence.Object {
	if len(e.annotations) == 0 && !e.hasCorrStr && !e.hasCorrIID {
		return into
	}
	o := into
	if o == nil {
		o = evidence.Object{}
	}
	if e.hasCorrStr {
		o["correlation_id"] = d.strValue(string(e.corrStr))
	} else if e.hasCorrIID {
		if c, ok := d.lookup(s, strCorrStrs, e.corrStrIID); ok {
			o["correlation_id"] = d.strValue(c)
		} else {
			d.st.missingAnnotation++
		}
	}
	d.annotationList(s, e.annotations, o, 0)
	if len(o) == 0 {
		return nil
	}
	return o
}

const maxAnnotationDepth = 32

// annotationList adds named annotations to o, at most maxArgs (then
// "…": the count left out).
func (d *decoder) annotationList(s *seqState, list [][]byte, o evidence.Object, depth int) {
	for i, b := range list {
		if len(o) >= d.maxArgs {
			if _, ok := o["…"]; !ok {
				n := int64(len(list) - i)
				d.st.argsCut += n
				o["…"] = n
			}
			return
		}
		name, v, ok := d.annotation(s, b, depth)
		if !ok {
			continue
		}
		if _, dup := o[name]; dup {
			d.st.duplicateArgs++
			continue
		}
		o[name] = v
	}
}

// annotation reads one DebugAnnotation: its name and value.
func (d *decoder) annotation(s *seqState, b []byte, depth int) (string, any, bool) {
	var name string
	var hasName bool
	var val any
	var dict, array [][]byte
	var protoType string
	var protoBytes []byte
	var isProto bool
	nameOK := true
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
		switch num {
		case 10:
			name, hasName = d.sliceVals.Bound(d.text(string(body))), true
		case 1:
			n, ok := d.lookupText(s, strAnnNames, v)
			if !ok {
				nameOK = false
				return nil
			}
			name, hasName = d.sliceVals.Bound(n), true
		case 2:
			val = v != 0
		case 3:
			if v > math.MaxInt64 {
				val = strconv.FormatUint(v, 10)
			} else {
				val = int64(v)
			}
		case 4:
			val = int64(v)
		case 5:
			val = evidence.Double(f64(v))
		case 7:
			val = "0x" + strconv.FormatUint(v, 16)
		case 6:
			val = d.strValue(string(body))
		case 17:
			if str, ok := d.lookup(s, strAnnStrs, v); ok {
				val = d.strValue(str)
			} else {
				d.st.missingAnnotation++
				val = evidence.Object{"type": "interned_string", "missing_iid": int64(v)}
			}
		case 9:
			val = evidence.Object{"type": "json", "value": d.strValue(string(body))}
		case 8:
			d.st.notInterpreted(msgAnnotation, num)
			val = evidence.Object{"type": "nested_value", "not_interpreted": true}
		case 11:
			dict = append(dict, body)
		case 12:
			array = append(array, body)
		case 16:
			protoType = d.sliceVals.Bound(d.text(string(body)))
		case 13:
			protoType = "iid " + strconv.FormatUint(v, 10)
		case 14:
			isProto, protoBytes = true, body
		default:
			d.st.notInterpreted(msgAnnotation, num)
		}
		return nil
	}, nil)
	if err != nil {
		d.st.malformedArgs++
		return "", nil, false
	}
	if !nameOK {
		d.st.missingAnnotation++
		return "", nil, false
	}
	if !hasName && depth == 0 {
		d.st.unnamedArgs++
		return "", nil, false
	}
	switch {
	case dict != nil:
		if depth >= maxAnnotationDepth {
			d.st.argsDepthCut++
			return name, evidence.Object{"type": "dict", "cut": "nested deeper than " + strconv.Itoa(maxAnnotationDepth)}, true
		}
		o := evidence.Object{}
		d.annotationList(s, dict, o, depth+1)
		val = o
	case len(array) > 0:
		if depth >= maxAnnotationDepth {
			d.st.argsDepthCut++
			return name, evidence.Object{"type": "array", "cut": "nested deeper than " + strconv.Itoa(maxAnnotationDepth)}, true
		}
		list := make([]any, 0, min(len(array), d.maxArgs)+1)
		for i, a := range array {
			if i == d.maxArgs {
				d.st.argsCut += int64(len(array) - i)
				list = append(list, evidence.Object{"…": int64(len(array) - i)})
				break
			}
			_, v, ok := d.annotation(s, a, depth+1)
			if !ok {
				continue
			}
			list = append(list, v)
		}
		val = list
	case isProto:
		val = evidence.Object{"type": "proto", "proto_type": protoType, "bytes": d.sliceVals.Bound(base64.StdEncoding.EncodeToString(protoBytes))}
	}
	return name, val, true
}

// text is a native string made valid UTF-8 for a row: bytes that are
// not UTF-8 (Chromium writes some binary into string fields) become
// U+FFFD, counted.
func (d *decoder) text(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	d.st.invalidUTF8++
	return strings.ToValidUTF8(s, "\uFFFD")
}

// strValue is a string annotation value: bounded text, or, when it is
// not UTF-8, its bytes tagged and in base64 (counted).
func (d *decoder) strValue(s string) any {
	if utf8.ValidString(s) {
		return d.sliceVals.Bound(s)
	}
	d.st.invalidUTF8++
	return evidence.Object{"type": "bytes", "value": d.sliceVals.Bound(base64.StdEncoding.EncodeToString([]byte(s)))}
}

// threadDescriptor reads a legacy ThreadDescriptor packet: the sequence's
// events without a track are on this thread, their times µs from its
// reference_timestamp_us.
func (d *decoder) threadDescriptor(s *seqState, b []byte, at int64) error {
	var pid, tid, ref int64
	var name []byte
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
		switch num {
		case 1:
			pid = int64(int32(v))
		case 2:
			tid = int64(v)
		case 5:
			name = body
		case 6:
			ref = int64(v)
		}
		return nil
	}, d.fieldErr(at, "thread_descriptor"))
	if err != nil {
		return err
	}
	key := [2]int64{pid, tid}
	tr := d.legacy[key]
	if tr == nil {
		tr = &track{kind: table.TrackThread, gen: -1, described: true, pid: pid, hasPid: true, tid: tid, hasTid: true}
		d.legacy[key] = tr
	}
	s.legacy, s.legacyUS = tr, ref
	row := &table.TraceTrack{Kind: table.TrackThread, Process: table.Some(strconv.FormatInt(pid, 10)), Thread: table.Some(strconv.FormatInt(tid, 10))}
	if len(name) > 0 {
		row.Name = table.Some(d.trVals.Bound(d.text(string(name))))
	}
	if tr.emitted != nil && *tr.emitted == *row {
		return nil
	}
	tr.emitted = row
	d.nTrks++
	return d.tracks.Row(row)
}

// processDescriptor reads a legacy ProcessDescriptor packet into a
// trace.tracks row.
func (d *decoder) processDescriptor(b []byte, at int64) error {
	var pid int64
	var name []byte
	var cmdline []string
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
		switch num {
		case 1:
			pid = int64(int32(v))
		case 6:
			name = body
		case 2:
			cmdline = append(cmdline, d.trVals.Bound(d.text(string(body))))
		}
		return nil
	}, d.fieldErr(at, "process_descriptor"))
	if err != nil {
		return err
	}
	row := &table.TraceTrack{Kind: table.TrackProcess, Process: table.Some(strconv.FormatInt(pid, 10))}
	switch {
	case len(name) > 0:
		row.Name = table.Some(d.trVals.Bound(d.text(string(name))))
	case len(cmdline) > 0:
		row.Name = table.Some(cmdline[0])
	}
	d.nTrks++
	return d.tracks.Row(row)
}
