//! The babeltrace2 text style (`sink.text.pretty`) for events of the common
//! model: what `babeltrace2` prints for the CTF trace that
//! `tracemux convert --to ctf` writes from the same events, byte for byte.
//!
//! `[HH:MM:SS.nnnnnnnnn] (+S.nnnnnnnnn) HOST system:name: { cpu_id = N }, { context }, { payload }`
//!
//! * Times: the event timestamp (ns) plus the offset of the trace's first
//!   clock, as the UTC time of day (an event earlier than the one before
//!   it in its stream is shown at that one's time: CTF streams never go
//!   backwards, and the writer does the same) (a trace.dat timestamp counts from boot,
//!   so its "time of day" is the time since boot, as babeltrace2 shows
//!   clocks without an epoch origin). The first event's delta is
//!   `(+?.?????????)`.
//! * `HOST`: the trace's host name (its `hostname` environment entry, else
//!   the second word of its `uname`), then `domain`, `procname`, `vpid`
//!   entries when the trace has them, as babeltrace2 prints a CTF trace's
//!   environment.
//! * Blocks: `{ cpu_id = N }` (the CTF packet context), then the common and
//!   specific context fields of the class together in one block (the CTF
//!   event context), then the payload.
//! * Values, following the class's typed schema (the CTF writer's mapping,
//!   `tracemux_ctf::writer::layout`): integers in their display base
//!   (`0x` + upper-case hex, masked to their size), enumerations
//!   `( "LABEL" : container = V )`, booleans as 0/1, floats as C's `%g`,
//!   strings quoted with babeltrace2's escapes, structures `{ a = 1 }`,
//!   arrays `[ [0] = 1, [1] = 2 ]`, dynamic arrays and blobs preceded by a
//!   `_NAME_length` member, variants and optionals preceded by a
//!   `_NAME_tag` enumeration member and shown as `NAME = { VALUE }` (the
//!   tag's label is the option's name, with a leading `_` when it is a
//!   TSDL keyword: `"_char"`). A variant, optional, dynamic array or blob
//!   that is no member of a structure (an array element, a variant's
//!   option, an optional's value) is written inside a structure of its
//!   own, `{ _value_tag = ..., value = { VALUE } }` (`_value_length`).
//!   Field names are made identifiers as the writer makes them.
//!
//! Options: babeltrace2's `--no-delta`, `--clock-seconds`, `--clock-date`
//! and `--clock-cycles` (the format's own timestamp, [`Event::raw_ts`]);
//! and, for sources that no CTF writer prints (legacy LTT, whose `report`
//! prints through this printer): times as given, no empty payload block,
//! field names as given, and [`BabeltracePrinter::write_raw_event`] for
//! payloads shown as bytes.
//!
//! CTF traces are printed by the CTF reader's own printer (it decodes
//! straight into text, for speed); this one is for events that come
//! through the common model. Both write values with [`crate::notation`].

use std::collections::HashMap;

use tracemux_core::layout::FieldRef;
use tracemux_core::model::{
    visit_fields, Base, Event, FieldVisitor, Lost, PrintCtx, TraceMeta, Value,
};
use tracemux_core::typed::{ArrayLen, ClassSchema, FieldSchema, FieldType, Scope};

use crate::fmt::{dec, dec_pad};
use crate::notation::quoted;
use crate::notation::{int, push_g, Int};

/// The value member of the structure the CTF writer puts around a
/// variant, optional or dynamic array that is no member of a structure.
const WRAP_VALUE: &str = "value";

use tracemux_core::ident::{ident_bytes, TSDL_KEYWORDS as KEYWORDS};

/// Prints events of one trace in the babeltrace2 text style.
#[derive(Debug, Default)]
pub struct BabeltracePrinter {
    last_ts: Option<u64>,
    /// No `(+delta)` column (babeltrace2's `--no-delta`).
    pub no_delta: bool,
    /// Class schemas by class id, computed once.
    schemas: HashMap<u32, ClassSchema>,
    /// The head of the line (host name...), computed once.
    head: Option<Vec<u8>>,
    /// Reused frame storage (emptied between events).
    spare: Vec<Frame<'static>>,
    /// The latest time of each stream: a CTF stream's times never go
    /// backwards, so the writer writes an earlier event at that time.
    stream_ts: Vec<u64>,
    /// Times as seconds since the epoch (babeltrace2's `--clock-seconds`).
    pub clock_seconds: bool,
    /// The date before the time of day (`--clock-date`).
    pub clock_date: bool,
    /// The timestamp as the format stores it ([`Event::raw_ts`], else
    /// [`Event::ts`]) in 20 digits, deltas in 12 (`--clock-cycles`).
    pub clock_cycles: bool,
    /// Times as the source gives them: an event earlier than the one
    /// before it in its stream keeps its time, and deltas are taken
    /// modulo 2^64 (always `+`). For sources printed by no CTF writer
    /// (legacy LTT).
    pub times_as_given: bool,
    /// No payload block (`, { }`) for an event without payload fields.
    pub omit_empty_payload: bool,
    /// Field names as the source names them, not made CTF identifiers.
    pub names_as_given: bool,
    last_raw_ts: Option<u64>,
}

/// A field name as the CTF writer writes it (see [`tracemux_core::ident`]).
pub use tracemux_core::ident::push_ident as ctf_name;

fn head(meta: &TraceMeta) -> Vec<u8> {
    let mut out = Vec::new();
    let mut dom = false;
    if let Some(h) = meta.hostname() {
        out.extend_from_slice(h.as_bytes());
        dom = true;
    }
    let env = |k: &str| meta.env.iter().find(|(x, _)| x == k).map(|(_, v)| v);
    for key in ["domain", "procname"] {
        if let Some(v) = env(key) {
            // (an integer-looking value is written as an integer: not shown)
            if v.parse::<i64>().is_ok_and(|i| i.to_string() == *v) {
                continue;
            }
            if dom {
                out.push(b':');
            }
            out.extend_from_slice(v.as_bytes());
            dom = true;
        }
    }
    if let Some(v) = env("vpid") {
        if let Ok(i) = v.parse::<i64>() {
            if i.to_string() == *v {
                if dom {
                    out.push(b':');
                }
                out.push(b'(');
                dec(&mut out, i);
                out.push(b')');
                dom = true;
            }
        }
    }
    if dom {
        out.push(b' ');
    }
    out
}

impl BabeltracePrinter {
    pub fn new() -> Self {
        Self::default()
    }

    /// One event line.
    pub fn write_event(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, ev: &Event<'_>) {
        let si = ev.stream as usize;
        if si < 1 << 16 && !self.times_as_given {
            if self.stream_ts.len() <= si {
                self.stream_ts.resize(si + 1, 0);
            }
            let t = self.stream_ts[si].max(ev.ts);
            self.stream_ts[si] = t;
            let ev = Event { ts: t, ..*ev };
            return self.write_line(out, meta, &ev);
        }
        self.write_line(out, meta, ev)
    }

    /// A time in ns as the clock options show it (`--clock-cycles` aside).
    pub fn write_time(&self, out: &mut Vec<u8>, ns: u64) {
        if self.clock_seconds || self.clock_date || self.times_as_given {
            clock_time(out, ns, self.clock_seconds, self.clock_date);
        } else {
            time_of_day(out, ns as i64);
        }
    }

    /// `[time] (+delta) HOST name: { cpu_id = N }`, the name being `name`
    /// when given, else the class's.
    fn write_head(
        &mut self,
        out: &mut Vec<u8>,
        meta: &TraceMeta,
        ev: &Event<'_>,
        name: Option<&[u8]>,
    ) {
        // (event times include the clock's offset already)
        let raw = ev.raw_ts.unwrap_or(ev.ts);
        out.push(b'[');
        if self.clock_cycles {
            dec_pad(out, raw, 20, b'0');
        } else {
            self.write_time(out, ev.ts);
        }
        out.push(b']');
        if !self.no_delta {
            out.extend_from_slice(b" (");
            if self.clock_cycles {
                match self.last_raw_ts {
                    Some(prev) if raw >= prev || self.times_as_given => {
                        out.push(b'+');
                        dec_pad(out, raw.wrapping_sub(prev), 12, b'0');
                    }
                    Some(prev) => {
                        out.push(b'-');
                        dec_pad(out, prev - raw, 12, b'0');
                    }
                    None => out.extend_from_slice(b"+????????????"),
                }
            } else {
                match self.last_ts {
                    Some(prev) if ev.ts >= prev || self.times_as_given => {
                        out.push(b'+');
                        seconds(out, ev.ts.wrapping_sub(prev));
                    }
                    Some(prev) => {
                        out.push(b'-');
                        seconds(out, prev - ev.ts);
                    }
                    None => out.extend_from_slice(b"+?.?????????"),
                }
            }
            out.push(b')');
        }
        self.last_ts = Some(ev.ts);
        self.last_raw_ts = Some(raw);
        out.push(b' ');
        if self.head.is_none() {
            self.head = Some(head(meta));
        }
        out.extend_from_slice(self.head.as_deref().unwrap_or_default());
        match (name, ev.class) {
            (Some(n), _) => out.extend_from_slice(n),
            (None, Some(c)) => {
                if !c.system.is_empty() {
                    out.extend_from_slice(c.system.as_bytes());
                    out.push(b':');
                }
                out.extend_from_slice(c.name.as_bytes());
            }
            (None, None) => {
                out.extend_from_slice(b"<unknown event ");
                dec(out, ev.type_id);
                out.push(b'>');
            }
        }
        out.extend_from_slice(b": { cpu_id = ");
        dec(out, ev.cpu);
        out.extend_from_slice(b" }");
    }

    /// An event line whose payload is shown as its bytes,
    /// `{ _size = N, _raw = "0a1b..." }` (an event of an unknown type, or
    /// whose payload its type cannot decode), named `name` when given.
    pub fn write_raw_event(
        &mut self,
        out: &mut Vec<u8>,
        meta: &TraceMeta,
        ev: &Event<'_>,
        name: Option<&[u8]>,
    ) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.write_head(out, meta, ev, name);
        out.extend_from_slice(b", { _size = ");
        dec(out, ev.data.len());
        out.extend_from_slice(b", _raw = \"");
        for &b in ev.data {
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 15) as usize]);
        }
        out.extend_from_slice(b"\" }\n");
    }

    fn write_line(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, ev: &Event<'_>) {
        self.write_head(out, meta, ev, None);
        let class = ev.class;
        let Some(c) = class else {
            out.extend_from_slice(b", { payload_size = ");
            dec(out, ev.data.len());
            out.extend_from_slice(b" }\n");
            return;
        };
        let schema = self
            .schemas
            .entry(c.id)
            .or_insert_with(|| c.schema().into_owned());
        let ctx = PrintCtx {
            ts: ev.ts,
            classes: Some(&meta.classes),
            ..PrintCtx::of(meta, ev)
        };
        // reuse the frame storage: an empty Vec of the same layout
        let frames = recycle(std::mem::take(&mut self.spare));
        let mut p = Fields::new(out, schema, frames, self.names_as_given);
        visit_fields(ev, &ctx, &mut p);
        if self.omit_empty_payload {
            let empty = matches!(p.frames.first(), Some(Frame::Struct { n: 0, .. }));
            if p.block == Block::Payload && empty {
                p.out.truncate(p.payload_at);
                p.block = Block::None;
            }
        } else if p.block != Block::Payload {
            // the payload structure is always there, if empty (`{ }`), as
            // the CTF writer always declares it
            p.open_block(Block::Payload);
        }
        p.close_block();
        let frames = std::mem::take(&mut p.frames);
        self.spare = recycle(frames);
        out.push(b'\n');
    }

    /// A loss marker, as a line of its own (babeltrace2 reports discarded
    /// events as a warning on stderr; in a text stream of another format
    /// there is no stderr position to match, so it is kept in band).
    pub fn write_lost(&mut self, out: &mut Vec<u8>, l: &Lost) {
        out.extend_from_slice(b"WARNING: Tracer discarded ");
        match l.count {
            Some(n) => dec(out, n),
            None => out.extend_from_slice(b"an unknown number of"),
        }
        out.extend_from_slice(b" events before [");
        time_of_day(out, l.ts as i64);
        out.extend_from_slice(b"] on CPU ");
        dec(out, l.cpu);
        out.extend_from_slice(b".\n");
    }
}

/// An empty vector of frames of another lifetime, in the same allocation
/// (the standard library collects in place).
#[allow(clippy::unnecessary_filter_map)]
fn recycle<'b>(mut v: Vec<Frame<'_>>) -> Vec<Frame<'b>> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    None,
    Context,
    Payload,
}

/// An open compound value.
#[derive(Debug, Clone, Copy)]
enum Frame<'s> {
    /// Structure members (`n` printed so far), with the schema's members
    /// when known.
    Struct {
        n: u32,
        list: Option<&'s [FieldSchema]>,
        pos: usize,
        /// The structure the CTF writer puts around a variant, optional
        /// or dynamic array that is no member of a structure (closed with
        /// that field).
        wrap: bool,
    },
    /// Array elements.
    Array { n: u64, elem: Option<&'s FieldType> },
    /// The value of a variant or optional.
    Wrap {
        ty: Option<&'s FieldType>,
        done: bool,
    },
}

struct Fields<'o, 's> {
    out: &'o mut Vec<u8>,
    schema: &'s ClassSchema,
    frames: Vec<Frame<'s>>,
    block: Block,
    /// Nesting depth inside values that are not printed.
    skip: u32,
    /// Field names as given (not made CTF identifiers).
    names_as_given: bool,
    /// Where the payload block starts in `out`.
    payload_at: usize,
}

impl<'o, 's> Fields<'o, 's> {
    /// Before the first scope of an event (`frames` empty, to reuse).
    fn new(
        out: &'o mut Vec<u8>,
        schema: &'s ClassSchema,
        frames: Vec<Frame<'s>>,
        names_as_given: bool,
    ) -> Self {
        Fields {
            out,
            schema,
            frames,
            block: Block::None,
            skip: 0,
            names_as_given,
            payload_at: 0,
        }
    }

    fn close_block(&mut self) {
        if self.block != Block::None {
            self.frames.clear();
            self.out.extend_from_slice(b" }");
            self.block = Block::None;
        }
    }

    fn open_block(&mut self, b: Block) {
        if self.block != b {
            self.close_block();
            if b == Block::Payload {
                self.payload_at = self.out.len();
            }
            self.out.extend_from_slice(b", {");
            self.block = b;
            self.frames.push(Frame::Struct {
                n: 0,
                list: None,
                pos: 0,
                wrap: false,
            });
        }
    }

    /// The schema field the next value fills.
    fn next(&mut self) -> Option<&'s FieldSchema> {
        match self.frames.last_mut()? {
            Frame::Struct { list, pos, .. } => {
                let f = list.and_then(|l| l.get(*pos));
                *pos += 1;
                f
            }
            _ => None,
        }
    }

    fn next_ty(&mut self) -> (Option<&'s str>, Option<&'s FieldType>) {
        match self.frames.last_mut() {
            Some(Frame::Struct { .. }) => match self.next() {
                Some(f) => (Some(f.name.as_str()), Some(&f.ty)),
                None => (None, None),
            },
            Some(Frame::Array { elem, .. }) => (None, *elem),
            Some(Frame::Wrap { ty, done }) => {
                if *done {
                    (None, None)
                } else {
                    *done = true;
                    (None, *ty)
                }
            }
            None => (None, None),
        }
    }

    /// Separator and name of the next member or element.
    /// The end of a structure, array, variant or optional: `closing`, then
    /// (`unwrap`) the end of the writer's structure around it, if any.
    fn close(&mut self, closing: &[u8], unwrap: bool) {
        if self.skip > 0 {
            self.skip -= 1;
            return;
        }
        if self.frames.len() > 1 {
            self.frames.pop();
            self.out.extend_from_slice(closing);
            if unwrap {
                self.unwrap();
            }
        }
    }

    fn enter(&mut self, name: &str) {
        match self.frames.last_mut() {
            Some(Frame::Struct { n, .. }) => {
                self.out
                    .extend_from_slice(if *n == 0 { b" " } else { b", " });
                *n += 1;
                if self.names_as_given {
                    self.out.extend_from_slice(name.as_bytes());
                } else {
                    ctf_name(self.out, name);
                }
                self.out.extend_from_slice(b" = ");
            }
            Some(Frame::Array { n, .. }) => {
                self.out
                    .extend_from_slice(if *n == 0 { b" [" } else { b", [" });
                dec(self.out, *n);
                self.out.extend_from_slice(b"] = ");
                *n += 1;
            }
            _ => {}
        }
    }

    /// A `_NAME_length` or `_NAME_tag` member before a field (not when
    /// the schema has a member of that name: the source's own length).
    fn extra(&mut self, name: &str, suffix: &[u8]) -> bool {
        if let Some(Frame::Struct { list: Some(l), .. }) = self.frames.last() {
            // (compared byte by byte: no allocation per field)
            let want = || {
                std::iter::once(b'_')
                    .chain(ident_bytes(name))
                    .chain(suffix.iter().copied())
            };
            if l.iter().any(|f| ident_bytes(&f.name).eq(want())) {
                return false;
            }
        }
        if let Some(Frame::Struct { n, .. }) = self.frames.last_mut() {
            self.out
                .extend_from_slice(if *n == 0 { b" _" } else { b", _" });
            *n += 1;
            ctf_name(self.out, name);
            self.out.extend_from_slice(suffix);
            self.out.extend_from_slice(b" = ");
            return true;
        }
        false
    }

    /// The structure the CTF writer puts around a field of type `ty`
    /// that needs a tag or length member but is no member of a structure:
    /// opened (`{`, and the field's name becomes `value`) when it does.
    fn wrap<'n>(&mut self, name: &'n str, ty: Option<&FieldType>) -> &'n str {
        let needs = matches!(
            ty,
            Some(
                FieldType::Variant(_)
                    | FieldType::Optional(_)
                    | FieldType::Blob
                    | FieldType::Array {
                        len: ArrayLen::Dynamic | ArrayLen::Sibling(_),
                        ..
                    }
            )
        );
        if !needs || matches!(self.frames.last(), Some(Frame::Struct { .. }) | None) {
            return name;
        }
        self.enter(name);
        self.out.push(b'{');
        self.frames.push(Frame::Struct {
            n: 0,
            list: None,
            pos: 0,
            wrap: true,
        });
        WRAP_VALUE
    }

    /// Whether the innermost open value is the writer's structure around
    /// a field.
    fn wrapped(&self) -> bool {
        matches!(self.frames.last(), Some(Frame::Struct { wrap: true, .. }))
    }

    /// Close the structure around a field, if there is one.
    fn unwrap(&mut self) {
        if let Some(Frame::Struct { wrap: true, .. }) = self.frames.last() {
            self.frames.pop();
            self.out.extend_from_slice(b" }");
        }
    }

    /// The start of any field: block, name from the schema when known,
    /// and its type.
    fn start<'n>(&mut self, name: &'n str) -> Option<(&'n str, Option<&'s FieldType>)>
    where
        's: 'n,
    {
        if self.skip > 0 {
            return None;
        }
        if self.block == Block::None {
            self.open_block(Block::Payload);
        }
        let (sname, ty) = self.next_ty();
        Some((sname.unwrap_or(name), ty))
    }

    /// Into a variant or optional (`{ `) whose content has type `inner`;
    /// an absent optional is `{ }` and has no content.
    fn open_wrap(&mut self, name: &str, inner: Option<&'s FieldType>, absent: bool) {
        self.enter(name);
        self.out.extend_from_slice(b"{ ");
        if absent {
            self.out.extend_from_slice(b"{ }");
        }
        self.frames.push(Frame::Wrap {
            ty: inner,
            done: absent,
        });
    }

    /// The start of an array, variant or optional: as [`Self::start`],
    /// inside the writer's structure when it needs one; a skipped field
    /// adds a level to skip.
    fn start_compound<'n>(&mut self, name: &'n str) -> Option<(&'n str, Option<&'s FieldType>)>
    where
        's: 'n,
    {
        let Some((name, ty)) = self.start(name) else {
            self.skip += 1;
            return None;
        };
        Some((self.wrap(name, ty), ty))
    }

    fn leaf(&mut self, name: &str, base: Base, value: Value<'_>, labels: Option<&[&str]>) {
        let Some((name, ty)) = self.start(name) else {
            return;
        };
        let name = self.wrap(name, ty);
        let wrapped = self.wrapped();
        match ty {
            Some(FieldType::Array {
                elem,
                len: ArrayLen::Dynamic | ArrayLen::Sibling(_),
            }) if wrapped
                || matches!(
                    ty,
                    Some(FieldType::Array {
                        len: ArrayLen::Dynamic,
                        ..
                    })
                ) =>
            {
                let n = count(&value);
                if self.extra(name, b"_length") {
                    dec(self.out, n);
                }
                self.enter(name);
                array(self.out, elem, base, &value, n);
            }
            Some(FieldType::Blob) => {
                let n = count(&value);
                if self.extra(name, b"_length") {
                    dec(self.out, n);
                }
                self.enter(name);
                array(self.out, &FieldType::u(8), Base::Dec, &value, n);
            }
            Some(FieldType::Array {
                elem,
                len: ArrayLen::Static(n),
            }) => {
                self.enter(name);
                array(self.out, elem, base, &value, *n);
            }
            _ => {
                self.enter(name);
                scalar(self.out, ty, base, &value, labels);
            }
        }
        self.unwrap();
    }
}

/// Number of elements of an array value.
fn count(v: &Value<'_>) -> u64 {
    (match *v {
        Value::IntArray {
            data, elem_size, ..
        } => data.len() / elem_size.max(1) as usize,
        Value::Bytes(b) | Value::Str(b) => b.len(),
        _ => 0,
    }) as u64
}

/// An array given as one value, `n` elements (missing ones are 0).
fn array(out: &mut Vec<u8>, elem: &FieldType, base: Base, v: &Value<'_>, n: u64) {
    out.push(b'[');
    for i in 0..n {
        out.extend_from_slice(if i == 0 { b" [" } else { b", [" });
        dec(out, i);
        out.extend_from_slice(b"] = ");
        let x = match *v {
            Value::IntArray { .. } => v.array_elem(i as usize),
            Value::Bytes(b) | Value::Str(b) => b.get(i as usize).map(|&c| c as i128),
            _ => None,
        }
        .unwrap_or(0);
        let val = Value::Unsigned(x as u64);
        match elem {
            FieldType::Int(it) => {
                let v = if it.signed {
                    Value::Signed(sext(x as u64, it.bits))
                } else {
                    Value::Unsigned(trunc(x as u64, it.bits))
                };
                scalar(out, Some(elem), base, &v, None);
            }
            _ => scalar(out, Some(elem), base, &val, None),
        }
    }
    out.extend_from_slice(b" ]");
}

/// Bits an integer of `bits` is written with (whole bytes: 8/16/32/64).
fn int_bits(bits: u8) -> u32 {
    match bits {
        0..=8 => 8,
        9..=16 => 16,
        17..=32 => 32,
        _ => 64,
    }
}

fn trunc(v: u64, bits: u8) -> u64 {
    let b = int_bits(bits);
    if b >= 64 {
        v
    } else {
        v & ((1u64 << b) - 1)
    }
}

fn sext(v: u64, bits: u8) -> i64 {
    let b = int_bits(bits);
    if b >= 64 {
        v as i64
    } else {
        let s = 64 - b;
        ((v << s) as i64) >> s
    }
}

/// One value that is not an array, as the CTF field of `ty` holding it
/// prints.
fn scalar(
    out: &mut Vec<u8>,
    ty: Option<&FieldType>,
    base: Base,
    v: &Value<'_>,
    labels: Option<&[&str]>,
) {
    match ty {
        Some(FieldType::Int(it)) => {
            let raw = v.raw_u64();
            let (u, s) = (trunc(raw, it.bits), sext(raw, it.bits));
            let len = int_bits(it.bits);
            let base = it.base;
            let write = |out: &mut Vec<u8>| {
                if it.signed {
                    int(out, base, Int::S(s), len)
                } else {
                    int(out, base, Int::U(u), len)
                }
            };
            if !it.mappings.is_empty() {
                let x = if it.signed { s as i128 } else { u as i128 };
                out.extend_from_slice(b"( ");
                let mut n = 0;
                for l in it.labels(x) {
                    if n > 0 {
                        out.extend_from_slice(b", ");
                    }
                    quoted(out, l.as_bytes());
                    n += 1;
                }
                if n == 0 {
                    out.extend_from_slice(b"<unknown>");
                }
                out.extend_from_slice(b" : container = ");
                write(out);
                out.extend_from_slice(b" )");
            } else {
                write(out);
            }
        }
        Some(FieldType::Bool) => dec(out, v.raw_u64() & 0xff),
        Some(FieldType::Float { bits }) => {
            let f = match *v {
                Value::Float(f) => f,
                Value::Unsigned(x) => x as f64,
                Value::Signed(x) => x as f64,
                _ => 0.0,
            };
            push_g(out, if *bits <= 32 { f as f32 as f64 } else { f });
        }
        Some(FieldType::Str) => match *v {
            Value::Str(s) | Value::Bytes(s) => quoted(out, s),
            Value::IntArray {
                data, elem_size: 1, ..
            } => quoted(out, data),
            Value::Unsigned(x) => quoted(out, itoa::Buffer::new().format(x).as_bytes()),
            Value::Signed(x) => quoted(out, itoa::Buffer::new().format(x).as_bytes()),
            _ => quoted(out, b""),
        },
        Some(_) => out.extend_from_slice(b"{ }"),
        // no schema: the value as it is
        None => match *v {
            Value::Unsigned(u) if labels.is_some() => {
                enum_text(out, labels.unwrap_or(&[]), Int::U(u))
            }
            Value::Signed(s) if labels.is_some() => {
                enum_text(out, labels.unwrap_or(&[]), Int::S(s))
            }
            Value::Unsigned(u) => int(out, base, Int::U(u), 64),
            Value::Signed(s) => int(out, base, Int::S(s), 64),
            Value::Bool(b) => dec(out, b as u8),
            Value::Float(f) => push_g(out, f),
            Value::Str(s) => quoted(out, s),
            Value::Bytes(_) | Value::IntArray { .. } => {
                array(out, &FieldType::u(64), base, v, count(v))
            }
        },
    }
}

fn enum_text(out: &mut Vec<u8>, labels: &[&str], v: Int) {
    out.extend_from_slice(b"( ");
    for (i, l) in labels.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        quoted(out, l.as_bytes());
    }
    if labels.is_empty() {
        out.extend_from_slice(b"<unknown>");
    }
    out.extend_from_slice(b" : container = ");
    int(out, Base::Dec, v, 64);
    out.extend_from_slice(b" )");
}

impl<'s> FieldVisitor for Fields<'_, 's> {
    fn field(&mut self, f_: FieldRef<'_>, base: Base, value: Value<'_>) {
        let name = f_.name();
        self.leaf(name, base, value, None);
    }

    fn enum_field(&mut self, f_: FieldRef<'_>, value: Value<'_>, labels: &[&str]) {
        let name = f_.name();
        self.leaf(name, Base::Dec, value, Some(labels));
    }

    fn scope_begin(&mut self, scope: Scope) {
        let block = match scope {
            Scope::CommonContext | Scope::SpecificContext => Block::Context,
            Scope::Payload => Block::Payload,
            _ => {
                self.skip += 1;
                return;
            }
        };
        let list = self.schema.scope(scope);
        if self.block != block {
            self.open_block(block);
        } else {
            self.frames.truncate(1);
        }
        if let Some(Frame::Struct { list: l, pos, .. }) = self.frames.first_mut() {
            *l = Some(list);
            *pos = 0;
        }
    }

    fn scope_end(&mut self, scope: Scope) {
        if !matches!(
            scope,
            Scope::CommonContext | Scope::SpecificContext | Scope::Payload
        ) {
            self.skip = self.skip.saturating_sub(1);
        }
    }

    fn struct_begin(&mut self, f_: FieldRef<'_>) {
        let name = f_.name();
        let Some((name, ty)) = self.start(name) else {
            self.skip += 1;
            return;
        };
        self.enter(name);
        self.out.push(b'{');
        let list = match ty {
            Some(FieldType::Struct(f)) => Some(f.as_slice()),
            _ => None,
        };
        self.frames.push(Frame::Struct {
            n: 0,
            list,
            pos: 0,
            wrap: false,
        });
    }

    fn struct_end(&mut self) {
        self.close(b" }", false);
    }

    fn array_begin(&mut self, f_: FieldRef<'_>, len: u64) {
        let name = f_.name();
        let Some((name, ty)) = self.start_compound(name) else {
            return;
        };
        let wrapped = self.wrapped();
        let elem = match ty {
            Some(FieldType::Array { elem, len: l }) => {
                // (a length member of the source's own: none in the
                // writer's structure around the array)
                let dynamic = match l {
                    ArrayLen::Dynamic => true,
                    ArrayLen::Sibling(_) => wrapped,
                    ArrayLen::Static(_) => false,
                };
                if dynamic && self.extra(name, b"_length") {
                    dec(self.out, len);
                }
                Some(&**elem)
            }
            _ => None,
        };
        self.enter(name);
        self.out.push(b'[');
        self.frames.push(Frame::Array { n: 0, elem });
    }

    fn array_end(&mut self) {
        self.close(b" ]", true);
    }

    fn variant_begin(&mut self, f_: FieldRef<'_>, o_: FieldRef<'_>) {
        let name = f_.name();
        let option = o_.option();
        let Some((name, ty)) = self.start_compound(name) else {
            return;
        };
        let mut inner = None;
        if let Some(FieldType::Variant(opts)) = ty {
            let i = opts
                .iter()
                .position(|o| o.name == option)
                .unwrap_or_default();
            inner = opts.get(i).map(|o| &o.ty);
            if self.extra(name, b"_tag") {
                self.out.extend_from_slice(b"( \"");
                if let Some(o) = opts.get(i) {
                    let at = self.out.len();
                    ctf_name(self.out, &o.name);
                    if KEYWORDS.iter().any(|k| k.as_bytes() == &self.out[at..]) {
                        self.out.insert(at, b'_');
                    }
                }
                self.out.extend_from_slice(b"\" : container = ");
                dec(self.out, i);
                self.out.extend_from_slice(b" )");
            }
        }
        self.open_wrap(name, inner, false);
    }

    fn variant_end(&mut self) {
        self.close(b" }", true);
    }

    fn optional_begin(&mut self, f_: FieldRef<'_>, present: bool) {
        let name = f_.name();
        let Some((name, ty)) = self.start_compound(name) else {
            return;
        };
        let inner = match ty {
            Some(FieldType::Optional(t)) => {
                self.extra(name, b"_tag");
                self.out.extend_from_slice(if present {
                    b"( \"present\" : container = 1 )"
                } else {
                    b"( \"absent\" : container = 0 )"
                });
                Some(&**t)
            }
            _ => None,
        };
        self.open_wrap(name, inner, !present);
    }

    fn optional_end(&mut self) {
        self.variant_end();
    }
}

/// One value in babeltrace2's notation, without a schema (integers as
/// 64-bit).
pub fn write_value(out: &mut Vec<u8>, base: Base, value: Value<'_>) {
    scalar(out, None, base, &value, None);
}

/// `HH:MM:SS.nnnnnnnnn` of `ns` since the epoch, UTC.
pub fn time_of_day(out: &mut Vec<u8>, ns: i64) {
    let secs = ns.div_euclid(1_000_000_000);
    let frac = ns.rem_euclid(1_000_000_000);
    hms(out, secs.rem_euclid(86_400) as u64);
    out.push(b'.');
    dec_pad(out, frac, 9, b'0');
}

/// `HH:MM:SS` of a second of the day.
fn hms(out: &mut Vec<u8>, sec_of_day: u64) {
    dec_pad(out, sec_of_day / 3600, 2, b'0');
    out.push(b':');
    dec_pad(out, sec_of_day / 60 % 60, 2, b'0');
    out.push(b':');
    dec_pad(out, sec_of_day % 60, 2, b'0');
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// A time in ns since the epoch as babeltrace2 prints it in UTC:
/// `SECONDS.nnnnnnnnn` (`--clock-seconds`), else the time of day
/// `HH:MM:SS.nnnnnnnnn`, preceded by `YYYY-MM-DD ` with `date`
/// (`--clock-date`).
pub fn clock_time(out: &mut Vec<u8>, ns: u64, seconds: bool, date: bool) {
    let s = ns / 1_000_000_000;
    let frac = ns % 1_000_000_000;
    if seconds {
        dec(out, s);
    } else {
        if date {
            let (y, m, d) = civil((s / 86_400) as i64);
            dec_pad(out, y, 4, b'0');
            out.push(b'-');
            dec_pad(out, m, 2, b'0');
            out.push(b'-');
            dec_pad(out, d, 2, b'0');
            out.push(b' ');
        }
        hms(out, s % 86_400);
    }
    out.push(b'.');
    dec_pad(out, frac, 9, b'0');
}

/// `S.nnnnnnnnn`.
fn seconds(out: &mut Vec<u8>, ns: u64) {
    dec(out, ns / 1_000_000_000);
    out.push(b'.');
    dec_pad(out, ns % 1_000_000_000, 9, b'0');
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracemux_core::layout::ClassLayout;
    use tracemux_core::named::Named;
    use tracemux_core::typed::IntType;

    #[test]
    fn time_and_strings() {
        let mut o = Vec::new();
        time_of_day(&mut o, 86_400_000_000_000 + 3_723_000_000_042);
        assert_eq!(o, b"01:02:03.000000042");
        o.clear();
        quoted(&mut o, b"a\"b\\c\td\x01?'");
        assert_eq!(o, b"\"a\\\"b\\\\c\\td\\x01\\?\\'\"");
        o.clear();
        write_value(&mut o, Base::Hex, Value::Unsigned(0x7f));
        assert_eq!(o, b"0x7F");
        o.clear();
        push_g(&mut o, 1.5);
        push_g(&mut o, 1e-7);
        assert_eq!(o, b"1.51e-07");
    }

    #[test]
    fn nested_values_follow_the_schema() {
        let e = IntType::new(8, true).mapping("NEG", &[(-128, -1)]);
        let mut schema = ClassSchema::default();
        schema.push(
            Scope::Payload,
            vec![
                FieldSchema::new("e", FieldType::Int(e)),
                FieldSchema::new(
                    "s",
                    FieldType::Struct(vec![
                        FieldSchema::new("a", FieldType::u(16)),
                        FieldSchema::new(
                            "d",
                            FieldType::Array {
                                elem: Box::new(FieldType::Int(IntType::hex(8, true))),
                                len: ArrayLen::Dynamic,
                            },
                        ),
                    ]),
                ),
                FieldSchema::new(
                    "v",
                    FieldType::Variant(vec![
                        FieldSchema::new("x", FieldType::Str),
                        FieldSchema::new("y", FieldType::u(32)),
                    ]),
                ),
            ],
        );
        let mut out = Vec::new();
        let mut p = Fields::new(&mut out, &schema, Vec::new(), false);
        let mut n = Named::new();
        n.scope_begin(Scope::Payload);
        n.enum_field("e", Value::Signed(-2), &["NEG"]);
        n.struct_begin("s");
        n.field("a", Base::Dec, Value::Unsigned(1));
        n.array_begin("d", 2);
        n.field("", Base::Dec, Value::Signed(-1));
        n.field("", Base::Dec, Value::Signed(2));
        n.array_end();
        n.struct_end();
        n.variant_begin("v", "y");
        n.field("y", Base::Dec, Value::Unsigned(7));
        n.variant_end();
        n.scope_end(Scope::Payload);
        n.replay(&ClassLayout::of(&schema), &mut p);
        p.close_block();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            ", { e = ( \"NEG\" : container = -2 ), s = { a = 1, _d_length = 2, d = [ [0] = 0xFF, [1] = 0x2 ] }, _v_tag = ( \"y\" : container = 1 ), v = { 7 } }"
        );
    }

    #[test]
    fn fields_without_a_structure_are_wrapped() {
        let var = || {
            FieldType::Variant(vec![
                FieldSchema::new("str", FieldType::Str),
                FieldSchema::new("char", FieldType::u(32)),
                FieldSchema::new("raw", FieldType::Blob),
            ])
        };
        let mut schema = ClassSchema::default();
        schema.push(
            Scope::Payload,
            vec![
                FieldSchema::new(
                    "args",
                    FieldType::Array {
                        elem: Box::new(var()),
                        len: ArrayLen::Dynamic,
                    },
                ),
                FieldSchema::new("ret", FieldType::Optional(Box::new(var()))),
            ],
        );
        let mut out = Vec::new();
        let mut p = Fields::new(&mut out, &schema, Vec::new(), false);
        let mut n = Named::new();
        n.scope_begin(Scope::Payload);
        n.array_begin("args", 2);
        n.variant_begin("", "char");
        n.field("", Base::Dec, Value::Unsigned(65));
        n.variant_end();
        n.variant_begin("", "raw");
        n.field("", Base::Dec, Value::Bytes(b"\x01\x02"));
        n.variant_end();
        n.array_end();
        n.optional_begin("ret", true);
        n.variant_begin("", "str");
        n.field("", Base::Dec, Value::Str(b"x"));
        n.variant_end();
        n.optional_end();
        n.scope_end(Scope::Payload);
        n.replay(&ClassLayout::of(&schema), &mut p);
        p.close_block();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            ", { _args_length = 2, args = [ \
             [0] = { _value_tag = ( \"_char\" : container = 1 ), value = { 65 } }, \
             [1] = { _value_tag = ( \"raw\" : container = 2 ), value = { { _value_length = 2, value = [ [0] = 1, [1] = 2 ] } } } ], \
             _ret_tag = ( \"present\" : container = 1 ), ret = { { _value_tag = ( \"str\" : container = 0 ), value = { \"x\" } } } }"
        );
    }
}
