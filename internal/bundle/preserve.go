package bundle

import (
	"context"
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/wire"
)

// Preserve reads a block stream from in, writes every block to out as it
// came, and preserves the evidence the stream carries in a new bundle in
// store: capture blocks, artifacts (native bytes copied and verified),
// tables with their rows and summaries, and failures. It writes the bundle
// block last and returns it; the caller flushes out.
//
// Bundle blocks in the stream are forwarded but not preserved: they refer
// to other bundles. A block that cannot be preserved fails the whole run
// with a typed failure located at its input line; nothing is published.
// upstream is the first failure block the stream carried (preserved with
// the rest): the stage that wrote it failed, and a pipeline's status is
// that failure's, so the caller exits with it once the bundle is out.
func Preserve(ctx context.Context, store string, in io.Reader, out *wire.Writer) (_ *evidence.Bundle, upstream *evidence.Failure, err error) {
	return PreserveThen(ctx, store, in, out, nil)
}

// Published is called once a bundle is published, with its id and
// manifest, before its bundle block is written: what it records (a store's
// index entry) is done when the block announces the bundle. Its failure is
// the run's; the published bundle stays, as publishing it again would.
type Published func(id ID, m *Manifest) error

// PreserveThen is Preserve, calling then (when not nil) after publishing.
func PreserveThen(ctx context.Context, store string, in io.Reader, out *wire.Writer, then Published) (_ *evidence.Bundle, upstream *evidence.Failure, err error) {
	bl, p, err := preserve(ctx, store, in, out, then)
	if p != nil {
		upstream = p.upstream
	}
	return bl, upstream, err
}

func preserve(ctx context.Context, store string, in io.Reader, out *wire.Writer, then Published) (*evidence.Bundle, *preserver, error) {
	b, err := NewBuilder(store)
	if err != nil {
		return nil, nil, err
	}
	b.WithContext(ctx)
	defer b.Abort()
	p := &preserver{b: b, tables: map[string]*TableWriter{}}
	rd := wire.NewReader(in)
	for {
		if err := ctx.Err(); err != nil {
			return nil, p, evidence.Wrap(evidence.CodeCancelled, err, "preserve")
		}
		raw, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if ctx.Err() != nil { // the read was interrupted on purpose
				return nil, p, evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "preserve")
			}
			return nil, p, err
		}
		if err := out.Write(raw); err != nil {
			return nil, p, err
		}
		if err := p.block(raw); err != nil {
			return nil, p, atLine(err, raw.Line)
		}
	}
	bl, err := b.Publish(ctx)
	if err != nil {
		return nil, p, err
	}
	if then != nil {
		id, err := ParseID(bl.ID)
		if err != nil {
			return nil, p, err
		}
		if err := then(id, b.published); err != nil {
			return nil, p, err
		}
	}
	if err := out.Write(bl); err != nil {
		return nil, p, err
	}
	return bl, p, nil
}

type preserver struct {
	b        *Builder
	upstream *evidence.Failure // the first failure block of the stream
	tables   map[string]*TableWriter
	check    wire.Tables // the stream's table structure, checked as rank checks it
}

func (p *preserver) block(raw *evidence.Raw) error {
	switch raw.Kind() {
	case evidence.KindCapture:
		return p.b.AddCaptureBlock(raw.Obj)
	case evidence.KindArtifact:
		a, err := evidence.ArtifactFrom(raw.Obj)
		if err != nil {
			return err
		}
		return p.b.AddArtifact(a)
	case evidence.KindTable:
		t, err := evidence.TableFrom(raw.Obj)
		if err != nil {
			return err
		}
		if err := p.check.Header(t); err != nil {
			return err
		}
		w, err := p.b.BeginTable(t)
		if err != nil {
			return err
		}
		p.tables[t.ID] = w
		return nil
	case evidence.KindRow:
		r, err := evidence.RowFrom(raw.Obj)
		if err != nil {
			return err
		}
		if err := p.check.Row(r.TableID); err != nil {
			return err
		}
		return p.tables[r.TableID].Row(r.Values)
	case evidence.KindSummary:
		s, err := evidence.SummaryFrom(raw.Obj)
		if err != nil {
			return err
		}
		if err := p.check.Summary(s); err != nil {
			return err
		}
		return p.tables[s.TableID].End(s)
	case evidence.KindFailure:
		f, err := evidence.FailureFrom(raw.Obj)
		if err != nil {
			return err
		}
		if p.upstream == nil {
			p.upstream = f
		}
		return p.b.AddFailure(f)
	case evidence.KindBundle:
		return nil
	}
	return evidence.Failf(evidence.CodeInvalidArgument, "unknown block kind %q", raw.Kind())
}

// atLine locates a failure at an input line. A failure already located in
// a file (a native artifact) keeps that location, since a line number there
// would name a line of the artifact, and gets the input line as a detail.
func atLine(err error, line int) error {
	f := evidence.Wrap(evidence.CodeInternal, err, "")
	if f.Location.Path != "" && f.Location.Path != "<stdin>" {
		if f.Details == nil {
			f.Details = evidence.Object{}
		}
		f.Details["input_line"] = line
		return f
	}
	f.Location.Path = "<stdin>"
	if f.Location.Line == 0 {
		f.Location.Line = line
	}
	return f
}
