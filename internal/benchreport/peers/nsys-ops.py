"""Peer of summarize_trace_operations on an Nsight Systems parquetdir:
pyarrow reads the runtime and NVTX tables, joins names through StringIds
and sums end - start per name (what a script over an export does)."""
import os
import sys

import pyarrow.compute as pc
import pyarrow.parquet as pq

d = os.path.dirname(sys.argv[1])
s = pq.read_table(os.path.join(d, "StringIds.parquet")).to_pydict()
names = dict(zip(s["id"], s["value"]))
out = {}
rt = pq.read_table(os.path.join(d, "CUPTI_ACTIVITY_KIND_RUNTIME.parquet"), columns=["start", "end", "nameId"])
rt = rt.append_column("dur", pc.subtract(rt["end"], rt["start"]))
for r in rt.group_by("nameId").aggregate([("dur", "sum"), ("dur", "count")]).to_pylist():
    out[names[r["nameId"]]] = (r["dur_count"], r["dur_sum"])
nv = pq.read_table(os.path.join(d, "NVTX_EVENTS.parquet"), columns=["start", "end", "text"])
nv = nv.append_column("dur", pc.subtract(nv["end"], nv["start"]))
for r in nv.group_by("text").aggregate([("dur", "sum"), ("dur", "count")]).to_pylist():
    out[r["text"]] = (r["dur_count"], r["dur_sum"])
for k, v in sorted(out.items(), key=lambda kv: -kv[1][1])[:20]:
    print(k, *v)
