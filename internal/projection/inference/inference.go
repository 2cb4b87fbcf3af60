// Package inference is the projection behind summarize_inference. It reads
// the inference tables (runs, per-request records, the producer's own
// statistics) and writes, per run, either the latency distributions of
// TTFT, TPOT, ITL and end-to-end latency in ms (mode latency:
// inference.summaries), computed by flameox from the per-request records
// where the file has them and beside them the producer's aggregates, with
// their largest relative difference; or the run's counts, failures by
// category, duration and throughputs (mode runs: inference.run_summaries).
//
// An AIPerf run is exported as two files: the records and the aggregate.
// When the inputs hold exactly one AIPerf run with records and no
// statistics and one with statistics and no records, they are the two
// halves of one run and are shown together; otherwise each stands alone
// and the summary says so.
//
// It imports projection, table, param, formats (capabilities) and evidence.
package inference

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Names of the projection and its modes.
const (
	Name        = "inference"
	ModeLatency = "latency"
	ModeRuns    = "runs"
)

// Tolerance is the relative difference within which a computed statistic
// agrees with the producer's: the rounding of a unit conversion (AIPerf
// aggregates in ns and exports records in ms) and of summation order.
const Tolerance = 1e-9

var tables = []*table.Schema{table.InferenceRuns.Schema, table.InferenceRequests.Schema, table.InferenceStats.Schema}

// Spec is the projection.
var Spec = &projection.Spec{
	Name:   Name,
	Tables: tables,
	Params: []param.Param{
		{Name: "mode", Type: param.Enum, Enum: []string{ModeLatency, ModeRuns}, Default: ModeLatency,
			Doc: "latency: TTFT, TPOT, ITL and end-to-end distributions per run, computed and as the producer wrote them; runs: counts, failures, duration and throughput per run"},
		{Name: "metrics", Type: param.StringList,
			Doc: "latency mode: keep only these metrics (ttft, tpot, itl, e2e; for a trace input_tokens, output_tokens, interarrival)"},
		{Name: "top", Type: param.Int, Default: int64(100), Min: param.F(1), Max: param.F(100000), Doc: "most rows to return"},
	},
	New: New,
}

// Latency metrics in output order; trace metrics after them.
var (
	latencyMetrics = []string{"ttft", "tpot", "itl", "e2e"}
	traceMetrics   = []string{"input_tokens", "output_tokens", "interarrival"}
)

type runKey struct {
	artifact string
	run      int64
}

type failKey struct {
	category string
	code     int64
	hasCode  bool
}

// run is everything read about one run.
type run struct {
	key       runKey
	order     int // admission order of its first table
	info      *table.InferenceRun
	samples   map[string]*dist
	producer  map[string]map[string]float64 // metric → stat → value (ns or native unit)
	units     map[string]string             // metric → producer unit
	failures  map[failKey]int64
	requests  int64
	failed    int64
	blocks    int64
	reused    int64
	lastStart int64
	hasStart  bool
	partner   string // artifact whose statistics were paired with this run
}

type projector struct {
	projection.Inputs[struct{}]
	args    evidence.Object
	mode    string
	keep    map[string]bool
	top     int
	runs    map[runKey]*run
	order   int
	warmups int64
}

// New starts the projection with validated arguments.
func New(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	p := &projector{Inputs: projection.NewInputs[struct{}](tables...), args: args, runs: map[runKey]*run{}}
	p.mode, _ = args["mode"].(string)
	if p.mode == "" {
		p.mode = ModeLatency
	}
	top, ok := evidence.AsInt(args["top"])
	if !ok || top < 1 {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "argument top must be a positive integer")
	}
	p.top = int(top)
	if ms, ok := args["metrics"].([]string); ok && given["metrics"] {
		if p.mode != ModeLatency {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: "metrics selects latency rows; runs mode has none (omit metrics)", Location: evidence.Location{Field: "metrics"}}
		}
		p.keep = map[string]bool{}
		for _, m := range ms {
			if !slices.Contains(latencyMetrics, m) && !slices.Contains(traceMetrics, m) {
				return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
					Message:  fmt.Sprintf("argument metrics: %q is not one of ttft, tpot, itl, e2e, input_tokens, output_tokens, interarrival", m),
					Location: evidence.Location{Field: "metrics"}}
			}
			p.keep[m] = true
		}
	}
	return p, nil
}

func (p *projector) get(k runKey) *run {
	r := p.runs[k]
	if r == nil {
		p.order++
		r = &run{key: k, order: p.order, samples: map[string]*dist{}, producer: map[string]map[string]float64{},
			units: map[string]string{}, failures: map[failKey]int64{}}
		p.runs[k] = r
	}
	return r
}

func (p *projector) Row(t *evidence.Table, row any) error {
	switch t.Name {
	case table.InferenceRuns.Name:
		r, _, art, err := projection.Read(&p.Inputs, table.InferenceRuns, t, row)
		if err != nil {
			return err
		}
		info := *r
		p.get(runKey{art, r.Run}).info = &info
	case table.InferenceRequests.Name:
		r, _, art, err := projection.Read(&p.Inputs, table.InferenceRequests, t, row)
		if err != nil {
			return err
		}
		return p.request(p.get(runKey{art, r.Run}), r)
	case table.InferenceStats.Name:
		r, _, art, err := projection.Read(&p.Inputs, table.InferenceStats, t, row)
		if err != nil {
			return err
		}
		ru := p.get(runKey{art, r.Run})
		if r.Metric == "failed" {
			if r.Category.Valid || r.Code.Valid {
				ru.failures[failKey{r.Category.V, r.Code.V, r.Code.Valid}] += int64(r.Value)
			}
			return nil
		}
		m := ru.producer[r.Metric]
		if m == nil {
			m = map[string]float64{}
			ru.producer[r.Metric] = m
		}
		m[r.Stat] = r.Value
		if r.Stat != "count" {
			ru.units[r.Metric] = r.Unit
		}
	}
	return nil
}

func (p *projector) sample(r *run, metric string, v table.Null[float64]) {
	if !v.Valid {
		return
	}
	d := r.samples[metric]
	if d == nil {
		d = &dist{}
		r.samples[metric] = d
	}
	d.add(v.V)
}

// request pools one record. Latencies pool over successful requests of
// the profiling phase, as the producers' own aggregates do.
func (p *projector) request(r *run, q *table.InferenceRequest) error {
	r.requests++
	if !q.OK {
		r.failed++
		cat := q.ErrorCategory.V
		if !q.ErrorCategory.Valid {
			cat = "error"
		}
		r.failures[failKey{cat, q.ErrorCode.V, q.ErrorCode.Valid}]++
		return nil
	}
	if q.Phase.Valid && q.Phase.V == "warmup" {
		p.warmups++
		return nil
	}
	p.sample(r, "ttft", q.TTFT)
	p.sample(r, "tpot", q.TPOT)
	p.sample(r, "e2e", q.E2E)
	p.sample(r, "itl", q.ITL)
	if gaps, ok := q.ITLGaps.([]any); ok {
		for _, g := range gaps {
			if f, ok := number(g); ok {
				p.sample(r, "itl", table.Some(f))
			}
		}
	}
	if q.InputTokens.Valid {
		p.sample(r, "input_tokens", table.Some(float64(q.InputTokens.V)))
	}
	if q.OutputTokens.Valid {
		p.sample(r, "output_tokens", table.Some(float64(q.OutputTokens.V)))
	}
	if q.Blocks.Valid {
		r.blocks += q.Blocks.V
		r.reused += q.ReusedBlocks.V
	}
	// Arrivals: the gap to the previous request in file order (shown for
	// traces, whose records are in arrival order).
	if q.Start.Valid {
		if r.hasStart {
			p.sample(r, "interarrival", table.Some(float64(q.Start.V-r.lastStart)))
		}
		r.lastStart, r.hasStart = q.Start.V, true
	}
	return nil
}

// number reads a gap as a stream gives it back (json.Number) or as a
// decoder hands it (float64).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	}
	return 0, false
}

// sorted returns the runs in admission order.
func (p *projector) sorted() []*run {
	out := make([]*run, 0, len(p.runs))
	for _, r := range p.runs {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *run) int {
		return cmp.Or(cmp.Compare(a.order, b.order), cmp.Compare(a.key.artifact, b.key.artifact), cmp.Compare(a.key.run, b.key.run))
	})
	return out
}

// pair joins the two halves of one AIPerf run (records and aggregate),
// when the inputs hold exactly one of each; it reports the runs left
// unpaired because they were ambiguous.
func (p *projector) pair(runs []*run) ([]*run, int) {
	var recs, aggs []*run
	for _, r := range runs {
		if r.info == nil || r.info.Producer != "aiperf" {
			continue
		}
		switch {
		case r.requests > 0 && len(r.producer) == 0:
			recs = append(recs, r)
		case r.requests == 0 && len(r.producer) > 0:
			aggs = append(aggs, r)
		}
	}
	if len(recs) == 0 || len(aggs) == 0 {
		return runs, 0
	}
	if len(recs) != 1 || len(aggs) != 1 {
		return runs, len(recs) + len(aggs)
	}
	rec, agg := recs[0], aggs[0]
	rec.producer, rec.units, rec.partner = agg.producer, agg.units, agg.key.artifact
	// The aggregate states what the records cannot: the model, the
	// endpoint, AIPerf's own totals and duration.
	info := *agg.info
	info.Requests = rec.info.Requests
	rec.info = &info
	if len(rec.failures) == 0 {
		rec.failures = agg.failures
	}
	return slices.DeleteFunc(runs, func(r *run) bool { return r == agg }), 0
}

type outRow struct {
	seq int
	row any
}

func (p *projector) Finish(w projection.Emitter) error {
	runs, ambiguous := p.pair(p.sorted())
	schema := table.InferenceSummaries.Schema
	if p.mode == ModeRuns {
		schema = table.InferenceRunSummaries.Schema
	}
	res, err := projection.Begin(w, p.Header(schema, "", evidence.Derived, p.args))
	if err != nil {
		return err
	}
	top := projection.NewTopN(p.top, func(a, b outRow) bool { return a.seq < b.seq })
	seq := 0
	var disagree, compared int64
	for _, r := range runs {
		if p.mode == ModeRuns {
			seq++
			top.Add(outRow{seq, p.runRow(r)})
			continue
		}
		for _, row := range p.latencyRows(r) {
			seq++
			if row.Agrees.Valid {
				compared++
				if !row.Agrees.V {
					disagree++
				}
			}
			top.Add(outRow{seq, row})
		}
	}
	for _, o := range top.Sorted() {
		if err := res.Row(o.row, ""); err != nil {
			return err
		}
	}
	sum := p.Summarize(top.Observed(), top.Truncation())
	sum.Metrics["runs"] = evidence.Metric{Value: int64(len(runs)), Unit: "runs"}
	if p.mode == ModeLatency {
		sum.Metrics["compared_metrics"] = evidence.Metric{Value: compared, Unit: "metrics"}
		sum.Metrics["disagreeing_metrics"] = evidence.Metric{Value: disagree, Unit: "metrics"}
		sum.Limit("times are ms; flameox rows pool successful requests (AIPerf: of its profiling phase); std is the population standard deviation and percentiles interpolate linearly between closest ranks, as AIPerf, vLLM and SGLang compute them")
		if disagree > 0 {
			sum.Limit(fmt.Sprintf("%d computed distributions differ from the producer's own beyond %g relative (agrees=false, max_rel_diff shows by how much)", disagree, Tolerance))
		}
	}
	if p.warmups > 0 {
		sum.Metrics["warmup_requests"] = evidence.Metric{Value: p.warmups, Unit: "requests"}
	}
	if ambiguous > 0 {
		sum.Limit(fmt.Sprintf("%d AIPerf record and aggregate exports were given together but not one of each: none were paired, each run stands alone", ambiguous))
	}
	return res.End(sum)
}

func ms(unit string, v float64) (float64, string) {
	if unit == "ns" {
		return v / 1e6, "ms"
	}
	return v, unit
}

// latencyRows are one run's rows: per metric, flameox's computation (when
// the run has records) and the producer's aggregate (when it has one).
func (p *projector) latencyRows(r *run) []*table.InferenceSummary {
	metrics := latencyMetrics
	if r.info != nil && r.info.Producer == "mooncake" {
		metrics = traceMetrics
	}
	var out []*table.InferenceSummary
	for _, m := range metrics {
		if p.keep != nil && !p.keep[m] {
			continue
		}
		unit := "ns"
		if m == "input_tokens" || m == "output_tokens" {
			unit = "tokens"
		}
		var mine *table.InferenceSummary
		var st *stats
		if d := r.samples[m]; d != nil {
			st = d.stats()
		}
		if st != nil {
			mine = p.base(r, m, "flameox")
			mine.Count = table.Some(int64(st.n))
			conv := func(v float64) table.Null[float64] { x, _ := ms(unit, v); return table.Some(x) }
			mine.Unit = outUnit(unit)
			mine.Mean, mine.Std, mine.Max = conv(st.mean), conv(st.std), conv(st.max)
			mine.Median, mine.P50 = conv(st.percentile(50)), conv(st.percentile(50))
			mine.P90, mine.P95, mine.P99 = conv(st.percentile(90)), conv(st.percentile(95)), conv(st.percentile(99))
			out = append(out, mine)
		}
		prod, ok := r.producer[m]
		if !ok {
			continue
		}
		pu := r.units[m]
		row := p.base(r, m, "producer")
		row.Unit = outUnit(pu)
		get := func(k string) table.Null[float64] {
			v, ok := prod[k]
			if !ok {
				return table.Null[float64]{}
			}
			x, _ := ms(pu, v)
			return table.Some(x)
		}
		row.Mean, row.Median, row.Std, row.Max = get("mean"), get("median"), get("std"), get("max")
		row.P50, row.P90, row.P95, row.P99 = get("p50"), get("p90"), get("p95"), get("p99")
		if c, ok := prod["count"]; ok {
			row.Count = table.Some(int64(c))
		}
		out = append(out, row)
		if mine != nil && pu == unit {
			worst := 0.0
			for k, v := range prod {
				if k == "sum" {
					continue // AIPerf's sum is the mean times the count
				}
				x, ok := st.stat(k)
				if !ok {
					continue
				}
				worst = math.Max(worst, relDiff(x, v))
			}
			mine.MaxDiff = table.Some(worst)
			mine.Agrees = table.Some(worst <= Tolerance)
		}
	}
	return out
}

func outUnit(u string) string {
	if u == "ns" {
		return "ms"
	}
	return u
}

func (p *projector) base(r *run, metric, source string) *table.InferenceSummary {
	row := &table.InferenceSummary{ArtifactID: r.key.artifact, Run: r.key.run, Metric: metric, Source: source}
	if r.info != nil {
		row.Producer, row.Model, row.Backend, row.EndpointKind = r.info.Producer, r.info.Model, r.info.Backend, r.info.EndpointKind
	}
	return row
}

// maxFailureKinds bounds the failure categories a run row lists.
const maxFailureKinds = 16

func (p *projector) runRow(r *run) *table.InferenceRunSummary {
	row := &table.InferenceRunSummary{ArtifactID: r.key.artifact, Run: r.key.run}
	if i := r.info; i != nil {
		row.Producer, row.Model, row.Backend, row.EndpointKind = i.Producer, i.Model, i.Backend, i.EndpointKind
		row.Completed, row.Failed = i.Completed, i.Failed
		if i.Duration.Valid {
			row.Duration = table.Some(float64(i.Duration.V) / 1e9)
		}
		row.RequestRate, row.OutputRate, row.TotalRate = i.RequestRateOut, i.OutputRate, i.TotalRate
		row.Requests = i.Requests
	}
	if r.requests > 0 {
		row.Requests = table.Some(r.requests)
		if !row.Failed.Valid {
			row.Failed = table.Some(r.failed)
		}
	}
	if r.blocks > 0 {
		row.ReuseRatio = table.Some(float64(r.reused) / float64(r.blocks))
	}
	if len(r.failures) > 0 {
		keys := make([]failKey, 0, len(r.failures))
		for k := range r.failures {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b failKey) int {
			return cmp.Or(cmp.Compare(r.failures[b], r.failures[a]), cmp.Compare(a.category, b.category), cmp.Compare(a.code, b.code))
		})
		var list []any
		var other int64
		for i, k := range keys {
			if i >= maxFailureKinds {
				other += r.failures[k]
				continue
			}
			o := evidence.Object{"category": k.category, "count": r.failures[k], "code": nil}
			if k.hasCode {
				o["code"] = k.code
			}
			list = append(list, o)
		}
		if other > 0 {
			list = append(list, evidence.Object{"category": "other", "count": other, "code": nil})
		}
		row.Failures = list
	}
	return row
}
