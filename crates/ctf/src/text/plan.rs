//! Event bodies printed from a plan made once per event record class.
//!
//! [`FieldPrinter`] follows the decoder's walk of the field tree: for every
//! field a visitor call, a look at the frame it is in, its separator and
//! name. For most event record classes all of that is the same for every
//! record: which fields are shown, what comes before each, where each
//! structure opens and closes. A [`BodyPlan`] fixes it once: the text
//! between the values is merged into literals, and what is left per record
//! is reading the values and writing them, with the printer's own
//! functions, so the bytes are the printer's.
//!
//! A class gets a plan when its body (common context, specific context,
//! payload) holds only structures, fixed-length integers and enumerations,
//! floating-point numbers, strings outside arrays, and arrays of numbers,
//! with no special roles. Any other class, and any record whose body fails
//! to decode, goes through the decoder and the [`FieldPrinter`] as before.

use super::{push_g, push_int, FieldPrinter};
use crate::decode::{self, Cursor, DecodeError, IntValue, Kind, Program, NO_SLOT};
use crate::ir::{Scope, StringEncoding};
use tracemux_core::digits;

#[derive(Debug, Clone, Copy)]
enum Op {
    /// A scope's root: start it (and align to it).
    Begin(Scope, u32),
    /// A shown scope: `, ` unless the line starts here, and its name.
    Scope(Scope),
    /// The text `text[a..b]`.
    Lit(u32, u32),
    /// Align to a structure.
    Align(u32),
    /// Integer (or enumeration) node.
    Int(u32),
    /// An integer of whole bytes (most of them).
    ByteInt(ByteInt),
    Float(u32),
    Str(u32),
    /// Array node of numbers (element node, element names shown, and how
    /// to read the elements when they are [`ByteInt`]).
    Array(u32, u32, bool, Option<ByteInt>),
    /// Not shown: read with the decoder (every field, as the printer's
    /// walk reads it).
    Hidden(u32),
    /// A run of [`ByteInt`] fields at fixed places after the first one's
    /// alignment: `BodyPlan::runs[i]`.
    Run(u32),
    /// An enumeration of whole bytes whose labels are known in advance
    /// for every value: `BodyPlan::enums[i]`.
    Enum(u32),
}

/// An enumeration whose mappings cover a few values: the text before the
/// value (its labels, [`super::enum_labels`]) made once for each.
#[derive(Debug, Clone)]
struct EnumPlan {
    /// The container, read as an integer of its own.
    le: ByteInt,
    /// The value of `labels[0]`.
    low: i128,
    /// `text[a..b]` for each value from `low` on.
    labels: Vec<(u32, u32)>,
    /// The text of every other value (no label).
    unknown: (u32, u32),
}

/// Values an [`EnumPlan`] may cover at most.
const ENUM_SPAN: i128 = 256;
/// Bytes of label text an [`EnumPlan`] may hold at most.
const ENUM_TEXT: usize = 64 << 10;

/// [`ByteInt`] fields one after the other, with the text before each: after
/// the first field's alignment, the padding before every other is known
/// in advance (none has a larger alignment), so the run is read with one
/// bound check.
#[derive(Debug, Clone)]
struct LeRun {
    align: u32,
    /// The room its text needs: what its fields write, at most, and what
    /// the last one may write beyond that (see [`LeRun::room_for`]).
    room: u32,
    /// Big-endian fields (a run has one byte order).
    big_endian: bool,
    bytes: u32,
    fields: Vec<RunField>,
}

fn byte_order(big_endian: bool) -> crate::ir::ByteOrder {
    if big_endian {
        crate::ir::ByteOrder::Big
    } else {
        crate::ir::ByteOrder::Little
    }
}

/// A run's bytes at most (a longer one is cut in two; metadata with huge
/// alignments cannot make offsets overflow).
const RUN_MAX: u32 = 1 << 16;

impl LeRun {
    /// The room for the text of `fields`: each writes its text (copied 32
    /// bytes at a time, its length at most 32) and its value at the place
    /// after the one before, so all of them write within their lengths at
    /// most, and [`VALUE_ROOM`] more.
    fn room_for(fields: &[RunField]) -> u32 {
        let text: u32 = fields.iter().map(|f| f.lit.1 - f.lit.0 + VALUE_MAX).sum();
        text + VALUE_ROOM.max(32)
    }

    /// The run's length once aligned to `align_bits` and `more` bytes
    /// added, when it stays within [`RUN_MAX`].
    fn grown(&self, align_bits: u32, more: u32) -> Option<u32> {
        let at = self
            .bytes
            .checked_next_multiple_of((align_bits / 8).max(1))?;
        at.checked_add(more).filter(|&n| n <= RUN_MAX)
    }
}

/// Bytes a [`RunField`]'s value takes at most (`0x` and 16 digits, or `-`
/// and 19, or 20 digits).
const VALUE_MAX: u32 = 21;
/// Bytes after its place a [`RunField`]'s value may write to (`0x`, and
/// a number written with [`digits::ROOM`] bytes of room).
const VALUE_ROOM: u32 = 2 + digits::ROOM as u32;

#[derive(Debug, Clone, Copy)]
struct RunField {
    /// The text before the value: `text[a..b]`, at most 32 bytes.
    lit: (u32, u32),
    /// Byte offset from the start of the run.
    off: u32,
    le: ByteInt,
}

/// A decimal or hexadecimal integer (not an enumeration) of 1, 2, 4 or 8
/// bytes at a byte boundary.
#[derive(Debug, Clone, Copy)]
struct ByteInt {
    align: u32,
    bytes: u8,
    /// Big-endian (else little).
    big_endian: bool,
    signed: bool,
    hex: bool,
    /// Slot for a later length or selector.
    save: u16,
}

impl ByteInt {
    fn of(n: &crate::decode::Node) -> Option<ByteInt> {
        match &n.kind {
            Kind::Int { mappings, .. } if mappings.is_empty() => ByteInt::container(n),
            _ => None,
        }
    }

    /// [`ByteInt::of`] an integer or an enumeration's container (its mappings
    /// left aside).
    fn container(n: &crate::decode::Node) -> Option<ByteInt> {
        let Kind::Int {
            len,
            bo,
            rev,
            signed,
            base,
            ..
        } = &n.kind
        else {
            return None;
        };
        use crate::ir::{ByteOrder, DisplayBase};
        let hex = match base {
            DisplayBase::Decimal => false,
            DisplayBase::Hexadecimal => true,
            _ => return None,
        };
        let whole = matches!(len, 8 | 16 | 32 | 64) && n.align % 8 == 0;
        (whole && !rev).then_some(ByteInt {
            align: n.align,
            bytes: len / 8,
            big_endian: *bo == ByteOrder::Big,
            signed: *signed,
            hex,
            save: n.save,
        })
    }

    /// Read and print it (as [`int`] does).
    #[inline(always)]
    fn run(self, c: &mut Cursor<'_>, fp: &mut FieldPrinter) -> Result<(), Box<DecodeError>> {
        c.align(self.align)?;
        let s = c.take(self.bytes as usize, self.order())?;
        self.print(self.load(s, 0), c, fp);
        Ok(())
    }

    fn order(self) -> crate::ir::ByteOrder {
        byte_order(self.big_endian)
    }

    /// Its value at byte `off` of `s` (which holds it).
    #[inline(always)]
    fn load(self, s: &[u8], off: usize) -> u64 {
        let b = |n: usize| s.get(off..off + n).unwrap_or(&[0; 8][..n]);
        let v = match self.bytes {
            1 => b(1)[0] as u64,
            2 => u16::from_le_bytes(b(2).try_into().unwrap_or_default()) as u64,
            4 => u32::from_le_bytes(b(4).try_into().unwrap_or_default()) as u64,
            _ => u64::from_le_bytes(b(8).try_into().unwrap_or_default()),
        };
        if self.big_endian {
            v.swap_bytes() >> (64 - 8 * self.bytes as u32)
        } else {
            v
        }
    }

    /// [`ByteInt::print`] at `buf[at..]` (with [`VALUE_ROOM`] bytes from
    /// there); the place after it.
    #[inline(always)]
    fn write(self, raw: u64, c: &mut Cursor<'_>, buf: &mut [u8], at: usize) -> usize {
        let v = IntValue::from_bits(raw, 8 * self.bytes as u32, self.signed);
        if self.save != NO_SLOT {
            c.slots[self.save as usize] = v.as_i128();
        }
        if self.hex {
            buf[at..at + 2].copy_from_slice(b"0x");
            digits::write_hex_upper(buf, at + 2, raw)
        } else {
            match v {
                IntValue::U(x) => digits::write_u64(buf, at, x),
                IntValue::S(x) => digits::write_i64(buf, at, x),
            }
        }
    }

    /// Keep and print the value whose bits are `raw` ([`ByteInt::write`] in
    /// room made for it).
    #[inline(always)]
    fn print(self, raw: u64, c: &mut Cursor<'_>, fp: &mut FieldPrinter) {
        let l = fp.out.len();
        fp.out.resize(l + VALUE_ROOM as usize, 0);
        let end = self.write(raw, c, &mut fp.out, l);
        fp.out.truncate(end);
    }
}

/// Body plans by stream class and event position: `None` not looked at
/// yet, `Some(None)` the class has no plan (its fields are walked).
pub(super) type PlanTable = Vec<Vec<Option<Option<BodyPlan>>>>;

/// How to print the body of one event record class (see the module).
#[derive(Debug, Default)]
pub(super) struct BodyPlan {
    ops: Vec<Op>,
    text: Vec<u8>,
    /// What comes before array elements 0 to [`INDEXES`] - 1 with names
    /// (` [0] = `, `, [1] = `...): `index[i]..index[i + 1]` in `index_text`.
    index: Vec<u32>,
    index_text: Vec<u8>,
    runs: Vec<LeRun>,
    enums: Vec<EnumPlan>,
}

/// Array elements whose ` [i] = ` is made once.
const INDEXES: u64 = 100;

impl BodyPlan {
    /// The plan of the scopes `roots` (common context, specific context,
    /// payload), or `None` when one of them holds what plans do not cover.
    pub(super) fn new(
        p: &Program,
        names: super::Names,
        roots: [(Scope, Option<u32>); 3],
    ) -> Option<BodyPlan> {
        let mut b = BodyPlan::default();
        let (mut begun, mut shown) = (false, false);
        for (scope, root) in roots {
            let Some(r) = root else { continue };
            let n = p.nodes.get(r as usize)?;
            if begun {
                // A later scope only aligns: the scope it names and the
                // byte order it forgets matter to errors and to bit fields
                // of another byte order, and a plan that fails is undone
                // (the decoder then reads the body with every scope's
                // start). The alignment goes before the text that closes
                // the scope before it, so that both texts make one.
                let close = match b.ops.last() {
                    Some(&Op::Lit(..)) => b.ops.pop(),
                    _ => None,
                };
                b.ops.push(Op::Align(n.align));
                b.ops.extend(close);
            } else {
                b.ops.push(Op::Begin(scope, n.align));
                begun = true;
            }
            if !n.visible {
                b.hidden(p, r)?;
                continue;
            }
            if shown {
                // (what FieldPrinter::scope_head writes once the line has
                // begun)
                b.lit(b", ");
                if names.scope {
                    b.lit(format!("{} = ", scope.tsdl_name()).as_bytes());
                }
            } else {
                b.ops.push(Op::Scope(scope));
                shown = true;
            }
            let names = if scope == Scope::EventPayload {
                names.payload
            } else {
                names.context
            };
            b.node(p, r, names)?;
        }
        let ops = std::mem::take(&mut b.ops);
        let ops = b.aligns_first(ops);
        b.ops = b.runs_of(ops);
        // (room for the copies of constant size in `run`)
        b.text.extend_from_slice(&[0; 32]);
        if b.ops.iter().any(|o| matches!(o, Op::Array(_, _, true, _))) {
            for i in 0..INDEXES {
                b.index.push(b.index_text.len() as u32);
                b.index_text
                    .extend_from_slice(if i == 0 { b" [" } else { b", [" });
                tracemux_core::digits::put_u64(&mut b.index_text, i);
                b.index_text.extend_from_slice(b"] = ");
            }
            b.index.push(b.index_text.len() as u32);
            b.index_text.extend_from_slice(&[0; 16]);
        }
        Some(b)
    }

    fn lit(&mut self, s: &[u8]) {
        let a = self.text.len() as u32;
        self.text.extend_from_slice(s);
        let b = self.text.len() as u32;
        // (one literal with the one before it)
        if let Some(Op::Lit(_, e)) = self.ops.last_mut() {
            if *e == a {
                *e = b;
                return;
            }
        }
        self.ops.push(Op::Lit(a, b));
    }

    /// `ops` with each stretch of literals and alignments made into one
    /// alignment before one literal. Text does not move the cursor, and
    /// aligning to powers of two one after the other is aligning to the
    /// largest of them (a stretch with any other alignment is left as it
    /// is). An alignment that fails fails the whole plan, whatever was
    /// written before it. The fields then make longer runs.
    fn aligns_first(&mut self, ops: Vec<Op>) -> Vec<Op> {
        let mut res = Vec::with_capacity(ops.len());
        let mut i = 0;
        while i < ops.len() {
            let n = ops[i..]
                .iter()
                .take_while(|o| matches!(o, Op::Lit(..) | Op::Align(_)))
                .count();
            let stretch = &ops[i..i + n];
            let powers = stretch
                .iter()
                .all(|o| !matches!(o, Op::Align(a) if !a.is_power_of_two()));
            if n < 2 || !powers {
                let n = n.max(1);
                res.extend_from_slice(&ops[i..i + n]);
                i += n;
                continue;
            }
            let mut align = None;
            let mut text = Vec::new();
            for op in stretch {
                match *op {
                    Op::Lit(a, b) => text.extend_from_slice(&self.text[a as usize..b as usize]),
                    Op::Align(a) => align = Some(align.map_or(a, |x: u32| x.max(a))),
                    _ => {}
                }
            }
            res.extend(align.map(Op::Align));
            if !text.is_empty() {
                let a = self.text.len() as u32;
                self.text.extend_from_slice(&text);
                res.push(Op::Lit(a, self.text.len() as u32));
            }
            i += n;
        }
        res
    }

    /// `ops` with runs of [`ByteInt`] fields (and the text before each, and
    /// the alignments between them) made into [`Op::Run`]s.
    fn runs_of(&mut self, ops: Vec<Op>) -> Vec<Op> {
        let mut res = Vec::with_capacity(ops.len());
        let mut cur: Option<LeRun> = None;
        let end = |res: &mut Vec<Op>, cur: &mut Option<LeRun>, runs: &mut Vec<LeRun>| {
            if let Some(mut r) = cur.take() {
                r.room = LeRun::room_for(&r.fields);
                res.push(Op::Run(runs.len() as u32));
                runs.push(r);
            }
        };
        let mut i = 0;
        while i < ops.len() {
            // A field: its text (if any), then its value.
            let (lit, k) = match ops[i] {
                Op::Lit(a, b) if b - a <= 32 => ((a, b), i + 1),
                _ => ((0, 0), i),
            };
            if let Some(&Op::ByteInt(le)) = ops.get(k) {
                let fits = cur.as_ref().is_some_and(|r| {
                    le.align <= r.align
                        && r.big_endian == le.big_endian
                        && r.grown(le.align, le.bytes as u32).is_some()
                });
                if !fits {
                    end(&mut res, &mut cur, &mut self.runs);
                    cur = Some(LeRun {
                        align: le.align,
                        room: 0,
                        big_endian: le.big_endian,
                        bytes: 0,
                        fields: Vec::new(),
                    });
                }
                if let Some(r) = cur.as_mut() {
                    let off = r.grown(le.align, 0).unwrap_or(0);
                    r.fields.push(RunField { lit, off, le });
                    r.bytes = off + le.bytes as u32;
                }
                i = k + 1;
                continue;
            }
            let grown = match (ops[i], cur.as_ref()) {
                (Op::Align(a), Some(r)) if a <= r.align => r.grown(a, 0),
                _ => None,
            };
            match (ops[i], cur.as_mut(), grown) {
                // (the cursor is at a byte boundary in a run)
                (Op::Align(_), Some(r), Some(n)) => r.bytes = n,
                (op, ..) => {
                    end(&mut res, &mut cur, &mut self.runs);
                    res.push(op);
                }
            }
            i += 1;
        }
        end(&mut res, &mut cur, &mut self.runs);
        res
    }

    /// A field read but not shown: the decoder reads it (lengths and
    /// selectors kept), unless something in it has a role.
    fn hidden(&mut self, p: &Program, id: u32) -> Option<()> {
        if !plain(p, id) {
            return None;
        }
        self.ops.push(Op::Hidden(id));
        Some(())
    }

    /// A shown field (its separator and name are written).
    fn node(&mut self, p: &Program, id: u32, names: bool) -> Option<()> {
        let n = p.nodes.get(id as usize)?;
        if !n.roles.is_empty() || n.mapped_clock {
            return None;
        }
        match &n.kind {
            Kind::Struct { first, count } => {
                self.ops.push(Op::Align(n.align));
                self.lit(b"{");
                let mut k = 0;
                for &m in p.members(*first, *count) {
                    let mn = p.nodes.get(m as usize)?;
                    if !mn.visible {
                        self.hidden(p, m)?;
                        continue;
                    }
                    if names && !mn.label.is_empty() {
                        // ", NAME = " (" NAME = " first).
                        let l = mn.label.clone();
                        self.lit(&l[(k == 0) as usize..]);
                    } else {
                        self.lit(if k == 0 { b" " } else { b", " });
                    }
                    k += 1;
                    self.node(p, m, names)?;
                }
                self.lit(b" }");
            }
            Kind::Int { mappings, .. } if !mappings.is_empty() => {
                let op = match self.enum_plan(n, mappings) {
                    Some(e) => {
                        self.enums.push(e);
                        Op::Enum(self.enums.len() as u32 - 1)
                    }
                    None => Op::Int(id),
                };
                self.ops.push(op);
            }
            Kind::Int { .. } => self.ops.push(match ByteInt::of(n) {
                Some(le) => Op::ByteInt(le),
                None => Op::Int(id),
            }),
            Kind::Float { .. } => self.ops.push(Op::Float(id)),
            Kind::String { .. } => self.ops.push(Op::Str(id)),
            Kind::Array { elem, .. } => {
                let en = p.nodes.get(*elem as usize)?;
                let number = matches!(en.kind, Kind::Int { .. } | Kind::Float { .. });
                if !number || !en.visible || !en.roles.is_empty() || en.mapped_clock {
                    return None;
                }
                self.lit(b"[");
                self.ops.push(Op::Array(id, *elem, names, ByteInt::of(en)));
                self.lit(b" ]");
            }
            _ => return None,
        }
        Some(())
    }

    /// The plan of enumeration `n`, when its container is an integer of
    /// whole bytes and its mappings span at most [`ENUM_SPAN`] values.
    fn enum_plan(&mut self, n: &decode::Node, mappings: &[crate::ir::Mapping]) -> Option<EnumPlan> {
        let le = ByteInt::container(n)?;
        let ranges = || mappings.iter().flat_map(|m| m.ranges.iter());
        let low = ranges().map(|r| r.lower).min()?;
        let high = ranges().map(|r| r.upper).max()?;
        let below = low.checked_sub(1)?;
        if high.checked_sub(low)? >= ENUM_SPAN {
            return None;
        }
        let start = self.text.len();
        let mut labels = Vec::with_capacity(usize::try_from(high - low + 1).unwrap_or(0));
        // (the last one, below `low`, is the text of values no mapping holds)
        for x in (low..=high).chain([below]) {
            let a = self.text.len() as u32;
            super::enum_labels(&mut self.text, mappings, x);
            labels.push((a, self.text.len() as u32));
            if self.text.len() - start > ENUM_TEXT {
                // (many labels on the same values: the field walk prints
                // them, not a table of them)
                self.text.truncate(start);
                return None;
            }
        }
        let unknown = labels.pop()?;
        Some(EnumPlan {
            le,
            low,
            labels,
            unknown,
        })
    }

    /// Append `text[a..b]`.
    #[inline(always)]
    fn put_text(&self, out: &mut Vec<u8>, (a, b): (u32, u32)) {
        let (a, b) = (a as usize, b as usize);
        if b - a <= 32 {
            // (a copy of constant size, cut back: no call; `text` ends
            // with 32 bytes to spare)
            let l = out.len();
            out.extend_from_slice(&self.text[a..a + 32]);
            out.truncate(l + b - a);
        } else {
            out.extend_from_slice(&self.text[a..b]);
        }
    }

    /// Read and print one body: what [`crate::stream::StreamDecoder::body`]
    /// with `fp` does when it succeeds. On an error the caller takes back
    /// what was written and decodes the body again the usual way.
    pub(super) fn run<'d>(
        &self,
        p: &'d Program,
        c: &mut Cursor<'d>,
        fp: &mut FieldPrinter,
    ) -> Result<(), Box<DecodeError>> {
        for op in &self.ops {
            match *op {
                Op::Begin(scope, align) => {
                    c.scope_start(scope);
                    c.align(align)?;
                }
                Op::Scope(scope) => fp.scope_head(scope),
                Op::Lit(a, b) => self.put_text(&mut fp.out, (a, b)),
                Op::Align(a) => c.align(a)?,
                Op::Int(id) => int(p, c, fp, id)?,
                Op::ByteInt(le) => le.run(c, fp)?,
                Op::Float(id) => {
                    let f = decode::read_float(c, &p.nodes[id as usize])?;
                    push_g(&mut fp.out, f);
                }
                Op::Str(id) => {
                    let n = &p.nodes[id as usize];
                    let raw = decode::read_string(c, n)?;
                    match (&n.kind, raw.split_last()) {
                        // (a null-terminated UTF-8 string ends at its first
                        // null byte, the last one read)
                        (
                            Kind::String {
                                len: None,
                                encoding: StringEncoding::Utf8,
                            },
                            Some((0, text)),
                        ) => fp.text_value(n, text, 0),
                        _ => fp.string_value(n, raw, 0),
                    }
                }
                Op::Array(id, elem, names, le) => {
                    let n = &p.nodes[id as usize];
                    let Kind::Array { len, .. } = n.kind else {
                        continue;
                    };
                    c.align(n.align)?;
                    let l = c.slot_len(len)?;
                    let float = matches!(p.nodes[elem as usize].kind, Kind::Float { .. });
                    // Elements one after the other with no padding: read at
                    // once (an error leaves the decoder to report it).
                    let packed = le.filter(|e| l > 0 && e.align / 8 <= e.bytes as u32);
                    let all = match packed {
                        Some(e) => {
                            c.align(e.align)?;
                            let n = (e.bytes as u64).saturating_mul(l);
                            c.take(usize::try_from(n).unwrap_or(usize::MAX), e.order())?
                        }
                        None => &[],
                    };
                    if let Some(e) = packed.filter(|_| names && l <= INDEXES) {
                        // Room for every element at once, each written at
                        // its place: ` [i] = ` (copied 16 bytes at a
                        // time), then its value.
                        let o = fp.out.len();
                        let room = l as usize * (16 + VALUE_MAX as usize) + VALUE_ROOM as usize;
                        fp.out.resize(o + room, 0);
                        let buf = &mut fp.out[..];
                        let mut at = o;
                        for (i, v) in all.chunks_exact(e.bytes as usize).enumerate() {
                            let (a, b) = (self.index[i] as usize, self.index[i + 1] as usize);
                            buf[at..at + 16].copy_from_slice(&self.index_text[a..a + 16]);
                            at = e.write(e.load(v, 0), c, buf, at + b - a);
                        }
                        fp.out.truncate(at);
                        continue;
                    }
                    for i in 0..l {
                        if names && i < INDEXES {
                            // (a copy of constant size, cut back)
                            let (a, b) = (self.index[i as usize], self.index[i as usize + 1]);
                            let o = fp.out.len();
                            fp.out
                                .extend_from_slice(&self.index_text[a as usize..a as usize + 16]);
                            fp.out.truncate(o + (b - a) as usize);
                        } else {
                            fp.out.extend_from_slice(if i == 0 { b" " } else { b", " });
                            if names {
                                fp.out.push(b'[');
                                tracemux_core::digits::put_u64(&mut fp.out, i);
                                fp.out.extend_from_slice(b"] = ");
                            }
                        }
                        if let Some(e) = packed {
                            e.print(e.load(all, (i * e.bytes as u64) as usize), c, fp);
                        } else if let Some(le) = le {
                            le.run(c, fp)?;
                        } else if float {
                            let f = decode::read_float(c, &p.nodes[elem as usize])?;
                            push_g(&mut fp.out, f);
                        } else {
                            int(p, c, fp, elem)?;
                        }
                    }
                }
                Op::Hidden(id) => decode::field(p, c, &mut decode::Walk, id)?,
                Op::Enum(e) => {
                    let e = &self.enums[e as usize];
                    c.align(e.le.align)?;
                    let s = c.take(e.le.bytes as usize, e.le.order())?;
                    let raw = e.le.load(s, 0);
                    let v = IntValue::from_bits(raw, 8 * e.le.bytes as u32, e.le.signed);
                    let label = v
                        .as_i128()
                        .checked_sub(e.low)
                        .and_then(|k| usize::try_from(k).ok())
                        .and_then(|k| e.labels.get(k));
                    self.put_text(&mut fp.out, *label.unwrap_or(&e.unknown));
                    e.le.print(raw, c, fp);
                    fp.out.extend_from_slice(b" )");
                }
                Op::Run(r) => {
                    let r = &self.runs[r as usize];
                    c.align(r.align)?;
                    let s = c.take(r.bytes as usize, byte_order(r.big_endian))?;
                    // Room for every field at once, each written at its
                    // place: the text before it (copied 32 bytes at a
                    // time), then its value.
                    let l = fp.out.len();
                    fp.out.resize(l + r.room as usize, 0);
                    let buf = &mut fp.out[..];
                    let mut at = l;
                    for f in &r.fields {
                        let (a, b) = (f.lit.0 as usize, f.lit.1 as usize);
                        buf[at..at + 32].copy_from_slice(&self.text[a..a + 32]);
                        at = f.le.write(f.le.load(s, f.off as usize), c, buf, at + b - a);
                    }
                    fp.out.truncate(at);
                }
            }
        }
        Ok(())
    }
}

/// Read and print the integer `id`, keeping its value when a length or
/// selector needs it.
#[inline(always)]
fn int(
    p: &Program,
    c: &mut Cursor<'_>,
    fp: &mut FieldPrinter,
    id: u32,
) -> Result<(), Box<DecodeError>> {
    let n = &p.nodes[id as usize];
    let Some(decode::ReadInt { val: v, len, .. }) = decode::read_int(c, n)? else {
        return Ok(());
    };
    if n.save != NO_SLOT {
        c.slots[n.save as usize] = v.as_i128();
    }
    if let Kind::Int { base, mappings, .. } = &n.kind {
        if mappings.is_empty() {
            push_int(&mut fp.out, v, len, *base);
        } else {
            fp.enum_labels(n, v);
            push_int(&mut fp.out, v, len, *base);
            fp.out.extend_from_slice(b" )");
        }
    }
    Ok(())
}

/// Nothing in field `id` has a role or a clock mapping (the decoder then
/// reads it with no effect but its lengths and selectors).
fn plain(p: &Program, id: u32) -> bool {
    let Some(n) = p.nodes.get(id as usize) else {
        return false;
    };
    if !n.roles.is_empty() || n.mapped_clock {
        return false;
    }
    match &n.kind {
        Kind::Struct { first, count } => p.members(*first, *count).iter().all(|&m| plain(p, m)),
        Kind::Array { elem, .. } => plain(p, *elem),
        Kind::Variant { first, count, .. } => p
            .variant_options(*first, *count)
            .iter()
            .all(|o| plain(p, o.node)),
        Kind::Optional { child, .. } => plain(p, *child),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{discover, open_traces, ReadLoader};

    /// Every event record class of the LTTng-UST corpus application gets a
    /// plan (numbers, enumerations, strings, arrays and sequences of
    /// numbers, text arrays and sequences, an empty payload), so that the
    /// golden tests, which compare the output with babeltrace2's, test the
    /// plans and not only the decoder's walk.
    #[test]
    fn corpus_classes_have_plans() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/ctf/lttng-ust-uid/trace");
        let inputs = [dir];
        let loader = ReadLoader;
        let found = discover(&inputs).unwrap();
        let traces = open_traces(&found, &inputs, &loader, (0, 0)).unwrap();
        let mut names = Vec::new();
        for t in &traces {
            for (si, s) in t.prog.streams.iter().enumerate() {
                for (pos, e) in s.events.iter().enumerate() {
                    let roots = [
                        (Scope::EventCommonContext, s.common_context),
                        (Scope::EventSpecificContext, e.specific_context),
                        (Scope::EventPayload, e.payload),
                    ];
                    let planned = BodyPlan::new(&t.prog, super::super::Names::default(), roots);
                    let name = t.tc.stream_classes[si].event_classes[s.event_index[pos]]
                        .name
                        .clone();
                    names.push((name, planned.is_some()));
                }
            }
        }
        let without: Vec<_> = names.iter().filter(|(_, p)| !p).collect();
        assert!(names.len() >= 8, "{names:?}");
        assert!(without.is_empty(), "classes without a plan: {without:?}");
    }
}
