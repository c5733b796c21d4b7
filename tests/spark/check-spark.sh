#!/bin/sh
# Check a fleet dataset in Apache Spark (PySpark, `local[2]`; not part of
# `cargo test`, which compares the stored result with its own conversion:
# crates/cli/tests/convert_parquet.rs `spark_result_stored`).
#
# Several real fixtures of several formats (trace.dat v6 and v7, 32-bit
# and big-endian, CTF 1.8, uftrace; no CTF 2 fixture in the repository has events) are converted by one
# `tracemux convert --layout shared` into one dataset, and by
# `--layout hive --schema portable` into another. Spark reads every table
# of the shared dataset, and sched_switch of the Hive one with
# mergeSchema (the read that failed with CANNOT_MERGE_SCHEMAS on native
# widths), and counts rows per table and trace; a cross-trace GROUP BY
# over sched_switch is run too. What Spark read is written to
# tests/fixtures/spark/spark-result.txt.
#
# Needs: python3 with venv, Java 17 (apt-get install openjdk-17-jre-headless
# when missing). pyspark and pandas<3 go into $SPARK_VENV
# (default target/spark-venv).
# Then tests/spark/check_spark_module.py runs tracemux.spark (the Python
# package's Spark module, installed into the venv from ./python) on the
# same fixtures, a CTF 2 trace, a perf.data and the hand-built LTT trace: conversion on the
# executors, workers killed and tasks retried, the dataset read by Spark,
# DuckDB and polars (tests/fixtures/spark/spark-module-result.txt).
# Usage: tests/spark/check-spark.sh   (from the repository root)
# TRACEMUX=path/to/tracemux (default: target/debug/tracemux, built if missing);
# TRACEMUX_SQL=path/to/tracemux built with the feature sql (.ci/run's debug
# build), for the GROUP BY in `tracemux sql`.
set -u
# Spark binds to the loopback address only
export SPARK_LOCAL_IP=127.0.0.1
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
venv=${SPARK_VENV:-$root/target/spark-venv}
if ! command -v java >/dev/null; then
    { apt-get install -y -q openjdk-17-jre-headless || sudo apt-get install -y -q openjdk-17-jre-headless; } >/dev/null || exit 2
fi
if ! "$venv/bin/python" -c 'import pyspark, duckdb, polars' 2>/dev/null; then
    { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } && "$venv/bin/pip" install -q pyspark 'pandas<3' pyarrow duckdb polars || exit 2
fi
# the package (tracemux.spark), built into the main target directory
if ! "$venv/bin/python" -c 'import tracemux.spark' 2>/dev/null; then
    "$venv/bin/pip" install -q maturin &&
        CARGO_TARGET_DIR=$root/target "$venv/bin/pip" install -q --force-reinstall --no-deps ./python || exit 2
fi
. tests/spark/fixtures.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tm=${TRACEMUX:-$root/target/debug/tracemux}
[ -x "$tm" ] || cargo build -q -p tracemux || exit 2
cp "$tm" "$tmp/tracemux" && tm=$tmp/tracemux
# `tracemux sql` for the GROUP BY over each trace: TRACEMUX_SQL, else $tm
# when it was built with the feature sql (otherwise that check is skipped,
# and the stored result says so)
if [ -z "${TRACEMUX_SQL:-}" ] && "$tm" sql tests/fixtures/tracedat/v7-instance-B/trace.dat -e 'SELECT 1' >/dev/null 2>&1; then
    TRACEMUX_SQL=$tm
fi
[ -z "${TRACEMUX_SQL:-}" ] || export TRACEMUX_SQL
# shellcheck disable=SC2046
"$tm" convert -q $(spark_fixtures) --to parquet --layout shared -o "$tmp/shared" || exit 1
# shellcheck disable=SC2046
"$tm" convert -q $(spark_fixtures) --to parquet --partition --layout hive --schema portable -o "$tmp/hive" || exit 1
out=tests/fixtures/spark/spark-result.txt
"$venv/bin/python" tests/spark/check_spark.py "$tmp/shared" "$tmp/hive" > "$tmp/result" || { cat "$tmp/result"; exit 1; }
cp "$tmp/result" "$out"
grep -v '^rows ' "$out"
# the hand-built legacy LTT trace, assembled from its hex dumps into $ltt
. tests/convert/fixtures.sh
fixtures_ltt
# tracemux.spark: conversion on the executors, killed workers, three readers
# shellcheck disable=SC2046
"$venv/bin/python" tests/spark/check_spark_module.py "$tm" "$tmp/module" $(spark_fixtures) \
    tests/fixtures/ctf2/auto-translated--pass-all-basic-features-be/trace tests/fixtures/perf/syscalls/perf.data "$ltt" \
    > "$tmp/module-result" 2>"$tmp/module-err"
rc=$?
cat "$tmp/module-result"
[ $rc -eq 0 ] || { tail -30 "$tmp/module-err"; exit 1; }
cp "$tmp/module-result" tests/fixtures/spark/spark-module-result.txt
