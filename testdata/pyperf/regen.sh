#!/bin/sh
# Regenerates the pyperf fixtures made here (the others are copies of
# /work/shared/fixtures/pyperf, see PROVENANCE.md). Needs pyperf 2.10.0
# (tools/requirements.txt) in the project venv.
set -eu
cd "$(dirname "$0")"
PY=${FLAMEOX_VENV:-../../.venv}/bin/python
rm -f timeit-sorted.pyperf.json timeit-sorted.pyperf.json.gz timeit-sorted-slow.pyperf.json
"$PY" -m pyperf timeit -q -p 4 -n 5 -w 1 -l 200 -o timeit-sorted.pyperf.json -s 'x = list(range(200))' 'sorted(x)'
"$PY" -m pyperf timeit -q -p 4 -n 5 -w 1 -o timeit-sorted.pyperf.json.gz -s 'x = list(range(200))' 'sorted(x)'
"$PY" -m pyperf timeit -q -p 4 -n 5 -w 1 -l 200 -o timeit-sorted-slow.pyperf.json -s 'x = list(range(800))' 'sorted(x)'
