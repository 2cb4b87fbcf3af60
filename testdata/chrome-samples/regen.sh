#!/usr/bin/env bash
# Regenerates chromium-headless-cpu-profiler.json: Debian's chromium, headless,
# tracing V8's sampling profiler from startup while page.html burns CPU.
# The tracing session ends with --trace-startup-duration; chromium is then
# stopped by timeout (its exit status is not the trace's).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
timeout 30 chromium --headless=new --no-sandbox --disable-gpu --user-data-dir="$work/profile" \
  --trace-startup=-*,disabled-by-default-v8.cpu_profiler \
  --trace-startup-file="$work/trace.json" --trace-startup-format=json --trace-startup-duration=2 \
  "file://$here/page.html" >"$work/log.txt" 2>&1 || true
test -s "$work/trace.json" || { cat "$work/log.txt"; exit 1; }
cp "$work/trace.json" "$here/chromium-headless-cpu-profiler.json"
chromium --version >"$here/chromium-version.txt"
