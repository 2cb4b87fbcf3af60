#!/usr/bin/env bash
# rocprofv3 needs ROCm and an AMD GPU, which neither this machine nor CI has:
# the fixtures are rocprofiler-sdk's own documentation samples (real
# rocprofv3 output, see PROVENANCE.md), copied byte for byte. This script
# re-copies the shared ones and verifies every file's SHA-256.
#
# On a ROCm host, fresh outputs of the same shape come from (rocprofiler-sdk >= 0.5):
#   rocprofv3 --kernel-trace --hip-trace --hsa-trace --memory-copy-trace \
#     --memory-allocation-trace --scratch-memory-trace --marker-trace \
#     --output-format csv -d out -o run -- ./app
#   rocprofv3 --pmc SQ_WAVES --output-format csv -d out -o run -- ./app
set -euo pipefail
cd "$(dirname "$0")"
SHARED=${SHARED:-../../../shared/fixtures/rocprofv3}
if [ -d "$SHARED" ]; then
  install -m 0644 "$SHARED/kernel_trace.csv" kernel_trace_v0.csv
  install -m 0644 "$SHARED/counter_collection.csv" counter_collection_notime.csv
  install -m 0644 "$SHARED/hip_api_stats.csv" hip_api_stats.csv
  install -m 0644 "$SHARED/memory_copy_trace.csv" memory_copy_trace.csv
fi
sha256sum -c SHA256SUMS
