package table

// Presence of a compared function on the two sides of a comparison.
const (
	PresenceBoth         = "both"
	PresenceBaselineOnly = "baseline_only"
	PresenceNewOnly      = "new_only"
)

// DiffFunction is a row of cpu.diff: one function (name, file, module)
// pooled over the frames and series of each side of a comparison, with
// its weights on both sides, ranked by how much its self weight changed.
type DiffFunction struct {
	Rank           int64         `col:"rank" doc:"1 = largest absolute change in self weight"`
	Function       string        `col:"function" doc:"function or symbol name as the producer wrote it"`
	File           Null[string]  `col:"file" doc:"source file or URL; null when unknown"`
	Module         Null[string]  `col:"module" doc:"binary, shared object or module; null when unknown"`
	Presence       string        `col:"presence" doc:"both, baseline_only or new_only: the sides whose profiles hold a frame of the function"`
	BaseSelf       float64       `col:"base_self_weight,unit=*" doc:"baseline self weight (scaled to the new total when normalize is set)"`
	NewSelf        float64       `col:"new_self_weight,unit=*" doc:"new self weight"`
	DeltaSelf      float64       `col:"delta_self_weight,unit=*" doc:"new_self_weight - base_self_weight"`
	DeltaRatio     Null[float64] `col:"delta_ratio,unit=ratio" doc:"delta_self_weight / base_self_weight; null when the baseline weight is 0"`
	BaseSelfShare  Null[float64] `col:"base_self_share,unit=ratio" doc:"baseline self weight / baseline total (normalize does not change it)"`
	NewSelfShare   Null[float64] `col:"new_self_share,unit=ratio" doc:"new self weight / new total"`
	DeltaShare     Null[float64] `col:"delta_self_share,unit=ratio" doc:"new_self_share - base_self_share"`
	BaseInclusive  float64       `col:"base_inclusive_weight,unit=*" doc:"baseline inclusive weight (scaled when normalize is set)"`
	NewInclusive   float64       `col:"new_inclusive_weight,unit=*" doc:"new inclusive weight"`
	DeltaInclusive float64       `col:"delta_inclusive_weight,unit=*" doc:"new_inclusive_weight - base_inclusive_weight"`
}

// CPUDiff is the cpu.diff schema; weights are in the table's unit.
var CPUDiff = Define[DiffFunction]("cpu.diff", "functions of two sides of a comparison, ranked by the absolute change of their self weight")

// Stack is a row of cpu.stacks: one distinct call stack of one profile
// series and the weight of the samples that had it. Frames name cpu.frames
// rows of the same artifact by frame_id, outermost first; the same frame id
// may recur (recursion). Producer-made roots that stand for the whole
// profile (V8's (root)) are left out: a flame graph's root is the total.
type Stack struct {
	Frames  []string     `col:"frames" doc:"frame_id of each frame, outermost (root) first, leaf last"`
	Thread  Null[string] `col:"thread" doc:"thread or profile series; null when the format has one series"`
	Process Null[string] `col:"process" doc:"process series; null when the format has one process"`
	Weight  float64      `col:"weight,unit=*" doc:"weight of the samples with this stack"`
}

// CPUStacks is the cpu.stacks schema; weights are in the table's unit.
var CPUStacks = Define[Stack]("cpu.stacks", "one row per distinct call stack of a series with its samples' weight; frames name cpu.frames rows", FromArtifact)

// FoldedStack is a row of cpu.folded: one distinct stack of frame labels
// and its weight, pooled over the admitted profiles: Brendan Gregg's
// folded (collapsed) stacks, the input of a flame graph.
type FoldedStack struct {
	Stack  []string      `col:"stack" doc:"frame labels, outermost first: the process and thread first when the profile names them, then function names"`
	Weight float64       `col:"weight,unit=*" doc:"weight of the samples with this stack"`
	Share  Null[float64] `col:"share,unit=ratio" doc:"weight / total weight of the admitted profiles"`
}

// CPUFolded is the cpu.folded schema; weights are in the table's unit.
var CPUFolded = Define[FoldedStack]("cpu.folded", "distinct call stacks as frame labels with their weights (folded stacks, the input of a flame graph)")

// FoldedDiff is a row of cpu.folded_diff: one distinct stack of frame
// labels with its weight on each side of a comparison (FlameGraph's
// difffolded input).
type FoldedDiff struct {
	Stack      []string `col:"stack" doc:"frame labels, outermost first"`
	BaseWeight float64  `col:"base_weight,unit=*" doc:"baseline weight of the stack (scaled to the new total when normalize is set)"`
	NewWeight  float64  `col:"new_weight,unit=*" doc:"new weight of the stack"`
	Delta      float64  `col:"delta_weight,unit=*" doc:"new_weight - base_weight"`
}

// CPUFoldedDiff is the cpu.folded_diff schema; weights are in the table's
// unit.
var CPUFoldedDiff = Define[FoldedDiff]("cpu.folded_diff", "distinct call stacks with their weights on the baseline and the new side (a differential flame graph's input)")
