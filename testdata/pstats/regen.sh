#!/bin/sh
# Regenerates the pstats fixtures with the local CPython (stdlib only).
# Run from this directory: ./regen.sh
set -eu
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
# cProfile (the C profiler): callers carry (calls, primitive calls, tottime, cumtime).
"$PY" -m cProfile -o cprofile-workload.pstats workload.py
# A few hundred bytes of real cProfile output: the fuzz targets' cheap seed.
"$PY" -m cProfile -o cprofile-tiny.pstats tiny.py
# profile (the pure-Python profiler): callers carry a call count only, and
# keys hold a fake 'profiler' frame and a code object for the statement.
"$PY" -m profile -o profile-workload.pstats workload.py
# Stats.dump_stats rewrites a loaded profile; the same format.
"$PY" -c 'import pstats, sys; pstats.Stats(sys.argv[1]).dump_stats(sys.argv[2])' \
	cprofile-workload.pstats cprofile-dump-stats.pstats
"$PY" --version > python-version.txt
