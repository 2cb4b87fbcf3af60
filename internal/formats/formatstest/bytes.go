package formatstest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

// Decode runs spec's decoder directly over data, read through wrap (nil:
// the bytes as they are; iotest.OneByteReader, HalfReader...), with the
// spec's default limits and opts validated as the runner validates them,
// and records what it emits. The artifact is name with data's size; its
// id is left empty, since decoders never read it.
func Decode(spec *formats.Spec, name string, data []byte, opts evidence.Object, wrap func(io.Reader) io.Reader) (*Sink, error) {
	sink := &Sink{}
	return sink, DecodeInto(spec, name, data, opts, wrap, sink)
}

// DecodeInto is Decode into any sink (Discard, for benchmarks).
func DecodeInto(spec *formats.Spec, name string, data []byte, opts evidence.Object, wrap func(io.Reader) io.Reader, sink formats.Sink) error {
	var r io.Reader = &byteReader{b: data}
	if wrap != nil {
		r = wrap(r)
	}
	art := &evidence.Artifact{Path: "/virtual/" + name, Name: filepath.Base(name), Size: int64(len(data)), Role: "explicit"}
	in, err := Input(spec, art, r, nil, opts)
	if err != nil {
		return err
	}
	return spec.Decoder.Decode(context.Background(), in, sink)
}

// byteReader is a plain reader: bytes.Reader would offer WriterTo and
// ReaderAt, which a stream from the runner does not.
type byteReader struct {
	b   []byte
	off int
}

func (r *byteReader) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

// Run writes data to a file named name in a fresh temporary directory and
// decodes it with DecodeFile, the path the commands take (digest check,
// limits, typed failures, a panic turned into an INTERNAL failure).
func Run(tb testing.TB, spec *formats.Spec, name string, data []byte, limits map[string]int64, opts evidence.Object) (*Sink, error) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return DecodeFile(tb, spec, path, limits, opts)
}
