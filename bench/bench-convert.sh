#!/usr/bin/env bash
# tracemux convert against babeltrace2's own CTF-to-CTF conversion
# (`babeltrace2 convert IN -c sink.ctf.fs -p 'path="OUT"'`): events/s, speed
# ratio and peak RSS, on the large traces of the other benchmarks. Timings are
# never asserted; results go to bench/out/convert-results.txt.
#
# usage: bench/bench-convert.sh [TRACE ...]
#   With no argument: bench/out/ctf-big (recorded by bench-ctf.sh's recipe when
#   missing) and bench/out/tracedat-big/trace-v6.dat when bench-tracedat.sh
#   has recorded it. Needs babeltrace2 (and uftrace for uftrace inputs: a
#   uftrace data directory is an input like the others). TRACEMUX=path skips
#   the build.
#
# Per trace:
#   tracemux convert --to ctf   (every format)          vs babeltrace2 convert (CTF inputs)
#   tracemux convert --to jsonl
#   tracemux convert --to tracedat --file-version 7     (trace.dat inputs)
#   tracemux convert --to parquet [--no-events-table]   (every format)
#                                                       vs LISA's trace-dump parquet (trace.dat
#                                                       inputs, when TRACE_DUMP=path is set)
#   tracemux convert --to perfetto (and --compress), --to chrome (every format)
#                                                       vs uftrace dump --chrome (uftrace inputs)
# The CTF outputs are read back by babeltrace2 and their event counts compared.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ctf_big_inputs "$@"
if [ $# -eq 0 ] && [ -f "$out/tracedat-big/trace-v6.dat" ]; then
    inputs+=("$out/tracedat-big/trace-v6.dat")
fi

count_events() { # the events babeltrace2 reads from a CTF trace
    babeltrace2 "$1" | wc -l
}

table convert "%-24s %-34s %10s %9s %10s %12s" trace events "events/s"
for t in "${inputs[@]}"; do
    label="$(basename "$t") ($(du -sm "$t" | cut -f1)MB)"
    events=$("$tm" report --json "$t" | grep -c '"type":"event"')

    rm -rf "$out/conv-tm-ctf"
    tmc=$(run conv-tm-ctf "$tm" convert -q --reencode --to ctf -o "$out/conv-tm-ctf" "$t")
    line "$events" "$label" "tracemux convert --reencode" "$tmc"
    if [ -f "$t/metadata" ] || find "$t" -name metadata -print -quit | grep -q .; then
        # CTF to CTF with nothing selected: packets copied, metadata written
        rm -rf "$out/conv-tm-copy"
        tmk=$(run conv-tm-copy "$tm" convert -q --to ctf -o "$out/conv-tm-copy" "$t")
        line "$events" "$label" "tracemux convert --to ctf (copy)" "$tmk"
        rm -rf "$out/conv-tm-copy"
        tmk2=$(run conv-tm-copy2 "$tm" convert -q --to ctf2 -o "$out/conv-tm-copy" "$t")
        line "$events" "$label" "tracemux convert --to ctf2 (copy)" "$tmk2"
        rm -rf "$out/conv-tm-copy"
    fi
    if [ -f "$t/metadata" ] || find "$t" -name metadata -print -quit | grep -q .; then
        rm -rf "$out/conv-bt2-ctf"
        btc=$(run conv-bt2-ctf babeltrace2 convert "$t" -c sink.ctf.fs -p "path=\"$out/conv-bt2-ctf\"")
        line "$events" "$label" "babeltrace2 convert (ctf.fs)" "$btc"
        verdict "tracemux convert --reencode vs babeltrace2 convert" conv-bt2-ctf "$btc" conv-tm-ctf "$tmc"
        verdict "tracemux convert --to ctf (copy) vs babeltrace2 convert" conv-bt2-ctf "$btc" conv-tm-copy "$tmk"
    fi
    got=$(count_events "$out/conv-tm-ctf")
    echo "   babeltrace2 reads $got events from tracemux's CTF output (source: $events)" | tee -a "$out/$results-results.txt"

    tmj=$(run conv-tm-jsonl "$tm" convert -q --force --to jsonl -o "$out/conv-tm.jsonl" "$t")
    line "$events" "$label" "tracemux convert --to jsonl" "$tmj"
    if "$tm" info "$t" 2>/dev/null | grep -q 'trace.dat'; then
        tmt=$(run conv-tm-dat "$tm" convert -q --force --to tracedat -o "$out/conv-tm.dat" "$t")
        line "$events" "$label" "tracemux convert --to tracedat" "$tmt"
    fi
    rm -rf "$out/conv-tm-pq"
    tmp=$(run conv-tm-pq "$tm" convert -q --to parquet -o "$out/conv-tm-pq" "$t")
    line "$events" "$label" "tracemux convert --to parquet" "$tmp"
    echo "   parquet output: $(du -sm "$out/conv-tm-pq" | cut -f1) MB in $(find "$out/conv-tm-pq" -name '*.parquet' | wc -l) tables" | tee -a "$out/$results-results.txt"
    rm -rf "$out/conv-tm-pq"
    tmq=$(run conv-tm-pqc "$tm" convert -q --to parquet --no-events-table -o "$out/conv-tm-pqc" "$t")
    line "$events" "$label" "tracemux ... --no-events-table" "$tmq"
    echo "   parquet output without events: $(du -sm "$out/conv-tm-pqc" | cut -f1) MB" | tee -a "$out/$results-results.txt"
    rm -rf "$out/conv-tm-pqc"
    # LISA's trace-dump (ARM-software/lisa tools/trace-parser, built
    # elsewhere): TRACE_DUMP=path, trace.dat inputs only; it writes the
    # class tables into the current directory
    if [ -n "${TRACE_DUMP:-}" ] && "$tm" info "$t" 2>/dev/null | grep -q 'trace.dat'; then
        rm -rf "$out/conv-lisa" && mkdir -p "$out/conv-lisa"
        lisa=$(cd "$out/conv-lisa" && run conv-lisa "$TRACE_DUMP" parquet --trace "$t" \
            --trace-format tracedat --compression zstd)
        line "$events" "$label" "LISA trace-dump parquet (zstd)" "$lisa"
        echo "   LISA output: $(du -sm "$out/conv-lisa" | cut -f1) MB" | tee -a "$out/$results-results.txt"
        verdict "tracemux --no-events-table vs LISA trace-dump parquet" conv-lisa "$lisa" conv-tm-pqc "$tmq"
        rm -rf "$out/conv-lisa"
    fi
    tmf=$(run conv-tm-pf "$tm" convert -q --force --to perfetto -o "$out/conv-tm.pftrace" "$t")
    line "$events" "$label" "tracemux convert --to perfetto" "$tmf"
    tmz=$(run conv-tm-pfz "$tm" convert -q --force --to perfetto --compress -o "$out/conv-tm-z.pftrace" "$t")
    line "$events" "$label" "tracemux convert --to perfetto --compress" "$tmz"
    tmh=$(run conv-tm-chrome "$tm" convert -q --force --to chrome -o "$out/conv-tm.json" "$t")
    line "$events" "$label" "tracemux convert --to chrome" "$tmh"
    echo "   perfetto output: $(du -m "$out/conv-tm.pftrace" | cut -f1) MB, --compress $(du -m "$out/conv-tm-z.pftrace" | cut -f1) MB, chrome JSON $(du -m "$out/conv-tm.json" | cut -f1) MB (input $(du -sm "$t" | cut -f1) MB)" | tee -a "$out/$results-results.txt"
    if [ -f "$t/info" ] && command -v uftrace >/dev/null; then
        ufc=$(run conv-uf-chrome uftrace dump --chrome -d "$t")
        line "$events" "$label" "uftrace dump --chrome" "$ufc"
        echo "   uftrace dump --chrome output: $(du -m "$out/conv-uf-chrome.out" | cut -f1) MB" | tee -a "$out/$results-results.txt"
        verdict "tracemux convert --to perfetto vs uftrace dump --chrome" conv-uf-chrome "$ufc" conv-tm-pf "$tmf"
        verdict "tracemux convert --to chrome vs uftrace dump --chrome" conv-uf-chrome "$ufc" conv-tm-chrome "$tmh"
        rm -f "$out/conv-uf-chrome.out"
    fi
    rm -rf "$out/conv-tm-ctf" "$out/conv-bt2-ctf" "$out/conv-tm.jsonl" "$out/conv-tm.dat" "$out/conv-tm-pq" \
        "$out/conv-tm.pftrace" "$out/conv-tm-z.pftrace" "$out/conv-tm.json"
done
