#!/bin/bash
# Re-makes the `perf script` outputs of tests/fixtures/perf/*/ with the
# installed perf and compares them with the committed ones (or, with
# --update, writes them). Each fixture's `cases` file has one case a line,
# `NAME|ARGS`; the output of
#   perf script -i perf.data --kallsyms ../kallsyms --symfs ../symfs ARGS
# run in the fixture's directory is NAME.txt. HOME points to an empty
# directory (no ~/.debug, no ~/.perfconfig), LC_ALL=C. Also header.txt
# (`perf report --header-only` less its "captured on" line) and stats.txt
# (`perf report --stats`).
# usage: tests/perf/check-perf.sh [--update] [FIXTURE...]
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
fx=$root/tests/fixtures/perf
update=0
if [ "${1:-}" = --update ]; then update=1; shift; fi
command -v perf > /dev/null || { echo "check-perf: perf is not installed" >&2; exit 1; }
home=$(mktemp -d); trap 'rm -rf "$home"' EXIT
names=${*:-$(cd "$fx" && ls -d */ | tr -d /)}
pass=0 fail=0
for n in $names; do
  d=$fx/$n; [ -f "$d/cases" ] || continue
  while IFS='|' read -r name args; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086
    (cd "$d" && HOME=$home LC_ALL=C perf script -i perf.data --kallsyms ../kallsyms --symfs ../symfs $args > "$home/out" 2>/dev/null)
    if [ $update = 1 ]; then
      cp "$home/out" "$d/$name.txt"; pass=$((pass + 1))
    elif cmp -s "$home/out" "$d/$name.txt"; then
      pass=$((pass + 1))
    else
      echo "check-perf: $n/$name.txt differs from perf script $args" >&2; fail=$((fail + 1))
    fi
  done < "$d/cases"
  # perf report --header-only (without its "captured on" line: the file's
  # mtime) and perf report --stats
  for what in header stats; do
    if [ $what = header ]; then
      (cd "$d" && HOME=$home LC_ALL=C perf report --header-only -i perf.data 2>/dev/null | grep -v '^# captured on' > "$home/out")
    else
      (cd "$d" && HOME=$home LC_ALL=C perf report --stats -i perf.data 2>/dev/null > "$home/out")
    fi
    if [ ! -s "$home/out" ]; then
      # perf 6.1's report fails on a pipe-mode file with tracing data
      # ("failed to process type"): no golden output then
      [ $update = 1 ] && rm -f "$d/$what.txt"
      [ -f "$d/$what.txt" ] && { echo "check-perf: $n/$what.txt: perf printed nothing" >&2; fail=$((fail + 1)); }
      continue
    fi
    if [ $update = 1 ]; then
      cp "$home/out" "$d/$what.txt"; pass=$((pass + 1))
    elif cmp -s "$home/out" "$d/$what.txt"; then
      pass=$((pass + 1))
    else
      echo "check-perf: $n/$what.txt differs from perf report" >&2; fail=$((fail + 1))
    fi
  done
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
