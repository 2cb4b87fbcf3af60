// Package servebench decodes the result files of the serving benchmarks
// that ship with vLLM (`vllm bench serve --save-result`, and
// benchmarks/benchmark_serving.py before it) and SGLang
// (`python -m sglang.bench_serving`, now sglang.benchmark.serving).
// Both write flat JSON objects of totals and of mean/median/std/pNN
// latencies in ms, and, on request (vLLM --save-detailed, SGLang
// --output-details), per-request arrays in the same object. A vLLM file
// holds one object, or several with --append-result; SGLang appends one
// object per line. Either way the file is read as a stream of objects,
// each a run.
//
// The two dialects are told apart by their keys, never by the file name:
// vLLM writes model_id, tokenizer_id, burstiness and *_e2el_ms; SGLang
// writes dataset_name, server_info, the random_* and sharegpt_* settings
// and *_e2e_latency_ms. A first object with keys of both is neither.
//
// Omitted: generated_texts and errors (their text; an error's presence
// makes the request failed), server_info (a server's arguments), label
// and tag (user text), and every key the reader does not know, counted
// (vLLM's --metadata writes KEY=VALUE pairs a user typed as top-level
// keys).
//
// It imports evidence, formats, formats/inference, jsonscan and table.
package servebench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/inference"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/table"
)

// Version is the decoders' version.
const Version = "1"

// Limits on the per-request arrays one run may hold: they are kept until
// the run's object ends, because each is a separate key.
const (
	LimitRequests = "max_requests"
	LimitGaps     = "max_itl_values"
)

func limits() []formats.Limit {
	return []formats.Limit{
		{Name: formats.LimitBytes, Default: 16 << 30, Unit: "bytes", Doc: "bytes of the result file"},
		inference.TokenLimit,
		{Name: LimitRequests, Default: 1 << 24, Unit: "requests", Doc: "per-request entries in one detailed array"},
		{Name: LimitGaps, Default: 1 << 25, Unit: "values", Doc: "inter-token gaps in one run's itls"},
	}
}

// VLLMSpec is vLLM's bench serve result.
var VLLMSpec = &formats.Spec{
	Name:     "vllm-bench",
	Title:    "vLLM bench serve result (--save-result JSON, --save-detailed)",
	Family:   inference.Family,
	Sniff:    func(p []byte) formats.Verdict { return sniff(p, vllm) },
	Tables:   inference.Tables,
	Limits:   limits(),
	Options:  inference.Options,
	Producer: "vLLM bench serve (vllm.benchmarks.serve)",
	Version:  Version,
	Decoder: formats.DecoderFunc(func(ctx context.Context, in *formats.Input, out formats.Sink) error {
		return decode(ctx, in, out, vllm)
	}),
}

// SGLangSpec is SGLang's bench_serving result.
var SGLangSpec = &formats.Spec{
	Name:     "sglang-bench",
	Title:    "SGLang bench_serving result (JSONL, --output-details)",
	Family:   inference.Family,
	Sniff:    func(p []byte) formats.Verdict { return sniff(p, sglang) },
	Tables:   inference.Tables,
	Limits:   limits(),
	Options:  inference.Options,
	Producer: "SGLang bench_serving (sglang.benchmark.serving)",
	Version:  Version,
	Decoder: formats.DecoderFunc(func(ctx context.Context, in *formats.Input, out formats.Sink) error {
		return decode(ctx, in, out, sglang)
	}),
}

// dialect is what differs between the two producers.
type dialect struct {
	producer string
	// stat matches a statistic key: stat name, metric.
	stat *regexp.Regexp
	// metrics maps the key's metric to flameox's name.
	metrics map[string]string
	// markers are keys only this producer writes.
	markers []string
	// marker suffixes, for the statistics.
	suffix string
	// known keys that are read elsewhere or skipped on purpose.
	known map[string]bool
	// omitted keys: present, deliberately not read.
	omitted map[string]bool
	// totalRate is the key of the input+output token throughput.
	totalRate string
	// hasE2E: the detailed arrays hold per-request latencies.
	hasE2E bool
}

func set(keys ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

var vllm = &dialect{
	producer: inference.VLLM,
	stat:     regexp.MustCompile(`^(mean|median|std|p[0-9]+(?:\.[0-9]+)?)_(ttft|tpot|itl|e2el|client_queue_time|e2el_including_client_queue)_ms$`),
	metrics:  map[string]string{"e2el": "e2e"},
	markers:  []string{"model_id", "tokenizer_id", "burstiness", "endpoint_type", "total_token_throughput"},
	suffix:   "_e2el_ms",
	known: set("tokenizer_id", "num_prompts", "burstiness", "ramp_up_strategy", "ramp_up_start_rps", "ramp_up_end_rps",
		"request_goodput", "request_goodput:", "max_output_tokens_per_s", "max_concurrent_requests", "rtfx",
		"total_input_sequences", "input_sequence_throughput", "rps_change_events", "queue_times", "server_queue_times",
		"server_ttfts", "spec_decode_acceptance_rate", "spec_decode_acceptance_length", "spec_decode_num_drafts",
		"spec_decode_draft_tokens", "spec_decode_accepted_tokens", "spec_decode_per_position_acceptance_rates",
		"diffusion_committed_throughput", "diffusion_steps_per_canvas", "diffusion_committed_per_step",
		"diffusion_committed_tokens", "diffusion_denoising_steps", "diffusion_canvas_positions",
		"probe_completed", "probe_failed", "probe_median_e2el_ms", "probe_p99_e2el_ms", "probe_max_e2el_ms"),
	omitted:   set("generated_texts", "errors", "label"),
	totalRate: "total_token_throughput",
	hasE2E:    true,
}

var sglang = &dialect{
	producer: inference.SGLang,
	stat:     regexp.MustCompile(`^(mean|median|std|max|p[0-9]+(?:\.[0-9]+)?)_(ttft|tpot|itl|e2e_latency)_ms$`),
	metrics:  map[string]string{"e2e_latency": "e2e"},
	markers:  []string{"dataset_name", "server_info", "sharegpt_output_len", "random_input_len", "random_output_len", "total_throughput", "accept_length"},
	suffix:   "_e2e_latency_ms",
	known: set("dataset_name", "sharegpt_output_len", "random_input_len", "random_output_len", "random_range_ratio",
		"total_input_text_tokens", "total_input_vision_tokens", "total_output_tokens_retokenized", "input_throughput",
		"concurrency", "accept_length", "max_output_tokens_per_s", "max_concurrent_requests", "cache_report",
		"cached_tokens", "cached_tokens_details", "completed_retokenized", "output_throughput_retokenized",
		"total_throughput_retokenized", "request_goodput", "goodput_config"),
	omitted:   set("generated_texts", "errors", "server_info", "tag"),
	totalRate: "total_throughput",
}

// sniff says Yes when the first object's keys are this dialect's and not
// the other's; No when they are the other's or neither's whole.
func sniff(prefix []byte, d *dialect) formats.Verdict {
	return formats.SniffObject(prefix, false, func(doc []byte) formats.Verdict {
		keys, closed, ok := inference.TopKeys(doc)
		if !ok {
			return formats.No
		}
		mine, theirs := marked(keys, d), marked(keys, other(d))
		switch {
		case mine && !theirs && (keys["completed"] || keys["duration"] || !closed):
			return formats.Yes
		case theirs || closed:
			return formats.No
		}
		return formats.NeedMore
	})
}

func other(d *dialect) *dialect {
	if d == vllm {
		return sglang
	}
	return vllm
}

func marked(keys map[string]bool, d *dialect) bool {
	if inference.HasAny(keys, d.markers...) {
		return true
	}
	for k := range keys {
		if strings.HasSuffix(k, d.suffix) {
			return true
		}
	}
	return false
}

// details are one run's per-request arrays, as read.
type details struct {
	inputs, outputs []int64
	ttfts, lats     []float64
	starts          []float64
	gaps            []float64 // every itls entry, flattened
	gapEnds         []int     // gaps[gapEnds[i-1]:gapEnds[i]] are request i's
	errs            []bool    // request i has an error text
	has             map[string]int
}

type reader struct {
	in     *formats.Input
	d      *dialect
	vals   *formats.Values
	ledger *inference.Ledger
	w      jsonscan.Walker
	runs   []table.InferenceRun
	stats  []table.InferenceStat
	reqs   *formats.LazyTable
	keep   bool
	nreq   int64
	gaps   int64
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink, d *dialect) error {
	if err := in.CheckSize(); err != nil {
		return err
	}
	s := in.JSONScanner(in.R, 64, formats.LimitToken)
	s.AllowTrailing, s.AllowNonFinite = true, true
	r := &reader{in: in, d: d, vals: in.Values(), ledger: inference.NewLedger(), w: jsonscan.Walker{S: s},
		reqs: formats.NewLazyTable(out, table.InferenceRequests.Header("")), keep: out.Wants(table.InferenceRequests.Schema)}
	for {
		if err := ctx.Err(); err != nil {
			return r.abort(err)
		}
		// Only white space left: the stream of objects is over.
		if err := s.CheckEnd(); err == nil {
			break
		} else if !errors.Is(err, jsonscan.ErrTrailing) {
			return r.abort(err)
		}
		tok, err := s.Next()
		if err != nil {
			return r.abort(err)
		}
		if tok.Kind != jsonscan.ObjectStart {
			return r.abort(s.Errorf(tok, "a %s result must be a JSON object, found %s", d.producer, tok.Kind))
		}
		if err := r.run(tok); err != nil {
			return r.abort(fmt.Errorf("run %d: %w", len(r.runs), err))
		}
	}
	if len(r.runs) == 0 {
		return evidence.Failf(evidence.CodeDecodeFailure, "%s result: no run", d.producer)
	}
	sum := r.summary()
	if err := r.reqs.End(sum); err != nil {
		return err
	}
	tw, err := out.Begin(table.InferenceRuns.Header(""))
	if err != nil {
		return err
	}
	for i := range r.runs {
		if err := tw.Row(&r.runs[i]); err != nil {
			return err
		}
	}
	rs := &evidence.Summary{RowsObserved: int64(len(r.runs)), Complete: true}
	r.vals.Summarize(rs)
	if err := tw.End(rs); err != nil {
		return err
	}
	sw, err := out.Begin(table.InferenceStats.Header(""))
	if err != nil {
		return err
	}
	for i := range r.stats {
		if err := sw.Row(&r.stats[i]); err != nil {
			return err
		}
	}
	ss := &evidence.Summary{RowsObserved: int64(len(r.stats)), Complete: true}
	r.vals.Summarize(ss)
	return sw.End(ss)
}

func (r *reader) summary() *evidence.Summary {
	s := &evidence.Summary{RowsObserved: r.nreq, Complete: true, Metrics: map[string]evidence.Metric{
		"runs":           {Value: int64(len(r.runs)), Unit: "runs"},
		"itl_values":     {Value: r.gaps, Unit: "values"},
		"requests_total": {Value: r.nreq, Unit: "requests"},
	}}
	r.ledger.Summarize(s)
	r.vals.Summarize(s)
	return s
}

func (r *reader) abort(err error) error {
	f := inference.Fail(err, r.d.producer+" result")
	s := r.summary()
	s.Complete = false
	s.Truncation = &evidence.Truncation{Reason: "document_incomplete"}
	s.Limit(fmt.Sprintf("decoding stopped in run %d: the rows above are not the whole file", len(r.runs)))
	return r.reqs.Abort(f, s)
}

// run reads one result object.
func (r *reader) run(tok jsonscan.Token) error {
	d, w := r.d, &r.w
	run := table.InferenceRun{Run: int64(len(r.runs)), Producer: d.producer}
	det := &details{has: map[string]int{}}
	start := len(r.stats)
	unknown0, omitted0 := r.ledger.UnknownCount(), r.ledger.OmittedCount()
	err := w.Members(tok, "result", func(key []byte) error {
		k := string(key)
		switch k {
		case "model_id":
			return r.str(k, &run.Model)
		case "backend":
			return r.str(k, &run.Backend)
		case "endpoint_type":
			return r.str(k, &run.EndpointKind)
		case "date":
			return r.str(k, &run.Started)
		case "request_rate":
			return r.rate(&run.RequestRate)
		case "max_concurrency":
			n, ok, err := w.OptionalInt(k)
			run.Concurrency = table.Null[int64]{V: n, Valid: ok}
			return err
		case "duration":
			v, ok, err := inference.Number(w, k)
			if ok {
				run.Duration = table.Some(int64(math.Round(v * 1e9)))
			}
			return err
		case "completed", "failed", "total_input_tokens", "total_output_tokens":
			n, ok, err := w.OptionalInt(k)
			dst := map[string]*table.Null[int64]{"completed": &run.Completed, "failed": &run.Failed,
				"total_input_tokens": &run.InputTokens, "total_output_tokens": &run.OutputTokens}[k]
			*dst = table.Null[int64]{V: n, Valid: ok}
			return err
		case "request_throughput", "output_throughput", d.totalRate:
			v, ok, err := inference.Number(w, k)
			dst := map[string]*table.Null[float64]{"request_throughput": &run.RequestRateOut, "output_throughput": &run.OutputRate, d.totalRate: &run.TotalRate}[k]
			*dst = table.Null[float64]{V: v, Valid: ok}
			return err
		case "input_lens", "output_lens":
			return r.ints(k, det)
		case "ttfts", "latencies", "start_times":
			if k == "latencies" && !d.hasE2E {
				break
			}
			return r.floats(k, det)
		case "itls":
			return r.itls(det)
		case "errors":
			r.ledger.Omit(k)
			return r.errors(det)
		}
		if m := d.stat.FindStringSubmatch(k); m != nil {
			v, ok, err := inference.Number(w, k)
			if ok {
				metric := m[2]
				if n, ok := d.metrics[metric]; ok {
					metric = n
				}
				r.stats = append(r.stats, table.InferenceStat{Run: run.Run, Metric: metric, Native: k, Stat: m[1], Value: v * 1e6, Unit: "ns"})
			}
			return err
		}
		switch {
		case d.omitted[k]:
			r.ledger.Omit(k)
		case !d.known[k]:
			r.ledger.Unknowns()
		}
		return w.SkipValue()
	})
	if err != nil {
		return err
	}
	n, err := det.check()
	if err != nil {
		return err
	}
	if n >= 0 {
		run.Requests = table.Some(int64(n))
		if err := r.emit(&run, det, n); err != nil {
			return err
		}
	}
	if !run.Failed.Valid && n >= 0 && det.errs != nil {
		var f int64
		for _, e := range det.errs {
			if e {
				f++
			}
		}
		run.Failed = table.Some(f)
	}
	if !run.Completed.Valid && len(r.stats) == start {
		return fmt.Errorf("neither completed nor any latency statistic: not a %s result", d.producer)
	}
	run.UnknownKeys, run.OmittedFields = r.ledger.UnknownCount()-unknown0, r.ledger.OmittedCount()-omitted0
	r.runs = append(r.runs, run)
	return nil
}

func (r *reader) str(k string, dst *table.Null[string]) error {
	v, _, null, err := r.w.Str(k, 0)
	if err == nil && !null {
		*dst = inference.Strings(r.vals, v)
	}
	return err
}

// rate keeps a request rate as written: a number, "inf" (vLLM), Python's
// Infinity (SGLang's default) or "trace".
func (r *reader) rate(dst *table.Null[string]) error {
	tok, err := r.w.Value()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonscan.Number:
		s := string(tok.Bytes)
		if s == "Infinity" {
			s = "inf"
		}
		*dst = table.Some(s)
	case jsonscan.String:
		*dst = table.Some(r.vals.Bound(string(tok.Bytes)))
	}
	return r.w.Skip(tok)
}

func (r *reader) count(k string, n int) error {
	if int64(n) >= r.in.Limit(LimitRequests) {
		return r.in.ExceededAt(LimitRequests, nil, r.w.S.Offset())
	}
	return nil
}

func (r *reader) ints(k string, det *details) error {
	var xs []int64
	err := r.w.Array(k, func(i int, el jsonscan.Token) error {
		if err := r.count(k, i); err != nil {
			return err
		}
		v, err := r.w.IntOf(el, k)
		xs = append(xs, v)
		return err
	})
	det.has[k] = len(xs)
	if k == "input_lens" {
		det.inputs = xs
	} else {
		det.outputs = xs
	}
	return err
}

func (r *reader) floats(k string, det *details) error {
	var xs []float64
	err := r.w.Array(k, func(i int, el jsonscan.Token) error {
		if err := r.count(k, i); err != nil {
			return err
		}
		if el.Kind == jsonscan.Null {
			xs = append(xs, math.NaN())
			return nil
		}
		v, err := r.w.FloatOf(el, k)
		xs = append(xs, v)
		return err
	})
	det.has[k] = len(xs)
	switch k {
	case "ttfts":
		det.ttfts = xs
	case "latencies":
		det.lats = xs
	default:
		det.starts = xs
	}
	return err
}

func (r *reader) itls(det *details) error {
	err := r.w.Array("itls", func(i int, el jsonscan.Token) error {
		if err := r.count("itls", i); err != nil {
			return err
		}
		err := r.w.Elements(el, "itls[]", func(_ int, g jsonscan.Token) error {
			if r.gaps >= r.in.Limit(LimitGaps) {
				return r.in.ExceededAt(LimitGaps, nil, g.Offset)
			}
			v, err := r.w.FloatOf(g, "itls[][]")
			det.gaps = append(det.gaps, v)
			r.gaps++
			return err
		})
		det.gapEnds = append(det.gapEnds, len(det.gaps))
		return err
	})
	det.has["itls"] = len(det.gapEnds)
	return err
}

// errors reads the error texts only to know which requests failed: an
// empty string is a success (the producers' default), anything else a
// failure. The text itself is not kept.
func (r *reader) errors(det *details) error {
	err := r.w.Array("errors", func(i int, el jsonscan.Token) error {
		if err := r.count("errors", i); err != nil {
			return err
		}
		switch el.Kind {
		case jsonscan.String:
			det.errs = append(det.errs, len(el.Bytes) > 0)
		case jsonscan.Null:
			det.errs = append(det.errs, false)
		default:
			det.errs = append(det.errs, true)
			return r.w.Skip(el)
		}
		return nil
	})
	det.has["errors"] = len(det.errs)
	return err
}

// check returns the number of requests the detailed arrays describe, -1
// when there are none; arrays of different lengths are a malformed file.
func (det *details) check() (int, error) {
	n := -1
	for k, l := range det.has {
		if n >= 0 && l != n {
			return 0, fmt.Errorf("detailed arrays differ in length (%s has %d, another %d)", k, l, n)
		}
		n = l
	}
	return n, nil
}

// emit writes a run's per-request rows. Times are seconds in the file.
func (r *reader) emit(run *table.InferenceRun, det *details, n int) error {
	for i := 0; i < n; i++ {
		q := table.InferenceRequest{Run: run.Run, Request: int64(i), OK: true}
		if det.errs != nil && det.errs[i] {
			q.OK, q.ErrorCategory = false, table.Some("error")
		}
		if det.inputs != nil {
			q.InputTokens = table.Some(det.inputs[i])
		}
		if det.outputs != nil {
			q.OutputTokens = table.Some(det.outputs[i])
		}
		if det.starts != nil && inference.Finite(det.starts[i]) {
			q.Start = table.Some(int64(math.Round(det.starts[i] * 1e9)))
		}
		if q.OK {
			if det.ttfts != nil && inference.Finite(det.ttfts[i]) {
				q.TTFT = table.Some(det.ttfts[i] * 1e9)
			}
			if det.lats != nil && inference.Finite(det.lats[i]) {
				q.E2E = table.Some(det.lats[i] * 1e9)
				// vLLM's TPOT: (latency - ttft) / (output_len - 1), for
				// more than one output token.
				if q.TTFT.Valid && q.OutputTokens.Valid && q.OutputTokens.V > 1 {
					q.TPOT = table.Some((det.lats[i] - det.ttfts[i]) / float64(q.OutputTokens.V-1) * 1e9)
				}
			}
			if det.gapEnds != nil {
				lo := 0
				if i > 0 {
					lo = det.gapEnds[i-1]
				}
				gaps := make([]any, 0, det.gapEnds[i]-lo)
				for _, g := range det.gaps[lo:det.gapEnds[i]] {
					gaps = append(gaps, g*1e9)
				}
				q.ITLGaps = gaps
			}
		}
		r.nreq++
		if r.keep {
			if err := r.reqs.Row(&q); err != nil {
				return err
			}
		}
	}
	return nil
}
