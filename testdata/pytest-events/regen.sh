#!/bin/sh
# Regenerates the pytest-events fixtures: real pytest (and pytest-xdist) from
# the project venv run the bundled suites with the flameox plugin loaded,
# exactly as provider pytest loads it (-p flameox_pytest from PYTHONPATH).
# The plugin's output varies run to run (times, pids, xdist scheduling);
# tests check structure and compare with pytest's own JUnit XML of the
# same run, never bytes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=${FLAMEOX_VENV:-$root/.venv}/bin/python
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the suites
export PYTHONPATH="$root/internal/capture/providers/pytest"

run() { # NAME SUITE WANT_EXIT ARGS...
	name=$1 suite=$2 want=$3
	shift 3
	rc=0
	(cd "$root/testdata/$suite" &&
		FLAMEOX_PYTEST_EVENTS="$here/$name.pytest-events.jsonl" "$py" -m pytest -p flameox_pytest "$@" >/dev/null 2>&1) || rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "regen: $name: pytest exited $rc, want $want" >&2
		exit 1
	fi
}

run suite pytest-suite 1 --continue-on-collection-errors --junitxml=../pytest-events/suite.junit.xml .
run collection-interrupted pytest-suite 2 .
run xdist pytest-suite 1 -n 2 --continue-on-collection-errors --junitxml=../pytest-events/xdist.junit.xml .
run xdist-crash pytest-crash-suite 1 -n 2 .
run keyboard-interrupt pytest-interrupt-suite 2 .
run internal-error pytest-internal-suite 3 .
run no-tests pytest-interrupt-suite 5 -k no_test_has_this_name .
# 70 extra arguments exceed the plugin's 64-argument bound in run_start.
set --
for i in $(seq 70); do set -- "$@" -W ignore::DeprecationWarning; done
run bounds pytest-bounds-suite 1 "$@" .
# The oldest supported pytest, when an interpreter with pytest==8.3.0 is
# named (python3 -m venv /tmp/v83 && /tmp/v83/bin/pip install pytest==8.3.0).
if [ -n "${PYTEST_MIN_PYTHON:-}" ]; then
	main=$py
	py=$PYTEST_MIN_PYTHON
	run suite-pytest-8.3.0 pytest-suite 1 --continue-on-collection-errors --junitxml=../pytest-events/suite-pytest-8.3.0.junit.xml .
	py=$main
fi
"$py" -m pytest --version >"$here/pytest-version.txt" 2>&1
"$py" -c 'import importlib.metadata as m; print("pytest-xdist", m.version("pytest-xdist"))' >>"$here/pytest-version.txt"
"$py" -c 'import sys; print("python", sys.version.split()[0])' >>"$here/pytest-version.txt"
