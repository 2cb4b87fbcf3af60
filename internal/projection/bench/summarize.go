package bench

import (
	"math"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Summarize is the projection behind summarize_benchmarks.
var Summarize = &projection.Spec{
	Name:   "bench-summary",
	Tables: Tables,
	Params: []param.Param{
		globParam,
		{Name: "top", Type: param.Int, Default: int64(200), Min: param.F(1), Max: param.F(100000),
			Doc: "most series to return, in native order"},
	},
	New: newSummarize,
}

type summarize struct {
	collector
	args evidence.Object
	top  int
}

func newSummarize(args evidence.Object, _ map[string]bool) (projection.Projector, error) {
	c, err := newCollector(args)
	if err != nil {
		return nil, err
	}
	top, _ := evidence.AsInt(args["top"])
	if top < 1 {
		top = 200
	}
	return &summarize{collector: c, args: args, top: int(top)}, nil
}

func (p *summarize) Finish(w projection.Emitter) error {
	list, err := p.selected()
	if err != nil {
		return err
	}
	// Series keep their native order (pyperf's suite order, NVBench's
	// state order), artifact by artifact.
	top := projection.NewTopN(p.top, func(a, b *series) bool { return a.order < b.order })
	var native, empty int64
	for _, s := range list {
		top.Add(s)
	}
	res, err := projection.Begin(w, p.Header(table.BenchSummaries.Schema, "", evidence.Derived, p.args))
	if err != nil {
		return err
	}
	for _, s := range top.Sorted() {
		r := SummaryOf(s.key.artifact, s.row, s.values)
		switch {
		case r.Source == "native":
			native++
		case r.N == 0:
			empty++
		}
		if err := res.Row(r, ""); err != nil {
			return err
		}
	}
	sum := p.Summarize(top.Observed(), top.Truncation())
	sum.Metrics["series"] = evidence.Metric{Value: int64(len(list)), Unit: "series"}
	sum.Metrics["samples"] = evidence.Metric{Value: p.samples - p.skipped, Unit: "values"}
	sum.Metrics["native_summaries"] = evidence.Metric{Value: native, Unit: "series"}
	sum.Metrics["empty_series"] = evidence.Metric{Value: empty, Unit: "series"}
	if native > 0 {
		sum.Limit("series with source=native carry the producer's own summary (no samples): median and percentiles are null unless it reports them")
	}
	if empty > 0 {
		sum.Limit("series with n=0 have no measured values (calibration or warmups only)")
	}
	return res.End(sum)
}

// SummaryOf is the bench.summaries row of one series: computed from its
// samples when it has any, else its native statistics.
func SummaryOf(artifact string, row *table.BenchSeriesRow, values []float64) *table.BenchSummary {
	r := &table.BenchSummary{ArtifactID: artifact, SeriesID: row.SeriesID, BenchIdentity: row.BenchIdentity, Source: "samples",
		N: int64(len(values)), LoopCount: row.LoopCount, Warmups: row.Warmups}
	if len(values) == 0 {
		if row.NativeCount.Valid || row.NativeMean.Valid {
			r.Source = "native"
			r.N = row.NativeCount.V
			r.Mean, r.Stdev, r.Min, r.Max, r.Median = row.NativeMean, row.NativeStdev, row.NativeMin, row.NativeMax, row.NativeMedian
		}
		return r
	}
	st := Compute(values)
	r.Mean, r.Median = table.Some(st.Mean), table.Some(st.Median)
	if !math.IsNaN(st.Stdev) {
		r.Stdev = table.Some(st.Stdev)
	}
	r.Min, r.Max, r.P5, r.P95 = table.Some(st.Min), table.Some(st.Max), table.Some(st.P5), table.Some(st.P95)
	return r
}
