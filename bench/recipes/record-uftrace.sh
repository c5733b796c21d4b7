#!/usr/bin/env bash
# Record the large uftrace recording used by bench/bench-uftrace.sh.
#
# usage: bench/recipes/record-uftrace.sh OUTDIR [ROUNDS] [THREADS]
#   Writes the uftrace data directory OUTDIR. Default 16400 rounds x 2 threads
#   of uftrace/ufbench.c (-pg) = about 5.4 M records (entry/exit/event), ~87 MB.
#   Needs root (perf sched events) and `apt-get install uftrace gcc`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
recipe_args record-uftrace.sh 16400 "$@"

gcc -O0 -g -pg -o "$work/ufbench" "$here/uftrace/ufbench.c" -lpthread
rm -rf "$out"
uftrace record -d "$out" "$work/ufbench" "$rounds" "$threads"
du -sh "$out"
