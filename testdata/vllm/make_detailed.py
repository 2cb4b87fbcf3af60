"""Builds detailed.json, a `vllm bench serve --save-result --save-detailed
--percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99.9` result,
strictly from the result schema of vLLM 0.33.0 (vllm/benchmarks/serve.py: the
result_json keys, BenchmarkMetrics, the detailed per-request lists), because
vLLM itself does not install here. The per-request outputs are synthetic and
seeded; the aggregates are computed from them with numpy as serve.py does
(successful requests only; TPOT = (latency - ttft) / (output_len - 1) for
output_len > 1; ITL pools every gap; np.mean, np.median, np.std and
np.percentile, times 1000 for ms). One request fails, with an error text and
no timings, as a failed RequestFuncOutput is written.

Usage: python make_detailed.py > detailed.json   (needs numpy)
"""

import json

import numpy as np

rng = np.random.default_rng(7)
n = 24
outs = []
t0 = 1000.0
for i in range(n):
    ok = i != 5
    plen = int(rng.integers(100, 200))
    olen = int(rng.integers(1, 40)) if ok else 0
    ttft = float(rng.uniform(0.02, 0.2)) if ok else 0.0
    itl = [float(x) for x in rng.uniform(0.005, 0.03, max(olen - 1, 0))] if ok else []
    latency = ttft + sum(itl) + (float(rng.uniform(0, 0.002)) if ok else 0.0) if ok else 0.0
    outs.append(dict(ok=ok, prompt_len=plen, output_len=olen, ttft=ttft, itl=itl, latency=latency,
                     start=t0 + i * 0.05, text=(" word" * olen) if ok else "",
                     error="" if ok else "Traceback: ClientConnectorError: Cannot connect to host 10.0.0.1:8000"))
good = [o for o in outs if o["ok"]]
dur = max(o["start"] + o["latency"] for o in good) - min(o["start"] for o in outs)
ttfts = [o["ttft"] for o in good]
e2els = [o["latency"] for o in good]
tpots = [(o["latency"] - o["ttft"]) / (o["output_len"] - 1) for o in good if o["output_len"] > 1]
itls = [g for o in good for g in o["itl"]]
total_in = sum(o["prompt_len"] for o in good)
total_out = sum(o["output_len"] for o in outs)
res = {
    "date": "20261201-154500", "endpoint_type": "openai", "backend": "openai", "label": None,
    "model_id": "mock/model-7b", "tokenizer_id": "mock/model-7b", "num_prompts": n,
    "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 8,
    "duration": dur, "completed": len(good), "failed": n - len(good),
    "total_input_tokens": total_in, "total_output_tokens": total_out,
    "request_throughput": len(good) / dur, "request_goodput": None,
    "output_throughput": total_out / dur, "total_token_throughput": (total_in + total_out) / dur,
    "input_lens": [o["prompt_len"] for o in outs], "output_lens": [o["output_len"] for o in outs],
    "ttfts": [o["ttft"] for o in outs], "itls": [o["itl"] for o in outs],
    "latencies": [o["latency"] for o in outs], "start_times": [o["start"] for o in outs],
    "generated_texts": [o["text"] for o in outs], "errors": [o["error"] for o in outs],
    "max_output_tokens_per_s": 0.0, "max_concurrent_requests": 8, "rtfx": 0.0,
}
for name, vals in (("ttft", ttfts), ("tpot", tpots), ("itl", itls), ("e2el", e2els)):
    res[f"mean_{name}_ms"] = float(np.mean(vals or 0) * 1000)
    res[f"median_{name}_ms"] = float(np.median(vals or 0) * 1000)
    res[f"std_{name}_ms"] = float(np.std(vals or 0) * 1000)
    for p in (50.0, 90.0, 99.9):
        word = str(int(p)) if int(p) == p else str(p)
        res[f"p{word}_{name}_ms"] = float(np.percentile(vals or 0, p) * 1000)
print(json.dumps(res))
