// Package projection selects, bounds and ranks rows of decoded tables.
// Every projection applies its semantic selection (filters) before any
// bound, so rows_observed, complete and truncation describe the selected
// population, never a prefix of unrelated rows.
//
// It holds what every projection shares: the Spec and Projector contract,
// Inputs (the projections' base: admission, per-table input summaries and
// the faults around them, the result header and summary) with Read (a
// row admitted and read as its typed row), Each (the base of a projection
// that writes a result table for each table it reads), Result (typed
// result rows encoded by their declared schema), TopN and NameGlob. The
// projections themselves are its subpackages.
//
// It imports evidence, formats (capabilities), param and table.
package projection

import (
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// Spec describes a projection.
type Spec struct {
	Name   string          // e.g. "cpu-hotspots"
	Tables []*table.Schema // the tables it consumes
	Params []param.Param
	// Compares says the projection compares a baseline side with a new
	// side: its projector is a Comparer, and it runs only when the inputs
	// are split into sides (flameox-rank --baseline).
	Compares bool
	// New starts a projection with validated arguments; given tells
	// which the caller set (rather than taking their defaults).
	New func(args evidence.Object, given map[string]bool) (Projector, error)
}

// Consumes reports whether the projection reads tables named name.
func (s *Spec) Consumes(name string) bool {
	for _, t := range s.Tables {
		if t.Name == name {
			return true
		}
	}
	return false
}

// Projector consumes tables as they stream in and emits one result table,
// declared in package table. Its header leaves the operation and the
// projection to flameox-rank, which stamps them.
type Projector interface {
	// Table admits a table header with the capabilities of its format; it
	// may reject incompatible units or formats with a typed failure before
	// any row is read.
	Table(t *evidence.Table, caps formats.Caps) error
	// Row feeds one row of an admitted table: a typed row of the table's
	// schema (in process) or its values (from a block stream).
	Row(t *evidence.Table, row any) error
	// Summary feeds the closing summary of an admitted table.
	Summary(t *evidence.Table, s *evidence.Summary) error
	// Finish writes the result table, its rows and summary.
	Finish(w Emitter) error
}

// Emitter receives a projection's result.
type Emitter interface {
	Begin(t *evidence.Table) error
	Row(values evidence.Object) error
	End(s *evidence.Summary) error
}
