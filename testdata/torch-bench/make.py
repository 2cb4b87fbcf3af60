"""Measures a few tensor operations with torch.utils.benchmark on the CPU and
writes them with the flameox SDK (torch.bench.jsonl), and torch's own reading
of each Measurement (torch.reference.json): the task spec, number_per_run,
raw_times, times, mean and median, as torch computes them.

  PYTHONPATH=sdk/python python make.py OUTDIR
"""
import json
import os
import sys

import torch
import torch.utils.benchmark as benchmark

import flameox_bench as fb


def main(out):
    torch.manual_seed(0)
    ms = []
    for n in (64, 1024):
        x, y = torch.rand(n), torch.rand(n)
        for threads in (1, 2):
            t = benchmark.Timer("x + y", globals={"x": x, "y": y}, label="add", sub_label=str(n),
                                description="float32", env="cpu", num_threads=threads)
            ms.append(t.blocked_autorange(min_run_time=0.05))
    a = torch.rand(64, 64)
    t = benchmark.Timer("a @ a", globals={"a": a}, label="matmul", sub_label="64x64", description="float32")
    ms.append(t.adaptive_autorange(threshold=0.5, min_run_time=0.02, max_run_time=0.5))
    # No label: the stmt names the series; no description or env.
    ms.append(benchmark.Timer("torch.relu(x)", globals={"x": torch.rand(256), "torch": torch}).timeit(200))
    with fb.Writer(os.path.join(out, "torch.bench.jsonl"), producer="torch.utils.benchmark",
                   producer_version=torch.__version__) as w:
        ids = w.torch_measurements(ms)
    ref = []
    for i, m in zip(ids, ms):
        s = m.task_spec
        ref.append({"id": i, "stmt": s.stmt, "label": s.label, "sub_label": s.sub_label,
                    "description": s.description, "env": s.env, "num_threads": s.num_threads,
                    "number_per_run": m.number_per_run, "raw_times": m.raw_times, "times": m.times,
                    "mean": m.mean, "median": m.median})
    with open(os.path.join(out, "torch.reference.json"), "w") as f:
        json.dump({"torch": torch.__version__, "measurements": ref}, f, indent=1)
        f.write("\n")


main(sys.argv[1])
