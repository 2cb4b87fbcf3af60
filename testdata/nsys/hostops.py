"""Independent count of an Nsight Systems parquetdir's host population with
pyarrow: per (category, name) the number of CUDA runtime/driver calls,
synchronization waits and NVTX ranges/marks and the sum of end - start, names
joined through StringIds here; and for NVTX push/pop ranges, the nesting
depth of each (ranges of the same thread and domain that enclose it).
Prints one JSON object. Used as the test oracle."""
import json
import os
import sys

import pyarrow.parquet as pq

d = sys.argv[1]


def table(name):
    p = os.path.join(d, name + ".parquet")
    return pq.read_table(p).to_pylist() if os.path.exists(p) else []


strings = {r["id"]: r["value"] for r in table("StringIds")}
sync = {r["id"]: r["label"] for r in table("ENUM_CUPTI_SYNC_TYPE")}
types = {r["name"]: r["id"] for r in table("ENUM_NSYS_EVENT_TYPE")}
groups = {}


def add(cat, name, dur):
    c = groups.setdefault(cat + "\t" + name, [0, 0])
    c[0] += 1
    c[1] += dur


for r in table("CUPTI_ACTIVITY_KIND_RUNTIME"):
    add("cuda_driver" if r["eventClass"] == 1 else "cuda_runtime", strings[r["nameId"]], r["end"] - r["start"])
for r in table("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"):
    add("cuda_sync", "[CUDA %s]" % sync[r["syncType"]], r["end"] - r["start"])
ranges = []
for i, r in enumerate(table("NVTX_EVENTS")):
    t = r["eventType"]
    text = r["text"] if r["text"] is not None else strings.get(r["textId"])
    if t == types["NvtxMark"]:
        add("nvtx", text, 0)
    elif t in (types["NvtxPushPopRange"], types["NvtxStartEndRange"]) and r["end"] is not None:
        add("nvtx", text, r["end"] - r["start"])
        if t == types["NvtxPushPopRange"]:
            ranges.append((i, r["globalTid"], r["domainId"], r["start"], r["end"]))
depth = {}
for i, g, dom, s, e in ranges:
    depth["NVTX_EVENTS:%d" % i] = sum(
        1 for j, g2, dom2, s2, e2 in ranges if j != i and g2 == g and dom2 == dom and s2 <= s and e <= e2 and (s2, -e2) < (s, -e))
print(json.dumps({"groups": groups, "nvtx_depth": depth}))
