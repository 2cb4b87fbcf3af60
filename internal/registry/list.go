package registry

import (
	"github.com/flameox/flameox/internal/capture"
	bsprovider "github.com/flameox/flameox/internal/capture/providers/benchsamples"
	coverageprovider "github.com/flameox/flameox/internal/capture/providers/coverage"
	memrayprovider "github.com/flameox/flameox/internal/capture/providers/memray"
	ncuprovider "github.com/flameox/flameox/internal/capture/providers/ncu"
	"github.com/flameox/flameox/internal/capture/providers/node"
	"github.com/flameox/flameox/internal/capture/providers/nodeheap"
	nsysprovider "github.com/flameox/flameox/internal/capture/providers/nsys"
	nvbenchprovider "github.com/flameox/flameox/internal/capture/providers/nvbench"
	obsprovider "github.com/flameox/flameox/internal/capture/providers/observations"
	"github.com/flameox/flameox/internal/capture/providers/perf"
	"github.com/flameox/flameox/internal/capture/providers/process"
	pyperfprovider "github.com/flameox/flameox/internal/capture/providers/pyperf"
	"github.com/flameox/flameox/internal/capture/providers/pyspy"
	pytestprovider "github.com/flameox/flameox/internal/capture/providers/pytest"
	rocprofprovider "github.com/flameox/flameox/internal/capture/providers/rocprofv3"
	sanprovider "github.com/flameox/flameox/internal/capture/providers/sanitizer"
	"github.com/flameox/flameox/internal/capture/providers/torchprofiler"
	tritonprovider "github.com/flameox/flameox/internal/capture/providers/triton"
	xctraceprovider "github.com/flameox/flameox/internal/capture/providers/xctrace"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/benchsamples"
	"github.com/flameox/flameox/internal/formats/chrometrace"
	"github.com/flameox/flameox/internal/formats/collapsed"
	"github.com/flameox/flameox/internal/formats/coveragepy"
	"github.com/flameox/flameox/internal/formats/coveragepy/datafile"
	"github.com/flameox/flameox/internal/formats/csvpreview"
	"github.com/flameox/flameox/internal/formats/inference/aiperf"
	"github.com/flameox/flameox/internal/formats/inference/mooncake"
	"github.com/flameox/flameox/internal/formats/inference/servebench"
	"github.com/flameox/flameox/internal/formats/jsonpreview"
	kvformat "github.com/flameox/flameox/internal/formats/kernelvalidation"
	"github.com/flameox/flameox/internal/formats/memray"
	"github.com/flameox/flameox/internal/formats/ncu"
	"github.com/flameox/flameox/internal/formats/nsys"
	"github.com/flameox/flameox/internal/formats/nvbench"
	obsformat "github.com/flameox/flameox/internal/formats/observations"
	"github.com/flameox/flameox/internal/formats/otlp"
	"github.com/flameox/flameox/internal/formats/parquetpreview"
	"github.com/flameox/flameox/internal/formats/perfetto"
	"github.com/flameox/flameox/internal/formats/perfscript"
	"github.com/flameox/flameox/internal/formats/pprof"
	"github.com/flameox/flameox/internal/formats/pstats"
	"github.com/flameox/flameox/internal/formats/pyperf"
	"github.com/flameox/flameox/internal/formats/pytestevents"
	"github.com/flameox/flameox/internal/formats/rocprof"
	"github.com/flameox/flameox/internal/formats/sanitizer"
	"github.com/flameox/flameox/internal/formats/sarif"
	"github.com/flameox/flameox/internal/formats/speedscope"
	"github.com/flameox/flameox/internal/formats/text"
	"github.com/flameox/flameox/internal/formats/tritonautotune"
	"github.com/flameox/flameox/internal/formats/v8cpu"
	"github.com/flameox/flameox/internal/formats/v8heap"
	"github.com/flameox/flameox/internal/formats/xctrace"
	"github.com/flameox/flameox/internal/projection/coverage"
	"github.com/flameox/flameox/internal/projection/cpu"
	"github.com/flameox/flameox/internal/projection/failures"
	"github.com/flameox/flameox/internal/projection/fragment"
	obsprojection "github.com/flameox/flameox/internal/projection/observations"
	"github.com/flameox/flameox/internal/projection/preview"
	"github.com/flameox/flameox/internal/projection/sarifresults"
)

// formatList is every native format flameox decodes, in detection order.
var formatList = []*formats.Spec{
	// CPU profiles
	v8cpu.Spec,
	pstats.Spec,
	speedscope.Spec,
	perfscript.DataSpec,
	perfscript.ScriptSpec,
	collapsed.Spec,
	pprof.Spec,
	// Memory profiles
	memray.Spec,
	v8heap.Spec,
	// Reliability
	pytestevents.Spec,
	obsformat.Spec,
	datafile.Spec,
	coveragepy.JSONSpec,
	// Static candidates
	sarif.Spec,
	// Benchmarks
	pyperf.Spec,
	nvbench.Spec,
	benchsamples.Spec,
	// GPU and kernels
	nsys.Spec,
	nsys.RepSpec,
	ncu.Spec,
	sanitizer.Spec,
	sanitizer.XMLSpec,
	kvformat.Spec,
	tritonautotune.Spec,
	// Execution traces
	chrometrace.KinetoSpec,
	chrometrace.Spec,
	rocprof.Spec,
	otlp.Spec,
	xctrace.Spec,
	perfetto.Spec,
	// Inference exports
	aiperf.RecordsSpec,
	aiperf.AggregateSpec,
	aiperf.CSVSpec,
	servebench.VLLMSpec,
	servebench.SGLangSpec,
	mooncake.Spec,
	// Generic previews: conservative sniffers, so specific formats win
	jsonpreview.JSON,
	jsonpreview.JSONL,
	csvpreview.Spec,
	text.Spec,
	parquetpreview.Spec,
}

// opMemoryHotspots names the operation defined in memory.go.
const opMemoryHotspots = "summarize_memory_hotspots"

// opMemoryStacks names the operation defined in memstacks.go.
const opMemoryStacks = "summarize_memory_stacks"

// operationList is every analysis operation. Operation names are written
// here and nowhere else (Check reads the sources to hold that).
var operationList = []*Operation{
	summarizeCPUHotspots,
	summarizeCPUCallerEdges,
	compareCPUProfiles,
	summarizeCPUStacks,
	compareCPUStacks,
	summarizeMemoryHotspots,
	summarizeMemoryStacks,
	inspectSanitizerFindings, // before summarize_failures: a sanitizer report's default
	summarizeFailures,
	summarizeObservations,
	previewArtifact,
	previewTextFragment,
	summarizeCoverage,
	inspectStaticCandidates,
	summarizeBenchmarks,
	compareBenchmarks,
	inspectGPULaunches,
	inspectKernelMetrics,
	inspectTritonAutotune,
	summarizeTraceOperations,
	inspectTraceWindow,
	summarizeInference,
}

// The names of the operations defined in a family's own file
// (pictures.go, bench.go, gpu.go, traces.go, inference.go): written here, as every
// operation name is, and constants so that providerList can use the
// operations whatever the order of initialization.
const (
	nameCompareCPUProfiles       = "compare_cpu_profiles"
	nameSummarizeCPUStacks       = "summarize_cpu_stacks"
	nameCompareCPUStacks         = "compare_cpu_stacks"
	nameSummarizeBenchmarks      = "summarize_benchmarks"
	nameCompareBenchmarks        = "compare_benchmarks"
	nameInspectGPULaunches       = "inspect_gpu_launches"
	nameInspectKernelMetrics     = "inspect_kernel_metrics"
	nameInspectSanitizerFindings = "inspect_sanitizer_findings"
	nameInspectTritonAutotune    = "inspect_triton_autotune"
	nameSummarizeTraceOperations = "summarize_trace_operations"
	nameInspectTraceWindow       = "inspect_trace_window"
	nameSummarizeInference       = "summarize_inference"
)

var summarizeCPUHotspots = &Operation{
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
}

var summarizeCPUCallerEdges = &Operation{
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
}

var summarizeFailures = &Operation{
	Name:       "summarize_failures",
	Title:      "Failed, errored, interrupted and unexecuted tests",
	Family:     "Reliability",
	Projection: failures.Spec,
	Guidance: "Use after a pytest run to see which tests did not pass and why. It scans the complete bounded " +
		"event stream for aggregate outcomes (summary metrics), but lists only failure identities: failed " +
		"collectors (with their collector node id), crashed, interrupted, errored and failed tests, then tests " +
		"that were collected but never ran. Passing and skipped tests never consume the row budget. Compute Sanitizer " +
		"reports (text or XML) add one row of kind sanitizer per failure identity (tool::kind::kernel at file:line, " +
		"repeats counted); their warnings are counted, not listed. Kernel validation receipts add kind kernel-validation " +
		"rows: fail as failed, inconclusive as error; pass and unsupported are counted.",
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
		"a sanitizer identity is tool, kind, kernel and source line: findings that differ only in thread, block or address are one row",
		"kernel validation receipts are what the validation command decided; flameox does not re-check values or open the console file",
	},
}

var summarizeObservations = &Operation{
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
}

var previewArtifact = &Operation{
	Name:       "preview_artifact",
	Title:      "Preview a data or text artifact",
	Family:     "Generic previews",
	Projection: preview.Spec,
	Guidance: "Look inside a JSON, JSONL, CSV, Parquet or text artifact that no specific format covers: its " +
		"schema (CSV header, Parquet columns with physical and logical types, JSON keys and outline) and its " +
		"first records with their native line and byte locations. Bounded by rows and bytes; it says how far " +
		"it read and never claims counts for what it did not read. Not a substitute for a specific decoder: " +
		"a speedscope, SARIF or coverage file is previewed only when asked for with --artifact-format (MCP: format).",
	Examples: []Example{
		{Title: "first 10 records and the schema", Args: evidence.Object{"rows": 10}},
		{Title: "only the records that failed to parse", Args: evidence.Object{"status": "problems"}},
		{Title: "two columns of a wide table", Args: evidence.Object{"fields": []string{"id", "name"}, "rows": 50}},
	},
	Overhead: "reads a bounded prefix (decoder max_bytes, default 8 MiB; Parquet: the footer and the first row groups)",
	Limitations: []string{
		"a preview shows a bounded prefix; counts describe the bytes read, and the summary says where reading stopped",
		"CSV values are text; Parquet values stay native (timestamps as integers in their declared unit)",
	},
}

var previewTextFragment = &Operation{
	Name:       "preview_text_fragment",
	Title:      "Read a bounded fragment of a text artifact",
	Family:     "Generic previews",
	Projection: fragment.Spec,
	Guidance: "Read an exact byte window (offset, length) or line window (start_line, lines) of a text " +
		"artifact, such as a captured stdout/stderr or a log. The window is recorded in the result; lines cut " +
		"by bounds, invalid UTF-8 (shown escaped) and windows the decoded text does not cover are stated.",
	Examples: []Example{
		{Title: "lines 100-149", Args: evidence.Object{"start_line": 100, "lines": 50}},
		{Title: "4 KiB from byte 1048576", Args: evidence.Object{"offset": 1048576, "length": 4096}},
	},
	Overhead: "scans the artifact up to the window for line numbers; reads the window only",
	Limitations: []string{
		"windows beyond the text decoder's defaults (1 MiB, 1000 lines) need decoder options offset/start_line, max_bytes/max_lines",
	},
	Check: func(_ []*formats.Spec, given map[string]bool, args evidence.Object) error {
		_, err := fragment.WindowFrom(args, given)
		return err
	},
	DecoderOptions: func(given map[string]bool, args evidence.Object) (evidence.Object, error) {
		w, err := fragment.WindowFrom(args, given)
		if err != nil {
			return nil, err
		}
		if w.Bytes {
			return evidence.Object{"offset": w.Offset, "max_bytes": w.End - w.Offset, "max_lines": int64(1000000)}, nil
		}
		return evidence.Object{"start_line": w.Line, "max_lines": w.EndLine - w.Line}, nil
	},
}

var summarizeCoverage = &Operation{
	Name:       "summarize_coverage",
	Title:      "Rank files by coverage.py coverage",
	Family:     "Reliability",
	Projection: coverage.Spec,
	Guidance: "Use to find which Python files (and lines) a workload or test suite leaves unexecuted. " +
		"Give it the `coverage json` report for statements, missing lines, branches and coverage.py's own totals; " +
		"a `.coverage` data file alone says only which lines and arcs executed. Path filters apply before ranking and the row bound.",
	Examples: []Example{
		{Title: "Files with the most missing lines", Args: evidence.Object{"rank_by": "missing_lines", "top": 20}},
		{Title: "Lowest coverage under src/, tests excluded", Args: evidence.Object{"rank_by": "percent_covered", "include": []any{"src"}, "exclude": []any{"**/test_*.py"}}},
	},
	Overhead: "coverage.py's tracer slows Python code; with branch=true more",
	Limitations: []string{
		"a .coverage data file records executed lines and arcs, not statements: statement, missing, branch and percent columns come only from the JSON report",
		"only the process that coverage run starts is measured unless the workload configures coverage.py for subprocesses",
	},
	Check: checkCoverage,
}

var inspectStaticCandidates = &Operation{
	Name:       "inspect_static_candidates",
	Title:      "Inspect static-analysis candidates (SARIF)",
	Family:     "Static candidates",
	Projection: sarifresults.Spec,
	Guidance: "Use to review findings of a static analyser that writes SARIF 2.1.0 (gosec, ESLint, CodeQL, Semgrep...). " +
		"Filter by level, rule and path, then read the highest-severity results first. Findings are candidates, not confirmed defects. " +
		"When the log was exported outside the source tree, decode it with the source_root option so paths normalize against the right directory.",
	Examples: []Example{
		{Title: "Errors only", Args: evidence.Object{"levels": []any{"error"}, "top": 20}},
		{Title: "One rule under a directory", Args: evidence.Object{"rules": []any{"G104"}, "include": []any{"internal"}}},
	},
	Limitations: []string{
		"SARIF results are candidates reported by the tool, not confirmed defects",
		"locations outside the source root, with .. segments, remote or non-file URIs, undefined uriBaseIds or symlinks out of the root are kept as rows with a typed location_status and no path",
	},
}

// providerList is every capture provider, with the operations its outputs
// feed (the first is a capture tool's default). Providers name their
// artifacts' formats by the format packages' specs; what they feed is
// said here, where the operation names are.
var providerList = []*capture.Provider{
	feeds(node.Provider, summarizeCPUHotspots, summarizeCPUCallerEdges, summarizeCPUStacks),
	feeds(pyspy.Provider, summarizeCPUHotspots, summarizeCPUCallerEdges, summarizeCPUStacks),
	feeds(perf.Provider, summarizeCPUHotspots, summarizeCPUCallerEdges, summarizeCPUStacks),
	feeds(nodeheap.Provider, summarizeMemoryHotspots),
	feeds(memrayprovider.Provider, summarizeMemoryHotspots),
	feeds(pytestprovider.Provider, summarizeFailures),
	feeds(obsprovider.Provider, summarizeObservations),
	feeds(coverageprovider.Provider, summarizeCoverage),
	feeds(process.Provider, previewTextFragment, previewArtifact),
	feeds(bsprovider.Provider, summarizeBenchmarks, compareBenchmarks),
	feeds(pyperfprovider.Provider, summarizeBenchmarks, compareBenchmarks),
	feeds(nvbenchprovider.Provider, summarizeBenchmarks, compareBenchmarks),
	feeds(sanprovider.Provider, inspectSanitizerFindings),
	feeds(ncuprovider.Provider, inspectKernelMetrics),
	feeds(nsysprovider.Provider, inspectGPULaunches, summarizeTraceOperations, inspectTraceWindow),
	feeds(tritonprovider.Provider, inspectTritonAutotune),
	feeds(torchprofiler.Provider, summarizeTraceOperations, inspectTraceWindow),
	feeds(rocprofprovider.Provider, summarizeTraceOperations, inspectTraceWindow),
	feeds(xctraceprovider.Provider, summarizeCPUHotspots, summarizeCPUCallerEdges, summarizeCPUStacks),
}
