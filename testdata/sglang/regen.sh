#!/usr/bin/env bash
# Regenerates testdata/sglang/bench_serving.jsonl with SGLang's own
# bench_serving (sglang 0.5.23 from PyPI), run offline against the loopback
# mock server in ../inference: two runs appended to one file as
# bench_serving does, the first with --output-details (per-request arrays),
# the second without, at a finite request rate.
#
#   SGLANG_VENV=/tmp/aiperf-venv testdata/sglang/regen.sh
#
# SGLANG_VENV holds `pip install --no-deps sglang==0.5.23` plus what
# sglang.benchmark.serving imports (aiohttp, msgspec, numpy, orjson,
# requests, tqdm, transformers, pybase64, torch, torchvision, IPython,
# apache-tvm-ffi, compressed-tensors, gguf): several GB, so regen-only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${SGLANG_VENV:?set SGLANG_VENV to a venv where sglang.benchmark.serving imports}
port=${PORT:-18741}
work=$(mktemp -d)
trap 'kill $srv 2>/dev/null || true; rm -rf "$work"' EXIT
"$venv/bin/python" "$here/../inference/mock_server.py" "$port" &
srv=$!
"$venv/bin/python" "$here/../inference/make_tokenizer.py" "$work/tok"
sleep 1
bench() {
  (cd "$work" && "$venv/bin/python" -m sglang.benchmark.serving --backend sglang-oai \
    --base-url "http://127.0.0.1:$port" --model mock-model --tokenizer "$work/tok" \
    --dataset-name random-ids --random-input-len 32 --random-output-len 24 \
    --num-prompts 30 --max-concurrency 4 --seed 1 --output-file "$work/out.jsonl" "$@") >>"$work/log.txt" 2>&1 ||
    { tail -40 "$work/log.txt"; exit 1; }
}
bench --output-details
bench --request-rate 50
cp "$work/out.jsonl" "$here/bench_serving.jsonl"
echo "regenerated $here/bench_serving.jsonl"
