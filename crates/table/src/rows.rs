//! The tables of a trace and how a record becomes a row of one: shared by
//! the Parquet writer ([`crate::writer`]) and the scanner ([`crate::scan`]),
//! so a table has the same columns on disk and live.
//!
//! Every table starts with the common columns: `ts` (Int64 ns, as `report
//! --json`), `ts_raw` (the stored clock value: LTT's cycle counts), `cpu`,
//! `pid`, `comm` (the task's name at that time, see [`crate::comm`]),
//! `buffer` (trace.dat with instances) or `stream` (CTF). Then:
//! - a class table (`SYSTEM__EVENT`): the payload's fields as columns (a
//!   field whose name is taken gets a `field_` prefix), and the other scopes
//!   (`common_context`, `specific_context`, `packet_context`) as one
//!   structure column each;
//! - `events`: `system`, `event`, and `fields` (the payload as JSON text,
//!   as `report --json` writes it);
//! - `lost`: `count`.
//!
//! What tables a trace has, and their schemas, follow from its
//! [`TraceMeta`] alone: one table per event class of
//! [`TraceMeta::classes`] (in their order; a name taken by an earlier
//! class gets `__2`, `__3`...), then `events` and `lost`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use tracemux_core::layout::ClassLayout;
use tracemux_core::model::{
    visit_fields, Event, EventClass, Format, Lost, PrintCtx, TraceMeta, Value,
};
use tracemux_core::typed::{FieldType, Scope};

use crate::columns::{Columns, NodeId};
use crate::comm::Comms;
use crate::tape::{Slot, Tape, TapeReader};
use crate::{Error, Result};

/// What a table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKind {
    /// The events of the class at this index of [`TraceMeta::classes`].
    Class(usize),
    /// Every event, long.
    Events,
    /// Lost-event markers.
    Lost,
}

/// A table of a trace, as [`table_defs`] lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDef {
    pub name: String,
    pub kind: TableKind,
    /// The class's system and name (class tables).
    pub system: Option<String>,
    pub event: Option<String>,
}

/// The tables of a trace: one per event class, then `events` and `lost`.
pub fn table_defs(meta: &TraceMeta) -> Vec<TableDef> {
    let names = class_names(meta);
    let mut v: Vec<TableDef> = meta
        .classes
        .iter()
        .zip(names)
        .enumerate()
        .map(|(i, (c, name))| TableDef {
            name,
            kind: TableKind::Class(i),
            system: Some(c.system.clone()),
            event: Some(c.name.clone()),
        })
        .collect();
    for (name, kind) in [("events", TableKind::Events), ("lost", TableKind::Lost)] {
        v.push(TableDef {
            name: name.into(),
            kind,
            system: None,
            event: None,
        });
    }
    v
}

/// Every table of a trace with its Arrow schema, from its metadata alone
/// (nothing is decoded).
pub fn tables(meta: &TraceMeta) -> Vec<(String, SchemaRef)> {
    table_defs(meta)
        .into_iter()
        .map(|d| {
            let schema = Rows::new(meta, d.kind).schema.clone();
            (d.name, schema)
        })
        .collect()
}

/// The table name of each class of `meta`, in order, made unique.
fn class_names(meta: &TraceMeta) -> Vec<String> {
    let mut used: HashMap<String, u32> = HashMap::new();
    meta.classes
        .iter()
        .map(|c| unique(&mut used, table_name(&c.system, &c.name)))
        .collect()
}

fn unique(used: &mut HashMap<String, u32>, base: String) -> String {
    let n = used.entry(base.clone()).or_insert(0);
    *n += 1;
    if *n == 1 {
        base
    } else {
        format!("{base}__{n}")
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

/// Which class table an event's class is: its index in
/// [`TraceMeta::classes`] (found by address, else by id and name), or past
/// them for a class the metadata does not list (named then).
pub(crate) struct ClassIndex {
    by_addr: HashMap<usize, usize>,
    names: Vec<String>,
    used: HashMap<String, u32>,
}

impl ClassIndex {
    pub(crate) fn new(meta: &TraceMeta) -> ClassIndex {
        let by_addr = meta
            .classes
            .iter()
            .enumerate()
            .map(|(i, c)| (c as *const EventClass as usize, i))
            .collect();
        let mut used = HashMap::new();
        let names = meta
            .classes
            .iter()
            .map(|c| unique(&mut used, table_name(&c.system, &c.name)))
            .collect();
        ClassIndex {
            by_addr,
            names,
            used,
        }
    }

    pub(crate) fn of(&mut self, meta: &TraceMeta, class: &EventClass) -> usize {
        let key = class as *const EventClass as usize;
        if let Some(&i) = self.by_addr.get(&key) {
            return i;
        }
        let i = match meta
            .classes
            .iter()
            .position(|c| c.id == class.id && c.system == class.system && c.name == class.name)
        {
            Some(i) => i,
            None => {
                let name = unique(&mut self.used, table_name(&class.system, &class.name));
                self.names.push(name);
                self.names.len() - 1
            }
        };
        self.by_addr.insert(key, i);
        i
    }

    pub(crate) fn name(&self, i: usize) -> &str {
        &self.names[i]
    }
}

/// Whether the tables of `meta` have a `ts_raw` column: formats whose
/// events carry their stored clock value ([`Event::raw_ts`]).
fn raw_ts(meta: &TraceMeta) -> bool {
    meta.format == Some(Format::Ltt)
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

impl Common {
    fn add(c: &mut Columns, meta: &TraceMeta) -> Common {
        let buffer = meta.format == Some(Format::TraceDat) && meta.buffers.len() > 1;
        let stream = meta.format == Some(Format::Ctf);
        Common {
            ts: c.add("ts", &FieldType::s(64)),
            ts_raw: raw_ts(meta).then(|| c.add("ts_raw", &FieldType::u(64))),
            cpu: c.add("cpu", &FieldType::u(32)),
            pid: c.add("pid", &FieldType::s(32)),
            comm: c.add_dict("comm"),
            buffer: buffer.then(|| c.add_dict("buffer")),
            stream: stream.then(|| c.add("stream", &FieldType::u(32))),
        }
    }

    fn set(&self, c: &mut Columns, meta: &TraceMeta, comms: &Comms, ev: &Event<'_>) {
        c.set(self.ts, Value::Signed(ev.ts as i64));
        if let (Some(id), Some(raw)) = (self.ts_raw, ev.raw_ts) {
            c.set(id, Value::Unsigned(raw));
        }
        c.set(self.cpu, Value::Unsigned(u64::from(ev.cpu)));
        c.set(self.pid, Value::Signed(i64::from(ev.pid)));
        if c.is_live(self.comm) {
            if let Some(name) = comms.get(meta, ev.pid) {
                c.set_str(self.comm, name);
            }
        }
        self.place(c, meta, ev.stream);
    }

    fn place(&self, c: &mut Columns, meta: &TraceMeta, stream: u32) {
        if let Some(id) = self.buffer {
            if c.is_live(id) {
                c.set_str(id, buffer_name(meta, stream));
            }
        }
        if let Some(id) = self.stream {
            c.set(id, Value::Unsigned(u64::from(stream)));
        }
    }
}

fn buffer_name(meta: &TraceMeta, stream: u32) -> &str {
    meta.streams
        .get(stream as usize)
        .and_then(|s| meta.buffers.get(s.buffer as usize))
        .map_or("", |b| b.name.as_str())
}

fn replay_place(c: &mut Columns, k: &Common, r: &mut TapeReader<'_>) {
    if let Some(id) = k.buffer {
        if let Some(b) = r.slot(Slot::Buffer) {
            c.set(id, Value::Str(b));
        }
    }
    if let Some(id) = k.stream {
        c.set(id, Value::Unsigned(r.u()));
    }
}

/// What a table records of a record on its [`Tape`] (what [`Rows::event`]
/// and [`Rows::lost`] take from it), for [`Rows::replay`] on another
/// thread.
pub(crate) struct Recipe {
    raw_ts: bool,
    buffer: bool,
    stream: bool,
    body: RecipeBody,
    /// The scopes besides the payload that have a column.
    scopes: Vec<Scope>,
    json: Vec<u8>,
    writer: tracemux_render::jsonl::JsonWriter,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum RecipeBody {
    Class,
    Events,
    Lost,
}

impl Recipe {
    /// Record event `ev` as a row.
    pub(crate) fn event(
        &mut self,
        tape: &mut Tape,
        meta: &TraceMeta,
        comms: &Comms,
        ev: &Event<'_>,
    ) {
        tape.put_ts(ev.ts as i64);
        if self.body == RecipeBody::Lost {
            // a lost table has no event rows: kept as a marker without a
            // count, which is what the scanner's `Rows::event` shows of it
            tape.put_u(u64::from(ev.cpu));
            self.place(tape, meta, ev.stream);
            tape.put_opt(None);
            return tape.end_row();
        }
        if self.raw_ts {
            tape.put_opt(ev.raw_ts);
        }
        tape.put_u(u64::from(ev.cpu));
        tape.put_s(i64::from(ev.pid));
        tape.put_slot(Slot::Comm, comms.get(meta, ev.pid).map(str::as_bytes));
        self.place(tape, meta, ev.stream);
        match self.body {
            RecipeBody::Class => {
                let ctx = PrintCtx::of(meta, ev);
                visit_fields(ev, &ctx, &mut tape.recorder(&self.scopes));
                tape.end_fields();
            }
            RecipeBody::Events => {
                let class = ev.class;
                tape.put_slot(Slot::System, class.map(|c| c.system.as_bytes()));
                tape.put_slot(Slot::Event, class.map(|c| c.name.as_bytes()));
                self.json.clear();
                self.writer.payload(&mut self.json, meta, ev);
                tape.put_bytes(&self.json);
            }
            RecipeBody::Lost => {}
        }
        tape.end_row();
    }

    /// Record lost-event marker `l` as a row (of the `lost` table).
    pub(crate) fn lost(&mut self, tape: &mut Tape, meta: &TraceMeta, l: &Lost) {
        tape.put_ts(l.ts as i64);
        tape.put_u(u64::from(l.cpu));
        self.place(tape, meta, l.stream);
        tape.put_opt(l.count);
        tape.end_row();
    }

    fn place(&self, tape: &mut Tape, meta: &TraceMeta, stream: u32) {
        if self.buffer {
            tape.put_slot(Slot::Buffer, Some(buffer_name(meta, stream).as_bytes()));
        }
        if self.stream {
            tape.put_u(u64::from(stream));
        }
    }
}

/// A table's own columns after the common ones.
enum Body {
    Class,
    Events {
        system: NodeId,
        event: NodeId,
        fields: NodeId,
    },
    Lost {
        count: NodeId,
    },
}

/// The rows of one table being built: its columns and how a record fills
/// them.
pub struct Rows {
    cols: Columns,
    /// The layout of the class of a class table (empty for the others):
    /// what recorded rows are replayed with.
    layout: ClassLayout,
    common: Common,
    body: Body,
    schema: SchemaRef,
    json: Vec<u8>,
    writer: tracemux_render::jsonl::JsonWriter,
}

impl Rows {
    /// The table `kind` of `meta`, every column.
    pub fn new(meta: &TraceMeta, kind: TableKind) -> Rows {
        match kind {
            TableKind::Class(i) => match meta.classes.iter().nth(i) {
                Some(c) => Rows::class(meta, c),
                None => Rows::build(meta, |_| Body::Class),
            },
            TableKind::Events => Rows::build(meta, |c| Body::Events {
                system: c.add_dict("system"),
                event: c.add_dict("event"),
                fields: c.add("fields", &FieldType::Str),
            }),
            TableKind::Lost => Rows::build(meta, |c| Body::Lost {
                count: c.add("count", &FieldType::u(64)),
            }),
        }
    }

    /// The table of the events of `class`.
    pub fn class(meta: &TraceMeta, class: &EventClass) -> Rows {
        let mut r = Rows::build(meta, |c| {
            for s in &class.schema().scopes {
                c.add_scope(s.scope, &s.fields);
            }
            Body::Class
        });
        r.layout = class.layout().clone();
        r
    }

    fn build(meta: &TraceMeta, body: impl FnOnce(&mut Columns) -> Body) -> Rows {
        let mut cols = Columns::new();
        let common = Common::add(&mut cols, meta);
        let body = body(&mut cols);
        let schema = Arc::new(Schema::new(cols.fields()));
        Rows {
            cols,
            layout: ClassLayout::empty(),
            common,
            body,
            schema,
            json: Vec::new(),
            writer: Default::default(),
        }
    }

    /// Keep only the columns `keep` says yes to (see
    /// [`Columns::project`]).
    pub fn project(&mut self, keep: &dyn Fn(&str) -> bool) {
        self.cols.project(keep);
        self.schema = Arc::new(Schema::new(self.cols.fields()));
    }

    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Rows built and not yet taken.
    pub fn rows(&self) -> usize {
        self.cols.rows()
    }

    pub fn columns(&self) -> &Columns {
        &self.cols
    }

    /// Whether the table shows task names (and so needs [`Comms`]).
    pub fn wants_comm(&self) -> bool {
        self.cols.is_live(self.common.comm)
    }

    /// Add event `ev` as a row (class tables: its fields as columns;
    /// `events`: its class and payload as JSON).
    pub fn event(&mut self, meta: &TraceMeta, comms: &Comms, ev: &Event<'_>) {
        let c = &mut self.cols;
        c.begin_row();
        self.common.set(c, meta, comms, ev);
        match self.body {
            Body::Class => {
                let ctx = PrintCtx::of(meta, ev);
                visit_fields(ev, &ctx, c);
            }
            Body::Events {
                system,
                event,
                fields,
            } => {
                if let Some(class) = ev.class {
                    c.set_str(system, &class.system);
                    c.set_str(event, &class.name);
                }
                if c.is_live(fields) {
                    self.json.clear();
                    self.writer.payload(&mut self.json, meta, ev);
                    c.set(fields, Value::Str(&self.json));
                }
            }
            Body::Lost { .. } => {}
        }
        c.end_row();
    }

    /// Add lost-event marker `l` as a row.
    pub fn lost(&mut self, meta: &TraceMeta, l: &Lost) {
        let c = &mut self.cols;
        c.begin_row();
        c.set(self.common.ts, Value::Signed(l.ts as i64));
        c.set(self.common.cpu, Value::Unsigned(u64::from(l.cpu)));
        self.common.place(c, meta, l.stream);
        if let (Body::Lost { count }, Some(n)) = (&self.body, l.count) {
            c.set(*count, Value::Unsigned(n));
        }
        c.end_row();
    }

    /// How this table's rows are recorded on a [`Tape`] (and read back by
    /// [`Rows::replay`]).
    pub(crate) fn recipe(&self) -> Recipe {
        Recipe {
            raw_ts: self.common.ts_raw.is_some(),
            buffer: self.common.buffer.is_some(),
            stream: self.common.stream.is_some(),
            body: match self.body {
                Body::Class => RecipeBody::Class,
                Body::Events { .. } => RecipeBody::Events,
                Body::Lost { .. } => RecipeBody::Lost,
            },
            scopes: self.cols.scopes().collect(),
            json: Vec::new(),
            writer: Default::default(),
        }
    }

    /// Add the next row recorded on a tape by this table's [`Recipe`]:
    /// the row [`Rows::event`] (or [`Rows::lost`]) would have built from
    /// the record.
    pub(crate) fn replay(&mut self, r: &mut TapeReader<'_>) {
        let c = &mut self.cols;
        let k = &self.common;
        c.begin_row();
        c.set(k.ts, Value::Signed(r.ts()));
        if let Body::Lost { count } = self.body {
            c.set(k.cpu, Value::Unsigned(r.u()));
            replay_place(c, k, r);
            if let Some(n) = r.opt() {
                c.set(count, Value::Unsigned(n));
            }
            c.end_row();
            return;
        }
        if let Some(id) = k.ts_raw {
            if let Some(raw) = r.opt() {
                c.set(id, Value::Unsigned(raw));
            }
        }
        c.set(k.cpu, Value::Unsigned(r.u()));
        c.set(k.pid, Value::Signed(r.s()));
        if let Some(name) = r.slot(Slot::Comm) {
            c.set(k.comm, Value::Str(name));
        }
        replay_place(c, k, r);
        match self.body {
            Body::Class => r.fields(&self.layout, c),
            Body::Events {
                system,
                event,
                fields,
            } => {
                if let Some(s) = r.slot(Slot::System) {
                    c.set(system, Value::Str(s));
                }
                if let Some(e) = r.slot(Slot::Event) {
                    c.set(event, Value::Str(e));
                }
                c.set(fields, Value::Str(r.bytes()));
            }
            Body::Lost { .. } => {}
        }
        c.end_row();
    }

    /// Take the rows built so far as a batch of table `name`.
    pub fn batch(&mut self, name: &str) -> Result<RecordBatch> {
        let rows = self.cols.rows();
        let arrays = self.cols.finish();
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(self.schema.clone(), arrays, &opts).map_err(|e| {
            Error::Arrow {
                table: name.to_string(),
                source: e,
            }
        })
    }
}
