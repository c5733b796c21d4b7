//! The event model: the contract between readers and sinks.
//!
//! A reader builds one [`TraceMeta`] (what the whole trace says about itself)
//! and then yields [`Record`]s in time order through [`RecordSource`]. Events
//! borrow their payload from the reader (the mapped file or a reusable
//! decompression buffer) and decode fields on demand into [`Value`]s, so the
//! hot path allocates nothing.

use crate::bytes::Endian;
use crate::error::{Error, Result};
pub use crate::inputs::{Format, InputInfo};
use crate::layout::{ClassId, ClassLayout, FieldRef};
use crate::schema::{ArrayLen, ClassSchema, FieldSchema, FieldType, IntType, Scope};
use crate::tables::{PrintkTable, SymbolTable, TaskTable};
use crate::typed::FieldTape;
pub use crate::typed::FieldVisitor;
pub use crate::value::{sign_extend, Base, Value};

/// Field properties, as bits. They mirror what the ftrace `format` files say
/// about a field and what printers need to know to show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct FieldFlags(pub u32);

impl FieldFlags {
    pub const SIGNED: u32 = 1 << 0;
    /// `long` / `unsigned long` (printed in hex by trace-cmd's raw view).
    pub const LONG: u32 = 1 << 1;
    /// A C pointer type (`void *`, `char *`...).
    pub const POINTER: u32 = 1 << 2;
    /// A static array `type name[N]`.
    pub const ARRAY: u32 = 1 << 3;
    /// Character data (`char name[N]`, `__data_loc char[]`).
    pub const STRING: u32 = 1 << 4;
    /// `__data_loc`: the field holds a 32-bit (len << 16 | offset) locator.
    pub const DYNAMIC: u32 = 1 << 5;
    /// `__rel_loc`: like `DYNAMIC`, offset relative to the end of the field.
    pub const RELATIVE: u32 = 1 << 6;
    /// A `common_*` field shared by all events of the format.
    pub const COMMON: u32 = 1 << 7;

    #[inline]
    pub fn has(self, bit: u32) -> bool {
        self.0 & bit != 0
    }
}

/// One field of an event class with a fixed record layout (ftrace style:
/// every field has a byte offset and size inside the record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDef {
    pub name: String,
    /// The declared type, as written by the producer (e.g. `unsigned long`).
    pub type_name: String,
    pub offset: u32,
    pub size: u32,
    pub flags: FieldFlags,
    /// For static arrays, the number of elements (0 when not known).
    pub array_len: u32,
    /// Size in bytes of one element (of an array) or of the value.
    pub elem_size: u32,
}

impl FieldDef {
    /// A field that holds one value (not an array) of `size` bytes.
    pub fn scalar(
        name: impl Into<String>,
        type_name: impl Into<String>,
        offset: u32,
        size: u32,
        flags: FieldFlags,
    ) -> FieldDef {
        FieldDef {
            name: name.into(),
            type_name: type_name.into(),
            offset,
            size,
            flags,
            array_len: 0,
            elem_size: size,
        }
    }

    /// The typed field class of this fixed-layout field, as
    /// [`FieldDef::value`] decodes it: character data is a string,
    /// arrays of 1/2/4/8-byte elements (static or `__data_loc`) are integer
    /// arrays, other arrays bytes, scalars integers of their size (pointers
    /// shown in hex), anything else bytes.
    pub fn field_type(&self) -> FieldType {
        let f = self.flags;
        let signed = f.has(FieldFlags::SIGNED);
        if f.has(FieldFlags::STRING) {
            return FieldType::Str;
        }
        if f.has(FieldFlags::ARRAY) || f.has(FieldFlags::DYNAMIC) {
            let es = self.elem_size;
            if matches!(es, 1 | 2 | 4 | 8) {
                let len = if f.has(FieldFlags::DYNAMIC) {
                    ArrayLen::Dynamic
                } else {
                    ArrayLen::Static(u64::from(self.size / es))
                };
                return FieldType::Array {
                    elem: Box::new(FieldType::Int(IntType::new((es * 8) as u8, signed))),
                    len,
                };
            }
            return FieldType::Blob;
        }
        match self.size {
            1 | 2 | 4 | 8 => {
                let bits = (self.size * 8) as u8;
                FieldType::Int(if f.has(FieldFlags::POINTER) {
                    IntType::hex(bits, signed)
                } else {
                    IntType::new(bits, signed)
                })
            }
            _ => FieldType::Blob,
        }
    }

    /// The bytes of this field in `data`: for static fields the field itself,
    /// for `__data_loc`/`__rel_loc` fields the bytes they point to. `None` if
    /// the record is too short (a damaged or truncated record).
    pub fn slice<'t>(&self, data: &'t [u8], endian: Endian) -> Option<&'t [u8]> {
        let off = self.offset as usize;
        let size = self.size as usize;
        let raw = data.get(off..off.checked_add(size)?)?;
        if self.flags.has(FieldFlags::DYNAMIC) {
            let loc = endian.read_uint(raw, size.min(4))? as u32;
            let mut start = (loc & 0xffff) as usize;
            let len = (loc >> 16) as usize;
            if self.flags.has(FieldFlags::RELATIVE) {
                start += off + size;
            }
            return data.get(start..start.checked_add(len)?);
        }
        Some(raw)
    }

    /// Decode the field from a record.
    pub fn value<'t>(&self, data: &'t [u8], endian: Endian) -> Option<Value<'t>> {
        let raw = self.slice(data, endian)?;
        let f = self.flags;
        if f.has(FieldFlags::STRING) {
            let n = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
            return Some(Value::Str(&raw[..n]));
        }
        if f.has(FieldFlags::ARRAY) || f.has(FieldFlags::DYNAMIC) {
            let es = self.elem_size as usize;
            if matches!(es, 1 | 2 | 4 | 8) {
                return Some(Value::IntArray {
                    data: raw,
                    elem_size: es as u8,
                    signed: f.has(FieldFlags::SIGNED),
                    endian,
                });
            }
            return Some(Value::Bytes(raw));
        }
        match endian.read_uint(raw, raw.len()) {
            Some(v) if f.has(FieldFlags::SIGNED) => Some(Value::Signed(sign_extend(v, raw.len()))),
            Some(v) => Some(Value::Unsigned(v)),
            None => Some(Value::Bytes(raw)),
        }
    }
}

/// How timestamps are shown (trace-cmd's three time formats).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeFormat {
    /// `secs.usecs`, rounded to the nearest microsecond (the default for
    /// nanosecond clocks).
    #[default]
    Usecs,
    /// `secs.nsecs` (`-t`).
    Nsecs,
    /// The raw clock value (`x86-tsc`, `counter`, ... clocks).
    Raw,
}

/// What printing an event in the pretty view changed besides the text:
/// task names it learned (trace-cmd's sched plugin registers the comms of
/// `sched_switch`/`sched_wakeup` for the comm column of later events), and
/// whether it used up the following record (function graph leaves).
#[derive(Debug, Default)]
pub struct Effects {
    /// (pid, start, end) into `comm_bytes`, in the order registered.
    pub comms: Vec<(i32, u32, u32)>,
    pub comm_bytes: Vec<u8>,
    /// The printer printed [`PrintCtx::next`] as part of this event: the
    /// caller must skip that record.
    pub consumed_next: bool,
}

impl Effects {
    pub fn register_comm(&mut self, pid: i32, comm: &[u8]) {
        let start = self.comm_bytes.len() as u32;
        self.comm_bytes.extend_from_slice(comm);
        self.comms.push((pid, start, self.comm_bytes.len() as u32));
    }
    /// The registered comms, in order.
    pub fn comms(&self) -> impl Iterator<Item = (i32, &[u8])> {
        self.comms
            .iter()
            .map(|&(p, s, e)| (p, &self.comm_bytes[s as usize..e as usize]))
    }
    pub fn clear(&mut self) {
        self.comms.clear();
        self.comm_bytes.clear();
        self.consumed_next = false;
    }
}

/// What a class printer may need besides the record bytes.
#[derive(Debug, Clone, Copy)]
pub struct PrintCtx<'a> {
    pub endian: Endian,
    /// Size of a C `long` on the traced machine (4 or 8).
    pub long_size: u32,
    pub symbols: &'a SymbolTable,
    /// Format strings of `bprint`-style events by address (ftrace printk formats).
    pub printk: &'a PrintkTable,
    pub cpu: u32,
    /// The event's timestamp and how the caller shows timestamps (some
    /// pretty views print times of their own).
    pub ts: u64,
    pub time: TimeFormat,
    /// All event classes of the trace (pretty views that look at other
    /// events' layouts), when the caller has them.
    pub classes: Option<&'a ClassTable>,
    /// The record that follows this one in its buffer (payload, as
    /// [`Event::data`]), given by callers when [`ClassPrinter::wants_next`].
    pub next: Option<&'a [u8]>,
    /// Where pretty views report side effects (see [`Effects`]).
    pub effects: Option<&'a std::cell::RefCell<Effects>>,
}

impl<'a> PrintCtx<'a> {
    /// The context of event `ev` of the trace `meta` (its byte order and
    /// CPU), with no timestamp, classes, lookahead or effects.
    pub fn of(meta: &'a TraceMeta, ev: &Event<'_>) -> Self {
        PrintCtx::new(
            ev.endian,
            meta.long_size,
            &meta.symbols,
            &meta.printk,
            ev.cpu,
        )
    }

    /// A context with no timestamp, classes, lookahead or effects.
    pub fn new(
        endian: Endian,
        long_size: u32,
        symbols: &'a SymbolTable,
        printk: &'a PrintkTable,
        cpu: u32,
    ) -> Self {
        PrintCtx {
            endian,
            long_size,
            symbols,
            printk,
            cpu,
            ts: 0,
            time: TimeFormat::Usecs,
            classes: None,
            next: None,
            effects: None,
        }
    }
}

/// Every field of `ev` through `v`, scope by scope (see
/// [`crate::typed`]), each with its field in the layout of the event's
/// class: the event's recorded values when it has them ([`Event::tape`]),
/// else the class's own decoder when it has one
/// ([`ClassPrinter::visit_fields`], as the payload), else the fixed layout
/// of [`EventClass::common_fields`] (the common context) then
/// [`EventClass::fields`] (the payload). Returns `false` when the event has
/// no class and no recorded values.
pub fn visit_fields(ev: &Event<'_>, ctx: &PrintCtx<'_>, v: &mut dyn FieldVisitor) -> bool {
    if let Some(t) = ev.tape {
        let layout = ev.class.map_or(&crate::layout::EMPTY, |c| c.layout());
        t.replay(layout, v);
        return true;
    }
    let Some(c) = ev.class else { return false };
    let layout = c.layout();
    if let Some(p) = &c.printer {
        let mut w = ScopeWrap {
            v: &mut *v,
            open: false,
        };
        if p.visit_fields(ev.data, ev.data.len(), ctx, layout, &mut w) {
            if w.open {
                v.scope_end(Scope::Payload);
            }
            return true;
        }
    }
    for (scope, defs) in [
        (Scope::CommonContext, &c.common_fields),
        (Scope::Payload, &c.fields),
    ] {
        if defs.is_empty() {
            continue;
        }
        v.scope_begin(scope);
        for (i, f) in defs.iter().enumerate() {
            let fr = layout.get(layout.member(scope, i));
            if !v.wants(fr) {
                continue;
            }
            let base = if f.flags.has(FieldFlags::POINTER) {
                Base::Hex
            } else {
                Base::Dec
            };
            match f.value(ev.data, ev.endian) {
                Some(val) => v.field(fr, base, val),
                None => v.field(fr, base, Value::Bytes(&[])),
            }
        }
        v.scope_end(scope);
    }
    true
}

/// Opens the payload scope before the first field a flat class decoder
/// hands over.
struct ScopeWrap<'v> {
    v: &'v mut dyn FieldVisitor,
    open: bool,
}

impl ScopeWrap<'_> {
    fn open(&mut self) {
        if !self.open {
            self.open = true;
            self.v.scope_begin(Scope::Payload);
        }
    }
}

/// Visitor methods passed on to `self.v`: `open` first the payload scope
/// (once) for a field or the beginning of a compound, `close` for an end.
macro_rules! wrapped {
    ($($how:ident $method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method(&mut self, $($arg: $ty),*) {
            wrapped!(@$how self);
            self.v.$method($($arg),*);
        }
    )*};
    (@open $s:ident) => { $s.open() };
    (@close $s:ident) => {};
}

impl FieldVisitor for ScopeWrap<'_> {
    wrapped! {
        open field(f: FieldRef<'_>, base: Base, value: Value<'_>);
        open enum_field(f: FieldRef<'_>, value: Value<'_>, labels: &[&str]);
        open struct_begin(f: FieldRef<'_>);
        close struct_end();
        open array_begin(f: FieldRef<'_>, len: u64);
        close array_end();
        open variant_begin(f: FieldRef<'_>, option: FieldRef<'_>);
        close variant_end();
        open optional_begin(f: FieldRef<'_>, present: bool);
        close optional_end();
    }
    fn wants(&self, f: FieldRef<'_>) -> bool {
        self.v.wants(f)
    }
}

/// Format-specific rendering of one event class, provided by the format
/// crate that read the class (for ftrace: the `print fmt` engine). Sinks use
/// it through this trait and so stay independent of the formats.
pub trait ClassPrinter: Send + Sync + std::fmt::Debug {
    /// The producer's raw field view: for each field ` name=value`, as
    /// `trace-cmd report -R` prints it. `data[..size]` is the record; bytes
    /// after `size` are what follows it in the page (see [`Event::ext`]).
    fn write_raw_fields(&self, out: &mut Vec<u8>, data: &[u8], size: usize, ctx: &PrintCtx<'_>);
    /// The producer's pretty view (ftrace `print fmt`). Returns `false` when
    /// this class has no pretty view (the caller then prints raw fields).
    fn write_pretty(
        &self,
        _out: &mut Vec<u8>,
        _data: &[u8],
        _size: usize,
        _ctx: &PrintCtx<'_>,
    ) -> bool {
        false
    }
    /// Whether the pretty view looks at the record that follows in the
    /// same buffer ([`PrintCtx::next`]).
    fn wants_next(&self) -> bool {
        false
    }
    /// Whether the pretty view of an event depends on the events of this
    /// class printed before it (the function plugin's call-stack indent):
    /// such events are printed in order, on one thread.
    fn stateful(&self) -> bool {
        false
    }
    /// How many times printing has changed something that holds for the
    /// rest of the run (libtraceevent's sticky flags: a field printed once
    /// as an array is never a string again; a bprint format that failed
    /// fails from then on). Printing on several threads gives one thread's
    /// bytes as long as this stays 0.
    fn sticky_changes(&self) -> u64 {
        0
    }
    /// The sticky flags as they are now, for [`ClassPrinter::set_sticky`].
    fn sticky(&self) -> Vec<bool> {
        Vec::new()
    }
    /// Put the sticky flags back as [`ClassPrinter::sticky`] gave them.
    fn set_sticky(&self, _flags: &[bool]) {}
    /// Hand every field of the record to `v`, each with its field in
    /// `layout` (the class's), for classes whose fields are not at fixed
    /// offsets (returns `false` when not implemented: the caller then uses
    /// the class's [`FieldDef`]s).
    fn visit_fields(
        &self,
        _data: &[u8],
        _size: usize,
        _ctx: &PrintCtx<'_>,
        _layout: &ClassLayout,
        _v: &mut dyn FieldVisitor,
    ) -> bool {
        false
    }
}

/// An event type: its identity, its fields and how its producer prints it.
#[derive(Debug, Clone)]
pub struct EventClass {
    /// Its place in the trace's [`ClassTable`] (set by [`ClassTable::push`];
    /// [`ClassId::UNLISTED`] for a class in no table): what sinks key what
    /// they make per class by.
    pub index: ClassId,
    /// The event type id as the format stores it (ftrace `common_type`, a
    /// CTF event record class id).
    pub id: u32,
    /// Subsystem (ftrace system, CTF provider...).
    pub system: String,
    pub name: String,
    /// Fields shared by every event of the format (ftrace `common_*`).
    pub common_fields: Vec<FieldDef>,
    /// The event's own fields.
    pub fields: Vec<FieldDef>,
    /// The producer's print format (ftrace `print fmt`), kept verbatim.
    pub print_fmt: String,
    /// Format-specific rendering, if the format crate provides one.
    pub printer: Option<std::sync::Arc<dyn ClassPrinter>>,
    /// The typed schema, when the format gives one beyond its fixed
    /// layout (CTF, uftrace, LTT); see [`EventClass::schema`].
    pub schema: Option<std::sync::Arc<ClassSchema>>,
    /// The schema and layout, made once at first use (see
    /// [`EventClass::layout`]); `Compiled::default()` in a new class.
    pub compiled: Compiled,
}

/// A class's schema and [`ClassLayout`], made from its fields at first use
/// and kept (a class's fields do not change once events refer to it).
#[derive(Debug, Clone, Default)]
pub struct Compiled(std::sync::OnceLock<std::sync::Arc<(ClassSchema, ClassLayout)>>);

impl EventClass {
    /// A class described by its typed schema alone (no fixed layout, no
    /// print format, no printer): what CTF and uftrace readers make.
    pub fn with_schema(id: u32, system: &str, name: &str, schema: ClassSchema) -> EventClass {
        EventClass {
            index: ClassId::UNLISTED,
            id,
            system: system.to_string(),
            name: name.to_string(),
            common_fields: Vec::new(),
            fields: Vec::new(),
            print_fmt: String::new(),
            printer: None,
            schema: Some(std::sync::Arc::new(schema)),
            compiled: Compiled::default(),
        }
    }

    /// The typed schema of this class: the one its reader gave, else one
    /// derived from the fixed layout ([`FieldDef::field_type`]): the
    /// `common_*` fields as the common context, the others as the payload.
    pub fn schema(&self) -> std::borrow::Cow<'_, ClassSchema> {
        std::borrow::Cow::Borrowed(&self.compiled().0)
    }

    /// The class's fields as [`crate::layout::FieldId`]s: what visitors
    /// receive and sinks resolve once per class.
    pub fn layout(&self) -> &ClassLayout {
        &self.compiled().1
    }

    fn compiled(&self) -> &(ClassSchema, ClassLayout) {
        self.compiled.0.get_or_init(|| {
            let schema = match &self.schema {
                Some(s) => ClassSchema::clone(s),
                None => {
                    let mut s = ClassSchema::default();
                    let conv = |defs: &[FieldDef]| {
                        defs.iter()
                            .map(|f| FieldSchema::new(f.name.clone(), f.field_type()))
                            .collect::<Vec<_>>()
                    };
                    s.push(Scope::CommonContext, conv(&self.common_fields));
                    s.push(Scope::Payload, conv(&self.fields));
                    s
                }
            };
            let layout = ClassLayout::of(&schema);
            std::sync::Arc::new((schema, layout))
        })
    }

    pub fn field(&self, name: &str) -> Option<&FieldDef> {
        self.fields
            .iter()
            .chain(self.common_fields.iter())
            .find(|f| f.name == name)
    }
}

/// A table of event classes indexed by id.
#[derive(Debug, Clone, Default)]
pub struct ClassTable {
    classes: Vec<EventClass>,
    /// Dense id -> index+1 map for small ids (ftrace ids are < 65536).
    dense: Vec<u32>,
}

impl ClassTable {
    pub fn new() -> Self {
        Self::default()
    }
    /// Add a class, as the next [`ClassId`] (its [`EventClass::index`]);
    /// a later class with the same format id replaces the lookup by id.
    pub fn push(&mut self, mut c: EventClass) {
        let idx = self.classes.len() as u32;
        c.index = ClassId::new(idx);
        let id = c.id as usize;
        if id < 1 << 20 {
            if self.dense.len() <= id {
                self.dense.resize(id + 1, 0);
            }
            self.dense[id] = idx + 1;
        }
        self.classes.push(c);
    }
    /// The id the next class pushed gets.
    pub fn next_id(&self) -> ClassId {
        ClassId::new(self.classes.len() as u32)
    }
    #[inline]
    pub fn get(&self, id: u32) -> Option<&EventClass> {
        match self.dense.get(id as usize) {
            Some(&i) if i > 0 => self.classes.get(i as usize - 1),
            _ => None,
        }
    }
    pub fn iter(&self) -> impl Iterator<Item = &EventClass> {
        self.classes.iter()
    }
    /// The class with id `id` ([`EventClass::index`]).
    #[inline]
    pub fn at(&self, id: ClassId) -> Option<&EventClass> {
        self.classes.get(id.index())
    }
    pub fn len(&self) -> usize {
        self.classes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }
}

/// A buffer (ftrace instance) or, in general, a group of streams.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BufferInfo {
    /// `""` for the top-level buffer.
    pub name: String,
    pub clock: String,
    pub page_size: u32,
    pub cpus: u32,
}

/// One stream of events in its own time order (a CPU of a buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamInfo {
    pub buffer: u32,
    pub cpu: u32,
}

/// What a whole trace says about itself.
#[derive(Debug, Clone, Default)]
pub struct TraceMeta {
    pub endian: Option<Endian>,
    pub long_size: u32,
    /// Number of CPUs recorded in the file.
    pub cpus: u32,
    pub buffers: Vec<BufferInfo>,
    pub streams: Vec<StreamInfo>,
    pub classes: ClassTable,
    pub tasks: TaskTable,
    /// Thread groups the trace states (thread id -> process id: uftrace's
    /// `task.txt`, perf's records); what events say is tracked by
    /// [`crate::tasks::TaskTracker`].
    pub tgids: std::collections::HashMap<i32, i32>,
    pub symbols: SymbolTable,
    pub printk: PrintkTable,
    /// `uname -a` style description of the traced system, if recorded.
    pub uname: Option<String>,
    /// Version of the recording tool, if recorded.
    pub tracer_version: Option<String>,
    /// The container format, when the reader says.
    pub format: Option<Format>,
    /// Clocks the timestamps come from (the first is the default clock).
    pub clocks: Vec<ClockInfo>,
    /// What the trace says about where it was recorded (host name, kernel,
    /// tracer, domain...), as key/value text, in the trace's order.
    pub env: Vec<(String, String)>,
    /// The inputs of a timeline merged from several traces (empty for one
    /// trace): each input's streams, clock and shift
    /// ([`crate::timeline`]).
    pub inputs: Vec<InputInfo>,
}

impl TraceMeta {
    /// The traced machine's host name: the `hostname` environment entry,
    /// else the second word of `uname` (what writers record and printers
    /// show).
    pub fn hostname(&self) -> Option<&str> {
        if let Some((_, v)) = self.env.iter().find(|(k, _)| k == "hostname") {
            return Some(v);
        }
        let mut w = self.uname.as_deref()?.split_whitespace();
        w.next()?;
        w.next()
    }
}

/// A clock of the trace: [`Event::ts`] values are nanoseconds on it
/// (raw counts for counter clocks such as `x86-tsc`, where `freq` is 0).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClockInfo {
    pub name: String,
    /// Cycles per second of the raw clock values (1e9: nanoseconds;
    /// 0: unknown, a counter).
    pub freq: u64,
    /// The clock's offset from its origin, in ns: the part of every
    /// [`Event::ts`] that is not the clock's own count (event times include
    /// it already; writers store it as their clock's offset).
    pub offset_ns: i64,
    /// Whether the origin is the Unix epoch (else: an arbitrary point such
    /// as the boot of the machine).
    pub origin_unix_epoch: bool,
    pub description: Option<String>,
    pub uuid: Option<[u8; 16]>,
}

/// An event, borrowing its payload from the reader.
#[derive(Debug, Clone, Copy)]
pub struct Event<'t> {
    /// Timestamp in the trace's time unit after clock corrections (ns for
    /// nanosecond clocks).
    pub ts: u64,
    /// Index into [`TraceMeta::streams`].
    pub stream: u32,
    pub cpu: u32,
    /// The event type id as stored (ftrace `common_type`).
    pub type_id: u32,
    pub class: Option<&'t EventClass>,
    /// The task that produced the event (ftrace `common_pid`), -1 if none.
    pub pid: i32,
    /// The whole record payload (for ftrace: starting with `common_type`).
    pub data: &'t [u8],
    /// `data` followed by whatever bytes follow it in its container unit
    /// (the rest of the ring-buffer page). Some native printers read past
    /// the record (libtraceevent prints static arrays without a bounds
    /// check); matching them needs these bytes. Never shorter than `data`.
    pub ext: &'t [u8],
    pub endian: Endian,
    /// File offset where the bytes needed to decode this event end (the end
    /// of its page, or of its compressed chunk). Used to reason about
    /// truncated files.
    pub file_pos: u64,
    /// The event's values already decoded by its reader (formats whose
    /// fields need stream state to decode); `None`: decoded on demand from
    /// `data` through the class. See [`visit_fields`].
    pub tape: Option<&'t FieldTape>,
    /// The timestamp as the format stores it, before any conversion to
    /// [`Event::ts`] (LTT's cycle count, printed by `--clock-cycles`);
    /// `None` when the format has no other form.
    pub raw_ts: Option<u64>,
}

impl Event<'_> {
    /// The id of the event's class ([`EventClass::index`]), if it has one.
    #[inline]
    pub fn class_id(&self) -> Option<ClassId> {
        self.class.map(|c| c.index)
    }
}

/// Events the producer lost, reported where the loss was detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lost {
    pub stream: u32,
    pub cpu: u32,
    /// Timestamp of the first event after the loss.
    pub ts: u64,
    /// Number of lost events, when the producer counted them.
    pub count: Option<u64>,
}

/// What a reader yields, in time order.
#[derive(Debug, Clone)]
pub enum Record<'t> {
    Event(Event<'t>),
    Lost(Lost),
    /// Damaged input that was skipped; reading continues after it.
    Damage(Error),
}

/// How far a source has read: bytes of its input behind it, of how many.
/// An estimate for a progress bar (a reader may count a page or a packet
/// as read once it is on it), never used to decide anything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
}

/// `done` and `total` added up.
impl std::ops::Add for Progress {
    type Output = Progress;
    fn add(self, o: Progress) -> Progress {
        Progress {
            done: self.done.saturating_add(o.done),
            total: self.total.saturating_add(o.total),
        }
    }
}

/// A source of records in time order (a lending iterator).
pub trait RecordSource {
    fn meta(&self) -> &TraceMeta;
    /// How much of its input the source has read, when it can say (a
    /// source over a stream that is still being written cannot).
    fn progress(&self) -> Option<Progress> {
        None
    }
    /// The next record, or `None` at the end. After a fatal error the source
    /// stays empty.
    fn next_record(&mut self) -> Result<Option<Record<'_>>>;
    /// Whether [`RecordSource::swap_tape`] hands over the values of each
    /// event (sources that record every event's values from scratch).
    fn swaps_tapes(&self) -> bool {
        false
    }
    /// Exchange the values recorded for the event just returned
    /// ([`Event::tape`]) with `t`: the caller keeps them without a copy,
    /// the source records the next event into what it was given. Does
    /// nothing unless [`RecordSource::swaps_tapes`].
    fn swap_tape(&mut self, _t: &mut FieldTape) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_described_one_way() {
        for (f, v, want) in [
            (Format::TraceDat, "7", "trace-cmd trace.dat, version 7"),
            (Format::Ctf, "1.8", "CTF, version 1.8 (TSDL metadata)"),
            (Format::Ctf, "2", "CTF, version 2 (JSON metadata)"),
            (Format::Ltt, "2.6", "legacy LTT, version 2.6 (LTTng 0.x)"),
        ] {
            assert_eq!(f.describe(Some(v)), want);
        }
        assert_eq!(Format::Uftrace.describe(None), "uftrace data");
    }

    fn fd(name: &str, offset: u32, size: u32, flags: u32, elem: u32) -> FieldDef {
        FieldDef {
            name: name.into(),
            type_name: String::new(),
            offset,
            size,
            flags: FieldFlags(flags),
            array_len: size.checked_div(elem).unwrap_or(0),
            elem_size: elem,
        }
    }

    #[test]
    fn decodes_fixed_and_dynamic_fields() {
        // int at 0, __data_loc char[] at 4 -> "hi" at 8
        let mut d = vec![0xfe, 0xff, 0xff, 0xff];
        d.extend_from_slice(&((3u32 << 16) | 8).to_le_bytes());
        d.extend_from_slice(b"hi\0");
        let e = Endian::Little;
        let i = fd("i", 0, 4, FieldFlags::SIGNED, 4);
        assert_eq!(i.value(&d, e), Some(Value::Signed(-2)));
        let s = fd("s", 4, 4, FieldFlags::DYNAMIC | FieldFlags::STRING, 1);
        assert_eq!(s.value(&d, e), Some(Value::Str(b"hi")));
        // relative: offset counted from the end of the field (4 + 4)
        let mut r = d.clone();
        r[4..8].copy_from_slice(&(3u32 << 16).to_le_bytes());
        let rs = fd(
            "s",
            4,
            4,
            FieldFlags::DYNAMIC | FieldFlags::RELATIVE | FieldFlags::STRING,
            1,
        );
        assert_eq!(rs.value(&r, e), Some(Value::Str(b"hi")));
        // out of bounds locator
        r[4..8].copy_from_slice(&((100u32 << 16) | 8).to_le_bytes());
        assert_eq!(s.value(&r, e), None);
    }

    #[test]
    fn class_table_lookup() {
        let mut t = ClassTable::new();
        t.push(EventClass {
            index: ClassId::UNLISTED,
            id: 7,
            system: "s".into(),
            name: "n".into(),
            common_fields: vec![],
            fields: vec![],
            print_fmt: String::new(),
            printer: None,
            schema: None,
            compiled: Compiled::default(),
        });
        assert_eq!(t.get(7).unwrap().name, "n");
        assert_eq!(t.get(7).unwrap().index, ClassId::new(0));
        assert_eq!(t.at(ClassId::new(0)).unwrap().name, "n");
        assert!(t.at(ClassId::UNLISTED).is_none());
        assert!(t.get(6).is_none());
        assert!(t.get(u32::MAX).is_none());
    }
}
