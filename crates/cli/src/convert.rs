//! `tracemux convert`: the command line of `tracemux-convert`, with a
//! progress bar, damage on stderr and a summary line.

use std::cell::RefCell;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use tracemux_convert::{Compression, DatasetLayout, Hooks, Options, SchemaKind, To};

use crate::out::Outcome;

const CONVERT_EXAMPLES: &str = "\
EXAMPLES:
  tracemux convert trace.dat --to perfetto -o trace.pftrace
  tracemux convert trace.dat --to parquet -o tables/
                                          a table per event class, meta.json
  tracemux convert host*/trace.dat --to parquet -o ds/
                                          one Hive dataset: TABLE/trace=NAME/part-0.parquet
  tracemux convert traces/*/trace.dat lttng/* --to parquet --layout shared -o fleet/
                                          a fleet's traces in shared files of 256 MiB with
                                          trace and host columns, one portable schema per table
  tracemux convert a.dat b.dat --to parquet --layout shared --schema native --file-size 64M -o ds/";

#[derive(Args, Debug, Clone)]
#[command(after_help = CONVERT_EXAMPLES)]
pub struct ConvertArgs {
    /// The trace(s) to convert: several of any formats are one timeline
    /// merged by time (each event says its input); with `--to parquet`,
    /// several traces of one format are partitions of one dataset.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Where to write: a directory for CTF and Parquet, a file for the
    /// others.
    #[arg(short, long)]
    pub output: PathBuf,
    /// The output format.
    #[arg(long, value_enum)]
    pub to: To,
    /// Replace the output if it exists.
    #[arg(long)]
    pub force: bool,
    /// Stop at the first damage instead of converting around it.
    #[arg(long)]
    pub strict: bool,
    /// Only events at or after this time (ns, as `report --json` shows `ts`).
    #[arg(long, value_name = "NS")]
    pub begin: Option<u64>,
    /// Only events at or before this time (ns).
    #[arg(long, value_name = "NS")]
    pub end: Option<u64>,
    /// Only these events (comma-separated `name` or `system:name`).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub events: Vec<String>,
    /// trace.dat output: file version.
    #[arg(long, value_name = "6|7", default_value_t = 7)]
    pub file_version: u32,
    /// trace.dat output (version 7): section compression.
    #[arg(long, value_enum, default_value_t = Compression::Zstd)]
    pub compression: Compression,
    /// No progress bar and no summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// CTF to CTF: write every event anew through the model, even when
    /// nothing is selected (by default such a conversion copies the
    /// packets as they are and writes the metadata).
    #[arg(long)]
    pub reencode: bool,
    /// Parquet output: write a Hive-partitioned dataset
    /// (`TABLE/trace=NAME/part-0.parquet`) even for one input, so that
    /// datasets of many traces can be put together (several inputs of one
    /// format always are; inputs of several formats are one timeline
    /// unless this is given).
    #[arg(long)]
    pub partition: bool,
    /// Parquet output of a dataset: `hive` writes a folder per table and
    /// trace; `shared` writes each table's rows of all inputs into shared
    /// files (`TABLE/part-NNNNN.parquet`) with `trace` and `host` columns,
    /// sorted by trace then time, rolled at `--file-size`: what Spark,
    /// Trino and DuckDB read best from a fleet of machines. A dataset is
    /// complete when its `_SUCCESS` marker is there.
    #[arg(long, value_enum, value_name = "LAYOUT", default_value_t = DatasetLayout::Hive)]
    pub layout: DatasetLayout,
    /// Parquet output: column types. `portable` (the default of
    /// `--layout shared`) gives each table one schema whatever the
    /// kernel, architecture or format of the trace: integers Int64 (a u64
    /// keeps its bit pattern), floats Float64. `native` (otherwise the
    /// default) keeps each field's width.
    #[arg(long, value_enum, value_name = "SCHEMA")]
    pub schema: Option<SchemaKind>,
    /// Parquet output: a table's file closes once it holds this many
    /// bytes and its rows go on in the next (`K`, `M`, `G` suffixes of
    /// 1024; default 256M).
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub file_size: Option<u64>,
    /// Parquet output: leave out the long `events` table (every event with
    /// its payload as JSON text); the class tables and `lost` are written.
    /// About half the time and the size.
    #[arg(long)]
    pub no_events_table: bool,
    /// Perfetto output: every `sched_switch` and `sched_waking` as a full
    /// `FtraceEvent` (by default those whose fields a reader infers are
    /// written in the bundles' compact columns, as Perfetto's own recorder
    /// does).
    #[arg(long)]
    pub full_sched: bool,
    /// Perfetto output: events Perfetto has no message for as
    /// `GenericFtraceEvent`s naming every field (readable by Perfetto
    /// before v50; by default they are messages of per-event descriptors
    /// in the bundles, several times smaller).
    #[arg(long)]
    pub named_generic: bool,
    /// Perfetto output: zlib-compressed packets (`compressed_packets`, as
    /// Perfetto's tracing service writes them; the Perfetto UI and trace
    /// processor read them).
    #[arg(long)]
    pub compress: bool,
    /// Several inputs as one timeline: put INPUT (its path as given here)
    /// on the first input's clock by adding NS nanoseconds (may be
    /// negative) to its timestamps, instead of what the clocks say or what
    /// is estimated; `tracemux info INPUT...` prints each input's shift and
    /// how it was found. Repeatable.
    #[arg(long = "clock-offset", value_name = "INPUT=NS", value_parser = crate::report_args::clock_offset)]
    pub clock_offsets: Vec<(String, i64)>,
}

impl ConvertArgs {
    fn options(&self) -> Options {
        Options {
            inputs: self.inputs.clone(),
            output: self.output.clone(),
            to: self.to,
            force: self.force,
            strict: self.strict,
            begin: self.begin,
            end: self.end,
            events: self.events.clone(),
            file_version: self.file_version,
            compression: self.compression,
            reencode: self.reencode,
            partition: self.partition,
            layout: self.layout,
            schema: self.schema,
            file_size: self.file_size,
            no_events_table: self.no_events_table,
            full_sched: self.full_sched,
            named_generic: self.named_generic,
            compress: self.compress,
            clock_offsets: self.clock_offsets.clone(),
            threads: crate::knobs::env_threads(),
            batch_events: crate::knobs::env_batch(),
        }
    }
}

/// A size in bytes: digits with an optional `K`, `M` or `G` (powers of
/// 1024).
fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let shift = match unit.to_ascii_uppercase().trim_end_matches(['B', 'I']) {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("{s:?}: not a size (digits and K, M or G)")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?}: not a size (digits and K, M or G)"))?;
    n.checked_shl(shift)
        .filter(|v| *v >> shift == n && *v > 0)
        .ok_or_else(|| format!("{s:?}: not a size this tool can use"))
}

pub fn run(a: &ConvertArgs) -> Result<Outcome> {
    let live = a
        .inputs
        .iter()
        .filter_map(|p| p.to_str())
        .find(|s| tracemux_ctf::live::is_live_url(s));
    if live.is_some() && a.inputs.len() > 1 {
        anyhow::bail!(
            "{}: a live session is converted alone (one input)",
            live.unwrap_or_default()
        );
    }
    let started = Instant::now();
    let hooks = Terminal::new(a.quiet);
    let res = match live {
        // streamed into the output as the session arrives
        Some(url) => crate::live::convert(url, &a.options(), &hooks),
        None => tracemux_convert::run(&a.options(), &hooks).map_err(Into::into),
    };
    hooks.finished();
    let summary = res?;
    if a.quiet {
    } else if let Some(copied) = &summary.copied {
        eprintln!(
            "tracemux: copied {} data stream files ({} bytes) of {} CTF trace(s) to {} with {} metadata in {:.2} s (--reencode writes every event anew)",
            copied.files,
            copied.bytes,
            copied.traces,
            a.output.display(),
            if a.to == To::Ctf2 { "CTF 2" } else { "their" },
            started.elapsed().as_secs_f64()
        );
    } else if summary.uftrace_chrome {
        eprintln!(
            "tracemux: wrote {} as `uftrace dump --chrome` writes it in {:.2} s (--begin, --end or --events: through the event model)",
            a.output.display(),
            started.elapsed().as_secs_f64()
        );
    } else {
        eprintln!(
            "tracemux: wrote {} events to {} ({} lost-event markers, {} events known lost, {} damaged parts skipped) in {:.2} s",
            summary.events,
            a.output.display(),
            summary.lost_markers,
            summary.lost_events,
            summary.damage,
            started.elapsed().as_secs_f64()
        );
    }
    // what CTF 2 forbids and was read on (a note) is damage too
    Ok(Outcome::damaged_if(summary.damage > 0 || hooks.noted.get()))
}

/// The hooks of the command line: on a terminal, a bar with the share of
/// the input read and the time left (a spinner when the source cannot say
/// how far it is), the events and their rate; damage and notes as stderr
/// lines.
struct Terminal {
    quiet: bool,
    bar: RefCell<Option<indicatif::ProgressBar>>,
    /// When the bar started.
    since: std::cell::Cell<Option<Instant>>,
    /// Whether the bar shows a share of the input (otherwise a spinner).
    sized: std::cell::Cell<bool>,
    /// Whether a note was heard.
    noted: std::cell::Cell<bool>,
}

impl Terminal {
    fn new(quiet: bool) -> Self {
        Terminal {
            quiet,
            bar: RefCell::new(None),
            since: std::cell::Cell::new(None),
            sized: std::cell::Cell::new(false),
            noted: std::cell::Cell::new(false),
        }
    }

    /// `f` run with the bar (if any) out of the way.
    fn say(&self, f: impl FnOnce()) {
        match &*self.bar.borrow() {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }
}

fn bar_style(template: &str) -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template(template)
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner())
        .progress_chars("=> ")
}

/// `n` in a few digits: `950`, `12.3 k`, `4.56 M`, `1.20 G`.
fn rounded(n: f64) -> String {
    let (v, unit) = match n {
        n if n >= 1e9 => (n / 1e9, " G"),
        n if n >= 1e6 => (n / 1e6, " M"),
        n if n >= 1e3 => (n / 1e3, " k"),
        n => return format!("{n:.0}"),
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$}{unit}")
}

/// What the bar says of the events: `21.4 M events, 5.99 M/s`.
fn events_message(events: u64, seconds: f64) -> String {
    let mut m = format!("{} events", rounded(events as f64));
    if seconds > 0.5 {
        m += &format!(", {}/s", rounded(events as f64 / seconds));
    }
    m
}

impl Hooks for Terminal {
    fn started(&self) {
        if self.quiet || !std::io::stderr().is_terminal() {
            return;
        }
        let b = indicatif::ProgressBar::new_spinner();
        b.set_style(bar_style("{spinner} {msg} {elapsed}"));
        b.set_message("0 events");
        b.enable_steady_tick(std::time::Duration::from_millis(200));
        *self.bar.borrow_mut() = Some(b);
        self.since.set(Some(Instant::now()));
        self.sized.set(false);
    }
    fn progress(
        &self,
        events: u64,
        read: Option<tracemux_core::model::Progress>,
    ) -> tracemux_convert::Result<()> {
        let Some(b) = &*self.bar.borrow() else {
            return Ok(());
        };
        let seconds = self.since.get().map_or(0.0, |t| t.elapsed().as_secs_f64());
        if let Some(p) = read.filter(|p| p.total > 0) {
            if !self.sized.replace(true) {
                b.set_style(bar_style(
                    "[{bar:28}] {percent:>3}% of {total_bytes} · {msg} · {elapsed} elapsed, ~{eta} left",
                ));
            }
            b.set_length(p.total);
            b.set_position(p.done.min(p.total));
        }
        b.set_message(events_message(events, seconds));
        Ok(())
    }
    fn damage(&self, input: &Path, e: &tracemux_core::Error) {
        self.say(|| crate::out::warn(input, e));
    }
    fn note(&self, msg: &str) {
        self.noted.set(true);
        self.say(|| eprintln!("tracemux: warning: {msg}"));
    }
    fn left_out(&self, input: &Path, msg: &str) {
        self.say(|| eprintln!("tracemux: {}: {msg}", input.display()));
    }
    fn finished(&self) {
        if let Some(b) = self.bar.borrow_mut().take() {
            b.finish_and_clear();
        }
    }
}
