// Package rocprof decodes the CSV outputs of AMD's rocprofv3
// (rocprofiler-sdk, `rocprofv3 --output-format csv`) into the trace
// tables: kernel_trace, memory_copy_trace, memory_allocation_trace and
// scratch_memory_trace are device activity on trace.slices; the API
// traces (hip_api_trace, hsa_api_trace, marker_api_trace, rccl_api_trace,
// rocdecode_api_trace, rocjpeg_api_trace, which share one header) are
// host calls on trace.slices; counter_collection is per-dispatch
// counters on trace.counters.
//
// A file is recognized by its header's columns, never by its name: the
// column names are rocprofiler-sdk's (source/lib/output/generateCSV.cpp).
// Columns are found by name, so the columns a release adds (Stream_Id,
// Accum_VGPR_Count, the counter timestamps) are read where present and
// the rest are kept in args. Records are read by csvpreview.Reader, the
// one CSV reader, streaming: memory stays flat whatever the file's size.
//
// The *_stats CSVs (per-API aggregates rocprofv3 --stats writes) are not
// a trace: they are left to the CSV preview, and so is agent_info.
//
// It imports evidence, formats, formats/csvpreview and table.
package rocprof

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/csvpreview"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// OptionArgs is the option that keeps the other columns in args.
const OptionArgs = "args"

// Spec is a rocprofv3 CSV trace output.
var Spec = &formats.Spec{
	Name:   "rocprofv3-csv",
	Title:  "rocprofv3 CSV trace",
	Family: formats.FamilyTraces,
	Sniff:  sniff,
	Tables: []*table.Schema{table.TraceSlices.Schema, table.TraceCounters.Schema},
	Limits: []formats.Limit{{Name: formats.LimitBytes, Default: 1 << 40, Unit: "bytes", Doc: "bytes in the file"}, csvpreview.LimitRecord},
	Options: []param.Param{formats.ValueBytesParam,
		{Name: OptionArgs, Type: param.Bool, Default: true,
			Doc: "keep the columns without a row column of their own (dispatch and kernel ids, register counts, sizes, agents of a copy…) in the args column (false: leave it null, which decodes faster)"}},
	Producer: "rocprofv3 (ROCm rocprofiler-sdk) --kernel-trace, --hip-trace, --hsa-trace, --memory-copy-trace, --marker-trace, --pmc … --output-format csv",
	Version:  "1",
	Decoder:  formats.DecoderFunc(decode),
}

// kind is which rocprofv3 output a header names.
type kind int

const (
	kindNone kind = iota
	kindKernel
	kindAPI
	kindCopy
	kindAlloc
	kindScratch
	kindCounter
	kindCounterNoTime // counter_collection of releases that wrote no timestamps
)

var kindNames = map[kind]string{kindKernel: "kernel_trace", kindAPI: "api_trace", kindCopy: "memory_copy_trace",
	kindAlloc: "memory_allocation_trace", kindScratch: "scratch_memory_trace", kindCounter: "counter_collection",
	kindCounterNoTime: "counter_collection"}

// required are the columns each output always has, in every release.
var required = []struct {
	k    kind
	cols []string
}{
	{kindKernel, []string{"Kind", "Agent_Id", "Queue_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id", "Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp"}},
	{kindAPI, []string{"Domain", "Function", "Process_Id", "Thread_Id", "Correlation_Id", "Start_Timestamp", "End_Timestamp"}},
	{kindCopy, []string{"Kind", "Direction", "Source_Agent_Id", "Destination_Agent_Id", "Correlation_Id", "Start_Timestamp", "End_Timestamp"}},
	{kindAlloc, []string{"Kind", "Operation", "Agent_Id", "Allocation_Size", "Address", "Correlation_Id", "Start_Timestamp", "End_Timestamp"}},
	{kindScratch, []string{"Kind", "Operation", "Agent_Id", "Queue_Id", "Thread_Id", "Alloc_Flags", "Start_Timestamp", "End_Timestamp"}},
	{kindCounter, []string{"Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id", "Thread_Id", "Kernel_Name", "Counter_Name", "Counter_Value", "Start_Timestamp", "End_Timestamp"}},
	{kindCounterNoTime, []string{"Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id", "Thread_Id", "Kernel_Name", "Counter_Name", "Counter_Value"}},
}

// classify names the output a header is, or kindNone.
func classify(header []string) kind {
	have := make(map[string]bool, len(header))
	for _, h := range header {
		have[h] = true
	}
	for _, r := range required {
		ok := true
		for _, c := range r.cols {
			ok = ok && have[c]
		}
		if ok {
			return r.k
		}
	}
	return kindNone
}

// sniff says Yes to a first line that is a rocprofv3 trace header. The
// timestamp-less counter_collection is a No: it cannot be a trace table
// (see decode), and the CSV preview shows it.
func sniff(prefix []byte) formats.Verdict {
	prefix = bytes.TrimPrefix(prefix, []byte("\xef\xbb\xbf"))
	head, _, _ := bytes.Cut(prefix, []byte("\n"))
	rec, err := csv.NewReader(bytes.NewReader(head)).Read()
	if err != nil {
		return formats.No
	}
	if k := classify(rec); k != kindNone && k != kindCounterNoTime {
		return formats.Yes
	}
	return formats.No
}

// cols are the positions of the columns a decoder reads; -1 when absent.
type cols struct {
	kind, agent, queue, stream, thread, process, dispatch, kernelName  int
	correlation, start, end, domain, function, direction, src, dst, op int
	counterName, counterValue                                          int
	used                                                               []bool // columns not put in args
}

func index(header []string) cols {
	at := func(name string) int {
		for i, h := range header {
			if h == name {
				return i
			}
		}
		return -1
	}
	c := cols{kind: at("Kind"), agent: at("Agent_Id"), queue: at("Queue_Id"), stream: at("Stream_Id"),
		thread: at("Thread_Id"), process: at("Process_Id"), dispatch: at("Dispatch_Id"), kernelName: at("Kernel_Name"),
		correlation: at("Correlation_Id"), start: at("Start_Timestamp"), end: at("End_Timestamp"),
		domain: at("Domain"), function: at("Function"), direction: at("Direction"),
		src: at("Source_Agent_Id"), dst: at("Destination_Agent_Id"), op: at("Operation"),
		counterName: at("Counter_Name"), counterValue: at("Counter_Value")}
	return c
}

// decoder is one file's state.
type decoder struct {
	in       *formats.Input
	k        kind
	header   []string
	c        cols
	vals     *formats.Values
	keepArgs bool
	slices   *formats.LazyTable
	counters *formats.LazyTable

	records, nSlices, nCounters, inverted int64
	firstInverted                         int64
	minStart, maxEnd                      int64
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if err := in.CheckSize(); err != nil {
		return err
	}
	src, err := in.DigestFirst()
	if err != nil {
		return err
	}
	r, err := csvpreview.NewReader(in, src)
	if err != nil {
		return err
	}
	rec, _, _, err := r.Read()
	if errors.Is(err, io.EOF) {
		return &evidence.Failure{Code: evidence.CodeDecodeFailure, Message: "rocprofv3 CSV: the file is empty; a rocprofv3 CSV output starts with its header line"}
	}
	if err != nil {
		return err
	}
	d := &decoder{in: in, header: append([]string(nil), rec...), vals: in.Values(), keepArgs: in.Bool(OptionArgs), minStart: -1}
	d.k = classify(d.header)
	switch d.k {
	case kindNone:
		return &evidence.Failure{Code: evidence.CodeUnsupportedFormat, Location: evidence.Location{Line: 1},
			Message: "rocprofv3 CSV: the header names no rocprofv3 trace output (kernel, API, memory copy, memory allocation, scratch or counter_collection); read it with --artifact-format csv"}
	case kindCounterNoTime:
		return &evidence.Failure{Code: evidence.CodeUnsupportedFormat, Location: evidence.Location{Line: 1},
			Message: "rocprofv3 counter_collection CSV without Start_Timestamp/End_Timestamp: its counters have no time, so they are not trace.counters; collect with a rocprofv3 that writes them, or read it with --artifact-format csv"}
	}
	d.c = index(d.header)
	d.c.used = make([]bool, len(d.header))
	for _, i := range []int{d.c.kind, d.c.agent, d.c.queue, d.c.stream, d.c.thread, d.c.process, d.c.kernelName,
		d.c.correlation, d.c.start, d.c.end, d.c.domain, d.c.function, d.c.direction, d.c.op, d.c.counterName, d.c.counterValue} {
		if i >= 0 {
			d.c.used[i] = true
		}
	}
	d.slices = formats.NewLazyTable(out, table.TraceSlices.Header(""))
	d.counters = formats.NewLazyTable(out, table.TraceCounters.Header(""))
	for {
		if d.records&1023 == 0 && ctx.Err() != nil {
			return d.abort(ctx.Err())
		}
		rec, line, offset, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return d.abort(err)
		}
		for i, f := range rec {
			if !utf8.ValidString(f) { // evidence strings are UTF-8; the native bytes stay in the artifact
				return d.abort(d.fail(line, offset, min(i, len(d.header)-1), "field %d is not valid UTF-8", i+1))
			}
		}
		if err := d.record(rec, line, offset); err != nil {
			return d.abort(err)
		}
		d.records++
	}
	return d.end()
}

// fail is a DECODE_FAILURE located at a record's field.
func (d *decoder) fail(line, offset int64, col int, format string, a ...any) error {
	return &evidence.Failure{Code: evidence.CodeDecodeFailure,
		Message:  fmt.Sprintf("rocprofv3 %s line %d, column %s: ", kindNames[d.k], line, d.header[col]) + fmt.Sprintf(format, a...),
		Location: evidence.Location{Line: int(line), Offset: offset, Field: d.header[col]}}
}

func (d *decoder) int(rec []string, col int, line, offset int64) (int64, error) {
	v, err := strconv.ParseInt(rec[col], 10, 64)
	if err != nil {
		return 0, d.fail(line, offset, col, "%q is not an integer", d.vals.Bound(rec[col]))
	}
	return v, nil
}

// text is a column's bounded value, null when the column is absent.
func (d *decoder) text(rec []string, col int) table.Null[string] {
	if col < 0 {
		return table.Null[string]{}
	}
	return table.Some(d.vals.Bound(rec[col]))
}

// args keeps the columns not given a row column: integers as numbers,
// the rest as bounded text.
func (d *decoder) args(rec []string, extra map[string]string) evidence.Object {
	if !d.keepArgs {
		return nil
	}
	o := make(evidence.Object, len(rec)+len(extra))
	for i, v := range rec {
		if d.c.used[i] {
			continue
		}
		o[d.header[i]] = d.value(v)
	}
	for k, v := range extra {
		o[k] = d.value(v)
	}
	return o
}

func (d *decoder) value(v string) any {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && strconv.FormatInt(n, 10) == v {
		return n
	}
	return d.vals.Bound(v)
}

func (d *decoder) record(rec []string, line, offset int64) error {
	if len(rec) != len(d.header) {
		return &evidence.Failure{Code: evidence.CodeDecodeFailure, Location: evidence.Location{Line: int(line), Offset: offset},
			Message: fmt.Sprintf("rocprofv3 %s line %d has %d fields, its header %d", kindNames[d.k], line, len(rec), len(d.header))}
	}
	var start, end int64
	var err error
	if d.c.start >= 0 {
		if start, err = d.int(rec, d.c.start, line, offset); err != nil {
			return err
		}
		if end, err = d.int(rec, d.c.end, line, offset); err != nil {
			return err
		}
	}
	var corr table.Null[int64]
	if d.c.correlation >= 0 {
		v, err := d.int(rec, d.c.correlation, line, offset)
		if err != nil {
			return err
		}
		corr = table.Some(v)
	}
	if d.k == kindCounter {
		return d.counter(rec, line, offset, start)
	}
	if end < start {
		// A record whose end precedes its start has no duration to sum:
		// counted and named in the summary, not a row.
		if d.inverted == 0 {
			d.firstInverted = line
		}
		d.inverted++
		return nil
	}
	row := &table.TraceSlice{SliceID: strconv.FormatInt(d.records, 10), Kind: table.SliceThread,
		StartNS: start, EndNS: end, DurationNS: end - start, Correlation: corr, Offset: table.Some(offset)}
	switch d.k {
	case kindAPI:
		row.Name = d.vals.Bound(rec[d.c.function])
		row.Category = d.text(rec, d.c.domain)
		row.Process = d.text(rec, d.c.process)
		row.Thread = d.text(rec, d.c.thread)
		row.Args = d.args(rec, nil)
	case kindKernel:
		row.Name = d.vals.Bound(rec[d.c.kernelName])
		row.Category = d.text(rec, d.c.kind)
		row.Device = d.text(rec, d.c.agent)
		row.Stream = d.stream(rec)
		row.Track = table.Some("queue " + d.vals.Bound(rec[d.c.queue]))
		row.Args = d.args(rec, map[string]string{"Thread_Id": rec[d.c.thread]})
	case kindCopy:
		row.Name = d.vals.Bound(rec[d.c.direction])
		row.Category = d.text(rec, d.c.kind)
		row.Stream = d.text(rec, d.c.stream)
		row.Args = d.args(rec, nil)
	case kindAlloc, kindScratch:
		row.Name = d.vals.Bound(rec[d.c.op])
		row.Category = d.text(rec, d.c.kind)
		row.Device = table.NonEmpty(d.vals.Bound(rec[d.c.agent])) // a free records no agent
		if d.c.queue >= 0 {
			row.Stream = table.Some(d.vals.Bound(rec[d.c.queue]))
		}
		if d.k == kindScratch {
			row.Thread = d.text(rec, d.c.thread)
		}
		row.Args = d.args(rec, nil)
	}
	d.span(start, end)
	d.nSlices++
	return d.slices.Row(row)
}

// stream is a kernel's stream: the HIP stream where the release writes
// Stream_Id, else the HSA queue.
func (d *decoder) stream(rec []string) table.Null[string] {
	if d.c.stream >= 0 {
		return table.Some(d.vals.Bound(rec[d.c.stream]))
	}
	return table.Some(d.vals.Bound(rec[d.c.queue]))
}

func (d *decoder) span(start, end int64) {
	if d.minStart < 0 || start < d.minStart {
		d.minStart = start
	}
	d.maxEnd = max(d.maxEnd, end)
}

// counter is one counter_collection record: the dispatch's accumulated
// value of one counter, at the dispatch's start. The series is the
// kernel, so one counter's values split by kernel.
func (d *decoder) counter(rec []string, line, offset, start int64) error {
	v, err := strconv.ParseFloat(rec[d.c.counterValue], 64)
	if err != nil {
		return d.fail(line, offset, d.c.counterValue, "%q is not a number", d.vals.Bound(rec[d.c.counterValue]))
	}
	row := &table.TraceCounter{Name: d.vals.Bound(rec[d.c.counterName]), Series: table.Some(d.vals.Bound(rec[d.c.kernelName])),
		TraceIDs: table.TraceIDs{Process: d.text(rec, d.c.process), Thread: d.text(rec, d.c.thread),
			Device: d.text(rec, d.c.agent), Stream: table.Some(d.vals.Bound(rec[d.c.queue]))},
		TS: start, Value: v, Offset: table.Some(offset)}
	d.nCounters++
	return d.counters.Row(row)
}

func metric(v any, unit string) evidence.Metric { return evidence.Metric{Value: v, Unit: unit} }

func (d *decoder) coverage() evidence.Object {
	c := evidence.Object{
		"output":      kindNames[d.k],
		"records":     d.records,
		"time_unit":   "ns",
		"time_source": "rocprofv3 Start_Timestamp/End_Timestamp: integer ns on the ROCm profiler's clock (CLOCK_BOOTTIME-based)",
		"columns":     len(d.header),
	}
	if d.k == kindKernel {
		c["stream_column"] = map[bool]string{true: "Stream_Id", false: "Queue_Id"}[d.c.stream >= 0]
	}
	return c
}

func (d *decoder) summary(rows int64, slices bool) *evidence.Summary {
	s := &evidence.Summary{Complete: true, RowsObserved: rows, Coverage: d.coverage(), Metrics: map[string]evidence.Metric{
		"records": metric(d.records, "records"),
	}}
	if slices {
		s.Metrics["inverted_records"] = metric(d.inverted, "records")
		if d.inverted > 0 {
			s.Complete = false
			s.Limit(fmt.Sprintf("%d records end before they start (first at line %d): they are not rows", d.inverted, d.firstInverted))
		}
		if d.minStart >= 0 {
			s.Metrics["first_start_ns"] = metric(d.minStart, "ns")
			s.Metrics["last_end_ns"] = metric(d.maxEnd, "ns")
		}
		if d.k != kindCounter {
			s.Limit("rocprofv3 CSV records are flat: depth, parent and self time are null")
		}
	}
	if d.k == kindCopy && slices {
		s.Limit("a memory copy names two agents (Source_Agent_Id, Destination_Agent_Id in args): its device is null")
	}
	d.vals.Summarize(s)
	return s
}

func (d *decoder) end() error {
	if err := d.slices.End(d.summary(d.nSlices, true)); err != nil {
		return err
	}
	return d.counters.End(d.summary(d.nCounters, false))
}

func (d *decoder) abort(err error) error {
	for _, t := range []struct {
		lt   *formats.LazyTable
		rows int64
	}{{d.slices, d.nSlices}, {d.counters, d.nCounters}} {
		s := &evidence.Summary{Complete: false, RowsObserved: t.rows}
		s.Limit("decoding stopped at a failure: " + err.Error())
		err = t.lt.Abort(err, s)
	}
	return err
}
