// Package coveragepy decodes coverage.py's outputs into coverage.files
// rows: the `coverage json` report (format 3, streamed) here, and the
// native `.coverage` data file (SQLite, read directly and read-only) in
// subpackage datafile.
//
// The two are not interchangeable. The data file records what executed
// (lines, or arcs with --branch) per file and context; it does not record
// which lines are statements, because coverage.py derives those by parsing
// the source. So statement, missing, excluded, branch and percent columns
// are null for the data file and stated as a limitation; they come from the
// JSON report, whose totals are coverage.py's own.
//
// It imports formats, evidence, jsonscan and table.
package coveragepy

import (
	"bytes"

	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/table"
)

// Decoder identities. The data-file decoder is package datafile, kept
// apart so that this package (and its fuzz target) does not link SQLite.
const (
	FormatSQLite = "coverage-sqlite"
	FormatJSON   = "coverage-json"
)

// Limit names.
const (
	LimitFiles    = "max_files"
	LimitLines    = "max_line_number"
	LimitContexts = "max_contexts"
)

// Spec completes the spec of a coverage.py format: it is listed under
// FamilyReliability and emits coverage.files.
func Spec(s formats.Spec) *formats.Spec {
	s.Family, s.Tables = formats.FamilyReliability, []*table.Schema{table.CoverageFiles.Schema}
	return &s
}

// JSONSpec is the registry entry for `coverage json` reports.
var JSONSpec = Spec(formats.Spec{
	Name:     FormatJSON,
	Title:    "coverage.py JSON report (format 3)",
	Suffixes: []string{".coverage.json"},
	Sniff:    SniffJSON,
	Limits: []formats.Limit{
		{Name: LimitFiles, Default: 200_000, Unit: "files", Doc: "files in the report"},
		{Name: LimitContexts, Default: 1_000_000, Unit: "contexts", Doc: "distinct context names in one file"},
		{Name: formats.LimitToken, Default: 16 << 20, Unit: "bytes", Doc: "longest single JSON string or number"},
	},
	Caps:     formats.Caps{Statements: true},
	Producer: "coverage.py 7.x `coverage json`",
	Version:  "1",
	Decoder:  jsonDecoder{},
})

// SniffJSON says Yes for a JSON object whose meta block carries coverage.py's
// report keys.
func SniffJSON(prefix []byte) formats.Verdict {
	return formats.SniffObject(prefix, false, func(p []byte) formats.Verdict {
		if bytes.Contains(p, []byte(`"meta"`)) && bytes.Contains(p, []byte(`"format"`)) &&
			(bytes.Contains(p, []byte(`"branch_coverage"`)) || bytes.Contains(p, []byte(`"show_contexts"`))) {
			return formats.Yes
		}
		return formats.NeedMore
	})
}
