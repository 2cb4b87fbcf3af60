// Package otlp decodes OpenTelemetry traces in OTLP: the protobuf
// TracesData / ExportTraceServiceRequest message (the same wire message:
// field 1, repeated ResourceSpans) and its OTLP/JSON mapping (hex trace
// and span ids, 64-bit integers as strings or numbers, enums by name or
// number), into the trace tables (table.TraceTables).
//
// The encoding comes from the bytes, never the file name: a document
// whose first non-blank byte is '{' is read as JSON, and when that fails
// before any span was read (a protobuf message may begin with the bytes
// "\n{") the same bytes are read as protobuf; anything else is
// protobuf. gzip (what an OTLP/HTTP body with Content-Encoding: gzip
// holds) is recognized by its magic.
//
// Both encodings stream one ResourceSpans at a time: the protobuf
// message is walked field by field at the top level and each
// ResourceSpans is unmarshalled with go.opentelemetry.io/proto/otlp; the
// JSON document is walked with jsonscan and each resourceSpans element
// converted to the same messages. Each span is a trace.slices row of
// kind span; resources and instrumentation scopes that own spans are
// trace.tracks rows.
package otlp

import (
	"context"

	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// Limit and option names.
const (
	LimitDecompressed = formats.LimitDecompressed
	LimitMessage      = "max_message_bytes"
	OptionArgs        = "args"
	OptionMaxArgs     = "max_args"
)

var limitList = []formats.Limit{
	{Name: formats.LimitBytes, Default: 1 << 40, Unit: "bytes", Doc: "bytes in the file"},
	{Name: LimitDecompressed, Default: 1 << 40, Unit: "bytes", Doc: "bytes after gzip"},
	{Name: LimitMessage, Default: 256 << 20, Unit: "bytes", Doc: "bytes of one ResourceSpans (protobuf length, or JSON text), which is held whole while its spans are read"},
	{Name: formats.LimitToken, Default: 16 << 20, Unit: "bytes", Doc: "bytes in one JSON string or number"},
}

var optionList = []param.Param{
	formats.ValueBytesParam,
	{Name: OptionArgs, Type: param.Bool, Default: true,
		Doc: "keep each span's attributes, status, events and links in the args column (false: leave it null)"},
	{Name: OptionMaxArgs, Type: param.Int, Default: int64(64), Min: param.F(0), Max: param.F(4096),
		Doc: "attributes kept per span, event, link or nested kvlist/array, and events and links kept per span; the rest are counted and named by a \"…\" entry"},
}

// Spec is OTLP traces, protobuf or JSON.
var Spec = &formats.Spec{
	Name:     "otlp-traces",
	Title:    "OTLP traces",
	Family:   formats.FamilyTraces,
	Suffixes: []string{".otlp.pb", ".otlp.json"},
	Sniff:    sniff,
	Tables:   table.TraceTables,
	Limits:   limitList,
	Options:  optionList,
	Producer: "OpenTelemetry SDK OTLP/HTTP exporters (protobuf and JSON bodies), the Collector's file exporter, otel-cli",
	Version:  "1",
	Decoder: formats.DecoderFunc(func(ctx context.Context, in *formats.Input, out formats.Sink) error {
		return decode(ctx, in, out)
	}),
}
