// Package nsys is the capture provider for Nsight Systems: `nsys profile
// -o <OutputDir>/report` around the workload, staging report.nsys-rep
// (format nsys-rep, role system-report). Before the workload runs it
// locates nsys as the nsys-rep decoder does (PATH, then the installers'
// directories) and identifies it by digest and `nsys --version`; without
// it the capture is PROVIDER_UNAVAILABLE with setup guidance. Decoding the
// report converts it with that same installation (`nsys export --type
// parquetdir`, cached per session).
//
// It imports capture, evidence, param, and formats/nsys for the format it
// stages and the way nsys is located.
package nsys

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	nsysformat "github.com/flameox/flameox/internal/formats/nsys"
	"github.com/flameox/flameox/internal/param"
)

// Argument names.
const (
	ArgTrace  = "trace"
	ArgSample = "sample"
)

// OutputName is the report nsys writes in the plan's OutputDir.
const OutputName = "report.nsys-rep"

// Guidance is what to do when Nsight Systems is missing.
const Guidance = "install NVIDIA Nsight Systems (with the CUDA toolkit, or from developer.nvidia.com/nsight-systems) and put nsys on PATH; " +
	"tracing CUDA needs an NVIDIA GPU and its driver"

// traceList is nsys's --trace value: comma-separated API names.
var traceList = regexp.MustCompile(`^[a-z][a-z0-9-]*(,[a-z][a-z0-9-]*)*$`)

// Provider is the Nsight Systems capture provider.
var Provider = &capture.Provider{
	Name:    "nsight-systems",
	Example: []string{"./app"},
	Title:   "NVIDIA Nsight Systems (CUDA API, kernels, NVTX timeline)",
	Family:  "GPU and kernels",
	Selection: "Trace a whole run on a timeline: CUDA runtime and driver calls, every kernel, copy and memset on each device, " +
		"NVTX ranges, and OS runtime calls, with low overhead (no kernel replay). Use it to see which kernels ran and how long " +
		"(inspect_gpu_launches) and where host time goes around them (summarize_trace_operations); use nsight-compute for " +
		"per-kernel hardware metrics.",
	Params: []param.Param{
		{Name: ArgTrace, Type: param.String, Default: "cuda,nvtx,osrt",
			Doc: "APIs to trace (nsys --trace), comma-separated: cuda, nvtx, osrt, cublas, cudnn, mpi..."},
		{Name: ArgSample, Type: param.Enum, Enum: []string{"none", "process-tree", "system-wide"}, Default: "none",
			Doc: "CPU sampling (nsys --sample); flameox does not decode the samples, so none keeps the overhead down"},
	},
	Artifacts: []capture.Role{
		{Role: "system-report", Format: nsysformat.RepSpec.Name, Pattern: OutputName, Required: true,
			Doc:       "the Nsight Systems report, decoded through nsys export --type parquetdir",
			Unflushed: "nsys writes the report when the profiled process exits; a workload ended by a budget or a signal may leave none"},
	},
	Binding: capture.Binding{Executable: "nsys", Guidance: Guidance},
	Resolve: resolve,
	Plan:    plan,
}

var versionWord = regexp.MustCompile(`version (\S+)`)

func resolve(ctx context.Context, _ *capture.Request) (*capture.Resolved, error) {
	n, err := nsysformat.Locate(ctx)
	if err != nil {
		if f, ok := err.(*evidence.Failure); ok && f.Code == evidence.CodeProviderUnavailable {
			f.Retry = &evidence.Retry{Action: Guidance}
		}
		return nil, err
	}
	v := n.Version
	if m := versionWord.FindStringSubmatch(n.Version); m != nil {
		v = m[1]
	}
	return &capture.Resolved{Executable: &evidence.Executable{Path: n.Path, SHA256: n.Digest}, Version: v}, nil
}

func plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "nsight-systems capture needs a workload command after --")
	}
	if strings.HasPrefix(req.Argv[0], "-") {
		// nsys takes the first word that is not an option as the program.
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: "the workload command starts with " + req.Argv[0] + ", which nsys would read as its own option"}
	}
	tr, _ := req.Args[ArgTrace].(string)
	if tr == "" {
		tr = "cuda,nvtx,osrt"
	}
	if !traceList.MatchString(tr) {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: "trace must be comma-separated API names such as cuda,nvtx,osrt, not " + tr, Location: evidence.Location{Field: ArgTrace}}
	}
	sample, _ := req.Args[ArgSample].(string)
	if sample == "" {
		sample = "none"
	}
	out := filepath.Join(scratch, "nsys")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "nsys output directory")
	}
	cmd := []string{r.Executable.Path, "profile", "--output", filepath.Join(out, strings.TrimSuffix(OutputName, ".nsys-rep")),
		"--force-overwrite", "true", "--trace", tr, "--sample", sample, "--stats", "false", "--export", "none"}
	cmd = append(cmd, req.Argv...)
	return &capture.Plan{Command: cmd, Dir: req.Cwd, OutputDir: out}, nil
}
