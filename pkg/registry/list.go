package registry

import (
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/capture/providers/pyspy"
	"github.com/flameox/flameox/pkg/formats"
	"github.com/flameox/flameox/pkg/formats/pstats"
	"github.com/flameox/flameox/pkg/formats/speedscope"
	"github.com/flameox/flameox/pkg/formats/v8cpu"
	"github.com/flameox/flameox/pkg/projection/cpu"
)

// formatList is every native format flameox decodes, in detection order.
var formatList = []*formats.Spec{
	v8cpu.Spec,
	pstats.Spec,
	speedscope.Spec,
}

// operationList is every analysis operation.
var operationList = []*Operation{
	{
		Name:       "summarize_cpu_hotspots",
		Title:      "CPU hotspots",
		Family:     "CPU profiles",
		Projection: cpu.Hotspots,
		Guidance: "Use to find where CPU time goes in a CPU profile: functions ranked by self weight " +
			"(time or samples spent in the function itself), with inclusive weight beside it. Filters " +
			"(function_pattern, file_pattern, thread, process) select before the top bound applies.",
		Examples: []Example{
			{Title: "top 20 functions", Args: map[string]any{"top": int64(20)}},
			{Title: "only functions in app.js", Args: map[string]any{"file_pattern": `app\.js$`, "top": int64(10)}},
			{Title: "pstats ranked by cumulative time", Args: map[string]any{"metric": "cumulative"}},
		},
		Overhead: "decoding streams the artifact once; ranking holds only the top rows",
		Limitations: []string{
			"source maps are not resolved; coordinates are the producer's native ones",
		},
		Check: cpu.Check,
	},
	{
		Name:       "summarize_cpu_caller_edges",
		Title:      "CPU caller edges",
		Family:     "CPU caller edges",
		Projection: cpu.Edges,
		Guidance: "Use to see who calls a hot function and what it calls: caller→callee pairs ranked by the " +
			"callee's inclusive weight under that caller. Sampled edges are weights, not invocation counts.",
		Examples: []Example{
			{Title: "heaviest 20 edges", Args: map[string]any{"top": int64(20)}},
			{Title: "callers of one function", Args: map[string]any{"callee_pattern": "^parse$"}},
		},
		Overhead: "decoding streams the artifact once; ranking holds only the top rows",
	},
}

// providerList is every capture provider.
var providerList = []*capture.Provider{
	pyspy.Provider,
}
