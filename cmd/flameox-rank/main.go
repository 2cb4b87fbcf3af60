// Command flameox-rank selects a projection of decoded tables, then bounds
// and ranks it.
package main

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/flameox/flameox/internal/command"
	"github.com/flameox/flameox/internal/decode"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/rank"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/render"
	"github.com/flameox/flameox/internal/wire"
)

const description = `Select a projection of decoded tables, then bound and rank it.

Reads decoded tables on stdin (from flameox-decode), or decodes PATH
arguments itself. The operation is inferred from the input tables unless
--operation names it. Filters select before --top bounds, so rows_observed,
complete and truncation describe the selected population.

Output is canonical JSONL when stdout is a pipe and an aligned table on a
terminal (--format overrides).

Examples:
  flameox-rank app.cpuprofile
  flameox-decode app.cpuprofile | flameox-rank --top 10 --file-pattern 'app\.js$'
  flameox-rank --operation summarize_cpu_caller_edges --callee-pattern '^parse$' prof.pstats
  flameox-rank --request '{"top":5,"metric":"cumulative"}' out.pstats
  flameox-rank --baseline before.cpuprofile after.cpuprofile
  flameox-capture node-cpu-profile -- node app.js | flameox-decode | flameox-rank --format table
  flameox-rank --bundles ~/.flameox --where service=api --where format=pstats --top 20`

type cli struct {
	Operation      string            `help:"Operation to run (default: inferred from the input tables)." placeholder:"NAME"`
	Request        string            `help:"Operation arguments as one JSON object (the MCP form); flags may add to it." placeholder:"JSON"`
	Format         string            `help:"Output: jsonl, table, or auto (table on a terminal); folded, svg, html or pprof write the call stacks (folded stacks, a flame graph, a page, a profile.proto)." enum:"auto,jsonl,table,folded,svg,html,pprof" default:"auto"`
	Icicle         bool              `help:"With --format svg or html: draw the graph top-down (an icicle graph)."`
	ArtifactFormat string            `help:"Decode PATH arguments as this format (default: detect)." placeholder:"NAME"`
	Limits         map[string]int64  `help:"Raw parser ceilings for PATH arguments, e.g. max_nodes=100000." mapsep:"," placeholder:"K=V,..."`
	Option         map[string]string `help:"Decoder options for PATH arguments." mapsep:"," placeholder:"K=V,..."`
	Bundles        string            `help:"Rank the preserved tables of the bundles of this store (flameox-preserve --store), without decoding native bytes." placeholder:"STORE" type:"path"`
	Where          []string          `sep:"none" help:"With --bundles: only bundles with an index entry where KEY=VALUE (a --label, or host, provider, format, outcome, table, bundle_id), or created>=TIME, created<TIME (RFC 3339 or a date); repeatable, all must hold." placeholder:"KEY=VALUE"`
	Params         kong.Plugins      `embed:""`
	Paths          []string          `arg:"" optional:"" help:"Artifacts to decode and rank. Without them, decoded tables are read from stdin." type:"path"`
}

func main() {
	os.Exit(command.Main("flameox-rank", run))
}

// unionParams lists every operation's parameters once, with the
// operations that accept each.
func unionParams() ([]param.Param, map[string][]string) {
	var out []param.Param
	ops := map[string][]string{}
	for _, o := range registry.Operations() {
		for _, p := range o.Params() {
			if _, seen := ops[p.Name]; !seen {
				out = append(out, p)
			}
			ops[p.Name] = append(ops[p.Name], o.Name)
		}
	}
	return out, ops
}

func run(ctx context.Context, env *command.Env) error {
	params, ops := unionParams()
	flags := command.NewParamFlags(params, func(p param.Param) string {
		return "[" + strings.Join(ops[p.Name], ", ") + "]"
	}, "Operation arguments")
	c := cli{Params: kong.Plugins{flags.Plugin()}}
	kctx, err := command.Parse(&c, "flameox-rank", description, os.Args[1:])
	if err != nil {
		return err
	}
	if len(c.Paths) == 0 && c.Bundles == "" && env.StdinTerminal {
		return command.NoInput(kctx, env.Stderr, "give PATH arguments, or pipe decoded tables in (flameox-decode PATH | flameox-rank)")
	}
	given, err := flags.Args()
	if err != nil {
		return err
	}
	args, err := command.MergeRequest(c.Request, given)
	if err != nil {
		return err
	}
	if env.Spell != nil {
		env.Spell = func(field string) string {
			if _, flag := given[field]; !flag && args[field] != nil {
				return field + " (in --request)"
			}
			return command.Flag(field)
		}
	}
	// A comparison reads its "-" side from stdin; with no PATH argument
	// the new side is stdin.
	if len(c.Paths) == 0 && c.Bundles == "" && args["baseline"] != nil {
		c.Paths = []string{rank.StdinSide}
	}
	req := rank.Request{Operation: c.Operation, Args: args, Stdin: env.Stdin, Decode: decode.Options{
		Specs: registry.Formats(), Format: c.ArtifactFormat, Limits: c.Limits, Options: command.OptionValues(c.Option)}}
	picture := pictureOutput(c.Format, c.Icicle, env.Stdout)
	if picture != nil {
		req.Output = c.Format
	}

	var out rank.Output = &rank.JSONL{W: env.W}
	sp := spelled{spell: env.Spell, shown: map[*evidence.Failure]bool{}}
	switch {
	case picture != nil:
		out = picture
		sp.stderr = env.Stderr
		// Stdout carries a picture or a profile, not blocks: a failure
		// is its one stderr line, never a block appended to the file.
		env.StdoutTerminal = true
	case c.Icicle:
		return &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: "--icicle draws a graph: give it with --format svg or --format html", Location: evidence.Location{Field: "icicle"}}
	case c.Format == "table" || (c.Format == "auto" && command.IsTerminal(os.Stdout)):
		out = &render.Text{W: env.Stdout}
		sp.stderr = env.Stderr
	}
	sp.Output = out
	gate := &gated{Output: sp}
	out = gate
	if fl, ferr := fleet(c.Bundles, c.Where, len(c.Paths)); ferr != nil {
		err = ferr
	} else if fl != nil {
		err = rank.Bundles(ctx, req, *fl, out)
	} else if len(c.Paths) > 0 {
		err = rank.Paths(ctx, req, c.Paths, out)
	} else {
		err = rank.Stream(ctx, req, wire.NewReader(env.Stdin), out)
	}
	if f := rank.Upstream(err); f != nil {
		// A failure already shown on stderr by the table view is not
		// named again.
		own := rank.Own(err)
		if sp.shown[own] {
			own = nil
		}
		return &command.Reported{First: f, Passed: rank.Passed(err) || sp.shown[f], Own: own}
	}
	if err == nil {
		return gate.status()
	}
	return err
}

// gated keeps the operation and summary of the result it passes on, for
// an operation whose result sets the exit status (Operation.Exit).
type gated struct {
	rank.Output
	op  string
	sum *evidence.Summary
}

func (g *gated) Begin(t *evidence.Table) error {
	g.op = t.Operation
	return g.Output.Begin(t)
}

func (g *gated) End(s *evidence.Summary) error {
	g.sum = s
	return g.Output.End(s)
}

func (g *gated) status() error {
	op, ok := registry.OperationByName(g.op)
	if !ok || op.Exit == nil || g.sum == nil {
		return nil
	}
	if code, note := op.Exit(g.sum); code != 0 {
		return &command.Status{Code: code, Note: note}
	}
	return nil
}

// spelled passes this command's own failures (decoding PATH arguments)
// with their arguments named as its flags; blocks read from stdin are
// another command's words and pass unchanged.
//
// In the table view (stderr set) an own failure is its one stderr line,
// with location and fix, as it happens, not also a note in the table; a
// failure read from stdin stays a note, as its stage already named it.
type spelled struct {
	rank.Output
	spell  func(string) string
	stderr io.Writer
	shown  map[*evidence.Failure]bool // failures written to stderr
}

func (s spelled) Pass(b evidence.Block) error {
	if f, ok := b.(*evidence.Failure); ok {
		g := command.Respelled(f, s.spell)
		if s.stderr != nil {
			s.shown[f] = true
			_, err := io.WriteString(s.stderr, command.FailureText("flameox-rank", g))
			return err
		}
		b = g
	}
	return s.Output.Pass(b)
}
