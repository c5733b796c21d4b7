#!/usr/bin/env bash
# tracemux's LTTng live reader against the real thing: a private
# lttng-sessiond and lttng-relayd on 127.0.0.1 (ports of their own, a
# private LTTNG_HOME, run as the unprivileged user `nobody` so that the
# session daemon is a per-user one, not the machine's), an LTTng-UST test
# application (corpus_app.c, the project's own), and babeltrace2 2.0 as
# the oracle.
#
# For each session, tracemux attaches before `lttng start` and prints the
# session live until it is destroyed; its output must equal, byte for
# byte, what babeltrace2 prints of the relayd's output directory
# afterwards. Then: the session list equals babeltrace2's, a second viewer
# and a missing session behave as babeltrace2's. babeltrace2's own live
# output is recorded too and compared (informational: babeltrace2 2.0.4's
# live output differs from its own output of the same trace in stale
# string values, which depend on timing; see README).
#
# Needs: lttng-tools, liblttng-ust-dev, gcc, babeltrace2 (Debian 12:
# lttng-tools 2.13.9, babeltrace2 2.0.4). Daemons are stopped by pid; all
# loops are bounded.
#   tests/live/check-live.sh [path/to/tracemux]     (ONLY=CASE: that case alone)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
TM="${1:-$root/target/release/tracemux}"
[ -x "$TM" ] || { echo "no tracemux binary at $TM (cargo build --release -p tracemux)"; exit 2; }
for t in lttng lttng-sessiond lttng-relayd babeltrace2 gcc setpriv; do
    command -v "$t" >/dev/null || { echo "missing: $t"; exit 2; }
done
[ -n "$(ls /usr/include/lttng/tracepoint.h /usr/include/*/lttng/tracepoint.h 2>/dev/null)" ] || { echo "missing: liblttng-ust-dev"; exit 2; }

W="$(mktemp -d /tmp/tracemux-live.XXXXXX)"
chmod 755 "$W"
mkdir -p "$W/home" "$W/out" "$W/app"
chown -R 65534:65534 "$W/home" "$W/out" "$W/app"
AS=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$W/home" LTTNG_HOME="$W/home")
HOST="$(hostname)"

# Ports: three free ones in a range of our own.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
base=$(( 20000 + ($$ % 2000) * 10 ))
for i in $(seq 0 50); do
    b=$(( base + i * 3 ))
    if port_free "$b" && port_free $((b + 1)) && port_free $((b + 2)); then base=$b; break; fi
done
LIVE=$base CTRL=$((base + 1)) DATA=$((base + 2))

PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do
        for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null || true
    done
    [ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT

cp "$here/corpus_app.c" "$here/corpus_tp.c" "$here/corpus_tp.h" "$W/app/"
(cd "$W/app" && gcc -O1 -o corpus_app corpus_app.c corpus_tp.c -I. -llttng-ust -ldl -lpthread)

"${AS[@]}" lttng-relayd -L "tcp://127.0.0.1:$LIVE" -C "tcp://127.0.0.1:$CTRL" \
    -D "tcp://127.0.0.1:$DATA" -o "$W/out" >"$W/relayd.log" 2>&1 &
PIDS+=($!)
"${AS[@]}" lttng-sessiond --no-kernel >"$W/sessiond.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do
    [ -S "$W/home/.lttng/client-lttng-sessiond" ] && ! port_free "$LIVE" && break
    sleep 0.1
done
# every lttng command bounded in time (a `destroy` waits for the relayd to
# say the session's data is all there, which it may never say)
L() { timeout 120 "${AS[@]}" lttng "$@" >>"$W/lttng.log" 2>&1; }
URL="net://127.0.0.1:$LIVE"

pass=0 fail=0 stale=0
# the text without the contents of double-quoted strings
nostrings() { sed -e 's/"\([^"\\]\|\\.\)*"/""/g' "$1"; }
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

# wait_pid PID SECONDS: wait for a viewer to end by itself (bounded).
wait_pid() {
    for _ in $(seq 1 $(($2 * 10))); do kill -0 "$1" 2>/dev/null || { wait "$1" || true; return 0; }; sleep 0.1; done
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
    return 1
}

# case NAME SETUP-FUNCTION RUN-FUNCTION: a session followed live by
# tracemux (VIEWER=tm) or babeltrace2 (VIEWER=bt).
run_case() {
    local name=$1 setup=$2 run=$3 viewer=$4
    local s="$name-$viewer"
    L create "$s" --live=200000 --set-url="net://127.0.0.1:$CTRL:$DATA"
    "$setup" "$s"
    [ "${STARTED:-}" = 1 ] && L start "$s"
    # (the relayd lists the session once the session daemon told it)
    for _ in $(seq 1 50); do
        timeout 10 babeltrace2 --input-format=lttng-live "$URL" 2>/dev/null | grep -q "/$s " && break
        sleep 0.1
    done
    if [ "$viewer" = tm ]; then
        "$TM" report "$URL/host/$HOST/$s" >"$W/$s.live" 2>"$W/$s.err" &
    else
        babeltrace2 --input-format=lttng-live "$URL/host/$HOST/$s" >"$W/$s.live" 2>"$W/$s.err" &
    fi
    local vp=$!
    sleep 1
    # (per-PID buffers: the 2.13 relayd hangs up a per-PID session attached
    # before `lttng start`, for babeltrace2 as for tracemux: start first,
    # attach before the applications start)
    [ "${STARTED:-}" = 1 ] || L start "$s"
    "$run"
    sleep 0.5
    L destroy "$s"
    for a in "${APPS[@]}"; do wait "$a" 2>/dev/null || true; done
    APPS=()
    if ! wait_pid "$vp" 60; then
        bad "$s: the viewer did not end within 60 s of the session's end"
    fi
    local dir
    dir="$(ls -d "$W/out/$HOST/$s"-* | head -1)"
    babeltrace2 "$dir" >"$W/$s.disk" 2>"$W/$s.disk.err" || true
}

check_case() {
    local name=$1
    local tm="$W/$name-tm.live" disk="$W/$name-tm.disk"
    if [ ! -s "$disk" ]; then
        bad "$name: babeltrace2 printed nothing of the relayd's directory"
    elif cmp -s "$tm" "$disk"; then
        ok "$name: live = babeltrace2 of the relayd's directory ($(wc -l <"$disk") lines)"
    elif cmp -s <(nostrings "$tm") <(nostrings "$disk"); then
        # (a stream that went quiet in the middle of a batch: babeltrace2's
        # stale strings, the value it shows for an empty string, may differ;
        # babeltrace2's own live output differs in the same way)
        ok "$name: live = babeltrace2 of the relayd's directory but for $(diff "$tm" "$disk" | grep -c '^<' || true) stale-string values ($(wc -l <"$disk") lines)"
        stale=$((stale + 1))
    else
        bad "$name: live differs from babeltrace2 of the relayd's directory ($(diff "$tm" "$disk" | grep -c '^<' || true) lines; $W/$name-tm.live)"
        KEEP=1
    fi
    local bt="$W/$name-bt.live" btdisk="$W/$name-bt.disk"
    if [ -f "$bt" ]; then
        local d
        d=$(diff "$bt" "$btdisk" | grep -c '^<' || true)
        echo "info $name: babeltrace2's own live output differs from its output of the directory in $d lines"
    fi
}

plain() { L enable-event -u -a -s "$1"; }
pid_buffers() {
    STARTED=1
    L enable-channel -u --buffers-pid -s "$1" chp
    L enable-event -u -a -s "$1" -c chp
}
small_buffers() {
    L enable-channel -u --subbuf-size=4096 --num-subbuf=2 -s "$1" chs
    L enable-event -u -a -s "$1" -c chs
}
app() { "${AS[@]}" "$W/app/corpus_app" 200 2; }
app_later() { sleep 2; "${AS[@]}" "$W/app/corpus_app" 100 2; }
# Two applications at once, still running when the session is destroyed
# (the 2.13 relayd hangs up the streams of an application that exits
# before it sent their last indexes: babeltrace2 then misses the end of
# its data too).
APPS=()
apps_pid() {
    "${AS[@]}" "$W/app/corpus_app" 150 2 30000 & APPS+=($!)
    sleep 0.3
    "${AS[@]}" "$W/app/corpus_app" 150 1 30000 & APPS+=($!)
    sleep 1.5
}
app_flood() { "${AS[@]}" "$W/app/corpus_app" 20000 2; }

for c in "uid-2threads plain app" "pid-buffers pid_buffers apps_pid" \
         "app-starts-later plain app_later" "discarded small_buffers app_flood"; do
    set -- $c
    if [ -n "${ONLY:-}" ] && [ "$1" != "$ONLY" ]; then continue; fi
    STARTED=
    run_case "$1" "$2" "$3" tm
    if [ "$1" = uid-2threads ]; then run_case "$1" "$2" "$3" bt; fi
    check_case "$1"
done
if [ -f "$W/discarded-tm.err" ]; then
grep -q "discarded" "$W/discarded-tm.err" "$W/discarded-tm.disk.err" 2>/dev/null \
    && echo "info discarded: warnings: $(grep -c WARNING "$W/discarded-tm.err" || true) live, $(grep -c WARNING "$W/discarded-tm.disk.err" || true) from the directory"
# (babeltrace2 names live traces and streams as it names none on disk:
# trace "(unknown)", stream "stream-ID"; the rest of each warning is equal)
names() { grep WARNING "$1" | sed -e 's/in trace "[^"]*"/in trace T/' -e 's/within stream "[^"]*"/within stream S/' || true; }
if [ "$(grep -c 'in trace "(unknown)".*within stream "stream-' "$W/discarded-tm.err" || true)" -gt 0 ] \
    && cmp -s <(names "$W/discarded-tm.err") <(names "$W/discarded-tm.disk.err"); then
    ok "discarded: the discarded-events warnings equal babeltrace2's (but for babeltrace2's live trace and stream names)"
else
    bad "discarded: the discarded-events warnings differ"
fi
fi

# Session list: two live sessions.
L create list-a --live=300000 --set-url="net://127.0.0.1:$CTRL:$DATA"
L enable-event -u -a -s list-a
L start list-a
L create list-b --live=1000000 --set-url="net://127.0.0.1:$CTRL:$DATA"
L enable-event -u -a -s list-b
L start list-b
"${AS[@]}" "$W/app/corpus_app" 10 1
sleep 1
timeout 60 "$TM" report "$URL" >"$W/list.tm" 2>&1 || true
timeout 60 babeltrace2 --input-format=lttng-live "$URL" >"$W/list.bt" 2>&1 || true
if cmp -s "$W/list.tm" "$W/list.bt" && [ -s "$W/list.bt" ]; then
    ok "session list = babeltrace2's ($(wc -l <"$W/list.bt") sessions)"
else
    bad "session list differs: $(diff "$W/list.tm" "$W/list.bt" | head -5)"
fi

# A second viewer: babeltrace2 attached first, then each tool as second.
timeout 60 babeltrace2 --input-format=lttng-live "$URL/host/$HOST/list-a" >/dev/null 2>&1 &
first=$!
sleep 1
set +e
timeout 60 "$TM" report "$URL/host/$HOST/list-a" >"$W/second.tm" 2>"$W/second.tm.err"; rc_tm=$?
timeout 60 babeltrace2 --input-format=lttng-live "$URL/host/$HOST/list-a" >"$W/second.bt" 2>/dev/null; rc_bt=$?
set -e
if [ "$rc_tm" = "$rc_bt" ] && [ ! -s "$W/second.tm" ] && [ ! -s "$W/second.bt" ]; then
    ok "second viewer: refused as by babeltrace2 (exit $rc_tm: $(head -c 200 "$W/second.tm.err"))"
else
    bad "second viewer: tracemux exit $rc_tm, babeltrace2 exit $rc_bt"
fi
kill "$first" 2>/dev/null || true; wait "$first" 2>/dev/null || true

# A missing session.
set +e
timeout 60 "$TM" report "$URL/host/$HOST/nothere" >"$W/missing.tm" 2>&1; rc_tm=$?
timeout 60 babeltrace2 --input-format=lttng-live "$URL/host/$HOST/nothere" >"$W/missing.bt" 2>&1; rc_bt=$?
timeout 60 "$TM" report --session-not-found=fail "$URL/host/$HOST/nothere" >/dev/null 2>&1; rc_fail=$?
set -e
if [ "$rc_tm" = "$rc_bt" ] && cmp -s "$W/missing.tm" "$W/missing.bt" && [ "$rc_fail" = 1 ]; then
    ok "missing session: as babeltrace2 (exit $rc_tm, same output); --session-not-found=fail: exit 1"
else
    bad "missing session: tracemux exit $rc_tm, babeltrace2 exit $rc_bt, fail: $rc_fail"
fi
# (nothing of these two is read back: no need to wait for their data)
L destroy --no-wait list-a
L destroy --no-wait list-b

echo "$pass passed, $fail failed ($stale of the sessions equal but for stale-string values)"
[ "$fail" = 0 ]
