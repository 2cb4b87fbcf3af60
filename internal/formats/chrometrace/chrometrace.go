// Package chrometrace decodes Chrome Trace Event Format JSON (the JSON
// that chrome://tracing, Perfetto's UI and node --trace-events-enabled
// read and write, documented in Google's "Trace Event Format" paper) and
// the Kineto traces PyTorch's profiler writes in it, into the trace
// tables (table.TraceTables).
//
// The document streams: traceEvents (or a bare array, whose closing
// bracket the format lets a writer leave out) is walked one event at a
// time, and nothing but the open slices, a bounded reorder window per
// thread and the open async, object and legacy-async slices is held.
// gzip is recognized by its magic and decompressed in the same stream.
//
// Every phase is read: X and B/E slices nest per thread (see nest.go),
// b/e/n nestable async slices by category, id and scope, S/T/p/F legacy
// async slices, i/I instants, C counters (one series per args key), M
// metadata (process and thread names, sort indexes, labels) as
// trace.tracks rows, s/t/f and bind_id flows, N/O/D object lifetimes. P
// samples (V8 profiles, samples.go; the format's own sf/stack samples and
// the top-level samples/stackFrames, legacy.go) become the CPU tables; the
// rest are counted by phase, not interpreted. Times are
// the format's microseconds converted to integer nanoseconds exactly.
//
// With Kineto meaning (KinetoSpec), device work and runtime calls carry
// their device, stream and correlation id from args, rows carry the
// trace's distributed rank, and deviceProperties, distributedInfo and
// baseTimeNanoseconds are kept in the summary.
//
// It imports formats, evidence, jsonscan, param and table.
package chrometrace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
)

// Limit and option names.
const (
	LimitDecompressed = formats.LimitDecompressed
	LimitOpen         = "max_open_slices"
	OptionArgs        = "args"
	OptionMaxArgs     = "max_args"
	OptionWindow      = "reorder_window"
)

var limitList = []formats.Limit{
	{Name: formats.LimitBytes, Default: 1 << 40, Unit: "bytes", Doc: "bytes in the file"},
	{Name: LimitDecompressed, Default: 1 << 40, Unit: "bytes", Doc: "bytes of JSON after gzip"},
	{Name: formats.LimitToken, Default: 16 << 20, Unit: "bytes", Doc: "bytes in one JSON string or number"},
	{Name: LimitOpen, Default: 10_000_000, Unit: "slices", Doc: "slices open at once (B without E, async and object slices not yet ended)"},
}

var optionList = []param.Param{
	formats.ValueBytesParam,
	{Name: OptionArgs, Type: param.Bool, Default: true,
		Doc: "keep each event's args in the args column (false: leave it null, which decodes faster)"},
	{Name: OptionMaxArgs, Type: param.Int, Default: int64(64), Min: param.F(0), Max: param.F(4096),
		Doc: "args entries kept per event; the rest are counted and named by a \"…\" entry"},
	{Name: OptionWindow, Type: param.Int, Default: int64(4096), Min: param.F(1), Max: param.F(1 << 20),
		Doc: "events of one thread held to put them in time order before nesting; an event later than that is emitted unplaced (depth null) and counted"},
}

// Spec is Chrome Trace Event Format JSON.
var Spec = &formats.Spec{
	Name:     "chrome-trace",
	Title:    "Chrome Trace Event JSON",
	Family:   formats.FamilyTraces,
	Suffixes: []string{".trace.json", ".trace.json.gz"},
	Sniff:    sniffChrome,
	Tables:   traceTablesWithCPU,
	Limits:   limitList,
	Options:  optionList,
	Producer: "chrome://tracing, Perfetto UI JSON export, node --trace-events-enabled, catapult, viztracer",
	Version:  "1",
	Decoder: formats.DecoderFunc(func(ctx context.Context, in *formats.Input, out formats.Sink) error {
		return decode(ctx, in, out, false)
	}),
}

// KinetoSpec is a PyTorch profiler (Kineto) trace: Chrome JSON with
// Kineto's meaning.
var KinetoSpec = &formats.Spec{
	Name:     "kineto-trace",
	Title:    "PyTorch profiler trace (Kineto)",
	Family:   formats.FamilyTraces,
	Suffixes: []string{".pt.trace.json", ".pt.trace.json.gz"},
	Sniff:    sniffKineto,
	Tables:   traceTablesWithCPU,
	Limits:   limitList,
	Options:  optionList,
	Producer: "torch.profiler (export_chrome_trace, tensorboard_trace_handler), Kineto",
	Version:  "1",
	Decoder: formats.DecoderFunc(func(ctx context.Context, in *formats.Input, out formats.Sink) error {
		return decode(ctx, in, out, true)
	}),
}

var gzipMagic = []byte{0x1f, 0x8b}

// maxNesting bounds JSON nesting: events nest three levels, args a few
// more.
const maxNesting = 128

func decode(ctx context.Context, in *formats.Input, out formats.Sink, kineto bool) error {
	if err := in.CheckSize(); err != nil {
		return err
	}
	src0, err := in.DigestFirst()
	if err != nil {
		return err
	}
	br := bufio.NewReaderSize(formats.FileReader(src0), 256<<10)
	var src io.Reader = br
	compressed := false
	if p, _ := br.Peek(2); bytes.Equal(p, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return evidence.Wrap(evidence.CodeDecodeFailure, err, "%s: gzip", in.Spec.Title)
		}
		defer zr.Close()
		src, compressed = zr, true
	}
	lim := in.Decompressed(src)
	d := newDecoder(ctx, in, out, kineto)
	d.compressed = compressed
	err = d.run(lim)
	if err != nil {
		return d.abort(in.Typed(err, lim.Over))
	}
	if err := d.end(); err != nil {
		return err
	}
	return d.emitCPU(out)
}
