"""Convert an Nsight Systems SQLite export table-for-table into a parquetdir
(one <TABLE>.parquet per table), the shape `nsys export --type parquetdir`
writes. Column types follow the SQLite declarations (INTEGER -> int64, REAL
-> double, TEXT -> string, anything else -> binary); NULLs stay null. This
makes *converted shape fixtures*, not real nsys parquetdir exports."""
import os
import sqlite3
import sys

import pyarrow as pa
import pyarrow.parquet as pq

TYPES = {"INTEGER": pa.int64(), "REAL": pa.float64(), "TEXT": pa.string()}


def convert(src, dst, only=None):
    con = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    os.makedirs(dst, exist_ok=True)
    names = [r[0] for r in con.execute("select name from sqlite_master where type='table' order by name")]
    for name in names:
        if only is not None and name not in only:
            continue
        cols = [(r[1], r[2].upper()) for r in con.execute(f'pragma table_info("{name}")')]
        rows = con.execute(f'select * from "{name}"').fetchall()
        arrays = []
        for i, (_, decl) in enumerate(cols):
            typ = TYPES.get(decl, pa.binary())
            vals = [r[i] for r in rows]
            if typ == pa.binary():
                vals = [None if v is None else (v if isinstance(v, bytes) else str(v).encode()) for v in vals]
            arrays.append(pa.array(vals, type=typ))
        schema = pa.schema([pa.field(c, a.type) for (c, _), a in zip(cols, arrays)])
        pq.write_table(pa.Table.from_arrays(arrays, schema=schema), os.path.join(dst, name + ".parquet"))


if __name__ == "__main__":
    only = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else None
    convert(sys.argv[1], sys.argv[2], only)
