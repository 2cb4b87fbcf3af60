// Command flameox-capture runs a workload under a capture provider and
// writes canonical evidence blocks (capture, artifact, bundle, failure) to
// stdout. Provider subcommands and their flags are derived from the
// registry; the work is internal/capture's.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/alecthomas/kong"
	"golang.org/x/sys/unix"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/command"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/wire"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// common are the flags every provider subcommand takes.
type common struct {
	Request        string   `placeholder:"JSON" help:"Provider arguments as a JSON object (the same names as the provider flags, in snake_case)."`
	WorkloadBudget string   `placeholder:"K=V,..." help:"Optional budget: timeout_seconds=N,max_memory_bytes=N,max_output_bytes=N,min_free_bytes=N. Unset limits do not apply."`
	ConsoleOutput  string   `enum:"bounded,full" default:"bounded" help:"Console retention: bounded keeps 16 KiB head and tail windows per stream in the capture block; full keeps the complete streams on disk as console-stdout/console-stderr artifacts."`
	Preserve       string   `placeholder:"STORE" help:"Publish the capture block and native outputs as an evidence bundle in STORE at capture time."`
	Limits         string   `placeholder:"K=V,..." help:"Decoder limits that travel with the request; capture does not apply them (give them to flameox-decode)."`
	Cwd            string   `placeholder:"DIR" help:"Working directory of the workload (default: the current directory)."`
	Scratch        string   `placeholder:"DIR" env:"FLAMEOX_SCRATCH" help:"Scratch root for request directories (default: flameox-<uid> under the system temp dir)."`
	Quiet          bool     `help:"Do not show the workload's stdout and stderr while it runs. By default, when stderr is a terminal, both are shown there (stdout carries evidence blocks only); they are kept in the capture block either way."`
	Argv           []string `arg:"" optional:"" passthrough:"" placeholder:"-- ARGV" help:"The workload command, after --."`
}

type setupCmd struct {
	Provider string `required:"" placeholder:"NAME" help:"Provider whose managed collector to prepare."`
}

type cli struct {
	Setup setupCmd `cmd:"" help:"Prepare a managed collector's version-pinned environment (the only way one is installed)."`
}

// providerCmd is a provider's dynamic command: the common flags and the
// flags derived from the provider's params.
type providerCmd struct {
	p     *capture.Provider
	flags *command.ParamFlags
	value *providerFlags
	raw   []string // the words after --, unparsed
}

type providerFlags struct {
	Common common       `embed:""`
	Params kong.Plugins `embed:""`
}

// newProviderCmd derives a kong command from a provider's contract: its
// params become typed flags as every flameox command derives them.
func newProviderCmd(p *capture.Provider) *providerCmd {
	flags := command.NewParamFlags(p.Params, nil, "")
	return &providerCmd{p: p, flags: flags, value: &providerFlags{Params: kong.Plugins{flags.Plugin()}}}
}

func (c *providerCmd) common() *common { return &c.value.Common }

// args returns the provider arguments given as flags.
func (c *providerCmd) args() (evidence.Object, error) { return c.flags.Args() }

// example is a command line for p; flags go before the "--".
func example(p *capture.Provider, flags string) string {
	if flags != "" {
		flags += " "
	}
	return "flameox-capture " + p.Name + " " + flags + "-- " + command.ShellQuote(p.Example)
}

func describe(p *capture.Provider) string {
	var b strings.Builder
	b.WriteString(p.Selection)
	b.WriteString("\n\nOutputs:")
	for _, r := range p.Artifacts {
		fmt.Fprintf(&b, "\n  %s: %s files %s", r.Role, r.Format, r.Pattern)
	}
	if len(p.Operations) > 0 {
		b.WriteString("\nFeeds: " + strings.Join(p.Operations, ", "))
	}
	b.WriteString("\n\nExamples:\n  " + example(p, "") + " | flameox-decode | flameox-rank\n  " +
		example(p, "--workload-budget timeout_seconds=600,max_memory_bytes=8589934592 --console-output full"))
	if p.Binding.Managed {
		b.WriteString("\n\nPrepare the collector first: flameox-capture setup --provider " + p.Name)
	}
	return b.String()
}

func description() string {
	var b strings.Builder
	b.WriteString("Run a workload under a capture provider; write canonical evidence blocks to stdout.\n\nExamples:\n")
	for _, p := range registry.Providers() {
		b.WriteString("  " + example(p, "") + " | flameox-decode | flameox-rank\n")
	}
	for _, p := range registry.Providers() {
		if p.Binding.Managed {
			b.WriteString("  flameox-capture setup --provider " + p.Name + "\n")
		}
	}
	b.WriteString("  " + example(registry.Providers()[0], "--workload-budget timeout_seconds=60,max_memory_bytes=4294967296") + "\n")
	b.WriteString("\nA failure is a failure block on stdout, one line on stderr (with the fix, when there is one) and a\ntyped exit status; on a terminal the stderr line alone.")
	return b.String()
}

// parser builds the kong parser with one command per registered provider.
func parser(stdout, stderr io.Writer, exit func(int)) (*kong.Kong, *cli, map[string]*providerCmd, error) {
	var root cli
	cmds := map[string]*providerCmd{}
	opts := append(command.VersionOptions("flameox-capture"),
		kong.Name("flameox-capture"),
		kong.Description(description()),
		kong.Writers(stdout, stderr),
		kong.Exit(exit),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
	for _, p := range registry.Providers() {
		c := newProviderCmd(p)
		cmds[p.Name] = c
		opts = append(opts, kong.DynamicCommand(p.Name, p.Title, "Providers", c.value))
	}
	opts = append(opts, kong.PostBuild(func(k *kong.Kong) error {
		for _, n := range k.Model.Children {
			if c, ok := cmds[n.Name]; ok {
				n.Detail = describe(c.p)
			}
		}
		return nil
	}))
	k, err := kong.New(&root, opts...)
	return k, &root, cmds, err
}

// helpExit ends parsing after --help has been printed: kong calls its
// exit hook then, and run must return rather than exit the process.
type helpExit struct{ code int }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	w := wire.NewWriter(stdout)
	// spell names an argument as this command line took it; set once the
	// provider's flags are parsed.
	var spell func(string) string
	fail := func(err error) int {
		if os.Getenv(param.EnvSpelling) != param.SpellingRequest {
			err = command.Respell(err, spell)
		}
		f := evidence.AsFailure(err, evidence.CodeInternal)
		// On a terminal the stderr line is the report; the block is for
		// the program reading a pipe.
		if o, ok := stdout.(*os.File); !ok || !command.IsTerminal(o) {
			_ = w.Write(f)
			_ = w.Flush()
		}
		fmt.Fprint(stderr, command.FailureText("flameox-capture", f))
		return evidence.ExitCode(f.Code)
	}
	defer func() {
		if r := recover(); r != nil {
			if h, ok := r.(helpExit); ok {
				code = h.code
				return
			}
			code = fail(evidence.Failf(evidence.CodeInternal, "panic: %v", r))
		}
	}()
	k, root, cmds, err := parser(stdout, stderr, func(c int) { panic(helpExit{c}) })
	if err != nil {
		return fail(evidence.Wrap(evidence.CodeInternal, err, "build command line from the registry"))
	}
	kctx, err := k.Parse(args)
	if err != nil {
		return fail(evidence.Wrap(evidence.CodeInvalidArgument, err, ""))
	}
	cmd := kctx.Selected()
	if cmd == nil {
		return fail(evidence.Failf(evidence.CodeInvalidArgument, "no provider given (see --help)"))
	}
	if cmd.Name == "setup" {
		return setup(ctx, root.Setup.Provider, stderr, fail)
	}
	c, ok := cmds[cmd.Name]
	if !ok {
		return fail(evidence.Failf(evidence.CodeInternal, "command %s has no provider", cmd.Name))
	}
	spell = c.spell
	// The workload's words as the kernel gave them: kong turns bytes that
	// are not UTF-8 into U+FFFD, and the workload must get what was asked
	// (capture refuses such a word rather than record it wrongly).
	if i := slices.Index(args, "--"); i >= 0 {
		c.raw = args[i+1:]
	}
	req, opt, err := c.request()
	if err != nil {
		return fail(err)
	}
	if f, ok := stderr.(*os.File); ok && command.IsTerminal(f) {
		opt.Progress = stderr
		// Both workload streams go to the terminal on stderr, never to
		// stdout: stdout is the block stream even on a terminal, and a
		// human reading it sees the blocks undisturbed at the end.
		if !c.common().Quiet {
			opt.Tee = stderr
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if f, ok := stdout.(*os.File); ok {
		go watchReader(f, cancel)
	}
	_, err = capture.Run(ctx, c.p, req, opt, w)
	if errors.Is(context.Cause(ctx), errReaderGone) {
		// Nobody can read the blocks; say why on stderr (writing stdout
		// ends this process with SIGPIPE).
		fmt.Fprintf(stderr, "flameox-capture: %s: %v; the workload's process tree was ended\n", evidence.CodeCancelled, errReaderGone)
	}
	if err != nil {
		return fail(err)
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	return 0
}

// spell names a field of the capture request as the command line gives
// it: a budget limit inside --workload-budget, a provider argument as its
// flag, or inside --request when it came from there.
func (c *providerCmd) spell(field string) string {
	for _, p := range capture.BudgetParams {
		if p.Name == field {
			return "--workload-budget " + field
		}
	}
	given, _ := c.args()
	for _, p := range c.p.Params {
		if p.Name == field {
			if _, flag := given[field]; !flag && c.common().Request != "" {
				return field + " (in --request)"
			}
			return "--" + p.Flag()
		}
	}
	return field
}

// request assembles the capture request and options from the flags.
func (c *providerCmd) request() (*capture.Request, capture.Options, error) {
	cm := c.common()
	var opt capture.Options
	argv := cm.Argv
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	if len(c.raw) == len(argv) {
		argv = c.raw
	}
	if len(argv) == 0 {
		return nil, opt, evidence.Failf(evidence.CodeInvalidArgument, "no workload command: give it after --, e.g. %s", example(c.p, ""))
	}
	args, err := c.args()
	if err != nil {
		return nil, opt, err
	}
	if cm.Request != "" {
		v, err := evidence.ParseValue([]byte(cm.Request), 0)
		obj, ok := v.(evidence.Object)
		if err != nil || !ok {
			return nil, opt, evidence.Failf(evidence.CodeInvalidArgument, "--request must be a JSON object of %s arguments", c.p.Name)
		}
		for k, v := range obj {
			if _, dup := args[k]; dup {
				return nil, opt, &evidence.Failure{Code: evidence.CodeInvalidArgument,
					Message: fmt.Sprintf("argument %s given both as a flag and in --request", k), Location: evidence.Location{Field: k}}
			}
			args[k] = v
		}
	}
	cwd := cm.Cwd
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return nil, opt, evidence.Wrap(evidence.CodeIOFailure, err, "working directory")
		}
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return nil, opt, evidence.Wrap(evidence.CodeInvalidArgument, err, "--cwd")
	}
	if opt.Budget, err = capture.ParseBudget(cm.WorkloadBudget); err != nil {
		return nil, opt, err
	}
	limits, err := capture.ParseKeyValues(cm.Limits, "limits")
	if err != nil {
		return nil, opt, err
	}
	for k, v := range limits {
		if n, ok := evidence.AsInt(v); !ok || n < 0 {
			return nil, opt, evidence.Failf(evidence.CodeInvalidArgument, "limits: %s=%v is not a non-negative integer", k, v)
		}
	}
	opt.Console = cm.ConsoleOutput
	opt.Preserve = cm.Preserve
	opt.ScratchRoot = cm.Scratch
	req := &capture.Request{Provider: c.p.Name, Argv: argv, Cwd: cwd, Args: args}
	if len(limits) > 0 {
		req.Limits = limits
	}
	return req, opt, nil
}

// setup prepares a managed provider's collector. Progress goes to stderr;
// stdout carries only a failure block when it fails.
func setup(ctx context.Context, name string, stderr io.Writer, fail func(error) int) int {
	p, ok := registry.Provider(name)
	if !ok {
		var names []string
		for _, q := range registry.Providers() {
			names = append(names, q.Name)
		}
		return fail(evidence.Failf(evidence.CodeInvalidArgument, "unknown provider %q (known: %s)", name, strings.Join(names, ", ")))
	}
	if !p.Binding.Managed || p.Binding.Setup == nil {
		msg := fmt.Sprintf("provider %s has no managed collector to set up: it uses %s", name, p.Binding.Executable)
		if p.Binding.Guidance != "" {
			msg += "; " + p.Binding.Guidance
		}
		return fail(evidence.Failf(evidence.CodeInvalidArgument, "%s", msg))
	}
	r, err := capture.SetupManaged(ctx, *p.Binding.Setup, stderr)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stderr, "flameox-capture: %s ready: %s %s at %s (sha256 %s)\n", name, p.Binding.Setup.Package, r.Version, r.Executable.Path, r.Executable.SHA256)
	return 0
}

var errReaderGone = errors.New("the reader of stdout went away")

// watchReader cancels the capture when stdout is a pipe or socket whose
// reading end has closed: the caller (flameox-mcp killed with SIGKILL, a
// pipeline whose consumer died) can no longer receive the evidence, and
// the workload must not run on unowned. poll(2) reports POLLERR/POLLHUP
// on such a descriptor without any event asked for. A file or terminal
// never reports it, so a capture writing to a file (nohup) runs on.
func watchReader(f *os.File, cancel context.CancelCauseFunc) {
	st, err := f.Stat()
	if err != nil || st.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return
	}
	fds := []unix.PollFd{{Fd: int32(f.Fd())}}
	for {
		n, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return
		}
		if n > 0 {
			if fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
				cancel(errReaderGone)
			}
			return // POLLNVAL: the descriptor is gone, nothing more to watch
		}
	}
}
