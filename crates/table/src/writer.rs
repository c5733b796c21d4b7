//! One trace as a Parquet dataset, or many traces as one.
//!
//! Files (the default layout, [`Layout::Flat`]), with the columns of
//! [`crate::rows`]:
//! - `SYSTEM__EVENT.parquet`: one wide table per event class that occurs.
//! - `events.parquet`: every event, long (the payload as JSON text).
//! - `lost.parquet`: lost-event markers.
//! - `meta.json`: what the trace says about itself and what was written.
//! - `_SUCCESS`: written last; the dataset is complete when it is there.
//!
//! A table's file is closed once it holds [`WriteOptions::file_size`] bytes
//! and its rows go on in the next (`TABLE.1.parquet`, `TABLE.2.parquet`...;
//! `meta.json` lists them), so that no file's metadata grows with the trace.
//!
//! [`Layout::Hive`] writes `TABLE/trace=NAME/part-0.parquet` instead (and
//! `part-1`... as files roll), and `_meta/NAME.json`, so that many traces
//! converted into one directory read as one table per event class with a
//! `trace` column (Hive partitioning).
//!
//! [`Layout::Shared`] writes the rows of every trace of a [`Dataset`] into
//! shared files, `TABLE/part-NNNNN.parquet`, with `trace` and `host` as
//! their first columns: files of a useful size whatever the number of
//! traces. A table's files have one schema as long as its traces agree;
//! a trace whose table lacks columns gets nulls there, one with more
//! columns starts a new file with the union of them, and a column whose
//! type differs from the one the dataset had first is renamed
//! `NAME__TYPE` (e.g. `prev_state__utf8`) and said in `meta.json`'s
//! `renamed_columns`. With [`WriteOptions::portable`] (the rule for
//! datasets) every integer is Int64, so kernels, architectures and formats
//! agree on the widths of the same field.
//!
//! Memory stays flat whatever the trace's length and the number of its
//! tables: the rows being built (Arrow builders, on the thread that reads
//! the trace) go to the encoder thread as a batch when a table has
//! [`WriteOptions::batch_rows`] rows, or when all hold more than
//! [`WriteOptions::memory_budget`] (the largest). The encoder appends
//! each batch to its table's row group in progress, where it is kept
//! encoded and compressed; a row group is written out when it has
//! [`WriteOptions::row_group_rows`] rows, or when the row groups in
//! progress of all tables hold more than [`WriteOptions::encoder_budget`]
//! (the largest). Few, large row groups; and files rolled at a size keep
//! what a file's footer holds (row group and page index metadata) bounded.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::SortingColumn;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use serde_json::{json, Map, Value as Json};
use tracemux_core::model::{Event, EventClass, Lost, TraceMeta};
use tracemux_core::tasks::TaskTracker;

use crate::rows::{ClassIndex, Rows, TableKind};
use crate::{Error, Result};

pub use crate::rows::table_name;

/// Where the files go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// `DIR/TABLE.parquet` and `DIR/meta.json`.
    Flat,
    /// `DIR/TABLE/trace=NAME/part-0.parquet` and `DIR/_meta/NAME.json`.
    Hive { trace: String },
    /// `DIR/TABLE/part-NNNNN.parquet`, shared by the traces of a
    /// [`Dataset`], with a `trace` column; `DIR/_meta/NAME.json`.
    Shared { trace: String },
}

impl Layout {
    fn trace(&self) -> Option<&str> {
        match self {
            Layout::Flat => None,
            Layout::Hive { trace } | Layout::Shared { trace } => Some(trace),
        }
    }
}

#[derive(Debug, Clone)]
pub struct WriteOptions {
    pub layout: Layout,
    /// zstd level of the column chunks. 1 by default: each column writer
    /// of a row group in progress has a compressor of its own, whose
    /// tables at level 3 take about five times the memory of level 1's
    /// (for files about 3% larger).
    pub zstd_level: i32,
    /// Rows of a batch, at most: a table's rows go to the encoder when it
    /// has built this many (or, before, when the rows of all tables hold
    /// [`WriteOptions::memory_budget`] and it holds the most).
    pub batch_rows: usize,
    /// Bytes the rows being built may hold in all tables before the
    /// largest table's go to the encoder.
    pub memory_budget: usize,
    /// Rows of a row group, at most.
    pub row_group_rows: usize,
    /// Bytes the encoded row groups in progress may hold in all tables
    /// before the largest is written out.
    pub encoder_budget: usize,
    /// A table's file is closed, and its rows go on in a new one, once it
    /// holds this many bytes.
    pub file_size: u64,
    /// A table's file is closed, too, once it holds this many row groups:
    /// a file keeps the metadata of its row groups until it closes.
    pub file_row_groups: usize,
    /// The portable schema (every integer Int64, every float Float64;
    /// see [`crate::columns::Columns::portable`]) instead of each field's
    /// own width.
    pub portable: bool,
    /// Write the long `events` table.
    pub events_table: bool,
    /// What to record as the source in `meta.json`.
    pub source: Vec<String>,
    /// Encode on a thread of its own (otherwise on the caller's, between
    /// its rows; the same rows either way, though where row groups end may
    /// differ).
    pub encoder_thread: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            layout: Layout::Flat,
            zstd_level: 1,
            batch_rows: 1 << 16,
            memory_budget: 8 << 20,
            row_group_rows: 1 << 20,
            encoder_budget: 8 << 20,
            file_size: 256 << 20,
            file_row_groups: 64,
            portable: false,
            events_table: true,
            source: Vec::new(),
            encoder_thread: true,
        }
    }
}

/// One table of the trace being written: its rows being built (the
/// builders of its columns, on the thread that reads the trace), and
/// what `meta.json` says of it. Its files are written by the [`Encoder`]
/// thread.
struct Table {
    name: Arc<str>,
    rows: Rows,
    /// The schema its batches have at the encoder: the rows' own, with
    /// `trace` and `host` first in the shared layout, and, where the
    /// dataset's table has more columns, those (null).
    schema: SchemaRef,
    /// For each column of `schema`: the column of the rows' batch it is
    /// (`None`: a null column), or, for the constant columns, its value.
    fill: Vec<Fill>,
    /// The rows' own schema (what `meta.json` lists).
    own: SchemaRef,
    /// The encoder was told of it.
    announced: bool,
    /// The encoder keeps its row group open (see [`Job::open`]).
    open: Arc<AtomicBool>,
    /// Rows written so far.
    total: u64,
    /// About how many bytes a row takes in the builders.
    row_bytes: usize,
    system: Option<String>,
    event: Option<String>,
    /// The last `ts` written and whether they came in order.
    last_ts: i64,
    sorted: bool,
}

/// Where a column of a batch for the encoder comes from.
#[derive(Clone)]
enum Fill {
    Column(usize),
    Null,
    Text(Option<Arc<str>>),
}

/// About how many bytes a value of `t` takes in an Arrow builder.
fn value_bytes(t: &DataType) -> usize {
    match t {
        DataType::Boolean | DataType::Int8 | DataType::UInt8 => 1,
        DataType::Int16 | DataType::UInt16 => 2,
        DataType::Int32 | DataType::UInt32 | DataType::Float32 => 4,
        DataType::Int64 | DataType::UInt64 | DataType::Float64 => 8,
        DataType::Dictionary(..) => 4,
        DataType::Struct(f) => f.iter().map(|f| value_bytes(f.data_type())).sum::<usize>() + 1,
        DataType::List(f) => 4 + 4 * value_bytes(f.data_type()),
        _ => 24,
    }
}

fn dict_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// The short name of a type in a renamed column (`NAME__TYPE`).
fn type_tag(t: &DataType) -> String {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Dictionary(..) => "utf8".into(),
        DataType::Binary | DataType::LargeBinary => "binary".into(),
        DataType::Struct(_) => "struct".into(),
        DataType::List(_) => "list".into(),
        other => other.to_string().to_lowercase(),
    }
}

impl Table {
    fn new(name: &str, rows: Rows, ds: &mut Dataset, trace: Option<(&str, Option<&str>)>) -> Table {
        let mut rows = rows;
        let mut renamed = Vec::new();
        // the shared layout: a column's type is the one the dataset's
        // table had first (another kind is renamed)
        if ds.shared {
            if let Some(prev) = ds.schemas.get(name) {
                for f in rows.schema().clone().fields() {
                    let Ok(p) = prev.field_with_name(f.name()) else {
                        continue;
                    };
                    if p.data_type() == f.data_type() {
                        continue;
                    }
                    let base = format!("{}__{}", f.name(), type_tag(f.data_type()));
                    let mut to = base.clone();
                    let mut k = 2;
                    while rows.schema().field_with_name(&to).is_ok()
                        || prev
                            .field_with_name(&to)
                            .is_ok_and(|p| p.data_type() != f.data_type())
                    {
                        to = format!("{base}_{k}");
                        k += 1;
                    }
                    rows.rename(f.name(), &to);
                    renamed.push((f.name().clone(), to));
                }
            }
        }
        let own = rows.schema().clone();
        let mut fields: Vec<Arc<Field>> = Vec::new();
        let mut fill = Vec::new();
        if let Some((t, host)) = trace.filter(|_| ds.shared) {
            fields.push(Arc::new(Field::new("trace", dict_type(), false)));
            fill.push(Fill::Text(Some(t.into())));
            fields.push(Arc::new(Field::new("host", dict_type(), true)));
            fill.push(Fill::Text(host.map(Into::into)));
        }
        for (i, f) in own.fields().iter().enumerate() {
            fields.push(f.clone());
            fill.push(Fill::Column(i));
        }
        if ds.shared {
            if let Some(prev) = ds.schemas.get(name) {
                // the dataset's columns this trace lacks: nulls, in the
                // dataset's order where this trace agrees with it
                let mine: Vec<Arc<Field>> = fields.clone();
                let (mut f2, mut fill2) = (Vec::new(), Vec::new());
                for p in prev.fields() {
                    match mine.iter().position(|m| m.name() == p.name()) {
                        Some(i) => {
                            f2.push(mine[i].clone());
                            fill2.push(fill[i].clone());
                        }
                        None => {
                            f2.push(Arc::new(p.as_ref().clone().with_nullable(true)));
                            fill2.push(Fill::Null);
                        }
                    }
                }
                for (i, m) in mine.iter().enumerate() {
                    if prev.field_with_name(m.name()).is_err() {
                        f2.push(m.clone());
                        fill2.push(fill[i].clone());
                    }
                }
                fields = f2;
                fill = fill2;
            }
        }
        let schema = Arc::new(Schema::new(fields));
        if ds.shared {
            ds.schemas.insert(name.to_string(), schema.clone());
            for (from, to) in renamed {
                ds.renamed
                    .push(json!({"table": name, "column": from, "as": to}));
            }
        }
        let row_bytes = own
            .fields()
            .iter()
            .map(|f| value_bytes(f.data_type()))
            .sum::<usize>()
            .max(1);
        Table {
            name: name.into(),
            rows,
            schema,
            fill,
            own,
            announced: false,
            open: Arc::new(AtomicBool::new(false)),
            total: 0,
            row_bytes,
            system: None,
            event: None,
            last_ts: i64::MIN,
            sorted: true,
        }
    }

    /// Whether its rows go to the encoder now: at `batch_rows`, or, when
    /// the encoder gathers its row groups, at `small` bytes.
    #[inline]
    fn full(&self, batch_rows: usize, small: usize) -> bool {
        let n = self.rows.rows();
        n >= batch_rows
            || (n & 1023 == 0 && self.open.load(Ordering::Relaxed) && self.held() >= small)
    }

    /// About how many bytes the rows being built hold.
    fn held(&self) -> usize {
        self.rows.rows() * self.row_bytes
    }

    fn check_order(&mut self, ts: u64) {
        let ts = ts as i64;
        if ts < self.last_ts {
            self.sorted = false;
        }
        self.last_ts = ts;
        self.total += 1;
    }

    /// The rows built so far, as a batch for the encoder (and, the first
    /// time, word of the table: every table gets a file, even without
    /// rows).
    fn job(&mut self) -> Result<Option<Job>> {
        let first = !self.announced;
        self.announced = true;
        let n = self.rows.rows();
        if n == 0 && !first {
            return Ok(None);
        }
        let batch = match n {
            0 => None,
            _ => {
                let b = self.rows.batch(&self.name)?;
                Some(self.shape(b)?)
            }
        };
        Ok(Some(Job {
            table: self.name.clone(),
            schema: self.schema.clone(),
            batch,
            open: self.open.clone(),
        }))
    }

    /// `b` (of the rows' own schema) in the encoder's schema.
    fn shape(&self, b: RecordBatch) -> Result<RecordBatch> {
        if self.fill.len() == b.num_columns()
            && self
                .fill
                .iter()
                .enumerate()
                .all(|(i, f)| matches!(f, Fill::Column(c) if *c == i))
        {
            return Ok(b);
        }
        let n = b.num_rows();
        let cols: Vec<ArrayRef> = self
            .fill
            .iter()
            .zip(self.schema.fields())
            .map(|(f, field)| match f {
                Fill::Column(i) => b.column(*i).clone(),
                Fill::Null => arrow_array::new_null_array(field.data_type(), n),
                Fill::Text(v) => {
                    let keys = arrow_array::Int32Array::from(match v {
                        Some(_) => vec![Some(0); n],
                        None => vec![None; n],
                    });
                    let values = arrow_array::StringArray::from(match v {
                        Some(s) => vec![s.to_string()],
                        None => vec![],
                    });
                    Arc::new(
                        arrow_array::DictionaryArray::<arrow_array::types::Int32Type>::try_new(
                            keys,
                            Arc::new(values),
                        )
                        .expect("keys within the values"),
                    )
                }
            })
            .collect();
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(n));
        RecordBatch::try_new_with_options(self.schema.clone(), cols, &opts).map_err(|e| {
            Error::Arrow {
                table: self.name.to_string(),
                source: e,
            }
        })
    }
}

/// Rows of a table for the encoder, in the schema its file has (or is to
/// have); without rows, word that the table exists.
struct Job {
    table: Arc<str>,
    schema: SchemaRef,
    batch: Option<RecordBatch>,
    /// Set by the encoder when it keeps the table's row group open across
    /// batches: the reader then sends it small batches.
    open: Arc<AtomicBool>,
}

/// How the encoder names the files of a table.
#[derive(Debug, Clone)]
enum Naming {
    Flat,
    Hive(String),
    Shared,
}

impl Naming {
    fn of(layout: &Layout) -> Naming {
        match layout {
            Layout::Flat => Naming::Flat,
            Layout::Hive { trace } => Naming::Hive(trace.clone()),
            Layout::Shared { .. } => Naming::Shared,
        }
    }

    /// The path of part `k` of `table` under `dir`.
    fn path(&self, dir: &Path, table: &str, k: usize) -> PathBuf {
        match self {
            Naming::Flat if k == 0 => dir.join(format!("{table}.parquet")),
            Naming::Flat => dir.join(format!("{table}.{k}.parquet")),
            Naming::Hive(trace) => dir
                .join(table)
                .join(format!("trace={trace}"))
                .join(format!("part-{k}.parquet")),
            Naming::Shared => dir.join(table).join(format!("part-{k:05}.parquet")),
        }
    }
}

/// A file the encoder wrote: its path under the dataset's directory, rows
/// and bytes.
#[derive(Debug, Clone)]
pub struct FileWritten {
    pub path: String,
    pub rows: u64,
    pub bytes: u64,
}

/// The files of each table, by its name.
type TableFiles = Vec<(Arc<str>, Vec<FileWritten>)>;

/// The Parquet writers of every table, on a thread of their own: encoding
/// and compressing a table's rows runs beside the reading of the next
/// events. With one thread allowed (`TRACEMUX_THREADS=1`: a Spark task
/// given one core, say), they run inline, on the caller's thread.
struct Encoder {
    tx: Option<SyncSender<Job>>,
    thread: Option<JoinHandle<Result<TableFiles>>>,
    /// The inline encoder (no thread); `None` after an error or `finish`.
    inline: Option<Box<EncoderState>>,
}

impl Encoder {
    fn start(dir: &Path, opts: &WriteOptions) -> Result<Encoder> {
        // (an invalid zstd level is refused here, not at the first table)
        properties(opts, &arrow_schema::Schema::empty())?;
        let props = opts.clone();
        let naming = Naming::of(&opts.layout);
        if !opts.encoder_thread {
            return Ok(Encoder {
                tx: None,
                thread: None,
                inline: Some(Box::new(EncoderState::new(dir, naming, props))),
            });
        }
        let dir = dir.to_path_buf();
        let (tx, rx) = sync_channel::<Job>(1);
        let thread = std::thread::Builder::new()
            .name("parquet-encoder".into())
            .spawn(move || encode(rx, &dir, naming, props))
            .map_err(|e| io(Path::new("parquet encoder thread"), e))?;
        Ok(Encoder {
            tx: Some(tx),
            thread: Some(thread),
            inline: None,
        })
    }

    fn send(&mut self, job: Option<Job>) -> Result<()> {
        let Some(job) = job else {
            return Ok(());
        };
        if let Some(e) = self.inline.as_mut() {
            let res = e.take(job);
            if res.is_err() {
                self.inline = None;
            }
            return res;
        }
        if self.tx.as_ref().is_some_and(|tx| tx.send(job).is_ok()) {
            return Ok(());
        }
        // the thread stopped: on an error, which `finish` returns
        self.finish().map(|_| ())
    }

    /// Close every file; the files of each table, or the first error of
    /// the encoder.
    fn finish(&mut self) -> Result<TableFiles> {
        if let Some(e) = self.inline.take() {
            return e.end();
        }
        self.tx = None;
        match self.thread.take().map(|t| t.join()) {
            None => Err(Error::Encoder("the Parquet encoder stopped earlier".into())),
            Some(Ok(res)) => res,
            Some(Err(_)) => Err(Error::Encoder("the Parquet encoder thread panicked".into())),
        }
    }
}

impl Drop for Encoder {
    /// A writer dropped without `finish` (an error, Ctrl-C) waits for the
    /// thread, so that nothing writes into the output after the caller
    /// has removed it.
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A table at the encoder: its file being written, if any, and those
/// written.
struct Out {
    /// The number of its next file.
    part: usize,
    file: Option<Open>,
    /// Bytes its row group in progress holds.
    held: usize,
    /// The files it closed: their numbers, rows and bytes (paths are made
    /// from the numbers at the end: nothing per file but these 24 bytes is
    /// kept while a long trace writes thousands of files).
    files: Vec<Closed>,
    /// Its row group stays open across batches (a table that fills them).
    open: bool,
    /// Its leaf columns (column writers of a row group).
    columns: usize,
    /// Rows it had.
    sent: u64,
}

/// Leaf columns the open row groups may have together.
const MAX_OPEN_COLUMNS: usize = 40;
/// About what a column writer of a row group holds besides its pages (its
/// encoders, statistics, compressor and decompressor).
const COLUMN_BYTES: usize = 128 << 10;

/// The leaf columns of `fields`.
fn leaves(fields: &arrow_schema::Fields) -> usize {
    fn of(t: &DataType) -> usize {
        match t {
            DataType::Struct(f) => f.iter().map(|f| of(f.data_type())).sum(),
            DataType::List(f) => of(f.data_type()),
            _ => 1,
        }
    }
    fields.iter().map(|f| of(f.data_type())).sum()
}

/// A file closed: its number among its table's files, rows and bytes.
struct Closed {
    part: usize,
    rows: u64,
    bytes: u64,
}

struct Open {
    path: PathBuf,
    /// Its number among its table's files.
    part: usize,
    schema: SchemaRef,
    writer: ArrowWriter<BufWriter<File>>,
    rows: u64,
}

impl Open {
    /// Write the footer and close the file.
    fn close(self) -> Result<Closed> {
        let bytes = self.writer.bytes_written() as u64;
        let f = self.writer.into_inner().map_err(|e| pq(&self.path, e))?;
        let f = f.into_inner().map_err(|e| io(&self.path, e.into_error()))?;
        let bytes = f.metadata().map(|m| m.len()).unwrap_or(bytes);
        f.sync_all().ok();
        release_free_heap();
        Ok(Closed {
            part: self.part,
            rows: self.rows,
            bytes,
        })
    }
}

/// Hand the heap's free pages back to the system after a file closed,
/// where glibc's malloc is the allocator (the Python module; the CLI uses
/// jemalloc, for which this is a no-op call into glibc's idle heap).
/// glibc keeps freed memory inside its heaps; what a closed file's column
/// writers held lies between blocks still in use, so without this the
/// resident size creeps up with the number of files written (+4 MB over
/// a 3.8 GB trace's 4,300 files). `malloc_trim` returns those pages.
fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of glibc's heaps; it
    // takes the arenas' locks itself.
    #[allow(unsafe_code)]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The encoder's state, on its thread or inline: append each batch to
/// its table's row group in progress; write row groups out at
/// `row_group_rows` rows (the writer's own limit) and the largest when all
/// hold more than `encoder_budget`; roll a table's file at `file_size`;
/// at the end, close every file.
struct EncoderState {
    outs: Vec<(Arc<str>, Out)>,
    index: HashMap<Arc<str>, usize>,
    held: usize,
    open_columns: usize,
    dir: PathBuf,
    naming: Naming,
    opts: WriteOptions,
}

impl EncoderState {
    fn new(dir: &Path, naming: Naming, opts: WriteOptions) -> EncoderState {
        EncoderState {
            outs: Vec::new(),
            index: HashMap::new(),
            held: 0,
            open_columns: 0,
            dir: dir.to_path_buf(),
            naming,
            opts,
        }
    }

    /// One job: its batch into its table's row group in progress.
    fn take(&mut self, job: Job) -> Result<()> {
        let i = *self.index.entry(job.table.clone()).or_insert_with(|| {
            self.outs.push((
                job.table.clone(),
                Out {
                    part: 0,
                    file: None,
                    held: 0,
                    files: Vec::new(),
                    open: false,
                    sent: 0,
                    columns: leaves(job.schema.fields()),
                },
            ));
            self.outs.len() - 1
        });
        let EncoderState {
            outs,
            held,
            open_columns,
            dir,
            naming,
            opts,
            ..
        } = self;
        let (max_open, budget) = (MAX_OPEN_COLUMNS, opts.encoder_budget);
        let (name, out) = &mut outs[i];
        // a table of another schema (another trace of a shared dataset)
        // starts a file of its own
        if out.file.as_ref().is_some_and(|f| f.schema != job.schema) {
            *held -= out.held;
            out.held = 0;
            if let Some(f) = out.file.take() {
                out.files.push(f.close()?);
            }
            if out.open {
                *open_columns -= out.columns;
                out.open = false;
                job.open.store(false, Ordering::Relaxed);
            }
            out.columns = leaves(job.schema.fields());
        }
        if out.file.is_none() && (job.batch.is_some() || out.part == 0) {
            let path = naming.path(dir, name, out.part);
            out.part += 1;
            if let Some(d) = path.parent() {
                std::fs::create_dir_all(d).map_err(|e| io(d, e))?;
            }
            let f = File::create(&path).map_err(|e| io(&path, e))?;
            let props = properties(opts, &job.schema)?;
            let writer = ArrowWriter::try_new(
                BufWriter::with_capacity(8 << 10, f),
                job.schema.clone(),
                Some(props),
            )
            .map_err(|e| pq(&path, e))?;
            out.file = Some(Open {
                path,
                part: out.part - 1,
                schema: job.schema.clone(),
                writer,
                rows: 0,
            });
        }
        let Some(b) = job.batch else {
            return Ok(());
        };
        let Some(f) = out.file.as_mut() else {
            return Ok(());
        };
        f.writer.write(&b).map_err(|e| pq(&f.path, e))?;
        f.rows += b.num_rows() as u64;
        out.sent += b.num_rows() as u64;
        let busy = out.sent >= opts.batch_rows as u64;
        drop(b);
        // a table that fills its batches keeps its row group open, as
        // long as the open ones have few columns together (each column's
        // encoder and compressor hold memory of their own); the others'
        // batches are row groups
        if !out.open && busy && *open_columns + out.columns <= max_open {
            out.open = true;
            *open_columns += out.columns;
            job.open.store(true, Ordering::Relaxed);
        }
        let now = match out.open {
            true => f.writer.memory_size() + out.columns * COLUMN_BYTES,
            false => {
                f.writer.flush().map_err(|e| pq(&f.path, e))?;
                0
            }
        };
        *held = *held - out.held + now;
        out.held = now;
        roll(out, opts, held)?;
        // over the budget: write out the largest row groups in progress
        while *held > budget {
            let Some((_, big)) = outs
                .iter_mut()
                .filter(|(_, o)| o.held > 0)
                .max_by_key(|(_, o)| o.held)
            else {
                *held = 0;
                break;
            };
            if let Some(f) = big.file.as_mut() {
                f.writer.flush().map_err(|e| pq(&f.path, e))?;
            }
            *held -= big.held;
            big.held = 0;
            roll(big, opts, held)?;
        }
        // the open files' row-group metadata (kept until a file closes):
        // beyond MAX_HELD_CHUNKS column chunks, close the file that keeps
        // the most (of a table whose row group is not kept open)
        let mut chunks: usize = outs.iter().map(|(_, o)| o.held_chunks()).sum();
        while chunks > MAX_HELD_CHUNKS {
            let Some((_, big)) = outs
                .iter_mut()
                .filter(|(_, o)| !o.open && o.held_chunks() > 0)
                .max_by_key(|(_, o)| o.held_chunks())
            else {
                break;
            };
            chunks -= big.held_chunks();
            *held -= big.held;
            big.held = 0;
            if let Some(f) = big.file.take() {
                big.files.push(f.close()?);
            }
        }
        Ok(())
    }

    /// Close every file; the files of each table.
    fn end(self) -> Result<TableFiles> {
        let EncoderState { outs, naming, .. } = self;
        let mut files = Vec::new();
        for (name, mut out) in outs {
            if let Some(f) = out.file.take() {
                out.files.push(f.close()?);
            }
            let written = out
                .files
                .iter()
                .map(|c| FileWritten {
                    path: naming
                        .path(Path::new(""), &name, c.part)
                        .display()
                        .to_string(),
                    rows: c.rows,
                    bytes: c.bytes,
                })
                .collect();
            files.push((name, written));
        }
        Ok(files)
    }
}

/// The encoder thread: every job of `rx`, then the files.
fn encode(rx: Receiver<Job>, dir: &Path, naming: Naming, opts: WriteOptions) -> Result<TableFiles> {
    let mut e = EncoderState::new(dir, naming, opts);
    for job in rx {
        e.take(job)?;
    }
    e.end()
}

/// Column chunks whose metadata the open files may keep together (a
/// file keeps that of each row group it wrote until it closes, about
/// 0.5 kB each): beyond, the file holding the most is closed and its
/// table goes on in the next, so that this memory does not grow with
/// the trace.
const MAX_HELD_CHUNKS: usize = 4096;

impl Out {
    /// The column chunks whose metadata its open file keeps.
    fn held_chunks(&self) -> usize {
        self.file
            .as_ref()
            .map_or(0, |f| f.writer.flushed_row_groups().len() * self.columns)
    }
}

/// Close `out`'s file when it holds `file_size` bytes (written out, not
/// counting its row group in progress) or `file_row_groups` row groups.
fn roll(out: &mut Out, opts: &WriteOptions, held: &mut usize) -> Result<()> {
    if out.file.as_ref().is_some_and(|f| {
        f.writer.bytes_written() as u64 >= opts.file_size
            || f.writer.flushed_row_groups().len() >= opts.file_row_groups.max(1)
    }) {
        *held -= out.held;
        out.held = 0;
        if let Some(f) = out.file.take() {
            out.files.push(f.close()?);
        }
    }
    Ok(())
}

fn io(p: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: p.display().to_string(),
        source: e,
    }
}

fn pq(p: &Path, e: parquet::errors::ParquetError) -> Error {
    Error::Parquet {
        path: p.display().to_string(),
        source: e,
    }
}

/// The paths of the text columns of `fields` (nested ones too), under
/// `prefix`.
fn text_columns(fields: &arrow_schema::Fields, prefix: &[String], out: &mut Vec<ColumnPath>) {
    for f in fields {
        let mut path = prefix.to_vec();
        path.push(f.name().clone());
        match f.data_type() {
            DataType::Utf8 | DataType::Dictionary(..) => out.push(ColumnPath::new(path)),
            DataType::Struct(kids) => text_columns(kids, &path, out),
            DataType::List(item) => {
                path.push("list".into());
                text_columns(&vec![item.clone()].into(), &path, out)
            }
            _ => {}
        }
    }
}

/// How a table of `schema` is written: dictionaries for its text
/// columns only (a dictionary encoder per column of every open table is
/// what a wide trace's memory would go to; zstd compresses repeated
/// numbers well without one), the JSON payloads of `events` excepted.
fn properties(opts: &WriteOptions, schema: &arrow_schema::Schema) -> Result<WriterProperties> {
    let level = ZstdLevel::try_new(opts.zstd_level).map_err(|e| pq(Path::new("zstd level"), e))?;
    let ts = ColumnPath::from("ts");
    let mut text = Vec::new();
    text_columns(schema.fields(), &[], &mut text);
    let mut b = WriterProperties::builder().set_dictionary_enabled(false);
    for c in text {
        if c.string() != "fields" {
            b = b.set_column_dictionary_enabled(c, true);
        }
    }
    Ok(
        b.set_created_by(format!("tracemux {}", env!("CARGO_PKG_VERSION")))
            .set_compression(Compression::ZSTD(level))
            .set_max_row_group_row_count(Some(opts.row_group_rows.max(1)))
            // the values of a page are held until it is cut, for every column
            .set_data_page_size_limit(128 << 10)
            .set_dictionary_page_size_limit(128 << 10)
            // statistics per column chunk (min/max per row group); per page
            // (the column index) only for `ts`, where time ranges skip pages:
            // a file keeps the page indexes of all its row groups in memory
            // until it closes
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .set_column_statistics_enabled(ts.clone(), EnabledStatistics::Page)
            .set_column_encoding(ts, Encoding::DELTA_BINARY_PACKED)
            // events come in time order (the model's contract; the traces
            // of a shared dataset in the order of their names); `meta.json`
            // says if a table's did not
            .set_sorting_columns(Some(
                ["trace", "ts"]
                    .iter()
                    .filter_map(|c| schema.index_of(c).ok())
                    .map(|i| SortingColumn {
                        column_idx: i as i32,
                        descending: false,
                        nulls_first: false,
                    })
                    .collect(),
            ))
            .build(),
    )
}

/// Where the tables of traces are written: the encoder thread, its
/// files, and (in the shared layout) the schema each table has so far.
/// A [`TablesWriter`] writes one trace into it; in the shared layout,
/// several in turn ([`TablesWriter::in_dataset`], [`TablesWriter::finish_in`]).
pub struct Dataset {
    dir: PathBuf,
    encoder: Encoder,
    shared: bool,
    schemas: HashMap<String, SchemaRef>,
    /// Columns renamed for a type of another kind (see [`Layout::Shared`]).
    renamed: Vec<Json>,
}

impl Dataset {
    /// A dataset in `dir` (created if needed), written as `opts` say
    /// (its layout: the first trace's).
    pub fn new(dir: &Path, opts: &WriteOptions) -> Result<Dataset> {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        Ok(Dataset {
            dir: dir.to_path_buf(),
            encoder: Encoder::start(dir, opts)?,
            shared: matches!(opts.layout, Layout::Shared { .. }),
            schemas: HashMap::new(),
            renamed: Vec::new(),
        })
    }

    /// Close every file, and mark the dataset complete (`_SUCCESS`, as
    /// Spark and Hadoop do). Returns the files of each table.
    pub fn finish(mut self) -> Result<Vec<(String, Vec<FileWritten>)>> {
        let files = self.encoder.finish()?;
        let files: Vec<(String, Vec<FileWritten>)> =
            files.into_iter().map(|(t, f)| (t.to_string(), f)).collect();
        if self.shared {
            let list = json!({
                "tables": files.iter().map(|(t, f)| (t.clone(), json!(f.iter().map(|f| json!({
                    "file": f.path, "rows": f.rows, "bytes": f.bytes,
                })).collect::<Vec<_>>()))).collect::<Map<String, Json>>(),
                "renamed_columns": self.renamed,
            });
            let path = self.dir.join("_meta").join("_files.json");
            if let Some(d) = path.parent() {
                std::fs::create_dir_all(d).map_err(|e| io(d, e))?;
            }
            let mut text = serde_json::to_string_pretty(&list).unwrap_or_default();
            text.push('\n');
            std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        }
        let ok = self.dir.join("_SUCCESS");
        std::fs::write(&ok, b"").map_err(|e| io(&ok, e))?;
        Ok(files)
    }
}

/// Writes the tables of one trace.
pub struct TablesWriter {
    opts: WriteOptions,
    classes: ClassIndex,
    /// Class (its index in the [`ClassIndex`]) to its table in `tables`.
    by_class: Vec<Option<usize>>,
    tables: Vec<Table>,
    long: Option<Table>,
    lost: Table,
    ds: Dataset,
    /// The trace's name and host (the constant columns of the shared
    /// layout).
    trace: Option<(String, Option<String>)>,
    /// About how many bytes the rows being built hold, in all tables.
    held: usize,
    tasks: TaskTracker,
    events: u64,
    unknown_class: u64,
    lost_markers: u64,
    lost_events: u64,
    damage: Vec<String>,
    damage_count: u64,
    /// Values of another shape than their column, and values without a
    /// column, over the tables written.
    mismatches: u64,
    unknown: u64,
    /// What `ds.renamed` held before this trace.
    renamed_before: usize,
}

impl TablesWriter {
    /// Write into `dir` (created if needed), a dataset of its own.
    pub fn new(dir: &Path, meta: &TraceMeta, opts: WriteOptions) -> Result<TablesWriter> {
        let ds = Dataset::new(dir, &opts)?;
        Self::in_dataset(ds, meta, opts)
    }

    /// Write into dataset `ds` (the shared layout: after the traces it
    /// has; [`TablesWriter::finish_in`] gives it back).
    pub fn in_dataset(
        mut ds: Dataset,
        meta: &TraceMeta,
        opts: WriteOptions,
    ) -> Result<TablesWriter> {
        let trace = opts
            .layout
            .trace()
            .map(|t| (t.to_string(), meta.hostname().map(|h| h.to_string())));
        let constant = trace.as_ref().map(|(t, h)| (t.as_str(), h.as_deref()));
        let portable = opts.portable;
        let long = opts.events_table.then(|| {
            Table::new(
                "events",
                Rows::new_as(meta, TableKind::Events, portable),
                &mut ds,
                constant,
            )
        });
        let lost = Table::new(
            "lost",
            Rows::new_as(meta, TableKind::Lost, portable),
            &mut ds,
            constant,
        );
        Ok(TablesWriter {
            renamed_before: ds.renamed.len(),
            ds,
            opts,
            held: 0,
            classes: ClassIndex::new(meta),
            by_class: Vec::new(),
            tables: Vec::new(),
            long,
            lost,
            trace,
            tasks: TaskTracker::new(),
            events: 0,
            unknown_class: 0,
            lost_markers: 0,
            lost_events: 0,
            damage: Vec::new(),
            damage_count: 0,
            mismatches: 0,
            unknown: 0,
        })
    }

    /// The table of `class`, created at its first event.
    fn table_of(&mut self, meta: &TraceMeta, class: &EventClass) -> usize {
        let k = self.classes.of(meta, class);
        if let Some(Some(t)) = self.by_class.get(k) {
            return *t;
        }
        let name = self.classes.name(k).to_string();
        let constant = self.trace.as_ref().map(|(t, h)| (t.as_str(), h.as_deref()));
        let rows = Rows::class_as(meta, class, self.opts.portable);
        let mut t = Table::new(&name, rows, &mut self.ds, constant);
        t.system = Some(class.system.clone());
        t.event = Some(class.name.clone());
        self.tables.push(t);
        if self.by_class.len() <= k {
            self.by_class.resize(k + 1, None);
        }
        self.by_class[k] = Some(self.tables.len() - 1);
        self.tables.len() - 1
    }

    pub fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()> {
        self.events += 1;
        let table = ev.class.map(|c| self.table_of(meta, c));
        // what the event says about tasks holds from the event on (a
        // `sched_switch` names the task it leaves, the row's own)
        if table.is_some() {
            self.tasks.learn(meta, ev);
        }
        let batch_rows = self.opts.batch_rows.max(1);
        let small = self.opts.memory_budget / 16;
        if let Some(i) = table {
            let t = &mut self.tables[i];
            t.check_order(ev.ts);
            t.rows.event(meta, &self.tasks, ev);
            self.held += t.row_bytes;
            if t.full(batch_rows, small) {
                self.held = self.held.saturating_sub(t.held());
                let job = t.job()?;
                self.ds.encoder.send(job)?;
            }
        } else {
            self.unknown_class += 1;
        }
        if let Some(t) = &mut self.long {
            t.check_order(ev.ts);
            t.rows.event(meta, &self.tasks, ev);
            self.held += t.row_bytes;
            if t.full(batch_rows, small) {
                self.held = self.held.saturating_sub(t.held());
                let job = t.job()?;
                self.ds.encoder.send(job)?;
            }
        }
        self.keep_budget()
    }

    pub fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> Result<()> {
        self.lost_markers += 1;
        self.lost_events += l.count.unwrap_or(0);
        let t = &mut self.lost;
        t.check_order(l.ts);
        t.rows.lost(meta, l);
        self.held += t.row_bytes;
        self.keep_budget()
    }

    /// While the rows being built hold more than the budget, hand the
    /// table holding the most to the encoder.
    fn keep_budget(&mut self) -> Result<()> {
        while self.held > self.opts.memory_budget {
            let t = self
                .tables
                .iter_mut()
                .chain(self.long.as_mut())
                .chain(std::iter::once(&mut self.lost))
                .max_by_key(|t| t.held());
            let Some(t) = t.filter(|t| t.held() > 0) else {
                self.held = 0;
                break;
            };
            self.held = self.held.saturating_sub(t.held());
            let job = t.job()?;
            self.ds.encoder.send(job)?;
        }
        Ok(())
    }

    /// Damage the reader skipped (recorded in `meta.json`).
    pub fn damage(&mut self, what: &str) {
        self.damage_count += 1;
        if self.damage.len() < 100 {
            self.damage.push(what.to_string());
        }
    }

    /// Close every file, write the description and mark the dataset
    /// complete. Returns the description.
    pub fn finish(self, meta: &TraceMeta) -> Result<Json> {
        let layout = self.opts.layout.clone();
        let (mut desc, ds) = self.finish_in(meta)?;
        let dir = ds.dir.clone();
        let files = ds.finish()?;
        // the files of each table, now that they are closed
        if let Some(tables) = desc.get_mut("tables").and_then(|t| t.as_object_mut()) {
            for (name, f) in files {
                if let Some(d) = tables.get_mut(&name) {
                    d["file"] = json!(f.first().map(|f| f.path.clone()));
                    d["files"] = json!(f.iter().map(|f| f.path.clone()).collect::<Vec<_>>());
                }
            }
        }
        write_meta(&desc, &meta_path(&dir, &layout))?;
        Ok(desc)
    }

    /// Hand every row to the encoder and write the trace's description
    /// (`meta.json`, or `_meta/NAME.json`); the dataset goes on (the next
    /// trace of a shared dataset) or is finished ([`Dataset::finish`]).
    pub fn finish_in(mut self, meta: &TraceMeta) -> Result<(Json, Dataset)> {
        let mut tables = Map::new();
        let mut unsorted = Vec::new();
        let all = self
            .tables
            .iter_mut()
            .chain(self.long.as_mut())
            .chain(std::iter::once(&mut self.lost));
        for t in all {
            self.mismatches += t.rows.columns().mismatches;
            self.unknown += t.rows.columns().unknown;
            let job = t.job()?;
            self.ds.encoder.send(job)?;
            if !t.sorted {
                unsorted.push(t.name.to_string());
            }
            let file = match &self.opts.layout {
                Layout::Shared { .. } => format!("{}/", t.name),
                layout => Naming::of(layout)
                    .path(Path::new(""), &t.name, 0)
                    .display()
                    .to_string(),
            };
            let mut d = json!({
                "file": file,
                "rows": t.total,
                "columns": t.own.fields().iter().map(|f| json!({
                    "name": f.name(),
                    "type": f.data_type().to_string(),
                })).collect::<Vec<_>>(),
            });
            if let (Some(s), Some(e)) = (&t.system, &t.event) {
                d["system"] = json!(s);
                d["event"] = json!(e);
            }
            tables.insert(t.name.to_string(), d);
        }
        let (mismatches, unknown) = (self.mismatches, self.unknown);
        let mut desc = json!({
            "tracemux": env!("CARGO_PKG_VERSION"),
            "source": self.opts.source,
            "trace": match self.opts.layout.trace() {
                Some(trace) => json!(trace),
                None => Json::Null,
            },
            "layout": match &self.opts.layout {
                Layout::Flat => "flat",
                Layout::Hive { .. } => "hive",
                Layout::Shared { .. } => "shared",
            },
            "schema": if self.opts.portable { "portable" } else { "native" },
            "format": meta.format.map(|f| f.name()),
            "cpus": meta.cpus,
            "uname": meta.uname,
            "tracer_version": meta.tracer_version,
            "hostname": meta.hostname(),
            "clocks": meta.clocks.iter().map(|c| json!({
                "name": c.name,
                "freq": c.freq,
                "offset_ns": c.offset_ns,
                "origin_unix_epoch": c.origin_unix_epoch,
                "description": c.description,
            })).collect::<Vec<_>>(),
            "env": meta.env.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
            "buffers": meta.buffers.iter().map(|b| json!({
                "name": b.name,
                "clock": b.clock,
                "page_size": b.page_size,
                "cpus": b.cpus,
            })).collect::<Vec<_>>(),
            "events": self.events,
            "events_without_class": self.unknown_class,
            "lost": {"markers": self.lost_markers, "events": self.lost_events},
            "damage": {"count": self.damage_count, "first": self.damage},
            "values": {"of_another_shape": mismatches, "without_column": unknown},
            "comm_changes": self.tasks.renames,
            "unsorted_tables": unsorted,
            "renamed_columns": self.ds.renamed[self.renamed_before..].to_vec(),
            "tables": tables,
        });
        if !meta.inputs.is_empty() {
            desc["inputs"] = inputs_json(meta);
        }
        write_meta(&desc, &meta_path(&self.ds.dir, &self.opts.layout))?;
        Ok((desc, self.ds))
    }
}

/// Where the description of a trace goes.
fn meta_path(dir: &Path, layout: &Layout) -> PathBuf {
    match layout.trace() {
        None => dir.join("meta.json"),
        Some(trace) => dir.join("_meta").join(format!("{trace}.json")),
    }
}

fn write_meta(desc: &Json, path: &Path) -> Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| io(d, e))?;
    }
    let mut text = serde_json::to_string_pretty(desc).unwrap_or_default();
    text.push('\n');
    std::fs::write(path, text).map_err(|e| io(path, e))
}

/// A timeline's inputs for `meta.json`: each one's path, format, clock (as
/// its file states it), shift and how it was placed (with an estimate's
/// method, offset, pairs and spread).
fn inputs_json(meta: &TraceMeta) -> Json {
    use tracemux_core::timeline::Alignment;
    meta.inputs
        .iter()
        .map(|i| {
            let placed = match &i.alignment {
                Alignment::Reference => json!({"how": "reference"}),
                Alignment::SameClock { with } => json!({"how": "same clock", "with": with}),
                Alignment::Given => json!({"how": "given"}),
                Alignment::Estimated(e) => json!({
                    "how": "estimated",
                    "against": e.against,
                    "method": e.method,
                    "offset_ns": e.offset_ns,
                    "clock_offset_ns": e.clock_offset_ns,
                    "pairs": e.pairs,
                    "tried": e.tried,
                    "spread_ns": e.spread_ns,
                }),
            };
            json!({
                "name": i.name,
                "format": i.format.map(|f| f.name()),
                "clock": {
                    "name": i.clock.clock,
                    "system": i.clock.system,
                    "base_ns": i.clock.base_ns,
                    "host": i.clock.host,
                    "source": i.clock.source,
                },
                "streams": [i.streams.start, i.streams.end],
                "shift_ns": i.shift_ns,
                "placed": placed,
            })
        })
        .collect()
}
