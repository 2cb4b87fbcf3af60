package registry

import (
	"github.com/flameox/flameox/internal/projection/cpu"
	"github.com/flameox/flameox/internal/projection/stacks"
)

// compareCPUProfiles is named in list.go.
var compareCPUProfiles = &Operation{
	Name:       nameCompareCPUProfiles,
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

// Outputs of the stack operations (flameox-rank --format).
var pictureOutputs = []string{"folded", "svg", "html", "pprof"}

// summarizeCPUStacks is named in list.go.
var summarizeCPUStacks = &Operation{
	Name:       nameSummarizeCPUStacks,
	Title:      "CPU stacks (folded; flame graph)",
	Family:     "CPU profiles",
	Projection: stacks.Spec,
	Guidance: "Use for the whole call-stack picture of a CPU profile: every distinct stack as function labels, " +
		"root first, with its weight (Brendan Gregg's folded stacks). flameox-rank --format folded writes them for " +
		"flamegraph.pl and inferno, --format svg or html draws the flame graph (--icicle for top-down), --format pprof " +
		"writes a profile.proto for go tool pprof. min_share and max_stacks bound it, with the omitted weight stated.",
	Examples: []Example{
		{Title: "every stack", Args: map[string]any{}},
		{Title: "stacks of at least 0.1% of the total", Args: map[string]any{"min_share": 0.001}},
	},
	Overhead: "decoding streams the artifact once; the projection holds one entry per distinct stack",
	Limitations: []string{
		"frames are labelled by function name; file, line and module stay in the decoded cpu.frames rows",
	},
	Outputs: pictureOutputs,
}

// compareCPUStacks is named in list.go.
var compareCPUStacks = &Operation{
	Name:       nameCompareCPUStacks,
	Title:      "Differential CPU stacks (differential flame graph)",
	Family:     "CPU profiles",
	Projection: stacks.Diff,
	Guidance: "Use to see where in the call tree two CPU profiles differ: every distinct stack with its baseline and " +
		"new weight (FlameGraph's difffolded). flameox-rank --baseline BASE NEW --format svg draws the differential " +
		"flame graph: widths are the new profile, red grew, blue shrank. normalize scales the baseline to the new total.",
	Examples: []Example{
		{Title: "every stack of both sides", Args: map[string]any{}},
		{Title: "normalized to the new total", Args: map[string]any{"normalize": true}},
	},
	Overhead: "decoding streams each artifact once; the projection holds one entry per distinct stack",
	Limitations: []string{
		"stacks pair by their function labels; a renamed function makes its stacks one removed and one added",
	},
	Outputs: pictureOutputs,
}
