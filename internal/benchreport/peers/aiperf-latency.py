"""The peer of summarize_inference on AIPerf records: what a user would write
with the standard library: read profile_export.jsonl line by line, pool the
successful requests' TTFT, ITL and request latency, and print count, mean,
population std and the linear-interpolation p50/p90/p95/p99 AIPerf uses."""

import json
import math
import sys

TAGS = {"time_to_first_token": "ttft", "ttft": "ttft", "inter_token_latency": "itl", "request_latency": "e2e"}
vals = {m: [] for m in ("ttft", "itl", "e2e")}
with open(sys.argv[1], "rb") as f:
    for line in f:
        rec = json.loads(line)
        if rec.get("error"):
            continue
        for tag, m in TAGS.items():
            v = rec["metrics"].get(tag)
            if v is not None:
                vals[m].append(v["value"])


def pct(xs, q):
    v = q / 100 * (len(xs) - 1)
    lo = int(v)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (v - lo) * (xs[hi] - xs[lo])


for m, xs in vals.items():
    if not xs:
        continue
    xs.sort()
    mean = sum(xs) / len(xs)
    std = math.sqrt(sum((x - mean) ** 2 for x in xs) / len(xs))
    print(m, len(xs), mean, std, *(pct(xs, q) for q in (50, 90, 95, 99)))
