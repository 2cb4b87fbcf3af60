// Package schema defines the row schemas that decoders of different native
// formats share, so that one projection can rank them all. A schema fixes
// column names and types; units are stated per table in the column header.
package schema

import "github.com/flameox/flameox/internal/evidence"

// Table names.
const (
	CPUFrames = "cpu.frames" // one row per frame identity with self/inclusive weight
	CPUEdges  = "cpu.edges"  // one row per caller→callee pair
)

// Symbolization states of a frame.
const (
	Symbolized = "symbolized" // a named function
	Anonymous  = "anonymous"  // a real frame without a name (e.g. a JS arrow function)
	Unresolved = "unresolved" // the producer could not resolve the frame ([unknown], raw address)
	Synthetic  = "synthetic"  // a producer-made node: (root), (program), (idle), (garbage collector)
)

// CPUFrameColumns returns the cpu.frames columns with weights in unit.
//
// frame_id identifies a frame within its artifact; line and column are the
// producer's native coordinates (-1 when unavailable); thread and process
// are series dimensions that projections never blend.
func CPUFrameColumns(weightUnit string) []evidence.Column {
	return []evidence.Column{
		{Name: "artifact_id", Type: evidence.TypeString, Description: "artifact the frame was read from"},
		{Name: "frame_id", Type: evidence.TypeString, Description: "frame identity within the artifact"},
		{Name: "function", Type: evidence.TypeString, Description: "function or symbol name as the producer wrote it"},
		{Name: "file", Type: evidence.TypeString, Description: "source file or URL; null when unknown"},
		{Name: "line", Type: evidence.TypeInt, Description: "native line coordinate; -1 when unavailable"},
		{Name: "column", Type: evidence.TypeInt, Description: "native column coordinate; -1 when unavailable"},
		{Name: "module", Type: evidence.TypeString, Description: "binary, shared object or module; null when unknown"},
		{Name: "symbolization", Type: evidence.TypeString, Description: "symbolized, anonymous, unresolved or synthetic"},
		{Name: "thread", Type: evidence.TypeString, Description: "thread or profile series; null when the format has one series"},
		{Name: "process", Type: evidence.TypeString, Description: "process series; null when the format has one process"},
		{Name: "self_weight", Type: evidence.TypeDouble, Unit: weightUnit, Description: "weight where the frame is the leaf"},
		{Name: "inclusive_weight", Type: evidence.TypeDouble, Unit: weightUnit, Description: "weight of stacks containing the frame"},
		{Name: "calls", Type: evidence.TypeInt, Unit: "calls", Description: "call count when the producer records one; null otherwise"},
		{Name: "primitive_calls", Type: evidence.TypeInt, Unit: "calls", Description: "non-recursive call count when recorded; null otherwise"},
	}
}

// CPUEdgeColumns returns the cpu.edges columns with weights in unit.
// weight is the callee's inclusive weight under this caller; self_weight is
// the callee's own weight under this caller.
func CPUEdgeColumns(weightUnit string) []evidence.Column {
	return []evidence.Column{
		{Name: "artifact_id", Type: evidence.TypeString, Description: "artifact the edge was read from"},
		{Name: "caller_id", Type: evidence.TypeString, Description: "caller frame identity"},
		{Name: "caller_function", Type: evidence.TypeString},
		{Name: "caller_file", Type: evidence.TypeString},
		{Name: "caller_line", Type: evidence.TypeInt},
		{Name: "callee_id", Type: evidence.TypeString, Description: "callee frame identity"},
		{Name: "callee_function", Type: evidence.TypeString},
		{Name: "callee_file", Type: evidence.TypeString},
		{Name: "callee_line", Type: evidence.TypeInt},
		{Name: "thread", Type: evidence.TypeString, Description: "thread or profile series; null when the format has one series"},
		{Name: "process", Type: evidence.TypeString},
		{Name: "weight", Type: evidence.TypeDouble, Unit: weightUnit, Description: "callee inclusive weight under this caller"},
		{Name: "self_weight", Type: evidence.TypeDouble, Unit: weightUnit, Description: "callee self weight under this caller"},
		{Name: "calls", Type: evidence.TypeInt, Unit: "calls", Description: "calls along this edge when recorded; null for sampled edges"},
		{Name: "primitive_calls", Type: evidence.TypeInt, Unit: "calls"},
	}
}

// Metric names that CPU decoders put in their summaries. Projections sum
// TotalWeight across admitted profiles.
const (
	MetricTotalWeight = "total_weight" // sum of all samples' weight, in the weight unit
	MetricSamples     = "samples"      // number of native samples
)
