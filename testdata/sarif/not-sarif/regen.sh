#!/usr/bin/env bash
# Regenerates the JSON files that are not SARIF but carry a top-level
# "version" (or other words SARIF uses), for the SARIF sniffer and
# decoder tests. Needs pyperf in a throwaway venv:
#   python3 -m venv /tmp/venv-pyperf && /tmp/venv-pyperf/bin/pip install pyperf==2.11.0
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${PYPERF_PYTHON:-/tmp/venv-pyperf/bin/python}
rm -f "$here/pyperf-timeit.json"
"$py" -m pyperf timeit --quiet -o "$here/pyperf-timeit.json" -l 1 -n 3 -p 1 -w 0 '1+1'
"$py" -c 'import pyperf; print("pyperf", pyperf.__version__)' > "$here/pyperf.version"
