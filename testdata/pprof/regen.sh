#!/usr/bin/env bash
# Regenerates the pprof fixtures with the real Go runtime profiler
# (runtime/pprof, as `go test -cpuprofile` and net/http/pprof write them)
# and records pprof's own report of the CPU profile.
#
# The decoder's reference tests do not read these copies: they run the
# same `go test` on bench/ during the test and compare with `go tool pprof`
# live. The copies seed the fuzzer and the fixture tests.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
go version > go-version.txt
go build -o /tmp/flameox-pprof-workload ./workload
/tmp/flameox-pprof-workload -cpuprofile cpu.pb.gz -memprofile allocs.pb.gz -for 3s
go tool pprof -top -nodecount=100000 -sample_index=cpu cpu.pb.gz > cpu.top.txt 2>/dev/null
rm -f /tmp/flameox-pprof-workload

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd bench && GOFLAGS= GOWORK=off PPROFBENCH_GOROUTINES="$tmp/goroutine.pprof" go test -run TestGoroutineProfile \
	-bench . -benchtime 1s -memprofilerate 1 -cpuprofile "$tmp/cpu.pprof" -memprofile "$tmp/mem.pprof" \
	-blockprofile "$tmp/block.pprof" -mutexprofile "$tmp/mutex.pprof" -o "$tmp/bench.test")
cp "$tmp/cpu.pprof" cpu-labels.pb.gz
cp "$tmp/mem.pprof" heap-allocs.pb.gz
cp "$tmp/block.pprof" block.pb.gz
cp "$tmp/mutex.pprof" mutex.pb.gz
cp "$tmp/goroutine.pprof" goroutine.pb.gz
