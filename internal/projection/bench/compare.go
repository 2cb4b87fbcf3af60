package bench

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Verdicts of a comparison row.
const (
	VerdictSlower       = "slower" // ratio interval wholly above 1+threshold
	VerdictFaster       = "faster" // ratio interval wholly below 1/(1+threshold)
	VerdictSame         = "no_difference"
	VerdictInconclusive = "inconclusive"
	VerdictBaselineOnly = "baseline_only"
	VerdictNewOnly      = "new_only"
	VerdictTooFew       = "insufficient_samples"
)

// MetricRegressions is the result metric counting series with verdict
// slower: what flameox-rank's exit status for compare_benchmarks reads.
const MetricRegressions = "significant_regressions"

// MinSamples is the fewest samples a side needs for a bootstrap interval.
const MinSamples = 3

// Method states how comparisons are computed, in every result.
const Method = "percentile bootstrap of the ratio of medians (new/baseline): each resample draws both sides with replacement at their own sizes; " +
	"PCG random stream seeded per series from the seed and the series identity"

// Compare is the projection behind compare_benchmarks. Its inputs come in
// two sides (flameox-rank --baseline BASE... NEW...); series of one side
// with one identity pool their samples across the side's artifacts.
var Compare = &projection.Spec{
	Name:     "bench-compare",
	Tables:   Tables,
	Compares: true,
	Params: []param.Param{
		projection.BaselineParam,
		globParam,
		{Name: "threshold", Type: param.Number, Default: 0.02, Min: param.F(0), Max: param.F(10),
			Doc: "relative change that counts: slower when the whole interval is above 1+threshold, faster when below 1/(1+threshold)"},
		{Name: "confidence", Type: param.Number, Default: 0.95, Min: param.F(0.5), Max: param.F(0.999),
			Doc: "confidence level of the bootstrap interval"},
		{Name: "resamples", Type: param.Int, Default: int64(2000), Min: param.F(100), Max: param.F(100000),
			Doc: "bootstrap resamples per series"},
		{Name: "seed", Type: param.Int, Default: int64(1), Min: param.F(0),
			Doc: "seed of the bootstrap's random stream; the same inputs and seed give the same intervals"},
		{Name: "top", Type: param.Int, Default: int64(200), Min: param.F(1), Max: param.F(100000),
			Doc: "most series to return, largest slowdown first"},
	},
	New: newCompare,
}

type compare struct {
	projection.Sides
	collector
	args       evidence.Object
	top        int
	threshold  float64
	confidence float64
	resamples  int
	seed       uint64
}

func newCompare(args evidence.Object, _ map[string]bool) (projection.Projector, error) {
	c, err := newCollector(args)
	if err != nil {
		return nil, err
	}
	p := &compare{collector: c, args: args, top: 200, threshold: 0.02, confidence: 0.95, resamples: 2000, seed: 1}
	p.collector.side = func(t *evidence.Table) int {
		side, _ := p.Sides.Of(t) // Table refused a table without one
		return int(side)
	}
	if v, ok := evidence.AsInt(args["top"]); ok {
		p.top = int(v)
	}
	if v, ok := evidence.AsFloat(args["threshold"]); ok {
		p.threshold = v
	}
	if v, ok := evidence.AsFloat(args["confidence"]); ok {
		p.confidence = v
	}
	if v, ok := evidence.AsInt(args["resamples"]); ok {
		p.resamples = int(v)
	}
	if v, ok := evidence.AsInt(args["seed"]); ok {
		p.seed = uint64(v)
	}
	return p, nil
}

type pair struct {
	identity  string
	base, new []*series // one per artifact of the side
}

// Table admits a table of either side; a table of no side is refused.
func (p *compare) Table(t *evidence.Table, caps formats.Caps) error {
	if _, err := p.Sides.Of(t); err != nil {
		return err
	}
	return p.collector.Table(t, caps)
}

// Finish matches series by identity across the two sides, compares each
// pair and ranks the rows by ratio, largest slowdown first.
func (p *compare) Finish(w projection.Emitter) error {
	list, err := p.selected()
	if err != nil {
		return err
	}
	base, news := p.Sides.Artifacts(projection.SideBase), p.Sides.Artifacts(projection.SideNew)
	if len(base) == 0 || len(news) == 0 {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument, Location: evidence.Location{Field: "baseline"},
			Message: "a comparison needs benchmark results on both sides: --baseline BASELINE and NEW as PATH arguments"}
	}
	pairs := map[string]*pair{}
	var order []string
	for _, s := range list {
		pr := pairs[s.identity]
		if pr == nil {
			pr = &pair{identity: s.identity}
			pairs[s.identity] = pr
			order = append(order, s.identity)
		}
		slot := &pr.new
		if projection.Side(s.key.side) == projection.SideBase {
			slot = &pr.base
		}
		for _, o := range *slot {
			if o.key.artifact == s.key.artifact {
				return evidence.Failf(evidence.CodeInvalidArgument, "artifact %s holds two series with the same identity %q", s.key.artifact, s.identity)
			}
		}
		*slot = append(*slot, s)
	}
	rows := make([]*table.BenchComparison, 0, len(order))
	counts := map[string]int64{}
	for _, id := range order {
		r := p.comparePair(pairs[id])
		counts[r.Verdict]++
		rows = append(rows, r)
	}
	top := projection.NewTopN(p.top, func(a, b *table.BenchComparison) bool { return before(a, b) })
	for _, r := range rows {
		top.Add(r)
	}
	res, err := projection.Begin(w, p.Header(table.BenchComparisons.Schema, "", evidence.Derived, p.args))
	if err != nil {
		return err
	}
	for i, r := range top.Sorted() {
		r.Rank = int64(i + 1)
		if err := res.Row(r, ""); err != nil {
			return err
		}
	}
	sum := p.Summarize(top.Observed(), top.Truncation())
	for _, v := range []string{VerdictSlower, VerdictFaster, VerdictSame, VerdictInconclusive, VerdictBaselineOnly, VerdictNewOnly, VerdictTooFew} {
		sum.Metrics[v] = evidence.Metric{Value: counts[v], Unit: "series"}
	}
	sum.Metrics[MetricRegressions] = evidence.Metric{Value: counts[VerdictSlower], Unit: "series"}
	for k, v := range p.Sides.Coverage() {
		sum.Coverage[k] = v
	}
	sum.Coverage["method"] = Method
	sum.Coverage["resamples"] = int64(p.resamples)
	sum.Coverage["seed"] = int64(p.seed)
	sum.Coverage["confidence"] = p.confidence
	sum.Coverage["threshold"] = p.threshold
	if n := counts[VerdictBaselineOnly] + counts[VerdictNewOnly]; n > 0 {
		sum.Limit(fmt.Sprintf("%d series are in only one of the two sides: they are listed, not compared", n))
	}
	if n := counts[VerdictTooFew]; n > 0 {
		sum.Limit(fmt.Sprintf("%d series have fewer than %d samples on a side (or only a native summary): no interval, no verdict", n, MinSamples))
	}
	if len(base) > 1 || len(news) > 1 {
		sum.Limit("a side of several artifacts pools, per series identity, the samples of all its artifacts")
	}
	return res.End(sum)
}

// before ranks comparisons: compared series by ratio, largest first,
// then the rest; ties by identity.
func before(a, b *table.BenchComparison) bool {
	if a.Ratio.Valid != b.Ratio.Valid {
		return a.Ratio.Valid
	}
	if a.Ratio.Valid && a.Ratio.V != b.Ratio.V {
		return a.Ratio.V > b.Ratio.V
	}
	return strings.Compare(a.Identity, b.Identity) < 0
}

// pooled returns a side's samples, sorted, and its one artifact ("" when
// several).
func pooled(side []*series) ([]float64, string) {
	var vals []float64
	art := ""
	for i, s := range side {
		vals = append(vals, s.values...)
		if i == 0 {
			art = s.key.artifact
		} else if s.key.artifact != art {
			art = ""
		}
	}
	slices.Sort(vals)
	return vals, art
}

func (p *compare) comparePair(pr *pair) *table.BenchComparison {
	ref := pr.base
	if len(ref) == 0 {
		ref = pr.new
	}
	r := &table.BenchComparison{Benchmark: ref[0].row.Benchmark, Unit: ref[0].row.Unit, Dimensions: ref[0].row.Dimensions, Identity: pr.identity}
	if r.Dimensions == nil {
		r.Dimensions = evidence.Object{}
	}
	b, bart := pooled(pr.base)
	n, nart := pooled(pr.new)
	r.BaselineN, r.NewN = int64(len(b)), int64(len(n))
	if bart != "" {
		r.BaselineID = table.Some(bart)
	}
	if nart != "" {
		r.NewID = table.Some(nart)
	}
	switch {
	case len(pr.new) == 0:
		r.Verdict = VerdictBaselineOnly
		return r
	case len(pr.base) == 0:
		r.Verdict = VerdictNewOnly
		return r
	}
	if len(b) > 0 {
		r.BaselineMedian = table.Some(median(b))
	}
	if len(n) > 0 {
		r.NewMedian = table.Some(median(n))
	}
	if len(b) < MinSamples || len(n) < MinSamples {
		r.Verdict = VerdictTooFew
		return r
	}
	if r.BaselineMedian.V <= 0 {
		r.Verdict = VerdictTooFew // a ratio to a zero median is undefined
		return r
	}
	r.Ratio = table.Some(r.NewMedian.V / r.BaselineMedian.V)
	lo, hi := Bootstrap(b, n, p.resamples, p.confidence, seedFor(p.seed, pr.identity))
	if !isFinite(lo) || !isFinite(hi) {
		r.Verdict = VerdictInconclusive // resamples with a zero baseline median
		return r
	}
	r.CILow, r.CIHigh = table.Some(lo), table.Some(hi)
	r.Verdict = Verdict(lo, hi, p.threshold)
	r.Significant = r.Verdict == VerdictSlower || r.Verdict == VerdictFaster
	return r
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Verdict classifies a ratio interval at a threshold.
func Verdict(lo, hi, threshold float64) string {
	up, down := 1+threshold, 1/(1+threshold)
	switch {
	case lo > up:
		return VerdictSlower
	case hi < down:
		return VerdictFaster
	case lo >= down && hi <= up:
		return VerdictSame
	}
	return VerdictInconclusive
}

func seedFor(seed uint64, identity string) [2]uint64 {
	h := fnv.New64a()
	h.Write([]byte(identity))
	return [2]uint64{seed, h.Sum64()}
}

// Bootstrap returns the percentile interval at confidence of the ratio of
// medians new/base over resamples resamples of both sorted samples.
func Bootstrap(base, new []float64, resamples int, confidence float64, seed [2]uint64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(seed[0], seed[1]))
	bs := make([]float64, len(base))
	ns := make([]float64, len(new))
	ratios := make([]float64, 0, resamples)
	draw := func(dst, src []float64) float64 {
		for i := range dst {
			dst[i] = src[rng.IntN(len(src))]
		}
		slices.Sort(dst)
		return median(dst)
	}
	for range resamples {
		mb := draw(bs, base)
		mn := draw(ns, new)
		if mb > 0 {
			ratios = append(ratios, mn/mb)
		} else {
			ratios = append(ratios, math.Inf(1))
		}
	}
	slices.Sort(ratios)
	alpha := (1 - confidence) / 2
	return Percentile(ratios, alpha), Percentile(ratios, 1-alpha)
}
