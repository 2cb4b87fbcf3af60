#!/usr/bin/env bash
# Regenerates the preview fixtures with real producers. Run from anywhere;
# needs the project venv (FLAMEOX_VENV, default .venv at the repo root)
# with tools/requirements.txt (pyarrow, duckdb)
# installed, plus go, iconv and the shared
# fixture set (FLAMEOX_SHARED_FIXTURES, default /work/shared/fixtures).
# Record tool versions in PROVENANCE.md when they change.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=${FLAMEOX_VENV:-$root/.venv}
py=$venv/bin/python
shared=${FLAMEOX_SHARED_FIXTURES:-/work/shared/fixtures}
cd "$here"
mkdir -p json jsonl csv parquet text

# --- Parquet and CSV from pyarrow (Arrow C++ writer) ---
"$py" - <<'PY'
import datetime, decimal
import pyarrow as pa, pyarrow.parquet as pq, pyarrow.csv as pcsv
rows = 10
t = pa.table({
    "id": pa.array(range(1, rows + 1), pa.int64()),
    "name": pa.array(["alpha", "béta", None, "delta", "ε", "zeta", "eta", None, "iota", "kappa"], pa.string()),
    "score": pa.array([0.5, 1.25, None, float("nan"), -2.0, 1e300, 3.0, 4.5, None, 0.0], pa.float64()),
    "flag": pa.array([True, False, None, True, True, False, False, True, None, True], pa.bool_()),
    "small": pa.array([1, -2, 3, None, 127, -128, 0, 5, 6, 7], pa.int8()),
    "big": pa.array([2**62, -(2**62), 9007199254740993, 0, 1, 2, 3, 4, 5, 6], pa.int64()),
    "ts": pa.array([datetime.datetime(2025, 1, 2, 3, 4, 5, i * 1000, tzinfo=datetime.timezone.utc) for i in range(rows)], pa.timestamp("us", tz="UTC")),
    "day": pa.array([datetime.date(2025, 1, 1 + i) for i in range(rows)], pa.date32()),
    "price": pa.array([decimal.Decimal(f"{i}.{i:02d}") for i in range(rows)], pa.decimal128(10, 2)),
    "tags": pa.array([["a"], [], None, ["b", "c"], ["d"], ["e", None], [], ["f"], ["g", "h", "i"], None], pa.list_(pa.string())),
    "point": pa.array([{"x": i, "y": i / 2} if i % 4 else None for i in range(rows)], pa.struct([("x", pa.int32()), ("y", pa.float64())])),
    "raw": pa.array([bytes([i, 0xff, 0x00]) for i in range(rows)], pa.binary()),
    "kind": pa.array(["x", "y", "x", "x", "y", "z", "x", "y", "z", "x"], pa.string()).dictionary_encode(),
})
pq.write_table(t, "parquet/pyarrow-types.parquet", row_group_size=4, compression="snappy")
flat = t.select(["id", "name", "score", "flag", "small", "ts", "day"])
pq.write_table(flat, "parquet/pyarrow-flat-zstd.parquet", compression="zstd")
pcsv.write_csv(flat, "csv/pyarrow-flat.csv")
PY

# --- DuckDB: Parquet, CSV, JSON Lines and a JSON array from one query ---
"$py" - <<'PY'
import duckdb
q = """SELECT range AS i, 'row ' || range AS label, range * 0.5 AS half,
       range % 3 = 0 AS third, CASE WHEN range % 7 = 0 THEN NULL ELSE range * range END AS sq
       FROM range(1000)"""
con = duckdb.connect()
con.execute(f"COPY ({q}) TO 'parquet/duckdb-range.parquet' (FORMAT parquet, ROW_GROUP_SIZE 256)")
con.execute(f"COPY ({q}) TO 'csv/duckdb-range.csv' (HEADER)")
con.execute(f"COPY ({q} LIMIT 50) TO 'jsonl/duckdb-range.jsonl' (FORMAT json)")
con.execute(f"COPY ({q} LIMIT 50) TO 'json/duckdb-range-array.json' (FORMAT json, ARRAY true)")
PY

# --- CSV from CPython's csv module: quoting, embedded newlines, unicode ---
"$py" - <<'PY'
import csv
with open("csv/python-quoted.csv", "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    w.writerow(["id", "comment", "amount"])
    w.writerow([1, "plain", "1.50"])
    w.writerow([2, 'has "quotes", and a comma', "2.00"])
    w.writerow([3, "spans\ntwo lines", "3.25"])
    w.writerow([4, "ünïcødé ✓", ""])
    w.writerow([5, "", "-0.5"])
PY

# --- JSON from pip (the venv's own package list) ---
"$venv/bin/pip" list --format=json --disable-pip-version-check > json/pip-list.json

# --- JSON Lines from go test -json over a throwaway module ---
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/go.mod" <<'EOF'
module example.com/fixture

go 1.21
EOF
cat > "$tmp/fixture_test.go" <<'EOF'
package fixture

import "testing"

func TestPass(t *testing.T) { t.Log("fine") }
func TestFail(t *testing.T) { t.Error("expected 2, got 3") }
func TestSkip(t *testing.T) { t.Skip("not on this machine") }
EOF
(cd "$tmp" && go test -json -count=1 . > "$here/jsonl/go-test.jsonl" || true)

# --- Text: CPython's import-time log, and Latin-1 bytes from iconv ---
"$py" -X importtime -c pass 2> text/python-importtime.txt
printf 'café crème\nnaïve résumé\nplain ascii\n' | iconv -f UTF-8 -t LATIN1 > text/iconv-latin1.txt

# --- Copies from the shared developer fixture set (byte-for-byte) ---
install -m 0644 "$shared/aiperf/profile_export_aiperf.csv" csv/aiperf-profile_export_aiperf.csv
install -m 0644 "$shared/rocprofv3/kernel_trace.csv" csv/rocprofv3-kernel_trace.csv
install -m 0644 "$shared/aiperf/profile_export_aiperf.json" json/aiperf-profile_export_aiperf.json
install -m 0644 "$shared/aiperf/profile_export.jsonl" jsonl/aiperf-profile_export.jsonl
install -m 0644 "$shared/mooncake/synthetic_trace.jsonl" jsonl/mooncake-synthetic_trace.jsonl
# ...and, for the detection test, the shared files of at most 50 KB that are
# not in the tree elsewhere, under their shared paths (see PROVENANCE.md).
for f in chrome-trace/chrome-141-no-arg-data.json coverage/coveragepy-gold-x_xml-coverage.xml \
  instruments/instruments-16.0-simple-time-profile-deep-copy.txt otlp/logs.json otlp/metrics.json otlp/trace.json \
  pyperf/pyperf-mult_list_py37.json pyperf/pyperf-telco.json pyperf/pyperf-track_memory.json pyperf/pyperformance-py38.json \
  pytest-json/pytest-json-report-sample_report.json \
  rocprofv3/counter_collection.csv rocprofv3/hip_api_stats.csv rocprofv3/memory_copy_trace.csv \
  torch-trace/hta-cpu_only-rank34.pt.trace.json.gz torch-trace/hta-cupti_profiler-a100.trace.json.gz \
  torch-trace/hta-mi250-rocm6.2.kineto.json.gz torch-trace/hta-simple_add-a100.trace.json.gz \
  torch-trace/hta-simple_add.et.json.gz torch-trace/hta-simple_add.trace.json.gz torch-trace/hta-triton_example.json.gz \
  vllm/llm-d-H100-llm-d-1p1d-benchmark_2025-05-13_04-37-51.json vllm/llm-d-H100-vllm-2replicas-benchmark_2025-05-13_04-55-27.json; do
  install -D -m 0644 "$shared/$f" "shared/$f"
done

# --- What the native readers see: Python's json and csv modules, pyarrow ---
# Tests compare the decoders' counts and first records with these.
mkdir -p expected
"$py" - <<'PY'
import base64, csv, decimal, glob, json, math, os
import pyarrow as pa, pyarrow.parquet as pq

def canon(v):
    # The decoders' value conventions: NaN/Inf tagged, bytes tagged,
    # decimals as exact strings, integers beyond 2**53 as strings.
    if isinstance(v, float):
        if math.isnan(v): return {"type": "double", "value": "NaN"}
        if math.isinf(v): return {"type": "double", "value": "Infinity" if v > 0 else "-Infinity"}
        return v
    if isinstance(v, bool) or v is None or isinstance(v, str): return v
    if isinstance(v, int): return str(v) if abs(v) > 2**53 - 1 else v
    if isinstance(v, decimal.Decimal): return str(v)
    if isinstance(v, bytes): return {"type": "bytes", "base64": base64.b64encode(v).decode()}
    if isinstance(v, dict): return {k: canon(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)): return [canon(x) for x in v]
    raise TypeError(type(v))

def dump(name, obj):
    with open(f"expected/{name}.json", "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")

for p in sorted(glob.glob("json/*.json")):
    doc = json.load(open(p, encoding="utf-8-sig"))
    recs = doc if isinstance(doc, list) else next((v for v in doc.values() if isinstance(v, list)), [])
    dump(os.path.basename(p), {"reader": "python json", "records": len(recs), "first": canon(recs[:5])})

for p in sorted(glob.glob("jsonl/*.jsonl")):
    recs = [json.loads(l) for l in open(p, encoding="utf-8") if l.strip()]
    dump(os.path.basename(p), {"reader": "python json", "records": len(recs), "first": canon(recs[:5])})

for p in sorted(glob.glob("csv/*.csv")):
    rows = list(csv.reader(open(p, newline="", encoding="utf-8-sig")))
    rows = [r for r in rows if r]  # the csv module yields [] for blank lines
    dump(os.path.basename(p), {"reader": "python csv", "header": rows[0], "records": len(rows) - 1, "first": rows[1:6]})

def rows_of(t):
    cols = {}
    for name in t.column_names:
        c = t.column(name)
        if pa.types.is_timestamp(c.type) or pa.types.is_date(c.type):
            c = c.cast(pa.int64() if pa.types.is_timestamp(c.type) else pa.int32())
        if pa.types.is_dictionary(c.type):
            c = c.cast(c.type.value_type)
        cols[name] = c.to_pylist()
    return [{k: canon(cols[k][i]) for k in cols} for i in range(t.num_rows)]

for p in sorted(glob.glob("parquet/*.parquet")):
    f = pq.ParquetFile(p)
    md = f.metadata
    cols = [{"path": md.schema.column(i).path, "physical_type": md.schema.column(i).physical_type}
            for i in range(md.num_columns)]
    dump(os.path.basename(p), {"reader": "pyarrow " + pa.__version__, "num_rows": md.num_rows,
        "num_row_groups": md.num_row_groups, "created_by": md.created_by, "columns": cols,
        "first": rows_of(f.read_row_group(0).slice(0, 5))})

for p in sorted(glob.glob("text/*")):
    data = open(p, "rb").read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"": lines.pop()
    dump(os.path.basename(p), {"reader": "python bytes.split", "lines": len(lines), "bytes": len(data)})
PY

sha256sum json/* jsonl/* csv/* parquet/* text/* shared/*/* > SHA256SUMS
