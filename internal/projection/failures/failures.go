// Package failures is the `failures` projection behind summarize_failures.
//
// It reads every pytest.outcomes row to count outcomes, but projects only
// failure identities: tests that failed, errored, crashed, were
// interrupted or never ran, and collectors that failed. Passing and skipped
// tests and successful collection never consume the row budget. Filters
// apply before the bound, so rows_observed and truncation describe the
// selected failures.
package failures

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/table"
)

// Names of the projection and its result table.
const (
	Name  = "failures"
	Table = "pytest.failures"
)

// Selectable outcomes, in rank order: a failed collector first (it hides
// every test it would have collected), then crashes, interruptions, errors
// and failures, and last the tests that never ran, so that a long tail of
// unexecuted tests after an interruption cannot crowd out real failures.
var rankOrder = []string{"collector-error", table.OutcomeCrashed, table.OutcomeInterrupted,
	table.OutcomeError, table.OutcomeFailed, table.OutcomeUnexecuted}

var selectable = []string{table.OutcomeFailed, table.OutcomeError, table.OutcomeCrashed,
	table.OutcomeInterrupted, table.OutcomeUnexecuted}

// Spec is the failures projection.
var Spec = &projection.Spec{
	Name:   Name,
	Tables: []*table.Schema{table.PytestOutcomes.Schema},
	Params: []param.Param{
		{Name: "top", Type: param.Int, Default: int64(50), Min: param.F(1), Max: param.F(10000),
			Doc: "most failure identities to return; ranked collection errors, crashes, interruptions, errors, failures, then unexecuted tests, each in run order"},
		{Name: "nodeid_glob", Type: param.String,
			Doc: "keep node ids matching this pattern: * matches any text (including / and ::), ? one character, everything else (brackets included) is literal"},
		{Name: "outcomes", Type: param.StringList,
			Doc: "keep only these outcomes: failed, error, crashed, interrupted, unexecuted (default: all)"},
	},
	New: New,
}

// Columns of the result table: those of pytest.outcomes.
func Columns() []evidence.Column { return table.PytestOutcomes.EvidenceColumns("") }

type item struct {
	values evidence.Object
	rank   int
	seq    int64
}

type input struct {
	table   *evidence.Table
	summary *evidence.Summary
}

type projector struct {
	args     evidence.Object
	glob     *regexp.Regexp
	outcomes []string
	top      *projection.TopN[item]
	inputs   []*input
	byID     map[string]*input
	counts   map[string]int64
	seq      int64
}

// New starts a failures projection with validated arguments.
func New(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	p := &projector{args: args, byID: map[string]*input{}, counts: map[string]int64{}, outcomes: selectable}
	top, ok := evidence.AsInt(args["top"])
	if !ok {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "argument top must be an integer")
	}
	if g, ok := args["nodeid_glob"].(string); ok {
		re, err := projection.NameGlob(g)
		if err != nil {
			return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "argument nodeid_glob")
		}
		p.glob = re
	}
	if list, ok := args["outcomes"].([]string); ok {
		for _, o := range list {
			if !slices.Contains(selectable, o) {
				return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
					Message:  fmt.Sprintf("argument outcomes: %q is not a failure outcome (choose from %s); passing and skipped tests are counted, never listed", o, strings.Join(selectable, ", ")),
					Location: evidence.Location{Field: "outcomes"}}
			}
		}
		if len(list) > 0 {
			p.outcomes = list
		}
	}
	p.top = projection.NewTopN(int(top), func(a, b item) bool {
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		return a.seq < b.seq
	})
	return p, nil
}

func (p *projector) Table(t *evidence.Table, _ formats.Caps) error {
	if t.Name != table.PytestOutcomes.Name {
		return &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
			Message: fmt.Sprintf("projection %s reads %s tables, not %s", Name, table.PytestOutcomes.Name, t.Name)}
	}
	for _, c := range []string{"nodeid", "kind", "outcome"} {
		if _, ok := t.Column(c); !ok {
			return evidence.Failf(evidence.CodeInvalidArgument, "table %s lacks column %s", t.ID, c)
		}
	}
	if _, dup := p.byID[t.ID]; dup {
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s was fed twice", t.ID)
	}
	in := &input{table: t}
	p.inputs = append(p.inputs, in)
	p.byID[t.ID] = in
	return nil
}

func (p *projector) Row(t *evidence.Table, row any) error {
	values, err := projection.Values(t, row)
	if err != nil {
		return err
	}
	if p.byID[t.ID] == nil {
		return evidence.Failf(evidence.CodeInternal, "row of a table that was not admitted: %s", t.ID)
	}
	outcome, _ := values["outcome"].(string)
	kind, _ := values["kind"].(string)
	nodeid, _ := values["nodeid"].(string)
	key := outcome
	switch kind {
	case table.KindTest:
		p.counts[outcome]++
	case table.KindCollector:
		switch outcome {
		case table.OutcomeError:
			p.counts[table.MetricCollectionErrors]++
			key = "collector-error"
		case table.OutcomeSkipped:
			p.counts[table.MetricCollectionSkipped]++
		}
		if outcome != table.OutcomeError {
			return nil // successful and skipped collection is never a row
		}
	default:
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s: row kind %q is neither test nor collector", t.ID, kind)
	}
	rank := slices.Index(rankOrder, key)
	if rank < 0 || !slices.Contains(p.outcomes, outcome) {
		return nil
	}
	if p.glob != nil && !p.glob.MatchString(nodeid) {
		return nil
	}
	out := make(evidence.Object, len(values))
	for _, c := range Columns() {
		out[c.Name] = values[c.Name]
	}
	p.seq++
	p.top.Add(item{values: out, rank: rank, seq: p.seq})
	return nil
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
	var ids []string
	for _, in := range p.inputs {
		ids = append(ids, in.table.ArtifactIDs...)
	}
	header := &evidence.Table{
		Name:        Table,
		Projection:  Name,
		Format:      "pytest-events",
		Columns:     Columns(),
		Evidence:    evidence.Derived,
		ArtifactIDs: ids,
		Arguments:   p.args,
	}
	if err := w.Begin(header); err != nil {
		return err
	}
	kept := p.top.Sorted()
	for _, it := range kept {
		if err := w.Row(it.values); err != nil {
			return err
		}
	}
	sum := p.summary()
	sum.RowsObserved = p.top.Observed()
	sum.RowsEmitted = int64(len(kept))
	sum.Truncation = p.top.Truncation("row_limit")
	if sum.Truncation != nil {
		sum.Complete = false
	}
	return w.End(sum)
}

// summary pools the inputs' counts and session facts. The evidence is
// complete only when every input is: its session finished, was not
// interrupted, lost no worker and was not truncated.
func (p *projector) summary() *evidence.Summary {
	s := &evidence.Summary{Complete: len(p.inputs) > 0, Metrics: map[string]evidence.Metric{}}
	if len(p.inputs) == 0 {
		s.Limit("no pytest.outcomes table was read")
	}
	for _, o := range []string{table.OutcomePassed, table.OutcomeFailed, table.OutcomeError, table.OutcomeSkipped,
		table.OutcomeXFailed, table.OutcomeXPassed, table.OutcomeCrashed, table.OutcomeInterrupted,
		table.OutcomeUnexecuted, table.MetricCollectionErrors, table.MetricCollectionSkipped} {
		s.Metrics[o] = evidence.Metric{Value: p.counts[o]}
	}
	sums := []string{table.MetricCollected, table.MetricDeselected, table.MetricCrashedWorkers,
		table.MetricWorkers, table.MetricInternalErrors}
	totals := map[string]int64{}
	unknown := map[string]bool{}
	finished, interrupted := true, false
	var exits []int64
	for _, in := range p.inputs {
		is := in.summary
		if is == nil {
			s.Complete = false
			finished = false
			unknown[table.MetricExitStatus] = true
			s.Limit(fmt.Sprintf("table %s ended without its summary: the decode was cut off", in.table.ID))
			for _, m := range sums {
				unknown[m] = true
			}
			continue
		}
		if !is.Complete {
			s.Complete = false
		}
		for _, l := range is.Limitations {
			if len(p.inputs) > 1 {
				l = in.table.ID + ": " + l
			}
			s.Limit(l)
		}
		for _, m := range sums {
			n, ok := evidence.AsInt(is.Metrics[m].Value)
			if !ok {
				unknown[m] = true
			}
			totals[m] += n
		}
		if b, _ := is.Metrics[table.MetricSessionFinished].Value.(bool); !b {
			finished = false
		}
		if b, _ := is.Metrics[table.MetricSessionInterrupt].Value.(bool); b {
			interrupted = true
		}
		if e, ok := evidence.AsInt(is.Metrics[table.MetricExitStatus].Value); ok {
			exits = append(exits, e)
		} else {
			unknown[table.MetricExitStatus] = true
		}
	}
	for _, m := range sums {
		if unknown[m] {
			s.Metrics[m] = evidence.Metric{Value: nil}
		} else {
			s.Metrics[m] = evidence.Metric{Value: totals[m]}
		}
	}
	// One exit status describes the inputs only when they all agree.
	var exit any
	if !unknown[table.MetricExitStatus] && len(exits) > 0 {
		exit = exits[0]
		for _, e := range exits[1:] {
			if e != exits[0] {
				exit = nil
			}
		}
	}
	s.Metrics[table.MetricExitStatus] = evidence.Metric{Value: exit}
	s.Metrics[table.MetricSessionFinished] = evidence.Metric{Value: finished && len(p.inputs) > 0}
	s.Metrics[table.MetricSessionInterrupt] = evidence.Metric{Value: interrupted}
	s.Metrics["artifacts"] = evidence.Metric{Value: int64(len(p.inputs))}
	return s
}
