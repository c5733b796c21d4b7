//! Rows kept as compact bytes until they are written.
//!
//! The Parquet writer ([`crate::writer`]) does not build Arrow columns as
//! events come: each table records its rows on a [`Tape`] (varints, the
//! time as a difference from the row before, text that repeats the row
//! before's as one byte, field names as numbers), and a tape becomes one
//! row group at once, replayed into the table's builders ([`crate::rows`])
//! on the encoder thread. A tape is about half the size of the same rows
//! in Arrow builders, only one table's builders exist at a time, and row
//! groups are as large as the tapes the memory budget allows.
//!
//! What a field visit gives ([`FieldVisitor`] calls) is recorded as it
//! comes and replayed as it was, call for call, so a row built from a tape
//! is the row [`crate::rows::Rows::event`] builds from the event (the
//! number base of a value, which no column keeps, is recorded too).

use tracemux_core::bytes::Endian;
use tracemux_core::layout::{ClassLayout, FieldId, FieldRef};
use tracemux_core::model::{Base, Value};
use tracemux_core::typed::{FieldVisitor, Scope};

/// Text columns whose value often repeats from row to row: the tape keeps
/// the last one of each.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Slot {
    Comm = 0,
    Buffer = 1,
    System = 2,
    Event = 3,
}
const SLOTS: usize = 4;

/// One table's rows, recorded: the latest in `buf`, the earlier ones in
/// compressed chunks (each read on its own: the differences from the row
/// before start again in each).
#[derive(Debug, Default)]
pub(crate) struct Tape {
    buf: Vec<u8>,
    chunks: Vec<Chunk>,
    /// Bytes of `chunks`.
    packed: usize,
    rows: usize,
    prev_ts: i64,
    prev: [Option<Vec<u8>>; SLOTS],
    /// Field names, options and labels, by number (kept across tapes: a
    /// tape's reader gets the list as it is when the tape is taken).
    names: Vec<Box<str>>,
    /// The name after the last one looked up (names come in schema order).
    hint: usize,
}

/// The operations of a recorded visit (`op` bytes). Leaves and
/// enumerations add their value's kind (and a leaf its base).
mod op {
    pub const END: u8 = 0;
    pub const SCOPE_BEGIN: u8 = 1;
    pub const SCOPE_END: u8 = 2;
    pub const STRUCT_BEGIN: u8 = 3;
    pub const STRUCT_END: u8 = 4;
    pub const ARRAY_BEGIN: u8 = 5;
    pub const ARRAY_END: u8 = 6;
    pub const VARIANT_BEGIN: u8 = 7;
    pub const VARIANT_END: u8 = 8;
    pub const OPTIONAL_ABSENT: u8 = 9;
    pub const OPTIONAL_PRESENT: u8 = 10;
    pub const OPTIONAL_END: u8 = 11;
    /// `FIELD + kind * 4 + base`.
    pub const FIELD: u8 = 16;
    /// `ENUM + kind`.
    pub const ENUM: u8 = 48;
}

/// Value kinds.
mod kind {
    pub const U: u8 = 0;
    pub const S: u8 = 1;
    pub const F: u8 = 2;
    pub const B: u8 = 3;
    pub const STR: u8 = 4;
    pub const BYTES: u8 = 5;
    pub const INTS: u8 = 6;
}

fn base_code(b: Base) -> u8 {
    match b {
        Base::Dec => 0,
        Base::Hex => 1,
        Base::Oct => 2,
        Base::Bin => 3,
    }
}

fn base_of(c: u8) -> Base {
    match c & 3 {
        0 => Base::Dec,
        1 => Base::Hex,
        2 => Base::Oct,
        _ => Base::Bin,
    }
}

fn scope_code(s: Scope) -> u8 {
    match s {
        Scope::PacketContext => 0,
        Scope::EventHeader => 1,
        Scope::CommonContext => 2,
        Scope::SpecificContext => 3,
        Scope::Payload => 4,
    }
}

fn scope_of(c: u8) -> Scope {
    match c {
        0 => Scope::PacketContext,
        1 => Scope::EventHeader,
        2 => Scope::CommonContext,
        3 => Scope::SpecificContext,
        _ => Scope::Payload,
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Rows of a tape compressed (zstd), or kept as they are when that failed.
#[derive(Debug)]
pub(crate) struct Chunk {
    raw_len: usize,
    packed: bool,
    data: Box<[u8]>,
}

/// A tape's rows, taken to be written: its chunks, then its latest rows.
pub(crate) struct Taken {
    pub(crate) chunks: Vec<Chunk>,
    pub(crate) tail: Vec<u8>,
    pub(crate) names: Vec<Box<str>>,
}

/// Compresses chunks of tapes (one zstd context for all).
pub(crate) struct Packer {
    z: Option<zstd::bulk::Compressor<'static>>,
    scratch: Vec<u8>,
}

impl Packer {
    pub(crate) fn new() -> Packer {
        Packer {
            // level 1: a third of the rows' size at several hundred MB/s
            z: zstd::bulk::Compressor::new(1).ok(),
            scratch: Vec::new(),
        }
    }

    fn pack(&mut self, raw: &[u8]) -> Chunk {
        if let Some(z) = &mut self.z {
            self.scratch.clear();
            self.scratch
                .reserve(zstd::zstd_safe::compress_bound(raw.len()));
            if z.compress_to_buffer(raw, &mut self.scratch).is_ok() {
                return Chunk {
                    raw_len: raw.len(),
                    packed: true,
                    data: self.scratch.as_slice().into(),
                };
            }
        }
        Chunk {
            raw_len: raw.len(),
            packed: false,
            data: raw.into(),
        }
    }
}

/// Decompresses the chunks of taken tapes.
pub(crate) struct Unpacker {
    z: Option<zstd::bulk::Decompressor<'static>>,
    buf: Vec<u8>,
}

impl Unpacker {
    pub(crate) fn new() -> Unpacker {
        Unpacker {
            z: zstd::bulk::Decompressor::new().ok(),
            buf: Vec::new(),
        }
    }

    /// The rows of `c`; nothing when they cannot be read back.
    pub(crate) fn unpack<'c>(&'c mut self, c: &'c Chunk) -> &'c [u8] {
        if !c.packed {
            return &c.data;
        }
        self.buf.clear();
        self.buf.reserve(c.raw_len);
        let ok = match &mut self.z {
            Some(z) => z.decompress_to_buffer(&c.data, &mut self.buf).is_ok(),
            None => false,
        };
        if ok {
            &self.buf
        } else {
            &[]
        }
    }
}

impl Tape {
    /// Rows recorded.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// Bytes of the latest rows (not yet compressed).
    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }

    /// Bytes held by the latest rows (not yet compressed).
    pub(crate) fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Bytes held by the compressed chunks.
    pub(crate) fn packed(&self) -> usize {
        self.packed
    }

    /// Compress the latest rows into a chunk; returns the bytes it takes.
    pub(crate) fn pack(&mut self, p: &mut Packer) -> usize {
        if self.buf.is_empty() {
            return 0;
        }
        let c = p.pack(&self.buf);
        let n = c.data.len();
        self.packed += n;
        self.chunks.push(c);
        self.buf = Vec::new();
        self.prev_ts = 0;
        self.prev = Default::default();
        n
    }

    /// Take the rows recorded (and the names they use); the tape starts
    /// again empty.
    pub(crate) fn take(&mut self) -> Taken {
        self.rows = 0;
        self.packed = 0;
        self.prev_ts = 0;
        self.prev = Default::default();
        Taken {
            chunks: std::mem::take(&mut self.chunks),
            tail: std::mem::take(&mut self.buf),
            names: self.names.clone(),
        }
    }

    pub(crate) fn end_row(&mut self) {
        self.rows += 1;
    }

    pub(crate) fn put_u(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    pub(crate) fn put_s(&mut self, v: i64) {
        self.put_u(zigzag(v));
    }

    /// A row's time, as the difference from the row before.
    pub(crate) fn put_ts(&mut self, ts: i64) {
        self.put_s(ts.wrapping_sub(self.prev_ts));
        self.prev_ts = ts;
    }

    /// `None`: 0; `Some(v)`: 1 then `v`.
    pub(crate) fn put_opt(&mut self, v: Option<u64>) {
        match v {
            None => self.buf.push(0),
            Some(v) => {
                self.buf.push(1);
                self.put_u(v);
            }
        }
    }

    pub(crate) fn put_bytes(&mut self, b: &[u8]) {
        self.put_u(b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    /// Text of a [`Slot`]: 0 none, 1 the row before's, else its length + 2
    /// and its bytes.
    pub(crate) fn put_slot(&mut self, slot: Slot, s: Option<&[u8]>) {
        let prev = &mut self.prev[slot as usize];
        match s {
            None => {
                *prev = None;
                self.buf.push(0);
            }
            Some(s) if prev.as_deref() == Some(s) => self.buf.push(1),
            Some(s) => {
                match prev {
                    Some(p) => {
                        p.clear();
                        p.extend_from_slice(s);
                    }
                    None => *prev = Some(s.to_vec()),
                }
                self.put_u(s.len() as u64 + 2);
                self.buf.extend_from_slice(s);
            }
        }
    }

    /// The number of `name`.
    fn name(&mut self, name: &str) -> u64 {
        let k = match self.names.get(self.hint) {
            Some(n) if **n == *name => self.hint,
            // the same name again (array elements)
            _ if self.hint > 0 && *self.names[self.hint - 1] == *name => self.hint - 1,
            _ => match self.names.iter().position(|n| **n == *name) {
                Some(k) => k,
                None => {
                    self.names.push(name.into());
                    self.names.len() - 1
                }
            },
        };
        self.hint = k + 1;
        k as u64
    }

    fn put_name(&mut self, name: &str) {
        let k = self.name(name);
        self.put_u(k);
    }

    fn put_value(&mut self, v: Value<'_>) {
        match v {
            Value::Unsigned(x) => self.put_u(x),
            Value::Signed(x) => self.put_s(x),
            Value::Float(x) => self.buf.extend_from_slice(&x.to_le_bytes()),
            Value::Bool(b) => self.buf.push(b as u8),
            Value::Str(b) | Value::Bytes(b) => self.put_bytes(b),
            Value::IntArray {
                data,
                elem_size,
                signed,
                endian,
            } => {
                self.put_u(u64::from(elem_size));
                self.buf
                    .push(signed as u8 | ((matches!(endian, Endian::Big) as u8) << 1));
                self.put_bytes(data);
            }
        }
    }

    /// Record the visit of a row's fields (then [`Tape::end_fields`]).
    /// `scopes`: the scopes besides the payload the table has a column
    /// for (what the table's columns want, see [`FieldVisitor::wants`]).
    pub(crate) fn recorder<'t>(&'t mut self, scopes: &'t [Scope]) -> Recorder<'t> {
        self.hint = 0;
        Recorder { tape: self, scopes }
    }

    pub(crate) fn end_fields(&mut self) {
        self.buf.push(op::END);
    }
}

fn value_kind(v: &Value<'_>) -> u8 {
    match v {
        Value::Unsigned(_) => kind::U,
        Value::Signed(_) => kind::S,
        Value::Float(_) => kind::F,
        Value::Bool(_) => kind::B,
        Value::Str(_) => kind::STR,
        Value::Bytes(_) => kind::BYTES,
        Value::IntArray { .. } => kind::INTS,
    }
}

/// Records a field visit on a [`Tape`].
pub(crate) struct Recorder<'t> {
    tape: &'t mut Tape,
    scopes: &'t [Scope],
}

impl Recorder<'_> {
    fn op_field(&mut self, op: u8, f: FieldRef<'_>) {
        self.tape.buf.push(op);
        self.tape.put_u(u64::from(f.id.raw()));
    }
}

impl FieldVisitor for Recorder<'_> {
    fn wants(&self, f_: FieldRef<'_>) -> bool {
        let scope = f_.scope();
        match scope {
            Scope::EventHeader => false,
            Scope::Payload => true,
            s => self.scopes.contains(&s),
        }
    }
    fn field(&mut self, f: FieldRef<'_>, base: Base, value: Value<'_>) {
        self.op_field(op::FIELD + value_kind(&value) * 4 + base_code(base), f);
        self.tape.put_value(value);
    }
    fn enum_field(&mut self, f: FieldRef<'_>, value: Value<'_>, labels: &[&str]) {
        self.op_field(op::ENUM + value_kind(&value), f);
        self.tape.put_value(value);
        self.tape.put_u(labels.len() as u64);
        for l in labels {
            self.tape.put_name(l);
        }
    }
    fn scope_begin(&mut self, scope: Scope) {
        self.tape
            .buf
            .extend_from_slice(&[op::SCOPE_BEGIN, scope_code(scope)]);
    }
    fn scope_end(&mut self, scope: Scope) {
        self.tape
            .buf
            .extend_from_slice(&[op::SCOPE_END, scope_code(scope)]);
    }
    fn struct_begin(&mut self, f: FieldRef<'_>) {
        self.op_field(op::STRUCT_BEGIN, f);
    }
    fn struct_end(&mut self) {
        self.tape.buf.push(op::STRUCT_END);
    }
    fn array_begin(&mut self, f: FieldRef<'_>, len: u64) {
        self.op_field(op::ARRAY_BEGIN, f);
        self.tape.put_u(len);
    }
    fn array_end(&mut self) {
        self.tape.buf.push(op::ARRAY_END);
    }
    fn variant_begin(&mut self, f: FieldRef<'_>, option: FieldRef<'_>) {
        self.op_field(op::VARIANT_BEGIN, f);
        self.tape.put_u(u64::from(option.id.raw()));
    }
    fn variant_end(&mut self) {
        self.tape.buf.push(op::VARIANT_END);
    }
    fn optional_begin(&mut self, f: FieldRef<'_>, present: bool) {
        let o = if present {
            op::OPTIONAL_PRESENT
        } else {
            op::OPTIONAL_ABSENT
        };
        self.op_field(o, f);
    }
    fn optional_end(&mut self) {
        self.tape.buf.push(op::OPTIONAL_END);
    }
}

/// Reads a tape's rows back, in the order they were recorded (with the
/// same calls as [`Tape`]'s `put_*`).
pub(crate) struct TapeReader<'a> {
    buf: &'a [u8],
    pos: usize,
    names: &'a [Box<str>],
    prev_ts: i64,
    prev: [Option<&'a [u8]>; SLOTS],
    labels: Vec<&'a str>,
}

impl<'a> TapeReader<'a> {
    pub(crate) fn new(buf: &'a [u8], names: &'a [Box<str>]) -> TapeReader<'a> {
        TapeReader {
            buf,
            pos: 0,
            names,
            prev_ts: 0,
            prev: [None; SLOTS],
            labels: Vec::new(),
        }
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn byte(&mut self) -> u8 {
        let b = self.buf.get(self.pos).copied().unwrap_or(op::END);
        self.pos += 1;
        b
    }

    pub(crate) fn u(&mut self) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte();
            if shift < 64 {
                v |= u64::from(b & 0x7f) << shift;
            }
            if b & 0x80 == 0 {
                return v;
            }
            shift += 7;
        }
    }

    pub(crate) fn s(&mut self) -> i64 {
        unzigzag(self.u())
    }

    pub(crate) fn ts(&mut self) -> i64 {
        let ts = self.prev_ts.wrapping_add(self.s());
        self.prev_ts = ts;
        ts
    }

    pub(crate) fn opt(&mut self) -> Option<u64> {
        match self.byte() {
            0 => None,
            _ => Some(self.u()),
        }
    }

    pub(crate) fn bytes(&mut self) -> &'a [u8] {
        let n = self.u() as usize;
        let end = self.pos.saturating_add(n).min(self.buf.len());
        let b = &self.buf[self.pos.min(end)..end];
        self.pos = end;
        b
    }

    pub(crate) fn slot(&mut self, slot: Slot) -> Option<&'a [u8]> {
        match self.u() {
            0 => {
                self.prev[slot as usize] = None;
                None
            }
            1 => self.prev[slot as usize],
            n => {
                let n = (n - 2) as usize;
                let end = self.pos.saturating_add(n).min(self.buf.len());
                let s = &self.buf[self.pos.min(end)..end];
                self.pos = end;
                self.prev[slot as usize] = Some(s);
                Some(s)
            }
        }
    }

    fn name(&mut self) -> &'a str {
        let k = self.u() as usize;
        self.names.get(k).map_or("", |n| n)
    }

    fn field<'l>(&mut self, layout: &'l ClassLayout) -> FieldRef<'l> {
        let id = u32::try_from(self.u()).unwrap_or(u32::MAX);
        layout.get(FieldId::new(id))
    }

    fn value(&mut self, kind: u8) -> Value<'a> {
        match kind {
            kind::U => Value::Unsigned(self.u()),
            kind::S => Value::Signed(self.s()),
            kind::F => {
                let end = (self.pos + 8).min(self.buf.len());
                let mut b = [0u8; 8];
                b[..end - self.pos.min(end)].copy_from_slice(&self.buf[self.pos.min(end)..end]);
                self.pos = end;
                Value::Float(f64::from_le_bytes(b))
            }
            kind::B => Value::Bool(self.byte() != 0),
            kind::STR => Value::Str(self.bytes()),
            kind::BYTES => Value::Bytes(self.bytes()),
            _ => {
                let elem_size = self.u() as u8;
                let flags = self.byte();
                Value::IntArray {
                    elem_size,
                    signed: flags & 1 != 0,
                    endian: if flags & 2 != 0 {
                        Endian::Big
                    } else {
                        Endian::Little
                    },
                    data: self.bytes(),
                }
            }
        }
    }

    /// Replay a row's recorded field visit into `v`, up to its end, with
    /// the fields of `layout` (the table's class's).
    pub(crate) fn fields(&mut self, layout: &ClassLayout, v: &mut dyn FieldVisitor) {
        loop {
            let o = self.byte();
            match o {
                op::END => return,
                op::SCOPE_BEGIN => v.scope_begin(scope_of(self.byte())),
                op::SCOPE_END => v.scope_end(scope_of(self.byte())),
                op::STRUCT_BEGIN => v.struct_begin(self.field(layout)),
                op::STRUCT_END => v.struct_end(),
                op::ARRAY_BEGIN => {
                    let f = self.field(layout);
                    v.array_begin(f, self.u());
                }
                op::ARRAY_END => v.array_end(),
                op::VARIANT_BEGIN => {
                    let f = self.field(layout);
                    v.variant_begin(f, self.field(layout));
                }
                op::VARIANT_END => v.variant_end(),
                op::OPTIONAL_ABSENT => v.optional_begin(self.field(layout), false),
                op::OPTIONAL_PRESENT => v.optional_begin(self.field(layout), true),
                op::OPTIONAL_END => v.optional_end(),
                o if (op::FIELD..op::ENUM).contains(&o) => {
                    let n = self.field(layout);
                    let val = self.value((o - op::FIELD) / 4);
                    v.field(n, base_of(o - op::FIELD), val);
                }
                o if o >= op::ENUM => {
                    let n = self.field(layout);
                    let val = self.value(o - op::ENUM);
                    let count = self.u() as usize;
                    let mut labels = std::mem::take(&mut self.labels);
                    labels.clear();
                    for _ in 0..count {
                        labels.push(self.name());
                    }
                    v.enum_field(n, val, &labels);
                    self.labels = labels;
                }
                // not written by a tape: the row ends here
                _ => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracemux_core::named::Named;

    /// Writes what it is given as text, to compare visits.
    #[derive(Default)]
    struct Text(String);
    impl FieldVisitor for Text {
        fn field(&mut self, f_: FieldRef<'_>, base: Base, value: Value<'_>) {
            let name = f_.name();
            self.0.push_str(&format!("{name}:{base:?}={value:?};"));
        }
        fn enum_field(&mut self, f_: FieldRef<'_>, value: Value<'_>, labels: &[&str]) {
            let name = f_.name();
            self.0.push_str(&format!("{name}={value:?}{labels:?};"));
        }
        fn scope_begin(&mut self, s: Scope) {
            self.0.push_str(&format!("<{}>", s.name()));
        }
        fn scope_end(&mut self, s: Scope) {
            self.0.push_str(&format!("</{}>", s.name()));
        }
        fn struct_begin(&mut self, f_: FieldRef<'_>) {
            let n = f_.name();
            self.0.push_str(&format!("{n}{{"));
        }
        fn struct_end(&mut self) {
            self.0.push('}');
        }
        fn array_begin(&mut self, f_: FieldRef<'_>, len: u64) {
            let n = f_.name();
            self.0.push_str(&format!("{n}[{len}:"));
        }
        fn array_end(&mut self) {
            self.0.push(']');
        }
        fn variant_begin(&mut self, f_: FieldRef<'_>, o_: FieldRef<'_>) {
            let n = f_.name();
            let o = o_.option();
            self.0.push_str(&format!("{n}<{o}>("));
        }
        fn variant_end(&mut self) {
            self.0.push(')');
        }
        fn optional_begin(&mut self, f_: FieldRef<'_>, present: bool) {
            let n = f_.name();
            self.0.push_str(&format!("{n}?{present}("));
        }
        fn optional_end(&mut self) {
            self.0.push(')');
        }
    }

    fn visit(k: u64) -> Named {
        let mut v = Named::new();
        v.scope_begin(Scope::CommonContext);
        v.field("common_pid", Base::Dec, Value::Signed(-(k as i64)));
        v.scope_end(Scope::CommonContext);
        v.scope_begin(Scope::Payload);
        v.field("a", Base::Hex, Value::Unsigned(u64::MAX - k));
        v.field("f", Base::Dec, Value::Float(1.5 + k as f64));
        v.field("b", Base::Dec, Value::Bool(k % 2 == 0));
        v.field("s", Base::Dec, Value::Str(b"name"));
        v.field("x", Base::Dec, Value::Bytes(&[1, 2, 3][..k as usize % 4]));
        v.field(
            "ints",
            Base::Oct,
            Value::IntArray {
                data: &[1, 0, 0xff, 0xff],
                elem_size: 2,
                signed: true,
                endian: Endian::Big,
            },
        );
        v.enum_field("e", Value::Unsigned(k), &["ONE", "UNO"]);
        v.struct_begin("st");
        v.array_begin("arr", 2);
        v.field("", Base::Bin, Value::Unsigned(1));
        v.field("", Base::Bin, Value::Unsigned(2));
        v.array_end();
        v.variant_begin("var", "opt");
        v.optional_begin("o", k % 2 == 0);
        if k % 2 == 0 {
            v.field("o", Base::Dec, Value::Signed(7));
        }
        v.optional_end();
        v.variant_end();
        v.struct_end();
        v.scope_end(Scope::Payload);
        v
    }

    #[test]
    fn replays_what_was_recorded() {
        let layout = ClassLayout::of(&visit(0).schema());
        let mut h = Named::new();
        h.scope_begin(Scope::EventHeader)
            .field("x", Base::Dec, Value::Unsigned(0))
            .scope_end(Scope::EventHeader)
            .scope_begin(Scope::CommonContext)
            .field("x", Base::Dec, Value::Unsigned(0))
            .scope_end(Scope::CommonContext);
        let hl = ClassLayout::of(&h.schema());
        let mut tape = Tape::default();
        let mut want = Vec::new();
        for k in 0..5u64 {
            tape.put_ts(1_000 + 10 * k as i64 - 3 * (k as i64 % 2));
            tape.put_slot(Slot::Comm, (k != 2).then_some(&b"bash"[..]));
            tape.put_opt((k % 2 == 1).then_some(k));
            let mut r = tape.recorder(&[Scope::CommonContext]);
            assert!(r.wants(hl.get(hl.member(Scope::CommonContext, 0))));
            assert!(!r.wants(hl.get(hl.member(Scope::EventHeader, 0))));
            visit(k).replay(&layout, &mut r);
            tape.end_fields();
            tape.end_row();
            let mut t = Text::default();
            visit(k).replay(&layout, &mut t);
            want.push(t.0);
        }
        assert_eq!(tape.rows(), 5);
        let taken = tape.take();
        assert_eq!(
            (taken.chunks.len(), tape.rows(), tape.capacity()),
            (0, 0, 0)
        );
        let mut r = TapeReader::new(&taken.tail, &taken.names);
        for (k, want) in want.iter().enumerate() {
            let k = k as u64;
            assert_eq!(r.ts(), 1_000 + 10 * k as i64 - 3 * (k as i64 % 2));
            assert_eq!(r.slot(Slot::Comm), (k != 2).then_some(&b"bash"[..]));
            assert_eq!(r.opt(), (k % 2 == 1).then_some(k));
            let mut t = Text::default();
            r.fields(&layout, &mut t);
            assert_eq!(&t.0, want);
        }
        assert!(r.at_end());
    }
}
