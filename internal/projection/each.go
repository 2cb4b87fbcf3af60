package projection

import (
	"maps"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// Each admits the tables of a projection that writes one result table for
// each table it reads (preview, text-fragment), pooling nothing across
// them: each table once, in arrival order, its rows and summary found by
// its id. S is the projection's state for a table, R the type of the rows
// it keeps. A projection embeds it; its Summary implements Projector's and
// its Finish writes the results.
type Each[S, R any] struct {
	// Name is the projection's, stated in each result header.
	Name string
	// Result is the schema of every result table; nil: each result keeps
	// its input's name and columns.
	Result *table.Schema
	list   []*One[S, R]
	byID   map[string]*One[S, R]
}

// One is a table admitted by Each; R is the type of its kept rows.
type One[S, R any] struct {
	Table   *evidence.Table
	Summary *evidence.Summary // nil until the table closes
	Kept    []R               // typed rows of the result's schema, to write
	State   S                 // the projection's own facts about the table
}

// Add admits t, with the projection's initial state for it, after the
// projection's own checks; a table given twice is INVALID_ARGUMENT.
func (e *Each[S, R]) Add(t *evidence.Table, state S) error {
	if _, dup := e.byID[t.ID]; dup {
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s was given twice", t.ID)
	}
	if e.byID == nil {
		e.byID = map[string]*One[S, R]{}
	}
	x := &One[S, R]{Table: t, State: state}
	e.byID[t.ID] = x
	e.list = append(e.list, x)
	return nil
}

// Of finds the admitted table of a row or summary (what says which).
func (e *Each[S, R]) Of(t *evidence.Table, what string) (*One[S, R], error) {
	x, ok := e.byID[t.ID]
	if !ok {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "%s of table %s before its header", what, t.ID)
	}
	return x, nil
}

// Summary implements Projector's Summary: it records a table's closing
// summary.
func (e *Each[S, R]) Summary(t *evidence.Table, s *evidence.Summary) error {
	x, err := e.Of(t, "summary")
	if err != nil {
		return err
	}
	x.Summary = s
	return nil
}

// Finish writes a result table for each admitted table, in order. Its
// header keeps the input's format, evidence, artifacts and decoder, and
// carries args with the input's decoding arguments under "decode"; its
// rows are the kept rows; its summary is summarize's.
func (e *Each[S, R]) Finish(w Emitter, args evidence.Object, summarize func(*One[S, R]) *evidence.Summary) error {
	for _, x := range e.list {
		in := x.Table
		a := evidence.Object{}
		maps.Copy(a, args)
		if in.Arguments != nil {
			a["decode"] = in.Arguments
		}
		// The result is named after its input, so that results of inputs
		// with the same name (stdout and stderr) say which is which.
		h := &evidence.Table{ID: "rank." + in.ID, Name: in.Name, Projection: e.Name, Format: in.Format, Columns: in.Columns,
			Evidence: in.Evidence, ArtifactIDs: in.ArtifactIDs, Decoder: in.Decoder, Arguments: a}
		if e.Result != nil {
			h.Name, h.Columns = e.Result.Name, e.Result.EvidenceColumns("")
		}
		res, err := Begin(w, h)
		if err != nil {
			return err
		}
		var artifact string
		if len(in.ArtifactIDs) > 0 {
			artifact = in.ArtifactIDs[0]
		}
		for _, r := range x.Kept {
			if err := res.Row(r, artifact); err != nil {
				return err
			}
		}
		if err := res.End(summarize(x)); err != nil {
			return err
		}
	}
	return nil
}
