//! One trace as a Parquet dataset.
//!
//! Files (the default layout, [`Layout::Flat`]), with the columns of
//! [`crate::rows`]:
//! - `SYSTEM__EVENT.parquet`: one wide table per event class that occurs.
//! - `events.parquet`: every event, long (the payload as JSON text).
//! - `lost.parquet`: lost-event markers.
//! - `meta.json`: what the trace says about itself and what was written.
//!
//! [`Layout::Hive`] writes `TABLE/trace=NAME/part-0.parquet` instead, and
//! `_meta/NAME.json`, so that many traces converted into one directory read
//! as one table per event class with a `trace` column (Hive partitioning).
//!
//! Memory stays flat however many tables a trace has: each table records
//! its rows on a compact, compressed tape ([`crate::tape`]); when the tapes
//! of all tables hold more than [`WriteOptions::memory_budget`], one table's
//! tape goes to the encoder thread, which builds its columns and writes it
//! as a row group (only that table's builders and column writers exist at
//! a time). The table picked is the one holding most against the square
//! root of all it has had, which keeps row groups few for the memory.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, SchemaRef};
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
}

#[derive(Debug, Clone)]
pub struct WriteOptions {
    pub layout: Layout,
    /// zstd level of the column chunks.
    pub zstd_level: i32,
    /// Rows of a row group, at most: a table's rows go to the encoder as
    /// a row group when it has built this many (or, before, when the
    /// rows of all tables hold [`WriteOptions::memory_budget`] and it
    /// holds the most).
    pub batch_rows: usize,
    /// Bytes the rows being built may hold in all tables before the
    /// largest table's go to the encoder.
    pub memory_budget: usize,
    /// Write the long `events` table.
    pub events_table: bool,
    /// What to record as the source in `meta.json`.
    pub source: Vec<String>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            layout: Layout::Flat,
            zstd_level: 3,
            batch_rows: 1 << 16,
            memory_budget: 8 << 20,
            events_table: true,
            source: Vec::new(),
        }
    }
}

/// One table: its rows being built (the builders of its columns, on the
/// thread that reads the trace), and what `meta.json` says of it. Its
/// Parquet file is written by the [`Encoder`] thread.
struct Table {
    /// The table's number at the encoder.
    id: usize,
    name: String,
    path: PathBuf,
    rows: Rows,
    /// The encoder has its file.
    opened: bool,
    schema: SchemaRef,
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

impl Table {
    fn new(id: usize, name: String, path: PathBuf, rows: Rows) -> Table {
        let schema = rows.schema().clone();
        let row_bytes = schema
            .fields()
            .iter()
            .map(|f| value_bytes(f.data_type()))
            .sum::<usize>()
            .max(1);
        Table {
            id,
            name,
            path,
            rows,
            opened: false,
            schema,
            total: 0,
            row_bytes,
            system: None,
            event: None,
            last_ts: i64::MIN,
            sorted: true,
        }
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
    /// time, the table's file: every table gets one, even without rows).
    fn job(&mut self) -> Result<Option<Job>> {
        let first = (!self.opened).then(|| (self.path.clone(), self.schema.clone()));
        self.opened = true;
        if self.rows.rows() == 0 && first.is_none() {
            return Ok(None);
        }
        let batch = match self.rows.rows() {
            0 => None,
            _ => Some(self.rows.batch(&self.name)?),
        };
        Ok(Some(Job {
            id: self.id,
            first,
            batch,
        }))
    }
}

/// Rows of a table for the encoder; with the table's first rows, its
/// file's path and schema.
struct Job {
    id: usize,
    first: Option<(PathBuf, SchemaRef)>,
    batch: Option<RecordBatch>,
}

/// The Parquet writers of every table, on a thread of their own: encoding
/// and compressing a table's rows runs beside the reading of the next
/// events. A batch's encoded pages stay in its writer's row group until
/// the row group is written: when it holds [`WriteOptions::row_group_bytes`],
/// or, when the row groups of all tables hold more than
/// [`WriteOptions::memory_budget`], the largest one. Few, large row groups
/// in flat memory.
struct Encoder {
    tx: Option<SyncSender<Job>>,
    thread: Option<JoinHandle<Result<()>>>,
}

impl Encoder {
    fn start(opts: &WriteOptions) -> Result<Encoder> {
        // (an invalid zstd level is refused here, not at the first table)
        properties(opts, &arrow_schema::Schema::empty())?;
        let props = opts.clone();
        let (tx, rx) = sync_channel::<Job>(1);
        let thread = std::thread::Builder::new()
            .name("parquet-encoder".into())
            .spawn(move || encode(rx, props))
            .map_err(|e| io(Path::new("parquet encoder thread"), e))?;
        Ok(Encoder {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    fn send(&mut self, job: Option<Job>) -> Result<()> {
        let Some(job) = job else {
            return Ok(());
        };
        if self.tx.as_ref().is_some_and(|tx| tx.send(job).is_ok()) {
            return Ok(());
        }
        // the thread stopped: on an error, which `finish` returns
        self.finish()
    }

    /// Close every file; the first error of the encoder.
    fn finish(&mut self) -> Result<()> {
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

/// The encoder thread: write each batch to its table's file, close a row
/// group at `rg_bytes` and the largest when all hold more than `budget`;
/// at the end (the sender gone), close every file.
fn encode(rx: Receiver<Job>, opts: WriteOptions) -> Result<()> {
    struct Open {
        path: PathBuf,
        writer: ArrowWriter<BufWriter<File>>,
    }
    let mut open: Vec<Option<Open>> = Vec::new();
    for job in rx {
        if open.len() <= job.id {
            open.resize_with(job.id + 1, || None);
        }
        if let Some((path, schema)) = job.first {
            if let Some(d) = path.parent() {
                std::fs::create_dir_all(d).map_err(|e| io(d, e))?;
            }
            let f = File::create(&path).map_err(|e| io(&path, e))?;
            let props = properties(&opts, &schema)?;
            let writer =
                ArrowWriter::try_new(BufWriter::with_capacity(8 << 10, f), schema, Some(props))
                    .map_err(|e| pq(&path, e))?;
            open[job.id] = Some(Open { path, writer });
        }
        let Some(t) = open[job.id].as_mut() else {
            return Err(Error::Encoder(format!(
                "parquet table {} written before opened",
                job.id
            )));
        };
        if let Some(b) = job.batch {
            // a batch is a row group: one is encoded at a time (the
            // column encoders of a row group, with their compression
            // contexts, are what would grow with the tables open)
            t.writer.write(&b).map_err(|e| pq(&t.path, e))?;
            drop(b);
            t.writer.flush().map_err(|e| pq(&t.path, e))?;
        }
    }
    for t in open.into_iter().flatten() {
        let f = t.writer.into_inner().map_err(|e| pq(&t.path, e))?;
        f.into_inner()
            .map_err(|e| io(&t.path, e.into_error()))?
            .sync_all()
            .ok();
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
            .set_max_row_group_row_count(Some(opts.batch_rows.max(1)))
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
            // events come in time order (the model's contract); `meta.json`
            // says if a table's did not
            .set_sorting_columns(Some(vec![SortingColumn {
                column_idx: 0,
                descending: false,
                nulls_first: false,
            }]))
            .build(),
    )
}

/// Writes the tables of one trace.
pub struct TablesWriter {
    dir: PathBuf,
    opts: WriteOptions,
    classes: ClassIndex,
    /// Class (its index in the [`ClassIndex`]) to its table in `tables`.
    by_class: Vec<Option<usize>>,
    tables: Vec<Table>,
    long: Option<Table>,
    lost: Table,
    encoder: Encoder,
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
}

/// The encoder's numbers of `events` and `lost`; class tables follow.
const LONG_ID: usize = 0;
const LOST_ID: usize = 1;

impl TablesWriter {
    /// Write into `dir` (created if needed).
    pub fn new(dir: &Path, meta: &TraceMeta, opts: WriteOptions) -> Result<TablesWriter> {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let long = opts.events_table.then(|| {
            Table::new(
                LONG_ID,
                "events".into(),
                Self::path(dir, &opts, "events"),
                Rows::new(meta, TableKind::Events),
            )
        });
        let lost = Table::new(
            LOST_ID,
            "lost".into(),
            Self::path(dir, &opts, "lost"),
            Rows::new(meta, TableKind::Lost),
        );
        Ok(TablesWriter {
            dir: dir.to_path_buf(),
            encoder: Encoder::start(&opts)?,
            opts,
            held: 0,
            classes: ClassIndex::new(meta),
            by_class: Vec::new(),
            tables: Vec::new(),
            long,
            lost,
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

    fn path(dir: &Path, opts: &WriteOptions, table: &str) -> PathBuf {
        match &opts.layout {
            Layout::Flat => dir.join(format!("{table}.parquet")),
            Layout::Hive { trace } => dir
                .join(table)
                .join(format!("trace={trace}"))
                .join("part-0.parquet"),
        }
    }

    /// The table of `class`, created at its first event.
    fn table_of(&mut self, meta: &TraceMeta, class: &EventClass) -> usize {
        let k = self.classes.of(meta, class);
        if let Some(Some(t)) = self.by_class.get(k) {
            return *t;
        }
        let name = self.classes.name(k).to_string();
        let path = Self::path(&self.dir, &self.opts, &name);
        let id = LOST_ID + 1 + self.tables.len();
        let mut t = Table::new(id, name, path, Rows::class(meta, class));
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
        if let Some(i) = table {
            let t = &mut self.tables[i];
            t.check_order(ev.ts);
            t.rows.event(meta, &self.tasks, ev);
            self.held += t.row_bytes;
            if t.rows.rows() >= batch_rows {
                self.held = self.held.saturating_sub(t.held());
                let job = t.job()?;
                self.encoder.send(job)?;
            }
        } else {
            self.unknown_class += 1;
        }
        if let Some(t) = &mut self.long {
            t.check_order(ev.ts);
            t.rows.event(meta, &self.tasks, ev);
            self.held += t.row_bytes;
            if t.rows.rows() >= batch_rows {
                self.held = self.held.saturating_sub(t.held());
                let job = t.job()?;
                self.encoder.send(job)?;
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

    /// While the rows being built hold more than a quarter of the budget,
    /// hand the table holding the most to the encoder.
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
            self.encoder.send(job)?;
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

    /// Close every file and write the description. Returns it.
    pub fn finish(mut self, meta: &TraceMeta) -> Result<Json> {
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
            self.encoder.send(job)?;
            if !t.sorted {
                unsorted.push(t.name.clone());
            }
            let file = t
                .path
                .strip_prefix(&self.dir)
                .unwrap_or(&t.path)
                .display()
                .to_string();
            let mut d = json!({
                "file": file,
                "rows": t.total,
                "columns": t.schema.fields().iter().map(|f| json!({
                    "name": f.name(),
                    "type": f.data_type().to_string(),
                })).collect::<Vec<_>>(),
            });
            if let (Some(s), Some(e)) = (&t.system, &t.event) {
                d["system"] = json!(s);
                d["event"] = json!(e);
            }
            tables.insert(t.name.clone(), d);
        }
        self.encoder.finish()?;
        let (mismatches, unknown) = (self.mismatches, self.unknown);
        let mut desc = json!({
            "tracemux": env!("CARGO_PKG_VERSION"),
            "source": self.opts.source,
            "trace": match &self.opts.layout {
                Layout::Hive { trace } => json!(trace),
                Layout::Flat => Json::Null,
            },
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
            "tables": tables,
        });
        if !meta.inputs.is_empty() {
            desc["inputs"] = inputs_json(meta);
        }
        let path = match &self.opts.layout {
            Layout::Flat => self.dir.join("meta.json"),
            Layout::Hive { trace } => self.dir.join("_meta").join(format!("{trace}.json")),
        };
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).map_err(|e| io(d, e))?;
        }
        let mut text = serde_json::to_string_pretty(&desc).unwrap_or_default();
        text.push('\n');
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        Ok(desc)
    }
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
