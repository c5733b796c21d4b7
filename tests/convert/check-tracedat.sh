#!/bin/sh
# Check `tracemux convert --to tracedat` with the real trace-cmd (3.1.6 on
# Debian 12: `apt-get install trace-cmd`; not part of `cargo test`).
#
# For every trace.dat fixture (tests/fixtures/tracedat/*, tests/fixtures/synthetic/*,
# and ../shared/corpus/tracedat/* when present) and every output variant
# (v6; v7 with none, zstd, zlib compression), this converts the file and
# compares `trace-cmd report OUT` with `trace-cmd report IN`, and the same
# with `report -R`, stdout and exit status.
#
# Known differences (listed, not failures): trace-cmd 3.1.6 reads a v6
# latency file with a TRACECLOCK option as if a clock trailer came first
# and loses 8 bytes of the text; the text is carried whole, so a v7 copy of
# latency-v6 shows those bytes and a v6 copy of latency-v7(-zstd) loses them.
# trace-cmd 3.1.6 on Debian is built without zlib: it cannot read zlib
# files. For a zlib source the stored `report.txt` / `report-R.txt` (from
# the recording machine's trace-cmd 3.1.6) stand for its output; zlib
# outputs are printed with tracemux instead (counted and said so).
#
# Usage: tests/convert/check-tracedat.sh [FIXTURE-NAME...]   (from anywhere)
# TRACEMUX=path/to/tracemux to use another binary (default: target/debug/tracemux, built if missing).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
command -v trace-cmd >/dev/null || { echo "trace-cmd is not installed" >&2; exit 2; }
tm=${TRACEMUX:-$root/target/debug/tracemux}
[ -x "$tm" ] || cargo build -q -p tracemux || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

known() {
    case "$1 $2" in
        "latency-v6 7" | "latency-v7 6" | "latency-v7-zstd 6") return 0 ;;
    esac
    return 1
}

dirs=""
for d in tests/fixtures/tracedat/* tests/fixtures/synthetic/* ../shared/corpus/tracedat/*; do
    [ -f "$d/trace.dat" ] || continue
    n=$(basename "$d")
    if [ $# -gt 0 ]; then
        keep=no
        for w in "$@"; do [ "$w" = "$n" ] && keep=yes; done
        [ $keep = yes ] || continue
    fi
    case " $dirs " in *" $n="*) continue ;; esac
    dirs="$dirs $n=$d"
done

pass=0 fail=0 knownn=0 skipped=0
for nd in $dirs; do
    n=${nd%%=*} d=${nd#*=}
    for variant in "6 none" "7 none" "7 zstd" "7 zlib"; do
        set -- $variant
        v=$1 c=$2
        o="$tmp/$n-$v-$c.dat"
        if ! "$tm" convert -q --force --to tracedat --file-version "$v" --compression "$c" \
            "$d/trace.dat" -o "$o" 2>"$tmp/err"; then
            echo "FAIL $n v$v $c: convert: $(head -1 "$tmp/err")"
            fail=$((fail + 1))
            continue
        fi
        for mode in "" "-R"; do
            label="$n v$v $c report${mode}"
            trace-cmd report $mode "$d/trace.dat" >"$tmp/want" 2>/dev/null
            wrc=$?
            ref="$d/report${mode}.txt"
            if [ $wrc != 0 ] && [ ! -s "$tmp/want" ] && { [ -f "$ref" ] || [ -f "$ref.zst" ]; }; then
                # this trace-cmd cannot read the source (zlib): use the
                # output stored from the recording machine's trace-cmd 3.1.6
                if [ -f "$ref" ]; then cp "$ref" "$tmp/want"; else zstd -qdc "$ref.zst" >"$tmp/want"; fi
                wrc=0
                label="$label (source: stored reference)"
            fi
            trace-cmd report $mode "$o" >"$tmp/got" 2>"$tmp/goterr"
            grc=$?
            if [ "$c" = zlib ] && [ $grc != 0 ] && [ ! -s "$tmp/got" ]; then
                # this trace-cmd cannot decompress zlib: compare tracemux's view
                "$tm" report $mode "$o" >"$tmp/got"
                grc=$wrc
                label="$label (tracemux, trace-cmd has no zlib)"
                skipped=$((skipped + 1))
            fi
            if cmp -s "$tmp/want" "$tmp/got" && [ $wrc = $grc ]; then
                if known "$n" "$v"; then
                    echo "UNEXPECTED MATCH $label"
                fi
                pass=$((pass + 1))
            elif known "$n" "$v"; then
                echo "known difference: $label"
                knownn=$((knownn + 1))
            else
                echo "FAIL $label (exit $wrc/$grc): $(diff "$tmp/want" "$tmp/got" | head -3 | tr '\n' ' ')"
                fail=$((fail + 1))
            fi
        done
    done
done
echo "check-tracedat: $pass identical, $knownn known differences, $fail failures ($skipped zlib comparisons through tracemux)"
[ $fail = 0 ]
