//! The bit cursor: fixed-length fields read at any bit position,
//! alignment and byte order as CTF says.

use super::*;

/// Decoder state over one packet's bytes.
pub struct Cursor<'d> {
    /// The packet's bytes (up to the end of the file or of the packet).
    pub data: &'d [u8],
    /// Current position, bits from `data[0]`.
    pub pos: u64,
    /// Content end in bits (reads may not pass it); `u64::MAX` when not
    /// known (the data end is the limit). Change it with [`Cursor::set_end`].
    pub end: u64,
    /// `min(end, data bits)`: the fast bound check.
    pub(super) limit: u64,
    pub(super) last_bo: Option<ByteOrder>,
    /// Length/selector slots.
    pub slots: Vec<i128>,
    /// Default clock value (cycles).
    pub clock: u64,
    /// What special fields said (reset per packet by the caller).
    pub info: PacketInfo,
    /// Last event class ID read in the current event header.
    pub event_id: Option<u64>,
    /// Scope being decoded.
    pub scope: Scope,
}

/// The low `len` bits set (all 64 from 64 on).
#[inline]
pub(crate) fn mask(len: u32) -> u64 {
    if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    }
}

#[inline]
pub(super) fn reverse_bits(v: u64, len: u32) -> u64 {
    if len == 0 {
        return 0;
    }
    v.reverse_bits() >> (64 - len)
}

impl<'d> Cursor<'d> {
    pub fn new(data: &'d [u8], slots: usize) -> Self {
        Cursor {
            data,
            pos: 0,
            end: u64::MAX,
            limit: (data.len() as u64).saturating_mul(8),
            last_bo: None,
            slots: vec![0; slots],
            clock: 0,
            info: PacketInfo::default(),
            event_id: None,
            scope: Scope::PacketHeader,
        }
    }

    /// Where the cursor is (see [`Cursor::restore`]).
    pub fn mark(&self) -> (u64, Option<ByteOrder>, Scope) {
        (self.pos, self.last_bo, self.scope)
    }

    /// Go back to a [`Cursor::mark`] of the same packet.
    pub fn restore(&mut self, m: (u64, Option<ByteOrder>, Scope)) {
        (self.pos, self.last_bo, self.scope) = m;
    }

    /// Start decoding `scope` (as [`decode_scope`] does before its root).
    #[inline]
    pub fn scope_start(&mut self, scope: Scope) {
        self.scope = scope;
        self.last_bo = None;
    }

    /// The next `bytes` bytes at a byte boundary, integers of whole bytes
    /// in byte order `bo` (one or several, read by the caller): what
    /// [`Cursor::bits`] does for them, with one bound check.
    #[inline(always)]
    pub fn take(&mut self, bytes: usize, bo: ByteOrder) -> Result<&'d [u8], Box<DecodeError>> {
        debug_assert!(self.pos % 8 == 0);
        let len = (bytes as u64).saturating_mul(8);
        self.need(len)?;
        let at = (self.pos >> 3) as usize;
        self.pos += len;
        if bytes > 0 {
            self.last_bo = Some(bo);
        }
        Ok(&self.data[at..at + bytes])
    }

    /// Pass `bits` bits that nobody reads (the byte order of the last bits
    /// read is unknown then).
    #[inline]
    pub fn skip(&mut self, bits: u64) -> Result<(), Box<DecodeError>> {
        self.need(bits)?;
        self.pos += bits;
        self.last_bo = None;
        Ok(())
    }

    /// Set the content end (bits).
    pub fn set_end(&mut self, end: u64) {
        self.end = end;
        self.limit = end.min((self.data.len() as u64).saturating_mul(8));
    }

    /// Start over on another packet (keeps the slots' allocation).
    pub fn reset(&mut self, data: &'d [u8]) {
        self.data = data;
        self.pos = 0;
        self.end = u64::MAX;
        self.limit = (data.len() as u64).saturating_mul(8);
        self.last_bo = None;
        self.info = PacketInfo::default();
        self.event_id = None;
    }

    #[inline]
    #[cold]
    pub(super) fn err(&self, kind: DecodeErrorKind) -> Box<DecodeError> {
        Box::new(DecodeError {
            kind,
            bit: self.pos,
        })
    }

    /// Check that `bits` bits can be read at the current position: past
    /// the content end is "beyond content" when the content ends inside the
    /// data, "end of data" otherwise.
    #[inline]
    pub(super) fn need(&self, bits: u64) -> Result<(), Box<DecodeError>> {
        if self.pos.saturating_add(bits) <= self.limit {
            return Ok(());
        }
        self.need_fail(bits)
    }

    #[cold]
    #[inline(never)]
    pub(super) fn need_fail(&self, bits: u64) -> Result<(), Box<DecodeError>> {
        let want = self.pos.saturating_add(bits);
        if want > self.end {
            Err(self.err(DecodeErrorKind::BeyondContent {
                bits,
                remaining: self.end.saturating_sub(self.pos),
            }))
        } else {
            Err(self.err(DecodeErrorKind::EndOfData { bits }))
        }
    }

    /// Bits that can be read from the current position.
    #[inline]
    pub(crate) fn room(&self) -> u64 {
        self.limit.saturating_sub(self.pos)
    }

    /// Pass `bits` bits just read (checked with [`Cursor::room`]), the
    /// last of them little-endian when `read`.
    #[inline]
    pub(crate) fn pass_fixed(&mut self, bits: u64, read: bool) {
        self.pos += bits;
        if read {
            self.last_bo = Some(ByteOrder::Little);
        }
    }

    /// Align to `align` bits (checked against the content end).
    #[inline]
    pub fn align(&mut self, align: u32) -> Result<(), Box<DecodeError>> {
        if align > 1 {
            let m = align as u64 - 1;
            let np = self.pos.saturating_add(m) & !m;
            if np != self.pos {
                self.need(np - self.pos)?;
                self.pos = np;
            }
        }
        Ok(())
    }

    /// Read `len` bits (1..=64) as an unsigned value.
    #[inline(always)]
    pub fn bits(&mut self, len: u32, bo: ByteOrder, rev: bool) -> Result<u64, Box<DecodeError>> {
        self.need(len as u64)?;
        let shift = (self.pos & 7) as u32;
        if shift != 0 {
            if let Some(l) = self.last_bo {
                if l != bo {
                    return Err(self.err(DecodeErrorKind::ByteOrderChange));
                }
            }
        }
        let byte = (self.pos >> 3) as usize;
        let v = if shift == 0 && len % 8 == 0 {
            let n = (len / 8) as usize;
            let s = &self.data[byte..byte + n];
            match (n, bo) {
                (1, _) => s[0] as u64,
                (2, ByteOrder::Little) => u16::from_le_bytes([s[0], s[1]]) as u64,
                (2, ByteOrder::Big) => u16::from_be_bytes([s[0], s[1]]) as u64,
                (4, ByteOrder::Little) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as u64,
                (4, ByteOrder::Big) => u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as u64,
                (8, ByteOrder::Little) => {
                    u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]])
                }
                (8, ByteOrder::Big) => {
                    u64::from_be_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]])
                }
                _ => self.slow(byte, shift, len, bo),
            }
        } else {
            self.slow(byte, shift, len, bo)
        };
        self.pos += len as u64;
        self.last_bo = Some(bo);
        Ok(if rev { reverse_bits(v, len) } else { v })
    }

    #[inline]
    pub(super) fn slow(&self, byte: usize, shift: u32, len: u32, bo: ByteOrder) -> u64 {
        // Bit fields (event headers' IDs and times): one 8-byte load when
        // the bits fit in it and the data has 8 bytes from there.
        if shift + len <= 64 {
            if let Some(w) = self.data.get(byte..byte + 8) {
                let w: [u8; 8] = w.try_into().unwrap_or([0; 8]);
                return match bo {
                    ByteOrder::Little => (u64::from_le_bytes(w) >> shift) & mask(len),
                    ByteOrder::Big => (u64::from_be_bytes(w) >> (64 - shift - len)) & mask(len),
                };
            }
        }
        let nbytes = (shift + len).div_ceil(8) as usize;
        let s = &self.data[byte..byte + nbytes];
        let mut w: u128 = 0;
        match bo {
            ByteOrder::Little => {
                for (i, &b) in s.iter().enumerate() {
                    w |= (b as u128) << (8 * i);
                }
                ((w >> shift) as u64) & mask(len)
            }
            ByteOrder::Big => {
                for &b in s {
                    w = (w << 8) | b as u128;
                }
                let drop = nbytes as u32 * 8 - shift - len;
                ((w >> drop) as u64) & mask(len)
            }
        }
    }

    /// Update the default clock with an `len`-bit value (CTF's wrap rule).
    #[inline]
    pub fn update_clock(&mut self, v: u64, len: u32) {
        if len >= 64 {
            self.clock = v;
            return;
        }
        let m = mask(len);
        let cur_low = self.clock & m;
        let mut new = (self.clock & !m) | v;
        if v < cur_low {
            new = new.wrapping_add(1u64 << len);
        }
        self.clock = new;
    }

    pub(crate) fn slot_len(&self, len: Len) -> Result<u64, Box<DecodeError>> {
        match len {
            Len::Static(n) => Ok(n),
            Len::Slot(s) => {
                let v = self.slots[s as usize];
                if v < 0 {
                    Err(self.err(DecodeErrorKind::NegativeLength(v)))
                } else {
                    Ok(v.min(u64::MAX as i128) as u64)
                }
            }
        }
    }
}
