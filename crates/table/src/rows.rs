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
use tracemux_core::model::{
    visit_fields, Event, EventClass, Format, Lost, PrintCtx, TraceMeta, Value,
};
use tracemux_core::timeline::input_of_stream;
use tracemux_core::typed::{FieldType, Scope};

use tracemux_core::tasks::TaskTracker;

use crate::columns::{Columns, NodeId};
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
/// systems, and that SQL and shells take as they are). A class without a
/// system is `none__EVENT`, and a name that would begin with `_` or `.`
/// gets a `t` in front: Spark and Hadoop's readers skip such folders as
/// hidden (a CTF `cpu-clock` of perf was `___cpu-clock`, silently left
/// out of Spark's reads).
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
    let system = if system.is_empty() { "none" } else { system };
    let name = format!("{}__{}", clean(system), clean(event));
    if name.starts_with(['_', '.']) {
        format!("t{name}")
    } else {
        name
    }
}

/// Which class table an event's class is: its index in
/// [`TraceMeta::classes`] (its [`tracemux_core::layout::ClassId`]), or past
/// them for a class the metadata does not list (named then).
pub(crate) struct ClassIndex {
    names: Vec<String>,
    used: HashMap<String, u32>,
    /// Tables of classes the metadata does not list, by their id.
    extra: tracemux_core::layout::ClassMap<usize>,
    listed: usize,
}

impl ClassIndex {
    pub(crate) fn new(meta: &TraceMeta) -> ClassIndex {
        let mut used = HashMap::new();
        let names = meta
            .classes
            .iter()
            .map(|c| unique(&mut used, table_name(&c.system, &c.name)))
            .collect::<Vec<_>>();
        ClassIndex {
            listed: names.len(),
            names,
            used,
            extra: Default::default(),
        }
    }

    pub(crate) fn of(&mut self, meta: &TraceMeta, class: &EventClass) -> usize {
        let i = class.index.index();
        if i < self.listed && meta.classes.at(class.index).is_some() {
            return i;
        }
        let (names, used) = (&mut self.names, &mut self.used);
        *self.extra.get_or_insert_with(class.index, || {
            names.push(unique(used, table_name(&class.system, &class.name)));
            names.len() - 1
        })
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
    /// A timeline of several inputs: the input each row comes from (its
    /// path as given).
    input: Option<NodeId>,
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
            input: (!meta.inputs.is_empty()).then(|| c.add_dict("input")),
        }
    }

    fn set(&self, c: &mut Columns, meta: &TraceMeta, tasks: &TaskTracker, ev: &Event<'_>) {
        c.set(self.ts, Value::Signed(ev.ts as i64));
        if let (Some(id), Some(raw)) = (self.ts_raw, ev.raw_ts) {
            c.set(id, Value::Unsigned(raw));
        }
        c.set(self.cpu, Value::Unsigned(u64::from(ev.cpu)));
        c.set(self.pid, Value::Signed(i64::from(ev.pid)));
        if c.is_live(self.comm) {
            if let Some(name) = tasks.comm(meta, ev.pid) {
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
        if let Some(id) = self.input {
            if c.is_live(id) {
                if let Some(i) = input_of_stream(meta, stream) {
                    c.set_str(id, &meta.inputs[i].name);
                }
            }
        }
    }
}

fn buffer_name(meta: &TraceMeta, stream: u32) -> &str {
    meta.streams
        .get(stream as usize)
        .and_then(|s| meta.buffers.get(s.buffer as usize))
        .map_or("", |b| b.name.as_str())
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
    /// For a class of fixed layout (trace.dat's formats): the columns its
    /// fields go to, read straight from the record (no visit).
    flat: Option<Flat>,
    common: Common,
    body: Body,
    schema: SchemaRef,
    json: Vec<u8>,
    writer: tracemux_render::jsonl::JsonWriter,
}

impl Rows {
    /// The table `kind` of `meta`, every column.
    pub fn new(meta: &TraceMeta, kind: TableKind) -> Rows {
        Rows::new_as(meta, kind, false)
    }

    /// The table `kind` of `meta`, every column; with `portable`, in the
    /// portable schema of datasets (see [`Columns::portable`]).
    pub fn new_as(meta: &TraceMeta, kind: TableKind, portable: bool) -> Rows {
        match kind {
            TableKind::Class(i) => match meta.classes.iter().nth(i) {
                Some(c) => Rows::class_as(meta, c, portable),
                None => Rows::build(meta, portable, |_| Body::Class),
            },
            TableKind::Events => Rows::build(meta, portable, |c| Body::Events {
                system: c.add_dict("system"),
                event: c.add_dict("event"),
                fields: c.add("fields", &FieldType::Str),
            }),
            TableKind::Lost => Rows::build(meta, portable, |c| Body::Lost {
                count: c.add("count", &FieldType::u(64)),
            }),
        }
    }

    /// The table of the events of `class`.
    pub fn class(meta: &TraceMeta, class: &EventClass) -> Rows {
        Rows::class_as(meta, class, false)
    }

    /// The table of the events of `class`, in the portable schema with
    /// `portable`.
    pub fn class_as(meta: &TraceMeta, class: &EventClass, portable: bool) -> Rows {
        let mut r = Rows::build(meta, portable, |c| {
            for s in &class.schema().scopes {
                c.add_scope(s.scope, &s.fields);
            }
            Body::Class
        });
        r.flat = Flat::of(&r.cols, class);
        r
    }

    fn build(meta: &TraceMeta, portable: bool, body: impl FnOnce(&mut Columns) -> Body) -> Rows {
        let mut cols = if portable {
            Columns::portable()
        } else {
            Columns::new()
        };
        let common = Common::add(&mut cols, meta);
        let body = body(&mut cols);
        let schema = Arc::new(Schema::new(cols.fields()));
        Rows {
            cols,
            flat: None,
            common,
            body,
            schema,
            json: Vec::new(),
            writer: Default::default(),
        }
    }

    /// Rename top-level column `name` to `to` (see [`Columns::rename`]).
    pub fn rename(&mut self, name: &str, to: &str) {
        self.cols.rename(name, to);
        self.schema = Arc::new(Schema::new(self.cols.fields()));
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

    /// Whether the table shows task names (and so needs a
    /// [`TaskTracker`]).
    pub fn wants_comm(&self) -> bool {
        self.cols.is_live(self.common.comm)
    }

    /// Add event `ev` as a row (class tables: its fields as columns;
    /// `events`: its class and payload as JSON).
    pub fn event(&mut self, meta: &TraceMeta, tasks: &TaskTracker, ev: &Event<'_>) {
        let c = &mut self.cols;
        c.begin_row();
        self.common.set(c, meta, tasks, ev);
        match self.body {
            Body::Class => match (&self.flat, ev.class) {
                (Some(f), Some(class)) if ev.tape.is_none() => f.row(c, class, ev),
                _ => {
                    let ctx = PrintCtx::of(meta, ev);
                    visit_fields(ev, &ctx, c);
                }
            },
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

/// Where the fields of a class of fixed layout go: the column of each
/// common field (in the `common_context` structure) and of each payload
/// field, in the order of the class's field definitions.
struct Flat {
    common: Option<(NodeId, Vec<NodeId>)>,
    payload: Vec<Option<NodeId>>,
}

impl Flat {
    /// The flat path of `class`'s table, when its events are read from
    /// their records (no schema of their own, no decoder of their own).
    fn of(cols: &Columns, class: &EventClass) -> Option<Flat> {
        if class.schema.is_some() {
            return None;
        }
        let payload = cols.payload_columns(class.fields.len())?;
        let common = match cols.scope_column(Scope::CommonContext) {
            Some(id) => {
                let m = cols.members(id);
                if m.len() != class.common_fields.len() {
                    return None;
                }
                Some((id, m.to_vec()))
            }
            None => None,
        };
        Some(Flat { common, payload })
    }

    /// The fields of `ev`'s record into the current row, as a visit of
    /// them would put them.
    fn row(&self, c: &mut Columns, class: &EventClass, ev: &Event<'_>) {
        let val = |f: &tracemux_core::model::FieldDef| {
            f.value(ev.data, ev.endian).unwrap_or(Value::Bytes(&[]))
        };
        // (a column projected away gets nothing)
        if let Some((id, members)) = self.common.as_ref().filter(|(id, _)| c.is_live(*id)) {
            c.open(*id);
            for (f, &m) in class.common_fields.iter().zip(members) {
                c.put(m, val(f));
            }
        }
        for (f, m) in class.fields.iter().zip(&self.payload) {
            if let Some(m) = m.filter(|&m| c.is_live(m)) {
                c.put(m, val(f));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::table_name;

    #[test]
    fn table_names_are_never_hidden() {
        assert_eq!(table_name("sched", "sched_switch"), "sched__sched_switch");
        assert_eq!(table_name("", "cpu-clock"), "none__cpu-clock");
        assert_eq!(table_name("_x", "e"), "t_x__e");
        assert_eq!(table_name(".x", "e"), "t.x__e");
        assert_eq!(table_name("a b", "c/d"), "a_b__c_d");
    }
}
