//! One trace as a Parquet dataset.
//!
//! Files (the default layout, [`Layout::Flat`]):
//! - `SYSTEM__EVENT.parquet`: one wide table per event class that occurs:
//!   `ts` (Int64 ns, as `report --json`), `ts_raw` (the stored clock value,
//!   for formats where it differs), `cpu`, `pid`, `comm` (the task's name at
//!   that time, see [`crate::comm`]), `buffer` (trace.dat instances) or
//!   `stream` (CTF), then the payload's fields as columns (a field whose name
//!   is taken by one of those gets a `field_` prefix) and the other scopes
//!   (`common_context`, `specific_context`, `packet_context`) as one
//!   structure column each.
//! - `events.parquet`: every event, long: `ts`, `cpu`, `pid`, `comm`,
//!   `system`, `event`, `buffer`/`stream`, and `fields` (the payload as JSON
//!   text, as `report --json` writes it).
//! - `lost.parquet`: lost-event markers (`ts`, `cpu`, `buffer`/`stream`,
//!   `count`).
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
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::SortingColumn;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use serde_json::{json, Map, Value as Json};
use tracemux_core::model::{visit_fields, Event, EventClass, Format, Lost, PrintCtx, TraceMeta};
use tracemux_core::typed::FieldType;

use crate::columns::{Columns, NodeId};
use crate::comm::{self, Comms};
use crate::{Error, Result};

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
            memory_budget: 24 << 20,
            events_table: true,
            source: Vec::new(),
        }
    }
}

/// The columns every table of a trace starts with.
struct Common {
    ts: NodeId,
    ts_raw: Option<NodeId>,
    cpu: NodeId,
    pid: NodeId,
    comm: NodeId,
    buffer: Option<NodeId>,
    stream: Option<NodeId>,
}

/// Which of `buffer`/`stream` a trace's tables have.
#[derive(Clone, Copy)]
struct Place {
    buffer: bool,
    stream: bool,
}

impl Place {
    fn of(meta: &TraceMeta) -> Place {
        Place {
            buffer: meta.format == Some(Format::TraceDat) && meta.buffers.len() > 1,
            stream: meta.format == Some(Format::Ctf),
        }
    }
}

impl Common {
    fn add(c: &mut Columns, place: Place, raw_ts: bool) -> Common {
        Common {
            ts: c.add("ts", &FieldType::s(64)),
            ts_raw: raw_ts.then(|| c.add("ts_raw", &FieldType::u(64))),
            cpu: c.add("cpu", &FieldType::u(32)),
            pid: c.add("pid", &FieldType::s(32)),
            comm: c.add_dict("comm"),
            buffer: place.buffer.then(|| c.add_dict("buffer")),
            stream: place.stream.then(|| c.add("stream", &FieldType::u(32))),
        }
    }

    fn set(&self, c: &mut Columns, meta: &TraceMeta, comms: &Comms, ev: &Event<'_>) {
        use tracemux_core::model::Value;
        c.set(self.ts, Value::Signed(ev.ts as i64));
        if let (Some(id), Some(raw)) = (self.ts_raw, ev.raw_ts) {
            c.set(id, Value::Unsigned(raw));
        }
        c.set(self.cpu, Value::Unsigned(u64::from(ev.cpu)));
        c.set(self.pid, Value::Signed(i64::from(ev.pid)));
        if let Some(name) = comms.get(meta, ev.pid) {
            c.set_str(self.comm, name);
        }
        self.place(c, meta, ev.stream);
    }

    fn place(&self, c: &mut Columns, meta: &TraceMeta, stream: u32) {
        if let Some(id) = self.buffer {
            c.set_str(id, buffer_name(meta, stream));
        }
        if let Some(id) = self.stream {
            c.set(id, tracemux_core::model::Value::Unsigned(u64::from(stream)));
        }
    }
}

fn buffer_name(meta: &TraceMeta, stream: u32) -> &str {
    meta.streams
        .get(stream as usize)
        .and_then(|s| meta.buffers.get(s.buffer as usize))
        .map_or("", |b| b.name.as_str())
}

/// One table being written.
struct Table {
    name: String,
    path: PathBuf,
    cols: Columns,
    schema: SchemaRef,
    writer: Option<ArrowWriter<BufWriter<File>>>,
    rows: u64,
    system: Option<String>,
    event: Option<String>,
    /// The last `ts` written and whether they came in order.
    last_ts: i64,
    sorted: bool,
}

impl Table {
    fn new(name: String, path: PathBuf, cols: Columns) -> Table {
        let schema = Arc::new(Schema::new(cols.fields()));
        Table {
            name,
            path,
            cols,
            schema,
            writer: None,
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

    fn open(&mut self, opts: &WriteOptions) -> Result<&mut ArrowWriter<BufWriter<File>>> {
        if self.writer.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
            }
            let f = File::create(&self.path).map_err(|e| io(&self.path, e))?;
            let w = ArrowWriter::try_new(
                BufWriter::with_capacity(1 << 20, f),
                self.schema.clone(),
                Some(properties(opts)?),
            )
            .map_err(|e| pq(&self.path, e))?;
            self.writer = Some(w);
        }
        Ok(self.writer.as_mut().expect("opened above"))
    }

    /// Hand the built rows to the Parquet writer.
    fn flush_rows(&mut self, opts: &WriteOptions) -> Result<()> {
        if self.cols.rows() == 0 && self.writer.is_some() {
            return Ok(());
        }
        let arrays = self.cols.finish();
        let batch =
            RecordBatch::try_new(self.schema.clone(), arrays).map_err(|e| Error::Arrow {
                table: self.name.clone(),
                source: e,
            })?;
        let path = self.path.clone();
        let w = self.open(opts)?;
        w.write(&batch).map_err(|e| pq(&path, e))
    }

    fn in_progress(&self) -> usize {
        self.writer.as_ref().map_or(0, |w| w.memory_size())
    }

    fn close(&mut self, opts: &WriteOptions) -> Result<()> {
        self.flush_rows(opts)?;
        if let Some(w) = self.writer.take() {
            let f = w.into_inner().map_err(|e| pq(&self.path, e))?;
            f.into_inner()
                .map_err(|e| io(&self.path, e.into_error()))?
                .sync_all()
                .ok();
        }
        Ok(())
    }
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

/// The long `events` table's own columns.
struct Long {
    common: Common,
    system: NodeId,
    event: NodeId,
    fields: NodeId,
}

/// Writes the tables of one trace.
pub struct TablesWriter {
    dir: PathBuf,
    opts: WriteOptions,
    place: Place,
    /// Class (by address: the trace's metadata outlives the writer's use)
    /// to its table in `tables`.
    by_class: HashMap<usize, usize>,
    tables: Vec<Table>,
    /// Per table: the comm rule of its class.
    rules: Vec<Option<comm::Rule>>,
    commons: Vec<Common>,
    long: Option<(Table, Long)>,
    lost: (Table, Common, NodeId),
    comms: Comms,
    json: Vec<u8>,
    names: HashMap<String, u32>,
    events: u64,
    unknown_class: u64,
    lost_markers: u64,
    lost_events: u64,
    damage: Vec<String>,
    damage_count: u64,
}

impl TablesWriter {
    /// Write into `dir` (created if needed).
    pub fn new(dir: &Path, meta: &TraceMeta, opts: WriteOptions) -> Result<TablesWriter> {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let place = Place::of(meta);
        let long = opts.events_table.then(|| {
            let mut c = Columns::new();
            let common = Common::add(&mut c, place, false);
            let l = Long {
                system: c.add_dict("system"),
                event: c.add_dict("event"),
                fields: c.add("fields", &FieldType::Str),
                common,
            };
            (
                Table::new("events".into(), Self::path(dir, &opts, "events"), c),
                l,
            )
        });
        let mut c = Columns::new();
        let common = Common::add(&mut c, place, false);
        let count = c.add("count", &FieldType::u(64));
        let lost = (
            Table::new("lost".into(), Self::path(dir, &opts, "lost"), c),
            common,
            count,
        );
        Ok(TablesWriter {
            dir: dir.to_path_buf(),
            opts,
            place,
            by_class: HashMap::new(),
            tables: Vec::new(),
            rules: Vec::new(),
            commons: Vec::new(),
            long,
            lost,
            comms: Comms::default(),
            json: Vec::new(),
            names: HashMap::new(),
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
    fn table_of(&mut self, class: &EventClass, raw_ts: bool) -> usize {
        let key = class as *const EventClass as usize;
        if let Some(&t) = self.by_class.get(&key) {
            return t;
        }
        let base = table_name(&class.system, &class.name);
        let n = self.names.entry(base.clone()).or_insert(0);
        *n += 1;
        let name = if *n == 1 {
            base
        } else {
            format!("{base}__{n}")
        };
        let mut c = Columns::new();
        let common = Common::add(&mut c, self.place, raw_ts);
        for s in &class.schema().scopes {
            c.add_scope(s.scope, &s.fields);
        }
        let mut t = Table::new(name.clone(), Self::path(&self.dir, &self.opts, &name), c);
        t.system = Some(class.system.clone());
        t.event = Some(class.name.clone());
        self.tables.push(t);
        self.rules.push(comm::rule(class));
        self.commons.push(common);
        self.by_class.insert(key, self.tables.len() - 1);
        self.tables.len() - 1
    }

    pub fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()> {
        self.events += 1;
        let table = ev.class.map(|c| self.table_of(c, ev.raw_ts.is_some()));
        // what the event says about task names holds from the event on
        // (a `sched_switch` names the task it leaves, the row's own)
        if let Some(rule) = table.and_then(|i| self.rules[i]) {
            self.comms.learn(meta, ev, rule);
        }
        if let Some((t, l)) = &mut self.long {
            t.check_order(ev.ts);
            let c = &mut t.cols;
            c.begin_row();
            l.common.set(c, meta, &self.comms, ev);
            if let Some(class) = ev.class {
                c.set_str(l.system, &class.system);
                c.set_str(l.event, &class.name);
            }
            self.json.clear();
            tracemux_render::jsonl::write_payload(&mut self.json, meta, ev);
            c.set(l.fields, tracemux_core::model::Value::Str(&self.json));
            c.end_row();
            if c.rows() >= self.opts.batch_rows {
                t.flush_rows(&self.opts)?;
                self.budget()?;
            }
        }
        let Some(i) = table else {
            self.unknown_class += 1;
            return Ok(());
        };
        let t = &mut self.tables[i];
        t.check_order(ev.ts);
        t.cols.begin_row();
        self.commons[i].set(&mut t.cols, meta, &self.comms, ev);
        let ctx = PrintCtx::of(meta, ev);
        visit_fields(ev, &ctx, &mut t.cols);
        t.cols.end_row();
        if t.cols.rows() >= self.opts.batch_rows {
            t.flush_rows(&self.opts)?;
            self.budget()?;
        }
        Ok(())
    }

    pub fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> Result<()> {
        use tracemux_core::model::Value;
        self.lost_markers += 1;
        self.lost_events += l.count.unwrap_or(0);
        let (t, common, count) = &mut self.lost;
        t.check_order(l.ts);
        let c = &mut t.cols;
        c.begin_row();
        c.set(common.ts, Value::Signed(l.ts as i64));
        c.set(common.cpu, Value::Unsigned(u64::from(l.cpu)));
        common.place(c, meta, l.stream);
        if let Some(n) = l.count {
            c.set(*count, Value::Unsigned(n));
        }
        c.end_row();
        if c.rows() >= self.opts.batch_rows {
            t.flush_rows(&self.opts)?;
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

    /// Keep the open row groups of all tables under the memory budget.
    fn budget(&mut self) -> Result<()> {
        let mut total = 0;
        let mut largest = (0, None);
        for (i, t) in self.tables.iter().enumerate() {
            let n = t.in_progress();
            total += n;
            if n > largest.0 {
                largest = (n, Some(i));
            }
        }
        let long = self.long.as_ref().map_or(0, |(t, _)| t.in_progress());
        total += long;
        if total <= self.opts.memory_budget {
            return Ok(());
        }
        let w = if long > largest.0 {
            self.long.as_mut().and_then(|(t, _)| t.writer.as_mut())
        } else {
            largest.1.and_then(|i| self.tables[i].writer.as_mut())
        };
        if let Some(w) = w {
            w.flush().map_err(|e| pq(&self.dir, e))?;
        }
        Ok(())
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
            .chain(self.long.as_mut().map(|(t, _)| t))
            .chain(std::iter::once(&mut self.lost.0));
        for t in all {
            t.close(&self.opts)?;
            mismatches += t.cols.mismatches;
            unknown += t.cols.unknown;
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

/// `SYSTEM__EVENT`, with anything but letters, digits, `_`, `-` and `.`
/// replaced by `_` (file and table names that cannot collide across
/// systems, and that SQL and shells take as they are).
pub fn table_name(system: &str, event: &str) -> String {
    let clean = |s: &str| -> String {
        let s: String = s
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if s.is_empty() {
            "_".into()
        } else {
            s
        }
    };
    format!("{}__{}", clean(system), clean(event))
}
