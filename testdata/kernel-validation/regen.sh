#!/bin/sh
# Regenerates the kernel validation fixtures with flameox's own Python SDK
# (sdk/python/flameox_validate.py) from validate_demo.py. Python >= 3.8,
# standard library only (numpy is used when importable).
set -eu
cd "$(dirname "$0")"
rm -f demo.kernel-validation.jsonl demo.console.txt
PYTHONPATH=../../sdk/python PYTHONDONTWRITEBYTECODE=1 "${PYTHON:-python3}" validate_demo.py demo.kernel-validation.jsonl demo.console.txt
