// Package aiperf decodes the exports of AIPerf (the `aiperf profile`
// benchmark, PyPI aiperf): the per-request records (profile_export.jsonl),
// the aggregate JSON (profile_export_aiperf.json) and its CSV twin
// (profile_export_aiperf.csv), in both layouts AIPerf has written: the
// 2025 one (aggregate metrics under "records", record metadata with
// timestamp_ns and credit_phase) and schema_version 1.x (metrics at the
// top level, metadata with request_start_ns, request_end_ns and
// benchmark_phase).
//
// Kept: request and session ids, turn, phase, start, success, error type
// (bounded) and code, the latency and length metrics, the aggregates,
// model names, endpoint type, streaming, concurrency and rate. Omitted
// (skipped by the tokenizer, counted): error messages, causes and
// details, trace data (HTTP headers), endpoint URLs, API keys, headers,
// extra request fields, the command line, telemetry endpoints.
//
// It imports evidence, formats, formats/inference, jsonscan, lines and table.
package aiperf

import (
	"strings"

	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/inference"
	"github.com/flameox/flameox/internal/table"
)

// Format names.
const (
	RecordsName   = "aiperf-records"
	AggregateName = "aiperf-json"
	CSVName       = "aiperf-csv"
)

// Version is the decoders' version.
const Version = "1"

const producer = "AIPerf (aiperf profile)"

// RecordsSpec is the per-request JSONL export.
var RecordsSpec = &formats.Spec{
	Name:     RecordsName,
	Title:    "AIPerf per-request records (profile_export.jsonl)",
	Family:   inference.Family,
	Sniff:    sniffRecords,
	Tables:   []*table.Schema{table.InferenceRuns.Schema, table.InferenceRequests.Schema},
	Limits:   []formats.Limit{inference.LineLimit(64<<20, "one request record"), inference.TokenLimit},
	Options:  inference.Options,
	Producer: producer,
	Version:  Version,
	Decoder:  formats.DecoderFunc(decodeRecords),
}

// AggregateSpec is the aggregate JSON export.
var AggregateSpec = &formats.Spec{
	Name:     AggregateName,
	Title:    "AIPerf aggregate metrics (profile_export_aiperf.json)",
	Family:   inference.Family,
	Sniff:    sniffAggregate,
	Tables:   []*table.Schema{table.InferenceRuns.Schema, table.InferenceStats.Schema},
	Limits:   []formats.Limit{{Name: formats.LimitBytes, Default: 1 << 30, Unit: "bytes", Doc: "bytes of the aggregate document"}, inference.TokenLimit},
	Options:  inference.Options,
	Producer: producer,
	Version:  Version,
	Decoder:  formats.DecoderFunc(decodeAggregate),
}

// CSVSpec is the aggregate CSV export.
var CSVSpec = &formats.Spec{
	Name:     CSVName,
	Title:    "AIPerf aggregate metrics CSV (profile_export_aiperf.csv)",
	Family:   inference.Family,
	Sniff:    sniffCSV,
	Tables:   []*table.Schema{table.InferenceRuns.Schema, table.InferenceStats.Schema},
	Limits:   []formats.Limit{inference.LineLimit(1<<20, "one CSV row")},
	Options:  inference.Options,
	Producer: producer,
	Version:  Version,
	Decoder:  formats.DecoderFunc(decodeCSV),
}

// metricName maps an AIPerf metric tag to the metric flameox names it:
// the four latency metrics by their common names, any other by its tag.
// AIPerf's inter_token_latency is its per-request mean, (request_latency
// - ttft) / (output_sequence_length - 1), which vLLM and SGLang call
// TPOT; it keeps AIPerf's name, itl, and the docs say so.
func metricName(tag string) string {
	switch tag {
	case "ttft", "time_to_first_token":
		return "ttft"
	case "request_latency":
		return "e2e"
	case "inter_token_latency":
		return "itl"
	}
	return tag
}

// headerMetric maps a CSV row's header (without its unit) to the metric.
func headerMetric(h string) string {
	switch h {
	case "Time to First Token":
		return "ttft"
	case "Request Latency":
		return "e2e"
	case "Inter Token Latency":
		return "itl"
	}
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(h) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			under = false
		case !under && b.Len() > 0:
			b.WriteByte('_')
			under = true
		}
	}
	return strings.TrimSuffix(b.String(), "_")
}

// statName maps an aggregate key to the stat column's spelling.
func statName(k string) (string, bool) {
	switch k {
	case "avg":
		return "mean", true
	case "min", "max", "std", "count", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p999":
		return k, true
	}
	return "", false
}
