//! What decoding reports: its errors ([`DecodeError`]) and the values it
//! hands to a [`Visitor`], field by field.

use super::*;

/// A decoding error and the bit offset (from the packet start) where it
/// was detected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// A read of `bits` bits would pass the packet content end.
    BeyondContent { bits: u64, remaining: u64 },
    /// A read of `bits` bits would pass the end of the data.
    EndOfData { bits: u64 },
    /// Byte order changes in the middle of a byte.
    ByteOrderChange,
    /// The selector value selects no variant option.
    BadSelector(i128),
    /// A length field holds a negative value.
    NegativeLength(i128),
    /// A LEB128 integer is longer than 10 bytes or wider than 64 bits.
    OversizedVarInt,
    /// Anything else (packet-level checks).
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub kind: DecodeErrorKind,
    /// Bit offset from the start of the packet.
    pub bit: u64,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            DecodeErrorKind::BeyondContent { bits, remaining } => write!(
                f,
                "cannot read {bits} bits: would pass the packet content end ({remaining} bits remaining)"
            ),
            DecodeErrorKind::EndOfData { bits } => {
                write!(f, "cannot read {bits} bits: end of data")
            }
            DecodeErrorKind::ByteOrderChange => f.write_str("byte order changes within a byte"),
            DecodeErrorKind::BadSelector(v) => {
                write!(f, "selector value {v} selects no variant option")
            }
            DecodeErrorKind::NegativeLength(v) => write!(f, "negative length {v}"),
            DecodeErrorKind::OversizedVarInt => f.write_str("oversized variable-length integer"),
            DecodeErrorKind::Other(m) => f.write_str(m),
        }
    }
}

// ---------------------------------------------------------------------
// The visitor

/// A decoded integer value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntValue {
    U(u64),
    S(i64),
}

impl IntValue {
    /// The value of `len` (1 to 64) bits `raw`, sign-extended when
    /// `signed`.
    #[inline]
    pub fn from_bits(raw: u64, len: u32, signed: bool) -> IntValue {
        if !signed {
            IntValue::U(raw)
        } else if len >= 64 {
            IntValue::S(raw as i64)
        } else {
            IntValue::S(((raw << (64 - len)) as i64) >> (64 - len))
        }
    }

    #[inline]
    pub fn as_i128(self) -> i128 {
        match self {
            IntValue::U(v) => v as i128,
            IntValue::S(v) => v as i128,
        }
    }
}

/// Receives what the decoder reads, in stream order.
///
/// All methods have empty default bodies, so a visitor implements only
/// what it needs. Offsets (`at`, `end`) are in bits from the start of the
/// **packet**; the packet's byte offset in its file is given to
/// [`Visitor::packet_begin`]. A field's `at` is its first bit after the
/// alignment padding; `end` (for blocks) is the first bit after the block.
/// A node's `name` is `Some` only for direct structure members.
///
/// Order of calls for one packet: `packet_begin`; the packet header
/// (`scope_begin(PacketHeader)`, fields, `scope_end`); `data_stream_info`;
/// the packet context; `packet_info`; then for each event record:
/// `event_begin`, the event header scope, `event_class`, the three other
/// event scopes, `event_end`; finally `packet_end`. Inside a scope, a
/// structure is `struct_begin`, its members, `struct_end`; an array is
/// `array_begin`, its elements, `array_end`; a variant or optional wraps its
/// selected field between `*_begin` and `*_end`. `clock_value` follows every
/// field that updates the default clock; `packet_magic` follows the magic
/// field; `metadata_uuid` comes after the last byte of the UUID field,
/// before its `array_end` (or after its `blob`).
///
/// With `FIELDS = false` the decoder does not call the field methods
/// (`struct_*` to `blob`) for fields it can skip, and does not read them
/// (decode-only runs).
pub trait Visitor {
    /// Whether field-level callbacks are wanted.
    const FIELDS: bool = true;
    /// Whether a packet whose magic number is not 0xC1FC1FC1 is an error.
    /// babeltrace2 rejects such a packet; yactfr (and so
    /// [`crate::listing::Listing`]) only reports the value and goes on.
    const CHECK_MAGIC: bool = true;
    /// Whether the event header is decoded with this visitor. With false
    /// it is decoded with none (the visitor gets no call between
    /// `event_begin` and `event_class`, `clock_value` included).
    const EVENT_HEADER: bool = true;

    fn packet_begin(&mut self, _file_offset: u64) {}
    fn data_stream_info(&mut self, _at: u64, _class_id: Option<u64>, _stream_id: Option<u64>) {}
    fn packet_info(&mut self, _at: u64, _info: &PacketInfo) {}
    fn packet_end(&mut self, _content_end: u64, _total_end: u64) {}
    fn event_begin(&mut self, _at: u64) {}
    /// The event record class is known (after the header). `class` is the
    /// position in the stream class's `event_classes` (IR) and its ID.
    fn event_class(&mut self, _at: u64, _class: usize, _id: u64) {}
    fn event_end(&mut self, _at: u64) {}
    fn scope_begin(&mut self, _scope: Scope, _at: u64) {}
    fn scope_end(&mut self, _scope: Scope, _at: u64) {}
    fn struct_begin(&mut self, _node: &Node, _at: u64) {}
    fn struct_end(&mut self, _node: &Node, _end: u64) {}
    fn array_begin(&mut self, _node: &Node, _len: u64, _at: u64) {}
    fn array_end(&mut self, _node: &Node, _end: u64) {}
    /// `option` is the index of the selected option in the variant.
    fn variant_begin(&mut self, _node: &Node, _selector: i128, _option: usize, _at: u64) {}
    fn variant_end(&mut self, _node: &Node, _end: u64) {}
    fn optional_begin(&mut self, _node: &Node, _enabled: bool, _selector: i128, _at: u64) {}
    fn optional_end(&mut self, _node: &Node, _end: u64) {}
    fn int(&mut self, _node: &Node, _v: IntValue, _at: u64) {}
    fn float(&mut self, _node: &Node, _v: f64, _at: u64) {}
    fn boolean(&mut self, _node: &Node, _v: bool, _at: u64) {}
    fn bit_array(&mut self, _node: &Node, _v: u64, _at: u64) {}
    /// `raw`: every byte of the field (terminator and bytes after it
    /// included); the text is `raw` up to the first null code unit.
    fn string(&mut self, _node: &Node, _raw: &[u8], _at: u64, _end: u64) {}
    fn blob(&mut self, _node: &Node, _bytes: &[u8], _at: u64, _end: u64) {}
    /// A string or BLOB that passes the content end or the end of the data:
    /// the bytes that are there (possibly none). An error follows.
    fn partial(&mut self, _node: &Node, _raw: &[u8], _at: u64) {}
    /// The default clock took value `v` (cycles) after the field that ends
    /// at `at`.
    fn clock_value(&mut self, _v: u64, _at: u64) {}
    fn packet_magic(&mut self, _v: u64, _at: u64) {}
    fn metadata_uuid(&mut self, _uuid: &[u8; 16], _at: u64) {}
}

/// Whether `b`, the 10th byte of a LEB128 integer (after 63 value bits),
/// ends it and keeps it within 64 bits: no continuation bit, and a value
/// of 0 or 1 when unsigned, 0 (positive) or 0x7F (negative, sign bits)
/// when signed.
pub(super) fn last_varint_byte_fits(b: u64, signed: bool) -> bool {
    if signed {
        b == 0 || b == 0x7f
    } else {
        b <= 1
    }
}

/// A visitor that wants nothing (decode-only).
pub struct NullVisitor;

/// Reads every field as a visitor that prints them would (nothing is
/// skipped, so the decoder's state after each field is a printer's), and
/// does nothing with them.
pub struct Walk;

impl Visitor for Walk {}

impl Visitor for NullVisitor {
    const FIELDS: bool = false;
}

/// What the packet header and context said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PacketInfo {
    pub stream_class: Option<u64>,
    pub stream_id: Option<u64>,
    pub total_bits: Option<u64>,
    pub content_bits: Option<u64>,
    pub begin_clock: Option<u64>,
    pub end_clock: Option<u64>,
    pub seq_num: Option<u64>,
    pub discarded: Option<u64>,
    pub magic: Option<u64>,
    pub uuid: Option<[u8; 16]>,
}
