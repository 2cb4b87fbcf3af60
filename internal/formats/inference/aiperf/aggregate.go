package aiperf

import (
	"bytes"
	"context"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/inference"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/table"
)

// sniffAggregate says Yes to an AIPerf aggregate document: schema 1.x
// opens with schema_version and aiperf_version; the 2025 layout opens
// with "records", whose metrics carry tag and header.
func sniffAggregate(prefix []byte) formats.Verdict {
	return formats.SniffObject(prefix, false, func(doc []byte) formats.Verdict {
		keys, closed, ok := inference.TopKeys(doc)
		switch {
		case !ok:
			return formats.No
		case keys["aiperf_version"] && keys["schema_version"]:
			return formats.Yes
		case keys["records"] && (keys["input_config"] || !closed) &&
			bytes.Contains(doc, []byte(`"tag"`)) && bytes.Contains(doc, []byte(`"header"`)):
			return formats.Yes
		case closed || len(keys) > 2:
			return formats.No
		}
		return formats.NeedMore
	})
}

// metric is one aggregate metric as read.
type metric struct {
	tag   string
	unit  string
	stats []stat
	unit0 bool // a unit member was read
}

type stat struct {
	name  string
	value float64
}

type aggReader struct {
	in      *formats.Input
	vals    *formats.Values
	ledger  *inference.Ledger
	w       jsonscan.Walker
	run     table.InferenceRun
	stats   []table.InferenceStat
	metrics int64
	layout  string
	done    bool // is_complete
	hasDone bool
	cancel  bool
}

func decodeAggregate(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if err := in.CheckSize(); err != nil {
		return err
	}
	r := &aggReader{in: in, vals: in.Values(), ledger: inference.NewLedger(),
		w: jsonscan.Walker{S: in.JSONScanner(in.R, 64, formats.LimitToken)}}
	r.run = table.InferenceRun{Producer: inference.AIPerf}
	err := r.w.Document("an AIPerf aggregate export", func(key []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return r.top(string(key))
	})
	if err != nil {
		return inference.Fail(err, "AIPerf aggregate export")
	}
	if r.metrics == 0 {
		return evidence.Failf(evidence.CodeDecodeFailure, "AIPerf aggregate export: no metrics")
	}
	r.derive()
	return emit(out, &r.run, r.stats, r.summary())
}

func (r *aggReader) top(k string) error {
	w := &r.w
	switch k {
	case "records":
		r.layout = "2025 (records)"
		return w.Object("records", func(key []byte) error { return r.metric(string(key)) })
	case "schema_version":
		v, _, _, err := w.Str(k, 32)
		r.layout = "schema " + v
		return err
	case "aiperf_version":
		v, _, null, err := w.Str(k, 0)
		if err == nil && !null {
			r.run.ProducerVersion = inference.Strings(r.vals, v)
		}
		return err
	case "input_config":
		return r.inputConfig()
	case "run_info":
		return w.Object(k, func(key []byte) error {
			if string(key) == "cli_command" {
				r.ledger.Omit("run_info.cli_command")
			}
			return w.SkipValue()
		})
	case "telemetry_data", "server_metrics":
		// GPU and server telemetry: endpoint URLs and host details.
		r.ledger.Omit(k)
		return w.SkipValue()
	case "error_summary":
		return r.errorSummary()
	case "was_cancelled", "is_complete":
		b, err := w.Bool(k)
		if k == "is_complete" {
			r.done, r.hasDone = b, true
		} else {
			r.cancel = b
		}
		return err
	case "start_time":
		v, _, null, err := w.Str(k, 64)
		if err == nil && !null {
			r.run.Started = table.Some(r.vals.Bound(v))
		}
		return err
	case "end_time", "benchmark_id":
		return w.SkipValue()
	}
	tok, err := w.Value()
	if err != nil {
		return err
	}
	if tok.Kind != jsonscan.ObjectStart {
		r.ledger.Unknowns()
		return w.Skip(tok)
	}
	return r.metricBody(k, tok)
}

func (r *aggReader) metric(tag string) error {
	tok, err := r.w.Value()
	if err != nil {
		return err
	}
	return r.metricBody(tag, tok)
}

// metricBody reads one metric object {unit, avg, min, …}; an object
// without a unit is not a metric, and is counted as an unknown key.
func (r *aggReader) metricBody(tag string, tok jsonscan.Token) error {
	w := &r.w
	m := metric{tag: tag}
	err := w.Members(tok, tag, func(key []byte) error {
		k := string(key)
		switch k {
		case "unit":
			u, _, _, err := w.Str(tag+".unit", 32)
			m.unit, m.unit0 = u, true
			return err
		case "tag", "header":
			return w.SkipValue()
		}
		name, ok := statName(k)
		if !ok {
			r.ledger.Unknowns()
			return w.SkipValue()
		}
		v, has, err := inference.Number(w, tag+"."+k)
		if err == nil && has {
			m.stats = append(m.stats, stat{name, v})
		}
		return err
	})
	if err != nil {
		return err
	}
	if !m.unit0 {
		r.ledger.Unknowns()
		return nil
	}
	r.metrics++
	// AIPerf writes a run total (request_count) as an avg alone, or, in
	// the 2025 layout, an avg with count 1: one value, not a mean.
	only := len(m.stats) == 1 && m.stats[0].name == "mean" ||
		len(m.stats) == 2 && m.stats[0].name == "mean" && m.stats[1] == stat{"count", 1}
	name := metricName(tag)
	for _, s := range m.stats {
		if only && s.name == "count" {
			continue
		}
		st := s.name
		if only {
			st = "value" // AIPerf writes a run total (request_count) as its avg
		}
		v, u := s.value, "values"
		if st != "count" {
			v, u = inference.Normalize(v, m.unit)
		}
		r.stats = append(r.stats, table.InferenceStat{Metric: name, Native: r.vals.Bound(tag), Stat: st, Value: v, Unit: u})
	}
	return nil
}

// inputConfig keeps the model names, endpoint type, streaming, and the
// profiling phase's concurrency and rate; everything else is skipped,
// and endpoint addresses, keys and headers are counted as omitted.
func (r *aggReader) inputConfig() error {
	w := &r.w
	var models []string
	addModel := func(s string) {
		if len(models) < 8 {
			models = append(models, s)
		}
	}
	err := w.Object("input_config", func(key []byte) error {
		switch string(key) {
		case "endpoint":
			return w.Object("input_config.endpoint", func(k []byte) error {
				switch string(k) {
				case "model_names":
					return w.Array("endpoint.model_names", func(_ int, el jsonscan.Token) error {
						if el.Kind == jsonscan.String {
							addModel(string(el.Bytes))
						}
						return w.Skip(el)
					})
				case "type":
					v, _, null, err := w.Str("endpoint.type", 0)
					if err == nil && !null {
						r.run.EndpointKind = inference.Strings(r.vals, v)
					}
					return err
				case "streaming":
					tok, err := w.Value()
					if err != nil {
						return err
					}
					if tok.Kind == jsonscan.True || tok.Kind == jsonscan.False {
						r.run.Streaming = table.Some(tok.Kind == jsonscan.True)
					}
					return w.Skip(tok)
				}
				r.ledger.Omit("input_config.endpoint." + omittedName(k))
				return w.SkipValue()
			})
		case "models":
			return w.Object("input_config.models", func(k []byte) error {
				if string(k) != "items" {
					return w.SkipValue()
				}
				return w.Array("models.items", func(_ int, el jsonscan.Token) error {
					if el.Kind != jsonscan.ObjectStart {
						return w.Skip(el)
					}
					return w.Members(el, "models.items[]", func(mk []byte) error {
						if string(mk) != "name" {
							return w.SkipValue()
						}
						v, _, null, err := w.Str("models.items[].name", 0)
						if err == nil && !null {
							addModel(v)
						}
						return err
					})
				})
			})
		case "loadgen":
			return w.Object("input_config.loadgen", func(k []byte) error {
				return r.load(string(k))
			})
		case "phases":
			return w.Array("input_config.phases", func(_ int, el jsonscan.Token) error {
				if el.Kind != jsonscan.ObjectStart {
					return w.Skip(el)
				}
				profiling := true
				return w.Members(el, "phases[]", func(k []byte) error {
					if string(k) == "kind" {
						v, _, _, err := w.Str("phases[].kind", 32)
						profiling = v == "profiling"
						return err
					}
					if !profiling {
						return w.SkipValue()
					}
					return r.load(string(k))
				})
			})
		case "cli_command":
			r.ledger.Omit("input_config.cli_command")
			return w.SkipValue()
		}
		return w.SkipValue()
	})
	if len(models) > 0 {
		r.run.Model = table.Some(r.vals.Bound(strings.Join(models, ",")))
	}
	return err
}

// omittedName names an omitted config key by the reader's own spelling
// when it knows it, else "other": a key of the file is not echoed.
func omittedName(k []byte) string {
	switch s := string(k); s {
	case "url", "urls", "api_key", "headers", "extra", "custom_endpoint", "endpoint", "url_strategy", "timeout", "transport":
		return s
	}
	return "other"
}

// load reads the concurrency and rate of a load generator or phase.
func (r *aggReader) load(k string) error {
	w := &r.w
	switch k {
	case "concurrency":
		n, ok, err := w.OptionalInt("concurrency")
		if ok {
			r.run.Concurrency = table.Some(n)
		}
		return err
	case "request_rate", "rate":
		v, ok, err := inference.Number(w, k)
		if ok {
			r.run.RequestRate = table.Some(strconv.FormatFloat(v, 'g', -1, 64))
		}
		return err
	}
	return w.SkipValue()
}

// errorSummary keeps each entry's count with its error type and code;
// the messages are skipped.
func (r *aggReader) errorSummary() error {
	w := &r.w
	return w.Array("error_summary", func(_ int, el jsonscan.Token) error {
		if el.Kind != jsonscan.ObjectStart {
			return w.S.Errorf(el, "error_summary entries must be objects")
		}
		st := table.InferenceStat{Metric: "failed", Native: "error_summary", Stat: "count", Unit: "requests"}
		var has bool
		err := w.Members(el, "error_summary[]", func(k []byte) error {
			switch string(k) {
			case "count":
				n, err := w.Int("error_summary[].count")
				st.Value, has = float64(n), true
				return err
			case "error_details":
				return w.Object("error_details", func(dk []byte) error {
					switch string(dk) {
					case "code":
						n, ok, err := w.OptionalInt("error_details.code")
						st.Code = table.Null[int64]{V: n, Valid: ok}
						return err
					case "type":
						v, _, null, err := w.Str("error_details.type", 0)
						if err == nil && !null {
							st.Category = inference.Strings(r.vals, v)
						}
						return err
					}
					r.ledger.Omit("error_summary.error_details." + omittedError(dk))
					return w.SkipValue()
				})
			}
			r.ledger.Unknowns()
			return w.SkipValue()
		})
		if err != nil {
			return err
		}
		if !has {
			return w.S.Errorf(el, "an error_summary entry needs a count")
		}
		r.stats = append(r.stats, st)
		return nil
	})
}

func omittedError(k []byte) string {
	switch s := string(k); s {
	case "message", "cause", "cause_chain", "details":
		return s
	}
	return "other"
}

// derive fills the run's totals from the run-level metrics.
func (r *aggReader) derive() {
	derive(&r.run, r.stats)
	r.run.UnknownKeys, r.run.OmittedFields = r.ledger.UnknownCount(), r.ledger.OmittedCount()
}

// derive fills a run's totals from its run-level metrics, named by the
// JSON tag or by the CSV header's metric name.
func derive(run *table.InferenceRun, stats []table.InferenceStat) {
	get := func(names ...string) (table.InferenceStat, bool) {
		for _, s := range stats {
			for _, n := range names {
				if s.Metric == n && (s.Stat == "value" || s.Stat == "mean") {
					return s, true
				}
			}
		}
		return table.InferenceStat{}, false
	}
	count := func(names ...string) table.Null[int64] {
		if s, ok := get(names...); ok {
			return table.Some(int64(s.Value))
		}
		return table.Null[int64]{}
	}
	rate := func(names ...string) table.Null[float64] {
		if s, ok := get(names...); ok {
			return table.Some(s.Value)
		}
		return table.Null[float64]{}
	}
	run.Completed = count("request_count")
	run.Failed = count("error_request_count")
	if !run.Failed.Valid && run.Completed.Valid {
		run.Failed = table.Some[int64](0) // AIPerf writes the metric only when a request failed
	}
	run.InputTokens = count("total_isl", "total_input_sequence_length")
	run.OutputTokens = count("total_osl", "total_output_sequence_length")
	if s, ok := get("benchmark_duration"); ok && s.Unit == "ns" {
		run.Duration = table.Some(int64(s.Value))
	}
	run.RequestRateOut = rate("request_throughput")
	run.OutputRate = rate("output_token_throughput")
	run.TotalRate = rate("total_token_throughput")
}

func (r *aggReader) summary() *evidence.Summary {
	s := &evidence.Summary{RowsObserved: int64(len(r.stats)), Complete: true, Metrics: map[string]evidence.Metric{
		"metrics": {Value: r.metrics, Unit: "metrics"},
	}}
	s.Coverage = evidence.Object{"layout": r.layout}
	if r.cancel {
		s.Limit("AIPerf says the benchmark was cancelled (was_cancelled): its aggregates describe the requests that ran")
	}
	if r.hasDone && !r.done {
		s.Complete = false
		s.Limit("AIPerf says the benchmark did not complete (is_complete false)")
	}
	r.ledger.Summarize(s)
	r.vals.Summarize(s)
	return s
}

// emit writes a run and its statistics.
func emit(out formats.Sink, run *table.InferenceRun, stats []table.InferenceStat, s *evidence.Summary) error {
	tw, err := out.Begin(table.InferenceRuns.Header(""))
	if err != nil {
		return err
	}
	if err := tw.Row(run); err != nil {
		return err
	}
	rs := &evidence.Summary{RowsObserved: 1, Complete: s.Complete, Limitations: s.Limitations}
	if err := tw.End(rs); err != nil {
		return err
	}
	sw, err := out.Begin(table.InferenceStats.Header(""))
	if err != nil {
		return err
	}
	for i := range stats {
		if err := sw.Row(&stats[i]); err != nil {
			return err
		}
	}
	return sw.End(s)
}
