package registry

import (
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/projection/stacks"
)

var summarizeMemoryStacks = &Operation{
	Name:       opMemoryStacks,
	Title:      "Memory stacks (folded; memory flame graph)",
	Family:     "Memory profiles",
	Projection: stacks.Memory,
	Guidance: "Use for the whole allocation-stack picture of a heap profile (Go heap pprof, V8 .heapprofile, Memray capture): every distinct " +
		"stack of one population as function labels, root first, with its bytes (weight=count: its allocations, objects or " +
		"sample records). flameox-rank --format folded writes them for flamegraph.pl and inferno, --format svg or html draws " +
		"the memory flame graph, --format pprof writes a profile.proto. min_share and max_stacks bound it, with the omitted " +
		"bytes stated. Populations never pool: decode with --option sample_index=alloc_space (pprof) or --option population=leaked (Memray) for another one.",
	Examples: []Example{
		{Title: "every stack, by bytes", Args: evidence.Object{}},
		{Title: "stacks of at least 1% of the bytes", Args: evidence.Object{"min_share": 0.01}},
		{Title: "by allocation count", Args: evidence.Object{"weight": "count"}},
	},
	Overhead: "decoding streams the artifact once; the projection holds one entry per distinct stack",
	Limitations: []string{
		"frames are labelled by function name; file, line and module stay in the decoded memory.frames rows",
		"heap profiles hold sampled estimates: Go's scaled by runtime.MemProfileRate, V8's by its sampling interval",
	},
	Outputs: pictureOutputs,
}
