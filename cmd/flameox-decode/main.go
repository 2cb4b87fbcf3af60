// Command flameox-decode turns native artifacts into typed, canonical tables.
package main

import (
	"context"
	"os"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/command"
	"github.com/flameox/flameox/internal/decode"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/wire"
)

const description = `Decode native artifacts into typed, canonical JSONL tables.

With PATH arguments, each path is opened once and decoded; its SHA-256 is
computed in the same read, and its artifact block, which carries that
digest, precedes its tables. Without them, artifact blocks are read from
stdin (as written by flameox-capture), every input block is passed on, and
each artifact's recorded digest is verified as it is decoded.

Examples:
  flameox-decode app.cpuprofile
  flameox-capture node-cpu-profile -- node app.js | flameox-decode | flameox-rank
  flameox-decode --format v8-cpuprofile --limits max_nodes=100000 profile.json
  flameox-decode --bundle ~/.flameox/store/bundles/sha256:...`

type cli struct {
	Format string            `help:"Decode every artifact as this format (default: recorded format, else detect by suffix and content)." placeholder:"NAME"`
	Limits map[string]int64  `help:"Raw parser ceilings, e.g. max_nodes=100000,max_bytes=1073741824 (see docs/support.md)." mapsep:"," placeholder:"K=V,..."`
	Option map[string]string `help:"Decoder options, e.g. source_root=/abs/src." mapsep:"," placeholder:"K=V,..."`
	Bundle string            `help:"Re-analyse the native artifacts of a preserved bundle directory (verified before use) without recapturing." placeholder:"DIR" type:"path"`
	Paths  []string          `arg:"" optional:"" help:"Artifact files. Without them, artifact blocks are read from stdin." type:"path"`
}

func main() {
	os.Exit(command.Main("flameox-decode", run))
}

func run(ctx context.Context, env *command.Env) error {
	var c cli
	if _, err := command.Parse(&c, "flameox-decode", description, os.Args[1:]); err != nil {
		return err
	}
	r := &decode.Run{Opts: decode.Options{Specs: registry.Formats(), Format: c.Format, Limits: c.Limits, Options: command.OptionValues(c.Option)}}
	if err := r.Opts.Check(); err != nil {
		return err
	}
	t := decode.StreamTarget{W: env.W}
	var err error
	switch {
	case c.Bundle != "" && len(c.Paths) > 0:
		return evidence.Failf(evidence.CodeInvalidArgument, "--bundle and PATH arguments are exclusive")
	case c.Bundle != "":
		err = decodeBundle(ctx, r, c.Bundle, env.W)
	case len(c.Paths) > 0:
		for _, p := range c.Paths {
			if err = r.Path(ctx, p, t); err != nil {
				break
			}
		}
	default:
		err = r.Stream(ctx, wire.NewReader(env.Stdin), t, func(raw *evidence.Raw) error { return env.W.Write(raw) })
	}
	if f := r.First(); err != nil && f != nil {
		// The first failure sets the status; one of this run's own that
		// ended it later is written and named as well.
		own := evidence.AsFailure(err, evidence.CodeInternal)
		if own != f {
			if werr := env.W.Write(own); werr != nil {
				return werr
			}
		}
		return &command.Reported{First: f, Passed: r.FirstPassed(), Own: own}
	}
	if err != nil {
		return err
	}
	if f := r.First(); f != nil {
		return &command.Reported{First: f, Passed: r.FirstPassed(), Own: r.FirstOwn()}
	}
	return nil
}

// decodeBundle re-emits a verified bundle's capture and artifact blocks and
// decodes its native bytes in place. The analysis failures preserved with
// it are history, not part of this analysis, so they are not repeated.
func decodeBundle(ctx context.Context, r *decode.Run, dir string, w *wire.Writer) error {
	b, err := bundle.Open(dir)
	if err != nil {
		return err
	}
	for _, c := range b.Captures() {
		if err := w.Write(c); err != nil {
			return err
		}
	}
	t := decode.StreamTarget{W: w}
	for _, a := range b.Artifacts() {
		if err := w.Write(a); err != nil {
			return err
		}
		if err := r.Artifact(ctx, a, t); err != nil {
			return err
		}
	}
	return nil
}
