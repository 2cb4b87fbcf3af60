// Package mcpserver is flameox's MCP server: one analysis tool per registry
// operation and one capture tool per registry provider, with input schemas
// generated from the registry's argument models. A call is validated
// strictly in the server, then runs the flameox commands as subprocesses
// connected by OS pipes (flameox-rank for an analysis; flameox-capture |
// flameox-decode | flameox-rank for a capture), each in its own process
// group, so that a cancelled request ends every process it started. It
// imports registry and below.
package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/registry"
)

// Options configure a Server. Zero values take the defaults.
type Options struct {
	// BinDir holds flameox-rank, flameox-decode and flameox-capture.
	// Default: BinDir().
	BinDir string
	// Grace is how long a cancelled request's processes have between
	// SIGTERM and SIGKILL (default 5s): flameox-capture uses it to end its
	// workload and record the cancellation.
	Grace time.Duration
	// TextBound bounds the JSONL text content (default DefaultTextBound).
	TextBound int
	// ResultBound bounds retained result rows (default DefaultResultBound).
	ResultBound int64
	// Version is reported to clients.
	Version string
	// Operations and Providers default to the registry's lists.
	Operations []*registry.Operation
	Providers  []*capture.Provider
	// Scratch is where the session's scratch directory is made (default:
	// $FLAMEOX_SCRATCH, else flameox-<uid> under the temp dir).
	Scratch string
	// Stores are evidence stores whose bundles are listed as resources
	// from the start; a preservation adds its store.
	Stores []string
}

// Server is a configured flameox MCP server.
type Server struct {
	opts Options
	run  *runner
	sess *session
	// inflight counts the calls being handled, so Close waits for them
	// to end (and to remove their scratch) before removing the session's.
	inflight sync.WaitGroup
	mcp      *server.MCPServer
	tools    []mcp.Tool
	// slots bounds the calls that run at once (ServeStdio's concurrency).
	// A call waits for a slot inside its handler, where its context is
	// already registered for notifications/cancelled, so a call cancelled
	// while it waits ends there and starts nothing. Nil: no bound.
	slots chan struct{}
}

// BinDir is where the flameox commands are: $FLAMEOX_BIN_DIR when set,
// else the directory of the running executable.
func BinDir() (string, error) {
	if d := os.Getenv("FLAMEOX_BIN_DIR"); d != "" {
		return filepath.Abs(d)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("mcpserver: locate executable: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Dir(exe), nil
}

// instructions is what every tool shares, said once: the tools' schemas
// and descriptions leave it out. Instructions adds the argument
// descriptions several tools share.
const instructions = `flameox turns profiler, tracer and test-runner outputs into typed, bounded evidence.
Analysis tools (summarize_*, inspect_*, preview_*, compare_*) read artifacts: paths (absolute, one format;
detected, or format to force one), limits (parser ceilings by name; LIMIT_EXCEEDED names the one crossed,
its value and the observed value: retry higher), options (decoder options; the schema names them), detail
(compact, the default, or full: every block whole and JSONL text).
Capture tools (capture_*) run a workload (argv, no shell; cwd absolute) under a collector, then analyze its
outputs in the same call: analysis holds operation (the analysis tool to run; default the first) and that
tool's arguments (limits, options, top...). budget: {timeout_seconds, max_memory_bytes, max_output_bytes,
min_free_bytes}; crossing one ends the workload with a limit receipt. console_output: bounded or full.
preserve: an absolute evidence store dir, published at capture time. E.g. {"argv":["./bench"],
"budget":{"timeout_seconds":600},"analysis":{"top":10}}. A capture returns a session handle: reanalyze it
with corrected arguments instead of re-running the workload, preserve it to an evidence store (a bundle,
then a resource flameox://bundle/{id}). PROVIDER_UNAVAILABLE: call prepare_providers.
Results: one text line per row (tab-separated, with the table's header lines) and structuredContent
{ok, operation, provider, tables:[{name, columns, rows (arrays), summary}], artifacts (full ids once,
id = the short prefix rows use), capture, handle, bundles}. summary.complete says whether evidence is
whole. A failure: isError, structuredContent.failure {code, message, location, retry, limit,
details.partial_evidence, details.handle}.
Schemas: an omitted boolean is false unless a default says otherwise; regular expressions are RE2;
docs/support.md has every format, option, limit and argument in full.`

// Instructions is the server's instructions with the shared argument
// descriptions (shareDocs) appended, one line.
func Instructions(shared [][2]string) string {
	if len(shared) == 0 {
		return instructions
	}
	parts := make([]string, len(shared))
	for i, d := range shared {
		parts[i] = d[0] + ": " + d[1]
	}
	return instructions + "\nArguments of that name, where a tool's schema leaves them undescribed: " + strings.Join(parts, "; ") + "."
}

// New builds the server and generates its tools. It fails when a
// parameter collides with a field the server owns.
func New(opts Options) (*Server, error) {
	if opts.BinDir == "" {
		d, err := BinDir()
		if err != nil {
			return nil, err
		}
		opts.BinDir = d
	}
	if opts.Grace <= 0 {
		opts.Grace = 5 * time.Second
	}
	if opts.TextBound <= 0 {
		opts.TextBound = DefaultTextBound
	}
	if opts.ResultBound <= 0 {
		opts.ResultBound = DefaultResultBound
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Operations == nil {
		opts.Operations = registry.Operations()
	}
	if opts.Providers == nil {
		opts.Providers = registry.Providers()
	}
	s := &Server{opts: opts, run: &runner{binDir: opts.BinDir, grace: opts.Grace}, sess: newSession(opts.Scratch, slices.Clone(opts.Stores))}
	// Every schema is made first: the argument descriptions several tools
	// share are then said once, in the instructions.
	anIn := make([]evidence.Object, len(opts.Operations))
	for i, op := range opts.Operations {
		in, err := analysisSchema(op)
		if err != nil {
			return nil, err
		}
		anIn[i] = in
	}
	capOps := make([][]*registry.Operation, len(opts.Providers))
	capIn := make([]evidence.Object, len(opts.Providers))
	for i, p := range opts.Providers {
		for _, name := range p.Operations {
			k := indexOp(opts.Operations, name)
			if k < 0 {
				return nil, fmt.Errorf("mcpserver: provider %s feeds unknown operation %s", p.Name, name)
			}
			capOps[i] = append(capOps[i], opts.Operations[k])
		}
		in, err := captureSchema(p, capOps[i])
		if err != nil {
			return nil, err
		}
		capIn[i] = in
	}
	shared := shareDocs(append(slices.Clone(anIn), capIn...))
	s.mcp = server.NewMCPServer("flameox", opts.Version,
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, true),
		server.WithInstructions(Instructions(shared)),
		server.WithRecovery())
	for i, op := range opts.Operations {
		in := anIn[i]
		t, err := newTool(op.Name, op.Title, analysisDescription(op, opts.Providers), in, true)
		if err != nil {
			return nil, err
		}
		accepted := sortedNames(in["properties"].(evidence.Object))
		s.add(t, &job{operation: op.Name}, func(args evidence.Object) (*job, error) { return prepareAnalysis(op, accepted, args) }, nil)
	}
	for i, p := range opts.Providers {
		ops, in := capOps[i], capIn[i]
		t, err := newTool(CaptureToolName(p.Name), p.Title, captureDescription(p, ops), in, false)
		if err != nil {
			return nil, err
		}
		accepted := sortedNames(in["properties"].(evidence.Object))
		nested := nestedNames(p, ops)
		s.add(t, &job{provider: p.Name}, func(args evidence.Object) (*job, error) {
			j, err := prepareCapture(p, ops, accepted, nested, args)
			if err != nil {
				return nil, err
			}
			return s.stageCapture(j)
		}, func(j *job, c *collector, o *outcome) { s.afterCapture(p, j, c, o) })
	}
	if err := s.addServiceTools(); err != nil {
		return nil, err
	}
	s.addResources()
	return s, nil
}

// nestedNames are the server's fields of a capture's analysis object:
// operation, and limits and options where the provider's formats take any.
func nestedNames(p *capture.Provider, ops []*registry.Operation) []string {
	out := []string{"operation"}
	if limitsSchema(specsOf(registry.ProviderFormats(p))) != nil {
		out = append(out, "limits")
	}
	var fmts []string
	for _, op := range ops {
		fmts = append(fmts, feeds(p, op)...)
	}
	if optionsSchema(specsOf(fmts)) != nil {
		out = append(out, "options")
	}
	return out
}

func indexOp(ops []*registry.Operation, name string) int {
	for i, o := range ops {
		if o.Name == name {
			return i
		}
	}
	return -1
}

// add registers a tool. ident names the tool's operation or provider in
// results of calls that fail validation, before a job exists.
// after, when set, runs once the job's stages have ended, before the
// result is built: it keeps or removes the request's scratch.
func (s *Server) add(t mcp.Tool, ident *job, prepare func(evidence.Object) (*job, error), after func(*job, *collector, *outcome)) {
	s.tools = append(s.tools, t)
	s.mcp.AddTool(t, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.inflight.Add(1)
		defer s.inflight.Done()
		args, err := parseArguments(req)
		var j *job
		if err == nil {
			j, err = prepare(args)
		}
		if err != nil {
			o := &outcome{start: evidence.AsFailure(err, evidence.CodeInvalidArgument)}
			return newCollector(s.opts.ResultBound).result(ident, o, s.opts.TextBound), nil
		}
		if j.release != nil {
			defer j.release()
		}
		// The decoding commands share the session's conversion cache
		// (perf script's output, say), which goes with the session.
		if root, err := s.sess.rootDir(); err == nil {
			for i := range j.stages {
				if j.stages[i].bin != binCapture {
					j.stages[i].env = append(j.stages[i].env, capture.EnvScratch+"="+root)
				}
			}
		}
		c := newCollector(s.opts.ResultBound)
		c.dropTables = j.dropTables
		finish := func(o *outcome) *mcp.CallToolResult {
			if after != nil {
				after(j, c, o)
			}
			return c.result(j, o, s.opts.TextBound)
		}
		if s.slots != nil {
			select {
			case s.slots <- struct{}{}:
				defer func() { <-s.slots }()
			case <-ctx.Done():
				o := &outcome{start: &evidence.Failure{Code: evidence.CodeCancelled,
					Message: "the request was cancelled while it waited for a free slot (--concurrency); nothing was started"}, cancelled: true}
				return finish(o), nil
			}
		}
		return finish(s.run.run(ctx, j, c)), nil
	})
}

// stageCapture gives a validated capture its own scratch root in the
// session, whose directory becomes the handle's if the capture completes.
func (s *Server) stageCapture(j *job) (*job, error) {
	id, dir, err := s.sess.requestDir()
	if err != nil {
		return nil, err
	}
	j.handle, j.scratch = id, dir
	j.stages[0].env = append(j.stages[0].env, capture.EnvScratch+"="+dir)
	return j, nil
}

// afterCapture keeps a completed capture as a handle (or removes the
// scratch of one that did not complete or was cancelled), registers what
// it preserved, and says in MCP's words how to retry.
func (s *Server) afterCapture(p *capture.Provider, j *job, c *collector, o *outcome) {
	h := s.sess.adopt(j.handle, j.scratch, p.Name, c, o.cancelled)
	s.registerBundles(j, c)
	if h != nil {
		j.extra = evidence.Object{"handle": h.value()}
		j.note = fmt.Sprintf("handle %s: reanalyze or preserve it without running the workload again; it expires %s", h.id, expiry)
	}
	j.respell = func(f evidence.Object) {
		details, _ := f["details"].(evidence.Object)
		switch {
		case h != nil:
			details["handle"] = h.id
			action := fmt.Sprintf("call reanalyze with handle %q and corrected analysis arguments; the workload does not run again", h.id)
			if l, ok := details["limit"].(evidence.Object); ok && f["code"] == string(evidence.CodeLimitExceeded) {
				action = fmt.Sprintf("call reanalyze with handle %q and analysis.limits.%v above %v; the workload does not run again",
					h.id, l["name"], l["value"])
			}
			f["retry"] = evidence.Object{"action": action, "tool": ToolReanalyze, "arguments": evidence.Object{"handle": h.id}}
		case f["code"] == string(evidence.CodeProviderUnavailable) && p.Binding.Managed:
			r, _ := f["retry"].(evidence.Object)
			retry := evidence.Object{"action": fmt.Sprintf("call %s with providers [%q], then call %s again", ToolPrepare, p.Name, CaptureToolName(p.Name)),
				"tool": ToolPrepare, "arguments": evidence.Object{"providers": []any{p.Name}}}
			if r != nil && r["argv"] != nil {
				retry["argv"] = r["argv"]
			}
			f["retry"] = retry
		}
	}
}

// Tools returns the generated tools, in registration order.
func (s *Server) Tools() []mcp.Tool { return s.tools }

// ServeStdio serves one client on in/out until in ends or ctx is
// cancelled; either cancels every request in flight. Up to concurrency
// tool calls run at once; the others wait, cancellable, for a slot.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, concurrency int, logw io.Writer) error {
	s.slots = make(chan struct{}, max(concurrency, 1))
	ss := server.NewStdioServer(s.mcp)
	// mcp-go's workers take a call off its queue before the call's context
	// exists, so a call waiting in that queue cannot be cancelled. Its
	// largest pool hands each call to a handler at once, and the handler
	// waits for one of s.slots; only beyond poolSize calls in flight does
	// a call wait uncancellably in mcp-go's queue.
	server.WithWorkerPoolSize(poolSize)(ss)
	if logw != nil {
		server.WithErrorLogger(log.New(logw, "flameox-mcp: ", log.LstdFlags))(ss)
	}
	w := &lockedWriter{w: out}
	defer s.Close()
	return ss.Listen(ctx, &batchFilter{in: bufio.NewReader(in), out: w}, w)
}

// Close ends the session: every handle expires and the session's scratch
// is removed. ServeStdio closes it when the client goes.
// Calls still in flight (their context ended with the client's) are
// waited for, up to twice the grace period, which bounds their end.
func (s *Server) Close() {
	done := make(chan struct{})
	go func() { s.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2*s.opts.Grace + 5*time.Second):
	}
	s.sess.close()
}

// poolSize is mcp-go's largest worker pool.
const poolSize = 100

// BinaryNames lists the commands the server composes.
func BinaryNames() []string { return []string{binRank, binDecode, binCapture} }

// Missing lists composed commands absent from the bin dir.
func (s *Server) Missing() []string {
	var out []string
	for _, b := range BinaryNames() {
		if _, f := s.run.resolve(b); f != nil {
			out = append(out, b)
		}
	}
	return out
}

// BinDir is the directory the server runs commands from.
func (s *Server) BinDir() string { return s.opts.BinDir }
