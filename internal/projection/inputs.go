package projection

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/table"
)

// Input is one admitted table and what the result must know of it.
type Input[S any] struct {
	Table *evidence.Table
	Caps  formats.Caps // of the table's format
	// Index is the table's admission order: a cheap identity for keys.
	Index int
	// Artifact is the table's one artifact; "" when its header names
	// several (its rows then name theirs).
	Artifact string
	Summary  *evidence.Summary // nil until the table closes
	Rows     int64             // rows fed
	State    S                 // the projection's own facts about the table
}

// ArtifactBound bounds how many artifacts pool into one result.
type ArtifactBound struct {
	Name string // the limit's name in the failure's receipt
	Max  int
	Unit string // what an artifact is here, plural: "profiles"
}

// Inputs admits the tables a projection reads and keeps, for each, what
// the result's header and summary carry: the artifacts, the format, the
// input summary. It is the projections' base: a projection embeds it,
// which gives it Projector's Table (for a projection with no checks or
// state of its own) and Summary, and reads its rows through Read. Every
// projection handles admission and summary faults through it, the same
// way:
//   - a table the projection does not read: UNSUPPORTED_FORMAT;
//   - the same table id twice, a row after its table's summary, a second
//     summary, a row naming another artifact than its table:
//     INVALID_ARGUMENT;
//   - a row or summary of a table never admitted: INTERNAL (the caller
//     broke the protocol);
//   - more artifacts than the bound: LIMIT_EXCEEDED with its receipt;
//   - a table that never closed, or closed incomplete: the result is
//     incomplete and says which (Summarize).
//
// The zero value admits nothing; NewInputs names what it reads.
type Inputs[S any] struct {
	reads     []*table.Schema
	bound     ArtifactBound
	list      []*Input[S]
	byID      map[string]*Input[S]
	last      *Input[S] // rows come table by table: skip the map
	artifacts []string
}

// NewInputs admits tables of the given schemas.
func NewInputs[S any](reads ...*table.Schema) Inputs[S] {
	return Inputs[S]{reads: reads, byID: map[string]*Input[S]{}}
}

// Bound sets the artifact bound.
func (in *Inputs[S]) Bound(b ArtifactBound) { in.bound = b }

// Widen raises the artifact bound to n, for a caller that pools many
// artifacts by design and has counted them before admitting any (ranking
// across the bundles of a store). A projection without a bound keeps none.
func (in *Inputs[S]) Widen(n int) {
	if in.bound.Max > 0 && n > in.bound.Max {
		in.bound.Max = n
	}
}

// Check refuses a table the projection does not read, one admitted
// already, or one whose header lacks a column of its schema. Admit checks
// the same; a projection calls Check first when its own checks of the
// header (units, roots) would otherwise speak first.
func (in *Inputs[S]) Check(t *evidence.Table) error {
	i := slices.IndexFunc(in.reads, func(s *table.Schema) bool { return s.Name == t.Name })
	if i < 0 {
		return &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
			Message: fmt.Sprintf("this projection reads %s tables, not %s", in.readNames(), t.Name)}
	}
	if _, dup := in.byID[t.ID]; dup {
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s appears twice in the input", t.ID)
	}
	for _, c := range in.reads[i].Columns {
		h, ok := t.Column(c.Name)
		if !ok {
			return evidence.Failf(evidence.CodeInvalidArgument, "table %s lacks column %s", t.ID, c.Name)
		}
		if h.Type != c.Type {
			return evidence.Failf(evidence.CodeInvalidArgument, "table %s: column %s is %s, not %s", t.ID, c.Name, h.Type, c.Type)
		}
	}
	return nil
}

// Table implements Projector's Table for a projection that keeps no state
// of its own per table: it admits t with the zero state.
func (in *Inputs[S]) Table(t *evidence.Table, caps formats.Caps) error {
	var zero S
	_, err := in.Admit(t, caps, zero)
	return err
}

// Admit admits a table header before its rows, with its format's
// capabilities and the projection's initial state for it. The
// projection's own checks come before, so a refused table is never
// recorded.
func (in *Inputs[S]) Admit(t *evidence.Table, caps formats.Caps, state S) (*Input[S], error) {
	if err := in.Check(t); err != nil {
		return nil, err
	}
	artifacts := in.artifacts
	for _, a := range t.ArtifactIDs {
		if !slices.Contains(artifacts, a) {
			artifacts = append(artifacts, a)
		}
	}
	if b := in.bound; b.Max > 0 && len(artifacts) > b.Max {
		return nil, evidence.LimitExceeded(evidence.LimitReceipt{Name: b.Name, Value: int64(b.Max), Observed: int64(len(artifacts)), Unit: b.Unit},
			"at most %d %s rank together; got more", b.Max, b.Unit)
	}
	in.artifacts = artifacts
	x := &Input[S]{Table: t, Caps: caps, Index: len(in.list), State: state}
	if len(t.ArtifactIDs) == 1 {
		x.Artifact = t.ArtifactIDs[0]
	}
	if in.byID == nil {
		in.byID = map[string]*Input[S]{}
	}
	in.list = append(in.list, x)
	in.byID[t.ID] = x
	return x, nil
}

func (in *Inputs[S]) readNames() string {
	names := make([]string, len(in.reads))
	for i, s := range in.reads {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

func (in *Inputs[S]) of(t *evidence.Table) *Input[S] {
	if x := in.last; x != nil && x.Table == t {
		return x
	}
	x := in.byID[t.ID]
	if x != nil {
		in.last = x
	}
	return x
}

// row finds the admitted table of a row and counts the row. It returns
// the row's artifact: its table's, or, for a table naming several, the
// artifact_id an object row carries.
func (in *Inputs[S]) row(t *evidence.Table, row any) (*Input[S], string, error) {
	x := in.of(t)
	if x == nil {
		return nil, "", evidence.Failf(evidence.CodeInternal, "row of a table that was not admitted: %s", t.ID)
	}
	if x.Summary != nil {
		return nil, "", evidence.Failf(evidence.CodeInvalidArgument, "table %s: a row after the table's summary", t.ID)
	}
	artifact := x.Artifact
	if o, ok := row.(evidence.Object); ok {
		a, _ := o[table.ArtifactColumn].(string)
		switch {
		case artifact == "":
			artifact = a
		case a != "" && a != artifact:
			return nil, "", evidence.Failf(evidence.CodeInvalidArgument, "table %s: a row names artifact %s, not the table's %s", t.ID, a, artifact)
		}
	}
	x.Rows++
	return x, artifact, nil
}

// Read admits a row of a table admitted to in and reads it as the typed
// row of schema of: a typed row as it is, an object (from a block stream)
// converted column by column. It returns the row, its table's input and
// its artifact: the table's, or, for a table naming several, the
// artifact_id an object row carries.
func Read[T, S any](in *Inputs[S], of table.Of[T], t *evidence.Table, row any) (*T, *Input[S], string, error) {
	x, artifact, err := in.row(t, row)
	if err != nil {
		return nil, nil, "", err
	}
	r, err := of.Scan(row)
	if err != nil {
		return nil, nil, "", evidence.Wrap(evidence.CodeInvalidArgument, err, "table %s", t.ID)
	}
	return r, x, artifact, nil
}

// Summary implements Projector's Summary: it records an admitted table's
// closing summary.
func (in *Inputs[S]) Summary(t *evidence.Table, s *evidence.Summary) error {
	x := in.of(t)
	switch {
	case x == nil:
		return evidence.Failf(evidence.CodeInternal, "summary of a table that was not admitted: %s", t.ID)
	case s == nil:
		return evidence.Failf(evidence.CodeInternal, "table %s: a nil summary", t.ID)
	case x.Summary != nil:
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s has two summaries", t.ID)
	}
	x.Summary = s
	return nil
}

// Ready fails when no table was admitted, for projections whose empty
// result would read as "nothing found".
func (in *Inputs[S]) Ready() error {
	if len(in.list) == 0 {
		return evidence.Failf(evidence.CodeInvalidArgument, "no decoded table for this projection in the input")
	}
	return nil
}

// List returns the admitted tables in admission order.
func (in *Inputs[S]) List() []*Input[S] { return in.list }

// Artifacts returns the admitted tables' artifacts, each once, in
// admission order.
func (in *Inputs[S]) Artifacts() []string { return slices.Clone(in.artifacts) }

// Format returns the admitted tables' format when they share one, else "".
func (in *Inputs[S]) Format() string {
	var f string
	for i, x := range in.list {
		if i > 0 && x.Table.Format != f {
			return ""
		}
		f = x.Table.Format
	}
	return f
}

// Header starts the header of a result table of schema s, its per-table
// unit resolved to unit, with a copy of args and the admitted artifacts
// and format. Observed evidence (input rows passed through) keeps the
// decoder that read the rows when the inputs share one. The operation and
// projection are left to flameox-rank, which stamps them.
func (in *Inputs[S]) Header(s *table.Schema, unit, ev string, args evidence.Object) *evidence.Table {
	h := s.Header(unit)
	in.stateBases(s, h)
	h.Evidence = ev
	h.Format = in.Format()
	h.ArtifactIDs = in.Artifacts()
	h.Arguments = evidence.Object{}
	for k, v := range args {
		h.Arguments[k] = v
	}
	if ev == evidence.Observed && len(in.list) > 0 {
		d := in.list[0].Table.Decoder
		for _, x := range in.list[1:] {
			if x.Table.Decoder != d {
				d = evidence.Producer{}
			}
		}
		h.Decoder = d
	}
	return h
}

// stateBases carries the coordinate bases the admitted tables state into
// result header h, column by column of the same name, where they all
// state one; mixed or unstated bases stay unstated.
func (in *Inputs[S]) stateBases(s *table.Schema, h *evidence.Table) {
	for _, c := range s.Columns {
		if c.Base != table.PerTable || len(in.list) == 0 {
			continue
		}
		base, agree := -1, true
		for _, x := range in.list {
			xs := table.Lookup(x.Table.Name)
			xc, ok := x.Table.Column(c.Name)
			if xs == nil || !ok {
				agree = false
				break
			}
			b, ok := xs.Base(xc)
			if !ok || (base >= 0 && b != base) {
				agree = false
				break
			}
			base = b
		}
		if agree {
			s.StateBase(h, c.Name, base)
		}
	}
}

// Summarize starts the result summary of a bounded selection: observed rows
// and the bound's truncation; complete only when a table was read, every
// admitted table closed complete and the bound cut nothing. A table that
// never closed, or closed incomplete without saying why, is stated; the
// inputs' limitations are carried, each once, prefixed with the ids of
// the tables that state it unless all of them do. Coverage counts the
// input tables and lists the incomplete ones.
func (in *Inputs[S]) Summarize(observed int64, trunc *evidence.Truncation) *evidence.Summary {
	s := &evidence.Summary{RowsObserved: observed, Truncation: trunc, Complete: trunc == nil && len(in.list) > 0,
		Metrics: map[string]evidence.Metric{}}
	if len(in.list) == 0 {
		s.Limit(fmt.Sprintf("no %s table was read: an empty result is not evidence that there is nothing to find", in.readNames()))
	}
	incomplete := []string{}
	var texts []string
	by := map[string][]string{} // limitation → ids of the tables stating it
	for _, x := range in.list {
		is := x.Summary
		if is == nil {
			s.Complete = false
			s.Limit(fmt.Sprintf("input table %s ended without its summary: the input was cut off", x.Table.ID))
			continue
		}
		if !is.Complete {
			s.Complete = false
			incomplete = append(incomplete, x.Table.ID)
			if len(is.Limitations) == 0 {
				s.Limit(fmt.Sprintf("input table %s is incomplete: the result covers only the rows it holds", x.Table.ID))
			}
		}
		for _, l := range is.Limitations {
			if by[l] == nil {
				texts = append(texts, l)
			}
			if ids := by[l]; !slices.Contains(ids, x.Table.ID) {
				by[l] = append(ids, x.Table.ID)
			}
		}
	}
	for _, l := range texts {
		if ids := by[l]; len(ids) < len(in.list) {
			l = strings.Join(ids, ", ") + ": " + l
		}
		s.Limit(l)
	}
	slices.Sort(incomplete)
	s.Coverage = evidence.Object{"input_tables": int64(len(in.list)), "incomplete_input_tables": incomplete}
	return s
}

// Result writes one result table through an Emitter. Rows are typed rows
// of the table's declared schema (or objects of exactly its columns),
// encoded by the schema; the summary gets the count of rows written.
type Result struct {
	w    Emitter
	s    *table.Schema
	rows int64
}

// Begin writes h, the header of a result table declared in package table.
func Begin(w Emitter, h *evidence.Table) (*Result, error) {
	s := table.Lookup(h.Name)
	if s == nil {
		return nil, evidence.Failf(evidence.CodeInternal, "result table %s is not declared in package table", h.Name)
	}
	if err := w.Begin(h); err != nil {
		return nil, err
	}
	return &Result{w: w, s: s}, nil
}

// Row writes one row; artifact fills the artifact column of a schema that
// passes input rows through (see package table).
func (r *Result) Row(row any, artifact string) error {
	o, err := r.s.Values(row, artifact)
	if err != nil {
		return evidence.Wrap(evidence.CodeInternal, err, "result table %s", r.s.Name)
	}
	r.rows++
	return r.w.Row(o)
}

// End writes the summary.
func (r *Result) End(s *evidence.Summary) error {
	s.RowsEmitted = r.rows
	return r.w.End(s)
}
