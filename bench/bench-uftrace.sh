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
# Comparisons per recording (records = entry/exit/event records, counted in
# uftrace dump's output, as the issue counts them):
#   `uftrace replay -d DIR` vs `tracemux report DIR`         (outputs must be identical)
#   `uftrace dump -d DIR`   vs `tracemux dump --records DIR` (outputs must be identical)
#   `uftrace report -d DIR` vs `tracemux stats DIR`          (decode speed; not compared)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

pick_inputs uftrace-big info record-uftrace.sh "$@"

table uftrace "%-22s %-30s %10s %9s %11s %12s" recording records "records/s"
for d in "${inputs[@]}"; do
    label="$(basename "$d") ($(du -sm "$d" | cut -f1)MB)"

    ud=$(run uf-dump uftrace dump -d "$d")
    records=$(grep -cE '^ *[0-9]+\.[0-9]+ ' "$out/uf-dump.out" || true)
    ur=$(run uf-replay uftrace replay -d "$d")
    line "$records" "$label" "uftrace replay" "$ur"
    tr=$(run tm-uf-report "$tm" report "$d")
    line "$records" "$label" "tracemux report" "$tr"
    verdict "tracemux report vs uftrace replay" uf-replay "$ur" tm-uf-report "$tr" cmp

    line "$records" "$label" "uftrace dump" "$ud"
    td=$(run tm-uf-dump "$tm" dump --records "$d")
    line "$records" "$label" "tracemux dump --records" "$td"
    verdict "tracemux dump --records vs uftrace dump" uf-dump "$ud" tm-uf-dump "$td" cmp

    us=$(run uf-report uftrace report -d "$d")
    line "$records" "$label" "uftrace report" "$us"
    ts=$(run tm-uf-stats "$tm" stats "$d")
    line "$records" "$label" "tracemux stats" "$ts"
    verdict "tracemux stats vs uftrace report" uf-report "$us" tm-uf-stats "$ts"
done
