#!/usr/bin/env bash
# Regenerates the coverage.py JSON reports of older releases under
# versions/<version>/: the same prog/ as regen.sh, run by each release in a
# throwaway venv, so the decoder is tested on every report layout that
# coverage.py 5 to 7 writes (5.x-7.3 write no meta.format at all).
#
#   for v in 5.5 6.5.0 7.3.2; do python3 -m venv /tmp/venv-cov$v; /tmp/venv-cov$v/bin/pip install coverage==$v; done
#   testdata/coverage/regen-versions.sh 5.5 6.5.0 7.3.2
#
# The data file is named by COVERAGE_FILE (5.x has no --data-file) and
# measurement is limited to prog/ with --source=. (5.5 otherwise measures
# setuptools' _distutils_hack from the venv's .pth file).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for v in "$@"; do
  py=${FLAMEOX_COVERAGE_VENV_PREFIX:-/tmp/venv-cov}$v/bin/python
  got=$("$py" -c 'import coverage; print(coverage.__version__)')
  [ "$got" = "$v" ] || { echo "$py has coverage $got, want $v" >&2; exit 1; }
  work=/tmp/flameox-coverage-fixture
  rm -rf "$work"
  cp -r "$here/prog" "$work"
  cd "$work"
  mkdir out
  COVERAGE_FILE=branch.coverage "$py" -m coverage run --branch --source=. app.py > /dev/null
  COVERAGE_FILE=branch.coverage "$py" -m coverage json -o out/branch.coverage.json
  COVERAGE_FILE=branch.coverage "$py" -m coverage report > out/branch.report.txt
  COVERAGE_FILE=contexts.coverage "$py" -m coverage run --rcfile=.coveragerc-contexts --source=. app.py > /dev/null
  COVERAGE_FILE=contexts.coverage "$py" -m coverage json --rcfile=.coveragerc-contexts --show-contexts -o out/contexts.coverage.json
  COVERAGE_FILE=contexts.coverage "$py" -m coverage report --rcfile=.coveragerc-contexts > out/contexts.report.txt
  mkdir -p "$here/versions/$v"
  cp out/* "$here/versions/$v/"
  echo "coverage $got, $("$py" -c 'import sys; print(sys.version.split()[0])')" > "$here/versions/$v/coverage.version"
  cd "$here"
done
