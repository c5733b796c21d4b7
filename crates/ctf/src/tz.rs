//! Local time for timestamps, as C's `localtime_r` gives it: the `TZ`
//! environment variable, else `/etc/localtime`, read from TZif files
//! (RFC 8536). Supported: TZif v1–v3 transition tables, `TZ` naming a zone
//! file (`Europe/Paris`, `:Europe/Paris`, an absolute path) or a fixed
//! offset (`UTC`, `UTC0`, `EST5`, `<+03>-3`). After the last transition the
//! last local time type applies (the TZif footer's DST rule is not
//! evaluated). Anything unreadable falls back to UTC.

use std::path::Path;

/// A broken-down time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tm {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub min: u32,
    pub sec: u32,
}

/// Days since 1970-01-01 to a civil date (proleptic Gregorian).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// UTC broken-down time of `secs` since the epoch.
pub fn gmtime(secs: i64) -> Tm {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    Tm {
        year,
        month,
        day,
        hour: (rem / 3600) as u32,
        min: (rem / 60 % 60) as u32,
        sec: (rem % 60) as u32,
    }
}

/// A time zone: transition times and the UTC offsets from each.
#[derive(Debug, Clone, Default)]
pub struct Zone {
    /// (transition time, offset in seconds), sorted.
    transitions: Vec<(i64, i32)>,
    /// Offset before the first transition (or always, with none).
    initial: i32,
}

impl Zone {
    /// UTC.
    pub fn utc() -> Zone {
        Zone::default()
    }

    /// The local zone of this process (`TZ`, else `/etc/localtime`).
    pub fn local() -> Zone {
        match std::env::var("TZ") {
            Ok(tz) => Zone::from_tz(&tz),
            Err(_) => Zone::from_file(Path::new("/etc/localtime")).unwrap_or_default(),
        }
    }

    /// The zone a `TZ` value describes.
    pub fn from_tz(tz: &str) -> Zone {
        let t = tz.strip_prefix(':').unwrap_or(tz);
        if t.is_empty() {
            return Zone::utc();
        }
        if t.starts_with('/') {
            return Zone::from_file(Path::new(t)).unwrap_or_default();
        }
        if !t.contains("..") {
            if let Some(z) = Zone::from_file(&Path::new("/usr/share/zoneinfo").join(t)) {
                return z;
            }
        }
        Zone::from_posix(t).unwrap_or_default()
    }

    /// A fixed offset from a POSIX `TZ` string's standard part.
    fn from_posix(t: &str) -> Option<Zone> {
        let b = t.as_bytes();
        let mut i = 0;
        if b.first() == Some(&b'<') {
            i = b.iter().position(|&c| c == b'>')? + 1;
        } else {
            while i < b.len() && b[i].is_ascii_alphabetic() {
                i += 1;
            }
            if i < 3 {
                return None;
            }
        }
        let rest = &t[i..];
        if rest.is_empty() {
            return Some(Zone::utc());
        }
        let (sign, num) = match rest.as_bytes()[0] {
            b'-' => (1i32, &rest[1..]),
            b'+' => (-1, &rest[1..]),
            _ => (-1, rest),
        };
        let end = num
            .find(|c: char| !(c.is_ascii_digit() || c == ':'))
            .unwrap_or(num.len());
        let mut parts = num[..end].split(':');
        let h: i32 = parts.next()?.parse().ok()?;
        let m: i32 = parts.next().map(|x| x.parse().unwrap_or(0)).unwrap_or(0);
        let s: i32 = parts.next().map(|x| x.parse().unwrap_or(0)).unwrap_or(0);
        // POSIX offsets are west-positive.
        Some(Zone {
            transitions: Vec::new(),
            initial: sign * (h * 3600 + m * 60 + s),
        })
    }

    /// Read a TZif file.
    pub fn from_file(p: &Path) -> Option<Zone> {
        let d = std::fs::read(p).ok()?;
        Zone::parse_tzif(&d)
    }

    fn parse_tzif(d: &[u8]) -> Option<Zone> {
        let hdr = |d: &[u8], at: usize| -> Option<[u32; 6]> {
            let h = d.get(at..at + 44)?;
            if &h[0..4] != b"TZif" {
                return None;
            }
            let mut c = [0u32; 6];
            for (k, v) in c.iter_mut().enumerate() {
                let o = 20 + 4 * k;
                *v = u32::from_be_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]]);
            }
            Some(c)
        };
        // counts: isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
        let c1 = hdr(d, 0)?;
        let version = d[4];
        let v1_len = c1[3] as usize * 5
            + c1[4] as usize * 6
            + c1[5] as usize
            + c1[2] as usize * 8
            + c1[1] as usize
            + c1[0] as usize;
        let (c, body, tsize) = if version >= b'2' {
            let at = 44 + v1_len;
            (hdr(d, at)?, at + 44, 8usize)
        } else {
            (c1, 44, 4usize)
        };
        let timecnt = c[3] as usize;
        let typecnt = c[4] as usize;
        let times = d.get(body..body + timecnt * tsize)?;
        let idx = d.get(body + timecnt * tsize..body + timecnt * (tsize + 1))?;
        let types_at = body + timecnt * (tsize + 1);
        let types = d.get(types_at..types_at + typecnt * 6)?;
        let off_of = |t: usize| -> Option<i32> {
            let e = types.get(t * 6..t * 6 + 4)?;
            Some(i32::from_be_bytes([e[0], e[1], e[2], e[3]]))
        };
        let mut tr = Vec::with_capacity(timecnt);
        for i in 0..timecnt {
            let t = if tsize == 8 {
                i64::from_be_bytes(times[i * 8..i * 8 + 8].try_into().ok()?)
            } else {
                i32::from_be_bytes(times[i * 4..i * 4 + 4].try_into().ok()?) as i64
            };
            tr.push((t, off_of(idx[i] as usize)?));
        }
        // Before the first transition: the first non-DST type (RFC 8536
        // says type 0).
        let initial = off_of(0).unwrap_or(0);
        Some(Zone {
            transitions: tr,
            initial,
        })
    }

    /// UTC offset in seconds at `secs` since the epoch.
    pub fn offset(&self, secs: i64) -> i32 {
        match self.transitions.partition_point(|&(t, _)| t <= secs) {
            0 => self.initial,
            i => self.transitions[i - 1].1,
        }
    }

    /// Local broken-down time of `secs` since the epoch.
    pub fn localtime(&self, secs: i64) -> Tm {
        gmtime(secs.saturating_add(self.offset(secs) as i64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        let t = gmtime(1_795_264_782);
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.min, t.sec),
            (2026, 11, 21, 12, 39, 42)
        );
        let t = gmtime(0);
        assert_eq!((t.year, t.month, t.day), (1970, 1, 1));
        let t = gmtime(-1);
        assert_eq!((t.year, t.month, t.day, t.hour), (1969, 12, 31, 23));
    }

    #[test]
    fn posix_offsets() {
        assert_eq!(Zone::from_posix("EST5").unwrap().offset(0), -5 * 3600);
        assert_eq!(Zone::from_posix("<+03>-3").unwrap().offset(0), 3 * 3600);
        assert_eq!(Zone::from_tz("UTC").offset(0), 0);
    }
}
