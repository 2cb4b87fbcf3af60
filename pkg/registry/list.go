package registry

import (
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/capture/providers/node"
	obsprovider "github.com/flameox/flameox/pkg/capture/providers/observations"
	"github.com/flameox/flameox/pkg/capture/providers/perf"
	pytestprovider "github.com/flameox/flameox/pkg/capture/providers/pytest"
	"github.com/flameox/flameox/pkg/evidence"
	"github.com/flameox/flameox/pkg/formats"
	"github.com/flameox/flameox/pkg/formats/collapsed"
	obsformat "github.com/flameox/flameox/pkg/formats/observations"
	"github.com/flameox/flameox/pkg/formats/perfscript"
	"github.com/flameox/flameox/pkg/formats/pytestevents"
	"github.com/flameox/flameox/pkg/formats/v8cpu"
	"github.com/flameox/flameox/pkg/projection/cpu"
	"github.com/flameox/flameox/pkg/projection/failures"
	obsprojection "github.com/flameox/flameox/pkg/projection/observations"
)

// formatList is every native format flameox decodes, in detection order.
var formatList = []*formats.Spec{
	v8cpu.Spec,
	pytestevents.Spec,
	obsformat.Spec,
	perfscript.DataSpec,
	perfscript.ScriptSpec,
	collapsed.Spec,
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
	{
		Name:       "summarize_failures",
		Title:      "Failed, errored, interrupted and unexecuted tests",
		Family:     "Reliability",
		Projection: failures.Spec,
		Guidance: "Use after a pytest run to see which tests did not pass and why. It scans the complete bounded " +
			"event stream for aggregate outcomes (summary metrics), but lists only failure identities: failed " +
			"collectors (with their collector node id), crashed, interrupted, errored and failed tests, then tests " +
			"that were collected but never ran. Passing and skipped tests never consume the row budget.",
		Examples: []Example{
			{Title: "the first 20 failures", Args: evidence.Object{"top": 20}},
			{Title: "failures under one directory", Args: evidence.Object{"nodeid_glob": "tests/unit/*"}},
			{Title: "what never ran after an interruption", Args: evidence.Object{"outcomes": []string{"interrupted", "unexecuted"}}},
		},
		Overhead: "the pytest plugin writes one bounded line per event; the projection reads each row once",
		Limitations: []string{
			"complete requires a finished session that was not interrupted, lost no xdist worker, raised no internal error, was not truncated, and rows not cut by top",
			"failure text is pytest's longrepr cut at the plugin's 16 KiB bound; captured output sections are not recorded",
			"counts follow pytest's JUnit XML: a test whose call passed but whose teardown failed counts once, as error",
		},
	},
	{
		Name:       "summarize_observations",
		Title:      "Values and phases a workload recorded itself",
		Family:     "Reliability",
		Projection: obsprojection.Spec,
		Guidance: "Use for what a program reports about itself through flameox's SDK (flameox_observe in Python, " +
			"pkg/observe in Go): aggregate gives count, sum, min, max, mean and the last value per series (name, " +
			"phase, unit, process, artifact); raw lists the observations in file order; phases lists phases with " +
			"their durations, unclosed ones first. Name and phase filters apply before the row bound.",
		Examples: []Example{
			{Title: "every series", Args: evidence.Object{"mode": "aggregate"}},
			{Title: "raw latencies in the train phase", Args: evidence.Object{"mode": "raw", "name_glob": "*latency*", "phase": "train"}},
			{Title: "the longest phases", Args: evidence.Object{"mode": "phases", "top": 10}},
		},
		Overhead: "one bounded JSON line per observation, written by the workload",
		Limitations: []string{
			"values are what the workload recorded; flameox does not measure them",
			"time and memory units are normalized (ms to s, KiB to bytes) before pooling; other units are exact labels, so differently named units never pool",
			"sums and means are doubles; integers beyond the double range are counted but not summed",
		},
	},
}

// providerList is every capture provider.
var providerList = []*capture.Provider{
	node.Provider,
	pytestprovider.Provider,
	obsprovider.Provider,
	perf.Provider,
}
