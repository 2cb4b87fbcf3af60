// Package coverage is the coverage-files projection behind
// summarize_coverage: per-file coverage.py rows, filtered by path, then
// ranked (most missing lines first by default) and bounded. Its summary
// carries the report's native totals unchanged, next to derived totals of
// the selected files.
package coverage

import (
	"fmt"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/projection/pathglob"
	"github.com/flameox/flameox/internal/table"
)

// Name is the projection's name.
const Name = "coverage-files"

// Format names, as the registry spells them.
const (
	FormatJSON   = "coverage-json"
	FormatSQLite = "coverage-sqlite"
)

// Rankings. The first three need statement data, which only the JSON
// report has.
const (
	ByMissingLines    = "missing_lines"
	ByPercentCovered  = "percent_covered"
	ByMissingBranches = "missing_branches"
	ByExecutedLines   = "executed_lines"
	ByFile            = "file"
)

// NeedsStatements reports whether a ranking needs the JSON report.
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

type item struct {
	file   string
	key    float64 // ranking key, larger first (negated where lowest first)
	null   bool    // the ranking column is null: ranks last
	values evidence.Object
}

func before(a, b item) bool {
	if a.null != b.null {
		return !a.null
	}
	if a.key != b.key {
		return a.key > b.key
	}
	return a.file < b.file
}

type input struct {
	t       *evidence.Table
	summary *evidence.Summary
	rows    []item // selected rows; ranked at Finish, when the formats are known
	sums    map[string]int64
}

type projector struct {
	args   evidence.Object
	given  map[string]bool
	rank   string
	n      int
	set    *pathglob.Set
	inputs map[string]*input // by format
	byID   map[string]*input
}

// New starts the projection.
func New(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	p := &projector{args: args, given: given, inputs: map[string]*input{}, byID: map[string]*input{}}
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

func (p *projector) Table(t *evidence.Table, _ formats.Caps) error {
	if t.Name != table.CoverageFiles.Name {
		return nil
	}
	if t.Format != FormatJSON && t.Format != FormatSQLite {
		return &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
			Message: fmt.Sprintf("summarize_coverage reads coverage-json and coverage-sqlite tables, not %q", t.Format)}
	}
	if prev, ok := p.inputs[t.Format]; ok {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("summarize_coverage ranks one %s artifact at a time; got tables %s and %s", t.Format, prev.t.ID, t.ID)}
	}
	in := &input{t: t, sums: map[string]int64{}}
	p.inputs[t.Format] = in
	p.byID[t.ID] = in
	return nil
}

// effectiveRank is the requested ranking, or the default for the formats
// admitted. An explicit ranking that needs statements was rejected before
// anything ran (see Check); a data-file table alone cannot satisfy it.
func (p *projector) effectiveRank() (string, error) {
	_, hasJSON := p.inputs[FormatJSON]
	if p.rank == "" {
		if hasJSON || len(p.inputs) == 0 {
			return ByMissingLines, nil
		}
		return ByExecutedLines, nil
	}
	if NeedsStatements(p.rank) && !hasJSON && len(p.inputs) > 0 {
		return "", &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  fmt.Sprintf("rank_by=%s needs statement data, which only a coverage json report has; decode the report, or rank by executed_lines or file", p.rank),
			Location: evidence.Location{Field: "rank_by"}}
	}
	return p.rank, nil
}

func (p *projector) Row(t *evidence.Table, row any) error {
	v, err := projection.Values(t, row)
	if err != nil {
		return err
	}
	in, ok := p.byID[t.ID]
	if !ok {
		return nil
	}
	file, _ := v["file"].(string)
	if !p.set.Selects(file) {
		return nil
	}
	for _, k := range []string{"statements", "executed_lines", "missing_lines", "excluded_lines", "num_branches", "covered_branches", "partial_branches", "missing_branches"} {
		if n, ok := evidence.AsInt(v[k]); ok {
			in.sums[k] += n
		}
	}
	in.rows = append(in.rows, item{file: file, values: v})
	return nil
}

func (p *projector) Summary(t *evidence.Table, s *evidence.Summary) error {
	if in, ok := p.byID[t.ID]; ok {
		in.summary = s
	}
	return nil
}

// keyOf computes an item's ranking key.
func keyOf(rank string, v evidence.Object) (float64, bool) {
	switch rank {
	case ByFile:
		return 0, false
	case ByPercentCovered:
		f, ok := evidence.AsFloat(v["percent_covered"])
		return -f, !ok
	}
	n, ok := evidence.AsInt(v[rank])
	return float64(n), !ok
}

func (p *projector) Finish(w projection.Emitter) error {
	rank, err := p.effectiveRank()
	if err != nil {
		return err
	}
	ranked := p.inputs[FormatJSON]
	if ranked == nil {
		ranked = p.inputs[FormatSQLite]
	}
	args := evidence.Object{}
	for k, v := range p.args {
		args[k] = v
	}
	args["rank_by"] = rank
	t := &evidence.Table{Name: table.CoverageFiles.Name, Projection: Name,
		Columns: table.CoverageFiles.EvidenceColumns(""), Evidence: evidence.Observed, Arguments: args}
	for _, f := range []string{FormatJSON, FormatSQLite} {
		if in := p.inputs[f]; in != nil {
			t.ArtifactIDs = append(t.ArtifactIDs, in.t.ArtifactIDs...)
		}
	}
	if ranked != nil {
		t.Format = ranked.t.Format
		t.Decoder = ranked.t.Decoder
	}
	if err := w.Begin(t); err != nil {
		return err
	}
	s := &evidence.Summary{Metrics: map[string]evidence.Metric{}}
	if ranked == nil {
		s.Limit("no coverage.files table was read: nothing was ranked")
		return w.End(s)
	}
	top := projection.NewTopN(p.n, before)
	for _, it := range ranked.rows {
		it.key, it.null = keyOf(rank, it.values)
		top.Add(it)
	}
	for _, it := range top.Sorted() {
		if err := w.Row(it.values); err != nil {
			return err
		}
	}
	s.RowsObserved = top.Observed()
	s.Truncation = top.Truncation("row_limit")
	s.Complete = s.Truncation == nil && ranked.summary != nil && ranked.summary.Complete
	s.Coverage = evidence.Object{"ranked_format": ranked.t.Format, "rank_by": rank}
	if ranked.summary == nil {
		s.Limit("the coverage table ended without its summary: its totals are unknown")
	}
	// Native totals pass through unchanged from the decoder's summary.
	for _, in := range []*input{p.inputs[FormatJSON], p.inputs[FormatSQLite]} {
		if in == nil || in.summary == nil {
			continue
		}
		prefix := ""
		if in != ranked {
			prefix = "data_"
		}
		for k, m := range in.summary.Metrics {
			s.Metrics[prefix+k] = m
		}
		if !in.summary.Complete {
			s.Complete = false
			s.Limit(fmt.Sprintf("input table %s is incomplete", in.t.ID))
		}
		for _, l := range in.summary.Limitations {
			s.Limit(l)
		}
		for k, v := range in.summary.Coverage {
			s.Coverage[prefix+k] = v
		}
	}
	if other := p.inputs[FormatSQLite]; other != nil && other != ranked {
		s.Limit(fmt.Sprintf("rows are ranked from the coverage json report; the data file (%s) contributes only its data_* metrics", other.t.ID))
	}
	if !p.set.Empty() {
		units := map[string]string{"statements": "lines", "executed_lines": "lines", "missing_lines": "lines", "excluded_lines": "lines"}
		for k, v := range ranked.sums {
			if ranked.t.Format == FormatSQLite && k != "executed_lines" {
				continue
			}
			s.Metrics["selected_"+k] = evidence.Metric{Value: v, Unit: units[k]}
		}
		if ranked.t.Format == FormatJSON {
			num := ranked.sums["executed_lines"] + ranked.sums["covered_branches"]
			den := ranked.sums["statements"] + ranked.sums["num_branches"]
			pc := 100.0
			if den > 0 {
				pc = 100 * float64(num) / float64(den)
			}
			s.Metrics["selected_percent_covered"] = evidence.Metric{Value: pc, Unit: "percent"}
		}
		s.Limit("total_* metrics are the native totals of the whole report; selected_* metrics are derived from the files the path filters selected")
	}
	if rank == ByMissingBranches && ranked.summary != nil && ranked.summary.Coverage["branch_coverage"] == false {
		s.Limit("rank_by=missing_branches on a report without branch data: every row's key is null, so rows are in path order")
	}
	return w.End(s)
}
