#!/usr/bin/env bash
# Cost per event as traces grow: writes trace.dat files of the sizes given
# (MB; default 1024 4096 16384) with the project's writer
# (crates/tracedat/examples/scale.rs: the records of SRC repeated, shifted in
# time), then times `tracemux stats` and `tracemux report -R > /dev/null` on
# each: events/s, MB/s of trace data, peak RSS. Flat columns mean no growth
# with size. Timings are never asserted.
#
# usage: bench/bench-scale.sh SRC.dat [SIZE_MB ...]
#   SRC: any trace.dat (the big trace of record-big.sh gives a realistic
#   event mix). Each file is deleted after its runs; a size that does not fit
#   twice on the disk of bench/out (file and spill) is skipped and said so.
#   BENCH_RUNS (3) runs per command, medians.
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
runs=${BENCH_RUNS:-3}

cargo build --release -q --manifest-path "$root/Cargo.toml" -p tracemux -p tracemux-tracedat --example scale
cargo build --release -q --manifest-path "$root/Cargo.toml" -p tracemux
tm=$root/target/release/tracemux
gen=$root/target/release/examples/scale

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf "%-10s %-22s %12s %9s %10s %8s %8s\n" size command events "median s" "events/s" "MB/s" "RSS MB" \
    | tee "$out/scale.txt"
for mb in "${sizes[@]}"; do
    free=$(df -Pm "$out" | awk 'NR == 2 { print $4 }')
    if [ "$free" -lt $((mb * 2 + 1024)) ]; then
        echo "${mb} MB: skipped (${free} MB free on the disk of bench/out)" | tee -a "$out/scale.txt"
        continue
    fi
    f=$out/scale-$mb.dat
    "$gen" "$src" "$f" "$mb" 2> "$out/scale-gen.log"
    size=$(du -m "$f" | cut -f1)
    events=$("$tm" stats "$f" | awk '$1 == "events" { print $2; exit }')
    for cmd in "stats" "report -R"; do
        walls="" rsss=""
        for _ in $(seq "$runs"); do
            /usr/bin/time -f "%e %M" -o "$out/time.txt" "$tm" $cmd "$f" > /dev/null 2> /dev/null || true
            read -r wall rss < "$out/time.txt"
            walls+="$wall "
            rsss+="$rss "
        done
        wall=$(tr ' ' '\n' <<< "$walls" | grep . | median)
        rss=$(tr ' ' '\n' <<< "$rsss" | grep . | median)
        eps=$(awk -v e="$events" -v w="$wall" 'BEGIN{ if (w > 0) printf "%.2fM", e/w/1e6; else print "-" }')
        mbs=$(awk -v m="$size" -v w="$wall" 'BEGIN{ if (w > 0) printf "%.0f", m/w; else print "-" }')
        printf "%-10s %-22s %12s %9s %10s %8s %8s\n" "${size} MB" "tracemux $cmd" "$events" "$wall" "$eps" \
            "$mbs" "$((${rss%.*} / 1024))" | tee -a "$out/scale.txt"
    done
    rm -f "$f"
done
