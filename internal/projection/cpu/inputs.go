package cpu

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// MaxProfiles bounds how many profiles rank together.
const MaxProfiles = 32

// profile is what a CPU projection keeps of one admitted table.
type profile struct {
	factor float64 // converts the table's weights to the result unit
	// lines: the table's frames are the source lines samples were on
	// (table.SampledLines), not functions.
	lines bool
	// What the rows of the selected series tell, for a table whose
	// summary gives no total to take: their self weight, in the result
	// unit, and the series themselves.
	self   float64
	series map[[2]table.Null[string]]bool
}

// seen records a row of the selected series.
func (x *profile) seen(thread, process table.Null[string], self float64) {
	x.self += self
	if x.series == nil {
		x.series = map[[2]table.Null[string]]bool{}
	}
	x.series[[2]table.Null[string]{thread, process}] = true
}

// profiles admits the tables of a CPU projection: weights of one
// dimension, one format, at most MaxProfiles profiles.
type profiles struct {
	projection.Inputs[profile]
	weights []string // the schema's weight columns
	unit    string   // the result unit
	// fallback says what a table's total is when its summary gives none.
	fallback string
}

func newProfiles(s *table.Schema, weights ...string) profiles {
	return newProfilesOf([]*table.Schema{s}, weights...)
}

// newProfilesOf is newProfiles for a projection that reads tables of
// several schemas with the same weight columns.
func newProfilesOf(reads []*table.Schema, weights ...string) profiles {
	p := profiles{Inputs: projection.NewInputs[profile](reads...), weights: weights,
		fallback: "the self weight of its selected frames; samples with empty stacks are not in it"}
	p.Bound(projection.ArtifactBound{Name: "max_profiles", Max: MaxProfiles, Unit: "profiles"})
	return p
}

// Table implements Projector's Table: it checks a table header before its
// rows: its weight columns share one unit, of the dimension of the tables
// admitted before, and its format is theirs.
func (p *profiles) Table(t *evidence.Table, caps formats.Caps) error {
	if err := p.Check(t); err != nil {
		return err
	}
	var tu string
	for _, name := range p.weights {
		c, ok := t.Column(name)
		if !ok {
			return evidence.Failf(evidence.CodeInvalidArgument, "table %s (%s) has no column %s", t.ID, t.Name, name)
		}
		if tu == "" {
			tu = c.Unit
		} else if c.Unit != tu {
			return evidence.Failf(evidence.CodeInvalidArgument, "table %s mixes weight units %s and %s", t.ID, tu, c.Unit)
		}
	}
	u, err := unit.Lookup(tu)
	if err != nil {
		return evidence.Wrap(evidence.CodeInvalidArgument, err, "table %s", t.ID)
	}
	if p.unit != "" {
		if _, err := unit.Common(p.unit, tu); err != nil {
			return evidence.Wrap(evidence.CodeInvalidArgument, err, "table %s", t.ID)
		}
	}
	if f := p.Format(); len(p.List()) > 0 && t.Format != f {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("profiles of different formats (%s, %s) do not rank together; rank each format separately", f, t.Format),
			Details: evidence.Object{"formats": []string{f, t.Format}}}
	}
	if _, err := p.Admit(t, caps, profile{factor: u.Factor, lines: table.SampledLines(t)}); err != nil {
		return err
	}
	if p.unit == "" {
		p.unit = u.Output
	}
	return nil
}

// population is the selected series of the admitted tables: their total
// weight in the result unit (the denominator of every share), how many
// profiles they are, and how each total was found when a table's
// summary could not give it.
type population struct {
	total    float64
	profiles int
	limits   []string
	pooled   bool // samples of several events are pooled: the result is incomplete
}

// population takes each table's total from its decoder, samples with
// empty stacks included: the summary's total_weight, or, when c selects
// a thread or process, the totals of the selected series the summary
// lists (table.CoverageProfiles). A table whose summary gives neither
// counts the self weight of its selected rows, and the result says so.
func (p *profiles) population(c *common) population {
	var pop population
	filtered := c.thread != "" || c.process != ""
	for _, x := range p.List() {
		var cov evidence.Object
		var total *evidence.Metric
		if x.Summary != nil {
			cov = x.Summary.Coverage
			if m, ok := x.Summary.Metrics[table.MetricTotalWeight]; ok {
				total = &m
			}
		}
		if series, ok := table.SeriesTotals(cov); ok {
			for _, st := range series {
				if c.series(st.Thread, st.Process) {
					pop.total += st.TotalWeight * x.State.factor
					pop.profiles++
				}
			}
			continue
		}
		if v, ok := evidence.AsFloat(metricValue(total)); ok && !filtered {
			pop.total += v * x.State.factor
			pop.profiles += max(1, len(x.State.series))
			continue
		}
		pop.total += x.State.self
		pop.profiles += len(x.State.series)
		if len(x.State.series) == 0 {
			continue
		}
		why := "its summary has no total_weight"
		if filtered {
			why = "its decoder lists no total per thread or process"
		}
		pop.limits = append(pop.limits, fmt.Sprintf("table %s: %s, so its total is %s", x.Table.ID, why, p.fallback))
	}
	if l := p.pooledEvents(); l != "" {
		pop.limits = append(pop.limits, l)
		pop.pooled = true
	}
	if l := p.pooledSampleTypes(); l != "" {
		pop.limits = append(pop.limits, l)
		pop.pooled = true
	}
	return pop
}

// pooledSampleTypes says when the admitted tables weigh different sample
// types of one unit (a pprof CPU profile's cpu and a mutex profile's
// delay, both nanoseconds; summary coverage sample_type): their weights
// are pooled, though they measure different things.
func (p *profiles) pooledSampleTypes() string {
	var types []string
	for _, x := range p.List() {
		if x.Summary == nil {
			continue
		}
		if st, _ := x.Summary.Coverage["sample_type"].(string); st != "" && !slices.Contains(types, st) {
			types = append(types, st)
		}
	}
	if len(types) < 2 {
		return ""
	}
	return fmt.Sprintf("the profiles weigh different sample types (%s) and they are pooled: shares are of all of them together; rank each sample type alone (--option sample_index)",
		strings.Join(types, ", "))
}

// pooledEvents says when the admitted tables of one artifact hold
// different sampled events (perf record -e a,b writes one table per
// event): their samples are pooled, so a frame ranks once per event and
// every share is of all events together. Selecting one event is not an
// argument yet, and perf script has no event filter: record one.
func (p *profiles) pooledEvents() string {
	events := map[string][]string{} // artifact → events, in table order
	var multi []string
	for _, x := range p.List() {
		if x.Summary == nil || len(x.Table.ArtifactIDs) != 1 {
			continue
		}
		ev, _ := x.Summary.Coverage["event"].(string)
		a := x.Table.ArtifactIDs[0]
		if ev == "" || slices.Contains(events[a], ev) {
			continue
		}
		events[a] = append(events[a], ev)
		if len(events[a]) == 2 {
			multi = append(multi, a)
		}
	}
	if len(multi) == 0 {
		return ""
	}
	return fmt.Sprintf("the profile holds samples of %d events (%s) and they are pooled: each frame ranks once per event and shares are of all events' samples; to rank one event, record it alone (perf record -e %s)",
		len(events[multi[0]]), strings.Join(events[multi[0]], ", "), strings.SplitN(events[multi[0]][0], ":", 2)[0])
}

func metricValue(m *evidence.Metric) any {
	if m == nil {
		return nil
	}
	return m.Value
}

// summary is the result summary with the CPU metrics of the selected
// population.
func (p *profiles) summary(pop population, m *misses, observed int64, trunc *evidence.Truncation) *evidence.Summary {
	s := p.Summarize(observed, trunc)
	for _, l := range m.limitations(observed) {
		s.Limit(l)
	}
	s.Metrics["profile_count"] = evidence.Metric{Value: pop.profiles, Unit: "count"}
	s.Metrics[table.MetricTotalWeight] = evidence.Metric{Value: pop.total, Unit: p.unit}
	for _, l := range pop.limits {
		s.Limit(l)
	}
	if pop.pooled {
		s.Complete = false
	}
	return s
}

// identity is a row's identity in a ranking: the artifact first, so the
// order of equal weights does not depend on the order of the inputs.
type identity struct {
	artifact        string
	table           int
	a, b            string // frame id; caller and callee ids
	thread, process table.Null[string]
}

func compareIdentity(x, y *identity) int {
	return cmp.Or(strings.Compare(x.artifact, y.artifact), strings.Compare(x.a, y.a), strings.Compare(x.b, y.b),
		compareNull(x.thread, y.thread), compareNull(x.process, y.process), cmp.Compare(x.table, y.table))
}

// compareNull orders null first.
func compareNull(x, y table.Null[string]) int {
	if x.Valid != y.Valid {
		if x.Valid {
			return 1
		}
		return -1
	}
	return strings.Compare(x.V, y.V)
}
