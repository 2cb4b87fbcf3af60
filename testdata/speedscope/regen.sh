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
# py-spy must start the interpreter itself: a wrapper script (a pyenv shim)
# is not a Python process it can read.
PY=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')
"$PYSPY" --version > py-spy-version.txt
"$PY" --version > python-version.txt
rm -f pyspy-threads.speedscope.json
# -I -S keep interpreter start-up (site, .pth files) out of the stacks.
# py-spy 0.4.2 may exit 1 ("No child process", benfred/py-spy#759) after
# writing a complete file, so the file, not the status, decides.
"$PYSPY" record --format speedscope --rate 250 -o pyspy-threads.speedscope.json -- "$PY" -I -S workload.py || true
test -s pyspy-threads.speedscope.json
