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
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=$here/out
mkdir -p "$out"
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

cargo build --profile bench-lto -p tracemux --manifest-path "$root/Cargo.toml" -q
tm=$root/target/bench-lto/tracemux

# run NAME CMD...: wall seconds and peak RSS (KiB) of CMD, output to /dev/null
run() {
    local name=$1; shift
    /usr/bin/time -f "%e %M" -o "$out/time.txt" "$@" > "$out/$name.out" 2> "$out/$name.err" || true
    read -r wall rss < "$out/time.txt"
    echo "$wall $rss"
}

printf "%-22s %-26s %10s %12s %14s %12s\n" trace command events seconds "events/s" "peak RSS MB" | tee "$out/results.txt"
for t in "${traces[@]}"; do
    name=$(basename "$t")
    size=$(du -m "$t" | cut -f1)
    for mode in "-R" ""; do
    same=""
    for tool in tracemux trace-cmd; do
        cmd="$tool report${mode:+ $mode}"
        if [ "$tool" = tracemux ]; then
            r=$(run tm "$tm" report $mode "$t")
            events=$(($(grep -vc '^=>' "$out/tm.out") - 1))
        else
            command -v trace-cmd > /dev/null || continue
            r=$(run tc trace-cmd report $mode -i "$t")
            events=$(($(grep -vc '^=>' "$out/tc.out") - 1))
            if cmp -s "$out/tm.out" "$out/tc.out"; then same="identical output"; else same="OUTPUT DIFFERS"; fi
        fi
        read -r wall rss <<< "$r"
        eps=$(awk -v e="$events" -v w="$wall" 'BEGIN{ if (w > 0) printf "%.2fM", e/w/1e6; else print "-" }')
        printf "%-22s %-26s %10s %12s %14s %12s\n" "$name (${size}MB)" "$cmd" "$events" "$wall" "$eps" \
            "$((rss / 1024))" | tee -a "$out/results.txt"
    done
    echo "   tracemux vs trace-cmd (report${mode:+ $mode}): ${same:-not compared}" | tee -a "$out/results.txt"
    done
done
