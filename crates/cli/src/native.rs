//! Which command line applies. Each format is printed as its native tool
//! prints it, and each native tool has its own everyday flags (trace-cmd's
//! `-f` lists functions, uftrace's `-f` picks output fields). So the trace
//! named on the command line is recognised first, and the command line is
//! then parsed with that format's options: `tracemux report DIR --help`
//! lists the options that apply to DIR.

use std::ffi::OsString;
use std::path::Path;

use tracemux_open::{sniff, Kind};

/// The option set a command line is parsed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// trace-cmd's (trace.dat, and the default when no trace is named).
    TraceCmd,
    /// babeltrace2's (CTF).
    Babeltrace,
    /// uftrace's (uftrace.data).
    Uftrace,
    /// Legacy LTT (babeltrace2-like).
    Ltt,
    /// perf's (perf.data).
    Perf,
    /// Several traces of any formats as one timeline (`timeline.rs`).
    Timeline,
}

/// The subcommands whose options depend on the trace.
const PER_FORMAT: &[&str] = &["report", "info", "dump", "stats"];

/// Decide the option set from the raw arguments: the first argument after
/// the subcommand that names an existing file or directory decides.
pub fn detect(argv: &[OsString]) -> Style {
    let Some(sub) = argv.get(1).and_then(|s| s.to_str()) else {
        return Style::TraceCmd;
    };
    if !PER_FORMAT.contains(&sub) {
        return Style::TraceCmd;
    }
    if sub != "dump" && is_timeline(&argv[2..]) {
        return Style::Timeline;
    }
    for a in &argv[2..] {
        let bytes = a.as_encoded_bytes();
        if bytes.first() == Some(&b'-') {
            continue;
        }
        // an LTTng live session (`net://HOST/host/H/SESSION`): babeltrace2's
        if [&b"net://"[..], b"net4://", b"net6://"]
            .iter()
            .any(|p| bytes.starts_with(p))
        {
            return Style::Babeltrace;
        }
        let p = Path::new(a);
        if !p.exists() {
            continue;
        }
        // a directory followed while it is written may hold no trace yet
        if p.is_dir() && argv.iter().any(|x| x == "--follow") && sniff(p).is_err() {
            return Style::Babeltrace;
        }
        return match sniff(p) {
            Ok(Kind::Ctf { .. }) => Style::Babeltrace,
            Ok(Kind::Uftrace) => Style::Uftrace,
            Ok(Kind::Ltt) => Style::Ltt,
            Ok(Kind::Perf) => Style::Perf,
            // trace.dat, or an error the trace-cmd path reports
            _ => Style::TraceCmd,
        };
    }
    Style::TraceCmd
}

/// Whether the arguments name several existing traces that are not all
/// CTF (several CTF traces merge as babeltrace2 merges them), or give
/// `--clock-offset`: a timeline of several inputs.
fn is_timeline(args: &[OsString]) -> bool {
    // `--clock-offset INPUT=NS` (babeltrace2's own `--clock-offset
    // SECONDS` of a CTF trace has no `=` in its value)
    let given = args.iter().enumerate().any(|(i, a)| match a.to_str() {
        Some("--clock-offset") => args
            .get(i + 1)
            .and_then(|v| v.to_str())
            .is_some_and(|v| v.contains('=')),
        Some(s) => s
            .strip_prefix("--clock-offset=")
            .is_some_and(|v| v.contains('=')),
        None => false,
    });
    if given {
        return true;
    }
    let mut paths = Vec::new();
    let mut skip = false;
    // trace-cmd's `-i FILE`: several trace.dat merged as trace-cmd merges
    // them (its own options per input), not a timeline
    let mut dash_i = false;
    for a in args {
        if std::mem::take(&mut skip) {
            continue;
        }
        let bytes = a.as_encoded_bytes();
        if bytes.first() == Some(&b'-') {
            // trace-cmd's `-i FILE` names a trace too; other options'
            // values do not name existing files
            skip = bytes == b"--style";
            dash_i |= bytes == b"-i" || bytes.starts_with(b"--input");
            continue;
        }
        let p = Path::new(a);
        if p.exists() {
            paths.push(p.to_path_buf());
        }
    }
    let traces: Vec<Kind> = paths.iter().filter_map(|p| sniff(p).ok()).collect();
    traces.len() >= 2
        && traces.len() == paths.len()
        && traces.iter().any(|k| !matches!(k, Kind::Ctf { .. }))
        && !(dash_i && traces.iter().all(|k| matches!(k, Kind::TraceDat)))
}

/// Parse `argv` with the clap parser `P`; on `--help`/errors print and
/// return the exit code.
pub fn parse<P: clap::Parser>(argv: Vec<OsString>) -> Result<P, std::process::ExitCode> {
    match P::try_parse_from(argv) {
        Ok(c) => Ok(c),
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            Err(std::process::ExitCode::from(code))
        }
    }
}
