// Package coverage is the coverage-files projection behind
// summarize_coverage: per-file coverage.py rows, filtered by path, then
// ranked (most missing lines first by default) and bounded. Its summary
// carries the report's native totals unchanged, next to derived totals of
// the selected files. A table with statement data (Caps.Statements: a
// report) ranks; one without (a data file) adds its data_* metrics.
//
// It imports projection, pathglob, table, formats (capabilities), param
// and evidence.
package coverage

import (
	"fmt"
	"slices"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/projection/pathglob"
	"github.com/flameox/flameox/internal/table"
)

// Name is the projection's name.
const Name = "coverage-files"

// Rankings. The first three need statement data, which only a report has
// (a format with the Statements capability).
const (
	ByMissingLines    = "missing_lines"
	ByPercentCovered  = "percent_covered"
	ByMissingBranches = "missing_branches"
	ByExecutedLines   = "executed_lines"
	ByFile            = "file"
)

// NeedsStatements reports whether a ranking needs statement data.
func NeedsStatements(rank string) bool {
	return rank == ByMissingLines || rank == ByPercentCovered || rank == ByMissingBranches
}

// Spec is the projection.
var Spec = &projection.Spec{
	Name:   Name,
	Tables: []*table.Schema{table.CoverageFiles.Schema},
	Params: []param.Param{
		{Name: "rank_by", Type: param.Enum, Enum: []string{ByMissingLines, ByPercentCovered, ByMissingBranches, ByExecutedLines, ByFile},
			Doc: "ranking: missing_lines (most first), percent_covered (lowest first), missing_branches (most first), executed_lines (most first) or file (by path); default missing_lines for a JSON report, executed_lines for a data file alone"},
		{Name: "include", Type: param.StringList, Doc: "keep files whose recorded path matches one of these globs (`**` spans directories; a directory matches everything below it)"},
		{Name: "exclude", Type: param.StringList, Doc: "drop files whose recorded path matches one of these globs"},
		{Name: "top", Type: param.Int, Default: int64(50), Min: param.F(1), Max: param.F(100000), Doc: "rows to keep after ranking"},
	},
	New: New,
}

// item is a selected file: a copy of its row (decoders may reuse theirs),
// its artifact and its ranking key.
type item struct {
	row      table.CoverageFile
	artifact string
	key      float64 // ranking key, larger first (negated where lowest first)
	null     bool    // the ranking column is null: ranks last
}

func before(a, b item) bool {
	if a.null != b.null {
		return !a.null
	}
	if a.key != b.key {
		return a.key > b.key
	}
	return a.row.File < b.row.File
}

// selected is what the projection keeps of an admitted table: its
// selected rows, ranked at Finish once it is known which table ranks, and
// the sums of their totals.
type selected struct {
	rows []item
	sums map[string]int64
}

// summed are the integer columns whose selected sums the summary reports.
var summed = []struct {
	name, unit string
	get        func(*table.CoverageFile) table.Null[int64]
}{
	{"statements", "lines", func(f *table.CoverageFile) table.Null[int64] { return f.Statements }},
	{"executed_lines", "lines", func(f *table.CoverageFile) table.Null[int64] { return f.ExecutedLines }},
	{"missing_lines", "lines", func(f *table.CoverageFile) table.Null[int64] { return f.MissingLines }},
	{"excluded_lines", "lines", func(f *table.CoverageFile) table.Null[int64] { return f.ExcludedLines }},
	{"num_branches", "", func(f *table.CoverageFile) table.Null[int64] { return f.NumBranches }},
	{"covered_branches", "", func(f *table.CoverageFile) table.Null[int64] { return f.CoveredBranches }},
	{"partial_branches", "", func(f *table.CoverageFile) table.Null[int64] { return f.PartialBranches }},
	{"missing_branches", "", func(f *table.CoverageFile) table.Null[int64] { return f.MissingBranches }},
}

type projector struct {
	// The admitted tables; Summary is theirs.
	projection.Inputs[*selected]

	args  evidence.Object
	given map[string]bool
	rank  string
	n     int
	set   *pathglob.Set
}

// New starts the projection.
func New(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	p := &projector{Inputs: projection.NewInputs[*selected](table.CoverageFiles.Schema), args: args, given: given}
	p.rank, _ = args["rank_by"].(string)
	inc, _ := args["include"].([]string)
	exc, _ := args["exclude"].([]string)
	set, err := pathglob.CompileSet(inc, exc)
	if err != nil {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: err.Error(), Location: evidence.Location{Field: "include"}}
	}
	p.set = set
	top, _ := evidence.AsInt(args["top"])
	p.n = int(top)
	return p, nil
}

// report returns the admitted table with statement data (a report), or
// without (a data file).
func (p *projector) report(statements bool) *projection.Input[*selected] {
	for _, x := range p.List() {
		if x.Caps.Statements == statements {
			return x
		}
	}
	return nil
}

// Table admits at most one report and one data file: a report ranks, a
// data file beside it adds its metrics.
func (p *projector) Table(t *evidence.Table, caps formats.Caps) error {
	if err := p.Check(t); err != nil {
		return err
	}
	if prev := p.report(caps.Statements); prev != nil {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("coverage files rank from one %s artifact at a time; got tables %s and %s", t.Format, prev.Table.ID, t.ID)}
	}
	_, err := p.Admit(t, caps, &selected{sums: map[string]int64{}})
	return err
}

// effectiveRank is the requested ranking, or the default for the tables
// admitted. An explicit ranking that needs statements was rejected before
// anything ran (see Check); a data-file table alone cannot satisfy it.
func (p *projector) effectiveRank() (string, error) {
	hasReport := p.report(true) != nil
	if p.rank == "" {
		if hasReport || len(p.List()) == 0 {
			return ByMissingLines, nil
		}
		return ByExecutedLines, nil
	}
	if NeedsStatements(p.rank) && !hasReport && len(p.List()) > 0 {
		return "", &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  fmt.Sprintf("rank_by=%s needs statement data, which only a coverage json report has; decode the report, or rank by executed_lines or file", p.rank),
			Location: evidence.Location{Field: "rank_by"}}
	}
	return p.rank, nil
}

func (p *projector) Row(t *evidence.Table, row any) error {
	f, x, artifact, err := projection.Read(&p.Inputs, table.CoverageFiles, t, row)
	if err != nil {
		return err
	}
	if !p.set.Selects(f.File) {
		return nil
	}
	for _, c := range summed {
		if n := c.get(f); n.Valid {
			x.State.sums[c.name] += n.V
		}
	}
	x.State.rows = append(x.State.rows, item{row: *f, artifact: artifact})
	return nil
}

// keyOf computes an item's ranking key.
func keyOf(rank string, f *table.CoverageFile) (float64, bool) {
	var n table.Null[int64]
	switch rank {
	case ByFile:
		return 0, false
	case ByPercentCovered:
		return -f.PercentCovered.V, !f.PercentCovered.Valid
	case ByMissingLines:
		n = f.MissingLines
	case ByMissingBranches:
		n = f.MissingBranches
	case ByExecutedLines:
		n = f.ExecutedLines
	}
	return float64(n.V), !n.Valid
}

func (p *projector) Finish(w projection.Emitter) error {
	rank, err := p.effectiveRank()
	if err != nil {
		return err
	}
	ranked, other := p.report(true), p.report(false)
	if ranked == nil {
		ranked, other = other, nil
	}
	h := p.Header(table.CoverageRankedFiles.Schema, "", evidence.Observed, p.args)
	h.Arguments["rank_by"] = rank
	if ranked != nil {
		// The ranked table names the result; a data file beside it follows.
		h.Format, h.Decoder = ranked.Table.Format, ranked.Table.Decoder
		if other != nil {
			h.ArtifactIDs = append(slices.Clone(ranked.Table.ArtifactIDs), other.Table.ArtifactIDs...)
		}
	}
	res, err := projection.Begin(w, h)
	if err != nil {
		return err
	}
	if ranked == nil {
		return res.End(p.Summarize(0, nil))
	}
	top := projection.NewTopN(p.n, before)
	for _, it := range ranked.State.rows {
		it.key, it.null = keyOf(rank, &it.row)
		top.Add(it)
	}
	for _, it := range top.Sorted() {
		if err := res.Row(&it.row, it.artifact); err != nil {
			return err
		}
	}
	s := p.Summarize(top.Observed(), top.Truncation())
	s.Coverage["ranked_format"], s.Coverage["rank_by"] = ranked.Table.Format, rank
	// Native totals pass through unchanged from the decoders' summaries.
	for _, in := range []*projection.Input[*selected]{ranked, other} {
		if in == nil || in.Summary == nil {
			continue
		}
		prefix := ""
		if in != ranked {
			prefix = "data_"
		}
		for k, m := range in.Summary.Metrics {
			s.Metrics[prefix+k] = m
		}
		for k, v := range in.Summary.Coverage {
			s.Coverage[prefix+k] = v
		}
	}
	if other != nil {
		s.Limit(fmt.Sprintf("rows are ranked from the report with statement data (%s); the data file (%s) contributes only its data_* metrics", ranked.Table.ID, other.Table.ID))
	}
	if !p.set.Empty() {
		sums := ranked.State.sums
		for _, c := range summed {
			if v, ok := sums[c.name]; ok && (ranked.Caps.Statements || c.name == "executed_lines") {
				s.Metrics["selected_"+c.name] = evidence.Metric{Value: v, Unit: c.unit}
			}
		}
		if ranked.Caps.Statements {
			num := sums["executed_lines"] + sums["covered_branches"]
			den := sums["statements"] + sums["num_branches"]
			pc := 100.0
			if den > 0 {
				pc = 100 * float64(num) / float64(den)
			}
			s.Metrics["selected_percent_covered"] = evidence.Metric{Value: pc, Unit: "percent"}
		}
		s.Limit("total_* metrics are the native totals of the whole report; selected_* metrics are derived from the files the path filters selected")
	}
	if rank == ByMissingBranches && ranked.Summary != nil && ranked.Summary.Coverage["branch_coverage"] == false {
		s.Limit("rank_by=missing_branches on a report without branch data: every row's key is null, so rows are in path order")
	}
	return res.End(s)
}
