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
# Two comparisons per trace, each BENCH_RUNS (5) alternating runs written to a
# file and to /dev/null, medians of wall seconds and peak RSS:
#   text:   `babeltrace2 TRACE`          vs `tracemux report TRACE` (outputs compared once)
#   decode: `babeltrace2 -o dummy TRACE` vs `tracemux stats TRACE`  (read every event, print
#           (almost) nothing; outputs differ by design and are not compared)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=ctf
. "$here/lib.sh"

ctf_big_inputs "$@"

side_header
for t in "${inputs[@]}"; do
    size=$(du -sm "$t" | cut -f1)
    label="$(basename "$t") (${size}MB)"
    events=$("$tm" report "$t" 2> /dev/null | wc -l)

    # text output: every event, one line each
    native=(babeltrace2 "$t")
    mine=("$tm" report "$t")
    side_note "text: $(same_output)"
    side_by_side "$label" "$events" "$size" "babeltrace2" "tracemux report"

    # decoding only
    native=(babeltrace2 -o dummy "$t")
    mine=("$tm" stats "$t")
    side_by_side "$label" "$events" "$size" "babeltrace2 -o dummy" "tracemux stats"
done
side_note "${BENCH_RUNS:-5} alternating runs each, medians; count: events"
