// Package pyspy is the py-spy capture provider: it samples a Python
// workload with py-spy, pinned at one version that `flameox-capture setup
// --provider py-spy` prepares, and stages one speedscope file with a
// profile per sampled thread.
//
// It imports capture, evidence, param, and formats/speedscope for the name of the format it stages.
package pyspy

import (
	"context"
	"os"
	"path/filepath"
	"strconv"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/speedscope"
	"github.com/flameox/flameox/internal/param"
)

// Version is the pinned py-spy version.
const Version = "0.4.2"

// OutputName is the file py-spy writes inside the plan's output dir.
const OutputName = "profile.speedscope.json"

// Collector is the pinned py-spy that setup installs and capture re-checks.
var Collector = capture.Managed{
	Provider:      "py-spy",
	Package:       "py-spy",
	Version:       Version,
	Executable:    "py-spy",
	VersionArgs:   []string{"--version"},
	VersionPrefix: "py-spy " + Version,
}

// Params are py-spy's capture arguments.
var Params = []param.Param{
	{Name: "rate", Type: param.Int, Default: int64(100), Min: param.F(1), Max: param.F(10000),
		Doc: "samples per second (py-spy --rate)"},
	{Name: "subprocesses", Type: param.Bool, Default: false,
		Doc: "also sample the workload's Python subprocesses (--subprocesses); each becomes its own profiles"},
	{Name: "native", Type: param.Bool, Default: false,
		Doc: "include native (C, C++, Cython) frames (--native)"},
	{Name: "idle", Type: param.Bool, Default: false,
		Doc: "include samples of idle threads (--idle); off, waiting threads are not sampled"},
	{Name: "gil", Type: param.Bool, Default: false,
		Doc: "only sample threads holding the GIL (--gil)"},
	{Name: "nonblocking", Type: param.Bool, Default: false,
		Doc: "do not pause the workload to sample (--nonblocking): less overhead, possibly inconsistent stacks"},
}

// flags maps boolean params to py-spy flags, in command-line order.
var flags = []struct{ param, flag string }{
	{"subprocesses", "--subprocesses"},
	{"native", "--native"},
	{"idle", "--idle"},
	{"gil", "--gil"},
	{"nonblocking", "--nonblocking"},
}

// Provider is the py-spy capture provider.
var Provider = &capture.Provider{
	Name:   "py-spy",
	Title:  "py-spy sampling profiler for Python",
	Family: "CPU profiles",
	Selection: "Sample where a Python program spends CPU time, per thread, without changing or " +
		"instrumenting it. The workload argv must start the Python interpreter itself (not a shell " +
		"wrapper such as a pyenv shim, which py-spy cannot read). Sampled weights are time, not call " +
		"counts. py-spy needs permission to ptrace the workload (root, or CAP_SYS_PTRACE). py-spy " +
		Version + " exits 0 even when the profiled program fails, so the capture's exit status is " +
		"py-spy's, not the workload's; and it sometimes exits 1 with \"No child process (os error 10)\" " +
		"after writing a complete profile (benfred/py-spy#759), so status 1 is accepted: a real " +
		"failure writes no profile and ends as outputs_missing.",
	Params: Params,
	Artifacts: []capture.Role{{
		Role:     "cpu-profile",
		Format:   speedscope.Spec.Name,
		Pattern:  OutputName,
		Required: true,
		Doc:      "py-spy's speedscope output: one sampled profile per thread (and per process with subprocesses)",
	}},
	Example: []string{"python3", "app.py"},
	Binding: capture.Binding{
		Executable: "py-spy",
		Managed:    true,
		Pinned:     Version,
		Setup:      &Collector,
		Guidance: "run `flameox-capture setup --provider py-spy` to prepare py-spy " + Version +
			"; sampling needs ptrace permission over the workload (run as root or grant CAP_SYS_PTRACE)",
	},
	Resolve: func(ctx context.Context, _ *capture.Request) (*capture.Resolved, error) {
		return capture.ResolveManaged(ctx, Collector)
	},
	Plan: plan,
}

// plan builds `py-spy record --format speedscope -o OUT --rate N [flags]
// -- ARGV` with the output inside the request's scratch.
func plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "py-spy: the workload argv is empty; give the Python command after --")
	}
	if r == nil || r.Executable == nil || r.Executable.Path == "" {
		return nil, evidence.Failf(evidence.CodeInternal, "py-spy: planned without a resolved collector")
	}
	rate, ok := evidence.AsInt(req.Args["rate"])
	if !ok {
		return nil, evidence.Failf(evidence.CodeInternal, "py-spy: rate %v was not validated", req.Args["rate"])
	}
	out := filepath.Join(scratch, "output")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "py-spy: create the output directory")
	}
	cmd := []string{r.Executable.Path, "record", "--format", "speedscope",
		"-o", filepath.Join(out, OutputName), "--rate", strconv.FormatInt(rate, 10)}
	for _, f := range flags {
		if on, _ := req.Args[f.param].(bool); on {
			cmd = append(cmd, f.flag)
		}
	}
	cmd = append(cmd, "--")
	cmd = append(cmd, req.Argv...)
	// Status 1 also ends runs whose profile py-spy wrote in full (see
	// Selection); the required output decides.
	return &capture.Plan{Command: cmd, Dir: req.Cwd, OutputDir: out, AcceptExit: []int{0, 1}}, nil
}
