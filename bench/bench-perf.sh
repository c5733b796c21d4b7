#!/usr/bin/env bash
# Compare tracemux with perf (Debian 12: perf 6.1) on the same large
# perf.data: samples/s, speed ratio and peak RSS. Timings are never
# asserted; results go to bench/out/ and the numbers quoted in the README
# come from runs of this script.
#
# usage: bench/bench-perf.sh [PERF_DATA ...]
#   With no argument, uses ../big/perf-big.data beside the repository (made
#   by ../shared/corpus/tools/record-big.sh: sched and syscall tracepoints
#   and cpu-clock, system-wide, ~2 M samples). TRACEMUX=/path/to/tracemux
#   skips the cargo build. HOME points to an empty directory for both tools
#   (no ~/.debug build-id cache, no ~/.perfconfig).
#
# Comparisons per file, each BENCH_RUNS (5) alternating runs written to a
# file and to /dev/null, medians of wall seconds and peak RSS (count =
# samples):
#   `perf script -i F`                 vs `tracemux report F`     (outputs compared once)
#   `perf script -i F -F comm,tid,cpu,time,period,event,trace` vs the same (no symbols)
#   `perf report --stats -i F`         vs `tracemux stats F`      (outputs compared once)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=perf
. "$here/lib.sh"

inputs=("$@")
if [ ${#inputs[@]} -eq 0 ]; then
    inputs=("$root/../big/perf-big.data")
    [ -f "${inputs[0]}" ] || { echo "bench-perf: no ${inputs[0]}; record it with ../shared/corpus/tools/record-big.sh" >&2; exit 1; }
fi
HOME=$(mktemp -d)
export HOME LC_ALL=C
trap 'rm -rf "$HOME"' EXIT

side_header
for f in "${inputs[@]}"; do
    size=$(( $(stat -c %s "$f") / 1048576 ))
    label="$(basename "$f") (${size}MB)"
    samples=$("$tm" stats "$f" | awk '$1 == "SAMPLE" { print $3; exit }')

    native=(perf script -i "$f")
    mine=("$tm" report "$f")
    side_note "perf script (symbols): $(same_output)"
    side_by_side "$label" "$samples" "$size" "perf script" "tracemux report"

    fields=comm,tid,cpu,time,period,event,trace
    native=(perf script -i "$f" -F "$fields")
    mine=("$tm" report "$f" -F "$fields")
    side_note "perf script -F $fields: $(same_output)"
    side_by_side "$label" "$samples" "$size" "perf script -F (no sym)" "tracemux report -F"

    native=(perf report --stats -i "$f")
    mine=("$tm" stats "$f")
    side_note "perf report --stats: $(same_output)"
    side_by_side "$label" "$samples" "$size" "perf report --stats" "tracemux stats"
done
side_note "${BENCH_RUNS:-5} alternating runs each, medians; count: samples; $(perf version)"
