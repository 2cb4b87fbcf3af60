package formats

import "github.com/flameox/flameox/internal/table"

// FamilyMemory is the evidence family of memory profiles.
const FamilyMemory = "Memory profiles"

// MemoryTables are the tables every memory-profile format emits, the input
// of the memory projections.
var MemoryTables = []*table.Schema{table.MemoryFrames.Schema}

// MemoryProfile completes the spec of a memory-profile format: it is
// listed under FamilyMemory and emits MemoryTables.
func MemoryProfile(s Spec) *Spec {
	s.Family, s.Tables = FamilyMemory, MemoryTables
	return &s
}
