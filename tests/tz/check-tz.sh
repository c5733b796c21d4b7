#!/bin/sh
# Time-zone oracle: tracemux's local times (tracemux_core::localtime, through
# `cargo run -p tracemux-core --example localtime`) against the C library's
# (Python's time.localtime calls glibc's localtime_r), under the same TZ and
# TZDIR, for every timestamp that glibc_localtime.py picks: a grid of about
# 20,000 times from 1901 to 2100 plus the seconds around every change of
# offset, abbreviation or DST flag. Compared: date, time, UTC offset,
# abbreviation, DST flag, day of the week and of the year.
#
#   tests/tz/check-tz.sh                  check (exit 1 on any difference)
#   tests/tz/check-tz.sh --write-fixture  check, then rewrite the table that
#                                         `cargo test` keeps
#                                         (crates/core/tests/data/localtime)
#
# Zone sets: the system's zone files (Debian's are "fat": transitions listed
# up to 2037), the same zones compiled "slim" (`zic -b slim`: the footer's
# POSIX rule after the last listed transition) from the system's
# tzdata.zi, POSIX TZ strings with and without DST rules, and the values
# glibc reads in its own ways (empty, ":", unknown names, out-of-range
# offsets). Needs: python3 on glibc, zic, /usr/share/zoneinfo/tzdata.zi
# (Debian: apt-get install tzdata; zic comes with libc-bin).
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
py="$root/tests/tz/glibc_localtime.py"
grid=${GRID:-20000}
sysdir=/usr/share/zoneinfo
fixture="$root/crates/core/tests/data/localtime"

write_fixture=no
case "${1:-}" in
--write-fixture) write_fixture=yes ;;
"") ;;
*) echo "usage: $0 [--write-fixture]" >&2; exit 2 ;;
esac

for need in python3 zic; do
    command -v "$need" >/dev/null || { echo "check-tz: $need is needed" >&2; exit 2; }
done
[ -f "$sysdir/tzdata.zi" ] || { echo "check-tz: $sysdir/tzdata.zi is needed (tzdata)" >&2; exit 2; }

cargo build --release -q -p tracemux-core --example localtime
ex="$root/target/release/examples/localtime"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
zic -b slim -d "$work/slim" "$sysdir/tzdata.zi"
mkdir -p "$work/empty"

# Both hemispheres; half-hour, 45-minute and +14 offsets; zones that
# changed their rules; Dublin's negative DST; Casablanca's Ramadan DST;
# Lord Howe's half-hour DST; Troll's two-hour DST; Apia's skipped day;
# Ojinaga, whose slim file's footer does not give its last transition's
# type (jiff refuses the file as it is).
ZONES="America/New_York
America/Ojinaga
America/St_Johns
America/Sao_Paulo
America/Santiago
America/Los_Angeles
Europe/London
Europe/Dublin
Europe/Paris
Europe/Moscow
Africa/Casablanca
Asia/Kolkata
Asia/Kathmandu
Asia/Tehran
Asia/Tokyo
Australia/Adelaide
Australia/Eucla
Australia/Lord_Howe
Pacific/Chatham
Pacific/Apia
Pacific/Kiritimati
Antarctica/Troll
UTC"

# POSIX TZ strings (no zone file has these names).
POSIX="EST5EDT,M3.2.0,M11.1.0
:EST5EDT,M3.2.0,M11.1.0
PST8PDT,M3.2.0/2,M11.1.0/2
EST5EDT4,M3.2.0/2:30:15,M11.1.0/1:15
CET-1CEST,M3.5.0,M10.5.0/3
IST-1GMT0,M10.5.0,M3.5.0/1
AEST-10AEDT,M10.1.0,M4.1.0/3
NZST-12NZDT,M9.5.0,M4.1.0/3
<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45
<+1030>-10:30<+11>-11,M10.1.0,M4.1.0
<-03>3<-02>,M3.5.0/-2,M10.5.0/-1
<-01>1<+00>,M3.5.0/0,M10.5.0/1
<-04>4<-03>,J1/0,J365/25
EST5EDT,J60/2,J300/2
AAA3BBB,0/0,200/25
<+0330>-3:30
<+0545>-5:45
<+14>-14
JST-9
UTC0
EST5"

# Values glibc reads in its own ways: empty (the file "Universal"), ":",
# unknown names (UTC named by the leading letters), no name at all, offsets
# past 24 hours (capped), a name with a sign.
ODD="
:
Foo/Bar
America/Nowhere
/nonexistent
ab
AAA25
AAA-25
AAA24:59:59
GMT+5"

total=0
failed=0
cases=0

# check LABEL TZDIR TZ-VALUE
check() {
    TZDIR="$2" TZ="$3" python3 "$py" stamps "$grid" >"$work/stamps"
    TZDIR="$2" TZ="$3" python3 "$py" show <"$work/stamps" >"$work/want"
    TZDIR="$2" TZ="$3" "$ex" <"$work/stamps" >"$work/got"
    n=$(wc -l <"$work/stamps")
    total=$((total + n))
    cases=$((cases + 1))
    if ! cmp -s "$work/want" "$work/got"; then
        bad=$(diff "$work/want" "$work/got" | grep -c '^<' || true)
        failed=$((failed + bad))
        echo "FAIL $1 TZ='$3': $bad of $n differ (< glibc, > tracemux):"
        diff "$work/want" "$work/got" | head -6
    fi
}

# run LABEL TZDIR LIST
run() {
    before_total=$total
    before_failed=$failed
    before_cases=$cases
    printf '%s\n' "$3" >"$work/list"
    while IFS= read -r tz; do
        check "$1" "$2" "$tz"
    done <"$work/list"
    echo "$1: $((cases - before_cases)) TZ values, $((total - before_total)) timestamps, $((failed - before_failed)) mismatches"
}

run "fat zone files ($sysdir)" "$sysdir" "$ZONES"
run "slim zone files (zic -b slim)" "$work/slim" "$ZONES"
run "POSIX TZ strings" "$work/empty" "$POSIX"
run "glibc's odd readings" "$work/empty" "$ODD"

# TZ unset: /etc/localtime, whatever this machine has.
(
    unset TZ
    python3 "$py" stamps "$grid" >"$work/stamps"
    python3 "$py" show <"$work/stamps" >"$work/want"
    "$ex" <"$work/stamps" >"$work/got"
)
n=$(wc -l <"$work/stamps")
total=$((total + n))
cases=$((cases + 1))
if cmp -s "$work/want" "$work/got"; then
    echo "TZ unset (/etc/localtime): $n timestamps, 0 mismatches"
else
    bad=$(diff "$work/want" "$work/got" | grep -c '^<' || true)
    failed=$((failed + bad))
    echo "FAIL TZ unset (/etc/localtime): $bad of $n differ"
    diff "$work/want" "$work/got" | head -6
fi

echo "total: $cases TZ values, $total timestamps, $failed mismatches"
[ "$failed" -eq 0 ] || exit 1

[ "$write_fixture" = yes ] || exit 0

# The table `cargo test` keeps (crates/core/tests/localtime_table.rs): a few
# slim zone files compiled here (so the test needs no tzdata of its own) and
# about 30 rows per zone file and 15 per TZ string, picked evenly from the
# timestamps above, with glibc's answers under TZDIR=that directory.
FIXTURE_ZONES="America/New_York
America/Ojinaga
America/St_Johns
America/Sao_Paulo
Europe/London
Europe/Dublin
Africa/Casablanca
Asia/Kolkata
Asia/Kathmandu
Australia/Adelaide
Australia/Eucla
Australia/Lord_Howe
Pacific/Chatham"
rm -rf "$fixture"
mkdir -p "$fixture/zoneinfo"
printf '%s\n' "$FIXTURE_ZONES" >"$work/list"
while IFS= read -r z; do
    mkdir -p "$fixture/zoneinfo/$(dirname "$z")"
    cp "$work/slim/$z" "$fixture/zoneinfo/$z"
done <"$work/list"
table="$fixture/table.tsv"
{
    echo "# TZ	secs	local time	UTC offset	abbreviation	DST	weekday (0 = Sunday)	day of year (0 = Jan 1)"
    echo "# Written by tests/tz/check-tz.sh --write-fixture: glibc's localtime_r (python3's time.localtime)"
    echo "# with TZDIR=zoneinfo/ beside this file ($(sed -n 's/^# version //p' "$sysdir/tzdata.zi" | head -1) zones compiled by zic -b slim) and TZ as given."
} >"$table"
# rows TZ-VALUE COUNT
rows() {
    TZDIR="$fixture/zoneinfo" TZ="$1" python3 "$py" stamps "$grid" >"$work/stamps"
    n=$(wc -l <"$work/stamps")
    awk -v n="$n" -v k="$2" 'BEGIN { s = n / k } NR == 1 || int((NR - 1) / s) != int((NR - 2) / s)' \
        "$work/stamps" >"$work/picked"
    TZDIR="$fixture/zoneinfo" TZ="$1" python3 "$py" show <"$work/picked" |
        awk -F'[ ]' -v tz="$1" '{ printf "%s\t%s\t%s %s\t%s\t%s\t%s\t%s\t%s\n", tz, $1, $2, $3, $4, $5, $6, $7, $8 }' >>"$table"
}
while IFS= read -r z; do rows "$z" 30; done <"$work/list"
printf '%s\n' "$POSIX" "$ODD" >"$work/list"
while IFS= read -r z; do rows "$z" 15; done <"$work/list"
echo "wrote $table ($(grep -vc '^#' "$table") rows) and $(printf '%s\n' "$FIXTURE_ZONES" | wc -l) zone files"
