#!/usr/bin/env python3
"""Independent reading of a Chrome Trace Event JSON file (plain or gzip'd,
object with traceEvents or a bare array, closed or not) with Python's json
module: per phase event counts and, per (kind, name), the count and the
exact total duration in ns of the slices the Trace Event Format defines.
Times are the format's microseconds taken as decimals and multiplied by
1000, never through a float. The Go tests compare the decoder's rows with
this output exactly. Usage: reference.py TRACE > TRACE.reference.json"""
import collections, decimal, gzip, json, sys

def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8").strip()
    if text.startswith("[") and not text.endswith("]"):
        text = text.rstrip().rstrip(",") + "]"   # the format lets the bracket go
    doc = json.loads(text, parse_float=decimal.Decimal, parse_int=decimal.Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc

def ns(v):
    n = v * 1000
    assert n == n.to_integral_value(), v
    return int(n)

def text(v):
    return str(v) if v is not None else ""

def main(path):
    events = load(path)
    by_phase = collections.Counter(e.get("ph") for e in events)
    slices = collections.defaultdict(lambda: [0, 0])
    def add(kind, name, dur):
        s = slices[kind + "\t" + name]
        s[0] += 1
        s[1] += dur
    out = {"events": len(events), "by_phase": dict(by_phase)}
    # Synchronous slices: X, and B/E matched per thread in time order.
    per_thread = collections.defaultdict(list)
    for i, e in enumerate(events):
        ph = e.get("ph")
        if ph == "X":
            add("slice", e.get("name", ""), ns(e["dur"]))
        elif ph in ("B", "E"):
            per_thread[(text(e.get("pid")), text(e.get("tid")))].append((ns(e["ts"]), 0 if ph == "E" else 1, i, e))
    unmatched = unclosed = 0
    for evs in per_thread.values():
        evs.sort(key=lambda x: (x[0], x[1], x[2]))
        stack = []
        for ts, order, _, e in evs:
            if order == 1:
                stack.append((ts, e))
            elif stack:
                bts, b = stack.pop()
                add("slice", b.get("name", ""), ts - bts)
            else:
                unmatched += 1
        unclosed += len(stack)
    out["unmatched_end"], out["unclosed_begin"] = unmatched, unclosed
    # Async (b/e, S/F), object (N/D) slices and instants, in file order.
    nestable, legacy, objects = collections.defaultdict(list), {}, {}
    for e in events:
        ph = e.get("ph")
        if ph in ("i", "I", "R", "n"):
            add("instant", e.get("name", ""), 0)
            continue
        if ph not in ("b", "e", "S", "F", "N", "D"):
            continue
        ident = e.get("id")
        glob = False
        if "id2" in e:
            ident = e["id2"].get("local", e["id2"].get("global"))
            glob = "global" in e["id2"]
        key = (e.get("cat", ""), e.get("scope", ""), text(ident)) + (() if glob else (text(e.get("pid")),))
        if ph == "b":
            nestable[key].append(e)
        elif ph == "e":
            st = nestable[key]
            idx = len(st) - 1
            if "name" in e:
                while idx >= 0 and st[idx].get("name", "") != e["name"]:
                    idx -= 1
            if idx >= 0:
                b = st.pop(idx)
                add("async", b.get("name", ""), ns(e["ts"]) - ns(b["ts"]))
        else:
            table, kind = (legacy, "async") if ph in ("S", "F") else (objects, "object")
            k = key + (e.get("name", ""),)
            if ph in ("S", "N"):
                table.setdefault(k, e)
            elif k in table:
                b = table.pop(k)
                add(kind, b.get("name", ""), ns(e["ts"]) - ns(b["ts"]))
    out["slices"] = {k: {"count": v[0], "total_ns": v[1]} for k, v in sorted(slices.items())}
    out["counter_samples"] = sum(
        1 for e in events if e.get("ph") == "C" for v in (e.get("args") or {}).values()
        if isinstance(v, decimal.Decimal))
    names = ("process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index")
    out["tracks"] = sum(1 for e in events if e.get("ph") == "M" and e.get("name") in names)
    out["flow_points"] = sum(1 for e in events if e.get("ph") in ("s", "t", "f")) + \
        sum(int(bool(e.get("flow_in"))) + int(bool(e.get("flow_out"))) for e in events)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()

if __name__ == "__main__":
    main(sys.argv[1])
