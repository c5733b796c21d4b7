#!/usr/bin/env bash
# Compare tracemux with uftrace on the same large uftrace recording: records/s,
# speed ratio and peak RSS. Timings are never asserted; results go to
# bench/out/ and the numbers quoted in the README come from runs of this script.
#
# usage: bench/bench-uftrace.sh [UFTRACE_DATA_DIR ...]
#   With no argument, uses bench/out/uftrace-big, recording it first when missing
#   with bench/recipes/record-uftrace.sh (needs root, uftrace, gcc; ~90 MB of disk
#   for the recording and ~550 MB for the text outputs): 5.4 M records of a -pg
#   program in 2 threads. TRACEMUX=/path/to/tracemux skips the cargo build.
#
# Comparisons per recording, each BENCH_RUNS (5) alternating runs written to a
# file and to /dev/null, medians of wall seconds and peak RSS (records =
# entry/exit/event records, counted in uftrace dump's output):
#   `uftrace replay -d DIR` vs `tracemux report DIR`         (outputs compared once)
#   `uftrace dump -d DIR`   vs `tracemux dump --records DIR` (outputs compared once)
#   `uftrace report -d DIR` vs `tracemux stats DIR`          (decode speed; not compared)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=uftrace
. "$here/lib.sh"

pick_inputs uftrace-big info record-uftrace.sh "$@"

side_header
for d in "${inputs[@]}"; do
    size=$(du -sm "$d" | cut -f1)
    label="$(basename "$d") (${size}MB)"
    records=$(uftrace dump -d "$d" 2> /dev/null | grep -cE '^ *[0-9]+\.[0-9]+ ' || true)

    native=(uftrace replay -d "$d")
    mine=("$tm" report "$d")
    side_note "replay: $(same_output)"
    side_by_side "$label" "$records" "$size" "uftrace replay" "tracemux report"

    native=(uftrace dump -d "$d")
    mine=("$tm" dump --records "$d")
    side_note "dump: $(same_output)"
    side_by_side "$label" "$records" "$size" "uftrace dump" "tracemux dump --records"

    native=(uftrace report -d "$d")
    mine=("$tm" stats "$d")
    side_by_side "$label" "$records" "$size" "uftrace report" "tracemux stats"
done
side_note "${BENCH_RUNS:-5} alternating runs each, medians; count: records"
