#!/bin/sh
# Regenerates fib.cpuprofile: a V8 CPU profile written by Node's own
# profiler (--cpu-prof) for a short recursive workload. The preserve tests
# only need real native bytes; they do not decode them.
set -eu
cd "$(dirname "$0")"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
node --cpu-prof --cpu-prof-dir="$out" --cpu-prof-interval=1000 -e '
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let s = 0;
for (let i = 0; i < 30; i++) s += fib(22);
console.log(s);
' >/dev/null
mv "$out"/*.cpuprofile fib.cpuprofile
chmod 644 fib.cpuprofile
echo "regenerated with node $(node --version); update PROVENANCE.md"
