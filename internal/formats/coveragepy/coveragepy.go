// Package coveragepy decodes coverage.py's outputs into coverage.files
// rows: the `coverage json` report (every layout coverage.py 5.0 to 7.x
// writes, streamed) here, and the
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
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
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
	Title:    "coverage.py JSON report (coverage.py 5.0 to 7.x)",
	Suffixes: []string{".coverage.json"},
	Sniff:    SniffJSON,
	Limits: []formats.Limit{
		{Name: LimitFiles, Default: 200_000, Unit: "files", Doc: "files in the report"},
		{Name: LimitContexts, Default: 1_000_000, Unit: "contexts", Doc: "distinct context names in one file"},
		{Name: formats.LimitToken, Default: 16 << 20, Unit: "bytes", Doc: "longest single JSON string or number"},
	},
	Caps:     formats.Caps{Statements: true},
	Producer: "coverage.py 5.0 to 7.x `coverage json`",
	Version:  "1",
	Decoder:  jsonDecoder{},
})

// SniffJSON says Yes for a JSON object whose first member is coverage.py's
// meta block: an object holding version (a string), branch_coverage and
// show_contexts (booleans). Every release since 5.0 writes these keys;
// meta.format exists only since 7.4, so it is not required.
func SniffJSON(prefix []byte) formats.Verdict {
	return formats.SniffObject(prefix, false, func(p []byte) formats.Verdict {
		s := jsonscan.NewBytes(p)
		if tok, err := s.Next(); err != nil || tok.Kind != jsonscan.ObjectStart {
			return formats.No
		}
		k, err := s.Next()
		if err != nil {
			return formats.NeedMore
		}
		if k.Kind != jsonscan.String || string(k.Bytes) != "meta" {
			return formats.No
		}
		if tok, err := s.Next(); err != nil {
			return formats.NeedMore
		} else if tok.Kind != jsonscan.ObjectStart {
			return formats.No
		}
		var version, branch, contexts bool
		for {
			k, err := s.Next()
			if err != nil {
				return formats.NeedMore
			}
			if k.Kind == jsonscan.ObjectEnd {
				break
			}
			v, err := s.Next()
			if err != nil {
				return formats.NeedMore
			}
			switch string(k.Bytes) {
			case "version":
				version = v.Kind == jsonscan.String
			case "branch_coverage":
				branch = v.Kind == jsonscan.True || v.Kind == jsonscan.False
			case "show_contexts":
				contexts = v.Kind == jsonscan.True || v.Kind == jsonscan.False
			default:
				if err := s.Skip(v); err != nil {
					return formats.NeedMore
				}
			}
		}
		if version && branch && contexts {
			return formats.Yes
		}
		return formats.No
	})
}
