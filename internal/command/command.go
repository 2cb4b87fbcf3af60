// Package command runs the body of a flameox binary: a context cancelled by
// SIGINT/SIGTERM, canonical output on stdout, and one rule for failures —
// a failure block on stdout, one line on stderr, and the exit status of the
// failure's code. A panic becomes an INTERNAL failure, never a trace dump.
// Its flags come from declarations: an operation's or provider's params,
// and the decoder options listed in the help of --option. It imports
// registry and below; only commands import it.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/wire"
)

// Reported is returned by a body that already wrote its failure blocks
// (for example one per artifact, or one passed on from upstream): the
// command exits with the first failure's status and names it on stderr,
// unless Passed: the failure came from an upstream stage, which already
// named it there, so a pipeline reports each failure once. Own, when set,
// is the first failure this stage found itself after First; it is named
// too, while First sets the status.
type Reported struct {
	First  *evidence.Failure
	Passed bool
	Own    *evidence.Failure
}

func (r *Reported) Error() string { return "failure reported: " + r.First.Error() }

// Env is what a body gets: the context, the block writer on stdout, and the
// raw streams.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	W      *wire.Writer
}

// Main runs body and returns the process exit status.
func Main(name string, body func(ctx context.Context, env *Env) error) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, W: wire.NewWriter(os.Stdout)}
	done := make(chan struct{})
	defer close(done)
	go func() {
		// A body blocked in a read that no context reaches (stdin from a
		// terminal or a silent pipe) must still end on Ctrl-C. Capture
		// needs a few seconds to end its workload's process group.
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		select {
		case <-done:
		case <-time.After(CancelGrace):
			fmt.Fprintf(os.Stderr, "%s: CANCELLED: interrupted\n", name)
			os.Exit(evidence.ExitCode(evidence.CodeCancelled))
		}
	}()
	return Run(ctx, name, env, body)
}

// CancelGrace is how long a cancelled command may take to clean up before
// it exits regardless.
const CancelGrace = 10 * time.Second

// Run is Main with injectable streams, for tests.
func Run(ctx context.Context, name string, env *Env, body func(ctx context.Context, env *Env) error) (code int) {
	defer func() {
		if p := recover(); p != nil {
			f := &evidence.Failure{Code: evidence.CodeInternal, Message: fmt.Sprintf("%s panicked: %v", name, p),
				Details: evidence.Object{"stack": string(debug.Stack())}}
			code = report(name, env, f)
		}
	}()
	err := body(ctx, env)
	if ferr := env.W.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if err == nil {
		return 0
	}
	var rep *Reported
	if errors.As(err, &rep) {
		if !rep.Passed {
			fmt.Fprintf(env.Stderr, "%s: %s\n", name, rep.First.Error())
		}
		if rep.Own != nil && rep.Own != rep.First {
			fmt.Fprintf(env.Stderr, "%s: %s\n", name, rep.Own.Error())
		}
		return evidence.ExitCode(rep.First.Code)
	}
	fc := evidence.CodeInternal
	if ctx.Err() != nil {
		fc = evidence.CodeCancelled
	}
	return report(name, env, evidence.AsFailure(err, fc))
}

func report(name string, env *Env, f *evidence.Failure) int {
	_ = env.W.Write(f)
	_ = env.W.Flush()
	fmt.Fprintf(env.Stderr, "%s: %s\n", name, f.Error())
	if f.Retry != nil {
		fmt.Fprintf(env.Stderr, "%s: to fix: %s\n", name, f.Retry.Action)
	}
	return evidence.ExitCode(f.Code)
}

// IsTerminal reports whether f is a character device (a terminal).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
