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
//! Rows are built in batches and handed to Parquet writers that keep at
//! most a bounded amount of encoded data in memory (row groups are flushed
//! early when all open tables together hold more than
//! [`WriteOptions::memory_budget`]).

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use arrow_array::RecordBatch;

use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::SortingColumn;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use serde_json::{json, Map, Value as Json};
use tracemux_core::model::{Event, EventClass, Lost, TraceMeta};

use crate::comm::{self, Comms};
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
    /// Rows built before they go to the Parquet writer.
    pub batch_rows: usize,
    /// Rows per row group (at most).
    pub row_group_rows: usize,
    /// Encoded bytes all open row groups may hold before the largest is
    /// flushed.
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
            batch_rows: 8192,
            row_group_rows: 1 << 20,
            memory_budget: 8 << 20,
            events_table: true,
            source: Vec::new(),
        }
    }
}

/// One table being built: its rows, and what `meta.json` says of it. Its
/// Parquet file is written by the [`Encoder`] thread.
struct Table {
    /// The table's number at the encoder.
    id: usize,
    name: String,
    path: PathBuf,
    table: Rows,
    /// A batch of it went to the encoder (which then has its file).
    sent: bool,
    rows: u64,
    system: Option<String>,
    event: Option<String>,
    /// The last `ts` written and whether they came in order.
    last_ts: i64,
    sorted: bool,
}

impl Table {
    fn new(id: usize, name: String, path: PathBuf, rows: Rows) -> Table {
        Table {
            id,
            name,
            path,
            table: rows,
            sent: false,
            rows: 0,
            system: None,
            event: None,
            last_ts: i64::MIN,
            sorted: true,
        }
    }

    fn check_order(&mut self, ts: u64) {
        let ts = ts as i64;
        if ts < self.last_ts {
            self.sorted = false;
        }
        self.last_ts = ts;
        self.rows += 1;
    }

    /// Hand the built rows to the encoder (an empty batch too, the first
    /// time: every table gets its file).
    fn flush_rows(&mut self, enc: &mut Encoder) -> Result<()> {
        if self.table.rows() == 0 && self.sent {
            return Ok(());
        }
        let batch = self.table.batch(&self.name)?;
        let path = (!self.sent).then(|| self.path.clone());
        self.sent = true;
        enc.send(Job {
            id: self.id,
            path,
            batch,
        })
    }
}

/// A batch of rows for the encoder; `path` with a table's first batch.
struct Job {
    id: usize,
    path: Option<PathBuf>,
    batch: RecordBatch,
}

/// Batches on their way to the encoder thread (a bound: memory stays flat
/// when encoding is the slower side).
const JOBS_IN_FLIGHT: usize = 4;

/// The Parquet writers of every table, on a thread of their own: encoding
/// and compressing a batch (about half the work) runs beside the building
/// of the next ones.
struct Encoder {
    tx: Option<SyncSender<Job>>,
    thread: Option<JoinHandle<Result<()>>>,
}

impl Encoder {
    fn start(opts: &WriteOptions, dir: &Path) -> Result<Encoder> {
        let props = properties(opts)?;
        let budget = opts.memory_budget;
        let dir = dir.to_path_buf();
        let (tx, rx) = sync_channel::<Job>(JOBS_IN_FLIGHT);
        let thread = std::thread::Builder::new()
            .name("parquet-encoder".into())
            .spawn(move || encode(rx, props, budget, &dir))
            .map_err(|e| io(Path::new("parquet encoder thread"), e))?;
        Ok(Encoder {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    fn send(&mut self, job: Job) -> Result<()> {
        let sent = self.tx.as_ref().map(|tx| tx.send(job));
        match sent {
            Some(Ok(())) => Ok(()),
            // the thread stopped: on an error, which `finish` returns
            _ => self.finish(),
        }
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

/// The encoder thread: write each batch to its table's file; keep the open
/// row groups of all tables under `budget` bytes by flushing the largest;
/// at the end (the sender gone), close every file.
fn encode(rx: Receiver<Job>, props: WriterProperties, budget: usize, dir: &Path) -> Result<()> {
    struct Open {
        path: PathBuf,
        writer: ArrowWriter<BufWriter<File>>,
    }
    let mut open: Vec<Option<Open>> = Vec::new();
    for job in rx {
        if open.len() <= job.id {
            open.resize_with(job.id + 1, || None);
        }
        if let Some(path) = job.path {
            if let Some(d) = path.parent() {
                std::fs::create_dir_all(d).map_err(|e| io(d, e))?;
            }
            let f = File::create(&path).map_err(|e| io(&path, e))?;
            let writer = ArrowWriter::try_new(
                BufWriter::with_capacity(16 << 10, f),
                job.batch.schema(),
                Some(props.clone()),
            )
            .map_err(|e| pq(&path, e))?;
            open[job.id] = Some(Open { path, writer });
        }
        let Some(t) = open[job.id].as_mut() else {
            return Err(Error::Encoder(format!(
                "parquet table {} written before opened",
                job.id
            )));
        };
        t.writer.write(&job.batch).map_err(|e| pq(&t.path, e))?;
        let mut total = 0;
        let mut largest: Option<(usize, &mut Open)> = None;
        for t in open.iter_mut().flatten() {
            let n = t.writer.memory_size();
            total += n;
            if largest.as_ref().is_none_or(|(m, _)| n > *m) {
                largest = Some((n, t));
            }
        }
        if total > budget {
            if let Some((_, t)) = largest {
                t.writer.flush().map_err(|e| pq(dir, e))?;
            }
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

fn properties(opts: &WriteOptions) -> Result<WriterProperties> {
    let level = ZstdLevel::try_new(opts.zstd_level).map_err(|e| pq(Path::new("zstd level"), e))?;
    let ts = ColumnPath::from("ts");
    Ok(WriterProperties::builder()
        .set_created_by(format!("tracemux {}", env!("CARGO_PKG_VERSION")))
        .set_compression(Compression::ZSTD(level))
        .set_max_row_group_row_count(Some(opts.row_group_rows.max(1)))
        // pages and dictionaries are buffered per column of every open
        // table: small ones keep a wide trace's memory flat
        .set_data_page_size_limit(128 << 10)
        .set_dictionary_page_size_limit(128 << 10)
        .set_column_dictionary_enabled(ColumnPath::from("fields"), false)
        .set_column_dictionary_enabled(ts.clone(), false)
        .set_column_encoding(ts, Encoding::DELTA_BINARY_PACKED)
        // events come in time order (the model's contract); `meta.json`
        // says if a table's did not
        .set_sorting_columns(Some(vec![SortingColumn {
            column_idx: 0,
            descending: false,
            nulls_first: false,
        }]))
        .build())
}

/// Writes the tables of one trace.
pub struct TablesWriter {
    dir: PathBuf,
    opts: WriteOptions,
    classes: ClassIndex,
    /// Class (its index in the [`ClassIndex`]) to its table in `tables`.
    by_class: HashMap<usize, usize>,
    tables: Vec<Table>,
    /// Per table: the comm rule of its class.
    rules: Vec<Option<comm::Rule>>,
    long: Option<Table>,
    lost: Table,
    encoder: Encoder,
    comms: Comms,
    events: u64,
    unknown_class: u64,
    lost_markers: u64,
    lost_events: u64,
    damage: Vec<String>,
    damage_count: u64,
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
            encoder: Encoder::start(&opts, dir)?,
            opts,
            classes: ClassIndex::new(meta),
            by_class: HashMap::new(),
            tables: Vec::new(),
            rules: Vec::new(),
            long,
            lost,
            comms: Comms::default(),
            events: 0,
            unknown_class: 0,
            lost_markers: 0,
            lost_events: 0,
            damage: Vec::new(),
            damage_count: 0,
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
        if let Some(&t) = self.by_class.get(&k) {
            return t;
        }
        let name = self.classes.name(k).to_string();
        let path = Self::path(&self.dir, &self.opts, &name);
        let id = LOST_ID + 1 + self.tables.len();
        let mut t = Table::new(id, name, path, Rows::class(meta, class));
        t.system = Some(class.system.clone());
        t.event = Some(class.name.clone());
        self.tables.push(t);
        self.rules.push(comm::rule(class));
        self.by_class.insert(k, self.tables.len() - 1);
        self.tables.len() - 1
    }

    pub fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()> {
        self.events += 1;
        let table = ev.class.map(|c| self.table_of(meta, c));
        // what the event says about task names holds from the event on
        // (a `sched_switch` names the task it leaves, the row's own)
        if let Some(rule) = table.and_then(|i| self.rules[i]) {
            self.comms.learn(meta, ev, rule);
        }
        if let Some(t) = &mut self.long {
            t.check_order(ev.ts);
            t.table.event(meta, &self.comms, ev);
            if t.table.rows() >= self.opts.batch_rows {
                t.flush_rows(&mut self.encoder)?;
            }
        }
        let Some(i) = table else {
            self.unknown_class += 1;
            return Ok(());
        };
        let t = &mut self.tables[i];
        t.check_order(ev.ts);
        t.table.event(meta, &self.comms, ev);
        if t.table.rows() >= self.opts.batch_rows {
            t.flush_rows(&mut self.encoder)?;
        }
        Ok(())
    }

    pub fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> Result<()> {
        self.lost_markers += 1;
        self.lost_events += l.count.unwrap_or(0);
        let t = &mut self.lost;
        t.check_order(l.ts);
        t.table.lost(meta, l);
        if t.table.rows() >= self.opts.batch_rows {
            t.flush_rows(&mut self.encoder)?;
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
        let mut mismatches = 0;
        let mut unknown = 0;
        let all = self
            .tables
            .iter_mut()
            .chain(self.long.as_mut())
            .chain(std::iter::once(&mut self.lost));
        for t in all {
            t.flush_rows(&mut self.encoder)?;
            mismatches += t.table.columns().mismatches;
            unknown += t.table.columns().unknown;
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
                "rows": t.rows,
                "columns": t.table.schema().fields().iter().map(|f| json!({
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
        let desc = json!({
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
            "comm_changes": self.comms.renames,
            "unsorted_tables": unsorted,
            "tables": tables,
        });
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
