#!/usr/bin/env bash
# Regenerates the perf fixtures in this directory with the real tools:
# builds hot.c and tmpl.cc, records them with `perf record -g`, and stores
# the native perf.data files, their `perf script` text, `perf report`
# self-sample tables, and folded stacks written by an independent awk
# collapser (../collapsed/). Needs perf, gcc, g++ and awk; run as a user
# allowed to profile (root, or kernel.perf_event_paranoid <= 2).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# The binaries live at a fixed path, so perf.data names the same files on
# every regeneration.
bin=/tmp/flameox-perf-fixture
mkdir -p "$bin"
cflags=(-O1 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -g)
gcc "${cflags[@]}" -o "$bin/flameox-hot" "$here/hot.c"
g++ "${cflags[@]}" -o "$bin/flameox-tmpl" "$here/tmpl.cc"

record() { # name [perf record options] -- argv...
	local name=$1
	shift
	local opts=()
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	rm -f "$here/$name.perf.data" # perf record would keep the old one as .old
	perf record -q -g -F 999 "${opts[@]}" -o "$here/$name.perf.data" -- "$@" >/dev/null
	# --header on one fixture so the parser meets a modern header block.
	local hdr=()
	[ "$name" = tmpl ] && hdr=(--header)
	perf script "${hdr[@]}" -i "$here/$name.perf.data" >"$here/$name.perf.txt"
	perf report -i "$here/$name.perf.data" --stdio --no-children -g none \
		-F overhead,sample,sym >"$here/$name.report.txt" 2>/dev/null
	[ "$name" = two ] || collapse <"$here/$name.perf.txt" >"$here/../collapsed/$name.folded"
}

# collapse folds perf script text into `root;...;leaf count` lines. It is
# deliberately independent of the Go parser: the cross-check compares them.
collapse() {
	awk '
	function flush() { if (n > 0) { s = st[n]; for (i = n - 1; i >= 1; i--) s = s ";" st[i]; c[s]++ } n = 0; insample = 0 }
	/^#/ { next }
	/^$/ { flush(); next }
	/^[ \t]/ {
		line = $0
		sub(/^[ \t]+[0-9a-f]+ /, "", line)          # indentation and address
		sub(/ \([^()]*(\([^()]*\))?[^()]*\)$/, "", line) # the module group
		sub(/\+0x[0-9a-f]+$/, "", line)               # symbol offset
		st[++n] = line
		next
	}
	{ flush(); insample = 1 }
	END { flush(); for (k in c) print k, c[k] }' | LC_ALL=C sort
}

record hot -- "$bin/flameox-hot" 30
record tmpl -- "$bin/flameox-tmpl" 100
# Two events in one recording: each must get its own tables.
record two -e cpu-clock,task-clock -F 499 -- "$bin/flameox-hot" 5
# Source lines: perf script with srcline, with and without callchains,
# and perf report's samples per symbol and srcline as the reference.
gcc "${cflags[@]}" -o "$bin/flameox-lines" "$here/lines.c"
# Committed too: the srcline tests install it at $bin (its build id is the
# one the recordings name).
mkdir -p "$here/bin" && cp "$bin/flameox-lines" "$here/bin/flameox-lines"
srcline=comm,pid,tid,time,event,ip,sym,dso,srcline
for v in lines:-g flat:; do
	name=${v%%:*}
	rm -f "$here/$name.perf.data"
	perf record -q ${v#*:} -F 499 -o "$here/$name.perf.data" -- "$bin/flameox-lines" 100000000 >/dev/null
	perf script -i "$here/$name.perf.data" -F "$srcline" >"$here/$name.srcline.perf.txt"
	perf report -i "$here/$name.perf.data" --stdio --no-children -g none --sort sym,srcline \
		-F sample,sym,srcline -t '|' >"$here/$name.srcline.report.txt" 2>/dev/null
done
# Counter records, no samples: perf-data must say so, not parse them.
perf stat record -o "$here/stat.perf.data" -- true

# Shared fixtures from the catalogue (see PROVENANCE.md).
shared=${FLAMEOX_SHARED:-$here/../../../shared}
if [ -d "$shared/fixtures/linux-perf" ]; then
	cp "$shared/fixtures/linux-perf/simple-with-header.linux-perf.txt" "$shared/fixtures/linux-perf/rust-mangled.linux-perf.txt" "$here/"
	cp "$shared/fixtures/collapsed-stacks/perf-vertx-stacks-01-collapsed-all.txt" "$here/../collapsed/"
	collapse <"$here/simple-with-header.linux-perf.txt" >"$here/../collapsed/simple-with-header.folded"
fi
chmod 0644 "$here"/*.perf.data
perf --version >"$here/perf-version.txt"
ls -l "$here" "$here/../collapsed"
