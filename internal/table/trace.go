package table

import "github.com/flameox/flameox/internal/evidence"

// Execution traces. Every trace decoder (Chrome Trace Event JSON and the
// Kineto traces PyTorch writes in it, Perfetto protobuf, OTLP spans,
// rocprofv3 CSV, Nsight Systems exports) emits the same tables, so one
// projection summarizes a slice whatever wrote it:
//
//   - trace.slices: everything with a name and a time: a thread slice (a
//     Chrome X event, a matched B/E pair, a Perfetto BEGIN/END slice, an
//     nsys CUDA runtime call), an async slice (b/e, a Perfetto async
//     track), an instant (i/I, Perfetto INSTANT), an OTLP span, an object
//     lifetime (N…D), and device work (a Kineto or rocprof kernel, memcpy,
//     memset), which is a slice on a device stream;
//   - trace.counters: one sample of one counter series;
//   - trace.flows: one point of a flow (start, step, end) that links
//     slices across threads (Kineto's ac2g links a runtime call to its
//     kernel);
//   - trace.tracks: the names a producer gives its processes, threads and
//     tracks, which rows refer to by native id (a name may arrive after
//     the rows that need it, so rows never carry it themselves).
//
// Times are integer nanoseconds on the trace's own clock, exactly as the
// producer's unit converts (Chrome's microseconds with up to three
// decimals are exact integers of ns). The clock's origin is the
// producer's (an epoch, boot time, the profiler's base time); the summary
// of each table says which.

// Kinds of trace.slices rows.
const (
	SliceThread  = "slice"   // a synchronous slice on a thread or a device stream
	SliceAsync   = "async"   // an async slice (Chrome b/e and S/F, a Perfetto async track)
	SliceInstant = "instant" // a point in time: duration 0
	SliceSpan    = "span"    // an OTLP span
	SliceObject  = "object"  // an object's lifetime, from its creation to its deletion
)

// TraceIDs is how a row names where it happened, in the producer's own
// ids: process and thread as the producer wrote them (Chrome pid/tid,
// which may be strings; Perfetto pid/tid), the producer's track beyond a
// thread, the device and stream of device work, and the distributed rank
// of the process that wrote the trace. trace.tracks gives their names.
type TraceIDs struct {
	Process  Null[string] `col:"process" doc:"native process id as the producer wrote it (Chrome pid, Perfetto pid, OTLP service.name); null when the format has none"`
	Thread   Null[string] `col:"thread" doc:"native thread id as the producer wrote it (Chrome tid, which Kineto uses for GPU streams too); null when none"`
	Track    Null[string] `col:"track" doc:"producer track beyond the thread: an async slice's id and scope, a Perfetto track uuid, an OTLP instrumentation scope; null when none"`
	Device   Null[string] `col:"device" doc:"device of device work or of a runtime call (a GPU index); null when none"`
	Stream   Null[string] `col:"stream" doc:"device stream or queue of device work; null when none"`
	DistRank Null[int64]  `col:"dist_rank" doc:"distributed rank of the process that wrote the trace (Kineto distributedInfo.rank); null when not recorded"`
}

// TraceSlice is a row of trace.slices: one named interval or instant.
// Rows come in an order of the decoder's choosing (roughly file order;
// a slice after the slices it encloses); projections that need time order
// sort.
type TraceSlice struct {
	SliceID  string       `col:"slice_id,identity" doc:"slice identity within the artifact: the native event's index (Chrome: index in traceEvents of its X, B, b, N or i event), span id (OTLP)"`
	ParentID Null[string] `col:"parent_id,identity" doc:"slice_id of the enclosing slice on the same thread or track (OTLP: the parent span); null at the top, or when nesting is unknown (see depth)"`
	Depth    Null[int64]  `col:"depth" doc:"slices on the same thread or track enclosing it: 0 at the top; null when the decoder could not place it (out of time order beyond its reorder window, an async or OTLP slice)"`
	Kind     string       `col:"kind" doc:"slice, async, instant, span or object"`
	Name     string       `col:"name" doc:"operation name as the producer wrote it"`
	Category Null[string] `col:"category" doc:"producer category (Chrome cat: cpu_op, kernel, cuda_runtime…; OTLP span kind); null when none"`
	TraceIDs
	StartNS     int64           `col:"start_ns,unit=ns" doc:"start on the trace's clock"`
	EndNS       int64           `col:"end_ns,unit=ns" doc:"end on the trace's clock; start_ns for an instant"`
	DurationNS  int64           `col:"duration_ns,unit=ns" doc:"end_ns - start_ns"`
	SelfNS      Null[int64]     `col:"self_ns,unit=ns" doc:"duration minus the durations of the slices it directly encloses on its thread or track; null when depth is null"`
	Correlation Null[int64]     `col:"correlation" doc:"producer correlation id linking a runtime call to the device work it launched (Kineto args.correlation, CUPTI/rocprof correlation id); null when none"`
	TraceID     Null[string]    `col:"trace_id,identity" doc:"OTLP trace id (hex); null for other formats"`
	Offset      Null[int64]     `col:"offset,unit=bytes" doc:"byte offset of the native event in the decoded stream (after gzip), of its begin for a pair; null where not byte-addressed"`
	Args        evidence.Object `col:"args,detail" doc:"the event's arguments or attributes, strings bounded by max_value_bytes, at most max_args entries (then \"…\": the count left out); null when none"`
}

// TraceSlices is the trace.slices schema.
var TraceSlices = Define[TraceSlice]("trace.slices", "one row per slice, span, instant or device activity of a trace", FromArtifact)

// TraceCounter is a row of trace.counters: one value of one counter
// series at one time (Chrome C events hold one series per args key).
type TraceCounter struct {
	Name     string       `col:"name" doc:"counter name (Chrome: the C event's name; Perfetto: the counter track's name)"`
	Series   Null[string] `col:"series" doc:"series within the counter (Chrome: the args key); null when the counter has one"`
	Category Null[string] `col:"category" doc:"producer category; null when none"`
	TraceIDs
	TS     int64       `col:"ts_ns,unit=ns" doc:"sample time on the trace's clock"`
	Value  float64     `col:"value" doc:"the sampled value, in the counter's own unit"`
	Offset Null[int64] `col:"offset,unit=bytes" doc:"byte offset of the native event in the decoded stream; null where not byte-addressed"`
}

// TraceCounters is the trace.counters schema.
var TraceCounters = Define[TraceCounter]("trace.counters", "one row per counter sample of a trace", FromArtifact)

// Steps of trace.flows rows.
const (
	FlowStart = "start"
	FlowStep  = "step"
	FlowEnd   = "end"
)

// TraceFlow is a row of trace.flows: one point of a flow.
type TraceFlow struct {
	FlowID   string       `col:"flow_id,identity" doc:"the flow's native id (Chrome: id, or id2, with its category, as the format scopes it)"`
	Step     string       `col:"step" doc:"start, step or end"`
	Name     Null[string] `col:"name" doc:"flow name; null when none"`
	Category Null[string] `col:"category" doc:"producer category (Kineto: ac2g, fwdbwd); null when none"`
	TraceIDs
	TS      int64        `col:"ts_ns,unit=ns" doc:"time of the flow point on the trace's clock"`
	Binding Null[string] `col:"binding" doc:"Chrome bp: e (binds to the enclosing slice) or null (the next slice)"`
	Offset  Null[int64]  `col:"offset,unit=bytes" doc:"byte offset of the native event in the decoded stream; null where not byte-addressed"`
}

// TraceFlows is the trace.flows schema.
var TraceFlows = Define[TraceFlow]("trace.flows", "one row per flow point (start, step, end) of a trace", FromArtifact)

// Kinds of trace.tracks rows.
const (
	TrackProcess = "process"
	TrackThread  = "thread"
	TrackOther   = "track"
)

// TraceTrack is a row of trace.tracks: what the producer says of one of
// its processes, threads or tracks (Chrome M events, Perfetto track
// descriptors, OTLP resources).
type TraceTrack struct {
	Kind      string       `col:"kind" doc:"process, thread or track"`
	Process   Null[string] `col:"process" doc:"native process id, as in the rows"`
	Thread    Null[string] `col:"thread" doc:"native thread id; null for a process or a track"`
	Track     Null[string] `col:"track" doc:"producer track id; null for a process or a thread"`
	Name      Null[string] `col:"name" doc:"the name the producer gives it; null when it gives only a sort index or labels"`
	SortIndex Null[int64]  `col:"sort_index" doc:"producer display order; null when none"`
	Labels    Null[string] `col:"labels" doc:"producer labels; null when none"`
	Parent    Null[string] `col:"parent" doc:"enclosing track (Perfetto parent uuid); null when none"`
}

// TraceTracks is the trace.tracks schema.
var TraceTracks = Define[TraceTrack]("trace.tracks", "names and order of a trace's processes, threads and tracks", FromArtifact)

// TraceTables are the tables every trace format emits, in this order.
var TraceTables = []*Schema{TraceSlices.Schema, TraceCounters.Schema, TraceFlows.Schema, TraceTracks.Schema}

// TraceOperation is a row of trace.operations: the slices of one name and
// identity (kind, category, process, thread, track, device, stream, rank)
// in one artifact, aggregated.
type TraceOperation struct {
	Rank        int64        `col:"rank" doc:"1 = largest by the ranking metric"`
	ArtifactID  string       `col:"artifact_id,identity" doc:"artifact the slices were read from"`
	Name        string       `col:"name" doc:"operation name"`
	Category    Null[string] `col:"category" doc:"producer category; null when none"`
	Count       int64        `col:"count,unit=slices" doc:"slices in the group"`
	TotalNS     int64        `col:"total_ns,unit=ns" doc:"sum of durations"`
	SelfNS      Null[int64]  `col:"self_ns,unit=ns" doc:"sum of self times (duration minus directly enclosed slices on the same thread or track); null when some slice's self time is unknown"`
	P50NS       int64        `col:"p50_ns,unit=ns" doc:"median duration (nearest rank)"`
	P99NS       int64        `col:"p99_ns,unit=ns" doc:"99th percentile duration (nearest rank)"`
	MaxNS       int64        `col:"max_ns,unit=ns" doc:"longest duration"`
	ThreadName  Null[string] `col:"thread_name" doc:"name trace.tracks gives the thread (or track); null when none"`
	ProcessName Null[string] `col:"process_name" doc:"name trace.tracks gives the process; null when none"`
	Kind        string       `col:"kind" doc:"slice, async, instant, span or object"`
	TraceIDs
	MeanNS  float64 `col:"mean_ns,unit=ns" doc:"total_ns / count"`
	P90NS   int64   `col:"p90_ns,unit=ns" doc:"90th percentile duration (nearest rank)"`
	FirstNS int64   `col:"first_ns,unit=ns" doc:"earliest start in the group"`
	LastNS  int64   `col:"last_ns,unit=ns" doc:"latest end in the group"`
}

// TraceOperations is the trace.operations schema.
var TraceOperations = Define[TraceOperation]("trace.operations", "trace operations grouped by name and identity, ranked by total duration")

// TraceWindowSlices is the trace.window_slices schema: the trace.slices
// rows overlapping a window, in start order.
var TraceWindowSlices = Define[TraceSlice]("trace.window_slices", "the slices overlapping a time window, in start order", FromArtifact)

// TraceWindowCounters is the trace.window_counters schema: the
// trace.counters rows sampled in a window, in time order.
var TraceWindowCounters = Define[TraceCounter]("trace.window_counters", "the counter samples in a time window, in time order", FromArtifact)
