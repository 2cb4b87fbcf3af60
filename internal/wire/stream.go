// Package wire reads and writes flameox block streams: canonical JSONL,
// one block per line, as every command speaks on stdin and stdout. Lines
// are read through the bounded line reader; a line over the bound is a
// LIMIT_EXCEEDED failure located at its line, never a silent split.
//
// It imports evidence and lines.
package wire

import (
	"bytes"
	"errors"
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/lines"
)

// DefaultMaxLine bounds one block line read from a stream (8 MiB).
const DefaultMaxLine = 8 << 20

// LimitLine names the bound in the failure's limit receipt.
const LimitLine = "max_block_bytes"

// Reader reads blocks from a stream.
type Reader struct {
	lr   *lines.Reader
	line int
}

// NewReader returns a Reader with the default line bound.
func NewReader(r io.Reader) *Reader { return NewReaderSize(r, DefaultMaxLine) }

// NewReaderSize returns a Reader whose lines may hold at most max bytes.
func NewReaderSize(r io.Reader, max int) *Reader {
	return &Reader{lr: lines.NewStrict(r, max, LimitLine)}
}

// Line is the number of the last line read.
func (r *Reader) Line() int { return r.line }

// Next returns the next block, or io.EOF at the end of the stream. Blank
// lines are skipped. Errors are *evidence.Failure located at the line:
// INVALID_ARGUMENT for a malformed block, LIMIT_EXCEEDED for an over-long
// line, IO_FAILURE for a failed read.
func (r *Reader) Next() (*evidence.Raw, error) {
	for {
		l, err := r.lr.Next()
		if err != nil {
			return nil, r.readError(err)
		}
		r.line = int(l.Number)
		if len(bytes.TrimSpace(l.Bytes)) == 0 {
			continue
		}
		v, err := evidence.ParseValue(l.Bytes, 64)
		if err != nil {
			f := evidence.Wrap(evidence.CodeInvalidArgument, err, "input block")
			f.Location = evidence.Location{Path: "<stdin>", Line: r.line}
			return nil, f
		}
		o, ok := v.(evidence.Object)
		if !ok {
			return nil, r.fail("a block must be a JSON object")
		}
		if s, _ := o["schema"].(string); s != evidence.Schema {
			return nil, r.fail("unsupported block schema %q (want %q)", o["schema"], evidence.Schema)
		}
		k, ok := o["kind"].(string)
		if !ok {
			return nil, r.fail("block has no kind")
		}
		// A kind this schema does not define is refused by every reader
		// alike, not passed on by one stage and rejected by the next.
		if !evidence.KnownKind(k) {
			return nil, r.fail("unknown block kind %q", k)
		}
		return &evidence.Raw{Line: r.line, Obj: o}, nil
	}
}

func (r *Reader) readError(err error) error {
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	var f *evidence.Failure
	if errors.As(err, &f) {
		f.Location.Path = "<stdin>"
		return f
	}
	return evidence.Wrap(evidence.CodeIOFailure, err, "read input").At("<stdin>", "")
}

func (r *Reader) fail(format string, args ...any) *evidence.Failure {
	f := evidence.Failf(evidence.CodeInvalidArgument, format, args...)
	f.Location = evidence.Location{Path: "<stdin>", Line: r.line}
	return f
}

// Writer writes canonical blocks, one per line. Lines are encoded
// straight into its buffer, which goes out in one write once it holds
// flushAt bytes: a block is encoded once and copied once.
type Writer struct {
	w   io.Writer
	buf []byte
	err error
}

// flushAt is the size of the writes (a pipe's default capacity).
const flushAt = 64 << 10

// NewWriter returns a Writer on w. Call Flush when done.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, buf: make([]byte, 0, flushAt+4<<10)}
}

// Write writes one block as a canonical line.
func (w *Writer) Write(b evidence.Marshaler) error {
	return w.WriteFunc(func(dst []byte) ([]byte, error) {
		var err error
		if r, ok := b.(*evidence.Row); ok {
			dst, err = r.AppendBlock(dst)
		} else {
			dst, err = evidence.AppendCanonical(dst, b.CanonicalValue())
		}
		if err != nil {
			err = evidence.Wrap(evidence.CodeInternal, err, "encode block")
		}
		return dst, err
	})
}

// WriteFunc writes the line that fn appends to its argument: one
// canonical block, without the newline, built by evidence's encoders
// (WriteFunc checks nothing). An error of fn is returned as it is and
// nothing of that line is written.
func (w *Writer) WriteFunc(fn func(dst []byte) ([]byte, error)) error {
	if w.err != nil {
		return w.err
	}
	n := len(w.buf)
	line, err := fn(w.buf)
	if err != nil {
		w.buf = w.buf[:n]
		return err
	}
	w.buf = append(line, '\n')
	if len(w.buf) >= flushAt {
		return w.flush()
	}
	return nil
}

func (w *Writer) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.w.Write(w.buf)
	if err == nil && n < len(w.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = evidence.Wrap(evidence.CodeIOFailure, err, "write output")
		return w.err
	}
	if cap(w.buf) > 4*flushAt {
		// One huge line grew the buffer: give it back.
		w.buf = make([]byte, 0, flushAt+4<<10)
	}
	w.buf = w.buf[:0]
	return nil
}

// Flush flushes buffered output.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	return w.flush()
}
