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
use tracemux_uftrace::report::walk::WalkView;

use crate::out::{Out, Outcome};

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
    /// The records, as `uftrace dump` prints them (--records, the default),
    /// or as Chrome trace JSON, flame-graph stacks or a graphviz call graph.
    Dump(Box<DumpArgs>),
    /// Time per function, as `uftrace report` prints it; with --graph, the
    /// call graph, as `uftrace graph [FUNC]` prints it.
    Stats(Box<StatsArgs>),
}

/// uftrace's filters, common to report (`uftrace replay`), dump and stats.
#[derive(Args, Debug)]
pub struct FilterArgs {
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
    /// Kernel data (`-k` recordings): also the kernel functions outside user functions.
    #[arg(long)]
    pub kernel_full: bool,
    /// Kernel data: only the kernel functions and events.
    #[arg(long)]
    pub kernel_only: bool,
    /// Kernel data: hide kernel functions outside user functions (the default; deprecated in uftrace).
    #[arg(long, overrides_with = "kernel_full")]
    pub kernel_skip_out: bool,
}

/// The filters of dump and stats: uftrace's common ones and --no-sched
/// (which `uftrace replay` does not take).
#[derive(Args, Debug)]
pub struct WalkArgs {
    #[command(flatten)]
    pub common: FilterArgs,
    /// Hide schedule events.
    #[arg(long)]
    pub no_sched: bool,
}

#[derive(Args, Debug)]
pub struct DumpArgs {
    /// The uftrace.data directory.
    pub trace: PathBuf,
    /// Every record (`uftrace dump`; the default).
    #[arg(long, group = "what")]
    pub records: bool,
    /// Chrome trace JSON (`uftrace dump --chrome`).
    #[arg(long, group = "what")]
    pub chrome: bool,
    /// Flame-graph stacks (`uftrace dump --flame-graph`).
    #[arg(long, group = "what")]
    pub flame_graph: bool,
    /// A graphviz call graph (`uftrace dump --graphviz`).
    #[arg(long, group = "what")]
    pub graphviz: bool,
    /// Do not show arguments and return values.
    #[arg(long)]
    pub no_args: bool,
    #[command(flatten)]
    pub walk: WalkArgs,
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// The uftrace.data directory.
    pub trace: PathBuf,
    /// The call graph of FUNC (`--graph=FUNC`; of the whole recording
    /// without FUNC), as `uftrace graph [FUNC]`.
    #[arg(
        long,
        value_name = "FUNC",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ""
    )]
    pub graph: Option<String>,
    /// Sort keys: total, self, call, func, total-avg, self-max... (`uftrace report -s`).
    #[arg(short = 's', long = "sort", value_name = "KEY[,KEY]...")]
    pub sort: Option<String>,
    /// Show average/min/max of total time.
    #[arg(long)]
    pub avg_total: bool,
    /// Show average/min/max of self time.
    #[arg(long)]
    pub avg_self: bool,
    /// Output fields (`uftrace report -f` / `uftrace graph -f`).
    #[arg(short = 'f', long = "output-fields", value_name = "FIELD")]
    pub fields: Option<String>,
    /// Per-task table (`uftrace report --task`).
    #[arg(long)]
    pub task: bool,
    /// As uftrace 0.13 treats it: not an option (a warning, then the plain report).
    #[arg(long)]
    pub threads: bool,
    #[command(flatten)]
    pub walk: WalkArgs,
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
    #[command(flatten)]
    pub filters: FilterArgs,
    /// No /* name */ comments after closing braces.
    #[arg(long)]
    pub no_comment: bool,
    /// Do not print leaf functions on one line.
    #[arg(long)]
    pub no_merge: bool,
    /// Accepted for uftrace compatibility (kernel data is shown when recorded).
    #[arg(short = 'k', long = "kernel")]
    pub kernel: bool,
    /// One JSON object per record (as --style json), through the common
    /// event model.
    #[arg(long)]
    pub json: bool,
    /// uftrace (`uftrace replay`, the default), json (JSON lines),
    /// babeltrace (babeltrace2's text lines) or trace-cmd (trace-cmd
    /// report's layout); all but the first go through the common event
    /// model and take --demangle and --strict only.
    #[arg(long, value_name = "STYLE", value_parser = ["uftrace", "json", "babeltrace", "trace-cmd"])]
    pub style: Option<String>,
    /// With --json/--style json|babeltrace: stop at the first damage
    /// instead of reporting it.
    #[arg(long)]
    pub strict: bool,
}

impl ReplayArgs {
    /// The model style asked for (`None`: uftrace's replay).
    fn model_style(&self) -> Option<crate::model::ModelStyle> {
        use crate::model::ModelStyle;
        match self.style.as_deref() {
            Some("json") => Some(ModelStyle::Json),
            Some("babeltrace") => Some(ModelStyle::Babeltrace),
            Some("trace-cmd") => Some(ModelStyle::TraceCmd),
            _ if self.json => Some(ModelStyle::Json),
            _ => None,
        }
    }
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The uftrace.data directory.
    pub trace: PathBuf,
    /// The task list (`uftrace info --task`).
    #[arg(long)]
    pub task: bool,
}

/// Options that take the next argument as their value.
const WITH_VALUE: &[&str] = &[
    "-s",
    "--sort",
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
    "--style",
];

/// Options of ours (not uftrace's) that `report` takes out before reading
/// uftrace's options.
fn without_model_options(raw: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        let a = raw[i].as_str();
        if a == "--style" {
            i += 2;
            continue;
        }
        if a != "--json" && a != "--strict" && !a.starts_with("--style=") {
            out.push(a);
        }
        i += 1;
    }
    out
}

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
        UftraceCmd::Dump(a) => a.trace.clone(),
        UftraceCmd::Stats(a) => a.trace.clone(),
    };
    let raw = raw_options(&argv, &trace);
    crate::out::finish(run(cli, &raw))
}

fn run(cli: UftraceCli, raw: &[String]) -> Result<Outcome> {
    let mut out = Out::new();
    let mut warn = std::io::stderr();
    match cli.cmd {
        UftraceCmd::Report(a) => {
            if let Some(style) = a.model_style() {
                let demangle = demangle_mode(a.filters.demangle.as_deref())?;
                let data = tracemux_open::open_uftrace(&a.trace, demangle, a.strict)?;
                drop(out);
                let mut src = tracemux_uftrace::source::UftraceSource::new(&data, a.strict);
                return crate::model::print_model(&mut src, style, &a.trace, a.strict);
            }
            let raw = without_model_options(raw);
            let opts = ReplayOptions::from_args(&raw).map_err(anyhow::Error::msg)?;
            tracemux_uftrace::replay::replay_with(
                &a.trace,
                &opts,
                &tracemux_open::UftraceMapLoader,
                &mut out,
                &mut warn,
            )
            .map_err(|e| anyhow::Error::from(e).context(a.trace.display().to_string()))?;
        }
        UftraceCmd::Info(a) => {
            let r = if a.task {
                tracemux_uftrace::info::info_task(&a.trace, &mut out, &mut warn)
            } else {
                tracemux_uftrace::info::info(&a.trace, &mut out, &mut warn)
            };
            r.map_err(|e| anyhow::Error::from(e).context(a.trace.display().to_string()))?;
        }
        UftraceCmd::Dump(a) => {
            let walk = walk_options(&a.walk, raw);
            let mut data = open(&a.trace, &a.walk)?;
            let r = if a.chrome {
                let o = tracemux_uftrace::chrome::ChromeOptions {
                    walk,
                    show_args: !a.no_args,
                    zone: tracemux_core::localtime::Zone::local(),
                    ..Default::default()
                };
                o.write_view(&mut data, &mut out, &mut warn)
            } else if a.flame_graph {
                let o = tracemux_uftrace::flame::FlameOptions {
                    walk,
                    sample_time: None,
                };
                o.write_view(&mut data, &mut out, &mut warn)
            } else if a.graphviz {
                let o = tracemux_uftrace::graph::graphviz::GraphvizOptions {
                    walk,
                    ..Default::default()
                };
                o.write_view(&mut data, &mut out, &mut warn)
            } else {
                let o = tracemux_uftrace::dump::DumpOptions {
                    walk,
                    show_args: !a.no_args,
                };
                tracemux_uftrace::dump::dump(&mut data, &o, &mut out, &mut warn)
            };
            return finish_output(r, out, &a.trace);
        }
        UftraceCmd::Stats(a) => {
            let walk = walk_options(&a.walk, raw);
            let mut data = open(&a.trace, &a.walk)?;
            let r = match &a.graph {
                Some(func) => {
                    let o = tracemux_uftrace::graph::GraphOptions {
                        walk,
                        func: (!func.is_empty()).then(|| func.clone()),
                        fields: a.fields.clone(),
                    };
                    tracemux_uftrace::graph::graph(&mut data, &o, &mut out, &mut warn)
                }
                None => {
                    let o = tracemux_uftrace::report::ReportOptions {
                        walk,
                        sort: a.sort.clone(),
                        avg_total: a.avg_total,
                        avg_self: a.avg_self,
                        fields: a.fields.clone(),
                        task: a.task,
                        threads: a.threads,
                    };
                    tracemux_uftrace::report::report(&mut data, &o, &mut out, &mut warn)
                }
            };
            return finish_output(r, out, &a.trace);
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

/// A usage error (`InvalidInput`) was already printed the way uftrace
/// prints it: exit 1 without a message of ours.
fn finish_output(r: std::io::Result<()>, mut out: Out, trace: &Path) -> Result<Outcome> {
    match r {
        Ok(()) => {
            out.flush()?;
            Ok(Outcome::Ok)
        }
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            out.flush()?;
            std::process::exit(1);
        }
        Err(e) => {
            let _ = out.flush();
            Err(anyhow::Error::from(e).context(trace.display().to_string()))
        }
    }
}

fn open(trace: &Path, w: &WalkArgs) -> Result<tracemux_uftrace::UftraceData> {
    let demangle = demangle_mode(w.common.demangle.as_deref())?;
    Ok(tracemux_open::open_uftrace(trace, demangle, false)?)
}

fn demangle_mode(m: Option<&str>) -> Result<tracemux_uftrace::Demangle> {
    match m {
        Some(m) => tracemux_uftrace::Demangle::parse(m)
            .ok_or_else(|| anyhow!("--demangle: unknown mode '{m}' (full, simple, no)")),
        None => Ok(tracemux_uftrace::Demangle::Simple),
    }
}

/// Open the recording, its data files memory-mapped.
/// uftrace's common options; `-F`/`-N` keep their command-line order.
fn walk_options(w: &WalkArgs, raw: &[String]) -> tracemux_uftrace::report::walk::WalkOptions {
    let f = &w.common;
    let mut filter: Vec<String> = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        let a = raw[i].as_str();
        let (key, inline) = match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k, Some(v.to_string())),
            _ => (a, None),
        };
        let neg = matches!(key, "-N" | "--notrace");
        if neg || matches!(key, "-F" | "--filter") {
            let v = match inline {
                Some(v) => Some(v),
                None => {
                    i += 1;
                    raw.get(i).cloned()
                }
            };
            if let Some(v) = v {
                filter.push(if neg { format!("!{v}") } else { v });
            }
        } else if let Some(v) = a.strip_prefix("-F").or_else(|| a.strip_prefix("-N")) {
            // -FNAME / -NNAME
            if !v.is_empty() && !a.starts_with("--") {
                filter.push(if a.starts_with("-N") {
                    format!("!{v}")
                } else {
                    v.to_string()
                });
            }
        }
        i += 1;
    }
    let mut o = tracemux_uftrace::report::walk::WalkOptions {
        filter: (!filter.is_empty()).then(|| filter.join(";")),
        trigger: (!f.trigger.is_empty()).then(|| f.trigger.join(";")),
        no_libcall: f.no_libcall,
        no_event: f.no_event,
        no_sched: w.no_sched,
        kernel_full: f.kernel_full && !f.kernel_skip_out,
        kernel_only: f.kernel_only,
        ..Default::default()
    };
    if let Some(d) = &f.depth {
        let d: i64 = d.trim().parse().unwrap_or(0);
        if d > 0 && d < 65535 {
            o.depth = d as i32;
        }
    }
    if let Some(t) = &f.time_filter {
        o.time_filter = tracemux_uftrace::argspec::parse_time(t, 3);
    }
    if !f.tid.is_empty() {
        let mut tids = Vec::new();
        for t in &f.tid {
            tids.extend(
                t.split([',', ';', ':'])
                    .filter_map(|x| x.trim().parse::<i32>().ok()),
            );
        }
        o.tids = Some(tids);
    }
    if f.pattern.as_deref() == Some("glob") {
        o.pattern = tracemux_uftrace::PatternType::Glob;
    }
    o
}
