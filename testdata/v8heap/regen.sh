#!/bin/sh
# Regenerates the Node heap profile fixture with the local Node (20.x here):
# node --heap-prof writes Heap.<date>.<time>.<pid>.<tid>.<seq>.heapprofile
# into the working directory; it is renamed to a stable name.
set -eu
cd "$(dirname "$0")"
dir=$(mktemp -d)
(cd "$dir" && node --heap-prof --heap-prof-interval=4096 "$OLDPWD/app.js" >/dev/null)
mv "$dir"/Heap.*.heapprofile node20-app.heapprofile
rmdir "$dir"
node --version > node-version.txt
