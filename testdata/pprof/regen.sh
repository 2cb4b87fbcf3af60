#!/usr/bin/env bash
# Regenerates the pprof fixtures with the real Go runtime profiler
# (runtime/pprof, as `go test -cpuprofile` and net/http/pprof write them)
# and records pprof's own report of each, for the native-reader tests.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
go version > go-version.txt
go build -o /tmp/flameox-pprof-workload ./workload
/tmp/flameox-pprof-workload -cpuprofile cpu.pb.gz -memprofile allocs.pb.gz -for 3s
go tool pprof -top -nodecount=100000 -sample_index=cpu cpu.pb.gz > cpu.top.txt 2>/dev/null
rm -f /tmp/flameox-pprof-workload
