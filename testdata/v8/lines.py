"""Reference for the decoder's cpu.lines rows, computed independently of
flameox from the profile JSON alone: per (function, url, line) the ticks
of the nodes' positionTicks, and per (function, url) the samples of the
samples array its nodes' ticks do not cover, as line -1.

Usage: python3 lines.py PROFILE... > lines.ref.json
"""
import collections
import json
import os
import sys

out = {}
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        p = json.load(f)
    hits = collections.Counter(p["samples"])
    weights = collections.Counter()
    for n in p["nodes"]:
        cf = n["callFrame"]
        fn, url = cf.get("functionName", ""), cf.get("url", "")
        known = 0
        for t in n.get("positionTicks", []):
            if t["line"] >= 1:
                weights[(fn, url, t["line"])] += t["ticks"]
                known += t["ticks"]
        rest = hits.get(n["id"], 0) - known
        assert rest >= 0, (path, n["id"])
        if rest:
            weights[(fn, url, -1)] += rest
    rows = [{"function": k[0], "url": k[1], "line": k[2], "weight": w}
            for k, w in sorted(weights.items()) if w]
    out[os.path.basename(path)] = {"samples": len(p["samples"]), "lines": rows}
json.dump(out, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
