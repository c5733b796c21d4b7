#!/usr/bin/env bash
# A fleet of traces into one Parquet dataset: `tracemux convert --layout
# shared` alone, then tracemux.spark on Spark local[1] and local[2]
# (bench/fleet.py); traces/s, events/s, files written (and how many under
# 1 MB in tables larger than that), and a cross-trace GROUP BY over
# sched_switch in Spark and DuckDB. Timings are never asserted.
#
# The fleet: FLEET (200) traces, hard-linked copies of the repository's
# fixtures of every format (trace.dat v6/v7, 32-bit, big-endian, CTF 1.8
# and 2, uftrace, perf.data, the hand-built LTT trace) in turn, one folder
# per "machine", plus BIG_COPIES (2) copies of each big trace of BIG
# (bench/out/big, from ../shared/corpus/tools/record-big.sh) when it is
# there. Copies, not time-shifted variants: each trace converts on its own,
# so a copy costs what its original costs.
#
# usage: bench/bench-fleet.sh   (SPARK_VENV: a venv with pyspark, duckdb and
#   the tracemux package, as tests/spark/check-spark.sh makes it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
export SPARK_LOCAL_IP=127.0.0.1
venv=${SPARK_VENV:-$root/target/spark-venv}
py=$venv/bin/python
"$py" -c 'import pyspark, duckdb, tracemux.spark' || {
    echo "$0: $venv lacks pyspark, duckdb or tracemux (run tests/spark/check-spark.sh once)" >&2
    exit 2
}
n=${FLEET:-200}
big=${BIG:-$out/big}
copies=${BIG_COPIES:-2}
fleet=$out/fleet
rm -rf "$fleet"
mkdir -p "$fleet/src"
cd "$root"
srcs=()
while read -r p; do srcs+=("$p"); done < <(sed -e 's/#.*//' -e '/^ *$/d' tests/spark/fixtures.txt)
srcs+=(tests/fixtures/ctf2/auto-translated--pass-all-basic-features-be/trace tests/fixtures/perf/syscalls/perf.data)
# the hand-built LTT trace, assembled from its hex dumps into $ltt
tmp=$fleet
. tests/convert/fixtures.sh
fixtures_ltt
srcs+=("$ltt")
: > "$fleet/list"
link() { # link SRC DEST: a hard-linked copy of a file or a folder
    if [ -d "$1" ]; then cp -al "$1" "$2"; else cp -l "$1" "$2" 2>/dev/null || cp "$1" "$2"; fi
}
for i in $(seq 0 $((n - 1))); do
    s=${srcs[$((i % ${#srcs[@]}))]}
    d=$fleet/src/m$(printf %04d "$i")
    mkdir -p "$d"
    link "$s" "$d/$(basename "$s")"
    echo "$d/$(basename "$s")" >> "$fleet/list"
done
if [ -d "$big" ]; then
    for f in "$big"/*.dat "$big"/perf-big.data "$big"/lttng-big "$big"/uftrace-big; do
        [ -e "$f" ] || continue
        for c in $(seq "$copies"); do
            d=$fleet/src/big$c-$(basename "$f")
            mkdir -p "$d"
            link "$f" "$d/$(basename "$f")"
            echo "$d/$(basename "$f")" >> "$fleet/list"
        done
    done
fi
traces=$(wc -l < "$fleet/list")
echo "fleet: $traces traces ($(du -shL "$fleet/src" | cut -f1)), $(date -u +%F)" | tee "$out/fleet-results.txt"
# tracemux alone, one process
mapfile -t list < "$fleet/list"
t0=$(date +%s.%N)
/usr/bin/time -f "%M" -o "$fleet/rss" "$tm" convert -q "${list[@]}" --to parquet --layout shared -o "$fleet/cli" 2> "$fleet/cli.log" || [ $? -eq 1 ]
t1=$(date +%s.%N)
"$py" "$here/fleet.py" cli "$fleet/cli" "$traces" "$t0" "$t1" "$(tail -1 "$fleet/rss")" | tee -a "$out/fleet-results.txt"
for k in 1 2; do
    rm -rf "$fleet/spark$k"
    "$py" "$here/fleet.py" spark "$k" "$fleet/spark$k" "$fleet/list" 2> "$fleet/spark$k.log" | tee -a "$out/fleet-results.txt"
done
rm -rf "$fleet"
