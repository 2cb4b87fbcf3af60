package registry

import "github.com/flameox/flameox/internal/projection/cpu"

// named gives an operation defined outside list.go its name, which is
// written in list.go (the one place for operation names).
func named(name string, o *Operation) *Operation {
	o.Name = name
	return o
}

// compareCPUProfiles is named in list.go.
var compareCPUProfiles = &Operation{
	Title:      "Differential CPU profile",
	Family:     "CPU profiles",
	Projection: cpu.Diff,
	Guidance: "Use to see what changed between two CPU profiles of the same workload (before and after a change): " +
		"per function the baseline and new self and inclusive weights, their shares, the absolute and relative " +
		"change, ranked by the absolute change of self weight; functions on one side only are marked. Give the " +
		"baseline with --baseline PATH (MCP: baseline) and the new profile as the path; both sides in one format. " +
		"normalize scales the baseline to the new total, to compare where time went rather than how much there was.",
	Examples: []Example{
		{Title: "the 20 largest changes", Args: map[string]any{"top": int64(20)}},
		{Title: "changes in shares, not amounts", Args: map[string]any{"normalize": true}},
	},
	Overhead: "decoding streams each artifact once; the projection holds one entry per function",
	Limitations: []string{
		"functions pair by name, file and module across the sides; a renamed or moved function is one removed and one added",
		"sampled weights carry sampling noise: a small delta between two runs may be noise",
	},
}
