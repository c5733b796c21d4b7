#!/bin/sh
# Check `tracemux convert --to ctf` against babeltrace2 (needs babeltrace2
# 2.0 on PATH; not part of `cargo test`).
#
# For every trace.dat fixture (tests/fixtures/tracedat/*, tests/fixtures/synthetic/*),
# the hand-built LTT trace (tests/fixtures/ltt/hand-built, assembled
# from its annotated hex) and every uftrace fixture
# (tests/fixtures/uftrace/{recorded,corpus}/*/uftrace.data), this converts the
# trace to CTF 1.8, prints the result with `babeltrace2`, and compares that
# with `tracemux report --style babeltrace` of the original (both with TZ=UTC;
# stdout only: babeltrace2 reports discarded events on stderr, tracemux's
# in-band `WARNING: Tracer discarded` lines are left out of the comparison).
# For every CTF fixture (tests/fixtures/ctf/*/trace) the reference is
# babeltrace2's own output of the original, stored next to it (bt2.txt or
# bt2.txt.zst). The traces of ../shared/corpus (tracedat/*/trace.dat,
# ctf/*/trace, uftrace/*/uftrace.data), when that directory exists, are
# checked the same way (names `shared-...`; their outputs are not stored).
# Every converted trace is also read back by tracemux's own CTF reader:
# `tracemux report OUT` must print what babeltrace2 printed (`readback`).
# Losses (issue 40): for every trace.dat source, the warnings babeltrace2
# prints on stderr for the output (`Tracer discarded N events` and, for a
# loss of unknown size, `Tracer discarded 1 packet`) must be the loss
# markers `trace-cmd report` prints for the source (`CPU:C [N EVENTS
# DROPPED]`, `CPU:C [EVENTS DROPPED]`): the same number on each CPU, the
# same counts (unknown stays unknown), and each warning's range ending at
# the event trace-cmd prints after the marker (to the microsecond), in
# stream `stream_C` (top buffer; instance buffers' streams are left out).
# Skipped when trace-cmd is not installed.
#
# babeltrace2's output is stored as the expected output of the cargo test
# crates/cli/tests/convert_ctf.rs, in tests/fixtures/convert/:
#   NAME.head.txt  its first 100 lines (the whole output when shorter)
#   NAME.cksum     `cksum` of the whole output (POSIX CRC, bytes) and its line count
# (whole outputs run to 24 MB per fixture; the head shows the format, the
# checksum pins every byte).
#
# Last run (with ../shared/corpus): 57 identical, 15 stale strings only,
# 1 different, 4 without events; all 73 outputs with events read back by
# tracemux's CTF reader exactly as babeltrace2 printed them.
# Known differences:
# * babeltrace2's stale strings: babeltrace2 2.0 shows an empty string as the
#   last non-empty value its pooled field object held (tracemux's CTF reader
#   reproduces that, so the cargo test passes; the model printer shows "" and
#   cannot know babeltrace2's object pooling): synthetic-allevents-v7,
#   synthetic-allevents-be-v7, uftrace-recorded-cxx-demangle (an empty
#   string argument) and, against babeltrace2's output of the original, the
#   LTTng and barectf CTF fixtures (which string shows depends on the
#   original's packet layout, which a conversion does not keep). A
#   difference is reported as `STALE` when the lines that differ are equal
#   but for the text of their string literals;
# * ltt-hand-built: an event of an unknown LTT facility has no class in the
#   model (written as `<unknown event N>` with `payload_size`); the LTT
#   printer shows its raw bytes; and of `core:time_heartbeat`, whose payload
#   is empty, babeltrace2 prints an empty block `, { }`, the LTT printer none;
# * the four latency fixtures hold text, no events: `report` prints the text.
#
# Usage: tests/convert/check-ctf.sh [FIXTURE-NAME...]   (from the repository root)
# TRACEMUX=path/to/tracemux to use another binary (default: target/debug/tracemux, built if missing).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
command -v babeltrace2 >/dev/null || { echo "babeltrace2 is not installed" >&2; exit 2; }
tm=${TRACEMUX:-$root/target/debug/tracemux}
[ -x "$tm" ] || cargo build -q -p tracemux || exit 2
out=tests/fixtures/convert
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TZ=UTC

# the hand-built LTT trace, assembled from its hex dumps (two hex digits per
# byte, `#` comments, `XX*N` = N times byte XX)
ltt=$tmp/ltt-hand-built
mkdir -p "$ltt/control"
for f in control/facilities_0 cpu_0 cpu_2; do
    sed 's/#.*//' "tests/fixtures/ltt/hand-built/$f.hex" | tr -s ' \t' '\n\n' | grep . |
        awk '{ if (index($0, "*")) { split($0, a, "*"); for (i = 0; i < a[2]; i++) print a[1] } else print }' |
        tr -d '\n' | xxd -r -p > "$ltt/$f"
done

fixtures=""
for d in tests/fixtures/tracedat/* tests/fixtures/synthetic/*; do
    [ -f "$d/trace.dat" ] || continue
    fixtures="$fixtures $(basename "$(dirname "$d")")-$(basename "$d"):$d/trace.dat"
done
fixtures="$fixtures ltt-hand-built:$ltt"
for d in tests/fixtures/uftrace/recorded/* tests/fixtures/uftrace/corpus/*; do
    [ -d "$d/uftrace.data" ] || continue
    fixtures="$fixtures uftrace-$(basename "$(dirname "$d")")-$(basename "$d"):$d/uftrace.data"
done
for d in tests/fixtures/ctf/*; do
    [ -d "$d/trace" ] || continue
    fixtures="$fixtures ctf-$(basename "$d"):$d/trace"
done
shared=$root/../shared/corpus
if [ -d "$shared" ]; then
    for d in "$shared"/tracedat/*; do
        [ -f "$d/trace.dat" ] && fixtures="$fixtures shared-tracedat-$(basename "$d"):$d/trace.dat"
    done
    for d in "$shared"/ctf/*; do
        [ -d "$d/trace" ] && fixtures="$fixtures shared-ctf-$(basename "$d"):$d/trace"
    done
    for d in "$shared"/uftrace/*; do
        [ -d "$d/uftrace.data" ] && fixtures="$fixtures shared-uftrace-$(basename "$d"):$d/uftrace.data"
    done
fi

# `CPU COUNT MICROSECONDS` for each loss marker of trace-cmd's report of
# the trace.dat $1 (COUNT `?` when unknown; the time is the next event's)
losses_tc() {
    trace-cmd report "$1" 2>/dev/null | awk '
        want != "" {
            for (i = 1; i <= NF; i++)
                if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $i; sub(/:$/, "", t); sub(/\./, "", t); break }
            print want, t + 0
            want = ""
        }
        /^CPU:[0-9]+ \[([0-9]+ )?EVENTS DROPPED\]$/ {
            cpu = substr($1, 5)
            n = ($2 == "[EVENTS") ? "?" : substr($2, 2)
            want = cpu " " n
        }'
}

# the same for babeltrace2's warnings about the CTF trace $1 (streams of
# the top buffer, `stream_C`); a warning of any other form is `CPU ??`
losses_bt() {
    babeltrace2 --clock-seconds "$1" 2>&1 >/dev/null | awk '
        /^WARNING: Tracer/ {
            cpu = "?"
            if (match($0, /within stream "[^"]*"/)) {
                st = substr($0, RSTART + 15, RLENGTH - 16)
                sub(/.*\//, "", st)
                if (st !~ /^stream_[0-9]+$/) next
                cpu = substr(st, 8)
            }
            if ($3 == "discarded" && ($5 ~ /^events?$/)) n = $4
            else if ($3 == "discarded" && $4 == "1" && $5 == "packet") n = "?"
            else n = "??"
            # the end of the range: the second [seconds.nanoseconds]
            k = 0; t = ""
            for (i = 1; i <= NF; i++)
                if ($i ~ /^\[[0-9]+\.[0-9]+\]$/ && ++k == 2) t = $i
            gsub(/[][]/, "", t)
            split(t, a, ".")
            us = a[1] * 1000000 + int((substr(a[2], 1, 9) + 500) / 1000)
            print cpu, n, us
        }'
}

# whether two loss lists agree: the same lines in the same order per CPU,
# times within a microsecond (trace-cmd rounds to it)
same_losses() {
    sort -s -k1,1n "$1" >"$1.s"
    sort -s -k1,1n "$2" >"$2.s"
    [ "$(wc -l <"$1.s")" -eq "$(wc -l <"$2.s")" ] || return 1
    paste -d' ' "$1.s" "$2.s" | awk '
        { d = $3 - $6; if (d < 0) d = -d; if ($1 != $4 || $2 != $5 || d > 1) bad = 1 }
        END { exit bad }'
}

# a file with the text of every string literal removed
strip_strings() {
    sed -E 's/"([^"\\]|\\.)*"/""/g' "$1"
}

same=0 differ=0 stale=0 failed=0 nothing=0 rb_same=0 rb_differ=0 loss_same=0 loss_differ=0
have_tc=false
command -v trace-cmd >/dev/null && have_tc=true
for f in $fixtures; do
    name=${f%%:*} src=${f#*:}
    if [ $# -gt 0 ]; then
        case " $* " in *" $name "*) ;; *) continue ;; esac
    fi
    ctf=$tmp/$name.ctf
    # (damaged input converts with a warning and exit code 2)
    # --reencode: CTF sources too go through the writer (not a packet copy)
    "$tm" convert -q --reencode "$src" --to ctf -o "$ctf" 2>"$tmp/conv.err"
    if [ ! -f "$ctf/metadata" ]; then
        echo "FAILED    $name: convert: $(head -1 "$tmp/conv.err")"
        failed=$((failed + 1))
        continue
    fi
    if ! babeltrace2 "$ctf" >"$tmp/bt.txt" 2>"$tmp/bt.err"; then
        echo "FAILED    $name: babeltrace2: $(grep -m1 -i error "$tmp/bt.err")"
        failed=$((failed + 1))
        continue
    fi
    case $name in
    ctf-* | shared-ctf-*)
        # babeltrace2's own output of the original
        dir=$(dirname "$src")
        if [ -f "$dir/bt2.txt" ]; then
            cp "$dir/bt2.txt" "$tmp/tm.txt"
        elif [ -f "$dir/bt2.txt.zst" ]; then
            zstd -q -d -c "$dir/bt2.txt.zst" >"$tmp/tm.txt"
        else
            echo "FAILED    $name: no bt2.txt[.zst] next to the trace"
            failed=$((failed + 1))
            continue
        fi
        ref="babeltrace2 of the original"
        ;;
    *)
        "$tm" report --style babeltrace "$src" 2>/dev/null | grep -av '^WARNING: Tracer discarded' >"$tmp/tm.txt"
        ref="report --style babeltrace"
        ;;
    esac
    case $name in
    shared-*) ;;
    *)
        head -n 100 "$tmp/bt.txt" >"$out/$name.head.txt"
        echo "$(cksum <"$tmp/bt.txt") $(wc -l <"$tmp/bt.txt")" >"$out/$name.cksum"
        ;;
    esac
    # tracemux's CTF reader on the converted trace
    rb=""
    if ls "$ctf" | grep -qv metadata; then
        "$tm" report "$ctf" >"$tmp/rb.txt" 2>/dev/null
        if cmp -s "$tmp/bt.txt" "$tmp/rb.txt"; then
            rb_same=$((rb_same + 1))
        else
            rb=" [readback differs: $(diff "$tmp/bt.txt" "$tmp/rb.txt" | head -2 | tail -1 | cut -c1-200)]"
            rb_differ=$((rb_differ + 1))
        fi
    fi
    case $name in
    tracedat-* | synthetic-* | shared-tracedat-*)
        if $have_tc; then
            losses_tc "$src" >"$tmp/loss.tc"
            losses_bt "$ctf" >"$tmp/loss.bt"
            if same_losses "$tmp/loss.tc" "$tmp/loss.bt"; then
                loss_same=$((loss_same + 1))
                [ -s "$tmp/loss.tc" ] && rb="$rb [losses as trace-cmd's: $(wc -l <"$tmp/loss.tc")]"
            else
                loss_differ=$((loss_differ + 1))
                rb="$rb [LOSSES DIFFER: trace-cmd $(tr '\n' ',' <"$tmp/loss.tc.s" | cut -c1-120) babeltrace2 $(tr '\n' ',' <"$tmp/loss.bt.s" | cut -c1-120)]"
            fi
        fi
        ;;
    esac
    if [ ! -s "$tmp/bt.txt" ] && ! ls "$ctf" | grep -qv metadata; then
        echo "NO EVENTS $name (a latency trace is text only)"
        nothing=$((nothing + 1))
    elif cmp -s "$tmp/bt.txt" "$tmp/tm.txt"; then
        echo "IDENTICAL $name ($(wc -l <"$tmp/bt.txt") lines)$rb"
        same=$((same + 1))
    elif strip_strings "$tmp/bt.txt" >"$tmp/bt.nostr" && strip_strings "$tmp/tm.txt" >"$tmp/tm.nostr" &&
        cmp -s "$tmp/bt.nostr" "$tmp/tm.nostr"; then
        echo "STALE     $name ($(diff "$tmp/bt.txt" "$tmp/tm.txt" | grep -c '^<') of $(wc -l <"$tmp/bt.txt") lines differ from $ref, only in strings: babeltrace2's stale strings)$rb"
        stale=$((stale + 1))
    else
        echo "DIFFERENT $name (from $ref)$rb"
        diff "$tmp/bt.txt" "$tmp/tm.txt" | head -6 | cut -c1-300
        differ=$((differ + 1))
    fi
    rm -rf "$ctf"
done
echo "identical: $same, stale strings only: $stale, different: $differ, failed: $failed, without events: $nothing;" \
    "read back by tracemux's CTF reader as babeltrace2 read it: $rb_same, differently: $rb_differ;" \
    "losses as trace-cmd reports them: $loss_same, differently: $loss_differ"
[ "$differ" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$rb_differ" -eq 0 ] && [ "$loss_differ" -eq 0 ]
