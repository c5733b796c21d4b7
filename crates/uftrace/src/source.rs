//! A uftrace recording in the common event model
//! ([`tracemux_core::model`]), so that every sink (JSON lines, the
//! babeltrace2-style printer, the converters) can consume it.
//!
//! Records of all tasks and the perf events come merged by time exactly as
//! `uftrace replay` takes them ([`Merger`], no filter). How uftrace maps
//! onto the model:
//!
//! | model | uftrace |
//! |---|---|
//! | `StreamInfo` / `Event::stream` | one per task, in `info` task order ([`UftraceData::tasks`]) |
//! | `Event::ts` | the record's timestamp (ns, clock `mono`, origin not the epoch) |
//! | `Event::pid` | the task's tid; `cpu` 0 (uftrace does not record it) |
//! | class `uftrace:entry` | `[entry]` records: common context `{tid, depth}`, payload `{addr, name, args}` |
//! | class `uftrace:exit` | `[exit]` records: common context `{tid, depth}`, payload `{addr, name, retval}` |
//! | class `linux:*` | perf events (sched-in/out, task-new/exit/name), when the recording has `PERF_EVENT` |
//! | class `PROVIDER:EVENT` | user (SDT) events declared in `events.txt` |
//! | class `read:*`/`diff:*`/`watch:cpu` | builtin events, when the command line asked for them (`read=`/`diff=` triggers, `--watch`) |
//! | class `uftrace:event` | any other event id: `{id, data}` |
//! | `Record::Lost` | `[lost]` records (`count`: the lost count uftrace stored, when positive) |
//! | `Record::Damage` | damage of the data files (and of the directory, found when it was opened) |
//!
//! # Arguments and return values
//!
//! Which values a record carries depends on the function (its argspec),
//! while a class's schema is fixed up front. `args` is therefore a dynamic
//! array whose element is a variant with one option per kind of value an
//! argspec can store ([`VALUE_OPTIONS`]: `s8`..`s64` for `i`/`d`, `u8`..`u64`
//! for `u`, `x8`..`x64` for `x`, `f32`/`f64`/`f80` for floats, `char`, `str`,
//! `std_string`, `null` for a NULL string, `ptr`, `enum` (`{value, text}`),
//! `struct` (`{type, data}`), `raw` for sizes no kind has); `retval` is an
//! optional of the same variant. Every value keeps its recorded type and
//! size, and a sink that knows the variant sees exactly what uftrace stored
//! (one exception, as uftrace prints it: an `arg`/`retval` without a format,
//! register-wide, whose value is a negative 32-bit `int` is an `s32`).
//! uftrace does not store durations: exits carry none.
//!
//! Values are recorded into one [`FieldTape`] that the source owns and
//! reuses (events borrow it): no allocation per event once it has grown,
//! except for the text of `enum` values.

use std::collections::VecDeque;
use std::sync::Arc;

use tracemux_core::error::{Error, ErrorKind, Result};
use tracemux_core::layout::{ClassLayout, FieldId};
use tracemux_core::model::{
    Base, BufferInfo, ClassTable, ClockInfo, Event, EventClass, FieldVisitor, Format, Lost,
    Progress, Record, RecordSource, StreamInfo, TraceMeta, Value,
};
use tracemux_core::typed::{
    ArrayLen, ClassSchema, FieldSchema, FieldTape, FieldType, IntType, Scope,
};
use tracemux_core::Endian;

use crate::argspec::{ArgFmt, ArgSpec};
use crate::data::UftraceData;
use crate::events::id;
use crate::header::feat;
use crate::merge::{MergeOptions, Merger, Source};
use crate::perf::{PerfEvent, PerfKind};
use crate::record::{Damage, Kind};
use crate::report::walk::ArgCtx;
use crate::symbols::Symbol;

/// Class id of `uftrace:entry`.
pub const CLASS_ENTRY: u32 = 0;
/// Class id of `uftrace:exit`.
pub const CLASS_EXIT: u32 = 1;
/// Class id of `uftrace:event` (event ids no other class describes).
pub const CLASS_EVENT: u32 = 2;

/// The options of the argument/return value variant, in schema order.
pub const VALUE_OPTIONS: [&str; 23] = [
    "s8",
    "s16",
    "s32",
    "s64",
    "u8",
    "u16",
    "u32",
    "u64",
    "x8",
    "x16",
    "x32",
    "x64",
    "f32",
    "f64",
    "f80",
    "char",
    "str",
    "std_string",
    "null",
    "ptr",
    "enum",
    "struct",
    "raw",
];

/// The variant of one argument or return value (see the module docs).
pub fn value_type() -> FieldType {
    let opts = VALUE_OPTIONS
        .iter()
        .map(|&o| {
            let ty = match o {
                "s8" => FieldType::s(8),
                "s16" => FieldType::s(16),
                "s32" => FieldType::s(32),
                "s64" => FieldType::s(64),
                "u8" => FieldType::u(8),
                "u16" => FieldType::u(16),
                "u32" => FieldType::u(32),
                "u64" => FieldType::u(64),
                "x8" => FieldType::Int(IntType::hex(8, false)),
                "x16" => FieldType::Int(IntType::hex(16, false)),
                "x32" => FieldType::Int(IntType::hex(32, false)),
                "x64" | "ptr" => FieldType::Int(IntType::hex(64, false)),
                "f32" => FieldType::Float { bits: 32 },
                // an x87 long double, converted to binary64
                "f64" | "f80" => FieldType::Float { bits: 64 },
                "char" | "str" | "std_string" => FieldType::Str,
                "null" => FieldType::Struct(Vec::new()),
                "enum" => FieldType::Struct(vec![
                    FieldSchema::new("value", FieldType::s(32)),
                    FieldSchema::new("text", FieldType::Str),
                ]),
                "struct" => FieldType::Struct(vec![
                    FieldSchema::new("type", FieldType::Str),
                    FieldSchema::new("data", FieldType::Blob),
                ]),
                _ => FieldType::Blob,
            };
            FieldSchema::new(o, ty)
        })
        .collect();
    FieldType::Variant(opts)
}

fn common_context() -> Vec<FieldSchema> {
    vec![
        FieldSchema::new("tid", FieldType::s(32)),
        FieldSchema::new("depth", FieldType::u(16)),
    ]
}

/// The schema of a function entry or exit: the task context, then the
/// function's address and name and `values`.
fn function_schema(values: FieldSchema) -> ClassSchema {
    let mut s = ClassSchema::default();
    s.push(Scope::CommonContext, common_context());
    let p = vec![
        FieldSchema::new("addr", FieldType::Int(IntType::hex(64, false))),
        FieldSchema::new("name", FieldType::Str),
        values,
    ];
    s.push(Scope::Payload, p);
    s
}

/// The schema of `uftrace:entry`.
pub fn entry_schema() -> ClassSchema {
    function_schema(FieldSchema::new(
        "args",
        FieldType::Array {
            elem: Box::new(value_type()),
            len: ArrayLen::Dynamic,
        },
    ))
}

/// The schema of `uftrace:exit`.
pub fn exit_schema() -> ClassSchema {
    function_schema(FieldSchema::new(
        "retval",
        FieldType::Optional(Box::new(value_type())),
    ))
}

/// Payload fields of an event id (`None`: the generic `{id, data}`).
fn event_fields(ev: u32) -> Option<Vec<FieldSchema>> {
    let u = |n: &str| FieldSchema::new(n, FieldType::u(64));
    let s32 = |n: &str| FieldSchema::new(n, FieldType::s(32));
    Some(match ev {
        id::PERF_SCHED_IN | id::PERF_SCHED_OUT | id::PERF_SCHED_OUT_PREEMPT => Vec::new(),
        id::PERF_TASK | id::PERF_EXIT => vec![s32("pid"), s32("ppid")],
        id::PERF_COMM => vec![
            s32("pid"),
            FieldSchema::new("exec", FieldType::Bool),
            FieldSchema::new("comm", FieldType::Str),
        ],
        id::READ_PROC_STATM | id::DIFF_PROC_STATM => vec![u("vmsize"), u("vmrss"), u("shared")],
        id::READ_PAGE_FAULT | id::DIFF_PAGE_FAULT => vec![u("major"), u("minor")],
        id::READ_PMU_CYCLE | id::DIFF_PMU_CYCLE => vec![u("cycles"), u("instructions")],
        id::READ_PMU_CACHE | id::DIFF_PMU_CACHE => vec![u("refers"), u("misses")],
        id::READ_PMU_BRANCH | id::DIFF_PMU_BRANCH => vec![u("branch"), u("misses")],
        id::WATCH_CPU => vec![s32("cpu")],
        id::EXTERN_DATA => vec![FieldSchema::new("msg", FieldType::Str)],
        x if x >= id::USER => vec![FieldSchema::new("data", FieldType::Str)],
        _ => return None,
    })
}

fn generic_event_fields() -> Vec<FieldSchema> {
    vec![
        FieldSchema::new("id", FieldType::u(32)),
        FieldSchema::new("data", FieldType::Blob),
    ]
}

fn class(
    id: u32,
    full_name: &str,
    common: Vec<FieldSchema>,
    payload: Vec<FieldSchema>,
) -> EventClass {
    let (system, name) = full_name.split_once(':').unwrap_or(("uftrace", full_name));
    let mut s = ClassSchema::default();
    s.push(Scope::CommonContext, common);
    s.push(Scope::Payload, payload);
    EventClass::with_schema(id, system, name, s)
}

/// The event ids the recording defines (see the module docs), in class
/// order.
fn declared_events(data: &UftraceData) -> Vec<u32> {
    let mut ids = Vec::new();
    if data.header.feat_mask & feat::PERF_EVENT != 0 {
        ids.extend([
            id::PERF_SCHED_IN,
            id::PERF_SCHED_OUT,
            id::PERF_SCHED_OUT_PREEMPT,
            id::PERF_TASK,
            id::PERF_EXIT,
            id::PERF_COMM,
        ]);
    }
    let cmd = data.info.cmdline.as_deref().unwrap_or("");
    if cmd.contains("read=") || cmd.contains("diff=") {
        ids.extend(id::READ_PROC_STATM..=id::DIFF_PMU_BRANCH);
    }
    if cmd.contains("watch") {
        ids.push(id::WATCH_CPU);
    }
    for (ev, _) in &data.user_events.events {
        if !ids.contains(ev) {
            ids.push(*ev);
        }
    }
    ids
}

/// Build the model's description of `data`; also returns the class id of
/// each declared event id, sorted by event id.
pub fn trace_meta(data: &UftraceData) -> (TraceMeta, Vec<(u32, u32)>) {
    let mut classes = ClassTable::new();
    let mut entry = class(CLASS_ENTRY, "uftrace:entry", Vec::new(), Vec::new());
    entry.schema = Some(Arc::new(entry_schema()));
    let mut exit = class(CLASS_EXIT, "uftrace:exit", Vec::new(), Vec::new());
    exit.schema = Some(Arc::new(exit_schema()));
    classes.push(entry);
    classes.push(exit);
    classes.push(class(
        CLASS_EVENT,
        "uftrace:event",
        common_context(),
        generic_event_fields(),
    ));
    let mut map = Vec::new();
    for ev in declared_events(data) {
        let Some(fields) = event_fields(ev) else {
            continue;
        };
        let Some(name) = data.user_events.name(ev) else {
            continue;
        };
        let cid = classes.len() as u32;
        classes.push(class(cid, &name, common_context(), fields));
        map.push((ev, cid));
    }
    map.sort_unstable();

    let mut meta = TraceMeta {
        endian: Some(data.endian()),
        long_size: if data.header.elf_class == 1 { 4 } else { 8 },
        cpus: data.info.cpu.online.max(0) as u32,
        buffers: vec![BufferInfo {
            name: String::new(),
            clock: "mono".into(),
            page_size: 0,
            cpus: 1,
        }],
        streams: data
            .tasks
            .iter()
            .map(|_| StreamInfo { buffer: 0, cpu: 0 })
            .collect(),
        classes,
        format: Some(Format::Uftrace),
        clocks: vec![ClockInfo {
            name: "mono".into(),
            freq: 1_000_000_000,
            offset_ns: 0,
            origin_unix_epoch: false,
            description: Some("uftrace's CLOCK_MONOTONIC timestamps (ns)".into()),
            uuid: None,
        }],
        tracer_version: data.info.uftrace_version.clone(),
        uname: data.info.os.kernel.clone(),
        ..TraceMeta::default()
    };
    for t in &data.sessions.tasks {
        meta.tasks.insert(t.tid, t.comm.clone());
        // task.txt says each task's thread group
        if t.pid > 0 {
            meta.tgids.insert(t.tid, t.pid);
        }
    }
    let i = &data.info;
    let mut env = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            meta.env.push((k.to_string(), v));
        }
    };
    env("tracer_name", Some("uftrace".into()));
    env("uftrace_version", i.uftrace_version.clone());
    env("exename", i.exename.clone());
    env("cmdline", i.cmdline.clone());
    env("hostname", i.os.hostname.clone());
    env("kernel", i.os.kernel.clone());
    env("distro", i.os.distro.clone());
    env("cpudesc", i.cpu.desc.clone());
    env(
        "nr_cpus",
        Some(format!(
            "{} / {} (online / possible)",
            i.cpu.online, i.cpu.possible
        )),
    );
    env("record_date", i.record_date.clone());
    env("elapsed_time", i.elapsed_time.clone());
    env("exit_status", Some(i.exit_status.to_string()));
    env(
        "build_id",
        Some(i.build_id.iter().map(|b| format!("{b:02x}")).collect()),
    );
    (meta, map)
}

fn damage_error(d: Damage) -> Error {
    Error::new(ErrorKind::Invalid(d.message), d.file, d.offset)
}

/// Little helper: `size` (1..=8) bytes at the start of `d` as an unsigned
/// integer (missing bytes are zero).
fn read_uint(d: &[u8], size: usize, endian: Endian) -> u64 {
    let mut b = [0u8; 8];
    let n = size.min(8).min(d.len());
    b[..n].copy_from_slice(&d[..n]);
    if endian == Endian::Big && n > 0 {
        b[..n].reverse();
    }
    u64::from_le_bytes(b)
}

fn sext(v: u64, size: usize) -> i64 {
    tracemux_core::model::sign_extend(v, size)
}

/// Where the values of a function record go in the layouts of
/// `uftrace:entry` and `uftrace:exit` (the same ids in both: `args` and
/// `retval` each hold one value variant).
#[derive(Debug, Clone)]
struct FnIds {
    tid: FieldId,
    depth: FieldId,
    addr: FieldId,
    name: FieldId,
    /// `args` (entry) or `retval` (exit).
    values: FieldId,
    /// The value variant, and its options in [`VALUE_OPTIONS`] order.
    var: FieldId,
    opts: [FieldId; VALUE_OPTIONS.len()],
    enum_value: FieldId,
    enum_text: FieldId,
    struct_type: FieldId,
    struct_data: FieldId,
}

impl FnIds {
    fn of(l: &ClassLayout, values: &str) -> FnIds {
        let c = |n: &str| l.path(Scope::CommonContext, &[n]);
        let var = l.path(Scope::Payload, &[values, ""]);
        let opt = |o: &str| l.option(var, o);
        let mut opts = [FieldId::UNKNOWN; VALUE_OPTIONS.len()];
        for (i, o) in VALUE_OPTIONS.iter().enumerate() {
            opts[i] = opt(o);
        }
        let p = |path: &[&str]| l.path(Scope::Payload, path);
        FnIds {
            tid: c("tid"),
            depth: c("depth"),
            addr: p(&["addr"]),
            name: p(&["name"]),
            values: p(&[values]),
            var,
            opts,
            enum_value: p(&[values, "", "enum", "value"]),
            enum_text: p(&[values, "", "enum", "text"]),
            struct_type: p(&[values, "", "struct", "type"]),
            struct_data: p(&[values, "", "struct", "data"]),
        }
    }

    /// The option named `o`.
    fn opt(&self, o: &str) -> FieldId {
        VALUE_OPTIONS
            .iter()
            .position(|x| *x == o)
            .map_or(FieldId::UNKNOWN, |i| self.opts[i])
    }
}

/// Entries of [`UftraceSource::symbols`].
const SYMBOL_CACHE: usize = 4096;

/// The records of a uftrace recording as [`Record`]s, in `uftrace replay`'s
/// order.
pub struct UftraceSource<'d> {
    data: &'d UftraceData,
    merger: Merger<'d>,
    meta: TraceMeta,
    /// (event id, class id), sorted.
    event_classes: Vec<(u32, u32)>,
    tape: FieldTape,
    /// Field ids of function records.
    ids: FnIds,
    /// Symbols found in the maps, by (session, address): see
    /// [`UftraceSource::symbol`].
    symbols: Vec<Option<(usize, u64, &'d Symbol)>>,
    /// Names of unknown addresses (`<hex>`) and other scratch text.
    scratch: Vec<u8>,
    damage: VecDeque<Damage>,
    strict: bool,
    done: bool,
}

impl<'d> UftraceSource<'d> {
    /// The source over `data`; `strict`: damage is an error instead of a
    /// [`Record::Damage`]. Damage found when the directory was opened
    /// ([`UftraceData::damage`]) comes first.
    pub fn new(data: &'d UftraceData, strict: bool) -> Self {
        let (meta, event_classes) = trace_meta(data);
        let ids = meta.classes.get(CLASS_ENTRY).map_or_else(
            || FnIds::of(&ClassLayout::empty(), "args"),
            |c| FnIds::of(c.layout(), "args"),
        );
        debug_assert_eq!(
            meta.classes
                .get(CLASS_EXIT)
                .map(|c| FnIds::of(c.layout(), "retval").opts),
            Some(ids.opts)
        );
        UftraceSource {
            ids,
            data,
            merger: Merger::new(data, &MergeOptions::default()),
            meta,
            event_classes,
            tape: FieldTape::new(),
            symbols: vec![None; SYMBOL_CACHE],
            scratch: Vec::new(),
            damage: data.damage.iter().cloned().collect(),
            strict,
            done: false,
        }
    }

    fn event_class(&self, ev: u32) -> u32 {
        match self.event_classes.binary_search_by_key(&ev, |&(e, _)| e) {
            Ok(i) => self.event_classes[i].1,
            Err(_) => CLASS_EVENT,
        }
    }

    /// [`UftraceData::symbol`], with what the maps say remembered by
    /// session and address (most records are of a few functions).
    fn symbol(&mut self, tid: i32, time: u64, addr: u64) -> Option<&'d Symbol> {
        let data = self.data;
        let s = data.session_at(tid, time)?;
        let slot = ((addr >> 2) ^ (s as u64).wrapping_mul(0x9e37_79b9)) as usize % SYMBOL_CACHE;
        if let Some((cs, ca, sym)) = self.symbols[slot] {
            if cs == s && ca == addr {
                return Some(sym);
            }
        }
        match data.mapped_symbol(s, addr) {
            Some(sym) => {
                self.symbols[slot] = Some((s, addr, sym));
                Some(sym)
            }
            None => data.symbol_in(s, time, addr),
        }
    }

    /// The common context (the same ids in every class: it comes first).
    fn common(&mut self, tid: i32, depth: u16) {
        let t = &mut self.tape;
        t.scope_begin(Scope::CommonContext);
        t.put(self.ids.tid, Base::Dec, Value::Signed(tid as i64));
        t.put(self.ids.depth, Base::Dec, Value::Unsigned(depth as u64));
        t.scope_end(Scope::CommonContext);
    }

    /// The `i`th payload field of class `cid`.
    fn payload(&self, cid: u32, i: usize) -> FieldId {
        self.meta
            .classes
            .get(cid)
            .map_or(FieldId::UNKNOWN, |c| c.layout().member(Scope::Payload, i))
    }

    /// Record an entry or exit.
    fn record_function(&mut self, tid: i32, rec: &crate::record::Record<'d>) {
        let data = self.data;
        self.tape.clear();
        self.common(tid, rec.depth);
        self.tape.scope_begin(Scope::Payload);
        self.tape
            .put(self.ids.addr, Base::Hex, Value::Unsigned(rec.addr));
        let name = match self.symbol(tid, rec.time, rec.addr) {
            Some(s) => s.name.as_bytes(),
            None => {
                self.scratch.clear();
                crate::report::walk::unknown_name(&mut self.scratch, rec.addr);
                &self.scratch
            }
        };
        self.tape.put(self.ids.name, Base::Dec, Value::Str(name));
        let retval = rec.kind == Kind::Exit;
        let specs: &[ArgSpec] = if rec.more {
            data.arg_specs(tid, rec.time, rec.addr).unwrap_or(&[])
        } else {
            &[]
        };
        let ctx = ArgCtx {
            data,
            tid,
            time: rec.time,
            func: rec.addr,
        };
        let endian = data.endian();
        if retval {
            match specs.iter().find(|s| s.is_retval()) {
                Some(s) => {
                    self.tape.put_optional(self.ids.values, true);
                    write_value(&mut self.tape, &self.ids, s, rec.data, endian, &ctx);
                }
                None => self.tape.put_optional(self.ids.values, false),
            }
            self.tape.optional_end();
        } else {
            let n = specs.iter().filter(|s| !s.is_retval()).count();
            self.tape.put_array(self.ids.values, n as u64);
            let mut pos = 0usize;
            for s in specs.iter().filter(|s| !s.is_retval()) {
                let d = rec.data.get(pos..).unwrap_or(&[]);
                let size = write_value(&mut self.tape, &self.ids, s, d, endian, &ctx);
                pos += size.div_ceil(4) * 4;
            }
            self.tape.array_end();
        }
        self.tape.scope_end(Scope::Payload);
    }

    /// Record a perf event.
    fn record_perf(&mut self, tid: i32, ev: &PerfEvent) {
        self.tape.clear();
        self.common(tid, 0);
        let cid = self.event_class(ev.event_id());
        let f = |i| self.payload(cid, i);
        let (f0, f1, f2) = (f(0), f(1), f(2));
        let t = &mut self.tape;
        t.scope_begin(Scope::Payload);
        if cid == CLASS_EVENT {
            t.put(f0, Base::Dec, Value::Unsigned(ev.event_id() as u64));
            t.put(f1, Base::Dec, Value::Bytes(&[]));
        } else {
            match ev.kind {
                PerfKind::Switch { .. } => {}
                PerfKind::Fork { pid, ppid } | PerfKind::Exit { pid, ppid } => {
                    t.put(f0, Base::Dec, Value::Signed(pid as i64));
                    t.put(f1, Base::Dec, Value::Signed(ppid as i64));
                }
                PerfKind::Comm { pid, exec, .. } => {
                    t.put(f0, Base::Dec, Value::Signed(pid as i64));
                    t.put(f1, Base::Dec, Value::Bool(exec));
                    t.put(f2, Base::Dec, Value::Str(ev.comm().unwrap_or(&[])));
                }
            }
        }
        t.scope_end(Scope::Payload);
    }

    /// Record an event stored in a task file.
    fn record_event(&mut self, tid: i32, rec: &crate::record::Record<'d>, cid: u32) {
        let endian = self.data.endian();
        self.tape.clear();
        self.common(tid, rec.depth);
        let layout = self
            .meta
            .classes
            .get(cid)
            .map_or(&tracemux_core::layout::EMPTY, |c| c.layout());
        let f = |i| layout.member(Scope::Payload, i);
        let t = &mut self.tape;
        t.scope_begin(Scope::Payload);
        let ev = rec.addr as u32;
        let d = rec.data;
        let u64_at = |i: usize| read_uint(d.get(i * 8..).unwrap_or(&[]), 8, endian);
        let cstr = || &d[..d.iter().position(|&b| b == 0).unwrap_or(d.len())];
        if cid == CLASS_EVENT {
            t.put(f(0), Base::Dec, Value::Unsigned(rec.addr));
            t.put(f(1), Base::Dec, Value::Bytes(d));
        } else if let Some(fields) = event_fields(ev) {
            match ev {
                id::WATCH_CPU => t.put(
                    f(0),
                    Base::Dec,
                    Value::Signed(sext(read_uint(d, 4, endian), 4)),
                ),
                id::PERF_COMM => {
                    // (a perf event stored in a task file: comm only)
                    t.put(f(0), Base::Dec, Value::Signed(tid as i64));
                    t.put(f(1), Base::Dec, Value::Bool(false));
                    t.put(f(2), Base::Dec, Value::Str(cstr()));
                }
                id::PERF_TASK | id::PERF_EXIT => {
                    t.put(f(0), Base::Dec, Value::Signed(tid as i64));
                    t.put(f(1), Base::Dec, Value::Signed(0));
                }
                _ if fields.len() == 1 && matches!(fields[0].ty, FieldType::Str) => {
                    t.put(f(0), Base::Dec, Value::Str(cstr()))
                }
                _ => {
                    for i in 0..fields.len() {
                        t.put(f(i), Base::Dec, Value::Unsigned(u64_at(i)));
                    }
                }
            }
        }
        t.scope_end(Scope::Payload);
    }
}

/// Record one argument or return value of spec `s` from `d` (the bytes
/// from the value on); returns how many bytes it took before alignment.
fn write_value(
    t: &mut FieldTape,
    ids: &FnIds,
    s: &ArgSpec,
    d: &[u8],
    endian: Endian,
    ctx: &ArgCtx<'_>,
) -> usize {
    let mut size = s.size as usize;
    let leaf = |t: &mut FieldTape, opt: &str, base: Base, v: Value<'_>| {
        let o = ids.opt(opt);
        t.put_variant(ids.var, o);
        t.put(o, base, v);
        t.variant_end();
    };
    match s.fmt {
        ArgFmt::Str | ArgFmt::StdString => {
            let slen = read_uint(d, 2, endian) as usize;
            let b = d.get(2..(2 + slen).min(d.len())).unwrap_or(&[]);
            if slen == 4 && b == [0xff; 4] {
                let o = ids.opt("null");
                t.put_variant(ids.var, o);
                t.put_struct(o);
                t.struct_end();
                t.variant_end();
            } else {
                let b = &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())];
                let opt = if s.fmt == ArgFmt::Str {
                    "str"
                } else {
                    "std_string"
                };
                leaf(t, opt, Base::Dec, Value::Str(b));
            }
            size = slen + 2;
        }
        ArgFmt::Char => {
            let c = d.get(..1).unwrap_or(&[]);
            leaf(t, "char", Base::Dec, Value::Str(c));
            size = 1;
        }
        ArgFmt::Float => {
            let v = match size {
                4 => Some(("f32", f32::from_bits(read_uint(d, 4, endian) as u32) as f64)),
                8 => Some(("f64", f64::from_bits(read_uint(d, 8, endian)))),
                10 => {
                    let mut b = [0u8; 16];
                    let n = d.len().min(10);
                    b[..n].copy_from_slice(&d[..n]);
                    if endian == Endian::Big {
                        b[..10].reverse();
                    }
                    Some(("f80", crate::args::f80_to_f64(&b)))
                }
                _ => None,
            };
            match v {
                Some((opt, f)) => leaf(t, opt, Base::Dec, Value::Float(f)),
                None => leaf(
                    t,
                    "raw",
                    Base::Dec,
                    Value::Bytes(d.get(..size).unwrap_or(d)),
                ),
            }
        }
        ArgFmt::Ptr if matches!(size, 4 | 8) => {
            leaf(
                t,
                "ptr",
                Base::Hex,
                Value::Unsigned(read_uint(d, size, endian)),
            );
        }
        ArgFmt::Enum => {
            let v = sext(read_uint(d, size.min(8), endian), size.min(8)) as i32;
            let text = ctx
                .enum_of(s.type_name.as_deref().unwrap_or(""), v as i64)
                .unwrap_or_else(|| v.to_string());
            let o = ids.opt("enum");
            t.put_variant(ids.var, o);
            t.put_struct(o);
            t.put(ids.enum_value, Base::Dec, Value::Signed(v as i64));
            t.put(ids.enum_text, Base::Dec, Value::Str(text.as_bytes()));
            t.struct_end();
            t.variant_end();
        }
        ArgFmt::Struct => {
            let o = ids.opt("struct");
            t.put_variant(ids.var, o);
            t.put_struct(o);
            let ty = s.type_name.as_deref().unwrap_or("");
            t.put(ids.struct_type, Base::Dec, Value::Str(ty.as_bytes()));
            t.put(
                ids.struct_data,
                Base::Dec,
                Value::Bytes(d.get(..size).unwrap_or(d)),
            );
            t.struct_end();
            t.variant_end();
        }
        ArgFmt::Auto | ArgFmt::Sint | ArgFmt::Uint | ArgFmt::Hex | ArgFmt::Oct | ArgFmt::Ptr => {
            // the options of 1-, 2-, 4- and 8-byte values (octal ones are
            // unsigned values: the model has no octal option)
            let (signed, options, base) = match s.fmt {
                ArgFmt::Auto | ArgFmt::Sint => (true, ["s8", "s16", "s32", "s64"], Base::Dec),
                ArgFmt::Uint | ArgFmt::Oct => (false, ["u8", "u16", "u32", "u64"], Base::Dec),
                _ => (false, ["x8", "x16", "x32", "x64"], Base::Hex),
            };
            let opt = match size {
                1 => options[0],
                2 => options[1],
                4 => options[2],
                8 => options[3],
                _ => "raw",
            };
            let raw = read_uint(d, size, endian);
            if s.fmt == ArgFmt::Auto && size == 8 && raw > 0xffff_0000 && raw <= 0xffff_ffff {
                // a register-wide value without a declared size that is a
                // negative `int`: uftrace takes it as one (`-300`, not
                // `4294966996`), so does the model
                leaf(t, "s32", base, Value::Signed(raw as u32 as i32 as i64));
            } else if opt == "raw" {
                leaf(
                    t,
                    "raw",
                    Base::Dec,
                    Value::Bytes(d.get(..size).unwrap_or(d)),
                );
            } else if signed {
                leaf(t, opt, base, Value::Signed(sext(raw, size)));
            } else {
                leaf(t, opt, base, Value::Unsigned(raw));
            }
        }
    }
    size
}

impl RecordSource for UftraceSource<'_> {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn progress(&self) -> Option<Progress> {
        let (done, total) = self.merger.progress();
        Some(Progress { done, total }).filter(|p| p.total > 0)
    }

    // every event's values are recorded after a `clear()`
    fn swaps_tapes(&self) -> bool {
        true
    }
    fn swap_tape(&mut self, t: &mut FieldTape) {
        std::mem::swap(&mut self.tape, t);
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>> {
        loop {
            if let Some(d) = self.damage.pop_front() {
                if self.strict {
                    self.done = true;
                    self.damage.clear();
                    return Err(damage_error(d));
                }
                return Ok(Some(Record::Damage(damage_error(d))));
            }
            if self.done {
                return Ok(None);
            }
            let Some(it) = self.merger.next_item() else {
                self.damage.extend(self.merger.take_damage());
                self.done = true;
                continue;
            };
            self.damage.extend(self.merger.take_task_damage(it.task));
            let tid = self.data.tasks[it.task].tid;
            let rec = it.rec;
            let cid = match (rec.kind, it.source) {
                (Kind::Lost, src) => {
                    let n = rec.addr as i32;
                    // a kernel LOST record has no time of its own: it
                    // comes right before the record it was read with
                    let ts = match src {
                        Source::Kernel { .. } if rec.time == 0 => {
                            self.merger.peek().map_or(0, |n| n.rec.time)
                        }
                        _ => rec.time,
                    };
                    let lost = Lost {
                        stream: it.task as u32,
                        cpu: 0,
                        ts,
                        count: (n > 0).then_some(n as u64),
                    };
                    return Ok(Some(Record::Lost(lost)));
                }
                (Kind::Entry | Kind::Exit, _) => {
                    self.record_function(tid, &rec);
                    if rec.kind == Kind::Entry {
                        CLASS_ENTRY
                    } else {
                        CLASS_EXIT
                    }
                }
                (Kind::Event, Source::Perf(ev)) => {
                    self.record_perf(ev.tid, &ev);
                    self.event_class(ev.event_id())
                }
                // kernel events are not part of the model yet
                (Kind::Event, Source::Kernel { .. }) => continue,
                (Kind::Event, Source::User) => {
                    let cid = self.event_class(rec.addr.min(u32::MAX as u64) as u32);
                    let cid = if rec.addr > u32::MAX as u64 {
                        CLASS_EVENT
                    } else {
                        cid
                    };
                    self.record_event(tid, &rec, cid);
                    cid
                }
            };
            let pid = match it.source {
                Source::Perf(ev) => ev.tid,
                Source::User | Source::Kernel { .. } => tid,
            };
            return Ok(Some(Record::Event(Event {
                ts: rec.time,
                stream: it.task as u32,
                cpu: 0,
                type_id: cid,
                class: self.meta.classes.get(cid),
                pid,
                data: rec.data,
                ext: rec.data,
                endian: self.data.endian(),
                file_pos: rec.offset,
                tape: Some(&self.tape),
                raw_ts: None,
            })));
        }
    }
}
