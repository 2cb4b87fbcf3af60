// Command flameox-preserve preserves a flameox block stream as an
// immutable, content-addressed evidence bundle.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/command"
	"github.com/flameox/flameox/internal/evidence"
	// The registry tells the bundle which formats are directories, whose
	// artifacts are kept whole (bundle.Formats).
	_ "github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/store"
	"github.com/flameox/flameox/internal/wire"
)

const description = `Preserve evidence as an immutable, content-addressed bundle.

Reads flameox blocks (capture, artifact, table, row, summary, failure) on stdin and forwards each one unchanged to stdout. Then it copies every artifact's native bytes into the bundle, checking them against the artifact id and size as it copies, writes each table's rows as Parquet, publishes DIR/bundles/<hex id>/ atomically and prints the bundle block last. Preserving the same evidence again prints the same bundle id and leaves the existing bundle as it is. Failures print a failure block on stdout and one line on stderr, and exit with the failure code's status (INVALID_ARGUMENT 2, IO_FAILURE 8, INTEGRITY_FAILURE 9, ...). A failure block in the input is preserved and forwarded and the bundle published; then the command exits with that failure's status without naming it again.

Examples:

  # keep a capture's native profile and the decoded frames together
  flameox-capture perf -- ./bench | flameox-decode | flameox-preserve --store ~/.flameox

  # preserve, then rank the same stream in one pipeline
  flameox-decode profile.cpuprofile | flameox-preserve --store ./evidence | flameox-rank --top 20

  # label bundles, then rank across the ones of one service
  flameox-capture py-spy -- python app.py | flameox-decode | flameox-preserve --store ./evidence --label service=api
  flameox-rank --bundles ./evidence --where service=api --top 20

  # analyse the preserved native bytes again, without recapturing
  flameox-decode --bundle ./evidence/bundles/<hex id>`

type cli struct {
	Store string   `required:"" type:"path" placeholder:"DIR" help:"Evidence store; the bundle is published under DIR/bundles/ (created if absent) and recorded in DIR/index/."`
	Label []string `sep:"none" placeholder:"KEY=VALUE" help:"Label the bundle in the store's index (repeatable), e.g. --label service=api; flameox-rank --bundles DIR --where service=api selects by it."`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	out := wire.NewWriter(stdout)
	fail := func(err error) int {
		f := evidence.AsFailure(err, evidence.CodeInternal)
		if !isTerminal(stdout) {
			out.Write(f)
			out.Flush()
		}
		fmt.Fprint(stderr, command.FailureText("flameox-preserve", f))
		return evidence.ExitCode(f.Code)
	}
	defer func() {
		if p := recover(); p != nil {
			code = fail(evidence.Failf(evidence.CodeInternal, "panic: %v", p))
		}
	}()
	var c cli
	exited := -1
	parser, err := kong.New(&c, append(command.VersionOptions("flameox-preserve"),
		kong.Name("flameox-preserve"),
		kong.Description(description),
		kong.Writers(stdout, stderr),
		kong.Exit(func(status int) { exited = status }))...)
	if err != nil {
		return fail(evidence.Wrap(evidence.CodeInternal, err, "command line model"))
	}
	kctx, err := parser.Parse(args)
	if exited >= 0 { // --help, --version
		return exited
	}
	if err != nil {
		return fail(evidence.Wrap(evidence.CodeInvalidArgument, err, ""))
	}
	if isTerminal(stdin) {
		return fail(command.NoInput(kctx, stderr, "pipe the output of flameox-capture or flameox-decode in"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A read blocked on stdin does not watch ctx, and closing a blocking fd
	// does not end it; so stdin is read through a pipe that cancellation
	// closes, and the copying goroutine is left to the process exit.
	pr, pw := io.Pipe()
	go func() { _, err := io.Copy(pw, stdin); pw.CloseWithError(err) }()
	defer context.AfterFunc(ctx, func() { pr.CloseWithError(ctx.Err()) })()
	labels, err := parseLabels(c.Label)
	if err != nil {
		return fail(err)
	}
	host, _ := os.Hostname() // "" when the system cannot tell
	index := func(id bundle.ID, m *bundle.Manifest) error {
		return store.Record(c.Store, store.EntryOf(id, m, labels, time.Now(), host))
	}
	_, upstream, err := bundle.PreserveThen(ctx, c.Store, pr, out, index)
	if err != nil {
		return fail(err)
	}
	if err := out.Flush(); err != nil {
		return fail(err)
	}
	if upstream != nil {
		// The failure block was forwarded (and preserved); the stage that
		// wrote it named it on stderr. The status is the first failure's.
		return evidence.ExitCode(upstream.Code)
	}
	return 0
}

// parseLabels reads --label KEY=VALUE flags; a key given twice is refused.
func parseLabels(flags []string) (map[string]string, error) {
	labels := map[string]string{}
	for _, l := range flags {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			f := evidence.Failf(evidence.CodeInvalidArgument, "--label %q: want KEY=VALUE", l)
			f.Location.Field = "label"
			return nil, f
		}
		if _, dup := labels[k]; dup {
			f := evidence.Failf(evidence.CodeInvalidArgument, "--label %s is given twice", k)
			f.Location.Field = "label." + k
			return nil, f
		}
		labels[k] = v
	}
	return labels, store.CheckLabels(labels)
}

// isTerminal reports whether s is a terminal: a person, not a program,
// is on the other end.
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	return ok && command.IsTerminal(f)
}
