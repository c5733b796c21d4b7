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

mod encoder;

pub use encoder::*;

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
