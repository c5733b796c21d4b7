#!/bin/sh
# Check `tracemux convert --to perfetto` with Perfetto's official schema
# (the PyPI package `perfetto`: perfetto_trace_pb2; not part of `cargo test`).
#
# For every fixture of every format (trace.dat: tests/fixtures/tracedat/*,
# tests/fixtures/synthetic/*; CTF: tests/fixtures/ctf/*/trace; uftrace:
# tests/fixtures/uftrace/{recorded,corpus}/*/uftrace.data; the hand-built LTT
# trace assembled from its annotated hex; perf: tests/fixtures/perf/*/perf.data,
# whose samples become PerfSample packets with interned call stacks) this converts the trace and runs
# tests/convert/check_perfetto.py on the result: every packet decoded on its
# own with the official schema and compared with `tracemux report --json` of
# the source (see that script for what is checked). Then, once, the check is
# run on a deliberately damaged reading of one output (an event dropped; a
# field changed) and must fail.
#
# The summary is written to tests/fixtures/convert/perfetto-oracle.txt.
#
# Usage: tests/convert/check-perfetto.sh [FIXTURE-NAME...]   (from the repository root)
# TRACEMUX=path/to/tracemux to use another binary (default: target/debug/tracemux, built if missing).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
python3 -c 'import perfetto.protos.perfetto.trace.perfetto_trace_pb2' 2>/dev/null ||
    pip install -q perfetto protobuf || exit 2
. tests/convert/fixtures.sh
prepare
summary=tests/fixtures/convert/perfetto-oracle.txt

check() { # NAME SRC OUTPUT
    python3 tests/convert/check_perfetto.py "$tm" "$2" "$3" "$1"
}
each_fixture perfetto pftrace check "$@" | tee "$tmp/summary"
# perf.data: samples as PerfSample packets with interned call stacks (named
# as `perf script` names them on this machine), tracepoints in bundles
for d in tests/fixtures/perf/*/; do
    name=perf-$(basename "$d")
    # (symfs/ is the fixtures' symbol tree, not a recording)
    [ -f "$d/perf.data" ] || continue
    if [ $# -gt 0 ]; then
        case " $* " in *" $name "*) ;; *) continue ;; esac
    fi
    "$tm" convert -q --force "$d/perf.data" --to perfetto -o "$tmp/$name.pftrace" 2>/dev/null
    check "$name" "$d/perf.data" "$tmp/$name.pftrace"
done | tee -a "$tmp/summary"
counts

# The oracle notices damage: one event dropped, one field changed.
src=tests/fixtures/tracedat/v6-sched-irq-timer/trace.dat
"$tm" convert -q --force "$src" --to perfetto -o "$tmp/m.pftrace"
for m in drop field compact; do
    if python3 tests/convert/check_perfetto.py "$tm" "$src" "$tmp/m.pftrace" "mutated-$m" --mutate $m >"$tmp/m.out"; then
        echo "mutation $m: NOT DETECTED"; fail=$((fail + 1))
    else
        echo "mutation $m: detected ($(cut -c1-160 "$tmp/m.out"))"
    fi
done | tee -a "$tmp/summary"
# and in a perf sample's call stack
src=tests/fixtures/perf/sw-callchain/perf.data
"$tm" convert -q --force "$src" --to perfetto -o "$tmp/p.pftrace"
if python3 tests/convert/check_perfetto.py "$tm" "$src" "$tmp/p.pftrace" "mutated-perf" --mutate stack >"$tmp/m.out"; then
    echo "mutation stack: NOT DETECTED"
else
    echo "mutation stack: detected ($(cut -c1-160 "$tmp/m.out"))"
fi | tee -a "$tmp/summary"
# Timelines (issue 38): each recording of tests/fixtures/timeline (trace-cmd,
# LTTng-UST and uftrace at once) converted as one trace and checked as one
# source (events by input, the clock snapshot and placements, one track per
# thread, uftrace slices on threads the kernel runs); then the local-clock
# one with uftrace (and LTTng, its clock) put 1 ms off by --clock-offset must
# fail the running-thread check.
if [ $# -eq 0 ]; then
    for s in mono local; do
        d=tests/fixtures/timeline/$s
        "$tm" convert -q --force "$d/trace.dat" "$d/lttng" "$d/uftrace.data" --to perfetto -o "$tmp/tl-$s.pftrace"
        python3 tests/convert/check_perfetto.py "$tm" "$d/trace.dat:$d/lttng:$d/uftrace.data" "$tmp/tl-$s.pftrace" "timeline-$s"
    done | tee "$tmp/tl"
    cat "$tmp/tl" >> "$tmp/summary"
    ok=$((ok + $(grep -c ': OK' "$tmp/tl")))
    fail=$((fail + $(grep -c ': FAIL' "$tmp/tl")))
    d=tests/fixtures/timeline/local
    off=$(( $("$tm" info "$d/trace.dat" "$d/lttng" "$d/uftrace.data" | sed -n 's/^  shift *\(-*[0-9]*\) ns.*/\1/p' | tail -1) + 1000000 ))
    "$tm" convert -q --force "$d/trace.dat" "$d/lttng" "$d/uftrace.data" --to perfetto -o "$tmp/tl-off.pftrace" --clock-offset "$d/uftrace.data=$off"
    if python3 tests/convert/check_perfetto.py "$tm" "$d/trace.dat:$d/lttng:$d/uftrace.data" "$tmp/tl-off.pftrace" "mutated-timeline-1ms" -- --clock-offset "$d/uftrace.data=$off" >"$tmp/m.out"; then
        echo "mutation timeline 1 ms off: NOT DETECTED"
    else
        echo "mutation timeline 1 ms off: detected ($(sed 's/.*tracks: //' "$tmp/m.out" | cut -c1-160))"
    fi | tee -a "$tmp/summary"
fi
fail=$((fail + $(grep -c 'NOT DETECTED' "$tmp/summary")))
echo "$ok passed, $fail failed, $empty without events" | tee -a "$tmp/summary"
if [ $# -eq 0 ]; then
    { echo "# tests/convert/check-perfetto.sh with perfetto $(python3 -c 'import importlib.metadata as m; print(m.version("perfetto"))') (official perfetto_trace_pb2)"; cat "$tmp/summary"; } > "$summary"
fi
[ "$fail" -eq 0 ]
