#!/usr/bin/env bash
# Regenerates the differential-profile fixtures with the real node on this
# machine: the same workload, with parse made 3x slower in slow.cpuprofile.
# Usage: testdata/diff/regen.sh   (from anywhere)
set -euo pipefail
cd "$(dirname "$0")"
rm -rf out && mkdir out
node --cpu-prof --cpu-prof-dir=out --cpu-prof-name=base.cpuprofile --cpu-prof-interval 1000 work.js 1 >/dev/null
node --cpu-prof --cpu-prof-dir=out --cpu-prof-name=slow.cpuprofile --cpu-prof-interval 1000 work.js 3 >/dev/null
mv out/base.cpuprofile out/slow.cpuprofile .
rmdir out
echo "node $(node --version)" > VERSION
