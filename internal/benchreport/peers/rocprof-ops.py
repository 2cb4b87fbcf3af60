#!/usr/bin/env python3
"""Peer of `flameox-rank --operation summarize_trace_operations` on a
rocprofv3 CSV trace: what a script over rocprofv3's CSV does, Python's
csv module summing End_Timestamp - Start_Timestamp per kernel or
function name, then the 20 names with the most total time."""
import collections, csv, sys

total = collections.Counter()
count = collections.Counter()
with open(sys.argv[1], newline="") as f:
    r = csv.DictReader(f)
    col = next(c for c in ("Kernel_Name", "Function", "Direction", "Operation") if c in r.fieldnames)
    for row in r:
        total[row[col]] += int(row["End_Timestamp"]) - int(row["Start_Timestamp"])
        count[row[col]] += 1
for name, ns in total.most_common(20):
    print(f"{ns:>16} ns {count[name]:>8} {name}")
