package formatstest

import (
	"fmt"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/projection"
)

// Emitter records a projection's result tables (it is a
// projection.Emitter), checking rows against their schemas as Sink does
// and the summary's rows_emitted against the rows written.
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

// Feed passes the tables a decoder emitted to a projection as flameox-rank
// reading a block stream would: rows as values, each table with the id,
// format and artifact a StreamSink gives it and its format's capabilities.
func Feed(tb testing.TB, c Consumer, spec *formats.Spec, artifactID string, s *Sink) {
	tb.Helper()
	feed(tb, c, spec, artifactID, s, false)
}

// FeedTyped is Feed with the rows as the decoder handed them, as
// flameox-rank decoding a path in process passes them.
func FeedTyped(tb testing.TB, c Consumer, spec *formats.Spec, artifactID string, s *Sink) {
	tb.Helper()
	feed(tb, c, spec, artifactID, s, true)
}

// Projector is what Project drives: a projection.Projector.
type Projector interface {
	Consumer
	Finish(w projection.Emitter) error
}

// Project feeds the tables a decoder emitted to p, as values (a block
// stream) or typed rows (typed: in process), lets it finish and returns
// its result, whose summaries must keep CheckInvariants.
func Project(tb testing.TB, p Projector, spec *formats.Spec, artifactID string, s *Sink, typed bool) *Emitter {
	tb.Helper()
	if typed {
		FeedTyped(tb, p, spec, artifactID, s)
	} else {
		Feed(tb, p, spec, artifactID, s)
	}
	out := &Emitter{}
	if err := p.Finish(out); err != nil {
		tb.Fatal(err)
	}
	CheckInvariants(tb, &out.Sink, nil)
	return out
}

func feed(tb testing.TB, c Consumer, spec *formats.Spec, artifactID string, s *Sink, typed bool) {
	tb.Helper()
	for i, t := range s.Tables {
		h := *t.Header
		h.ID = fmt.Sprintf("%s.%s#%d", artifactID, h.Name, i)
		h.Format = spec.Name
		h.ArtifactIDs = []string{artifactID}
		if err := c.Table(&h, spec.Caps); err != nil {
			tb.Fatal(err)
		}
		for j, r := range t.Rows {
			var row any = r
			if typed {
				row = t.Typed[j]
			}
			if err := c.Row(&h, row); err != nil {
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
