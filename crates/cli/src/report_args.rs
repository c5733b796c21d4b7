//! The options of `tracemux report` for a trace.dat (trace-cmd's), as clap
//! reads them. [`crate::select`] replays their order; [`crate::report`]
//! runs them.

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Trace file(s) to read.
    #[arg(required_unless_present = "input")]
    pub traces: Vec<PathBuf>,
    /// Input file (trace-cmd's -i).
    #[arg(short = 'i', long = "input")]
    pub input: Vec<PathBuf>,
    /// Raw view: every field as name=value (trace-cmd report -R).
    #[arg(short = 'R', long = "raw")]
    pub raw: bool,
    /// Timestamps in nanoseconds (trace-cmd report -t).
    #[arg(short = 't')]
    pub nsecs: bool,
    /// Latency columns: irqs-off, need-resched, hardirq/softirq, preempt
    /// depth (trace-cmd report -l).
    #[arg(short = 'l')]
    pub latency: bool,
    /// One JSON object per event and per lost-events marker.
    #[arg(long)]
    pub json: bool,
    /// Print in another tool's style: trace-cmd (the default for
    /// trace.dat), babeltrace (babeltrace2's text lines), json (as --json).
    #[arg(long, value_enum, value_name = "STYLE")]
    pub style: Option<Style>,
    /// The kernel buffer statistics stored in the file.
    #[arg(long)]
    pub stat: bool,
    /// The CPUs that have data.
    #[arg(long)]
    pub cpus: bool,
    /// With the CPU list: the time of each CPU's first event.
    #[arg(long)]
    pub first_event: bool,
    /// With the CPU list: the time of each CPU's last event.
    #[arg(long)]
    pub last_event: bool,
    /// The uname of the traced system and the tracer version.
    #[arg(long)]
    pub uname: bool,
    /// The version of the tool that recorded the trace (trace-cmd report --version).
    #[arg(long)]
    pub tracer_version: bool,
    /// Ignore the DATE option.
    #[arg(long)]
    pub nodate: bool,
    /// Do not correct timestamps (no offsets, no TSC conversion).
    #[arg(long)]
    pub raw_ts: bool,
    /// Stop at the first damaged byte instead of reporting it and going on.
    #[arg(long)]
    pub strict: bool,
    // --- event selection (see select.rs) ---
    /// Only events of these CPUs, e.g. `0,2-3` (trace-cmd report --cpu;
    /// with several files or instances, the CPUs of all buffers are
    /// numbered one after the other).
    #[arg(long = "cpu", value_name = "LIST")]
    pub cpu: Vec<String>,
    /// Event filter 'EVENTS[:FILTER]' (trace-cmd report -F), repeatable:
    /// e.g. 'sched_switch: prev_pid == 0', 'sched/.*: COMM =~ "^ba"'.
    #[arg(short = 'F', value_name = "FILTER")]
    pub filter: Vec<String>,
    /// The -F filters after this one hide the events they match.
    #[arg(short = 'v')]
    pub invert: bool,
    /// Hide events recorded in hard interrupt context.
    #[arg(short = 'I')]
    pub no_irqs: bool,
    /// Hide events recorded in soft interrupt context.
    #[arg(short = 'S')]
    pub no_softirqs: bool,
    /// Only events of these tasks (common_pid, pid or next_pid), repeatable.
    #[arg(long = "pid", value_name = "PID[,PID...]")]
    pub pid: Vec<String>,
    /// Only events of the tasks with this name, repeatable.
    #[arg(long = "comm", value_name = "COMM")]
    pub comm: Vec<String>,
    /// Add NS to the timestamps of the -i file before it (not the first).
    #[arg(long = "ts-offset", value_name = "NS", allow_hyphen_values = true)]
    pub ts_offset: Vec<String>,
    /// The trace clock runs at HZ: timestamps are converted with it.
    #[arg(long = "ts2secs", value_name = "HZ")]
    pub ts2secs: Vec<String>,
    /// Show the time since the previous event after each timestamp.
    #[arg(long = "ts-diff")]
    pub ts_diff: bool,
    /// List the events stored in the file (system:name).
    #[arg(short = 'E')]
    pub event_list: bool,
    /// Print the stored event formats (trace-cmd report --events).
    #[arg(long = "events")]
    pub events: bool,
    /// Print the stored printk formats.
    #[arg(short = 'P')]
    pub printk: bool,
    /// Print the stored kernel symbols.
    #[arg(short = 'f')]
    pub funcs: bool,
    /// Exit with 22 (EINVAL) if a stored event format cannot be read.
    #[arg(long = "check-events")]
    pub check_events: bool,
}

/// Output styles of `report` for a trace.dat.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    TraceCmd,
    Babeltrace,
    Json,
}

/// `--clock-offset INPUT=NS`: the input (its path as given) and the ns
/// added to its timestamps.
pub fn clock_offset(s: &str) -> Result<(String, i64), String> {
    let (k, v) = s
        .rsplit_once('=')
        .ok_or_else(|| format!("{s}: expected INPUT=NS"))?;
    let ns = v
        .trim()
        .parse::<i64>()
        .map_err(|e| format!("{s}: NS must be an integer of nanoseconds ({e})"))?;
    if k.is_empty() {
        return Err(format!("{s}: expected INPUT=NS"));
    }
    Ok((k.to_string(), ns))
}
