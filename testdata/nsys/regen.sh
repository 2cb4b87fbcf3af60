#!/usr/bin/env bash
# Regenerates the converted shape fixtures of testdata/nsys from the shared
# Nsight Systems SQLite exports (see PROVENANCE.md). Needs pyarrow (project venv).
set -euo pipefail
cd "$(dirname "$0")"
PY=${FLAMEOX_VENV:-../../.venv}/bin/python
SHARED=${SHARED:-../../../shared/fixtures/nsys}
rm -rf nvfuser-report1_pqtdir jacc-4e6_async_1_trace_pqtdir
"$PY" sqlite2parquetdir.py "$SHARED/nvfuser-nsys-2024.6.2-report1.sqlite" nvfuser-report1_pqtdir
# The JACC export has no CUPTI tables (CPU sampling only): the metadata, the
# strings and the sampling tables are enough for the "no KERNEL table" case.
"$PY" sqlite2parquetdir.py "$SHARED/jacc-nsys-2026.2-4e6_async_1_trace.sqlite" jacc-4e6_async_1_trace_pqtdir \
  META_DATA_EXPORT,META_DATA_CAPTURE,StringIds,TARGET_INFO_GPU,TARGET_INFO_SESSION_START_TIME,COMPOSITE_EVENTS,SAMPLING_CALLCHAINS
