package wire

import (
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

func TestTablesChecksTheStream(t *testing.T) {
	steps := func(ts *Tables, rows int, s *evidence.Summary) error {
		if err := ts.Header(&evidence.Table{ID: "t"}); err != nil {
			return err
		}
		for range rows {
			if err := ts.Row("t"); err != nil {
				return err
			}
		}
		return ts.Summary(s)
	}
	cases := []struct {
		name string
		rows int
		s    evidence.Summary
		ok   bool
	}{
		{"honest", 2, evidence.Summary{TableID: "t", RowsObserved: 2, RowsEmitted: 2, Complete: true}, true},
		{"bounded", 1, evidence.Summary{TableID: "t", RowsObserved: 2, RowsEmitted: 1, Truncation: &evidence.Truncation{Reason: "row_limit", Limit: 1, Omitted: 1}}, true},
		{"claims absent rows", 1, evidence.Summary{TableID: "t", RowsObserved: 5, RowsEmitted: 5, Complete: true}, false},
		{"emits more than observed", 2, evidence.Summary{TableID: "t", RowsObserved: 1, RowsEmitted: 2}, false},
		{"complete yet short", 1, evidence.Summary{TableID: "t", RowsObserved: 5, RowsEmitted: 1, Complete: true}, false},
		{"complete yet truncated", 1, evidence.Summary{TableID: "t", RowsObserved: 1, RowsEmitted: 1, Complete: true, Truncation: &evidence.Truncation{Reason: "row_limit"}}, false},
	}
	for _, c := range cases {
		err := steps(&Tables{}, c.rows, &c.s)
		if (err == nil) != c.ok || (err != nil && evidence.CodeOf(err) != evidence.CodeInvalidArgument) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	var ts Tables
	if err := ts.Row("x"); err == nil {
		t.Error("row before its header accepted")
	}
	_ = steps(&ts, 0, &evidence.Summary{TableID: "t"})
	if ts.Row("t") == nil || ts.Header(&evidence.Table{ID: "t"}) == nil {
		t.Error("row after the summary, or a second header, accepted")
	}
}
