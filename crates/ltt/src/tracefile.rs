//! One tracefile: its equal-size blocks and the events in them, in file
//! order, with their full 64-bit cycle counts.
//!
//! Spec, "Trace format": a tracefile is a sequence of equal-size blocks;
//! each holds the block start/end header, the trace header, then events
//! packed one after the other, then padding (`lost_size` bytes). The first
//! block's `buf_size` gives the block size of the whole file.
//!
//! Spec, "Event header": with `has_heartbeat` the header holds the 32 low
//! bits of the cycle counter. They are extended to 64 bits from the cycle
//! count at the beginning of the block (`begin.cycle_count`) and then from
//! event to event: a value lower than the previous low bits means the
//! counter wrapped once. The heartbeat events guarantee that no two
//! successive events of a tracefile are 2^32 cycles or more apart; a
//! `core:time_heartbeat_full` event sets all 64 bits from its payload.
//! Without heartbeat the header holds all 64 bits.
//!
//! Damage (a bad block, an event that does not fit) is reported in-band
//! with the file and offset; reading continues with the next block.

use std::borrow::Cow;

use tracemux_core::error::{Error, ErrorKind, Result};

use crate::header::{
    pad_to, parse_block_header, parse_trace_header, BlockHeader, TraceHeader, HEADERS_END,
};
use crate::markers::{CORE_FACILITY, CORE_TIME_HEARTBEAT_FULL};

/// What a tracefile holds, from its name (spec: "A trace is contained in a
/// directory tree").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TracefileKind {
    /// `control/facilities_N`: the `core` events that name the others.
    Facilities,
    /// `control/interrupts_N`.
    Interrupts,
    /// `control/modules_N`.
    Modules,
    /// `control/network_N`.
    Network,
    /// `control/processes_N`.
    Processes,
    /// `cpu_N`.
    Cpu,
    /// Any other file that holds LTT blocks.
    Other,
}

impl TracefileKind {
    /// Classify a path relative to the trace directory (`cpu_3`,
    /// `control/processes_0`) and give the CPU number it ends with (0 if
    /// none).
    pub fn from_name(rel: &str) -> (TracefileKind, u32) {
        let base = rel.rsplit('/').next().unwrap_or(rel);
        let (stem, num) = match base.rsplit_once('_') {
            Some((s, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                (s, n.parse::<u32>().ok())
            }
            _ => (base, None),
        };
        let in_control = rel.starts_with("control/");
        let kind = match (in_control, stem, num) {
            (false, "cpu", Some(_)) => TracefileKind::Cpu,
            (true, "facilities", Some(_)) => TracefileKind::Facilities,
            (true, "interrupts", Some(_)) => TracefileKind::Interrupts,
            (true, "modules", Some(_)) => TracefileKind::Modules,
            (true, "network", Some(_)) => TracefileKind::Network,
            (true, "processes", Some(_)) => TracefileKind::Processes,
            _ => TracefileKind::Other,
        };
        (kind, num.unwrap_or(0))
    }
}

/// The shape of a tracefile, read from its first block.
#[derive(Debug, Clone)]
pub struct Layout {
    pub header: TraceHeader,
    pub first_block: BlockHeader,
    /// `buf_size` of the first block.
    pub block_size: usize,
    /// Blocks in the file, the last one possibly partial.
    pub blocks: usize,
}

/// Read the first block's headers: the byte order, the trace header and
/// the block size. `name` is used in errors.
pub fn read_layout(data: &[u8], name: &str) -> Result<Layout> {
    let sec = |e: Error, what: &str| e.in_section(format!("{name}: {what}"));
    let header = parse_trace_header(data, 0, "trace header").map_err(|e| sec(e, "trace header"))?;
    let first_block = parse_block_header(data, 0, header.endian, "block header")
        .map_err(|e| sec(e, "block header"))?;
    let bs = first_block.buf_size as usize;
    if bs < HEADERS_END {
        return Err(Error::invalid(
            format!("buf_size {bs} is smaller than the block headers ({HEADERS_END} bytes)"),
            format!("{name}: block header"),
            36,
        ));
    }
    Ok(Layout {
        header,
        first_block,
        block_size: bs,
        blocks: data.len().div_ceil(bs),
    })
}

/// An event as stored, with its full cycle count.
#[derive(Debug, Clone, Copy)]
pub struct RawEvent<'a> {
    pub tsc: u64,
    pub facility: u8,
    pub event: u8,
    /// `event_size` of the header (= `payload.len()`).
    pub size: u16,
    pub payload: &'a [u8],
    /// File offset of the event header.
    pub offset: u64,
    /// File offset just past the payload.
    pub end: u64,
    /// Index of the block in the file.
    pub block: u32,
}

/// What a tracefile yields, in file order.
#[derive(Debug, Clone)]
pub enum Item<'a> {
    Event(RawEvent<'a>),
    /// A block starts (its header, its index, its file offset). Only the
    /// blocks whose headers are intact are announced.
    Block(BlockHeader, u32, u64),
    /// Damage skipped: the error says what, where.
    Damage(Error),
}

/// Reads the events of one tracefile block after block.
pub struct Stream<'a> {
    name: &'a str,
    data: &'a [u8],
    layout: &'a Layout,
    strict: bool,
    /// Next block to open.
    next_block: usize,
    /// A block is open: events are read from `pos` up to `end`.
    in_block: bool,
    block: &'a [u8],
    block_base: u64,
    block_index: u32,
    pos: usize,
    end: usize,
    tsc: u64,
    /// The open block is cut short by the end of the file.
    pending_cut: Option<Error>,
    done: bool,
}

impl<'a> Stream<'a> {
    /// A stream over `data`, laid out as `layout` says. In `strict` mode the
    /// first damage is returned as an error and the stream ends.
    pub fn new(name: &'a str, data: &'a [u8], layout: &'a Layout, strict: bool) -> Self {
        Stream {
            name,
            data,
            layout,
            strict,
            next_block: 0,
            in_block: false,
            block: &[],
            block_base: 0,
            block_index: 0,
            pos: 0,
            end: 0,
            tsc: 0,
            pending_cut: None,
            done: false,
        }
    }

    /// The tracefile's name (relative path in the trace directory).
    pub fn name(&self) -> &'a str {
        self.name
    }

    fn err(&self, kind: ErrorKind, what: &str, offset: u64) -> Error {
        Error::new(kind, Cow::Owned(format!("{}: {what}", self.name)), offset)
    }

    fn damage(&mut self, e: Error) -> Result<Option<Item<'a>>> {
        if self.strict {
            self.done = true;
            return Err(e);
        }
        Ok(Some(Item::Damage(e)))
    }

    /// The next item, `None` at the end of the file. After an error (strict
    /// mode) the stream stays empty.
    pub fn next_item(&mut self) -> Result<Option<Item<'a>>> {
        loop {
            if self.done {
                return Ok(None);
            }
            if self.in_block {
                let pos = self.pos + pad_to(self.pos, self.layout.header.alignment as usize);
                if pos < self.end {
                    match self.event(pos) {
                        Ok(ev) => return Ok(Some(Item::Event(ev))),
                        Err(e) => {
                            // the rest of the block cannot be found
                            self.in_block = false;
                            let e = self.pending_cut.take().unwrap_or(e);
                            return self.damage(e);
                        }
                    }
                }
                self.in_block = false;
                if let Some(e) = self.pending_cut.take() {
                    return self.damage(e);
                }
            }
            match self.open_block() {
                Ok(Some(item)) => return Ok(Some(item)),
                Ok(None) => {}
                Err(e) => return self.damage(e),
            }
        }
    }

    /// Open the next block. `Ok(None)`: the file ends; `Ok(Some(Block))`:
    /// its events follow; `Err`: the block is skipped.
    fn open_block(&mut self) -> Result<Option<Item<'a>>> {
        let bs = self.layout.block_size;
        let k = self.next_block;
        let start = match k.checked_mul(bs) {
            Some(s) if s < self.data.len() => s,
            _ => {
                self.done = true;
                return Ok(None);
            }
        };
        self.next_block += 1;
        let avail = &self.data[start..];
        let block = &avail[..avail.len().min(bs)];
        let base = start as u64;
        let h = parse_trace_header(block, base, "trace header")
            .map_err(|e| e.in_section(format!("{}: block {k} trace header", self.name)))?;
        if !h.same_layout(&self.layout.header) {
            return Err(self.err(
                ErrorKind::Invalid(
                    "trace header differs from the first block's (byte order, sizes or time base)"
                        .into(),
                ),
                &format!("block {k} trace header"),
                base + 40,
            ));
        }
        let bh = parse_block_header(block, base, h.endian, "block header")
            .map_err(|e| e.in_section(format!("{}: block {k} header", self.name)))?;
        if bh.buf_size as usize != bs {
            return Err(self.err(
                ErrorKind::Invalid(format!(
                    "buf_size {} differs from the file's block size {bs}",
                    bh.buf_size
                )),
                &format!("block {k} header"),
                base + 36,
            ));
        }
        let lost = bh.lost_size as usize;
        if lost > bs - HEADERS_END {
            return Err(self.err(
                ErrorKind::Invalid(format!(
                    "lost_size {lost} leaves less room than the headers in a {bs}-byte block"
                )),
                &format!("block {k} header"),
                base + 32,
            ));
        }
        self.block = block;
        self.block_base = base;
        self.block_index = k as u32;
        self.pos = HEADERS_END;
        self.end = bs - lost;
        self.tsc = bh.begin.cycle_count;
        self.in_block = true;
        if block.len() < bs {
            // a cut file: the events that are whole are read, then the cut
            // is reported (even when only padding is missing)
            let e = self.err(
                ErrorKind::UnexpectedEof,
                &format!(
                    "block {k} (the file ends {} bytes into this {bs}-byte block)",
                    block.len()
                ),
                base + block.len() as u64,
            );
            self.end = self.end.min(block.len());
            if self.strict {
                self.in_block = false;
                return Err(e);
            }
            self.pending_cut = Some(e);
        }
        Ok(Some(Item::Block(bh, k as u32, base)))
    }

    /// Decode the event whose header is at `pos` (< `end`); `pos` moves
    /// past it.
    fn event(&mut self, pos: usize) -> Result<RawEvent<'a>> {
        let h = &self.layout.header;
        let e = h.endian;
        let hs = h.event_header_size();
        let at = self.block_base + pos as u64;
        let what = || format!("block {} event header", self.block_index);
        let Some(hb) = self
            .block
            .get(pos..pos + hs)
            .filter(|_| pos + hs <= self.end)
        else {
            return Err(self.err(
                ErrorKind::Invalid(format!(
                    "event header of {hs} bytes crosses the end of the block's events at {:#x}",
                    self.block_base + self.end as u64
                )),
                &what(),
                at,
            ));
        };
        let ts = if hs == 12 {
            let t = e.u64([hb[0], hb[1], hb[2], hb[3], hb[4], hb[5], hb[6], hb[7]]);
            self.tsc = t;
            t
        } else {
            let low = e.u32([hb[0], hb[1], hb[2], hb[3]]) as u64;
            let cur = self.tsc;
            let mut t = (cur & !0xffff_ffff) | low;
            if low < cur & 0xffff_ffff {
                t = t.wrapping_add(1 << 32);
            }
            self.tsc = t;
            t
        };
        let ts_end = hs - 4;
        let facility = hb[ts_end];
        let event = hb[ts_end + 1];
        let size = e.u16([hb[ts_end + 2], hb[ts_end + 3]]);
        let mut dpos = pos + hs;
        if h.alignment != 0 {
            dpos += pad_to(dpos, h.arch_size as usize);
        }
        let payload: &'a [u8] = if size == 0 {
            &[]
        } else {
            match self.block.get(dpos..dpos + size as usize) {
                Some(p) if dpos + size as usize <= self.end => p,
                _ => {
                    return Err(self.err(
                        ErrorKind::Invalid(format!(
                            "event of {size} bytes (facility {facility}, event {event}) crosses \
                             the end of the block's events at {:#x}",
                            self.block_base + self.end as u64
                        )),
                        &what(),
                        at,
                    ))
                }
            }
        };
        self.pos = dpos + size as usize;
        let mut tsc = ts;
        if facility == CORE_FACILITY && event == CORE_TIME_HEARTBEAT_FULL && payload.len() >= 8 {
            let p = payload;
            tsc = e.u64([p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]]);
            self.tsc = tsc;
        }
        Ok(RawEvent {
            tsc,
            facility,
            event,
            size,
            payload,
            offset: at,
            end: self.block_base + self.pos as u64,
            block: self.block_index,
        })
    }
}
