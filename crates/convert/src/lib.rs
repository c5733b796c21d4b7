//! Any trace, through the common event model, into another format: what
//! `tracemux convert` and Python's `tracemux.convert()` run. The source
//! streams into the sink event by event (memory stays flat); the output is
//! written under a temporary name and renamed when complete, so a failed
//! run never leaves an output that looks whole.
//!
//! Nothing here writes to the terminal: progress, damage and notes go to
//! the caller's [`Hooks`].

mod chrome;
mod copy;
mod ctf;
mod live;
#[cfg(feature = "parquet")]
mod parquet;
mod perfetto;
mod pipeline;
mod tracedat;
mod uftrace_chrome;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use tracemux_core::model::{Event, Lost, Progress, Record, RecordSource, TraceMeta};

pub use copy::CopySummary;
pub use live::{run_live, spool_live, spools};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
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
    /// Chrome Trace Event Format JSON (Perfetto UI, chrome://tracing); a
    /// uftrace recording as `uftrace dump --chrome` writes it, unless
    /// events are selected.
    Chrome,
    /// Parquet tables, one per event class, in a directory (DuckDB,
    /// polars, pandas, Spark).
    Parquet,
}

/// `FromStr` of an enum by a table of its values' names; an unknown name
/// is an error that says it is not `$what` and lists the names.
macro_rules! from_names {
    ($ty:ident, $what:literal, [$($v:ident => $name:literal),* $(,)?]) => {
        impl std::str::FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> std::result::Result<Self, String> {
                by_name(s, &[$(($ty::$v, $name)),*], $what)
            }
        }
    };
}

from_names!(To, "an output format", [
    Ctf => "ctf",
    Ctf2 => "ctf2",
    Tracedat => "tracedat",
    Jsonl => "jsonl",
    Perfetto => "perfetto",
    Chrome => "chrome",
    Parquet => "parquet",
]);

/// The value named `s` in `names`, or an error that says `s` is not `what`
/// and lists the names.
fn by_name<T: Copy>(s: &str, names: &[(T, &str)], what: &str) -> std::result::Result<T, String> {
    match names.iter().find(|(_, n)| *n == s) {
        Some((v, _)) => Ok(*v),
        None => {
            let list: Vec<&str> = names.iter().map(|(_, n)| *n).collect();
            Err(format!("{s:?}: not {what} ({})", list.join(", ")))
        }
    }
}

/// How the Parquet tables of several traces are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum DatasetLayout {
    /// `TABLE/trace=NAME/part-N.parquet`: a folder per trace and table.
    #[default]
    Hive,
    /// `TABLE/part-NNNNN.parquet` shared by all traces, with `trace` and
    /// `host` columns, rows sorted by trace then time, files rolled at
    /// `--file-size` (few, large files for Spark, Trino, DuckDB).
    Shared,
}

from_names!(DatasetLayout, "a dataset layout", [Hive => "hive", Shared => "shared"]);

/// Column types of Parquet output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum SchemaKind {
    /// Each field at its own width and signedness (u8 is UInt8, a 32-bit
    /// kernel's `long` Int32).
    Native,
    /// One schema per table whatever the kernel, architecture or format:
    /// every integer Int64 (a u64 keeps its bit pattern), every float
    /// Float64, so that datasets of many machines merge.
    Portable,
}

from_names!(SchemaKind, "a schema", [Native => "native", Portable => "portable"]);

/// Section compression of trace.dat (version 7) output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Compression {
    None,
    Zstd,
    Zlib,
}

from_names!(Compression, "a compression", [None => "none", Zstd => "zstd", Zlib => "zlib"]);

/// What to convert, into what, and how (the options of `tracemux convert`).
#[derive(Debug, Clone)]
pub struct Options {
    /// The trace(s) to convert (several CTF traces are merged by time;
    /// with [`To::Parquet`], several traces are partitions of one dataset).
    pub inputs: Vec<PathBuf>,
    /// A directory for CTF and Parquet, a file for the others.
    pub output: PathBuf,
    pub to: To,
    /// Replace the output if it exists.
    pub force: bool,
    /// Stop at the first damage instead of converting around it.
    pub strict: bool,
    /// Only events at or after this time (ns).
    pub begin: Option<u64>,
    /// Only events at or before this time (ns).
    pub end: Option<u64>,
    /// Only these events (`name` or `system:name`); empty: all.
    pub events: Vec<String>,
    /// trace.dat output: file version (6 or 7).
    pub file_version: u32,
    /// trace.dat output (version 7): section compression.
    pub compression: Compression,
    /// CTF to CTF: every event written anew, not the packets copied.
    pub reencode: bool,
    /// Parquet output: a Hive-partitioned dataset even for one input.
    pub partition: bool,
    /// Parquet output of a dataset (several inputs, or `partition`): its
    /// layout.
    pub layout: DatasetLayout,
    /// Parquet output: column types; `None`: portable in the shared
    /// layout, native otherwise.
    pub schema: Option<SchemaKind>,
    /// Parquet output: a table's file closes at this many bytes and its
    /// rows go on in the next (`None`: the writer's default, 256 MiB).
    pub file_size: Option<u64>,
    /// Parquet output: no long `events` table (only the class tables and
    /// `lost`).
    pub no_events_table: bool,
    /// Perfetto output: every sched event as a full `FtraceEvent`.
    pub full_sched: bool,
    /// Perfetto output: `GenericFtraceEvent`s naming every field.
    pub named_generic: bool,
    /// Perfetto output: zlib-compressed packets.
    pub compress: bool,
    /// Several inputs as one timeline: offsets the user gives (`INPUT=NS`,
    /// ns added to that input's timestamps; see `tracemux_open::timeline`).
    pub clock_offsets: Vec<(String, i64)>,
    /// Threads to use (1: none but the caller's; the output is the same);
    /// `None`: one per core.
    pub threads: Option<usize>,
    /// Events per batch handed from the reading thread to the sink's;
    /// `None`: the default (tests use tiny batches).
    pub batch_events: Option<usize>,
}

impl Options {
    /// The defaults of `tracemux convert`: `inputs` into `output` as `to`.
    pub fn new(inputs: Vec<PathBuf>, output: PathBuf, to: To) -> Options {
        Options {
            inputs,
            output,
            to,
            force: false,
            strict: false,
            begin: None,
            end: None,
            events: Vec::new(),
            file_version: 7,
            compression: Compression::Zstd,
            reencode: false,
            partition: false,
            layout: DatasetLayout::Hive,
            schema: None,
            file_size: None,
            no_events_table: false,
            full_sched: false,
            named_generic: false,
            compress: false,
            clock_offsets: Vec::new(),
            threads: None,
            batch_events: None,
        }
    }
}

/// What the caller hears of a running conversion. Every method has a
/// default that does nothing.
pub trait Hooks {
    /// A conversion through the model starts (once per input of a
    /// partitioned dataset).
    fn started(&self) {}
    /// How far the conversion is, every 65536 events: the events written
    /// so far and, when the source can say, how much of its input was read
    /// (`None` for a live session). An error stops the conversion (and is
    /// what [`run`] returns).
    fn progress(&self, _events: u64, _read: Option<Progress>) -> Result<()> {
        Ok(())
    }
    /// Damage of `input` that was skipped (not with `strict`).
    fn damage(&self, _input: &Path, _e: &tracemux_core::Error) {}
    /// What was forgiven while opening the inputs (CTF metadata read
    /// leniently).
    fn note(&self, _msg: &str) {}
    /// A part of `input` the output leaves out.
    fn left_out(&self, _input: &Path, _msg: &str) {}
    /// A conversion through the model wrote its last event (its output is
    /// still being finished).
    fn finished(&self) {}
}

/// Hooks that hear nothing.
pub struct NoHooks;

impl Hooks for NoHooks {}

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
    /// CTF to CTF with nothing selected: the packets were copied as they
    /// are (the counts above are then not known, and zero).
    pub copied: Option<CopySummary>,
    /// A uftrace recording into Chrome JSON with nothing selected: written
    /// as `uftrace dump --chrome` writes it (the counts above are then not
    /// known, and zero).
    pub uftrace_chrome: bool,
}

/// Convert as `o` says. The output appears only when complete; an error
/// leaves none (and no temporary file).
pub fn run(o: &Options, hooks: &dyn Hooks) -> Result<Summary> {
    // a device or a pipe (`-o /dev/null`, `-o /dev/stdout`) is written
    // where it is: never replaced by a file renamed over it
    let in_place = is_special(&o.output);
    if o.output.exists() && !o.force && !in_place {
        bail!(
            "{}: the output exists (use --force to replace it)",
            o.output.display()
        );
    }
    let tmp = if in_place {
        o.output.clone()
    } else {
        temp_name(&o.output)
    };
    remove(&tmp);
    let mut summary = Summary::default();
    if let Some(copied) = copy_ctf(o, &tmp)? {
        if !in_place {
            into_place(&tmp, &o.output)?;
        }
        summary.copied = Some(copied);
        return Ok(summary);
    }
    let res = if o.to == To::Tracedat {
        tracedat::run(o, &tmp, &mut summary, hooks)
    } else if o.to == To::Chrome && uftrace_chrome::applies(o) {
        uftrace_chrome::run(o, &tmp, &mut summary, hooks)
    } else if o.to == To::Parquet
        && (o.partition
            || o.layout == DatasetLayout::Shared
            || (o.inputs.len() > 1
                && o.clock_offsets.is_empty()
                && !tracemux_open::timeline::mixed_formats(&o.inputs)?))
    {
        partitions(o, &tmp, &mut summary, hooks)
    } else {
        with_source(o, &o.inputs, &o.clock_offsets, hooks, |src| {
            convert(o, src, &tmp, None, &mut summary, hooks)
        })
    };
    if let Err(e) = res {
        remove(&tmp);
        return Err(e);
    }
    if !in_place {
        into_place(&tmp, &o.output)?;
    }
    Ok(summary)
}

/// Whether `p` is a device, a pipe or a socket (not a file or a directory).
fn is_special(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(p).is_ok_and(|m| {
            let t = m.file_type();
            t.is_char_device() || t.is_block_device() || t.is_fifo() || t.is_socket()
        })
    }
    #[cfg(not(unix))]
    {
        let _ = p;
        false
    }
}

/// Open `paths` as one source of the model and hand it to `f`; what was
/// forgiven while opening goes to `hooks`.
fn with_source(
    o: &Options,
    paths: &[PathBuf],
    clock_offsets: &[(String, i64)],
    hooks: &dyn Hooks,
    f: impl FnOnce(&mut dyn RecordSource) -> Result<()>,
) -> Result<()> {
    let note = |m: &str| hooks.note(m);
    let opts = tracemux_open::OpenOptions {
        strict: o.strict,
        on_note: Some(&note),
        clock_offsets,
        // the tables hold addresses as numbers: no kernel symbol table
        no_symbols: o.to == To::Parquet,
    };
    tracemux_open::with_source(paths, &opts, f)
}

/// CTF to CTF with nothing selected: the packets copied as they are (see
/// [`copy::copy_traces`]); `None` when that does not apply.
fn copy_ctf(o: &Options, tmp: &Path) -> Result<Option<CopySummary>> {
    let selecting = o.begin.is_some() || o.end.is_some() || !o.events.is_empty();
    if o.reencode || selecting || !matches!(o.to, To::Ctf | To::Ctf2) {
        return Ok(None);
    }
    if !o
        .inputs
        .iter()
        .all(|p| matches!(tracemux_open::sniff(p), Ok(tracemux_open::Kind::Ctf { .. })))
    {
        return Ok(None);
    }
    match copy::copy_traces(&o.inputs, tmp, o.to == To::Ctf2) {
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
    if is_special(p) {
        return;
    }
    if p.is_dir() {
        let _ = std::fs::remove_dir_all(p);
    } else {
        let _ = std::fs::remove_file(p);
    }
}

/// A trace's place in a dataset of several: its name, and in the shared
/// layout the dataset it is written into.
struct Part {
    name: String,
    #[cfg(feature = "parquet")]
    shared: Option<parquet::Slot>,
}

/// Several traces (or one with `partition`) as one Parquet dataset: each
/// converted on its own into its partition (Hive) or, in turn, into the
/// shared files.
fn partitions(o: &Options, tmp: &Path, summary: &mut Summary, hooks: &dyn Hooks) -> Result<()> {
    #[cfg(feature = "parquet")]
    let shared = match o.layout {
        DatasetLayout::Shared => Some(parquet::shared(o, tmp)?),
        DatasetLayout::Hive => None,
    };
    let mut names = std::collections::HashSet::new();
    for input in &o.inputs {
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
        let one = Options {
            inputs: vec![input.clone()],
            ..o.clone()
        };
        let part = Part {
            name,
            #[cfg(feature = "parquet")]
            shared: shared.clone(),
        };
        with_source(o, &one.inputs, &[], hooks, |src| {
            convert(&one, src, tmp, Some(&part), summary, hooks)
        })?;
    }
    #[cfg(feature = "parquet")]
    if let Some(slot) = &shared {
        parquet::finish_shared(slot)?;
    }
    Ok(())
}

fn make_sink(
    o: &Options,
    meta: &TraceMeta,
    tmp: &Path,
    partition: Option<&Part>,
) -> Result<Box<dyn Sink + Send>> {
    match o.to {
        #[cfg(feature = "parquet")]
        To::Parquet => {
            let inputs: Vec<&Path> = o.inputs.iter().map(|p| p.as_path()).collect();
            match partition {
                Some(Part {
                    name,
                    shared: Some(slot),
                }) => parquet::shared_sink(o, meta, slot, name, &inputs),
                _ => parquet::sink(o, meta, tmp, partition.map(|p| p.name.as_str()), &inputs),
            }
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
                compact_sched: !o.full_sched,
                compress: o.compress,
                describe_generic: !o.named_generic,
            },
        ),
        To::Chrome => chrome::sink(meta, tmp),
        To::Tracedat => bail!("--to tracedat is written by convert::tracedat"),
    }
}

/// Whether `ev` passes `begin`, `end` and `events`.
fn selected(o: &Options, ev: &Event<'_>) -> bool {
    if o.begin.is_some_and(|b| ev.ts < b) || o.end.is_some_and(|e| ev.ts > e) {
        return false;
    }
    if o.events.is_empty() {
        return true;
    }
    let Some(c) = ev.class else { return false };
    o.events.iter().any(|want| match want.split_once(':') {
        Some((sys, name)) => sys == c.system && name == c.name,
        None => *want == c.name,
    })
}

fn convert(
    o: &Options,
    src: &mut dyn RecordSource,
    tmp: &Path,
    partition: Option<&Part>,
    summary: &mut Summary,
    hooks: &dyn Hooks,
) -> Result<()> {
    let meta = src.meta().clone();
    let threads = tracemux_core::threads::resolve(o.threads);
    if o.to == To::Jsonl && threads > 1 {
        let file = create(tmp)?;
        hooks.started();
        let swap = src.swaps_tapes();
        return pipeline::with_line_workers(
            &meta,
            swap,
            o.batch_events,
            threads,
            tracemux_render::jsonl::JsonWriter::new,
            file,
            |feed| read(o, src, &meta, feed, summary, hooks),
        );
    }
    let mut sink = make_sink(o, &meta, tmp, partition)?;
    hooks.started();
    if pipeline::wanted(&meta, o.to, threads) {
        let swap = src.swaps_tapes();
        return pipeline::with_sink_thread(&meta, swap, o.batch_events, sink, |feed| {
            read(o, src, &meta, feed, summary, hooks)
        });
    }
    read(o, src, &meta, &mut sink, summary, hooks)?;
    sink.finish(&meta)
}

/// Where [`read`] hands the events: the sink, or the feed of the sink's
/// thread.
pub(crate) trait Target {
    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()>;
    fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> Result<()>;
    fn damage(&mut self, what: &str);
    /// After an event was handed over and before the next is read.
    fn settle(&mut self, _src: &mut dyn RecordSource) {}
}

impl Target for Box<dyn Sink + Send> {
    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()> {
        Sink::event(&mut **self, meta, ev)
    }
    fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> Result<()> {
        Sink::lost(&mut **self, meta, l)
    }
    fn damage(&mut self, what: &str) {
        Sink::damage(&mut **self, what)
    }
}

/// Events between two calls of [`Hooks::progress`].
pub(crate) const PROGRESS_EVERY: u64 = 65536;

/// Every record of `src` that `o` selects into `to`.
fn read(
    o: &Options,
    src: &mut dyn RecordSource,
    meta: &TraceMeta,
    to: &mut dyn Target,
    summary: &mut Summary,
    hooks: &dyn Hooks,
) -> Result<()> {
    let input = o.inputs[0].display().to_string();
    loop {
        let rec = src.next_record().with_context(|| input.clone())?;
        let Some(rec) = rec else { break };
        if feed(o, rec, meta, to, summary, hooks, &o.inputs[0])? {
            to.settle(src);
            if summary.events % PROGRESS_EVERY == 0 {
                hooks.progress(summary.events, src.progress())?;
            }
        }
    }
    hooks.finished();
    Ok(())
}

/// One record into `to`, counted in `summary`: an event `o` selects, a
/// loss, or damage (with `--strict` an error naming `input`). Whether an
/// event was handed over.
pub(crate) fn feed(
    o: &Options,
    rec: Record<'_>,
    meta: &TraceMeta,
    to: &mut dyn Target,
    summary: &mut Summary,
    hooks: &dyn Hooks,
    input: &Path,
) -> Result<bool> {
    match rec {
        Record::Event(ev) => {
            if !selected(o, &ev) {
                summary.skipped += 1;
                return Ok(false);
            }
            to.event(meta, &ev)?;
            summary.events += 1;
            Ok(true)
        }
        Record::Lost(l) => {
            summary.lost_markers += 1;
            summary.lost_events += l.count.unwrap_or(0);
            to.lost(meta, &l)?;
            Ok(false)
        }
        Record::Damage(e) => {
            if o.strict {
                bail!("{}: {e}", input.display());
            }
            summary.damage += 1;
            to.damage(&e.to_string());
            hooks.damage(input, &e);
            Ok(false)
        }
    }
}

/// JSON lines into a file.
struct Jsonl {
    file: std::io::BufWriter<std::fs::File>,
    buf: Vec<u8>,
    json: tracemux_render::jsonl::JsonWriter,
}

impl Jsonl {
    fn create(p: &Path) -> Result<Self> {
        Ok(Jsonl {
            file: create(p)?,
            buf: Vec::with_capacity(1 << 16),
            json: Default::default(),
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

impl pipeline::Lines for tracemux_render::jsonl::JsonWriter {
    fn event(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, ev: &Event<'_>) {
        tracemux_render::jsonl::JsonWriter::event(self, out, meta, ev)
    }
    fn lost(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, l: &Lost) {
        tracemux_render::jsonl::write_lost(out, meta, l)
    }
}

impl Sink for Jsonl {
    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()> {
        self.json.event(&mut self.buf, meta, ev);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_unknown_ones_are_listed() {
        assert_eq!("ctf2".parse::<To>(), Ok(To::Ctf2));
        assert_eq!("zlib".parse::<Compression>(), Ok(Compression::Zlib));
        assert_eq!(
            "pcap".parse::<To>(),
            Err("\"pcap\": not an output format (ctf, ctf2, tracedat, jsonl, perfetto, chrome, parquet)".into())
        );
        assert_eq!(
            "lz4".parse::<Compression>(),
            Err("\"lz4\": not a compression (none, zstd, zlib)".into())
        );
    }
}
