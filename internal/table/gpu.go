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
