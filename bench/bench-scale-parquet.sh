#!/usr/bin/env bash
# `convert --to parquet` as traces grow: trace.dat files of the sizes given
# (MB; default 1024 4096 16384) written by crates/tracedat/examples/scale.rs
# from SRC, each converted; wall time, events/s, peak RSS, row groups and
# files written. Flat columns mean no growth with size. Timings are never
# asserted.
#
# usage: bench/bench-scale-parquet.sh SRC.dat [SIZE_MB ...]
#   BENCH_RUNS (1) runs per size, medians; a size that does not fit twice
#   on the disk of bench/out is skipped and said so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=$here/out
mkdir -p "$out"
[ $# -ge 1 ] || { echo "usage: $0 SRC.dat [SIZE_MB ...]" >&2; exit 2; }
src=$1
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1024 4096 16384)
runs=${BENCH_RUNS:-1}
cargo build --release -q --manifest-path "$root/Cargo.toml" -p tracemux -p tracemux-tracedat --example scale
tm=${TRACEMUX:-$root/target/release/tracemux}
gen=$root/target/release/examples/scale
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf "%-10s %12s %9s %10s %8s %11s %6s\n" size events "median s" "events/s" "RSS MB" "row groups" files | tee "$out/scale-parquet.txt"
for mb in "${sizes[@]}"; do
    free=$(df -Pm "$out" | awk 'NR == 2 { print $4 }')
    if [ "$free" -lt $((mb * 2 + 1024)) ]; then
        echo "${mb} MB: skipped (${free} MB free on the disk of bench/out)" | tee -a "$out/scale-parquet.txt"
        continue
    fi
    f=$out/scale-$mb.dat
    "$gen" "$src" "$f" "$mb" 2> "$out/scale-gen.log"
    # the generator's dirty pages written back before the run, not during it
    sync
    size=$(du -m "$f" | cut -f1)
    walls="" rsss=""
    for _ in $(seq "$runs"); do
        rm -rf "$out/scale-pq"
        /usr/bin/time -f "%e %M" -o "$out/time.txt" "$tm" convert -q "$f" --to parquet -o "$out/scale-pq"
        read -r wall rss < "$out/time.txt"
        walls+="$wall " rsss+="$rss "
    done
    wall=$(tr ' ' '\n' <<< "$walls" | grep . | median)
    rss=$(tr ' ' '\n' <<< "$rsss" | grep . | median)
    read -r events groups files < <(python3 - "$out/scale-pq" <<'PY'
import glob, json, sys
import pyarrow.parquet as pq
d = sys.argv[1]
fs = glob.glob(f"{d}/*.parquet")
print(json.load(open(f"{d}/meta.json"))["events"], sum(pq.ParquetFile(f).metadata.num_row_groups for f in fs), len(fs))
PY
)
    eps=$(awk -v e="$events" -v w="$wall" 'BEGIN{ if (w > 0) printf "%.2fM", e/w/1e6; else print "-" }')
    printf "%-10s %12s %9s %10s %8s %11s %6s\n" "${size} MB" "$events" "$wall" "$eps" "$((${rss%.*} / 1024))" "$groups" "$files" \
        | tee -a "$out/scale-parquet.txt"
    rm -rf "$f" "$out/scale-pq"
done
