"""Independent count of an Nsight Systems parquetdir with pyarrow: per
(kind, name) the number of device records and the sum of end - start, names
joined through StringIds. Prints one JSON object. Used as the test oracle."""
import json
import os
import sys

import pyarrow.parquet as pq

d = sys.argv[1]
strings = {}
if os.path.exists(os.path.join(d, "StringIds.parquet")):
    t = pq.read_table(os.path.join(d, "StringIds.parquet")).to_pydict()
    strings = dict(zip(t["id"], t["value"]))
kinds = {}
if os.path.exists(os.path.join(d, "ENUM_CUDA_MEMCPY_OPER.parquet")):
    t = pq.read_table(os.path.join(d, "ENUM_CUDA_MEMCPY_OPER.parquet")).to_pydict()
    kinds = dict(zip(t["id"], t["label"]))
out = {}
def add(key, dur):
    c = out.setdefault(key, [0, 0])
    c[0] += 1
    c[1] += dur
for table, kind in [("KERNEL", "kernel"), ("MEMCPY", "memcpy"), ("MEMSET", "memset")]:
    p = os.path.join(d, f"CUPTI_ACTIVITY_KIND_{table}.parquet")
    if not os.path.exists(p):
        continue
    t = pq.read_table(p).to_pylist()
    for r in t:
        if kind == "kernel":
            name = strings[r["demangledName"]]
        elif kind == "memcpy":
            name = "[CUDA memcpy %s]" % kinds[r["copyKind"]]
        else:
            name = "[CUDA memset]"
        add(kind + "\t" + name, r["end"] - r["start"])
print(json.dumps(out))
