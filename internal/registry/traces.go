package registry

import (
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/projection/trace"
)

var summarizeTraceOperations = &Operation{
	Name:       nameSummarizeTraceOperations,
	Title:      "Trace operations: slices, spans, kernels and runtime calls by name",
	Family:     "Execution traces",
	Projection: trace.Operations,
	Guidance: "Use on an execution trace (Chrome/Perfetto JSON, a PyTorch profiler trace, OTLP spans, an Nsight Systems export) to see which named " +
		"operations take the time: slices grouped by name and identity (kind, category, process, thread or " +
		"track, device, stream, rank) with count, total, self (minus directly enclosed slices on the same " +
		"thread), mean, p50/p90/p99/max duration in ns and first/last time. Filters (name_pattern, category, " +
		"kind, process, thread, start_ns/end_ns) select slices before top bounds the groups.",
	Examples: []Example{
		{Title: "the 20 operations with the most total time", Args: evidence.Object{"top": 20}},
		{Title: "GPU kernels of a PyTorch trace", Args: evidence.Object{"category": "kernel", "top": 10}},
		{Title: "by self time, aten ops only", Args: evidence.Object{"rank_by": "self", "name_pattern": "^aten::"}},
	},
	Overhead: "decoding streams the trace once; the projection keeps one duration per selected slice (for exact percentiles)",
	Limitations: []string{
		"self time subtracts only the slices a slice encloses on its own thread or track; device work launched from it is not subtracted",
		"percentiles are exact nearest-rank over the selected slices",
	},
}

var inspectTraceWindow = &Operation{
	Name:       nameInspectTraceWindow,
	Title:      "Events of a trace time window",
	Family:     "Execution traces",
	Projection: trace.Window,
	Guidance: "Use to look at what happened between two times of a trace: the slices overlapping " +
		"[start_ns, end_ns) in start order (enclosing slice first) with their depth and parent, and the " +
		"counter samples taken in the window. Bounded by top; coverage.next_cursor continues.",
	Examples: []Example{
		{Title: "the first 50 slices of a window", Args: evidence.Object{"start_ns": 0, "end_ns": 1000000, "top": 50}},
		{Title: "one thread's kernels in a window", Args: evidence.Object{"start_ns": 0, "end_ns": 1000000, "thread": "7", "category": "kernel"}},
	},
	Overhead: "decoding streams the trace once; the projection keeps only top slices and top counter samples",
	Limitations: []string{
		"times are on the trace's own clock, in ns, as the summary of the decoded table states",
	},
}
