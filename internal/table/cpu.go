package table

import (
	"strings"

	"github.com/flameox/flameox/internal/evidence"
)

// Symbolization states of a CPU frame.
const (
	Symbolized = "symbolized" // a named function
	Anonymous  = "anonymous"  // a real frame without a name (e.g. a JS arrow function)
	Unresolved = "unresolved" // the producer could not resolve the frame ([unknown], raw address)
	Synthetic  = "synthetic"  // a producer-made node: (root), (program), (idle), (garbage collector)
)

// Metric names that CPU decoders put in their summaries. Projections sum
// TotalWeight across admitted profiles.
const (
	MetricTotalWeight = "total_weight" // sum of all samples' weight, in the weight unit
	MetricSamples     = "samples"      // number of native samples
)

// CoverageProfiles is the summary coverage key under which a CPU decoder
// whose table holds several series (threads, processes) lists each one:
// an object with its "thread" and "process" (absent or null when the
// format has none) and its "total_weight" in the table's unit, samples
// with empty stacks included. A projection that selects series takes its
// denominator from there, since frame rows cannot tell it.
const CoverageProfiles = "profiles"

// SeriesTotal is one entry of CoverageProfiles.
type SeriesTotal struct {
	Thread, Process Null[string]
	TotalWeight     float64
}

// SeriesTotals reads the CoverageProfiles entries of a summary's
// coverage; ok is false when there are none or one is malformed (no
// number for total_weight, a thread that is not a string).
func SeriesTotals(coverage evidence.Object) (out []SeriesTotal, ok bool) {
	list, _ := coverage[CoverageProfiles].([]any)
	if len(list) == 0 {
		return nil, false
	}
	name := func(v any) (Null[string], bool) {
		if v == nil {
			return Null[string]{}, true
		}
		s, ok := v.(string)
		return Some(s), ok
	}
	for _, e := range list {
		o, _ := e.(evidence.Object)
		w, okW := evidence.AsFloat(o["total_weight"])
		th, okT := name(o["thread"])
		pr, okP := name(o["process"])
		if o == nil || !okW || !okT || !okP {
			return nil, false
		}
		out = append(out, SeriesTotal{Thread: th, Process: pr, TotalWeight: w})
	}
	return out, true
}

// FrameSite is a frame's identity and where it is, in one profile series:
// the columns a ranked hotspot keeps of the frame it ranks. Line and column
// are the producer's native coordinates; each table states their base
// (Schema.HeaderBased), since V8 counts from 0 and pstats from 1.
type FrameSite struct {
	FrameID       string       `col:"frame_id,identity" doc:"frame identity within the artifact"`
	Function      string       `col:"function" doc:"function or symbol name as the producer wrote it"`
	File          Null[string] `col:"file" doc:"source file or URL; null when unknown"`
	Line          int64        `col:"line,base=*" doc:"native line coordinate; -1 when unavailable"`
	Column        int64        `col:"column,base=*" doc:"native column coordinate; -1 when unavailable"`
	Module        Null[string] `col:"module" doc:"binary, shared object or module; null when unknown"`
	Symbolization string       `col:"symbolization" doc:"symbolized, anonymous, unresolved or synthetic"`
	Thread        Null[string] `col:"thread" doc:"thread or profile series; null when the format has one series"`
	Process       Null[string] `col:"process" doc:"process series; null when the format has one process"`
}

// Frame is a row of cpu.frames: one frame of one profile series with its
// weights. Every CPU decoder emits it, so one projection ranks them all.
type Frame struct {
	FrameSite
	SelfWeight      float64 `col:"self_weight,unit=*" doc:"weight where the frame is the leaf"`
	InclusiveWeight float64 `col:"inclusive_weight,unit=*" doc:"weight of the samples whose stack holds the frame, each counted once however often the frame recurs in it (pprof's cum); pstats: cumtime, pstats' own rule for recursion"`
	// InclusiveOccurrenceWeight is kept apart from InclusiveWeight: it is
	// a different quantity (it repeats recursion), and only a format whose
	// native data defines it (V8's call tree) fills it.
	InclusiveOccurrenceWeight Null[float64] `col:"inclusive_occurrence_weight,unit=*" doc:"weight summed over the frame's call-tree occurrences, so a recursive frame counts once per occurrence and can exceed the total; null where the format defines no call tree"`
	Calls                     Null[int64]   `col:"calls,unit=calls" doc:"call count when the producer records one; null otherwise"`
	PrimitiveCalls            Null[int64]   `col:"primitive_calls,unit=calls" doc:"non-recursive call count when recorded; null otherwise"`
}

// CPUFrames is the cpu.frames schema; weights are in the table's unit.
var CPUFrames = Define[Frame]("cpu.frames", "one row per frame identity with self and inclusive weight", FromArtifact)

// Edge is a row of cpu.edges: one caller→callee pair of one series.
// Weight is the callee's inclusive weight under this caller (each sample
// once, however often the pair recurs on its stack), SelfWeight the
// callee's own weight under it.
type Edge struct {
	CallerID       string        `col:"caller_id,identity" doc:"caller frame identity"`
	CallerFunction string        `col:"caller_function" doc:"caller function or symbol name"`
	CallerFile     Null[string]  `col:"caller_file" doc:"caller source file or URL; null when unknown"`
	CallerLine     int64         `col:"caller_line,base=*" doc:"caller native line; -1 when unavailable"`
	CalleeID       string        `col:"callee_id,identity" doc:"callee frame identity"`
	CalleeFunction string        `col:"callee_function" doc:"callee function or symbol name"`
	CalleeFile     Null[string]  `col:"callee_file" doc:"callee source file or URL; null when unknown"`
	CalleeLine     int64         `col:"callee_line,base=*" doc:"callee native line; -1 when unavailable"`
	Thread         Null[string]  `col:"thread" doc:"thread or profile series; null when the format has one series"`
	Process        Null[string]  `col:"process" doc:"process series; null when the format has one process"`
	Weight         Null[float64] `col:"weight,unit=*" doc:"weight of the samples whose stack holds this caller→callee pair, each counted once; null when the producer records only calls"`
	SelfWeight     Null[float64] `col:"self_weight,unit=*" doc:"callee self weight under this caller; null when the producer records only calls"`
	Calls          Null[int64]   `col:"calls,unit=calls" doc:"calls along this edge when recorded; null for sampled edges"`
	PrimitiveCalls Null[int64]   `col:"primitive_calls,unit=calls" doc:"non-recursive calls along this edge when recorded; null otherwise"`
}

// CPUEdges is the cpu.edges schema; weights are in the table's unit.
var CPUEdges = Define[Edge]("cpu.edges", "one row per caller→callee pair with the callee's weight under that caller", FromArtifact)

// sampledLines is how a cpu.frames header says its line column is the
// source line each sample was on (a frame per line, as py-spy writes
// them), not where the function starts: what group_by line needs.
const sampledLines = "; the line a sample was on: the table has a frame per source line"

// SampledLinesHeader is CPUFrames.HeaderBased for a decoder whose frames
// are sampled source lines.
func SampledLinesHeader(unit string, base int) *evidence.Table {
	h := CPUFrames.HeaderBased(unit, base)
	for i := range h.Columns {
		if h.Columns[i].Name == "line" {
			h.Columns[i].Description += sampledLines
		}
	}
	return h
}

// SampledLines reports whether cpu.frames header h states that its line
// column is the line each sample was on (SampledLinesHeader).
func SampledLines(h *evidence.Table) bool {
	c, ok := h.Column("line")
	return ok && strings.HasSuffix(c.Description, sampledLines)
}

// CPULines is the cpu.lines schema: for a format whose cpu.frames are
// functions but whose samples also record the source line they were on
// (V8 positionTicks, perf script's srcline), one row per (function,
// sampled line) of a series, beside the function table. A function's
// samples with no line are a row of their own, line -1. Rows are the
// cpu.frames columns; weights are in the table's unit.
var CPULines = Define[Frame]("cpu.lines", "one row per sampled source line of a function (function, file, line) with its weight; samples without a line are their function's row with line -1", FromArtifact)

// LinesHeader is the cpu.lines header: lines are counted from base, and
// the line column says it is the line samples were on (SampledLines).
func LinesHeader(unit string, base int) *evidence.Table {
	h := CPULines.HeaderBased(unit, base)
	for i := range h.Columns {
		if h.Columns[i].Name == "line" {
			h.Columns[i].Description += sampledLines
		}
	}
	return h
}
