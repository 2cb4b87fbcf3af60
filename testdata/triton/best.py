"""Independent best configuration of a Triton autotune cache file, the way
Triton 3.7's check_disk_cache picks it when it reads the file back:
builtins.min over the configs by their timings (Python's comparison).
Configs are keyed by their JSON text here, as Config.__eq__ keys them by
their fields. Prints the 0-based index of the best config's first entry."""
import json
import sys

doc = json.load(open(sys.argv[1]))
timings = {}
first = {}
for i, (cfg, t) in enumerate(doc["configs_timings"]):
    ident = json.dumps(cfg, sort_keys=True)
    first.setdefault(ident, i)
    timings[ident] = t
print(first[min(timings, key=timings.get)])
