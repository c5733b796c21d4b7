//! A bounds-checked byte cursor. No method panics: every read checks the
//! remaining length first and returns an [`Error`] that names the section and
//! the absolute offset. And [`put_small`], the writers' append of short
//! byte strings, and [`put_nonfinite`], glibc's text of NaN and infinities.

use crate::error::{Error, ErrorKind, Result};

/// Byte order of multi-byte integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endian {
    Little,
    Big,
}

impl Endian {
    #[inline]
    pub fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }
    #[inline]
    pub fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }
    #[inline]
    pub fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }

    /// Read an unsigned integer of 1, 2, 4 or 8 bytes from the start of `b`.
    /// Returns `None` when `b` is too short or the size is not one of those.
    #[inline]
    pub fn read_uint(self, b: &[u8], size: usize) -> Option<u64> {
        match size {
            1 => b.first().map(|&v| v as u64),
            2 => b.get(..2).map(|s| self.u16([s[0], s[1]]) as u64),
            4 => b
                .get(..4)
                .map(|s| self.u32([s[0], s[1], s[2], s[3]]) as u64),
            8 => b
                .get(..8)
                .map(|s| self.u64([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]])),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Endian::Little => "little-endian",
            Endian::Big => "big-endian",
        }
    }
}

/// A read position in a byte slice. `base` is the absolute file offset of
/// `data[0]`, so that errors report positions in the file.
#[derive(Debug, Clone, Copy)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    endian: Endian,
    section: &'static str,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8], endian: Endian, section: &'static str) -> Self {
        Cursor {
            data,
            pos: 0,
            base: 0,
            endian,
            section,
        }
    }

    /// A cursor over `data` whose first byte is at absolute offset `base`.
    pub fn with_base(data: &'a [u8], base: u64, endian: Endian, section: &'static str) -> Self {
        Cursor {
            data,
            pos: 0,
            base,
            endian,
            section,
        }
    }

    pub fn endian(&self) -> Endian {
        self.endian
    }
    pub fn set_endian(&mut self, e: Endian) {
        self.endian = e;
    }
    pub fn section(&self) -> &'static str {
        self.section
    }
    pub fn set_section(&mut self, s: &'static str) {
        self.section = s;
    }
    /// Position relative to the start of this cursor's slice.
    pub fn pos(&self) -> usize {
        self.pos
    }
    /// Absolute offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    pub fn error(&self, kind: ErrorKind) -> Error {
        Error::new(kind, self.section, self.offset())
    }
    pub fn invalid(&self, msg: impl Into<String>) -> Error {
        self.error(ErrorKind::Invalid(msg.into()))
    }
    fn eof(&self) -> Error {
        self.error(ErrorKind::UnexpectedEof)
    }

    /// Move to `pos` (relative to the slice start); may equal the length.
    pub fn seek(&mut self, pos: usize) -> Result<()> {
        if pos > self.data.len() {
            return Err(Error::eof(self.section, self.base + self.data.len() as u64));
        }
        self.pos = pos;
        Ok(())
    }

    pub fn skip(&mut self, n: usize) -> Result<()> {
        if n > self.remaining() {
            return Err(self.eof());
        }
        self.pos += n;
        Ok(())
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.eof());
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Like [`bytes`](Self::bytes) with a `u64` length that may not fit in memory.
    pub fn bytes_u64(&mut self, n: u64) -> Result<&'a [u8]> {
        match usize::try_from(n) {
            Ok(n) => self.bytes(n),
            Err(_) => Err(self.eof()),
        }
    }

    /// A cursor over the next `n` bytes, which this cursor skips.
    pub fn sub(&mut self, n: usize) -> Result<Cursor<'a>> {
        let base = self.offset();
        let data = self.bytes(n)?;
        Ok(Cursor {
            data,
            pos: 0,
            base,
            endian: self.endian,
            section: self.section,
        })
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let b = self.bytes(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        Ok(a)
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }
    pub fn u16(&mut self) -> Result<u16> {
        let a = self.array()?;
        Ok(self.endian.u16(a))
    }
    pub fn u32(&mut self) -> Result<u32> {
        let a = self.array()?;
        Ok(self.endian.u32(a))
    }
    pub fn u64(&mut self) -> Result<u64> {
        let a = self.array()?;
        Ok(self.endian.u64(a))
    }
    pub fn i32(&mut self) -> Result<i32> {
        Ok(self.u32()? as i32)
    }
    pub fn i64(&mut self) -> Result<i64> {
        Ok(self.u64()? as i64)
    }
    /// An unsigned integer of `size` bytes (1, 2, 4 or 8).
    pub fn uint(&mut self, size: usize) -> Result<u64> {
        match size {
            1 => self.u8().map(u64::from),
            2 => self.u16().map(u64::from),
            4 => self.u32().map(u64::from),
            8 => self.u64(),
            _ => Err(self.invalid(format!("unsupported integer size {size}"))),
        }
    }

    /// A NUL-terminated string; the NUL is consumed but not returned.
    pub fn cstr(&mut self) -> Result<&'a [u8]> {
        let rest = self.rest();
        match rest.iter().position(|&b| b == 0) {
            Some(n) => {
                self.pos += n + 1;
                Ok(&rest[..n])
            }
            None => Err(Error::eof(self.section, self.base + self.data.len() as u64)),
        }
    }

    /// A NUL-terminated string as (lossy) UTF-8 text.
    pub fn cstring(&mut self) -> Result<String> {
        self.cstr().map(|b| String::from_utf8_lossy(b).into_owned())
    }
}

/// Append glibc's `printf` text of a NaN or an infinity (`nan`, `-nan`,
/// `inf`, `-inf`) and return true; return false, appending nothing, for a
/// finite `v`.
pub fn put_nonfinite(out: &mut Vec<u8>, v: f64) -> bool {
    if v.is_nan() {
        out.extend_from_slice(if v.is_sign_negative() {
            b"-nan"
        } else {
            b"nan"
        });
    } else if v.is_infinite() {
        out.extend_from_slice(if v < 0.0 { b"-inf" } else { b"inf" });
    } else {
        return false;
    }
    true
}

/// Append a short byte string to `out` (a loop beats a `memcpy` call for
/// the few bytes of a number, a name or a format literal).
#[inline]
pub fn put_small(out: &mut Vec<u8>, s: &[u8]) {
    if s.len() > 16 {
        out.extend_from_slice(s);
        return;
    }
    out.reserve(s.len());
    for &b in s {
        out.push(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_byte_orders() {
        let d = [1, 2, 3, 4, 5, 6, 7, 8];
        let mut c = Cursor::new(&d, Endian::Little, "t");
        assert_eq!(c.u16().unwrap(), 0x0201);
        c.set_endian(Endian::Big);
        assert_eq!(c.u16().unwrap(), 0x0304);
        assert_eq!(c.u32().unwrap(), 0x05060708);
        assert!(c.is_empty());
    }

    #[test]
    fn truncation_reports_offset() {
        let d = [1, 2, 3];
        let mut c = Cursor::with_base(&d, 0x100, Endian::Little, "sec");
        c.u8().unwrap();
        let e = c.u32().unwrap_err();
        assert_eq!(e.kind, ErrorKind::UnexpectedEof);
        assert_eq!(e.offset, 0x101);
        assert_eq!(e.section, "sec");
        // a failed read does not move the cursor
        assert_eq!(c.u16().unwrap(), 0x0302);
    }

    #[test]
    fn cstr_needs_terminator() {
        let mut c = Cursor::new(b"ab\0cd", Endian::Little, "s");
        assert_eq!(c.cstr().unwrap(), b"ab");
        assert!(c.cstr().is_err());
        assert_eq!(c.bytes(2).unwrap(), b"cd");
    }

    #[test]
    fn sub_cursor_is_bounded() {
        let d = [1u8; 10];
        let mut c = Cursor::new(&d, Endian::Little, "s");
        let mut s = c.sub(4).unwrap();
        assert!(s.u64().is_err());
        assert_eq!(s.u32().unwrap(), 0x01010101);
        assert_eq!(c.remaining(), 6);
        assert!(c.sub(7).is_err());
        assert!(c.bytes_u64(u64::MAX).is_err());
    }
}
