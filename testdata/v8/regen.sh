#!/usr/bin/env bash
# Regenerates the V8 CPU profile fixtures with the real node on this machine.
# Usage: testdata/v8/regen.sh   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")"
rm -rf out && mkdir out
node --cpu-prof --cpu-prof-dir=out --cpu-prof-interval 500 ../../examples/hotspot/app.js 3 >/dev/null
mv out/CPU.*.cpuprofile hotspot.cpuprofile
node --cpu-prof --cpu-prof-dir=out --cpu-prof-interval 500 recursive.js >/dev/null
# Node names profiles CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile:
# thread 0 is the main thread, thread 1 the worker.
mv out/CPU.*.*.*.0.*.cpuprofile recursive-main.cpuprofile
mv out/CPU.*.*.*.1.*.cpuprofile recursive-worker.cpuprofile
node --cpu-prof --cpu-prof-dir=out --cpu-prof-interval 500 fib.js >/dev/null
mv out/CPU.*.cpuprofile fib.cpuprofile
rmdir out
# The reference weights, computed from the samples by an independent script.
node cum.js fib.cpuprofile > fib.cum.json
# The reference lines (positionTicks per function and line), counted by
# Python from the JSON alone, for these profiles and testdata/diff's.
python3 lines.py *.cpuprofile ../diff/*.cpuprofile > lines.ref.json
# The two shared fixtures are copied, not regenerated (see PROVENANCE.md).
echo "node $(node --version)" > VERSION
