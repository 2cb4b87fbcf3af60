// Package rank runs an operation's projection over decoded tables: it picks
// the operation, validates its arguments strictly and checks them against
// the formats involved before any row is read, feeds the admitted tables to
// the projector and writes the bounded, ranked result.
//
// It imports registry, decode, projection, formats, param, table, wire,
// bundle, store and evidence.
package rank

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/flameox/flameox/internal/decode"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/wire"
)

// Output receives the result and every block passed through.
type Output interface {
	projection.Emitter
	// Pass receives an input block that the projection does not consume
	// (capture, artifact, failure, bundle), in input order.
	Pass(b evidence.Block) error
}

// Request is one ranking request.
type Request struct {
	Operation string          // "" infers it from the first consumable table
	Args      evidence.Object // requested arguments, validated strictly
	Decode    decode.Options  // for explicit paths
	// Baseline is the baseline side of a comparison: paths decoded
	// like Paths' own, which are then the new side (see compare.go).
	Baseline []string
	// Output is the output format asked for beyond jsonl and table
	// (folded, svg…): an inferred operation is one that lists it.
	Output string
	// Stdin is the block stream a comparison's "-" side reads.
	Stdin io.Reader
}

type session struct {
	req      Request
	op       *registry.Operation
	args     evidence.Object
	given    map[string]bool
	proj     projection.Projector
	admitted map[string]*evidence.Table
	upstream *evidence.Failure
	passed   bool // upstream came in the input, from an earlier stage
	// unverified: artifacts whose bytes failed verification; rows read
	// from them are not evidence, so no result is ranked from them.
	unverified map[string]bool
	// lazy: the operation is chosen at the first table decoded
	// (formats.Spec.ByContent).
	lazy    bool
	formats []string
}

// choose fixes the operation for a table name and validates arguments.
// It returns false when the table is not for this operation.
func (s *session) choose(tableName string) (bool, error) {
	if s.op == nil {
		var op *registry.Operation
		if s.req.Operation != "" {
			o, ok := registry.OperationByName(s.req.Operation)
			if !ok {
				return false, unknownOperation(s.req.Operation)
			}
			if !s.fits(o) {
				return false, s.misfit(o)
			}
			op = o
		} else if op = s.inferred(tableName); op == nil {
			return false, nil
		}
		if !op.Projection.Consumes(tableName) {
			return false, nil
		}
		if err := s.start(op); err != nil {
			return false, err
		}
	}
	return s.op.Projection.Consumes(tableName), nil
}

func (s *session) start(op *registry.Operation) error {
	args, given, err := param.Validate(op.Params(), s.req.Args)
	if err != nil {
		f := evidence.AsFailure(err, evidence.CodeInvalidArgument)
		f.Message = op.Name + ": " + f.Message
		return f
	}
	p, err := op.Projection.New(args, given)
	if err != nil {
		return err
	}
	s.op, s.args, s.given, s.proj = op, args, given, p
	s.admitted = map[string]*evidence.Table{}
	return nil
}

func unknownOperation(name string) error {
	var names []string
	for _, o := range registry.Operations() {
		names = append(names, o.Name)
	}
	return &evidence.Failure{Code: evidence.CodeInvalidArgument,
		Message:  fmt.Sprintf("unknown operation %q", name),
		Details:  evidence.Object{"operations": names},
		Location: evidence.Location{Field: "operation"}}
}

// admit checks a table against the operation before its rows arrive.
func (s *session) admit(t *evidence.Table) error {
	if !slices.Contains(s.formats, t.Format) {
		if err := registry.CheckCompatible(s.op, []string{t.Format}, s.given, s.args); err != nil {
			return err
		}
		s.formats = append(s.formats, t.Format)
	}
	var caps formats.Caps
	if spec, ok := registry.Format(t.Format); ok {
		caps = spec.Caps
	}
	if err := s.proj.Table(t, caps); err != nil {
		return err
	}
	s.admitted[t.ID] = t
	return nil
}

// failed records a failure of the input (passed on, or found in process).
func (s *session) failed(f *evidence.Failure, passed bool) {
	if s.upstream == nil {
		s.upstream, s.passed = f, passed
	}
	if f.Code == evidence.CodeIntegrity && f.Location.ArtifactID != "" {
		if s.unverified == nil {
			s.unverified = map[string]bool{}
		}
		s.unverified[f.Location.ArtifactID] = true
	}
}

// tainted reports whether an admitted table was read from an artifact that
// failed verification.
func (s *session) tainted() bool {
	for _, t := range s.admitted {
		for _, id := range t.ArtifactIDs {
			if s.unverified[id] {
				return true
			}
		}
	}
	return false
}

func (s *session) finish(out Output) error {
	if s.tainted() {
		// Ranking would present the rows of bytes that are not the
		// artifact's as evidence: the integrity failure is the result.
		return s.decided()
	}
	if s.op == nil {
		if s.upstream != nil {
			return s.decided()
		}
		what := "any operation"
		if s.req.Operation != "" {
			what = s.req.Operation
		}
		return evidence.Failf(evidence.CodeInvalidArgument, "the input holds no decoded table for %s", what)
	}
	if err := s.proj.Finish(&stamped{Output: out, s: s}); err != nil {
		if s.upstream != nil {
			// The first failure decides: an input emptied by an earlier
			// failure is that failure, not an argument error of ours.
			return s.decided()
		}
		return err
	}
	if s.upstream != nil {
		return s.decided()
	}
	return nil
}

// decided is the run's result when the recorded earlier failure decides it.
func (s *session) decided() error { return &upstreamFailure{f: s.upstream, passed: s.passed} }

// after keeps the first failure deciding the run: a failure of this stage
// that follows an earlier one (passed on, or an artifact's) is written as
// its block and reported as Own, while the earlier one sets the status.
func (s *session) after(err error, out Output) error {
	var u *upstreamFailure
	if err == nil || s.upstream == nil || errors.As(err, &u) {
		return err
	}
	own := evidence.AsFailure(err, evidence.CodeInternal)
	if perr := out.Pass(own); perr != nil {
		return perr
	}
	return &upstreamFailure{f: s.upstream, passed: s.passed, own: own}
}

// upstreamFailure reports that an earlier failure (an earlier stage's, or
// an artifact's decoded in process) decides the run; its failure block was
// already passed through.
type upstreamFailure struct {
	f      *evidence.Failure
	passed bool
	own    *evidence.Failure // this stage's failure after it, if any
}

func (u *upstreamFailure) Error() string { return "upstream: " + u.f.Error() }

// Upstream returns the upstream failure that err reports (its block was
// already passed on, so the command exits with it without writing another
// block), or nil.
func Upstream(err error) *evidence.Failure {
	var u *upstreamFailure
	if errors.As(err, &u) {
		return u.f
	}
	return nil
}

// Passed reports whether the failure err reports came in the input from an
// earlier stage, which already reported it (on stderr): this stage
// forwards its block and exits with its status without naming it again.
func Passed(err error) bool {
	var u *upstreamFailure
	return errors.As(err, &u) && u.passed
}

// Own returns this stage's own failure that followed the upstream one err
// reports (its block was written), or nil.
func Own(err error) *evidence.Failure {
	var u *upstreamFailure
	if errors.As(err, &u) {
		return u.own
	}
	return nil
}

// Stream ranks the decoded tables of a block stream.
func Stream(ctx context.Context, req Request, in *wire.Reader, out Output) error {
	s := &session{req: baselineOf(req)}
	if s.comparing() {
		return errStreamSides
	}
	return s.after(s.stream(ctx, in, out), out)
}

func (s *session) stream(ctx context.Context, in *wire.Reader, out Output) error {
	if err := s.consume(ctx, in, out, ""); err != nil {
		return err
	}
	return s.finish(out)
}

// consume feeds the decoded tables of a block stream to the session.
// With a role (one side of a comparison read from blocks) every table
// is on that side: its id is prefixed with the role, so the same blocks
// on both sides are two tables, and its artifact blocks are passed with
// that role, as the side's artifacts would be decoded.
func (s *session) consume(ctx context.Context, in *wire.Reader, out Output, role string) error {
	prefix := ""
	if role != "" {
		prefix = role + "/"
	}
	skipping := map[string]bool{}
	var tables wire.Tables
	for {
		raw, err := in.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "rank")
		}
		switch raw.Kind() {
		case evidence.KindTable:
			t, err := evidence.TableFrom(raw.Obj)
			if err != nil {
				return located(err, in.Line())
			}
			if err := tables.Header(t); err != nil {
				return located(err, in.Line())
			}
			ok, err := s.choose(t.Name)
			if err != nil {
				return err
			}
			if !ok {
				skipping[t.ID] = true
				continue
			}
			if role != "" {
				sided := *t
				sided.ID = prefix + t.ID
				t = &sided
				s.side(t, role)
			}
			if err := s.admit(t); err != nil {
				return err
			}
		case evidence.KindRow:
			r, err := evidence.RowFrom(raw.Obj)
			if err != nil {
				return located(err, in.Line())
			}
			if err := tables.Row(r.TableID); err != nil {
				return located(err, in.Line())
			}
			if skipping[r.TableID] {
				continue
			}
			t := s.admitted[prefix+r.TableID]
			if err := s.proj.Row(t, r.Values); err != nil {
				return located(err, in.Line())
			}
		case evidence.KindSummary:
			sm, err := evidence.SummaryFrom(raw.Obj)
			if err != nil {
				return located(err, in.Line())
			}
			if err := tables.Summary(sm); err != nil {
				return located(err, in.Line())
			}
			if skipping[sm.TableID] {
				continue
			}
			t := s.admitted[prefix+sm.TableID]
			if err := s.proj.Summary(t, sm); err != nil {
				return err
			}
		case evidence.KindFailure:
			if f, err := evidence.FailureFrom(raw.Obj); err == nil {
				s.failed(f, true)
			}
			if err := out.Pass(raw); err != nil {
				return err
			}
		case evidence.KindArtifact:
			if role == "" {
				if err := out.Pass(raw); err != nil {
					return err
				}
				continue
			}
			a, err := evidence.ArtifactFrom(raw.Obj)
			if err != nil {
				return located(err, in.Line())
			}
			a.Role = role
			if err := out.Pass(a); err != nil {
				return err
			}
		default:
			if err := out.Pass(raw); err != nil {
				return err
			}
		}
	}
	return nil
}

func located(err error, line int) error {
	f := evidence.AsFailure(err, evidence.CodeInvalidArgument)
	if f.Location.Line == 0 {
		f.Location.Path = "<stdin>"
		f.Location.Line = line
	}
	return f
}

// Paths decodes explicit artifacts in process and ranks them. Every path
// is opened (once) and its format detected before the first is decoded,
// so the operation, its arguments and their fit with every artifact's
// format are all checked first. Each artifact is hashed in the same read
// that decodes it; it is passed on when its digest is known, before its
// tables reach the projection.
func Paths(ctx context.Context, req Request, paths []string, out Output) error {
	req = baselineOf(req)
	s := &session{req: req}
	if s.comparing() {
		if handled, err := s.blockSides(ctx, req, paths, out); handled || err != nil {
			return s.after(err, out)
		}
	}
	return s.after(s.paths(ctx, req, paths, out), out)
}

func (s *session) paths(ctx context.Context, req Request, paths []string, out Output) error {
	run := &decode.Run{Opts: req.Decode}
	if err := run.Opts.Check(); err != nil {
		return err
	}
	type item = decodeItem
	var items []item
	defer func() {
		for _, it := range items {
			it.src.Close()
		}
	}()
	var fmts []string
	paths, roles, err := sidedPaths(req, paths)
	if err != nil {
		return err
	}
	// named hashes an artifact refused before decoding, so the failure
	// names it.
	named := func(src *formats.Source, f *evidence.Failure) error {
		if err := src.Identify(); err != nil {
			return err
		}
		return f.At(src.Artifact.Path, src.Artifact.ID)
	}
	for i, p := range paths {
		src, err := formats.Open(p, roles[i])
		if err != nil {
			return err
		}
		spec, err := run.Resolve(src)
		if err != nil {
			err = named(src, evidence.AsFailure(err, evidence.CodeUnsupportedFormat))
			src.Close()
			return err
		}
		items = append(items, item{src, spec})
		if !slices.Contains(fmts, spec.Name) {
			fmts = append(fmts, spec.Name)
		}
	}
	if len(items) == 0 {
		return evidence.Failf(evidence.CodeInvalidArgument, "no artifact paths")
	}
	// Pick the operation from the first artifact's tables, unless named;
	// for a format whose content decides its tables, from the first table
	// it decodes (lazy: feedSink.Begin chooses).
	lazy := req.Operation == "" && items[0].spec.ByContent
	for _, t := range items[0].spec.Tables {
		if lazy {
			break
		}
		if ok, err := s.choose(t.Name); err != nil {
			return err
		} else if ok {
			break
		}
	}
	s.formats = fmts
	if lazy {
		s.lazy = true
		return s.decodeAll(ctx, run, out, items)
	}
	if s.op == nil {
		if req.Operation != "" {
			return registry.CheckCompatible(mustOp(req.Operation), fmts, nil, nil)
		}
		return named(items[0].src, evidence.Failf(evidence.CodeUnsupportedFormat, "no operation consumes format %s", items[0].spec.Name))
	}
	if err := registry.CheckCompatible(s.op, fmts, s.given, s.args); err != nil {
		return err
	}
	if s.op.DecoderOptions != nil {
		derived, err := s.op.DecoderOptions(s.given, s.args)
		if err != nil {
			return err
		}
		merged := evidence.Object{}
		for k, v := range derived {
			merged[k] = v
		}
		for k, v := range run.Opts.Options {
			if _, clash := derived[k]; clash {
				return evidence.Failf(evidence.CodeInvalidArgument, "decoder option %s is set by the %s arguments; do not give it as well", k, s.op.Name)
			}
			merged[k] = v
		}
		run.Opts.Options = merged
	}
	return s.decodeAll(ctx, run, out, items)
}

type decodeItem struct {
	src  *formats.Source
	spec *formats.Spec
}

// decodeAll decodes the opened artifacts into the projection.
func (s *session) decodeAll(ctx context.Context, run *decode.Run, out Output, items []decodeItem) error {
	t := &feed{s: s}
	for _, it := range items {
		if err := run.Decode(ctx, it.src, it.spec, targetFor(t, out)); err != nil {
			return err
		}
		it.src.Close()
	}
	if f := run.First(); f != nil && s.upstream == nil {
		s.upstream = f
	}
	return s.finish(out)
}

// chooseLazily picks the operation from the first table a ByContent
// format decodes, and checks it against the formats as paths does.
func (s *session) chooseLazily(name string) error {
	s.lazy = false
	ok, err := s.choose(name)
	if err != nil || !ok {
		if err == nil && s.op == nil {
			s.lazy = true // not this table's: the next may be
		}
		return err
	}
	return registry.CheckCompatible(s.op, s.formats, s.given, s.args)
}

func mustOp(name string) *registry.Operation {
	op, _ := registry.OperationByName(name)
	return op
}

// feed is a formats.Sink that hands decoded tables straight to the
// projector, without a JSON round trip.
type feed struct{ s *session }

type feedTarget struct {
	f   *feed
	out Output
}

func targetFor(f *feed, out Output) decode.Target { return &feedTarget{f, out} }

func (ft *feedTarget) Artifact(a *evidence.Artifact) error { return ft.out.Pass(a) }
func (ft *feedTarget) Failure(f *evidence.Failure) error {
	ft.f.s.failed(f, false)
	return ft.out.Pass(f)
}
func (ft *feedTarget) Sink(spec *formats.Spec, a *evidence.Artifact, args evidence.Object) formats.Sink {
	return &feedSink{s: ft.f.s, stamp: formats.Stamper{Spec: spec, Artifact: a, Arguments: args}}
}

type feedSink struct {
	s     *session
	stamp formats.Stamper
}

// Wants declines the tables the projection does not read, so decoders
// need not build their rows.
func (fs *feedSink) Wants(s *table.Schema) bool {
	if fs.s.op == nil {
		return true // chosen lazily, from the first table
	}
	return fs.s.op.Projection.Consumes(s.Name)
}

func (fs *feedSink) Begin(t *evidence.Table) (formats.TableWriter, error) {
	if fs.s.op == nil && fs.s.lazy {
		if err := fs.s.chooseLazily(t.Name); err != nil {
			return nil, err
		}
		if fs.s.op == nil {
			return discard{}, nil
		}
	}
	fs.stamp.Stamp(t)
	ts, err := fs.stamp.Schema(t)
	if err != nil {
		return nil, err
	}
	if !fs.Wants(ts) {
		return discard{}, nil
	}
	fs.s.side(t, fs.stamp.Artifact.Role)
	if err := fs.s.admit(t); err != nil {
		return nil, err
	}
	return &feedTable{s: fs.s, t: t, schema: ts}, nil
}

type feedTable struct {
	s      *session
	t      *evidence.Table
	schema *table.Schema
	rows   int64
}

// Row hands a typed row over as it is; an object row is checked (and
// given its artifact column) as the stream writer would.
func (ft *feedTable) Row(row any) error {
	if o, ok := row.(evidence.Object); ok {
		if _, err := ft.schema.Values(o, ft.t.ArtifactIDs[0]); err != nil {
			return evidence.Wrap(evidence.CodeInternal, err, "table %s", ft.t.Name)
		}
	}
	ft.rows++
	return ft.s.proj.Row(ft.t, row)
}

func (ft *feedTable) End(sm *evidence.Summary) error {
	sm.TableID = ft.t.ID
	sm.RowsEmitted = ft.rows
	return ft.s.proj.Summary(ft.t, sm)
}

type discard struct{}

func (discard) Row(any) error               { return nil }
func (discard) End(*evidence.Summary) error { return nil }

// JSONL writes the result as canonical blocks. Each header states its
// declared schema's columns and each row holds exactly them, so what it
// writes reads back (Scan) as the schema's typed rows.
type JSONL struct {
	W      *wire.Writer
	t      *evidence.Table
	schema *table.Schema
	rows   int64
}

func (j *JSONL) Begin(t *evidence.Table) error {
	s := table.Lookup(t.Name)
	if s == nil {
		return evidence.Failf(evidence.CodeInternal, "result table %s is not declared in package table", t.Name)
	}
	if err := s.CheckHeader(t); err != nil {
		return evidence.Wrap(evidence.CodeInternal, err, "result")
	}
	j.t, j.schema, j.rows = t, s, 0
	return j.W.Write(t)
}

func (j *JSONL) Row(v evidence.Object) error {
	if err := j.schema.Check(v); err != nil {
		return evidence.Wrap(evidence.CodeInternal, err, "result table %s", j.t.Name)
	}
	j.rows++
	return j.W.Write(&evidence.Row{TableID: j.t.ID, Values: v})
}

func (j *JSONL) End(s *evidence.Summary) error {
	s.TableID = j.t.ID
	s.RowsEmitted = j.rows
	return j.W.Write(s)
}

func (j *JSONL) Pass(b evidence.Block) error { return j.W.Write(b) }

// stamped completes result headers the same way for every projection: the
// operation that ran, the projection, flameox-rank as the producer, and
// the artifacts of the admitted tables.
type stamped struct {
	Output
	s   *session
	ids map[string]int
}

func (st *stamped) Begin(t *evidence.Table) error {
	if t.ID == "" {
		t.ID = "rank." + t.Name
	}
	// A projection may write several tables; their ids stay unique.
	if st.ids == nil {
		st.ids = map[string]int{}
	}
	st.ids[t.ID]++
	if n := st.ids[t.ID]; n > 1 {
		t.ID = fmt.Sprintf("%s#%d", t.ID, n)
	}
	t.Operation = st.s.op.Name
	t.Projection = st.s.op.Projection.Name
	if t.Decoder.Name == "" {
		t.Decoder = evidence.Producer{Name: "flameox-rank", Version: Version}
	}
	if t.Evidence == "" {
		t.Evidence = evidence.Derived
	}
	if len(t.ArtifactIDs) == 0 {
		for _, a := range st.s.admitted {
			for _, id := range a.ArtifactIDs {
				if !slices.Contains(t.ArtifactIDs, id) {
					t.ArtifactIDs = append(t.ArtifactIDs, id)
				}
			}
		}
		slices.Sort(t.ArtifactIDs)
	}
	if t.Arguments == nil {
		t.Arguments = st.s.args
	}
	return st.Output.Begin(t)
}

// Version identifies the ranking code in result headers.
const Version = "1"
