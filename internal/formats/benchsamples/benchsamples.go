// Package benchsamples decodes flameox benchmark-samples files (the
// schema of pkg/benchsamples, written by its Go Writer and by
// sdk/python/flameox_bench.py) into bench.series and bench.samples.
//
// Each line is bounded at benchsamples.MaxLine bytes (lines.Reader) and
// held to the SDK's own grammar (benchsamples.ParseHeader, ParseSeries):
// a violation is a DECODE_FAILURE at its line. Series ids and series
// identities are unique in a file, so two series never blend. A
// device-event timing (clock *_event) without a stated synchronization
// is kept, with a limitation: such timings may measure launch, not
// execution.
//
// It imports formats, lines, table, evidence and pkg/benchsamples.
package benchsamples

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
	bs "github.com/flameox/flameox/pkg/benchsamples"
)

// FormatName is the registry name.
const FormatName = "bench-samples"

// LimitSeries bounds the series of a file.
const LimitSeries = "max_series"

// Spec is the benchmark-samples format.
var Spec = &formats.Spec{
	Name:     FormatName,
	Title:    "flameox benchmark samples (SDK JSONL)",
	Family:   formats.FamilyBenchmarks,
	Suffixes: []string{".bench.jsonl"},
	Sniff:    Sniff,
	Tables:   []*table.Schema{table.BenchSeries.Schema, table.BenchSamples.Schema},
	Limits: []formats.Limit{
		{Name: LimitSeries, Default: 100_000, Unit: "series", Doc: "series in the file"},
	},
	Options:  []param.Param{formats.ValueBytesParam},
	Producer: "flameox benchmark-samples SDK (pkg/benchsamples, flameox_bench)",
	Version:  "1",
	Decoder:  formats.DecoderFunc(Decode),
}

var headerStart = []byte(`{"schema":"` + bs.Schema + `"`)

// Sniff says Yes when the file starts with the header the SDKs write
// (schema first); anything else is NeedMore (a .bench.jsonl name still
// selects the format, and a malformed file then fails as it).
func Sniff(prefix []byte) formats.Verdict {
	if bytes.HasPrefix(bytes.TrimLeft(prefix, " \t"), headerStart) {
		return formats.Yes
	}
	return formats.NeedMore
}

func malformed(l *lines.Line, err error) *evidence.Failure {
	return l.Malformed(err, fmt.Sprintf("benchmark samples: line %d", l.Number))
}

// Decode reads the file and emits bench.samples (streamed) and then
// bench.series.
func Decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	vals := in.Values()
	lr := lines.NewStrictFunc(in.R, bs.MaxLine-1, func(l *lines.Line) *evidence.Failure {
		return evidence.Failf(evidence.CodeDecodeFailure, "benchmark samples: line %d is longer than %d bytes", l.Number, bs.MaxLine)
	})
	samples := formats.NewLazyTable(out, table.BenchSamples.Header(""))
	wantSamples := out.Wants(table.BenchSamples.Schema)
	var series []*table.BenchSeriesRow
	ids := map[string]bool{}
	identities := map[string]string{}
	var producer *bs.Producer
	var values, warmups, unsynced int64
	var unterminated int64
	var last int64
	fail := func(err error) error {
		var written int64
		if wantSamples {
			written = values + warmups
		}
		return samples.Abort(err, &evidence.Summary{RowsObserved: written, Limitations: []string{"decoding stopped at a malformed line"}})
	}
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(evidence.Wrap(evidence.CodeIOFailure, err, "benchmark samples: read line %d", last+1))
		}
		if l.Term == lines.None {
			unterminated = l.Size // a writer cut off mid-line
			break
		}
		last = l.Number
		if last%256 == 0 && ctx.Err() != nil {
			return fail(evidence.Wrap(evidence.CodeCancelled, ctx.Err(), "benchmark samples"))
		}
		if producer == nil {
			p, err := bs.ParseHeader(l.Bytes)
			if err != nil {
				return fail(malformed(l, fmt.Errorf("the first line must be the header: %w", err)))
			}
			producer = &p
			continue
		}
		s, err := bs.ParseSeries(l.Bytes)
		if err != nil {
			return fail(malformed(l, err))
		}
		if int64(len(series)) >= in.Limit(LimitSeries) {
			return fail(in.ExceededAt(LimitSeries, nil, l.Offset))
		}
		if ids[s.ID] {
			return fail(malformed(l, fmt.Errorf("series id %q appears twice", s.ID)))
		}
		ids[s.ID] = true
		row := seriesRow(s, vals)
		key := identity(s)
		if prev, dup := identities[key]; dup {
			return fail(malformed(l, fmt.Errorf("series %q has the same identity as series %q (name, unit, dimensions, clock, device, worker...): they would blend", s.ID, prev)))
		}
		identities[key] = s.ID
		if bs.DeviceEvent(s.Clock) && (s.Synchronization == "" || s.Synchronization == "none") {
			unsynced++
		}
		series = append(series, row)
		values += int64(len(s.Samples))
		warmups += int64(len(s.Warmups))
		if !wantSamples {
			continue
		}
		for _, part := range []struct {
			kind string
			list []float64
		}{{table.BenchWarmup, s.Warmups}, {table.BenchSampleKind, s.Samples}} {
			// One row, reused: the sink encodes or copies it (decoders may
			// reuse their rows).
			r := &table.BenchSample{SeriesID: row.SeriesID, Kind: part.kind}
			if s.Worker != "" {
				r.Worker = table.Some(vals.Bound(s.Worker))
			}
			if s.LoopCount > 0 {
				r.Loops = table.Some(s.LoopCount)
			}
			for i, v := range part.list {
				r.Index, r.Value = int64(i+1), v
				if err := samples.Row(r); err != nil {
					return err
				}
			}
		}
	}
	if producer == nil {
		return samples.Abort(evidence.Failf(evidence.CodeDecodeFailure, "benchmark samples: the file has no header line"), &evidence.Summary{})
	}
	complete := unterminated == 0
	limits := func(sum *evidence.Summary) {
		if !complete {
			sum.Limit(fmt.Sprintf("the file ends with an unterminated line of %d bytes after line %d: the writer was cut off; the line was discarded", unterminated, last))
		}
		if unsynced > 0 {
			sum.Limit(fmt.Sprintf("%d series time device events without a stated synchronization: their values may measure launch overhead, not execution", unsynced))
		}
		vals.Summarize(sum)
	}
	ssum := &evidence.Summary{RowsObserved: values + warmups, Complete: complete}
	limits(ssum)
	if err := samples.End(ssum); err != nil {
		return err
	}
	tw, err := out.Begin(table.BenchSeries.Header(""))
	if err != nil {
		return err
	}
	for _, r := range series {
		if err := tw.Row(r); err != nil {
			return err
		}
	}
	sum := &evidence.Summary{RowsObserved: int64(len(series)), Complete: complete, Metrics: map[string]evidence.Metric{
		"series":             {Value: int64(len(series)), Unit: "series"},
		"samples":            {Value: values, Unit: "values"},
		"warmups":            {Value: warmups, Unit: "values"},
		"unsynchronized":     {Value: unsynced, Unit: "series"},
		"unterminated_bytes": {Value: unterminated, Unit: "bytes"},
	}, Coverage: evidence.Object{"producer": vals.Bound(producer.Name), "producer_version": vals.Bound(producer.Version)}}
	limits(sum)
	return tw.End(sum)
}

func seriesRow(s *bs.Series, vals *formats.Values) *table.BenchSeriesRow {
	opt := func(v string) table.Null[string] {
		if v == "" {
			return table.Null[string]{}
		}
		return table.Some(vals.Bound(v))
	}
	r := &table.BenchSeriesRow{SeriesID: vals.Bound(s.ID), BenchIdentity: table.BenchIdentity{
		Benchmark: vals.Bound(s.Name), Unit: s.Unit, Dimensions: evidence.Object{},
		Scope: opt(s.Scope), Clock: opt(s.Clock), Variant: opt(s.Variant), Phase: opt(s.Phase), Synchronization: opt(s.Synchronization)},
		Samples: int64(len(s.Samples)), Warmups: int64(len(s.Warmups))}
	formats.BoundInto(vals, r.Dimensions, s.Dimensions, func(v string) any { return vals.Bound(v) })
	if s.Worker != "" {
		r.Dimensions["worker"] = vals.Bound(s.Worker)
	}
	if s.Trial != "" {
		r.Dimensions["trial"] = vals.Bound(s.Trial)
	}
	if d := s.Device; d != nil {
		r.DeviceType = table.Some(vals.Bound(d.Type))
		if d.Index >= 0 {
			r.DeviceIndex = table.Some(d.Index)
		}
		if d.Stream >= 0 {
			r.DeviceStream = table.Some(d.Stream)
		}
	}
	if s.LoopCount > 0 {
		r.LoopCount = table.Some(s.LoopCount)
	}
	return r
}

// identity is every attribute that tells one series from another.
func identity(s *bs.Series) string {
	keys := make([]string, 0, len(s.Dimensions))
	for k := range s.Dimensions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, f := range []string{s.Name, s.Unit, s.Clock, s.Synchronization, s.Scope, s.Phase, s.Worker, s.Trial, s.Variant} {
		fmt.Fprintf(&b, "%q|", f)
	}
	if d := s.Device; d != nil {
		fmt.Fprintf(&b, "%q|%d|%d|", d.Type, d.Index, d.Stream)
	}
	for _, k := range keys {
		fmt.Fprintf(&b, "%q=%q|", k, s.Dimensions[k])
	}
	return b.String()
}
