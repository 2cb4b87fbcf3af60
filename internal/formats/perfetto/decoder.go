package perfetto

import (
	"bytes"
	"context"
	"math"
	"strconv"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/table"
	"github.com/klauspost/compress/zstd"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the TracePacket fields read (protos/perfetto/trace/trace_packet.proto).
const (
	fTimestamp         = 8
	fTimestampClockID  = 58
	fSequenceID        = 10
	fSequenceFlags     = 13
	fIncrementalClear  = 41
	fPreviousDropped   = 42
	fFirstOnSequence   = 87
	fInternedData      = 12
	fPacketDefaults    = 59
	fTrackEvent        = 11
	fTrackDescriptor   = 60
	fClockSnapshot     = 6
	fTraceStats        = 35
	fTraceConfig       = 33
	fCompressedPackets = 50
	fZstdPackets       = 133
	fProcessDescriptor = 43
	fThreadDescriptor  = 44
)

// Sequence flags.
const (
	seqCleared    = 1 // SEQ_INCREMENTAL_STATE_CLEARED
	seqNeedsState = 2 // SEQ_NEEDS_INCREMENTAL_STATE
)

// Messages whose fields are counted when not interpreted.
const (
	msgPacket = iota
	msgTrackEvent
	msgInterned
	msgDescriptor
	msgDefaults
	msgAnnotation
	nMsgs
)

var msgNames = [nMsgs]string{"trace_packet", "track_event", "interned_data", "track_descriptor", "trace_packet_defaults", "debug_annotation"}

// seqState is what one trusted packet sequence's later packets refer
// to: the interned tables and defaults its incremental state holds.
type seqState struct {
	id          uint32
	defClock    uint32
	valid       bool // incremental state was cleared and nothing was lost since
	seen        bool
	hasDefTrack bool

	strs [nStrKinds][]uint32 // interned strings by kind: iid → pool index + 1, dense

	defTrack uint64
	defExtra []uint64

	legacy   *track // the thread a legacy thread_descriptor gave the sequence
	legacyUS int64  // its reference time, µs, advanced by timestamp_delta_us

	counters []counterVal // incremental counter tracks' running values
	clocks   []seqClock   // sequence-scoped clocks (ids 64–127)

	rare *seqRare // what few sequences need, allocated on use
}

// seqRare is the part of a sequence's state few sequences fill; kept
// apart so that the many that do not cost one pointer for it.
type seqRare struct {
	sparse      [nStrKinds]map[uint64]uint32 // interned strings of iids past the dense slices
	defExtraDbl []uint64
	counterIdx  map[uint64]int
	prof        *seqProfile // interned callstacks, frames, mappings and their strings
}

func (s *seqState) rareOf() *seqRare {
	if s.rare == nil {
		s.rare = &seqRare{}
	}
	return s.rare
}

// newSeq is an empty sequence state: its tables are allocated as it
// fills them, since most sequences of a long trace hold little.
func newSeq(id uint32) *seqState { return &seqState{id: id} }

// clear is SEQ_INCREMENTAL_STATE_CLEARED: interned data, defaults and
// incremental values are forgotten. The tables are replaced, not
// emptied in place: a sequence that once interned much would hold that
// memory for the rest of a long trace.
func (s *seqState) clear() {
	seen := s.seen
	*s = *newSeq(s.id)
	s.seen, s.valid = seen, true
}

// track is what the descriptors say of one track uuid, and its open
// slices.
type track struct {
	uuid      uint64
	described bool
	parent    uint64
	hasParent bool
	rawName   string // the descriptor's name, not yet bounded
	kind      string // table.TrackProcess, TrackThread or TrackOther
	pid, tid  int64
	hasPid    bool
	hasTid    bool

	counter     bool
	incremental bool
	mult        int64
	ctype       int64

	stack      []open
	win        window
	released   bool
	releasedTS int64
	anyMax     bool
	maxTS      int64
	lastTS     int64
	anyTS      bool

	typeName   string // counterTypeName of ctype typeNameOf, made once
	typeNameOf int64

	gen     int64 // descriptor generation its ids were resolved at
	ids     table.TraceIDs
	slot    string // the kind of its slices
	emitted *table.TraceTrack
}

// open is a slice begun on a track and not yet ended.
type open struct {
	row      *table.TraceSlice
	children int64
	skip     bool // its name is interned and missing: not a row
}

// packet is one TracePacket's fields as read.
type packet struct {
	ts        uint64
	hasTS     bool
	clock     uint32
	seq       uint32
	flags     uint32
	cleared   bool
	dropped   bool
	first     bool
	interned  []byte
	defaults  []byte
	dataNum   protowire.Number
	data      []byte
	dataCount int
}

// decoder is the state of one decode.
type decoder struct {
	ctx      context.Context
	in       *formats.Input
	keepArgs bool
	maxArgs  int

	wantCounters, wantFlows bool // the sink keeps these tables
	maxOpen                 int64

	slices, counters, flows, tracks   *formats.LazyTable
	sliceVals, ctrVals, trVals        *formats.Values
	nSlices, nCounters, nFlows, nTrks int64

	buf      []byte
	zbuf     bytes.Buffer
	zstd     *zstd.Decoder
	inflated int64
	over     error
	gzip     bool
	gzLim    *formats.Decompressed

	seqs     map[uint32]*seqState
	lastSeq  *seqState
	trks     map[uint64]*track
	trkCache [64]*track          // recent trks entries, by uuid modulo its size
	legacy   map[[2]int64]*track // threads of legacy thread_descriptor packets, by pid and tid
	gen      int64
	flowSet  map[uint64]struct{}
	open     int64
	window   int
	horizon  int64
	itemSeq  int64

	clk  clocks
	st   stats
	cpu  cpuSamples
	pool strPool
	out  formats.Sink

	truncatedAt, truncatedBytes int64

	// scratch for one track event
	ev trackEvent

	ctrRows  slab[table.TraceCounter]
	flowRows slab[table.TraceFlow]
}

// slab hands out rows from chunks of slabRows: one allocation for many
// rows. Only for rows the decoder passes on at once and keeps no
// reference to (counters, flows): a held row (an open slice) would keep
// its whole chunk alive.
type slab[T any] struct{ free []T }

const slabRows = 64

func (s *slab[T]) next() *T {
	if len(s.free) == 0 {
		s.free = make([]T, slabRows)
	}
	r := &s.free[0]
	s.free = s.free[1:]
	return r
}

func newDecoder(ctx context.Context, in *formats.Input, out formats.Sink) *decoder {
	d := &decoder{ctx: ctx, in: in, keepArgs: in.Bool(OptionArgs), maxArgs: int(in.Int(OptionMaxArgs)),
		maxOpen:   in.Limit(LimitOpen),
		sliceVals: in.Values(), ctrVals: in.Values(), trVals: in.Values(),
		seqs: map[uint32]*seqState{}, trks: map[uint64]*track{}, legacy: map[[2]int64]*track{}, flowSet: map[uint64]struct{}{},
		truncatedAt: -1, out: out}
	if _, ok := in.Options[OptionArgs]; !ok {
		d.keepArgs = true // an Input built by hand carries no defaults
	}
	if _, ok := in.Options[OptionMaxArgs]; !ok {
		d.maxArgs = 64
	}
	d.window = int(in.Int(OptionWindow))
	if _, ok := in.Options[OptionWindow]; !ok {
		d.window = 4096
	}
	d.horizon = in.Int(OptionWindowNS)
	if _, ok := in.Options[OptionWindowNS]; !ok {
		d.horizon = 1_000_000_000
	}
	d.wantCounters, d.wantFlows = out.Wants(table.TraceCounters.Schema), out.Wants(table.TraceFlows.Schema)
	if !out.Wants(table.TraceSlices.Schema) {
		d.keepArgs = false // slices are still nested (for the counts), their args never read
	}
	d.clk.init()
	d.st.init()
	d.slices = formats.NewLazyTable(out, table.TraceSlices.Header(""))
	d.counters = formats.NewLazyTable(out, table.TraceCounters.Header(""))
	d.flows = formats.NewLazyTable(out, table.TraceFlows.Header(""))
	d.tracks = formats.NewLazyTable(out, table.TraceTracks.Header(""))
	return d
}

func (d *decoder) seq(id uint32) *seqState {
	if d.lastSeq != nil && d.lastSeq.id == id {
		return d.lastSeq
	}
	s := d.seqs[id]
	if s == nil {
		s = newSeq(id)
		d.seqs[id] = s
	}
	d.lastSeq = s
	return s
}

// packet reads one TracePacket at byte offset at (for one inflated from
// compressed_packets, the offset of the packet that carried it).
func (d *decoder) packet(b []byte, at int64, inner bool) error {
	d.st.packets++
	if d.st.packets&0xfff == 0 {
		if err := d.ctx.Err(); err != nil {
			return err
		}
	}
	var p packet
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return d.malformed(at, "field tag", parseError(n))
		}
		b = b[n:]
		var v uint64
		var body []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			body, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return d.malformed(at, "field "+strconv.Itoa(int(num)), parseError(n))
		}
		b = b[n:]
		want := protowire.VarintType
		switch num {
		case fTimestamp:
			p.ts, p.hasTS = v, true
		case fTimestampClockID:
			p.clock = uint32(v)
		case fSequenceID:
			p.seq = uint32(v)
		case fSequenceFlags:
			p.flags = uint32(v)
		case fIncrementalClear:
			p.cleared = v != 0
		case fPreviousDropped:
			p.dropped = v != 0
		case fFirstOnSequence:
			p.first = v != 0
		case fInternedData:
			want, p.interned = protowire.BytesType, body
		case fPacketDefaults:
			want, p.defaults = protowire.BytesType, body
		case fTrackEvent, fTrackDescriptor, fClockSnapshot, fTraceStats, fTraceConfig, fCompressedPackets, fZstdPackets,
			fProcessDescriptor, fThreadDescriptor, fPerfSample, fStreamingSample:
			want, p.dataNum, p.data = protowire.BytesType, num, body
			p.dataCount++
			d.st.dataField(num)
		default:
			d.st.notInterpreted(msgPacket, num)
			continue
		}
		if typ != want {
			return d.malformed(at, "field "+strconv.Itoa(int(num))+" ("+packetFields[int32(num)]+")", errWire)
		}
	}
	if p.dataCount > 1 {
		d.st.multipleData++
	}
	if p.dataNum == fCompressedPackets || p.dataNum == fZstdPackets {
		if inner {
			return d.malformed(at, packetFields[int32(p.dataNum)], errNested)
		}
		return d.compressed(p.data, at, p.dataNum == fZstdPackets)
	}
	s := d.seq(p.seq)
	firstSeen := !s.seen
	s.seen = true
	if p.dropped {
		switch {
		case p.first:
		case firstSeen:
			d.st.droppedAtStart++
		default:
			d.st.dropped++
		}
	}
	if p.cleared || p.flags&seqCleared != 0 {
		s.clear()
	} else if p.dropped {
		s.valid = false // what was interned since the loss may be gone
	}
	if p.flags&seqNeedsState != 0 && !s.valid {
		d.st.needsState++
		if p.dataNum != 0 {
			d.st.needsStateBy[p.dataNum]++
		}
		return nil
	}
	if p.defaults != nil {
		if err := d.defaults(s, p.defaults, at); err != nil {
			return err
		}
	}
	if p.interned != nil {
		if err := d.interned(s, p.interned, at); err != nil {
			return err
		}
	}
	switch p.dataNum {
	case 0:
		d.st.noData++
		return nil
	case fTrackDescriptor:
		return d.descriptor(p.data, at)
	case fClockSnapshot:
		return d.snapshot(s, p.data, at)
	case fTraceStats:
		return d.traceStats(p.data, at)
	case fTraceConfig:
		return d.traceConfig(p.data, at)
	case fThreadDescriptor:
		return d.threadDescriptor(s, p.data, at)
	case fProcessDescriptor:
		return d.processDescriptor(p.data, at)
	case fStreamingSample:
		return d.streamingSamples(s, p.data, at)
	case fPerfSample:
		var ts int64
		timed := false
		if p.hasTS {
			ts, timed = d.time(s, &p)
		}
		return d.perfSample(s, p.data, ts, timed, at)
	}
	if !p.hasTS && s.legacy != nil {
		// A legacy thread sequence: times in µs, absolute or deltas from
		// its thread descriptor's reference, on the trace's clock.
		if v, ok := varintField(p.data, 16); ok {
			s.legacyUS = int64(v)
			p.ts, p.hasTS, p.clock = uint64(s.legacyUS*1000), true, 0
		} else if v, ok := varintField(p.data, 1); ok {
			s.legacyUS += int64(v)
			p.ts, p.hasTS, p.clock = uint64(s.legacyUS*1000), true, 0
		}
		if p.hasTS {
			d.st.legacyTimes++
		}
	}
	ts, ok := d.time(s, &p)
	if !ok {
		return nil
	}
	return d.trackEvent(s, p.data, ts, at)
}

// defaults reads TracePacketDefaults.
func (d *decoder) defaults(s *seqState, b []byte, at int64) error {
	s.hasDefTrack, s.defTrack, s.defExtra, s.defClock = false, 0, s.defExtra[:0], 0
	if s.rare != nil {
		s.rare.defExtraDbl = s.rare.defExtraDbl[:0]
	}
	return fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
		switch {
		case num == 58 && typ == protowire.VarintType:
			s.defClock = uint32(v)
		case num == 11 && typ == protowire.BytesType:
			return fields(body, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
				switch num {
				case 11:
					s.hasDefTrack, s.defTrack = true, v
				case 31:
					s.defExtra = appendUints(s.defExtra, typ, v, body)
				case 45:
					r := s.rareOf()
					r.defExtraDbl = appendUints(r.defExtraDbl, typ, v, body)
				default:
					d.st.notInterpreted(msgDefaults, 1100+num) // a track_event_defaults field
				}
				return nil
			}, d.fieldErr(at, "trace_packet_defaults.track_event_defaults"))
		default:
			d.st.notInterpreted(msgDefaults, num)
		}
		return nil
	}, d.fieldErr(at, "trace_packet_defaults"))
}

// interned reads InternedData into the sequence's tables.
func (d *decoder) interned(s *seqState, b []byte, at int64) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
		var k int
		switch num {
		case 1:
			k = strCats
		case 2:
			k = strNames
		case 3:
			k = strAnnNames
		case 29:
			k = strAnnStrs
		case 43:
			k = strCorrStrs
		case 5, 6, 7, 16, 17, 19:
			if typ != protowire.BytesType {
				return errWire
			}
			return d.internedProfile(s, num, body)
		default:
			d.st.notInterpreted(msgInterned, num)
			return nil
		}
		if typ != protowire.BytesType {
			return errWire
		}
		var iid uint64
		var name []byte
		err := fields(body, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
			switch num {
			case 1:
				iid = v
			case 2:
				name = body
			}
			return nil
		}, nil)
		if err != nil {
			return err
		}
		s.putStr(k, iid, d.pool.id(name))
		return nil
	}, d.fieldErr(at, "interned_data"))
}

// fields calls f for each field of a message: v holds a varint or fixed
// value, body a length-delimited one. A malformed field fails with
// wrap(err) (or err when wrap is nil).
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error, wrap func(error) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return wrapErr(wrap, parseError(n))
		}
		b = b[n:]
		var v uint64
		var body []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(b)
			v = uint64(x)
		case protowire.BytesType:
			body, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return wrapErr(wrap, parseError(n))
		}
		b = b[n:]
		if err := f(num, typ, v, body); err != nil {
			return wrapErr(wrap, err)
		}
	}
	return nil
}

// field is one field of a message as a loop reads it: the same values
// fields passes its callback, without a call per field (the hot
// messages: a track event's fields).
type field struct {
	b    []byte
	num  protowire.Number
	typ  protowire.Type
	v    uint64
	body []byte
	err  error // why the last next failed: a malformed field
}

// next reads the next field; false at the end or at a malformed one
// (err then says why).
func (f *field) next() bool {
	if len(f.b) == 0 {
		return false
	}
	num, typ, n := protowire.ConsumeTag(f.b)
	if n < 0 {
		f.err = parseError(n)
		return false
	}
	f.b = f.b[n:]
	f.num, f.typ, f.v, f.body = num, typ, 0, nil
	switch typ {
	case protowire.VarintType:
		f.v, n = protowire.ConsumeVarint(f.b)
	case protowire.Fixed64Type:
		f.v, n = protowire.ConsumeFixed64(f.b)
	case protowire.Fixed32Type:
		var x uint32
		x, n = protowire.ConsumeFixed32(f.b)
		f.v = uint64(x)
	case protowire.BytesType:
		f.body, n = protowire.ConsumeBytes(f.b)
	default:
		n = protowire.ConsumeFieldValue(num, typ, f.b)
	}
	if n < 0 {
		f.err = parseError(n)
		return false
	}
	f.b = f.b[n:]
	return true
}

func wrapErr(wrap func(error) error, err error) error {
	if wrap == nil {
		return err
	}
	return wrap(err)
}

func (d *decoder) fieldErr(at int64, what string) func(error) error {
	return func(err error) error {
		if _, ok := err.(*evidence.Failure); ok {
			return err
		}
		return d.malformed(at, what, err)
	}
}

// appendUints appends a repeated integer field's value, packed or not.
func appendUints(dst []uint64, typ protowire.Type, v uint64, body []byte) []uint64 {
	if typ != protowire.BytesType {
		return append(dst, v)
	}
	for len(body) > 0 {
		x, n := protowire.ConsumeVarint(body)
		if n < 0 {
			return dst
		}
		dst = append(dst, x)
		body = body[n:]
	}
	return dst
}

// appendFixed64s appends a repeated fixed64 or double field's values,
// packed or not.
func appendFixed64s(dst []uint64, typ protowire.Type, v uint64, body []byte) []uint64 {
	if typ != protowire.BytesType {
		return append(dst, v)
	}
	for len(body) >= 8 {
		x, _ := protowire.ConsumeFixed64(body)
		dst = append(dst, x)
		body = body[8:]
	}
	return dst
}

func f64(v uint64) float64 { return math.Float64frombits(v) }

// parseError is protowire's error for a parse result n < 0, with a text
// that is the same from every build (formats.ProtoError).
func parseError(n int) error { return formats.ProtoError(protowire.ParseError(n)) }
