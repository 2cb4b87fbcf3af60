#!/bin/sh
# Regenerates pyspy-0.4.1-two-threads.speedscope.json with py-spy 0.4.1 (not
# the project venv's 0.4.2):
#   python3 -m venv /tmp/venv-pyspy041 && /tmp/venv-pyspy041/bin/pip install py-spy==0.4.1
# Needs permission to ptrace the child (root, or CAP_SYS_PTRACE).
set -eu
cd "$(dirname "$0")"
PYSPY=${PYSPY041:-/tmp/venv-pyspy041/bin/py-spy}
"$PYSPY" --version | grep -q '^py-spy 0.4.1$'
PY=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')
# --idle keeps the samples of the finalizing main thread, whose stacks are
# empty: the fixture must hold such samples.
"$PYSPY" record --idle -f speedscope --rate 100 -o pyspy-0.4.1-two-threads.speedscope.json -- "$PY" -I -S two_threads.py
