// Package node is the node-cpu-profile capture provider: it runs a Node.js
// program under V8's sampling CPU profiler (`node --cpu-prof`) and stages
// the profiles Node writes, one per profiled thread or process.
//
// It imports capture, evidence, param, and formats/v8cpu for the name of the format it stages.
package node

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/v8cpu"
	"github.com/flameox/flameox/internal/param"
)

// Guidance is the host guidance when node is missing or too old.
const Guidance = "install Node.js 12 or newer (Debian: apt-get install nodejs) and put node on PATH, or name its path as the workload's argv[0]"

// Provider is the node-cpu-profile contract.
var Provider = &capture.Provider{
	Name:   "node-cpu-profile",
	Title:  "Node.js CPU profile (V8 --cpu-prof)",
	Family: "CPU profiles",
	Selection: "Sample a Node.js program's CPU time with V8's profiler: pick it for JavaScript hotspots of " +
		"`node script.js`. The main thread, its worker threads and processes started with child_process.fork " +
		"(which inherit Node's flags) each write their own profile. Other descendants (spawn/exec of node, npm " +
		"scripts) are not profiled, and a process ended by a signal (budget, cancellation) writes no profile.",
	Params: []param.Param{
		{Name: "sampling_interval_us", Type: param.Int, Default: int64(1000), Min: param.F(1), Max: param.F(1e6),
			Doc: "V8 sampling interval in microseconds (node --cpu-prof-interval)"},
	},
	Artifacts: []capture.Role{{
		Role: "cpu-profile", Format: v8cpu.Spec.Name, Pattern: "*.cpuprofile", Required: true,
		Doc: "one profile per profiled thread or process, under Node's generated name CPU.<date>.<time>.<pid>.<tid>.<seq>.cpuprofile",
		Unflushed: "V8 writes a --cpu-prof profile only when the process reaches a normal exit (its end, process.exit, " +
			"an uncaught exception); a process ended by a signal writes none, so no profile of this run exists",
	}},
	Example: []string{"node", "app.js"},
	Binding: capture.Binding{Executable: "node", Guidance: Guidance},
	Resolve: resolve,
	Plan:    plan,
}

// cpuProf is what node-cpu-profile sets on Node's command line.
var cpuProf = &Profiler{
	Provider: "node-cpu-profile",
	Flag:     "--cpu-prof",
	Needs:    "--cpu-prof-dir",
	Param:    "sampling_interval_us",
	Output:   "cpu-profile",
}

func resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	return cpuProf.Resolve(ctx, req)
}

// plan: Node refuses --cpu-prof in NODE_OPTIONS, so descendants started
// any way other than child_process.fork (which passes execArgv on) are not
// profiled.
func plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	return cpuProf.Plan(req, scratch, r)
}

// Profiler is one of V8's profilers that Node starts from its own flags
// (--cpu-prof, --heap-prof): the resolve and plan its providers share.
type Profiler struct {
	Provider string // the provider's name, which starts its failures
	Flag     string // the flag family it owns: Flag, Flag-dir=, Flag-interval=
	Needs    string // the flag that needs Node.js MinMajor, for the too-old failure
	Param    string // the provider argument holding the interval
	Output   string // the output directory's name in the scratch
}

// MinMajor is the first Node.js release with --cpu-prof-dir and --heap-prof.
const MinMajor = 12

// Resolve checks the workload's shape and binds the node it names.
func (p *Profiler) Resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	argv0 := req.Argv[0]
	if b := filepath.Base(argv0); b != "node" && b != "nodejs" {
		return nil, evidence.Failf(evidence.CodeInvalidArgument,
			"%s runs `node script.js ...`; the workload's argv[0] is %q", p.Provider, argv0)
	}
	for _, a := range req.Argv[1:] {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, p.Flag) {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: fmt.Sprintf("%s sets Node's %s flags itself; remove %q (use --%s for the interval)",
					p.Provider, p.Flag, a, strings.ReplaceAll(p.Param, "_", "-")),
				Location: evidence.Location{Field: "argv"}}
		}
	}
	path, err := capture.WorkloadPath(argv0, req.Cwd)
	if err != nil {
		return nil, p.unavailable("%s is not on PATH", argv0)
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, p.unavailable("%s: %v", argv0, err)
	}
	sum, err := capture.FileSHA256(path)
	if err != nil {
		return nil, p.unavailable("%v", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(pctx, path, "--version").Output()
	if ctx.Err() != nil {
		return nil, evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "%s: %s --version", p.Provider, path)
	}
	version := strings.TrimSpace(string(out))
	major, perr := strconv.Atoi(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 2)[0])
	if err != nil || perr != nil {
		return nil, p.unavailable("%s --version did not report a Node.js version (%q, %v)", path, clip(version), err)
	}
	if major < MinMajor {
		return nil, p.unavailable("%s is Node.js %s; %s needs %d or newer", path, version, p.Needs, MinMajor)
	}
	return &capture.Resolved{Executable: &evidence.Executable{Path: path, SHA256: sum}, Version: version}, nil
}

func (p *Profiler) unavailable(format string, args ...any) error {
	return &evidence.Failure{Code: evidence.CodeProviderUnavailable,
		Message: p.Provider + ": " + fmt.Sprintf(format, args...),
		Retry:   &evidence.Retry{Action: Guidance}}
}

// Plan inserts the profiler flags right after argv[0], so they are Node
// options of the main process whatever the script's own arguments are.
// No name flag: Node's generated names carry the pid and thread id, so
// forked processes and workers do not overwrite each other's profile.
func (p *Profiler) Plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	interval, ok := evidence.AsInt(req.Args[p.Param])
	if !ok {
		return nil, fmt.Errorf("%s: %s is %v", p.Provider, p.Param, req.Args[p.Param])
	}
	out := filepath.Join(scratch, p.Output)
	cmd := []string{r.Executable.Path, p.Flag, p.Flag + "-dir=" + out, p.Flag + "-interval=" + strconv.FormatInt(interval, 10)}
	return &capture.Plan{Command: append(cmd, req.Argv[1:]...), Dir: req.Cwd, OutputDir: out}, nil
}

func clip(s string) string {
	if len(s) > 80 {
		s = s[:80]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
