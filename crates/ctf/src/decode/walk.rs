//! The walk: a scope decoded node by node into a [`Visitor`], with the
//! slots that lengths and selectors read.

use super::*;

/// Decode one scope (`root` must be a structure node).
pub fn decode_scope<V: Visitor>(
    p: &Program,
    c: &mut Cursor<'_>,
    v: &mut V,
    scope: Scope,
    root: u32,
) -> Result<(), DecodeError> {
    c.scope = scope;
    c.last_bo = None;
    let n = &p.nodes[root as usize];
    c.align(n.align).map_err(|e| *e)?;
    v.scope_begin(scope, c.pos);
    field(p, c, v, root).map_err(|e| *e)?;
    v.scope_end(scope, c.pos);
    Ok(())
}

pub(super) fn apply_roles(
    c: &mut Cursor<'_>,
    v: &mut impl Visitor,
    n: &Node,
    val: u64,
    len: u32,
) -> Result<(), Box<DecodeError>> {
    let r = n.roles;
    // Event headers only have these two: the common case.
    const HOT: u16 = Roles::DEFAULT_CLOCK_TIMESTAMP.0 | Roles::EVENT_CLASS_ID.0;
    if r.0 & !HOT == 0 && c.scope != Scope::PacketContext {
        if r.has(Roles::DEFAULT_CLOCK_TIMESTAMP) {
            c.update_clock(val, len);
            v.clock_value(c.clock, c.pos);
        }
        if r.has(Roles::EVENT_CLASS_ID) {
            c.event_id = Some(val);
        }
        return Ok(());
    }
    if r.has(Roles::PACKET_BEGIN_DEFAULT_CLOCK_TIMESTAMP) {
        c.info.begin_clock = Some(val);
    }
    if r.has(Roles::DEFAULT_CLOCK_TIMESTAMP) {
        c.update_clock(val, len);
        if c.scope == Scope::PacketContext && c.info.begin_clock.is_none() {
            c.info.begin_clock = Some(c.clock);
        }
        v.clock_value(c.clock, c.pos);
    }
    if r.has(Roles::EVENT_CLASS_ID) {
        c.event_id = Some(val);
    }
    if r.has(Roles::PACKET_END_DEFAULT_CLOCK_TIMESTAMP) {
        c.info.end_clock = Some(val);
    }
    if r.has(Roles::PACKET_TOTAL_LENGTH) {
        if val % 8 != 0 {
            return Err(c.err(DecodeErrorKind::Other(format!(
                "packet total size {val} bits is not a multiple of 8"
            ))));
        }
        c.info.total_bits = Some(val);
    }
    if r.has(Roles::PACKET_CONTENT_LENGTH) {
        c.info.content_bits = Some(val);
    }
    if r.has(Roles::PACKET_TOTAL_LENGTH | Roles::PACKET_CONTENT_LENGTH) {
        match (c.info.total_bits, c.info.content_bits) {
            (Some(t), Some(k)) if k > t => {
                return Err(c.err(DecodeErrorKind::Other(format!(
                    "packet content size {k} bits exceeds its total size {t} bits"
                ))))
            }
            (_, Some(k)) => c.set_end(k),
            (Some(t), None) => c.set_end(t),
            _ => {}
        }
    }
    if r.has(Roles::DISCARDED_EVENT_COUNTER_SNAPSHOT) {
        c.info.discarded = Some(val);
    }
    if r.has(Roles::PACKET_SEQUENCE_NUMBER) {
        c.info.seq_num = Some(val);
    }
    if r.has(Roles::DATA_STREAM_CLASS_ID) {
        c.info.stream_class = Some(val);
    }
    if r.has(Roles::DATA_STREAM_ID) {
        c.info.stream_id = Some(val);
    }
    if r.has(Roles::PACKET_MAGIC) {
        c.info.magic = Some(val);
        v.packet_magic(val, c.pos);
    }
    Ok(())
}

/// Read `nbytes` bytes of a string or BLOB at the (byte-aligned) cursor.
/// When they pass the content end, the error is at the field's start;
/// when they pass the end of the data, the visitor gets the bytes that are
/// there (`partial`) and the error is at the end of the data.
pub(super) fn sized_bytes<'d, V: Visitor>(
    c: &mut Cursor<'d>,
    v: &mut V,
    n: &Node,
    nbytes: u64,
) -> Result<&'d [u8], Box<DecodeError>> {
    let at = c.pos;
    let Some(bits) = nbytes.checked_mul(8) else {
        return Err(c.err(DecodeErrorKind::Other(format!("length {nbytes} too large"))));
    };
    let want = at.saturating_add(bits);
    let data_end = (c.data.len() as u64) * 8;
    if want > c.end && c.end <= data_end {
        if V::FIELDS {
            v.partial(n, &[], at);
        }
        return Err(c.err(DecodeErrorKind::BeyondContent {
            bits,
            remaining: c.end.saturating_sub(at),
        }));
    }
    if want > data_end {
        let b = (at >> 3) as usize;
        if V::FIELDS {
            v.partial(n, &c.data[b.min(c.data.len())..], at);
        }
        c.pos = data_end;
        return Err(c.err(DecodeErrorKind::EndOfData { bits: 8 }));
    }
    let b = (at >> 3) as usize;
    c.pos = want;
    Ok(&c.data[b..b + nbytes as usize])
}

/// Length in bytes (terminator included) of the null-terminated string at
/// the cursor, looked for in the whole data (not only the content).
pub(super) fn nt_len(c: &Cursor<'_>, unit: usize) -> Option<u64> {
    let start = (c.pos >> 3) as usize;
    let hay = c.data.get(start..).unwrap_or(&[]);
    if unit == 1 {
        return memchr0(hay).map(|k| k as u64 + 1);
    }
    let mut k = 0usize;
    while k + unit <= hay.len() {
        if hay[k..k + unit].iter().all(|&b| b == 0) {
            return Some((k + unit) as u64);
        }
        k += unit;
    }
    None
}

#[inline]
pub(super) fn memchr0(h: &[u8]) -> Option<usize> {
    memchr::memchr(0, h)
}

/// Decode one field.
pub fn field<V: Visitor>(
    p: &Program,
    c: &mut Cursor<'_>,
    v: &mut V,
    id: u32,
) -> Result<(), Box<DecodeError>> {
    let n = &p.nodes[id as usize];
    if !V::FIELDS && n.inert {
        if let Some(bits) = n.fixed_bits {
            c.align(n.align)?;
            c.skip(bits)?;
            return Ok(());
        }
    }
    match &n.kind {
        Kind::Int { .. } => int_field(c, v, n)?,
        Kind::Struct { first, count } => {
            c.align(n.align)?;
            if V::FIELDS {
                v.struct_begin(n, c.pos);
            }
            for &m in p.members(*first, *count) {
                // Integer members (most of them) without the recursion.
                let mn = &p.nodes[m as usize];
                if matches!(mn.kind, Kind::Int { .. }) && (V::FIELDS || !mn.inert) {
                    int_field(c, v, mn)?;
                } else {
                    field(p, c, v, m)?;
                }
            }
            if V::FIELDS {
                v.struct_end(n, c.pos);
            }
        }
        Kind::Array { elem, len } => {
            c.align(n.align)?;
            let l = c.slot_len(*len)?;
            let at = c.pos;
            let en = &p.nodes[*elem as usize];
            // Elements of zero bits would make a huge length loop for
            // nothing: bound it (others fail at the end of the data).
            if en.fixed_bits == Some(0) && l > 1 << 24 {
                return Err(c.err(DecodeErrorKind::Other(format!(
                    "array of {l} empty elements"
                ))));
            }
            if V::FIELDS {
                v.array_begin(n, l, at);
            }
            let uuid = n.roles.has(Roles::METADATA_STREAM_UUID) && l == 16;
            if !V::FIELDS && en.inert && !uuid {
                if let Some(eb) = en.fixed_bits {
                    if en.align == 1 || eb % en.align as u64 == 0 {
                        if l > 0 {
                            c.align(en.align)?;
                        }
                        let bits = eb.checked_mul(l).ok_or_else(|| {
                            c.err(DecodeErrorKind::Other("array too large".into()))
                        })?;
                        c.need(bits)?;
                        c.pos += bits;
                        c.last_bo = None;
                        return Ok(());
                    }
                }
            }
            let mut u = [0u8; 16];
            for i in 0..l {
                if uuid {
                    let before = c.pos;
                    field(p, c, v, *elem)?;
                    if c.pos - before == 8 && before % 8 == 0 {
                        u[i as usize] = c.data[(before >> 3) as usize];
                    }
                } else {
                    field(p, c, v, *elem)?;
                }
            }
            if uuid {
                c.info.uuid = Some(u);
                v.metadata_uuid(&u, c.pos);
            }
            if V::FIELDS {
                v.array_end(n, c.pos);
            }
        }
        Kind::Variant {
            slot, first, count, ..
        } => {
            let sel = if *slot == NO_SLOT {
                0
            } else {
                c.slots[*slot as usize]
            };
            let opts = p.variant_options(*first, *count);
            let Some(oi) = opts
                .iter()
                .position(|o| o.ranges.iter().any(|r| r.contains(sel)))
            else {
                return Err(c.err(DecodeErrorKind::BadSelector(sel)));
            };
            let on = &p.nodes[opts[oi].node as usize];
            c.align(on.align)?;
            if V::FIELDS {
                v.variant_begin(n, sel, oi, c.pos);
            }
            field(p, c, v, opts[oi].node)?;
            if V::FIELDS {
                v.variant_end(n, c.pos);
            }
        }
        _ => field_cold(p, c, v, n)?,
    }
    Ok(())
}

/// A fixed-length integer field.
#[inline(always)]
pub(super) fn int_field<V: Visitor>(
    c: &mut Cursor<'_>,
    v: &mut V,
    n: &Node,
) -> Result<(), Box<DecodeError>> {
    let Some(r) = read_int(c, n)? else {
        return Ok(());
    };
    int_value(c, v, n, r.val, r.raw, r.len, r.at)
}

/// A fixed-length integer read by [`read_int`].
pub(crate) struct ReadInt {
    pub val: IntValue,
    /// Its bits, their number, and where they start.
    pub raw: u64,
    pub len: u32,
    pub at: u64,
}

/// Read the fixed-length integer `n` (`None` when it is not one). Nothing
/// is kept (see [`int_value`]).
#[inline(always)]
pub(crate) fn read_int(c: &mut Cursor<'_>, n: &Node) -> Result<Option<ReadInt>, Box<DecodeError>> {
    let Kind::Int {
        len,
        bo,
        rev,
        signed,
        ..
    } = &n.kind
    else {
        return Ok(None);
    };
    c.align(n.align)?;
    let at = c.pos;
    let len = *len as u32;
    let raw = c.bits(len, *bo, *rev)?;
    let val = IntValue::from_bits(raw, len, *signed);
    Ok(Some(ReadInt { val, raw, len, at }))
}

/// Read the floating-point number `n` (0 when it is not one).
#[inline]
pub(crate) fn read_float(c: &mut Cursor<'_>, n: &Node) -> Result<f64, Box<DecodeError>> {
    let Kind::Float { len, bo, rev } = &n.kind else {
        return Ok(0.0);
    };
    c.align(n.align)?;
    let raw = c.bits(*len as u32, *bo, *rev)?;
    Ok(if *len == 32 {
        f32::from_bits(raw as u32) as f64
    } else {
        f64::from_bits(raw)
    })
}

/// The length in bytes of the string `len`/`encoding` at the (aligned)
/// cursor: a null-terminated one's up to its terminator (or to the end of
/// the data and one more, so that reading it fails there).
pub(super) fn string_len(
    c: &Cursor<'_>,
    len: &Option<Len>,
    encoding: StringEncoding,
) -> Result<u64, Box<DecodeError>> {
    match len {
        None => Ok(match nt_len(c, encoding.unit()) {
            Some(l) => l,
            None => ((c.data.len() as u64) - (c.pos >> 3)) + 1,
        }),
        Some(l) => {
            let n = c.slot_len(*l)?;
            let unit = encoding.unit() as u64;
            // A dynamic length that is not a whole number of code units
            // (CTF2-SPEC-2.0: a string field is a sequence of them); a
            // static one is noted with the metadata and read without the
            // partial unit.
            if unit > 1 && n % unit != 0 && matches!(l, Len::Slot(_)) {
                return Err(c.err(DecodeErrorKind::Other(format!(
                    "string of {n} bytes: not a multiple of its {unit}-byte code unit"
                ))));
            }
            Ok(n)
        }
    }
}

/// Read the string `n`: every byte of the field (see [`Visitor::string`]).
#[inline]
pub(crate) fn read_string<'d>(c: &mut Cursor<'d>, n: &Node) -> Result<&'d [u8], Box<DecodeError>> {
    let Kind::String { len, encoding } = &n.kind else {
        return Ok(&[]);
    };
    c.align(8)?;
    let nbytes = string_len(c, len, *encoding)?;
    sized_bytes(c, &mut NullVisitor, n, nbytes)
}

/// An integer's value decoded (`raw` its bits, `len` their number): kept
/// for later lengths and selectors, visited, its roles applied.
#[inline(always)]
pub(super) fn int_value<V: Visitor>(
    c: &mut Cursor<'_>,
    v: &mut V,
    n: &Node,
    val: IntValue,
    raw: u64,
    len: u32,
    at: u64,
) -> Result<(), Box<DecodeError>> {
    if n.save != NO_SLOT {
        c.slots[n.save as usize] = val.as_i128();
    }
    if V::FIELDS {
        v.int(n, val, at);
    }
    if !n.roles.is_empty() {
        apply_roles(c, v, n, raw, len)?;
    }
    Ok(())
}

/// The field kinds that LTTng-style event headers and payloads rarely use,
/// kept out of [`field`] so that its frame stays small.
#[inline(never)]
pub(super) fn field_cold<V: Visitor>(
    p: &Program,
    c: &mut Cursor<'_>,
    v: &mut V,
    n: &Node,
) -> Result<(), Box<DecodeError>> {
    match &n.kind {
        Kind::Float { .. } => {
            c.align(n.align)?;
            let at = c.pos;
            let f = read_float(c, n)?;
            if V::FIELDS {
                v.float(n, f, at);
            }
        }
        Kind::Bool { len, bo, rev } => {
            c.align(n.align)?;
            let at = c.pos;
            let raw = c.bits(*len as u32, *bo, *rev)?;
            if n.save != NO_SLOT {
                c.slots[n.save as usize] = (raw != 0) as i128;
            }
            if V::FIELDS {
                v.boolean(n, raw != 0, at);
            }
        }
        Kind::BitArray { len, bo, rev, .. } => {
            c.align(n.align)?;
            let at = c.pos;
            let raw = c.bits(*len as u32, *bo, *rev)?;
            if V::FIELDS {
                v.bit_array(n, raw, at);
            }
        }
        Kind::VarInt { signed, .. } => {
            c.align(8)?;
            let at = c.pos;
            let mut val: u64 = 0;
            let mut shift = 0u32;
            loop {
                let b = c.bits(8, ByteOrder::Little, false)?;
                let payload = b & 0x7f;
                if shift == 63 && !last_varint_byte_fits(b, *signed) {
                    // The error is at the byte that overflows (as yactfr).
                    c.pos -= 8;
                    return Err(c.err(DecodeErrorKind::OversizedVarInt));
                }
                val |= payload << shift;
                shift += 7;
                if b & 0x80 == 0 {
                    break;
                }
            }
            let iv = if *signed {
                let s = if shift < 64 && (val >> (shift - 1)) & 1 == 1 {
                    (val | (u64::MAX << shift)) as i64
                } else {
                    val as i64
                };
                IntValue::S(s)
            } else {
                IntValue::U(val)
            };
            int_value(c, v, n, iv, val, 64, at)?;
        }
        Kind::String { len, encoding } => {
            c.align(8)?;
            let at = c.pos;
            let nbytes = string_len(c, len, *encoding)?;
            let raw = sized_bytes(c, v, n, nbytes)?;
            if V::FIELDS {
                v.string(n, raw, at, c.pos);
            }
        }
        Kind::Blob { len, .. } => {
            c.align(8)?;
            let at = c.pos;
            let l = c.slot_len(*len)?;
            let b = sized_bytes(c, v, n, l)?;
            if V::FIELDS {
                v.blob(n, b, at, c.pos);
            }
            if n.roles.has(Roles::METADATA_STREAM_UUID) && b.len() == 16 {
                let mut u = [0u8; 16];
                u.copy_from_slice(b);
                c.info.uuid = Some(u);
                v.metadata_uuid(&u, c.pos);
            }
        }
        Kind::Optional {
            slot,
            ranges,
            child,
            ..
        } => {
            let sel = if *slot == NO_SLOT {
                0
            } else {
                c.slots[*slot as usize]
            };
            let enabled = match ranges {
                None => sel != 0,
                Some((f, k)) => p.ranges[*f as usize..(*f + *k) as usize]
                    .iter()
                    .any(|r| r.contains(sel)),
            };
            if enabled {
                c.align(p.nodes[*child as usize].align)?;
            }
            if V::FIELDS {
                v.optional_begin(n, enabled, sel, c.pos);
            }
            if enabled {
                field(p, c, v, *child)?;
            }
            if V::FIELDS {
                v.optional_end(n, c.pos);
            }
        }
        _ => {}
    }
    Ok(())
}
