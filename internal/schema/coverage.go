package schema

import "github.com/flameox/flameox/internal/evidence"

// Coverage and static-analysis tables.
const (
	CoverageFiles = "coverage.files" // one row per measured source file (coverage.py)
	SARIFResults  = "sarif.results"  // one row per native SARIF result
)

// CoverageFileColumns are the coverage.files columns. Both coverage.py
// formats emit them; a column the format does not record is null (the data
// file has no statements, the JSON report has no arcs).
func CoverageFileColumns() []evidence.Column {
	return []evidence.Column{
		{Name: "artifact_id", Type: evidence.TypeString, Description: "artifact the row was read from"},
		{Name: "file", Type: evidence.TypeString, Description: "source file path as coverage.py recorded it"},
		{Name: "statements", Type: evidence.TypeInt, Unit: "lines", Description: "executable statements (report: num_statements); null from the data file"},
		{Name: "executed_lines", Type: evidence.TypeInt, Unit: "lines", Description: "distinct lines executed (report: covered_lines; data file: what coverage.py's CoverageData.lines returns)"},
		{Name: "missing_lines", Type: evidence.TypeInt, Unit: "lines", Description: "statements not executed; null from the data file"},
		{Name: "excluded_lines", Type: evidence.TypeInt, Unit: "lines", Description: "lines excluded by pragmas or config; null from the data file"},
		{Name: "num_branches", Type: evidence.TypeInt, Description: "possible branch destinations; null without branch data"},
		{Name: "covered_branches", Type: evidence.TypeInt, Description: "branch destinations taken; null without branch data"},
		{Name: "partial_branches", Type: evidence.TypeInt, Description: "branch lines with some destination not taken; null without branch data"},
		{Name: "missing_branches", Type: evidence.TypeInt, Description: "branch destinations not taken; null without branch data"},
		{Name: "percent_covered", Type: evidence.TypeDouble, Unit: "percent", Description: "coverage.py's percent covered (lines and branches); null from the data file"},
		{Name: "missing_line_numbers", Type: evidence.TypeJSON, Description: "the first 64 missing line numbers, ascending; null from the data file"},
		{Name: "executed_arcs", Type: evidence.TypeInt, Description: "distinct executed arcs (data file with branch data); null otherwise"},
		{Name: "context_count", Type: evidence.TypeInt, Description: "distinct measurement contexts that touched the file; null when not recorded"},
		{Name: "contexts", Type: evidence.TypeJSON, Description: "the first 32 context names, sorted; null when not recorded"},
		{Name: "tracer", Type: evidence.TypeString, Description: "file tracer plugin (data file); null when coverage.py's own tracer measured it"},
	}
}

// Row bounds for coverage.files list columns.
const (
	CoverageMissingNumbers = 64
	CoverageContextNames   = 32
)

// SARIFResultColumns are the sarif.results columns.
func SARIFResultColumns() []evidence.Column {
	return []evidence.Column{
		{Name: "artifact_id", Type: evidence.TypeString, Description: "artifact the result was read from"},
		{Name: "run_index", Type: evidence.TypeInt, Description: "index of the run in runs[]"},
		{Name: "result_index", Type: evidence.TypeInt, Description: "index of the result in runs[run_index].results[]"},
		{Name: "tool", Type: evidence.TypeString, Description: "tool.driver.name"},
		{Name: "rule_id", Type: evidence.TypeString, Description: "ruleId, rule.id, or the id of the rule that ruleIndex resolves to; null when none"},
		{Name: "rule_index", Type: evidence.TypeInt, Description: "native rule index (ruleIndex or rule.index); -1 when absent"},
		{Name: "level", Type: evidence.TypeString, Description: "error, warning, note or none, after SARIF's defaults (kind, rule defaultConfiguration, then warning)"},
		{Name: "level_source", Type: evidence.TypeString, Description: "where level came from: result, kind, rule_default or sarif_default"},
		{Name: "kind", Type: evidence.TypeString, Description: "result kind; fail when absent"},
		{Name: "message", Type: evidence.TypeString, Description: "message text (from text, or messageStrings with arguments), at most 1024 bytes"},
		{Name: "message_truncated", Type: evidence.TypeBool, Description: "the message was longer than 1024 bytes and was cut"},
		{Name: "uri", Type: evidence.TypeString, Description: "primary location URI as written (or from run.artifacts); null when absent"},
		{Name: "uri_base_id", Type: evidence.TypeString, Description: "uriBaseId as written; null when absent"},
		{Name: "path", Type: evidence.TypeString, Description: "location relative to the source root, slash-separated; null unless location_status is ok"},
		{Name: "location_status", Type: evidence.TypeString, Description: "ok, absent, or the typed reason the location was rejected"},
		{Name: "start_line", Type: evidence.TypeInt, Description: "region.startLine; -1 when absent"},
		{Name: "start_column", Type: evidence.TypeInt, Description: "region.startColumn; -1 when absent"},
		{Name: "end_line", Type: evidence.TypeInt, Description: "region.endLine; -1 when absent"},
		{Name: "end_column", Type: evidence.TypeInt, Description: "region.endColumn; -1 when absent"},
	}
}
