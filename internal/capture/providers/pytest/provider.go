// Package pytest is the capture provider that runs an explicit
// `python -m pytest TARGET…` workload with flameox's event plugin loaded,
// in the declared interpreter, and declares the plugin's JSONL event
// stream as its artifact.
//
// It imports capture and evidence, and formats/pytestevents for the name of the format it stages.
package pytest

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/pytestevents"
)

// Names the provider, its plugin and its output use.
const (
	Name       = "pytest"
	Role       = "pytest-events"
	PluginName = "flameox_pytest"
	// EventsEnv names the file the plugin writes.
	EventsEnv = "FLAMEOX_PYTEST_EVENTS"
	// EventsFile is the artifact's name inside the plan's output directory;
	// its suffix is the format's explicit-path suffix.
	EventsFile = "flameox.pytest-events.jsonl"
	// MinVersion is the oldest pytest the plugin supports.
	MinVersion = "8.3"
)

// Exit statuses of pytest that count as a completed capture: 0 all passed,
// 1 some tests failed, 5 no tests collected. The event stream describes
// each of them completely. 2 (interrupted, which includes collection
// errors without --continue-on-collection-errors), 3 (internal error) and
// 4 (usage error) are workload failures.
var acceptExit = []int{0, 1, 5}

//go:embed flameox_pytest.py
var pluginSource []byte

var pluginZip = sync.OnceValues(func() ([]byte, error) {
	return capture.ZipModule(PluginName+".py", pluginSource)
})

// Provider is the pytest capture provider's contract.
var Provider = &capture.Provider{
	Name:    Name,
	Title:   "pytest test events",
	Example: []string{".venv/bin/python", "-m", "pytest", "tests"},
	Family:  "Reliability",
	Selection: "Run an explicit `python -m pytest TARGET…` with flameox's event plugin to find which tests " +
		"failed, errored, were interrupted or never ran, with bounded failure text. The interpreter in ARGV " +
		"must import pytest >= " + MinVersion + " itself. Exit statuses 0, 1 (tests failed) and 5 (no tests " +
		"collected) are completed captures; 2 (interrupted, including collection errors unless " +
		"--continue-on-collection-errors), 3 and 4 are workload failures.",
	Artifacts: []capture.Role{{
		Role:     Role,
		Format:   pytestevents.Spec.Name,
		Pattern:  EventsFile,
		Required: true,
		Doc:      "the plugin's JSONL event stream (docs/pytest-events.md)",
	}},
	Binding: capture.Binding{
		Executable: "pytest",
		InWorkload: true,
		Guidance:   "install pytest>=" + MinVersion + " into the interpreter named in ARGV: <python> -m pip install 'pytest>=" + MinVersion + "'",
	},
	Resolve: resolve,
	Plan:    plan,
}

// Workload is a validated `python -m pytest ARGS…` command.
type Workload struct {
	Python string   // ARGV[0] as given
	Args   []string // the arguments after `-m pytest`
}

// ParseArgv validates the workload shape: exactly `PYTHON -m pytest ARG…`
// with at least one argument, none of which disables the event plugin.
func ParseArgv(argv []string) (*Workload, error) {
	if len(argv) < 4 || argv[1] != "-m" || argv[2] != "pytest" {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  "provider pytest runs `PYTHON -m pytest TARGET…`: ARGV must start with an interpreter, then -m pytest, then at least one target",
			Details:  evidence.Object{"argv": argv},
			Location: evidence.Location{Field: "argv"}}
	}
	if argv[0] == "" {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: "ARGV[0] (the interpreter) is empty", Location: evidence.Location{Field: "argv"}}
	}
	args := argv[3:]
	for i, a := range args {
		// pytest reads plugin arguments as `-p NAME` and `-pNAME`.
		var v string
		switch {
		case a == "-p" && i+1 < len(args):
			v = args[i+1]
		case strings.HasPrefix(a, "-p"):
			v = a[2:]
		default:
			continue
		}
		if v == "no:"+PluginName {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message:  "ARGV disables the flameox event plugin (-p no:" + PluginName + "); the capture would have no evidence",
				Location: evidence.Location{Field: "argv"}}
		}
	}
	return &Workload{Python: argv[0], Args: args}, nil
}

// probeScript runs in the workload interpreter and reports what `import
// pytest` finds there: the workload's own environment decides, not
// flameox's.
const probeScript = `import json, sys
out = {"python": sys.version.split()[0], "executable": sys.executable}
try:
    import pytest
    out["pytest"] = pytest.__version__
    out["pytest_file"] = pytest.__file__
except Exception as exc:
    out["error"] = "%s: %s" % (type(exc).__name__, exc)
print("FLAMEOX-PROBE " + json.dumps(out))
`

type probe struct {
	Python     string `json:"python"`
	Executable string `json:"executable"`
	Pytest     string `json:"pytest"`
	PytestFile string `json:"pytest_file"`
	Error      string `json:"error"`
}

// probeTimeout bounds the interpreter probe; importing pytest on a cold
// cache takes seconds, never minutes.
const probeTimeout = 2 * time.Minute

func runProbe(ctx context.Context, python, cwd string) (*probe, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", probeScript)
	cmd.Dir = cwd
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &limitWriter{w: &stdout, n: 64 << 10}
	cmd.Stderr = &limitWriter{w: &stderr, n: 4 << 10}
	err := cmd.Run()
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return nil, evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "probe %s", python)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("the workload interpreter %s did not answer the pytest probe within %s", python, probeTimeout),
			Err:     ctx.Err(), Details: evidence.Object{"interpreter": python}}
	}
	for line := range strings.SplitSeq(stdout.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "FLAMEOX-PROBE "); ok {
			var p probe
			if jerr := json.Unmarshal([]byte(rest), &p); jerr == nil {
				return &p, nil
			}
		}
	}
	return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
		Message:  fmt.Sprintf("ARGV[0] %s did not run as a Python interpreter", python),
		Err:      err,
		Details:  evidence.Object{"interpreter": python, "stderr": strings.ToValidUTF8(stderr.String(), "\uFFFD"), "error": fmt.Sprint(err)},
		Location: evidence.Location{Field: "argv"}}
}

// limitWriter keeps at most n bytes and drops the rest.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// AtLeast reports whether a pytest version string (e.g. "9.2.0",
// "8.3.0rc1", "8.4.dev12+g1234") is at least major.minor.
func AtLeast(version string, major, minor int) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err := strconv.Atoi(parts[0])
	if err != nil {
		return false
	}
	mi, err := strconv.Atoi(leadingDigits(parts[1]))
	if err != nil {
		return false
	}
	return ma > major || (ma == major && mi >= minor)
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// Remedy is the exact command that installs a supported pytest into the
// workload interpreter.
func Remedy(python string) []string {
	return []string{python, "-m", "pip", "install", "pytest>=" + MinVersion}
}

func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:,@%=", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	w, err := ParseArgv(req.Argv)
	if err != nil {
		return nil, err
	}
	python, err := capture.WorkloadExecutable(w.Python, req.Cwd, "interpreter")
	if err != nil {
		return nil, err
	}
	p, err := runProbe(ctx, python, req.Cwd)
	if err != nil {
		return nil, err
	}
	if p.Pytest == "" || !AtLeast(p.Pytest, 8, 3) {
		remedy := Remedy(python)
		quoted := make([]string, len(remedy))
		for i, a := range remedy {
			quoted[i] = shellQuote(a)
		}
		found := "pytest is not importable there (" + p.Error + ")"
		if p.Pytest != "" {
			found = "it imports pytest " + p.Pytest + " from " + p.PytestFile
		}
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("provider pytest needs pytest >= %s in the workload interpreter %s, but %s; "+
				"pytest installed next to flameox does not count. Install it there: %s",
				MinVersion, python, found, strings.Join(quoted, " ")),
			Details: evidence.Object{"interpreter": python, "python_version": p.Python, "pytest_version": nullable(p.Pytest), "import_error": nullable(p.Error)},
			Retry:   &evidence.Retry{Action: "install pytest>=" + MinVersion + " into the workload interpreter, then retry the capture", Argv: remedy}}
	}
	sum, err := capture.FileSHA256(python)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "hash interpreter %s", python)
	}
	return &capture.Resolved{Executable: &evidence.Executable{Path: python, SHA256: sum}, Version: p.Pytest}, nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// SupportDir and OutputDir lay out a request's scratch. The plugin lives
// outside the output directory, so nothing flameox writes can be mistaken
// for workload output; it is a zip archive on PYTHONPATH because Python
// writes no bytecode cache for zip imports, so loading it adds no file.
const (
	SupportDir = "support"
	OutputDir  = "out"
	PluginZip  = PluginName + ".zip"
)

func plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	w, err := ParseArgv(req.Argv)
	if err != nil {
		return nil, err
	}
	if r == nil || r.Executable == nil {
		return nil, evidence.Failf(evidence.CodeInternal, "provider pytest planned without a resolved interpreter")
	}
	z, err := pluginZip()
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInternal, err, "build the plugin archive")
	}
	zipPath := filepath.Join(scratch, SupportDir, PluginZip)
	out := filepath.Join(scratch, OutputDir)
	cmd := append([]string{r.Executable.Path, "-m", "pytest", "-p", PluginName}, w.Args...)
	return &capture.Plan{
		Command:    cmd,
		Env:        []string{EventsEnv + "=" + filepath.Join(out, EventsFile), capture.PythonPath(zipPath)},
		Dir:        req.Cwd,
		OutputDir:  out,
		Support:    []capture.SupportFile{{Path: zipPath, Content: z, Mode: 0o444}},
		AcceptExit: append([]int(nil), acceptExit...),
	}, nil
}
