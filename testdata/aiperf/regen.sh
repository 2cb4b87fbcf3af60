#!/usr/bin/env bash
# Regenerates testdata/aiperf/mock-0.13 with the real AIPerf from PyPI,
# run offline against the loopback mock server in ../inference.
#
#   AIPERF_VENV=/tmp/aiperf-venv testdata/aiperf/regen.sh
#
# AIPERF_VENV is a virtual environment with aiperf==0.13.0 installed
# (pip install aiperf==0.13.0: about 1.2 GB with its dependencies, so it is
# regen-only and not in tools/requirements.txt). The run-2025 fixtures are
# copies of the shared fixtures (see PROVENANCE.md), not regenerated here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${AIPERF_VENV:?set AIPERF_VENV to a venv with aiperf==0.13.0}
port=${PORT:-18731}
work=$(mktemp -d)
trap 'kill $srv 2>/dev/null || true; rm -rf "$work"' EXIT
"$venv/bin/python" "$here/../inference/mock_server.py" "$port" &
srv=$!
"$venv/bin/python" "$here/../inference/make_tokenizer.py" "$work/tok"
sleep 1
# 40 streaming chat requests, 4 at a time; the mock fails every 9th with
# HTTP 500, so the export holds real error records.
"$venv/bin/aiperf" profile -m mock-model --tokenizer "$work/tok" \
  --url "http://127.0.0.1:$port" --endpoint-type chat --streaming \
  --request-count 40 --concurrency 4 --isl 32 --osl 24 \
  --artifact-dir "$work/out" --ui none --export-level records >"$work/log.txt" 2>&1 ||
  { tail -40 "$work/log.txt"; exit 1; }
mkdir -p "$here/mock-0.13"
for f in profile_export.jsonl profile_export_aiperf.json profile_export_aiperf.csv; do
  cp "$work/out/$f" "$here/mock-0.13/$f"
done
echo "regenerated $here/mock-0.13"
