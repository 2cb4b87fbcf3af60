// Package sarifresults is the sarif-results projection behind
// inspect_static_candidates: it filters decoded SARIF results by level,
// rule and path (normalized against each table's source root), then ranks
// the selected population by severity and location and keeps the top rows.
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

type item struct {
	sev      int
	artifact string
	path     string // "" sorts last
	hasPath  bool
	line     int64
	col      int64
	run, idx int64
	values   evidence.Object
}

// before ranks by severity, then location (results without an accepted
// path after those with one), then native coordinates: a strict total order.
func before(a, b item) bool {
	if a.sev != b.sev {
		return a.sev < b.sev
	}
	if a.hasPath != b.hasPath {
		return a.hasPath
	}
	if a.path != b.path {
		return a.path < b.path
	}
	if a.line != b.line {
		return a.line < b.line
	}
	if a.col != b.col {
		return a.col < b.col
	}
	if a.artifact != b.artifact {
		return a.artifact < b.artifact
	}
	if a.run != b.run {
		return a.run < b.run
	}
	return a.idx < b.idx
}

type admitted struct {
	t    *evidence.Table
	root string
	set  *pathglob.Set
}

type projector struct {
	args       evidence.Object
	levels     []string
	rules      []string
	include    []string
	exclude    []string
	top        *projection.TopN[item]
	tables     map[string]*admitted
	order      []string
	incomplete []string
	limits     []string // input tables' limitations, carried through
	read       int64
	unlocated  int64
	selected   map[string]int64
	header     *evidence.Table
}

// New starts the projection.
func New(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	p := &projector{args: args, tables: map[string]*admitted{}, selected: map[string]int64{}}
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

func (p *projector) Table(t *evidence.Table, _ formats.Caps) error {
	if t.Name != table.SARIFResults.Name {
		return nil
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
	p.tables[t.ID] = &admitted{t: t, root: root, set: set}
	p.order = append(p.order, t.ID)
	if p.header == nil {
		p.header = t
	}
	return nil
}

func (p *projector) Row(t *evidence.Table, row any) error {
	v, err := projection.Values(t, row)
	if err != nil {
		return err
	}
	a, ok := p.tables[t.ID]
	if !ok {
		return nil
	}
	p.read++
	level, _ := v["level"].(string)
	if len(p.levels) > 0 && !slices.Contains(p.levels, level) {
		return nil
	}
	if len(p.rules) > 0 {
		rule, _ := v["rule_id"].(string)
		if !slices.Contains(p.rules, rule) {
			return nil
		}
	}
	path, hasPath := v["path"].(string)
	if !a.set.Empty() {
		if !hasPath {
			// A rejected or absent location cannot be shown to match.
			if len(a.set.Include) > 0 {
				return nil
			}
		} else if !a.set.Selects(path) {
			return nil
		}
	}
	if !hasPath {
		p.unlocated++
	}
	p.selected[level]++
	it := item{sev: severity(level), path: path, hasPath: hasPath, values: v}
	it.artifact, _ = v["artifact_id"].(string)
	it.line, _ = evidence.AsInt(v["start_line"])
	it.col, _ = evidence.AsInt(v["start_column"])
	it.run, _ = evidence.AsInt(v["run_index"])
	it.idx, _ = evidence.AsInt(v["result_index"])
	p.top.Add(it)
	return nil
}

func (p *projector) Summary(t *evidence.Table, s *evidence.Summary) error {
	if _, ok := p.tables[t.ID]; !ok {
		return nil
	}
	if !s.Complete {
		p.incomplete = append(p.incomplete, t.ID)
	}
	for _, l := range s.Limitations {
		p.limits = append(p.limits, t.ID+": "+l)
	}
	return nil
}

func (p *projector) Finish(w projection.Emitter) error {
	var ids, roots []string
	for _, id := range p.order {
		a := p.tables[id]
		for _, art := range a.t.ArtifactIDs {
			if !slices.Contains(ids, art) {
				ids = append(ids, art)
			}
		}
		if !slices.Contains(roots, a.root) {
			roots = append(roots, a.root)
		}
	}
	sort.Strings(roots)
	args := evidence.Object{}
	for k, v := range p.args {
		args[k] = v
	}
	args["source_roots"] = roots
	t := &evidence.Table{Name: table.SARIFResults.Name, Projection: Name,
		Format: "sarif", Columns: table.SARIFResults.EvidenceColumns(""), Evidence: evidence.Observed,
		ArtifactIDs: ids, Arguments: args}
	if p.header != nil {
		t.Decoder = p.header.Decoder
	}
	if err := w.Begin(t); err != nil {
		return err
	}
	for _, it := range p.top.Sorted() {
		if err := w.Row(it.values); err != nil {
			return err
		}
	}
	s := &evidence.Summary{RowsObserved: p.top.Observed(), Truncation: p.top.Truncation("row_limit")}
	s.Complete = len(p.incomplete) == 0 && s.Truncation == nil && len(p.order) > 0
	s.Coverage = evidence.Object{"tables": int64(len(p.order)), "results_read": p.read}
	s.Metrics = map[string]evidence.Metric{
		"results_read":       {Value: p.read, Unit: "results"},
		"results_selected":   {Value: p.top.Observed(), Unit: "results"},
		"selected_unlocated": {Value: p.unlocated, Unit: "results"},
	}
	for _, l := range levels {
		s.Metrics["selected_level_"+l] = evidence.Metric{Value: p.selected[l], Unit: "results"}
	}
	if len(p.order) == 0 {
		s.Limit("no sarif.results table was read: nothing was selected, which is not evidence of no findings")
	}
	for _, id := range p.incomplete {
		s.Limit(fmt.Sprintf("input table %s is incomplete, so this selection may miss results", id))
	}
	for _, l := range p.limits {
		s.Limit(l)
	}
	if p.unlocated > 0 && len(p.include) == 0 {
		s.Limit(fmt.Sprintf("%d selected results have no accepted location (absent or rejected); path filters cannot apply to them", p.unlocated))
	}
	return w.End(s)
}
