#!/usr/bin/env bash
# Record the large LTTng-UST CTF trace used by bench/bench-ctf.sh.
#
# usage: bench/recipes/record-ctf.sh OUTDIR [ROUNDS] [THREADS]
#   Writes OUTDIR (a CTF 1.8 trace directory: metadata + per-UID, per-CPU
#   stream files). Default 300000 rounds x 2 threads x 9 events = 5.4 M events,
#   about 200 MB. Needs root and `apt-get install lttng-tools liblttng-ust-dev gcc`.
#
# Per-UID buffers (the LTTng default), context vtid, 8 x 8 MiB
# sub-buffers per CPU and a blocking channel (the app waits for free space
# instead of discarding), so that no event is lost: check with
# `babeltrace2 OUTDIR > /dev/null` (no "discarded events" warning).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
recipe_args record-ctf.sh 300000 "$@"

gcc -O1 -o "$work/bench_app" "$here/lttng/bench_app.c" "$here/lttng/bench_tp.c" -I"$here/lttng" \
    -llttng-ust -ldl -lpthread

pgrep -x lttng-sessiond > /dev/null || lttng-sessiond --daemonize --no-kernel
session=benchctf$$
rm -rf "$out"
lttng create "$session" --output="$out"
lttng enable-channel -u --buffers-uid --subbuf-size 8M --num-subbuf 8 --blocking-timeout=inf ch0
lttng enable-event -u -c ch0 'bench:*'
lttng add-context -u -c ch0 -t vtid
lttng start
LTTNG_UST_ALLOW_BLOCKING=1 "$work/bench_app" "$rounds" "$threads"
lttng stop
lttng destroy
du -sh "$out"
