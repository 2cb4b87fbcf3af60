#!/usr/bin/env bash
# Rebuilds the schema-built compute-sanitizer fixtures from NVIDIA's guide in
# the nvidia-cuda-sanitizer-api 13.4.92 wheel (PyPI). No GPU is needed, and
# no sanitizer runs: the guide's example output is the source (PROVENANCE.md).
set -euo pipefail
cd "$(dirname "$0")"
PY=${FLAMEOX_VENV:-../../.venv}/bin/python
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m pip download --no-deps -q nvidia-cuda-sanitizer-api==13.4.92 -d "$tmp"
(cd "$tmp" && unzip -q ./*.whl 'nvidia/cu13/compute-sanitizer/docs/ComputeSanitizer/index.html')
"$PY" extract.py "$tmp/nvidia/cu13/compute-sanitizer/docs/ComputeSanitizer/index.html" .
