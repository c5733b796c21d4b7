#!/bin/sh
# Check `tracemux convert --to parquet` with the readers analysts use:
# pyarrow, DuckDB and polars (PyPI; not part of `cargo test`).
#
# For every fixture of every format (see tests/convert/fixtures.sh) this
# converts the trace and runs tests/convert/check_parquet.py on the tables:
# row counts, and every value of every event compared with
# `tracemux report --json` of the source (see that script). Then the check
# is run on a deliberately damaged reading (an event dropped; a field
# changed) and must fail; and three traces converted into one
# Hive-partitioned dataset must query as one table in DuckDB.
#
# The summary is written to tests/fixtures/convert/parquet-oracle.txt.
#
# Usage: tests/convert/check-parquet.sh [FIXTURE-NAME...]   (from the repository root)
# TRACEMUX=path/to/tracemux to use another binary (default: target/debug/tracemux, built if missing).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
python3 -c 'import pyarrow, duckdb, polars' 2>/dev/null || pip install -q pyarrow duckdb polars || exit 2
. tests/convert/fixtures.sh
prepare
summary=tests/fixtures/convert/parquet-oracle.txt

check() { # NAME SRC OUTPUT
    python3 tests/convert/check_parquet.py "$tm" "$2" "$3" "$1" 2>"$tmp/err" ||
        grep -q ': FAIL' "$tmp/err" || echo "$1: FAIL (the checker stopped: $(tail -1 "$tmp/err"))"
}
each_fixture parquet pq check "$@" > "$tmp/summary"
cat "$tmp/summary"
counts

# The oracle notices damage: one event dropped, one field changed.
src=tests/fixtures/tracedat/v6-sched-irq-timer/trace.dat
"$tm" convert -q --force "$src" --to parquet -o "$tmp/m.pq"
for m in drop field; do
    if python3 tests/convert/check_parquet.py "$tm" "$src" "$tmp/m.pq" "mutated-$m" --mutate $m >"$tmp/m.out" ||
        ! grep -q ': FAIL' "$tmp/m.out"; then
        echo "mutation $m: NOT DETECTED"
    else
        echo "mutation $m: detected ($(cut -c1-160 "$tmp/m.out"))"
    fi
done >> "$tmp/summary"

# Three traces, one Hive-partitioned dataset, one table in DuckDB.
a=tests/fixtures/tracedat/v6-sched-irq-timer/trace.dat
b=tests/fixtures/tracedat/v7-instance-B/trace.dat
c=tests/fixtures/synthetic/ftrace-v7/trace.dat
"$tm" convert -q --force "$a" "$b" "$c" --to parquet -o "$tmp/hive"
python3 - "$tmp/hive" "$tm" "$a" "$b" "$c" >> "$tmp/summary" <<'PY'
import json, subprocess, sys, duckdb
hive, tm, *srcs = sys.argv[1:]
want = {}
for s in srcs:
    n = 0
    for l in subprocess.run([tm, "report", "--json", s], capture_output=True).stdout.splitlines():
        if json.loads(l)["type"] == "event":
            n += 1
    want[s] = n
got = duckdb.sql(f"SELECT trace, count(*) FROM read_parquet('{hive}/events/*/*.parquet', hive_partitioning = true) GROUP BY trace ORDER BY trace").fetchall()
ok = len(got) == 3 and sorted(n for _, n in got) == sorted(want.values())
sw = duckdb.sql(f"SELECT count(DISTINCT trace) FROM read_parquet('{hive}/sched__sched_switch/*/*.parquet', hive_partitioning = true, union_by_name = true)").fetchall()[0][0]
print(f"hive dataset of 3 traces: {'OK' if ok else 'FAIL'} (events per trace {got}; sched_switch in {sw} traces)")
PY
fail=$((fail + $(grep -c 'NOT DETECTED\|dataset.*FAIL' "$tmp/summary")))
tail -3 "$tmp/summary"
echo "$ok passed, $fail failed, $empty without events" | tee -a "$tmp/summary"
if [ $# -eq 0 ]; then
    { echo "# tests/convert/check-parquet.sh with pyarrow $(python3 -c 'import pyarrow; print(pyarrow.__version__)'), duckdb $(python3 -c 'import duckdb; print(duckdb.__version__)'), polars $(python3 -c 'import polars; print(polars.__version__)')"; cat "$tmp/summary"; } > "$summary"
fi
[ "$fail" -eq 0 ]
