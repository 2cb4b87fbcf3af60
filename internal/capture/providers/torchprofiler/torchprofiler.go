// Package torchprofiler is the torch-profiler capture provider: it runs a
// Python workload under PyTorch's profiler (torch.profiler, Kineto) in the
// workload's own interpreter and stages the Kineto trace each process
// writes, one artifact per process (per rank in a distributed run).
//
// torch is an in-process collector: it must import in the declared
// interpreter (argv[0]). Resolve probes that interpreter before anything
// runs and never substitutes another. CPU activity is always recorded;
// CUDA activity when torch sees a GPU.
//
// It imports capture, evidence, param and formats/chrometrace for the
// name of the format it stages.
package torchprofiler

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/chrometrace"
	"github.com/flameox/flameox/internal/param"
)

// Tested is the torch version the tests and fixtures use; any 2.x with
// torch.profiler writes Kineto traces.
const Tested = "2.5.1"

// launcher runs the workload under the profiler (launcher.py).
//
//go:embed launcher.py
var launcher []byte

// LauncherName is the launcher's file in the request's scratch.
const LauncherName = "flameox_torch_profiler.py"

// probeTimeout bounds the interpreter probe: importing torch is slow.
const probeTimeout = 120 * time.Second

// probe prints the interpreter, its torch, and whether torch sees a GPU.
const probe = `import json, sys
r = {"executable": sys.executable, "python": sys.version.split()[0], "torch": None, "cuda": False}
try:
    import torch
    r["torch"] = torch.__version__
    r["cuda"] = bool(torch.cuda.is_available())
except ImportError:
    pass
print(json.dumps(r))
`

// Provider is the registry entry.
var Provider = &capture.Provider{
	Name:    "torch-profiler",
	Example: []string{".venv/bin/python", "train.py"},
	Title:   "PyTorch profiler (Kineto) trace",
	Family:  "Execution traces",
	Selection: "Trace which PyTorch operators, annotated ranges (record_function), CUDA runtime calls and GPU " +
		"kernels a Python workload runs, with their times. The workload argv must start with its Python " +
		"interpreter: `python train.py ...` or `python -m module ...`, and torch must import in it. CPU activity " +
		"is always recorded, CUDA activity when torch sees a GPU. Each process writes its own trace (per rank " +
		"under torch.distributed when RANK is set).",
	Params: []param.Param{
		{Name: "record_shapes", Type: param.Bool, Default: false, Doc: "record operator input shapes (--record-shapes: torch.profiler record_shapes=True)"},
		{Name: "with_stack", Type: param.Bool, Default: false, Doc: "record Python source locations of operators (--with-stack: with_stack=True; adds overhead)"},
		{Name: "profile_memory", Type: param.Bool, Default: false, Doc: "record tensor memory allocation (--profile-memory: profile_memory=True)"},
	},
	Artifacts: []capture.Role{{
		Role:     "kineto-trace",
		Format:   chrometrace.KinetoSpec.Name,
		Pattern:  "*.pt.trace.json",
		Required: true,
		Doc:      "the Kineto trace of one process (export_chrome_trace): rank<R>.pid<P>.pt.trace.json, or pid<P>.pt.trace.json without RANK",
		Unflushed: "torch.profiler writes the trace when the workload returns or raises; a process killed by a signal " +
			"(a budget, cancellation) writes none",
	}},
	Binding: capture.Binding{
		Executable: "torch",
		InWorkload: true,
		Guidance:   "install torch in the workload interpreter: <python> -m pip install torch (tested with " + Tested + ")",
	},
	Resolve: Resolve,
	Plan:    Plan,
}

type probeResult struct {
	Executable string  `json:"executable"`
	Python     string  `json:"python"`
	Torch      *string `json:"torch"`
	CUDA       bool    `json:"cuda"`
}

// checkArgv accepts what the launcher can run.
func checkArgv(argv []string) error {
	return capture.CheckScriptArgv(argv, "torch-profiler capture needs `python train.py ...` or `python -m module ...`",
		"give a script path or -m module after the interpreter")
}

// Resolve probes the workload interpreter for torch.
func Resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	if err := checkArgv(req.Argv); err != nil {
		return nil, err
	}
	py, err := capture.WorkloadPath(req.Argv[0], req.Cwd)
	if err != nil {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("workload interpreter %q is not on PATH", req.Argv[0]), Err: err, Location: evidence.Location{Field: "argv"}}
	}
	var pr probeResult
	if err := (&capture.InterpreterProbe{Script: probe, For: "torch", Timeout: probeTimeout,
		Broken: fmt.Sprintf("argv[0] %s is not a working Python interpreter: the torch-profiler provider runs the workload in it", py),
		Silent: fmt.Sprintf("argv[0] %s did not answer the Python probe; the torch-profiler provider needs a Python interpreter as argv[0]", py),
	}).Run(ctx, py, req.Cwd, &pr); err != nil {
		return nil, err
	}
	if pr.Torch == nil {
		return nil, capture.NotInWorkload("torch", pr.Executable, pr.Python, capture.InstallRetry(pr.Executable, "torch", "torch"))
	}
	if !strings.HasPrefix(*pr.Torch, "2.") {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("torch %s in %s is not supported: the provider needs torch 2.x (torch.profiler with Kineto)", *pr.Torch, pr.Executable),
			Details: evidence.Object{"interpreter": pr.Executable, "torch": *pr.Torch}}
	}
	return capture.InterpreterResolved(pr.Executable, *pr.Torch)
}

// Plan builds `PY SCRATCH/launcher.py OUT OPTIONS ARGV[1:]...`: the
// launcher (a support file) runs the workload under the profiler and
// writes the trace into OUT.
func Plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	if err := checkArgv(req.Argv); err != nil {
		return nil, err
	}
	if r == nil || r.Executable == nil {
		return nil, evidence.Failf(evidence.CodeInternal, "torch-profiler plan without a resolved interpreter")
	}
	opts := map[string]bool{}
	for _, name := range []string{"record_shapes", "with_stack", "profile_memory"} {
		opts[name], _ = req.Args[name].(bool)
	}
	optJSON, err := json.Marshal(opts)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInternal, err, "torch-profiler options")
	}
	out := filepath.Join(scratch, "output")
	script := filepath.Join(scratch, "support", LauncherName)
	cmd := append([]string{r.Executable.Path, script, out, string(optJSON)}, req.Argv[1:]...)
	return &capture.Plan{
		Command:   cmd,
		Dir:       req.Cwd,
		OutputDir: out,
		Support:   []capture.SupportFile{{Path: script, Content: launcher, Mode: 0o444}},
		// A workload that fails still ran under the profiler, which wrote
		// its trace on the way out: the status is provenance.
		AnyExit: true,
	}, nil
}
