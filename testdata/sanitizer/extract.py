"""Builds the compute-sanitizer text fixtures from NVIDIA's documented
output: the example blocks of the Compute Sanitizer guide shipped in the
nvidia-cuda-sanitizer-api wheel (docs/ComputeSanitizer/index.html), copied
as the guide prints them, without the shell prompt lines ("$ make ...").
Usage: extract.py GUIDE.html OUTDIR"""
import html
import os
import re
import sys

src, out = sys.argv[1], sys.argv[2]
pres = [html.unescape(re.sub(r"<[^>]+>", "", p)) for p in re.findall(r"<pre[^>]*>(.*?)</pre>", open(src).read(), re.S)]


def block(first):
    for p in pres:
        if p.strip().startswith(first):
            return p
    raise SystemExit("no example starts with %r" % first)


def after(prompt, nth=0):
    hits = [p for p in pres if p.strip().startswith(prompt)]
    return hits[nth]


def clean(text):
    lines = [l for l in text.strip("\n").split("\n") if not l.lstrip().startswith("$ ")]
    return "\n".join(lines) + "\n"


files = {
    "memcheck-demo.txt": after("$ make run_memcheck", 1),
    "memcheck-demo-nolineinfo.txt": after("$ make run_memcheck", 0),
    "leakcheck-demo.txt": after("$ make run_leakcheck"),
    "racecheck-block-error.txt": after("$ make run_block_error"),
    "initcheck-memset-error.txt": after("$ make run_initcheck", 0),
    "synccheck-divergent.txt": after("$ make run_divergent_threads"),
    "synccheck-illegal-syncwarp.txt": after("$ make run_illegal_syncwarp"),
}
# The guide's short examples of each tool's reports, one after the other,
# separated as compute-sanitizer separates records.
snips = ["========= Malloc/Free error encountered", "========= Leaked 64 bytes", "========= Leaked 16 bytes",
         "========= Program hit invalid copy direction", "========= WARNING: Race reported", "========= ERROR: Potential WAW",
         "========= Warning: (Warp Level Programming)", "========= Potential invalid __shared__ read", "========= Barrier called by",
         "========= Deadlock detected", "========= Uninitialized __shared__ memory read", "=========  Unused __shared__ memory",
         "========= Invalid __global__ write of size 1 bytes", "========= Internal Sanitizer Error"]
parts = []
for s in snips:
    t = block(s).strip("\n")
    parts.append(t if t.rstrip().endswith("=========") else t + "\n=========")
files["guide-snippets.txt"] = "\n".join(parts) + "\n"
os.makedirs(out, exist_ok=True)
for name, text in files.items():
    with open(os.path.join(out, name), "w") as f:
        f.write(clean(text) if name != "guide-snippets.txt" else text)
