//! The local times tracemux computes, for the time-zone oracle
//! (`tests/tz/check-tz.sh`): reads seconds since the epoch, one a line, on
//! standard input and prints, for each, in the process's zone (`TZ`,
//! `TZDIR`, else `/etc/localtime`: [`Zone::local`]):
//!
//! ```text
//! SECS YYYY-MM-DD HH:MM:SS UTCOFF ABBREV ISDST WDAY YDAY
//! ```
//!
//! (`UTCOFF` in seconds east, `WDAY` 0 = Sunday, `YDAY` 0 = January 1st),
//! the layout of `tests/tz/glibc_localtime.py`. A line that is no number,
//! or a time outside the years -9999 to 9999, prints `SECS -`.

use std::io::{BufRead, BufWriter, Write};

use tracemux_core::localtime::Zone;

fn main() {
    let zone = Zone::local();
    let stdin = std::io::stdin();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let s = line.trim();
        if s.is_empty() {
            continue;
        }
        let t = s
            .parse::<i64>()
            .ok()
            .and_then(|secs| zone.localtime_abbrev(secs));
        let r = match t {
            Some((t, abbrev)) => writeln!(out, "{s} {}", t.oracle_row(&abbrev)),
            None => writeln!(out, "{s} -"),
        };
        if r.is_err() {
            break;
        }
    }
    let _ = out.flush();
}
