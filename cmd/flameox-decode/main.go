// Command flameox-decode turns native artifacts into typed, canonical tables.
package main

import (
	"context"
	"io"
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
  flameox-decode --artifact-format v8-cpuprofile --limits max_nodes=100000 profile.json
  flameox-decode --bundle ./evidence/bundles/<hex id>   # the id of the bundle block flameox-preserve prints`

type cli struct {
	ArtifactFormat string            `help:"Decode every artifact as this format (default: recorded format, else detect by suffix and content). It is --artifact-format on every command; flameox-decode's former --format is refused, because --format names flameox-rank's output." placeholder:"NAME"`
	Format         string            `hidden:"" help:"Refused: renamed --artifact-format."`
	Limits         map[string]int64  `help:"Raw parser ceilings, e.g. max_nodes=100000,max_bytes=1073741824 (see docs/support.md)." mapsep:"," placeholder:"K=V,..."`
	Option         map[string]string `help:"Decoder options, e.g. source_root=/abs/src." mapsep:"," placeholder:"K=V,..."`
	Bundle         string            `help:"Re-analyse the native artifacts of a preserved bundle directory (verified before use) without recapturing." placeholder:"DIR" type:"path"`
	Paths          []string          `arg:"" optional:"" help:"Artifact files. Without them, artifact blocks are read from stdin." type:"path"`
}

func main() {
	os.Exit(command.Main("flameox-decode", run))
}

func run(ctx context.Context, env *command.Env) error {
	var c cli
	kctx, err := command.Parse(&c, "flameox-decode", description, os.Args[1:])
	if err != nil {
		return err
	}
	if len(c.Paths) == 0 && c.Bundle == "" && env.StdinTerminal {
		return command.NoInput(kctx, env.Stderr, "give PATH arguments or --bundle DIR, or pipe flameox-capture's output in")
	}
	if c.Format != "" {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument, Location: evidence.Location{Field: "format"},
			Message: "flameox-decode has no --format: the artifact's format is --artifact-format " + c.Format + " (on every command; --format names flameox-rank's output)"}
	}
	r := &decode.Run{Opts: decode.Options{Specs: registry.Formats(), Format: c.ArtifactFormat, Limits: c.Limits, Options: command.OptionValues(c.Option)}}
	if err := r.Opts.Check(); err != nil {
		return err
	}
	var t decode.Target = spelledTarget{decode.StreamTarget{W: env.W}, env.Spell}
	if env.StdoutTerminal {
		t = terminalTarget{StreamTarget: decode.StreamTarget{W: env.W}, stderr: env.Stderr, spell: env.Spell}
	}
	switch {
	case c.Bundle != "" && len(c.Paths) > 0:
		return evidence.Failf(evidence.CodeInvalidArgument, "--bundle and PATH arguments are exclusive")
	case c.Bundle != "":
		err = decodeBundle(ctx, r, c.Bundle, env.W, t)
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
		return &command.Reported{First: f, Shown: env.StdoutTerminal, Passed: r.FirstPassed(), Own: own}
	}
	if err != nil {
		return err
	}
	if f := r.First(); f != nil {
		return &command.Reported{First: f, Shown: env.StdoutTerminal, Passed: r.FirstPassed(), Own: r.FirstOwn()}
	}
	return nil
}

// terminalTarget shows an artifact's failure as its stderr line, not as a
// JSON block among the tables, when a person reads stdout.
type terminalTarget struct {
	decode.StreamTarget
	stderr io.Writer
	spell  func(string) string
}

func (t terminalTarget) Failure(f *evidence.Failure) error {
	f = command.Respelled(f, t.spell)
	_, err := io.WriteString(t.stderr, command.FailureText("flameox-decode", f))
	return err
}

// spelledTarget writes an artifact's failure block with its arguments
// named as this command's flags.
type spelledTarget struct {
	decode.StreamTarget
	spell func(string) string
}

func (t spelledTarget) Failure(f *evidence.Failure) error {
	return t.StreamTarget.Failure(command.Respelled(f, t.spell))
}

// decodeBundle re-emits a verified bundle's capture and artifact blocks and
// decodes its native bytes in place. The analysis failures preserved with
// it are history, not part of this analysis, so they are not repeated.
func decodeBundle(ctx context.Context, r *decode.Run, dir string, w *wire.Writer, t decode.Target) error {
	b, err := bundle.Open(dir)
	if err != nil {
		return err
	}
	for _, c := range b.Captures() {
		if err := w.Write(c); err != nil {
			return err
		}
	}
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
