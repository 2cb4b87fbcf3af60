package table

// Memory populations: which allocations a memory.frames table describes.
const (
	// PopulationHighWatermark: the allocations live at the moment the
	// tracked heap was largest (Memray's high watermark).
	PopulationHighWatermark = "high_watermark"
	// PopulationLeaked: the allocations still live when tracking ended
	// (Memray's leaks, retained at end).
	PopulationLeaked = "leaked"
	// PopulationSampled: a sampling heap profiler's live samples (V8's
	// sampling heap profiler, at the time the profile was taken).
	PopulationSampled = "sampled"
	// PopulationInuse: a Go heap profile's inuse_space/inuse_objects, the
	// sampled allocations still live at the most recent garbage collection.
	PopulationInuse = "inuse"
	// PopulationAllocated: a Go heap profile's alloc_space/alloc_objects,
	// every sampled allocation since the program started, freed or not.
	PopulationAllocated = "allocated"
)

// Metric names that memory decoders put in their summaries. The totals
// are the same whichever population the rows describe.
const (
	// MetricPopulationBytes is the bytes of the table's population, the
	// denominator of a share: the high watermark's or the leaks' bytes,
	// or V8's sampled estimate, unresolved samples included.
	MetricPopulationBytes = "population_bytes"
	// MetricPopulationCount is the allocations (Memray) or sample records
	// (V8) of the population, in the table's count unit.
	MetricPopulationCount = "population_count"
)

// MemoryFrame is a row of memory.frames: one frame identity of one
// thread, with the bytes and the allocation (or sample) count of the
// table's population whose stack holds it. Every memory decoder emits it,
// so one projection ranks them all.
type MemoryFrame struct {
	FrameSite
	Population     string      `col:"population" doc:"high_watermark, leaked (Memray), sampled (V8), inuse or allocated (Go pprof): the allocations the row's values describe"`
	SelfBytes      int64       `col:"self_bytes,unit=bytes" doc:"bytes of the population allocated where the frame is the leaf; V8: the sampled size estimate (selfSize)"`
	InclusiveBytes int64       `col:"inclusive_bytes,unit=bytes" doc:"bytes of the population whose stack holds the frame, each allocation counted once however often the frame recurs"`
	SelfCount      Null[int64] `col:"self_count,unit=*" doc:"allocations (Memray) or native sample records (V8) where the frame is the leaf; null when the profile records no samples (Node before 12)"`
	InclusiveCount Null[int64] `col:"inclusive_count,unit=*" doc:"allocations or sample records whose stack holds the frame, each counted once; null when not recorded"`
}

// MemoryFrames is the memory.frames schema; counts are in the table's
// unit (allocations or samples).
var MemoryFrames = Define[MemoryFrame]("memory.frames", "one row per frame identity and thread with the bytes and allocations of a memory population", FromArtifact)

// MemoryHotspot is a row of memory.hotspots: one frame identity, ranked,
// with its shares of the admitted profiles' population.
type MemoryHotspot struct {
	Rank       int64  `col:"rank" doc:"1 = largest by the ranking metric"`
	ArtifactID string `col:"artifact_id,identity" doc:"artifact the row was read from"`
	FrameSite
	Population     string        `col:"population" doc:"high_watermark, leaked or sampled"`
	SelfBytes      int64         `col:"self_bytes,unit=bytes" doc:"bytes allocated where the frame is the leaf"`
	SelfShare      Null[float64] `col:"self_share,unit=ratio" doc:"self_bytes / the population's bytes; null when it has none"`
	InclusiveBytes int64         `col:"inclusive_bytes,unit=bytes" doc:"bytes whose stack holds the frame, each allocation once"`
	InclusiveShare Null[float64] `col:"inclusive_share,unit=ratio" doc:"inclusive_bytes / the population's bytes"`
	// The counts' unit is the inputs' (allocations or samples), stated in
	// the summary's coverage as count_unit; bytes and shares come first in
	// the table view.
	SelfCount      Null[int64] `col:"self_count,unit=count" doc:"allocations or sample records (summary coverage count_unit) where the frame is the leaf; null when not recorded"`
	InclusiveCount Null[int64] `col:"inclusive_count,unit=count" doc:"allocations or sample records whose stack holds the frame; null when not recorded"`
}

// MemoryHotspots is the memory.hotspots schema.
var MemoryHotspots = Define[MemoryHotspot]("memory.hotspots", "frames ranked by the bytes or allocations of a memory population, with their shares")

// MemoryStack is a row of memory.stacks: one distinct call stack of one
// series of a memory population, with the bytes and the allocation (or
// sample) count allocated there. Frames name memory.frames rows of the
// same artifact by frame_id, outermost first, the allocating frame last.
// Bytes and counts are two measures of one population and never pool
// with CPU weights.
type MemoryStack struct {
	Frames  []string     `col:"frames" doc:"frame_id of each frame, outermost (root) first, the allocating frame last"`
	Thread  Null[string] `col:"thread" doc:"thread or profile series; null when the format has one series"`
	Process Null[string] `col:"process" doc:"process series; null when the format has one process"`
	Bytes   int64        `col:"bytes,unit=bytes" doc:"bytes of the population allocated with this stack"`
	Count   Null[int64]  `col:"count,unit=*" doc:"allocations (Memray), objects (Go pprof) or sample records (V8) of the population with this stack; null when not recorded"`
}

// MemoryStacks is the memory.stacks schema; counts are in the table's
// unit.
var MemoryStacks = Define[MemoryStack]("memory.stacks", "one row per distinct call stack of a memory population with its bytes and allocations; frames name memory.frames rows", FromArtifact)

// MemoryFolded is the memory.folded schema: folded stacks of a memory
// population, weighed in bytes or in the population's count unit.
var MemoryFolded = Define[FoldedStack]("memory.folded", "distinct call stacks of a memory population as frame labels with their bytes or allocations (a memory flame graph's input)")
