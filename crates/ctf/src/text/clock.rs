//! Timestamps as babeltrace2 prints them (`[15:04:05.123456789]`, cycles,
//! `--clock-seconds`, `--clock-date`, `--clock-gmt`), and its syntax of
//! `--begin`/`--end` times.

use super::*;

/// Formats timestamps as babeltrace2's `print_timestamp_wall` does.
pub(super) struct Clock {
    pub(super) zone: Zone,
    pub(super) gmt: bool,
    pub(super) date: bool,
    pub(super) seconds: bool,
    pub(super) cache_sec: i64,
    pub(super) cache: Vec<u8>,
    /// `cache` in a block of constant size (it is at most 32 bytes long).
    pub(super) cache_block: [u8; 32],
    pub(super) negative_warned: bool,
}

impl Clock {
    pub(super) fn new(o: &TextOptions) -> Clock {
        Clock {
            zone: if o.clock_gmt {
                Zone::utc()
            } else {
                o.timezone
                    .as_deref()
                    .map_or_else(Zone::local, |tz| Zone::from_tz(Some(tz), None))
            },
            gmt: o.clock_gmt,
            date: o.clock_date,
            seconds: o.clock_seconds,
            cache_sec: i64::MIN,
            cache: Vec::new(),
            cache_block: [0; 32],
            negative_warned: false,
        }
    }

    /// The broken-down time of `secs` (within the years 0 to 2262 here:
    /// `secs` comes from nanoseconds in an `i64`).
    pub(super) fn tm(&self, secs: i64) -> Option<Tm> {
        if self.gmt {
            gmtime(secs)
        } else {
            self.zone.localtime(secs)
        }
    }

    /// The time of day of `ns` when it is within the second of the time
    /// before and printed as the time of day (what [`Clock::push`] then
    /// writes before the `.`): at most 32 bytes in a block of 32, and its
    /// length.
    #[inline(always)]
    pub(super) fn cached(&self, ns: i64) -> Option<(&[u8; 32], usize)> {
        (ns >= 0 && !self.seconds && ns / 1_000_000_000 == self.cache_sec && self.cache.len() <= 32)
            .then_some((&self.cache_block, self.cache.len()))
    }

    /// Append the wall-clock form of `ns` (nanoseconds from origin).
    #[inline(always)]
    pub(super) fn push(&mut self, out: &mut Vec<u8>, ns: i64, warn: &mut Vec<u8>) {
        // (most times: within the second of the one before, printed as
        // the time of day)
        if let Some((day, k)) = self.cached(ns) {
            let l = out.len();
            out.extend_from_slice(day);
            out.truncate(l + k);
            out.push(b'.');
            put_padded(out, (ns % 1_000_000_000) as u64, 9);
            return;
        }
        self.push_slow(out, ns, warn)
    }

    #[inline(never)]
    pub(super) fn push_slow(&mut self, out: &mut Vec<u8>, ns: i64, warn: &mut Vec<u8>) {
        let s = ns / 1_000_000_000;
        let n = ns % 1_000_000_000;
        let (neg, sa, na) = if s >= 0 && n >= 0 {
            (false, s as u64, n as u64)
        } else if s > 0 && n < 0 {
            (false, (s - 1) as u64, (1_000_000_000 + n) as u64)
        } else if s == 0 && n < 0 {
            (true, 0, (-n) as u64)
        } else if s < 0 && n > 0 {
            (true, (-(s + 1)) as u64, (1_000_000_000 - n) as u64)
        } else if s < 0 && n == 0 {
            (true, s.unsigned_abs(), 0)
        } else {
            (true, s.unsigned_abs(), n.unsigned_abs())
        };
        let mut seconds = self.seconds;
        if !seconds && neg {
            if !self.negative_warned {
                warn.extend_from_slice(
                    b"[warning] Fallback to [sec.ns] to print negative time value. Use --clock-seconds.\n",
                );
                self.negative_warned = true;
            }
            seconds = true;
        }
        let mut b = itoa::Buffer::new();
        if seconds {
            if neg {
                out.push(b'-');
            }
            out.extend_from_slice(b.format(sa).as_bytes());
        } else {
            let sa = sa as i64;
            if sa != self.cache_sec {
                self.cache.clear();
                if let Some(t) = self.tm(sa) {
                    if self.date {
                        let y = t.year;
                        if (0..10000).contains(&y) {
                            put_padded(&mut self.cache, y as u64, 4);
                        } else {
                            self.cache.extend_from_slice(b.format(y).as_bytes());
                        }
                        self.cache.push(b'-');
                        put_padded(&mut self.cache, t.month as u64, 2);
                        self.cache.push(b'-');
                        put_padded(&mut self.cache, t.day as u64, 2);
                        self.cache.push(b' ');
                    }
                    put_padded(&mut self.cache, t.hour as u64, 2);
                    self.cache.push(b':');
                    put_padded(&mut self.cache, t.min as u64, 2);
                    self.cache.push(b':');
                    put_padded(&mut self.cache, t.sec as u64, 2);
                } else {
                    // No date can be had (no `i64` of nanoseconds is that
                    // far): the seconds as they are.
                    self.cache.extend_from_slice(b.format(sa).as_bytes());
                }
                self.cache_sec = sa;
                let n = self.cache.len().min(32);
                self.cache_block = [0; 32];
                self.cache_block[..n].copy_from_slice(&self.cache[..n]);
            }
            // (a copy of constant size, cut back: no call)
            let l = out.len();
            if self.cache.len() <= 32 {
                out.extend_from_slice(&self.cache_block);
                out.truncate(l + self.cache.len());
            } else {
                out.extend_from_slice(&self.cache);
            }
        }
        out.push(b'.');
        put_padded(out, na, 9);
    }
}

// ---------------------------------------------------------------------
// babeltrace2 time syntax (--begin/--end)

/// A `--begin`/`--end` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TimeSpec {
    /// Nanoseconds from origin.
    Abs(i64),
    /// A time of day (ns since midnight): the date comes from the first
    /// event.
    OfDay(i64),
}

/// Parse babeltrace2's trimmer time syntax: `[YYYY-MM-DD [T]]HH:MM[:SS[.N]]`
/// or `[-]SECONDS[.N]`.
pub(super) fn parse_time(s: &str) -> Option<TimeSpec> {
    let s = s.trim();
    let frac = |f: &str| -> Option<i64> {
        if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut v: i64 = f.parse().ok()?;
        for _ in f.len()..9 {
            v *= 10;
        }
        Some(v)
    };
    // Seconds since the origin.
    if !s.contains(':') {
        let (neg, body) = match s.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, s),
        };
        let (sec, ns) = match body.split_once('.') {
            Some((a, b)) => (a, frac(b)?),
            None => (body, 0),
        };
        if sec.is_empty() || !sec.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let sec: i64 = sec.parse().ok()?;
        let v = sec.checked_mul(1_000_000_000)?.checked_add(ns)?;
        return Some(TimeSpec::Abs(if neg { -v } else { v }));
    }
    let (date, time) = match s.split_once([' ', 'T']) {
        Some((d, t)) if d.contains('-') => (Some(d), t.trim()),
        _ => (None, s),
    };
    let mut parts = time.split(':');
    let h: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let (sec, ns) = match parts.next() {
        Some(x) => match x.split_once('.') {
            Some((a, b)) => (a.parse().ok()?, frac(b)?),
            None => (x.parse().ok()?, 0),
        },
        None => (0, 0),
    };
    if parts.next().is_some() || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    let tod = (h * 3600 + m * 60 + sec) * 1_000_000_000 + ns;
    match date {
        None => Some(TimeSpec::OfDay(tod)),
        Some(d) => {
            let mut p = d.split('-');
            let y: i64 = p.next()?.parse().ok()?;
            let mo: i64 = p.next()?.parse().ok()?;
            let da: i64 = p.next()?.parse().ok()?;
            if !(1..=12).contains(&mo) || !(1..=31).contains(&da) {
                return None;
            }
            let days = days_from_civil(y, mo as u32, da as u32);
            Some(TimeSpec::Abs(days * 86_400 * 1_000_000_000 + tod))
        }
    }
}

pub(super) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}
