package table

// Result tables: what projections write. A result row derived from input
// rows (a ranked frame with its shares, a series aggregate) is its own
// struct and names its artifact in an artifact_id field; where it keeps
// an input row's columns as they are, in their order, it embeds the
// input's row type (a ranked edge embeds Edge). A result that passes
// input rows through unchanged (the selected failures, SARIF results,
// coverage files, raw observations) reuses the input's row type; its
// artifact_id column is then, as in the input, not a field but given with
// each row (Schema.Values(row, artifact)), from the input table the row
// came from, so one result table may hold rows of several artifacts.
//
// A result table is never named like a decoded table, so a stream's table
// names tell a decoder's tables from a projection's.

// Hotspot is a row of cpu.hotspots: one frame identity of one profile
// series, ranked, with its weights converted to the result's unit and
// its shares of the admitted profiles' total weight.
type Hotspot struct {
	Rank       int64  `col:"rank" doc:"1 = hottest by the ranking metric"`
	ArtifactID string `col:"artifact_id,identity" doc:"artifact the row was read from"`
	FrameSite
	SelfWeight      float64       `col:"self_weight,unit=*" doc:"weight where the frame is the leaf"`
	SelfShare       Null[float64] `col:"self_share,unit=ratio" doc:"self_weight / total weight of the admitted profiles"`
	InclusiveWeight float64       `col:"inclusive_weight,unit=*" doc:"weight of the samples whose stack holds the frame, each counted once (pprof's cum); pstats: cumtime"`
	InclusiveShare  Null[float64] `col:"inclusive_share,unit=ratio" doc:"inclusive_weight / total weight"`
	// No share of the occurrence sum: it can exceed the total.
	InclusiveOccurrenceWeight Null[float64] `col:"inclusive_occurrence_weight,unit=*" doc:"weight summed over the frame's call-tree occurrences (repeats recursion); null where the format defines no call tree"`
	Calls                     Null[int64]   `col:"calls,unit=calls" doc:"recorded call count; null for sampled formats"`
	PrimitiveCalls            Null[int64]   `col:"primitive_calls,unit=calls" doc:"recorded non-recursive calls; null for sampled formats"`
}

// CPUHotspots is the cpu.hotspots schema; weights are in the table's unit.
var CPUHotspots = Define[Hotspot]("cpu.hotspots", "frames ranked by a CPU metric, with their shares of the total weight")

// CallerEdge is a row of cpu.caller_edges: one caller→callee pair of one
// series, ranked, its weights converted to the result's unit.
type CallerEdge struct {
	Rank       int64  `col:"rank" doc:"1 = heaviest edge"`
	ArtifactID string `col:"artifact_id,identity" doc:"artifact the row was read from"`
	Edge
}

// CPUCallerEdges is the cpu.caller_edges schema; weights are in the
// table's unit.
var CPUCallerEdges = Define[CallerEdge]("cpu.caller_edges", "caller→callee pairs ranked by the callee's weight under the caller")

// PytestFailures is the pytest.failures schema: the pytest.outcomes rows
// of failure identities, in rank order.
var PytestFailures = Define[PytestOutcome]("pytest.failures",
	"failed collectors, crashed, interrupted, errored and failed tests, then tests that never ran", FromArtifact)

// Series is a row of observations.series: the aggregate of one series
// (name, phase, unit, process, artifact) of observations.
type Series struct {
	ArtifactID   string        `col:"artifact_id,identity" doc:"artifact the series was recorded in"`
	Name         string        `col:"name" doc:"observation name"`
	Phase        Null[string]  `col:"phase" doc:"null when recorded outside any phase"`
	Unit         Null[string]  `col:"unit" doc:"time and memory units normalized (ms becomes s, KiB becomes bytes); any other unit as declared; null when none"`
	PID          int64         `col:"pid" doc:"process that recorded the series"`
	Count        int64         `col:"count" doc:"observations in the series"`
	NumericCount int64         `col:"numeric_count" doc:"observations whose value is a number"`
	Sum          Null[float64] `col:"sum" doc:"sum of numeric values in unit, as a double; null without numbers"`
	Min          Null[float64] `col:"min" doc:"least numeric value in unit; null without numbers"`
	Max          Null[float64] `col:"max" doc:"greatest numeric value in unit; null without numbers"`
	Mean         Null[float64] `col:"mean" doc:"sum / numeric_count; null without numbers"`
	FirstTS      int64         `col:"first_ts,unit=ns" doc:"time of the series' first observation"`
	LastTS       int64         `col:"last_ts,unit=ns" doc:"time of the series' last observation"`
	LastValue    any           `col:"last_value" doc:"the last value exactly as recorded, in its recorded unit"`
}

// ObservationSeries is the observations.series schema.
var ObservationSeries = Define[Series]("observations.series", "one row per series of observations, with its aggregates")

// ObservationPhase is a row of observations.phases: one phase a workload
// opened, with its duration when it closed.
type ObservationPhase struct {
	ArtifactID string        `col:"artifact_id,identity" doc:"artifact the phase was recorded in"`
	Phase      string        `col:"phase" doc:"phase name"`
	PID        int64         `col:"pid" doc:"process that recorded the phase"`
	StartTS    int64         `col:"start_ts,unit=ns" doc:"time the phase started"`
	EndTS      Null[int64]   `col:"end_ts,unit=ns" doc:"null when the phase never ended"`
	Duration   Null[float64] `col:"duration,unit=s" doc:"end_ts - start_ts; null when the phase never ended"`
	Closed     bool          `col:"closed" doc:"the phase ended"`
	StartLine  int64         `col:"start_line,base=1" doc:"1-based line of the phase_start record"`
	Depth      int64         `col:"depth" doc:"phases of the same process open around it"`
}

// ObservationPhases is the observations.phases schema.
var ObservationPhases = Define[ObservationPhase]("observations.phases", "phases a workload recorded, unclosed first, then longest")

// ObservationRawRecords is the observations.raw_records schema: the
// selected observation records, in file order.
var ObservationRawRecords = Define[ObservationRecord]("observations.raw_records", "the selected observations, in file order", FromArtifact)

// CoverageRankedFiles is the coverage.ranked_files schema: the selected
// coverage.files rows, ranked.
var CoverageRankedFiles = Define[CoverageFile]("coverage.ranked_files", "the selected files, ranked by a coverage column", FromArtifact)

// SARIFCandidates is the sarif.candidates schema: the selected
// sarif.results rows, most severe first.
var SARIFCandidates = Define[SARIFResult]("sarif.candidates", "the selected SARIF results, ranked by severity and location", FromArtifact)
