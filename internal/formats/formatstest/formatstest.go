// Package formatstest records what decoders emit, for their tests.
package formatstest

import (
	"context"
	"errors"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

// Sink is a formats.Sink that keeps every table in memory. Like the
// runtime's sink, it checks each row against its header and counts the
// rows a summary closes; each row must also encode canonically.
type Sink struct{ Tables []*Table }

// Table is one recorded table.
type Table struct {
	Header  *evidence.Table
	Rows    []evidence.Object
	Summary *evidence.Summary
}

// Begin implements formats.Sink.
func (s *Sink) Begin(t *evidence.Table) (formats.TableWriter, error) {
	tb := &Table{Header: t}
	s.Tables = append(s.Tables, tb)
	return tb, nil
}

// Row implements formats.TableWriter.
func (t *Table) Row(v evidence.Object) error {
	if err := formats.CheckRow(t.Header, v); err != nil {
		return err
	}
	if _, err := evidence.Canonical(v); err != nil {
		return err
	}
	t.Rows = append(t.Rows, v)
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

// Discard checks rows against their headers and keeps nothing: the sink
// for benchmarks.
type Discard struct{}

type discardTable struct{ h *evidence.Table }

// Begin implements formats.Sink.
func (Discard) Begin(t *evidence.Table) (formats.TableWriter, error) { return discardTable{t}, nil }

func (d discardTable) Row(v evidence.Object) error { return formats.CheckRow(d.h, v) }
func (discardTable) End(*evidence.Summary) error   { return nil }

// DecodeFile runs spec over a file the way the commands do (formats.Run:
// hashing, limits over the spec's defaults, typed failures) and returns
// what it emitted.
func DecodeFile(tb testing.TB, spec *formats.Spec, path string, limits map[string]int64, opts evidence.Object) (*Sink, error) {
	tb.Helper()
	art, err := formats.ArtifactFromPath(path, "explicit")
	if err != nil {
		tb.Fatal(err)
	}
	lim, err := formats.EffectiveLimits(spec, limits)
	if err != nil {
		tb.Fatal(err)
	}
	s := &Sink{}
	return s, formats.Run(context.Background(), spec, art, lim, opts, s)
}
