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
root=$(cd "$here/.." && pwd)
out=$here/out
mkdir -p "$out"

dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
    [ -f "$out/uftrace-big/info" ] || "$here/recipes/record-uftrace.sh" "$out/uftrace-big"
    dirs=("$out/uftrace-big")
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
    /usr/bin/time -f "%e %M" -o "$out/uftrace-time.txt" "$@" > "$out/$name.out" 2> "$out/$name.err" || rc=$?
    read -r wall rss < <(tail -1 "$out/uftrace-time.txt")
    echo "$wall $rss $rc"
}

# line RECORDS LABEL COMMAND "wall rss rc"
line() {
    local records=$1 label=$2 cmd=$3 wall rss rc rps note=""
    read -r wall rss rc <<< "$4"
    rps=$(awk -v e="$records" -v w="$wall" 'BEGIN{ if (w > 0) printf "%.2fM", e/w/1e6; else print "-" }')
    [ "$rc" = 0 ] || note="  (exit $rc)"
    printf "%-22s %-30s %10s %9s %11s %12s%s\n" "$label" "$cmd" "$records" "$wall" "$rps" \
        "$((rss / 1024))" "$note" | tee -a "$out/uftrace-results.txt"
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
    echo "   $title: $msg" | tee -a "$out/uftrace-results.txt"
}

printf "%-22s %-30s %10s %9s %11s %12s\n" recording command records seconds "records/s" "peak RSS MB" \
    | tee "$out/uftrace-results.txt"
for d in "${dirs[@]}"; do
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
