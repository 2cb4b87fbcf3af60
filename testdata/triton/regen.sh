#!/usr/bin/env bash
# Rebuilds the schema-built Triton autotune caches under cache/ with Triton
# 3.7.0's own Config and FileCacheManager (PROVENANCE.md). Downloads the
# triton==3.7.0 wheel (~200 MB) into a temporary directory; needs no GPU.
set -euo pipefail
cd "$(dirname "$0")"
PY=${FLAMEOX_VENV:-../../.venv}/bin/python
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m pip download --no-deps -q triton==3.7.0 -d "$tmp"
(cd "$tmp" && unzip -q ./*.whl 'triton/*')
rm -rf cache
TRITON_CACHE_DIR=$PWD/cache PYTHONPATH=$tmp "$PY" make_cache.py
