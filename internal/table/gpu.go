package table

import "github.com/flameox/flameox/internal/evidence"

// GPULaunch is a row of gpu.launches: one device activity record of an
// Nsight Systems export (a kernel, a memory copy or a memset), never a
// host API call.
type GPULaunch struct {
	SourceTable   string          `col:"source_table" doc:"native table the record came from, as the export names it (CUPTI_ACTIVITY_KIND_KERNEL, a _V<n> variant...)"`
	Kind          string          `col:"kind" doc:"kernel, memcpy or memset"`
	Name          string          `col:"name" doc:"kernel: demangled name (else short, else mangled); memcpy: [CUDA memcpy <copy kind>]; memset: [CUDA memset]"`
	ShortName     Null[string]    `col:"short_name" doc:"kernel's short name; null when absent"`
	MangledName   Null[string]    `col:"mangled_name" doc:"kernel's mangled name; null when absent"`
	DeviceID      int64           `col:"device_id" doc:"CUDA device id (deviceId)"`
	ContextID     Null[int64]     `col:"context_id" doc:"CUDA context id; null when absent"`
	StreamID      Null[int64]     `col:"stream_id" doc:"CUDA stream id; null when absent"`
	CorrelationID Null[int64]     `col:"correlation_id" doc:"CUPTI correlation id joining the record to the API call that launched it; null when absent"`
	GlobalPID     Null[int64]     `col:"global_pid" doc:"Nsight Systems serialized process id (globalPid); null when absent"`
	StartNS       int64           `col:"start_ns,unit=ns" doc:"native start timestamp"`
	EndNS         int64           `col:"end_ns,unit=ns" doc:"native end timestamp"`
	DurationNS    int64           `col:"duration_ns,unit=ns" doc:"end_ns - start_ns"`
	GridX         Null[int64]     `col:"grid_x" doc:"grid dimension x; null unless a kernel"`
	GridY         Null[int64]     `col:"grid_y" doc:"grid dimension y; null unless a kernel"`
	GridZ         Null[int64]     `col:"grid_z" doc:"grid dimension z; null unless a kernel"`
	BlockX        Null[int64]     `col:"block_x" doc:"block dimension x; null unless a kernel"`
	BlockY        Null[int64]     `col:"block_y" doc:"block dimension y; null unless a kernel"`
	BlockZ        Null[int64]     `col:"block_z" doc:"block dimension z; null unless a kernel"`
	Registers     Null[int64]     `col:"registers_per_thread" doc:"registers per thread; null unless a kernel"`
	StaticShared  Null[int64]     `col:"static_shared_bytes,unit=bytes" doc:"static shared memory per block; null unless a kernel"`
	DynamicShared Null[int64]     `col:"dynamic_shared_bytes,unit=bytes" doc:"dynamic shared memory per block; null unless a kernel"`
	Bytes         Null[int64]     `col:"bytes,unit=bytes" doc:"bytes copied or set; null for kernels"`
	CopyKind      Null[string]    `col:"copy_kind" doc:"memcpy direction label (Host-to-Device...), from the export's ENUM_CUDA_MEMCPY_OPER or CUPTI's enum; null unless a memcpy"`
	GraphNodeID   Null[int64]     `col:"graph_node_id" doc:"CUDA graph node id when the record ran inside a CUDA graph; null otherwise"`
	LaunchAPI     Null[string]    `col:"launch_api" doc:"the CUDA runtime or driver call with the same process and correlation id (cudaLaunchKernel...); null when it does not resolve"`
	LaunchTID     Null[int64]     `col:"launch_global_tid" doc:"serialized thread id (globalTid) of that call; null when it does not resolve"`
	Value         evidence.Object `col:"value" doc:"the record's other native columns, by their native names (a memset's own value column among them); null when none"`
}

// GPULaunches is the gpu.launches schema.
var GPULaunches = Define[GPULaunch]("gpu.launches",
	"one row per device activity record (kernel, memcpy, memset) of an Nsight Systems export", FromArtifact)

// GPULaunchGroup is a row of gpu.launch_groups: the launches of one
// artifact, device, kind and name.
type GPULaunchGroup struct {
	DeviceID int64       `col:"device_id" doc:"CUDA device id; devices never pool"`
	Kind     string      `col:"kind" doc:"kernel, memcpy or memset"`
	Name     string      `col:"name" doc:"launch name as gpu.launches states it"`
	Count    int64       `col:"count" doc:"launches in the group"`
	TotalNS  int64       `col:"total_ns,unit=ns" doc:"sum of durations"`
	MeanNS   float64     `col:"mean_ns,unit=ns" doc:"total_ns / count"`
	MinNS    int64       `col:"min_ns,unit=ns" doc:"shortest launch"`
	MaxNS    int64       `col:"max_ns,unit=ns" doc:"longest launch"`
	Bytes    Null[int64] `col:"bytes,unit=bytes" doc:"sum of bytes moved (memcpy, memset); null for kernels"`
	Share    float64     `col:"share" doc:"total_ns over the total of the selected launches of the same artifact and device"`
}

// GPULaunchGroups is the gpu.launch_groups schema.
var GPULaunchGroups = Define[GPULaunchGroup]("gpu.launch_groups",
	"device launches grouped by artifact, device, kind and name, ranked by total time", FromArtifact)

// GPUSelectedLaunches is the gpu.selected_launches schema: single
// launches, longest first.
var GPUSelectedLaunches = Define[GPULaunch]("gpu.selected_launches",
	"the selected device launches, longest first", FromArtifact)

// GPUKernel is a row of gpu.kernels: one kernel launch (a range's action)
// of an Nsight Compute report, with the headline metrics under their own
// columns. Every metric is also a row of gpu.kernel_metrics.
type GPUKernel struct {
	RangeIndex    int64         `col:"range_index" doc:"index of the report's range"`
	ActionIndex   int64         `col:"action_index" doc:"index of the action (kernel launch) in the range"`
	Name          string        `col:"name" doc:"demangled kernel name, as ncu_report gives it"`
	FunctionName  Null[string]  `col:"function_name" doc:"function name without parameters; null when absent"`
	MangledName   Null[string]  `col:"mangled_name" doc:"mangled name; null when absent"`
	DeviceID      Null[int64]   `col:"device_id" doc:"launch__device_id; null when absent"`
	DeviceName    Null[string]  `col:"device_name" doc:"device__attribute_display_name; null when absent"`
	ContextID     Null[int64]   `col:"context_id" doc:"launch__context_id; null when absent"`
	StreamID      Null[int64]   `col:"stream_id" doc:"launch__stream_id; null when absent"`
	GridX         Null[int64]   `col:"grid_x" doc:"launch__grid_dim_x"`
	GridY         Null[int64]   `col:"grid_y" doc:"launch__grid_dim_y"`
	GridZ         Null[int64]   `col:"grid_z" doc:"launch__grid_dim_z"`
	BlockX        Null[int64]   `col:"block_x" doc:"launch__block_dim_x"`
	BlockY        Null[int64]   `col:"block_y" doc:"launch__block_dim_y"`
	BlockZ        Null[int64]   `col:"block_z" doc:"launch__block_dim_z"`
	Registers     Null[int64]   `col:"registers_per_thread" doc:"launch__registers_per_thread"`
	StaticShared  Null[int64]   `col:"static_shared_bytes,unit=bytes" doc:"launch__shared_mem_per_block_static"`
	DynamicShared Null[int64]   `col:"dynamic_shared_bytes,unit=bytes" doc:"launch__shared_mem_per_block_dynamic"`
	DurationNS    Null[float64] `col:"duration_ns,unit=ns" doc:"gpu__time_duration.sum, normalized to ns; null when not collected"`
	SMThroughput  Null[float64] `col:"sm_throughput_pct,unit=%" doc:"sm__throughput.avg.pct_of_peak_sustained_elapsed; null when not collected"`
	MemThroughput Null[float64] `col:"memory_throughput_pct,unit=%" doc:"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed; null when not collected"`
	Occupancy     Null[float64] `col:"achieved_occupancy_pct,unit=%" doc:"sm__warps_active.avg.pct_of_peak_sustained_active; null when not collected"`
	Metrics       int64         `col:"metrics" doc:"metrics the action holds (rows of gpu.kernel_metrics)"`
	Rules         []any         `col:"rules" doc:"rule results: id, name, section, message (as ncu_report gives it) and speedup estimate"`
}

// GPUKernels is the gpu.kernels schema.
var GPUKernels = Define[GPUKernel]("gpu.kernels", "one row per profiled kernel launch of an Nsight Compute report", FromArtifact)

// GPUKernelMetric is a row of gpu.kernel_metrics: one metric of one
// kernel launch, by its native name and unit.
type GPUKernelMetric struct {
	RangeIndex     int64         `col:"range_index" doc:"index of the report's range"`
	ActionIndex    int64         `col:"action_index" doc:"index of the action in the range"`
	Kernel         string        `col:"kernel" doc:"demangled kernel name"`
	DeviceID       Null[int64]   `col:"device_id" doc:"launch__device_id of the action; null when absent"`
	Metric         string        `col:"metric" doc:"native metric name"`
	Kind           string        `col:"kind" doc:"ncu_report value kind: double, float, uint32, uint64, string, any or unknown"`
	Value          Null[float64] `col:"value" doc:"numeric value in the native unit; null for strings and absent values"`
	Integer        Null[int64]   `col:"integer" doc:"exact value of an integer kind that fits 64 signed bits; null otherwise"`
	Text           Null[string]  `col:"text" doc:"string value, or the exact decimal of an integer beyond 64 signed bits; null otherwise"`
	Unit           Null[string]  `col:"unit" doc:"native unit as ncu_report states it; null when none"`
	NormalizedVal  Null[float64] `col:"normalized_value" doc:"value in normalized_unit; null when the unit is not one flameox converts"`
	NormalizedUnit Null[string]  `col:"normalized_unit" doc:"ns, bytes, bytes/s or %; null when the native unit is kept as it is"`
	Instances      int64         `col:"instances" doc:"instance values the metric holds (0 for a plain metric); value is its aggregate"`
}

// GPUKernelMetrics is the gpu.kernel_metrics schema.
var GPUKernelMetrics = Define[GPUKernelMetric]("gpu.kernel_metrics", "one row per metric of each profiled kernel launch of an Nsight Compute report", FromArtifact)

// GPUKernelRank is a row of gpu.kernel_ranking: one kernel launch ranked
// by a metric.
type GPUKernelRank struct {
	RangeIndex    int64           `col:"range_index" doc:"index of the report's range"`
	ActionIndex   int64           `col:"action_index" doc:"index of the action in the range"`
	DeviceID      Null[int64]     `col:"device_id" doc:"launch__device_id; launches of different devices are separate rows, never pooled"`
	DeviceName    Null[string]    `col:"device_name" doc:"device__attribute_display_name"`
	Name          string          `col:"name" doc:"demangled kernel name"`
	Metric        string          `col:"metric" doc:"the metric ranked by, by its native name"`
	Value         float64         `col:"value" doc:"its value, in unit"`
	Unit          Null[string]    `col:"unit" doc:"normalized unit when flameox converts the native one (ns, bytes, bytes/s, %), else the native unit"`
	DurationNS    Null[float64]   `col:"duration_ns,unit=ns" doc:"gpu__time_duration.sum"`
	SMThroughput  Null[float64]   `col:"sm_throughput_pct,unit=%" doc:"sm__throughput.avg.pct_of_peak_sustained_elapsed"`
	MemThroughput Null[float64]   `col:"memory_throughput_pct,unit=%" doc:"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"`
	Occupancy     Null[float64]   `col:"achieved_occupancy_pct,unit=%" doc:"sm__warps_active.avg.pct_of_peak_sustained_active"`
	Registers     Null[int64]     `col:"registers_per_thread" doc:"launch__registers_per_thread"`
	Rules         []any           `col:"rules,detail" doc:"ids of the rule results that carry a message"`
	Metrics       evidence.Object `col:"metrics,detail" doc:"the metrics metric_pattern selected: name → {value, text, unit}; null without metric_pattern"`
}

// GPUKernelRanking is the gpu.kernel_ranking schema.
var GPUKernelRanking = Define[GPUKernelRank]("gpu.kernel_ranking", "Nsight Compute kernel launches ranked by a metric", FromArtifact)

// SanitizerFinding is a row of gpu.sanitizer_findings: one record of a
// compute-sanitizer report (a memcheck, racecheck, initcheck or synccheck
// finding, a CUDA API error, a leak or a tool message), in report order.
type SanitizerFinding struct {
	Index       int64        `col:"index" doc:"0-based position of the record in the report"`
	Line        int64        `col:"line,base=1" doc:"1-based line of the record's first line in the log (of its <record> element in an XML report)"`
	Tool        Null[string] `col:"tool" doc:"memcheck, racecheck, initcheck or synccheck: given by the decoder option tool, else implied by the record kind; null when neither says"`
	Kind        string       `col:"kind" doc:"invalid_access, uninitialized_access, malloc_free_error, leak, api_error, race, hazard, barrier_error, deadlock, unused_memory, device_exception, stack_overflow, internal_error, tool_message or other"`
	Severity    string       `col:"severity" doc:"error or warning, as the record states it (WARNING:, Warning:, warp-level hazards and unused memory are warnings)"`
	Message     string       `col:"message" doc:"the record's first line as compute-sanitizer wrote it"`
	Access      Null[string] `col:"access" doc:"read, write or atomic access of an invalid or uninitialized access; first access of a race"`
	MemorySpace Null[string] `col:"memory_space" doc:"__global__, __shared__, __local__...; null when not stated"`
	SizeBytes   Null[int64]  `col:"size_bytes,unit=bytes" doc:"access size, or bytes leaked; null when not stated"`
	Kernel      Null[string] `col:"kernel" doc:"function of the at line (the faulting device function); null when the record has none"`
	PC          Null[string] `col:"pc" doc:"offset or address of the at line as written (0x160)"`
	File        Null[string] `col:"file" doc:"source file of the at line; null without line information"`
	SourceLine  Null[int64]  `col:"source_line,base=1" doc:"1-based source line of the at line; null without line information"`
	ThreadX     Null[int64]  `col:"thread_x" doc:"thread coordinate x (by thread, or the first thread named)"`
	ThreadY     Null[int64]  `col:"thread_y" doc:"thread coordinate y"`
	ThreadZ     Null[int64]  `col:"thread_z" doc:"thread coordinate z"`
	BlockX      Null[int64]  `col:"block_x" doc:"block coordinate x"`
	BlockY      Null[int64]  `col:"block_y" doc:"block coordinate y"`
	BlockZ      Null[int64]  `col:"block_z" doc:"block coordinate z"`
	Address     Null[string] `col:"address" doc:"device address of the access or leak, as written (hex)"`
	API         Null[string] `col:"api" doc:"CUDA API call of an api_error"`
	APIError    Null[string] `col:"api_error" doc:"error of an api_error (cudaErrorMemoryAllocation, or the text when unnamed)"`
	APIResult   Null[int64]  `col:"api_result" doc:"numeric error code of an api_error"`
	Hazards     Null[int64]  `col:"hazards" doc:"hazard count a race record states ([N hazards])"`
	DeviceStack []any        `col:"device_frames,detail" doc:"device frames, innermost first: {function, offset, file, line, text}"`
	HostStack   []any        `col:"host_frames,detail" doc:"host frames of the saved backtrace, innermost first: {function, offset, module, file, line, text}"`
	HostStackAt Null[string] `col:"host_backtrace" doc:"when the host backtrace was saved (kernel launch time, allocation time, error); null when the record has none"`
	Details     []any        `col:"details,detail" doc:"the record's other lines (address details, hazard threads, values), as written"`
}

// SanitizerFindings is the gpu.sanitizer_findings schema.
var SanitizerFindings = Define[SanitizerFinding]("gpu.sanitizer_findings", "one row per record of a compute-sanitizer text report", FromArtifact)

// SanitizerSelection is the gpu.sanitizer_selection schema: the selected
// findings, errors first, then in report order.
var SanitizerSelection = Define[SanitizerFinding]("gpu.sanitizer_selection",
	"the selected compute-sanitizer findings, errors before warnings, in report order", FromArtifact)

// SanitizerGroup is a row of gpu.sanitizer_groups: the findings of one
// artifact with the same kind, tool, kernel and source location.
type SanitizerGroup struct {
	Kind       string       `col:"kind" doc:"finding kind"`
	Tool       Null[string] `col:"tool" doc:"sanitizer tool, as the findings state it"`
	Severity   string       `col:"severity" doc:"error when any finding of the group is an error, else warning"`
	Kernel     Null[string] `col:"kernel" doc:"faulting device function"`
	File       Null[string] `col:"file" doc:"source file"`
	SourceLine Null[int64]  `col:"source_line,base=1" doc:"1-based source line"`
	Count      int64        `col:"count" doc:"findings in the group"`
	Hazards    Null[int64]  `col:"hazards" doc:"sum of the hazard counts race findings state"`
	FirstIndex int64        `col:"first_index" doc:"index of the group's first finding in the report"`
	Message    string       `col:"message" doc:"the first finding's message"`
}

// SanitizerGroups is the gpu.sanitizer_groups schema.
var SanitizerGroups = Define[SanitizerGroup]("gpu.sanitizer_groups",
	"compute-sanitizer findings grouped by artifact, kind, tool, kernel and source location, most frequent first", FromArtifact)

// AutotuneConfig is a row of gpu.autotune_configs: one configuration a
// Triton autotune cache file records for its tuning key, in the order
// the autotuner wrote them, with its timings as written.
type AutotuneConfig struct {
	Kernel    string          `col:"kernel" doc:"kernel function, from the file name <kernel>.autotune.json (Triton cuts it at 150 characters)"`
	CacheKey  Null[string]    `col:"cache_key" doc:"the cache directory the file lies in (Triton's hash of its version, backend, kernel source, tuning key and configs); null when unknown"`
	TuningKey []any           `col:"tuning_key" doc:"the autotuner key as written: the key arguments' values, then the dtypes of tensor arguments"`
	KeyText   string          `col:"key_text" doc:"tuning_key as canonical JSON, to group by"`
	Index     int64           `col:"config_index" doc:"0-based position of the configuration in configs_timings (producer order)"`
	Kwargs    evidence.Object `col:"kwargs" doc:"the configuration's meta-parameters (BLOCK_SIZE...)"`
	NumWarps  Null[int64]     `col:"num_warps" doc:"num_warps; null when absent"`
	NumStages Null[int64]     `col:"num_stages" doc:"num_stages; null when absent"`
	NumCTAs   Null[int64]     `col:"num_ctas" doc:"num_ctas; null when absent"`
	MaxNReg   Null[int64]     `col:"maxnreg" doc:"maxnreg; null when absent or null"`
	Timings   []any           `col:"timings" doc:"the benchmark's result as written, in ms: Triton's default benchmarker gives the 0.5, 0.2 and 0.8 quantiles; a config that failed is [Infinity, Infinity, Infinity], kept as tagged doubles"`
	FirstMS   Null[float64]   `col:"first_ms,unit=ms" doc:"the first timing (the median, from the default benchmarker) when finite; null otherwise"`
	Failed    bool            `col:"failed" doc:"every timing is +Infinity: the autotuner recorded the config as failed (out of resources, compile error)"`
	Best      bool            `col:"best" doc:"the configuration Triton selects for this key: the least timing by Python's comparison (lists lexicographically), the first of equals"`
	Other     evidence.Object `col:"other" doc:"the configuration's other fields as written (ir_override, pre_hook...); null when all are null"`
}

// AutotuneConfigs is the gpu.autotune_configs schema.
var AutotuneConfigs = Define[AutotuneConfig]("gpu.autotune_configs",
	"one row per configuration of a Triton autotune cache file (cache_results=True)", FromArtifact)

// AutotuneSelection is the gpu.autotune_selection schema: the selected
// configurations, by kernel and key, in producer order.
var AutotuneSelection = Define[AutotuneConfig]("gpu.autotune_selection",
	"the selected Triton autotune configurations, by kernel and tuning key, in producer order", FromArtifact)
