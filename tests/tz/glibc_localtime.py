#!/usr/bin/env python3
"""The C library's local times, for the time-zone oracle (check-tz.sh).

Python's time.localtime calls the C library's localtime_r, so under
glibc this is glibc's reading of TZ / TZDIR / /etc/localtime.

  glibc_localtime.py stamps   print the timestamps to check in the zone of
                              TZ: a grid from 1901 to 2100, plus every
                              change of UTC offset, abbreviation or DST
                              flag found on that grid (bisected to the
                              second) with the seconds around it
  glibc_localtime.py show     read timestamps (one a line) on stdin, print
                              SECS YYYY-MM-DD HH:MM:SS UTCOFF ABBREV ISDST WDAY YDAY
                              (UTCOFF seconds east, WDAY 0 = Sunday,
                              YDAY 0 = January 1st): the layout of
                              `cargo run -p tracemux-core --example localtime`
"""

import sys
import time

FIRST = -2147483648  # 1901-12-13 20:45:52 UTC
LAST = 4133980799  # 2100-12-31 23:59:59 UTC


def key(t):
    lt = time.localtime(t)
    return (lt.tm_gmtoff, lt.tm_zone, lt.tm_isdst)


def stamps(grid):
    step = (LAST - FIRST) // grid
    # An odd step so that the grid meets every hour of the day.
    step += 1 - step % 2
    out = set(range(FIRST, LAST + 1, step))
    out.add(LAST)
    # Changes are looked for every 6 hours (and a second): no zone changes
    # twice within that.
    scan = 6 * 3600 + 1
    prev_t, prev_k = FIRST, key(FIRST)
    t = FIRST + scan
    while t <= LAST + scan:
        t = min(t, LAST)
        k = key(t)
        if k != prev_k:
            lo, hi = prev_t, t
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if key(mid) == prev_k:
                    lo = mid
                else:
                    hi = mid
            for d in (-3601, -1, 0, 1, 3599):
                if FIRST <= hi + d <= LAST:
                    out.add(hi + d)
        if t == LAST:
            break
        prev_t, prev_k = t, k
        t += scan
    for t in sorted(out):
        print(t)


def show():
    w = sys.stdout.write
    for line in sys.stdin:
        s = line.strip()
        if not s:
            continue
        lt = time.localtime(int(s))
        w(
            f"{s} {lt.tm_year:04}-{lt.tm_mon:02}-{lt.tm_mday:02} "
            f"{lt.tm_hour:02}:{lt.tm_min:02}:{lt.tm_sec:02} {lt.tm_gmtoff} "
            f"{lt.tm_zone} {1 if lt.tm_isdst > 0 else 0} {(lt.tm_wday + 1) % 7} "
            f"{lt.tm_yday - 1}\n"
        )


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "stamps":
        stamps(int(sys.argv[2]) if len(sys.argv) > 2 else 20000)
    elif len(sys.argv) == 2 and sys.argv[1] == "show":
        show()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
