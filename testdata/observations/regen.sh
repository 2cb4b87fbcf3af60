#!/bin/sh
# Regenerates the observations fixtures with the real SDKs: the Python
# workload runs with sdk/python on PYTHONPATH in the project venv's
# interpreter, the Go workload with pkg/observe. Timestamps and pids vary.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=${FLAMEOX_VENV:-$root/.venv}/bin/python
rm -f "$here/python.observations.jsonl" "$here/go.observations.jsonl" # the SDKs append
(cd "$here" && PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$root/sdk/python" \
	FLAMEOX_OBSERVATIONS="$here/python.observations.jsonl" "$py" workload.py)
(cd "$here" && FLAMEOX_OBSERVATIONS="$here/go.observations.jsonl" go run ./goworkload)
{
	"$py" -c 'import sys; print("python", sys.version.split()[0])'
	go version
} >"$here/versions.txt"
