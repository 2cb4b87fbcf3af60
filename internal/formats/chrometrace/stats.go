package chrometrace

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

// stats are the counts a trace's summaries state.
type stats struct {
	events  int64
	byPhase map[string]int64
	// ph1 counts the one-byte ASCII phases (every phase the format
	// defines) once byPhase holds them (at 0), so most events count
	// without a map access.
	ph1           [128]int64
	otherPhases   int64 // events of phases beyond the first 64 distinct
	malformed     map[string]int64
	uninterpreted int64
	metadata      map[string]int64 // M events other than names and sort indexes
	notKeys       []string         // top-level members not read

	late, overlapping, unmatchedEnd, unclosedBegin, endNameMismatch   int64
	asyncUnmatchedEnd, asyncUnmatchedBegin, asyncUnclosed, asyncSteps int64
	objectSnapshots, objectsUnmatched, objectsUnclosed                int64
	counterNotNumeric, counterCut                                     int64
	bufferOverflowed                                                  int64
	rounded, argsCut                                                  int64
	unclosedNames                                                     []string
}

func (s *stats) phase(ph string) {
	one := len(ph) == 1 && ph[0] < 128
	if one && s.ph1[ph[0]] > 0 {
		s.ph1[ph[0]]++
		return
	}
	if _, ok := s.byPhase[ph]; ok || len(s.byPhase) < 64 {
		if one {
			s.byPhase[ph] = 0
			s.ph1[ph[0]]++
			return
		}
		s.byPhase[ph]++
		return
	}
	s.otherPhases++
}

func (s *stats) noteUnclosed(name string) {
	if len(s.unclosedNames) < 5 {
		s.unclosedNames = append(s.unclosedNames, name)
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// end drains what is open and closes every table with its summary.
func (d *decoder) end() error {
	if err := d.nest.drain(d.order); err != nil {
		return err
	}
	for _, st := range d.async {
		d.st.asyncUnclosed += int64(len(st))
	}
	d.st.asyncUnclosed += int64(len(d.legacy))
	d.st.objectsUnclosed = int64(len(d.objects))
	for _, t := range []struct {
		lt   *formats.LazyTable
		s    *evidence.Summary
		rows int64
	}{
		{d.slices, d.slicesSummary(), d.nSlices},
		{d.counters, d.countersSummary(), d.nCounters},
		{d.flows, d.simpleSummary(d.flowVals), d.nFlows},
		{d.tracks, d.simpleSummary(d.trVals), d.nTracks},
	} {
		t.s.RowsObserved = t.rows
		if err := t.lt.End(t.s); err != nil {
			return err
		}
	}
	return nil
}

// abort ends the tables begun so far as incomplete and returns err.
func (d *decoder) abort(err error) error {
	for _, lt := range []*formats.LazyTable{d.slices, d.counters, d.flows, d.tracks} {
		s := &evidence.Summary{Complete: false}
		s.Limit("decoding stopped at a failure: " + err.Error())
		switch lt {
		case d.slices:
			s.RowsObserved = d.nSlices
		case d.counters:
			s.RowsObserved = d.nCounters
		case d.flows:
			s.RowsObserved = d.nFlows
		default:
			s.RowsObserved = d.nTracks
		}
		err = lt.Abort(err, s)
	}
	return err
}

func metric(v any, unit string) evidence.Metric { return evidence.Metric{Value: v, Unit: unit} }

// coverage is what every table's summary says of the document.
func (d *decoder) coverage() evidence.Object {
	// Phases cut to one bounded key add up (whatever the map's order).
	counts := map[string]int64{}
	for k, v := range d.st.byPhase {
		if len(k) == 1 && k[0] < 128 {
			v += d.st.ph1[k[0]]
		}
		counts[d.sliceVals.Bound(k)] += v
	}
	phases := make(evidence.Object, len(counts))
	for k, v := range counts {
		phases[k] = v
	}
	c := evidence.Object{
		"events":            d.st.events,
		"events_by_phase":   phases,
		"time_unit":         "ns",
		"time_source":       "the trace's ts (microseconds on the producer's clock) converted to integer nanoseconds",
		"gzip":              d.compressed,
		"bare_array":        d.bareArray,
		"unterminated":      d.unterminated,
		"format_family":     map[bool]string{true: "kineto", false: "chrome"}[d.kineto],
		"display_time_unit": nil,
	}
	if d.displayTimeUnit != "" {
		c["display_time_unit"] = d.sliceVals.Bound(d.displayTimeUnit)
	}
	if len(d.meta) > 0 {
		c["metadata"] = d.meta
	}
	if len(d.st.notKeys) > 0 {
		c["members_not_interpreted"] = d.st.notKeys
	}
	if len(d.st.metadata) > 0 {
		m := evidence.Object{}
		for k, v := range d.st.metadata {
			m[k] = v
		}
		c["metadata_events_not_interpreted"] = m
	}
	return c
}

func (d *decoder) slicesSummary() *evidence.Summary {
	st := &d.st
	s := &evidence.Summary{Complete: true, Coverage: d.coverage(), Metrics: map[string]evidence.Metric{
		"events":                metric(st.events, "events"),
		"slices":                metric(d.nSlices, "slices"),
		"late_events":           metric(st.late, "events"),
		"overlapping_slices":    metric(st.overlapping, "slices"),
		"unmatched_end":         metric(st.unmatchedEnd, "events"),
		"unclosed_begin":        metric(st.unclosedBegin, "events"),
		"end_name_mismatch":     metric(st.endNameMismatch, "events"),
		"async_unmatched_end":   metric(st.asyncUnmatchedEnd, "events"),
		"async_unmatched_begin": metric(st.asyncUnmatchedBegin, "events"),
		"async_unclosed":        metric(st.asyncUnclosed, "slices"),
		"async_steps":           metric(st.asyncSteps, "events"),
		"object_snapshots":      metric(st.objectSnapshots, "events"),
		"objects_unmatched":     metric(st.objectsUnmatched, "events"),
		"objects_unclosed":      metric(st.objectsUnclosed, "slices"),
		"malformed_events":      metric(sum(st.malformed), "events"),
		"uninterpreted_events":  metric(st.uninterpreted+st.otherPhases, "events"),
		"rounded_times":         metric(st.rounded, "values"),
		"args_cut":              metric(st.argsCut, "entries"),
		"buffer_overflowed":     metric(st.bufferOverflowed, "events"),
	}}
	if d.rank.Valid {
		s.Metrics["dist_rank"] = metric(d.rank.V, "rank")
	}
	if st.unclosedBegin > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d B events never ended (first: %s): their slices are not rows, and the slices they enclose keep their place", st.unclosedBegin, strings.Join(st.unclosedNames, ", ")))
	}
	if st.asyncUnclosed > 0 || st.objectsUnclosed > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d async and %d object slices never ended: they are not rows", st.asyncUnclosed, st.objectsUnclosed))
	}
	if st.unmatchedEnd+st.asyncUnmatchedEnd+st.objectsUnmatched+st.asyncUnmatchedBegin > 0 {
		s.Limit(fmt.Sprintf("%d E, %d async end and %d object events matched no open slice, and %d async begins repeated an open one: counted, not rows",
			st.unmatchedEnd, st.asyncUnmatchedEnd, st.objectsUnmatched, st.asyncUnmatchedBegin))
	}
	if st.overlapping > 0 {
		s.Limit(fmt.Sprintf("%d slices overlap the slice they start in without ending inside it: their depth, parent and self time are null (not re-parented)", st.overlapping))
	}
	if st.late > 0 {
		s.Limit(fmt.Sprintf("%d events came after later events of their thread had left the reorder window (%s=%d): their depth, parent and self time are null", st.late, OptionWindow, d.nest.window))
	}
	if n := sum(st.malformed); n > 0 {
		s.Complete = false
		reasons := slices.Sorted(maps.Keys(st.malformed))
		parts := make([]string, len(reasons))
		for i, r := range reasons {
			parts[i] = fmt.Sprintf("%s: %d", r, st.malformed[r])
		}
		s.Limit(fmt.Sprintf("%d events could not be read and are not rows (%s)", n, strings.Join(parts, "; ")))
	}
	if n := st.uninterpreted + st.otherPhases; n > 0 {
		s.Limit(fmt.Sprintf("%d events of phases flameox does not interpret (memory dumps, clock sync, marks…) are counted by phase in coverage.events_by_phase, not rows", n))
	}
	if d.tef.eventStacks > 0 {
		s.Metrics["event_stacks"] = metric(d.tef.eventStacks, "events")
		s.Limit(fmt.Sprintf("%d events carry a stack of their own (sf, stack, esf or estack): counted, not read", d.tef.eventStacks))
	}
	if st.asyncSteps > 0 || st.objectSnapshots > 0 {
		s.Limit(fmt.Sprintf("%d async step (T/p) and %d object snapshot (O) events are counted, not rows", st.asyncSteps, st.objectSnapshots))
	}
	if st.bufferOverflowed > 0 {
		s.Complete = false
		s.Limit("the producer reports that its trace buffer overflowed (trace_buffer_overflowed): events were lost before the file was written")
	}
	if st.rounded > 0 {
		s.Limit(fmt.Sprintf("%d times had digits below the nanosecond and were rounded to the nearest ns (half to even)", st.rounded))
	}
	if st.argsCut > 0 {
		s.Limit(fmt.Sprintf("%d args entries beyond %s per event are left out; each such row's args holds \"…\": the count", st.argsCut, OptionMaxArgs))
	}
	if d.rankLate {
		s.Limit("distributedInfo follows traceEvents: the rows read before it carry no dist_rank; metrics.dist_rank has it")
	}
	if d.unterminated {
		s.Limit("the event array has no closing bracket (the format allows it; a writer stopped mid-trace leaves one): every complete event was read")
	}
	d.sliceVals.Summarize(s)
	return s
}

func (d *decoder) countersSummary() *evidence.Summary {
	s := &evidence.Summary{Complete: true, Coverage: evidence.Object{"time_unit": "ns"}, Metrics: map[string]evidence.Metric{
		"counter_values_not_numeric": metric(d.st.counterNotNumeric, "values"),
		"counter_series_cut":         metric(d.st.counterCut, "values"),
	}}
	if d.st.counterNotNumeric > 0 {
		s.Limit(fmt.Sprintf("%d counter args values are not numbers: they are not rows", d.st.counterNotNumeric))
	}
	if d.st.counterCut > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d counter series beyond %s per event are left out", d.st.counterCut, OptionMaxArgs))
	}
	d.counterVals.Summarize(s)
	return s
}

func (d *decoder) simpleSummary(v *formats.Values) *evidence.Summary {
	s := &evidence.Summary{Complete: true, Coverage: evidence.Object{"time_unit": "ns"}}
	v.Summarize(s)
	return s
}
