"""Independent per-name span counts and durations of the OTLP/JSON
fixtures, read with Python's json module (int64s as strings or numbers,
per the OTLP JSON mapping)."""
import json, sys

def count(doc):
    per = {}
    for rs in doc.get("resourceSpans") or []:
        for ss in rs.get("scopeSpans") or []:
            for sp in ss.get("spans") or []:
                c = per.setdefault(sp["name"], {"count": 0, "total_ns": 0})
                c["count"] += 1
                c["total_ns"] += int(sp["endTimeUnixNano"]) - int(sp["startTimeUnixNano"])
    return per

if __name__ == "__main__":
    ref = json.load(open("reference.json"))
    for f in sys.argv[1:]:
        ref[f] = count(json.load(open(f)))
    json.dump(ref, open("reference.json", "w"), indent=1, sort_keys=True)
