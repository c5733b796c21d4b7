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
root=$(cd "$here/.." && pwd)
out=$here/out
mkdir -p "$out"

traces=("$@")
if [ ${#traces[@]} -eq 0 ]; then
    [ -f "$out/ctf-big/ust/uid/0/64-bit/metadata" ] || "$here/recipes/record-ctf.sh" "$out/ctf-big"
    traces=("$out/ctf-big")
fi

if [ -n "${TRACEMUX:-}" ]; then
    tm=$TRACEMUX
else
    cargo build --release --manifest-path "$root/Cargo.toml" -q
    tm=$root/target/release/tracemux
fi

# run NAME CMD...: "wall-seconds peak-RSS-KiB exit-status" of CMD; stdout to out/NAME.out
run() {
    local name=$1; shift
    local rc=0
    /usr/bin/time -f "%e %M" -o "$out/ctf-time.txt" "$@" > "$out/$name.out" 2> "$out/$name.err" || rc=$?
    read -r wall rss < <(tail -1 "$out/ctf-time.txt")
    echo "$wall $rss $rc"
}

# line EVENTS TRACE-LABEL COMMAND "wall rss rc"
line() {
    local events=$1 label=$2 cmd=$3 wall rss rc eps note=""
    read -r wall rss rc <<< "$4"
    eps=$(awk -v e="$events" -v w="$wall" 'BEGIN{ if (w > 0) printf "%.2fM", e/w/1e6; else print "-" }')
    [ "$rc" = 0 ] || note="  (exit $rc)"
    printf "%-20s %-32s %10s %9s %10s %12s%s\n" "$label" "$cmd" "$events" "$wall" "$eps" \
        "$((rss / 1024))" "$note" | tee -a "$out/ctf-results.txt"
}

# ratio NATIVE-WALL TRACEMUX-WALL: how many times faster tracemux is
ratio() {
    awk -v n="$1" -v t="$2" 'BEGIN{ if (t > 0) printf "%.2fx", n/t; else print "-" }'
}

# verdict TITLE NATIVE-NAME "native result" TRACEMUX-NAME "tracemux result" [cmp]:
# whether the outputs are identical (with cmp; large outputs removed when they
# are) and the speed ratio, or why tracemux failed
verdict() {
    local title=$1 nn=$2 nr=$3 tn=$4 tr=$5 how=${6:-} rc msg
    rc=${tr##* }
    if [ "$rc" != 0 ]; then
        msg="tracemux FAILED (exit $rc, see bench/out/$tn.err)"
        [ "$how" = cmp ] && rm -f "$out/$nn.out" "$out/$tn.out"
    else
        msg="$(ratio "${nr%% *}" "${tr%% *}") faster"
        if [ "$how" = cmp ]; then
            if cmp -s "$out/$nn.out" "$out/$tn.out"; then
                rm -f "$out/$nn.out" "$out/$tn.out"
                msg="identical output, $msg"
            else
                msg="OUTPUT DIFFERS (bench/out/$tn.out vs bench/out/$nn.out), $msg"
            fi
        fi
    fi
    echo "   $title: $msg" | tee -a "$out/ctf-results.txt"
}

printf "%-20s %-32s %10s %9s %10s %12s\n" trace command events seconds "events/s" "peak RSS MB" \
    | tee "$out/ctf-results.txt"
for t in "${traces[@]}"; do
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
