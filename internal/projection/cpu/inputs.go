package cpu

import (
	"fmt"
	"slices"
	"sort"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/unit"
)

// RankerVersion identifies the projection code in result headers.
const RankerVersion = "1"

// input is one admitted table.
type input struct {
	t       *evidence.Table
	factor  float64 // converts the table's weights to the output unit
	total   float64 // sum of self weights of every row, before selection
	summary *evidence.Summary
}

// inputs admits tables for a CPU projection and keeps the facts its
// closing summary needs: units, profiles, totals and input completeness.
type inputs struct {
	args      evidence.Object
	unit      string
	format    string
	tables    []*input
	byID      map[string]*input
	artifacts []string
}

// admit checks a table header before its rows: weights must share one
// dimension, profiles must share one format, and at most MaxProfiles
// profiles rank together.
func (in *inputs) admit(t *evidence.Table, weightCols ...string) error {
	if in.byID == nil {
		in.byID = map[string]*input{}
	}
	if _, dup := in.byID[t.ID]; dup {
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s appears twice in the input", t.ID)
	}
	var tu string
	for _, name := range weightCols {
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
	if in.unit == "" {
		in.unit = u.Output
	} else if _, err := unit.Common(in.unit, tu); err != nil {
		return evidence.Wrap(evidence.CodeInvalidArgument, err, "table %s", t.ID)
	}
	if in.format == "" {
		in.format = t.Format
	} else if t.Format != in.format {
		return &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("profiles of different formats (%s, %s) do not rank together; rank each format separately", in.format, t.Format),
			Details: evidence.Object{"formats": []string{in.format, t.Format}}}
	}
	for _, a := range t.ArtifactIDs {
		if !slices.Contains(in.artifacts, a) {
			in.artifacts = append(in.artifacts, a)
		}
	}
	if len(in.artifacts) > MaxProfiles {
		return &evidence.Failure{Code: evidence.CodeLimitExceeded,
			Message: fmt.Sprintf("at most %d profiles rank together; got more", MaxProfiles),
			Details: evidence.Object{"limit": MaxProfiles}}
	}
	x := &input{t: t, factor: u.Factor}
	in.tables = append(in.tables, x)
	in.byID[t.ID] = x
	return nil
}

func (in *inputs) of(t *evidence.Table) *input { return in.byID[t.ID] }

func (in *inputs) summary(t *evidence.Table, s *evidence.Summary) {
	in.byID[t.ID].summary = s
}

// ready fails when no table was admitted: an empty input is not evidence
// that nothing was hot.
func (in *inputs) ready() error {
	if len(in.tables) == 0 {
		return evidence.Failf(evidence.CodeInvalidArgument, "no decoded table for this projection in the input")
	}
	return nil
}

func (in *inputs) totalWeight() float64 {
	var t float64
	for _, x := range in.tables {
		t += x.total
	}
	return t
}

func (in *inputs) header(name, projection, operation string, cols []evidence.Column) *evidence.Table {
	args := evidence.Object{}
	for k, v := range in.args {
		args[k] = v
	}
	return &evidence.Table{
		ID:          "rank." + name,
		Name:        name,
		Operation:   operation,
		Projection:  projection,
		Format:      in.format,
		Columns:     cols,
		Evidence:    evidence.Derived,
		ArtifactIDs: slices.Clone(in.artifacts),
		Decoder:     evidence.Producer{Name: "flameox-rank", Version: RankerVersion},
		Arguments:   args,
	}
}

// closing builds the result summary: complete only when every input table
// closed complete and the bound omitted nothing.
func (in *inputs) closing(observed int64, trunc *evidence.Truncation) *evidence.Summary {
	s := &evidence.Summary{RowsObserved: observed, Complete: trunc == nil, Truncation: trunc,
		Metrics: map[string]evidence.Metric{
			"profile_count": {Value: len(in.artifacts), Unit: "count"},
			"total_weight":  {Value: in.totalWeight(), Unit: in.unit},
		}}
	var incomplete []string
	for _, x := range in.tables {
		if x.summary == nil {
			s.Complete = false
			s.Limit(fmt.Sprintf("input table %s ended without its summary: the input stream was cut", x.t.ID))
			continue
		}
		if !x.summary.Complete {
			s.Complete = false
			incomplete = append(incomplete, x.t.ID)
		}
		for _, l := range x.summary.Limitations {
			s.Limit(l)
		}
	}
	sort.Strings(incomplete)
	s.Coverage = evidence.Object{"input_tables": len(in.tables), "incomplete_input_tables": incomplete}
	return s
}
