#!/bin/sh
# Regenerates the OTLP fixtures (see PROVENANCE.md): the bytes the
# OpenTelemetry Python SDK's OTLP/HTTP exporter (protobuf) and the
# OpenTelemetry JS SDK's OTLP/HTTP exporter (JSON) post to a loopback
# receiver, and reference.json: per-name span counts and durations read
# with the opentelemetry-proto classes (protobuf) and Python's json
# module (JSON). Pins: tools/requirements-regen.txt and the npm versions
# below.
set -eu
cd "$(dirname "$0")"
py="${FLAMEOX_VENV:-../../.venv}/bin/python"
"$py" regen.py
js=$(mktemp -d)
trap 'rm -rf "$js"' EXIT
(cd "$js" && npm install --silent --no-audit --no-fund @opentelemetry/sdk-trace-base@2.12.1 @opentelemetry/resources@2.12.1 \
	@opentelemetry/api@1.9.1 @opentelemetry/exporter-trace-otlp-http@0.223.1 >/dev/null)
ln -sfn "$js/node_modules" node_modules
node regen-js.mjs
rm node_modules
"$py" reference.py js-sdk.json schema-mapping.json shared-example.json
