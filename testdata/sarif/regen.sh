#!/usr/bin/env bash
# Regenerates the real-producer SARIF fixtures: gosec over gosec/src and
# ESLint (with Microsoft's SARIF formatter) over eslint/src. Each producer
# also writes its own JSON report, which the tests compare against.
#
# The sources are copied to fixed directories under /tmp first, so the
# paths inside the logs do not depend on where this repository is checked
# out; tests pass those directories as the explicit source_root.
#
# Needs: gosec v2.30.0 (go install github.com/securego/gosec/v2/cmd/gosec@v2.30.0),
# node + npm (eslint@10.15.0, @microsoft/eslint-formatter-sarif@3.1.0 are
# installed into .cache/sarif-npm at the repository root).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
GOSEC=${GOSEC:-$(command -v gosec || echo "$(go env GOPATH)/bin/gosec")}
work=/tmp/flameox-sarif-fixture

rm -rf "$work"
mkdir -p "$work"
cp -r "$here/gosec/src" "$work/gosec"
cp -r "$here/eslint/src" "$work/eslint"

# gosec exits 1 when it finds issues; that is the expected outcome here.
(cd "$work/gosec" && "$GOSEC" -quiet -fmt sarif -out "$here/gosec.sarif" ./... || [ $? -eq 1 ])
(cd "$work/gosec" && "$GOSEC" -quiet -fmt json -out "$here/gosec.json" ./... || [ $? -eq 1 ])

npmdir="$repo/.cache/sarif-npm"
mkdir -p "$npmdir"
npm install --silent --no-audit --no-fund --prefix "$npmdir" eslint@10.15.0 @microsoft/eslint-formatter-sarif@3.1.0
eslint="$npmdir/node_modules/.bin/eslint"
(cd "$work/eslint" && "$eslint" -f "$npmdir/node_modules/@microsoft/eslint-formatter-sarif/sarif.js" -o "$here/eslint.sarif" . || [ $? -eq 1 ])
(cd "$work/eslint" && "$eslint" -f json -o "$here/eslint.json" . || [ $? -eq 1 ])
"$eslint" --version > "$here/eslint.version"
echo "gosec module v2.30.0" > "$here/gosec.version"

# The shared developer fixtures, copied byte for byte (see PROVENANCE.md).
shared=${FLAMEOX_SHARED_FIXTURES:-$repo/../shared/fixtures}
if [ -d "$shared/sarif" ]; then
  cp "$shared/sarif/gitleaks-sarif_simple.sarif" "$shared/sarif/sarif-sdk-clang-RealLog.xml.sarif" \
     "$shared/sarif/binskim-clang.execstack.sarif" "$here/"
  chmod u+w "$here"/*.sarif
fi
