package evidence

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// DefaultMaxLine bounds one JSONL line read from a stream (8 MiB). A block
// longer than that is an input failure, never a silent split.
const DefaultMaxLine = 8 << 20

// Reader reads blocks from a JSONL stream, one canonical object per line.
type Reader struct {
	r       *bufio.Reader
	line    int
	MaxLine int
	buf     []byte
}

// NewReader returns a Reader with the default line bound.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), MaxLine: DefaultMaxLine}
}

// Line is the number of the last line read.
func (r *Reader) Line() int { return r.line }

// Next returns the next block, or io.EOF at the end of the stream. Blank
// lines are skipped. Errors are *Failure with code INVALID_ARGUMENT and the
// line number.
func (r *Reader) Next() (*Raw, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return nil, err
		}
		r.line++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		v, err := ParseValue(line, 64)
		if err != nil {
			f := Wrap(CodeInvalidArgument, err, "input block")
			f.Location.Line = r.line
			f.Location.Offset = 0
			f.Location.Path = "<stdin>"
			return nil, f
		}
		o, ok := v.(Object)
		if !ok {
			return nil, r.fail("a block must be a JSON object")
		}
		if s, _ := o["schema"].(string); s != Schema {
			return nil, r.fail("unsupported block schema %q (want %q)", o["schema"], Schema)
		}
		if _, ok := o["kind"].(string); !ok {
			return nil, r.fail("block has no kind")
		}
		return &Raw{Line: r.line, Obj: o}, nil
	}
}

func (r *Reader) fail(format string, args ...any) *Failure {
	f := Failf(CodeInvalidArgument, format, args...)
	f.Location = Location{Path: "<stdin>", Line: r.line}
	return f
}

func (r *Reader) readLine() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		frag, err := r.r.ReadSlice('\n')
		r.buf = append(r.buf, frag...)
		if len(r.buf) > r.MaxLine {
			return nil, &Failure{Code: CodeLimitExceeded,
				Message:  fmt.Sprintf("input line longer than %d bytes", r.MaxLine),
				Location: Location{Path: "<stdin>", Line: r.line + 1}}
		}
		switch {
		case err == nil:
			return r.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if len(r.buf) == 0 {
				return nil, io.EOF
			}
			return r.buf, nil
		default:
			return nil, Wrap(CodeIOFailure, err, "read input")
		}
	}
}

// Writer writes canonical blocks, one per line.
type Writer struct {
	w   *bufio.Writer
	buf []byte
	err error
}

// NewWriter returns a Writer on w. Call Flush when done.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10)}
}

// Write writes one block as a canonical line.
func (w *Writer) Write(b Marshaler) error {
	if w.err != nil {
		return w.err
	}
	var err error
	if r, ok := b.(*Row); ok {
		w.buf, err = r.appendBlock(w.buf[:0])
	} else {
		w.buf, err = AppendCanonical(w.buf[:0], b.CanonicalValue())
	}
	if err != nil {
		return Wrap(CodeInternal, err, "encode block")
	}
	w.buf = append(w.buf, '\n')
	if _, err := w.w.Write(w.buf); err != nil {
		w.err = Wrap(CodeIOFailure, err, "write output")
	}
	return w.err
}

// Flush flushes buffered output.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.w.Flush(); err != nil {
		w.err = Wrap(CodeIOFailure, err, "write output")
	}
	return w.err
}

// AsInt reads an integer from a canonical value: a JSON integer, or an
// exact decimal string (how integers beyond the safe range travel).
func AsInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= MaxSafeInteger {
			return int64(x), true
		}
	}
	return 0, false
}

// AsFloat reads a double from a canonical value, including the tagged
// non-finite form.
func AsFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	case Object:
		if t, _ := x["type"].(string); t == "double" {
			switch x["value"] {
			case "NaN":
				return math.NaN(), true
			case "Infinity":
				return math.Inf(1), true
			case "-Infinity":
				return math.Inf(-1), true
			}
		}
	}
	return 0, false
}
