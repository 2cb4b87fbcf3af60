"""Builds the hostile coverage.py data files from the real branch.coverage
and contexts.coverage fixtures (../), with Python's sqlite3 module.

Each file keeps coverage.py's schema 7 and changes one thing an attacker
controls. Run: python3 regen.py (from any directory).
"""

import os
import shutil
import sqlite3

here = os.path.dirname(os.path.abspath(__file__))
src = os.path.dirname(here)


def derive(name, fixture, *stmts):
    out = os.path.join(here, name)
    if os.path.exists(out):
        os.remove(out)
    shutil.copyfile(os.path.join(src, fixture), out)
    db = sqlite3.connect(out)
    for s in stmts:
        db.execute(s)
    db.commit()
    db.execute("VACUUM")
    db.close()


# 500 measured files, each with one arc at line 9,999,999: the highest line
# the default max_line_number allows. A dense per-file line index takes
# 1.25 MB per file for it.
files = 500
derive(
    "arcs-high-lines.coverage",
    "branch.coverage",
    "DELETE FROM arc",
    "DELETE FROM tracer",
    "DELETE FROM file",
    *[f"INSERT INTO file (id, path) VALUES ({i}, '/p/{i}.py')" for i in range(1, files + 1)],
    *[f"INSERT INTO arc (file_id, context_id, fromno, tono) VALUES ({i}, 1, 9999999, -9999999)" for i in range(1, files + 1)],
)

# file.path as a virtual generated column: a 400 MB string SQLite computes
# on every read, from a file of a few kilobytes. coverage.py never writes
# a generated column.
derive(
    "generated-path.coverage",
    "branch.coverage",
    "DELETE FROM arc",
    "DELETE FROM tracer",
    "DROP TABLE file",
    "CREATE TABLE file (id integer primary key, path text GENERATED ALWAYS AS (printf('%.*c', 400000000, 'x')) VIRTUAL)",
    "INSERT INTO file (id) VALUES (1)",
)

# A path and a context that are not UTF-8 (coverage.py stores str values,
# always UTF-8): byte 0xff inside a TEXT value.
derive(
    "bad-utf8-path.coverage",
    "branch.coverage",
    "UPDATE file SET path = CAST(x'2f746d702f61ff2e7079' AS TEXT) WHERE id = 2",
)
derive(
    "bad-utf8-context.coverage",
    "contexts.coverage",
    "UPDATE context SET context = CAST(x'746573745fff' AS TEXT) WHERE id = (SELECT max(id) FROM context)",
)
