"""Read tracemux datasets in Spark (local[2]) and print what it read.

Usage: check_spark.py SHARED HIVE. SHARED: a `--layout shared` dataset;
HIVE: a `--layout hive --schema portable` dataset of the same traces.
Prints `rows TABLE TRACE N` for every table and trace of SHARED, sorted,
then `hive sched__sched_switch: ...` and `groupby ...` lines; exits 1 on a
failed read.
"""
import os
import sys

from pyspark.sql import SparkSession, functions as F

shared, hive = sys.argv[1:3]
spark = (
    SparkSession.builder.master("local[2]")
    .appName("tracemux-check")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "4")
    # a trace named 001 stays a name
    .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
failed = 0
rows = []
for table in sorted(os.listdir(shared)):
    if table.startswith("_") or not os.path.isdir(os.path.join(shared, table)):
        continue
    try:
        df = spark.read.option("mergeSchema", "true").parquet(os.path.join(shared, table))
        for r in df.groupBy("trace").count().collect():
            rows.append((table, r["trace"], r["count"]))
    except Exception as e:  # a failed read is the finding
        failed += 1
        print(f"read {table}: FAIL {str(e).splitlines()[0][:200]}")
for t, tr, n in sorted(rows):
    print(f"rows {t} {tr} {n}")
tables = {t for t, _, _ in rows}
traces = {tr for _, tr, _ in rows}
print(f"shared dataset: {len(tables)} tables of {len(traces)} traces read")

# the Hive layout with the portable schema: one schema across traces
try:
    df = (
        spark.read.option("mergeSchema", "true")
        .option("basePath", os.path.join(hive, "sched__sched_switch"))
        .parquet(os.path.join(hive, "sched__sched_switch"))
    )
    per = sorted((r["trace"], r["count"]) for r in df.groupBy("trace").count().collect())
    ptype = dict(df.dtypes)["prev_state"]
    print(f"hive sched__sched_switch: prev_state {ptype}; " + " ".join(f"{t}={n}" for t, n in per))
except Exception as e:
    failed += 1
    print(f"hive sched__sched_switch: FAIL {str(e).splitlines()[0][:200]}")

# a cross-trace GROUP BY in SQL over the shared files
spark.read.parquet(os.path.join(shared, "sched__sched_switch")).createOrReplaceTempView("sw")
g = spark.sql(
    "SELECT trace, host, count(*) AS n, count(DISTINCT next_pid) AS pids, min(ts) AS first "
    "FROM sw GROUP BY trace, host ORDER BY trace"
).collect()
for r in g:
    print(f"groupby sched_switch {r['trace']} host={r['host']} n={r['n']} pids={r['pids']} first={r['first']}")
spark.stop()
print(f"spark {spark.version if hasattr(spark, 'version') else ''}: {'OK' if failed == 0 else f'{failed} FAILED'}")
sys.exit(1 if failed else 0)
