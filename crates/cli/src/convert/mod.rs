//! `tracemux convert`: any trace, through the common event model, into
//! another format. The source streams into the sink event by event (memory
//! stays flat); the output is written under a temporary name and renamed
//! when complete, so a failed run never leaves an output that looks whole.

mod chrome;
mod ctf;
#[cfg(feature = "parquet")]
mod parquet;
mod perfetto;
mod tracedat;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use tracemux_core::model::{Event, Lost, Record, RecordSource, TraceMeta};

use crate::out::Outcome;

/// Output formats of `convert`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum To {
    /// A CTF 1.8 trace directory (TSDL metadata), as babeltrace2 reads it.
    Ctf,
    /// A CTF 2 trace directory (JSON-sequence metadata).
    Ctf2,
    /// A trace-cmd trace.dat (from a trace.dat source).
    Tracedat,
    /// JSON lines (the schema of `report --json`).
    Jsonl,
    /// Perfetto's protobuf trace format (open in ui.perfetto.dev).
    Perfetto,
    /// Chrome Trace Event Format JSON (Perfetto UI, chrome://tracing).
    Chrome,
    /// Parquet tables, one per event class, in a directory (DuckDB,
    /// polars, pandas, Spark).
    Parquet,
}

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The trace(s) to convert (several CTF traces are merged by time;
    /// with `--to parquet`, several traces are partitions of one dataset).
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
    /// datasets of many traces can be put together (several inputs always
    /// are).
    #[arg(long)]
    pub partition: bool,
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Compression {
    None,
    Zstd,
    Zlib,
}

/// A writer of one output format: a sink of the model.
pub trait Sink {
    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()>;
    fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> Result<()>;
    /// Damage the reader skipped (already reported to the user); sinks that
    /// describe their output may record it.
    fn damage(&mut self, _what: &str) {}
    /// Flush everything to the (temporary) output.
    fn finish(self: Box<Self>, meta: &TraceMeta) -> Result<()>;
}

/// What a conversion did.
#[derive(Debug, Default)]
pub struct Summary {
    pub events: u64,
    pub skipped: u64,
    pub lost_markers: u64,
    pub lost_events: u64,
    pub damage: u64,
}

pub fn run(a: &ConvertArgs) -> Result<Outcome> {
    if a.output.exists() && !a.force {
        bail!(
            "{}: the output exists (use --force to replace it)",
            a.output.display()
        );
    }
    let tmp = temp_name(&a.output);
    remove(&tmp);
    let started = Instant::now();
    let mut summary = Summary::default();
    if let Some(copied) = copy_ctf(a, &tmp)? {
        into_place(&tmp, &a.output)?;
        if !a.quiet {
            eprintln!(
                "tracemux: copied {} data stream files ({} bytes) of {} CTF trace(s) to {} with {} metadata in {:.2} s (--reencode writes every event anew)",
                copied.files,
                copied.bytes,
                copied.traces,
                a.output.display(),
                if a.to == To::Ctf2 { "CTF 2" } else { "their" },
                started.elapsed().as_secs_f64()
            );
        }
        return Ok(Outcome::Ok);
    }
    let res = if a.to == To::Tracedat {
        tracedat::run(a, &tmp, &mut summary)
    } else if a.to == To::Parquet && (a.partition || a.inputs.len() > 1) {
        partitions(a, &tmp, &mut summary)
    } else {
        crate::model::with_source(&a.inputs, a.strict, |src| {
            convert(a, src, &tmp, None, &mut summary)
        })
    };
    let outcome = match res {
        Ok(o) => o,
        Err(e) => {
            remove(&tmp);
            return Err(e);
        }
    };
    into_place(&tmp, &a.output)?;
    if !a.quiet {
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
    Ok(outcome)
}

/// CTF to CTF with nothing selected: the packets copied as they are (see
/// [`crate::ctf::copy_traces`]); `None` when that does not apply.
fn copy_ctf(a: &ConvertArgs, tmp: &Path) -> Result<Option<crate::ctf::CopySummary>> {
    let selecting = a.begin.is_some() || a.end.is_some() || !a.events.is_empty();
    if a.reencode || selecting || !matches!(a.to, To::Ctf | To::Ctf2) {
        return Ok(None);
    }
    if !a
        .inputs
        .iter()
        .all(|p| matches!(tracemux_open::sniff(p), Ok(tracemux_open::Kind::Ctf { .. })))
    {
        return Ok(None);
    }
    match crate::ctf::copy_traces(&a.inputs, tmp, a.to == To::Ctf2) {
        Ok(Some(s)) => Ok(Some(s)),
        Ok(None) => {
            remove(tmp);
            Ok(None)
        }
        Err(e) => {
            remove(tmp);
            Err(e)
        }
    }
}

/// `OUT` -> `.OUT.tracemux-tmp` beside it.
fn temp_name(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    out.with_file_name(format!(".{name}.tracemux-tmp"))
}

/// The finished `tmp` renamed to `output`, replacing it.
fn into_place(tmp: &Path, output: &Path) -> Result<()> {
    if output.exists() {
        remove(output);
    }
    std::fs::rename(tmp, output)
        .with_context(|| format!("{}: cannot rename into place", output.display()))
}

/// `path` created, with a large write buffer.
fn create(path: &Path) -> Result<std::io::BufWriter<std::fs::File>> {
    let f = std::fs::File::create(path)
        .with_context(|| format!("{}: cannot create", path.display()))?;
    Ok(std::io::BufWriter::with_capacity(1 << 20, f))
}

/// The buffer of `w` written out, and its file synced.
fn close(w: std::io::BufWriter<std::fs::File>) -> Result<()> {
    w.into_inner().map_err(|e| e.into_error())?.sync_all().ok();
    Ok(())
}

fn remove(p: &Path) {
    if p.is_dir() {
        let _ = std::fs::remove_dir_all(p);
    } else {
        let _ = std::fs::remove_file(p);
    }
}

/// Several traces (or one with `--partition`) as one Hive-partitioned
/// Parquet dataset: each converted on its own into its partition.
fn partitions(a: &ConvertArgs, tmp: &Path, summary: &mut Summary) -> Result<Outcome> {
    let mut outcome = Outcome::Ok;
    let mut names = std::collections::HashSet::new();
    for input in &a.inputs {
        #[cfg(feature = "parquet")]
        let base = parquet::trace_name(input);
        #[cfg(not(feature = "parquet"))]
        let base = String::new();
        let mut name = base.clone();
        let mut k = 1;
        while !names.insert(name.clone()) {
            k += 1;
            name = format!("{base}-{k}");
        }
        let one = ConvertArgs {
            inputs: vec![input.clone()],
            output: a.output.clone(),
            events: a.events.clone(),
            ..*a
        };
        let o = crate::model::with_source(&one.inputs, a.strict, |src| {
            convert(&one, src, tmp, Some(&name), summary)
        })?;
        if matches!(o, Outcome::Damaged) {
            outcome = o;
        }
    }
    Ok(outcome)
}

fn make_sink(
    a: &ConvertArgs,
    meta: &TraceMeta,
    tmp: &Path,
    partition: Option<&str>,
) -> Result<Box<dyn Sink>> {
    match a.to {
        #[cfg(feature = "parquet")]
        To::Parquet => {
            let inputs: Vec<&Path> = a.inputs.iter().map(|p| p.as_path()).collect();
            parquet::sink(meta, tmp, partition, &inputs)
        }
        #[cfg(not(feature = "parquet"))]
        To::Parquet => {
            let _ = partition;
            bail!("this tracemux was built without Parquet (cargo build --features parquet)")
        }
        To::Jsonl => Ok(Box::new(Jsonl::create(tmp)?)),
        To::Ctf => ctf::sink(meta, tmp, false),
        To::Ctf2 => ctf::sink(meta, tmp, true),
        To::Perfetto => perfetto::sink(
            meta,
            tmp,
            tracemux_export::perfetto::PerfettoOptions {
                compact_sched: !a.full_sched,
                compress: a.compress,
                describe_generic: !a.named_generic,
            },
        ),
        To::Chrome => chrome::sink(meta, tmp),
        To::Tracedat => bail!("--to tracedat is written by convert::tracedat"),
    }
}

/// Whether `ev` passes `--begin/--end/--events`.
fn selected(a: &ConvertArgs, ev: &Event<'_>) -> bool {
    if a.begin.is_some_and(|b| ev.ts < b) || a.end.is_some_and(|e| ev.ts > e) {
        return false;
    }
    if a.events.is_empty() {
        return true;
    }
    let Some(c) = ev.class else { return false };
    a.events.iter().any(|want| match want.split_once(':') {
        Some((sys, name)) => sys == c.system && name == c.name,
        None => *want == c.name,
    })
}

fn convert(
    a: &ConvertArgs,
    src: &mut dyn RecordSource,
    tmp: &Path,
    partition: Option<&str>,
    summary: &mut Summary,
) -> Result<Outcome> {
    let meta = src.meta().clone();
    let mut sink = make_sink(a, &meta, tmp, partition)?;
    let bar = progress(a);
    let mut outcome = Outcome::Ok;
    let input = a.inputs[0].display().to_string();
    loop {
        let rec = src.next_record().map_err(|e| anyhow!("{input}: {e}"))?;
        let Some(rec) = rec else { break };
        match rec {
            Record::Event(ev) => {
                if !selected(a, &ev) {
                    summary.skipped += 1;
                    continue;
                }
                sink.event(&meta, &ev)?;
                summary.events += 1;
                if summary.events % 65536 == 0 {
                    if let Some(b) = &bar {
                        b.set_position(summary.events);
                    }
                }
            }
            Record::Lost(l) => {
                summary.lost_markers += 1;
                summary.lost_events += l.count.unwrap_or(0);
                sink.lost(&meta, &l)?;
            }
            Record::Damage(e) => {
                if a.strict {
                    bail!("{input}: {e}");
                }
                summary.damage += 1;
                outcome = Outcome::Damaged;
                sink.damage(&e.to_string());
                if let Some(b) = &bar {
                    b.suspend(|| crate::out::warn(&a.inputs[0], &e));
                } else {
                    crate::out::warn(&a.inputs[0], &e);
                }
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    sink.finish(&meta)?;
    Ok(outcome)
}

/// A spinner with the event count, on stderr when it is a terminal.
fn progress(a: &ConvertArgs) -> Option<indicatif::ProgressBar> {
    if a.quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let b = indicatif::ProgressBar::new_spinner();
    b.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {pos} events ({per_sec}) {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    b.enable_steady_tick(std::time::Duration::from_millis(200));
    Some(b)
}

/// JSON lines into a file.
struct Jsonl {
    file: std::io::BufWriter<std::fs::File>,
    buf: Vec<u8>,
}

impl Jsonl {
    fn create(p: &Path) -> Result<Self> {
        Ok(Jsonl {
            file: create(p)?,
            buf: Vec::with_capacity(1 << 16),
        })
    }
    fn drain(&mut self) -> Result<()> {
        use std::io::Write;
        if self.buf.len() >= 1 << 16 {
            self.file.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

impl Sink for Jsonl {
    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()> {
        tracemux_render::jsonl::write_event(&mut self.buf, meta, ev);
        self.drain()
    }
    fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> Result<()> {
        tracemux_render::jsonl::write_lost(&mut self.buf, meta, l);
        self.drain()
    }
    fn finish(mut self: Box<Self>, _meta: &TraceMeta) -> Result<()> {
        use std::io::Write;
        self.file.write_all(&self.buf)?;
        self.file.flush()?;
        Ok(())
    }
}
