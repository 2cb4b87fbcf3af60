#!/usr/bin/env bash
# Regenerates the coverage.py fixtures by running the real coverage.py
# (pinned in tools/requirements.txt) over prog/, a small program with
# branches, partial branches, excluded and unexecuted code.
#
#   branch.*    coverage run --branch (arc data), coverage json, coverage report
#   contexts.*  line data with dynamic contexts (test_function), json --show-contexts
#   *.lines.json  executed-line counts per file from coverage.py's own API
#                 (CoverageData.lines), for the data-file decoder's tests
#
# The program runs from /tmp/flameox-coverage-fixture so the absolute paths
# the data files record do not depend on this checkout's location.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
venv=${FLAMEOX_VENV:-$repo/.venv}
py="$venv/bin/python"
want=$(grep -i '^coverage==' "$repo/tools/requirements.txt" | cut -d= -f3)
got=$("$py" -c 'import coverage; print(coverage.__version__)')
if [ "$got" != "$want" ]; then
  echo "coverage $got in $venv, want $want (pip install -r tools/requirements.txt)" >&2
  exit 1
fi
work=/tmp/flameox-coverage-fixture
rm -rf "$work"
cp -r "$here/prog" "$work"
cd "$work"
# Reports go to out/: coverage report combines "<data file>.*" files found
# beside the data file, which would include a report named branch.coverage.json.
mkdir out

"$py" -m coverage run --branch --data-file=branch.coverage app.py > /dev/null
"$py" -m coverage json --data-file=branch.coverage -o out/branch.coverage.json
"$py" -m coverage report --data-file=branch.coverage > out/branch.report.txt

"$py" -m coverage run --rcfile=.coveragerc-contexts --data-file=contexts.coverage app.py > /dev/null
"$py" -m coverage json --rcfile=.coveragerc-contexts --data-file=contexts.coverage --show-contexts -o out/contexts.coverage.json
"$py" -m coverage report --rcfile=.coveragerc-contexts --data-file=contexts.coverage > out/contexts.report.txt

cp branch.coverage contexts.coverage out/* "$here/"

# The shared developer fixtures, copied byte for byte (see PROVENANCE.md).
shared=${FLAMEOX_SHARED_FIXTURES:-$repo/../shared/fixtures}
if [ -d "$shared/coverage" ]; then
  cp "$shared/coverage/textxtract-coverage-7.11.0.coverage.sqlite" "$here/textxtract.coverage"
  cp "$shared/coverage/pdf_toolbox-coverage-7.12.0.json" "$here/pdf_toolbox.coverage.json"
  chmod u+w "$here/textxtract.coverage" "$here/pdf_toolbox.coverage.json"
fi

for f in branch contexts textxtract; do
  "$py" - "$here/$f.coverage" > "$here/$f.lines.json" <<'PY'
import json, sys
import coverage
data = coverage.CoverageData(basename=sys.argv[1])
data.read()
print(json.dumps({f: len(data.lines(f)) for f in sorted(data.measured_files())}, indent=1, sort_keys=True))
PY
done
echo "coverage $got" > "$here/coverage.version"
