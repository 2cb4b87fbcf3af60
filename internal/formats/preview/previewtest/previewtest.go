// Package previewtest runs preview decoders in tests: a recording sink that
// checks every row against its header and the canonical encoder, runners
// over in-memory bytes or a real file, and the invariants every summary must
// keep.
package previewtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// Table is one recorded table.
type Table = formatstest.Table

// Sink records tables, checking rows against their schemas and the
// canonical encoder as the real writer would.
type Sink = formatstest.Sink

// Artifact describes data as an artifact at path.
func Artifact(path string, data []byte) *evidence.Artifact {
	sum := sha256.Sum256(data)
	return &evidence.Artifact{ID: "sha256:" + hex.EncodeToString(sum[:]), Path: path, Size: int64(len(data)), Name: filepath.Base(path), Role: "explicit"}
}

// Discard is a sink that keeps nothing, for benchmarks of the decoder
// alone; it counts rows.
type Discard struct{ Rows int64 }

// Wants implements formats.Sink.
func (d *Discard) Wants(*table.Schema) bool { return true }

// Begin implements formats.Sink.
func (d *Discard) Begin(t *evidence.Table) (formats.TableWriter, error) {
	return formatstest.Discard{Rows: &d.Rows}.Begin(t)
}

// DecodeInto runs spec's decoder over data into any sink.
func DecodeInto(spec *formats.Spec, name string, data []byte, opts evidence.Object, sink formats.Sink) error {
	in, err := formats.NewInput(spec, nil, opts)
	if err != nil {
		return err
	}
	in.Artifact, in.R = Artifact("/virtual/"+name, data), &byteReader{b: data}
	return spec.Decoder.Decode(context.Background(), in, sink)
}

// Decode runs spec's decoder directly over data read through wrap (nil:
// the bytes as they are), with the spec's default limits.
func Decode(spec *formats.Spec, name string, data []byte, opts evidence.Object, wrap func(io.Reader) io.Reader) (*Sink, error) {
	var r io.Reader = &byteReader{b: data}
	if wrap != nil {
		r = wrap(r)
	}
	sink := &Sink{}
	in, err := formats.NewInput(spec, nil, opts)
	if err != nil {
		return sink, err
	}
	in.Artifact, in.R = Artifact("/virtual/"+name, data), r
	return sink, spec.Decoder.Decode(context.Background(), in, sink)
}

// byteReader is a plain reader (bytes.Reader would offer WriterTo and
// ReaderAt, which iotest wrappers hide but a bare reader never has).
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

// Run writes data to a file under dir and decodes it through formats.Run,
// the path commands take: open, digest check, typed failures, panics
// turned into INTERNAL failures.
func Run(dir string, spec *formats.Spec, name string, data []byte, opts evidence.Object, limits map[string]int64) (*Sink, error) {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return nil, err
	}
	art, err := formats.ArtifactFromPath(path, "explicit")
	if err != nil {
		return nil, err
	}
	sink := &Sink{}
	return sink, formats.Run(context.Background(), spec, art, limits, opts, sink)
}

// Code returns the failure code of err, or "" when err is not a Failure.
func Code(err error) evidence.Code {
	var f *evidence.Failure
	if errors.As(err, &f) {
		return f.Code
	}
	return ""
}

// CheckInvariants fails the test when err is not a typed failure (or is an
// INTERNAL one), or when a summary contradicts its rows: every table ends
// with a summary; emitted never exceeds observed; a complete table has no
// truncation and emitted all it observed; a truncation is never complete.
func CheckInvariants(tb testing.TB, sink *Sink, err error) {
	tb.Helper()
	if err != nil {
		var f *evidence.Failure
		if !errors.As(err, &f) {
			tb.Fatalf("untyped failure %T: %v", err, err)
		}
		if f.Code == evidence.CodeInternal {
			tb.Fatalf("internal failure: %v", err)
		}
	}
	for _, t := range sink.Tables {
		s := t.Summary
		if s == nil {
			if err == nil {
				tb.Fatalf("table %s has no summary", t.Header.Name)
			}
			continue
		}
		if s.RowsEmitted > s.RowsObserved {
			tb.Fatalf("table %s: emitted %d > observed %d", t.Header.Name, s.RowsEmitted, s.RowsObserved)
		}
		if s.Complete && (s.Truncation != nil || s.RowsEmitted != s.RowsObserved) {
			tb.Fatalf("table %s: complete but truncated (%+v, %d of %d)", t.Header.Name, s.Truncation, s.RowsEmitted, s.RowsObserved)
		}
		if s.Truncation != nil && s.Truncation.Omitted < 0 {
			tb.Fatalf("table %s: negative omitted count", t.Header.Name)
		}
		if !s.Complete && len(s.Limitations) == 0 && s.Truncation == nil {
			tb.Fatalf("table %s: incomplete without a limitation or truncation", t.Header.Name)
		}
	}
}

// Emitter records a projection's result tables, checking rows against
// their headers like Sink does.
type Emitter struct {
	Sink
	cur formats.TableWriter
}

// Begin implements projection.Emitter.
func (e *Emitter) Begin(t *evidence.Table) error {
	w, err := e.Sink.Begin(t)
	e.cur = w
	return err
}

// Row implements projection.Emitter.
func (e *Emitter) Row(values evidence.Object) error { return e.cur.Row(values) }

// End implements projection.Emitter. The summary keeps the projection's
// own rows_emitted, which must match the rows it wrote.
func (e *Emitter) End(s *evidence.Summary) error {
	claimed := s.RowsEmitted
	if err := e.cur.End(s); err != nil {
		return err
	}
	if claimed != s.RowsEmitted {
		return fmt.Errorf("summary claims %d rows emitted, %d were written", claimed, s.RowsEmitted)
	}
	return nil
}

// Consumer takes decoded tables: a projection.Projector.
type Consumer interface {
	Table(t *evidence.Table, caps formats.Caps) error
	Row(t *evidence.Table, row any) error
	Summary(t *evidence.Table, s *evidence.Summary) error
}

// Feed passes decoded tables to a projection as flameox-rank would, giving
// each table the id, format and artifact a StreamSink would.
func Feed(tb testing.TB, c Consumer, format, artifactID string, s *Sink) {
	tb.Helper()
	for i, t := range s.Tables {
		h := *t.Header
		h.ID = fmt.Sprintf("%s.%s#%d", artifactID, h.Name, i)
		h.Format = format
		h.ArtifactIDs = []string{artifactID}
		if err := c.Table(&h, formats.Caps{}); err != nil {
			tb.Fatal(err)
		}
		for _, r := range t.Rows {
			if err := c.Row(&h, r); err != nil {
				tb.Fatal(err)
			}
		}
		if t.Summary != nil {
			if err := c.Summary(&h, t.Summary); err != nil {
				tb.Fatal(err)
			}
		}
	}
}
