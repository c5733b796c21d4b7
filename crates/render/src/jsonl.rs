//! JSON lines: one object per record.
//!
//! Schema (see the README):
//! `{"type":"event","ts":NS,"cpu":N,"buffer":"NAME","system":"S","event":"E","pid":P,"comm":"C","fields":{...}}`
//! and `{"type":"lost","ts":NS,"cpu":N,"buffer":"NAME","count":N|null}`.
//! Integer fields are JSON numbers, character data strings, arrays of
//! integers JSON arrays, other bytes arrays of byte values.

use crate::fmt::dec;
use tracemux_core::layout::{ClassMap, FieldRef};
use tracemux_core::model::{
    visit_fields, Base, Event, EventClass, FieldVisitor, Lost, PrintCtx, TraceMeta, Value,
};
use tracemux_core::typed::Scope;

pub use tracemux_core::json::json_str;

/// The buffer (stream) name `report --json` gives a lost marker.
pub fn buffer_name(meta: &TraceMeta, stream: u32) -> &str {
    meta.streams
        .get(stream as usize)
        .and_then(|s| meta.buffers.get(s.buffer as usize))
        .map_or("", |b| b.name.as_str())
}

/// The members every line starts with: `{"type":KIND,"ts":..,"cpu":..,"buffer":..`,
/// and `"input":NAME` when the trace is a timeline of several inputs.
fn line_head(out: &mut Vec<u8>, meta: &TraceMeta, kind: &[u8], ts: u64, cpu: u32, stream: u32) {
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind);
    out.extend_from_slice(b"\",\"ts\":");
    dec(out, ts);
    out.extend_from_slice(b",\"cpu\":");
    dec(out, cpu);
    stream_head(out, meta, stream);
}

/// The members of a line that depend on its stream: `,"buffer":NAME`, and
/// `,"input":NAME` in a timeline of several inputs.
fn stream_head(out: &mut Vec<u8>, meta: &TraceMeta, stream: u32) {
    let buffer = buffer_name(meta, stream);
    out.extend_from_slice(b",\"buffer\":");
    json_str(out, buffer.as_bytes());
    if !meta.inputs.is_empty() {
        if let Some(i) = tracemux_core::timeline::input_of_stream(meta, stream) {
            out.extend_from_slice(b",\"input\":");
            json_str(out, meta.inputs[i].name.as_bytes());
        }
    }
}

/// One event as a JSON line (a [`JsonWriter`] made for it: writers of
/// many events keep one).
pub fn write_event(out: &mut Vec<u8>, meta: &TraceMeta, ev: &Event<'_>) {
    JsonWriter::new().event(out, meta, ev)
}

/// What a class's lines need, made once: its system and name, and the
/// key of each field, escaped.
#[derive(Debug, Default)]
struct ClassJson {
    /// `,"system":"S","event":"E"`.
    head: Vec<u8>,
    /// `"NAME":` of every field of the layout, by id (ranges of `keys`).
    key_at: Vec<(u32, u32)>,
    /// `"NAME":` of each fixed-layout field of the payload (ranges of
    /// `keys`).
    fixed_at: Vec<(u32, u32)>,
    keys: Vec<u8>,
}

impl ClassJson {
    fn of(c: &EventClass) -> ClassJson {
        let mut j = ClassJson::default();
        j.head.extend_from_slice(b",\"system\":");
        json_str(&mut j.head, c.system.as_bytes());
        j.head.extend_from_slice(b",\"event\":");
        json_str(&mut j.head, c.name.as_bytes());
        let key = |keys: &mut Vec<u8>, name: &str| {
            let s = keys.len() as u32;
            json_str(keys, name.as_bytes());
            keys.push(b':');
            (s, keys.len() as u32)
        };
        for f in c.layout().iter() {
            let k = key(&mut j.keys, f.name());
            j.key_at.push(k);
        }
        for f in &c.fields {
            let k = key(&mut j.keys, &f.name);
            j.fixed_at.push(k);
        }
        j
    }

    /// The key of field `id` (`None`: one the class does not have).
    #[inline]
    fn key(&self, id: usize) -> Option<&[u8]> {
        let &(a, b) = self.key_at.get(id)?;
        self.keys.get(a as usize..b as usize)
    }
}

/// Writes JSON lines (and payloads), with what each class needs made at
/// its first event ([`ClassJson`]): no field name is escaped per event.
#[derive(Debug, Default)]
pub struct JsonWriter {
    classes: ClassMap<ClassJson>,
    stack: Vec<(Kind, u32)>,
    /// `,"buffer":NAME` (and `,"input":NAME`) of each stream, made at its
    /// first event (none made yet: empty).
    stream_heads: Vec<Vec<u8>>,
    /// Per CPU, the pid of its last event and that task's `"comm"` value
    /// (`null` or the name, escaped): a CPU runs one task for many events.
    comms: Vec<(i32, Vec<u8>)>,
}

impl JsonWriter {
    pub fn new() -> JsonWriter {
        JsonWriter::default()
    }

    /// `ev` as one JSON line (the schema in the README).
    pub fn event(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, ev: &Event<'_>) {
        out.extend_from_slice(b"{\"type\":\"event\",\"ts\":");
        dec(out, ev.ts);
        out.extend_from_slice(b",\"cpu\":");
        dec(out, ev.cpu);
        let s = ev.stream as usize;
        if self.stream_heads.len() <= s {
            self.stream_heads.resize(s + 1, Vec::new());
        }
        if self.stream_heads[s].is_empty() {
            stream_head(&mut self.stream_heads[s], meta, ev.stream);
        }
        out.extend_from_slice(&self.stream_heads[s]);
        let cj = match ev.class {
            Some(c) => {
                let cj = self
                    .classes
                    .get_or_insert_with(c.index, || ClassJson::of(c));
                out.extend_from_slice(&cj.head);
                Some(&*cj)
            }
            None => {
                out.extend_from_slice(b",\"system\":null,\"event\":null,\"type_id\":");
                dec(out, ev.type_id);
                None
            }
        };
        out.extend_from_slice(b",\"pid\":");
        dec(out, ev.pid);
        out.extend_from_slice(b",\"comm\":");
        let cpu = ev.cpu as usize;
        if cpu < 4096 {
            if self.comms.len() <= cpu {
                self.comms.resize(cpu + 1, (0, Vec::new()));
            }
            let (pid, comm) = &mut self.comms[cpu];
            if *pid != ev.pid || comm.is_empty() {
                *pid = ev.pid;
                comm.clear();
                comm_value(comm, meta, ev.pid);
            }
            out.extend_from_slice(comm);
        } else {
            comm_value(out, meta, ev.pid);
        }
        match (fixed_layout(ev), cj) {
            (Some(c), Some(cj)) => {
                out.extend_from_slice(b",\"fields\":");
                fixed_fields(out, c, cj, ev);
            }
            _ if !scopes(out, meta, ev, cj, &mut self.stack, false) => {
                out.extend_from_slice(b",\"fields\":{}")
            }
            _ => {}
        }
        out.extend_from_slice(b"}\n");
    }

    /// The payload of `ev` alone, as one JSON object (the `fields` member
    /// of [`JsonWriter::event`]; `{}` when the event has none).
    pub fn payload(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, ev: &Event<'_>) {
        let cj = ev.class.map(|c| {
            &*self
                .classes
                .get_or_insert_with(c.index, || ClassJson::of(c))
        });
        match (fixed_layout(ev), cj) {
            (Some(c), Some(cj)) => fixed_fields(out, c, cj, ev),
            _ => {
                let start = out.len();
                if scopes(out, meta, ev, cj, &mut self.stack, true) {
                    out.drain(start..start + b",\"fields\":".len());
                } else {
                    out.truncate(start);
                    out.extend_from_slice(b"{}");
                }
            }
        }
    }
}

/// The value of the `comm` member of an event of task `pid`.
fn comm_value(out: &mut Vec<u8>, meta: &TraceMeta, pid: i32) {
    match task_name(meta, pid) {
        Some(c) => json_str(out, c.as_bytes()),
        None => out.extend_from_slice(b"null"),
    }
}

/// The `comm` member of an event of task `pid`: `<idle>` for pid 0, else
/// the name the trace records for the task, if any.
pub fn task_name(meta: &TraceMeta, pid: i32) -> Option<&str> {
    match pid {
        0 => Some("<idle>"),
        _ => meta.tasks.get(pid),
    }
}

/// The payload of `ev` alone, as one JSON object (see
/// [`JsonWriter::payload`]; writers of many events keep a [`JsonWriter`]).
pub fn write_payload(out: &mut Vec<u8>, meta: &TraceMeta, ev: &Event<'_>) {
    JsonWriter::new().payload(out, meta, ev)
}

/// The event's scopes as `,"SCOPE":{...}` members (`fields` for the
/// payload; the payload alone when `payload_only`). Returns whether the
/// payload was written.
fn scopes(
    out: &mut Vec<u8>,
    meta: &TraceMeta,
    ev: &Event<'_>,
    keys: Option<&ClassJson>,
    stack: &mut Vec<(Kind, u32)>,
    payload_only: bool,
) -> bool {
    let ctx = PrintCtx::of(meta, ev);
    stack.clear();
    let mut j = Json {
        out,
        stack,
        keys,
        payload: false,
    };
    if payload_only {
        let mut only = PayloadOnly {
            v: &mut j,
            on: false,
        };
        visit_fields(ev, &ctx, &mut only);
    } else {
        visit_fields(ev, &ctx, &mut j);
    }
    j.close_all();
    j.payload
}

/// Hands on what the payload scope holds, nothing else.
struct PayloadOnly<'v> {
    v: &'v mut dyn FieldVisitor,
    on: bool,
}

/// Visitor methods that pass the call on to `self.v` while `self.on`.
macro_rules! while_on {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method(&mut self, $($arg: $ty),*) {
            if self.on {
                self.v.$method($($arg),*);
            }
        }
    )*};
}

impl FieldVisitor for PayloadOnly<'_> {
    while_on! {
        field(f: FieldRef<'_>, base: Base, value: Value<'_>);
        enum_field(f: FieldRef<'_>, value: Value<'_>, labels: &[&str]);
        struct_begin(f: FieldRef<'_>);
        struct_end();
        array_begin(f: FieldRef<'_>, len: u64);
        array_end();
        variant_begin(f: FieldRef<'_>, option: FieldRef<'_>);
        variant_end();
        optional_begin(f: FieldRef<'_>, present: bool);
        optional_end();
    }
    fn scope_begin(&mut self, scope: Scope) {
        self.on = scope == Scope::Payload;
        if self.on {
            self.v.scope_begin(scope);
        }
    }
    fn scope_end(&mut self, scope: Scope) {
        if self.on {
            self.v.scope_end(scope);
        }
        self.on = false;
    }
}

/// The class of `ev` when its fields have a fixed layout (ftrace: no
/// recorded tape, no typed schema).
fn fixed_layout<'e>(ev: &Event<'e>) -> Option<&'e EventClass> {
    ev.class.filter(|c| ev.tape.is_none() && c.schema.is_none())
}

/// The own fields of a fixed-layout (ftrace) event as one object, as the
/// README's schema has always shown them (`common_*` fields left out: `pid`
/// has them).
fn fixed_fields(out: &mut Vec<u8>, c: &EventClass, cj: &ClassJson, ev: &Event<'_>) {
    out.push(b'{');
    for (i, f) in c.fields.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match cj.fixed_at.get(i) {
            Some(&(a, b)) => out.extend_from_slice(&cj.keys[a as usize..b as usize]),
            None => {
                json_str(out, f.name.as_bytes());
                out.push(b':');
            }
        }
        match f.value(ev.data, ev.endian) {
            Some(v) => value(out, v),
            None => out.extend_from_slice(b"null"),
        }
    }
    out.push(b'}');
}

/// One leaf value.
fn value(out: &mut Vec<u8>, v: Value<'_>) {
    match v {
        Value::Unsigned(v) => dec(out, v),
        Value::Signed(v) => dec(out, v),
        Value::Float(v) if v.is_finite() => out.extend_from_slice(v.to_string().as_bytes()),
        Value::Float(_) => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Value::Str(s) => json_str(out, s),
        Value::IntArray {
            data,
            elem_size,
            signed,
            endian,
        } => {
            out.push(b'[');
            let es = elem_size.max(1) as usize;
            for (j, e) in data.chunks_exact(es).enumerate() {
                if j > 0 {
                    out.push(b',');
                }
                match endian.read_uint(e, es) {
                    Some(x) if signed => dec(out, tracemux_core::model::sign_extend(x, es)),
                    Some(x) => dec(out, x),
                    None => out.extend_from_slice(b"null"),
                }
            }
            out.push(b']');
        }
        Value::Bytes(b) => {
            out.push(b'[');
            for (j, x) in b.iter().enumerate() {
                if j > 0 {
                    out.push(b',');
                }
                dec(out, *x);
            }
            out.push(b']');
        }
    }
}

/// Nested values as JSON: each scope an object (`fields` for the payload,
/// the scope's name for the others), structures objects, arrays arrays,
/// a variant `{"OPTION": value}`, an absent optional `null`, an enumeration
/// `{"value": N, "labels": [...]}`.
struct Json<'o> {
    out: &'o mut Vec<u8>,
    /// Open containers and the members written so far in each.
    stack: &'o mut Vec<(Kind, u32)>,
    /// The class's keys, by field id.
    keys: Option<&'o ClassJson>,
    /// Whether the payload scope was written.
    payload: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
    /// `{"OPTION":` of a variant, written: its one value follows.
    Variant,
    /// The key of a present optional, written: its value follows.
    Bare,
}

impl Json<'_> {
    /// The separator and key before a member of the open container.
    fn key(&mut self, f: FieldRef<'_>) {
        // a variant's or present optional's one value; a second one (an
        // unbalanced visit) closes it and goes to the container around it
        while let Some((Kind::Variant | Kind::Bare, n)) = self.stack.last_mut() {
            if *n == 0 {
                *n = 1;
                return;
            }
            self.close();
        }
        let Some((kind, n)) = self.stack.last_mut() else {
            return;
        };
        if *n > 0 {
            self.out.push(b',');
        }
        *n += 1;
        if *kind == Kind::Object {
            match self.keys.and_then(|k| k.key(f.id.index())) {
                Some(k) => self.out.extend_from_slice(k),
                None => {
                    json_str(self.out, f.name().as_bytes());
                    self.out.push(b':');
                }
            }
        }
    }
    fn open(&mut self, f: FieldRef<'_>, kind: Kind) {
        self.key(f);
        self.out.push(if kind == Kind::Array { b'[' } else { b'{' });
        self.stack.push((kind, 0));
    }
    fn close_all(&mut self) {
        while !self.stack.is_empty() {
            self.close();
        }
    }
    fn close(&mut self) {
        match self.stack.pop() {
            Some((Kind::Array, _)) => self.out.push(b']'),
            // closed before its value came (an unbalanced visit)
            Some((Kind::Variant, 0)) => self.out.extend_from_slice(b"null}"),
            Some((Kind::Bare, 0)) => self.out.extend_from_slice(b"null"),
            Some((Kind::Bare, _)) | None => {}
            Some(_) => self.out.push(b'}'),
        }
    }
}

impl FieldVisitor for Json<'_> {
    fn field(&mut self, f: FieldRef<'_>, _base: Base, v: Value<'_>) {
        if self.stack.is_empty() {
            return;
        }
        self.key(f);
        value(self.out, v);
    }
    fn enum_field(&mut self, f: FieldRef<'_>, v: Value<'_>, labels: &[&str]) {
        if self.stack.is_empty() {
            return;
        }
        self.key(f);
        self.out.extend_from_slice(b"{\"value\":");
        value(self.out, v);
        self.out.extend_from_slice(b",\"labels\":[");
        for (i, l) in labels.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            json_str(self.out, l.as_bytes());
        }
        self.out.extend_from_slice(b"]}");
    }
    fn scope_begin(&mut self, scope: Scope) {
        // a scope left open (an unbalanced visit) is closed first
        self.close_all();
        if scope == Scope::EventHeader {
            return;
        }
        self.out.push(b',');
        let key = if scope == Scope::Payload {
            self.payload = true;
            "fields"
        } else {
            scope.name()
        };
        json_str(self.out, key.as_bytes());
        self.out.extend_from_slice(b":{");
        self.stack.push((Kind::Object, 0));
    }
    fn scope_end(&mut self, scope: Scope) {
        if scope == Scope::EventHeader {
            return;
        }
        self.close_all();
    }
    fn struct_begin(&mut self, f: FieldRef<'_>) {
        if !self.stack.is_empty() {
            self.open(f, Kind::Object);
        }
    }
    fn struct_end(&mut self) {
        if self.stack.len() > 1 {
            self.close();
        }
    }
    fn array_begin(&mut self, f: FieldRef<'_>, _len: u64) {
        if !self.stack.is_empty() {
            self.open(f, Kind::Array);
        }
    }
    fn array_end(&mut self) {
        if self.stack.len() > 1 {
            self.close();
        }
    }
    fn variant_begin(&mut self, f: FieldRef<'_>, option: FieldRef<'_>) {
        if !self.stack.is_empty() {
            self.key(f);
            self.out.push(b'{');
            json_str(self.out, option.option().as_bytes());
            self.out.push(b':');
            self.stack.push((Kind::Variant, 0));
        }
    }
    fn variant_end(&mut self) {
        if self.stack.len() > 1 {
            self.close();
        }
    }
    fn optional_begin(&mut self, f: FieldRef<'_>, present: bool) {
        if self.stack.is_empty() {
            return;
        }
        self.key(f);
        if present {
            self.stack.push((Kind::Bare, 0));
        } else {
            self.out.extend_from_slice(b"null");
            self.stack.push((Kind::Bare, 1));
        }
    }
    fn optional_end(&mut self) {
        if self.stack.len() > 1 {
            self.close();
        }
    }
}

pub fn write_lost(out: &mut Vec<u8>, meta: &TraceMeta, l: &Lost) {
    line_head(out, meta, b"lost", l.ts, l.cpu, l.stream);
    out.extend_from_slice(b",\"count\":");
    match l.count {
        Some(c) => dec(out, c),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    use tracemux_core::layout::ClassLayout;
    use tracemux_core::typed::{ArrayLen, ClassSchema, FieldSchema, FieldTape, FieldType};

    fn class(schema: ClassSchema) -> EventClass {
        EventClass::with_schema(1, "prov", "ev", schema)
    }

    fn field<'l>(l: &'l ClassLayout, scope: Scope, path: &[&str]) -> FieldRef<'l> {
        l.get(l.path(scope, path))
    }

    #[test]
    fn nested_values_from_a_tape() {
        use tracemux_core::Endian;
        let mut s = ClassSchema::default();
        s.push(
            Scope::PacketContext,
            vec![FieldSchema::new("cpu_id", FieldType::u(32))],
        );
        s.push(
            Scope::EventHeader,
            vec![FieldSchema::new("id", FieldType::u(32))],
        );
        s.push(
            Scope::Payload,
            vec![
                FieldSchema::new("n", FieldType::s(32)),
                FieldSchema::new(
                    "s",
                    FieldType::Struct(vec![
                        FieldSchema::new("t", FieldType::Str),
                        FieldSchema::new(
                            "a",
                            FieldType::Array {
                                elem: Box::new(FieldType::Float { bits: 64 }),
                                len: ArrayLen::Dynamic,
                            },
                        ),
                    ]),
                ),
                FieldSchema::new(
                    "v",
                    FieldType::Variant(vec![FieldSchema::new(
                        "f",
                        FieldType::Struct(vec![FieldSchema::new("x", FieldType::Bool)]),
                    )]),
                ),
                FieldSchema::new("o", FieldType::Optional(Box::new(FieldType::u(8)))),
                FieldSchema::new("p", FieldType::Optional(Box::new(FieldType::Blob))),
            ],
        );
        let class = class(s);
        let l = class.layout();
        let p = |path: &[&str]| field(l, Scope::Payload, path);
        let mut t = FieldTape::new();
        t.scope_begin(Scope::PacketContext);
        t.field(
            field(l, Scope::PacketContext, &["cpu_id"]),
            Base::Dec,
            Value::Unsigned(1),
        );
        t.scope_end(Scope::PacketContext);
        t.scope_begin(Scope::EventHeader);
        t.field(
            field(l, Scope::EventHeader, &["id"]),
            Base::Dec,
            Value::Unsigned(1),
        );
        t.scope_end(Scope::EventHeader);
        t.scope_begin(Scope::Payload);
        t.field(p(&["n"]), Base::Hex, Value::Signed(-2));
        t.struct_begin(p(&["s"]));
        t.field(p(&["s", "t"]), Base::Dec, Value::Str(b"a\"b"));
        t.array_begin(p(&["s", "a"]), 2);
        t.field(p(&["s", "a", ""]), Base::Dec, Value::Float(0.5));
        t.enum_field(p(&["s", "a", ""]), Value::Unsigned(3), &["X", "Y"]);
        t.array_end();
        t.struct_end();
        t.variant_begin(p(&["v"]), p(&["v", "f"]));
        t.struct_begin(p(&["v", "f"]));
        t.field(p(&["v", "f", "x"]), Base::Dec, Value::Bool(true));
        t.struct_end();
        t.variant_end();
        t.optional_begin(p(&["o"]), false);
        t.optional_end();
        t.optional_begin(p(&["p"]), true);
        t.field(p(&["p", ""]), Base::Dec, Value::Bytes(&[1, 2]));
        t.optional_end();
        t.scope_end(Scope::Payload);
        let ev = Event {
            ts: 10,
            stream: 0,
            cpu: 1,
            type_id: 1,
            class: Some(&class),
            pid: 5,
            data: &[],
            ext: &[],
            endian: Endian::Little,
            file_pos: 0,
            tape: Some(&t),
            raw_ts: None,
        };
        let mut o = Vec::new();
        write_event(&mut o, &TraceMeta::default(), &ev);
        assert_eq!(
            String::from_utf8(o).unwrap(),
            "{\"type\":\"event\",\"ts\":10,\"cpu\":1,\"buffer\":\"\",\"system\":\"prov\",\"event\":\"ev\",\
             \"pid\":5,\"comm\":null,\"packet_context\":{\"cpu_id\":1},\"fields\":{\"n\":-2,\
             \"s\":{\"t\":\"a\\\"b\",\"a\":[0.5,{\"value\":3,\"labels\":[\"X\",\"Y\"]}]},\
             \"v\":{\"f\":{\"x\":true}},\"o\":null,\"p\":[1,2]}}\n"
        );
    }

    /// Unbalanced visits (fuzz target `jsonl_model`: a scope never ended
    /// gave `"packet_context":{,"fields":{}}`): still one JSON object; a
    /// class-less event's fields have no names.
    #[test]
    fn unbalanced_tapes_still_make_json() {
        use tracemux_core::Endian;
        let mut s = ClassSchema::default();
        s.push(
            Scope::CommonContext,
            vec![FieldSchema::new("a", FieldType::u(8))],
        );
        let opt = |o: &str, ty| FieldType::Variant(vec![FieldSchema::new(o, ty)]);
        s.push(
            Scope::Payload,
            vec![
                FieldSchema::new("v", opt("o", FieldType::u(8))),
                FieldSchema::new("p", FieldType::Optional(Box::new(FieldType::u(8)))),
                FieldSchema::new("w", opt("o", FieldType::u(8))),
                FieldSchema::new("y", FieldType::u(8)),
            ],
        );
        let class = class(s);
        let line = |t: &FieldTape, class: Option<&EventClass>| {
            let ev = Event {
                ts: 1,
                stream: 0,
                cpu: 0,
                type_id: 1,
                class,
                pid: 1,
                data: &[],
                ext: &[],
                endian: Endian::Little,
                file_pos: 0,
                tape: Some(t),
                raw_ts: None,
            };
            let mut o = Vec::new();
            write_event(&mut o, &TraceMeta::default(), &ev);
            String::from_utf8(o).unwrap()
        };
        let head = "{\"type\":\"event\",\"ts\":1,\"cpu\":0,\"buffer\":\"\",\"system\":null,\
                    \"event\":null,\"type_id\":1,\"pid\":1,\"comm\":null,";
        // the crash input: a scope begun, never ended
        let mut t = FieldTape::new();
        t.scope_begin(Scope::PacketContext);
        t.put_struct(tracemux_core::layout::FieldId::new(0));
        assert_eq!(
            line(&t, None),
            format!("{head}\"packet_context\":{{\"\":{{}}}},\"fields\":{{}}}}\n")
        );
        // a scope left open when the next begins; a variant and an
        // optional without their value; two values in one variant
        let l = class.layout();
        let p = |path: &[&str]| field(l, Scope::Payload, path);
        let mut t = FieldTape::new();
        t.scope_begin(Scope::CommonContext);
        t.field(
            field(l, Scope::CommonContext, &["a"]),
            Base::Dec,
            Value::Unsigned(1),
        );
        t.scope_begin(Scope::Payload);
        t.variant_begin(p(&["v"]), p(&["v", "o"]));
        t.variant_end();
        t.optional_begin(p(&["p"]), true);
        t.optional_end();
        t.variant_begin(p(&["w"]), p(&["w", "o"]));
        t.field(p(&["w", "o"]), Base::Dec, Value::Unsigned(2));
        t.field(p(&["y"]), Base::Dec, Value::Unsigned(3));
        t.variant_end();
        let head = head.replace(
            "\"system\":null,\"event\":null,\"type_id\":1,",
            "\"system\":\"prov\",\"event\":\"ev\",",
        );
        assert_eq!(
            line(&t, Some(&class)),
            format!(
                "{head}\"common_context\":{{\"a\":1}},\"fields\":{{\"v\":{{\"o\":null}},\
                 \"p\":null,\"w\":{{\"o\":2}},\"y\":3}}}}\n"
            )
        );
    }
}
