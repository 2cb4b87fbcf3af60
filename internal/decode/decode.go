// Package decode turns artifacts (explicit paths or artifact blocks) into
// decoded tables: it opens each artifact once, resolves its format,
// applies the format's parser limits, runs the decoder (hashing in the
// same read) and reports every failure with its artifact, continuing with
// the next artifact so partial evidence survives.
//
// It imports evidence and formats; the commands hand it the registry's
// formats.
package decode

import (
	"context"
	"errors"
	"io"
	"sort"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/wire"
)

// Options configure a decode run.
type Options struct {
	Specs   []*formats.Spec  // the formats that may be used (the registry's list)
	Format  string           // explicit format for every artifact; "" detects
	Limits  map[string]int64 // parser limits by name; each applies to the formats declaring it
	Options evidence.Object  // decoder options, recorded in table headers
	// HoldMemory bounds the memory that holds an explicit artifact's
	// tables until its digest is known (0: formats.DefaultHoldMemory);
	// beyond it they spill to an unlinked temporary file.
	HoldMemory int
}

// Check validates options before anything is read: a named format must
// exist and every limit must be declared by some format.
func (o *Options) Check() error {
	if o.Format != "" {
		if _, err := formats.Detect(o.Specs, "", nil, o.Format); err != nil {
			return err
		}
	}
	known := map[string]bool{}
	for _, s := range o.Specs {
		for _, l := range s.Limits {
			known[l.Name] = true
		}
	}
	for k, v := range o.Limits {
		if !known[k] {
			names := make([]string, 0, len(known))
			for n := range known {
				names = append(names, n)
			}
			sort.Strings(names)
			return &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message:  "unknown parser limit " + k + " (known: " + strings.Join(names, ", ") + ")",
				Location: evidence.Location{Field: "limits." + k}}
		}
		if v <= 0 {
			return evidence.Failf(evidence.CodeInvalidArgument, "limit %s must be positive", k)
		}
	}
	return nil
}

// Target receives what a decode run produces.
type Target interface {
	// Artifact announces an explicit artifact once its digest is known,
	// before any of its tables.
	Artifact(a *evidence.Artifact) error
	// Sink returns where one artifact's tables go.
	Sink(spec *formats.Spec, a *evidence.Artifact, args evidence.Object) formats.Sink
	Failure(f *evidence.Failure) error
}

// Run decodes artifacts. It keeps going after a failed artifact; the
// returned error is the first failure (already sent to the target as a
// block), or a write error.
type Run struct {
	Opts  Options
	first *evidence.Failure
	// passed: the first failure came in the input from an upstream stage.
	passed bool
	own    *evidence.Failure // the first failure this run found itself
	held   int64
	spilt  int64
}

// First is the first failure seen, or nil.
func (r *Run) First() *evidence.Failure { return r.first }

// FirstPassed reports whether the first failure came from upstream (its
// block was passed on, and the stage that found it reported it).
func (r *Run) FirstPassed() bool { return r.passed }

// FirstOwn is the first failure this run found itself, or nil.
func (r *Run) FirstOwn() *evidence.Failure { return r.own }

// Held reports the bytes of tables held for explicit artifacts until their
// digests were known, and how many of them spilled to disk.
func (r *Run) Held() (bytes, spilled int64) { return r.held, r.spilt }

// Path decodes an explicit path: it opens the file once, detects its
// format from a peeked prefix, and decodes and hashes it in one read. The
// artifact is announced when its digest is known, before its tables.
func (r *Run) Path(ctx context.Context, path string, t Target) error {
	src, err := r.Open(path)
	if err != nil {
		return r.fail(t, evidence.AsFailure(err, evidence.CodeIOFailure))
	}
	defer src.Close()
	spec, err := r.Resolve(src)
	if err != nil {
		return r.refuse(t, src, evidence.AsFailure(err, evidence.CodeUnsupportedFormat))
	}
	return r.Decode(ctx, src, spec, t)
}

// Open opens an explicit path (the one path check: a regular file, its
// size from fstat). The caller closes the source.
func (r *Run) Open(path string) (*formats.Source, error) {
	return formats.Open(path, formats.RoleExplicit)
}

// Artifact decodes an artifact announced by a block (already passed on by
// the caller). Its recorded digest is verified as its bytes stream.
func (r *Run) Artifact(ctx context.Context, a *evidence.Artifact, t Target) error {
	// A named format is checked before the file is opened.
	if h := r.hint(a); h != "" {
		if _, err := formats.Detect(r.Opts.Specs, a.Path, nil, h); err != nil {
			return r.fail(t, evidence.AsFailure(err, evidence.CodeUnsupportedFormat).At(a.Path, a.ID))
		}
	}
	src, err := formats.OpenArtifact(a)
	if err != nil {
		return r.fail(t, evidence.AsFailure(err, evidence.CodeIOFailure).At(a.Path, a.ID))
	}
	defer src.Close()
	spec, err := r.Resolve(src)
	if err != nil {
		return r.fail(t, evidence.AsFailure(err, evidence.CodeUnsupportedFormat).At(a.Path, a.ID))
	}
	return r.Decode(ctx, src, spec, t)
}

func (r *Run) hint(a *evidence.Artifact) string {
	if r.Opts.Format != "" {
		return r.Opts.Format
	}
	return a.Format
}

// Resolve picks a source's format: the explicit option, else the
// artifact's recorded format, else detection from its name and a peeked
// prefix of its content. An explicit artifact records the format.
func (r *Run) Resolve(src *formats.Source) (*formats.Spec, error) {
	a := src.Artifact
	var prefix []byte
	hint := r.hint(a)
	if hint == "" {
		var err error
		if prefix, err = src.Prefix(); err != nil {
			return nil, err
		}
	}
	spec, err := formats.Detect(r.Opts.Specs, a.Path, prefix, hint)
	if err != nil {
		return nil, err
	}
	if !src.Known() {
		a.Format = spec.Name
	}
	return spec, nil
}

// LimitsFor selects the requested limits a format declares, over its
// defaults.
func (r *Run) LimitsFor(spec *formats.Spec) (map[string]int64, error) {
	req := map[string]int64{}
	for _, l := range spec.Limits {
		if v, ok := r.Opts.Limits[l.Name]; ok {
			req[l.Name] = v
		}
	}
	return formats.EffectiveLimits(spec, req)
}

// Decode decodes an opened source with spec. An explicit artifact's
// tables are held until its digest is known; then the artifact is
// announced and they follow.
func (r *Run) Decode(ctx context.Context, src *formats.Source, spec *formats.Spec, t Target) error {
	a := src.Artifact
	limits, err := r.LimitsFor(spec)
	if err != nil {
		return r.refuse(t, src, evidence.AsFailure(err, evidence.CodeInvalidArgument))
	}
	opts, _, err := formats.EffectiveOptions(spec, r.Opts.Options)
	if err != nil {
		return r.refuse(t, src, evidence.AsFailure(err, evidence.CodeInvalidArgument))
	}
	lim := evidence.Object{}
	for k, v := range limits {
		lim[k] = v
	}
	args := evidence.Object{"limits": lim, "options": opts}
	sink := t.Sink(spec, a, args)
	if !src.Known() {
		h := src.Hold(sink, func() error { return t.Artifact(a) }, r.Opts.HoldMemory)
		defer func() {
			b, s := h.Held()
			r.held += b
			r.spilt += s
		}()
		sink = h
	}
	if err := src.Run(ctx, spec, limits, r.Opts.Options, sink); err != nil {
		return r.fail(t, evidence.AsFailure(err, evidence.CodeDecodeFailure).At(a.Path, a.ID))
	}
	return nil
}

// refuse reports a failure found before decoding. An explicit artifact is
// hashed first, so that it is announced and the failure names it, as for
// one whose digest was recorded.
func (r *Run) refuse(t Target, src *formats.Source, f *evidence.Failure) error {
	a := src.Artifact
	if !src.Known() {
		if err := src.Identify(); err != nil {
			return r.fail(t, evidence.AsFailure(err, evidence.CodeIOFailure))
		}
		if err := t.Artifact(a); err != nil {
			return err
		}
	}
	return r.fail(t, f.At(a.Path, a.ID))
}

func (r *Run) fail(t Target, f *evidence.Failure) error {
	if r.first == nil {
		r.first = f
	}
	if r.own == nil {
		r.own = f
	}
	if err := t.Failure(f); err != nil {
		return err
	}
	if f.Code == evidence.CodeCancelled {
		return f
	}
	return nil
}

// StreamTarget writes everything to a block writer.
type StreamTarget struct{ W *wire.Writer }

func (s StreamTarget) Artifact(a *evidence.Artifact) error { return s.W.Write(a) }
func (s StreamTarget) Failure(f *evidence.Failure) error   { return s.W.Write(f) }
func (s StreamTarget) Sink(spec *formats.Spec, a *evidence.Artifact, args evidence.Object) formats.Sink {
	return &formats.StreamSink{W: s.W, Stamper: formats.Stamper{Spec: spec, Artifact: a, Arguments: args}}
}

// Stream decodes the artifact blocks of an input stream. Every input block
// is passed on first (artifacts before their tables), so provenance flows
// down the pipeline; an upstream failure block is passed on and remembered
// as this run's first failure.
func (r *Run) Stream(ctx context.Context, in *wire.Reader, t Target, pass func(*evidence.Raw) error) error {
	for {
		raw, err := in.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := pass(raw); err != nil {
			return err
		}
		switch raw.Kind() {
		case evidence.KindArtifact:
			a, err := evidence.ArtifactFrom(raw.Obj)
			if err != nil {
				return withLine(err, in.Line())
			}
			if err := r.Artifact(ctx, a, t); err != nil {
				return err
			}
		case evidence.KindFailure:
			if r.first == nil {
				if f, err := evidence.FailureFrom(raw.Obj); err == nil {
					r.first, r.passed = f, true
				}
			}
		}
		if ctx.Err() != nil {
			return evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "decode")
		}
	}
}

func withLine(err error, line int) error {
	f := evidence.AsFailure(err, evidence.CodeInvalidArgument)
	f.Location.Path = "<stdin>"
	f.Location.Line = line
	return f
}
