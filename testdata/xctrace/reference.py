#!/usr/bin/env python3
"""Independent reading of an xctrace export (xml.etree iterparse), for the
decoder's equality test: resolves id/ref itself, and sums per CPU table
and thread the weight of each frame (self: the leaf, inclusive: once per
stack) and the total, and the same per source line (the frame with its
<source> path and line; line -1 where it has none). Prints JSON.

    python3 reference.py FILE.xml
"""
import json
import sys
import xml.etree.ElementTree as ET

CPU = {"time-profile", "time-sample", "cpu-profile"}
BT = {"backtrace", "tagged-backtrace", "kperf-bt"}
WEIGHT = {"weight", "cycle-weight"}


def main(path):
    ids = {}
    out = {"tables": []}
    cur = None
    depth = 0
    stack = []
    for ev, el in ET.iterparse(path, events=("start", "end")):
        if ev == "start":
            stack.append(el)
            continue
        stack.pop()
        if "id" in el.attrib:
            ids[el.attrib["id"]] = el
        if el.tag == "schema" and len(stack) == 2:
            cols = [c.findtext("engineering-type") for c in el.findall("col")]
            cur = {"schema": el.attrib.get("name"), "cols": cols, "rows": 0, "total": 0, "frames": {}, "lines": {}, "no_stack": 0}
            out["tables"].append(cur)
        elif el.tag == "row" and len(stack) == 2:
            cur["rows"] += 1
            if cur["schema"] in CPU:
                sample(cur, list(el), ids)
            el.clear()
    for t in out["tables"]:
        del t["cols"]
    json.dump(out, sys.stdout, sort_keys=True, indent=1)


def res(e, ids):
    while "ref" in e.attrib:
        e = ids[e.attrib["ref"]]
    return e


def sample(t, cells, ids):
    cols = t["cols"]
    w = 1
    thread = process = None
    stack = None
    for et, c in zip(cols, cells):
        c = res(c, ids)
        if c.tag == "sentinel":
            continue
        if et in WEIGHT:
            w = int(c.text)
        elif et == "thread":
            thread = c.attrib.get("fmt")
            p = c.find("process")
            if p is not None and process is None:
                process = res(p, ids).attrib.get("fmt")
        elif et == "process":
            process = c.attrib.get("fmt")
        elif et in BT:
            stack = []
            lines = []
            for f in c.iter("frame"):
                f = res(f, ids)
                b = f.find("binary")
                mod = ""
                if b is not None:
                    b = res(b, ids)
                    mod = b.attrib.get("path") or b.attrib.get("name") or ""
                name = f.attrib.get("name") or f.attrib.get("addr")
                stack.append(name + "\t" + mod)
                src = f.find("source")
                path, line = "", -1
                if src is not None:
                    line = int(src.attrib["line"]) or -1
                    pe = src.find("path")
                    if pe is not None:
                        path = res(pe, ids).text or ""
                lines.append(name + "\t" + mod + "\t" + path + "\t" + str(line))
    t["total"] += w
    if not stack:
        t["no_stack"] += 1
        return
    key = (process or "") + "\t" + (thread or "")
    for fr, st in ((t["frames"], stack), (t["lines"], lines)):
        seen = set()
        for i, f in enumerate(st):
            k = key + "\t" + f
            r = fr.setdefault(k, [0, 0])
            if i == 0:
                r[0] += w
            if f not in seen:
                seen.add(f)
                r[1] += w


if __name__ == "__main__":
    main(sys.argv[1])
