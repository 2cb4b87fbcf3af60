// Package projection selects, bounds and ranks rows of decoded tables.
// Every projection applies its semantic selection (filters) before any
// bound, so rows_observed, complete and truncation describe the selected
// population, never a prefix of unrelated rows.
package projection

import (
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
)

// Spec describes a projection.
type Spec struct {
	Name   string   // e.g. "cpu-hotspots"
	Tables []string // row schemas it consumes
	Params []param.Param
	// New starts a projection with validated arguments. formats lists the
	// formats of the tables that will be fed, known from their headers.
	New func(args evidence.Object, given map[string]bool) (Projector, error)
}

// Projector consumes tables as they stream in and emits one result table.
type Projector interface {
	// Table admits a table header; it may reject incompatible units or
	// formats with a typed failure before any row is read.
	Table(t *evidence.Table) error
	// Row feeds one row of an admitted table.
	Row(t *evidence.Table, values evidence.Object) error
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
