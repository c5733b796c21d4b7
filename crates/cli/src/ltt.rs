//! The command line for legacy LTT traces (LTTng 0.x): events in the
//! babeltrace2 text style, and a summary.

use std::path::PathBuf;

use anyhow::{anyhow, Result};
use clap::{Args, Parser, Subcommand};
use tracemux_ltt::report::ReportOptions;

use crate::model::{print_model, ModelStyle};
use crate::out::{Out, Outcome};

/// Read legacy LTT traces (LTTng 0.x, 2008 format).
#[derive(Parser, Debug)]
#[command(name = "tracemux", version)]
pub struct LttCli {
    #[command(subcommand)]
    pub cmd: LttCmd,
}

#[derive(Subcommand, Debug)]
pub enum LttCmd {
    /// Print the events of every tracefile merged by time, in the
    /// babeltrace2 text style (`[time] (+delta) facility:event: { cpu_id = N }, { fields }`).
    Report(LttReportArgs),
    /// Summarise the trace: trace header, tracefiles, facilities, event
    /// counts, lost data.
    Info(LttInfoArgs),
    /// The same summary as `info` (every event is read and counted).
    Stats(LttInfoArgs),
}

#[derive(Args, Debug)]
pub struct LttReportArgs {
    /// The trace directory (cpu_N tracefiles and control/).
    pub trace: PathBuf,
    /// Times as seconds.nanoseconds since the epoch.
    #[arg(long)]
    pub clock_seconds: bool,
    /// Cycle counts instead of times.
    #[arg(long)]
    pub clock_cycles: bool,
    /// The date before the time of day.
    #[arg(long)]
    pub clock_date: bool,
    /// No (+delta) column.
    #[arg(long)]
    pub no_delta: bool,
    /// Stop at the first damage instead of reporting it.
    #[arg(long)]
    pub strict: bool,
    /// One JSON object per event (the schema of `report --json`).
    #[arg(long)]
    pub json: bool,
    /// Output style: babeltrace (the default), json (as --json) or
    /// trace-cmd (trace-cmd report's layout).
    #[arg(long, value_enum)]
    pub style: Option<LttStyle>,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum LttStyle {
    Babeltrace,
    Json,
    #[value(name = "trace-cmd")]
    TraceCmd,
}

#[derive(Args, Debug)]
pub struct LttInfoArgs {
    /// The trace directory.
    pub trace: PathBuf,
    /// Stop at the first damage instead of reporting it.
    #[arg(long)]
    pub strict: bool,
}

pub fn run(cli: LttCli) -> Result<Outcome> {
    let mut out = Out::new();
    let mut warn = std::io::stderr();
    match cli.cmd {
        LttCmd::Report(a)
            if a.json || matches!(a.style, Some(LttStyle::Json | LttStyle::TraceCmd)) =>
        {
            let style = if a.json || a.style == Some(LttStyle::Json) {
                ModelStyle::Json
            } else {
                ModelStyle::TraceCmd
            };
            crate::model::with_source(std::slice::from_ref(&a.trace), a.strict, |src| {
                print_model(src, style, &a.trace, a.strict)
            })
        }
        LttCmd::Report(a) => {
            let opts = ReportOptions {
                strict: a.strict,
                clock_seconds: a.clock_seconds,
                clock_cycles: a.clock_cycles,
                clock_date: a.clock_date,
                no_delta: a.no_delta,
                loader: Some(&tracemux_open::ltt_load),
            };
            // the events through the model source (LttSource) and the
            // shared babeltrace2-style printer (tracemux_render), warnings
            // on stderr
            let st = tracemux_ltt::report(&a.trace, &opts, &mut out, &mut warn)
                .map_err(|e| anyhow!("{}: {}", a.trace.display(), e))?;
            out.flush()?;
            Ok(Outcome::damaged_if(st.warnings > 0))
        }
        LttCmd::Info(a) | LttCmd::Stats(a) => {
            let opts = ReportOptions {
                strict: a.strict,
                loader: Some(&tracemux_open::ltt_load),
                ..Default::default()
            };
            let s = tracemux_ltt::info(&a.trace, &opts, &mut out, &mut warn)
                .map_err(|e| anyhow!("{}: {}", a.trace.display(), e))?;
            out.flush()?;
            Ok(Outcome::damaged_if(!s.problems.is_empty()))
        }
    }
}
