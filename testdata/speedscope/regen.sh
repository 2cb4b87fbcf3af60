#!/bin/sh
# Regenerates the py-spy fixtures. Needs py-spy 0.4.2 in the project venv
# (python3 -m venv .venv && .venv/bin/pip install -r tools/requirements.txt)
# and permission to ptrace the child (root, or CAP_SYS_PTRACE).
# The speedscope reference samples and the cs336 py-spy file are copies of
# /work/shared/fixtures (see PROVENANCE.md); this script does not touch them.
set -eu
cd "$(dirname "$0")"
VENV=${FLAMEOX_VENV:-../../.venv}
PYSPY="$VENV/bin/py-spy"
PY=${PYTHON:-python3}
"$PYSPY" --version > py-spy-version.txt
"$PY" --version > python-version.txt
# -I -S keep interpreter start-up (site, .pth files) out of the stacks.
"$PYSPY" record --format speedscope --rate 250 -o pyspy-threads.speedscope.json -- "$PY" -I -S workload.py
