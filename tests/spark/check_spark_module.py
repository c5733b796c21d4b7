"""tracemux.spark on PySpark `local[2,4]` (a failed task is retried up to
3 times): convert on the executors, kills and retries, and the dataset
read back by Spark, DuckDB and polars.

Usage: check_spark_module.py TRACEMUX OUT PATH...   (called by
tests/spark/check-spark.sh with the fixtures of tests/spark/module-fixtures.txt)

1. `tracemux.spark.convert` of the traces, plus a damaged copy of the
   first (cut in half) and a file that is no trace, into dataset A.
2. The same into B, a worker killed (SIGKILL) after one trace is staged and
   before it is published, and into C, killed after a trace is published
   (each task's first attempt): Spark retries the tasks.
3. Per table and trace, the rows Spark reads from A, B and C are equal, and
   equal the events `tracemux report --json` prints of each trace (by
   class; `events` has them all); DuckDB and polars read the same rows
   from A with no options; a cross-trace GROUP BY gives the same rows in
   Spark, DuckDB and polars, and in `tracemux sql` over each trace
   (TRACEMUX_SQL: a tracemux with the feature sql); no staging is left and `_SUCCESS` is there.
Prints what it checked (stored as tests/fixtures/spark/spark-module-result.txt);
exits 1 on a failed check.
"""

import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import duckdb
import polars as pl
from pyspark.sql import SparkSession

from tracemux import spark as tms

tm, out = sys.argv[1:3]
paths = sys.argv[3:]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


tmp = tempfile.mkdtemp(prefix="tms-")
# a damaged copy of the first trace (cut in half) and a file that is no trace
first = paths[0]
damaged = os.path.join(tmp, "damaged", "trace.dat")
os.makedirs(os.path.dirname(damaged))
with open(first, "rb") as f:
    data = f.read()
with open(damaged, "wb") as f:
    f.write(data[: len(data) // 2])
junk = os.path.join(tmp, "junk.dat")
with open(junk, "w") as f:
    f.write("not a trace\n")
inputs = paths + [damaged, junk]
names = tms.trace_names(inputs)

# the executors' Python is this one, where tracemux is installed
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
spark = (
    SparkSession.builder.master("local[2,4]")
    .appName("tracemux-spark-module")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "4")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("OFF")


def table_of(system, event):
    """tracemux's table name of a class."""
    t = f"{system or 'none'}__{event}"
    return re.sub(r"[^A-Za-z0-9_.-]", "_", t)


def expected(path):
    """(table, count) of the events `report --json` prints."""
    c = collections.Counter()
    p = subprocess.run([tm, "report", "--json", path], capture_output=True, text=True)
    # exit status 1: read around damage (the hand-built LTT trace's unknown facility)
    c["damaged"] = int(p.returncode == 1)
    for line in p.stdout.splitlines():
        r = json.loads(line)
        if r.get("type") == "event":
            # an event of no known class (LTT's unknown facility) is in `events` only
            if r.get("event") is not None:
                c[table_of(r.get("system"), r.get("event"))] += 1
            c["events"] += 1
        elif r.get("type") == "lost":
            c["lost"] += 1
    return c


def spark_rows(ds):
    rows = {}
    for table in sorted(os.listdir(ds)):
        if table.startswith(("_", ".")) or not os.path.isdir(os.path.join(ds, table)):
            continue
        df = tms.read(spark, ds, table)
        for r in df.groupBy("trace").count().collect():
            rows[(table, r["trace"])] = r["count"]
    return rows


results = {}
for label, kill in (("A", None), ("B", "staged"), ("C", "published")):
    ds = os.path.join(tmp, label)
    summary = tms.convert(spark, inputs, ds, file_size=1 << 20, _kill_at=kill)
    s = {r["trace"]: r for r in summary.collect()}
    results[label] = (ds, s, spark_rows(ds))
    check(os.path.exists(os.path.join(ds, "_SUCCESS")), f"{label}: _SUCCESS written")
    check(
        not os.path.exists(os.path.join(ds, "_staging")) and not os.path.exists(os.path.join(ds, "_traces")),
        f"{label}: no staging left",
    )
    check(sorted(s) == sorted(names), f"{label}: one summary row per trace ({len(s)})")

dsA, summA, rowsA = results["A"]
for label in ("B", "C"):
    check(results[label][2] == rowsA, f"{label} (a worker killed, {dict(B='after staging', C='after publishing')[label]}): the same rows as A per table and trace ({len(rowsA)} table-trace pairs)")
    st = {t: (r["status"], r["events"]) for t, r in results[label][1].items()}
    check(st == {t: (r["status"], r["events"]) for t, r in summA.items()}, f"{label}: the same summary as A")

print("summary (A):")
for n in names:
    r = summA[n]
    err = (r["error"] or "").splitlines()[0] if r["error"] else ""
    # the temporary folders' names (this run's and check-spark.sh's) as
    # TMP, so that the stored result changes only when a result does
    err = re.sub(re.escape(tempfile.gettempdir()) + r"/(tmp\.|tms-)\w+", "TMP", err)[:80]
    print(f"  {n}: {r['status']} events={r['events']} damaged={r['damaged']} {err}")
check(summA[names[-1]]["status"] == "failed", "the file that is no trace: a failed row, not a failed job")
check(summA[names[-2]]["status"] == "damaged", "the damaged copy: converted around its damage, reported")
want = {n: ("damaged" if expected(p)["damaged"] else "ok") for n, p in zip(names[:-2], paths)}
check(
    all(summA[n]["status"] == want[n] for n in names[:-2]),
    f"every fixture ok, or damaged where report says so ({[n for n in want if want[n] != 'ok']})",
)

# rows per table and trace against report --json
bad = 0
for n, p in zip(names[:-2], paths):
    exp = expected(p)
    got = {t: c for (t, tr), c in rowsA.items() if tr == n}
    if {t: c for t, c in exp.items() if t != "damaged" and c} != got:
        bad += 1
        print(f"  {n}: report --json {dict(exp)} dataset {got}")
    classes = len([t for t in exp if t not in ("events", "lost", "damaged")])
    check(summA[n]["events"] == exp["events"], f"{n}: {exp['events']} events, {classes} classes, {exp['lost']} losses, as report --json")
check(bad == 0, "rows per table and trace equal report --json's for every fixture")

# DuckDB and polars, no options (each table has one schema in all its files)
duck = {}
pol = {}
for table in sorted({t for t, _ in rowsA}):
    glob = os.path.join(dsA, table, "*.parquet")
    for tr, c in duckdb.sql(f"SELECT trace, count(*) FROM read_parquet('{glob}') GROUP BY 1").fetchall():
        duck[(table, tr)] = c
    df = pl.scan_parquet(glob).group_by("trace").len().collect()
    for tr, c in df.iter_rows():
        pol[(table, tr)] = c
check(duck == rowsA, f"DuckDB reads the rows Spark reads ({sum(duck.values())} rows)")
check(pol == rowsA, f"polars reads the rows Spark reads ({sum(pol.values())} rows)")

# schemas: one per table across the fixtures
for table in ("sched__sched_switch", "events"):
    ty = dict(tms.read(spark, dsA, table).dtypes)
    check(ty.get("trace") == "string" and ty.get("host") == "string", f"{table}: trace and host are text columns")
ty = dict(tms.read(spark, dsA, "sched__sched_switch").dtypes)
check(ty.get("prev_state") == "bigint", f"sched__sched_switch.prev_state is {ty.get('prev_state')} (32-bit and 64-bit kernels merged)")

# a cross-trace GROUP BY in all three
q = "SELECT trace, count(*) AS n, count(DISTINCT next_pid) AS pids, min(ts) AS first FROM sw GROUP BY trace ORDER BY trace"
tms.read(spark, dsA, "sched__sched_switch").createOrReplaceTempView("sw")
g_spark = [tuple(r) for r in spark.sql(q).collect()]
sw = os.path.join(dsA, "sched__sched_switch", "*.parquet")
g_duck = duckdb.sql(q.replace("FROM sw", f"FROM read_parquet('{sw}')")).fetchall()
ctx = pl.SQLContext(sw=pl.scan_parquet(sw))
g_pol = [tuple(r) for r in ctx.execute(q).collect().iter_rows()]
check(g_spark == [tuple(r) for r in g_duck] == g_pol, f"GROUP BY over sched_switch: the same {len(g_spark)} rows in Spark, DuckDB and polars")
for r in g_spark:
    print(f"  groupby {r[0]} n={r[1]} pids={r[2]} first={r[3]}")
# ... and in `tracemux sql`, straight from each trace (TRACEMUX_SQL: a
# tracemux built with the feature sql; check-spark.sh finds or builds one)
tm_sql = os.environ.get("TRACEMUX_SQL")
if tm_sql:
    by_name = dict(zip(tms.trace_names(inputs), inputs))
    g_sql = []
    for r in g_spark:
        one = q.replace("trace, ", "").replace(" FROM sw GROUP BY trace ORDER BY trace", " FROM sched__sched_switch")
        got = subprocess.run([tm_sql, "sql", by_name[r[0]], "-e", one, "--format", "csv"],
                             capture_output=True, text=True)
        if got.returncode != 0:
            print(f"  tracemux sql {r[0]}: {got.stderr.strip()}")
            g_sql.append((r[0],))
            continue
        last = got.stdout.strip().splitlines()[-1].split(",")
        g_sql.append((r[0],) + tuple(int(v) for v in last))
    check(g_sql == g_spark, f"the same GROUP BY in tracemux sql over each trace: the same {len(g_sql)} rows")
else:
    print("skip tracemux sql: TRACEMUX_SQL is not set")

# every file sorted by trace, then ts; the files of a table in that order too
unsorted = []
for table in sorted({t for t, _ in rowsA}):
    glob = os.path.join(dsA, table, "*.parquet")
    keys = "trace, ts" if "ts" in duckdb.sql(f"SELECT * FROM read_parquet('{glob}') LIMIT 0").columns else "trace"
    bad_order = duckdb.sql(
        f"SELECT count(*) FROM (SELECT ({keys}) < lag(({keys})) OVER (ORDER BY _tm_file, file_row_number) AS down "
        f"FROM read_parquet('{glob}', filename = '_tm_file', file_row_number = true)) WHERE down"
    ).fetchall()[0][0]
    if bad_order:
        unsorted.append(table)
check(not unsorted, f"every table's rows sorted by trace then ts, file after file ({unsorted[:5]})")

# files: none under 1 MB unless its table is smaller
small = []
for table in sorted({t for t, _ in rowsA}):
    d = os.path.join(dsA, table)
    sizes = [os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".parquet")]
    if len(sizes) > 1 and min(sizes) < (1 << 20):
        small.append(table)
check(not small, f"no file under 1 MB in a table of several files ({small[:5]})")

spark.stop()
shutil.rmtree(tmp, ignore_errors=True)
print(f"tracemux.spark: {'OK' if not failures else f'{len(failures)} FAILED'}")
sys.exit(1 if failures else 0)
