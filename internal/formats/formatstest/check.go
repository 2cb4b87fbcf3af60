package formatstest

import (
	"errors"
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
