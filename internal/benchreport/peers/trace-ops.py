#!/usr/bin/env python3
"""Peer of `flameox-rank --operation summarize_trace_operations`: load a
Chrome/Kineto trace whole with the json module (as scripts over PyTorch
traces and HTA's loader do) and print the 20 names with the most total X
duration."""
import collections, gzip, json, sys

path = sys.argv[1]
opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
with opener(path, "rt") as f:
    doc = json.load(f)
events = doc["traceEvents"] if isinstance(doc, dict) else doc
total = collections.Counter()
count = collections.Counter()
for e in events:
    if e.get("ph") == "X":
        total[e.get("name")] += e.get("dur", 0)
        count[e.get("name")] += 1
for name, dur in total.most_common(20):
    print(f"{dur:>16} us {count[name]:>8} {name}")
