package formats

import (
	"errors"
	"io"

	"github.com/flameox/flameox/internal/evidence"
)

// LimitDecompressed is the name of the limit on the bytes a compressed
// artifact (gzip, LZ4) decompresses to; every format that reads one
// declares it under this name.
const LimitDecompressed = "max_decompressed_bytes"

// FileReader marks the errors of reading the artifact itself, so that
// Input.Typed tells a failed read (IO_FAILURE) apart from a corrupt
// stream (DECODE_FAILURE).
func FileReader(r io.Reader) io.Reader { return fileReader{r} }

type fileReader struct{ r io.Reader }

type fileError struct{ err error }

func (e *fileError) Error() string { return e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }

func (f fileReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF {
		err = &fileError{err}
	}
	return n, err
}

// Decompressed is a decompressed stream bounded by the input's
// LimitDecompressed: a read past it fails with the limit's failure, kept
// in Over.
type Decompressed struct {
	r    io.Reader
	n    int64
	max  int64
	in   *Input
	Over error
}

// Decompressed bounds r, the decompressed bytes of the input.
func (in *Input) Decompressed(r io.Reader) *Decompressed {
	return &Decompressed{r: r, max: in.Limit(LimitDecompressed), in: in}
}

func (l *Decompressed) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.max {
		l.Over = l.in.Exceeded(LimitDecompressed, nil)
		return n, l.Over
	}
	return n, err
}

// Typed makes a decode error a typed failure: a read of the artifact
// that failed (through FileReader) IO_FAILURE, a corrupt stream or
// malformed content DECODE_FAILURE; the crossed limit over (nil: none)
// and failures already typed keep theirs.
func (in *Input) Typed(err, over error) error {
	if over != nil && errors.Is(err, over) {
		return over
	}
	var f *evidence.Failure
	if errors.As(err, &f) {
		return f
	}
	code := evidence.CodeDecodeFailure
	var fe *fileError
	if errors.As(err, &fe) {
		code = evidence.CodeIOFailure
	}
	return evidence.Wrap(code, err, "%s", in.Spec.Title)
}
