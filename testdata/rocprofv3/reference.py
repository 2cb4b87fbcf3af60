#!/usr/bin/env python3
"""Independent reading of a rocprofv3 CSV trace output with Python's csv
module: per (Function|Kernel_Name|Direction|Operation) name, the record
count and the exact sum of End_Timestamp - Start_Timestamp in ns; for
counter_collection, per Counter_Name the count and the sum of values.
Prints JSON. Shares no code with the Go decoder."""
import csv
import json
import sys

NAME_COLS = ["Function", "Kernel_Name", "Direction", "Operation"]


def main(path):
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    out = {"records": len(rows), "slices": {}, "counters": {}}
    for r in rows:
        if "Counter_Name" in r:
            c = out["counters"].setdefault(r["Counter_Name"], {"count": 0, "sum": 0.0})
            c["count"] += 1
            c["sum"] += float(r["Counter_Value"])
            continue
        name = next(r[c] for c in NAME_COLS if c in r)
        s = out["slices"].setdefault(name, {"count": 0, "total_ns": 0})
        s["count"] += 1
        s["total_ns"] += int(r["End_Timestamp"]) - int(r["Start_Timestamp"])
    json.dump(out, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
