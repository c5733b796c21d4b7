#!/bin/sh
# Check `tracemux sql` against DuckDB (PyPI; not part of `cargo test`).
#
# For a trace.dat, a CTF and a uftrace fixture (or the fixtures named on
# the command line, see tests/convert/fixtures.sh), this runs the same
# queries with `tracemux sql` on the trace and with DuckDB on
# `tracemux convert --to parquet` of it, and compares the result sets
# (tests/sql/check_sql.py). Then, on the big trace ($BIG, default
# /work/big2/big.dat, skipped when absent or BIG is empty), one typical query is timed
# with its peak RSS, for tracemux on the trace and for DuckDB on the
# Parquet output.
#
# The summary is written to tests/fixtures/sql/oracle.txt.
#
# Usage: tests/sql/check-sql.sh [FIXTURE-NAME...]   (from the repository root)
# TRACEMUX=path/to/tracemux to use another binary (default:
# target/release/tracemux, built with --features sql if missing).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
venv=${VENV:-$root/target/sql-venv}
if ! "$venv/bin/python3" -c 'import pyarrow, duckdb' 2>/dev/null; then
    python3 -m venv "$venv" && "$venv/bin/pip" install -q duckdb pyarrow || exit 2
fi
py=$venv/bin/python3
tm=${TRACEMUX:-$root/target/release/tracemux}
[ -x "$tm" ] || cargo build -q --release -p tracemux --features sql || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$tm" "$tmp/tracemux" && tm=$tmp/tracemux
summary=tests/fixtures/sql/oracle.txt
mkdir -p tests/fixtures/sql
. tests/convert/fixtures.sh
fixtures_ltt
[ $# -gt 0 ] || set -- tracedat-v7-clock-global ctf-perf-data-convert-sched uftrace-pg-threads-fork

fixtures_list | while read -r name src; do
    case " $* " in *" $name "*) ;; *) continue ;; esac
    "$tm" convert -q --force "$src" --to parquet -o "$tmp/$name.pq" 2>/dev/null
    "$py" tests/sql/check_sql.py "$tm" "$src" "$tmp/$name.pq" "$name" 2>"$tmp/err" ||
        grep -q ': FAIL' "$tmp/err" || echo "$name: FAIL (the checker stopped: $(tail -1 "$tmp/err"))"
done > "$tmp/summary"
cat "$tmp/summary"

big=${BIG-/work/big2/big.dat}
if [ -f "$big" ]; then
    q="SELECT next_comm, count(*) AS n, sum(prev_state) AS s FROM sched__sched_switch GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10"
    size=$(du -mL "$big" | cut -f1)
    /usr/bin/time -f '%e %M' -o "$tmp/t1" "$tm" convert -q --force "$big" --to parquet -o "$tmp/big.pq"
    /usr/bin/time -f '%e %M' -o "$tmp/t2" "$tm" sql --format csv "$big" -e "$q" > "$tmp/a.csv"
    cat > "$tmp/duck.py" <<PY
import duckdb, sys
con = duckdb.connect()
con.execute("CREATE VIEW sched__sched_switch AS SELECT * FROM read_parquet('$tmp/big.pq/sched__sched_switch.parquet')")
print("next_comm,n,s")
for r in con.execute("""$q""").fetchall():
    print(",".join(str(x) for x in r))
PY
    /usr/bin/time -f '%e %M' -o "$tmp/t3" "$py" "$tmp/duck.py" > "$tmp/b.csv"
    /usr/bin/time -f '%e %M' -o "$tmp/t4" "$py" -c 'import duckdb' 
    if cmp -s "$tmp/a.csv" "$tmp/b.csv"; then same="same rows"; else same="DIFFERENT rows"; fi
    {
        echo "big trace ($(basename "$big"), $size MB): $q"
        echo "  tracemux sql on the trace:        $(awk '{printf "%s s, peak RSS %d MB", $1, $2/1024}' "$tmp/t2")"
        echo "  DuckDB (Python) on its Parquet:   $(awk '{printf "%s s, peak RSS %d MB", $1, $2/1024}' "$tmp/t3") (python + import duckdb alone: $(awk '{printf "%d MB", $2/1024}' "$tmp/t4"))"
        echo "  (convert --to parquet before it:  $(awk '{printf "%s s, peak RSS %d MB", $1, $2/1024}' "$tmp/t1"))"
        echo "  results: $same"
        sed 's/^/    /' "$tmp/a.csv"
    } >> "$tmp/summary"
fi

{
    echo "# tests/sql/check-sql.sh: tracemux sql against DuckDB on the Parquet output"
    echo "# $(date -u +%Y-%m-%d), $(nproc) CPUs, duckdb $("$py" -c 'import duckdb; print(duckdb.__version__)')"
    cat "$tmp/summary"
} > "$summary"
! grep -q 'FAIL\|DIFFERENT' "$tmp/summary"
