//! Print an LTT trace directory (`report`) or its summary (`info`), until
//! the CLI is wired: `ltt_report [--info] [--strict] [--clock-seconds]
//! [--clock-cycles] [--clock-date] [--no-delta] DIR`.

use std::io::Write;
use std::path::PathBuf;

use tracemux_ltt::report::{info, report, ReportOptions};

fn main() {
    let mut o = ReportOptions::default();
    let mut want_info = false;
    let mut dir = None;
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "--info" => want_info = true,
            "--strict" => o.strict = true,
            "--clock-seconds" => o.clock_seconds = true,
            "--clock-cycles" => o.clock_cycles = true,
            "--clock-date" => o.clock_date = true,
            "--no-delta" => o.no_delta = true,
            s => dir = Some(PathBuf::from(s)),
        }
    }
    let Some(dir) = dir else {
        eprintln!("usage: ltt_report [--info] [--strict] [--clock-*] [--no-delta] DIR");
        std::process::exit(2);
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut err = std::io::stderr();
    let r = if want_info {
        info(&dir, &o, &mut out, &mut err).map(|_| ())
    } else {
        report(&dir, &o, &mut out, &mut err).map(|_| ())
    };
    let _ = out.flush();
    if let Err(e) = r {
        eprintln!("ltt_report: {e}");
        std::process::exit(1);
    }
}
