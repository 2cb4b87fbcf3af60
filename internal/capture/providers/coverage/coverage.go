// Package coverage is the coverage capture provider: it runs a Python
// workload under coverage.py in the workload's own interpreter, then writes
// coverage.py's JSON report from the same data with a post command.
//
// coverage.py is an in-process collector, so it must be importable in the
// declared interpreter (argv[0]). Resolve probes that interpreter before
// anything runs and never substitutes flameox's own.
package coverage

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/coveragepy"
	"github.com/flameox/flameox/internal/formats/coveragepy/datafile"
	"github.com/flameox/flameox/internal/param"
)

// Pinned is the coverage.py version flameox is tested with (see
// tools/requirements.txt); any 7.x release that writes JSON format 3 works.
const Pinned = "7.17.5"

// Output names inside the plan's output directory.
const (
	DataFile   = ".coverage"
	ReportFile = "coverage.json"
)

// probeTimeout bounds the interpreter probe.
const probeTimeout = 30 * time.Second

// probe asks the interpreter which coverage it imports.
var probe = capture.VersionProbe("coverage")

// Provider is the registry entry.
var Provider = &capture.Provider{
	Name:    "coverage",
	Example: []string{".venv/bin/python", "app.py"},
	Title:   "coverage.py line and branch coverage",
	Family:  "Reliability",
	Selection: "Measure which lines (and, with branch, which branches) of a Python workload execute. " +
		"The workload argv must start with its Python interpreter: `python script.py ...` or `python -m pytest ...`. " +
		"coverage.py must be installed in that interpreter. Writes the native .coverage data file and coverage.py's JSON report.",
	Params: []param.Param{
		{Name: "branch", Type: param.Bool, Default: false, Doc: "measure branches too (coverage run --branch)"},
		{Name: "source", Type: param.StringList, Doc: "packages or directories to measure (coverage run --source); default: coverage.py's own selection"},
	},
	Artifacts: []capture.Role{
		{Role: "coverage-data", Format: datafile.Spec.Name, Pattern: DataFile, Required: true,
			Doc: "coverage.py's native data file (SQLite): executed lines or arcs per file and context"},
		{Role: "coverage-report", Format: coveragepy.JSONSpec.Name, Pattern: ReportFile,
			Doc: "`coverage json` report from the same data: statements, missing lines, branches, totals"},
	},
	Binding: capture.Binding{
		Executable: "coverage",
		InWorkload: true,
		Guidance:   "install coverage.py in the workload interpreter: <python> -m pip install coverage==" + Pinned,
	},
	Resolve: Resolve,
	Plan:    Plan,
}

type probeResult struct {
	Executable string  `json:"executable"`
	Python     string  `json:"python"`
	Coverage   *string `json:"coverage"`
}

// interpreter finds argv[0] the way the workload would run it.
func interpreter(req *capture.Request) (string, error) {
	if len(req.Argv) == 0 {
		return "", evidence.Failf(evidence.CodeInvalidArgument, "coverage capture needs a workload argv: python script.py or python -m module")
	}
	a := req.Argv[0]
	p, err := capture.WorkloadPath(a, req.Cwd)
	if err != nil {
		return "", (&evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("workload interpreter %q is not on PATH", a), Err: err})
	}
	return p, nil
}

// Resolve probes the workload interpreter for coverage.py.
func Resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	if err := checkArgv(req.Argv); err != nil {
		return nil, err
	}
	py, err := interpreter(req)
	if err != nil {
		return nil, err
	}
	var pr probeResult
	if err := (&capture.InterpreterProbe{Script: probe, For: "coverage.py", Timeout: probeTimeout,
		Broken: fmt.Sprintf("argv[0] %s is not a working Python interpreter: the coverage provider runs `%s -m coverage run ...`", py, req.Argv[0]),
		Silent: fmt.Sprintf("argv[0] %s did not answer the Python probe; the coverage provider needs a Python interpreter as argv[0]", py),
	}).Run(ctx, py, req.Cwd, &pr); err != nil {
		return nil, err
	}
	retry := capture.InstallRetry(pr.Executable, "coverage.py", "coverage=="+Pinned)
	if pr.Coverage == nil {
		return nil, capture.NotInWorkload("coverage.py", pr.Executable, pr.Python, retry)
	}
	if !strings.HasPrefix(*pr.Coverage, "7.") {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("coverage.py %s in %s is not supported: flameox reads coverage.py 7.x data (schema 7) and JSON reports (format 3)", *pr.Coverage, pr.Executable),
			Details: evidence.Object{"interpreter": pr.Executable, "coverage": *pr.Coverage}, Retry: retry}
	}
	return capture.InterpreterResolved(pr.Executable, *pr.Coverage)
}

// checkArgv accepts what `coverage run` can run.
func checkArgv(argv []string) error {
	return capture.CheckScriptArgv(argv, "coverage capture needs `python script.py ...` or `python -m module ...`",
		"coverage run accepts only a script path or -m module after the interpreter")
}

// Plan builds `PY -m coverage run --data-file=OUT/.coverage [--branch]
// [--source=...] ARGS...` and the post command that writes the JSON report
// from the same data file, in the same interpreter and directory.
func Plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	if err := checkArgv(req.Argv); err != nil {
		return nil, err
	}
	if r == nil || r.Executable == nil {
		return nil, evidence.Failf(evidence.CodeInternal, "coverage plan without a resolved interpreter")
	}
	py := r.Executable.Path
	data := filepath.Join(scratch, DataFile)
	cmd := []string{py, "-m", "coverage", "run", "--data-file=" + data}
	if b, _ := req.Args["branch"].(bool); b {
		cmd = append(cmd, "--branch")
	}
	if src, _ := req.Args["source"].([]string); len(src) > 0 {
		for _, s := range src {
			if s == "" || strings.Contains(s, ",") {
				return nil, evidence.Failf(evidence.CodeInvalidArgument, "source entry %q must be a non-empty path or package without commas", s)
			}
		}
		cmd = append(cmd, "--source="+strings.Join(src, ","))
	}
	cmd = append(cmd, req.Argv[1:]...)
	return &capture.Plan{
		Command:   cmd,
		Dir:       req.Cwd,
		OutputDir: scratch,
		// A failing workload (a test suite with failures) still ran
		// under coverage.py and saved its data at exit.
		AnyExit: true,
		Post: [][]string{
			{py, "-m", "coverage", "json", "--data-file=" + data, "-o", filepath.Join(scratch, ReportFile)},
		},
	}, nil
}
