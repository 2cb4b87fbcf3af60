#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short time each.
# Usage: tools/fuzz.sh [FUZZTIME]   (default 10s)
#
# New interesting inputs are minimized for at most FUZZMINIMIZE (default
# 3s): Go's default of 60 s per input made targets with kilobyte-sized
# inputs spend a short pass minimizing instead of exploring.
#
# Go 1.26's fuzz coordinator can report "context deadline exceeded" when
# -fuzztime ends while a worker is busy (go.dev/issue/75804, fixed in Go
# 1.27). That report comes without a failing input; it is counted and shown
# as a flake. A failure that wrote a failing input, or any other failure,
# fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-10s}
minimize=${FUZZMINIMIZE:-3s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
fail=0 flakes=0 n=0
while IFS=: read -r file name; do
  dir=$(dirname "$file")
  n=$((n + 1))
  echo "== $dir $name ($t)"
  if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$t" -fuzzminimizetime "$minimize" "./$dir" >"$log" 2>&1; then
    continue
  fi
  if grep -q "context deadline exceeded" "$log" && ! grep -q "Failing input written" "$log"; then
    echo "   flake: go.dev/issue/75804 (deadline race, no failing input)"
    flakes=$((flakes + 1))
    continue
  fi
  tail -30 "$log"
  fail=$((fail + 1))
done < <(grep -rhoE --include='*_test.go' -H '^func (Fuzz[A-Za-z0-9_]+)' cmd pkg internal | sed -E 's/:func /:/')
echo "fuzz: $n targets, $fail failed, $flakes deadline flakes"
[ "$fail" -eq 0 ]
