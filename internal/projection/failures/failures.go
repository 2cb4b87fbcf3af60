// Package failures is the `failures` projection behind summarize_failures:
// pytest outcomes, and beside them the failure identities of
// compute-sanitizer reports and kernel validation receipts (findings.go).
//
// It reads every pytest.outcomes row to count outcomes, but projects only
// failure identities: tests that failed, errored, crashed, were
// interrupted or never ran, and collectors that failed. Passing and skipped
// tests and successful collection never consume the row budget. Filters
// apply before the bound, so rows_observed and truncation describe the
// selected failures, written as pytest.failures rows.
//
// It imports projection, table, param and evidence.
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

// Name is the projection's name.
const Name = "failures"

// Selectable outcomes, in rank order: a failed collector first (it hides
// every test it would have collected), then crashes, interruptions, errors
// and failures, and last the tests that never ran, so that a long tail of
// unexecuted tests after an interruption cannot crowd out real failures.
var rankOrder = []string{"collector-error", table.OutcomeCrashed, table.OutcomeInterrupted,
	table.OutcomeError, table.OutcomeFailed, table.OutcomeUnexecuted}

var selectable = []string{table.OutcomeFailed, table.OutcomeError, table.OutcomeCrashed,
	table.OutcomeInterrupted, table.OutcomeUnexecuted}

// reads are the tables whose failures the projection lists.
var reads = []*table.Schema{table.PytestOutcomes.Schema, table.SanitizerFindings.Schema, table.KernelValidations.Schema}

// Spec is the failures projection.
var Spec = &projection.Spec{
	Name:   Name,
	Tables: reads,
	Params: []param.Param{
		{Name: "top", Type: param.Int, Default: int64(50), Min: param.F(1), Max: param.F(10000),
			Doc: "most failure identities to return; ranked collection errors, crashes, interruptions, errors, failures, then unexecuted tests, each in run order"},
		{Name: "nodeid_glob", Type: param.String,
			Doc: "keep node ids matching this pattern: * matches any text (including / and ::), ? one character, everything else (brackets included) is literal; a sanitizer identity is tool::kind::kernel at file:line"},
		{Name: "outcomes", Type: param.StringList,
			Doc: "keep only these outcomes: failed, error, crashed, interrupted, unexecuted (default: all)"},
	},
	New: New,
}

// item is a selected failure: a copy of its row (decoders may reuse
// theirs), its artifact and its place in the ranking.
type item struct {
	row      table.PytestOutcome
	artifact string
	rank     int
	seq      int64
}

type projector struct {
	// The admitted tables, each with its schema's name; Summary is theirs.
	projection.Inputs[string]

	args     evidence.Object
	glob     *regexp.Regexp
	outcomes []string
	top      *projection.TopN[item]
	counts   map[string]int64
	seq      int64
	found    findings // sanitizer and kernel-validation identities
}

// New starts a failures projection with validated arguments.
func New(args evidence.Object, given map[string]bool) (projection.Projector, error) {
	p := &projector{Inputs: projection.NewInputs[string](reads...), args: args, counts: map[string]int64{}, outcomes: selectable,
		found: findings{seen: map[string]bool{}}}
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

// Table admits a table, remembering which kind of failures it holds.
func (p *projector) Table(t *evidence.Table, caps formats.Caps) error {
	if _, err := p.Admit(t, caps, t.Name); err != nil {
		return err
	}
	switch t.Name {
	case table.SanitizerFindings.Name:
		p.found.seen[KindSanitizer] = true
	case table.KernelValidations.Name:
		p.found.seen[KindKernelValidation] = true
	}
	return nil
}

func (p *projector) Row(t *evidence.Table, row any) error {
	if t.Name == table.SanitizerFindings.Name {
		s, _, artifact, err := projection.Read(&p.Inputs, table.SanitizerFindings, t, row)
		if err != nil {
			return err
		}
		p.sanitizer(s, artifact)
		return nil
	}
	if t.Name == table.KernelValidations.Name {
		k, _, artifact, err := projection.Read(&p.Inputs, table.KernelValidations, t, row)
		if err != nil {
			return err
		}
		p.validation(k, artifact)
		return nil
	}
	o, _, artifact, err := projection.Read(&p.Inputs, table.PytestOutcomes, t, row)
	if err != nil {
		return err
	}
	key := o.Outcome
	switch o.Kind {
	case table.KindTest:
		p.counts[o.Outcome]++
	case table.KindCollector:
		switch o.Outcome {
		case table.OutcomeError:
			p.counts[table.MetricCollectionErrors]++
			key = "collector-error"
		case table.OutcomeSkipped:
			p.counts[table.MetricCollectionSkipped]++
		}
		if o.Outcome != table.OutcomeError {
			return nil // successful and skipped collection is never a row
		}
	default:
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s: row kind %q is neither test nor collector", t.ID, o.Kind)
	}
	rank := slices.Index(rankOrder, key)
	if rank < 0 || !slices.Contains(p.outcomes, o.Outcome) {
		return nil
	}
	if p.glob != nil && !p.glob.MatchString(o.NodeID) {
		return nil
	}
	p.seq++
	p.top.Add(item{row: *o, artifact: artifact, rank: rank, seq: p.seq})
	return nil
}

func (p *projector) Finish(w projection.Emitter) error {
	p.finishFindings()
	res, err := projection.Begin(w, p.Header(table.PytestFailures.Schema, "", evidence.Derived, p.args))
	if err != nil {
		return err
	}
	for _, it := range p.top.Sorted() {
		if err := res.Row(&it.row, it.artifact); err != nil {
			return err
		}
	}
	return res.End(p.summary())
}

// summary pools the inputs' counts and session facts. The evidence is
// complete only when every input is: its session finished, was not
// interrupted, lost no worker and was not truncated.
func (p *projector) summary() *evidence.Summary {
	s := p.Summarize(p.top.Observed(), p.top.Truncation())
	p.summarizeFindings(s)
	if len(p.found.seen) > 0 && !slices.ContainsFunc(p.List(), func(in *projection.Input[string]) bool { return in.State == table.PytestOutcomes.Name }) {
		// No pytest session was read: it has no facts to state.
		s.Metrics[table.MetricArtifacts] = table.PytestMetric(table.MetricArtifacts, int64(len(p.Artifacts())))
		return s
	}
	for _, o := range []string{table.OutcomePassed, table.OutcomeFailed, table.OutcomeError, table.OutcomeSkipped,
		table.OutcomeXFailed, table.OutcomeXPassed, table.OutcomeCrashed, table.OutcomeInterrupted,
		table.OutcomeUnexecuted, table.MetricCollectionErrors, table.MetricCollectionSkipped} {
		s.Metrics[o] = table.PytestMetric(o, p.counts[o])
	}
	sums := []string{table.MetricCollected, table.MetricDeselected, table.MetricCrashedWorkers,
		table.MetricWorkers, table.MetricInternalErrors, table.MetricPytestPassed}
	totals := map[string]int64{}
	unknown := map[string]bool{}
	finished, interrupted := true, false
	var exits []int64
	var inputs []*projection.Input[string] // pytest's: the session facts are theirs
	for _, in := range p.List() {
		if in.State == table.PytestOutcomes.Name {
			inputs = append(inputs, in)
		}
	}
	for _, in := range inputs {
		is := in.Summary
		if is == nil {
			// The base says the table was cut; its session facts are unknown.
			finished = false
			unknown[table.MetricExitStatus] = true
			for _, m := range sums {
				unknown[m] = true
			}
			continue
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
			s.Metrics[m] = table.PytestMetric(m, nil)
		} else {
			s.Metrics[m] = table.PytestMetric(m, totals[m])
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
	s.Metrics[table.MetricExitStatus] = table.PytestMetric(table.MetricExitStatus, exit)
	// A session's duration is one session's: several inputs may have run
	// side by side, so their durations do not add up.
	var secs any
	if len(inputs) == 1 && inputs[0].Summary != nil {
		secs = inputs[0].Summary.Metrics[table.MetricSessionSeconds].Value
	}
	s.Metrics[table.MetricSessionSeconds] = table.PytestMetric(table.MetricSessionSeconds, secs)
	s.Metrics[table.MetricSessionFinished] = table.PytestMetric(table.MetricSessionFinished, finished && len(inputs) > 0)
	s.Metrics[table.MetricSessionInterrupt] = table.PytestMetric(table.MetricSessionInterrupt, interrupted)
	s.Metrics[table.MetricArtifacts] = table.PytestMetric(table.MetricArtifacts, int64(len(p.Artifacts())))
	return s
}
