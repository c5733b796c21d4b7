#!/usr/bin/env bash
# Every converter against the tool that does the same job, run alternately
# on the same big traces (BENCH_RUNS, default 3, runs each; medians of wall
# seconds and peak RSS), with events/s. Timings are never asserted; the
# table goes to bench/out/converters-results.txt, dated.
#
# usage: bench/bench-converters.sh DIR
#   DIR holds the traces of ../shared/corpus/tools/record-big.sh: big-v6.dat,
#   lttng-big/, uftrace-big/ (and perf-big.data). TRACEMUX=path skips the
#   build; TRACE_DUMP=path is LISA's trace-dump (built from its public
#   sources outside the repository), for trace.dat -> Parquet.
#
# Jobs (peer in brackets, when there is one):
#   trace.dat -> parquet --no-events-table [LISA trace-dump parquet --compression zstd]
#   trace.dat -> trace.dat v7 zstd         [trace-cmd convert --file-version 7 --compression zstd]
#   trace.dat -> jsonl                     [trace-cmd report]
#   CTF -> CTF --reencode                  [babeltrace2 -c sink.ctf.fs]
#   uftrace -> chrome                      [uftrace dump --chrome]
#   every trace -> perfetto, parquet, jsonl (events/s; the CTF trace against
#   babeltrace2's dummy sink, which decodes and drops every event)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
dir=${1:?usage: bench-converters.sh DIR (the traces of record-big.sh)}
runs=${BENCH_RUNS:-3}
scratch=$out/conv-scratch
fmtc="%-14s %-44s %10s %9s %10s %7s %8s\n"
results=converters
{
    echo "# bench-converters.sh $(date -u +%Y-%m-%dT%H:%MZ), $runs alternating runs, medians; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    printf "$fmtc" trace command events "median s" "events/s" "RSS MB" ratio
} | tee "$out/$results-results.txt"

# once CMD...: "wall rss" of one run, output files under $scratch (emptied first)
once() {
    rm -rf "$scratch" && mkdir -p "$scratch"
    sync
    /usr/bin/time -f "%e %M" -o "$out/conv-time.txt" "$@" > /dev/null 2> "$out/conv.err" ||
        echo "   (exit $?: $* — see bench/out/conv.err)" >&2
    tail -1 "$out/conv-time.txt"
}

# row LABEL TITLE EVENTS WALLS RSSES [PEER-WALL]
row() {
    local w r eps ratio=-
    w=$(tr ' ' '\n' <<< "$4" | grep . | median)
    r=$(tr ' ' '\n' <<< "$5" | grep . | median)
    eps=$(awk -v e="$3" -v w="$w" 'BEGIN{ if (w > 0) printf "%.2fM", e/w/1e6; else print "-" }')
    [ -n "${6:-}" ] && ratio=$(ratio "$6" "$w")
    printf "$fmtc" "$1" "$2" "$3" "$w" "$eps" "$(( ${r%.*} / 1024 ))" "$ratio" | tee -a "$out/$results-results.txt"
    last=$w
}

# pair LABEL EVENTS PEER-TITLE TM-TITLE: runs the arrays peer=() (may be
# empty) and mine=() alternately
pair() {
    local label=$1 events=$2 pw="" pr="" tw="" tr="" w r peerwall=""
    for _ in $(seq "$runs"); do
        if [ ${#peer[@]} -gt 0 ]; then
            read -r w r <<< "$(once "${peer[@]}")"
            pw+="$w " pr+="$r "
        fi
        read -r w r <<< "$(once "${mine[@]}")"
        tw+="$w " tr+="$r "
    done
    if [ -n "$pw" ]; then
        row "$label" "$3" "$events" "$pw" "$pr"
        peerwall=$last
    fi
    row "$label" "$4" "$events" "$tw" "$tr" "$peerwall"
}

events_of() { # events tracemux reads (report --json's event lines)
    "$tm" report --json "$1" 2> /dev/null | grep -c '"type":"event"' || true
}

dat=$dir/big-v6.dat ctf=$dir/lttng-big uft=$dir/uftrace-big
ndat=$(events_of "$dat") nctf=$(events_of "$ctf") nuft=$(events_of "$uft")

# the CTF trace through babeltrace2's dummy sink: the yardstick for every format
peer=() mine=(babeltrace2 "$ctf" -c sink.utils.dummy)
pair lttng-big "$nctf" "" "babeltrace2 -c sink.utils.dummy"
dummy=$last

peer=(babeltrace2 "$ctf" -c sink.ctf.fs -p "path=\"$scratch/bt2\"")
mine=("$tm" convert -q --reencode --to ctf -o "$scratch/tm" "$ctf")
pair lttng-big "$nctf" "babeltrace2 -c sink.ctf.fs" "tracemux convert --reencode --to ctf"

peer=(trace-cmd convert -i "$dat" -o "$scratch/tc.dat" --file-version 7 --compression zstd)
mine=("$tm" convert -q --to tracedat --file-version 7 --compression zstd -o "$scratch/tm.dat" "$dat")
pair big-v6.dat "$ndat" "trace-cmd convert (v7, zstd)" "tracemux convert --to tracedat (v7, zstd)"

peer=(sh -c "trace-cmd report -i '$dat' > '$scratch/report.txt'")
mine=("$tm" convert -q --to jsonl -o "$scratch/tm.jsonl" "$dat")
pair big-v6.dat "$ndat" "trace-cmd report (to a file)" "tracemux convert --to jsonl"

peer=()
if [ -n "${TRACE_DUMP:-}" ]; then
    peer=(sh -c "cd '$scratch' && exec '$TRACE_DUMP' parquet --trace '$dat' --trace-format tracedat --compression zstd")
fi
mine=("$tm" convert -q --to parquet --no-events-table -o "$scratch/pq" "$dat")
pair big-v6.dat "$ndat" "LISA trace-dump parquet (zstd)" "tracemux convert --to parquet --no-events-table"

if [ -e "$uft" ]; then
    peer=(sh -c "uftrace dump --chrome -d '$uft' > '$scratch/uf.json'")
    mine=("$tm" convert -q --to chrome -o "$scratch/tm.json" "$uft")
    pair uftrace-big "$nuft" "uftrace dump --chrome (to a file)" "tracemux convert --to chrome"
else
    echo "   (no $uft: the uftrace jobs are left out)" | tee -a "$out/$results-results.txt"
fi

for t in "$dat" "$ctf" "$uft"; do
    [ -e "$t" ] || continue
    n=$(events_of "$t")
    for to in perfetto parquet jsonl; do
        peer=() mine=("$tm" convert -q --to "$to" -o "$scratch/out.$to" "$t")
        pair "$(basename "$t")" "$n" "" "tracemux convert --to $to"
        echo "   = $(ratio "$dummy" "$(awk -v n="$n" -v m="$nctf" -v w="$last" 'BEGIN{ print w * m / n }')") babeltrace2's dummy sink in events/s" \
            | tee -a "$out/$results-results.txt"
    done
done
rm -rf "$scratch"
