// Package formatstest is the test harness of decoders and of the
// projections that read their tables: a recording sink that checks every
// row against its declared schema, decoding through the real runner
// (DecodeFile, Run) or straight from bytes through iotest wrappers
// (Decode), the invariants every summary must keep (CheckInvariants), a
// recording projection emitter and a feeder (Emitter, Feed, Project), and readers
// of the repository's testdata (Read, Seeds). No decoder test keeps its
// own sink.
//
// It imports evidence, formats, projection (the emitter it records) and
// table.
package formatstest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/table"
)

// Sink is a formats.Sink that keeps every table in memory. Like the
// runtime's sink, it checks each row against its declared schema and
// counts the rows a summary closes; each row must also encode
// canonically. Typed rows are kept as their values. Only, when set, lists
// the tables the sink wants; the others are declined.
type Sink struct {
	Tables []*Table
	Only   []string
	// Artifact is written in the artifact column of tables from one
	// artifact; "" keeps what the decoder wrote.
	Artifact string
	// DeclinedRows counts the rows a decoder handed to tables the sink
	// declined (Only), which it should not have built.
	DeclinedRows int64
}

// Table is one recorded table.
type Table struct {
	Header *evidence.Table
	Rows   []evidence.Object
	// Typed holds the rows as the decoder handed them (a *T of the schema
	// or an object), for feeding a projection the way a process does.
	Typed   []any
	Summary *evidence.Summary

	schema   *table.Schema
	artifact string
}

// Wants implements formats.Sink.
func (s *Sink) Wants(ts *table.Schema) bool {
	if s.Only == nil {
		return true
	}
	for _, n := range s.Only {
		if n == ts.Name {
			return true
		}
	}
	return false
}

// Begin implements formats.Sink.
func (s *Sink) Begin(t *evidence.Table) (formats.TableWriter, error) {
	ts := table.Lookup(t.Name)
	if ts == nil {
		return nil, fmt.Errorf("table %s is not declared in package table", t.Name)
	}
	if _, err := evidence.AppendCanonical(nil, t.CanonicalValue()); err != nil {
		return nil, fmt.Errorf("table %s header: %w", t.Name, err)
	}
	tb := &Table{Header: t, schema: ts, artifact: s.Artifact}
	if !s.Wants(ts) {
		return Discard{Rows: &s.DeclinedRows}.table(ts), nil
	}
	s.Tables = append(s.Tables, tb)
	return tb, nil
}

// Row implements formats.TableWriter.
func (t *Table) Row(row any) error {
	if t.Summary != nil {
		return fmt.Errorf("table %s: row after summary", t.Header.Name)
	}
	v, err := t.schema.Values(row, t.artifact)
	if err != nil {
		return err
	}
	if _, err := evidence.Canonical(v); err != nil {
		return fmt.Errorf("table %s row %d: %w", t.Header.Name, len(t.Rows), err)
	}
	t.Rows = append(t.Rows, v)
	t.Typed = append(t.Typed, row)
	return nil
}

// End implements formats.TableWriter; a table ends once.
func (t *Table) End(s *evidence.Summary) error {
	if t.Summary != nil {
		return errors.New("table ended twice")
	}
	s.RowsEmitted = int64(len(t.Rows))
	t.Summary = s
	return nil
}

// Table returns the first table with the row schema name, or nil.
func (s *Sink) Table(name string) *Table {
	for _, t := range s.Tables {
		if t.Header.Name == name {
			return t
		}
	}
	return nil
}

// Named returns every table with the row schema name.
func (s *Sink) Named(name string) []*Table {
	var out []*Table
	for _, t := range s.Tables {
		if t.Header.Name == name {
			out = append(out, t)
		}
	}
	return out
}

// Discard checks rows against their schemas, counts them and keeps
// nothing: the sink for benchmarks.
type Discard struct{ Rows *int64 }

type discardTable struct {
	s    *table.Schema
	rows *int64
	buf  []byte
}

func (d Discard) table(s *table.Schema) *discardTable { return &discardTable{s: s, rows: d.Rows} }

// Wants implements formats.Sink.
func (Discard) Wants(*table.Schema) bool { return true }

// Begin implements formats.Sink.
func (d Discard) Begin(t *evidence.Table) (formats.TableWriter, error) {
	ts := table.Lookup(t.Name)
	if ts == nil {
		return nil, fmt.Errorf("table %s is not declared in package table", t.Name)
	}
	return d.table(ts), nil
}

// Row encodes the row as the stream writer would, and drops it.
func (d *discardTable) Row(row any) error {
	var err error
	d.buf, err = d.s.AppendValues(d.buf[:0], row, "sha256:0")
	if d.rows != nil {
		*d.rows++
	}
	return err
}

func (*discardTable) End(*evidence.Summary) error { return nil }

// DecodeFile runs spec over a file the way the commands do (formats.Run:
// hashing, limits over the spec's defaults, typed failures) and returns
// what it emitted.
func DecodeFile(tb testing.TB, spec *formats.Spec, path string, limits map[string]int64, opts evidence.Object) (*Sink, error) {
	tb.Helper()
	art, err := formats.ArtifactFromPath(path, "explicit")
	if err != nil {
		tb.Fatal(err)
	}
	s := &Sink{Artifact: art.ID}
	return s, formats.Run(context.Background(), spec, art, limits, opts, s)
}

// MustDecodeFile is DecodeFile for a file that must decode: it checks
// the sink's invariants and stops the test at a failure.
func MustDecodeFile(tb testing.TB, spec *formats.Spec, path string, limits map[string]int64, opts evidence.Object) *Sink {
	tb.Helper()
	sink, err := DecodeFile(tb, spec, path, limits, opts)
	CheckInvariants(tb, sink, err)
	if err != nil {
		tb.Fatal(err)
	}
	return sink
}

// Input prepares a decoder input as the runner does (limits over the
// spec's defaults, options validated and typed) around any reader, for
// tests that call a decoder directly.
func Input(spec *formats.Spec, art *evidence.Artifact, r io.Reader, limits map[string]int64, opts evidence.Object) (*formats.Input, error) {
	in, err := formats.NewInput(spec, limits, opts)
	if err != nil {
		return nil, err
	}
	if art == nil {
		art = &evidence.Artifact{ID: "sha256:" + strings.Repeat("0", 64), Path: "/virtual/artifact"}
	}
	in.Artifact, in.R = art, r
	return in, nil
}

// MustInput is Input for inputs that must be valid.
func MustInput(tb testing.TB, spec *formats.Spec, art *evidence.Artifact, r io.Reader, limits map[string]int64) *formats.Input {
	tb.Helper()
	in, err := Input(spec, art, r, limits, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return in
}
