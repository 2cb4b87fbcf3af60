#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short time each.
# Usage: tools/fuzz.sh [FUZZTIME]   (default 10s)
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-10s}
fail=0
while IFS=: read -r file name; do
  dir=$(dirname "$file")
  echo "== $dir $name ($t)"
  if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$t" -fuzzminimizetime 5s "./$dir" >/tmp/fuzz.$$.log 2>&1; then
    tail -30 /tmp/fuzz.$$.log
    fail=1
  fi
done < <(grep -rhoE --include='*_test.go' -H '^func (Fuzz[A-Za-z0-9_]+)' cmd pkg internal | sed -E 's/:func /:/')
rm -f /tmp/fuzz.$$.log
exit $fail
