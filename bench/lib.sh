# Shared by bench-ctf.sh, bench-uftrace.sh and bench-convert.sh (and, for
# root, out and tm, bench-tracedat.sh). Before sourcing, set here (bench/).
# Provides: root (repository), out (bench/out, created), tm (the tracemux
# binary; TRACEMUX=path skips the build), recorded, pick_inputs,
# ctf_big_inputs, table, run, line, ratio, verdict.

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
