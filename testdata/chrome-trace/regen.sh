#!/usr/bin/env bash
# Regenerates the Chrome Trace Event JSON fixtures with node's own trace
# writer (node --trace-event-categories), and the reference counts the
# tests compare with (reference.py, an independent Python reading, runs
# in the tests themselves).
#
#   node-20-trace-events.json      node v20 tracing workload.js
#   node-20-trace-events.json.gz   the same bytes, gzip -n
#   node-20-unterminated.json      its traceEvents as a bare array without
#                                  the closing bracket (the format allows it),
#                                  derived by this script
#   chrome-141-no-arg-data.json    copied from ../../../shared/fixtures/chrome-trace (see PROVENANCE.md)
set -euo pipefail
cd "$(dirname "$0")"
node --version
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp workload.js "$tmp/"
(cd "$tmp" && node --trace-event-categories node,node.async_hooks,node.perf,node.bootstrap,v8 \
  --trace-event-file-pattern trace.json workload.js)
cp "$tmp/trace.json" node-20-trace-events.json
gzip -n -9 -c node-20-trace-events.json > node-20-trace-events.json.gz
python3 - <<'PY'
import json
d = json.load(open("node-20-trace-events.json"))
with open("node-20-unterminated.json", "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(e, separators=(",", ":")) for e in d["traceEvents"]) + "\n")
PY



sha256sum node-20-* chrome-141-*
