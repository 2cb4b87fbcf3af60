#!/bin/sh
# Regenerates the OTLP fixtures: the bytes the OpenTelemetry Python SDK's
# OTLP/HTTP exporter posts to a loopback receiver, and reference.json (per
# name span counts and durations read with the opentelemetry-proto classes).
# Pins: tools/requirements-regen.txt.
set -eu
cd "$(dirname "$0")"
"${FLAMEOX_VENV:-../../.venv}/bin/python" regen.py
