package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/projection/coverage"
)

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
