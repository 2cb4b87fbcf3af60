// Package sanitizer is the capture provider for NVIDIA Compute Sanitizer:
// `compute-sanitizer --tool T --log-file <OutputDir>/sanitizer.log` around
// the workload, staging the text report (format compute-sanitizer, role
// sanitizer-report). compute-sanitizer comes with the CUDA toolkit (or the
// nvidia-cuda-sanitizer-api wheel); it is resolved from PATH, then
// /usr/local/cuda/bin, and identified by digest and `--version` before the
// workload runs. It needs an NVIDIA GPU and driver to run the workload:
// without them the capture fails when the tool starts, as the tool says.
//
// It imports capture, evidence, param, and formats/sanitizer for the name
// of the format it stages.
package sanitizer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	sanformat "github.com/flameox/flameox/internal/formats/sanitizer"
	"github.com/flameox/flameox/internal/param"
)

// Argument names.
const (
	ArgTool          = "tool"
	ArgLeakCheck     = "leak_check"
	ArgPrintLimit    = "print_limit"
	ArgShowBacktrace = "show_backtrace"
)

// OutputName is the report file in the plan's OutputDir.
const OutputName = "sanitizer.log"

// Guidance is what to do when compute-sanitizer is missing.
const Guidance = "install the CUDA toolkit (compute-sanitizer is in its bin directory, e.g. /usr/local/cuda/bin) or " +
	"`python3 -m pip install nvidia-cuda-sanitizer-api` and put its compute-sanitizer on PATH; the workload also needs an NVIDIA GPU and driver"

// fallback is where CUDA installs put the tool when it is not on PATH.
var fallback = "/usr/local/cuda/bin/compute-sanitizer"

// Provider is the compute-sanitizer capture provider.
var Provider = &capture.Provider{
	Name:    "compute-sanitizer",
	Example: []string{"./app"},
	Title:   "NVIDIA Compute Sanitizer (memcheck, racecheck, initcheck, synccheck)",
	Family:  "GPU and kernels",
	Selection: "Check CUDA kernels for correctness while the workload runs: out-of-bounds and misaligned accesses and leaks " +
		"(memcheck), shared-memory races (racecheck), uninitialized reads (initcheck), barrier misuse (synccheck). Kernels run " +
		"10-100x slower or more. Needs compute-sanitizer and an NVIDIA GPU with its driver.",
	Params: []param.Param{
		{Name: ArgTool, Type: param.Enum, Enum: sanformat.Tools, Default: "memcheck", Doc: "the sanitizer tool (compute-sanitizer --tool)"},
		{Name: ArgLeakCheck, Type: param.Bool, Default: false, Doc: "memcheck only: report device allocations never freed (--leak-check full)"},
		{Name: ArgPrintLimit, Type: param.Int, Default: int64(100), Min: param.F(0), Max: param.F(1000000),
			Doc: "errors printed at most (--print-limit; 0: unlimited); the report's ERROR SUMMARY still counts them all"},
		{Name: ArgShowBacktrace, Type: param.Enum, Enum: []string{"yes", "host", "device", "no"}, Default: "yes",
			Doc: "backtraces printed with each error (--show-backtrace); without host frames the findings are incomplete"},
	},
	Artifacts: []capture.Role{
		{Role: "sanitizer-report", Format: sanformat.Spec.Name, Pattern: OutputName, Required: true,
			Doc: "compute-sanitizer's text report (--log-file)"},
	},
	Binding: capture.Binding{Executable: "compute-sanitizer", Guidance: Guidance},
	Resolve: resolve,
	Plan:    plan,
}

var versionLine = regexp.MustCompile(`(?m)^Version (\S+)`)

func resolve(ctx context.Context, _ *capture.Request) (*capture.Resolved, error) {
	path, digest, err := (&capture.HostTool{Name: "compute-sanitizer", Fallback: fallback,
		Missing: "compute-sanitizer is not on PATH (nor in /usr/local/cuda/bin)", Guidance: Guidance}).Look()
	if err != nil {
		return nil, err
	}
	out, err := capture.HostVersion(ctx, path, 30*time.Second)
	m := versionLine.FindSubmatch(out)
	if err != nil || m == nil || !strings.Contains(string(out), "Compute Sanitizer") {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("%s --version did not identify NVIDIA Compute Sanitizer (output %q, error %v)", path, firstLine(out), err),
			Retry:   &evidence.Retry{Action: Guidance}}
	}
	return &capture.Resolved{Executable: &evidence.Executable{Path: path, SHA256: digest}, Version: string(m[1])}, nil
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

func plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "compute-sanitizer capture needs a workload command after --")
	}
	tool, _ := req.Args[ArgTool].(string)
	if tool == "" {
		tool = "memcheck"
	}
	leak, _ := req.Args[ArgLeakCheck].(bool)
	if leak && tool != "memcheck" {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: "leak_check applies to the memcheck tool only", Location: evidence.Location{Field: ArgLeakCheck}}
	}
	limit, ok := evidence.AsInt(req.Args[ArgPrintLimit])
	if !ok {
		limit = 100
	}
	bt, _ := req.Args[ArgShowBacktrace].(string)
	if bt == "" {
		bt = "yes"
	}
	out := filepath.Join(scratch, "sanitizer")
	// --log-file expands %p and %q{VAR}: a path holding % would name another file.
	if strings.ContainsRune(out, '%') {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "the capture scratch directory %s holds %%, which compute-sanitizer's --log-file would expand", out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "compute-sanitizer output directory")
	}
	cmd := []string{r.Executable.Path, "--tool", tool, "--log-file", filepath.Join(out, OutputName),
		"--print-limit", strconv.FormatInt(limit, 10), "--show-backtrace", bt}
	if leak {
		cmd = append(cmd, "--leak-check", "full")
	}
	cmd = append(cmd, "--")
	cmd = append(cmd, req.Argv...)
	// The workload's own exit status (a kernel fault makes it fail) does
	// not void the report: the findings are the evidence.
	return &capture.Plan{Command: cmd, Dir: req.Cwd, OutputDir: out, AnyExit: true}, nil
}
