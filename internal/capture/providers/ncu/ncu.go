// Package ncu is the capture provider for Nsight Compute: `ncu -o
// <OutputDir>/report` around the workload, staging report.ncu-rep (format
// ncu-rep, role kernel-report). Before the workload runs it resolves ncu
// (PATH, then /usr/local/cuda/bin) and, in the same installation, the
// vendor-shipped reader extras/python/ncu_report.py that decoding needs;
// an installation without it is PROVIDER_UNAVAILABLE with setup guidance,
// so no report is captured that nothing here could read.
//
// It imports capture, evidence, param, and formats/ncu for the name of the
// format it stages.
package ncu

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
	ncuformat "github.com/flameox/flameox/internal/formats/ncu"
	"github.com/flameox/flameox/internal/param"
)

// Argument names.
const (
	ArgSet         = "set"
	ArgKernelName  = "kernel_name"
	ArgLaunchCount = "launch_count"
)

// OutputName is the report ncu writes in the plan's OutputDir.
const OutputName = "report.ncu-rep"

// Guidance is what to do when Nsight Compute is missing or incomplete.
const Guidance = "install NVIDIA Nsight Compute (with the CUDA toolkit, or from developer.nvidia.com/nsight-compute) so that ncu " +
	"and its extras/python/ncu_report.py are both present, and put ncu on PATH; profiling needs an NVIDIA GPU, its driver, and " +
	"permission to read GPU performance counters"

var fallback = "/usr/local/cuda/bin/ncu"

// Provider is the Nsight Compute capture provider.
var Provider = &capture.Provider{
	Name:    "nsight-compute",
	Example: []string{"./app"},
	Title:   "NVIDIA Nsight Compute (per-kernel metrics)",
	Family:  "GPU and kernels",
	Selection: "Profile CUDA kernel launches one by one with hardware counters: duration, SM and memory throughput, occupancy, " +
		"and NVIDIA's rule results. Each profiled kernel is replayed, so the workload runs much slower; limit the kernels with " +
		"kernel_name and launch_count. Decoding reads the report with the installation's extras/python (set " +
		ncuformat.EnvReaderDir + " to it) or the ncu-report package.",
	Params: []param.Param{
		{Name: ArgSet, Type: param.Enum, Enum: []string{"basic", "detailed", "full"}, Default: "basic",
			Doc: "section set to collect (ncu --set): basic, detailed, full (slower, more metrics)"},
		{Name: ArgKernelName, Type: param.String, Doc: "profile only kernels whose name matches this regular expression (ncu --kernel-name regex:...)"},
		{Name: ArgLaunchCount, Type: param.Int, Min: param.F(1), Max: param.F(1000000), Doc: "profile at most this many kernel launches (ncu --launch-count)"},
	},
	Artifacts: []capture.Role{
		{Role: "kernel-report", Format: ncuformat.Spec.Name, Pattern: OutputName, Required: true, Doc: "the Nsight Compute report"},
	},
	Binding: capture.Binding{Executable: "ncu", Guidance: Guidance},
	Resolve: resolve,
	Plan:    plan,
}

var versionLine = regexp.MustCompile(`(?m)^Version (\S+)`)

// Reader finds extras/python/ncu_report.py of the installation that ncu
// (after symbolic links) belongs to: beside it, or, for the CUDA
// toolkit's bin/ncu launcher, in the toolkit's nsight-compute-* directory.
func Reader(ncu string) (string, bool) {
	real, err := filepath.EvalSymlinks(ncu)
	if err != nil {
		real = ncu
	}
	dir := filepath.Dir(real)
	cands := []string{filepath.Join(dir, "extras", "python")}
	if m, _ := filepath.Glob(filepath.Join(dir, "..", "nsight-compute*", "extras", "python")); len(m) > 0 {
		cands = append(cands, m...)
	}
	for _, c := range cands {
		if st, err := os.Stat(filepath.Join(c, "ncu_report.py")); err == nil && st.Mode().IsRegular() {
			return filepath.Clean(c), true
		}
	}
	return "", false
}

func resolve(ctx context.Context, _ *capture.Request) (*capture.Resolved, error) {
	path, digest, err := (&capture.HostTool{Name: "ncu", Fallback: fallback,
		Missing: "ncu (Nsight Compute) is not on PATH (nor in /usr/local/cuda/bin)", Guidance: Guidance}).Look()
	if err != nil {
		return nil, err
	}
	if _, ok := Reader(path); !ok {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("%s has no extras/python/ncu_report.py in its installation: its reports could not be read", path),
			Retry:   &evidence.Retry{Action: Guidance}, Details: evidence.Object{"ncu": path}}
	}
	out, err := capture.HostVersion(ctx, path, 60*time.Second)
	m := versionLine.FindSubmatch(out)
	if err != nil || m == nil || !strings.Contains(string(out), "Nsight Compute") {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("%s --version did not identify Nsight Compute (error %v)", path, err),
			Retry:   &evidence.Retry{Action: Guidance}}
	}
	return &capture.Resolved{Executable: &evidence.Executable{Path: path, SHA256: digest}, Version: string(m[1])}, nil
}

func plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "nsight-compute capture needs a workload command after --")
	}
	set, _ := req.Args[ArgSet].(string)
	if set == "" {
		set = "basic"
	}
	out := filepath.Join(scratch, "ncu")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "ncu output directory")
	}
	cmd := []string{r.Executable.Path, "--set", set, "--force-overwrite", "--export", filepath.Join(out, strings.TrimSuffix(OutputName, ".ncu-rep"))}
	if k, _ := req.Args[ArgKernelName].(string); k != "" {
		if _, err := regexp.Compile(k); err != nil {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: "kernel_name: " + err.Error(), Location: evidence.Location{Field: ArgKernelName}}
		}
		cmd = append(cmd, "--kernel-name", "regex:"+k)
	}
	if n, ok := evidence.AsInt(req.Args[ArgLaunchCount]); ok {
		cmd = append(cmd, "--launch-count", strconv.FormatInt(n, 10))
	}
	cmd = append(cmd, "--")
	cmd = append(cmd, req.Argv...)
	return &capture.Plan{Command: cmd, Dir: req.Cwd, OutputDir: out}, nil
}
