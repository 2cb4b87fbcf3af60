package registry

import (
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/projection/gpu"
)

// The GPU operations; list.go names them.

var inspectGPULaunches = &Operation{
	Name:       nameInspectGPULaunches,
	Title:      "GPU kernels, copies and memsets that ran on the device",
	Family:     formats.FamilyGPU,
	Projection: gpu.Launches,
	Guidance: "Use on an Nsight Systems export to see which kernels and memory operations ran on each GPU and how long " +
		"they took: groups (default) ranks kernel names by total device time per artifact and device, with count, mean, " +
		"min, max and share; launches lists single launches, longest first, with grid, block, registers, shared memory, " +
		"stream, correlation id and the CUDA runtime call that launched them. Only device activity counts: CUDA API calls, " +
		"synchronization and profiler overhead never do. Kind, name and device filters apply before the row bound.",
	Examples: []Example{
		{Title: "kernels by total device time", Args: evidence.Object{"kinds": []string{"kernel"}, "top": 20}},
		{Title: "the 10 longest single launches", Args: evidence.Object{"mode": "launches", "top": 10}},
		{Title: "GEMM kernels on device 0", Args: evidence.Object{"name_pattern": "gemm|nvjet", "device": 0}},
	},
	Overhead: "decoding reads the export's device tables once, with StringIds and the runtime calls indexed in memory",
	Limitations: []string{
		"durations are the device timestamps CUPTI recorded (end - start); concurrent kernels on different streams overlap, so totals can exceed wall time",
		"devices and artifacts never pool: each group is one artifact's launches on one device",
	},
}

var inspectKernelMetrics = &Operation{
	Name:       nameInspectKernelMetrics,
	Title:      "Nsight Compute kernel metrics",
	Family:     formats.FamilyGPU,
	Projection: gpu.Kernels,
	Guidance: "Use on an Nsight Compute report (.ncu-rep) to see how well each profiled kernel launch ran: launches ranked " +
		"by duration (gpu__time_duration.sum) or any metric named by its native name, with SM and memory throughput, " +
		"achieved occupancy, registers, and the ids of the rules that fired; metric_pattern lists more metrics per launch. " +
		"Each row is one launch on one device: launches are never averaged or pooled across devices.",
	Examples: []Example{
		{Title: "the slowest launches", Args: evidence.Object{"top": 10}},
		{Title: "lowest achieved occupancy", Args: evidence.Object{"metric": "sm__warps_active.avg.pct_of_peak_sustained_active", "order": "asc"}},
		{Title: "memory metrics of GEMM launches", Args: evidence.Object{"kernel_pattern": "gemm", "metric_pattern": "^(dram|lts)__"}},
	},
	Overhead: "decoding runs NVIDIA's ncu_report in an isolated Python worker (about a second to start); ranking holds the selected metrics only",
	Limitations: []string{
		"metric values are what Nsight Compute measured under its replay; the report does not say whether clocks were locked",
		"rule results are NVIDIA's own text, kept as ncu_report gives it",
	},
}

var inspectSanitizerFindings = &Operation{
	Name:       nameInspectSanitizerFindings,
	Title:      "Compute Sanitizer findings",
	Family:     formats.FamilyGPU,
	Projection: gpu.Findings,
	Guidance: "Use on a compute-sanitizer report (memcheck, racecheck, initcheck, synccheck) to see whether kernels were " +
		"correct: each finding with its kind, faulting kernel and source line, thread and block, address, device frames and " +
		"saved host backtrace; groups counts repeated findings per kernel and line. Errors come before warnings. The summary " +
		"says when the report printed fewer errors than it counted (--print-limit) and, separately, when host backtraces are missing.",
	Examples: []Example{
		{Title: "every error", Args: evidence.Object{"severities": []string{"error"}}},
		{Title: "races grouped by source line", Args: evidence.Object{"mode": "groups", "kinds": []string{"race", "hazard"}}},
		{Title: "out-of-bounds accesses in one kernel", Args: evidence.Object{"kinds": []string{"invalid_access"}, "kernel_pattern": "^gemm"}},
	},
	Overhead: "compute-sanitizer slows kernels by 10-100x or more; decoding reads its log once",
	Limitations: []string{
		"the text report does not name its tool: tool comes from the decoder option tool (the capture sets it), else from the record kind",
		"a clean report shows that the tool found nothing in the kernels that ran, not that other inputs are safe",
	},
}

var inspectTritonAutotune = &Operation{
	Name:       nameInspectTritonAutotune,
	Title:      "Triton autotune configurations and timings",
	Family:     formats.FamilyGPU,
	Projection: gpu.Autotune,
	Guidance: "Use on the *.autotune.json files Triton writes (cache_results=True or TRITON_CACHE_AUTOTUNING=1) to see every " +
		"configuration the autotuner benchmarked for each kernel and tuning key, and which one Triton selects. Each has its " +
		"kwargs, num_warps, num_stages, num_ctas, maxnreg and timings as measured, failed ones (+Infinity) included. best keeps only the selected ones.",
	Examples: []Example{
		{Title: "every configuration", Args: evidence.Object{}},
		{Title: "the selected configuration of each key", Args: evidence.Object{"mode": "best"}},
		{Title: "one kernel, without failed configs", Args: evidence.Object{"kernel_pattern": "^matmul", "include_failed": false}},
	},
	Overhead: "reading a cache file is cheap; producing it is a cold-cache tuning run that benchmarks every configuration",
	Limitations: []string{
		"a cache shows one tuning run: not cache hits, device identity, that configurations agree numerically, or a representative speed-up",
		"Triton 3.7 has no autotuner listener events to read; only the cache files are decoded",
	},
}
