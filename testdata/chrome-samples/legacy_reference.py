#!/usr/bin/env python3
"""Independent reading (json module) of the Trace Event Format's own CPU
samples in a trace: the top-level samples array and P events (other than
V8's Profile/ProfileChunk, and with a ts) with sf or stack, resolved
through the top-level stackFrames dictionary.

A sample's series is (pid, tid) for a P event, ("", tid) for a top-level
sample (no pid); "" stands for an absent member. Its weight is its weight
member (absent or a P event: 1); a weight that is not a non-negative
integral number leaves the sample unplaced with weight 0. Its stack is the
parent chain of its sf (leaf to root; a missing id or a chain that visits
an id twice leaves it unplaced), or its stack array (root first, all
strings, not empty); both or neither: unplaced, except a P event with
neither, whose one frame is its (name, cat). A frame is (name, category);
stack strings have no category. Per series and frame: self weight (the
leaf) and inclusive weight (once per stack). Events of other phases with
sf, stack, esf or estack are counted as event stacks. Prints JSON.

    python3 legacy_reference.py TRACE.json
"""
import json
import sys


def weight_of(s):
    if "weight" not in s:
        return 1, True
    w = s["weight"]
    if isinstance(w, bool) or not isinstance(w, (int, float)):
        return 0, False
    if w < 0 or int(w) != w:
        return 0, False
    return int(w), True


def text(v):
    if isinstance(v, str):
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return None


def main(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    frames = doc.get("stackFrames", {}) if isinstance(doc, dict) else {}
    if not isinstance(frames, dict):
        frames = {}
    tops = doc.get("samples", []) if isinstance(doc, dict) else []

    out = {"read": 0, "unplaced": 0, "unplaced_weight": 0, "total_weight": 0, "event_stacks": 0, "frames": {}}

    def chain(sf):
        """Frames root first, or None."""
        seen = set()
        path = []
        cur = sf
        while True:
            if cur in seen or cur not in frames or not isinstance(frames[cur], dict):
                return None
            seen.add(cur)
            e = frames[cur]
            name = e.get("name") if isinstance(e.get("name"), str) else ""
            cat = e.get("category") if isinstance(e.get("category"), str) else ""
            path.append((name, cat))
            if "parent" not in e or text(e["parent"]) is None:
                break
            cur = text(e["parent"])
        path.reverse()
        return path

    def place(series, stack, w):
        out["total_weight"] += w
        if stack is None:
            out["unplaced"] += 1
            out["unplaced_weight"] += w
            return
        seen = set()
        for i, fr in enumerate(reversed(stack)):
            key = "%s\t%s\t%s\t%s" % (series[0], series[1], fr[0], fr[1])
            r = out["frames"].setdefault(key, [0, 0])
            if i == 0:
                r[0] += w
            if fr not in seen:
                seen.add(fr)
                r[1] += w

    def stack_of(s, named):
        has_sf = "sf" in s and text(s["sf"]) is not None
        has_stack = "stack" in s
        if has_sf and has_stack:
            return None
        if has_sf:
            return chain(text(s["sf"]))
        if has_stack:
            st = s["stack"]
            if not isinstance(st, list) or not st or not all(isinstance(x, str) for x in st):
                return None
            return [(x, "") for x in st]
        return named

    for e in events:
        if not isinstance(e, dict):
            continue
        if e.get("ph") != "P":
            if any(k in e for k in ("sf", "stack", "esf", "estack")):
                out["event_stacks"] += 1
            continue
        if e.get("name") in ("Profile", "ProfileChunk") or "ts" not in e:
            continue
        series = (text(e.get("pid")) or "", text(e.get("tid")) or "")
        named = [(text(e.get("name")) or "", text(e.get("cat")) or "")]
        out["read"] += 1
        place(series, stack_of(e, named), 1)

    for s in tops if isinstance(tops, list) else []:
        if not isinstance(s, dict):
            continue
        out["read"] += 1
        series = ("", text(s.get("tid")) or "")
        w, ok = weight_of(s)
        place(series, stack_of(s, None) if ok else None, w)

    json.dump(out, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
