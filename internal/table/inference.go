package table

// Inference exports (AIPerf, vLLM, SGLang, Mooncake) share three decoded
// tables: the runs a file records, its per-request records, and the
// producer's own aggregate statistics. Times are nanoseconds (converted
// from the producer's ns, us, ms or s); token counts are tokens. What the
// readers omit (prompts, generated text, error text, endpoint addresses,
// tool definitions, payloads, prefix-hash values, free-form metadata)
// has no column here, so no row can carry it.

// InferenceRun is a row of inference.runs: one benchmark run (an AIPerf
// export, a vLLM result object, an SGLang result line, a Mooncake trace).
type InferenceRun struct {
	Run             int64         `col:"run" doc:"0-based index of the run in its artifact (an SGLang or appended vLLM file holds several)"`
	Producer        string        `col:"producer" doc:"aiperf, vllm, sglang or mooncake"`
	ProducerVersion Null[string]  `col:"producer_version" doc:"version the file states; null when it states none"`
	Model           Null[string]  `col:"model" doc:"model id the benchmark addressed; null when not recorded"`
	Backend         Null[string]  `col:"backend" doc:"benchmark backend or client (vllm: backend; sglang: backend); null when not recorded"`
	EndpointKind    Null[string]  `col:"endpoint_kind" doc:"kind of endpoint (aiperf endpoint.type such as chat; vllm endpoint_type); never its address"`
	Streaming       Null[bool]    `col:"streaming" doc:"whether responses were streamed; null when not recorded"`
	RequestRate     Null[string]  `col:"request_rate" doc:"configured request rate in requests/s as written (inf, trace); null when not recorded"`
	Concurrency     Null[int64]   `col:"concurrency" doc:"configured maximum concurrency; null when unbounded or not recorded"`
	Started         Null[string]  `col:"started" doc:"start time as the producer wrote it; null when not recorded"`
	Duration        Null[int64]   `col:"duration,unit=ns" doc:"benchmark duration the producer measured; null when not recorded"`
	Completed       Null[int64]   `col:"completed,unit=requests" doc:"successful requests the producer counted"`
	Failed          Null[int64]   `col:"failed,unit=requests" doc:"failed requests the producer counted; null when not recorded"`
	InputTokens     Null[int64]   `col:"input_tokens,unit=tokens" doc:"total input tokens of successful requests"`
	OutputTokens    Null[int64]   `col:"output_tokens,unit=tokens" doc:"total output tokens of successful requests"`
	RequestRateOut  Null[float64] `col:"request_throughput,unit=requests/s" doc:"completed requests per second, as the producer computed it"`
	OutputRate      Null[float64] `col:"output_token_throughput,unit=tokens/s" doc:"output tokens per second, as the producer computed it"`
	TotalRate       Null[float64] `col:"total_token_throughput,unit=tokens/s" doc:"input and output tokens per second, as the producer computed it"`
	Requests        Null[int64]   `col:"requests,unit=requests" doc:"per-request records the file holds for this run; null when it holds none"`
	UnknownKeys     int64         `col:"unknown_keys" doc:"top-level keys the reader does not know, counted and never emitted (vLLM --metadata keys among them)"`
	OmittedFields   int64         `col:"omitted_fields" doc:"fields present and deliberately omitted (prompts, texts, errors, endpoints, payloads, server info, hash values)"`
}

// InferenceRuns is the inference.runs schema.
var InferenceRuns = Define[InferenceRun]("inference.runs", "one row per benchmark run of an inference export", FromArtifact)

// InferenceRequest is a row of inference.requests: one request of a run,
// in file order, with the timings the producer recorded for it.
type InferenceRequest struct {
	Run           int64         `col:"run" doc:"0-based run index, as in inference.runs"`
	Request       int64         `col:"request" doc:"0-based index of the request in its run, in file order"`
	RequestID     Null[string]  `col:"request_key" doc:"the producer's id of the request (aiperf x_request_id), bounded like any value; null when none"`
	Session       Null[string]  `col:"session" doc:"conversation or session id (aiperf conversation_id); null when none"`
	Turn          Null[int64]   `col:"turn" doc:"0-based turn in the session (aiperf turn_index); null when none"`
	Phase         Null[string]  `col:"phase" doc:"benchmark phase (aiperf credit_phase: warmup or profiling); null when none"`
	Start         Null[int64]   `col:"start,unit=ns" doc:"request start on the producer's clock (aiperf: Unix epoch; vllm: a monotonic clock; mooncake: trace timestamp)"`
	OK            bool          `col:"ok" doc:"the producer counts the request as successful"`
	ErrorCategory Null[string]  `col:"error_category" doc:"bounded error class (aiperf error.type; vllm and sglang: error, their text being omitted); null for a success"`
	ErrorCode     Null[int64]   `col:"error_code" doc:"HTTP-style error code (aiperf error.code); null when none"`
	TTFT          Null[float64] `col:"ttft,unit=ns" doc:"time to first token; null when not recorded"`
	E2E           Null[float64] `col:"e2e,unit=ns" doc:"end-to-end request latency; null when not recorded"`
	TPOT          Null[float64] `col:"tpot,unit=ns" doc:"time per output token after the first: (e2e - ttft) / (output_tokens - 1), computed by the vllm reader as vLLM does; null otherwise"`
	ITL           Null[float64] `col:"itl,unit=ns" doc:"the request's inter-token latency as AIPerf records it (its mean over the request); null for other producers"`
	ITLGaps       any           `col:"itl_gaps,unit=ns" doc:"the request's inter-token gaps (vllm, sglang itls), pooled by their ITL; null when not recorded"`
	InputTokens   Null[int64]   `col:"input_tokens,unit=tokens" doc:"input (prompt) tokens; null when not recorded"`
	OutputTokens  Null[int64]   `col:"output_tokens,unit=tokens" doc:"output tokens; null when not recorded"`
	Blocks        Null[int64]   `col:"blocks" doc:"prefix-hash blocks of the request (mooncake hash_ids count); the hash values are never emitted"`
	ReusedBlocks  Null[int64]   `col:"reused_blocks" doc:"of blocks, those whose hash an earlier request in the file already had (mooncake)"`
}

// InferenceRequests is the inference.requests schema.
var InferenceRequests = Define[InferenceRequest]("inference.requests", "one row per request of an inference export, in file order", FromArtifact)

// InferenceStat is a row of inference.stats: one aggregate statistic the
// producer itself computed and wrote (its value, unit normalized).
type InferenceStat struct {
	Run    int64   `col:"run" doc:"0-based run index, as in inference.runs"`
	Metric string  `col:"metric" doc:"ttft, tpot, itl, e2e, or the producer's own tag for other metrics (aiperf output_sequence_length, vllm queue)"`
	Native string  `col:"native" doc:"the producer's key for the statistic (aiperf tag, vllm or sglang result key)"`
	Stat   string  `col:"stat" doc:"mean, median, std, min, max, count or pNN (p99.9 kept as written)"`
	Value  float64 `col:"value" doc:"the producer's value, in unit"`
	Unit   string  `col:"unit" doc:"ns for times, else the producer's unit (tokens, requests, tokens/s)"`
	// Failure counts (metric "failed") say which failures they count.
	Category Null[string] `col:"error_category" doc:"for metric failed: the error class counted (aiperf error type); null otherwise"`
	Code     Null[int64]  `col:"error_code" doc:"for metric failed: the HTTP-style code counted; null otherwise"`
}

// InferenceStats is the inference.stats schema.
var InferenceStats = Define[InferenceStat]("inference.stats", "one row per aggregate statistic an inference producer wrote", FromArtifact)

// InferenceSummary is a row of inference.summaries, the result of
// summarize_inference: one latency metric of one run, computed by
// flameox from the per-request rows when the file has them, beside the
// producer's own statistics.
type InferenceSummary struct {
	ArtifactID   string        `col:"artifact_id,identity" doc:"artifact the run was read from"`
	Run          int64         `col:"run" doc:"run index in its artifact"`
	Metric       string        `col:"metric" doc:"ttft, tpot, itl, e2e (and, for a trace, input_tokens, output_tokens, interarrival)"`
	Source       string        `col:"source" doc:"flameox (computed from the per-request rows) or producer (its aggregate as written)"`
	Unit         string        `col:"unit" doc:"ms for times, tokens for lengths"`
	Count        Null[int64]   `col:"count" doc:"values the statistics pool"`
	Mean         Null[float64] `col:"mean" doc:"mean, in unit"`
	Median       Null[float64] `col:"median" doc:"median, in unit"`
	Std          Null[float64] `col:"std" doc:"population standard deviation (numpy's default, which all three producers use), in unit"`
	P50          Null[float64] `col:"p50" doc:"50th percentile, linear interpolation, in unit"`
	P90          Null[float64] `col:"p90" doc:"90th percentile, in unit"`
	P95          Null[float64] `col:"p95" doc:"95th percentile, in unit"`
	P99          Null[float64] `col:"p99" doc:"99th percentile, in unit"`
	Max          Null[float64] `col:"max" doc:"greatest value, in unit"`
	MaxDiff      Null[float64] `col:"max_rel_diff,unit=ratio" doc:"on flameox rows beside a producer row: the largest relative difference over the statistics both have"`
	Agrees       Null[bool]    `col:"agrees" doc:"on flameox rows beside a producer row: every shared statistic within 1e-9 relative (the rounding of unit conversion), else false and shown"`
	Producer     string        `col:"producer" doc:"aiperf, vllm, sglang or mooncake"`
	Model        Null[string]  `col:"model" doc:"model id; null when not recorded"`
	Backend      Null[string]  `col:"backend" doc:"backend; null when not recorded"`
	EndpointKind Null[string]  `col:"endpoint_kind" doc:"endpoint kind; null when not recorded"`
}

// InferenceSummaries is the inference.summaries schema.
var InferenceSummaries = Define[InferenceSummary]("inference.summaries", "latency distributions per inference run, computed and as the producer wrote them")

// InferenceRunSummary is a row of inference.run_summaries: the counts,
// duration and throughputs of one run.
type InferenceRunSummary struct {
	ArtifactID   string        `col:"artifact_id,identity" doc:"artifact the run was read from"`
	Run          int64         `col:"run" doc:"run index in its artifact"`
	Producer     string        `col:"producer" doc:"aiperf, vllm, sglang or mooncake"`
	Model        Null[string]  `col:"model" doc:"model id; null when not recorded"`
	Completed    Null[int64]   `col:"completed,unit=requests" doc:"successful requests (the producer's count)"`
	Failed       Null[int64]   `col:"failed,unit=requests" doc:"failed requests (the producer's count, else counted from the records)"`
	Failures     any           `col:"failures" doc:"failed requests by error category and code, counted from the records; null without them"`
	Duration     Null[float64] `col:"duration,unit=s" doc:"benchmark duration"`
	RequestRate  Null[float64] `col:"request_throughput,unit=requests/s" doc:"completed requests per second"`
	OutputRate   Null[float64] `col:"output_token_throughput,unit=tokens/s" doc:"output tokens per second"`
	TotalRate    Null[float64] `col:"total_token_throughput,unit=tokens/s" doc:"input and output tokens per second"`
	Requests     Null[int64]   `col:"requests,unit=requests" doc:"per-request records read"`
	ReuseRatio   Null[float64] `col:"prefix_reuse_ratio,unit=ratio" doc:"mooncake: reused blocks / blocks over the trace; null otherwise"`
	Backend      Null[string]  `col:"backend" doc:"backend; null when not recorded"`
	EndpointKind Null[string]  `col:"endpoint_kind" doc:"endpoint kind; null when not recorded"`
}

// InferenceRunSummaries is the inference.run_summaries schema.
var InferenceRunSummaries = Define[InferenceRunSummary]("inference.run_summaries", "counts, duration and throughput per inference run")
