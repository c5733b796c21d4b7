//! Packets and event records of one data stream.
//!
//! A data stream is one or more stream files (LTTng tracefile rotation
//! splits one stream over `ch0_N_0`, `ch0_N_1`...). [`index_file`] walks
//! the packets of one file, reading only their header and context, and
//! checks their sizes; [`StreamDecoder`] then decodes the packets of a
//! stream in order, event record by event record, reporting to a
//! [`Visitor`]. It also derives babeltrace2's "discarded events" and
//! "discarded packets" notices from the counters of consecutive packets.

use crate::decode::{
    decode_scope, Cursor, DecodeError, DecodeErrorKind, NullVisitor, PacketInfo, Program, Visitor,
    Walk,
};
use crate::header::HeaderPlan;
use crate::ir::Scope;

/// The packet magic number (CTF 1.8 section 5).
pub const PACKET_MAGIC: u64 = 0xC1FC_1FC1;

/// One packet of a stream file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketEntry {
    /// Index of the file in the stream's file list.
    pub file: usize,
    /// Byte offset of the packet in its file.
    pub offset: u64,
    /// Total size in bytes (padding included; clipped to the file end for a
    /// truncated packet).
    pub total_bytes: u64,
    /// Content size in bits.
    pub content_bits: u64,
    /// Position of the stream class in [`Program::streams`].
    pub stream: usize,
    pub info: PacketInfo,
    /// The packet extends past the end of its file.
    pub truncated: bool,
}

/// An error in a stream file, with the byte offset of the packet and the
/// bit offset inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamError {
    pub file: usize,
    pub packet_offset: u64,
    pub error: DecodeError,
}

impl StreamError {
    /// Absolute byte offset of the error in its file.
    pub fn byte_offset(&self) -> u64 {
        self.packet_offset + self.error.bit / 8
    }
}

fn perr(file: usize, offset: u64, bit: u64, msg: String) -> StreamError {
    StreamError {
        file,
        packet_offset: offset,
        error: DecodeError {
            kind: DecodeErrorKind::Other(msg),
            bit,
        },
    }
}

/// Decode a packet header and context at `offset` and work out the
/// packet's sizes. Returns the entry and the cursor position after the
/// context (bits).
///
/// The packet header's UUID is not compared with the trace's: babeltrace2
/// 2.0.4 and yactfr both read a packet whose UUID differs (silently) as a
/// packet of the trace whose metadata describes it.
pub fn read_packet_start<'d, V: Visitor>(
    p: &Program,
    file: usize,
    data: &'d [u8],
    offset: u64,
    c: &mut Cursor<'d>,
    v: &mut V,
) -> Result<(PacketEntry, u64), StreamError> {
    let pdata = &data[offset as usize..];
    c.reset(pdata);
    let fail = |e: DecodeError| StreamError {
        file,
        packet_offset: offset,
        error: e,
    };
    v.packet_begin(offset);
    if let Some(h) = p.packet_header {
        decode_scope(p, c, v, Scope::PacketHeader, h).map_err(fail)?;
        if let Some(m) = c.info.magic.filter(|_| V::CHECK_MAGIC) {
            if m != PACKET_MAGIC {
                return Err(perr(
                    file,
                    offset,
                    0,
                    format!("bad packet magic number {m:#x} (expected 0xc1fc1fc1)"),
                ));
            }
        }
    }
    let sc = match c.info.stream_class {
        Some(id) => p.stream_pos(id).ok_or_else(|| {
            perr(
                file,
                offset,
                c.pos,
                format!("no data stream class with ID {id}"),
            )
        })?,
        None => {
            if p.streams.len() == 1 {
                0
            } else if p.streams.is_empty() {
                usize::MAX
            } else if let Some(i) = p.stream_pos(0).filter(|_| p.implicit_id_zero) {
                // CTF 2: no data stream class ID field means ID 0.
                i
            } else {
                return Err(perr(
                    file,
                    offset,
                    c.pos,
                    "several data stream classes but no stream class ID in the packet header"
                        .into(),
                ));
            }
        }
    };
    v.data_stream_info(c.pos, p.streams.get(sc).map(|s| s.id), c.info.stream_id);
    if let Some(s) = p.streams.get(sc) {
        if let Some(pc) = s.packet_context {
            decode_scope(p, c, v, Scope::PacketContext, pc).map_err(fail)?;
        }
    }
    let file_bits = (pdata.len() as u64).saturating_mul(8);
    let (total, content) = match (c.info.total_bits, c.info.content_bits) {
        (Some(t), Some(k)) => (t, k),
        (Some(t), None) => (t, t),
        (None, Some(k)) => (k, k),
        (None, None) => (file_bits, file_bits),
    };
    if c.info.total_bits.is_some() && total % 8 != 0 {
        return Err(perr(
            file,
            offset,
            c.pos,
            format!("packet total size {total} bits is not a multiple of 8"),
        ));
    }
    if content > total {
        return Err(perr(
            file,
            offset,
            c.pos,
            format!("packet content size {content} bits exceeds its total size {total} bits"),
        ));
    }
    if c.pos > content {
        return Err(perr(
            file,
            offset,
            c.pos,
            format!(
                "packet content size {content} bits is smaller than its header and context ({} bits)",
                c.pos
            ),
        ));
    }
    if total == 0 {
        return Err(perr(file, offset, c.pos, "packet of size 0".into()));
    }
    let info = c.info;
    if sc != usize::MAX {
        v.packet_info(c.pos, &info);
    }
    let truncated = total > file_bits;
    Ok((
        PacketEntry {
            file,
            offset,
            total_bytes: total.div_ceil(8).min(pdata.len() as u64),
            content_bits: content,
            stream: sc,
            info,
            truncated,
        },
        c.pos,
    ))
}

/// The packets of one stream file, in file order. Stops at the first
/// packet that cannot be read; that error is returned beside the packets
/// read before it. `_uuid` (the trace UUID) is not compared with the
/// packets' (see [`read_packet_start`]).
pub fn index_file(
    p: &Program,
    uuid: Option<[u8; 16]>,
    file: usize,
    data: &[u8],
) -> (Vec<PacketEntry>, Option<StreamError>) {
    index_file_with(p, uuid, file, data, &mut |_| {})
}

/// [`index_file`], telling `done` after each packet the offset up to
/// which the file has been read (so that its pages can be dropped while a
/// large file is indexed).
pub fn index_file_with(
    p: &Program,
    _uuid: Option<[u8; 16]>,
    file: usize,
    data: &[u8],
    done: &mut dyn FnMut(u64),
) -> (Vec<PacketEntry>, Option<StreamError>) {
    let mut out = Vec::new();
    let mut c = Cursor::new(data, p.slots);
    let mut off = 0u64;
    while off < data.len() as u64 {
        match read_packet_start(p, file, data, off, &mut c, &mut NullVisitor) {
            Ok((e, _)) => {
                let next = off + e.total_bytes;
                let truncated = e.truncated;
                out.push(e);
                if truncated {
                    let err = perr(
                        file,
                        off,
                        0,
                        format!(
                            "packet extends past the end of the file ({} bytes in the file)",
                            data.len() as u64 - off
                        ),
                    );
                    return (out, Some(err));
                }
                off = next;
                done(off);
            }
            Err(e) => return (out, Some(e)),
        }
    }
    (out, None)
}

/// A notice of lost data, as babeltrace2 derives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Discarded {
    /// Events (`false`) or packets (`true`).
    pub packets: bool,
    /// `None`: "may have discarded" (no count known).
    pub count: Option<u64>,
    /// Time range (raw default clock values), when the stream class has
    /// begin/end times.
    pub begin: Option<u64>,
    pub end: Option<u64>,
}

/// What the stream has next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A packet begins (after its discarded-data notices, as babeltrace2
    /// orders them); its header and context were decoded. `clock` is the
    /// packet's begin time when the stream class has one.
    PacketBegin {
        clock: Option<u64>,
    },
    /// An event record whose header is decoded: its default clock value and
    /// the position of its class in the stream class's IR `event_classes`.
    Event {
        clock: u64,
        class: usize,
    },
    Discarded(Discarded),
    /// The packet ends; `clock` is the default clock after babeltrace2's
    /// update to the packet end time, when the stream class has one.
    PacketEnd {
        clock: Option<u64>,
    },
    End,
}

/// Sequential decoder of one data stream.
pub struct StreamDecoder<'d> {
    prog: &'d Program,
    files: Vec<&'d [u8]>,
    packets: Vec<PacketEntry>,
    next_packet: usize,
    /// Bytes of the packets before `next_packet`, and of all.
    bytes_opened: u64,
    bytes_total: u64,
    c: Cursor<'d>,
    /// A packet is open: its content end and current stream class.
    open: Option<(usize, usize)>,
    /// The body of the last event is still to be decoded.
    body_pending: Option<usize>,
    pending: [Option<Discarded>; 2],
    /// A packet was opened and its `PacketBegin` is still to be returned.
    pending_begin: bool,
    prev: Option<PacketInfo>,
    /// Number of event records decoded (headers).
    pub events: u64,
    quirk_crash: bool,
    quirk_after_packet: bool,
    /// Event header plans by stream class (made when the class first
    /// occurs; `Some(None)`: none), for visitors without
    /// [`Visitor::EVENT_HEADER`].
    header_plans: Vec<Option<Option<HeaderPlan>>>,
}

impl<'d> StreamDecoder<'d> {
    /// A decoder over `packets` (from [`index_file`] on `files`, in the
    /// order they must be read). `_uuid` (the trace UUID) is not compared
    /// with the packets' (see [`read_packet_start`]).
    pub fn new(
        prog: &'d Program,
        _uuid: Option<[u8; 16]>,
        files: Vec<&'d [u8]>,
        packets: Vec<PacketEntry>,
    ) -> Self {
        let first = files.first().copied().unwrap_or(&[]);
        StreamDecoder {
            prog,
            files,
            bytes_total: packets
                .iter()
                .fold(0u64, |n, p| n.saturating_add(p.total_bytes)),
            bytes_opened: 0,
            packets,
            next_packet: 0,
            c: Cursor::new(first, prog.slots),
            open: None,
            body_pending: None,
            pending: [None, None],
            pending_begin: false,
            prev: None,
            events: 0,
            quirk_crash: false,
            quirk_after_packet: false,
            header_plans: Vec::new(),
        }
    }

    /// Decode the event header `h` of stream class `sc` with no visitor:
    /// with the class's plan, or (when it has none, or the plan fails) with
    /// the decoder, which reports errors.
    #[inline(always)]
    fn header_quietly(&mut self, sc: usize, h: u32) -> Result<(), DecodeError> {
        if self.header_plans.len() <= sc {
            self.header_plans.resize_with(sc + 1, || None);
        }
        let prog = self.prog;
        let plan = self.header_plans[sc].get_or_insert_with(|| HeaderPlan::new(prog, h));
        if let Some(plan) = plan {
            let start = self.c.mark();
            let (clock, id) = (self.c.clock, self.c.event_id);
            if plan.run(&mut self.c).is_ok() {
                return Ok(());
            }
            self.c.restore(start);
            (self.c.clock, self.c.event_id) = (clock, id);
        }
        decode_scope(prog, &mut self.c, &mut Walk, Scope::EventHeader, h)
    }

    /// Decode as if the packet `prev` had just been read (its counters
    /// give the discarded-data notices of the first packet here): to
    /// decode a stream's packets in several independent parts.
    pub fn set_previous(&mut self, prev: Option<PacketInfo>) {
        self.prev = prev;
    }

    /// babeltrace2's LTTng quirks for the clock at packet ends: with
    /// `crash`, a packet whose end time is 0 (but begin time is not) keeps
    /// the clock; with `after_packet`, an end time before the last event
    /// keeps the clock.
    pub fn set_quirks(&mut self, crash: bool, after_packet: bool) {
        self.quirk_crash = crash;
        self.quirk_after_packet = after_packet;
    }

    /// The packets this decoder reads.
    pub fn packets(&self) -> &[PacketEntry] {
        &self.packets
    }

    /// The entry of the packet being decoded (or last decoded).
    pub fn current_packet(&self) -> Option<&PacketEntry> {
        self.next_packet
            .checked_sub(1)
            .and_then(|i| self.packets.get(i))
    }

    /// Where in its file the decoder is, while a packet is open: the bytes
    /// of the packet before it are read.
    pub fn position(&self) -> Option<(usize, u64)> {
        self.open?;
        let pe = self.current_packet()?;
        Some((pe.file, pe.offset.saturating_add(self.c.pos / 8)))
    }

    /// Bytes of this stream's packets read (the open one counts as read),
    /// and how many its packets have.
    pub fn progress(&self) -> (u64, u64) {
        (self.bytes_opened, self.bytes_total)
    }

    /// Current default clock value.
    pub fn clock(&self) -> u64 {
        self.c.clock
    }

    fn err(&self, e: DecodeError) -> StreamError {
        let pe = self.current_packet();
        StreamError {
            file: pe.map(|p| p.file).unwrap_or(0),
            packet_offset: pe.map(|p| p.offset).unwrap_or(0),
            error: e,
        }
    }

    /// Open the next packet: decode its header and context with `v` and
    /// queue the discarded-data notices. `false` at the end.
    fn open_packet<V: Visitor>(&mut self, v: &mut V) -> Result<bool, StreamError> {
        let Some(e) = self.packets.get(self.next_packet).cloned() else {
            return Ok(false);
        };
        self.next_packet += 1;
        self.bytes_opened = self.bytes_opened.saturating_add(e.total_bytes);
        let data = self.files[e.file];
        let (entry, _) = read_packet_start(self.prog, e.file, data, e.offset, &mut self.c, v)?;
        let sc = &self.prog.streams.get(entry.stream);
        // babeltrace2's discarded events / packets (msg-iter rules).
        let info = entry.info;
        if let Some(s) = sc {
            if s.has_discarded_events {
                let cur = info.discarded;
                let notice = match (self.prev.and_then(|p| p.discarded), cur) {
                    (None, Some(c)) if c != 0 => Some(Discarded {
                        packets: false,
                        count: None,
                        begin: info.begin_clock,
                        end: info.end_clock,
                    }),
                    (Some(pv), Some(c)) if c.wrapping_sub(pv) != 0 => Some(Discarded {
                        packets: false,
                        count: Some(c.wrapping_sub(pv)),
                        begin: self.prev.and_then(|p| p.end_clock),
                        end: info.end_clock,
                    }),
                    _ => None,
                };
                self.pending[0] = notice.map(|mut n| {
                    if !(s.has_ts_begin && s.has_ts_end) {
                        n.begin = None;
                        n.end = None;
                    }
                    n
                });
            }
            if s.has_packet_seq_num {
                if let (Some(pv), Some(c)) = (self.prev.and_then(|p| p.seq_num), info.seq_num) {
                    let d = c.wrapping_sub(pv);
                    if d > 1 {
                        let both = s.has_ts_begin && s.has_ts_end;
                        self.pending[1] = Some(Discarded {
                            packets: true,
                            count: Some(d - 1),
                            begin: if both {
                                self.prev.and_then(|p| p.end_clock)
                            } else {
                                None
                            },
                            end: if both { info.begin_clock } else { None },
                        });
                    }
                }
            }
        }
        self.prev = Some(info);
        self.pending_begin = true;
        self.open = Some((entry.content_bits as usize, entry.stream));
        Ok(true)
    }

    /// Decode up to the next event record's header (or notice), decoding
    /// packet headers and contexts on the way with `v`. A pending event
    /// body is skipped (decoded with no visitor).
    pub fn advance<V: Visitor>(&mut self, v: &mut V) -> Result<Step, StreamError> {
        if self.body_pending.is_some() {
            self.body(&mut NullVisitor)?;
        }
        loop {
            // (checked before taken: most events have no notice before them)
            if self.pending.iter().any(Option::is_some) {
                if let Some(n) = self.pending.iter_mut().find_map(|p| p.take()) {
                    return Ok(Step::Discarded(n));
                }
            }
            if self.pending_begin {
                self.pending_begin = false;
                let pe = self.current_packet();
                let has = pe
                    .and_then(|p| self.prog.streams.get(p.stream))
                    .is_some_and(|s| s.has_ts_begin);
                let clock = if has {
                    pe.and_then(|p| p.info.begin_clock)
                } else {
                    None
                };
                return Ok(Step::PacketBegin { clock });
            }
            let Some((content, sc)) = self.open else {
                if !self.open_packet(v)? {
                    return Ok(Step::End);
                }
                continue;
            };
            let content = content as u64;
            if self.c.pos >= content {
                let total = self
                    .current_packet()
                    .map(|p| p.total_bytes * 8)
                    .unwrap_or(content);
                v.packet_end(content, total.max(content));
                // babeltrace2 sets the clock to the packet end time.
                if let Some(info) = self.current_packet().map(|p| p.info) {
                    if let Some(end) = info.end_clock {
                        let mut update = true;
                        if self.quirk_crash && info.begin_clock.is_some_and(|b| b != 0) && end == 0
                        {
                            update = false;
                        }
                        if self.quirk_after_packet && end < self.c.clock {
                            update = false;
                        }
                        if update {
                            self.c.clock = end;
                        }
                    }
                }
                self.open = None;
                let has = self.prog.streams.get(sc).is_some_and(|s| s.has_ts_end);
                return Ok(Step::PacketEnd {
                    clock: has.then_some(self.c.clock),
                });
            }
            let Some(s) = self.prog.streams.get(sc) else {
                return Err(self.err(DecodeError {
                    kind: DecodeErrorKind::Other("packet content but no data stream class".into()),
                    bit: self.c.pos,
                }));
            };
            self.c
                .align(s.event_align(self.prog))
                .map_err(|e| self.err(*e))?;
            v.event_begin(self.c.pos);
            self.c.event_id = None;
            if let Some(h) = s.event_header {
                if V::EVENT_HEADER {
                    decode_scope(self.prog, &mut self.c, v, Scope::EventHeader, h)
                } else {
                    self.header_quietly(sc, h)
                }
                .map_err(|e| self.err(e))?;
            }
            let pos = match self.c.event_id {
                Some(id) => s.event_pos(id).ok_or_else(|| {
                    self.err(DecodeError {
                        kind: DecodeErrorKind::Other(format!(
                            "no event record class with ID {id} in data stream class {}",
                            s.id
                        )),
                        bit: self.c.pos,
                    })
                })?,
                None => {
                    if s.events.len() == 1 {
                        0
                    } else if let Some(i) = s.event_pos(0).filter(|_| self.prog.implicit_id_zero) {
                        // CTF 2: no event record class ID field means ID 0.
                        i
                    } else {
                        return Err(self.err(DecodeError {
                            kind: DecodeErrorKind::Other(if s.events.is_empty() {
                                "data stream class without event record classes".into()
                            } else {
                                "several event record classes but no event class ID".into()
                            }),
                            bit: self.c.pos,
                        }));
                    }
                }
            };
            let class = s.event_index[pos];
            v.event_class(self.c.pos, class, s.events[pos].id);
            self.body_pending = Some(pos);
            self.events += 1;
            return Ok(Step::Event {
                clock: self.c.clock,
                class,
            });
        }
    }

    /// The event whose body is pending: its stream class and its position
    /// in the stream class's events.
    pub fn pending_body(&self) -> Option<(usize, usize)> {
        Some((self.open?.1, self.body_pending?))
    }

    /// Decode the pending body with `f` (given the program and the cursor
    /// at the body's start) instead of a visitor. When `f` fails, the
    /// cursor is put back where the body starts and the body stays
    /// pending, for [`body`](Self::body) to decode again (and to report
    /// the error as it does); `false` then.
    pub fn body_by<F>(&mut self, f: F) -> bool
    where
        F: FnOnce(&'d Program, &mut Cursor<'d>) -> Result<(), Box<DecodeError>>,
    {
        if self.body_pending.is_none() {
            return true;
        }
        let start = self.c.mark();
        match f(self.prog, &mut self.c) {
            Ok(()) => {
                self.body_pending = None;
                true
            }
            Err(_) => {
                self.c.restore(start);
                false
            }
        }
    }

    /// Decode the contexts and payload of the event whose header
    /// [`advance`](Self::advance) returned.
    pub fn body<V: Visitor>(&mut self, v: &mut V) -> Result<(), StreamError> {
        let Some(pos) = self.body_pending.take() else {
            return Ok(());
        };
        let Some((_, sc)) = self.open else {
            return Ok(());
        };
        let p = self.prog;
        let s = &p.streams[sc];
        let e = &s.events[pos];
        let scopes = [
            (Scope::EventCommonContext, s.common_context),
            (Scope::EventSpecificContext, e.specific_context),
            (Scope::EventPayload, e.payload),
        ];
        for (scope, root) in scopes {
            if let Some(r) = root {
                decode_scope(p, &mut self.c, v, scope, r).map_err(|e| self.err(e))?;
            }
        }
        v.event_end(self.c.pos);
        Ok(())
    }
}

/// Decode every packet of one stream file in file order with `v`, as yactfr
/// does (no sorting, no discarded-data notices). Returns the number of
/// event records; stops at the first error. `_uuid` (the trace UUID) is
/// not compared with the packets' (see [`read_packet_start`]).
pub fn decode_file<V: Visitor>(
    p: &Program,
    _uuid: Option<[u8; 16]>,
    data: &[u8],
    v: &mut V,
) -> Result<u64, StreamError> {
    let mut c = Cursor::new(data, p.slots);
    let mut off = 0u64;
    let mut events = 0u64;
    while off < data.len() as u64 {
        // yactfr: the default clock starts over with each packet.
        c.clock = 0;
        let (e, _) = read_packet_start(p, 0, data, off, &mut c, v)?;
        let fail = |er: DecodeError| StreamError {
            file: 0,
            packet_offset: off,
            error: er,
        };
        if let Some(s) = p.streams.get(e.stream) {
            while c.pos < e.content_bits {
                c.align(s.event_align(p)).map_err(|e| fail(*e))?;
                v.event_begin(c.pos);
                c.event_id = None;
                if let Some(h) = s.event_header {
                    decode_scope(p, &mut c, v, Scope::EventHeader, h).map_err(fail)?;
                }
                let pos = match c.event_id {
                    Some(id) => s.event_pos(id).ok_or_else(|| {
                        fail(DecodeError {
                            kind: DecodeErrorKind::Other(format!(
                                "no event record class with ID {id}"
                            )),
                            bit: c.pos,
                        })
                    })?,
                    None if s.events.len() == 1 => 0,
                    // CTF 2: no event record class ID field means ID 0.
                    None if p.implicit_id_zero && s.event_pos(0).is_some() => {
                        s.event_pos(0).unwrap_or(0)
                    }
                    None => {
                        return Err(fail(DecodeError {
                            kind: DecodeErrorKind::Other(
                                "several event record classes but no event class ID".into(),
                            ),
                            bit: c.pos,
                        }))
                    }
                };
                let ev = &s.events[pos];
                v.event_class(c.pos, s.event_index[pos], ev.id);
                for (scope, root) in [
                    (Scope::EventCommonContext, s.common_context),
                    (Scope::EventSpecificContext, ev.specific_context),
                    (Scope::EventPayload, ev.payload),
                ] {
                    if let Some(r) = root {
                        decode_scope(p, &mut c, v, scope, r).map_err(fail)?;
                    }
                }
                v.event_end(c.pos);
                events += 1;
            }
        } else if c.pos < e.content_bits {
            return Err(fail(DecodeError {
                kind: DecodeErrorKind::Other("packet content but no data stream class".into()),
                bit: c.pos,
            }));
        }
        let total_bits = e
            .content_bits
            .max(e.info.total_bits.unwrap_or(e.content_bits));
        v.packet_end(e.content_bits, total_bits);
        if e.truncated {
            return Err(fail(DecodeError {
                kind: DecodeErrorKind::EndOfData { bits: 8 },
                bit: total_bits.min((data.len() as u64 - off) * 8),
            }));
        }
        off += e.total_bytes;
    }
    Ok(events)
}
