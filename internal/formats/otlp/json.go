package otlp

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// maxNesting bounds JSON nesting: spans sit six levels down, attribute
// values nest further (maxValueDepth levels of arrays and kvlists, two
// JSON levels each).
const maxNesting = 16 + 3*maxValueDepth

// json reads OTLP/JSON: one TracesData object, or several one after
// another (the Collector's file exporter writes one per line). Each
// resourceSpans element is read whole (at most max_message_bytes of
// text) and converted; other members are ignored, as the OTLP JSON
// mapping requires of unknown fields, and counted.
func (d *decoder) json(r io.Reader) error {
	s := d.in.JSONScanner(r, maxNesting, formats.LimitToken)
	s.AllowTrailing = true
	w := &jsonscan.Walker{S: s}
	maxMsg := d.in.Limit(LimitMessage)
	for doc := 0; ; doc++ {
		tok, err := s.Next()
		if err != nil {
			if doc > 0 && s.Depth() == 0 && errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return err
		}
		if tok.Kind != jsonscan.ObjectStart {
			return s.Errorf(tok, "OTLP/JSON is an object with resourceSpans, found %s", tok.Kind)
		}
		err = w.Members(tok, "TracesData", func(key []byte) error {
			k := string(key)
			if norm(k) != "resourcespans" {
				d.unknownMembers[d.sliceVals.Bound(k)]++
				return w.SkipValue()
			}
			arr, err := w.Value()
			if err != nil {
				return err
			}
			if arr.Kind == jsonscan.Null {
				return nil
			}
			return w.Elements(arr, "resourceSpans", func(i int, el jsonscan.Token) error {
				v, err := s.Value(el, jsonscan.ValueLimits{End: el.Offset + maxMsg})
				if err != nil {
					var be *jsonscan.BoundError
					if errors.As(err, &be) && be.Bound == "bytes" {
						return d.in.ExceededAt(LimitMessage, nil, el.Offset)
					}
					return err
				}
				d.jsonRead = true // valid JSON: a failure from here on is not protobuf's
				rs, err := resourceSpansJSON(v)
				if err != nil {
					f := evidence.Failf(evidence.CodeDecodeFailure, "%s (JSON): resourceSpans[%d]%v", d.in.Spec.Title, i, err)
					f.Location.Offset = el.Offset
					return f
				}
				if err := d.resource(rs); err != nil {
					var f *evidence.Failure
					if errors.As(err, &f) && f.Location.Offset == 0 {
						f.Location.Offset = el.Offset
					}
					return err
				}
				return nil
			})
		})
		if err != nil {
			return err
		}
	}
}

// norm folds a JSON key for matching: the OTLP JSON mapping writes
// lowerCamelCase, protobuf's JSON readers also take the proto names.
func norm(k string) string {
	if strings.IndexByte(k, '_') < 0 {
		return strings.ToLower(k)
	}
	return strings.ToLower(strings.ReplaceAll(k, "_", ""))
}

// pathError is a conversion error at a JSON path.
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return e.path + ": " + e.err.Error() }

func at(path string, err error) error {
	var pe *pathError
	if errors.As(err, &pe) {
		return &pathError{path + pe.path, pe.err}
	}
	return &pathError{path, err}
}

type obj = map[string]any

func asObj(v any) (obj, error) {
	if v == nil {
		return nil, nil
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be an object, found %s", kind(v))
	}
	return o, nil
}

func asList(v any) ([]any, error) {
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("must be an array, found %s", kind(v))
	}
	return l, nil
}

func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// fields calls fn with each member of o under its folded name. fn must
// give the same result when called again (it is, on a failure).
func fields(o obj, fn func(k string, v any) error) error {
	for k, v := range o {
		if err := fn(norm(k), v); err != nil {
			// Report the first bad member in key order, so that the
			// failure is the same from run to run.
			for _, k := range slices.Sorted(maps.Keys(o)) {
				if err := fn(norm(k), o[k]); err != nil {
					return at("."+k, err)
				}
			}
			return at("."+k, err)
		}
	}
	return nil
}

func asString(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	}
	return "", fmt.Errorf("must be a string, found %s", kind(v))
}

func asBool(v any) (bool, error) {
	switch x := v.(type) {
	case nil:
		return false, nil
	case bool:
		return x, nil
	}
	return false, fmt.Errorf("must be a boolean, found %s", kind(v))
}

// intText is an integer as the OTLP JSON mapping writes one: a decimal
// string or a number (protobuf's JSON readers accept an integral number
// in exponent form too).
func intText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		s := string(x)
		if strings.ContainsAny(s, ".eE") {
			// Exactly, not through a float64, which would round a
			// nanosecond time to an integer it is not.
			if len(s) > 64 || exponent(s) > 100 {
				return "", fmt.Errorf("%s is not a 64-bit integer", trim(s))
			}
			r, ok := new(big.Rat).SetString(s)
			if !ok || !r.IsInt() {
				return "", fmt.Errorf("%s is not an integer", trim(s))
			}
			return r.Num().String(), nil
		}
		return s, nil
	}
	return "", fmt.Errorf("must be an integer (a string or a number), found %s", kind(v))
}

// exponent is the magnitude of a number literal's exponent (0 when it
// has none), so that 1e999999 is refused before it is computed.
func exponent(s string) int {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	if err != nil {
		return math.MaxInt
	}
	if n < 0 {
		n = -n
	}
	return n
}

func asInt64(v any) (int64, error) {
	if v == nil {
		return 0, nil
	}
	s, err := intText(v)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a 64-bit integer", s)
	}
	return n, nil
}

func asUint(v any, bits int) (uint64, error) {
	if v == nil {
		return 0, nil
	}
	s, err := intText(v)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(s, 10, bits)
	if err != nil {
		return 0, fmt.Errorf("%q is not an unsigned %d-bit integer", s, bits)
	}
	return n, nil
}

func asUint32(v any) (uint32, error) {
	n, err := asUint(v, 32)
	return uint32(n), err
}

// asDouble is a double: a number, or the strings "NaN", "Infinity",
// "-Infinity" (or a number in a string) of the protobuf JSON mapping.
func asDouble(v any) (float64, error) {
	switch x := v.(type) {
	case json.Number:
		return strconv.ParseFloat(string(x), 64)
	case string:
		switch x {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		f, err := strconv.ParseFloat(x, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, fmt.Errorf("%q is not a double", x)
		}
		return f, nil
	}
	return 0, fmt.Errorf("must be a number, found %s", kind(v))
}

// hexID is a trace or span id: hex of exactly n bytes, or empty.
func hexID(v any, n int) ([]byte, error) {
	s, err := asString(v)
	if err != nil {
		return nil, err
	}
	if s == "" {
		return nil, nil
	}
	if len(s) != 2*n {
		return nil, fmt.Errorf("%q is not %d hex digits (%d bytes)", trim(s), 2*n, n)
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not hex", trim(s))
	}
	return b, nil
}

// enum is an enum value by number or by its proto name.
func enum(v any, names map[string]int32) (int32, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case string:
		if n, ok := names[x]; ok {
			return n, nil
		}
		return 0, fmt.Errorf("%q is not a value of the enum", trim(x))
	}
	n, err := asInt64(v)
	if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("must be an enum name or number, found %v", v)
	}
	return int32(n), nil
}

func list[T any](v any, what string, fn func(v any) (T, error)) ([]T, error) {
	l, err := asList(v)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(l))
	for i, e := range l {
		x, err := fn(e)
		if err != nil {
			return nil, at(fmt.Sprintf("[%d]", i), err)
		}
		out = append(out, x)
	}
	return out, nil
}

func resourceSpansJSON(v any) (*tracepb.ResourceSpans, error) {
	o, err := asObj(v)
	if err != nil {
		return nil, err
	}
	rs := &tracepb.ResourceSpans{}
	return rs, fields(o, func(k string, v any) (err error) {
		switch k {
		case "resource":
			rs.Resource, err = resourceJSON(v)
		case "scopespans":
			rs.ScopeSpans, err = list(v, "scopeSpans", scopeSpansJSON)
		case "schemaurl":
			rs.SchemaUrl, err = asString(v)
		}
		return err
	})
}

func resourceJSON(v any) (*resourcepb.Resource, error) {
	o, err := asObj(v)
	if err != nil || o == nil {
		return nil, err
	}
	r := &resourcepb.Resource{}
	return r, fields(o, func(k string, v any) (err error) {
		switch k {
		case "attributes":
			r.Attributes, err = list(v, "attributes", keyValueJSON)
		case "droppedattributescount":
			r.DroppedAttributesCount, err = asUint32(v)
		}
		return err
	})
}

func scopeSpansJSON(v any) (*tracepb.ScopeSpans, error) {
	o, err := asObj(v)
	if err != nil {
		return nil, err
	}
	ss := &tracepb.ScopeSpans{}
	return ss, fields(o, func(k string, v any) (err error) {
		switch k {
		case "scope":
			ss.Scope, err = scopeJSON(v)
		case "spans":
			ss.Spans, err = list(v, "spans", spanJSON)
		case "schemaurl":
			ss.SchemaUrl, err = asString(v)
		}
		return err
	})
}

func scopeJSON(v any) (*commonpb.InstrumentationScope, error) {
	o, err := asObj(v)
	if err != nil || o == nil {
		return nil, err
	}
	s := &commonpb.InstrumentationScope{}
	return s, fields(o, func(k string, v any) (err error) {
		switch k {
		case "name":
			s.Name, err = asString(v)
		case "version":
			s.Version, err = asString(v)
		case "attributes":
			s.Attributes, err = list(v, "attributes", keyValueJSON)
		case "droppedattributescount":
			s.DroppedAttributesCount, err = asUint32(v)
		}
		return err
	})
}

func spanJSON(v any) (*tracepb.Span, error) {
	o, err := asObj(v)
	if err != nil {
		return nil, err
	}
	sp := &tracepb.Span{}
	return sp, fields(o, func(k string, v any) (err error) {
		switch k {
		case "traceid":
			sp.TraceId, err = hexID(v, 16)
		case "spanid":
			sp.SpanId, err = hexID(v, 8)
		case "parentspanid":
			sp.ParentSpanId, err = hexID(v, 8)
		case "tracestate":
			sp.TraceState, err = asString(v)
		case "flags":
			sp.Flags, err = asUint32(v)
		case "name":
			sp.Name, err = asString(v)
		case "kind":
			var n int32
			n, err = enum(v, tracepb.Span_SpanKind_value)
			sp.Kind = tracepb.Span_SpanKind(n)
		case "starttimeunixnano":
			sp.StartTimeUnixNano, err = asUint(v, 64)
		case "endtimeunixnano":
			sp.EndTimeUnixNano, err = asUint(v, 64)
		case "attributes":
			sp.Attributes, err = list(v, "attributes", keyValueJSON)
		case "droppedattributescount":
			sp.DroppedAttributesCount, err = asUint32(v)
		case "events":
			sp.Events, err = list(v, "events", eventJSON)
		case "droppedeventscount":
			sp.DroppedEventsCount, err = asUint32(v)
		case "links":
			sp.Links, err = list(v, "links", linkJSON)
		case "droppedlinkscount":
			sp.DroppedLinksCount, err = asUint32(v)
		case "status":
			sp.Status, err = statusJSON(v)
		}
		return err
	})
}

func eventJSON(v any) (*tracepb.Span_Event, error) {
	o, err := asObj(v)
	if err != nil {
		return nil, err
	}
	e := &tracepb.Span_Event{}
	return e, fields(o, func(k string, v any) (err error) {
		switch k {
		case "timeunixnano":
			e.TimeUnixNano, err = asUint(v, 64)
		case "name":
			e.Name, err = asString(v)
		case "attributes":
			e.Attributes, err = list(v, "attributes", keyValueJSON)
		case "droppedattributescount":
			e.DroppedAttributesCount, err = asUint32(v)
		}
		return err
	})
}

func linkJSON(v any) (*tracepb.Span_Link, error) {
	o, err := asObj(v)
	if err != nil {
		return nil, err
	}
	l := &tracepb.Span_Link{}
	return l, fields(o, func(k string, v any) (err error) {
		switch k {
		case "traceid":
			l.TraceId, err = hexID(v, 16)
		case "spanid":
			l.SpanId, err = hexID(v, 8)
		case "tracestate":
			l.TraceState, err = asString(v)
		case "attributes":
			l.Attributes, err = list(v, "attributes", keyValueJSON)
		case "droppedattributescount":
			l.DroppedAttributesCount, err = asUint32(v)
		case "flags":
			l.Flags, err = asUint32(v)
		}
		return err
	})
}

func statusJSON(v any) (*tracepb.Status, error) {
	o, err := asObj(v)
	if err != nil || o == nil {
		return nil, err
	}
	s := &tracepb.Status{}
	return s, fields(o, func(k string, v any) (err error) {
		switch k {
		case "message":
			s.Message, err = asString(v)
		case "code":
			var n int32
			n, err = enum(v, tracepb.Status_StatusCode_value)
			s.Code = tracepb.Status_StatusCode(n)
		}
		return err
	})
}

func keyValueJSON(v any) (*commonpb.KeyValue, error) {
	o, err := asObj(v)
	if err != nil {
		return nil, err
	}
	kv := &commonpb.KeyValue{}
	return kv, fields(o, func(k string, v any) (err error) {
		switch k {
		case "key":
			kv.Key, err = asString(v)
		case "value":
			kv.Value, err = anyValueJSON(v)
		}
		return err
	})
}

// anyValueJSON reads an AnyValue; null (and an empty object) is the empty
// value. JSON exporters that write NaN as null leave it empty.
func anyValueJSON(v any) (*commonpb.AnyValue, error) {
	o, err := asObj(v)
	if err != nil || o == nil {
		return nil, err
	}
	n := 0
	for k, v := range o {
		switch norm(k) {
		case "stringvalue", "boolvalue", "intvalue", "doublevalue", "arrayvalue", "kvlistvalue", "bytesvalue":
			if v != nil {
				n++
			}
		}
	}
	if n > 1 {
		return nil, errors.New("more than one value of the AnyValue oneof")
	}
	a := &commonpb.AnyValue{}
	return a, fields(o, func(k string, v any) error {
		if v == nil {
			return nil
		}
		switch k {
		case "stringvalue":
			s, err := asString(v)
			a.Value = &commonpb.AnyValue_StringValue{StringValue: s}
			return err
		case "boolvalue":
			b, err := asBool(v)
			a.Value = &commonpb.AnyValue_BoolValue{BoolValue: b}
			return err
		case "intvalue":
			n, err := asInt64(v)
			a.Value = &commonpb.AnyValue_IntValue{IntValue: n}
			return err
		case "doublevalue":
			f, err := asDouble(v)
			a.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: f}
			return err
		case "bytesvalue":
			s, err := asString(v)
			if err != nil {
				return err
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				if b, err = base64.URLEncoding.DecodeString(s); err != nil {
					return fmt.Errorf("%q is not base64", trim(s))
				}
			}
			a.Value = &commonpb.AnyValue_BytesValue{BytesValue: b}
		case "arrayvalue":
			o, err := asObj(v)
			if err != nil {
				return err
			}
			vals, err := list(o["values"], "values", anyValueOrEmpty)
			if err != nil {
				return at(".values", err)
			}
			a.Value = &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vals}}
		case "kvlistvalue":
			o, err := asObj(v)
			if err != nil {
				return err
			}
			vals, err := list(o["values"], "values", keyValueJSON)
			if err != nil {
				return at(".values", err)
			}
			a.Value = &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: vals}}
		}
		return nil
	})
}

func anyValueOrEmpty(v any) (*commonpb.AnyValue, error) {
	a, err := anyValueJSON(v)
	if a == nil && err == nil {
		a = &commonpb.AnyValue{}
	}
	return a, err
}
