package table

// Row bounds for coverage.files list columns.
const (
	CoverageMissingNumbers = 64
	CoverageContextNames   = 32
)

// CoverageFile is a row of coverage.files: one measured source file.
// Both coverage.py formats emit it; a column the format does not record
// is null (the data file has no statements, the JSON report no arcs).
type CoverageFile struct {
	File               string        `col:"file" doc:"source file path as coverage.py recorded it"`
	Statements         Null[int64]   `col:"statements,unit=lines" doc:"executable statements (report: num_statements); null from the data file"`
	ExecutedLines      Null[int64]   `col:"executed_lines,unit=lines" doc:"distinct lines executed (report: covered_lines; data file: what coverage.py's CoverageData.lines returns)"`
	MissingLines       Null[int64]   `col:"missing_lines,unit=lines" doc:"statements not executed; null from the data file"`
	ExcludedLines      Null[int64]   `col:"excluded_lines,unit=lines" doc:"lines excluded by pragmas or config; null from the data file"`
	NumBranches        Null[int64]   `col:"num_branches" doc:"possible branch destinations; null without branch data"`
	CoveredBranches    Null[int64]   `col:"covered_branches" doc:"branch destinations taken; null without branch data"`
	PartialBranches    Null[int64]   `col:"partial_branches" doc:"branch lines with some destination not taken; null without branch data"`
	MissingBranches    Null[int64]   `col:"missing_branches" doc:"branch destinations not taken; null without branch data"`
	PercentCovered     Null[float64] `col:"percent_covered,unit=percent" doc:"coverage.py's percent covered (lines and branches); null from the data file"`
	MissingLineNumbers []int64       `col:"missing_line_numbers" doc:"the first 64 missing line numbers, ascending; null from the data file"`
	ExecutedArcs       Null[int64]   `col:"executed_arcs" doc:"distinct executed arcs (data file with branch data); null otherwise"`
	ContextCount       Null[int64]   `col:"context_count" doc:"distinct measurement contexts that touched the file; null when not recorded"`
	Contexts           []string      `col:"contexts" doc:"the first 32 context names, sorted; null when not recorded"`
	Tracer             Null[string]  `col:"tracer" doc:"file tracer plugin (data file); null when coverage.py's own tracer measured it"`
}

// CoverageFiles is the coverage.files schema.
var CoverageFiles = Define[CoverageFile]("coverage.files", "one row per source file coverage.py measured", FromArtifact)
