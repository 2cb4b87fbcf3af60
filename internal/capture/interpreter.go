package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"time"

	"github.com/flameox/flameox/internal/evidence"
)

// InterpreterProbe is a short script run as `PYTHON -c SCRIPT` in the
// workload's own interpreter before anything runs, to learn what that
// interpreter imports: the workload's environment decides, never
// flameox's. The script prints one JSON object with at least
// "executable" (sys.executable) as the last line of its standard output;
// an import may print warnings before it.
type InterpreterProbe struct {
	Script  string
	For     string        // what the probe looks for, in the timeout failure ("memray")
	Timeout time.Duration // bounds the probe
	// Broken is the INVALID_ARGUMENT message when the interpreter does not
	// run the script (its error and stderr's tail go in the details), and
	// Field that failure's location field, if any. Silent is the message
	// when it runs but prints no answer.
	Broken, Field, Silent string
}

// VersionProbe is the script of a probe for one module: it prints
// {"executable", "python", MODULE: MODULE.__version__ or null when the
// import fails with ImportError}.
func VersionProbe(module string) string {
	return `import json, sys
try:
    import ` + module + `
    v = ` + module + `.__version__
except ImportError:
    v = None
print(json.dumps({"executable": sys.executable, "python": sys.version.split()[0], "` + module + `": v}))
`
}

// Run runs the probe in python (a path found by WorkloadPath) in dir and
// decodes its answer into answer. A probe past its timeout is
// PROVIDER_UNAVAILABLE, a cancelled one CANCELLED.
func (p *InterpreterProbe) Run(ctx context.Context, python, dir string, answer any) error {
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", p.Script)
	cmd.Dir = dir
	// A child the interpreter started may hold the pipes open after the
	// kill; the probe still ends soon after its timeout.
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return evidence.Failf(evidence.CodeProviderUnavailable, "probing %s for %s timed out after %s", python, p.For, p.Timeout)
		case ctx.Err() != nil:
			return evidence.Wrap(evidence.CodeCancelled, err, "probe %s", python)
		}
		f := &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: p.Broken, Err: err,
			Details: evidence.Object{"probe_error": err.Error(), "stderr": tail(stderr.String(), 2048)}}
		if p.Field != "" {
			f.Location.Field = p.Field
		}
		return f
	}
	out := bytes.TrimSpace(stdout.Bytes())
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	var who struct {
		Executable string `json:"executable"`
	}
	if json.Unmarshal(out, &who) != nil || who.Executable == "" || json.Unmarshal(out, answer) != nil {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: p.Silent}
	}
	return nil
}

// InterpreterResolved binds the interpreter a probe reported
// (sys.executable, so a virtual environment's stays the environment's)
// with its digest and the collector's version.
func InterpreterResolved(executable, version string) (*Resolved, error) {
	sum, err := FileSHA256(executable)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeProviderUnavailable, err, "hash interpreter %s", executable)
	}
	return &Resolved{Executable: &evidence.Executable{Path: executable, SHA256: sum}, Version: version}, nil
}

// InstallRetry is the retry for a collector the workload interpreter
// lacks: pip-install requirement with that interpreter's own pip.
func InstallRetry(executable, what, requirement string) *evidence.Retry {
	return &evidence.Retry{
		Action: "install " + what + " in the workload interpreter (not flameox's), then capture again",
		Argv:   []string{executable, "-m", "pip", "install", requirement},
	}
}

// NotInWorkload is the PROVIDER_UNAVAILABLE failure for a collector the
// workload interpreter (executable, Python version python) does not
// import.
func NotInWorkload(what, executable, python string, retry *evidence.Retry) *evidence.Failure {
	return &evidence.Failure{Code: evidence.CodeProviderUnavailable,
		Message: what + " is not installed in the workload interpreter " + executable + " (Python " + python + ")",
		Details: evidence.Object{"interpreter": executable, "python": python}, Retry: retry}
}

// CheckScriptArgv accepts the workloads an in-process Python collector
// runs in place of the interpreter: `PY script [args]` and
// `PY -m module [args]`. Interpreter options and -c have no equivalent
// there, so they are refused rather than dropped. needs starts the
// failure for a short argv ("memray capture needs `python script.py ...`
// or `python -m module ...`"); takes ends the one for an option ("memray
// run accepts only a script path or -m module after the interpreter").
func CheckScriptArgv(argv []string, needs, takes string) error {
	if len(argv) < 2 {
		return evidence.Failf(evidence.CodeInvalidArgument, "%s, got %q", needs, argv)
	}
	switch a := argv[1]; {
	case a == "-m":
		if len(argv) < 3 || argv[2] == "" {
			return evidence.Failf(evidence.CodeInvalidArgument, "`-m` needs a module name")
		}
	case strings.HasPrefix(a, "-"):
		return evidence.Failf(evidence.CodeInvalidArgument, "interpreter option %q is not supported: %s", a, takes)
	}
	return nil
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
