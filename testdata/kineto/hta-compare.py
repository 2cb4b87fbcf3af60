#!/usr/bin/env python3
"""Second opinion on the GPU time of a Kineto trace: Holistic Trace
Analysis's kernel breakdown (pip install HolisticTraceAnalysis==0.5.0, in a
throwaway venv: it pulls pandas and plotly) beside flameox's per-name
totals. Usage: hta-compare.py TRACE FLAMEOX_BIN_DIR

Measured on hta-simple_add-a100.trace.json.gz: HTA's per-kernel sums
(get_gpu_kernel_breakdown with num_kernels large enough to list every
kernel) equal flameox's total_ns for all 16 kernels, the memcpy, the
and the two memsets, exactly (HTA also lists cuda_sync "Stream
Wait Event", which is not device work). HTA's per-type totals are another quantity: it merges
overlapping kernels into busy intervals before summing a type
(_get_gpu_kernel_type_time), so COMPUTATION is 10676 us against 10728 us of
raw kernel time; and with its defaults (num_kernels=10, duration_ratio=0.8)
the per-kernel table lists only the longest kernels, the rest pooled, which
is why its breakdown covers less than the raw kernel time. On traces with
fractional microseconds (hta-mi250-rocm6.2, hta-triton_example) HTA's
parser keeps durations as integer microseconds, so its sums are below the
exact ones (6.0 us against 6.88 us for a kernel of the MI250 trace)."""
import json, os, shutil, subprocess, sys, tempfile
from hta.trace_analysis import TraceAnalysis

trace, bin_dir = sys.argv[1], sys.argv[2]
d = tempfile.mkdtemp()
shutil.copy(trace, d)
_, km = TraceAnalysis(trace_dir=d).get_gpu_kernel_breakdown(visualize=False, num_kernels=1 << 30, include_memory_kernels=True)
hta = {r["name"]: r["sum (us)"] for _, r in km.iterrows()}
ours = {}
for cat in ("kernel", "gpu_memcpy", "gpu_memset"):
    out = subprocess.run([os.path.join(bin_dir, "flameox-rank"), "--format", "jsonl", "--operation", "summarize_trace_operations",
                          "--category", cat, "--top", "100000", trace], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        b = json.loads(line)
        if b.get("kind") == "row":
            v = b["values"]
            if v["stream"] in (None, "-1", "4294967295"):
                continue  # HTA counts only work on a GPU stream; Kineto writes "no stream" as -1 or 2^32-1
            ours[v["name"]] = ours.get(v["name"], 0) + v["total_ns"] / 1000
# HTA also lists Kineto's cuda_sync "Stream Wait Event" among kernels; it
# is not device work, so only the names of kernels, memcpys and memsets
# are compared.
diff = {k: (hta.get(k), v) for k, v in ours.items() if hta.get(k) != v}
print(json.dumps({"names": len(ours), "equal": len(ours) - len(diff), "differ": diff,
                  "hta_only": sorted(set(hta) - set(ours))}, indent=1))
sys.exit(1 if diff else 0)
