package speedscope

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
)

// SchemaURL is the $schema every speedscope file declares.
const SchemaURL = "https://www.speedscope.app/file-format-schema.json"

// units are the value units the file format allows.
var units = map[string]bool{"none": true, "nanoseconds": true, "microseconds": true, "milliseconds": true, "seconds": true, "bytes": true}

type frame struct {
	name      string
	file      string
	hasFile   bool
	line, col int64 // -1 when absent
}

type profile struct {
	index      int
	typ        string
	name       string
	unit       string
	start, end float64
	seen       map[string]bool // required keys present

	samplesOff, weightsOff int64 // sampled: where the arrays start
	events                 int64 // evented: events read
	samples                int64 // sampled: samples read
	empty                  int64 // sampled: samples with no frames
	total                  float64
	agg                    *profileAgg
	top                    int32 // largest frame index used
	thread                 string
	failedArray            string // sampled: the array a failure of pass 2 is in
}

// limits are the effective ceilings (in.Limit), read once for the loops
// that check them per frame, sample and event.
type limits struct {
	frames, profiles, samples, events, depth, stacks int64
}

// reader decodes one file in two passes over a re-openable source: the
// first reads frames, profile headers and evented profiles and notes where
// each sampled profile's samples and weights arrays start; the second
// walks those two arrays in step. Samples never have to be held.
type reader struct {
	ctx      context.Context
	in       *formats.Input
	open     func(off int64) io.Reader
	lim      limits
	edges    bool // the sink wants cpu.edges
	stacks   bool // the sink wants cpu.stacks
	frames   []frame
	shared   bool
	profiles []*profile
	scratch  scratch
	samples  int64
	events   int64
	exporter string
	name     string
	work     int
}

// maxNesting bounds JSON nesting. A speedscope document nests four
// levels; the rest is room for keys the format does not define.
const maxNesting = 64

// walker reads the file from byte off on.
func (r *reader) walker(off int64) *jsonscan.Walker {
	src := r.open(off)
	s := jsonscan.New(src)
	if off > 0 {
		s = jsonscan.NewAt(src, off)
	}
	s.MaxDepth = maxNesting
	s.MaxToken = int(r.in.Limit(LimitString))
	s.Bound = r.bound
	return &jsonscan.Walker{S: s}
}

// bound is the failure for a crossed scanner bound.
func (r *reader) bound(err error, off int64) error {
	if err == jsonscan.ErrTokenTooLong {
		return r.in.ExceededAt(LimitString, nil, off)
	}
	// The nesting bound is the decoder's own, not a --limits ceiling; its
	// failure carries the same receipt.
	f := evidence.LimitExceeded(evidence.LimitReceipt{Name: "json_nesting", Value: int64(maxNesting), Unit: "levels"},
		"speedscope: JSON nesting too deep: more than %d levels", maxNesting)
	f.Location.Offset = off
	return f
}

// typed makes any error of a decode a typed failure: a failed read of
// the file is IO_FAILURE, malformed content DECODE_FAILURE; failures
// already typed (limits, cancellation) keep their code.
func typed(err error) error {
	if err == nil {
		return nil
	}
	code := evidence.CodeDecodeFailure
	if errors.Is(err, jsonscan.ErrRead) {
		code = evidence.CodeIOFailure
	}
	return evidence.Wrap(code, err, "speedscope")
}

// at gives the failure of err the JSON path it happened at, keeping its
// offset and line; a path set deeper down (the more precise one) stays.
func at(err error, path string) error {
	if err == nil {
		return nil
	}
	f := evidence.AsFailure(typed(err), evidence.CodeDecodeFailure)
	if f.Location.Field == "" {
		f.Location.Field = path
	}
	return f
}

// index converts a token to a frame index or coordinate: a non-negative
// integer that fits an int32.
func index(w *jsonscan.Walker, tok jsonscan.Token, what string) (int64, error) {
	if tok.Kind != jsonscan.Number {
		return 0, w.S.Errorf(tok, "%s must be a number, found %s", what, tok.Kind)
	}
	n, err := w.IntOf(tok, what)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return 0, w.S.Errorf(tok, "%s %s is not an index (a non-negative integer)", what, tok.Bytes)
	}
	return n, nil
}

// coordinate reads an optional line or column: an index, null or absent.
func coordinate(w *jsonscan.Walker, what string) (int64, error) {
	tok, err := w.Value()
	if err != nil || tok.Kind == jsonscan.Null {
		return -1, err
	}
	return index(w, tok, what)
}

// tick checks for cancellation now and then.
func (r *reader) tick() error {
	r.work++
	if r.work%4096 == 0 {
		if err := r.ctx.Err(); err != nil {
			return evidence.Wrap(evidence.CodeCancelled, err, "speedscope")
		}
	}
	return nil
}

// pass1 reads the document's structure.
func (r *reader) pass1() error {
	w := r.walker(0)
	schema := false
	err := w.Document("a speedscope file", func(key []byte) error {
		var err error
		switch string(key) {
		case "$schema":
			var v jsonscan.Token
			if v, err = w.Expect(jsonscan.String, "$schema"); err != nil {
				return err
			}
			if string(v.Bytes) != SchemaURL {
				return w.S.Errorf(v, "$schema is %q, not %q", v.Bytes, SchemaURL)
			}
			schema = true
		case "shared":
			err = r.readShared(w)
		case "profiles":
			err = r.readProfiles(w)
		case "exporter":
			r.exporter, err = w.String("exporter")
		case "name":
			r.name, err = w.String("name")
		default:
			err = w.SkipValue()
		}
		return err
	})
	if err != nil {
		return err
	}
	end := jsonscan.Token{Offset: w.S.Offset()}
	switch {
	case !schema:
		return w.S.Errorf(end, "$schema is missing")
	case !r.shared:
		return w.S.Errorf(end, "shared.frames is missing")
	case r.profiles == nil:
		return w.S.Errorf(end, "profiles is missing")
	}
	// Evented profiles were read before the frames may have been: check
	// their frame indices now.
	for _, p := range r.profiles {
		if p.agg != nil && int(p.top) >= len(r.frames) {
			return w.S.Errorf(end, "profile %d (%q) uses frame %d, but shared.frames has %d", p.index, p.name, p.top, len(r.frames))
		}
	}
	return nil
}

func (r *reader) readShared(w *jsonscan.Walker) error {
	return w.Object("shared", func(key []byte) error {
		if string(key) != "frames" {
			return w.SkipValue()
		}
		if err := r.readFrames(w); err != nil {
			return err
		}
		r.shared = true
		return nil
	})
}

func (r *reader) readFrames(w *jsonscan.Walker) error {
	return w.Array("shared.frames", func(i int, tok jsonscan.Token) error {
		if tok.Kind != jsonscan.ObjectStart {
			return w.S.Errorf(tok, "frame %d must be an object, found %s", i, tok.Kind)
		}
		if int64(i) >= r.lim.frames {
			return r.in.ExceededAt(LimitFrames, nil, tok.Offset)
		}
		f := frame{line: -1, col: -1}
		named := false
		err := w.Members(tok, "a frame", func(key []byte) error {
			var err error
			switch string(key) {
			case "name":
				f.name, err = w.String("frame name")
				named = true
			case "file":
				var null bool
				f.file, _, null, err = w.Str("frame file", 0)
				f.hasFile = !null
			case "line":
				f.line, err = coordinate(w, "frame line")
			case "col":
				f.col, err = coordinate(w, "frame col")
			default:
				err = w.SkipValue()
			}
			return err
		})
		if err == nil && !named {
			err = w.S.Errorf(tok, "frame %d has no name", i)
		}
		if err != nil {
			return at(err, fmt.Sprintf("shared.frames[%d]", i))
		}
		r.frames = append(r.frames, f)
		return nil
	})
}

func (r *reader) readProfiles(w *jsonscan.Walker) error {
	r.profiles = []*profile{}
	return w.Array("profiles", func(i int, tok jsonscan.Token) error {
		if tok.Kind != jsonscan.ObjectStart {
			return w.S.Errorf(tok, "profile %d must be an object, found %s", i, tok.Kind)
		}
		if int64(i) >= r.lim.profiles {
			return r.in.ExceededAt(LimitProfiles, nil, tok.Offset)
		}
		p := &profile{index: i, samplesOff: -1, weightsOff: -1, seen: map[string]bool{}}
		if err := r.readProfile(w, tok, p); err != nil {
			return at(err, fmt.Sprintf("profiles[%d]", i))
		}
		r.profiles = append(r.profiles, p)
		return nil
	})
}

func (r *reader) readProfile(w *jsonscan.Walker, open jsonscan.Token, p *profile) error {
	err := w.Members(open, "a profile", func(key []byte) error {
		p.seen[string(key)] = true
		var err error
		switch string(key) {
		case "type":
			p.typ, err = w.String("profile type")
		case "name":
			p.name, err = w.String("profile name")
		case "unit":
			p.unit, err = w.String("profile unit")
		case "startValue":
			p.start, err = w.Float("startValue")
		case "endValue":
			p.end, err = w.Float("endValue")
		case "samples", "weights":
			var v jsonscan.Token
			if v, err = w.Expect(jsonscan.ArrayStart, string(key)); err != nil {
				return err
			}
			if string(key) == "samples" {
				p.samplesOff = v.Offset
			} else {
				p.weightsOff = v.Offset
			}
			err = w.Skip(v)
		case "events":
			err = r.readEvents(w, p)
		default:
			err = w.SkipValue()
		}
		return err
	})
	if err != nil {
		return err
	}
	fail := func(format string, args ...any) error {
		return w.S.Errorf(open, "profile %d (%q): "+format, append([]any{p.index, p.name}, args...)...)
	}
	var need []string
	switch p.typ {
	case "sampled":
		need = []string{"name", "unit", "startValue", "endValue", "samples", "weights"}
		if p.seen["events"] {
			return fail("a sampled profile cannot have events")
		}
	case "evented":
		need = []string{"name", "unit", "startValue", "endValue", "events"}
		if p.seen["samples"] || p.seen["weights"] {
			return fail("an evented profile cannot have samples or weights")
		}
	case "":
		return fail("type is missing")
	default:
		return fail("type %q is neither sampled nor evented", p.typ)
	}
	for _, k := range need {
		if !p.seen[k] {
			return fail("%s is missing", k)
		}
	}
	if !units[p.unit] {
		return fail("unit %q is not one of none, nanoseconds, microseconds, milliseconds, seconds, bytes", p.unit)
	}
	if p.end < p.start {
		return fail("endValue %v is before startValue %v", p.end, p.start)
	}
	p.seen = nil
	return nil
}

// readEvents replays an evented profile: the time between consecutive
// events belongs to the stack open between them. Closes must match the
// innermost open frame, times must not decrease, and every frame opened
// must be closed.
func (r *reader) readEvents(w *jsonscan.Walker, p *profile) error {
	st := newStacks(r.lim.stacks)
	cur := int32(0)
	depth := int64(0)
	last := math.Inf(-1)
	// event replays one event; a failure gets the event's JSON path.
	event := func(tok jsonscan.Token) error {
		if err := r.tick(); err != nil {
			return err
		}
		if tok.Kind != jsonscan.ObjectStart {
			return w.S.Errorf(tok, "event %d must be an object, found %s", p.events, tok.Kind)
		}
		if r.events >= r.lim.events {
			return r.in.ExceededAt(LimitEvents, nil, tok.Offset)
		}
		var typ string
		var fr int64 = -1
		var atv float64
		hasAt := false
		err := w.Members(tok, "an event", func(key []byte) error {
			var err error
			switch string(key) {
			case "type":
				typ, err = w.String("event type")
			case "frame":
				var v jsonscan.Token
				if v, err = w.Value(); err != nil {
					return err
				}
				fr, err = index(w, v, "event frame")
			case "at":
				atv, err = w.Float("event at")
				hasAt = true
			default:
				err = w.SkipValue()
			}
			return err
		})
		if err != nil {
			return err
		}
		switch {
		case typ != "O" && typ != "C":
			return w.S.Errorf(tok, "event %d: type %q is neither O nor C", p.events, typ)
		case fr < 0:
			return w.S.Errorf(tok, "event %d: frame is missing", p.events)
		case !hasAt:
			return w.S.Errorf(tok, "event %d: at is missing", p.events)
		case atv < last:
			return w.S.Errorf(tok, "event %d at %v comes before the previous event at %v", p.events, atv, last)
		case r.shared && fr >= int64(len(r.frames)):
			return w.S.Errorf(tok, "event %d: frame %d is out of range (shared.frames has %d)", p.events, fr, len(r.frames))
		case fr >= r.lim.frames:
			return r.in.ExceededAt(LimitFrames, nil, tok.Offset)
		}
		if cur != 0 {
			st.nodes[cur].own += atv - last
			p.total += atv - last
		}
		last = atv
		if typ == "O" {
			if depth >= r.lim.depth {
				return r.in.ExceededAt(LimitDepth, nil, tok.Offset)
			}
			n, ok := st.push(cur, int32(fr))
			if !ok {
				return r.in.ExceededAt(LimitStacks, nil, tok.Offset)
			}
			cur = n
			st.nodes[cur].opens++
			depth++
		} else {
			if cur == 0 {
				return w.S.Errorf(tok, "event %d closes frame %d, but no frame is open", p.events, fr)
			}
			if open := st.nodes[cur].frame; int64(open) != fr {
				return w.S.Errorf(tok, "event %d closes frame %d, but the innermost open frame is %d", p.events, fr, open)
			}
			cur = st.nodes[cur].parent
			depth--
		}
		p.events++
		r.events++
		return nil
	}
	err := w.Array("events", func(_ int, tok jsonscan.Token) error {
		return at(event(tok), fmt.Sprintf("profiles[%d].events[%d]", p.index, p.events))
	})
	if err != nil {
		return err
	}
	if cur != 0 {
		return w.S.Errorf(jsonscan.Token{Offset: w.S.Offset()}, "profile %d: %d frames are still open after the last event", p.index, depth)
	}
	p.agg = st.aggregate(&r.scratch, r.edges, r.stacks)
	p.top = st.top
	return nil
}

// pass2 reads each sampled profile's samples and weights in step.
func (r *reader) pass2() error {
	for _, p := range r.profiles {
		if p.typ != "sampled" {
			continue
		}
		if err := r.readSamples(p); err != nil {
			return at(err, fmt.Sprintf("profiles[%d].%s[%d]", p.index, p.failedArray, p.samples))
		}
	}
	return nil
}

// readSamples walks a profile's samples and weights arrays in step, each
// from its own offset: the two arrays pair by position, which the
// walker's one-array iteration cannot express, so it reads tokens.
func (r *reader) readSamples(p *profile) error {
	p.failedArray = "samples"
	sw, ww := r.walker(p.samplesOff), r.walker(p.weightsOff)
	if _, err := sw.Expect(jsonscan.ArrayStart, "samples"); err != nil {
		return err
	}
	if _, err := ww.Expect(jsonscan.ArrayStart, "weights"); err != nil {
		return err
	}
	st := newStacks(r.lim.stacks)
	// frame adds one frame index of the current sample to its stack.
	var cur int32
	var depth int64
	frame := func(fr int64) error {
		// During Ints' callback the scanner's offset is the integer's start.
		here := jsonscan.Token{Offset: sw.S.Offset()}
		if fr < 0 || fr >= int64(len(r.frames)) {
			return sw.S.Errorf(here, "sample %d of profile %d: frame %d is out of range (shared.frames has %d)", p.samples, p.index, fr, len(r.frames))
		}
		if depth++; depth > r.lim.depth {
			return r.in.ExceededAt(LimitDepth, nil, here.Offset)
		}
		n, ok := st.push(cur, int32(fr))
		if !ok {
			return r.in.ExceededAt(LimitStacks, nil, here.Offset)
		}
		cur = n
		return nil
	}
	for {
		stok, err := sw.S.Next()
		if err != nil {
			return err
		}
		wtok, err := ww.S.Next()
		if err != nil {
			p.failedArray = "weights"
			return err
		}
		if stok.Kind == jsonscan.ArrayEnd || wtok.Kind == jsonscan.ArrayEnd {
			if stok.Kind != wtok.Kind {
				short := "weights"
				if stok.Kind == jsonscan.ArrayEnd {
					short = "samples"
				}
				return sw.S.Errorf(stok, "profile %d (%q): samples and weights differ in length (%s runs out after %d entries)",
					p.index, p.name, short, p.samples)
			}
			break
		}
		if err := r.tick(); err != nil {
			return err
		}
		if r.samples >= r.lim.samples {
			return r.in.ExceededAt(LimitSamples, nil, stok.Offset)
		}
		if stok.Kind != jsonscan.ArrayStart {
			return sw.S.Errorf(stok, "sample %d must be an array of frame indices, found %s", p.samples, stok.Kind)
		}
		cur, depth = 0, 0
		if err := sw.S.Ints(frame); err != nil {
			return err
		}
		if wtok.Kind != jsonscan.Number {
			p.failedArray = "weights"
			return ww.S.Errorf(wtok, "weight %d must be a number, found %s", p.samples, wtok.Kind)
		}
		wt, err := ww.FloatOf(wtok, "weight")
		if err != nil || wt < 0 {
			p.failedArray = "weights"
			return ww.S.Errorf(wtok, "weight %d (%s) must be a finite non-negative number", p.samples, wtok.Bytes)
		}
		if cur == 0 {
			p.empty++
		}
		st.nodes[cur].own += wt
		p.total += wt
		p.samples++
		r.samples++
	}
	p.agg = st.aggregate(&r.scratch, r.edges, r.stacks)
	p.top = st.top
	return nil
}
