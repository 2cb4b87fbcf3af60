package table

// SARIFResult is a row of sarif.results: one native SARIF result.
type SARIFResult struct {
	RunIndex         int64        `col:"run_index" doc:"index of the run in runs[]"`
	ResultIndex      int64        `col:"result_index" doc:"index of the result in runs[run_index].results[]"`
	Tool             Null[string] `col:"tool" doc:"tool.driver.name; null when absent"`
	RuleID           Null[string] `col:"rule_id" doc:"ruleId, rule.id, or the id of the rule that ruleIndex resolves to; null when none"`
	RuleIndex        int64        `col:"rule_index" doc:"native rule index (ruleIndex or rule.index); -1 when absent"`
	Level            string       `col:"level" doc:"error, warning, note or none, after SARIF's defaults (kind, rule defaultConfiguration, then warning)"`
	LevelSource      string       `col:"level_source" doc:"where level came from: result, kind, rule_default or sarif_default"`
	Kind             string       `col:"kind" doc:"result kind; fail when absent"`
	Message          Null[string] `col:"message" doc:"message text (from text, or messageStrings with arguments), at most 1024 bytes; null when the result has none"`
	MessageTruncated bool         `col:"message_truncated" doc:"the message was longer than 1024 bytes and was cut"`
	URI              Null[string] `col:"uri" doc:"primary location URI as written (or from run.artifacts); null when absent"`
	URIBaseID        Null[string] `col:"uri_base_id" doc:"uriBaseId as written; null when absent"`
	Path             Null[string] `col:"path" doc:"location relative to the source root, slash-separated; null unless location_status is ok"`
	LocationStatus   string       `col:"location_status" doc:"ok, absent, or the typed reason the location was rejected"`
	StartLine        int64        `col:"start_line,base=1" doc:"region.startLine, 1-based; -1 when absent"`
	StartColumn      int64        `col:"start_column,base=1" doc:"region.startColumn, 1-based; -1 when absent"`
	EndLine          int64        `col:"end_line,base=1" doc:"region.endLine, 1-based; -1 when absent"`
	EndColumn        int64        `col:"end_column,base=1" doc:"region.endColumn, 1-based; -1 when absent"`
}

// SARIFResults is the sarif.results schema.
var SARIFResults = Define[SARIFResult]("sarif.results", "one row per native SARIF result", FromArtifact)
