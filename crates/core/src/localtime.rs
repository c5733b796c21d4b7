//! Local time as the GNU C library's `localtime_r` gives it, for every
//! date or time that tracemux prints in the local time zone (babeltrace2's
//! `--clock-date` without `--clock-gmt`, uftrace's `ctime(3)` dates).
//!
//! The time-zone data is read and evaluated by the `jiff` crate: TZif files
//! (RFC 8536, versions 1 to 4, fat or slim, with the POSIX rule of their
//! footer for times after the last listed transition) and POSIX `TZ`
//! strings with or without DST rules. This module only decides, as glibc's
//! `tzset` does, which data a `TZ` value names ([`Zone::from_tz`]):
//!
//! - `TZ` unset: the file `/etc/localtime`; UTC (`UTC`) when it cannot be
//!   read.
//! - `TZ` empty: the zone file `Universal` (UTC).
//! - A leading `:` is dropped; nothing left: UTC (`UTC`).
//! - Otherwise the value is first taken as a zone file: an absolute path,
//!   or a name under `$TZDIR` (default `/usr/share/zoneinfo`), such as
//!   `America/New_York`.
//! - When no TZif file is found there, the value is a POSIX `TZ` string
//!   (`EST5EDT,M3.2.0,M11.1.0`, `<+0330>-3:30`, `JST-9`).
//! - What is neither: glibc's reading of it. The longest prefix that is a
//!   standard-time name (3 letters or more, or `<...>`) and offset gives a
//!   fixed offset with that name; a name with no valid offset gives UTC
//!   named by it (`TZ=Foo/Bar`: UTC, `Foo`); no name gives UTC with an
//!   empty abbreviation (`TZ=/nonexistent`). Offsets are capped as glibc
//!   caps them (24 hours, 59 minutes, 59 seconds).
//! - A DST name without a rule (`EST5EDT4`, `AAA5BBB`): glibc takes the
//!   transition dates from the `posixrules` file; here the rule that file
//!   has held since 2007 (`M3.2.0,M11.1.0`, the US rule, which is also
//!   glibc's own default when that file is absent) applies to every year,
//!   so earlier years can differ from glibc's.
//!
//! Before its first transition a zone file's time type 0 applies (RFC
//! 8536); zic always writes the zone's first, standard, type there, so
//! this is also glibc's choice of the first non-DST type. A zone file
//! whose footer does not give its last transition's type (jiff refuses
//! those) is read as glibc reads it: the transitions, then the footer.
//!
//! glibc's placement of a `TZ` rule's changes before 1970 is kept (see
//! [`Zone::glibc_before_1970`]). Rules that glibc (which evaluates a rule
//! in the UTC year) and jiff place differently near the turn of a year
//! are not: DST all year east of UTC (`<+04>-4<+05>,J1/0,J365/25`), a
//! change moved into another year by its time (`M12.5.0/170`). The
//! oracle `tests/tz/check-tz.sh` compares the rest with glibc.
//!
//! [`Zone::local`] reads the process's `TZ` and `TZDIR`; tests pass the
//! values to [`Zone::from_tz`] instead.

use std::io::Read;
use std::path::{Path, PathBuf};

use jiff::tz::{Offset, TimeZone};
use jiff::Timestamp;

/// Where glibc looks for zone files named by `TZ` when `TZDIR` is unset.
pub const DEFAULT_TZDIR: &str = "/usr/share/zoneinfo";

/// The zone file used when `TZ` is unset.
pub const DEFAULT_LOCALTIME: &str = "/etc/localtime";

/// Zone files larger than this are not TZif files (the largest real ones
/// are a few kilobytes); it also keeps `TZ=/dev/zero` from reading forever.
const MAX_TZIF_BYTES: u64 = 1 << 20;

/// A broken-down time, as C's `struct tm` holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tm {
    pub year: i32,
    /// 1 to 12.
    pub month: u8,
    /// 1 to 31.
    pub day: u8,
    pub hour: u8,
    pub min: u8,
    pub sec: u8,
    /// Day of the week, 0 = Sunday.
    pub wday: u8,
    /// Day of the year, 0 = January 1st.
    pub yday: u16,
    /// Seconds east of UTC.
    pub offset: i32,
    /// Daylight saving time is in effect.
    pub dst: bool,
}

impl Tm {
    /// `YYYY-MM-DD HH:MM:SS UTCOFF ABBREV ISDST WDAY YDAY` (`UTCOFF` in
    /// seconds east), the row of the time-zone oracle
    /// (`examples/localtime.rs`, checked by `tests/localtime_table.rs`).
    pub fn oracle_row(&self, abbrev: &str) -> String {
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02} {} {abbrev} {} {} {}",
            self.year,
            self.month,
            self.day,
            self.hour,
            self.min,
            self.sec,
            self.offset,
            u8::from(self.dst),
            self.wday,
            self.yday
        )
    }

    /// `ctime(3)`'s text without its newline: `Wed Nov 18 11:06:40 2026`.
    pub fn ctime(&self) -> String {
        const WDAY: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
        const MON: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        format!(
            "{} {} {:2} {:02}:{:02}:{:02} {}",
            WDAY[usize::from(self.wday % 7)],
            MON[usize::from(self.month.clamp(1, 12) - 1)],
            self.day,
            self.hour,
            self.min,
            self.sec,
            self.year
        )
    }
}

/// A time zone: what a `TZ` value names.
#[derive(Debug, Clone)]
pub struct Zone {
    tz: TimeZone,
    /// The abbreviation of a fixed-offset zone whose name jiff cannot
    /// carry (glibc's readings of values that are no valid rule).
    abbrev: Option<Box<str>>,
    /// A POSIX `TZ` string's rule: evaluated before 1970 as glibc does
    /// ([`Zone::glibc_before_1970`]).
    rule: bool,
    /// A zone file whose footer jiff finds inconsistent with its last
    /// transition: from that transition on, the footer's rule.
    tail: Option<(i64, Box<Zone>)>,
}

impl Default for Zone {
    fn default() -> Zone {
        Zone::utc()
    }
}

impl Zone {
    /// UTC, abbreviated `UTC`.
    pub fn utc() -> Zone {
        Zone {
            tz: TimeZone::UTC,
            abbrev: None,
            rule: false,
            tail: None,
        }
    }

    /// The local zone of this process: its `TZ` (and `TZDIR`) environment
    /// variables, else `/etc/localtime`.
    pub fn local() -> Zone {
        let tz = std::env::var_os("TZ").map(|v| v.to_string_lossy().into_owned());
        let dir = std::env::var_os("TZDIR").map(PathBuf::from);
        Zone::from_tz(tz.as_deref(), dir.as_deref())
    }

    /// The zone a `TZ` value names (`None`: `TZ` unset), zone files being
    /// looked up under `tzdir` (`None` or empty: `/usr/share/zoneinfo`),
    /// as glibc reads it (see the module documentation).
    pub fn from_tz(tz: Option<&str>, tzdir: Option<&Path>) -> Zone {
        let Some(tz) = tz else {
            return Zone::from_file(Path::new(DEFAULT_LOCALTIME), "localtime")
                .unwrap_or_else(Zone::utc);
        };
        let tz = if tz.is_empty() { "Universal" } else { tz };
        let name = tz.strip_prefix(':').unwrap_or(tz);
        if name.is_empty() {
            return Zone::utc();
        }
        let path = if name.starts_with('/') {
            PathBuf::from(name)
        } else {
            let dir = tzdir
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new(DEFAULT_TZDIR));
            dir.join(name)
        };
        if let Some(z) = Zone::from_file(&path, name) {
            return z;
        }
        Zone::from_posix(name).unwrap_or_else(|| glibc_fallback(name))
    }

    /// The zone of a TZif file, `None` if it cannot be read or is no TZif.
    pub fn from_file(path: &Path, name: &str) -> Option<Zone> {
        let f = std::fs::File::open(path).ok()?;
        if !f.metadata().ok()?.is_file() {
            return None;
        }
        let mut data = Vec::new();
        f.take(MAX_TZIF_BYTES).read_to_end(&mut data).ok()?;
        Zone::from_tzif(name, &data)
    }

    /// The zone of TZif data (RFC 8536), `None` if it is no valid TZif.
    pub fn from_tzif(name: &str, data: &[u8]) -> Option<Zone> {
        if let Ok(tz) = TimeZone::tzif(name, data) {
            return Some(Zone {
                tz,
                abbrev: None,
                rule: false,
                tail: None,
            });
        }
        // jiff refuses a file whose footer rule does not give the type of
        // its last transition (`zic -b slim` writes such files:
        // America/Ojinaga in tzdata 2025b); glibc reads it as the
        // transitions up to the last one, then the footer's rule. The
        // same: the file read without its footer (the text between the
        // last two newlines), and the footer as a POSIX string.
        let body = data.strip_suffix(b"\n")?;
        let at = body.iter().rposition(|&c| c == b'\n')?;
        let footer = std::str::from_utf8(&body[at + 1..]).ok()?;
        let mut bare = body[..=at].to_vec();
        bare.push(b'\n');
        let tz = TimeZone::tzif(name, &bare).ok()?;
        let last = tz.preceding(Timestamp::MAX).next()?.timestamp().as_second();
        let tail = Zone::from_posix(footer)?;
        Some(Zone {
            tz,
            abbrev: None,
            rule: false,
            tail: Some((last, Box::new(tail))),
        })
    }

    /// The zone of a POSIX `TZ` string (with a DST rule when it names a
    /// DST abbreviation), `None` if it is not one.
    pub fn from_posix(s: &str) -> Option<Zone> {
        Some(Zone {
            tz: TimeZone::posix(s).ok()?,
            abbrev: None,
            rule: true,
            tail: None,
        })
    }

    /// A fixed offset (seconds east of UTC, within 25 hours) named
    /// `abbrev`.
    fn fixed(offset: i32, abbrev: &str) -> Zone {
        Zone {
            tz: Offset::from_seconds(offset).map_or(TimeZone::UTC, TimeZone::fixed),
            abbrev: Some(abbrev.into()),
            rule: false,
            tail: None,
        }
    }

    /// The UTC offset, DST flag and abbreviation at `secs` since the
    /// epoch; `None` outside the years -9999 to 9999.
    fn at(&self, secs: i64) -> Option<(Timestamp, Offset, bool, String)> {
        if let Some((last, tail)) = &self.tail {
            if secs >= *last {
                return tail.at(secs);
            }
        }
        let ts = Timestamp::from_second(secs).ok()?;
        if let Some(r) = self.glibc_before_1970(ts) {
            return Some(r);
        }
        let info = self.tz.to_offset_info(ts);
        let abbrev = match &self.abbrev {
            Some(a) => a.to_string(),
            None => info.abbreviation().to_string(),
        };
        Some((ts, info.offset(), info.dst().is_dst(), abbrev))
    }

    /// glibc (2.36 at least) places a POSIX `TZ` rule's changes of a year
    /// before 1970 as if that year began on 1970-01-01: the day within the
    /// year and the time are the year's own, the year's start is not. So
    /// before 1970 it sees no change at all in most years, and gives
    /// standard time all year where DST starts before it ends in the year
    /// (north of the equator), DST all year where it starts after it ends
    /// (south). The same here, from the rule's changes in that (UTC) year
    /// as jiff places them. `None` for a zone that is no `TZ` rule (zone
    /// files are not read that way) or a rule with no changes.
    fn glibc_before_1970(&self, ts: Timestamp) -> Option<(Timestamp, Offset, bool, String)> {
        const DAY: i64 = 86_400;
        if !self.rule || ts.as_second() >= 0 {
            return None;
        }
        let secs = ts.as_second();
        let year = TimeZone::UTC.to_datetime(ts).year();
        let first = jiff::civil::date(year, 1, 1);
        let jan1 = Offset::UTC
            .to_timestamp(first.to_datetime(jiff::civil::Time::midnight()))
            .ok()?
            .as_second();
        let next = jan1 + i64::from(first.days_in_year()) * DAY;
        // The year's start and end of DST: those within the year, else the
        // nearest ones (a rule's time of day can move a change by a week,
        // `/167`, and the offset by a day).
        let distance = |t: i64| (jan1 - t).max(t - (next - 1)).max(0);
        let (mut start, mut end) = (None, None);
        let from = Timestamp::from_second(jan1 - 9 * DAY).ok()?;
        for t in self.tz.following(from).take(8) {
            // Whole seconds, rounded down (jiff ends some DST periods at
            // the last nanosecond of a second).
            let at = t.timestamp().as_second() - i64::from(t.timestamp().subsec_nanosecond() < 0);
            if at >= next + 9 * DAY {
                break;
            }
            let slot = if t.dst().is_dst() {
                &mut start
            } else {
                &mut end
            };
            let closer = match slot {
                None => true,
                Some((d, _, _)) => distance(at) < *d,
            };
            if closer {
                *slot = Some((distance(at), at, t));
            }
        }
        let (Some((_, s, start)), Some((_, e, end))) = (start, end) else {
            return None;
        };
        // Moved to the 1970 base.
        let (s, e) = (s - jan1, e - jan1);
        let dst = if s > e {
            secs < e || secs >= s
        } else {
            secs >= s && secs < e
        };
        let t = if dst { &start } else { &end };
        Some((ts, t.offset(), dst, t.abbreviation().to_string()))
    }

    /// The broken-down local time of `secs` since the epoch; `None` outside
    /// the years -9999 to 9999.
    pub fn localtime(&self, secs: i64) -> Option<Tm> {
        let (ts, offset, dst, _) = self.at(secs)?;
        Some(tm(ts, offset, dst))
    }

    /// The broken-down local time of `secs` since the epoch and the
    /// time-zone abbreviation then (`tm_zone`, `%Z`); `None` outside the
    /// years -9999 to 9999.
    pub fn localtime_abbrev(&self, secs: i64) -> Option<(Tm, String)> {
        let (ts, offset, dst, abbrev) = self.at(secs)?;
        Some((tm(ts, offset, dst), abbrev))
    }

    /// The UTC offset (seconds east) at `secs` since the epoch (0 outside
    /// the years -9999 to 9999).
    pub fn offset(&self, secs: i64) -> i32 {
        self.at(secs).map_or(0, |(_, o, _, _)| o.seconds())
    }

    /// The time-zone abbreviation at `secs` since the epoch (`tm_zone`,
    /// `%Z`).
    pub fn abbreviation(&self, secs: i64) -> String {
        self.at(secs).map(|(_, _, _, a)| a).unwrap_or_default()
    }
}

/// The broken-down time of `ts` at `offset`.
fn tm(ts: Timestamp, offset: Offset, dst: bool) -> Tm {
    let dt = offset.to_datetime(ts);
    Tm {
        year: i32::from(dt.year()),
        month: dt.month() as u8,
        day: dt.day() as u8,
        hour: dt.hour() as u8,
        min: dt.minute() as u8,
        sec: dt.second() as u8,
        wday: dt.weekday().to_sunday_zero_offset() as u8,
        yday: (dt.day_of_year() - 1) as u16,
        offset: offset.seconds(),
        dst,
    }
}

/// The broken-down UTC time of `secs` since the epoch (`gmtime_r`); `None`
/// outside the years -9999 to 9999.
pub fn gmtime(secs: i64) -> Option<Tm> {
    Zone::utc().localtime(secs)
}

/// glibc's reading of a `TZ` value that is no zone file and no POSIX
/// string jiff accepts (see the module documentation).
fn glibc_fallback(s: &str) -> Zone {
    let Some((std_name, rest)) = tz_name(s) else {
        return Zone::fixed(0, "");
    };
    let Some((std_west, rest)) = tz_offset(rest) else {
        return Zone::fixed(0, std_name);
    };
    if let Some((dst_name, rest)) = tz_name(rest) {
        let (dst_west, rest) = tz_offset(rest).unwrap_or((std_west - 3600, rest));
        if rest.is_empty() || rest == "," {
            let rule = format!(
                "<{std_name}>{}<{dst_name}>{},M3.2.0,M11.1.0",
                posix_offset(std_west),
                posix_offset(dst_west)
            );
            if let Some(z) = Zone::from_posix(&rule) {
                return z;
            }
        }
    }
    Zone::fixed(-std_west, std_name)
}

/// A POSIX time-zone name at the start of `s`: 3 letters or more, or 3
/// letters, digits, `+` or `-` or more between `<` and `>`; the name and
/// what follows.
fn tz_name(s: &str) -> Option<(&str, &str)> {
    let n = s.bytes().take_while(u8::is_ascii_alphabetic).count();
    if n >= 3 {
        return Some((&s[..n], &s[n..]));
    }
    let q = s.strip_prefix('<')?;
    let n = q
        .bytes()
        .take_while(|&c| c.is_ascii_alphanumeric() || c == b'+' || c == b'-')
        .count();
    let rest = q[n..].strip_prefix('>')?;
    (n >= 3).then_some((&q[..n], rest))
}

/// A POSIX offset (`[+-]hh[:mm[:ss]]`, positive west of UTC) at the start
/// of `s`, capped as glibc caps it; seconds west and what follows.
fn tz_offset(s: &str) -> Option<(i32, &str)> {
    let (sign, s) = match s.as_bytes().first()? {
        b'-' => (-1, &s[1..]),
        b'+' => (1, &s[1..]),
        _ => (1, s),
    };
    let mut rest = s;
    let mut parts = [0i32; 3];
    for (i, part) in parts.iter_mut().enumerate() {
        let body = if i == 0 {
            rest
        } else {
            match rest.strip_prefix(':') {
                Some(b) if b.starts_with(|c: char| c.is_ascii_digit()) => b,
                _ => break,
            }
        };
        let n = body.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        // Values past 65535 are no `unsigned short`: glibc's sscanf fails
        // on none of them, but no real TZ value has one.
        *part = body[..n]
            .parse::<u32>()
            .map_or(i32::MAX, |v| v.min(65_535) as i32);
        rest = &body[n..];
    }
    let secs = parts[0].min(24) * 3600 + parts[1].min(59) * 60 + parts[2].min(59);
    Some((sign * secs, rest))
}

/// A POSIX offset (seconds west) as `[-]hh:mm:ss`.
fn posix_offset(west: i32) -> String {
    let a = west.unsigned_abs();
    format!(
        "{}{}:{:02}:{:02}",
        if west < 0 { "-" } else { "" },
        a / 3600,
        a / 60 % 60,
        a % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zone from a `TZ` value with no zone files (an empty `TZDIR`).
    fn tz(v: &str) -> Zone {
        Zone::from_tz(Some(v), Some(Path::new("/nonexistent-tzdir")))
    }

    fn show(z: &Zone, secs: i64) -> String {
        let t = z.localtime(secs).unwrap();
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02} {} {} {}",
            t.year,
            t.month,
            t.day,
            t.hour,
            t.min,
            t.sec,
            t.offset,
            z.abbreviation(secs),
            u8::from(t.dst)
        )
    }

    #[test]
    fn utc_dates() {
        let t = gmtime(1_795_264_782).unwrap();
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.min, t.sec, t.wday, t.yday),
            (2026, 11, 21, 12, 39, 42, 6, 324)
        );
        let t = gmtime(-1).unwrap();
        assert_eq!((t.year, t.month, t.day, t.hour), (1969, 12, 31, 23));
        assert_eq!(gmtime(i64::MAX), None);
        assert_eq!(Zone::utc().offset(i64::MIN), 0);
    }

    #[test]
    fn ctime_text() {
        let t = gmtime(1_795_000_000).unwrap();
        assert_eq!(t.ctime(), "Wed Nov 18 11:06:40 2026");
        assert_eq!(gmtime(0).unwrap().ctime(), "Thu Jan  1 00:00:00 1970");
    }

    #[test]
    fn posix_rules() {
        let ny = tz("EST5EDT,M3.2.0,M11.1.0");
        // 2040-05-21 (the example): daylight time.
        assert_eq!(show(&ny, 2_221_264_782), "2040-05-21 21:59:42 -14400 EDT 1");
        assert_eq!(show(&ny, 2_240_000_000), "2040-12-24 17:13:20 -18000 EST 0");
        let z = tz("<+0330>-3:30");
        assert_eq!(show(&z, 0), "1970-01-01 03:30:00 12600 +0330 0");
        let z = tz(":JST-9");
        assert_eq!(show(&z, 0), "1970-01-01 09:00:00 32400 JST 0");
    }

    #[test]
    fn glibc_readings() {
        assert_eq!(show(&tz(""), 0), "1970-01-01 00:00:00 0 Universal 0");
        assert_eq!(show(&tz(":"), 0), "1970-01-01 00:00:00 0 UTC 0");
        assert_eq!(show(&tz("Foo/Bar"), 0), "1970-01-01 00:00:00 0 Foo 0");
        assert_eq!(show(&tz("/nonexistent"), 0), "1970-01-01 00:00:00 0  0");
        assert_eq!(show(&tz("ab"), 0), "1970-01-01 00:00:00 0  0");
        assert_eq!(show(&tz("AAA25"), 0), "1969-12-31 00:00:00 -86400 AAA 0");
        assert_eq!(show(&tz("AAA-25"), 0), "1970-01-02 00:00:00 86400 AAA 0");
        assert_eq!(
            show(&tz("AAA24:59:59"), 0),
            "1969-12-30 23:00:01 -89999 AAA 0"
        );
        assert_eq!(show(&tz("GMT+5"), 0), "1969-12-31 19:00:00 -18000 GMT 0");
        // A DST name without a rule: the US rule.
        let z = tz("XXX5YYY4");
        assert_eq!(show(&z, 1_500_000_000), "2017-07-13 22:40:00 -14400 YYY 1");
        assert_eq!(show(&z, 1_515_811_200), "2018-01-12 21:40:00 -18000 XXX 0");
        let z = tz("AAA5BBB,");
        assert_eq!(show(&z, 1_500_000_000), "2017-07-13 22:40:00 -14400 BBB 1");
    }

    #[test]
    fn zone_file_lookup() {
        // A TZif file made from a POSIX rule alone: a v2 file with no
        // transitions and a footer.
        let dir = std::env::temp_dir().join(format!("tracemux-tz-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("Test")).unwrap();
        let mut f = Vec::new();
        let header = |f: &mut Vec<u8>, v: u8| {
            f.extend_from_slice(b"TZif");
            f.push(v);
            f.extend_from_slice(&[0; 15]);
            // isut, isstd, leap, time, type, char counts
            for c in [0u32, 0, 0, 0, 1, 4] {
                f.extend_from_slice(&c.to_be_bytes());
            }
            f.extend_from_slice(&(-18000i32).to_be_bytes());
            f.extend_from_slice(&[0, 0]);
            f.extend_from_slice(b"EST\0");
        };
        header(&mut f, b'2');
        header(&mut f, b'2');
        f.extend_from_slice(b"\nEST5EDT,M3.2.0,M11.1.0\n");
        std::fs::write(dir.join("Test/Zone"), &f).unwrap();
        for v in ["Test/Zone", ":Test/Zone"] {
            let z = Zone::from_tz(Some(v), Some(&dir));
            assert_eq!(show(&z, 2_221_264_782), "2040-05-21 21:59:42 -14400 EDT 1");
        }
        let abs = dir.join("Test/Zone");
        let z = Zone::from_tz(Some(abs.to_str().unwrap()), None);
        assert_eq!(show(&z, 2_240_000_000), "2040-12-24 17:13:20 -18000 EST 0");
        // Not a TZif file, a directory: the POSIX reading.
        std::fs::write(dir.join("EST5"), b"not tzif").unwrap();
        let z = Zone::from_tz(Some("EST5"), Some(&dir));
        assert_eq!(show(&z, 0), "1969-12-31 19:00:00 -18000 EST 0");
        let z = Zone::from_tz(Some("Test"), Some(&dir));
        assert_eq!(show(&z, 0), "1970-01-01 00:00:00 0 Test 0");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
