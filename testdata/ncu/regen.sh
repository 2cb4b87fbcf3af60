#!/usr/bin/env bash
# Regenerates the reader transcripts (the fuzz seeds of internal/formats/ncu):
# what flameox's ncu_report worker writes for each report. Needs ncu-report
# (tools/requirements.txt) in the project venv. The reports themselves are
# copies of the shared fixtures (PROVENANCE.md).
set -euo pipefail
cd "$(dirname "$0")"
PY=${FLAMEOX_VENV:-../../.venv}/bin/python
for f in *.ncu-rep; do
  "$PY" ../../internal/formats/ncu/reader.py "$f" > "${f%.ncu-rep}.reader.jsonl"
done
