// Package command runs the body of a flameox binary: a context cancelled by
// SIGINT/SIGTERM, canonical output on stdout, and one rule for failures —
// a failure block on stdout, one line on stderr (and the fix, when the
// failure has one), and the exit status of the failure's code. When stdout
// is a terminal the block is left out: a person reads the stderr line, and
// a JSON block beside it says the same thing twice. A panic becomes an
// INTERNAL failure, never a trace dump.
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
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/render"
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
	// Shown: the body has already shown every failure on stderr (its
	// stdout is a terminal), so nothing more is printed.
	Shown bool
}

func (r *Reported) Error() string { return "failure reported: " + r.First.Error() }

// Status is returned by a body whose run succeeded and wrote its result,
// but whose result asks for a non-zero exit status (compare_benchmarks
// found a significant regression): the command prints Note on stderr and
// exits with Code. It is never a failure: no failure block is written.
type Status struct {
	Code int
	Note string
}

func (s *Status) Error() string { return s.Note }

// Env is what a body gets: the context, the block writer on stdout, and the
// raw streams.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	W      *wire.Writer
	// Spell names a request field as this command's arguments spell it
	// (Flag, unless the body knows better); failures about arguments are
	// respelled with it before they are reported. Nil keeps the request
	// model's names (param.EnvSpelling).
	Spell func(field string) string
	// StdinTerminal and StdoutTerminal say whether the streams are
	// terminals: no input is coming on a terminal stdin that nobody types
	// into, and a failure on a terminal stdout is the stderr line only.
	StdinTerminal, StdoutTerminal bool
}

// Main runs body and returns the process exit status.
func Main(name string, body func(ctx context.Context, env *Env) error) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	growPipe(os.Stdout)
	env := &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, W: wire.NewWriter(os.Stdout),
		Spell: Flag, StdinTerminal: IsTerminal(os.Stdin), StdoutTerminal: IsTerminal(os.Stdout)}
	if os.Getenv(param.EnvSpelling) == param.SpellingRequest {
		env.Spell = nil
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		// A body blocked in a read that no context reaches (a silent
		// pipe on stdin) must still end on Ctrl-C, promptly: decode and
		// rank have no workload to end, only output to flush.
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
const CancelGrace = time.Second

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
	var st *Status
	if errors.As(err, &st) {
		fmt.Fprintf(env.Stderr, "%s: %s\n", name, render.Safe(oneLine(st.Note)))
		return st.Code
	}
	var rep *Reported
	if errors.As(err, &rep) {
		if !rep.Shown && !rep.Passed {
			fmt.Fprint(env.Stderr, FailureText(name, Respelled(rep.First, env.Spell)))
		}
		if !rep.Shown && rep.Own != nil && rep.Own != rep.First {
			fmt.Fprint(env.Stderr, FailureText(name, Respelled(rep.Own, env.Spell)))
		}
		return evidence.ExitCode(rep.First.Code)
	}
	fc := evidence.CodeInternal
	if ctx.Err() != nil {
		fc = evidence.CodeCancelled
	}
	return report(name, env, evidence.AsFailure(Respell(err, env.Spell), fc))
}

func report(name string, env *Env, f *evidence.Failure) int {
	if !env.StdoutTerminal {
		_ = env.W.Write(f)
		_ = env.W.Flush()
	}
	fmt.Fprint(env.Stderr, FailureText(name, f))
	return evidence.ExitCode(f.Code)
}

// FailureText is what a person reads of a failure on stderr: one line,
// `NAME: CODE: message (location)`, then `NAME: to fix: ...` when the
// failure carries a retry action, with the exact command when it has one.
// Whitespace in the message (a multi-line cause) is folded so the failure
// stays one line.
func FailureText(name string, f *evidence.Failure) string {
	// The field of the location is for programs; a person reads the
	// argument in the message, spelled as they gave it, so it is not
	// repeated in the request model's spelling.
	loc := f.Location
	if leaf := loc.Field[strings.LastIndexByte(loc.Field, '.')+1:]; leaf != "" &&
		(strings.Contains(f.Message, leaf) || strings.Contains(f.Message, strings.ReplaceAll(leaf, "_", "-"))) {
		loc.Field = ""
	}
	line := string(f.Code) + ": " + f.Message
	if l := loc.String(); l != "" {
		line += " (" + l + ")"
	}
	s := fmt.Sprintf("%s: %s\n", name, render.Safe(oneLine(line)))
	if f.Retry != nil {
		fix := render.Safe(oneLine(f.Retry.Action))
		if argv := ShellQuote(f.Retry.Argv); argv != "" && !strings.Contains(fix, argv) {
			if fix != "" {
				fix += ": "
			}
			fix += render.Safe(argv)
		}
		if fix != "" {
			s += fmt.Sprintf("%s: to fix: %s\n", name, fix)
		}
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ShellQuote renders argv as a command a shell runs as given.
func ShellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// pipeBytes is what a pipe on stdout is grown to: Linux's default of
// 64 KiB wakes the reader for every write of the block stream, and 1 MiB
// is what an unprivileged process may ask for (pipe-max-size).
const pipeBytes = 1 << 20

// growPipe grows f's pipe buffer, when f is a pipe. It is best effort: on
// anything else, or where the kernel refuses, the stream is unchanged.
func growPipe(f *os.File) {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return
	}
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, pipeBytes)
}

// IsTerminal reports whether f is a terminal. A character device is not
// enough: /dev/null is one, and stdin from /dev/null is an empty input,
// not a person who has not typed yet.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
