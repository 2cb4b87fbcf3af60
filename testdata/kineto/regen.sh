#!/usr/bin/env bash
# Regenerates torch-2.5.1-cpu.pt.trace.json: PyTorch's profiler (Kineto)
# around three training steps of a small CPU model (train.py), exported
# with export_chrome_trace. torch is regen-only: from PyPI it pulls about
# 5 GB (CUDA wheels included), so it lives in a throwaway venv, never in
# tools/requirements.txt. The other files here are copies (PROVENANCE.md).
set -euo pipefail
cd "$(dirname "$0")"
venv=${TORCH_VENV:-/tmp/venv-torch}
[ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q torch==2.5.1; }
"$venv/bin/python" -c 'import torch; print("torch", torch.__version__)'
"$venv/bin/python" train.py torch-2.5.1-cpu.pt.trace.json
sha256sum torch-2.5.1-cpu.pt.trace.json
