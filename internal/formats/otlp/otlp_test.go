package otlp

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// fixtures are the OTLP artifacts under testdata/otlp with the encoding
// each is in.
var fixtures = map[string]string{
	"python-sdk.pb":       encProtobuf,
	"js-sdk.json":         encJSON,
	"schema-mapping.json": encJSON,
	"shared-example.json": encJSON,
}

type perName map[string]struct {
	Count   int64 `json:"count"`
	TotalNS int64 `json:"total_ns"`
}

func slicesOf(t *testing.T, sink *formatstest.Sink) []*table.TraceSlice {
	t.Helper()
	var out []*table.TraceSlice
	for _, r := range sink.Table(table.TraceSlices.Name).Typed {
		out = append(out, r.(*table.TraceSlice))
	}
	return out
}

func decodeFixture(t *testing.T, name string) *formatstest.Sink {
	t.Helper()
	sink, err := formatstest.Run(t, Spec, name, formatstest.Read(t, "otlp/"+name), nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return sink
}

// TestReference: span counts and total durations per name equal, exactly,
// what the opentelemetry-proto classes (protobuf) and Python's json
// module (JSON) read from the same bytes (testdata/otlp/reference.json,
// written by regen.sh).
func TestReference(t *testing.T) {
	raw := formatstest.Read(t, "otlp/reference.json")
	var ref map[string]json.RawMessage
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	for name, enc := range fixtures {
		t.Run(name, func(t *testing.T) {
			var want perName
			if err := json.Unmarshal(ref[name], &want); err != nil || len(want) == 0 {
				t.Fatalf("reference.json has no entry for %s (%v)", name, err)
			}
			sink := decodeFixture(t, name)
			got := perName{}
			for _, s := range slicesOf(t, sink) {
				g := got[s.Name]
				g.Count++
				g.TotalNS += s.DurationNS
				got[s.Name] = g
				if s.Kind != table.SliceSpan || s.EndNS-s.StartNS != s.DurationNS || !s.TraceID.Valid || len(s.TraceID.V) != 32 || len(s.SliceID) != 16 {
					t.Errorf("bad span row %+v", s)
				}
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Errorf("per name:\n got  %s\n want %s", g, w)
			}
			if c := sink.Table(table.TraceSlices.Name).Summary.Coverage["encoding"]; c != enc {
				t.Errorf("encoding %v, want %s", c, enc)
			}
		})
	}
}

func byName(t *testing.T, sl []*table.TraceSlice, name string) []*table.TraceSlice {
	var out []*table.TraceSlice
	for _, s := range sl {
		if s.Name == name {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no span %q", name)
	}
	return out
}

func canon(t *testing.T, v any) string { return formatstest.Canonical(t, v) }

// TestPythonSDK checks what the Python SDK's exporter sent: exact
// integers, tagged non-finite doubles, arrays, events, links, status,
// parents, resource and scope tracks.
func TestPythonSDK(t *testing.T) {
	sink := decodeFixture(t, "python-sdk.pb")
	sl := slicesOf(t, sink)
	get := byName(t, sl, "GET /cart")[0]
	attrs := get.Args["attributes"].(evidence.Object)
	if attrs["big.int"] != int64(1<<62) || attrs["http.status_code"] != int64(200) || attrs["ok"] != true {
		t.Errorf("ints/bools: %v %v %v", attrs["big.int"], attrs["http.status_code"], attrs["ok"])
	}
	for k, want := range map[string]string{"nan": "NaN", "inf": "Infinity", "ninf": "-Infinity"} {
		if got := canon(t, attrs[k]); got != `{"type":"double","value":"`+want+`"}` {
			t.Errorf("%s = %s", k, got)
		}
	}
	if canon(t, attrs["tags"]) != `["a","b"]` || canon(t, attrs["codes"]) != `[1,2,3]` || attrs["long"] != strings.Repeat("x", 300) {
		t.Errorf("arrays/strings: %s %s", canon(t, attrs["tags"]), canon(t, attrs["codes"]))
	}
	if get.Category.V != "server" || get.Process.V != "checkout" || get.Track.V != "web.handler@0.9.1" || get.ParentID.Valid || get.Depth.Valid {
		t.Errorf("identity: %+v", get)
	}
	ev := canon(t, get.Args["events"])
	if !strings.Contains(ev, `"name":"cache.miss"`) || !strings.Contains(ev, `"key":"cart:0"`) {
		t.Errorf("events: %s", ev)
	}
	// render spans are children of GET /cart; one failed with an exception event.
	ids := map[string]bool{}
	for _, s := range byName(t, sl, "GET /cart") {
		ids[s.SliceID] = true
	}
	errs := 0
	for _, r := range byName(t, sl, "render") {
		if !r.ParentID.Valid || !ids[r.ParentID.V] {
			t.Errorf("render parent %v not a GET /cart span", r.ParentID)
		}
		links := canon(t, r.Args["links"])
		if !strings.Contains(links, `"why":"first request"`) || !strings.Contains(links, `"span_id":"`) {
			t.Errorf("links: %s", links)
		}
		if st, ok := r.Args["status"].(evidence.Object); ok {
			errs++
			if st["code"] != "error" || st["message"] != "template missing" || !strings.Contains(canon(t, r.Args["events"]), `"exception"`) {
				t.Errorf("status: %s", canon(t, r.Args))
			}
		}
	}
	if errs != 1 {
		t.Errorf("%d render spans with a status, want 1", errs)
	}
	tracks := sink.Table(table.TraceTracks.Name)
	var kinds []string
	for _, r := range tracks.Typed {
		tr := r.(*table.TraceTrack)
		kinds = append(kinds, tr.Kind+":"+tr.Process.V+":"+tr.Track.V)
		if tr.Kind == table.TrackProcess && !strings.Contains(tr.Labels.V, `"host.cores":16`) {
			t.Errorf("resource labels %s", tr.Labels.V)
		}
		if tr.Track.V == "db.client@2.0" && !strings.Contains(tr.Labels.V, `"schema_url":"https://opentelemetry.io/schemas/1.21.0"`) {
			t.Errorf("scope labels %s", tr.Labels.V)
		}
	}
	slices.Sort(kinds)
	if got := strings.Join(kinds, " "); got != "process:checkout: track:checkout:db.client@2.0 track:checkout:web.handler@0.9.1" {
		t.Errorf("tracks %s", got)
	}
}

// TestSchemaMapping: the OTLP JSON mapping's forms (enum names and
// numbers, int64 as strings and numbers, "NaN"/"Infinity" doubles, bytes,
// nested kvlist and array values, dropped counts, trace state, flags).
func TestSchemaMapping(t *testing.T) {
	sink := decodeFixture(t, "schema-mapping.json")
	sl := slicesOf(t, sink)
	load := sl[0]
	if load.Category.V != "internal" || load.DurationNS != 250000001 || load.StartNS != 1700000000000000000 {
		t.Errorf("load: %+v", load)
	}
	want := `{"attributes":{"cfg":{"limits":[{"type":"double","value":"NaN"},1,{"deep":true}],"retries":3},"empty":null,"half":0.5,` +
		`"hi":{"type":"double","value":"Infinity"},"lo":{"type":"double","value":"-Infinity"},"neg":-42,"ratio":{"type":"double","value":"NaN"},` +
		`"rows":"9223372036854775807","text":"NaN"},"dropped_attributes_count":2,"dropped_events_count":1,` +
		`"events":[{"attributes":{"n":7},"name":"checkpoint","time_ns":1700000000100000000}],"flags":257,` +
		`"status":{"code":"error","message":"disk full"},"trace_state":"vendor=1"}`
	// canonical JSON writes an int64 beyond 2^53 as a decimal string: exact.
	if got := canon(t, load.Args); got != strings.Replace(want, `"time_ns":1700000000100000000`, `"time_ns":"1700000000100000000"`, 1) {
		t.Errorf("args:\n got  %s\n want %s", got, want)
	}
	if sl[1].Category.V != "internal" || sl[1].ParentID.V != "b7ad6b7169203331" || canon(t, sl[1].Args["status"]) != `{"code":"ok"}` {
		t.Errorf("second span: %+v %s", sl[1], canon(t, sl[1].Args))
	}
	if !strings.Contains(canon(t, sl[1].Args["links"]), `"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"`) {
		t.Errorf("links %s", canon(t, sl[1].Args["links"]))
	}
	if sl[2].Category.V != "producer" || sl[2].Args["status"] != nil {
		t.Errorf("third span: %+v", sl[2])
	}
	// Only the resource and scope that own spans are tracks.
	var tracks []string
	for _, r := range sink.Table(table.TraceTracks.Name).Typed {
		tr := r.(*table.TraceTrack)
		tracks = append(tracks, tr.Kind+":"+tr.Name.V)
		if tr.Kind == table.TrackProcess && !strings.Contains(tr.Labels.V, `"host.id":{"type":"bytes","value":"3q2+7w=="}`) {
			t.Errorf("labels %s", tr.Labels.V)
		}
	}
	if strings.Join(tracks, " ") != "process:batch track:etl" {
		t.Errorf("tracks %v", tracks)
	}
	m := sink.Table(table.TraceSlices.Name).Summary.Metrics
	if m["empty_values"].Value != int64(1) || m["resources_without_spans"].Value != int64(1) {
		t.Errorf("metrics %v %v", m["empty_values"], m["resources_without_spans"])
	}
}

// TestEncodingFromBytes: the name never decides the encoding, and
// detection finds OTLP by content under any name.
func TestEncodingFromBytes(t *testing.T) {
	for name, enc := range fixtures {
		data := formatstest.Read(t, "otlp/"+name)
		for _, as := range []string{"body", "trace.json", "trace.pb"} {
			sink, err := formatstest.Run(t, Spec, as, data, nil, nil)
			if err != nil {
				t.Fatalf("%s as %s: %v", name, as, err)
			}
			if c := sink.Table(table.TraceSlices.Name).Summary.Coverage["encoding"]; c != enc {
				t.Errorf("%s as %s: encoding %v", name, as, c)
			}
		}
		if v := sniff(data[:min(len(data), formats.SniffBytes)]); v != formats.Yes {
			t.Errorf("sniff %s: %v", name, v)
		}
	}
	// Other protobuf and JSON are not OTLP.
	for _, b := range [][]byte{[]byte(`{"traceEvents":[]}`), []byte(`{"resourceMetrics":[]}`), {0x0a, 0x04, 0x08, 0x01, 0x10, 0x02}} {
		if v := sniff(b); v == formats.Yes {
			t.Errorf("sniff %q: yes", b)
		}
	}
}

// TestGzip: a gzip'd body (an OTLP/HTTP request with Content-Encoding:
// gzip) decodes the same.
func TestGzip(t *testing.T) {
	for name := range fixtures {
		data := formatstest.Read(t, "otlp/"+name)
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(data)
		zw.Close()
		plain, err := formatstest.Decode(Spec, name, data, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		z, err := formatstest.Decode(Spec, name+".gz", buf.Bytes(), nil, iotest.OneByteReader)
		if err != nil {
			t.Fatal(err)
		}
		if canon(t, z.Table(table.TraceSlices.Name).Rows) != canon(t, plain.Table(table.TraceSlices.Name).Rows) {
			t.Errorf("%s: gzip rows differ", name)
		}
	}
}

// ambiguous is a TracesData whose first ResourceSpans is 123 bytes
// long: its bytes begin "\n{", like a JSON object.
func ambiguous(t *testing.T) []byte {
	t.Helper()
	for pad := 0; pad < 200; pad++ {
		td := &tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{
			SchemaUrl: strings.Repeat("s", pad),
			ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
				TraceId: bytes.Repeat([]byte{1}, 16), SpanId: bytes.Repeat([]byte{2}, 8), Name: "x",
				StartTimeUnixNano: 10, EndTimeUnixNano: 25,
				Attributes: []*commonpb.KeyValue{{Key: "k", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: -1}}}},
			}}}},
		}}}
		b, err := proto.Marshal(td)
		if err != nil {
			t.Fatal(err)
		}
		if b[1] == '{' {
			return b
		}
	}
	t.Fatal("no padding gives a 123-byte ResourceSpans")
	return nil
}

// TestAmbiguous: protobuf bytes that begin like JSON are read as protobuf
// once JSON fails, and the summary says so.
func TestAmbiguous(t *testing.T) {
	b := ambiguous(t)
	sink, err := formatstest.Run(t, Spec, "body", b, nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	s := sink.Table(table.TraceSlices.Name)
	if s.Summary.Coverage["encoding"] != encProtobuf || s.Summary.Coverage["json_attempt"] == nil || len(s.Typed) != 1 {
		t.Fatalf("coverage %v, %d rows", s.Summary.Coverage, len(s.Typed))
	}
	if r := s.Typed[0].(*table.TraceSlice); r.DurationNS != 15 || r.Args["attributes"].(evidence.Object)["k"] != int64(-1) {
		t.Errorf("row %+v", r)
	}
	if sniff(b) != formats.Yes {
		t.Errorf("sniff: not OTLP")
	}
}

func wantFailure(t *testing.T, what string, data []byte, code evidence.Code, msg string) {
	t.Helper()
	sink, err := formatstest.Run(t, Spec, "body", data, nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != code || !strings.Contains(f.Message, msg) {
		t.Errorf("%s: got %v, want %s containing %q", what, err, code, msg)
	}
}

// TestNegative: bad lengths, truncated protobuf, bad ids and malformed
// JSON give typed failures located in the input.
func TestNegative(t *testing.T) {
	pb := formatstest.Read(t, "otlp/python-sdk.pb")
	wantFailure(t, "truncated", pb[:len(pb)/2], evidence.CodeDecodeFailure, "runs past the end")
	// The first ResourceSpans' length one more than its bytes, and one
	// less: past the end of the file, and its last field cut.
	long := append([]byte{}, pb...)
	long[1]++
	wantFailure(t, "long length", long, evidence.CodeDecodeFailure, "length 7102 runs past the end of the 7104-byte file")
	long[1] -= 2
	wantFailure(t, "short length", long, evidence.CodeDecodeFailure, "resource_spans 1")
	wantFailure(t, "length beyond file", []byte{0x0a, 0xff, 0xff, 0x03, 0x0a}, evidence.CodeDecodeFailure, "runs past the end")
	wantFailure(t, "cut tag", append(append([]byte{}, pb...), 0x8a), evidence.CodeDecodeFailure, "truncated")
	wantFailure(t, "group", []byte{0x0b}, evidence.CodeDecodeFailure, "wire type 3")
	wantFailure(t, "varint overflow", []byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, evidence.CodeDecodeFailure, "")
	inner := append([]byte{}, pb...)
	// Corrupt a byte inside the first ResourceSpans: the message fails
	// to unmarshal, or a field in it is invalid.
	inner[len(inner)/3] = 0xff
	if sink, err := formatstest.Run(t, Spec, "body", inner, nil, nil); err != nil {
		formatstest.CheckInvariants(t, sink, err)
	}
	js := string(formatstest.Read(t, "otlp/schema-mapping.json"))
	for what, c := range map[string]struct{ from, to, msg string }{
		"bad hex":          {`"b7ad6b7169203331"`, `"b7ad6b716920333z"`, "is not hex"},
		"short trace id":   {`"0af7651916cd43dd8448eb211c80319c"`, `"0af7651916cd43dd"`, "is not 32 hex digits"},
		"bad enum":         {`"SPAN_KIND_INTERNAL"`, `"SPAN_KIND_SIDEWAYS"`, "is not a value of the enum"},
		"bad int":          {`"9223372036854775807"`, `"9223372036854775808"`, "is not a 64-bit integer"},
		"bad time":         {`"1700000000250000001"`, `"soon"`, "is not an unsigned 64-bit integer"},
		"fractional":       {`"kind": 1,`, `"kind": 1.5,`, "must be an enum name or number"},
		"fractional time":  {`1700000000010000000,`, `1700000000010000000.5,`, "not an integer"},
		"truncated json":   {`"resourceSpans": [`, `"resourceSpans": [{"resource": {`, ""},
		"spans not a list": {`"spans": []`, `"spans": {}`, "must be an array"},
	} {
		bad := strings.Replace(js, c.from, c.to, 1)
		if bad == js {
			t.Fatalf("%s: %q not in the fixture", what, c.from)
		}
		if what == "truncated json" {
			bad = bad[:len(bad)/2]
		}
		wantFailure(t, what, []byte(bad), evidence.CodeDecodeFailure, c.msg)
	}
	// A span without a span id is not a span.
	wantFailure(t, "no span id", []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","name":"x"}]}]}]}`),
		evidence.CodeDecodeFailure, "span_id has 0 bytes")
}

// TestLimits: a ResourceSpans over max_message_bytes is LIMIT_EXCEEDED,
// in either encoding.
func TestLimits(t *testing.T) {
	for name := range fixtures {
		sink, err := formatstest.Run(t, Spec, name, formatstest.Read(t, "otlp/"+name), map[string]int64{LimitMessage: 100}, nil)
		formatstest.CheckInvariants(t, sink, err)
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeLimitExceeded {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestJSONLines: the Collector's file exporter writes one TracesData per
// line.
func TestJSONLines(t *testing.T) {
	a := bytes.TrimSpace(formatstest.Read(t, "otlp/shared-example.json"))
	var compact bytes.Buffer
	if err := json.Compact(&compact, a); err != nil {
		t.Fatal(err)
	}
	data := append(append(append(compact.Bytes(), '\n'), compact.Bytes()...), '\n')
	sink, err := formatstest.Run(t, Spec, "traces.jsonl", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sink.Table(table.TraceSlices.Name).Typed); n != 2 {
		t.Errorf("%d spans, want 2", n)
	}
	if n := len(sink.Table(table.TraceTracks.Name).Typed); n != 2 {
		t.Errorf("%d tracks, want 2 (a repeated resource and scope once each)", n)
	}
}

// TestValueBound: max_value_bytes cuts names, attribute strings and
// labels, never ids.
func TestValueBound(t *testing.T) {
	data := formatstest.Read(t, "otlp/python-sdk.pb")
	full, err := formatstest.Run(t, Spec, "b.pb", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := formatstest.Run(t, Spec, "b.pb", data, nil, evidence.Object{formats.OptionValueBytes: int64(16)})
	if err != nil {
		t.Fatal(err)
	}
	formatstest.CheckValueBound(t, cut, full, 16)
}

// TestMaxArgs: attributes beyond max_args are counted, and the table
// says it is incomplete.
func TestMaxArgs(t *testing.T) {
	sink, err := formatstest.Run(t, Spec, "b.pb", formatstest.Read(t, "otlp/python-sdk.pb"), nil, evidence.Object{OptionMaxArgs: int64(2)})
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	s := sink.Table(table.TraceSlices.Name)
	get := byName(t, slicesOf(t, sink), "GET /cart")[0]
	if a := get.Args["attributes"].(evidence.Object); len(a) != 3 || a["…"] != int64(9) {
		t.Errorf("attributes %s", canon(t, a))
	}
	if s.Summary.Complete {
		t.Error("complete with attributes cut")
	}
	noArgs, err := formatstest.Run(t, Spec, "b.pb", formatstest.Read(t, "otlp/python-sdk.pb"), nil, evidence.Object{OptionArgs: false})
	if err != nil || slicesOf(t, noArgs)[0].Args != nil {
		t.Errorf("args=false: %v", err)
	}
}
