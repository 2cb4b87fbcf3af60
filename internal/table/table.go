// Package table owns every table schema flameox writes: the native tables
// decoders emit (cpu.frames, pytest.outcomes, preview.records…) and the
// result tables projections write (cpu.hotspots, pytest.failures…). A
// schema is declared once, as a Go struct whose tagged fields are its
// columns; the column header, the canonical row encoding and the reading
// of rows back from a block stream are all derived from that struct, so
// they cannot disagree.
//
// Names follow one rule: a table is "<family>.<plural noun>" and a column
// is snake_case, both lower case ASCII (TestNames checks every schema).
//
// Rows travel typed inside a process (a decoder hands a *Frame to the
// sink) and are encoded once, at the boundary, straight from the struct.
// Code that reads rows from a stream gets them back as values and turns
// them into the struct with Scan.
//
// It imports evidence and unit only.
package table

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"

	"github.com/flameox/flameox/internal/evidence"
)

// Column is one declared column.
type Column struct {
	Name string
	Type string // evidence.Type*
	// Unit is the column's normalized unit, "" for none, or PerTable when
	// each table states it (CPU weights are samples in one profile and
	// seconds in another).
	Unit        string
	Description string
	// Nullable: the column may hold null (a Null[T] field, or JSON, whose
	// null is a null); other columns always hold a value.
	Nullable bool
	// Identity marks an opaque identity (an artifact digest, a frame id):
	// machines join on it, people need not read it.
	Identity bool
	// Detail marks long text (a failure's whole traceback) that the
	// table view leaves to the JSONL; it says so under the table.
	Detail bool
	// Base is the origin of a line or column coordinate: "0" or "1" when
	// the schema fixes it, PerTable when each table states it (V8 counts
	// from 0, pstats from 1), "" for a column that is not a coordinate.
	// The rows keep the native coordinate; only the table view converts.
	Base string
}

// PerTable is the Unit of a column whose unit each table header states.
const PerTable = "*"

// ArtifactColumn is the column that names the artifact a row was read
// from. In tables that come from one artifact (FromArtifact) the runtime
// writes it; decoders never do, so a row cannot claim another artifact.
const ArtifactColumn = "artifact_id"

// Schema is one table's row schema.
type Schema struct {
	Name string
	Doc  string
	// FromArtifact: every table of this schema holds the rows of one
	// artifact, and its artifact_id column is the table's artifact.
	FromArtifact bool
	Columns      []Column
	codec        *codec
}

// Header returns a table header with this schema's name and columns, the
// PerTable unit resolved to unit. The runtime completes the rest.
func (s *Schema) Header(unit string) *evidence.Table {
	return &evidence.Table{Name: s.Name, Columns: s.EvidenceColumns(unit)}
}

// EvidenceColumns returns the columns as a header states them.
func (s *Schema) EvidenceColumns(unit string) []evidence.Column {
	out := make([]evidence.Column, len(s.Columns))
	for i, c := range s.Columns {
		u := c.Unit
		if u == PerTable {
			u = unit
		}
		out[i] = evidence.Column{Name: c.Name, Type: c.Type, Unit: u, Description: c.Description}
	}
	return out
}

// HeaderBased is Header for a decoder whose coordinates count from base
// (0 or 1): each per-table coordinate column states it, as the first
// words of its description ("0-based native line coordinate…").
func (s *Schema) HeaderBased(unit string, base int) *evidence.Table {
	h := s.Header(unit)
	for _, c := range s.Columns {
		if c.Base == PerTable {
			s.StateBase(h, c.Name, base)
		}
	}
	return h
}

// StateBase states the base of per-table coordinate column name in h, a
// header of this schema; a result table states what its inputs stated.
func (s *Schema) StateBase(h *evidence.Table, name string, base int) {
	c, ok := s.Column(name)
	if !ok || c.Base != PerTable {
		return
	}
	for i := range h.Columns {
		if h.Columns[i].Name == name {
			h.Columns[i].Description = fmt.Sprintf("%d-based %s", base, c.Description)
		}
	}
}

var basePhrase = regexp.MustCompile(`(?:^|[^\w-])([01])-based\b`)

// Base returns the origin of a coordinate column as table header h
// states it: fixed by the schema, or stated in the column's description
// by the decoder (HeaderBased). ok is false for a column that is not a
// coordinate, or whose table did not state its base.
func (s *Schema) Base(h evidence.Column) (base int, ok bool) {
	c, found := s.Column(h.Name)
	if !found || c.Base == "" {
		return 0, false
	}
	b := c.Base
	if b == PerTable {
		m := basePhrase.FindStringSubmatch(h.Description)
		if m == nil {
			return 0, false
		}
		b = m[1]
	}
	return int(b[0] - '0'), true
}

// checkBase verifies a coordinate declaration: base 0, 1 or per table,
// and a fixed base said in the doc the way Base reads it.
func checkBase(c Column) error {
	switch c.Base {
	case PerTable:
		if basePhrase.MatchString(c.Description) {
			return fmt.Errorf("column %s: a per-table base is stated by each table, not by the doc", c.Name)
		}
	case "0", "1":
		m := basePhrase.FindStringSubmatch(c.Description)
		if m == nil || m[1] != c.Base {
			return fmt.Errorf("column %s: doc must say %s-based", c.Name, c.Base)
		}
	default:
		return fmt.Errorf("column %s: base %q is not 0, 1 or *", c.Name, c.Base)
	}
	return nil
}

// CheckHeader verifies that a table header states exactly the schema's
// columns, in order, each of its type and unit (a per-table unit stated),
// so that rows checked against the schema (Check, Values) fit the header.
func (s *Schema) CheckHeader(t *evidence.Table) error {
	if len(t.Columns) != len(s.Columns) {
		return fmt.Errorf("table %s has %d columns; its schema declares %d", t.Name, len(t.Columns), len(s.Columns))
	}
	for i, c := range s.Columns {
		h := t.Columns[i]
		if h.Name != c.Name || h.Type != c.Type || (c.Unit != PerTable && h.Unit != c.Unit) || (c.Unit == PerTable && h.Unit == "") {
			return fmt.Errorf("table %s column %d is %+v; its schema declares %+v", t.Name, i, h, c)
		}
	}
	return nil
}

// Column returns the named column, found through the codec's index.
func (s *Schema) Column(name string) (Column, bool) {
	i, ok := s.codec.byName[name]
	if !ok {
		return Column{}, false
	}
	return s.Columns[s.codec.fields[i].col], true
}

// Names lists the column names in declaration order.
func (s *Schema) Names() []string {
	out := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		out[i] = c.Name
	}
	return out
}

// Of is a schema bound to its row type T.
type Of[T any] struct{ *Schema }

// Option changes a schema as it is defined.
type Option func(*Schema)

// FromArtifact declares that each table of the schema holds one
// artifact's rows; an artifact_id column is added first.
func FromArtifact(s *Schema) { s.FromArtifact = true }

var all []*Schema

// Define declares the schema name with row type T. T is a struct whose
// columns are its fields tagged `col:"name[,identity][,unit=U]"` with a
// `doc:"…"` description; the column type follows from the field's Go type
// (see codec.go). An embedded struct (untagged) contributes its columns in
// its place. Define panics on a malformed declaration: schemas are
// package variables, so a mistake fails every test at start-up.
func Define[T any](name, doc string, opts ...Option) Of[T] {
	s := &Schema{Name: name, Doc: doc}
	for _, o := range opts {
		o(s)
	}
	c, cols, err := newCodec(reflect.TypeFor[T](), s.FromArtifact)
	if err != nil {
		panic(fmt.Sprintf("table %s: %v", name, err))
	}
	s.codec, s.Columns = c, cols
	if Lookup(name) != nil {
		panic("table " + name + " is defined twice")
	}
	all = append(all, s)
	return Of[T]{s}
}

// All returns every defined schema, sorted by name.
func All() []*Schema {
	out := slices.Clone(all)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds a schema by table name, or nil.
func Lookup(name string) *Schema {
	for _, s := range all {
		if s.Name == name {
			return s
		}
	}
	return nil
}

var (
	tableName  = regexp.MustCompile(`^[a-z][a-z0-9]*\.[a-z][a-z0-9_]*$`)
	columnName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// CheckNames reports schemas whose names break the naming rule.
func CheckNames() error {
	for _, s := range all {
		if !tableName.MatchString(s.Name) {
			return fmt.Errorf("table %q: want <family>.<plural noun> in lower-case snake_case", s.Name)
		}
		for _, c := range s.Columns {
			if !columnName.MatchString(c.Name) {
				return fmt.Errorf("table %s: column %q is not lower-case snake_case", s.Name, c.Name)
			}
		}
	}
	return nil
}

// Null is a nullable column value: Valid false encodes as JSON null.
type Null[T any] struct {
	V     T
	Valid bool
}

// Some returns a present value.
func Some[T any](v T) Null[T] { return Null[T]{V: v, Valid: true} }

// NonEmpty returns s, or null when s is empty.
func NonEmpty(s string) Null[string] { return Null[string]{V: s, Valid: s != ""} }

// Value returns the value, or nil when null.
func (n Null[T]) Value() any {
	if !n.Valid {
		return nil
	}
	return n.V
}

func (n Null[T]) nullValue() (any, bool) { return n.V, n.Valid }
func (n *Null[T]) setNull()              { var zero T; n.V, n.Valid = zero, false }

// nullable is what the codec knows of a Null field.
type nullable interface{ nullValue() (any, bool) }
