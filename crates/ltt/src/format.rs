//! Marker format strings: the layout of an event's fields.
//!
//! The specification says that the `core` facility's `marker_format` events
//! describe the events of the trace, without describing the format strings
//! themselves. They are the format strings of LTTng markers: printf-like
//! text where each conversion is one field, named by the word before it:
//!
//! ```text
//! pid %d comm %s flags %lx
//! ```
//!
//! is three fields, `pid` (signed int), `comm` (NUL-terminated string) and
//! `flags` (unsigned long, shown in hex). What this parser accepts:
//!
//! - flags `-+ #0`, a width and a precision are skipped (they only change
//!   how a value is shown, not how it is stored);
//! - length qualifiers `hh` (1 byte), `h` (2), none (`int_size`), `l`
//!   (`long_size`), `ll`/`L`/`q`/`j` (8), `z`/`Z` (`size_t_size`), `t`
//!   (`pointer_size`), with the sizes of the event's `marker_id`;
//! - conversions `d i` (signed), `u` (unsigned), `x X` (unsigned, hex),
//!   `o` (unsigned, octal), `c` (one unsigned byte), `p` (pointer, hex),
//!   `s` (NUL-terminated string); `%%` is a literal `%`;
//! - LTTng's "trace type" prefix `#[n][qualifier]conversion` before a
//!   conversion, which overrides the stored size and signedness (`#2u%lu`
//!   stores 2 bytes), `n` meaning network (big-endian) byte order; `##` is a
//!   literal `#`.
//!
//! A field with no word before it (`a=%d`) is named `field_N`, N counting
//! fields from 1. Integers are aligned on `min(size, alignment)` bytes from
//! the start of the payload when the marker's alignment is not 0; strings
//! are never aligned. Anything else (`%f`, `%n`, a bad size) makes the whole
//! format unusable: its events are then shown as raw bytes.

use tracemux_core::bytes::Endian;
use tracemux_core::model::{sign_extend, Value};

use crate::header::pad_to;

/// How an integer is shown (the conversion of the format string).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    Decimal,
    Hex,
    Octal,
}

/// The stored type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    Signed,
    Unsigned,
    /// A NUL-terminated string.
    String,
}

/// One field of a marker format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSpec {
    pub name: String,
    pub kind: FieldKind,
    /// Stored size in bytes (1, 2, 4 or 8); 0 for strings.
    pub size: u8,
    pub base: Base,
    /// Stored big-endian whatever the trace's byte order (`#n...`).
    pub network_order: bool,
}

/// The C type sizes of the traced machine, from a `marker_id` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    pub int_size: u8,
    pub long_size: u8,
    pub pointer_size: u8,
    pub size_t_size: u8,
    /// Field alignment of the marker (0: packed).
    pub alignment: u8,
}

impl Sizes {
    /// The sizes every marker of a trace with `arch_size`-byte pointers
    /// and `alignment` uses unless its `marker_id` says otherwise: the
    /// sizes of the built-in `core` events.
    pub fn for_arch(arch_size: u8, alignment: u8) -> Sizes {
        Sizes {
            int_size: 4,
            long_size: arch_size,
            pointer_size: arch_size,
            size_t_size: arch_size,
            alignment,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Qual {
    None,
    Char,
    Short,
    Long,
    LongLong,
    SizeT,
    PtrDiff,
    Fixed(u8),
}

fn qual_size(q: Qual, s: &Sizes) -> u8 {
    match q {
        Qual::None => s.int_size,
        Qual::Char => 1,
        Qual::Short => 2,
        Qual::Long => s.long_size,
        Qual::LongLong => 8,
        Qual::SizeT => s.size_t_size,
        Qual::PtrDiff => s.pointer_size,
        Qual::Fixed(n) => n,
    }
}

/// Read a length qualifier at `f[*i]`.
fn qualifier(f: &[u8], i: &mut usize, fixed_ok: bool) -> Qual {
    let q = match f.get(*i) {
        Some(b'h') if f.get(*i + 1) == Some(&b'h') => {
            *i += 1;
            Qual::Char
        }
        Some(b'h') => Qual::Short,
        Some(b'l') if f.get(*i + 1) == Some(&b'l') => {
            *i += 1;
            Qual::LongLong
        }
        Some(b'l') => Qual::Long,
        Some(b'L' | b'q' | b'j') => Qual::LongLong,
        Some(b'z' | b'Z') => Qual::SizeT,
        Some(b't') => Qual::PtrDiff,
        Some(&d @ (b'1' | b'2' | b'4' | b'8')) if fixed_ok => Qual::Fixed(d - b'0'),
        _ => return Qual::None,
    };
    *i += 1;
    q
}

/// A conversion: kind, display base and size.
fn conversion(c: u8, q: Qual, s: &Sizes) -> Result<(FieldKind, Base, u8), String> {
    Ok(match c {
        b'd' | b'i' => (FieldKind::Signed, Base::Decimal, qual_size(q, s)),
        b'u' => (FieldKind::Unsigned, Base::Decimal, qual_size(q, s)),
        b'x' | b'X' => (FieldKind::Unsigned, Base::Hex, qual_size(q, s)),
        b'o' => (FieldKind::Unsigned, Base::Octal, qual_size(q, s)),
        b'c' => (FieldKind::Unsigned, Base::Decimal, 1),
        b'p' => (FieldKind::Unsigned, Base::Hex, s.pointer_size),
        b's' => (FieldKind::String, Base::Decimal, 0),
        other => {
            return Err(format!(
                "unsupported conversion '%{}'",
                (other as char).escape_default()
            ))
        }
    })
}

/// A `#` trace type: (kind, size, network order).
struct TraceType {
    kind: FieldKind,
    size: u8,
    network: bool,
}

fn trace_type(f: &[u8], i: &mut usize, s: &Sizes) -> Result<TraceType, String> {
    let mut network = false;
    while let Some(&c) = f.get(*i) {
        match c {
            b'b' => {}
            b'n' => network = true,
            _ => break,
        }
        *i += 1;
    }
    let q = qualifier(f, i, true);
    let c = *f.get(*i).ok_or("format ends inside a '#' trace type")?;
    *i += 1;
    let (kind, _, size) = conversion(c, q, s)?;
    Ok(TraceType {
        kind,
        size,
        network,
    })
}

/// Parse a marker format string into its fields, with the sizes of the
/// marker's `marker_id`. Errors say what is not understood.
pub fn parse_format(fmt: &[u8], sizes: &Sizes) -> Result<Vec<FieldSpec>, String> {
    for (what, v) in [
        ("int_size", sizes.int_size),
        ("long_size", sizes.long_size),
        ("pointer_size", sizes.pointer_size),
        ("size_t_size", sizes.size_t_size),
    ] {
        if !matches!(v, 1 | 2 | 4 | 8) {
            return Err(format!("{what} {v} is not 1, 2, 4 or 8"));
        }
    }
    let mut fields = Vec::new();
    // the current word: start, end (end is set at the whitespace after it)
    let mut word: Option<(usize, Option<usize>)> = None;
    let mut tt: Option<TraceType> = None;
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        i += 1;
        match c {
            b'#' if fmt.get(i) == Some(&b'#') => i += 1,
            b'#' => tt = Some(trace_type(fmt, &mut i, sizes)?),
            b'%' if fmt.get(i) == Some(&b'%') => i += 1,
            b'%' => {
                while matches!(fmt.get(i), Some(b'-' | b'+' | b' ' | b'#' | b'0')) {
                    i += 1;
                }
                while matches!(fmt.get(i), Some(b'0'..=b'9' | b'.')) {
                    i += 1;
                }
                let q = qualifier(fmt, &mut i, false);
                let conv = *fmt.get(i).ok_or("format ends inside a conversion")?;
                i += 1;
                let (mut kind, base, mut size) = conversion(conv, q, sizes)?;
                let mut network_order = false;
                if let Some(t) = tt.take() {
                    if kind != FieldKind::String {
                        kind = t.kind;
                        size = t.size;
                    }
                    network_order = t.network;
                }
                if kind == FieldKind::String {
                    size = 0;
                }
                let name = match word.take() {
                    Some((s, Some(e))) => String::from_utf8_lossy(&fmt[s..e]).into_owned(),
                    _ => format!("field_{}", fields.len() + 1),
                };
                fields.push(FieldSpec {
                    name,
                    kind,
                    size,
                    base,
                    network_order,
                });
            }
            b' ' | b'\t' | b'\n' => {
                if let Some((_, e @ None)) = &mut word {
                    *e = Some(i - 1);
                }
            }
            _ => {
                if word.is_none_or(|(_, e)| e.is_some()) {
                    word = Some((i - 1, None));
                }
            }
        }
    }
    Ok(fields)
}

/// Why a field could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldError {
    /// The payload ends before the field (offset of the field in the payload).
    Short(usize),
    /// A string has no NUL before the end of the payload.
    Unterminated(usize),
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldError::Short(o) => {
                write!(f, "payload ends inside a field at payload offset {o}")
            }
            FieldError::Unterminated(o) => {
                write!(f, "unterminated string at payload offset {o}")
            }
        }
    }
}

/// Decodes the fields of one payload in order, without allocating.
pub struct FieldIter<'s, 'd> {
    specs: std::slice::Iter<'s, FieldSpec>,
    data: &'d [u8],
    pos: usize,
    endian: Endian,
    alignment: usize,
    failed: bool,
}

impl<'s, 'd> FieldIter<'s, 'd> {
    /// Decode `data` (an event's payload) with `specs`, integers in byte
    /// order `endian` and aligned per `alignment` (the marker's).
    pub fn new(specs: &'s [FieldSpec], data: &'d [u8], endian: Endian, alignment: u8) -> Self {
        FieldIter {
            specs: specs.iter(),
            data,
            pos: 0,
            endian,
            alignment: alignment as usize,
            failed: false,
        }
    }

    /// Bytes of the payload used so far.
    pub fn consumed(&self) -> usize {
        self.pos
    }

    fn field(&mut self, f: &FieldSpec) -> Result<Value<'d>, FieldError> {
        match f.kind {
            FieldKind::String => {
                let rest = self.data.get(self.pos..).unwrap_or(&[]);
                let n = rest
                    .iter()
                    .position(|&b| b == 0)
                    .ok_or(FieldError::Unterminated(self.pos))?;
                self.pos += n + 1;
                Ok(Value::Str(&rest[..n]))
            }
            FieldKind::Signed | FieldKind::Unsigned => {
                let size = f.size as usize;
                if self.alignment != 0 {
                    self.pos += pad_to(self.pos, size.min(self.alignment));
                }
                let b = self
                    .data
                    .get(self.pos..)
                    .and_then(|r| r.get(..size))
                    .ok_or(FieldError::Short(self.pos))?;
                let e = if f.network_order {
                    Endian::Big
                } else {
                    self.endian
                };
                let v = e.read_uint(b, size).ok_or(FieldError::Short(self.pos))?;
                self.pos += size;
                Ok(if f.kind == FieldKind::Signed {
                    Value::Signed(sign_extend(v, size))
                } else {
                    Value::Unsigned(v)
                })
            }
        }
    }
}

impl<'s, 'd> Iterator for FieldIter<'s, 'd> {
    type Item = Result<(&'s FieldSpec, Value<'d>), FieldError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let f = self.specs.next()?;
        match self.field(f) {
            Ok(v) => Some(Ok((f, v))),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// Check that `data` decodes completely with `specs`; the number of bytes
/// the fields use.
pub fn validate(
    specs: &[FieldSpec],
    data: &[u8],
    endian: Endian,
    alignment: u8,
) -> Result<usize, FieldError> {
    let mut it = FieldIter::new(specs, data, endian, alignment);
    for r in it.by_ref() {
        r?;
    }
    Ok(it.consumed())
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Sizes = Sizes {
        int_size: 4,
        long_size: 8,
        pointer_size: 8,
        size_t_size: 8,
        alignment: 8,
    };

    fn kinds(fmt: &str) -> Vec<(String, FieldKind, u8, Base)> {
        parse_format(fmt.as_bytes(), &S)
            .unwrap()
            .into_iter()
            .map(|f| (f.name, f.kind, f.size, f.base))
            .collect()
    }

    #[test]
    fn parses_named_fields() {
        use Base::*;
        use FieldKind::*;
        assert_eq!(
            kinds("pid %d comm %s flags %lx c %c p %p hh %hhu h %hd ll %llu z %zu o %o"),
            vec![
                ("pid".into(), Signed, 4, Decimal),
                ("comm".into(), String, 0, Decimal),
                ("flags".into(), Unsigned, 8, Hex),
                ("c".into(), Unsigned, 1, Decimal),
                ("p".into(), Unsigned, 8, Hex),
                ("hh".into(), Unsigned, 1, Decimal),
                ("h".into(), Signed, 2, Decimal),
                ("ll".into(), Unsigned, 8, Decimal),
                ("z".into(), Unsigned, 8, Decimal),
                ("o".into(), Unsigned, 4, Octal),
            ]
        );
    }

    #[test]
    fn names_unnamed_and_trace_types() {
        use Base::*;
        use FieldKind::*;
        assert_eq!(
            kinds("%d a=%u 100%% x #2u%lu #n4d%u"),
            vec![
                ("field_1".into(), Signed, 4, Decimal),
                ("field_2".into(), Unsigned, 4, Decimal),
                ("x".into(), Unsigned, 2, Decimal),
                ("field_4".into(), Signed, 4, Decimal),
            ]
        );
        let f = parse_format(b"x #n4d%u", &S).unwrap();
        assert!(f[0].network_order);
        assert_eq!(kinds("w %08x"), vec![("w".into(), Unsigned, 4, Hex)]);
        assert!(kinds("").is_empty());
        assert!(kinds("just text").is_empty());
    }

    #[test]
    fn rejects_what_it_cannot_lay_out() {
        assert!(parse_format(b"f %f", &S).is_err());
        assert!(parse_format(b"f %", &S).is_err());
        assert!(parse_format(b"f #2", &S).is_err());
        let bad = Sizes { int_size: 3, ..S };
        assert!(parse_format(b"a %d", &bad).is_err());
    }

    #[test]
    fn decodes_with_alignment() {
        let f = parse_format(b"a %c s %s b %d q %llu", &S).unwrap();
        let mut d = vec![7u8];
        d.extend_from_slice(b"hi\0");
        d.extend_from_slice(&(-2i32).to_le_bytes()); // at 4: aligned already
        d.extend_from_slice(&[0; 0]);
        d.extend_from_slice(&9u64.to_le_bytes()); // at 8
        let v: Vec<_> = FieldIter::new(&f, &d, Endian::Little, 8)
            .map(|r| r.unwrap().1)
            .collect();
        assert_eq!(
            v,
            vec![
                Value::Unsigned(7),
                Value::Str(b"hi"),
                Value::Signed(-2),
                Value::Unsigned(9)
            ]
        );
        // packed: the same fields need no padding
        let f2 = parse_format(b"a %c b %d", &S).unwrap();
        let d2 = [1u8, 2, 0, 0, 0];
        assert_eq!(validate(&f2, &d2, Endian::Little, 0), Ok(5));
        // aligned, the int moves to offset 4
        assert_eq!(
            validate(&f2, &d2, Endian::Little, 4),
            Err(FieldError::Short(4))
        );
        assert_eq!(
            validate(&f, b"\x01ab", Endian::Little, 8),
            Err(FieldError::Unterminated(1))
        );
    }
}
