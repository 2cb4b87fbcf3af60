// Package projectiontest runs projections in tests the way flameox-rank
// does: real fixtures decoded by their real decoders (formatstest), each
// table stamped as the runtime stamps it and fed to the projector through
// Table (with its format's capabilities), Row and Summary, and the result
// recorded with its header and every row checked against the result
// table's declared schema.
//
// It imports projection, formats, formatstest, table, param and evidence.
package projectiontest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Input is one table as a projection receives it.
type Input struct {
	Header *evidence.Table
	Caps   formats.Caps
	// Rows are typed rows of the table's schema (as a decoder in process
	// hands them over) or objects (as they come from a block stream).
	Rows    []any
	Summary *evidence.Summary // nil: the table never closed
}

// Values returns the rows as objects (Rows must hold objects).
func (in *Input) Values() []evidence.Object {
	out := make([]evidence.Object, len(in.Rows))
	for i, r := range in.Rows {
		out[i], _ = r.(evidence.Object)
	}
	return out
}

// Decode decodes the fixture at path with spec through the runner
// (formatstest.DecodeFile) and returns its tables as flameox-rank admits
// them: headers stamped by formats.Stamper, the format's capabilities,
// the rows as their values. The decode must succeed.
func Decode(tb testing.TB, spec *formats.Spec, path string, opts evidence.Object) []*Input {
	tb.Helper()
	sink, err := formatstest.DecodeFile(tb, spec, path, nil, opts)
	if err != nil {
		tb.Fatalf("decode %s: %v", path, err)
	}
	stamp := formats.Stamper{Spec: spec, Artifact: &evidence.Artifact{ID: sink.Artifact}}
	var out []*Input
	for _, t := range sink.Tables {
		h := *t.Header
		stamp.Stamp(&h)
		in := &Input{Header: &h, Caps: spec.Caps, Summary: t.Summary}
		for _, r := range t.Rows {
			in.Rows = append(in.Rows, r)
		}
		out = append(out, in)
	}
	if len(out) == 0 {
		tb.Fatalf("decode %s: no table", path)
	}
	return out
}

// Start validates args against spec's parameters, as flameox-rank does,
// and starts the projection.
func Start(spec *projection.Spec, args evidence.Object) (projection.Projector, error) {
	eff, given, err := param.Validate(spec.Params, args)
	if err != nil {
		return nil, err
	}
	return spec.New(eff, given)
}

// MustStart is Start for arguments that must be valid.
func MustStart(tb testing.TB, spec *projection.Spec, args evidence.Object) projection.Projector {
	tb.Helper()
	p, err := Start(spec, args)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// Feed passes tables to p, each whole: header, rows, then summary.
func Feed(p projection.Projector, inputs ...*Input) error {
	for _, in := range inputs {
		if err := p.Table(in.Header, in.Caps); err != nil {
			return err
		}
		for _, r := range in.Rows {
			if err := p.Row(in.Header, r); err != nil {
				return err
			}
		}
		if in.Summary != nil {
			if err := p.Summary(in.Header, in.Summary); err != nil {
				return err
			}
		}
	}
	return nil
}

// Finish finishes p into a recorded result.
func Finish(p projection.Projector) (*Result, error) {
	r := &Result{}
	if err := p.Finish(r); err != nil {
		return nil, err
	}
	if r.Summary == nil {
		return nil, errors.New("the projection finished without a result summary")
	}
	return r, nil
}

// Run starts spec's projection with args, feeds it the inputs and
// finishes it.
func Run(spec *projection.Spec, args evidence.Object, inputs ...*Input) (*Result, error) {
	p, err := Start(spec, args)
	if err != nil {
		return nil, err
	}
	if err := Feed(p, inputs...); err != nil {
		return nil, err
	}
	return Finish(p)
}

// Result is a recorded result table. As an Emitter it checks what a
// projection writes: a header of a result table declared in package
// table, with its columns and no operation or projection (flameox-rank
// stamps those); rows of exactly the schema's columns and types, each
// encoding canonically; a summary whose counts agree with the rows and
// whose completeness agrees with its truncation and limitations.
type Result struct {
	Header  *evidence.Table
	Rows    []evidence.Object
	Summary *evidence.Summary
	schema  *table.Schema
}

// Begin implements projection.Emitter.
func (r *Result) Begin(t *evidence.Table) error {
	if r.Header != nil {
		return fmt.Errorf("a second result table %s after %s", t.Name, r.Header.Name)
	}
	s := table.Lookup(t.Name)
	if s == nil {
		return fmt.Errorf("result table %s is not declared in package table", t.Name)
	}
	if err := s.CheckHeader(t); err != nil {
		return fmt.Errorf("result %w", err)
	}
	if t.Operation != "" || t.Projection != "" {
		return fmt.Errorf("result table %s names operation %q and projection %q; flameox-rank stamps those", t.Name, t.Operation, t.Projection)
	}
	if _, err := evidence.Canonical(t.CanonicalValue()); err != nil {
		return fmt.Errorf("result table %s header: %w", t.Name, err)
	}
	r.Header, r.schema = t, s
	return nil
}

// Row implements projection.Emitter.
func (r *Result) Row(v evidence.Object) error {
	if r.Header == nil || r.Summary != nil {
		return errors.New("a result row outside its table")
	}
	// The header states the schema's columns (Begin), so the schema's
	// check is the header's too.
	if err := r.schema.Check(v); err != nil {
		return fmt.Errorf("result table %s row %d: %w", r.Header.Name, len(r.Rows), err)
	}
	if _, err := evidence.Canonical(v); err != nil {
		return fmt.Errorf("result table %s row %d: %w", r.Header.Name, len(r.Rows), err)
	}
	r.Rows = append(r.Rows, v)
	return nil
}

// End implements projection.Emitter.
func (r *Result) End(s *evidence.Summary) error {
	switch n := int64(len(r.Rows)); {
	case r.Header == nil || r.Summary != nil:
		return errors.New("a result summary outside its table")
	case s.RowsEmitted != n:
		return fmt.Errorf("summary claims %d rows emitted, %d were written", s.RowsEmitted, n)
	case n > s.RowsObserved:
		return fmt.Errorf("summary observes %d rows, %d were written", s.RowsObserved, n)
	case s.Complete && (s.Truncation != nil || n != s.RowsObserved):
		return fmt.Errorf("summary is complete but truncated (%+v, %d of %d)", s.Truncation, n, s.RowsObserved)
	case !s.Complete && s.Truncation == nil && len(s.Limitations) == 0:
		return errors.New("summary is incomplete without a truncation or limitation")
	}
	if _, err := evidence.Canonical(s.CanonicalValue()); err != nil {
		return fmt.Errorf("result summary: %w", err)
	}
	r.Summary = s
	return nil
}

// Bench runs spec's projection over the inputs b.N times. Bytes are the
// rows' canonical encoding: what a block stream would carry.
func Bench(b *testing.B, spec *projection.Spec, args evidence.Object, inputs ...*Input) {
	b.Helper()
	var size, rows int64
	for _, in := range inputs {
		s := table.Lookup(in.Header.Name)
		var artifact string
		if len(in.Header.ArtifactIDs) == 1 {
			artifact = in.Header.ArtifactIDs[0]
		}
		for _, r := range in.Rows {
			buf, err := s.AppendValues(nil, r, artifact)
			if err != nil {
				b.Fatal(err)
			}
			size += int64(len(buf))
			rows++
		}
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(spec, args, inputs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// FuzzRows fuzzes a row of in as a block stream carries it: seeded with
// the canonical JSON of in's rows, each input is parsed as a row object
// and fed after them, to the projection started with each of argsets (none:
// the defaults). A bad row must be refused with a typed failure, not an
// INTERNAL one or a panic, and a finished result must pass Result's
// checks.
func FuzzRows(f *testing.F, spec *projection.Spec, in *Input, argsets ...evidence.Object) {
	if len(argsets) == 0 {
		argsets = []evidence.Object{nil}
	}
	f.Helper()
	for _, r := range in.Values() {
		b, err := evidence.Canonical(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := evidence.ParseValue(b, 16)
		o, ok := v.(evidence.Object)
		if err != nil || !ok {
			return
		}
		fuzzed := *in
		fuzzed.Rows = append(append([]any(nil), in.Rows...), o)
		for _, args := range argsets {
			if _, err := Run(spec, args, &fuzzed); err != nil {
				if c := evidence.CodeOf(err); c == "" || c == evidence.CodeInternal {
					t.Fatalf("%v, row %s: %v", args, b, err)
				}
			}
		}
	})
}

// Column returns column name of every row.
func (r *Result) Column(name string) []any {
	out := make([]any, len(r.Rows))
	for i, row := range r.Rows {
		out[i] = row[name]
	}
	return out
}
