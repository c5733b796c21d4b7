//! `<tid>.dat` records.
//!
//! Each record is 16 bytes: a `u64` timestamp (ns) and a `u64` word with
//! bit fields (little-endian layout): `type:2` (entry, exit, lost, event),
//! `more:1`, `magic:3` (= 5), `depth:10`, `addr:48`. A record with
//! `more = 1` is followed by its argument (entry) or return value (exit)
//! blob, laid out by the function's spec list, or, for events, by a `u16`
//! length and the payload; blobs are padded to 8 bytes.

use std::borrow::Cow;

use tracemux_core::Endian;

use crate::argspec::{ArgFmt, ArgSpec};

/// `magic` field value of every valid record.
pub const RECORD_MAGIC: u8 = 5;

/// Record type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Entry,
    Exit,
    Lost,
    Event,
}

/// One decoded record; `data` borrows the blob that followed it (empty when
/// `more` is not set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub time: u64,
    pub kind: Kind,
    pub more: bool,
    pub depth: u16,
    /// Function address (48 bits), event id, or lost count.
    pub addr: u64,
    pub data: &'a [u8],
    /// File offset of the record.
    pub offset: u64,
}

/// Decode the 16-byte record header at the start of `b`.
#[inline]
pub fn decode_header(b: &[u8; 16], endian: Endian) -> (u64, Kind, bool, u8, u16, u64) {
    let mut t = [0u8; 8];
    t.copy_from_slice(&b[..8]);
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[8..]);
    let time = endian.u64(t);
    let word = endian.u64(w);
    let (ty, more, magic, depth, addr) = match endian {
        Endian::Little => (
            word & 3,
            (word >> 2) & 1,
            (word >> 3) & 7,
            (word >> 6) & 0x3ff,
            word >> 16,
        ),
        // big-endian compilers allocate bit fields from the top
        Endian::Big => (
            word >> 62,
            (word >> 61) & 1,
            (word >> 58) & 7,
            (word >> 48) & 0x3ff,
            word & 0xffff_ffff_ffff,
        ),
    };
    let kind = match ty {
        0 => Kind::Entry,
        1 => Kind::Exit,
        2 => Kind::Lost,
        _ => Kind::Event,
    };
    (time, kind, more == 1, magic as u8, depth as u16, addr)
}

/// Damage found while reading: file, byte offset and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    pub file: Cow<'static, str>,
    pub offset: u64,
    pub message: String,
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} at offset {:#x}",
            self.file, self.message, self.offset
        )
    }
}

/// Size of the argument blob of a record with `more = 1` given the spec
/// list of its function, or `None` when the bytes run out. `at` is the
/// blob start in `buf`.
pub fn arg_blob_len(
    buf: &[u8],
    at: usize,
    specs: &[ArgSpec],
    retval: bool,
    endian: Endian,
) -> Option<usize> {
    let mut len = 0usize;
    for s in specs {
        if s.is_retval() != retval {
            continue;
        }
        let mut size = s.size as usize;
        if size == 0 {
            continue;
        }
        if matches!(s.fmt, ArgFmt::Str | ArgFmt::StdString) {
            let p = at.checked_add(len)?;
            let b = buf.get(p..p + 2)?;
            size = endian.u16([b[0], b[1]]) as usize;
            len += 2;
        }
        let rem = (len + size) % 4;
        if rem != 0 {
            size += 4 - rem;
        }
        len += size;
        if at.checked_add(len)? > buf.len() {
            return None;
        }
    }
    Some(len)
}

/// Bytes to skip after a blob of `len` bytes so the next record starts at
/// an 8-byte boundary.
#[inline]
pub fn pad8(len: usize) -> usize {
    (8 - len % 8) % 8
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::argspec::parse_argspec;

    #[test]
    fn header_bits() {
        let word: u64 = 1 | (1 << 2) | (5 << 3) | (7 << 6) | (0x1234 << 16);
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&99u64.to_le_bytes());
        b[8..].copy_from_slice(&word.to_le_bytes());
        let (t, k, more, magic, depth, addr) = decode_header(&b, Endian::Little);
        assert_eq!(
            (t, k, more, magic, depth, addr),
            (99, Kind::Exit, true, 5, 7, 0x1234)
        );
    }

    #[test]
    fn blob_lengths() {
        let specs = vec![
            parse_argspec("arg1/s", true).unwrap(),
            parse_argspec("arg2/c", true).unwrap(),
            parse_argspec("retval", true).unwrap(),
        ];
        // "abc" (2+3 -> 8 with pad), char (1 -> 4) = 12
        let buf = [3u8, 0, b'a', b'b', b'c', 0, 0, 0, b'x', 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            arg_blob_len(&buf, 0, &specs, false, Endian::Little),
            Some(12)
        );
        assert_eq!(arg_blob_len(&buf, 0, &specs, true, Endian::Little), Some(8));
        assert_eq!(
            arg_blob_len(&buf[..5], 0, &specs, false, Endian::Little),
            None
        );
        assert_eq!(pad8(12), 4);
        assert_eq!(pad8(16), 0);
    }
}
