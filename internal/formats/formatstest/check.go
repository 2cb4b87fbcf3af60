package formatstest

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

// CheckInvariants fails the test when err is not a typed failure (or is an
// INTERNAL one), or when a summary contradicts its rows: every table ends
// with a summary unless the decode failed; emitted never exceeds
// observed; a complete table has no truncation and emitted all it
// observed; an omitted count is never negative; an incomplete table says
// why (a limitation or a truncation).
func CheckInvariants(tb testing.TB, sink *Sink, err error) {
	tb.Helper()
	if err != nil {
		var f *evidence.Failure
		if !errors.As(err, &f) {
			tb.Fatalf("untyped failure %T: %v", err, err)
		}
		if f.Code == evidence.CodeInternal {
			tb.Fatalf("internal failure: %v", err)
		}
	}
	for _, t := range sink.Tables {
		s := t.Summary
		if s == nil {
			if err == nil {
				tb.Fatalf("table %s has no summary", t.Header.Name)
			}
			continue
		}
		if s.RowsEmitted > s.RowsObserved {
			tb.Fatalf("table %s: emitted %d > observed %d", t.Header.Name, s.RowsEmitted, s.RowsObserved)
		}
		if s.Complete && (s.Truncation != nil || s.RowsEmitted != s.RowsObserved) {
			tb.Fatalf("table %s: complete but truncated (%+v, %d of %d)", t.Header.Name, s.Truncation, s.RowsEmitted, s.RowsObserved)
		}
		if s.Truncation != nil && s.Truncation.Omitted < 0 {
			tb.Fatalf("table %s: negative omitted count", t.Header.Name)
		}
		if !s.Complete && len(s.Limitations) == 0 && s.Truncation == nil {
			tb.Fatalf("table %s: incomplete without a limitation or truncation", t.Header.Name)
		}
	}
}

// CheckValueBound checks a decode made under max_value_bytes=max against
// the unbounded decode of the same input: every table says it cut values
// and is incomplete, no string value but an id outgrows the bound and its
// marker, and every id is the unbounded decode's (ids are of the full
// values).
func CheckValueBound(tb testing.TB, cut, full *Sink, max int) {
	tb.Helper()
	if len(cut.Tables) == 0 || len(cut.Tables) != len(full.Tables) {
		tb.Fatalf("%d bounded tables, %d unbounded", len(cut.Tables), len(full.Tables))
	}
	for i, t := range cut.Tables {
		// A table none of whose values is over the bound (cpu.stacks: frame
		// ids and short series names) has nothing to cut.
		over := false
		for _, r := range full.Tables[i].Rows {
			for col, v := range r {
				if s, ok := v.(string); ok && !strings.HasSuffix(col, "_id") && len(s) > max {
					over = true
				}
			}
		}
		if n, _ := evidence.AsInt(t.Summary.Metrics["cut_values"].Value); over && (n == 0 || t.Summary.Complete) {
			tb.Errorf("%s: nothing said cut at %d bytes: %+v", t.Header.Name, max, t.Summary)
		}
		if !full.Tables[i].Summary.Complete {
			tb.Errorf("%s: the unbounded decode is incomplete", t.Header.Name)
		}
		for j, r := range t.Rows {
			for col, v := range r {
				if strings.HasSuffix(col, "_id") {
					if v != full.Tables[i].Rows[j][col] {
						tb.Errorf("%s: the bound changed %s", t.Header.Name, col)
					}
					continue
				}
				if s, ok := v.(string); ok && len(s) > max+len("…[9999999999 bytes cut]") {
					tb.Errorf("%s: %s is %d bytes", t.Header.Name, col, len(s))
				}
			}
		}
	}
}

// CheckMetrics checks a summary's integer metrics against want (by name):
// a metric that is missing or not an integer is an error, like a wrong one.
func CheckMetrics(tb testing.TB, what string, s *evidence.Summary, want map[string]int64) {
	tb.Helper()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		m, ok := s.Metrics[k]
		n, isInt := evidence.AsInt(m.Value)
		switch {
		case !ok:
			tb.Errorf("%s: no metric %s (want %d)", what, k, want[k])
		case !isInt:
			tb.Errorf("%s: metric %s is %v, not an integer (want %d)", what, k, m.Value, want[k])
		case n != want[k]:
			tb.Errorf("%s: %s %d, reference %d", what, k, n, want[k])
		}
	}
}

// MetricInt is a summary's integer metric; a missing one stops the test.
func MetricInt(tb testing.TB, s *evidence.Summary, name string) int64 {
	tb.Helper()
	n, ok := evidence.AsInt(s.Metrics[name].Value)
	if !ok {
		tb.Fatalf("metric %s missing: %+v", name, s.Metrics)
	}
	return n
}
