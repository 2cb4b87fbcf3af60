// Package nodeheap is the node-heap-profile capture provider: it runs a
// Node.js program under V8's sampling heap profiler (`node --heap-prof`)
// and stages the profiles Node writes, one per profiled thread or process,
// under Node's generated names.
//
// It imports capture, evidence, param, and formats/v8heap for the name of
// the format it stages.
package nodeheap

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
	"github.com/flameox/flameox/internal/formats/v8heap"
	"github.com/flameox/flameox/internal/param"
)

// Guidance is the host guidance when node is missing or too old.
const Guidance = "install Node.js 12 or newer (Debian: apt-get install nodejs) and put node on PATH, or name its path as the workload's argv[0]"

// minMajor is the first Node.js release with --heap-prof.
const minMajor = 12

// Provider is the node-heap-profile contract.
var Provider = &capture.Provider{
	Name:   "node-heap-profile",
	Title:  "Node.js sampling heap profile (V8 --heap-prof)",
	Family: "Memory profiles",
	Selection: "Sample a Node.js program's heap allocations with V8's sampling heap profiler: pick it for where " +
		"JavaScript memory is held in `node script.js`. The main thread, its worker threads and processes started " +
		"with child_process.fork (which inherit Node's flags) each write their own profile at exit, holding the " +
		"sampled allocations still live then. Other descendants are not profiled, and a process ended by a signal " +
		"(budget, cancellation) writes no profile.",
	Params: []param.Param{
		{Name: "sampling_interval_bytes", Type: param.Int, Default: int64(512 * 1024), Min: param.F(1), Max: param.F(1 << 30),
			Doc: "average bytes between heap samples (node --heap-prof-interval; V8's default 512 KiB)"},
	},
	Artifacts: []capture.Role{{
		Role: "heap-profile", Format: v8heap.Spec.Name, Pattern: "*.heapprofile", Required: true,
		Doc: "one profile per profiled thread or process, under Node's generated name Heap.<date>.<time>.<pid>.<tid>.<seq>.heapprofile",
		Unflushed: "V8 writes a --heap-prof profile only when the process reaches a normal exit (its end, process.exit, " +
			"an uncaught exception); a process ended by a signal writes none, so no profile of this run exists",
	}},
	Example: []string{"node", "app.js"},
	Binding: capture.Binding{Executable: "node", Guidance: Guidance},
	Resolve: resolve,
	Plan:    plan,
}

// resolve checks the workload's shape and binds the node it names.
func resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	argv0 := req.Argv[0]
	if b := filepath.Base(argv0); b != "node" && b != "nodejs" {
		return nil, evidence.Failf(evidence.CodeInvalidArgument,
			"node-heap-profile runs `node script.js ...`; the workload's argv[0] is %q", argv0)
	}
	for _, a := range req.Argv[1:] {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--heap-prof") {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message:  fmt.Sprintf("node-heap-profile sets Node's --heap-prof flags itself; remove %q (use --sampling-interval-bytes for the interval)", a),
				Location: evidence.Location{Field: "argv"}}
		}
	}
	path, err := capture.WorkloadPath(argv0, req.Cwd)
	if err != nil {
		return nil, unavailable("%s is not on PATH", argv0)
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, unavailable("%s: %v", argv0, err)
	}
	sum, err := capture.FileSHA256(path)
	if err != nil {
		return nil, unavailable("%v", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(pctx, path, "--version").Output()
	if ctx.Err() != nil {
		return nil, evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "node-heap-profile: %s --version", path)
	}
	version := strings.TrimSpace(string(out))
	major, perr := strconv.Atoi(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 2)[0])
	if err != nil || perr != nil {
		return nil, unavailable("%s --version did not report a Node.js version (%q, %v)", path, clip(version), err)
	}
	if major < minMajor {
		return nil, unavailable("%s is Node.js %s; --heap-prof needs %d or newer", path, version, minMajor)
	}
	return &capture.Resolved{Executable: &evidence.Executable{Path: path, SHA256: sum}, Version: version}, nil
}

func unavailable(format string, args ...any) error {
	return &evidence.Failure{Code: evidence.CodeProviderUnavailable,
		Message: "node-heap-profile: " + fmt.Sprintf(format, args...),
		Retry:   &evidence.Retry{Action: Guidance}}
}

// plan inserts the profiler flags right after argv[0], so they are Node
// options of the main process whatever the script's own arguments are.
// No --heap-prof-name: Node's generated names carry the pid and thread id,
// so forked processes and workers do not overwrite each other's profile.
func plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	interval, ok := evidence.AsInt(req.Args["sampling_interval_bytes"])
	if !ok {
		return nil, fmt.Errorf("node-heap-profile: sampling_interval_bytes is %v", req.Args["sampling_interval_bytes"])
	}
	out := filepath.Join(scratch, "heap-profile")
	cmd := []string{r.Executable.Path, "--heap-prof", "--heap-prof-dir=" + out, "--heap-prof-interval=" + strconv.FormatInt(interval, 10)}
	return &capture.Plan{Command: append(cmd, req.Argv[1:]...), Dir: req.Cwd, OutputDir: out}, nil
}

func clip(s string) string {
	if len(s) > 80 {
		s = s[:80]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
