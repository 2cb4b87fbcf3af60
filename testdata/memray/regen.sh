#!/bin/sh
# Regenerates the Memray fixtures with memray from PyPI (tools/requirements.txt
# pins it) in the project venv, and records memray's own readings of each
# (reference.py) beside it. Run from anywhere: testdata/memray/regen.sh
set -eu
cd "$(dirname "$0")"
PY=${PYTHON:-../../.venv/bin/python}
run() { out=$1; shift; "$PY" -m memray run -q --force -o "$out" "$@" workload.py; }
# memray compresses on exit by default (LZ4 frame); --no-compress keeps the raw stream.
run lz4-pyalloc.bin --trace-python-allocators
run raw-pyalloc.bin --no-compress --trace-python-allocators
run lz4-native.bin --native
run raw-native.bin --no-compress --native
run lz4-aggregate.bin --aggregate
run raw-aggregate-native.bin --no-compress --aggregate --native --trace-python-allocators
for f in lz4-*.bin raw-*.bin; do
	"$PY" reference.py "$f" > "${f%.bin}.reference.json"
done
{ "$PY" --version; "$PY" -m memray --version; } > versions.txt
# Header version 12: memray 1.19.1, installed apart (regen only):
#   pip install --no-deps --target "$MEMRAY119" memray==1.19.1
# Its own FileReader records the reading (reference.py runs under it).
if [ -n "${MEMRAY119:-}" ]; then
	PYTHONPATH=$MEMRAY119 "$PY" -m memray run -q --force --no-compress --trace-python-allocators -o v12-raw-pyalloc.bin workload.py
	PYTHONPATH=$MEMRAY119 "$PY" reference.py v12-raw-pyalloc.bin > v12-raw-pyalloc.reference.json
	PYTHONPATH=$MEMRAY119 "$PY" -m memray --version > v12-version.txt
fi
# memray's reading of the native traces (its symbolization depends on the
# binaries present, so the reading is recorded, not rerun by the tests).
for f in lz4-native raw-native raw-aggregate-native; do
	"$PY" native_reference.py "$f.bin" > "$f.native.json" 2>/dev/null
done
