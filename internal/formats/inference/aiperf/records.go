package aiperf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/inference"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/table"
)

// sniffRecords says Yes to a first line that opens an object whose first
// keys are metadata then metrics, as every AIPerf record starts.
func sniffRecords(prefix []byte) formats.Verdict {
	sc := lines.Split(prefix)
	l, err := sc.Next()
	if err != nil {
		return formats.NeedMore
	}
	keys, _, ok := inference.TopKeys(l.Bytes)
	if !ok {
		return formats.No
	}
	if keys["metadata"] && keys["metrics"] {
		return formats.Yes
	}
	return formats.No
}

// wantMetadata picks the metadata members the reader looks at: the kept
// ones and the unknown ones (to count them). The others are the keys
// AIPerf writes that the reader does not keep (ids of workers and
// processors, phase bookkeeping, correlation ids, the cancellation flag):
// known, so not counted as unknown, and skipped without tokens. A switch,
// not a map: it runs for every member of every record.
func wantMetadata(key []byte) bool {
	switch string(key) {
	case "session_num", "x_correlation_id", "credit_issued_ns", "request_ack_ns",
		"worker_id", "record_processor_id", "phase_index", "profiling_index",
		"phase_name", "phase_kind", "context_overflow_skip", "agent_depth",
		"parent_correlation_id", "root_correlation_id", "source_trace_id",
		"source_outer_idx", "source_inner_idx", "source_kind", "cancellation_time_ns",
		"request_end_ns", "was_cancelled":
		return false
	}
	return true
}

// wantMetric picks the metrics the row has a column for.
func wantMetric(key []byte) bool {
	switch string(key) {
	case "ttft", "time_to_first_token", "request_latency", "inter_token_latency",
		"input_sequence_length", "error_isl", "output_sequence_length":
		return true
	}
	return false
}

type recordReader struct {
	in      *formats.Input
	vals    *formats.Values
	ledger  *inference.Ledger
	row     table.InferenceRequest
	ok, bad int64
	phases  map[string]int64
	scan    *jsonscan.Scanner // reused line after line
	w       jsonscan.Walker
	// The walker's callbacks, made once: closures made per record would
	// be allocated per record.
	member, metaMember, metricMember, valueMember, errorMember func(key []byte) error
	// The metric being read by valueMember.
	mv    float64
	mhas  bool
	munit string
	// Of the record being read.
	hasMeta, hasMetrics bool
}

func newRecordReader(in *formats.Input) *recordReader {
	r := &recordReader{in: in, vals: in.Values(), ledger: inference.NewLedger(), phases: map[string]int64{}}
	r.member, r.metaMember, r.metricMember, r.valueMember, r.errorMember = r.topMember, r.metaField, r.metric, r.metricField, r.errorField
	return r
}

// add adds a worker's counts of one batch to r's.
func (r *recordReader) add(o *recordReader) {
	r.ok += o.ok
	r.bad += o.bad
	for p, c := range o.phases {
		r.phases[p] += c
	}
	r.ledger.Add(o.ledger)
	r.vals.Add(o.vals)
}

func decodeRecords(ctx context.Context, in *formats.Input, out formats.Sink) error {
	r := newRecordReader(in)
	lr := lines.NewStrict(in.R, int(in.Limit(inference.LimitLine)), inference.LimitLine)
	reqs := formats.NewLazyTable(out, table.InferenceRequests.Header(""))
	keep := out.Wants(table.InferenceRequests.Schema)
	var n int64
	var unterminated int64
	fail := func(err error) error {
		s := r.summary(n)
		s.Complete = false
		s.Truncation = &evidence.Truncation{Reason: "document_incomplete"}
		s.Limit(fmt.Sprintf("decoding stopped after %d records: %v", n, err))
		return reqs.Abort(err, s)
	}
	// Only a file: on a pipe, the reader goroutine could sit in a read
	// that never returns after a failure has ended the decode.
	if workers := runtime.GOMAXPROCS(0); workers > 1 && in.File != nil && !serialOnly {
		var err error
		n, unterminated, err = r.parallel(ctx, lr, workers, func(row *table.InferenceRequest) error {
			if keep {
				return reqs.Row(row)
			}
			return nil
		})
		var se sinkError
		if errors.As(err, &se) {
			return se.err
		}
		if err != nil {
			return fail(err)
		}
		return r.finish(out, reqs, n, unterminated)
	}
	for {
		l, err := nextRecord(ctx, lr, n, &unterminated)
		if err != nil {
			return fail(err)
		}
		if l == nil {
			break
		}
		if err := r.parse(l.Bytes, n, l.Offset); err != nil {
			return fail(recordFailure(l, err))
		}
		n++
		if keep {
			if err := reqs.Row(&r.row); err != nil {
				return err
			}
		}
	}
	return r.finish(out, reqs, n, unterminated)
}

// nextRecord is the next record's line, skipping blank ones, with n
// records read so far: nil at the end of the input, or the read failure
// or cancellation that ends it. It notes an unterminated last line.
func nextRecord(ctx context.Context, lr *lines.Reader, n int64, unterminated *int64) (*lines.Line, error) {
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, lr.Errorf(evidence.CodeIOFailure, err, "read records")
		}
		if n%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if len(l.Bytes) == 0 || isSpace(l.Bytes) {
			continue
		}
		if l.Term == lines.None {
			*unterminated = l.Size
		}
		return l, nil
	}
}

// recordFailure is the failure of the record on line l.
func recordFailure(l *lines.Line, err error) *evidence.Failure {
	f := l.Malformed(err, fmt.Sprintf("AIPerf record at line %d", l.Number))
	var ff *evidence.Failure
	if errors.As(err, &ff) {
		f = l.At(ff)
	}
	return f
}

// finish ends the requests table and writes the run.
func (r *recordReader) finish(out formats.Sink, reqs *formats.LazyTable, n, unterminated int64) error {
	s := r.summary(n)
	if unterminated > 0 {
		// AIPerf ends every record with a newline; a last line without one
		// parsed whole, so it is kept, but the writer may have stopped.
		s.Limit(fmt.Sprintf("the last record (%d bytes) has no newline: the export may have been cut off after it", unterminated))
	}
	if err := reqs.End(s); err != nil {
		return err
	}
	return r.runs(out, n)
}

func isSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

func (r *recordReader) summary(n int64) *evidence.Summary {
	s := &evidence.Summary{RowsObserved: n, Complete: true, Metrics: map[string]evidence.Metric{
		"records":       {Value: n, Unit: "requests"},
		"ok_records":    {Value: r.ok, Unit: "requests"},
		"error_records": {Value: r.bad, Unit: "requests"},
		"line_bound":    {Value: r.in.Limit(inference.LimitLine), Unit: "bytes"},
	}}
	for p, c := range r.phases {
		s.Metrics["phase_"+metricKey(p)] = evidence.Metric{Value: c, Unit: "requests"}
	}
	r.ledger.Summarize(s)
	r.vals.Summarize(s)
	return s
}

// metricKey keeps a metric name made from native text short and plain.
func metricKey(s string) string {
	b := make([]byte, 0, min(len(s), 32))
	for i := 0; i < len(s) && len(b) < 32; i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' {
			b = append(b, c)
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

// runs writes the one run a records file holds: its counts, from the
// records (AIPerf's own totals are in the aggregate export).
func (r *recordReader) runs(out formats.Sink, n int64) error {
	tw, err := out.Begin(table.InferenceRuns.Header(""))
	if err != nil {
		return err
	}
	run := &table.InferenceRun{Run: 0, Producer: inference.AIPerf, Completed: table.Some(r.ok), Failed: table.Some(r.bad),
		Requests:    table.Some(n),
		UnknownKeys: r.ledger.UnknownCount(), OmittedFields: r.ledger.OmittedCount()}
	if err := tw.Row(run); err != nil {
		return err
	}
	s := &evidence.Summary{RowsObserved: 1, Complete: true}
	r.vals.Summarize(s) // the counts are of the rows above, cut as they are
	return tw.End(s)
}

// parse reads one record line into r.row.
func (r *recordReader) parse(line []byte, index, at int64) error {
	r.scan = r.in.JSONLineScanner(r.scan, line, at, 16, formats.LimitToken)
	r.w = jsonscan.Walker{S: r.scan}
	// An absent or null error is a success, as AIPerf's model defaults it.
	r.row = table.InferenceRequest{Request: index, OK: true}
	r.hasMeta, r.hasMetrics = false, false
	if err := r.w.Document("an AIPerf record", r.member); err != nil {
		return err
	}
	if !r.hasMeta || !r.hasMetrics {
		return fmt.Errorf("a record needs metadata and metrics")
	}
	// AIPerf's totals count the profiling phase; warmup records are
	// counted apart (phase_warmup).
	switch {
	case r.row.Phase.Valid && r.row.Phase.V == "warmup":
	case r.row.OK:
		r.ok++
	default:
		r.bad++
	}
	if r.row.Phase.Valid {
		r.phases[r.row.Phase.V]++
	}
	return nil
}

// topMember reads a member of the record.
func (r *recordReader) topMember(key []byte) error {
	w := &r.w
	switch string(key) {
	case "metadata":
		r.hasMeta = true
		return w.PickObject("metadata", wantMetadata, r.metaMember)
	case "metrics":
		r.hasMetrics = true
		// Only the metrics the row has a column for are looked into;
		// the others (inter_chunk_latency's arrays among them) are
		// skipped whole, without tokens where they are plain
		// (Walker.Pick).
		return w.PickObject("metrics", wantMetric, r.metricMember)
	case "error":
		return r.errorDetails()
	case "trace_data":
		// HTTP trace: request and response headers, which may hold
		// credentials.
		r.ledger.Omit("trace_data")
		return w.SkipValue()
	case "spec_decode_acceptance":
		return w.SkipValue()
	}
	r.ledger.Unknowns()
	return w.SkipValue()
}

// metaField reads a metadata member that wantMetadata picked.
func (r *recordReader) metaField(key []byte) error {
	switch string(key) {
	case "x_request_id":
		return r.metaString("metadata.x_request_id", &r.row.RequestID)
	case "conversation_id":
		return r.metaString("metadata.conversation_id", &r.row.Session)
	case "benchmark_phase":
		return r.metaString("metadata.benchmark_phase", &r.row.Phase)
	case "credit_phase":
		return r.metaString("metadata.credit_phase", &r.row.Phase)
	case "turn_index":
		n, ok, err := r.w.OptionalInt("metadata.turn_index")
		r.row.Turn = table.Null[int64]{V: n, Valid: ok}
		return err
	case "request_start_ns":
		return r.metaStart("metadata.request_start_ns")
	case "timestamp_ns":
		return r.metaStart("metadata.timestamp_ns")
	}
	r.ledger.Unknowns()
	return r.w.SkipValue()
}

// metaString reads a metadata string into dst; null leaves dst as it is.
func (r *recordReader) metaString(what string, dst *table.Null[string]) error {
	v, _, null, err := r.w.Str(what, 0)
	if err != nil || null {
		return err
	}
	*dst = inference.Strings(r.vals, v)
	return nil
}

// metaStart reads the request's start; null leaves it as it is.
func (r *recordReader) metaStart(what string) error {
	n, ok, err := r.w.OptionalInt(what)
	if ok {
		r.row.Start = table.Some(n)
	}
	return err
}

// metric reads a member of the metrics object that wantMetric picked:
// {value, unit}, converted to ns or tokens.
func (r *recordReader) metric(key []byte) error {
	w := &r.w
	var dst *table.Null[float64]
	var count *table.Null[int64]
	// tag names the metric in errors: key may be overwritten by the
	// keys read below (an escaped key lives in the scanner's scratch).
	var tag string
	switch string(key) {
	case "ttft":
		dst, tag = &r.row.TTFT, "ttft"
	case "time_to_first_token":
		dst, tag = &r.row.TTFT, "time_to_first_token"
	case "request_latency":
		dst, tag = &r.row.E2E, "request_latency"
	case "inter_token_latency":
		dst, tag = &r.row.ITL, "inter_token_latency"
	case "input_sequence_length":
		count, tag = &r.row.InputTokens, "input_sequence_length"
	case "error_isl":
		count, tag = &r.row.InputTokens, "error_isl"
	case "output_sequence_length":
		count, tag = &r.row.OutputTokens, "output_sequence_length"
	default:
		return w.SkipValue()
	}
	tok, err := w.Expect(jsonscan.ObjectStart, "a metric")
	if err != nil {
		return err
	}
	r.mv, r.mhas, r.munit = 0, false, ""
	if err := w.Members(tok, "a metric", r.valueMember); err != nil || !r.mhas {
		return err
	}
	v := r.mv
	if dst != nil {
		f, ok := inference.TimeFactor(r.munit)
		if !ok {
			return fmt.Errorf("metrics.%s: unit %q is not a time unit", tag, r.munit)
		}
		*dst = table.Some(v * f)
		return nil
	}
	if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		return fmt.Errorf("metrics.%s: %v tokens is not a count", tag, v)
	}
	*count = table.Some(int64(v))
	return nil
}

// metricField reads a member of one {value, unit} object.
func (r *recordReader) metricField(k []byte) error {
	w := &r.w
	switch string(k) {
	case "value":
		var err error
		r.mv, r.mhas, err = inference.Number(w, "a metric's value")
		return err
	case "unit":
		u, _, _, err := w.StrBytes("a metric's unit", 32)
		r.munit = unitString(u)
		return err
	}
	return w.SkipValue()
}

// unitString is string(b) without an allocation for the units AIPerf
// writes.
func unitString(b []byte) string {
	switch string(b) {
	case "ms":
		return "ms"
	case "ns":
		return "ns"
	case "tokens":
		return "tokens"
	}
	return string(b)
}

// errorDetails keeps an error's type (bounded) and code; its message,
// cause, cause chain and details are skipped unread.
func (r *recordReader) errorDetails() error {
	null, err := r.w.ObjectOrNull("error", r.errorMember)
	if err != nil || null {
		return err
	}
	r.row.OK = false
	if !r.row.ErrorCategory.Valid {
		r.row.ErrorCategory = table.Some("error")
	}
	return nil
}

// errorField reads a member of a record's error.
func (r *recordReader) errorField(key []byte) error {
	w := &r.w
	switch string(key) {
	case "code":
		n, ok, err := w.OptionalInt("error.code")
		r.row.ErrorCode = table.Null[int64]{V: n, Valid: ok}
		return err
	case "type":
		v, _, null, err := w.Str("error.type", 0)
		if err == nil && !null {
			r.row.ErrorCategory = inference.Strings(r.vals, v)
		}
		return err
	case "message", "cause", "cause_chain", "details":
		r.ledger.Omit("error." + string(key))
		return w.SkipValue()
	}
	r.ledger.Unknowns()
	return w.SkipValue()
}
