//! The command line for CTF traces (CTF 1.8 and CTF 2): babeltrace2's
//! options, with the meaning and output of babeltrace2 2.0.

use std::path::PathBuf;

use anyhow::{anyhow, Result};
use clap::{Args, Parser, Subcommand};
use tracemux_ctf::text::TextOptions;

use crate::out::{Out, Outcome};

/// Read CTF 1.8 and CTF 2 traces, printed as babeltrace2 prints them.
#[derive(Parser, Debug)]
#[command(name = "tracemux", version)]
pub struct CtfCli {
    #[command(subcommand)]
    pub cmd: CtfCmd,
}

#[derive(Subcommand, Debug)]
pub enum CtfCmd {
    /// The events of every trace found, merged by time, as `babeltrace2 TRACE...` prints them.
    Report(Box<CtfReportArgs>),
    /// Decode every event (no text) and count: per event class, per stream, discarded data.
    Stats(CtfStatsArgs),
    /// The trace classes: environment, clocks, stream and event classes; then the counts of `stats`.
    Info(CtfStatsArgs),
}

/// babeltrace2's options for the text output.
#[derive(Args, Debug)]
pub struct CtfReportArgs {
    /// Trace directories (searched recursively for CTF traces) or metadata files.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// Timestamps in cycles.
    #[arg(long)]
    pub clock_cycles: bool,
    /// Timestamps as SECONDS.NANOSECONDS.
    #[arg(long)]
    pub clock_seconds: bool,
    /// Print the date too.
    #[arg(long)]
    pub clock_date: bool,
    /// UTC instead of the local time zone.
    #[arg(long)]
    pub clock_gmt: bool,
    /// Add SEC seconds to the clock offsets.
    #[arg(long, value_name = "SEC", allow_hyphen_values = true)]
    pub clock_offset: Option<i64>,
    /// Add NS nanoseconds to the clock offsets.
    #[arg(long, value_name = "NS", allow_hyphen_values = true)]
    pub clock_offset_ns: Option<i64>,
    /// No (+delta) column.
    #[arg(long)]
    pub no_delta: bool,
    /// Which names to show: all, none, payload, context, scope, header (comma-separated).
    #[arg(short = 'n', long, value_name = "NAME[,NAME]...")]
    pub names: Option<String>,
    /// Which fields to show: all, trace, trace:hostname, trace:domain,
    /// trace:procname, trace:vpid, loglevel, emf, callsite (comma-separated).
    #[arg(short = 'f', long, value_name = "FIELD[,FIELD]...")]
    pub fields: Option<String>,
    /// Only events at or after BEGIN ([YYYY-MM-DD [hh:mm:]ss[.nnnnnnnnn]] or SEC[.NS]).
    #[arg(short = 'b', long, value_name = "BEGIN")]
    pub begin: Option<String>,
    /// Only events at or before END.
    #[arg(short = 'e', long, value_name = "END")]
    pub end: Option<String>,
    /// A damaged packet is an error (as in babeltrace2) instead of being reported and skipped.
    #[arg(long)]
    pub strict: bool,
    /// One JSON object per event (the schema of `report --json`), through the common event model.
    #[arg(long)]
    pub json: bool,
    /// Output style: babeltrace (the default: babeltrace2's text) or json (as --json).
    #[arg(long, value_enum)]
    pub style: Option<CtfStyle>,
    /// LTTng live (`net://...`): when the session is not there, end quietly,
    /// keep looking, or fail (babeltrace2's `session-not-found-action`).
    #[arg(long, value_enum, value_name = "ACTION", default_value = "end")]
    pub session_not_found: SessionNotFound,
    /// Follow a trace directory being written: print what is there, then
    /// what arrives, until Ctrl-C (or --follow-idle).
    #[arg(long)]
    pub follow: bool,
    /// With --follow: end when nothing was added for SECONDS.
    #[arg(long, value_name = "SECONDS", requires = "follow")]
    pub follow_idle: Option<f64>,
    /// babeltrace2's input format: ctf or lttng-live (the input decides: a
    /// `net://` URL is a live session).
    #[arg(short = 'i', long, value_name = "FORMAT")]
    pub input_format: Option<InputFormat>,
}

/// babeltrace2's `session-not-found-action`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionNotFound {
    End,
    Continue,
    Fail,
}

/// babeltrace2's `--input-format`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    Ctf,
    #[value(name = "lttng-live")]
    LttngLive,
}

/// Output styles of `report` for CTF traces.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CtfStyle {
    Babeltrace,
    Json,
    /// trace-cmd report's line layout, payload fields as ` name=value`.
    #[value(name = "trace-cmd")]
    TraceCmd,
}

impl CtfReportArgs {
    /// JSON lines output (`--json` or `--style json`).
    pub fn wants_json(&self) -> bool {
        self.json || matches!(self.style, Some(CtfStyle::Json | CtfStyle::TraceCmd))
    }
}

#[derive(Args, Debug)]
pub struct CtfStatsArgs {
    /// Trace directories or metadata files.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// A damaged packet is an error.
    #[arg(long)]
    pub strict: bool,
}

pub fn run(cli: CtfCli) -> Result<Outcome> {
    match cli.cmd {
        CtfCmd::Report(a) => report(&a),
        CtfCmd::Stats(a) => stats(&a, false),
        CtfCmd::Info(a) => stats(&a, true),
    }
}

fn report(a: &CtfReportArgs) -> Result<Outcome> {
    let live = a
        .traces
        .iter()
        .filter_map(|p| p.to_str())
        .find(|s| tracemux_ctf::live::is_live_url(s));
    if let Some(url) = live {
        if a.traces.len() > 1 {
            anyhow::bail!("{url}: a live session is read alone (one input)");
        }
        if a.wants_json() {
            anyhow::bail!("{url}: --json of a live session is not supported yet");
        }
        let nf = match a.session_not_found {
            SessionNotFound::End => tracemux_ctf::live::NotFound::End,
            SessionNotFound::Continue => tracemux_ctf::live::NotFound::Continue,
            SessionNotFound::Fail => tracemux_ctf::live::NotFound::Fail,
        };
        return crate::live::report(url, &text_options(a)?, nf);
    }
    if a.follow {
        let [dir] = a.traces.as_slice() else {
            anyhow::bail!("--follow takes one trace directory");
        };
        if a.wants_json() {
            anyhow::bail!("--follow with --json is not supported yet");
        }
        return crate::live::follow(dir, &text_options(a)?, a.follow_idle);
    }
    if a.input_format == Some(InputFormat::LttngLive) {
        anyhow::bail!(
            "--input-format=lttng-live takes a net://HOST[:PORT]/host/HOSTNAME/SESSION URL"
        );
    }
    if a.wants_json() {
        return report_json(a);
    }
    report_files(a, text_options(a)?)
}

/// babeltrace2's text options from the command line.
fn text_options(a: &CtfReportArgs) -> Result<TextOptions> {
    let mut o = TextOptions {
        clock_cycles: a.clock_cycles,
        clock_seconds: a.clock_seconds,
        clock_date: a.clock_date,
        clock_gmt: a.clock_gmt,
        no_delta: a.no_delta,
        begin: a.begin.clone(),
        end: a.end.clone(),
        clock_offset_s: a.clock_offset.unwrap_or(0),
        clock_offset_ns: a.clock_offset_ns.unwrap_or(0),
        strict: a.strict,
        threads: crate::knobs::env_threads(),
        ..Default::default()
    };
    if let Some(n) = &a.names {
        o.set_names(n).map_err(|e| anyhow!("--names: {e}"))?;
    }
    if let Some(f) = &a.fields {
        o.set_fields(f).map_err(|e| anyhow!("--fields: {e}"))?;
    }
    Ok(o)
}

fn report_files(a: &CtfReportArgs, o: TextOptions) -> Result<Outcome> {
    let mut out = Out::new();
    // warnings go to stderr in order with the lines printed before them
    let mut warn = WarnAfterOut::default();
    let res = tracemux_ctf::text::report_to(
        &a.traces,
        &o,
        &tracemux_open::CtfMapLoader::default(),
        &mut out,
        &mut warn,
    );
    out.flush()?;
    if out.closed() {
        // (a closed pipe ends the output quietly, as for the other formats)
        return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe).into());
    }
    warn.flush_to_stderr();
    let s = res?;
    Ok(Outcome::damaged_if(s.damaged > 0))
}

/// Collects warnings; the report flushes stdout before they are written
/// so that both streams interleave as babeltrace2's do on a terminal.
#[derive(Default)]
struct WarnAfterOut {
    buf: Vec<u8>,
}

impl std::io::Write for WarnAfterOut {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl WarnAfterOut {
    fn flush_to_stderr(&mut self) {
        use std::io::Write;
        let _ = std::io::stderr().write_all(&self.buf);
        self.buf.clear();
    }
}

fn stats(a: &CtfStatsArgs, info: bool) -> Result<Outcome> {
    let mut s = String::new();
    if info {
        for f in tracemux_ctf::fs::discover(&a.traces)? {
            let tc = tracemux_ctf::text::trace_class(&f.dir)?;
            tracemux_ctf::stats::describe(&mut s, &f.dir, &tc);
        }
    }
    let c = tracemux_ctf::stats::count_with_loader(
        &a.traces,
        a.strict,
        &tracemux_open::CtfMapLoader::default(),
    )?;
    for w in &c.warnings {
        eprintln!("tracemux: warning: {w}");
    }
    tracemux_ctf::stats::write_counts(&mut s, &c);
    let mut out = Out::new();
    out.buf().extend_from_slice(s.as_bytes());
    out.flush()?;
    for d in &c.damage {
        eprintln!("tracemux: {d}");
    }
    // what CTF 2 forbids and was read on (the warnings) is damage too
    Ok(Outcome::damaged_if(
        !c.damage.is_empty() || !c.warnings.is_empty(),
    ))
}

/// `report --json`: every record of the model source as a JSON line;
/// damage on stderr (an error with `--strict`).
fn report_json(a: &CtfReportArgs) -> Result<Outcome> {
    let text_only = [
        (a.clock_cycles, "--clock-cycles"),
        (a.clock_seconds, "--clock-seconds"),
        (a.clock_date, "--clock-date"),
        (a.clock_gmt, "--clock-gmt"),
        (a.clock_offset.is_some(), "--clock-offset"),
        (a.clock_offset_ns.is_some(), "--clock-offset-ns"),
        (a.no_delta, "--no-delta"),
        (a.names.is_some(), "--names"),
        (a.fields.is_some(), "--fields"),
        (a.begin.is_some(), "--begin"),
        (a.end.is_some(), "--end"),
    ];
    if let Some((_, opt)) = text_only.iter().find(|(set, _)| *set) {
        anyhow::bail!("{opt} applies to the babeltrace2 text output, not to --json");
    }
    let style = if a.style == Some(CtfStyle::TraceCmd) {
        crate::model::ModelStyle::TraceCmd
    } else {
        crate::model::ModelStyle::Json
    };
    let first = a.traces.first().cloned().unwrap_or_default();
    crate::model::with_source(&a.traces, a.strict, |src| {
        crate::model::print_model(src, style, &first, a.strict)
    })
}
