// Package decode turns artifacts (explicit paths or artifact blocks) into
// decoded tables: it resolves each artifact's format, applies the format's
// parser limits, runs the decoder and reports every failure with its
// artifact, continuing with the next artifact so partial evidence survives.
package decode

import (
	"context"
	"errors"
	"io"
	"sort"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

// Options configure a decode run.
type Options struct {
	Specs   []*formats.Spec  // the formats that may be used (the registry's list)
	Format  string           // explicit format for every artifact; "" detects
	Limits  map[string]int64 // parser limits by name; each applies to the formats declaring it
	Options evidence.Object  // decoder options, recorded in table headers
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
}

// First is the first failure seen, or nil.
func (r *Run) First() *evidence.Failure { return r.first }

// Path resolves a path to absolute, hashes it, announces the artifact and
// decodes it.
func (r *Run) Path(ctx context.Context, path string, t Target) error {
	a, err := formats.ArtifactFromPath(path, "explicit")
	if err != nil {
		return r.fail(t, evidence.AsFailure(err, evidence.CodeIOFailure))
	}
	spec, err := r.Resolve(a)
	if err != nil {
		if err := t.Artifact(a); err != nil {
			return err
		}
		return r.fail(t, evidence.AsFailure(err, evidence.CodeUnsupportedFormat).At(a.Path, a.ID))
	}
	a.Format = spec.Name
	if err := t.Artifact(a); err != nil {
		return err
	}
	return r.decode(ctx, spec, a, t)
}

// Artifact decodes an artifact announced by a block (already passed on by
// the caller).
func (r *Run) Artifact(ctx context.Context, a *evidence.Artifact, t Target) error {
	spec, err := r.Resolve(a)
	if err != nil {
		return r.fail(t, evidence.AsFailure(err, evidence.CodeUnsupportedFormat).At(a.Path, a.ID))
	}
	return r.decode(ctx, spec, a, t)
}

// Resolve picks an artifact's format: the explicit option, else the
// artifact's recorded format, else detection from its name and content.
func (r *Run) Resolve(a *evidence.Artifact) (*formats.Spec, error) {
	hint := r.Opts.Format
	if hint == "" {
		hint = a.Format
	}
	if hint != "" {
		return formats.Detect(r.Opts.Specs, a.Path, nil, hint)
	}
	prefix, err := formats.ReadPrefix(a.Path)
	if err != nil {
		return nil, err
	}
	return formats.Detect(r.Opts.Specs, a.Path, prefix, "")
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

func (r *Run) decode(ctx context.Context, spec *formats.Spec, a *evidence.Artifact, t Target) error {
	limits, err := r.LimitsFor(spec)
	if err != nil {
		return r.fail(t, evidence.AsFailure(err, evidence.CodeInvalidArgument).At(a.Path, a.ID))
	}
	opts, _, err := formats.EffectiveOptions(spec, r.Opts.Options)
	if err != nil {
		return r.fail(t, evidence.AsFailure(err, evidence.CodeInvalidArgument).At(a.Path, a.ID))
	}
	lim := evidence.Object{}
	for k, v := range limits {
		lim[k] = v
	}
	args := evidence.Object{"limits": lim, "options": opts}
	if err := formats.Run(ctx, spec, a, limits, r.Opts.Options, t.Sink(spec, a, args)); err != nil {
		return r.fail(t, evidence.AsFailure(err, evidence.CodeDecodeFailure).At(a.Path, a.ID))
	}
	return nil
}

func (r *Run) fail(t Target, f *evidence.Failure) error {
	if r.first == nil {
		r.first = f
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
type StreamTarget struct{ W *evidence.Writer }

func (s StreamTarget) Artifact(a *evidence.Artifact) error { return s.W.Write(a) }
func (s StreamTarget) Failure(f *evidence.Failure) error   { return s.W.Write(f) }
func (s StreamTarget) Sink(spec *formats.Spec, a *evidence.Artifact, args evidence.Object) formats.Sink {
	return &formats.StreamSink{W: s.W, Stamper: formats.Stamper{Spec: spec, Artifact: a, Arguments: args}}
}

// Stream decodes the artifact blocks of an input stream. Every input block
// is passed on first (artifacts before their tables), so provenance flows
// down the pipeline; an upstream failure block is passed on and remembered
// as this run's first failure.
func (r *Run) Stream(ctx context.Context, in *evidence.Reader, t Target, pass func(*evidence.Raw) error) error {
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
					r.first = f
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
