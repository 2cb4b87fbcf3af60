package cpu

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// Diff is the cpu-diff projection: it compares the cpu.frames of a
// baseline side with those of a new side, function by function.
var Diff = &projection.Spec{
	Name:     "cpu-diff",
	Tables:   []*table.Schema{table.CPUFrames.Schema},
	Compares: true,
	Params: append(slices.Clone(commonParams), projection.BaselineParam,
		param.Param{Name: "normalize", Type: param.Bool, Default: false,
			Doc: "scale the baseline's weights so its total equals the new total (pprof's -normalize): compares where time went, not how much there was"},
		param.Param{Name: "function_pattern", Type: param.String, Doc: "RE2 regular expression the function name must match"},
		param.Param{Name: "file_pattern", Type: param.String, Doc: "RE2 regular expression the file or URL must match"},
		param.Param{Name: "include_synthetic", Type: param.Bool, Default: true,
			Doc: "keep producer-made frames such as (program), (idle) and (garbage collector)"},
	),
	New: newDiff,
}

// funcKey is what pairs a function across profiles: frame ids are each
// profile's own, and lines move when code changes, so a function is its
// name, file and module (pprof's function granularity).
type funcKey struct {
	function     string
	file, module table.Null[string]
}

// sideWeights is one function's weights on one side, in the side's unit.
type sideWeights struct {
	self, incl float64
	present    bool
	// last is the series whose frame was added last: a second frame of
	// the function in the same series means its inclusive weights were
	// summed over frame identities.
	last seriesKey
}

type seriesKey struct {
	table           int
	thread, process table.Null[string]
}

type diffFunc struct {
	key  funcKey
	side [2]sideWeights
}

type diff struct {
	projection.Sides
	common
	sides [2]profiles
	byID  map[string]*profiles

	normalize bool
	fn, file  *regexp.Regexp
	synthetic bool
	args      evidence.Object

	funcs  map[funcKey]*diffFunc
	merged map[funcKey]bool // functions whose inclusive weight sums several frames of one series

	fnMiss, fileMiss *miss
}

func newDiff(args evidence.Object, _ map[string]bool) (projection.Projector, error) {
	re, err := compile(args, "function_pattern", "file_pattern")
	if err != nil {
		return nil, err
	}
	d := &diff{common: commonOf(args), fn: re[0], file: re[1], synthetic: true, args: args,
		byID: map[string]*profiles{}, funcs: map[funcKey]*diffFunc{}, merged: map[funcKey]bool{}}
	for i := range d.sides {
		d.sides[i] = newProfiles(table.CPUFrames.Schema, "self_weight", "inclusive_weight")
	}
	d.normalize, _ = args["normalize"].(bool)
	if b, ok := args["include_synthetic"].(bool); ok {
		d.synthetic = b
	}
	d.seriesFilters()
	d.fnMiss = d.filter("function_pattern", str(args, "function_pattern"), "function names")
	d.fileMiss = d.filter("file_pattern", str(args, "file_pattern"), "files")
	return d, nil
}

// Table admits a table to its side: one format and one weight dimension
// across both sides, so the weights compare.
func (d *diff) Table(t *evidence.Table, caps formats.Caps) error {
	side, err := d.Sides.Of(t)
	if err != nil {
		return err
	}
	for _, p := range d.sides {
		if f := p.Format(); len(p.List()) > 0 && f != t.Format {
			return &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: fmt.Sprintf("the sides of a comparison must be profiles of one format; got %s and %s: convert one side, or compare like with like", f, t.Format),
				Details: evidence.Object{"formats": []string{f, t.Format}}}
		}
		if p.unit != "" {
			c, _ := t.Column("self_weight")
			if _, err := unit.Common(p.unit, c.Unit); err != nil {
				return evidence.Wrap(evidence.CodeInvalidArgument, err, "table %s: its weights do not compare with the other side's", t.ID)
			}
		}
	}
	p := &d.sides[side]
	if err := p.Table(t, caps); err != nil {
		return err
	}
	d.byID[t.ID] = p
	return nil
}

func (d *diff) Summary(t *evidence.Table, s *evidence.Summary) error {
	p, ok := d.byID[t.ID]
	if !ok {
		return evidence.Failf(evidence.CodeInternal, "summary of a table that was not admitted: %s", t.ID)
	}
	return p.Summary(t, s)
}

func (d *diff) Row(t *evidence.Table, row any) error {
	p, ok := d.byID[t.ID]
	if !ok {
		return evidence.Failf(evidence.CodeInternal, "row of a table that was not admitted: %s", t.ID)
	}
	f, x, _, err := projection.Read(&p.Inputs, table.CPUFrames, t, row)
	if err != nil {
		return err
	}
	self := f.SelfWeight * x.State.factor
	incl := f.InclusiveWeight * x.State.factor
	if d.series(f.Thread, f.Process) {
		x.State.seen(f.Thread, f.Process, self)
	}
	if !d.selected(f) {
		return nil
	}
	k := funcKey{function: f.Function, file: f.File, module: f.Module}
	df := d.funcs[k]
	if df == nil {
		df = &diffFunc{key: k}
		d.funcs[k] = df
	}
	side := 0
	if p == &d.sides[projection.SideBase] {
		side = int(projection.SideBase)
	}
	w := &df.side[side]
	sk := seriesKey{table: x.Index, thread: f.Thread, process: f.Process}
	if w.present && w.last == sk {
		d.merged[k] = true
	}
	w.self += self
	w.incl += incl
	w.present, w.last = true, sk
	return nil
}

func (d *diff) selected(f *table.Frame) bool {
	if !d.inSeries(f.Thread, f.Process) || !d.synthetic && f.Symbolization == table.Synthetic {
		return false
	}
	fn := d.fn == nil || d.fn.MatchString(f.Function)
	file := d.file == nil || d.file.MatchString(f.File.V)
	d.fnMiss.saw(f.Function, fn)
	if f.File.Valid {
		d.fileMiss.saw(f.File.V, file)
	}
	return fn && file
}

// diffRow is a result row before its rank.
type diffRow struct {
	key funcKey
	out table.DiffFunction
}

// diffBefore ranks by the absolute change of self weight, then of
// inclusive weight, then by identity, so the order is total.
func diffBefore(a, b diffRow) bool {
	if x, y := math.Abs(a.out.DeltaSelf), math.Abs(b.out.DeltaSelf); x != y {
		return x > y
	}
	if x, y := math.Abs(a.out.DeltaInclusive), math.Abs(b.out.DeltaInclusive); x != y {
		return x > y
	}
	return cmp.Or(strings.Compare(a.key.function, b.key.function), compareNull(a.key.file, b.key.file),
		compareNull(a.key.module, b.key.module)) < 0
}

func (d *diff) Finish(w projection.Emitter) error {
	base, nu := &d.sides[projection.SideBase], &d.sides[projection.SideNew]
	if len(base.List()) == 0 || len(nu.List()) == 0 {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  "a comparison needs a decoded CPU profile on both sides: give the baseline with --baseline PATH and the new profiles as PATH arguments",
			Location: evidence.Location{Field: "baseline"}}
	}
	resultUnit := nu.unit
	head := nu.Header(table.CPUDiff.Schema, resultUnit, evidence.Derived, d.args)
	head.Arguments["normalize"] = d.normalize
	head.ArtifactIDs = append(base.Artifacts(), nu.Artifacts()...)
	slices.Sort(head.ArtifactIDs)
	head.ArtifactIDs = slices.Compact(head.ArtifactIDs)
	res, err := projection.Begin(w, head)
	if err != nil {
		return err
	}
	// Both sides share a dimension (Table checked); the baseline's weights
	// are brought to the new side's unit.
	bf := 1.0
	if base.unit != resultUnit {
		bu, _ := unit.Lookup(base.unit)
		ru, _ := unit.Lookup(resultUnit)
		bf = bu.Factor / ru.Factor
	}
	bpop, npop := base.population(&d.common), nu.population(&d.common)
	btotal, ntotal := bpop.total*bf, npop.total
	scale := 1.0
	if d.normalize && btotal > 0 {
		scale = ntotal / btotal
	}
	ranked := projection.NewTopN(d.top, diffBefore)
	for _, df := range d.funcs {
		b, n := df.side[projection.SideBase], df.side[projection.SideNew]
		r := table.DiffFunction{Function: df.key.function, File: df.key.file, Module: df.key.module,
			BaseSelf: b.self * bf * scale, NewSelf: n.self, BaseInclusive: b.incl * bf * scale, NewInclusive: n.incl,
			BaseSelfShare: share(b.self*bf, btotal), NewSelfShare: share(n.self, ntotal)}
		switch {
		case b.present && n.present:
			r.Presence = table.PresenceBoth
		case b.present:
			r.Presence = table.PresenceBaselineOnly
		default:
			r.Presence = table.PresenceNewOnly
		}
		r.DeltaSelf = r.NewSelf - r.BaseSelf
		r.DeltaInclusive = r.NewInclusive - r.BaseInclusive
		if r.BaseSelf != 0 {
			r.DeltaRatio = table.Some(r.DeltaSelf / r.BaseSelf)
		}
		if r.BaseSelfShare.Valid && r.NewSelfShare.Valid {
			r.DeltaShare = table.Some(r.NewSelfShare.V - r.BaseSelfShare.V)
		}
		ranked.Add(diffRow{key: df.key, out: r})
	}
	for i, r := range ranked.Sorted() {
		r.out.Rank = int64(i + 1)
		if err := res.Row(&r.out, ""); err != nil {
			return err
		}
	}
	return res.End(d.summary(bpop, npop, btotal, ntotal, scale, ranked))
}

// summary joins the two sides' summaries: complete when both are; each
// side's limitations, named by side; the totals of both.
func (d *diff) summary(bpop, npop population, btotal, ntotal, scale float64, ranked *projection.TopN[diffRow]) *evidence.Summary {
	base, nu := &d.sides[projection.SideBase], &d.sides[projection.SideNew]
	s := nu.Summarize(ranked.Observed(), ranked.Truncation())
	bs := base.Summarize(ranked.Observed(), nil)
	s.Complete = s.Complete && bs.Complete && !bpop.pooled && !npop.pooled
	// A limitation both sides state is stated once; one side's is named.
	nl, bl := s.Limitations, bs.Limitations
	s.Limitations = nil
	for _, l := range nl {
		if slices.Contains(bl, l) {
			s.Limit(l)
		} else {
			s.Limit("new: " + l)
		}
	}
	for _, l := range bl {
		if !slices.Contains(nl, l) {
			s.Limit("baseline: " + l)
		}
	}
	for _, l := range npop.limits {
		s.Limit("new: " + l)
	}
	for _, l := range bpop.limits {
		s.Limit("baseline: " + l)
	}
	for _, l := range d.misses.limitations(ranked.Observed()) {
		s.Limit(l)
	}
	if n := len(d.merged); n > 0 {
		s.Limit(fmt.Sprintf("%d functions have several frames in one series (different lines or columns); their weights are summed, so an inclusive weight counts a sample twice when two of its frames are on the stack", n))
		s.Metrics["merged_functions"] = evidence.Metric{Value: int64(n), Unit: "count"}
	}
	if d.normalize {
		s.Limit(fmt.Sprintf("normalized: baseline weights are scaled by %.6g so its total equals the new total; shares are unscaled", scale))
	}
	s.Metrics[table.MetricTotalWeight] = evidence.Metric{Value: ntotal, Unit: nu.unit}
	s.Metrics["base_total_weight"] = evidence.Metric{Value: btotal, Unit: nu.unit}
	s.Metrics["profile_count"] = evidence.Metric{Value: npop.profiles, Unit: "count"}
	s.Metrics["base_profile_count"] = evidence.Metric{Value: bpop.profiles, Unit: "count"}
	s.Metrics["normalize_scale"] = evidence.Metric{Value: scale, Unit: "ratio"}
	cov := d.Sides.Coverage()
	cov["new"], cov["baseline"] = s.Coverage, bs.Coverage
	s.Coverage = cov
	return s
}
