package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/projection/coverage"
	"github.com/flameox/flameox/internal/projection/sarifresults"
)

var summarizeCoverage = &Operation{
	Name:       coverage.Operation,
	Title:      "Rank files by coverage.py coverage",
	Family:     "Reliability",
	Projection: coverage.Spec,
	Guidance: "Use to find which Python files (and lines) a workload or test suite leaves unexecuted. " +
		"Give it the `coverage json` report for statements, missing lines, branches and coverage.py's own totals; " +
		"a `.coverage` data file alone says only which lines and arcs executed. Path filters apply before ranking and the row bound.",
	Examples: []Example{
		{Title: "Files with the most missing lines", Args: evidence.Object{"rank_by": "missing_lines", "top": 20}},
		{Title: "Lowest coverage under src/, tests excluded", Args: evidence.Object{"rank_by": "percent_covered", "include": []any{"src"}, "exclude": []any{"**/test_*.py"}}},
	},
	Overhead: "coverage.py's tracer slows Python code; with branch=true more",
	Limitations: []string{
		"a .coverage data file records executed lines and arcs, not statements: statement, missing, branch and percent columns come only from the JSON report",
		"only the process that coverage run starts is measured unless the workload configures coverage.py for subprocesses",
	},
	Check: checkCoverage,
}

// checkCoverage rejects an explicit ranking that needs statement data when
// no JSON report is among the inputs, before anything runs.
func checkCoverage(specs []*formats.Spec, given map[string]bool, args evidence.Object) error {
	rank, _ := args["rank_by"].(string)
	if !given["rank_by"] || !coverage.NeedsStatements(rank) || len(specs) == 0 ||
		slices.ContainsFunc(specs, func(s *formats.Spec) bool { return s.Caps.Statements }) {
		return nil
	}
	var with []string
	for _, f := range Formats() {
		if f.Caps.Statements {
			with = append(with, f.Name)
		}
	}
	return &evidence.Failure{Code: evidence.CodeInvalidArgument,
		Message: fmt.Sprintf("rank_by=%s needs statement data, which only a coverage report has (%s); add the report, or omit rank_by to rank by executed lines",
			rank, strings.Join(with, ", ")),
		Location: evidence.Location{Field: "rank_by"}, Details: evidence.Object{"formats": formats.Names(specs)}}
}

var inspectStaticCandidates = &Operation{
	Name:       sarifresults.Operation,
	Title:      "Inspect static-analysis candidates (SARIF)",
	Family:     "Static candidates",
	Projection: sarifresults.Spec,
	Guidance: "Use to review findings of a static analyser that writes SARIF 2.1.0 (gosec, ESLint, CodeQL, Semgrep...). " +
		"Filter by level, rule and path, then read the highest-severity results first. Findings are candidates, not confirmed defects. " +
		"When the log was exported outside the source tree, decode it with the source_root option so paths normalize against the right directory.",
	Examples: []Example{
		{Title: "Errors only", Args: evidence.Object{"levels": []any{"error"}, "top": 20}},
		{Title: "One rule under a directory", Args: evidence.Object{"rules": []any{"G104"}, "include": []any{"internal"}}},
	},
	Limitations: []string{
		"SARIF results are candidates reported by the tool, not confirmed defects",
		"locations outside the source root, with .. segments, remote or non-file URIs, undefined uriBaseIds or symlinks out of the root are kept as rows with a typed location_status and no path",
	},
}
