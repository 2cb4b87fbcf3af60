package registry

import (
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/projection/memory"
)

var summarizeMemoryHotspots = &Operation{
	Name:       opMemoryHotspots,
	Title:      "Memory hotspots",
	Family:     "Memory profiles",
	Projection: memory.Hotspots,
	Guidance: "Use to find where memory goes in a Memray capture, a V8 sampling heap profile (.heapprofile) or a Go heap profile (pprof): " +
		"frames ranked by the bytes (or allocations) of one population, self (allocated where the frame is the leaf) " +
		"and inclusive (anywhere on the stack). Memray rows describe the high watermark by default; decode with " +
		"--option population=leaked for what was still live at exit; Go heap profiles the profile's default (allocs: alloc_space, heap: inuse_space), " +
		"or --option sample_index=inuse_space for what was live at the last GC. Threads are summed unless per_thread is set. " +
		"Filters select before the top bound applies.",
	Examples: []Example{
		{Title: "top 20 frames by bytes at the high watermark", Args: evidence.Object{"top": 20}},
		{Title: "inclusive bytes, per thread", Args: evidence.Object{"rank_by": "inclusive_bytes", "per_thread": true}},
		{Title: "most allocations in one file", Args: evidence.Object{"rank_by": "self_count", "file_pattern": `app\.py$`}},
	},
	Overhead: "decoding streams the capture once; memory grows with live allocations and distinct stacks, not with records",
	Limitations: []string{
		"Memray native frames are not symbolized: allocations are attributed to their Python stacks",
		"V8 sampling heap profiles hold sampled estimates of the bytes live when the profile was taken, not exact allocations",
		"Go heap profiles hold the runtime's sampled estimates (runtime.MemProfileRate); inuse is as of the most recent garbage collection",
	},
}
