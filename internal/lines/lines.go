// Package lines is the one bounded line reader of flameox: every decoder
// of a line-oriented format (event streams, perf script text, folded
// stacks, text and JSONL previews) and every reader of block streams
// reads through it. A line's kept bytes are bounded; each line carries
// its 1-based number, its byte offset and its terminator, so failures can
// say where they are; a line over the bound is either cut (the rest is
// counted, not kept) or, in strict mode, a LIMIT_EXCEEDED failure with the
// same receipt every limit failure carries.
//
// It imports evidence only.
package lines

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/jsonscan"
)

// Terminator is how a line ended.
type Terminator uint8

const (
	LF    Terminator = iota // "\n"
	CRLF                    // "\r\n"
	None                    // the input ended without a newline
	Bound                   // NextWithin's bound cut the line; the next call continues it
)

func (t Terminator) String() string {
	switch t {
	case LF:
		return "lf"
	case CRLF:
		return "crlf"
	case Bound:
		return "bound"
	}
	return "eof"
}

// Line is one line read.
type Line struct {
	// Bytes are the line without its terminator, at most the reader's
	// bound; they are valid until the next call to Next.
	Bytes  []byte
	Number int64 // 1-based
	Offset int64 // stream offset of the line's first byte
	// Start is the offset where the line began: before Offset when this
	// is the rest of a line that NextWithin cut at a bound.
	Start int64
	// Size is the line's full length without its terminator; it exceeds
	// len(Bytes) when the line was cut.
	Size int64
	Term Terminator
}

// Cut reports whether the line was longer than the bound.
func (l *Line) Cut() bool { return l.Size > int64(len(l.Bytes)) }

// End is the stream offset just after the line and its terminator.
func (l *Line) End() int64 {
	switch l.Term {
	case LF:
		return l.Offset + l.Size + 1
	case CRLF:
		return l.Offset + l.Size + 2
	}
	return l.Offset + l.Size
}

// Reader reads lines from a stream.
type Reader struct {
	br     *bufio.Reader
	src    *bounded
	max    int
	limit  string                        // strict mode: the limit's name
	fail   func(*Line) *evidence.Failure // strict mode: the failure, when not a limit's
	line   Line
	buf    []byte
	off    int64
	number int64
	err    error
	open   bool  // the last line returned was cut at a bound
	start  int64 // where that line began
}

// BufferSize is the read buffer; lines that fit in it are returned
// without a copy.
const BufferSize = 256 << 10

// NewReader returns a reader that keeps at most max bytes of each line
// (max <= 0: 64 KiB) and cuts longer lines.
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = 64 << 10
	}
	size := BufferSize
	// An input already in memory (bytes.Reader, strings.Reader) needs no
	// buffer larger than itself: small decodes (tests, fuzzing, previews
	// of short texts) do not pay for allocating and clearing 256 KiB.
	if l, ok := r.(interface{ Len() int }); ok && l.Len() < size {
		size = l.Len() + 1 // bufio raises it to its minimum
	}
	src := &bounded{r: r, end: -1}
	return &Reader{br: bufio.NewReaderSize(src, size), src: src, max: max}
}

// NewStrict returns a reader for which a line longer than max bytes is a
// LIMIT_EXCEEDED failure naming the limit.
func NewStrict(r io.Reader, max int, limit string) *Reader {
	lr := NewReader(r, max)
	lr.limit = limit
	return lr
}

// NewStrictFunc is NewStrict for a bound the format itself sets (a
// protocol's longest line), where a longer line means the input is not of
// the format rather than that a ceiling was reached: fail builds the
// failure for the line, which the reader locates. As with NewStrict, the
// line is refused as soon as it crosses the bound, never read whole.
func NewStrictFunc(r io.Reader, max int, fail func(l *Line) *evidence.Failure) *Reader {
	lr := NewReader(r, max)
	lr.fail = fail
	return lr
}

// Max is the bound on the bytes kept of a line.
func (r *Reader) Max() int { return r.max }

// Offset is the stream offset of the next unread byte.
func (r *Reader) Offset() int64 { return r.off }

// Lines is the number of lines read so far; a line cut at a bound counts
// once, when its first part is read.
func (r *Reader) Lines() int64 { return r.number }

// Peek returns the next n bytes without consuming them (fewer at the end
// of input), for sniffing a prefix such as a byte-order mark.
func (r *Reader) Peek(n int) ([]byte, error) {
	r.src.end = -1 // a peek sees past a NextWithin bound
	b, err := r.br.Peek(n)
	if errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull) {
		err = nil
	}
	return b, err
}

// Discard skips n bytes that Peek showed, counting them in the offset.
func (r *Reader) Discard(n int) error {
	k, err := r.br.Discard(n)
	r.off += int64(k)
	return err
}

// Next reads the next line. At the end of input it returns io.EOF; an
// input that ends with a newline has no empty line after it. A read error
// ends the reader and is returned as it is.
func (r *Reader) Next() (*Line, error) { return r.next(-1) }

// next reads a line, or the part of it before the stream offset end
// (end < 0: no bound).
func (r *Reader) next(end int64) (*Line, error) {
	if r.err != nil {
		return nil, r.err
	}
	l := &r.line
	*l = Line{Offset: r.off, Start: r.off, Number: r.number + 1}
	if r.open {
		l.Start, l.Number = r.start, r.number
	}
	r.buf = r.buf[:0]
	var last byte // the line's last byte so far, to tell CRLF
	for first := true; ; first = false {
		frag, err := r.slice(end)
		r.off += int64(len(frag))
		nl := len(frag) > 0 && frag[len(frag)-1] == '\n'
		if nl {
			frag = frag[:len(frag)-1]
		}
		if len(frag) > 0 {
			last = frag[len(frag)-1]
		}
		l.Size += int64(len(frag))
		if first && nl && len(frag) <= r.max {
			l.Bytes = frag // the whole line is in the read buffer
		} else if room := r.max - len(r.buf); room > 0 {
			r.buf = append(r.buf, frag[:min(len(frag), room)]...)
			l.Bytes = r.buf
		}
		// One byte of slack: a trailing '\r' may belong to the terminator.
		if r.strict() && l.Size+l.Offset-l.Start > int64(r.max)+1 {
			r.err = r.exceeded(l)
			return nil, r.err
		}
		if nl {
			l.Term = LF
			if last == '\r' {
				l.Term, l.Size = CRLF, l.Size-1
				if n := len(l.Bytes); int64(n) > l.Size {
					l.Bytes = l.Bytes[:n-1]
				}
			}
			return r.done(l)
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, errBound) && !r.endsAt(end):
			return r.cut(l)
		case errors.Is(err, io.EOF), errors.Is(err, errBound): // a bound where the input ends is its end
			r.err = io.EOF // the next call ends the stream
			if l.Size == 0 {
				return nil, io.EOF
			}
			l.Term = None
			return r.done(l)
		default:
			r.err = err
			return nil, err
		}
	}
}

func (r *Reader) strict() bool { return r.limit != "" || r.fail != nil }

func (r *Reader) done(l *Line) (*Line, error) {
	// A part cut at a bound may still end in the '\r' of a CRLF.
	if r.strict() && l.Term != Bound && l.Size+l.Offset-l.Start > int64(r.max) {
		r.err = r.exceeded(l)
		return nil, r.err
	}
	if l.Start == l.Offset {
		r.number++
	}
	r.open, r.start = l.Term == Bound, l.Start
	return l, nil
}

func (r *Reader) exceeded(l *Line) *evidence.Failure {
	if r.fail != nil {
		f := r.fail(l)
		f.Location = evidence.Location{Line: int(l.Number), Offset: l.Start}
		return f
	}
	f := evidence.LimitExceeded(evidence.LimitReceipt{Name: r.limit, Value: int64(r.max), Unit: "bytes"},
		"line %d is longer than %s=%d bytes", l.Number, r.limit, r.max)
	f.Location = evidence.Location{Line: int(l.Number), Offset: l.Start}
	return f
}

// Err locates a failure at the last line read: its number and offset,
// unless err already has a location. Decoders wrap what they find wrong
// in a line with it.
func (r *Reader) Err(code evidence.Code, format string, args ...any) *evidence.Failure {
	f := evidence.Failf(code, format, args...)
	f.Location = evidence.Location{Line: int(r.line.Number), Offset: r.line.Offset}
	return f
}

// Errorf is Err for an error that may already be typed: a failure keeps
// its code and gains the line's location when it has none.
func (r *Reader) Errorf(code evidence.Code, err error, format string, args ...any) *evidence.Failure {
	f := evidence.Wrap(code, err, format, args...)
	if f.Location.Line == 0 {
		f.Location.Line = int(r.line.Number)
		if f.Location.Offset == 0 {
			f.Location.Offset = r.line.Offset
		}
	}
	return f
}

// At locates f at the line unless it has a line already, and returns it:
// for failures built elsewhere (Input.Exceeded) about what a line held.
func (l *Line) At(f *evidence.Failure) *evidence.Failure {
	if f.Location.Line == 0 {
		f.Location.Line, f.Location.Offset = int(l.Number), l.Offset
	}
	return f
}

// Malformed is the DECODE_FAILURE for a line whose content does not
// parse: the message is what (naming the line as the decoder does) and
// err; the location is the line, and the offset of a JSON error inside
// it when err is one, so every line decoder points at the same byte.
func (l *Line) Malformed(err error, what string) *evidence.Failure {
	f := &evidence.Failure{Code: evidence.CodeDecodeFailure, Err: err,
		Message:  fmt.Sprintf("%s: %v", what, err),
		Location: evidence.Location{Line: int(l.Number), Offset: l.Offset}}
	var se *jsonscan.Error
	if errors.As(err, &se) {
		f.Location.Offset = l.Offset + se.Offset
	}
	return f
}

// String describes a line's location, for messages.
func (l *Line) String() string { return fmt.Sprintf("line %d (byte %d)", l.Number, l.Offset) }
