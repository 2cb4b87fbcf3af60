#!/usr/bin/env bash
# Regenerates pyspy-idle.raw.txt: py-spy 0.4.3 `record --idle -f raw` of
# pyspy-idle.py. The other fixtures here come from ../perf/regen.sh.
#
# py-spy writes a line with an empty stack (" 8") for samples taken while
# the interpreter had no Python frame (start-up, shutdown); whether one
# lands in a run is timing, so the run is repeated until one does.
# Needs python3 and network access to PyPI once (py-spy into /tmp).
set -euo pipefail
cd "$(dirname "$0")"
venv=${PYSPY_VENV:-/tmp/venv-pyspy043}
[ -x "$venv/bin/py-spy" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q py-spy==0.4.3; }
"$venv/bin/py-spy" --version
for try in 1 2 3 4 5 6 7 8 9 10; do
  # -I -S: no site imports, so the stacks are the script's and few.
  "$venv/bin/py-spy" record --idle -f raw -r 1000 -o pyspy-idle.raw.txt -- python3 -I -S pyspy-idle.py
  if grep -qE '^ [0-9]+$' pyspy-idle.raw.txt; then
    sha256sum pyspy-idle.raw.txt
    exit 0
  fi
  echo "try $try: no empty-stack line, again" >&2
done
echo "no empty-stack line in 10 runs" >&2
exit 1
