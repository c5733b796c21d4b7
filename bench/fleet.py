"""The figures of bench/bench-fleet.sh, one line of `key=value` each.

usage: fleet.py cli DATASET TRACES T0 T1 RSS_KB
           a dataset `tracemux convert --layout shared` wrote between T0
           and T1 (seconds since the epoch), at that peak RSS
       fleet.py spark K DATASET LIST
           LIST (one trace path a line) converted by tracemux.spark on
           local[K], then the GROUP BY in Spark and DuckDB
"""

import json
import os
import sys
import time

import duckdb

# per trace: sched_switch rows, distinct next_pid, time span
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


def duckdb_groupby(dataset):
    sw = os.path.join(dataset, "sched__sched_switch", "*.parquet")
    return best_of(lambda: duckdb.sql(Q.replace("FROM sw", f"FROM read_parquet('{sw}')")).fetchall())


def files_of(dataset):
    """Parquet files of the dataset's tables, and how many of them are
    under 1 MB in a table of 1 MB or more."""
    files = small = 0
    for table in os.listdir(dataset):
        d = os.path.join(dataset, table)
        if table.startswith(("_", ".")) or not os.path.isdir(d):
            continue
        sizes = [os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".parquet")]
        files += len(sizes)
        if sum(sizes) >= (1 << 20):
            small += sum(s < (1 << 20) for s in sizes)
    return files, small


def cli(dataset, traces, t0, t1, rss_kb):
    traces, wall = int(traces), float(t1) - float(t0)
    meta = os.path.join(dataset, "_meta")
    events = sum(
        json.load(open(os.path.join(meta, m))).get("events", 0)
        for m in os.listdir(meta)
        if m.endswith(".json") and not m.startswith("_")
    )
    files, small = files_of(dataset)
    q_duck, _ = duckdb_groupby(dataset)
    print(
        f"tracemux convert traces={traces} events={events} wall_s={wall:.1f} "
        f"traces_per_s={traces / wall:.2f} events_per_s={events / wall:.0f} "
        f"peak_rss_mb={int(rss_kb) // 1024} files={files} small_files={small} groupby_duckdb_s={q_duck:.3f}"
    )


def spark(k, dataset, listing):
    from pyspark.sql import SparkSession

    from tracemux import spark as tms

    paths = [l.strip() for l in open(listing) if l.strip()]
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master(f"local[{k}]")
        .appName(f"tracemux-fleet-{k}")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(2 * int(k)))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")
    t0 = time.monotonic()
    rows = tms.convert(session, paths, dataset).collect()
    wall = time.monotonic() - t0
    phases = json.load(open(os.path.join(dataset, "_meta", "_timings.json")))
    events = sum(r["events"] or 0 for r in rows)
    status = {}
    for r in rows:
        status[r["status"]] = status.get(r["status"], 0) + 1
    tms.read(session, dataset, "sched__sched_switch").createOrReplaceTempView("sw")
    q_spark, g_spark = best_of(lambda: [tuple(r) for r in session.sql(Q).collect()])
    q_duck, g_duck = duckdb_groupby(dataset)
    same = g_spark == [tuple(r) for r in g_duck]
    files, small = files_of(dataset)
    session.stop()
    conv = phases["convert_seconds"]
    print(
        f"local[{k}] traces={len(rows)} status={status} events={events} wall_s={wall:.1f} "
        f"convert_s={conv:.1f} compact_s={phases['compact_seconds']:.1f} "
        f"traces_per_s={len(rows) / conv:.2f} events_per_s={events / conv:.0f} files={files} small_files={small} "
        f"groupby_spark_s={q_spark:.2f} groupby_duckdb_s={q_duck:.3f} groupby_rows={len(g_spark)} same={same}"
    )


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    {"cli": cli, "spark": spark}[mode](*args)
