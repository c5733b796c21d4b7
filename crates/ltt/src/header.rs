//! The block start/end header and the trace header that open every block
//! of a tracefile (spec: "Trace format", "The block start/end header",
//! "The trace header").
//!
//! Both headers are read with no padding between fields: the specification
//! lists the fields one after the other and names no padding, and LTTng
//! declared these structures packed. The block header is 40 bytes, the trace
//! header 61, so the first event header of a block starts at byte 101 (then
//! aligned, when the trace is aligned).
//!
//! The magic number, read in both byte orders, decides the byte order of
//! everything else in the tracefile.

use tracemux_core::bytes::{Cursor, Endian};
use tracemux_core::error::{Error, ErrorKind, Result};

/// `magic_number` of the trace header.
pub const LTT_MAGIC: u32 = 0x00D6_B7ED;

/// Size of the block start/end header in bytes.
pub const BLOCK_HEADER_SIZE: usize = 40;
/// Size of the trace header in bytes.
pub const TRACE_HEADER_SIZE: usize = 61;
/// Offset in a block of the first byte after both headers.
pub const HEADERS_END: usize = BLOCK_HEADER_SIZE + TRACE_HEADER_SIZE;
/// Offset of `magic_number` in a block (right after the block header).
pub const MAGIC_OFFSET: usize = BLOCK_HEADER_SIZE;

/// One end (begin or end) of a block: the cycle counter and the CPU
/// frequency at that moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockEdge {
    pub cycle_count: u64,
    pub freq: u64,
}

/// The block start/end header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockHeader {
    pub begin: BlockEdge,
    pub end: BlockEdge,
    /// Bytes of padding at the end of the block (after the last event).
    pub lost_size: u32,
    /// Size of the block (sub-buffer), headers included.
    pub buf_size: u32,
}

/// The trace header, repeated in every block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceHeader {
    /// Byte order of the tracefile, decided by the magic number.
    pub endian: Endian,
    pub arch_type: u32,
    pub arch_variant: u32,
    pub float_word_order: u32,
    /// Size in bytes of a `void *` on the traced machine.
    pub arch_size: u8,
    pub major_version: u8,
    pub minor_version: u8,
    /// Flight recorder mode: blocks may have been overwritten.
    pub flight_recorder: u8,
    /// 1: event headers hold the 32 low bits of the cycle counter; 0: all 64.
    pub has_heartbeat: u8,
    /// 0: packed; otherwise the alignment of event headers.
    pub alignment: u8,
    pub tsc_lsb_truncate: u8,
    pub tscbits: u8,
    pub compact_data_shift: u8,
    pub freq_scale: u32,
    pub start_freq: u64,
    pub start_tsc: u64,
    pub start_monotonic: u64,
    pub start_time_sec: u32,
    pub start_time_nsec: u32,
}

impl TraceHeader {
    /// The real time at the start of the trace, in ns since the epoch.
    pub fn start_time_ns(&self) -> u64 {
        self.start_time_sec as u64 * 1_000_000_000 + self.start_time_nsec as u64
    }

    /// Size of an event header's timestamp: 4 with heartbeats, else 8.
    pub fn timestamp_size(&self) -> usize {
        if self.has_heartbeat != 0 {
            4
        } else {
            8
        }
    }

    /// Size of an event header (timestamp, facility_id, event_id, event_size).
    pub fn event_header_size(&self) -> usize {
        self.timestamp_size() + 4
    }

    /// The fields that must agree between all the blocks (and all the
    /// tracefiles) of a trace: everything but nothing block-specific. Two
    /// headers are compatible when their time base and layout agree.
    pub fn same_layout(&self, o: &TraceHeader) -> bool {
        self.endian == o.endian
            && self.arch_size == o.arch_size
            && self.has_heartbeat == o.has_heartbeat
            && self.alignment == o.alignment
            && self.freq_scale == o.freq_scale
            && self.start_freq == o.start_freq
            && self.start_tsc == o.start_tsc
            && self.start_time_sec == o.start_time_sec
            && self.start_time_nsec == o.start_time_nsec
    }

    /// The time of cycle count `tsc` in ns since the epoch.
    ///
    /// The specification's formula is `trace_start_time + ((event_tsc -
    /// trace_start_tsc) * (freq / freq_scale))`, where `freq` is the CPU
    /// clock frequency (`start_freq`) and `freq / freq_scale` is therefore
    /// the counter's frequency in Hz. Cycles times a frequency is not a
    /// time; the `*` stands for "converted at": the elapsed time is the
    /// cycle difference divided by that frequency (this is also what the
    /// LTTV reader of the same period does). So, exactly and in integers:
    ///
    /// `ns = start_time + (tsc - start_tsc) * 1e9 * freq_scale / start_freq`
    ///
    /// rounded toward the start time (the offset is truncated). A counter
    /// value before `start_tsc` gives a time before the start (saturating
    /// at 0); a time past `u64::MAX` ns saturates. `start_freq` is never 0
    /// here ([`parse_trace_header`] rejects it).
    pub fn tsc_to_ns(&self, tsc: u64) -> u64 {
        let start = self.start_time_ns();
        let freq = self.start_freq.max(1) as u128;
        let scale = self.freq_scale as u128;
        if tsc >= self.start_tsc {
            let d = (tsc - self.start_tsc) as u128 * 1_000_000_000 * scale / freq;
            u64::try_from(d)
                .ok()
                .and_then(|d| start.checked_add(d))
                .unwrap_or(u64::MAX)
        } else {
            let d = (self.start_tsc - tsc) as u128 * 1_000_000_000 * scale / freq;
            u64::try_from(d)
                .map(|d| start.saturating_sub(d))
                .unwrap_or(0)
        }
    }
}

/// The byte order announced by a magic number as stored (its 4 bytes), or
/// `None` when the bytes are not the LTT magic in either order.
pub fn magic_endian(b: [u8; 4]) -> Option<Endian> {
    if u32::from_le_bytes(b) == LTT_MAGIC {
        Some(Endian::Little)
    } else if u32::from_be_bytes(b) == LTT_MAGIC {
        Some(Endian::Big)
    } else {
        None
    }
}

/// Whether `data` starts like an LTT tracefile (the magic number in either
/// byte order right after the 40-byte block header).
pub fn sniff(data: &[u8]) -> bool {
    match data.get(MAGIC_OFFSET..MAGIC_OFFSET + 4) {
        Some(m) => magic_endian([m[0], m[1], m[2], m[3]]).is_some(),
        None => false,
    }
}

/// Read the trace header of the block that starts at `block[0]`, whose
/// absolute file offset is `base`. Errors name `section` and the offset.
pub fn parse_trace_header(block: &[u8], base: u64, section: &'static str) -> Result<TraceHeader> {
    let mut c = Cursor::with_base(block, base, Endian::Little, section);
    c.seek(MAGIC_OFFSET)
        .map_err(|_| Error::eof(section, base + block.len() as u64))?;
    let m = c.bytes(4)?;
    let endian = magic_endian([m[0], m[1], m[2], m[3]])
        .ok_or_else(|| Error::new(ErrorKind::BadMagic, section, base + MAGIC_OFFSET as u64))?;
    c.set_endian(endian);
    let h = TraceHeader {
        endian,
        arch_type: c.u32()?,
        arch_variant: c.u32()?,
        float_word_order: c.u32()?,
        arch_size: c.u8()?,
        major_version: c.u8()?,
        minor_version: c.u8()?,
        flight_recorder: c.u8()?,
        has_heartbeat: c.u8()?,
        alignment: c.u8()?,
        tsc_lsb_truncate: c.u8()?,
        tscbits: c.u8()?,
        compact_data_shift: c.u8()?,
        freq_scale: c.u32()?,
        start_freq: c.u64()?,
        start_tsc: c.u64()?,
        start_monotonic: c.u64()?,
        start_time_sec: c.u32()?,
        start_time_nsec: c.u32()?,
    };
    let at = |off: usize| base + (BLOCK_HEADER_SIZE + off) as u64;
    if !matches!(h.arch_size, 1 | 2 | 4 | 8) {
        return Err(Error::invalid(
            format!("arch_size {} is not 1, 2, 4 or 8", h.arch_size),
            section,
            at(16),
        ));
    }
    if h.has_heartbeat > 1 {
        return Err(Error::invalid(
            format!("has_heartbeat {} is neither 0 nor 1", h.has_heartbeat),
            section,
            at(20),
        ));
    }
    if h.freq_scale == 0 {
        return Err(Error::invalid("freq_scale is 0", section, at(25)));
    }
    if h.start_freq == 0 {
        return Err(Error::invalid("start_freq is 0", section, at(29)));
    }
    if h.start_time_nsec >= 1_000_000_000 {
        return Err(Error::invalid(
            format!("start_time nanoseconds {} >= 1e9", h.start_time_nsec),
            section,
            at(57),
        ));
    }
    Ok(h)
}

/// Read the block start/end header at `block[0]` in byte order `endian`.
pub fn parse_block_header(
    block: &[u8],
    base: u64,
    endian: Endian,
    section: &'static str,
) -> Result<BlockHeader> {
    let mut c = Cursor::with_base(block, base, endian, section);
    Ok(BlockHeader {
        begin: BlockEdge {
            cycle_count: c.u64()?,
            freq: c.u64()?,
        },
        end: BlockEdge {
            cycle_count: c.u64()?,
            freq: c.u64()?,
        },
        lost_size: c.u32()?,
        buf_size: c.u32()?,
    })
}

/// Padding needed to bring `off` to a multiple of `align` (0 and 1: none).
#[inline]
pub fn pad_to(off: usize, align: usize) -> usize {
    if align <= 1 {
        0
    } else {
        (align - off % align) % align
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> TraceHeader {
        TraceHeader {
            endian: Endian::Little,
            arch_type: 0,
            arch_variant: 0,
            float_word_order: 0,
            arch_size: 8,
            major_version: 1,
            minor_version: 0,
            flight_recorder: 0,
            has_heartbeat: 0,
            alignment: 0,
            tsc_lsb_truncate: 0,
            tscbits: 0,
            compact_data_shift: 0,
            freq_scale: 1,
            start_freq: 1_000_000_000,
            start_tsc: 1000,
            start_monotonic: 0,
            start_time_sec: 10,
            start_time_nsec: 5,
        }
    }

    #[test]
    fn time_formula() {
        let mut h = header();
        assert_eq!(h.tsc_to_ns(1000), 10_000_000_005);
        assert_eq!(h.tsc_to_ns(1001), 10_000_000_006);
        assert_eq!(h.tsc_to_ns(999), 10_000_000_004);
        // a 3 GHz counter: 3 cycles per ns, truncated
        h.start_freq = 3_000_000_000;
        assert_eq!(h.tsc_to_ns(1000 + 7), 10_000_000_005 + 2);
        // freq_scale divides the frequency: 3 GHz / 3 = 1 GHz
        h.freq_scale = 3;
        assert_eq!(h.tsc_to_ns(1000 + 7), 10_000_000_005 + 7);
        // extremes saturate
        h.start_freq = 1;
        h.freq_scale = u32::MAX;
        assert_eq!(h.tsc_to_ns(u64::MAX), u64::MAX);
        assert_eq!(h.tsc_to_ns(0), 0);
    }

    #[test]
    fn magic_both_orders() {
        assert_eq!(magic_endian([0xED, 0xB7, 0xD6, 0x00]), Some(Endian::Little));
        assert_eq!(magic_endian([0x00, 0xD6, 0xB7, 0xED]), Some(Endian::Big));
        assert_eq!(magic_endian([0, 0, 0, 0]), None);
    }

    #[test]
    fn padding() {
        assert_eq!(pad_to(101, 8), 3);
        assert_eq!(pad_to(104, 8), 0);
        assert_eq!(pad_to(101, 0), 0);
        assert_eq!(pad_to(101, 4), 3);
        assert_eq!(pad_to(5, 3), 1);
    }
}
