package lines

import (
	"bytes"
	"errors"
	"io"
)

// ErrBound is NextWithin's answer when the reader is already at the bound.
var ErrBound = errors.New("lines: the read bound is reached")

// errBound is what the bounded source tells bufio at the bound; it is
// never returned to callers.
var errBound = errors.New("lines: bound")

// NextWithin is Next for a reader that may read no byte at or past the
// stream offset end, so a bounded preview of a huge line stops where it
// must instead of reading the line to its end. A line whose terminator
// lies before end is returned as Next returns it; a line that reaches end
// is returned cut there, with Term Bound, and the next call (with a later
// end, or Next) returns its rest: same Number, the same Start, Offset
// where the rest begins. A '\r' just before a bound stays in the cut part.
// At the bound it returns ErrBound. One byte past end is looked at, so that
// an input ending exactly at the bound ends its line (Term None) and then
// gives io.EOF. Bytes the reader buffered past end (after a plain Next or a
// Peek) are not returned past end either.
func (r *Reader) NextWithin(end int64) (*Line, error) {
	if end < 0 {
		end = 0
	}
	return r.next(end)
}

// bounded is the reader under the buffer: it delivers no byte at or past
// end (end < 0: no bound), so the buffer never holds more than a bounded
// read may see.
type bounded struct {
	r   io.Reader
	pos int64 // bytes delivered
	end int64
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.end >= 0 {
		if b.pos >= b.end {
			return 0, errBound
		}
		if room := b.end - b.pos; int64(len(p)) > room {
			p = p[:room]
		}
	}
	n, err := b.r.Read(p)
	b.pos += int64(n)
	return n, err
}

// endsAt tells whether the input ends exactly at the bound end, with one
// byte of look-ahead. A read error met there is kept for the next call.
func (r *Reader) endsAt(end int64) bool {
	r.src.end = end + 1
	_, err := r.br.Peek(1)
	if err != nil && !errors.Is(err, io.EOF) {
		r.err = err
	}
	return errors.Is(err, io.EOF)
}

// cut returns the part of a line read up to a bound.
func (r *Reader) cut(l *Line) (*Line, error) {
	if l.Size == 0 {
		return nil, ErrBound
	}
	l.Term = Bound
	return r.done(l)
}

// slice is the buffer's ReadSlice('\n') under the bound end (end < 0:
// none). errBound says the bound cut the line.
func (r *Reader) slice(end int64) ([]byte, error) {
	r.src.end = end
	if end >= 0 {
		if room := end - r.off; room < int64(r.br.Buffered()) {
			// An unbounded read buffered past end: cut inside the buffer.
			b, _ := r.br.Peek(int(max(room, 0)))
			if i := bytes.IndexByte(b, '\n'); i >= 0 {
				b = b[:i+1]
				_, _ = r.br.Discard(len(b))
				return b, nil
			}
			_, _ = r.br.Discard(len(b))
			return b, errBound
		}
	}
	return r.br.ReadSlice('\n')
}
