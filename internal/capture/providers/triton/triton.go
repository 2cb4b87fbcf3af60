// Package triton is the capture provider for Triton's autotuner: it runs a
// Python workload whose kernels already use triton.autotune with
// TRITON_CACHE_AUTOTUNING=1 and a fresh, request-owned TRITON_CACHE_DIR,
// so every tuning is cold and the autotuner writes its
// <kernel>.autotune.json files there (format triton-autotune, role
// autotune-cache). Triton must import in the declared workload interpreter
// (argv[0]), at the 3.x release whose cache format the decoder reads;
// capture probes it before the workload runs and never substitutes
// flameox's interpreter. flameox never invents configurations.
//
// It imports capture, evidence, and formats/tritonautotune for the name of
// the format it stages.
package triton

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/tritonautotune"
)

// Pinned is the Triton release whose autotune cache format the decoder
// follows (triton/runtime/autotuner.py, check_disk_cache).
const Pinned = "3.7"

const probeTimeout = 60 * time.Second

// probe imports Triton in the workload interpreter; importing needs no GPU.
const probe = `import json, sys
try:
    import triton
    v = triton.__version__
except Exception as e:
    v = None
print(json.dumps({"executable": sys.executable, "python": sys.version.split()[0], "triton": v}))
`

// CacheDir is the request-owned cache directory under the plan's
// OutputDir; the autotune files lie one directory below it.
const CacheDir = "triton-cache"

// Provider is the Triton autotune provider.
var Provider = &capture.Provider{
	Name:    "triton",
	Example: []string{".venv/bin/python", "train.py"},
	Title:   "Triton autotuning (cold cache, cache_results)",
	Family:  "GPU and kernels",
	Selection: "Record what Triton's autotuner measures for each kernel and tuning key: every configuration's timings and the one " +
		"it selects. The workload argv must start with the Python interpreter that has Triton " + Pinned + ", and its kernels must " +
		"already use @triton.autotune. Runs with TRITON_CACHE_AUTOTUNING=1 and a fresh TRITON_CACHE_DIR: a cold-cache tuning, " +
		"not a warm benchmark. Needs a GPU Triton supports.",
	Artifacts: []capture.Role{
		{Role: RoleAutotune, Format: tritonautotune.Spec.Name, Pattern: filepath.Join(CacheDir, "*", "*"+tritonautotune.Suffix), Required: true,
			Doc: "the autotuner's cache files, one per kernel and tuning key; a bundle keeps each with the whole cache it lies in (CacheBundle)"},
	},
	Binding: capture.Binding{Executable: "python", InWorkload: true,
		Guidance: "install Triton " + Pinned + " in the workload interpreter: <python> -m pip install 'triton==" + Pinned + ".*'"},
	Resolve: resolve,
	Plan:    plan,
}

type probeResult struct {
	Executable string  `json:"executable"`
	Python     string  `json:"python"`
	Triton     *string `json:"triton"`
}

func resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	if len(req.Argv) == 0 {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "triton capture needs a workload argv starting with its Python interpreter")
	}
	py, err := capture.WorkloadExecutable(req.Argv[0], req.Cwd, "workload interpreter")
	if err != nil {
		return nil, err
	}
	var pr probeResult
	if err := (&capture.InterpreterProbe{Script: probe, For: "triton", Timeout: probeTimeout,
		Broken: fmt.Sprintf("argv[0] %s is not a working Python interpreter: the triton provider runs the workload with it", py), Field: "argv",
		Silent: fmt.Sprintf("argv[0] %s did not answer the Python probe; the triton provider needs a Python interpreter as argv[0]", py),
	}).Run(ctx, py, req.Cwd, &pr); err != nil {
		return nil, err
	}
	retry := capture.InstallRetry(pr.Executable, "Triton "+Pinned, "triton=="+Pinned+".*")
	if pr.Triton == nil {
		return nil, capture.NotInWorkload("Triton", pr.Executable, pr.Python, retry)
	}
	if v := *pr.Triton; v != Pinned && !strings.HasPrefix(v, Pinned+".") {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("the workload interpreter %s has Triton %s; the autotune cache format read here is Triton %s's", pr.Executable, v, Pinned),
			Retry:   retry, Details: evidence.Object{"triton": v}}
	}
	return capture.InterpreterResolved(pr.Executable, "triton "+*pr.Triton)
}

func plan(req *capture.Request, scratch string, _ *capture.Resolved) (*capture.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "triton capture needs a workload argv starting with its Python interpreter")
	}
	out := filepath.Join(scratch, "triton")
	cache := filepath.Join(out, CacheDir)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "triton cache directory")
	}
	return &capture.Plan{Command: append([]string(nil), req.Argv...), Dir: req.Cwd, OutputDir: out,
		Env: []string{"TRITON_CACHE_AUTOTUNING=1", "TRITON_CACHE_DIR=" + cache}}, nil
}
