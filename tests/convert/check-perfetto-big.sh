#!/bin/sh
# Run the Perfetto oracle (tests/convert/check_perfetto.py, which streams both
# sides in bounded memory) on whole big traces: each TRACE is converted
# `--to perfetto` into OUTDIR, then checked against `tracemux report --json`
# of it; prints, per trace, the oracle's line (events checked, OK or FAIL),
# its wall and CPU time and the peak RSS (`/usr/bin/time`: the largest of the
# oracle and the `tracemux report` it reads from), and the output's size.
#
# Usage: tests/convert/check-perfetto-big.sh [-o OUTDIR] [-w] TRACE...   (from the repository root)
#   -o OUTDIR  where the .pftrace files go (default: $TMPDIR or /tmp; removed after each check
#              unless KEEP=1)
#   -w         also write the summary to tests/fixtures/convert/perfetto-oracle-big.txt
# TRACEMUX=path/to/tracemux to use another binary (default: target/debug/tracemux, built if
# missing). Heavy: run it under `nice -n 19` on a shared machine.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
outdir=${TMPDIR:-/tmp} write=
while getopts o:w opt; do
    case $opt in
        o) outdir=$OPTARG ;;
        w) write=1 ;;
        *) sed -n '2,/^set/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-o OUTDIR] [-w] TRACE..." >&2; exit 2; }
python3 -c 'import perfetto.protos.perfetto.trace.perfetto_trace_pb2' 2>/dev/null ||
    pip install -q perfetto protobuf || exit 2
[ -x /usr/bin/time ] || { echo "$0: needs /usr/bin/time (GNU time)" >&2; exit 2; }
. tests/convert/fixtures.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=${TRACEMUX:-$root/target/debug/tracemux}
tracemux_copy
started="$(date -u '+%Y-%m-%d %H:%M') UTC, tracemux built $(date -u -r "$bin" '+%Y-%m-%d %H:%M') (tree at $(git rev-parse --short HEAD)), load average $(cut -d' ' -f1 /proc/loadavg) at the start"
mkdir -p "$outdir" || exit 2
summary=tests/fixtures/convert/perfetto-oracle-big.txt
fail=0
: > "$tmp/summary"
for src in "$@"; do
    name=$(basename "$src")
    case $name in trace.dat | trace | uftrace.data) name=$(basename "$(dirname "$src")")-$name ;; esac
    out=$outdir/$name.oracle.pftrace
    if ! "$tm" convert -q --force "$src" --to perfetto -o "$out"; then
        echo "$name: FAIL convert" | tee -a "$tmp/summary"; fail=$((fail + 1)); continue
    fi
    size=$(($(wc -c < "$out") / 1000000))
    /usr/bin/time -o "$tmp/time" -f '%e %U %S %M' \
        python3 tests/convert/check_perfetto.py "$tm" "$src" "$out" "$name" > "$tmp/line"
    rc=$?
    [ "${KEEP:-}" = 1 ] || rm -f "$out"
    read -r wall user sys rss < "$tmp/time"
    line=$(cut -c1-600 "$tmp/line")
    [ $rc -eq 0 ] || fail=$((fail + 1))
    echo "${line:-$name: FAIL (no result, exit $rc)}" |
        awk -v w="$wall" -v c="$user + $sys" -v r="$rss" -v s="$size" '{
            split(c, x, " ")
            printf "%s | oracle %.1f s wall, %.1f s CPU, %d MB peak RSS | output %d MB\n", $0, w, x[1] + x[3], r / 1024, s
        }' | tee -a "$tmp/summary"
done
if [ -n "$write" ]; then
    {
        echo "# tests/convert/check-perfetto-big.sh $started; perfetto $(python3 -c 'import importlib.metadata as m; print(m.version("perfetto"))') (official perfetto_trace_pb2); the oracle is one Python process (CPU = user + system, with the \`tracemux report --json\` it reads)"
        cat "$tmp/summary"
    } > "$summary"
fi
[ "$fail" -eq 0 ]
