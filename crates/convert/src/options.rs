//! What a conversion is asked to do ([`Options`], the output formats and
//! their variants), what it tells its caller while it runs ([`Hooks`]) and
//! what it did ([`Summary`]).

use std::path::{Path, PathBuf};

use crate::Result;
use tracemux_core::model::Progress;

use crate::copy::CopySummary;

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
