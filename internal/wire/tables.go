package wire

import "github.com/flameox/flameox/internal/evidence"

// Tables is the one check of a stream's table structure, shared by every
// stage that reads tables (rank, preserve): a table opens once, its rows
// and summary follow its header, nothing follows its summary, and the
// summary's rows_emitted is the number of rows the stream carried, at
// most rows_observed, and all of them when it says complete. A summary
// that contradicts the stream is refused, not trusted.
type Tables struct {
	open map[string]*tableState
}

type tableState struct {
	rows  int64
	ended bool
}

// Header records a table header.
func (ts *Tables) Header(t *evidence.Table) error {
	if ts.open == nil {
		ts.open = map[string]*tableState{}
	}
	if ts.open[t.ID] != nil {
		return evidence.Failf(evidence.CodeInvalidArgument, "table %s appears twice", t.ID)
	}
	ts.open[t.ID] = &tableState{}
	return nil
}

func (ts *Tables) state(id, what string) (*tableState, error) {
	st := ts.open[id]
	switch {
	case st == nil:
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "%s for table %s before its header", what, id)
	case st.ended:
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "%s for table %s after its summary", what, id)
	}
	return st, nil
}

// Row records a row of table id.
func (ts *Tables) Row(id string) error {
	st, err := ts.state(id, "row")
	if err != nil {
		return err
	}
	st.rows++
	return nil
}

// Summary records a table's summary and checks it against the rows seen.
func (ts *Tables) Summary(s *evidence.Summary) error {
	st, err := ts.state(s.TableID, "summary")
	if err != nil {
		return err
	}
	if s.RowsEmitted != st.rows {
		return evidence.Failf(evidence.CodeInvalidArgument, "summary of table %s says %d rows emitted; the stream carried %d", s.TableID, s.RowsEmitted, st.rows)
	}
	if s.RowsObserved < s.RowsEmitted {
		return evidence.Failf(evidence.CodeInvalidArgument, "summary of table %s says %d rows observed but %d emitted", s.TableID, s.RowsObserved, s.RowsEmitted)
	}
	if s.Complete && (s.Truncation != nil || s.RowsObserved != s.RowsEmitted) {
		return evidence.Failf(evidence.CodeInvalidArgument, "summary of table %s says complete, yet %d of %d rows observed were emitted", s.TableID, s.RowsEmitted, s.RowsObserved)
	}
	st.ended = true
	return nil
}
