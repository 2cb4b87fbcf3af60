package otlp

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/table"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

const (
	encJSON     = "json"
	encProtobuf = "protobuf"
)

// maxValueDepth bounds how deep nested array and kvlist attribute values
// are projected; deeper ones are cut (counted, the table incomplete).
const maxValueDepth = 32

// decoder is the state of one decode.
type decoder struct {
	ctx        context.Context
	in         *formats.Input
	keepArgs   bool
	maxArgs    int
	compressed bool
	encoding   string
	jsonRead   bool   // a whole resourceSpans element was read as JSON
	triedJSON  string // why the bytes did not read as JSON, when they were read as protobuf after

	slices, counters, flows, tracks *formats.LazyTable
	sliceVals, trVals               *formats.Values
	nSlices, nTracks                int64
	seenTracks                      map[string]bool

	resourceSpans, scopeSpans, spans, events, links int64
	endBeforeStart, argsCut, depthCut, nullValues   int64
	dupKeys, emptyResources                         int64
	unknownMembers                                  map[string]int64
}

func newDecoder(ctx context.Context, in *formats.Input, out formats.Sink) *decoder {
	d := &decoder{ctx: ctx, in: in, keepArgs: in.Bool(OptionArgs), maxArgs: int(in.Int(OptionMaxArgs)),
		sliceVals: in.Values(), trVals: in.Values(), seenTracks: map[string]bool{}, unknownMembers: map[string]int64{}}
	if _, ok := in.Options[OptionArgs]; !ok {
		d.keepArgs = true // an Input built by hand carries no defaults
	}
	if _, ok := in.Options[OptionMaxArgs]; !ok {
		d.maxArgs = 64
	}
	d.slices = formats.NewLazyTable(out, table.TraceSlices.Header(""))
	d.counters = formats.NewLazyTable(out, table.TraceCounters.Header(""))
	d.flows = formats.NewLazyTable(out, table.TraceFlows.Header(""))
	d.tracks = formats.NewLazyTable(out, table.TraceTracks.Header(""))
	return d
}

// reset forgets what a failed JSON attempt counted (it emitted no row).
func (d *decoder) reset() {
	d.resourceSpans, d.scopeSpans, d.spans, d.events, d.links = 0, 0, 0, 0, 0
	d.endBeforeStart, d.argsCut, d.depthCut, d.nullValues, d.dupKeys, d.emptyResources = 0, 0, 0, 0, 0, 0
	d.unknownMembers = map[string]int64{}
	d.sliceVals, d.trVals = d.in.Values(), d.in.Values()
}

// resource emits the rows of one ResourceSpans.
func (d *decoder) resource(rs *tracepb.ResourceSpans) error {
	if err := d.ctx.Err(); err != nil {
		return err
	}
	d.resourceSpans++
	var service table.Null[string]
	var resAttrs []*commonpb.KeyValue
	if r := rs.GetResource(); r != nil {
		resAttrs = r.GetAttributes()
		for _, kv := range resAttrs {
			if kv.GetKey() == "service.name" {
				if s, ok := kv.GetValue().GetValue().(*commonpb.AnyValue_StringValue); ok {
					service = table.Some(d.sliceVals.Bound(s.StringValue))
				}
				break
			}
		}
	}
	resourceEmitted := false
	owned := false
	for _, ss := range rs.GetScopeSpans() {
		d.scopeSpans++
		if len(ss.GetSpans()) == 0 {
			continue
		}
		owned = true
		if !resourceEmitted {
			resourceEmitted = true
			if err := d.track(&table.TraceTrack{Kind: table.TrackProcess, Process: service, Name: service,
				Labels: d.labels(resAttrs, rs.GetSchemaUrl())}); err != nil {
				return err
			}
		}
		var track table.Null[string]
		if sc := ss.GetScope(); sc != nil && (sc.GetName() != "" || sc.GetVersion() != "") {
			id := sc.GetName()
			if sc.GetVersion() != "" {
				id += "@" + sc.GetVersion()
			}
			track = table.Some(d.sliceVals.Bound(id))
			if err := d.track(&table.TraceTrack{Kind: table.TrackOther, Process: service, Track: track,
				Name: table.Some(d.trVals.Bound(sc.GetName())), Labels: d.labels(sc.GetAttributes(), ss.GetSchemaUrl())}); err != nil {
				return err
			}
		}
		for _, sp := range ss.GetSpans() {
			if err := d.span(sp, service, track); err != nil {
				return err
			}
		}
	}
	if !owned {
		d.emptyResources++
	}
	return nil
}

func (d *decoder) track(t *table.TraceTrack) error {
	key := fmt.Sprintf("%s\x00%v\x00%v\x00%v\x00%v", t.Kind, t.Process, t.Track, t.Name, t.Labels)
	if d.seenTracks[key] {
		return nil
	}
	d.seenTracks[key] = true
	d.nTracks++
	return d.tracks.Row(t)
}

// labels is a resource's or scope's attributes (and schema URL) as
// canonical JSON.
func (d *decoder) labels(attrs []*commonpb.KeyValue, schemaURL string) table.Null[string] {
	if len(attrs) == 0 && schemaURL == "" {
		return table.Null[string]{}
	}
	o := evidence.Object{}
	if len(attrs) > 0 {
		o["attributes"] = d.attributes(attrs, d.trVals)
	}
	if schemaURL != "" {
		o["schema_url"] = d.trVals.Bound(schemaURL)
	}
	b, err := evidence.Canonical(o)
	if err != nil {
		return table.Null[string]{}
	}
	return table.Some(d.trVals.Bound(string(b)))
}

var kindNames = map[tracepb.Span_SpanKind]string{
	tracepb.Span_SPAN_KIND_UNSPECIFIED: "unspecified",
	tracepb.Span_SPAN_KIND_INTERNAL:    "internal",
	tracepb.Span_SPAN_KIND_SERVER:      "server",
	tracepb.Span_SPAN_KIND_CLIENT:      "client",
	tracepb.Span_SPAN_KIND_PRODUCER:    "producer",
	tracepb.Span_SPAN_KIND_CONSUMER:    "consumer",
}

var statusNames = map[tracepb.Status_StatusCode]string{
	tracepb.Status_STATUS_CODE_UNSET: "unset",
	tracepb.Status_STATUS_CODE_OK:    "ok",
	tracepb.Status_STATUS_CODE_ERROR: "error",
}

func kindName(k tracepb.Span_SpanKind) string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "kind_" + strconv.Itoa(int(k)) // a kind newer than this decoder, by its number
}

// id is an OTLP id as lower-case hex, checked for its length.
func id(b []byte, n int, what string) (string, error) {
	if len(b) != n {
		return "", fmt.Errorf("%s has %d bytes, OTLP requires %d", what, len(b), n)
	}
	return hex.EncodeToString(b), nil
}

func ns(v uint64, what string) (int64, error) {
	if v > math.MaxInt64 {
		return 0, fmt.Errorf("%s %d is beyond int64 nanoseconds", what, v)
	}
	return int64(v), nil
}

func (d *decoder) span(sp *tracepb.Span, service, track table.Null[string]) error {
	d.spans++
	where := func(err error) error {
		return evidence.Failf(evidence.CodeDecodeFailure, "%s: span %d (%q): %v", d.in.Spec.Title, d.spans, trim(sp.GetName()), err)
	}
	traceID, err := id(sp.GetTraceId(), 16, "trace_id")
	if err != nil {
		return where(err)
	}
	spanID, err := id(sp.GetSpanId(), 8, "span_id")
	if err != nil {
		return where(err)
	}
	var parent table.Null[string]
	if p := sp.GetParentSpanId(); len(p) > 0 {
		s, err := id(p, 8, "parent_span_id")
		if err != nil {
			return where(err)
		}
		parent = table.Some(s)
	}
	start, err := ns(sp.GetStartTimeUnixNano(), "start_time_unix_nano")
	if err != nil {
		return where(err)
	}
	end, err := ns(sp.GetEndTimeUnixNano(), "end_time_unix_nano")
	if err != nil {
		return where(err)
	}
	if end < start {
		d.endBeforeStart++
	}
	d.events += int64(len(sp.GetEvents()))
	d.links += int64(len(sp.GetLinks()))
	row := &table.TraceSlice{
		SliceID: spanID, ParentID: parent, Kind: table.SliceSpan, Name: d.sliceVals.Bound(sp.GetName()),
		Category: table.Some(kindName(sp.GetKind())),
		TraceIDs: table.TraceIDs{Process: service, Track: track},
		StartNS:  start, EndNS: end, DurationNS: end - start,
		TraceID: table.Some(traceID),
	}
	if d.keepArgs {
		row.Args = d.spanArgs(sp)
	}
	d.nSlices++
	return d.slices.Row(row)
}

func trim(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// spanArgs is everything of a span beyond its columns: attributes,
// status, events, links, trace state, flags and dropped counts.
func (d *decoder) spanArgs(sp *tracepb.Span) evidence.Object {
	v := d.sliceVals
	o := evidence.Object{}
	if a := sp.GetAttributes(); len(a) > 0 {
		o["attributes"] = d.attributes(a, v)
	}
	if st := sp.GetStatus(); st != nil && (st.GetCode() != 0 || st.GetMessage() != "") {
		code, ok := statusNames[st.GetCode()]
		if !ok {
			code = "code_" + strconv.Itoa(int(st.GetCode()))
		}
		s := evidence.Object{"code": code}
		if st.GetMessage() != "" {
			s["message"] = v.Bound(st.GetMessage())
		}
		o["status"] = s
	}
	if evs := sp.GetEvents(); len(evs) > 0 {
		list := make([]any, 0, min(len(evs), d.maxArgs)+1)
		for i, e := range evs {
			if i == d.maxArgs {
				d.argsCut += int64(len(evs) - i)
				list = append(list, evidence.Object{"…": int64(len(evs) - i)})
				break
			}
			eo := evidence.Object{"name": v.Bound(e.GetName()), "time_ns": timeValue(e.GetTimeUnixNano())}
			if a := e.GetAttributes(); len(a) > 0 {
				eo["attributes"] = d.attributes(a, v)
			}
			if n := e.GetDroppedAttributesCount(); n > 0 {
				eo["dropped_attributes_count"] = int64(n)
			}
			list = append(list, eo)
		}
		o["events"] = list
	}
	if ls := sp.GetLinks(); len(ls) > 0 {
		list := make([]any, 0, min(len(ls), d.maxArgs)+1)
		for i, l := range ls {
			if i == d.maxArgs {
				d.argsCut += int64(len(ls) - i)
				list = append(list, evidence.Object{"…": int64(len(ls) - i)})
				break
			}
			lo := evidence.Object{"trace_id": hex.EncodeToString(l.GetTraceId()), "span_id": hex.EncodeToString(l.GetSpanId())}
			if s := l.GetTraceState(); s != "" {
				lo["trace_state"] = v.Bound(s)
			}
			if a := l.GetAttributes(); len(a) > 0 {
				lo["attributes"] = d.attributes(a, v)
			}
			if f := l.GetFlags(); f != 0 {
				lo["flags"] = int64(f)
			}
			if n := l.GetDroppedAttributesCount(); n > 0 {
				lo["dropped_attributes_count"] = int64(n)
			}
			list = append(list, lo)
		}
		o["links"] = list
	}
	if s := sp.GetTraceState(); s != "" {
		o["trace_state"] = v.Bound(s)
	}
	if f := sp.GetFlags(); f != 0 {
		o["flags"] = int64(f)
	}
	for k, n := range map[string]uint32{"dropped_attributes_count": sp.GetDroppedAttributesCount(),
		"dropped_events_count": sp.GetDroppedEventsCount(), "dropped_links_count": sp.GetDroppedLinksCount()} {
		if n > 0 {
			o[k] = int64(n)
		}
	}
	if len(o) == 0 {
		return nil
	}
	return o
}

// timeValue is a fixed64 time as an exact integer (canonical JSON writes
// one beyond 2^53 as a decimal string).
func timeValue(t uint64) any {
	if t > math.MaxInt64 {
		return strconv.FormatUint(t, 10)
	}
	return int64(t)
}

// attributes projects a key/value list into an object, at most maxArgs
// entries (then "…": the count left out); a repeated key keeps its first
// value and is counted.
func (d *decoder) attributes(kvs []*commonpb.KeyValue, v *formats.Values) evidence.Object {
	return d.kvlist(kvs, v, 0)
}

func (d *decoder) kvlist(kvs []*commonpb.KeyValue, v *formats.Values, depth int) evidence.Object {
	o := make(evidence.Object, min(len(kvs), d.maxArgs+1))
	kept := 0
	for i, kv := range kvs {
		k := v.Bound(kv.GetKey())
		if _, dup := o[k]; dup {
			d.dupKeys++
			continue
		}
		if kept == d.maxArgs {
			d.argsCut += int64(len(kvs) - i)
			o["…"] = int64(len(kvs) - i)
			break
		}
		kept++
		o[k] = d.value(kv.GetValue(), v, depth)
	}
	return o
}

// value projects one AnyValue: strings bounded, integers exact, finite
// doubles as numbers and non-finite ones tagged
// {"type":"double","value":"NaN"} (a string attribute "NaN" stays a
// string), bytes tagged with their base64, arrays and kvlists the same
// way nested; an empty value (unset, or JSON null) is null.
func (d *decoder) value(a *commonpb.AnyValue, v *formats.Values, depth int) any {
	switch x := a.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return v.Bound(x.StringValue)
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return evidence.Double(x.DoubleValue)
	case *commonpb.AnyValue_BytesValue:
		return evidence.Object{"type": "bytes", "value": v.Bound(base64.StdEncoding.EncodeToString(x.BytesValue))}
	case *commonpb.AnyValue_ArrayValue:
		if depth >= maxValueDepth {
			d.depthCut++
			return evidence.Object{"type": "array", "cut": "nested deeper than " + strconv.Itoa(maxValueDepth)}
		}
		vals := x.ArrayValue.GetValues()
		list := make([]any, 0, min(len(vals), d.maxArgs)+1)
		for i, e := range vals {
			if i == d.maxArgs {
				d.argsCut += int64(len(vals) - i)
				list = append(list, evidence.Object{"…": int64(len(vals) - i)})
				break
			}
			list = append(list, d.value(e, v, depth+1))
		}
		return list
	case *commonpb.AnyValue_KvlistValue:
		if depth >= maxValueDepth {
			d.depthCut++
			return evidence.Object{"type": "kvlist", "cut": "nested deeper than " + strconv.Itoa(maxValueDepth)}
		}
		return d.kvlist(x.KvlistValue.GetValues(), v, depth+1)
	}
	d.nullValues++
	return nil
}

func metric(v any, unit string) evidence.Metric { return evidence.Metric{Value: v, Unit: unit} }

func (d *decoder) coverage() evidence.Object {
	c := evidence.Object{
		"encoding":       d.encoding,
		"gzip":           d.compressed,
		"time_unit":      "ns",
		"time_source":    "span start_time_unix_nano/end_time_unix_nano: nanoseconds since the Unix epoch",
		"resource_spans": d.resourceSpans,
		"scope_spans":    d.scopeSpans,
	}
	if d.triedJSON != "" {
		c["json_attempt"] = d.sliceVals.Bound(d.triedJSON)
	}
	if len(d.unknownMembers) > 0 {
		m := evidence.Object{}
		for k, n := range d.unknownMembers {
			m[k] = n
		}
		c["json_members_ignored"] = m
	}
	return c
}

func (d *decoder) slicesSummary() *evidence.Summary {
	s := &evidence.Summary{Complete: true, Coverage: d.coverage(), Metrics: map[string]evidence.Metric{
		"spans":                   metric(d.spans, "spans"),
		"events":                  metric(d.events, "events"),
		"links":                   metric(d.links, "links"),
		"spans_end_before_start":  metric(d.endBeforeStart, "spans"),
		"args_cut":                metric(d.argsCut, "entries"),
		"values_nesting_cut":      metric(d.depthCut, "values"),
		"empty_values":            metric(d.nullValues, "values"),
		"duplicate_keys":          metric(d.dupKeys, "entries"),
		"resources_without_spans": metric(d.emptyResources, "resources"),
	}}
	if d.endBeforeStart > 0 {
		s.Limit(fmt.Sprintf("%d spans end before they start (as the producer wrote them): their duration_ns is negative", d.endBeforeStart))
	}
	if d.argsCut > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d attributes, events, links or nested values beyond %s per list are left out; each such list holds \"…\": the count", d.argsCut, OptionMaxArgs))
	}
	if d.depthCut > 0 {
		s.Complete = false
		s.Limit(fmt.Sprintf("%d attribute values nested deeper than %d levels are cut", d.depthCut, maxValueDepth))
	}
	if d.dupKeys > 0 {
		s.Limit(fmt.Sprintf("%d attributes repeat a key of their list (OTLP requires unique keys): the first value is kept", d.dupKeys))
	}
	if d.nullValues > 0 {
		s.Limit(fmt.Sprintf("%d attribute values are empty (unset, or JSON null, which some JSON exporters write for NaN and ±Infinity): they are null", d.nullValues))
	}
	if d.triedJSON != "" {
		s.Limit("the bytes begin like JSON but are not OTLP/JSON; they were read as protobuf")
	}
	d.sliceVals.Summarize(s)
	return s
}

func (d *decoder) end() error {
	for _, t := range []struct {
		lt   *formats.LazyTable
		s    *evidence.Summary
		rows int64
	}{
		{d.slices, d.slicesSummary(), d.nSlices},
		{d.counters, d.empty("OTLP traces have no counters (metrics are a separate OTLP signal)"), 0},
		{d.flows, d.empty("OTLP span links are in each span's args.links, not flows"), 0},
		{d.tracks, d.tracksSummary(), d.nTracks},
	} {
		t.s.RowsObserved = t.rows
		if err := t.lt.End(t.s); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) empty(why string) *evidence.Summary {
	return &evidence.Summary{Complete: true, Coverage: evidence.Object{"time_unit": "ns", "encoding": d.encoding, "note": why}}
}

func (d *decoder) tracksSummary() *evidence.Summary {
	s := &evidence.Summary{Complete: true, Coverage: evidence.Object{"time_unit": "ns", "encoding": d.encoding,
		"rows": "one process row per resource (process: its service.name, labels: its attributes) and one track row per instrumentation scope (track: name@version) that own spans; repeats are written once"}}
	d.trVals.Summarize(s)
	return s
}

// abort ends the tables begun so far as incomplete and returns err.
func (d *decoder) abort(err error) error {
	for _, lt := range []*formats.LazyTable{d.slices, d.counters, d.flows, d.tracks} {
		s := &evidence.Summary{Complete: false}
		s.Limit("decoding stopped at a failure: " + err.Error())
		switch lt {
		case d.slices:
			s.RowsObserved = d.nSlices
		case d.tracks:
			s.RowsObserved = d.nTracks
		}
		err = lt.Abort(err, s)
	}
	return err
}
