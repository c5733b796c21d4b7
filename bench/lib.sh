# Shared by bench-tracedat.sh, bench-ctf.sh, bench-uftrace.sh and
# bench-convert.sh. Before sourcing, set here (bench/), and results (NAME of
# out/NAME-results.txt) for the side-by-side tables.
# Provides: root (repository), out (bench/out, created), tm (the tracemux
# binary; TRACEMUX=path skips the build), recorded, pick_inputs,
# ctf_big_inputs, table, run, line, ratio, verdict; and for the side-by-side
# tables (alternating runs, medians, to a file and to /dev/null): median,
# timed, same_output, side_header, side_by_side, side_note.

root=$(cd "$here/.." && pwd)
out=$here/out
mkdir -p "$out"

if [ -n "${TRACEMUX:-}" ]; then
    tm=$TRACEMUX
else
    cargo build --profile bench-lto -p tracemux --manifest-path "$root/Cargo.toml" -q
    tm=$root/target/bench-lto/tracemux
fi

# recorded NAME FILE RECIPE: out/NAME, recorded first by recipes/RECIPE when
# its FILE is missing
recorded() {
    [ -f "$out/$1/$2" ] || "$here/recipes/$3" "$out/$1"
}

# pick_inputs NAME FILE RECIPE [INPUT...]: the array inputs, the INPUTs or,
# when there are none, out/NAME (recorded first when missing, see recorded)
pick_inputs() {
    local name=$1 file=$2 recipe=$3
    shift 3
    inputs=("$@")
    if [ ${#inputs[@]} -eq 0 ]; then
        recorded "$name" "$file" "$recipe"
        inputs=("$out/$name")
    fi
}

# ctf_big_inputs [TRACE...]: inputs, the TRACEs or the LTTng-UST trace
# bench/out/ctf-big (recorded first by recipes/record-ctf.sh when missing)
ctf_big_inputs() {
    pick_inputs ctf-big ust/uid/0/64-bit/metadata record-ctf.sh "$@"
}

# run NAME CMD...: "wall-seconds peak-RSS-KiB exit-status" of CMD; stdout to out/NAME.out
run() {
    local name=$1; shift
    local rc=0
    /usr/bin/time -f "%e %M" -o "$out/$results-time.txt" "$@" > "$out/$name.out" 2> "$out/$name.err" || rc=$?
    read -r wall rss < <(tail -1 "$out/$results-time.txt")
    echo "$wall $rss $rc"
}

# line COUNT LABEL COMMAND "wall rss rc"
line() {
    local count=$1 label=$2 cmd=$3 wall rss rc rate note=""
    read -r wall rss rc <<< "$4"
    rate=$(awk -v e="$count" -v w="$wall" 'BEGIN{ if (w > 0) printf "%.2fM", e/w/1e6; else print "-" }')
    [ "$rc" = 0 ] || note="  (exit $rc)"
    printf "$fmt%s\n" "$label" "$cmd" "$count" "$wall" "$rate" \
        "$((rss / 1024))" "$note" | tee -a "$out/$results-results.txt"
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
    echo "   $title: $msg" | tee -a "$out/$results-results.txt"
}

# table NAME FMT LABEL-TITLE COUNT-TITLE RATE-TITLE: starts the results
# table NAME (out/NAME-results.txt, out/NAME-time.txt) whose rows have the
# printf format FMT (label, command, count, seconds, rate, RSS MB), with its
# first line
table() {
    results=$1 fmt=$2
    printf "$fmt\n" "$3" command "$4" seconds "$5" "peak RSS MB" | tee "$out/$results-results.txt"
}

# --- side by side: alternating runs, medians (bench-tracedat/ctf/uftrace.sh) ---

# median of the numbers on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# timed DEST CMD...: "wall-seconds peak-RSS-KiB" of CMD, its output to DEST.
# Before a run to a file, the earlier runs' output is written back (sync):
# truncating a file of dirty pages makes ext4 (auto_da_alloc) flush it when
# it is closed, a GB of writeback that would otherwise run during the next
# timed run. (In A/B runs of tracemux alone on 27 Nov the difference was
# within the machine's noise.) BENCH_SYNC=0 leaves it out.
timed() {
    local dest=$1; shift
    if [ "$dest" != /dev/null ] && [ "${BENCH_SYNC:-1}" != 0 ]; then
        sync
    fi
    /usr/bin/time -f "%e %M" -o "$out/timed.txt" "$@" > "$dest" 2> "$out/timed.err" || true
    tail -1 "$out/timed.txt"
}

# same_output: whether the commands in the arrays native=() and mine=() print
# the same bytes (compared by checksum, streamed: outputs can be GBs)
same_output() {
    local a b
    a=$("${mine[@]}" 2> /dev/null | sha1sum) || true
    b=$("${native[@]}" 2> /dev/null | sha1sum) || true
    if [ "$a" = "$b" ]; then echo "identical output"; else echo "OUTPUT DIFFERS"; fi
}

side_fmt="%-24s %-30s %-5s %10s %9s %10s %7s %7s %7s\n"

# side_header: the column titles (starts the results file)
side_header() {
    printf "$side_fmt" trace command to count "median s" "count/s" "MB/s" "RSS MB" ratio \
        | tee "$out/$results-results.txt"
}

# side_by_side LABEL COUNT SIZE-MB NATIVE-TITLE MINE-TITLE: BENCH_RUNS (5)
# alternating runs of native=() and mine=(), their output written to a file in
# bench/out and to /dev/null; one row per command and destination with the
# medians of wall seconds and peak RSS, count/s and MB/s of input from the
# median, and (on tracemux's rows) how many times faster than the native tool.
# An empty native=() times tracemux alone.
side_by_side() {
    local label=$1 count=$2 size=$3 ntitle=$4 ttitle=$5 runs=${BENCH_RUNS:-5}
    local dest d w r nw nr tw tr nwall
    for dest in file null; do
        d=/dev/null
        [ "$dest" = file ] && d=$out/side.out
        nw="" nr="" tw="" tr=""
        for _ in $(seq "$runs"); do
            if [ ${#native[@]} -gt 0 ]; then
                read -r w r <<< "$(timed "$d" "${native[@]}")"
                nw+="$w " nr+="$r "
            fi
            read -r w r <<< "$(timed "$d" "${mine[@]}")"
            tw+="$w " tr+="$r "
        done
        nwall=""
        if [ -n "$nw" ]; then
            nwall=$(tr ' ' '\n' <<< "$nw" | grep . | median)
            side_row "$label" "$ntitle" "$dest" "$count" "$size" "$nwall" \
                "$(tr ' ' '\n' <<< "$nr" | grep . | median)" ""
        fi
        w=$(tr ' ' '\n' <<< "$tw" | grep . | median)
        side_row "$label" "$ttitle" "$dest" "$count" "$size" "$w" \
            "$(tr ' ' '\n' <<< "$tr" | grep . | median)" "${nwall:+$(ratio "$nwall" "$w")}"
    done
    rm -f "$out/side.out"
}

# side_row LABEL TITLE DEST COUNT SIZE-MB WALL RSS-KiB RATIO
side_row() {
    local eps mbs
    eps=$(awk -v e="$4" -v w="$6" 'BEGIN{ if (w > 0) printf "%.2fM", e/w/1e6; else print "-" }')
    mbs=$(awk -v m="$5" -v w="$6" 'BEGIN{ if (w > 0) printf "%.0f", m/w; else print "-" }')
    printf "$side_fmt" "$1" "$2" "$3" "$4" "$6" "$eps" "$mbs" "$(( ${7%.*} / 1024 ))" "${8:--}" \
        | tee -a "$out/$results-results.txt"
}

# side_note TEXT: a line under the table
side_note() { echo "   $*" | tee -a "$out/$results-results.txt"; }
