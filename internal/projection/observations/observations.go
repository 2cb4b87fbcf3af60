// Package observations is the `observations` projection behind
// summarize_observations. It reads observations.records and, by mode,
// returns per-series aggregates, the raw observations, or the workload's
// phases with their durations. Filters (name pattern, phase) apply before
// the row bound.
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
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// Names of the projection, its modes and result tables.
const (
	Name            = "observations"
	ModeAggregate   = "aggregate"
	ModeRaw         = "raw"
	ModePhases      = "phases"
	TableAggregates = "observations.aggregates"
	TablePhases     = "observations.phases"
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

// AggregateColumns are the columns of observations.aggregates.
func AggregateColumns() []evidence.Column {
	return []evidence.Column{
		{Name: "artifact_id", Type: evidence.TypeString},
		{Name: "name", Type: evidence.TypeString},
		{Name: "phase", Type: evidence.TypeString, Description: "null when recorded outside any phase"},
		{Name: "unit", Type: evidence.TypeString, Description: "time and memory units normalized (ms becomes s, KiB becomes bytes); any other unit as declared; null when none"},
		{Name: "pid", Type: evidence.TypeInt},
		{Name: "count", Type: evidence.TypeInt, Description: "observations in the series"},
		{Name: "numeric_count", Type: evidence.TypeInt, Description: "observations whose value is a number"},
		{Name: "sum", Type: evidence.TypeDouble, Description: "sum of numeric values in unit, as a double; null without numbers"},
		{Name: "min", Type: evidence.TypeDouble},
		{Name: "max", Type: evidence.TypeDouble},
		{Name: "mean", Type: evidence.TypeDouble},
		{Name: "first_ts", Type: evidence.TypeInt, Unit: "ns"},
		{Name: "last_ts", Type: evidence.TypeInt, Unit: "ns"},
		{Name: "last_value", Type: evidence.TypeJSON, Description: "the last value exactly as recorded, in its recorded unit"},
	}
}

// PhaseColumns are the columns of observations.phases.
func PhaseColumns() []evidence.Column {
	return []evidence.Column{
		{Name: "artifact_id", Type: evidence.TypeString},
		{Name: "phase", Type: evidence.TypeString},
		{Name: "pid", Type: evidence.TypeInt},
		{Name: "start_ts", Type: evidence.TypeInt, Unit: "ns"},
		{Name: "end_ts", Type: evidence.TypeInt, Unit: "ns", Description: "null when the phase never ended"},
		{Name: "duration", Type: evidence.TypeDouble, Unit: "s", Description: "end_ts - start_ts; null when the phase never ended"},
		{Name: "closed", Type: evidence.TypeBool},
		{Name: "start_line", Type: evidence.TypeInt},
		{Name: "depth", Type: evidence.TypeInt, Description: "phases of the same process open around it"},
	}
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
	values evidence.Object
	closed bool
	dur    int64 // ns
	start  int64
	seq    int64
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

type input struct {
	table   *evidence.Table
	summary *evidence.Summary
}

type rawRow struct {
	values evidence.Object
	seq    int64
}

type projector struct {
	args      evidence.Object
	mode      string
	glob      *regexp.Regexp
	phase     string
	hasPhase  bool
	top       int
	inputs    []*input
	byID      map[string]*input
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
	p := &projector{args: args, byID: map[string]*input{}, series: map[seriesKey]*series{}, open: map[procKey][]openPhase{}}
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
		if a.closed != b.closed {
			return !a.closed
		}
		if a.dur != b.dur {
			return a.dur > b.dur
		}
		return a.seq < b.seq
	})
	return p, nil
}

func (p *projector) Table(t *evidence.Table, _ formats.Caps) error {
	if t.Name != table.ObservationRecords.Name {
		return &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
			Message: fmt.Sprintf("projection %s reads %s tables, not %s", Name, table.ObservationRecords.Name, t.Name)}
	}
	if _, dup := p.byID[t.ID]; dup {
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s was fed twice", t.ID)
	}
	in := &input{table: t}
	p.inputs = append(p.inputs, in)
	p.byID[t.ID] = in
	return nil
}

func str(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

func (p *projector) Row(t *evidence.Table, row any) error {
	v, err := projection.Values(t, row)
	if err != nil {
		return err
	}
	if p.byID[t.ID] == nil {
		return evidence.Failf(evidence.CodeInternal, "row of a table that was not admitted: %s", t.ID)
	}
	p.seq++
	kind, _ := str(v["kind"])
	art, _ := str(v["artifact_id"])
	pid, _ := evidence.AsInt(v["pid"])
	ts, _ := evidence.AsInt(v["ts"])
	line, _ := evidence.AsInt(v["line"])
	phase, hasPhase := str(v["phase"])
	proc := procKey{art, pid}
	switch kind {
	case "phase_start":
		p.open[proc] = append(p.open[proc], openPhase{name: phase, start: ts, line: line, seq: p.seq})
		return nil
	case "phase_end":
		stack := p.open[proc]
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].name == phase {
				p.phaseRow(proc, stack[i], i, &ts)
				p.open[proc] = append(stack[:i], stack[i+1:]...)
				return nil
			}
		}
		p.unmatched++
		return nil
	case "observation":
	default:
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s: record kind %q", t.ID, kind)
	}
	p.records++
	name, _ := str(v["name"])
	if p.glob != nil && !p.glob.MatchString(name) {
		return nil
	}
	if p.hasPhase && (!hasPhase || phase != p.phase) {
		return nil
	}
	switch p.mode {
	case ModeRaw:
		p.raw.Add(rawRow{values: v, seq: p.seq})
	case ModeAggregate:
		p.aggregate(art, name, phase, hasPhase, pid, ts, v)
	}
	return nil
}

func (p *projector) aggregate(art, name, phase string, hasPhase bool, pid, ts int64, v evidence.Object) {
	u, hasUnit := str(v["unit"])
	x, numeric := number(v["value"])
	if hasUnit {
		// Time and memory units pool in one output unit (ms and s become
		// s); any other unit is an exact label, so "count" never turns
		// into another count's unit.
		if known, err := unit.Lookup(u); err == nil && (known.Dimension == unit.Time || known.Dimension == unit.Memory) {
			x *= known.Factor
			u = known.Output
		}
	}
	k := seriesKey{artifact: art, name: name, phase: phase, hasPhase: hasPhase, unit: u, hasUnit: hasUnit, pid: pid}
	s := p.series[k]
	if s == nil {
		s = &series{key: k, first: ts, min: math.Inf(1), max: math.Inf(-1)}
		p.series[k] = s
	}
	s.count++
	s.last = ts
	s.lastValue = v["value"]
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
	values := evidence.Object{"artifact_id": proc.artifact, "phase": o.name, "pid": proc.pid, "start_ts": o.start,
		"end_ts": nil, "duration": nil, "closed": end != nil, "start_line": o.line, "depth": int64(depth)}
	var dur int64
	if end != nil {
		dur = *end - o.start
		values["end_ts"] = *end
		values["duration"] = float64(dur) / 1e9
	}
	p.phases.Add(phaseRow{values: values, closed: end != nil, dur: dur, start: o.start, seq: o.seq})
}

func (p *projector) Summary(t *evidence.Table, s *evidence.Summary) error {
	in := p.byID[t.ID]
	if in == nil {
		return evidence.Failf(evidence.CodeInternal, "summary of a table that was not admitted: %s", t.ID)
	}
	in.summary = s
	return nil
}

func (p *projector) Finish(w projection.Emitter) error {
	var unclosed int64
	for proc, stack := range p.open {
		for depth, o := range stack {
			unclosed++
			p.phaseRow(proc, o, depth, nil)
		}
	}
	header := &evidence.Table{Projection: Name, Format: "observations", Evidence: evidence.Derived, Arguments: p.args}
	for _, in := range p.inputs {
		header.ArtifactIDs = append(header.ArtifactIDs, in.table.ArtifactIDs...)
	}
	var rows []evidence.Object
	var observed int64
	var trunc *evidence.Truncation
	switch p.mode {
	case ModeRaw:
		header.Name, header.Columns, header.Evidence = table.ObservationRecords.Name, table.ObservationRecords.EvidenceColumns(""), evidence.Observed
		for _, r := range p.raw.Sorted() {
			rows = append(rows, r.values)
		}
		observed, trunc = p.raw.Observed(), p.raw.Truncation("row_limit")
	case ModePhases:
		header.Name, header.Columns = TablePhases, PhaseColumns()
		for _, r := range p.phases.Sorted() {
			rows = append(rows, r.values)
		}
		observed, trunc = p.phases.Observed(), p.phases.Truncation("row_limit")
	default:
		header.Name, header.Columns = TableAggregates, AggregateColumns()
		top := projection.NewTopN(p.top, func(a, b *series) bool { return compareSeries(a.key, b.key) < 0 })
		for _, s := range p.series {
			top.Add(s)
		}
		for _, s := range top.Sorted() {
			rows = append(rows, s.row())
		}
		observed, trunc = top.Observed(), top.Truncation("row_limit")
	}
	if err := w.Begin(header); err != nil {
		return err
	}
	for _, r := range rows {
		if err := w.Row(r); err != nil {
			return err
		}
	}
	sum := &evidence.Summary{RowsObserved: observed, RowsEmitted: int64(len(rows)), Truncation: trunc,
		Complete: len(p.inputs) > 0 && trunc == nil, Metrics: map[string]evidence.Metric{
			"observations":         {Value: p.records},
			"unclosed_phases":      {Value: unclosed},
			"unmatched_phase_ends": {Value: p.unmatched},
			"artifacts":            {Value: int64(len(p.inputs))},
		}}
	if len(p.inputs) == 0 {
		sum.Limit("no observations.records table was read")
	}
	for _, in := range p.inputs {
		if in.summary == nil {
			sum.Complete = false
			sum.Limit(fmt.Sprintf("table %s ended without its summary: the decode was cut off", in.table.ID))
			continue
		}
		if !in.summary.Complete {
			sum.Complete = false
		}
		for _, l := range in.summary.Limitations {
			sum.Limit(l)
		}
	}
	if unclosed > 0 {
		sum.Limit(fmt.Sprintf("%d phase(s) started and never ended; their durations are unknown", unclosed))
	}
	if p.unmatched > 0 {
		sum.Limit(fmt.Sprintf("%d phase end(s) match no open phase of the same process", p.unmatched))
	}
	return w.End(sum)
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

func (s *series) row() evidence.Object {
	k := s.key
	r := evidence.Object{"artifact_id": k.artifact, "name": k.name, "phase": nil, "unit": nil, "pid": k.pid,
		"count": s.count, "numeric_count": s.numeric, "sum": nil, "min": nil, "max": nil, "mean": nil,
		"first_ts": s.first, "last_ts": s.last, "last_value": s.lastValue}
	if k.hasPhase {
		r["phase"] = k.phase
	}
	if k.hasUnit {
		r["unit"] = k.unit
	}
	if s.numeric > 0 {
		r["sum"], r["min"], r["max"], r["mean"] = s.sum, s.min, s.max, s.sum/float64(s.numeric)
	}
	return r
}
