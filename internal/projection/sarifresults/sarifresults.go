// Package sarifresults is the sarif-results projection behind
// inspect_static_candidates: it filters decoded SARIF results by level,
// rule and path (normalized against each table's source root), then ranks
// the selected population by severity and location and keeps the top rows
// as sarif.candidates.
//
// It imports projection, pathglob, table, formats (capabilities), param
// and evidence.
package sarifresults

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/projection/pathglob"
	"github.com/flameox/flameox/internal/table"
)

// Name is the projection's name.
const Name = "sarif-results"

var levels = []string{"error", "warning", "note", "none"}

// Spec is the projection.
var Spec = &projection.Spec{
	Name:   Name,
	Tables: []*table.Schema{table.SARIFResults.Schema},
	Params: []param.Param{
		{Name: "levels", Type: param.StringList, Doc: "keep results of these levels (error, warning, note, none); default: all"},
		{Name: "rules", Type: param.StringList, Doc: "keep results whose rule_id is one of these; default: all"},
		{Name: "include", Type: param.StringList, Doc: "keep results whose path matches one of these globs (relative to the source root, or absolute inside it); results without an accepted path never match"},
		{Name: "exclude", Type: param.StringList, Doc: "drop results whose path matches one of these globs"},
		{Name: "top", Type: param.Int, Default: int64(50), Min: param.F(1), Max: param.F(10000), Doc: "rows to keep after ranking"},
	},
	New: New,
}

// severity ranks levels: error first.
func severity(level string) int {
	switch level {
	case "error":
		return 0
	case "warning":
		return 1
	case "note":
		return 2
	}
	return 3
}

// item is a selected result: a copy of its row (decoders may reuse
// theirs), its artifact and its severity.
type item struct {
	row      table.SARIFResult
	artifact string
	sev      int
}

// before ranks by severity, then location (results without an accepted
// path after those with one), then native coordinates: a strict total order.
func before(a, b item) bool {
	x, y := &a.row, &b.row
	if a.sev != b.sev {
		return a.sev < b.sev
	}
	if x.Path.Valid != y.Path.Valid {
		return x.Path.Valid
	}
	if x.Path.V != y.Path.V {
		return x.Path.V < y.Path.V
	}
	if x.StartLine != y.StartLine {
		return x.StartLine < y.StartLine
	}
	if x.StartColumn != y.StartColumn {
		return x.StartColumn < y.StartColumn
	}
	if a.artifact != b.artifact {
		return a.artifact < b.artifact
	}
	if x.RunIndex != y.RunIndex {
		return x.RunIndex < y.RunIndex
	}
	return x.ResultIndex < y.ResultIndex
}

// scope is a table's source root and the path filters resolved against it.
type scope struct {
	root string
	set  *pathglob.Set
}

type projector struct {
	// The admitted tables; Summary is theirs.
	projection.Inputs[scope]

	args      evidence.Object
	levels    []string
	rules     []string
	include   []string
	exclude   []string
	top       *projection.TopN[item]
	read      int64
	unlocated int64
	selected  map[string]int64
}

// New starts the projection.
func New(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	p := &projector{Inputs: projection.NewInputs[scope](table.SARIFResults.Schema), args: args, selected: map[string]int64{}}
	p.levels, _ = args["levels"].([]string)
	for _, l := range p.levels {
		if !slices.Contains(levels, l) {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: fmt.Sprintf("levels: %q is not one of %v", l, levels), Location: evidence.Location{Field: "levels"}}
		}
	}
	p.rules, _ = args["rules"].([]string)
	p.include, _ = args["include"].([]string)
	p.exclude, _ = args["exclude"].([]string)
	// Syntax is checked now; roots are known only from table headers.
	if _, err := pathglob.CompileSet(p.include, p.exclude); err != nil {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: err.Error(), Location: evidence.Location{Field: "include"}}
	}
	top, _ := evidence.AsInt(args["top"])
	p.top = projection.NewTopN(int(top), before)
	return p, nil
}

// sourceRoot reads the resolved source root the decoder wrote into the
// table's arguments.
func sourceRoot(t *evidence.Table) (string, error) {
	opts, _ := t.Arguments["options"].(evidence.Object)
	root, _ := opts["source_root"].(string)
	if root == "" || !filepath.IsAbs(root) {
		return "", &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("table %s does not record its resolved source_root; decode the SARIF log again with this flameox", t.ID)}
	}
	return filepath.Clean(root), nil
}

func (p *projector) Table(t *evidence.Table, caps formats.Caps) error {
	if err := p.Check(t); err != nil {
		return err
	}
	root, err := sourceRoot(t)
	if err != nil {
		return err
	}
	norm := func(ps []string, field string) ([]string, error) {
		var out []string
		for _, x := range ps {
			n, err := pathglob.UnderRoot(root, x)
			if err != nil {
				return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: field + ": " + err.Error(), Location: evidence.Location{Field: field}}
			}
			out = append(out, n)
		}
		return out, nil
	}
	inc, err := norm(p.include, "include")
	if err != nil {
		return err
	}
	exc, err := norm(p.exclude, "exclude")
	if err != nil {
		return err
	}
	set, err := pathglob.CompileSet(inc, exc)
	if err != nil {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: err.Error()}
	}
	_, err = p.Admit(t, caps, scope{root: root, set: set})
	return err
}

func (p *projector) Row(t *evidence.Table, row any) error {
	r, x, artifact, err := projection.Read(&p.Inputs, table.SARIFResults, t, row)
	if err != nil {
		return err
	}
	p.read++
	if len(p.levels) > 0 && !slices.Contains(p.levels, r.Level) {
		return nil
	}
	if len(p.rules) > 0 && !slices.Contains(p.rules, r.RuleID.V) {
		return nil
	}
	if set := x.State.set; !set.Empty() {
		if !r.Path.Valid {
			// A rejected or absent location cannot be shown to match.
			if len(set.Include) > 0 {
				return nil
			}
		} else if !set.Selects(r.Path.V) {
			return nil
		}
	}
	if !r.Path.Valid {
		p.unlocated++
	}
	p.selected[r.Level]++
	p.top.Add(item{row: *r, artifact: artifact, sev: severity(r.Level)})
	return nil
}

func (p *projector) Finish(w projection.Emitter) error {
	var roots []string
	for _, x := range p.List() {
		if !slices.Contains(roots, x.State.root) {
			roots = append(roots, x.State.root)
		}
	}
	sort.Strings(roots)
	h := p.Header(table.SARIFCandidates.Schema, "", evidence.Observed, p.args)
	h.Arguments["source_roots"] = roots
	res, err := projection.Begin(w, h)
	if err != nil {
		return err
	}
	for _, it := range p.top.Sorted() {
		if err := res.Row(&it.row, it.artifact); err != nil {
			return err
		}
	}
	s := p.Summarize(p.top.Observed(), p.top.Truncation())
	s.Coverage["results_read"] = p.read
	s.Metrics["results_read"] = evidence.Metric{Value: p.read, Unit: "results"}
	s.Metrics["results_selected"] = evidence.Metric{Value: p.top.Observed(), Unit: "results"}
	s.Metrics["selected_unlocated"] = evidence.Metric{Value: p.unlocated, Unit: "results"}
	for _, l := range levels {
		s.Metrics["selected_level_"+l] = evidence.Metric{Value: p.selected[l], Unit: "results"}
	}
	if p.unlocated > 0 && len(p.include) == 0 {
		s.Limit(fmt.Sprintf("%d selected results have no accepted location (absent or rejected); path filters cannot apply to them", p.unlocated))
	}
	return res.End(s)
}
