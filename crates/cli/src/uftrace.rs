//! The command line for uftrace data directories: uftrace's own flags,
//! with the meaning and output of uftrace 0.13.
//!
//! clap checks the arguments and writes `--help`; the options are then
//! read from the raw arguments by the uftrace crate, because uftrace
//! applies `-F` and `-N` in command-line order.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use clap::{Args, Parser, Subcommand};
use tracemux_uftrace::replay::ReplayOptions;
use tracemux_uftrace::{Bytes, Loader};

use crate::{Out, Outcome};

/// Read uftrace data directories (uftrace.data), printed as uftrace 0.13 prints them.
#[derive(Parser, Debug)]
#[command(name = "tracemux", version)]
pub struct UftraceCli {
    #[command(subcommand)]
    pub cmd: UftraceCmd,
}

#[derive(Subcommand, Debug)]
pub enum UftraceCmd {
    /// The function calls, as `uftrace replay` prints them.
    Report(Box<ReplayArgs>),
    /// What the recording says about itself, as `uftrace info` prints it.
    Info(InfoArgs),
}

/// `uftrace replay`'s options.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The uftrace.data directory.
    pub trace: PathBuf,
    /// Output fields, comma-separated: duration, tid, addr, time, delta,
    /// elapsed, task, module, or `all` / `none` (a leading + adds to the default).
    #[arg(short = 'f', long = "output-fields", value_name = "FIELD")]
    pub fields: Option<String>,
    /// Accepted for uftrace compatibility: recorded arguments are always shown.
    #[arg(short = 'a', long = "auto-args")]
    pub auto_args: bool,
    /// Do not show arguments and return values.
    #[arg(long)]
    pub no_args: bool,
    /// Hide library calls.
    #[arg(long)]
    pub no_libcall: bool,
    /// Hide events (sched in/out and the like).
    #[arg(long)]
    pub no_event: bool,
    /// Only functions matching FUNC (regex) and what they call.
    #[arg(short = 'F', long = "filter", value_name = "FUNC")]
    pub filter: Vec<String>,
    /// Hide functions matching FUNC and what they call.
    #[arg(short = 'N', long = "notrace", value_name = "FUNC")]
    pub notrace: Vec<String>,
    /// Triggers (FUNC@depth=N, ...).
    #[arg(short = 'T', long = "trigger", value_name = "TRIGGER")]
    pub trigger: Vec<String>,
    /// Maximum call depth shown.
    #[arg(short = 'D', long = "depth", value_name = "DEPTH")]
    pub depth: Option<String>,
    /// Hide functions that ran shorter than TIME (e.g. 10us).
    #[arg(short = 't', long = "time-filter", value_name = "TIME")]
    pub time_filter: Option<String>,
    /// Only these threads (comma-separated TIDs).
    #[arg(long = "tid", value_name = "TID")]
    pub tid: Vec<String>,
    /// C++ names: full, simple (default) or no.
    #[arg(long, value_name = "MODE", require_equals = true)]
    pub demangle: Option<String>,
    /// How -F/-N/-T patterns match: regex (default) or glob.
    #[arg(long = "match", value_name = "TYPE", require_equals = true)]
    pub pattern: Option<String>,
    /// No /* name */ comments after closing braces.
    #[arg(long)]
    pub no_comment: bool,
    /// Do not print leaf functions on one line.
    #[arg(long)]
    pub no_merge: bool,
    /// Accepted for uftrace compatibility (kernel data is shown when recorded).
    #[arg(short = 'k', long = "kernel")]
    pub kernel: bool,
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The uftrace.data directory.
    pub trace: PathBuf,
    /// The task list (`uftrace info --task`).
    #[arg(long)]
    pub task: bool,
}

/// Memory-maps the data files.
struct MapLoader;

impl Loader for MapLoader {
    fn load(&self, path: &Path) -> std::io::Result<Bytes> {
        match crate::open::map(path) {
            Ok(crate::open::Mapped::Map(m)) => Ok(Box::new(m)),
            Ok(crate::open::Mapped::Empty) => Ok(Box::new(Vec::<u8>::new())),
            Err(e) => Err(std::io::Error::other(format!("{e:#}"))),
        }
    }
}

/// Options that take the next argument as their value.
const WITH_VALUE: &[&str] = &[
    "-f",
    "--output-fields",
    "-F",
    "--filter",
    "-N",
    "--notrace",
    "-T",
    "--trigger",
    "-D",
    "--depth",
    "-t",
    "--time-filter",
    "--tid",
];

/// The raw arguments of the subcommand, without the trace directory
/// (the first argument equal to it that is not an option's value).
fn raw_options(argv: &[OsString], trace: &Path) -> Vec<String> {
    let args = argv.get(2..).unwrap_or(&[]);
    let at = (0..args.len()).find(|&i| {
        Path::new(&args[i]) == trace
            && (i == 0 || !WITH_VALUE.contains(&args[i - 1].to_string_lossy().as_ref()))
    });
    args.iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != at)
        .map(|(_, a)| a.to_string_lossy().into_owned())
        .collect()
}

pub fn main(argv: Vec<OsString>) -> std::process::ExitCode {
    let cli = match crate::native::parse::<UftraceCli>(argv.clone()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let trace = match &cli.cmd {
        UftraceCmd::Report(a) => a.trace.clone(),
        UftraceCmd::Info(a) => a.trace.clone(),
    };
    let raw = raw_options(&argv, &trace);
    crate::finish(run(cli, &raw))
}

fn run(cli: UftraceCli, raw: &[String]) -> Result<Outcome> {
    let mut out = Out::new();
    let mut warn = std::io::stderr();
    match cli.cmd {
        UftraceCmd::Report(a) => {
            let raw: Vec<&str> = raw.iter().map(String::as_str).collect();
            let opts = ReplayOptions::from_args(&raw).map_err(|e| anyhow!("{e}"))?;
            tracemux_uftrace::replay::replay_with(&a.trace, &opts, &MapLoader, &mut out, &mut warn)
                .map_err(|e| anyhow!("{}: {}", a.trace.display(), e))?;
        }
        UftraceCmd::Info(a) => {
            let r = if a.task {
                tracemux_uftrace::info::info_task(&a.trace, &mut out, &mut warn)
            } else {
                tracemux_uftrace::info::info(&a.trace, &mut out, &mut warn)
            };
            r.map_err(|e| anyhow!("{}: {}", a.trace.display(), e))?;
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}
