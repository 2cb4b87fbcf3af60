#!/bin/sh
# Regenerates the PyTorch benchmark fixture with torch from PyPI (CPU; heavy,
# regen only: FLAMEOX_TORCH_VENV names a venv with torch, e.g. /tmp/venv-torch).
set -eu
cd "$(dirname "$0")"
PY=${FLAMEOX_TORCH_VENV:?set FLAMEOX_TORCH_VENV to a venv with torch}/bin/python
PYTHONPATH=../../sdk/python "$PY" make.py .
