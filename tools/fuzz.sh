#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a time each, one after the
# other, and prints one line per target: package, target, executions, new
# interesting inputs, result.
# Usage: tools/fuzz.sh [FUZZTIME]   (default 10s; `make fuzz-long` passes 10m)
#
# FUZZONLY (an extended regex) keeps the targets whose "dir name" matches,
# e.g. FUZZONLY='perfscript|pstats' tools/fuzz.sh 30s.
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
only=${FUZZONLY:-}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
fail=0 flakes=0 n=0
# stats prints "execs N, new interesting M" from the coordinator's last
# progress line ("fuzz: elapsed: 3s, execs: 1234 (411/sec), new interesting: 5 (total: 9)").
stats() {
  local last
  last=$(grep -E '^fuzz: elapsed: .*execs: ' "$log" | tail -1 || true)
  if [ -z "$last" ]; then
    echo "execs ?, new interesting ?"
    return
  fi
  sed -E 's/.*execs: ([0-9]+) .*new interesting: ([0-9]+).*/execs \1, new interesting \2/' <<<"$last"
}
while IFS=: read -r file name; do
  dir=$(dirname "$file")
  if [ -n "$only" ] && ! grep -qE "$only" <<<"$dir $name"; then
    continue
  fi
  n=$((n + 1))
  echo "== $dir $name ($t)"
  result=ok
  if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$t" -fuzzminimizetime "$minimize" "./$dir" >"$log" 2>&1; then
    if grep -q "context deadline exceeded" "$log" && ! grep -q "Failing input written" "$log"; then
      result="flake (go.dev/issue/75804: deadline race, no failing input)"
      flakes=$((flakes + 1))
    else
      tail -30 "$log"
      result=FAILED
      fail=$((fail + 1))
    fi
  fi
  printf 'fuzz-target %s %s: %s, %s\n' "$dir" "$name" "$(stats)" "$result"
done < <(grep -rhoE --include='*_test.go' -H '^func (Fuzz[A-Za-z0-9_]+)' cmd pkg internal | sed -E 's/:func /:/')
echo "fuzz: $n targets, $fail failed, $flakes deadline flakes"
[ "$fail" -eq 0 ]
