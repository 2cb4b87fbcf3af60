package chrometrace

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/table"
)

// The Trace Event Format's own CPU samples (the "legacy" form, before V8
// profiles in P events). The document's top-level stackFrames member is a
// dictionary of frames, id → {name, category, parent}, the parent an id of
// the same dictionary (absent at a root); the top-level samples member is
// an array of OS-profiler samples {cpu, tid, ts, name, sf or stack,
// weight}; and a P event is one sample of its pid/tid, its stack an sf
// (a stackFrames id) or a stack (frame strings, root first, leaf last). sf
// and stack on events of other phases are those events' stacks, not
// samples: counted. catapult's trace_event_importer is the reading
// followed: a P event with neither is one frame named by its name and
// category; samples are per thread (tid: they carry no pid), P events per
// pid and tid.
//
// The members may come in any order, stackFrames after the samples that
// name it, so samples are kept as weights per (series, sf id) or (series,
// stack) and resolved at the end: memory grows with the distinct stacks,
// never with the samples. An sf the dictionary lacks, a parent chain
// that reaches a missing id or loops, leaves its samples unplaced:
// counted in the total, in no frame.

const (
	maxStackFrames = 50_000_000 // stackFrames entries kept
	maxLegacyKeys  = 10_000_000 // distinct (series, stack) records
	maxStackDepth  = 16_384     // frames in one stack array
	maxSampleNames = 16         // distinct top-level sample names listed
	// maxWeightSum bounds the weights summed, leaving room below 2^63 for
	// the samples counted one by one (P events, V8 samples).
	maxWeightSum = 1 << 62
)

// sfEntry is one stackFrames entry.
type sfEntry struct {
	name, cat, parent string
	hasParent         bool
}

type legacyFrame struct{ name, cat string }

type seriesKey struct {
	pid, tid       string
	hasPid, hasTid bool
}

type sfKey struct {
	series int32
	sf     string
}

// stackKey is a stack array's frames, root first, as 4-byte indexes.
type stackKey struct {
	series int32
	path   string
}

// legacyW is what the samples of one record weigh.
type legacyW struct{ n, w int64 }

// tefSamples collects the format's own samples of one trace.
type tefSamples struct {
	dict      map[string]sfEntry
	dictSeen  bool
	dictCut   int64 // entries past maxStackFrames
	series    []seriesKey
	seriesW   []int64 // each series' weight, unplaced samples included
	seriesIdx map[seriesKey]int32
	bySF      map[sfKey]*legacyW
	byStack   map[stackKey]*legacyW
	frames    []legacyFrame
	frameIdx  map[legacyFrame]int32

	read, pEvents, top, named, noThread int64 // samples read: P events, top-level; named: P with neither sf nor stack
	eventStacks                         int64
	wsum                                int64               // weight of all samples read: kept within maxWeightSum
	unplaced                            map[string]*legacyW // by reason
	badMembers                          map[string]int64    // stackFrames or samples entries that are not read
	names                               []string            // distinct top-level sample names, bounded
	namesCut                            bool
	buf                                 []byte
	path                                []int32
}

func (t *tefSamples) init() {
	if t.seriesIdx == nil {
		t.seriesIdx, t.bySF, t.byStack = map[seriesKey]int32{}, map[sfKey]*legacyW{}, map[stackKey]*legacyW{}
		t.frameIdx, t.unplaced, t.badMembers = map[legacyFrame]int32{}, map[string]*legacyW{}, map[string]int64{}
	}
}

// any reports whether the trace had any of the format's samples or a
// stackFrames dictionary.
func (t *tefSamples) any() bool { return t.read > 0 || t.dictSeen || len(t.badMembers) > 0 }

func (t *tefSamples) seriesOf(k seriesKey) int32 {
	i, ok := t.seriesIdx[k]
	if !ok {
		i = int32(len(t.series))
		t.series = append(t.series, k)
		t.seriesW = append(t.seriesW, 0)
		t.seriesIdx[k] = i
	}
	return i
}

// count notes one sample read of series s, placed or not.
func (t *tefSamples) count(s int32, w int64) {
	t.read++
	t.seriesW[s] += w
	t.wsum += w
}

func (t *tefSamples) frame(f legacyFrame) int32 {
	i, ok := t.frameIdx[f]
	if !ok {
		i = int32(len(t.frames))
		t.frames = append(t.frames, f)
		t.frameIdx[f] = i
	}
	return i
}

// lose counts n samples of weight w that no frame holds, by reason.
func (t *tefSamples) lose(why string, n, w int64) {
	u := t.unplaced[why]
	if u == nil {
		u = &legacyW{}
		t.unplaced[why] = u
	}
	u.n += n
	u.w += w
}

// add records one sample of series s: its sf, or its stack (frame
// indexes, root first).
func (t *tefSamples) add(s int32, sf string, hasSF bool, stack []int32, hasStack bool, w int64) {
	t.count(s, w)
	switch {
	case hasSF && hasStack:
		t.lose("samples with both sf and stack", 1, w)
		return
	case !hasSF && !hasStack:
		t.lose("samples with neither sf nor stack", 1, w)
		return
	case hasStack && len(stack) == 0:
		t.lose("samples with an empty stack", 1, w)
		return
	}
	var rec *legacyW
	if hasSF {
		k := sfKey{s, sf}
		if rec = t.bySF[k]; rec == nil && t.room(w) {
			rec = &legacyW{}
			t.bySF[k] = rec
		}
	} else {
		t.buf = t.buf[:0]
		for _, f := range stack {
			t.buf = binary.LittleEndian.AppendUint32(t.buf, uint32(f))
		}
		k := stackKey{s, string(t.buf)}
		if rec = t.byStack[k]; rec == nil && t.room(w) {
			rec = &legacyW{}
			t.byStack[k] = rec
		}
	}
	if rec == nil {
		return
	}
	rec.n++
	rec.w += w
}

// stackPath interns a stack array's frames (name only: the array has no
// categories) into t.path.
func (t *tefSamples) stackPath(stack []string) []int32 {
	t.path = t.path[:0]
	for _, name := range stack {
		t.path = append(t.path, t.frame(legacyFrame{name: name}))
	}
	return t.path
}

// room reports whether one more distinct record may be kept; a sample
// past the bound is counted unplaced.
func (t *tefSamples) room(w int64) bool {
	if int64(len(t.bySF)+len(t.byStack)) < maxLegacyKeys {
		return true
	}
	t.lose("samples past 10,000,000 distinct (thread, stack) records", 1, w)
	return false
}

// eventSample reads a P event that is not a V8 profile event.
func (d *decoder) eventSample() {
	e := &d.ev
	t := &d.tef
	t.init()
	t.pEvents++
	s := t.seriesOf(seriesKey{pid: e.pid, tid: e.tid, hasPid: e.hasPid, hasTid: e.hasTid})
	if e.badStack {
		t.count(s, 1)
		t.lose("samples whose stack is not an array of strings (or is deeper than 16,384 frames)", 1, 1)
		return
	}
	if !e.hasSF && !e.hasStack {
		// catapult's reading: the sample's one frame is the event itself.
		t.named++
		t.add(s, "", false, []int32{t.frame(legacyFrame{name: e.name, cat: e.cat})}, true, 1)
		return
	}
	t.add(s, e.sf, e.hasSF, t.stackPath(e.stack), e.hasStack, 1)
}

// cancelled is the typed failure of a cancelled decode, or nil.
func (d *decoder) cancelled() error {
	if err := d.ctx.Err(); err != nil {
		return evidence.Wrap(evidence.CodeCancelled, err, "%s", d.in.Spec.Title)
	}
	return nil
}

// readStack reads an event's stack member: an array of frame strings.
func (d *decoder) readStack(tok jsonscan.Token) error {
	e := &d.ev
	e.hasStack = true
	if tok.Kind != jsonscan.ArrayStart {
		e.badStack = true
		return d.w.Skip(tok)
	}
	return d.w.Elements(tok, "stack", func(_ int, el jsonscan.Token) error {
		if el.Kind != jsonscan.String || len(e.stack) >= maxStackDepth {
			e.badStack = true
			return d.w.Skip(el)
		}
		e.stack = append(e.stack, d.internBytes(el.Bytes))
		return nil
	})
}

// stackFrames reads the top-level dictionary of frames.
func (d *decoder) stackFrames() error {
	t := &d.tef
	t.init()
	t.dictSeen = true
	tok, err := d.w.Value()
	if err != nil {
		return err
	}
	if tok.Kind != jsonscan.ObjectStart {
		t.badMembers["stackFrames that is not an object"]++
		d.st.notKeys = append(d.st.notKeys, "stackFrames")
		return d.w.Skip(tok)
	}
	if t.dict == nil {
		t.dict = map[string]sfEntry{}
	}
	n := 0
	return d.w.Members(tok, "stackFrames", func(key []byte) error {
		id := string(key) // before reading on: key's bytes may be reused
		if n++; n&1023 == 0 {
			if err := d.cancelled(); err != nil {
				return err
			}
		}
		v, err := d.w.Value()
		if err != nil {
			return err
		}
		if v.Kind != jsonscan.ObjectStart {
			t.badMembers["stackFrames entries that are not objects"]++
			return d.w.Skip(v)
		}
		var f sfEntry
		err = d.w.Members(v, "stack frame", func(k []byte) error {
			x, err := d.w.Value()
			if err != nil {
				return err
			}
			switch string(k) {
			case "name":
				if x.Kind == jsonscan.String {
					f.name = d.internBytes(x.Bytes)
					return nil
				}
			case "category":
				if x.Kind == jsonscan.String {
					f.cat = d.internBytes(x.Bytes)
					return nil
				}
			case "parent":
				if x.Kind == jsonscan.String || x.Kind == jsonscan.Number {
					f.parent, f.hasParent = string(x.Bytes), true
					return nil
				}
			}
			return d.w.Skip(x)
		})
		if err != nil {
			return err
		}
		if int64(len(t.dict)) >= maxStackFrames {
			t.dictCut++
			return nil
		}
		t.dict[id] = f
		return nil
	})
}

// topSamples reads the top-level samples array.
func (d *decoder) topSamples() error {
	t := &d.tef
	t.init()
	tok, err := d.w.Value()
	if err != nil {
		return err
	}
	if tok.Kind != jsonscan.ArrayStart {
		t.badMembers["samples that is not an array"]++
		d.st.notKeys = append(d.st.notKeys, "samples")
		return d.w.Skip(tok)
	}
	var stack []string
	return d.w.Elements(tok, "samples", func(i int, el jsonscan.Token) error {
		if i&1023 == 0 {
			if err := d.cancelled(); err != nil {
				return err
			}
		}
		if el.Kind != jsonscan.ObjectStart {
			t.badMembers["samples entries that are not objects"]++
			return d.w.Skip(el)
		}
		var sf, tid, name string
		var hasSF, hasTid, hasStack, badStack, badWeight bool
		w := int64(1) // absent: the sample counts once, as a P event does
		stack = stack[:0]
		err := d.w.Members(el, "sample", func(k []byte) error {
			x, err := d.w.Value()
			if err != nil {
				return err
			}
			switch string(k) {
			case "sf":
				if x.Kind == jsonscan.String || x.Kind == jsonscan.Number {
					sf, hasSF = d.internBytes(x.Bytes), true
					return nil
				}
			case "tid":
				if x.Kind == jsonscan.String || x.Kind == jsonscan.Number {
					tid, hasTid = d.internBytes(x.Bytes), true
					return nil
				}
			case "name":
				if x.Kind == jsonscan.String {
					name = d.internBytes(x.Bytes)
					return nil
				}
			case "weight":
				n, ok := weightOf(x)
				w, badWeight = n, !ok
				return nil
			case "stack":
				hasStack = true
				if x.Kind != jsonscan.ArrayStart {
					badStack = true
					break
				}
				return d.w.Elements(x, "stack", func(_ int, s jsonscan.Token) error {
					if s.Kind != jsonscan.String || len(stack) >= maxStackDepth {
						badStack = true
						return d.w.Skip(s)
					}
					stack = append(stack, d.internBytes(s.Bytes))
					return nil
				})
			}
			return d.w.Skip(x)
		})
		if err != nil {
			return err
		}
		t.top++
		if name != "" {
			t.noteName(name)
		}
		if !hasTid {
			t.noThread++
		}
		s := t.seriesOf(seriesKey{tid: tid, hasTid: hasTid})
		if !badWeight && w > maxWeightSum-t.wsum {
			t.count(s, 0)
			t.lose("samples whose weight would take the total past 2^62 (their weight left out)", 1, 0)
			return nil
		}
		switch {
		case badWeight:
			t.count(s, 0)
			t.lose("samples whose weight is not a non-negative integer (their weight unknown)", 1, 0)
		case badStack:
			t.count(s, w)
			t.lose("samples whose stack is not an array of strings (or is deeper than 16,384 frames)", 1, w)
		default:
			t.add(s, sf, hasSF, t.stackPath(stack), hasStack, w)
		}
		return nil
	})
}

// weightOf reads a sample's weight: a number whose value is a
// non-negative integer (1.0 is 1).
func weightOf(tok jsonscan.Token) (int64, bool) {
	if tok.Kind != jsonscan.Number {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(tok.Bytes), 10, 64); err == nil {
		return n, n >= 0
	}
	f, err := strconv.ParseFloat(string(tok.Bytes), 64)
	if err != nil || f < 0 || f != math.Trunc(f) || f >= 1<<53 {
		return 0, false
	}
	return int64(f), true
}

func (t *tefSamples) noteName(n string) {
	if slices.Contains(t.names, n) {
		return
	}
	if len(t.names) >= maxSampleNames {
		t.namesCut = true
		return
	}
	t.names = append(t.names, n)
}

// resolved is a stackFrames id's frames, leaf first, or why it has none.
type resolved struct {
	path []int32
	why  string
}

// resolve walks an sf's parent chain; a chain longer than the dictionary
// loops. The path's frames are t.frames indexes plus base; it is shared
// by every series whose samples name sf, so it is never written to.
func (t *tefSamples) resolve(sf string, base int32, memo map[string]resolved) resolved {
	if r, ok := memo[sf]; ok {
		return r
	}
	var r resolved
	cur := sf
	for steps := 0; ; steps++ {
		f, ok := t.dict[cur]
		if !ok {
			if steps == 0 {
				r.why = "samples whose sf names no stackFrames entry"
			} else {
				r.why = "samples whose stackFrames parent chain reaches a missing id"
			}
			r.path = nil
			break
		}
		if steps > len(t.dict) {
			r.why, r.path = "samples whose stackFrames parent chain loops", nil
			break
		}
		r.path = append(r.path, base+t.frame(legacyFrame{name: f.name, cat: f.cat}))
		if !f.hasParent {
			break
		}
		cur = f.parent
	}
	memo[sf] = r
	return r
}

// weighed is one record of the CPU tables: a series' stack (leaf first)
// and its samples' weight.
type weighed struct {
	series int32
	path   []int32
	w      int64
}

// records resolves the samples into stacks, in a fixed order: series,
// then sf id, then the stack arrays; series are offset by sbase and frames
// by fbase (the V8 ones come first).
func (t *tefSamples) records(fbase, sbase int32) []weighed {
	var out []weighed
	memo := map[string]resolved{}
	sfs := slices.SortedFunc(maps.Keys(t.bySF), func(a, b sfKey) int {
		return cmp.Or(cmp.Compare(a.series, b.series), strings.Compare(a.sf, b.sf))
	})
	for _, k := range sfs {
		rec := t.bySF[k]
		r := t.resolve(k.sf, fbase, memo)
		if r.why != "" {
			t.lose(r.why, rec.n, rec.w)
			continue
		}
		out = append(out, weighed{series: sbase + k.series, path: r.path, w: rec.w})
	}
	sts := slices.SortedFunc(maps.Keys(t.byStack), func(a, b stackKey) int {
		return cmp.Or(cmp.Compare(a.series, b.series), strings.Compare(a.path, b.path))
	})
	for _, k := range sts {
		path := make([]int32, len(k.path)/4)
		for i := range path {
			path[len(path)-1-i] = fbase + int32(binary.LittleEndian.Uint32([]byte(k.path[4*i:])))
		}
		out = append(out, weighed{series: sbase + k.series, path: path, w: t.byStack[k].w})
	}
	return out
}

// legacyCPUFrame is a frame of the format's own samples: its name, and
// its category as the module (stack strings have none); a hex string is
// a program counter the producer left unsymbolized, as the format says.
func legacyCPUFrame(f legacyFrame) cpuFrame {
	sum := sha256.Sum256([]byte(f.name + "\x00" + f.cat))
	c := cpuFrame{id: "tef:" + hex.EncodeToString(sum[:8]), function: f.name, module: f.cat, line: -1, column: -1, sym: table.Symbolized}
	switch {
	case f.name == "":
		c.sym = table.Anonymous
	case isHexPC(f.name):
		c.sym = table.Unresolved
	}
	return c
}

func isHexPC(s string) bool {
	if len(s) < 3 || (s[:2] != "0x" && s[:2] != "0X") {
		return false
	}
	for _, r := range s[2:] {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// summarize states what the format's own samples were and what became of
// them; unplacedN is the count of samples in no frame.
func (t *tefSamples) summarize(s *evidence.Summary, unplacedN int64) {
	m := func(v any, u string) evidence.Metric { return evidence.Metric{Value: v, Unit: u} }
	s.Metrics["trace_samples_read"] = m(t.read, "count")
	s.Metrics["trace_samples_resolved"] = m(t.read-unplacedN, "count")
	s.Metrics["trace_samples_unplaced"] = m(unplacedN, "count")
	s.Metrics["trace_sample_events"] = m(t.pEvents, "count")
	s.Metrics["trace_top_level_samples"] = m(t.top, "count")
	s.Metrics["stack_frames"] = m(len(t.dict), "count")
	s.Metrics["event_stacks"] = m(t.eventStacks, "events")
	s.Limit("CPU samples of the format's own forms (P events with sf or stack, the top-level samples array, resolved through stackFrames): one series per pid and tid for P events, per tid for top-level samples (they carry no pid); a frame is a stackFrames entry's name with its category as module, or a stack string; weights are the samples' weight members, the producer's count for the sample (absent: 1; a P event: 1)")
	if unplacedN > 0 || t.dictCut > 0 || len(t.badMembers) > 0 {
		s.Complete = false
	}
	for _, r := range slices.Sorted(maps.Keys(t.unplaced)) {
		if u := t.unplaced[r]; u.n > 0 {
			s.Limit(fmt.Sprintf("%d %s (weight %d): they count in the total but in no frame", u.n, r, u.w))
		}
	}
	if t.named > 0 {
		s.Limit(fmt.Sprintf("%d P events carry neither sf nor stack: each is one frame named by the event's name and category, as catapult reads them", t.named))
	}
	if t.noThread > 0 {
		s.Limit(fmt.Sprintf("%d top-level samples carry no tid: their series' thread is null", t.noThread))
	}
	if len(t.names) > 1 || t.namesCut {
		more := ""
		if t.namesCut {
			more = ", …"
		}
		s.Limit(fmt.Sprintf("top-level samples name %d or more sampled events (%s%s): their weights are summed in one series per thread", len(t.names), strings.Join(t.names, ", "), more))
	}
	if t.dictCut > 0 {
		s.Limit(fmt.Sprintf("%d stackFrames entries past 50,000,000 are left out: samples that reach them are unplaced", t.dictCut))
	}
	for _, r := range slices.Sorted(maps.Keys(t.badMembers)) {
		s.Limit(fmt.Sprintf("%d × %s: skipped", t.badMembers[r], r))
	}
	if t.eventStacks > 0 {
		s.Limit(fmt.Sprintf("%d events of other phases carry a stack (sf, stack, esf or estack): the stacks of those events, counted, not samples", t.eventStacks))
	}
}
