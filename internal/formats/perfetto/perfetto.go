// Package perfetto decodes Perfetto protobuf traces (a Trace: a stream
// of TracePacket, as traced, Chromium's --trace-startup-format=proto,
// the Perfetto SDK, rocprofv3 --output-format pftrace and the perfetto
// Python package's trace builder write it) into the trace tables
// (table.TraceTables).
//
// The stream is read one packet at a time; what is held is the state the
// format makes a reader keep: per trusted packet sequence its interned
// names and defaults, the track descriptors, the open slices of each
// track, the open flows and the clock snapshots. Field numbers come from
// Perfetto's protos (protos/perfetto/trace/), decoded with protowire.
//
// Interpreted: track_event (SLICE_BEGIN/END, INSTANT, COUNTER, extra
// counter values, flows, debug annotations), interned_data (event
// names, categories, debug annotation names and string values),
// sequence flags and incremental state, trace_packet_defaults,
// track_descriptor (process, thread and counter tracks, parents),
// clock_snapshot and trace_config's primary clock, compressed_packets
// (zlib), previous_packet_dropped and trace_stats, and CPU samples:
// perf_sample and streaming_profile_packet with their interned
// callstacks, frames and mappings (samples.go: the CPU tables, when the
// trace holds samples). Every other packet field is counted by number in
// the summary, not interpreted.
//
// It imports formats, formats/collapsed (the CPU tables), evidence,
// param, table and unit.
package perfetto

import (
	"context"

	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
)

// Limit and option names.
const (
	LimitDecompressed = formats.LimitDecompressed
	LimitPacket       = "max_packet_bytes"
	LimitOpen         = "max_open_slices"
	OptionArgs        = "args"
	OptionMaxArgs     = "max_args"
	OptionWindow      = "reorder_window"
	OptionWindowNS    = "reorder_window_ns"
)

var limitList = []formats.Limit{
	{Name: formats.LimitBytes, Default: 1 << 40, Unit: "bytes", Doc: "bytes in the file"},
	{Name: LimitDecompressed, Default: 1 << 40, Unit: "bytes", Doc: "bytes of packets inflated from compressed_packets, in all"},
	{Name: LimitPacket, Default: 256 << 20, Unit: "bytes", Doc: "bytes in one TracePacket (or one compressed_packets bundle once inflated)"},
	{Name: LimitOpen, Default: 10_000_000, Unit: "slices", Doc: "slices and flows open at once (SLICE_BEGIN without its END, flows not terminated)"},
}

var optionList = []param.Param{
	formats.ValueBytesParam,
	{Name: OptionArgs, Type: param.Bool, Default: true,
		Doc: "keep each slice's debug annotations in the args column (false: leave it null, which decodes faster)"},
	{Name: OptionMaxArgs, Type: param.Int, Default: int64(64), Min: param.F(0), Max: param.F(4096),
		Doc: "debug annotation entries kept per slice (and per nested dict or array); the rest are counted and named by a \"…\" entry"},
	{Name: OptionWindow, Type: param.Int, Default: int64(4096), Min: param.F(1), Max: param.F(1 << 20),
		Doc: "slice events of one track held to apply them in time order; one earlier than an event its track already applied is applied late, in file order, and counted"},
	{Name: OptionWindowNS, Type: param.Int, Default: int64(1_000_000_000), Min: param.F(0), Max: param.F(1 << 62),
		Doc: "how far (ns) a held slice event may lag its track's latest before it is applied"},
}

// Spec is a Perfetto protobuf trace.
var Spec = &formats.Spec{
	Name:     "perfetto-trace",
	Title:    "Perfetto protobuf trace",
	Family:   formats.FamilyTraces,
	Suffixes: []string{".pftrace", ".perfetto-trace", ".perfetto", ".pftrace.gz", ".perfetto-trace.gz"},
	Sniff:    sniff,
	Tables:   traceTablesWithCPU,
	Limits:   limitList,
	Options:  optionList,
	Producer: "perfetto/traced, Perfetto SDK track events, Chromium --trace-startup-format=proto, rocprofv3 pftrace, perfetto.trace_builder",
	Version:  "1",
	Decoder: formats.DecoderFunc(func(ctx context.Context, in *formats.Input, out formats.Sink) error {
		return decode(ctx, in, out)
	}),
}
