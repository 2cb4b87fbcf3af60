"""The native reader's statistics of pyperf files, for the Go tests.

For each file, per benchmark in file order: pyperf's own Benchmark
statistics (what `pyperf stats` prints, in the file's unit) and the same
functions (statistics.mean/median/stdev, pyperf._utils.percentile) on the
values normalized as flameox normalizes them (seconds * 1e9 -> ns), plus
the run, value and warmup counts `pyperf dump` shows. Floats are printed
with repr, so the Go side compares them exactly.

usage: python oracle.py FILE...
"""
import json
import statistics
import sys

import pyperf
from pyperf._utils import percentile

FACTOR = {"second": 1e9, "byte": 1, "integer": 1}

out = []
for path in sys.argv[1:]:
    suite = pyperf.BenchmarkSuite.load(path)
    benches = []
    for b in suite.get_benchmarks():
        unit = b.get_unit()
        f = FACTOR[unit]
        vals = [v * f for v in b.get_values()]
        runs = b.get_runs()
        row = {
            "name": b.get_name(),
            "unit": unit,
            "runs": len(runs),
            "calibration_runs": sum(1 for r in runs if not r.values),
            "warmups": sum(len(r.warmups) for r in runs),
            "n": len(vals),
            "warmup_values": [w[1] * f for r in runs for w in r.warmups],
            "metadata": {k: (json.dumps(v) if not isinstance(v, str) else v) for k, v in b.get_metadata().items()},
        }
        if vals:
            row.update({
                "mean": statistics.mean(vals),
                "median": statistics.median(vals),
                "min": min(vals),
                "max": max(vals),
                "p5": percentile(vals, 0.05),
                "p95": percentile(vals, 0.95),
                "stdev": statistics.stdev(vals) if len(vals) > 1 else None,
                # pyperf's own, in the file's unit
                "pyperf_mean": b.mean(),
                "pyperf_median": b.median(),
                "pyperf_stdev": b.stdev() if len(vals) > 1 else None,
                "pyperf_p5": b.percentile(5),
                "pyperf_p95": b.percentile(95),
            })
        benches.append(row)
    out.append({"path": path, "benchmarks": benches})
json.dump(out, sys.stdout)
