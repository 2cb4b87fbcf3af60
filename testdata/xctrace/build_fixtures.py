#!/usr/bin/env python3
"""Builds xctrace export XML fixtures strictly from the published export
schema (Apple's tool cannot run here): a <trace-query-result> with one
<node> per exported table, its <schema> (<col> mnemonic/name/
engineering-type) and <row>s whose cells follow the columns in order.
Every element after its first occurrence is written as ref="N" to the
id="N" of that first occurrence, as xctrace does; an empty cell is
<sentinel/>. Deterministic (seeded).

    python3 build_fixtures.py   # writes the *.xml next to it
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


class Writer:
    def __init__(self):
        self.out = []
        self.next_id = 1
        self.seen = {}  # identity key -> id

    def once(self, key, render):
        """render(id) writes the element with id=...; a repeat is a ref."""
        if key in self.seen:
            tag = key[0]
            return '<%s ref="%d"/>' % (tag, self.seen[key])
        i = self.next_id
        self.next_id += 1
        self.seen[key] = i
        return render(i)


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


BINARIES = {
    "app": ("demo-app", "/Users/dev/build/demo-app", "5D1C2A4E-0B7F-3C51-9E22-6A1B8C3D4E5F", "0x100000000"),
    "libsys": ("libsystem_kernel.dylib", "/usr/lib/system/libsystem_kernel.dylib", "E5D90565-FA1A-3112-B048-59E321191677", "0x1a0241000"),
    "dyld": ("dyld", "/usr/lib/dyld", "3B7F5E21-9A0C-3D44-8E1F-2C6B7A8D9E01", "0x19ffe0000"),
    "libc++": ("libc++.1.dylib", "/usr/lib/libc++.1.dylib", "A1B2C3D4-E5F6-3711-8899-AABBCCDDEEFF", "0x1a0100000"),
}

# function -> (binary, address, source (path, line) or None); name None = unsymbolicated
FUNCS = {
    "start": ("dyld", 0x19ffe6b30, None),
    "main": ("app", 0x100003f2c, ("/Users/dev/src/main.cpp", 12)),
    "parse_input(std::string const&)": ("app", 0x100004a10, ("/Users/dev/src/parse.cpp", 40)),
    "tokenize": ("app", 0x100004c88, ("/Users/dev/src/parse.cpp", 88)),
    "hash_bytes<&>": ("app", 0x100005010, None),
    "std::__1::vector<int>::push_back(int&&)": ("libc++", 0x1a0108840, None),
    "mach_msg2_trap": ("libsys", 0x1a0241c35, None),
    "worker_loop": ("app", 0x1000061a4, ("/Users/dev/src/worker.cpp", 21)),
    "compress_block": ("app", 0x100006e00, ("/Users/dev/src/worker.cpp", 77)),
    None: ("app", 0x100007abc, None),
}

STACKS_MAIN = [
    ["start", "main", "parse_input(std::string const&)", "tokenize"],
    ["start", "main", "parse_input(std::string const&)", "tokenize", "hash_bytes<&>"],
    ["start", "main", "parse_input(std::string const&)", "std::__1::vector<int>::push_back(int&&)"],
    ["start", "main", "mach_msg2_trap"],
    ["start", "main", "parse_input(std::string const&)", "parse_input(std::string const&)", "tokenize"],
    ["start", "main", None],
]
STACKS_WORKER = [
    ["worker_loop", "compress_block"],
    ["worker_loop", "compress_block", "hash_bytes<&>"],
    ["worker_loop", "mach_msg2_trap"],
]


def binary_xml(w, key):
    name, path, uuid, load = BINARIES[key]
    return w.once(("binary", key), lambda i: '<binary id="%d" name="%s" UUID="%s" arch="arm64e" load-addr="%s" path="%s"/>' % (i, esc(name), uuid, load, esc(path)))


def frame_xml(w, fn):
    b, addr, src = FUNCS[fn]

    def render(i):
        name = ("%#x" % addr) if fn is None else fn
        inner = binary_xml(w, b)
        if src is not None:
            inner += '<source line="%d">%s</source>' % (src[1], w.once(("path", src[0]), lambda j: '<path id="%d">%s</path>' % (j, esc(src[0]))))
        return '<frame id="%d" name="%s" addr="%#x">%s</frame>' % (i, esc(name), addr, inner)
    return w.once(("frame", fn), render)


def backtrace_xml(w, stack, tag="backtrace"):
    leaf_first = list(reversed(stack))
    return w.once((tag, tuple(map(str, stack))), lambda i: '<%s id="%d">%s</%s>' % (tag, i, "".join(frame_xml(w, f) for f in leaf_first), tag))


THREADS = [
    # (tid, name, process name, pid)
    (0x12aa, "Main Thread", "demo-app", 581),
    (0x12b7, "worker-1", "demo-app", 581),
    (0x3301, "Main Thread", "helperd", 902),
]


def process_xml(w, pname, pid):
    return w.once(("process", pid), lambda i: '<process id="%d" fmt="%s (%d)"><pid id="%d" fmt="%d">%d</pid><device-session %s</process>' % (
        i, esc(pname), pid, alloc(w), pid, pid, ds(w)))


def alloc(w):
    i = w.next_id
    w.next_id += 1
    return i


def ds(w):
    if ("device-session", 0) in w.seen:
        return 'ref="%d"/>' % w.seen[("device-session", 0)]
    i = alloc(w)
    w.seen[("device-session", 0)] = i
    return 'id="%d" fmt="Mac">Mac</device-session>' % i


def thread_xml(w, t):
    tid, name, pname, pid = t
    return w.once(("thread", tid), lambda i: '<thread id="%d" fmt="%s 0x%x (%s, pid: %d)"><tid id="%d" fmt="0x%x">%d</tid>%s</thread>' % (
        i, esc(name), tid, esc(pname), pid, alloc(w), tid, tid, process_xml(w, pname, pid)))


def simple(w, tag, key, fmt, text):
    return w.once((tag, key), lambda i: '<%s id="%d" fmt="%s">%s</%s>' % (tag, i, esc(fmt), esc(str(text)), tag))


def col(mn, name, et):
    return "<col><mnemonic>%s</mnemonic><name>%s</name><engineering-type>%s</engineering-type></col>" % (mn, name, et)


def fmt_time(ns):
    ms, rest = divmod(ns, 1000000)
    s, ms = divmod(ms, 1000)
    m, s = divmod(s, 60)
    return "%02d:%02d.%03d.%03d" % (m, s, ms, rest // 1000)


def pick(rng, t):
    return rng.choice(STACKS_WORKER if t[1] == "worker-1" else STACKS_MAIN)


def time_profile(path, rows, seed):
    rng = random.Random(seed)
    w = Writer()
    o = ['<?xml version="1.0"?>\n<trace-query-result>\n<node xpath=\'//trace-toc[1]/run[1]/data[1]/table[13]\'>',
         '<schema name="time-profile">' + col("time", "Sample Time", "sample-time") + col("thread", "Thread", "thread") +
         col("process", "Process", "process") + col("core", "Core", "core") + col("thread-state", "State", "thread-state") +
         col("weight", "Weight", "weight") + col("stack", "Backtrace", "backtrace") + "</schema>"]
    ts = 300613208
    for n in range(rows):
        ts += rng.choice([999875, 1000000, 1000125, 1001000])
        t = rng.choice(THREADS)
        wt = rng.choice([1000000, 1000000, 1000000, 500000, 2000000])
        core = rng.randrange(4)
        cells = [simple(w, "sample-time", ts, fmt_time(ts), ts), thread_xml(w, t), process_xml(w, t[2], t[3]),
                 simple(w, "core", core, "CPU %d (%s Core)" % (core, "E" if core < 2 else "P"), core),
                 simple(w, "thread-state", "Running", "Running", "Running"),
                 simple(w, "weight", wt, "%.2f ms" % (wt / 1e6), wt)]
        if n % 17 == 5:
            cells.append("<sentinel/>")  # no backtrace for this sample
        else:
            cells.append(backtrace_xml(w, pick(rng, t)))
        o.append("<row>" + "".join(cells) + "</row>")
    o.append("</node>\n</trace-query-result>\n")
    with open(path, "w") as f:
        f.write("\n".join(o))


def time_sample(path, rows, seed):
    rng = random.Random(seed)
    w = Writer()
    o = ['<?xml version="1.0"?>\n<trace-query-result>\n<node xpath=\'//trace-toc[1]/run[1]/data[1]/table[7]\'>',
         '<schema name="time-sample">' + col("time", "Sample Time", "sample-time") + col("thread", "Thread", "thread") +
         col("core-index", "Core Index", "core") + col("thread-state", "State", "thread-state") +
         col("stack", "Backtrace", "backtrace") + "</schema>"]
    ts = 1000000
    for n in range(rows):
        ts += 1000000
        t = rng.choice(THREADS[:2])
        core = rng.randrange(4)
        cells = [simple(w, "sample-time", ts, fmt_time(ts), ts), thread_xml(w, t),
                 simple(w, "core", core, "CPU %d" % core, core),
                 simple(w, "thread-state", "Running", "Running", "Running"), backtrace_xml(w, pick(rng, t))]
        o.append("<row>" + "".join(cells) + "</row>")
    o.append("</node>\n</trace-query-result>\n")
    with open(path, "w") as f:
        f.write("\n".join(o))


if __name__ == "__main__":
    time_profile(os.path.join(HERE, "time-profile.xml"), 120, 1)
    time_sample(os.path.join(HERE, "time-sample.xml"), 40, 2)
