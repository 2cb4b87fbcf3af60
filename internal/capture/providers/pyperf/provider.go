// Package pyperf is the capture provider that benchmarks a command with
// `python -m pyperf command`: pyperf runs ARGV in worker processes,
// calibrates loops, times each run and writes its JSON result.
//
// pyperf stores the command line in its metadata and refuses newline
// characters there, so an ARGV with a newline (or carriage return) in any
// element runs through a metadata-safe launcher: a small Python file
// given the argv as one hex-encoded JSON argument, which executes the
// original argv with os.execv, without a shell. The launcher's startup
// (one interpreter start) is then inside every measurement; the capture
// block's argv stays the exact requested one, and is authoritative.
//
// pyperf must be importable in the interpreter named by the python
// argument (default python3); Resolve probes it before anything runs.
package pyperf

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	pyperfformat "github.com/flameox/flameox/internal/formats/pyperf"
	"github.com/flameox/flameox/internal/param"
)

// Pinned is the pyperf release flameox is tested with
// (tools/requirements.txt).
const Pinned = "2.10.0"

// Names of the output and the support file.
const (
	Role       = "pyperf-result"
	File       = "pyperf.json"
	OutputDir  = "out"
	SupportDir = "support"
	Launcher   = "flameox_pyperf_launch.py"
)

const probeTimeout = 30 * time.Second

// probe asks the interpreter which pyperf it imports.
var probe = capture.VersionProbe("pyperf")

// launcher executes the argv its one argument encodes (hex of UTF-8
// JSON), with no shell: os.execv keeps the process, so pyperf times the
// program itself after one interpreter start.
const launcher = `import json, os, sys
argv = json.loads(bytes.fromhex(sys.argv[1]).decode("utf-8"))
os.execv(argv[0], argv)
`

// Provider is the registry entry.
var Provider = &capture.Provider{
	Name:    "pyperf",
	Title:   "pyperf command benchmark",
	Example: []string{"./bench-binary", "--quick"},
	Family:  "Benchmarks",
	Selection: "Benchmark a command with `python -m pyperf command`: pyperf runs ARGV in worker processes " +
		"(processes × values runs after warmups) and writes its JSON result, for summarize_benchmarks and " +
		"compare_benchmarks. pyperf must be installed in the python argument's interpreter. ARGV is run without a " +
		"shell; an ARGV with a newline in an argument runs through a metadata-safe launcher whose startup is inside each measurement.",
	Params: []param.Param{
		{Name: "python", Type: param.String, Default: "python3", Doc: "the Python interpreter that has pyperf (" + Pinned + " tested)"},
		{Name: "name", Type: param.String, Doc: "benchmark name (pyperf --name); default: pyperf's \"command\""},
		{Name: "processes", Type: param.Int, Min: param.F(1), Max: param.F(1000), Doc: "worker processes (pyperf -p); default pyperf's"},
		{Name: "values", Type: param.Int, Min: param.F(1), Max: param.F(1000), Doc: "values per process (pyperf -n); default pyperf's"},
		{Name: "warmups", Type: param.Int, Min: param.F(0), Max: param.F(1000), Doc: "warmups per process (pyperf -w); default pyperf's"},
		{Name: "loops", Type: param.Int, Min: param.F(1), Max: param.F(1 << 30), Doc: "loops per value (pyperf -l); default: calibrated"},
	},
	Artifacts: []capture.Role{{Role: Role, Format: pyperfformat.Spec.Name, Pattern: File, Required: true,
		Doc: "pyperf's JSON result: runs with warmups and values"}},
	Binding: capture.Binding{
		Executable: "pyperf",
		InWorkload: true,
		Guidance:   "install pyperf in the interpreter given as python: <python> -m pip install pyperf==" + Pinned,
	},
	Resolve: Resolve,
	Plan:    Plan,
}

type probeResult struct {
	Executable string  `json:"executable"`
	Python     string  `json:"python"`
	Pyperf     *string `json:"pyperf"`
}

// Resolve checks ARGV and probes the python argument for pyperf.
func Resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: "provider pyperf needs a command ARGV to benchmark", Location: evidence.Location{Field: "argv"}}
	}
	if _, err := capture.WorkloadExecutable(req.Argv[0], req.Cwd, "ARGV[0]"); err != nil {
		return nil, err
	}
	pyName, _ := req.Args["python"].(string)
	if pyName == "" {
		pyName = "python3"
	}
	py, err := capture.WorkloadPath(pyName, req.Cwd)
	if err != nil {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: fmt.Sprintf("python %q is not on PATH", pyName),
			Err: err, Location: evidence.Location{Field: "python"}}
	}
	var pr probeResult
	if err := (&capture.InterpreterProbe{Script: probe, For: "pyperf", Timeout: probeTimeout,
		Broken: fmt.Sprintf("python %s is not a working Python interpreter", py), Field: "python",
		Silent: fmt.Sprintf("python %s did not answer the Python probe", py),
	}).Run(ctx, py, req.Cwd, &pr); err != nil {
		return nil, err
	}
	retry := &evidence.Retry{Action: "install pyperf in that interpreter, then capture again",
		Argv: []string{pr.Executable, "-m", "pip", "install", "pyperf==" + Pinned}}
	if pr.Pyperf == nil {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable, Retry: retry,
			Message: fmt.Sprintf("pyperf is not installed in %s (Python %s)", pr.Executable, pr.Python)}
	}
	if !strings.HasPrefix(*pr.Pyperf, "2.") {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable, Retry: retry,
			Message: fmt.Sprintf("pyperf %s in %s is not 2.x, which this provider drives", *pr.Pyperf, pr.Executable)}
	}
	return capture.InterpreterResolved(pr.Executable, *pr.Pyperf)
}

// NeedsLauncher reports whether pyperf would refuse argv in its metadata.
func NeedsLauncher(argv []string) bool {
	for _, a := range argv {
		if strings.ContainsAny(a, "\r\n") {
			return true
		}
	}
	return false
}

// Plan builds `PY -m pyperf command -o OUT [options] -- ARGV`.
func Plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	if len(req.Argv) == 0 || r == nil || r.Executable == nil {
		return nil, evidence.Failf(evidence.CodeInternal, "provider pyperf planned without a resolved interpreter")
	}
	out := filepath.Join(scratch, OutputDir)
	cmd := []string{r.Executable.Path, "-m", "pyperf", "command", "--quiet", "-o", filepath.Join(out, File)}
	if n, _ := req.Args["name"].(string); n != "" {
		cmd = append(cmd, "--name", n)
	}
	for _, o := range []struct{ arg, flag string }{{"processes", "-p"}, {"values", "-n"}, {"warmups", "-w"}, {"loops", "-l"}} {
		if v, ok := evidence.AsInt(req.Args[o.arg]); ok {
			cmd = append(cmd, o.flag, strconv.FormatInt(v, 10))
		}
	}
	exe, err := capture.WorkloadExecutable(req.Argv[0], req.Cwd, "ARGV[0]")
	if err != nil {
		return nil, err
	}
	argv := append([]string{exe}, req.Argv[1:]...)
	p := &capture.Plan{Dir: req.Cwd, OutputDir: out, AcceptExit: []int{0}}
	if NeedsLauncher(argv) {
		enc, err := json.Marshal(argv)
		if err != nil {
			return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "encode ARGV")
		}
		path := filepath.Join(scratch, SupportDir, Launcher)
		p.Support = []capture.SupportFile{{Path: path, Content: []byte(launcher), Mode: 0o444}}
		argv = []string{r.Executable.Path, path, hex.EncodeToString(enc)}
	}
	p.Command = append(append(cmd, "--"), argv...)
	return p, nil
}
