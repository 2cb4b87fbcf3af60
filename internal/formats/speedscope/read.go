package speedscope

import (
	"context"
	"errors"
	"io"
	"math"
	"strconv"

	"github.com/flameox/flameox/internal/evidence"
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
}

type limits struct {
	bytes, frames, profiles, samples, events, depth, stacks, str int64
}

// reader decodes one file in two passes over a re-openable source: the
// first reads frames, profile headers and evented profiles and notes where
// each sampled profile's samples and weights arrays start; the second
// walks those two arrays in step. Samples never have to be held.
type reader struct {
	ctx      context.Context
	open     func(off int64) io.Reader
	lim      limits
	frames   []frame
	cells    []cell
	shared   bool
	profiles []*profile
	scratch  scratch
	samples  int64
	events   int64
	exporter string
	name     string
	work     int
}

// cursor is a scanner that started at byte base of the file.
type cursor struct {
	*jsonscan.Scanner
	base int64
	src  *tracked
}

// tracked remembers a read error, so that a failure of the file can be
// told from a failure of its contents.
type tracked struct {
	r   io.Reader
	err error
}

func (t *tracked) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF && t.err == nil {
		t.err = err
	}
	return n, err
}

func (r *reader) cursor(off int64) cursor {
	src := &tracked{r: r.open(off)}
	s := jsonscan.New(src)
	s.MaxDepth = 64
	s.MaxToken = int(r.lim.str)
	return cursor{s, off, src}
}

// fail types an error found by or in a scanner, with its file offset.
func (c cursor) fail(err error) error {
	var f *evidence.Failure
	if errors.As(err, &f) {
		return f
	}
	var se *jsonscan.Error
	if !errors.As(err, &se) {
		return evidence.Wrap(evidence.CodeDecodeFailure, err, "speedscope")
	}
	line := se.Line
	if c.base > 0 {
		line = 0 // lines restart in a cursor that began mid-file; offsets do not
	}
	se = &jsonscan.Error{Offset: c.base + se.Offset, Line: line, Msg: se.Msg, Err: se.Err}
	code := evidence.CodeDecodeFailure
	switch {
	case c.src.err != nil && errors.Is(se.Err, c.src.err):
		code = evidence.CodeIOFailure
	case errors.Is(se.Err, jsonscan.ErrTokenTooLong):
		code = evidence.CodeLimitExceeded
		se.Msg += " (max_string_bytes)"
	case errors.Is(se.Err, jsonscan.ErrDepth):
		code = evidence.CodeLimitExceeded
	}
	return evidence.Wrap(code, se, "speedscope")
}

func (c cursor) errorf(tok jsonscan.Token, format string, args ...any) error {
	return c.fail(c.Errorf(tok, format, args...))
}

func (c cursor) limitf(tok jsonscan.Token, format string, args ...any) error {
	f := evidence.Failf(evidence.CodeLimitExceeded, "speedscope: "+format, args...)
	f.Location.Offset = c.base + tok.Offset
	return f
}

func (c cursor) next() (jsonscan.Token, error) {
	tok, err := c.Next()
	if err != nil {
		return tok, c.fail(err)
	}
	return tok, nil
}

func (c cursor) expect(k jsonscan.Kind, what string) (jsonscan.Token, error) {
	tok, err := c.next()
	if err != nil {
		return tok, err
	}
	if tok.Kind != k {
		return tok, c.errorf(tok, "%s must be %s, found %s", what, kindWord(k), tok.Kind)
	}
	return tok, nil
}

func kindWord(k jsonscan.Kind) string {
	switch k {
	case jsonscan.ObjectStart:
		return "an object"
	case jsonscan.ArrayStart:
		return "an array"
	case jsonscan.String:
		return "a string"
	case jsonscan.Number:
		return "a number"
	}
	return k.String()
}

// key reads an object's next key, or its end.
func (c cursor) key() (key string, end bool, err error) {
	tok, err := c.next()
	switch {
	case err != nil:
		return "", false, err
	case tok.Kind == jsonscan.ObjectEnd:
		return "", true, nil
	case !tok.IsKey:
		return "", false, c.errorf(tok, "expected an object key, found %s", tok.Kind)
	}
	return string(tok.Bytes), false, nil
}

// skipValue skips the value after a key, which must be there.
func (c cursor) skipValue() error {
	tok, err := c.next()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonscan.ObjectEnd, jsonscan.ArrayEnd, jsonscan.EOF:
		return c.errorf(tok, "expected a value, found %s", tok.Kind)
	}
	if err := c.Skip(tok); err != nil {
		return c.fail(err)
	}
	return nil
}

func (c cursor) str(what string) (string, error) {
	tok, err := c.expect(jsonscan.String, what)
	if err != nil {
		return "", err
	}
	return string(tok.Bytes), nil
}

func (c cursor) number(what string) (float64, jsonscan.Token, error) {
	tok, err := c.expect(jsonscan.Number, what)
	if err != nil {
		return 0, tok, err
	}
	f, perr := strconv.ParseFloat(string(tok.Bytes), 64)
	if perr != nil || math.IsInf(f, 0) {
		return 0, tok, c.errorf(tok, "%s %s is out of range", what, tok.Bytes)
	}
	return f, tok, nil
}

// index reads a non-negative integer written without fraction or exponent.
// It parses the digits itself: strconv would copy every token to the heap.
func (c cursor) index(tok jsonscan.Token, what string) (int64, error) {
	if tok.Kind != jsonscan.Number {
		return 0, c.errorf(tok, "%s must be a number, found %s", what, tok.Kind)
	}
	var n int64
	for _, d := range tok.Bytes {
		if d < '0' || d > '9' || n > math.MaxInt32 {
			return 0, c.errorf(tok, "%s %s is not an index (a non-negative integer)", what, tok.Bytes)
		}
		n = n*10 + int64(d-'0')
	}
	if n > math.MaxInt32 {
		return 0, c.errorf(tok, "%s %s is not an index (a non-negative integer)", what, tok.Bytes)
	}
	return n, nil
}

// coordinate reads an optional line or column: an integer, null or absent.
func (c cursor) coordinate(what string) (int64, error) {
	tok, err := c.next()
	if err != nil {
		return 0, err
	}
	if tok.Kind == jsonscan.Null {
		return -1, nil
	}
	return c.index(tok, what)
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
	c := r.cursor(0)
	tok, err := c.next()
	if err != nil {
		return err
	}
	if tok.Kind != jsonscan.ObjectStart {
		return c.errorf(tok, "the file must hold a JSON object, found %s", tok.Kind)
	}
	schema := false
	for {
		key, end, err := c.key()
		if err != nil {
			return err
		}
		if end {
			break
		}
		switch key {
		case "$schema":
			v, err := c.expect(jsonscan.String, "$schema")
			if err != nil {
				return err
			}
			if string(v.Bytes) != SchemaURL {
				return c.errorf(v, "$schema is %q, not %q", v.Bytes, SchemaURL)
			}
			schema = true
		case "shared":
			if err := r.readShared(c); err != nil {
				return err
			}
		case "profiles":
			if err := r.readProfiles(c); err != nil {
				return err
			}
		case "exporter":
			if r.exporter, err = c.str("exporter"); err != nil {
				return err
			}
		case "name":
			if r.name, err = c.str("name"); err != nil {
				return err
			}
		default:
			if err := c.skipValue(); err != nil {
				return err
			}
		}
	}
	if err := c.CheckEnd(); err != nil {
		return c.fail(err)
	}
	end := jsonscan.Token{Offset: c.Offset()}
	switch {
	case !schema:
		return c.errorf(end, "$schema is missing")
	case !r.shared:
		return c.errorf(end, "shared.frames is missing")
	case r.profiles == nil:
		return c.errorf(end, "profiles is missing")
	}
	// Evented profiles were read before the frames may have been: check
	// their frame indices now.
	for _, p := range r.profiles {
		if p.agg != nil && int(p.top) >= len(r.frames) {
			return c.errorf(end, "profile %d (%q) uses frame %d, but shared.frames has %d", p.index, p.name, p.top, len(r.frames))
		}
	}
	return nil
}

func (r *reader) readShared(c cursor) error {
	if _, err := c.expect(jsonscan.ObjectStart, "shared"); err != nil {
		return err
	}
	for {
		key, end, err := c.key()
		if err != nil {
			return err
		}
		if end {
			return nil
		}
		if key != "frames" {
			if err := c.skipValue(); err != nil {
				return err
			}
			continue
		}
		if err := r.readFrames(c); err != nil {
			return err
		}
		r.shared = true
	}
}

func (r *reader) readFrames(c cursor) error {
	if _, err := c.expect(jsonscan.ArrayStart, "shared.frames"); err != nil {
		return err
	}
	for {
		tok, err := c.next()
		if err != nil {
			return err
		}
		if tok.Kind == jsonscan.ArrayEnd {
			return nil
		}
		if tok.Kind != jsonscan.ObjectStart {
			return c.errorf(tok, "frame %d must be an object, found %s", len(r.frames), tok.Kind)
		}
		if int64(len(r.frames)) >= r.lim.frames {
			return c.limitf(tok, "more than max_frames %d frames", r.lim.frames)
		}
		f := frame{line: -1, col: -1}
		named := false
		for {
			key, end, err := c.key()
			if err != nil {
				return err
			}
			if end {
				break
			}
			switch key {
			case "name":
				if f.name, err = c.str("frame name"); err != nil {
					return err
				}
				named = true
			case "file":
				v, err := c.next()
				if err != nil {
					return err
				}
				switch v.Kind {
				case jsonscan.String:
					f.file, f.hasFile = string(v.Bytes), true
				case jsonscan.Null:
				default:
					return c.errorf(v, "frame file must be a string, found %s", v.Kind)
				}
			case "line":
				if f.line, err = c.coordinate("frame line"); err != nil {
					return err
				}
			case "col":
				if f.col, err = c.coordinate("frame col"); err != nil {
					return err
				}
			default:
				if err := c.skipValue(); err != nil {
					return err
				}
			}
		}
		if !named {
			return c.errorf(tok, "frame %d has no name", len(r.frames))
		}
		r.frames = append(r.frames, f)
	}
}

func (r *reader) readProfiles(c cursor) error {
	if _, err := c.expect(jsonscan.ArrayStart, "profiles"); err != nil {
		return err
	}
	r.profiles = []*profile{}
	for {
		tok, err := c.next()
		if err != nil {
			return err
		}
		if tok.Kind == jsonscan.ArrayEnd {
			return nil
		}
		if tok.Kind != jsonscan.ObjectStart {
			return c.errorf(tok, "profile %d must be an object, found %s", len(r.profiles), tok.Kind)
		}
		if int64(len(r.profiles)) >= r.lim.profiles {
			return c.limitf(tok, "more than max_profiles %d profiles", r.lim.profiles)
		}
		p := &profile{index: len(r.profiles), samplesOff: -1, weightsOff: -1, seen: map[string]bool{}}
		if err := r.readProfile(c, tok, p); err != nil {
			return err
		}
		r.profiles = append(r.profiles, p)
	}
}

func (r *reader) readProfile(c cursor, open jsonscan.Token, p *profile) error {
	for {
		key, end, err := c.key()
		if err != nil {
			return err
		}
		if end {
			break
		}
		p.seen[key] = true
		switch key {
		case "type":
			if p.typ, err = c.str("profile type"); err != nil {
				return err
			}
		case "name":
			if p.name, err = c.str("profile name"); err != nil {
				return err
			}
		case "unit":
			if p.unit, err = c.str("profile unit"); err != nil {
				return err
			}
		case "startValue":
			if p.start, _, err = c.number("startValue"); err != nil {
				return err
			}
		case "endValue":
			if p.end, _, err = c.number("endValue"); err != nil {
				return err
			}
		case "samples", "weights":
			v, err := c.expect(jsonscan.ArrayStart, key)
			if err != nil {
				return err
			}
			if key == "samples" {
				p.samplesOff = v.Offset
			} else {
				p.weightsOff = v.Offset
			}
			if err := c.Skip(v); err != nil {
				return c.fail(err)
			}
		case "events":
			if err := r.readEvents(c, p); err != nil {
				return err
			}
		default:
			if err := c.skipValue(); err != nil {
				return err
			}
		}
	}
	at := func(format string, args ...any) error {
		return c.errorf(open, "profile %d (%q): "+format, append([]any{p.index, p.name}, args...)...)
	}
	var need []string
	switch p.typ {
	case "sampled":
		need = []string{"name", "unit", "startValue", "endValue", "samples", "weights"}
		if p.seen["events"] {
			return at("a sampled profile cannot have events")
		}
	case "evented":
		need = []string{"name", "unit", "startValue", "endValue", "events"}
		if p.seen["samples"] || p.seen["weights"] {
			return at("an evented profile cannot have samples or weights")
		}
	case "":
		return at("type is missing")
	default:
		return at("type %q is neither sampled nor evented", p.typ)
	}
	for _, k := range need {
		if !p.seen[k] {
			return at("%s is missing", k)
		}
	}
	if !units[p.unit] {
		return at("unit %q is not one of none, nanoseconds, microseconds, milliseconds, seconds, bytes", p.unit)
	}
	if p.end < p.start {
		return at("endValue %v is before startValue %v", p.end, p.start)
	}
	p.seen = nil
	return nil
}

// readEvents replays an evented profile: the time between consecutive
// events belongs to the stack open between them. Closes must match the
// innermost open frame, times must not decrease, and every frame opened
// must be closed.
func (r *reader) readEvents(c cursor, p *profile) error {
	if _, err := c.expect(jsonscan.ArrayStart, "events"); err != nil {
		return err
	}
	st := newStacks(r.lim.stacks)
	cur := int32(0)
	depth := int64(0)
	last := math.Inf(-1)
	for {
		tok, err := c.next()
		if err != nil {
			return err
		}
		if tok.Kind == jsonscan.ArrayEnd {
			break
		}
		if err := r.tick(); err != nil {
			return err
		}
		if tok.Kind != jsonscan.ObjectStart {
			return c.errorf(tok, "event %d must be an object, found %s", p.events, tok.Kind)
		}
		if r.events >= r.lim.events {
			return c.limitf(tok, "more than max_events %d events", r.lim.events)
		}
		var typ string
		var fr int64 = -1
		var atv float64
		hasAt := false
		for {
			key, end, err := c.key()
			if err != nil {
				return err
			}
			if end {
				break
			}
			switch key {
			case "type":
				if typ, err = c.str("event type"); err != nil {
					return err
				}
			case "frame":
				v, err := c.next()
				if err != nil {
					return err
				}
				if fr, err = c.index(v, "event frame"); err != nil {
					return err
				}
			case "at":
				if atv, _, err = c.number("event at"); err != nil {
					return err
				}
				hasAt = true
			default:
				if err := c.skipValue(); err != nil {
					return err
				}
			}
		}
		switch {
		case typ != "O" && typ != "C":
			return c.errorf(tok, "event %d: type %q is neither O nor C", p.events, typ)
		case fr < 0:
			return c.errorf(tok, "event %d: frame is missing", p.events)
		case !hasAt:
			return c.errorf(tok, "event %d: at is missing", p.events)
		case atv < last:
			return c.errorf(tok, "event %d at %v comes before the previous event at %v", p.events, atv, last)
		case r.shared && fr >= int64(len(r.frames)):
			return c.errorf(tok, "event %d: frame %d is out of range (shared.frames has %d)", p.events, fr, len(r.frames))
		case fr >= r.lim.frames:
			return c.limitf(tok, "event %d: frame %d is beyond max_frames %d", p.events, fr, r.lim.frames)
		}
		if cur != 0 {
			st.nodes[cur].own += atv - last
			p.total += atv - last
		}
		last = atv
		if typ == "O" {
			if depth >= r.lim.depth {
				return c.limitf(tok, "event %d: stack deeper than max_stack_depth %d", p.events, r.lim.depth)
			}
			n, ok := st.push(cur, int32(fr))
			if !ok {
				return c.limitf(tok, "profile %d: more than max_stacks %d distinct stacks", p.index, r.lim.stacks)
			}
			cur = n
			st.nodes[cur].opens++
			depth++
		} else {
			if cur == 0 {
				return c.errorf(tok, "event %d closes frame %d, but no frame is open", p.events, fr)
			}
			if open := st.nodes[cur].frame; int64(open) != fr {
				return c.errorf(tok, "event %d closes frame %d, but the innermost open frame is %d", p.events, fr, open)
			}
			cur = st.nodes[cur].parent
			depth--
		}
		p.events++
		r.events++
	}
	if cur != 0 {
		return c.errorf(jsonscan.Token{Offset: c.Offset()}, "profile %d: %d frames are still open after the last event", p.index, depth)
	}
	p.agg = st.aggregate(&r.scratch)
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
			return err
		}
	}
	return nil
}

func (r *reader) readSamples(p *profile) error {
	sc, wc := r.cursor(p.samplesOff), r.cursor(p.weightsOff)
	if _, err := sc.expect(jsonscan.ArrayStart, "samples"); err != nil {
		return err
	}
	if _, err := wc.expect(jsonscan.ArrayStart, "weights"); err != nil {
		return err
	}
	st := newStacks(r.lim.stacks)
	// frame adds one frame index of the current sample to its stack.
	var cur int32
	var depth int64
	frame := func(fr int64) error {
		// During Ints' callback the scanner's offset is the integer's start.
		at := jsonscan.Token{Offset: sc.Scanner.Offset()}
		if fr < 0 || fr >= int64(len(r.frames)) {
			return sc.errorf(at, "sample %d of profile %d: frame %d is out of range (shared.frames has %d)", p.samples, p.index, fr, len(r.frames))
		}
		if depth++; depth > r.lim.depth {
			return sc.limitf(at, "sample %d: stack deeper than max_stack_depth %d", p.samples, r.lim.depth)
		}
		n, ok := st.push(cur, int32(fr))
		if !ok {
			return sc.limitf(at, "profile %d: more than max_stacks %d distinct stacks", p.index, r.lim.stacks)
		}
		cur = n
		return nil
	}
	for {
		stok, err := sc.next()
		if err != nil {
			return err
		}
		wtok, err := wc.next()
		if err != nil {
			return err
		}
		if stok.Kind == jsonscan.ArrayEnd || wtok.Kind == jsonscan.ArrayEnd {
			if stok.Kind != wtok.Kind {
				return sc.errorf(stok, "profile %d (%q): samples and weights differ in length (%s runs out after %d entries)",
					p.index, p.name, map[bool]string{true: "samples", false: "weights"}[stok.Kind == jsonscan.ArrayEnd], p.samples)
			}
			break
		}
		if err := r.tick(); err != nil {
			return err
		}
		if r.samples >= r.lim.samples {
			return sc.limitf(stok, "more than max_samples %d samples", r.lim.samples)
		}
		if stok.Kind != jsonscan.ArrayStart {
			return sc.errorf(stok, "sample %d must be an array of frame indices, found %s", p.samples, stok.Kind)
		}
		cur, depth = 0, 0
		if err := sc.Ints(frame); err != nil {
			return sc.fail(err)
		}
		if wtok.Kind != jsonscan.Number {
			return wc.errorf(wtok, "weight %d must be a number, found %s", p.samples, wtok.Kind)
		}
		w, perr := strconv.ParseFloat(string(wtok.Bytes), 64)
		if perr != nil || math.IsInf(w, 0) || w < 0 {
			return wc.errorf(wtok, "weight %d (%s) must be a finite non-negative number", p.samples, wtok.Bytes)
		}
		if cur == 0 {
			p.empty++
		}
		st.nodes[cur].own += w
		p.total += w
		p.samples++
		r.samples++
	}
	p.agg = st.aggregate(&r.scratch)
	p.top = st.top
	return nil
}
