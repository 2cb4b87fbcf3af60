// Package nodeheap is the node-heap-profile capture provider: it runs a
// Node.js program under V8's sampling heap profiler (`node --heap-prof`)
// and stages the profiles Node writes, one per profiled thread or process,
// under Node's generated names.
//
// It imports capture, param, providers/node for the V8 profiler flags it
// shares with node-cpu-profile, and formats/v8heap for the name of the
// format it stages.
package nodeheap

import (
	"context"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/capture/providers/node"
	"github.com/flameox/flameox/internal/formats/v8heap"
	"github.com/flameox/flameox/internal/param"
)

// Guidance is the host guidance when node is missing or too old.
const Guidance = node.Guidance

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

// heapProf is what node-heap-profile sets on Node's command line.
var heapProf = &node.Profiler{
	Provider: "node-heap-profile",
	Flag:     "--heap-prof",
	Needs:    "--heap-prof",
	Param:    "sampling_interval_bytes",
	Output:   "heap-profile",
}

func resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	return heapProf.Resolve(ctx, req)
}

func plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	return heapProf.Plan(req, scratch, r)
}
