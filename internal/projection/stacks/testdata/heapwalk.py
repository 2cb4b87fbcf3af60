"""Independent reader of a V8 .heapprofile: walks the call tree from its
head and prints each stack's bytes (selfSize) and resolved sample count,
folded: function names root first (V8's (root) left out), ';'-joined."""
import json
import sys
from collections import Counter

doc = json.load(open(sys.argv[1]))
counts = Counter(s["nodeId"] for s in doc.get("samples", []))
byte_w, count_w = Counter(), Counter()


def walk(node, path, top):
    cf = node["callFrame"]
    if not (top and cf["functionName"] == "(root)" and cf["url"] == ""):
        path = path + [cf["functionName"] or "(anonymous)"]
    if path:
        key = ";".join(path)
        byte_w[key] += node["selfSize"]
        count_w[key] += counts.get(node.get("id"), 0)
    for c in node.get("children", []):
        walk(c, path, False)


sys.setrecursionlimit(100000)
walk(doc["head"], [], True)
for k in sorted(byte_w):
    if byte_w[k] or count_w[k]:
        print(f"{byte_w[k]}\t{count_w[k]}\t{k}")
