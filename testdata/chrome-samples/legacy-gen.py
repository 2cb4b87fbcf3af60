#!/usr/bin/env python3
"""Writes the legacy-sample fixtures of testdata/chrome-samples from the
published Trace Event Format (no producer reachable here writes that form;
see PROVENANCE.md): a top-level stackFrames dictionary (id -> {name,
category, parent}), a top-level samples array ({cpu, tid, ts, name, sf,
weight}), and P events carrying sf or stack. Deterministic (seeded).

    python3 legacy-gen.py   # rewrites legacy-*.json next to it
"""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def frames_tree(rng):
    """A stackFrames dictionary: a few roots, call chains under them, some
    names recurring at several depths (recursion) and across libraries."""
    libs = ["libchrome.so", "libc.so.6", "libv8.so", "[kernel.kallsyms]"]
    names = ["main", "MessageLoop::Run", "RunTask", "Task::Run", "ParseHTML", "Layout",
             "Paint", "malloc", "free", "memcpy", "v8::Script::Run", "Builtins_JSEntry",
             "do_syscall_64", "page_fault", "Recurse", "GC::Collect"]
    sf = {}
    nxt = [1]

    def add(name, cat, parent):
        i = str(nxt[0])
        nxt[0] += 1
        e = {"name": name, "category": cat}
        if parent is not None:
            # Ids are strings in the format; a few parents are written as
            # numbers, which readers take as the same id.
            e["parent"] = int(parent) if rng.random() < 0.2 else parent
        sf[i] = e
        return i

    leaves = []

    def grow(parent, depth):
        kids = rng.randint(1, 3) if depth < 9 else 0
        if kids == 0 or rng.random() < 0.15:
            leaves.append(parent)
            if kids == 0:
                return
        for _ in range(kids):
            if rng.random() < 0.2 and depth > 2:
                name, cat = "Recurse", "libchrome.so"  # the same frame again, deeper
            else:
                name, cat = rng.choice(names), rng.choice(libs)
            grow(add(name, cat, parent), depth + 1)

    for root in ("main", "ThreadMain"):
        grow(add(root, "libchrome.so", None), 1)
    return sf, leaves


def main():
    rng = random.Random(20251201)
    sf, leaves = frames_tree(rng)
    tids = [101, 102, 103]
    samples = []
    ts = 1000.0
    for _ in range(3000):
        ts += rng.choice([0.5, 1.0, 1.25])
        s = {"cpu": rng.randint(0, 3), "tid": rng.choice(tids), "ts": ts, "name": "cycles:HG",
             "sf": rng.choice(leaves), "weight": rng.randint(1, 5)}
        if rng.random() < 0.1:
            del s["weight"]  # absent: counts 1
        if rng.random() < 0.05:
            s["sf"] = int(s["sf"])  # a number id, as some writers emit
        samples.append(s)
    events = [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "renderer"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 101, "args": {"name": "CrRendererMain"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 102, "args": {"name": "Compositor"}},
    ]
    pcs = ["0x%x" % (0x400000 + 16 * i) for i in range(40)]
    t = 2000.0
    for i in range(600):
        t += 1.0
        tid = rng.choice(tids)
        r = rng.random()
        if r < 0.6:
            events.append({"ph": "P", "name": "sample", "cat": "cpu_profiler", "pid": 1, "tid": tid, "ts": t,
                           "sf": rng.choice(leaves)})
        elif r < 0.9:
            depth = rng.randint(1, 7)
            stack = ["main"] + [rng.choice(pcs) for _ in range(depth)]
            events.append({"ph": "P", "name": "sample", "pid": 2, "tid": tid, "ts": t, "stack": stack})
        else:
            # No sf and no stack: catapult's trace-event sample, whose one
            # frame is the event's name and category.
            events.append({"ph": "P", "name": rng.choice(["Idle", "RunTask"]), "cat": "sampling", "pid": 1,
                           "tid": tid, "ts": t})
        if i % 50 == 0:
            # Event stacks (not samples): an X event's start and end stacks.
            events.append({"ph": "X", "name": "Task", "cat": "toplevel", "pid": 1, "tid": tid, "ts": t,
                           "dur": 0.5, "sf": rng.choice(leaves), "esf": rng.choice(leaves)})
        if i % 120 == 0:
            events.append({"ph": "i", "name": "mark", "s": "t", "pid": 1, "tid": tid, "ts": t,
                           "stack": ["main", rng.choice(pcs)]})
    # samples before traceEvents, stackFrames after both: a streaming
    # reader meets every sf before its dictionary.
    with open(os.path.join(HERE, "legacy-stackframes.json"), "w") as f:
        f.write("{")
        f.write('"samples":' + json.dumps(samples) + ",\n")
        f.write('"traceEvents":[\n' + ",\n".join(json.dumps(e) for e in events) + "],\n")
        f.write('"displayTimeUnit":"ns",\n')
        f.write('"stackFrames":' + json.dumps(sf, indent=0) + "}\n")

    # Negative cases, stackFrames first this time.
    bad_sf = {
        "1": {"name": "main", "category": "app"},
        "2": {"name": "work", "category": "app", "parent": "1"},
        "3": {"name": "loopA", "category": "app", "parent": "4"},  # 3 -> 4 -> 3: a cycle
        "4": {"name": "loopB", "category": "app", "parent": "3"},
        "5": {"name": "orphan", "category": "app", "parent": "99"},  # parent never defined
        "6": {"name": "self", "parent": "6"},  # its own parent
        "7": {"category": "app", "parent": "2"},  # no name: anonymous
        "8": "not an object",
    }
    bad_samples = [
        {"tid": 1, "ts": 1, "sf": "2", "weight": 3},
        {"tid": 1, "ts": 2, "sf": "404"},  # no such id
        {"tid": 1, "ts": 3, "sf": "3", "weight": 2},  # cycle
        {"tid": 1, "ts": 4, "sf": "5"},  # missing parent
        {"tid": 1, "ts": 5, "sf": "6"},  # self-parent
        {"ts": 6, "sf": "2", "weight": 4},  # no tid
        {"ts": 7, "sf": "7"},  # no tid, anonymous leaf
        {"tid": 1, "ts": 8, "sf": "2", "stack": ["a"]},  # both
        {"tid": 1, "ts": 9},  # neither
        {"tid": 1, "ts": 10, "sf": "2", "weight": 1.5},  # not an integer
        {"tid": 1, "ts": 11, "sf": "2", "weight": -1},
        {"tid": 1, "ts": 12, "sf": "2", "weight": "2"},
        {"tid": 1, "ts": 13, "sf": "2", "weight": 2.0},  # 2
        {"tid": 1, "ts": 14, "stack": ["main", 7]},  # not all strings
        {"tid": 1, "ts": 15, "stack": []},
        {"tid": 2, "ts": 16, "stack": ["main", "work", "main", "work"], "weight": 5},  # recursion
        "not an object",
    ]
    bad_events = [
        {"ph": "P", "name": "s", "pid": 1, "tid": 1, "ts": 20, "sf": "404"},
        {"ph": "P", "name": "s", "pid": 1, "tid": 1, "ts": 21, "sf": "4"},
        {"ph": "P", "name": "s", "pid": 1, "tid": 1, "ts": 22, "sf": "2", "stack": ["x"]},
        {"ph": "P", "name": "s", "pid": 1, "tid": 1, "ts": 23, "stack": "main"},
        {"ph": "P", "name": "s", "pid": 1, "tid": 1, "ts": 24, "sf": 2},
        {"ph": "P", "name": "s", "pid": 1, "ts": 25, "sf": "2"},  # no tid: thread null
        {"ph": "B", "name": "b", "pid": 1, "tid": 1, "ts": 26, "stack": ["main"]},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 27, "estack": ["main"]},
    ]
    with open(os.path.join(HERE, "legacy-negative.json"), "w") as f:
        f.write("{")
        f.write('"stackFrames":' + json.dumps(bad_sf) + ",\n")
        f.write('"traceEvents":[\n' + ",\n".join(json.dumps(e) for e in bad_events) + "],\n")
        f.write('"samples":' + json.dumps(bad_samples) + "}\n")


if __name__ == "__main__":
    main()
