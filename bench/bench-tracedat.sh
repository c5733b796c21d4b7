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
# The outputs are compared once (identical or not).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# root, out, tm (TRACEMUX=path: time that binary instead of building the
# bench-lto one); this script has a run of its own, defined below
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

# run NAME DEST CMD...: wall seconds and peak RSS (KiB) of CMD, its output
# to DEST (a file in bench/out, or /dev/null)
run() {
    local name=$1 dest=$2; shift 2
    /usr/bin/time -f "%e %M" -o "$out/time.txt" "$@" > "$dest" 2> "$out/$name.err" || true
    read -r wall rss < "$out/time.txt"
    echo "$wall $rss"
}

# median of the numbers on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

runs=${BENCH_RUNS:-5}
printf "%-22s %-20s %-9s %10s %9s %10s %9s %8s\n" trace command to events "median s" "events/s" "MB/s" "RSS MB" \
    | tee "$out/results.txt"
for t in "${traces[@]}"; do
    name=$(basename "$t")
    size=$(du -m "$t" | cut -f1)
    for mode in "-R" ""; do
        # the outputs, once, compared (by checksum: they are GBs)
        events=$(("$tm" report $mode "$t" 2> /dev/null || true) | grep -vc '^=>')
        events=$((events - 1))
        same="not compared (no trace-cmd)"
        if command -v trace-cmd > /dev/null; then
            a=$(("$tm" report $mode "$t" 2> /dev/null || true) | sha1sum)
            b=$((trace-cmd report $mode -i "$t" 2> /dev/null || true) | sha1sum)
            if [ "$a" = "$b" ]; then same="identical output"; else same="OUTPUT DIFFERS"; fi
        fi
        for dest in file null; do
            declare -A walls=() rsss=()
            # alternating runs: tracemux, trace-cmd, tracemux, ...
            for _ in $(seq "$runs"); do
                for tool in tracemux trace-cmd; do
                    [ "$tool" = trace-cmd ] && ! command -v trace-cmd > /dev/null && continue
                    d=/dev/null
                    [ "$dest" = file ] && d=$out/report.out
                    if [ "$tool" = tracemux ]; then
                        r=$(run tm "$d" "$tm" report $mode "$t")
                    else
                        r=$(run tc "$d" trace-cmd report $mode -i "$t")
                    fi
                    read -r wall rss <<< "$r"
                    walls[$tool]+="$wall "
                    rsss[$tool]+="$rss "
                done
            done
            for tool in tracemux trace-cmd; do
                [ -n "${walls[$tool]:-}" ] || continue
                wall=$(tr ' ' '\n' <<< "${walls[$tool]}" | grep . | median)
                rss=$(tr ' ' '\n' <<< "${rsss[$tool]}" | grep . | median)
                eps=$(awk -v e="$events" -v w="$wall" 'BEGIN{ if (w > 0) printf "%.2fM", e/w/1e6; else print "-" }')
                mbs=$(awk -v m="$size" -v w="$wall" 'BEGIN{ if (w > 0) printf "%.0f", m/w; else print "-" }')
                printf "%-22s %-20s %-9s %10s %9s %10s %9s %8s\n" "$name (${size}MB)" "$tool report${mode:+ $mode}" \
                    "$dest" "$events" "$wall" "$eps" "$mbs" "$((${rss%.*} / 1024))" | tee -a "$out/results.txt"
            done
            unset walls rsss
        done
        rm -f "$out/report.out"
        echo "   report${mode:+ $mode}: ${same} ($runs alternating runs each, medians)" | tee -a "$out/results.txt"
    done
done
