#!/usr/bin/env bash
# Compare tracemux with babeltrace2 on the same large CTF trace: events/s,
# speed ratio and peak RSS. Timings are never asserted; results go to
# bench/out/ and the numbers quoted in the README come from runs of this script.
#
# usage: bench/bench-ctf.sh [TRACE_DIR ...]
#   With no argument, uses bench/out/ctf-big, recording it first when missing
#   with bench/recipes/record-ctf.sh (needs root, lttng-tools, liblttng-ust-dev,
#   gcc; ~200 MB of disk for the trace and ~1.2 GB for the text outputs):
#   an LTTng-UST trace of 5.4 M events of every CTF field kind, per-UID buffers.
#   TRACEMUX=/path/to/tracemux skips the cargo build and uses that binary.
#
# Two comparisons per trace:
#   text:   `babeltrace2 TRACE`          vs `tracemux report TRACE` (outputs must be identical)
#   decode: `babeltrace2 -o dummy TRACE` vs `tracemux stats TRACE`  (read every event, print
#           (almost) nothing; outputs differ by design and are not compared)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ctf_big_inputs "$@"

table ctf "%-20s %-32s %10s %9s %10s %12s" trace events "events/s"
for t in "${inputs[@]}"; do
    label="$(basename "$t") ($(du -sm "$t" | cut -f1)MB)"

    # text output: every event, one line each
    bt=$(run bt2-text babeltrace2 "$t")
    events=$(wc -l < "$out/bt2-text.out")
    line "$events" "$label" "babeltrace2" "$bt"
    tmr=$(run tm-ctf-report "$tm" report "$t")
    line "$events" "$label" "tracemux report" "$tmr"
    verdict "tracemux report vs babeltrace2" bt2-text "$bt" tm-ctf-report "$tmr" cmp

    # decoding only
    bd=$(run bt2-dummy babeltrace2 -o dummy "$t")
    line "$events" "$label" "babeltrace2 -o dummy" "$bd"
    tms=$(run tm-ctf-stats "$tm" stats "$t")
    line "$events" "$label" "tracemux stats" "$tms"
    verdict "tracemux stats vs babeltrace2 -o dummy" bt2-dummy "$bd" tm-ctf-stats "$tms"
done
