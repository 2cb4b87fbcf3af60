#!/usr/bin/env bash
# Rebuilds the schema-built xctrace export fixtures (Apple's xctrace runs
# only on macOS with Xcode, so no producer runs here; see PROVENANCE.md)
# and copies the Instruments negative cases from the shared fixtures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/build_fixtures.py"
if [ -d /work/shared/fixtures/instruments ]; then
  mkdir -p "$here/negative"
  cp /work/shared/fixtures/instruments/* "$here/negative/"
fi
