package projection

import (
	"fmt"
	"slices"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
)

// BaselineParam is the argument of every comparing projection that names
// the baseline side's paths (flameox-rank --baseline BASE[,BASE...] NEW...;
// MCP: baseline). It is declared on the projection, so flags, MCP schemas
// and docs derive from it; flameox-rank reads it before it opens the paths.
var BaselineParam = param.Param{Name: "baseline", Type: param.StringList,
	Doc: "the baseline side of the comparison: paths of its profiles or of their decoded blocks, comma-separated (the PATH arguments, - for stdin, are the new side)"}

// Side is one side of a comparison.
type Side int8

// The two sides of a comparison.
const (
	SideNew  Side = iota // the profiles under test: flameox-rank's PATH arguments
	SideBase             // the reference: flameox-rank --baseline PATH
)

// Artifact roles of the two sides. flameox-rank opens each side's paths
// with its role, so the artifact blocks say which side they are on and
// the same bytes given on both sides (identical inputs) still decode to
// tables with distinct ids (formats.Stamper puts the role in the id).
const (
	RoleBaseline = "baseline"
	RoleNew      = "new"
)

func (s Side) String() string {
	if s == SideBase {
		return RoleBaseline
	}
	return RoleNew
}

// Comparer is the projector of a Spec whose Compares is set: it compares
// two sides. Its caller splits the inputs into a baseline side and a new
// side (flameox-rank --baseline BASE... NEW...: the --baseline paths are
// the baseline, the PATH arguments the new side) and, before admitting a
// table with Table, says which side it is on. A comparer refuses a table
// whose side it was not told (Sides.Of). Any family can compare this way
// (CPU profiles, benchmark samples): the projection decides what pairs
// with what; rank only assigns sides.
type Comparer interface {
	Projector
	// Side assigns the table with this id, of these artifacts, to a side.
	// It is called once per table, before Table.
	Side(tableID string, artifacts []string, side Side)
}

// Sides records which side each table and artifact is on: a Comparer
// embeds it for its Side method.
type Sides struct {
	tables    map[string]Side
	artifacts [2][]string // by side, in assignment order
}

// Side implements Comparer's Side.
func (s *Sides) Side(tableID string, artifacts []string, side Side) {
	if s.tables == nil {
		s.tables = map[string]Side{}
	}
	s.tables[tableID] = side
	for _, a := range artifacts {
		if !slices.Contains(s.artifacts[side], a) {
			s.artifacts[side] = append(s.artifacts[side], a)
		}
	}
}

// Of returns the side of table t; a table no side was given for is an
// INVALID_ARGUMENT failure (a comparison is run with --baseline).
func (s *Sides) Of(t *evidence.Table) (Side, error) {
	side, ok := s.tables[t.ID]
	if !ok {
		return 0, &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message:  fmt.Sprintf("table %s is on no side of the comparison: give the baseline with --baseline PATH and the new profiles as PATH arguments", t.ID),
			Location: evidence.Location{Field: "baseline"}}
	}
	return side, nil
}

// Artifacts returns the artifacts of one side, in assignment order.
func (s *Sides) Artifacts(side Side) []string { return slices.Clone(s.artifacts[side]) }

// Coverage is what a comparison's summary states of its sides: each
// side's artifacts.
func (s *Sides) Coverage() evidence.Object {
	list := func(side Side) []string {
		out := s.Artifacts(side)
		if out == nil {
			out = []string{}
		}
		return out
	}
	return evidence.Object{"baseline_artifacts": list(SideBase), "new_artifacts": list(SideNew)}
}
