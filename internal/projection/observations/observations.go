// Package observations is the `observations` projection behind
// summarize_observations. It reads observations.records and, by mode,
// returns per-series aggregates, the raw observations, or the workload's
// phases with their durations (observations.series, .raw_records,
// .phases). Filters (name pattern, phase) apply before the row bound.
//
// It imports projection, table, param, unit and evidence.
package observations

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// Names of the projection and its modes.
const (
	Name          = "observations"
	ModeAggregate = "aggregate" // observations.series
	ModeRaw       = "raw"       // observations.raw_records
	ModePhases    = "phases"    // observations.phases
)

// Spec is the observations projection.
var Spec = &projection.Spec{
	Name:   Name,
	Tables: []*table.Schema{table.ObservationRecords.Schema},
	Params: []param.Param{
		{Name: "mode", Type: param.Enum, Enum: []string{ModeAggregate, ModeRaw, ModePhases}, Default: ModeAggregate,
			Doc: "aggregate: one row per series (name, phase, unit, process, artifact) in name order; raw: observations in file order; phases: phases with durations, unclosed first, then longest"},
		{Name: "name_glob", Type: param.String,
			Doc: "keep observations whose name matches: * any text, ? one character, everything else literal (aggregate and raw modes)"},
		{Name: "phase", Type: param.String,
			Doc: "keep only observations recorded in this phase, or (phases mode) only phases of this name"},
		{Name: "top", Type: param.Int, Default: int64(50), Min: param.F(1), Max: param.F(10000),
			Doc: "most rows to return"},
	},
	New: New,
}

type seriesKey struct {
	artifact, name, phase, unit string
	hasPhase, hasUnit           bool
	pid                         int64
}

type series struct {
	key            seriesKey
	count, numeric int64
	sum, min, max  float64
	first, last    int64
	lastValue      any
}

type phaseRow struct {
	row table.ObservationPhase
	dur int64 // ns
	seq int64
}

type openPhase struct {
	name  string
	start int64
	line  int64
	seq   int64
}

type procKey struct {
	artifact string
	pid      int64
}

// rawRow is a selected record: a copy of its row (decoders may reuse
// theirs) and its artifact.
type rawRow struct {
	rec      table.ObservationRecord
	artifact string
	seq      int64
}

type projector struct {
	// The admitted tables; Table and Summary are theirs.
	projection.Inputs[struct{}]

	args      evidence.Object
	mode      string
	glob      *regexp.Regexp
	phase     string
	hasPhase  bool
	top       int
	series    map[seriesKey]*series
	raw       *projection.TopN[rawRow]
	phases    *projection.TopN[phaseRow]
	open      map[procKey][]openPhase
	seq       int64
	records   int64
	unmatched int64
}

// New starts an observations projection with validated arguments.
func New(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	p := &projector{Inputs: projection.NewInputs[struct{}](table.ObservationRecords.Schema), args: args,
		series: map[seriesKey]*series{}, open: map[procKey][]openPhase{}}
	p.mode, _ = args["mode"].(string)
	if p.mode == "" {
		p.mode = ModeAggregate
	}
	top, ok := evidence.AsInt(args["top"])
	if !ok || top < 1 {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "argument top must be a positive integer")
	}
	p.top = int(top)
	if g, ok := args["name_glob"].(string); ok {
		if p.mode == ModePhases {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: "name_glob selects observations; phases mode lists phases (use phase)", Location: evidence.Location{Field: "name_glob"}}
		}
		re, err := projection.NameGlob(g)
		if err != nil {
			return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "argument name_glob")
		}
		p.glob = re
	}
	p.phase, p.hasPhase = args["phase"].(string)
	p.raw = projection.NewTopN(p.top, func(a, b rawRow) bool { return a.seq < b.seq })
	p.phases = projection.NewTopN(p.top, func(a, b phaseRow) bool {
		if a.row.Closed != b.row.Closed {
			return !a.row.Closed
		}
		if a.dur != b.dur {
			return a.dur > b.dur
		}
		return a.seq < b.seq
	})
	return p, nil
}

func (p *projector) Row(t *evidence.Table, row any) error {
	r, _, art, err := projection.Read(&p.Inputs, table.ObservationRecords, t, row)
	if err != nil {
		return err
	}
	p.seq++
	proc := procKey{art, r.PID}
	switch r.Kind {
	case "phase_start":
		p.open[proc] = append(p.open[proc], openPhase{name: r.Phase.V, start: r.TS, line: r.Line, seq: p.seq})
		return nil
	case "phase_end":
		stack := p.open[proc]
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].name == r.Phase.V {
				p.phaseRow(proc, stack[i], i, &r.TS)
				p.open[proc] = append(stack[:i], stack[i+1:]...)
				return nil
			}
		}
		p.unmatched++
		return nil
	case "observation":
	default:
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s: record kind %q", t.ID, r.Kind)
	}
	p.records++
	if p.glob != nil && !p.glob.MatchString(r.Name.V) {
		return nil
	}
	if p.hasPhase && r.Phase != table.Some(p.phase) {
		return nil
	}
	switch p.mode {
	case ModeRaw:
		p.raw.Add(rawRow{rec: *r, artifact: art, seq: p.seq})
	case ModeAggregate:
		p.aggregate(art, r)
	}
	return nil
}

func (p *projector) aggregate(art string, r *table.ObservationRecord) {
	u := r.Unit
	x, numeric := number(r.Value)
	if u.Valid {
		// Time and memory units pool in one output unit (ms and s become
		// s); any other unit is an exact label, so "count" never turns
		// into another count's unit.
		if known, err := unit.Lookup(u.V); err == nil && (known.Dimension == unit.Time || known.Dimension == unit.Memory) {
			x *= known.Factor
			u.V = known.Output
		}
	}
	k := seriesKey{artifact: art, name: r.Name.V, phase: r.Phase.V, hasPhase: r.Phase.Valid, unit: u.V, hasUnit: u.Valid, pid: r.PID}
	s := p.series[k]
	if s == nil {
		s = &series{key: k, first: r.TS, min: math.Inf(1), max: math.Inf(-1)}
		p.series[k] = s
	}
	s.count++
	s.last = r.TS
	s.lastValue = r.Value
	if numeric {
		s.numeric++
		s.sum += x
		s.min = min(s.min, x)
		s.max = max(s.max, x)
	}
}

// number reads a JSON number value as a double.
func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		switch x := v.(type) {
		case float64:
			return x, true
		case int64:
			return float64(x), true
		}
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && math.IsInf(f, 0) {
		return 0, false // an integer beyond the double range: counted, not summed
	}
	return f, true
}

func (p *projector) phaseRow(proc procKey, o openPhase, depth int, end *int64) {
	if p.mode != ModePhases || (p.hasPhase && o.name != p.phase) {
		return
	}
	r := phaseRow{seq: o.seq, row: table.ObservationPhase{ArtifactID: proc.artifact, Phase: o.name, PID: proc.pid,
		StartTS: o.start, Closed: end != nil, StartLine: o.line, Depth: int64(depth)}}
	if end != nil {
		r.dur = *end - o.start
		r.row.EndTS = table.Some(*end)
		r.row.Duration = table.Some(float64(r.dur) / 1e9)
	}
	p.phases.Add(r)
}

func (p *projector) Finish(w projection.Emitter) error {
	var unclosed int64
	for proc, stack := range p.open {
		for depth, o := range stack {
			unclosed++
			p.phaseRow(proc, o, depth, nil)
		}
	}
	schema, ev := table.ObservationSeries.Schema, evidence.Derived
	switch p.mode {
	case ModeRaw:
		schema, ev = table.ObservationRawRecords.Schema, evidence.Observed // as the workload wrote them
	case ModePhases:
		schema = table.ObservationPhases.Schema
	}
	res, err := projection.Begin(w, p.Header(schema, "", ev, p.args))
	if err != nil {
		return err
	}
	var observed int64
	var trunc *evidence.Truncation
	switch p.mode {
	case ModeRaw:
		for _, r := range p.raw.Sorted() {
			if err := res.Row(&r.rec, r.artifact); err != nil {
				return err
			}
		}
		observed, trunc = p.raw.Observed(), p.raw.Truncation()
	case ModePhases:
		for _, r := range p.phases.Sorted() {
			if err := res.Row(&r.row, ""); err != nil {
				return err
			}
		}
		observed, trunc = p.phases.Observed(), p.phases.Truncation()
	default:
		top := projection.NewTopN(p.top, func(a, b *series) bool { return compareSeries(a.key, b.key) < 0 })
		for _, s := range p.series {
			top.Add(s)
		}
		for _, s := range top.Sorted() {
			if err := res.Row(s.row(), ""); err != nil {
				return err
			}
		}
		observed, trunc = top.Observed(), top.Truncation()
	}
	sum := p.Summarize(observed, trunc)
	sum.Metrics["observations"] = evidence.Metric{Value: p.records}
	sum.Metrics["unclosed_phases"] = evidence.Metric{Value: unclosed}
	sum.Metrics["unmatched_phase_ends"] = evidence.Metric{Value: p.unmatched}
	sum.Metrics["artifacts"] = evidence.Metric{Value: int64(len(p.Artifacts()))}
	if unclosed > 0 {
		sum.Limit(fmt.Sprintf("%d phase(s) started and never ended; their durations are unknown", unclosed))
	}
	if p.unmatched > 0 {
		sum.Limit(fmt.Sprintf("%d phase end(s) match no open phase of the same process", p.unmatched))
	}
	return res.End(sum)
}

func compareSeries(a, b seriesKey) int {
	return cmp.Or(
		strings.Compare(a.name, b.name),
		cmpBool(a.hasPhase, b.hasPhase), strings.Compare(a.phase, b.phase),
		cmpBool(a.hasUnit, b.hasUnit), strings.Compare(a.unit, b.unit),
		cmp.Compare(a.pid, b.pid),
		strings.Compare(a.artifact, b.artifact),
	)
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

func (s *series) row() *table.Series {
	k := s.key
	r := &table.Series{ArtifactID: k.artifact, Name: k.name, PID: k.pid, Count: s.count, NumericCount: s.numeric,
		FirstTS: s.first, LastTS: s.last, LastValue: s.lastValue}
	if k.hasPhase {
		r.Phase = table.Some(k.phase)
	}
	if k.hasUnit {
		r.Unit = table.Some(k.unit)
	}
	if s.numeric > 0 {
		r.Sum, r.Min, r.Max, r.Mean = table.Some(s.sum), table.Some(s.min), table.Some(s.max), table.Some(s.sum/float64(s.numeric))
	}
	return r
}
