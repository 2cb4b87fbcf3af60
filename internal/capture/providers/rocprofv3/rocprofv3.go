// Package rocprofv3 is the capture provider for AMD's rocprofv3
// (ROCm rocprofiler-sdk): `rocprofv3 <trace options> --output-format csv
// -d <OutputDir> -o run -- <workload>`, staging each trace CSV it writes
// (format rocprofv3-csv). rocprofv3 is a vendor tool that flameox never
// installs: before the workload runs, it is resolved (PATH, then
// /opt/rocm/bin) and its `--version` must identify it; otherwise the
// capture is PROVIDER_UNAVAILABLE with host guidance.
//
// It imports capture, evidence, param, and formats/rocprof for the name
// of the format it stages.
package rocprofv3

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/rocprof"
	"github.com/flameox/flameox/internal/param"
)

// Argument names.
const (
	ArgTrace = "trace"
	ArgPMC   = "pmc"
)

// outputName is the -o file name; rocprofv3 appends _<domain>.csv.
const outputName = "run"

// Guidance is what to do when rocprofv3 is missing.
const Guidance = "install ROCm with rocprofiler-sdk (it ships /opt/rocm/bin/rocprofv3; see rocm.docs.amd.com) and put " +
	"rocprofv3 on PATH; tracing needs an AMD GPU supported by ROCm, its amdgpu driver, and access to /dev/kfd and /dev/dri"

var fallback = "/opt/rocm/bin/rocprofv3"

// traceFlags are rocprofv3's tracing options by the trace argument.
var traceFlags = map[string][]string{
	"runtime": {"--runtime-trace"},
	"sys":     {"--sys-trace"},
	"kernel":  {"--kernel-trace", "--memory-copy-trace"},
	"none":    nil,
}

// Provider is the rocprofv3 capture provider.
var Provider = &capture.Provider{
	Name:    "rocprofv3",
	Example: []string{"./app"},
	Title:   "AMD rocprofv3 (ROCm kernel, API and memory traces)",
	Family:  "Execution traces",
	Selection: "Trace a ROCm/HIP workload on an AMD GPU: kernel dispatches, HIP (and with trace=sys HSA) API calls, " +
		"memory copies and allocations, roctx markers, optionally hardware counters per dispatch (pmc). " +
		"Each domain's CSV is staged and feeds summarize_trace_operations and inspect_trace_window.",
	Params: []param.Param{
		{Name: ArgTrace, Type: param.Enum, Enum: []string{"runtime", "sys", "kernel", "none"}, Default: "runtime",
			Doc: "what to trace: runtime (--runtime-trace: HIP runtime, markers, kernels, memory), sys (--sys-trace: also HIP compiler and HSA API), kernel (--kernel-trace --memory-copy-trace), none (counters only, with pmc)"},
		{Name: ArgPMC, Type: param.String, Doc: "hardware counters to collect per dispatch, space or comma separated (rocprofv3 --pmc), e.g. \"SQ_WAVES GRBM_COUNT\""},
	},
	Artifacts: []capture.Role{
		{Role: "trace", Format: rocprof.Spec.Name, Pattern: outputName + "_*_trace.csv", Doc: "one CSV per traced domain (kernel, hip_api, memory_copy…)"},
		{Role: "counters", Format: rocprof.Spec.Name, Pattern: outputName + "_counter_collection.csv", Doc: "per-dispatch counters, when pmc is given"},
	},
	Binding: capture.Binding{Executable: "rocprofv3", Guidance: Guidance},
	Resolve: resolve,
	Plan:    plan,
}

var versionLine = regexp.MustCompile(`(?mi)^\s*version\s*[:=]\s*"?([0-9][^\s",]*)`)

func resolve(ctx context.Context, _ *capture.Request) (*capture.Resolved, error) {
	path, digest, err := (&capture.HostTool{Name: "rocprofv3", Fallback: fallback,
		Missing: "rocprofv3 (ROCm rocprofiler-sdk) is not on PATH (nor in /opt/rocm/bin)", Guidance: Guidance}).Look()
	if err != nil {
		return nil, err
	}
	out, err := capture.HostProbe(ctx, []string{path, "--version"}, 60*time.Second)
	m := versionLine.FindSubmatch(out)
	if err != nil || m == nil {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("%s --version did not print a rocprofv3 version (error %v)", path, err),
			Retry:   &evidence.Retry{Action: Guidance}, Details: evidence.Object{"rocprofv3": path}}
	}
	return &capture.Resolved{Executable: &evidence.Executable{Path: path, SHA256: digest}, Version: string(m[1])}, nil
}

func plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "rocprofv3 capture needs a workload command after --")
	}
	trace, _ := req.Args[ArgTrace].(string)
	if trace == "" {
		trace = "runtime"
	}
	pmc := strings.Fields(strings.ReplaceAll(stringArg(req.Args[ArgPMC]), ",", " "))
	if trace == "none" && len(pmc) == 0 {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument, Location: evidence.Location{Field: ArgTrace},
			Message: "rocprofv3: trace=none collects nothing without pmc; give pmc counters or another trace"}
	}
	out := filepath.Join(scratch, "rocprofv3")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "rocprofv3 output directory")
	}
	cmd := []string{r.Executable.Path}
	cmd = append(cmd, traceFlags[trace]...)
	if len(pmc) > 0 {
		cmd = append(cmd, "--pmc")
		cmd = append(cmd, pmc...)
	}
	cmd = append(cmd, "--output-format", "csv", "-d", out, "-o", outputName, "--")
	cmd = append(cmd, req.Argv...)
	return &capture.Plan{Command: cmd, Dir: req.Cwd, OutputDir: out}, nil
}

func stringArg(v any) string {
	s, _ := v.(string)
	return s
}
