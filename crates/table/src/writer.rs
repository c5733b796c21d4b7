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

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::SortingColumn;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use serde_json::{json, Map, Value as Json};
use tracemux_core::model::{Event, EventClass, Lost, TraceMeta};

use crate::comm::{self, Comms};
use crate::rows::{ClassIndex, Recipe, Rows, TableKind};
use crate::tape::{Packer, Taken, Tape, TapeReader, Unpacker};
use crate::{Error, Result};

pub use crate::rows::table_name;

/// The table a row was recorded on.
#[derive(Clone, Copy)]
enum Recorded {
    /// Class table `i`.
    Class(usize),
    /// The long `events` table.
    Long,
    /// `lost`.
    Lost,
}

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
    /// Rows built at a time from a tape before they go to the Parquet
    /// writer.
    pub batch_rows: usize,
    /// Rows per row group (at most).
    pub row_group_rows: usize,
    /// Encoded bytes of a row group (at most, roughly: a row group is
    /// closed when it has grown past them).
    pub row_group_bytes: usize,
    /// Bytes the recorded rows of all tables may hold (compressed, and
    /// those on their way to the encoder) before the largest table's are
    /// written as a row group; a quarter more for the latest rows of each
    /// table before they are compressed.
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
            row_group_bytes: 4 << 20,
            memory_budget: 5 << 20,
            events_table: true,
            source: Vec::new(),
        }
    }
}

/// One table being recorded: its rows on a tape, and what `meta.json`
/// says of it. Its Parquet file is written by the [`Encoder`] thread.
struct Table {
    /// The table's number at the encoder.
    id: usize,
    name: String,
    path: PathBuf,
    /// How its rows are recorded.
    recipe: Recipe,
    tape: Tape,
    /// Its columns; the builders go to the encoder with the first tape.
    builders: Option<Rows>,
    /// The encoder has its file.
    opened: bool,
    schema: SchemaRef,
    rows: u64,
    system: Option<String>,
    event: Option<String>,
    /// The last `ts` written and whether they came in order.
    last_ts: i64,
    sorted: bool,
    /// Compressed bytes of the rows written so far.
    volume: u64,
}

impl Table {
    fn new(id: usize, name: String, path: PathBuf, rows: Rows) -> Table {
        Table {
            id,
            name,
            path,
            recipe: rows.recipe(),
            tape: Tape::default(),
            schema: rows.schema().clone(),
            builders: Some(rows),
            opened: false,
            rows: 0,
            system: None,
            event: None,
            last_ts: i64::MIN,
            sorted: true,
            volume: 0,
        }
    }

    /// Which table to write when the tapes are over the budget: the one
    /// whose held rows are largest against the square root of all it has
    /// had. Tables that get many rows then write larger row groups than
    /// those that get few, which is what makes the fewest row groups in a
    /// given memory (a table written at size `s` every `s` bytes of its
    /// `R` makes `R/s` row groups and holds `s/2` on average: for a total
    /// held, the count is least with `s` in proportion to `sqrt(R)`).
    fn flush_score(&self) -> f64 {
        let held = self.tape.packed() as f64;
        held / ((self.volume as f64 + held).sqrt() + 1.0)
    }

    fn check_order(&mut self, ts: u64) {
        let ts = ts as i64;
        if ts < self.last_ts {
            self.sorted = false;
        }
        self.last_ts = ts;
        self.rows += 1;
    }

    /// The rows recorded so far for the encoder, to be written as a row
    /// group (an empty tape too, the first time: every table gets its
    /// file).
    fn job(&mut self) -> Option<Job> {
        let first = (!self.opened).then(|| (self.path.clone(), self.schema.clone()));
        self.opened = true;
        if self.tape.rows() == 0 && first.is_none() {
            return None;
        }
        Some(Job {
            id: self.id,
            first,
            builders: self.builders.take(),
            tape: self.tape.take(),
        })
    }
}

/// A table's recorded rows for the encoder: a row group (or several, when
/// they encode to more than [`WriteOptions::row_group_bytes`]). With the
/// table's first tape, its file's path and schema, and the builders of its
/// columns.
struct Job {
    id: usize,
    first: Option<(PathBuf, SchemaRef)>,
    builders: Option<Rows>,
    tape: Taken,
}

/// Values the encoder counted while building rows (see [`Columns`]).
#[derive(Default)]
struct Counts {
    mismatches: u64,
    unknown: u64,
}

/// The Parquet writers of every table, on a thread of their own: building
/// the columns of a tape's rows, encoding and compressing them run beside
/// the decoding and recording of the next events. It gets one tape at a
/// time (the channel holds none): memory stays flat when it is the slower
/// side.
struct Encoder {
    tx: Option<SyncSender<Job>>,
    thread: Option<JoinHandle<Result<Counts>>>,
}

impl Encoder {
    fn start(opts: &WriteOptions) -> Result<Encoder> {
        let props = properties(opts)?;
        let batch_rows = opts.batch_rows.max(1);
        let rg_bytes = opts.row_group_bytes;
        let (tx, rx) = sync_channel::<Job>(0);
        let thread = std::thread::Builder::new()
            .name("parquet-encoder".into())
            .spawn(move || encode(rx, props, batch_rows, rg_bytes))
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
        self.finish().map(|_| ())
    }

    /// Close every file; the first error of the encoder.
    fn finish(&mut self) -> Result<Counts> {
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

/// The encoder thread: build each tape's rows, `batch_rows` at a time,
/// and write them to its table's file as a row group (a new one past
/// `rg_bytes`); at the end (the sender gone), close every file.
fn encode(
    rx: Receiver<Job>,
    props: WriterProperties,
    batch_rows: usize,
    rg_bytes: usize,
) -> Result<Counts> {
    struct Open {
        path: PathBuf,
        rows: Option<Rows>,
        writer: ArrowWriter<BufWriter<File>>,
    }
    let mut open: Vec<Option<Open>> = Vec::new();
    let mut unpacker = Unpacker::new();
    for job in rx {
        if open.len() <= job.id {
            open.resize_with(job.id + 1, || None);
        }
        if let Some((path, schema)) = job.first {
            if let Some(d) = path.parent() {
                std::fs::create_dir_all(d).map_err(|e| io(d, e))?;
            }
            let f = File::create(&path).map_err(|e| io(&path, e))?;
            let writer = ArrowWriter::try_new(
                BufWriter::with_capacity(4 << 10, f),
                schema,
                Some(props.clone()),
            )
            .map_err(|e| pq(&path, e))?;
            open[job.id] = Some(Open {
                path,
                rows: None,
                writer,
            });
        }
        let Some(t) = open[job.id].as_mut() else {
            return Err(Error::Encoder(format!(
                "parquet table {} written before opened",
                job.id
            )));
        };
        let tape = job.tape;
        if job.builders.is_some() {
            t.rows = job.builders;
        }
        let Some(rows) = t.rows.as_mut() else {
            return Err(Error::Encoder(format!(
                "parquet table {} has no columns",
                job.id
            )));
        };
        let Taken {
            chunks,
            tail,
            names,
        } = tape;
        let (path, writer) = (&t.path, &mut t.writer);
        let mut write = |rows: &mut Rows, last: bool| -> Result<()> {
            if rows.rows() > 0 {
                let batch = rows.batch(&path.display().to_string())?;
                writer.write(&batch).map_err(|e| pq(path, e))?;
            }
            if last || writer.in_progress_size() >= rg_bytes {
                writer.flush().map_err(|e| pq(path, e))?;
            }
            Ok(())
        };
        for c in chunks {
            // each chunk is freed once its rows are built
            let mut r = TapeReader::new(unpacker.unpack(&c), &names);
            while !r.at_end() {
                rows.replay(&mut r);
                if rows.rows() >= batch_rows {
                    write(rows, false)?;
                }
            }
        }
        let mut r = TapeReader::new(&tail, &names);
        while !r.at_end() {
            rows.replay(&mut r);
            if rows.rows() >= batch_rows {
                write(rows, false)?;
            }
        }
        drop(tail);
        write(rows, true)?;
    }
    let mut counts = Counts::default();
    for t in open.into_iter().flatten() {
        if let Some(rows) = &t.rows {
            counts.mismatches += rows.columns().mismatches;
            counts.unknown += rows.columns().unknown;
        }
        let f = t.writer.into_inner().map_err(|e| pq(&t.path, e))?;
        f.into_inner()
            .map_err(|e| io(&t.path, e.into_error()))?
            .sync_all()
            .ok();
    }
    Ok(counts)
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
        // statistics per column chunk (min/max per row group); per page
        // (the column index) only for `ts`, where time ranges skip pages:
        // a file keeps the page indexes of all its row groups in memory
        // until it closes
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_column_statistics_enabled(ts.clone(), EnabledStatistics::Page)
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
    packer: Packer,
    /// Bytes the tapes of all tables hold: their latest rows, their
    /// compressed chunks.
    raw: usize,
    packed: usize,
    comms: Comms,
    events: u64,
    unknown_class: u64,
    lost_markers: u64,
    lost_events: u64,
    damage: Vec<String>,
    damage_count: u64,
}

fn all_tables<'a>(
    tables: &'a mut [Table],
    long: &'a mut Option<Table>,
    lost: &'a mut Table,
) -> impl Iterator<Item = &'a mut Table> {
    tables
        .iter_mut()
        .chain(long.as_mut())
        .chain(std::iter::once(lost))
}

/// Rows recorded on a table's tape are compressed by this many bytes.
const CHUNK_BYTES: usize = 128 << 10;

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
            packer: Packer::new(),
            raw: 0,
            packed: 0,
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
        if let Some(i) = table {
            let t = &mut self.tables[i];
            t.check_order(ev.ts);
            let before = t.tape.capacity();
            t.recipe.event(&mut t.tape, meta, &self.comms, ev);
            self.raw += t.tape.capacity() - before;
            self.recorded(Recorded::Class(i))?;
        } else {
            self.unknown_class += 1;
        }
        if let Some(t) = &mut self.long {
            t.check_order(ev.ts);
            let before = t.tape.capacity();
            t.recipe.event(&mut t.tape, meta, &self.comms, ev);
            self.raw += t.tape.capacity() - before;
            self.recorded(Recorded::Long)?;
        }
        Ok(())
    }

    pub fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> Result<()> {
        self.lost_markers += 1;
        self.lost_events += l.count.unwrap_or(0);
        let t = &mut self.lost;
        t.check_order(l.ts);
        let before = t.tape.capacity();
        t.recipe.lost(&mut t.tape, meta, l);
        self.raw += t.tape.capacity() - before;
        self.recorded(Recorded::Lost)
    }

    /// A row was recorded on a table: compress its latest rows when they
    /// fill a chunk, write its rows when they fill a row group, and keep
    /// the budget.
    fn recorded(&mut self, on: Recorded) -> Result<()> {
        let t = match on {
            Recorded::Class(i) => &mut self.tables[i],
            Recorded::Lost => &mut self.lost,
            Recorded::Long => match &mut self.long {
                Some(t) => t,
                None => return Ok(()),
            },
        };
        if t.tape.len() >= CHUNK_BYTES {
            self.raw -= t.tape.capacity();
            self.packed += t.tape.pack(&mut self.packer);
        }
        if t.tape.rows() >= self.opts.row_group_rows {
            self.packed -= t.tape.packed();
            self.raw -= t.tape.capacity();
            self.encoder.send(t.job())?;
        }
        self.keep_budget()
    }

    /// Keep the tapes within the budget: compress the largest latest rows
    /// while they hold more than a quarter of it; while the compressed
    /// rows hold more than the budget, write the table that holds the most
    /// (handing it over waits while the encoder writes another: it frees
    /// what it has written as it goes).
    fn keep_budget(&mut self) -> Result<()> {
        let budget = self.opts.memory_budget;
        while self.raw > budget / 4 {
            let Some(t) = all_tables(&mut self.tables, &mut self.long, &mut self.lost)
                .max_by_key(|t| t.tape.capacity())
            else {
                break;
            };
            let n = t.tape.capacity();
            if n == 0 {
                self.raw = 0;
                break;
            }
            let packed = t.tape.pack(&mut self.packer);
            self.raw = self.raw.saturating_sub(n);
            self.packed += packed;
        }
        while self.packed > budget {
            let Some(t) = all_tables(&mut self.tables, &mut self.long, &mut self.lost)
                .max_by(|a, b| a.flush_score().total_cmp(&b.flush_score()))
            else {
                break;
            };
            if t.tape.packed() == 0 {
                self.packed = 0;
                break;
            }
            let (p, r) = (t.tape.packed(), t.tape.capacity());
            t.volume += p as u64;
            let job = t.job();
            self.packed -= p;
            self.raw -= r;
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
            self.encoder.send(t.job())?;
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
        let counts = self.encoder.finish()?;
        let (mismatches, unknown) = (counts.mismatches, counts.unknown);
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
