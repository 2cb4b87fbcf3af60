package registry

import (
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/inference"
	inferenceprojection "github.com/flameox/flameox/internal/projection/inference"
)

// summarizeInference is named in list.go.
var summarizeInference = &Operation{
	Name:       nameSummarizeInference,
	Title:      "Inference benchmark latencies, counts and throughput",
	Family:     inference.Family,
	Projection: inferenceprojection.Spec,
	Guidance: "Use on the exports of an LLM serving benchmark (AIPerf profile_export.jsonl and profile_export_aiperf.json/.csv, " +
		"vLLM `bench serve --save-result` JSON with or without --save-detailed, SGLang bench_serving JSONL with or without " +
		"--output-details, Mooncake traces). latency mode gives TTFT, TPOT, ITL and end-to-end latency in ms per run: count, mean, " +
		"median, std, p50/p90/p95/p99 and max, computed by flameox from the per-request records where the file has them, beside " +
		"the producer's own aggregates and the largest relative difference between the two. runs mode gives completed and failed " +
		"requests (failures by error category and code), duration and throughputs. Give an AIPerf run's records and aggregate " +
		"together to see both side by side. Prompts, generated text, error text, endpoint addresses and prefix hashes are never read into results.",
	Examples: []Example{
		{Title: "latency distributions of every run", Args: evidence.Object{"mode": "latency"}},
		{Title: "only time to first token and inter-token latency", Args: evidence.Object{"metrics": []any{"ttft", "itl"}}},
		{Title: "counts, failures and throughput per run", Args: evidence.Object{"mode": "runs"}},
	},
	Overhead: "reads exports the benchmark already wrote; per-request latencies are held in memory to compute exact percentiles (8 bytes a value)",
	Limitations: []string{
		"AIPerf's ITL is its per-request mean (latency - TTFT) / (output tokens - 1), which vLLM and SGLang call TPOT; their ITL pools every inter-token gap",
		"SGLang's detailed output has no per-request end-to-end latency: its e2e and TPOT come from its aggregates only",
		"omitted by design: prompts, generated texts, error messages, endpoint URLs, API keys, headers, tool definitions, payloads, server info, free-form metadata and prefix-hash values",
	},
}
