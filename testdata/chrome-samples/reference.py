#!/usr/bin/env python3
"""Independent reading of the V8 samples in a Chrome trace (json module):
Profile/ProfileChunk events grouped by (pid, id), their nodes joined
across chunks, each sample walked to its root (a sample whose
chain reaches a node no chunk defined is counted as unplaced); per profile and frame
(function, url, line, column) the self samples (leaf) and inclusive
samples (once per stack), the (root) node left out. Prints JSON.

    python3 reference.py TRACE.json
"""
import json
import sys


def main(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    profs = {}
    order = []
    for e in events:
        if e.get("ph") != "P" or e.get("name") not in ("Profile", "ProfileChunk"):
            continue
        k = (str(e.get("pid")), str(e.get("id")))
        if k not in profs:
            profs[k] = {"tid": str(e.get("tid")), "nodes": {}, "samples": []}
            order.append(k)
        p = profs[k]
        if e["name"] == "Profile":
            p["tid"] = str(e.get("tid"))
            continue
        cp = e.get("args", {}).get("data", {}).get("cpuProfile", {})
        for n in cp.get("nodes", []):
            cf = n["callFrame"]
            p["nodes"][n["id"]] = ((cf.get("functionName", ""), cf.get("url", ""), cf.get("lineNumber", -1), cf.get("columnNumber", -1)), n.get("parent"))
        p["samples"].extend(cp.get("samples", []))
    out = {"total": 0, "unplaced": 0, "frames": {}}
    for k in order:
        p = profs[k]
        for s in p["samples"]:
            out["total"] += 1
            path = []
            cur = s
            while cur is not None and cur in p["nodes"]:
                frame, parent = p["nodes"][cur]
                path.append(frame)
                cur = parent
            if cur is not None:  # a node no chunk defined: in the total only
                out["unplaced"] += 1
                continue
            if path and path[-1][0] == "(root)" and path[-1][1] == "":
                path.pop()
            seen = set()
            for i, fr in enumerate(path):
                key = "%s\t%s\t%s\t%s\t%d\t%d" % (k[0], p["tid"], fr[0], fr[1], fr[2], fr[3])
                r = out["frames"].setdefault(key, [0, 0])
                if i == 0:
                    r[0] += 1
                if fr not in seen:
                    seen.add(fr)
                    r[1] += 1
    json.dump(out, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
