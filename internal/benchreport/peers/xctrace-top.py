#!/usr/bin/env python3
"""Peer of `flameox-rank --top 20` on an xctrace time-profile export: what
a script over `xctrace export` XML does, xml.etree's iterparse resolving
id/ref itself (keeping the id'd elements, clearing each row), summing each
sample's weight on its leaf frame, then the 20 heaviest frames."""
import collections, sys
import xml.etree.ElementTree as ET

ids = {}
self_w = collections.Counter()
depth = 0
for ev, el in ET.iterparse(sys.argv[1], events=("start", "end")):
    if ev == "start":
        depth += 1
        continue
    depth -= 1
    i = el.get("id")
    if i is not None:
        ids[i] = el
    if el.tag != "row" or depth != 2:
        continue
    w, leaf = 1, None
    for c in el:
        r = c.get("ref")
        if r is not None:
            c = ids[r]
        if c.tag == "weight":
            w = int(c.text)
        elif c.tag == "backtrace":
            f = next(iter(c), None)
            if f is not None:
                r = f.get("ref")
                leaf = ids[r] if r is not None else f
    if leaf is not None:
        self_w[leaf.get("name")] += w
    # Keep only the elements the refs may name (those with ids).
    if el.get("id") is None:
        el.clear()
for name, w in self_w.most_common(20):
    print(f"{w:>16} {name}")
