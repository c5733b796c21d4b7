"""Compare `tracemux sql` on a trace with DuckDB on `tracemux convert --to
parquet` of the same trace: the same queries, result sets compared as
multisets of rows (values normalised: integers, text, floats to 9
significant digits).

Usage: check_sql.py TRACEMUX TRACE PARQUET_DIR NAME
Prints `NAME: OK (N queries, R rows)` or `NAME: FAIL ...` lines.
"""
import json
import os
import subprocess
import sys

import duckdb
import pyarrow.parquet as pq

tm, trace, pqdir, name = sys.argv[1:5]

con = duckdb.connect()
tables = {}
for f in sorted(os.listdir(pqdir)):
    if f.endswith(".parquet"):
        t = f[: -len(".parquet")]
        path = os.path.join(pqdir, f)
        con.execute(f"CREATE VIEW \"{t}\" AS SELECT * FROM read_parquet('{path}')")
        tables[t] = pq.read_schema(path)

SCALAR = ("int", "uint", "string", "bool", "double", "float", "dictionary")


def scalar_cols(schema):
    return [
        f.name
        for f in schema
        if str(f.type).startswith(SCALAR) and not str(f.type).startswith("dictionary<values=binary")
    ]


def norm(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        return float(f"{v:.9g}")
    if hasattr(v, "as_integer_ratio") and not isinstance(v, int):  # Decimal
        return int(v) if v == int(v) else float(f"{float(v):.9g}")
    return v


def rows_tracemux(q):
    out = subprocess.run(
        [tm, "sql", "--format", "json", trace, "-e", q],
        capture_output=True,
        check=True,
    ).stdout.decode()
    rows = []
    for line in out.splitlines():
        d = json.loads(line)
        rows.append(d)
    return rows


def rows_duckdb(q):
    cur = con.execute(q)
    cols = [c[0] for c in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def canon(rows, cols):
    # JSON lines leave nulls out
    return sorted(repr(tuple(norm(r.get(c)) for c in cols)) for r in rows)


queries = [
    "SELECT count(*) AS n FROM events",
    "SELECT system, event, count(*) AS n FROM events GROUP BY 1, 2",
    "SELECT cpu, count(*) AS n, min(ts) AS lo, max(ts) AS hi FROM events GROUP BY 1",
    "SELECT pid, comm, count(*) AS n FROM events GROUP BY 1, 2",
    "SELECT count(*) AS n, sum(count) AS lost FROM lost",
]
# the largest class tables: every scalar column of every row, and a
# filtered aggregate (the filters the scan takes: ts, cpu)
sizes = sorted(
    ((pq.ParquetFile(os.path.join(pqdir, t + ".parquet")).metadata.num_rows, t) for t in tables if "__" in t),
    reverse=True,
)
for n, t in sizes[:3]:
    cols = ", ".join(f'"{c}"' for c in scalar_cols(tables[t]))
    queries.append(f'SELECT {cols} FROM "{t}"')
    mid = con.execute(f'SELECT quantile_disc(ts, 0.5) FROM "{t}"').fetchone()[0]
    queries.append(
        f'SELECT cpu, count(*) AS n, sum(pid) AS p FROM "{t}" WHERE ts >= {mid} AND cpu IN (0, 1) GROUP BY cpu'
    )

fails = 0
total_rows = 0
for q in queries:
    try:
        a = rows_tracemux(q)
    except subprocess.CalledProcessError as e:
        print(f"{name}: FAIL tracemux: {q}: {e.stderr.decode().strip()[:200]}")
        fails += 1
        continue
    b = rows_duckdb(q)
    cols = list(b[0].keys()) if b else []
    if canon(a, cols) != canon(b, cols):
        ca, cb = canon(a, cols), canon(b, cols)
        diff = next((x for x in zip(ca, cb) if x[0] != x[1]), (len(ca), len(cb)))
        print(f"{name}: FAIL {q[:100]}: {len(a)} vs {len(b)} rows; first difference {diff}")
        fails += 1
    total_rows += len(b)
if not fails:
    print(f"{name}: OK ({len(queries)} queries, {total_rows} rows compared)")
sys.exit(1 if fails else 0)
