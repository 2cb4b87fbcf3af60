#!/bin/sh
# Regenerates the Perfetto fixtures (see PROVENANCE.md). Needs Debian's
# chromium and the perfetto PyPI package (tools/requirements.txt).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=${FLAMEOX_VENV:-$root/.venv}/bin/python
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cats=toplevel,toplevel.flow
# Chromium's startup trace, in Perfetto protobuf and in Chrome JSON.
chromium --headless=new --no-sandbox --user-data-dir="$tmp/p1" --trace-startup=$cats \
	--trace-startup-format=proto --trace-startup-file="$tmp/chromium.pftrace" \
	--trace-startup-duration=1 about:blank >/dev/null 2>&1
gzip -9 -n -c "$tmp/chromium.pftrace" > "$here/chromium-startup.pftrace.gz"
# The shared Android system trace, gzip'd (see PROVENANCE.md).
gzip -9 -n -c /work/shared/fixtures/perfetto/nowinandroid-android13-perfetto-v25.perfetto-trace \
	> "$here/android13-system.perfetto-trace.gz"
# JSON is ~5x larger: the toplevel category only.
chromium --headless=new --no-sandbox --user-data-dir="$tmp/p2" --trace-startup=toplevel \
	--trace-startup-format=json --trace-startup-file="$tmp/chromium.json" \
	--trace-startup-duration=1 about:blank >/dev/null 2>&1
gzip -9 -n -c "$tmp/chromium.json" > "$root/testdata/chrome-trace/chromium-startup.json.gz"
# The perfetto package's own trace builder: counters, flows, interning,
# sequence flags, clocks, compressed packets, and the crafted negatives.
"$py" "$here/build.py" "$here"
"$py" "$here/gennames.py" > "$root/internal/formats/perfetto/names.go"
gofmt -w "$root/internal/formats/perfetto/names.go"
