package perfetto

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"google.golang.org/protobuf/encoding/protowire"
)

// stats are the counts a trace's summaries state.
type stats struct {
	packets, traceFields, compressedBundles, multipleData, noData int64
	data                                                          map[protowire.Number]int64
	notInterp                                                     map[[2]int32]int64
	lowNotInterp                                                  [nMsgs][nLowFields]int64
	lowData                                                       [nLowData]int64
	needsState                                                    int64
	needsStateBy                                                  map[protowire.Number]int64
	dropped, droppedAtStart                                       int64
	snapshots, noTimestamp                                        int64

	events, defaultTrack, undescribed, outOfOrder, late              int64
	byType                                                           [5]int64
	otherTypes                                                       map[uint64]int64
	legacy                                                           int64
	unmatchedEnd, unclosedBegin, endBeforeBegin, skippedSlices       int64
	missingName, missingCategory, missingAnnotation, unnamed         int64
	counterNoValue, counterNotCounterTrack, extraNoTrack             int64
	flowEndUnstarted, flowsOpen                                      int64
	descriptorNoUUID                                                 int64
	argsCut, argsDepthCut, duplicateArgs, malformedArgs, unnamedArgs int64
	unclosedNames                                                    []string

	invalidUTF8 int64
	legacyTimes int64

	traceStats     evidence.Object // the last trace_stats packet's loss counters
	traceStatsLoss int64
}

func (s *stats) init() {
	s.data = map[protowire.Number]int64{}
	s.notInterp = map[[2]int32]int64{}
	s.needsStateBy = map[protowire.Number]int64{}
	s.otherTypes = map[uint64]int64{}
}

// notInterpreted counts a field of message msg that is read past.
// Most are a few low-numbered fields met at every packet or event
// (trusted_uid, task_execution): those count in an array, folded into
// notInterp (with the data fields into data) before a summary reads
// them (foldLow).
func (s *stats) notInterpreted(msg int, num protowire.Number) {
	if num >= 0 && num < nLowFields {
		s.lowNotInterp[msg][num]++
		return
	}
	s.notInterp[[2]int32{int32(msg), int32(num)}]++
}

const nLowFields = 64

// dataField counts a packet's data field (its payload message): an
// array for the low numbers most packets carry, folded into data before
// it is read.
func (s *stats) dataField(num protowire.Number) {
	if num >= 0 && num < nLowData {
		s.lowData[num]++
		return
	}
	s.data[num]++
}

const nLowData = 160

func (s *stats) foldLow() {
	for num, n := range s.lowData {
		if n != 0 {
			s.data[protowire.Number(num)] += n
			s.lowData[num] = 0
		}
	}
	for msg := range s.lowNotInterp {
		for num, n := range s.lowNotInterp[msg] {
			if n != 0 {
				s.notInterp[[2]int32{int32(msg), int32(num)}] += n
				s.lowNotInterp[msg][num] = 0
			}
		}
	}
}

// fieldName names a field by message and number.
func fieldName(msg, num int32) string {
	var name string
	switch msg {
	case msgPacket:
		name = packetFields[num]
	case msgTrackEvent:
		name = trackEventFields[num]
	case msgInterned:
		name = internedFields[num]
	}
	if name == "" {
		return strconv.Itoa(int(num))
	}
	return strconv.Itoa(int(num)) + " " + name
}

// traceStats reads the loss counters of a TraceStats packet (the
// service's view of the buffers: chunks overwritten or discarded,
// packets lost by writers); the last one holds the totals.
func (d *decoder) traceStats(b []byte, at int64) error {
	o := evidence.Object{}
	var loss int64
	bufs := []any{}
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
		switch num {
		case 1:
			bo := evidence.Object{}
			if err := fields(body, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) error {
				if n, ok := bufferLoss[num]; ok && v > 0 {
					bo[n] = int64(v)
					loss += int64(v)
				}
				if num == 12 {
					bo["buffer_size"] = int64(v)
				}
				return nil
			}, nil); err != nil {
				return err
			}
			bufs = append(bufs, bo)
		case 8, 9, 10, 14:
			// Service-wide counters (all sessions of the service), not
			// this trace's loss: kept, not counted as loss.
			if v > 0 {
				o["service_"+statsLoss[num]] = int64(v)
			}
		}
		return nil
	}, d.fieldErr(at, "trace_stats"))
	if err != nil {
		return err
	}
	o["buffers"] = bufs
	d.st.traceStats, d.st.traceStatsLoss = o, loss
	return nil
}

// The TraceStats.BufferStats fields that count data lost.
var bufferLoss = map[protowire.Number]string{3: "chunks_overwritten", 18: "chunks_discarded", 6: "patches_failed",
	9: "abi_violations", 19: "trace_writer_packet_loss", 22: "oversized_packets_dropped"}

var statsLoss = map[protowire.Number]string{8: "chunks_discarded", 9: "patches_discarded", 10: "invalid_packets", 14: "flushes_failed"}

func metric(v any, unit string) evidence.Metric { return evidence.Metric{Value: v, Unit: unit} }

func (d *decoder) coverage() evidence.Object {
	st := &d.st
	st.foldLow()
	data := evidence.Object{}
	for num, n := range st.data {
		data[fieldName(msgPacket, int32(num))] = n
	}
	c := evidence.Object{
		"packets":                  st.packets,
		"packets_by_data":          data,
		"compressed_packets":       st.compressedBundles,
		"gzip":                     d.gzip,
		"time_unit":                "ns",
		"time_source":              "packet timestamps on the trace's clock " + clockName(d.clk.primary) + ", other clocks converted through the clock snapshots",
		"primary_clock":            clockName(d.clk.primary),
		"primary_clock_named":      d.clk.named,
		"sequences":                int64(len(d.seqs)),
		"track_descriptors_tracks": int64(len(d.trks)),
	}
	ni := map[string]evidence.Object{}
	for k, n := range st.notInterp {
		m := msgNames[k[0]]
		if ni[m] == nil {
			ni[m] = evidence.Object{}
		}
		ni[m][fieldName(k[0], k[1])] = n
	}
	if len(ni) > 0 {
		o := evidence.Object{}
		for k, v := range ni {
			o[k] = v
		}
		c["fields_not_interpreted"] = o
	}
	if len(d.clk.failed) > 0 {
		f := evidence.Object{}
		for id, n := range d.clk.failed {
			f[clockName(id)] = n
		}
		c["clock_conversions_failed_by_clock"] = f
	}
	if st.traceStats != nil {
		c["trace_stats"] = st.traceStats
	}
	if d.truncatedAt >= 0 {
		c["truncated_at"] = d.truncatedAt
	}
	return c
}

func clockName(id uint32) string {
	names := map[uint32]string{1: "REALTIME", 2: "REALTIME_COARSE", 3: "MONOTONIC", 4: "MONOTONIC_COARSE", 5: "MONOTONIC_RAW", 6: "BOOTTIME", 9: "TSC", 10: "PERF", 11: "TRACE_FILE"}
	if n, ok := names[id]; ok {
		return n + " (" + strconv.Itoa(int(id)) + ")"
	}
	if id >= firstSeqClock && id < firstNonSeqClk {
		return "sequence clock " + strconv.Itoa(int(id))
	}
	return "clock " + strconv.Itoa(int(id))
}

func sumMap[K comparable](m map[K]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// loss adds what the trace says of its own data loss to s.
func (d *decoder) loss(s *evidence.Summary) {
	st := &d.st
	if st.dropped > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d packets say the packets before them on their sequence were lost (previous_packet_dropped)", st.dropped))
	}
	if st.traceStatsLoss > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("the tracing service reports data lost in this trace's buffers (trace_stats.buffer_stats: %d chunks, patches or packets overwritten, discarded or lost; coverage.trace_stats)", st.traceStatsLoss))
	}
	if st.needsState > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d packets need their sequence's incremental state (SEQ_NEEDS_INCREMENTAL_STATE) where it was never set or was lost: they are counted, not read", st.needsState))
	}
	if n := sumMap(d.clk.failed) + d.clk.overflowed; n > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d packets are on a clock no snapshot converts to the trace's clock %s (coverage.clock_conversions_failed_by_clock): they are counted, not rows", n, clockName(d.clk.primary)))
	}
	if d.clk.ignored > 0 {
		s.Limit(fmt.Sprintf("%d clock snapshots or configs name another primary clock after times were converted: ignored, as Trace Processor does", d.clk.ignored))
	}
	if st.noTimestamp > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d track events have no packet timestamp: counted, not rows", st.noTimestamp))
	}
	if d.truncatedAt >= 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("the stream ends inside the packet at byte offset %d (%d bytes of it present): every packet before it was read", d.truncatedAt, d.truncatedBytes))
	}
	if st.traceFields > 0 {
		s.Limit(fmt.Sprintf("%d top-level fields other than packet were skipped", st.traceFields))
	}
}

func (d *decoder) slicesSummary() *evidence.Summary {
	d.st.foldLow()
	st := &d.st
	s := &evidence.Summary{Complete: true, Coverage: d.coverage(), Metrics: map[string]evidence.Metric{
		"packets":                          metric(st.packets, "packets"),
		"track_events":                     metric(st.events, "events"),
		"slice_begin":                      metric(st.byType[typeBegin], "events"),
		"slice_end":                        metric(st.byType[typeEnd], "events"),
		"instant":                          metric(st.byType[typeInstant], "events"),
		"counter_events":                   metric(st.byType[typeCounter], "events"),
		"slices":                           metric(d.nSlices, "slices"),
		"unmatched_end":                    metric(st.unmatchedEnd, "events"),
		"unclosed_begin":                   metric(st.unclosedBegin, "events"),
		"end_before_begin":                 metric(st.endBeforeBegin, "slices"),
		"out_of_order_events":              metric(st.outOfOrder, "events"),
		"late_events":                      metric(st.late, "events"),
		"interned_name_missing":            metric(st.missingName, "events"),
		"interned_category_missing":        metric(st.missingCategory, "events"),
		"interned_annotation_missing":      metric(st.missingAnnotation, "values"),
		"packets_needing_missing_state":    metric(st.needsState, "packets"),
		"previous_packet_dropped":          metric(st.dropped, "packets"),
		"sequences_starting_with_drop":     metric(st.droppedAtStart, "packets"),
		"clock_conversions":                metric(d.clk.converted, "packets"),
		"clock_conversions_failed":         metric(sumMap(d.clk.failed)+d.clk.overflowed, "packets"),
		"legacy_events_not_interpreted":    metric(st.legacy, "events"),
		"events_of_other_types":            metric(sumMap(st.otherTypes)+st.byType[typeUnspecified], "events"),
		"events_on_undescribed_tracks":     metric(st.undescribed, "events"),
		"events_on_default_track":          metric(st.defaultTrack, "events"),
		"fields_not_interpreted":           metric(sumMap(st.notInterp), "fields"),
		"args_cut":                         metric(st.argsCut, "entries"),
		"trace_stats_loss":                 metric(st.traceStatsLoss, "chunks"),
		"packets_with_several_data_fields": metric(st.multipleData, "packets"),
		"strings_not_utf8":                 metric(st.invalidUTF8, "values"),
		"legacy_us_timestamps":             metric(st.legacyTimes, "events"),
	}}
	d.loss(s)
	if st.unclosedBegin > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d SLICE_BEGIN events never ended (first: %s): their slices are not rows, and the slices they enclose keep their place", st.unclosedBegin, strings.Join(st.unclosedNames, ", ")))
	}
	if st.unmatchedEnd > 0 {
		s.Limit(fmt.Sprintf("%d SLICE_END events matched no open slice on their track: counted, not rows", st.unmatchedEnd))
	}
	if n := st.missingName + st.skippedSlices; n > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d slice events name an interned event name their sequence never defined: counted, not rows", st.missingName))
	}
	if st.missingCategory+st.missingAnnotation > 0 {
		s.Limit(fmt.Sprintf("%d interned categories and %d interned debug annotation names or values are missing from their sequence: left out of the rows' category and args", st.missingCategory, st.missingAnnotation))
	}
	if st.outOfOrder > 0 {
		s.Limit(fmt.Sprintf("%d track events are earlier than the event before them on their track (several sequences write it, or explicit times): slices nest in time order through the reorder window", st.outOfOrder))
	}
	if st.late > 0 {
		s.Limit(fmt.Sprintf("%d slice events came after later events of their track had left the reorder window (%s=%d, %s=%d): applied in file order", st.late, OptionWindow, d.window, OptionWindowNS, d.horizon))
	}
	if st.legacy > 0 || sumMap(st.otherTypes)+st.byType[typeUnspecified] > 0 {
		s.Limit(fmt.Sprintf("%d legacy events (TrackEvent.legacy_event, Chrome JSON phases) and %d events of other types (TYPE_STATE…) are counted, not rows", st.legacy, sumMap(st.otherTypes)+st.byType[typeUnspecified]))
	}
	if n := sumMap(st.notInterp); n > 0 {
		s.Limit(fmt.Sprintf("%d packet and event fields flameox does not interpret (ftrace, process stats, Chrome-specific payloads…) are counted by field in coverage.fields_not_interpreted, not rows", n))
	}
	if st.argsCut > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d debug annotations beyond %s per slice or nested value are left out; each such object holds \"…\": the count", st.argsCut, OptionMaxArgs))
	}
	if st.argsDepthCut+st.malformedArgs+st.unnamedArgs > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d debug annotations nest too deep, %d are malformed and %d have no name: cut or left out of args", st.argsDepthCut, st.malformedArgs, st.unnamedArgs))
	}
	if st.invalidUTF8 > 0 {
		s.Limit(fmt.Sprintf("%d native strings are not UTF-8: in names and categories their bad bytes read U+FFFD; an annotation value keeps its bytes as {\"type\":\"bytes\",\"value\":base64}", st.invalidUTF8))
	}
	if st.duplicateArgs > 0 {
		s.Limit(fmt.Sprintf("%d debug annotations repeat a name of their slice: the first value is kept", st.duplicateArgs))
	}
	d.sliceVals.Summarize(s)
	return s
}

func (d *decoder) countersSummary() *evidence.Summary {
	st := &d.st
	s := &evidence.Summary{Complete: true, Coverage: evidence.Object{"time_unit": "ns", "primary_clock": clockName(d.clk.primary)}, Metrics: map[string]evidence.Metric{
		"counters":                   metric(d.nCounters, "values"),
		"counter_events_no_value":    metric(st.counterNoValue, "events"),
		"values_on_non_counter":      metric(st.counterNotCounterTrack, "values"),
		"extra_values_without_track": metric(st.extraNoTrack, "values"),
	}}
	d.loss(s)
	if st.extraNoTrack > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d extra counter values have no track uuid (beyond extra_counter_track_uuids and the defaults): not rows", st.extraNoTrack))
	}
	if st.counterNotCounterTrack > 0 {
		s.Limit(fmt.Sprintf("%d counter values are on tracks no counter descriptor describes (yet): their rows are named by the track", st.counterNotCounterTrack))
	}
	if st.counterNoValue > 0 {
		s.Limit(fmt.Sprintf("%d TYPE_COUNTER events carry no value: not rows", st.counterNoValue))
	}
	d.ctrVals.Summarize(s)
	return s
}

func (d *decoder) flowsSummary() *evidence.Summary {
	s := &evidence.Summary{Complete: true, Coverage: evidence.Object{"time_unit": "ns"}, Metrics: map[string]evidence.Metric{
		"flows_not_terminated":  metric(d.st.flowsOpen, "flows"),
		"flow_ends_not_started": metric(d.st.flowEndUnstarted, "flows"),
	}}
	d.loss(s)
	if d.st.flowsOpen > 0 {
		s.Limit(fmt.Sprintf("%d flows never reach a terminating_flow_ids event (the format allows it): their last point is a step", d.st.flowsOpen))
	}
	return s
}

func (d *decoder) tracksSummary() *evidence.Summary {
	d.st.foldLow()
	s := &evidence.Summary{Complete: true, Coverage: evidence.Object{"descriptors": d.st.data[fTrackDescriptor]}, Metrics: map[string]evidence.Metric{
		"descriptors_without_uuid": metric(d.st.descriptorNoUUID, "descriptors"),
	}}
	d.trVals.Summarize(s)
	return s
}

// end counts what is still open and closes every table.
func (d *decoder) end() error {
	var all []*track
	for _, u := range slices.Sorted(maps.Keys(d.trks)) {
		all = append(all, d.trks[u])
	}
	for _, k := range slices.SortedFunc(maps.Keys(d.legacy), func(a, b [2]int64) int {
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		return cmp.Compare(a[1], b[1])
	}) {
		all = append(all, d.legacy[k])
	}
	if err := d.drain(all); err != nil {
		return err
	}
	for _, tr := range all {
		for _, o := range tr.stack {
			if o.skip {
				continue
			}
			d.st.unclosedBegin++
			if len(d.st.unclosedNames) < 5 {
				d.st.unclosedNames = append(d.st.unclosedNames, o.row.Name)
			}
		}
	}
	d.st.flowsOpen = int64(len(d.flowSet))
	for _, t := range []struct {
		lt   *formats.LazyTable
		s    *evidence.Summary
		rows int64
	}{
		{d.slices, d.slicesSummary(), d.nSlices},
		{d.counters, d.countersSummary(), d.nCounters},
		{d.flows, d.flowsSummary(), d.nFlows},
		{d.tracks, d.tracksSummary(), d.nTrks},
	} {
		t.s.RowsObserved = t.rows
		if err := t.lt.End(t.s); err != nil {
			return err
		}
	}
	return d.emitCPU(d.out)
}

// abort ends the tables begun so far as incomplete and returns err.
func (d *decoder) abort(err error) error {
	for _, t := range []struct {
		lt   *formats.LazyTable
		rows int64
	}{{d.slices, d.nSlices}, {d.counters, d.nCounters}, {d.flows, d.nFlows}, {d.tracks, d.nTrks}} {
		s := &evidence.Summary{Complete: false, RowsObserved: t.rows}
		s.Limit("decoding stopped at a failure: " + err.Error())
		err = t.lt.Abort(err, s)
	}
	return err
}
