// Package memray is the memray capture provider: it runs a Python
// workload under Memray (`python -m memray run`) in the workload's own
// interpreter and stages the capture file Memray writes.
//
// Memray is an in-process collector, so it must be importable in the
// declared interpreter (argv[0]). Resolve probes that interpreter before
// anything runs and never substitutes flameox's own.
//
// It imports capture, evidence, param, and formats/memray for the name of
// the format it stages.
package memray

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	memrayformat "github.com/flameox/flameox/internal/formats/memray"
	"github.com/flameox/flameox/internal/param"
)

// Pinned is the memray release flameox is tested with (see
// tools/requirements.txt); 1.19.x captures (header 12) decode too.
const Pinned = "1.20.0"

// CaptureFile is the capture's name inside the plan's output directory.
const CaptureFile = "capture.bin"

// probeTimeout bounds the interpreter probe.
const probeTimeout = 30 * time.Second

// probe asks the interpreter which memray it imports.
var probe = capture.VersionProbe("memray")

// Provider is the memray contract.
var Provider = &capture.Provider{
	Name:    "memray",
	Example: []string{".venv/bin/python", "app.py"},
	Title:   "Memray allocation tracking",
	Family:  "Memory profiles",
	Selection: "Track every allocation of a Python workload with Memray: pick it for where Python memory goes at " +
		"its peak (high watermark) and what is still held at exit (leaks). The workload argv must start with its " +
		"Python interpreter: `python script.py ...` or `python -m module ...`; memray must be installed in that " +
		"interpreter. Native (C) stacks are optional and are not symbolized by flameox.",
	Params: []param.Param{
		{Name: "native", Type: param.Bool, Default: false, Doc: "record native stacks too (memray run --native)"},
		{Name: "trace_python_allocators", Type: param.Bool, Default: false,
			Doc: "track pymalloc's small allocations one by one (memray run --trace-python-allocators); larger captures"},
		{Name: "aggregate", Type: param.Bool, Default: false,
			Doc: "let memray aggregate while it runs (memray run --aggregate): a small capture with only the high watermark and leaks, no allocation history"},
		{Name: "no_compress", Type: param.Bool, Default: false, Doc: "keep the capture uncompressed (memray run --no-compress); memray LZ4-compresses it on exit by default"},
	},
	Artifacts: []capture.Role{{
		Role: "memray-capture", Format: memrayformat.Spec.Name, Pattern: CaptureFile, Required: true,
		Doc:       "memray's capture file (memray run -o): header, allocation records, frames, threads",
		Unflushed: "memray writes its header and trailer when tracking ends; a process killed by a signal leaves a capture without its trailer, which decodes as incomplete",
	}},
	Binding: capture.Binding{
		Executable: "memray",
		InWorkload: true,
		Guidance:   "install memray in the workload interpreter: <python> -m pip install memray==" + Pinned,
	},
	Resolve: Resolve,
	Plan:    Plan,
}

type probeResult struct {
	Executable string  `json:"executable"`
	Python     string  `json:"python"`
	Memray     *string `json:"memray"`
}

// Resolve probes the workload interpreter for memray.
func Resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	if err := checkArgv(req.Argv); err != nil {
		return nil, err
	}
	py, err := capture.WorkloadPath(req.Argv[0], req.Cwd)
	if err != nil {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("workload interpreter %q is not on PATH", req.Argv[0]), Err: err}
	}
	var pr probeResult
	if err := (&capture.InterpreterProbe{Script: probe, For: "memray", Timeout: probeTimeout,
		Broken: fmt.Sprintf("argv[0] %s is not a working Python interpreter: the memray provider runs `%s -m memray run ...`", py, req.Argv[0]),
		Silent: fmt.Sprintf("argv[0] %s did not answer the Python probe; the memray provider needs a Python interpreter as argv[0]", py),
	}).Run(ctx, py, req.Cwd, &pr); err != nil {
		return nil, err
	}
	retry := capture.InstallRetry(pr.Executable, "memray", "memray=="+Pinned)
	if pr.Memray == nil {
		return nil, capture.NotInWorkload("memray", pr.Executable, pr.Python, retry)
	}
	if v := *pr.Memray; !strings.HasPrefix(v, "1.19.") && !strings.HasPrefix(v, "1.20.") {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("memray %s in %s is not supported: flameox reads the captures of memray 1.19 and 1.20 (header versions 12 and 13)", v, pr.Executable),
			Details: evidence.Object{"interpreter": pr.Executable, "memray": v}, Retry: retry}
	}
	return capture.InterpreterResolved(pr.Executable, *pr.Memray)
}

// checkArgv accepts what `memray run` runs.
func checkArgv(argv []string) error {
	return capture.CheckScriptArgv(argv, "memray capture needs `python script.py ...` or `python -m module ...`",
		"memray run accepts only a script path or -m module after the interpreter")
}

// Plan builds `PY -m memray run -q -o OUT/capture.bin [flags] ARGS...` in
// the resolved interpreter.
func Plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	if err := checkArgv(req.Argv); err != nil {
		return nil, err
	}
	if r == nil || r.Executable == nil {
		return nil, evidence.Failf(evidence.CodeInternal, "memray plan without a resolved interpreter")
	}
	cmd := []string{r.Executable.Path, "-m", "memray", "run", "-q", "-o", filepath.Join(scratch, CaptureFile)}
	for _, f := range [][2]string{{"native", "--native"}, {"trace_python_allocators", "--trace-python-allocators"},
		{"aggregate", "--aggregate"}, {"no_compress", "--no-compress"}} {
		if b, _ := req.Args[f[0]].(bool); b {
			cmd = append(cmd, f[1])
		}
	}
	cmd = append(cmd, req.Argv[1:]...)
	return &capture.Plan{
		Command:   cmd,
		Dir:       req.Cwd,
		OutputDir: scratch,
		// A workload that fails still ran under memray, which writes its
		// capture when tracking ends.
		AnyExit: true,
	}, nil
}
