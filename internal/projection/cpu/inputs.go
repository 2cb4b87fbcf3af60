package cpu

import (
	"cmp"
	"fmt"
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
	total  float64 // self weight of every row, before selection, in the result unit
}

// profiles admits the tables of a CPU projection: weights of one
// dimension, one format, at most MaxProfiles profiles.
type profiles struct {
	projection.Inputs[profile]
	weights []string // the schema's weight columns
	unit    string   // the result unit
}

func newProfiles(s *table.Schema, weights ...string) profiles {
	p := profiles{Inputs: projection.NewInputs[profile](s), weights: weights}
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
	if _, err := p.Admit(t, caps, profile{factor: u.Factor}); err != nil {
		return err
	}
	if p.unit == "" {
		p.unit = u.Output
	}
	return nil
}

func (p *profiles) totalWeight() float64 {
	var t float64
	for _, x := range p.List() {
		t += x.State.total
	}
	return t
}

// summary is the result summary with the CPU metrics.
func (p *profiles) summary(observed int64, trunc *evidence.Truncation) *evidence.Summary {
	s := p.Summarize(observed, trunc)
	s.Metrics["profile_count"] = evidence.Metric{Value: len(p.Artifacts()), Unit: "count"}
	s.Metrics[table.MetricTotalWeight] = evidence.Metric{Value: p.totalWeight(), Unit: p.unit}
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
