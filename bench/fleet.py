"""The Spark side of bench/bench-fleet.sh: a fleet converted by
tracemux.spark on local[K], then a cross-trace GROUP BY in Spark and DuckDB.

usage: fleet.py K DATASET LIST   (LIST: one trace path a line)
Prints one line of `key=value` figures.
"""

import json
import os
import sys
import time

import duckdb
from pyspark.sql import SparkSession

from tracemux import spark as tms

k, dataset, listing = sys.argv[1:4]
paths = [l.strip() for l in open(listing) if l.strip()]
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
spark = (
    SparkSession.builder.master(f"local[{k}]")
    .appName(f"tracemux-fleet-{k}")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", str(2 * int(k)))
    .getOrCreate()
)
spark.sparkContext.setLogLevel("OFF")
t0 = time.monotonic()
summary = tms.convert(spark, paths, dataset)
rows = summary.collect()
wall = time.monotonic() - t0
phases = json.load(open(os.path.join(dataset, "_meta", "_timings.json")))
events = sum(r["events"] or 0 for r in rows)
status = {}
for r in rows:
    status[r["status"]] = status.get(r["status"], 0) + 1

Q = (
    "SELECT trace, count(*) AS n, count(DISTINCT next_pid) AS pids, "
    "max(ts) - min(ts) AS span FROM sw GROUP BY trace ORDER BY trace"
)


def best_of(f, n=3):
    """The fastest of n runs (seconds) and the last result."""
    times, res = [], None
    for _ in range(n):
        t = time.monotonic()
        res = f()
        times.append(time.monotonic() - t)
    return min(times), res


tms.read(spark, dataset, "sched__sched_switch").createOrReplaceTempView("sw")
q_spark, g_spark = best_of(lambda: [tuple(r) for r in spark.sql(Q).collect()])
sw = os.path.join(dataset, "sched__sched_switch", "*.parquet")
q_duck, g_duck = best_of(lambda: duckdb.sql(Q.replace("FROM sw", f"FROM read_parquet('{sw}')")).fetchall())
same = g_spark == [tuple(r) for r in g_duck]

files = small = 0
for table in os.listdir(dataset):
    d = os.path.join(dataset, table)
    if table.startswith(("_", ".")) or not os.path.isdir(d):
        continue
    sizes = [os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".parquet")]
    files += len(sizes)
    if sum(sizes) >= (1 << 20):
        small += sum(s < (1 << 20) for s in sizes)
spark.stop()
print(
    f"local[{k}] traces={len(rows)} status={status} events={events} wall_s={wall:.1f} "
    f"convert_s={phases['convert_seconds']:.1f} compact_s={phases['compact_seconds']:.1f} "
    f"traces_per_s={len(rows) / phases['convert_seconds']:.2f} "
    f"events_per_s={events / phases['convert_seconds']:.0f} files={files} small_files={small} "
    f"groupby_spark_s={q_spark:.2f} groupby_duckdb_s={q_duck:.3f} groupby_rows={len(g_spark)} same={same}"
)
