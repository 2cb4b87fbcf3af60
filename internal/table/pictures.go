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
