//! The records of the data section (file mode) or of the stream after the
//! header (pipe mode), in the order perf delivers them to its tools.
//!
//! Each record is a `perf_event_header` (u32 type, u16 misc, u16 size) and
//! `size - 8` bytes. Three kinds need more than that:
//! - COMPRESSED (81) holds zstd data and COMPRESSED2 (83) a u64 size and
//!   zstd data; the decompressed bytes of all of them form one stream of
//!   records, and a record may continue in the next compressed one (perf
//!   keeps the remainder, so does this).
//! - HEADER_TRACING_DATA (66) in a pipe is followed by the tracing data, of
//!   the size the record states, padded to 8 bytes.
//! - FINISHED_ROUND (68) ends a round of perf's ordered-events queue.
//!
//! **Order** (perf's `ordered_events`, which `perf script` uses): a kernel
//! record with a timestamp (a SAMPLE's TIME, or the `sample_id` trailer's)
//! is queued; one without (no TIME, or time 0) is delivered at once, as are
//! perf's own records (type >= 64). At each FINISHED_ROUND the queued
//! records with a time up to the largest time seen before the previous
//! FINISHED_ROUND are delivered in time order (ties in the order read), and
//! at the end everything left. Records of the file are queued by offset;
//! decompressed records are copied into an arena that is emptied when the
//! queue is.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use tracemux_core::{Endian, Error, ErrorKind};

use crate::attr::{parse_trailer, Attr};
use crate::consts::{rec, sample as st};

/// One record as delivered.
#[derive(Debug, Clone, Copy)]
pub struct RawRecord<'r> {
    pub type_: u32,
    pub misc: u16,
    /// The bytes after the 8-byte header.
    pub body: &'r [u8],
    /// Absolute file offset of the header; for a record from compressed
    /// data, the offset of the COMPRESSED record it came out of.
    pub offset: u64,
    /// Whether it came out of compressed data.
    pub compressed: bool,
    /// Pipe-mode HEADER_TRACING_DATA: the tracing data that followed it.
    pub extra: &'r [u8],
    /// The timestamp it was ordered by (0: delivered unordered).
    pub time: u64,
}

/// Where a record's bytes are (see [`Records::view`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    File(usize, usize),
    Decompressed(usize, usize),
    Arena(usize, usize),
}

/// A record as delivered, without a borrow: [`Records::view`] gives its
/// bytes (until the next call of [`Records::next_loc`]).
#[derive(Debug, Clone, Copy)]
pub struct Loc {
    pub type_: u32,
    pub misc: u16,
    pub body: Span,
    pub extra: Span,
    pub offset: u64,
    pub compressed: bool,
    pub time: u64,
}

/// How records find their attribute (for timestamps): the attributes and
/// the id of each, as [`crate::PerfData`] knows them.
#[derive(Debug, Clone, Default)]
pub struct IdMap {
    pub attrs: Vec<Attr>,
    /// (id, index into attrs), sorted by id.
    pub ids: Vec<(u64, usize)>,
}

impl IdMap {
    pub fn attr_of_id(&self, id: u64) -> Option<usize> {
        self.ids
            .binary_search_by_key(&id, |x| x.0)
            .ok()
            .map(|i| self.ids[i].1)
    }

    /// The index of the attribute of a record (perf's `evlist__event2evsel`):
    /// the only one, or by the id at the place the first attribute says.
    pub fn attr_index(&self, type_: u32, body: &[u8], e: Endian) -> Option<usize> {
        if self.attrs.len() <= 1 {
            return if self.attrs.is_empty() { None } else { Some(0) };
        }
        let first = &self.attrs[0];
        let word = |i: usize| -> Option<u64> {
            let b = body.get(i * 8..i * 8 + 8)?;
            Some(e.u64(b.try_into().ok()?))
        };
        let id = if type_ == rec::SAMPLE {
            word(first.sample_id_pos()?)?
        } else {
            if !first.sample_id_all() {
                return Some(0);
            }
            let n = body.len() / 8;
            let pos = first.trailer_id_pos()?;
            word(n.checked_sub(pos)?)?
        };
        self.attr_of_id(id).or(Some(0))
    }

    /// The timestamp of a kernel record, if it has one.
    pub fn time_of(&self, type_: u32, body: &[u8], e: Endian) -> Option<u64> {
        let a = &self.attrs[self.attr_index(type_, body, e)?];
        if a.sample_type & st::TIME == 0 {
            return None;
        }
        if type_ == rec::SAMPLE {
            let mut i = 0;
            for bit in [st::IDENTIFIER, st::IP, st::TID] {
                if a.sample_type & bit != 0 {
                    i += 8;
                }
            }
            let b = body.get(i..i + 8)?;
            Some(e.u64(b.try_into().ok()?))
        } else {
            parse_trailer(a, body, e)?.time
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Queued {
    time: u64,
    seq: u64,
    /// Offset in the file, or in the arena when `arena`.
    off: u64,
    len: u32,
    type_: u32,
    misc: u16,
    arena: bool,
    /// Offset of the COMPRESSED record for records from the arena.
    origin: u64,
    /// Order among the queued records of the file (see `held`).
    fseq: u64,
}

/// The most bytes one COMPRESSED record may decompress to (perf's buffer
/// is `mmap_len` of HEADER_COMPRESSED; this is a bound far above it).
pub const MAX_DECOMPRESSED: usize = 64 << 20;

/// The reader of records, in delivery order. A lending iterator:
/// [`Records::next_record`].
pub struct Records<'a> {
    data: &'a [u8],
    e: Endian,
    pos: usize,
    /// Where the records begin and end in `data`.
    begin: usize,
    end: usize,
    pipe: bool,
    ids: IdMap,
    ordered: bool,
    heap: BinaryHeap<Reverse<Queued>>,
    seq: u64,
    next_flush: u64,
    max_time: u64,
    flush_limit: Option<u64>,
    arena: Vec<u8>,
    /// Decompressed bytes not yet read as records, from `dpos`.
    dbuf: Vec<u8>,
    dpos: usize,
    dorigin: u64,
    decoder: Option<zstd::stream::raw::Decoder<'static>>,
    /// Damage found (lenient mode goes on after it where it can).
    pub damage: Vec<Error>,
    done: bool,
    /// Where the last popped record lives (for the lending borrow).
    cur: Option<Queued>,
    /// Records read, by type (before ordering), for `stats`.
    pub counts: std::collections::BTreeMap<u32, u64>,
    /// The queue's largest size, in records.
    pub max_queued: usize,
    /// File offsets of queued records in the order queued, with whether
    /// each is still queued, from `held_base` on: the first live one is
    /// the lowest file byte still needed.
    held: std::collections::VecDeque<(u64, bool)>,
    held_base: u64,
    fseq: u64,
}

impl<'a> Records<'a> {
    /// Records of `data[start..end]` (file: the data section; pipe: after
    /// the 16-byte header to the end).
    pub fn new(
        data: &'a [u8],
        start: usize,
        end: usize,
        e: Endian,
        pipe: bool,
        ids: IdMap,
    ) -> Self {
        Records {
            data,
            e,
            pos: start,
            begin: start.min(end.min(data.len())),
            end: end.min(data.len()),
            pipe,
            ids,
            ordered: true,
            heap: BinaryHeap::new(),
            seq: 0,
            next_flush: 0,
            max_time: 0,
            flush_limit: None,
            arena: Vec::new(),
            dbuf: Vec::new(),
            dpos: 0,
            dorigin: 0,
            decoder: None,
            damage: Vec::new(),
            done: false,
            cur: None,
            counts: Default::default(),
            max_queued: 0,
            held: Default::default(),
            held_base: 0,
            fseq: 0,
        }
    }

    /// Deliver records in the order they are stored (perf's
    /// `--no-ordered-events`... and `perf report -D`).
    pub fn unordered(mut self) -> Self {
        self.ordered = false;
        self
    }

    fn damage(&mut self, msg: String, section: &'static str, off: u64) {
        self.damage.push(Error::invalid(msg, section, off));
    }

    /// The next record from the input (file or decompressed stream), in
    /// stored order: (type, misc, body range, where, origin, extra range).
    fn read_raw(&mut self) -> Option<Raw> {
        // decompressed records first
        if self.dpos < self.dbuf.len() {
            let rest = &self.dbuf[self.dpos..];
            if rest.len() >= 8 {
                let size = self.e.u16([rest[6], rest[7]]) as usize;
                if size >= 8 && size <= rest.len() {
                    let type_ = self.e.u32([rest[0], rest[1], rest[2], rest[3]]);
                    let misc = self.e.u16([rest[4], rest[5]]);
                    let r = Raw {
                        type_,
                        misc,
                        start: self.dpos + 8,
                        len: size - 8,
                        from_dbuf: true,
                        origin: self.dorigin,
                        extra: (0, 0),
                    };
                    self.dpos += size;
                    return Some(r);
                }
                if size < 8 {
                    let o = self.dorigin;
                    self.damage(
                        format!("record of size {size} in compressed data"),
                        "compressed data",
                        o,
                    );
                    self.dbuf.clear();
                    self.dpos = 0;
                }
            }
            // else: the rest continues in the next COMPRESSED record
        }
        loop {
            if self.pos >= self.end {
                if self.dpos < self.dbuf.len() {
                    let o = self.dorigin;
                    let n = self.dbuf.len() - self.dpos;
                    self.damage(
                        format!("{n} bytes of an incomplete record at the end of compressed data"),
                        "compressed data",
                        o,
                    );
                    self.dbuf.clear();
                    self.dpos = 0;
                }
                return None;
            }
            let off = self.pos;
            let hdr = &self.data[off..self.end];
            if hdr.len() < 8 {
                self.damage(
                    format!("{} bytes after the last record", hdr.len()),
                    "data",
                    off as u64,
                );
                self.pos = self.end;
                return None;
            }
            let type_ = self.e.u32([hdr[0], hdr[1], hdr[2], hdr[3]]);
            let misc = self.e.u16([hdr[4], hdr[5]]);
            let size = self.e.u16([hdr[6], hdr[7]]) as usize;
            if size < 8 || size > hdr.len() {
                self.damage(
                    format!(
                        "record of type {type_} and size {size} does not fit ({} bytes left)",
                        hdr.len()
                    ),
                    "data",
                    off as u64,
                );
                self.pos = self.end;
                return None;
            }
            self.pos += size;
            let mut extra = (0, 0);
            if self.pipe && type_ == rec::HEADER_TRACING_DATA && size >= 12 {
                let n = self.e.u32([hdr[8], hdr[9], hdr[10], hdr[11]]) as usize;
                let padded = n.div_ceil(8) * 8;
                if padded > self.end - self.pos {
                    self.damage(
                        format!("tracing data of {n} bytes runs past the end"),
                        "data",
                        off as u64,
                    );
                    self.pos = self.end;
                } else {
                    extra = (self.pos, self.pos + n);
                    self.pos += padded;
                }
            }
            if type_ == rec::COMPRESSED || type_ == rec::COMPRESSED2 {
                *self.counts.entry(type_).or_default() += 1;
                let mut z = &self.data[off + 8..off + size];
                if type_ == rec::COMPRESSED2 {
                    if z.len() < 8 {
                        self.damage(
                            "COMPRESSED2 record without its size".into(),
                            "data",
                            off as u64,
                        );
                        continue;
                    }
                    let n = self.e.u64(z[..8].try_into().unwrap_or([0; 8]));
                    z = &z[8..];
                    if n < z.len() as u64 {
                        z = &z[..n as usize];
                    }
                }
                self.decompress(z, off as u64);
                if self.dpos < self.dbuf.len() {
                    return self.read_raw();
                }
                continue;
            }
            return Some(Raw {
                type_,
                misc,
                start: off + 8,
                len: size - 8,
                from_dbuf: false,
                origin: off as u64,
                extra,
            });
        }
    }

    fn decompress(&mut self, z: &[u8], origin: u64) {
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        // keep the incomplete record at the front
        if self.dpos > 0 {
            self.dbuf.drain(..self.dpos);
            self.dpos = 0;
        }
        self.dorigin = origin;
        if self.decoder.is_none() {
            match zstd::stream::raw::Decoder::new() {
                Ok(d) => self.decoder = Some(d),
                Err(e) => {
                    self.damage.push(Error::new(
                        ErrorKind::Decompress(e.to_string()),
                        "compressed data",
                        origin,
                    ));
                    return;
                }
            }
        }
        let Some(dec) = self.decoder.as_mut() else {
            return;
        };
        let start_len = self.dbuf.len();
        let mut input = InBuffer::around(z);
        loop {
            if self.dbuf.len() - start_len >= MAX_DECOMPRESSED {
                self.damage.push(Error::new(
                    ErrorKind::Decompress(format!(
                        "more than {MAX_DECOMPRESSED} bytes from one record"
                    )),
                    "compressed data",
                    origin,
                ));
                return;
            }
            self.dbuf.reserve(256 << 10);
            let len = self.dbuf.len();
            let mut out = OutBuffer::around_pos(&mut self.dbuf, len);
            let r = dec.run(&mut input, &mut out);
            let full = out.pos() == out.capacity();
            if let Err(e) = r {
                self.damage.push(Error::new(
                    ErrorKind::Decompress(e.to_string()),
                    "compressed data",
                    origin,
                ));
                // a new stream for the next record
                self.decoder = None;
                return;
            }
            if input.pos() >= z.len() && !full {
                return;
            }
        }
    }

    fn deliver_now(&self, r: Raw) -> Loc {
        let body = if r.from_dbuf {
            Span::Decompressed(r.start, r.start + r.len)
        } else {
            Span::File(r.start, r.start + r.len)
        };
        Loc {
            type_: r.type_,
            misc: r.misc,
            body,
            extra: Span::File(r.extra.0, r.extra.1),
            offset: r.origin,
            compressed: r.from_dbuf,
            time: 0,
        }
    }

    fn span(&self, s: Span) -> &[u8] {
        match s {
            Span::File(a, b) => &self.data[a..b],
            Span::Decompressed(a, b) => &self.dbuf[a..b],
            Span::Arena(a, b) => &self.arena[a..b],
        }
    }

    /// The file bytes before this offset are no longer needed: every
    /// record before it has been delivered (the caller may drop their
    /// pages once it is done with the record it holds).
    pub fn consumed_to(&self) -> u64 {
        let front = self
            .held
            .front()
            .map_or(u64::MAX, |h| h.0.saturating_sub(8));
        front.min(self.pos as u64)
    }

    /// Bytes of the data section read (records read ahead for ordering
    /// count as read), and how many it has.
    pub fn progress(&self) -> (u64, u64) {
        let total = self.end.saturating_sub(self.begin);
        let done = self.pos.saturating_sub(self.begin).min(total);
        (done as u64, total as u64)
    }

    /// The bytes of a record [`Records::next_loc`] gave last.
    pub fn view(&self, l: &Loc) -> RawRecord<'_> {
        RawRecord {
            type_: l.type_,
            misc: l.misc,
            body: self.span(l.body),
            offset: l.offset,
            compressed: l.compressed,
            extra: self.span(l.extra),
            time: l.time,
        }
    }

    fn queue(&mut self, r: Raw, time: u64) {
        let (off, arena) = if r.from_dbuf {
            let off = self.arena.len() as u64;
            let b = &self.dbuf[r.start..r.start + r.len];
            self.arena.extend_from_slice(b);
            (off, true)
        } else {
            self.held.push_back((r.start as u64, true));
            self.fseq += 1;
            (r.start as u64, false)
        };
        self.seq += 1;
        self.max_time = self.max_time.max(time);
        self.heap.push(Reverse(Queued {
            time,
            seq: self.seq,
            off,
            len: r.len as u32,
            type_: r.type_,
            misc: r.misc,
            arena,
            origin: r.origin,
            fseq: self.fseq,
        }));
        self.max_queued = self.max_queued.max(self.heap.len());
    }

    fn queued(&self, q: Queued) -> Loc {
        let (o, n) = (q.off as usize, q.len as usize);
        Loc {
            type_: q.type_,
            misc: q.misc,
            body: if q.arena {
                Span::Arena(o, o + n)
            } else {
                Span::File(o, o + n)
            },
            extra: Span::File(0, 0),
            offset: if q.arena { q.origin } else { q.off - 8 },
            compressed: q.arena,
            time: q.time,
        }
    }

    /// The next record in delivery order, or `None` at the end.
    pub fn next_record(&mut self) -> Option<RawRecord<'_>> {
        let l = self.next_loc()?;
        Some(self.view(&l))
    }

    /// Where the next record in delivery order is, or `None` at the end.
    pub fn next_loc(&mut self) -> Option<Loc> {
        loop {
            if let Some(limit) = self.flush_limit {
                match self.heap.peek() {
                    Some(Reverse(q)) if q.time <= limit => {
                        let Some(Reverse(q)) = self.heap.pop() else {
                            break None;
                        };
                        self.cur = Some(q);
                        if !q.arena {
                            let i = (q.fseq - 1).wrapping_sub(self.held_base) as usize;
                            if let Some(h) = self.held.get_mut(i) {
                                h.1 = false;
                            }
                            while self.held.front().is_some_and(|h| !h.1) {
                                self.held.pop_front();
                                self.held_base += 1;
                            }
                        }
                        return Some(self.queued(q));
                    }
                    _ => {
                        self.flush_limit = None;
                        if self.heap.is_empty() {
                            self.arena.clear();
                        }
                        if self.done {
                            return None;
                        }
                    }
                }
            }
            if self.done {
                return None;
            }
            let Some(r) = self.read_raw() else {
                self.done = true;
                self.flush_limit = Some(u64::MAX);
                continue;
            };
            if !r.from_dbuf || r.type_ != rec::COMPRESSED {
                *self.counts.entry(r.type_).or_default() += 1;
            }
            if r.type_ >= rec::HEADER_ATTR || !self.ordered {
                if r.type_ == rec::FINISHED_ROUND && self.ordered {
                    self.flush_limit = Some(self.next_flush);
                    self.next_flush = self.max_time;
                }
                return Some(self.deliver_now(r));
            }
            let body = if r.from_dbuf {
                &self.dbuf[r.start..r.start + r.len]
            } else {
                &self.data[r.start..r.start + r.len]
            };
            match self.ids.time_of(r.type_, body, self.e) {
                Some(t) if t != 0 && t != u64::MAX => self.queue(r, t),
                _ => return Some(self.deliver_now(r)),
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Raw {
    type_: u32,
    misc: u16,
    start: usize,
    len: usize,
    from_dbuf: bool,
    origin: u64,
    extra: (usize, usize),
}
