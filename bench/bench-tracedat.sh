#!/usr/bin/env bash
# Compare tracemux with trace-cmd on the same large trace.dat: events/s and
# peak RSS. Timings are never asserted; results go to bench/out/ and the
# numbers quoted in the README come from runs of this script.
#
# usage: bench/bench-tracedat.sh [TRACE.dat ...]
#   With no argument, records a large trace first (needs root, tracefs,
#   trace-cmd: `apt-get install trace-cmd`; ~1 GB free disk), with the
#   recipe of the corpus' tools/record-big.sh: sched/irq/timer/syscall
#   events under load, -b 20000, file version 6, then converted to v7+zstd.
# Each of `report -R` and `report`, written to a file and to /dev/null:
# BENCH_RUNS (5) alternating runs of tracemux and trace-cmd, medians of wall
# seconds and peak RSS; events/s and MB/s of trace data from the medians.
# The outputs are compared once (identical or not). BENCH_VIEWS="raw" or
# "pretty" times only `report -R` or only `report` (default: both).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=tracedat
. "$here/lib.sh"
secs=${BENCH_SECONDS:-20}

record() {
    mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
    rm -f "$out/big-v6.dat" "$out/big-v7-zstd.dat"
    # this VM needs -d --no-filter and no command (see the corpus README)
    trace-cmd record -d --no-filter --file-version 6 -b 20000 -e sched -e irq -e timer \
        -e raw_syscalls -e syscalls -o "$out/big-v6.dat" > "$out/record.log" 2>&1 &
    local tp=$!
    for _ in $(seq 100); do grep -q 'Hit Ctrl' "$out/record.log" && break; sleep 0.1; done
    "$here/load.sh" "$secs"
    kill -INT $tp; wait $tp || true
    trace-cmd convert -i "$out/big-v6.dat" -o "$out/big-v7-zstd.dat" --file-version 7 --compression zstd \
        > "$out/convert.log" 2>&1
}

traces=("$@")
if [ ${#traces[@]} -eq 0 ]; then
    [ -f "$out/big-v6.dat" ] || record
    traces=("$out/big-v6.dat" "$out/big-v7-zstd.dat")
fi

side_header
for t in "${traces[@]}"; do
    size=$(du -m "$t" | cut -f1)
    label="$(basename "$t") (${size}MB)"
    for view in ${BENCH_VIEWS:-raw pretty}; do
        mode=""
        [ "$view" = raw ] && mode="-R"
        events=$(("$tm" report $mode "$t" 2> /dev/null || true) | grep -vc '^=>')
        events=$((events - 1))
        mine=("$tm" report $mode "$t")
        native=()
        if command -v trace-cmd > /dev/null; then
            native=(trace-cmd report $mode -i "$t")
            side_note "report${mode:+ $mode}: $(same_output)"
        fi
        side_by_side "$label" "$events" "$size" "trace-cmd report${mode:+ $mode}" \
            "tracemux report${mode:+ $mode}"
    done
done
side_note "${BENCH_RUNS:-5} alternating runs each, medians; count: events"
