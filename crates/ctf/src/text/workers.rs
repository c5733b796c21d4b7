//! The muxer's messages and the workers that render events ahead of the
//! printer: streams decoded in segments on other threads into chunks of
//! rendered messages, handed back in order ([`StreamRun`] runs them).

use super::*;

/// Kinds of babeltrace2 messages, in the muxer's order for equal times
/// (stream beginning first ... stream end last).
/// One message as babeltrace2's source would produce it, with what the
/// sink needs to print it.
pub(super) struct Msg {
    pub(super) kind: MsgKind,
    /// Time (ns from origin); `None`: no clock snapshot.
    pub(super) ts: Option<i64>,
    /// Event: class position and clock value.
    pub(super) class: u32,
    pub(super) cycles: u64,
    /// Event: pooled event object (for babeltrace2's stale strings).
    pub(super) obj: u32,
    /// The stream's chunk being read when it was made ([`StreamRun::seq`]).
    pub(super) seq: u64,
    /// Event: the rendered scopes after the event name; discarded: the
    /// notice.
    pub(super) body: Body,
}

impl Msg {
    /// A message of no use, for the slots of a [`Ring`].
    pub(super) const EMPTY: Msg = Msg {
        kind: MsgKind::StreamEnd,
        ts: None,
        class: 0,
        cycles: 0,
        obj: 0,
        seq: 0,
        body: Body::None,
    };
}

/// A stream's message queue: a ring whose slots are written in place.
/// (A message made elsewhere and moved into a `VecDeque` was read back
/// while its stores were still in flight: a stall on every event.)
pub(super) struct Ring {
    pub(super) slots: Vec<Msg>,
    pub(super) head: usize,
    pub(super) len: usize,
}

impl Ring {
    pub(super) fn with_capacity(n: usize) -> Ring {
        Ring {
            slots: std::iter::repeat_with(|| Msg::EMPTY)
                .take(n.max(1))
                .collect(),
            head: 0,
            len: 0,
        }
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The position of the `i`-th message (`i` at most the length).
    #[inline]
    pub(super) fn at(&self, i: usize) -> usize {
        let k = self.head + i;
        if k >= self.slots.len() {
            k - self.slots.len()
        } else {
            k
        }
    }

    /// The `i`-th message (there is one).
    #[inline]
    pub(super) fn get(&self, i: usize) -> &Msg {
        &self.slots[self.at(i)]
    }

    /// The `i`-th message, to change (there is one).
    pub(super) fn get_mut(&mut self, i: usize) -> &mut Msg {
        let k = self.at(i);
        &mut self.slots[k]
    }

    /// A new message at the back, to be written in place (it holds what
    /// an earlier message left: every field is to be set).
    #[inline]
    pub(super) fn push(&mut self) -> &mut Msg {
        if self.len == self.slots.len() {
            let n = self.slots.len();
            self.slots.rotate_left(self.head);
            self.head = 0;
            self.slots
                .extend(std::iter::repeat_with(|| Msg::EMPTY).take(n));
        }
        let i = self.at(self.len);
        self.len += 1;
        &mut self.slots[i]
    }

    /// The message at the front, in its slot.
    #[inline]
    pub(super) fn front_mut(&mut self) -> Option<&mut Msg> {
        if self.len == 0 {
            return None;
        }
        Some(&mut self.slots[self.head])
    }

    /// Drop the message at the front (its slot keeps what is left of it
    /// until it is written again).
    #[inline]
    pub(super) fn pop_front(&mut self) {
        if self.len > 0 {
            self.head = self.at(1);
            self.len -= 1;
        }
    }
}

/// The rendered scopes of an event: in its stream's chunk (`bytes[a..b]`
/// of the chunk of the message's `seq`), or its own text when
/// babeltrace2's stale strings changed it.
pub(super) enum Body {
    None,
    InChunk(u32, u32),
    Own(Vec<u8>),
    Notice(Box<Discarded>),
}

/// The text of message `m` of a stream whose chunk `seq` is `cur`, the
/// older ones still in `held`.
pub(super) fn body_of<'a>(cur: &'a Chunk, seq: u64, held: &'a Held, m: &'a Msg) -> &'a [u8] {
    match &m.body {
        Body::InChunk(a, b) => {
            let c = if m.seq == seq {
                Some(cur)
            } else {
                held.iter().find(|h| h.0 == m.seq).map(|h| &h.1)
            };
            // ([`StreamRun::release`] keeps every chunk a queued message names)
            debug_assert!(c.is_some(), "the chunk of a queued message was given back");
            c.and_then(|c| c.bytes.get(*a as usize..*b as usize))
                .unwrap_or(&[])
        }
        Body::Own(v) => v,
        Body::None | Body::Notice(_) => &[],
    }
}

/// A stream's chunks read before the current one that queued messages
/// may point into, with their numbers.
pub(super) type Held = std::collections::VecDeque<(u64, Chunk)>;

/// Make `c` a stream's current chunk (`cur`, number `seq`): the one
/// before is held under its number, and the new one takes the next.
pub(super) fn hand_over(cur: &mut Chunk, held: &mut Held, seq: &mut u64, c: Chunk) {
    let old = std::mem::replace(cur, c);
    held.push_back((*seq, old));
    *seq += 1;
}

/// What a stream's renderer hands the printer, in stream order (kept
/// small: there is one per event).
#[derive(Debug, Clone)]
pub(super) enum RawKind {
    PacketBegin(Option<u64>),
    PacketEnd(Option<u64>),
    Discarded(Box<Discarded>),
    Event {
        clock: u64,
        class: u32,
    },
    /// A live stream is quiet up to this clock value.
    Inactivity(u64),
    End,
}

/// One rendered item: for events, the range of its scopes' text in
/// `Chunk::bytes` and of its string marks in `Chunk::marks`.
#[derive(Debug, Clone)]
pub(super) struct Raw {
    pub(super) kind: RawKind,
    pub(super) body: (u32, u32),
    pub(super) marks: (u32, u32),
}

/// Rendered items of one stream.
#[derive(Default)]
pub(super) struct Chunk {
    pub(super) items: Vec<Raw>,
    pub(super) bytes: Vec<u8>,
    pub(super) marks: Vec<Mark>,
    pub(super) raw: Vec<u8>,
    /// The error that stopped the stream, after the items.
    pub(super) error: Option<StreamError>,
    /// The last chunk of a segment (see [`Feed::Segments`]).
    pub(super) seg_end: bool,
}

impl Chunk {
    /// An empty chunk with room for `sizes` (a worker's chunks are alike:
    /// this spares the buffers' growth, copy by copy).
    pub(super) fn with_room(sizes: [usize; 3]) -> Chunk {
        let [bytes, marks, raw] = sizes;
        Chunk {
            items: Vec::with_capacity(CHUNK),
            bytes: Vec::with_capacity(bytes + bytes / 8),
            marks: Vec::with_capacity(marks),
            raw: Vec::with_capacity(raw + raw / 8),
            error: None,
            seg_end: false,
        }
    }

    /// What [`Chunk::with_room`] needs to hold this chunk's contents.
    pub(super) fn sizes(&self) -> [usize; 3] {
        [self.bytes.len(), self.marks.len(), self.raw.len()]
    }
}

/// Chunks the printer is done with, for the workers to fill again: their
/// buffers keep their room, so no chunk costs an allocation and fresh pages.
#[derive(Default)]
pub(super) struct ChunkPool(pub(super) std::sync::Mutex<Vec<Chunk>>);

impl ChunkPool {
    /// Chunks kept at most (the rest are freed).
    pub(super) const MAX: usize = 16;

    /// An empty chunk: a used one, else a new one with room for `room`.
    pub(super) fn take(&self, room: [usize; 3]) -> Chunk {
        let used = self.0.lock().ok().and_then(|mut v| v.pop());
        match used {
            Some(mut c) => {
                c.items.clear();
                c.bytes.clear();
                c.marks.clear();
                c.raw.clear();
                c.error = None;
                c.seg_end = false;
                c
            }
            None => Chunk::with_room(room),
        }
    }

    /// Keep `c` for the workers (up to [`ChunkPool::MAX`]).
    pub(super) fn give(&self, c: Chunk) {
        if let Ok(mut v) = self.0.lock() {
            if v.len() < Self::MAX {
                v.push(c);
            }
        }
    }
}

/// Items per chunk.
pub(super) const CHUNK: usize = 512;

/// Decodes one stream and renders the scopes of its event records (on a
/// worker thread, or on the printer's).
pub(super) struct Renderer<'d> {
    pub(super) dec: StreamDecoder<'d>,
    pub(super) pcp: FieldPrinter,
    pub(super) fp: FieldPrinter,
    pub(super) pc: Vec<u8>,
    pub(super) pc_visible: bool,
    pub(super) scope_names: bool,
    pub(super) done: bool,
    /// Gives the consumed bytes back to the loader (none for packets held
    /// in memory).
    pub(super) rel: Option<fs::Releaser<'d>>,
    pub(super) prog: &'d crate::decode::Program,
    /// Body plans by stream class and event position (made when the class
    /// first occurs; `Some(None)`: the class has none).
    pub(super) plans: plan::PlanTable,
    pub(super) use_plans: bool,
}

impl<'d> Renderer<'d> {
    /// A renderer of the packets `range` of stream `g`.
    pub(super) fn new(
        t: &'d Trace,
        g: &fs::StreamGroup,
        names: Names,
        range: std::ops::Range<usize>,
        loader: &'d dyn Loader,
        plans: bool,
    ) -> Self {
        let files: Vec<&[u8]> = g.files.iter().map(|&f| (*t.files[f].1).as_ref()).collect();
        let start = range.start;
        let mut dec = StreamDecoder::new(&t.prog, t.tc.uuid, files, g.packets[range].to_vec());
        dec.set_quirks(t.quirks.lttng_crash, t.quirks.lttng_event_after_packet);
        if start > 0 {
            dec.set_previous(Some(g.packets[start - 1].info));
        }
        let mut r = Renderer::with_decoder(dec, &t.prog, names, plans);
        r.rel = Some(fs::Releaser::new(loader, t, g));
        r
    }

    /// A renderer of what `dec` decodes (no loader).
    pub(super) fn with_decoder(
        dec: StreamDecoder<'d>,
        prog: &'d crate::decode::Program,
        names: Names,
        plans: bool,
    ) -> Self {
        Renderer {
            dec,
            pcp: FieldPrinter::new(names, true),
            fp: FieldPrinter::new(names, false),
            pc: Vec::new(),
            pc_visible: false,
            scope_names: names.scope,
            done: false,
            rel: None,
            prog,
            plans: Vec::new(),
            use_plans: plans,
        }
    }

    /// The body plan of event position `pos` of stream class `sc`.
    pub(super) fn plan<'a>(
        plans: &'a mut plan::PlanTable,
        p: &crate::decode::Program,
        names: Names,
        (sc, pos): (usize, usize),
    ) -> Option<&'a plan::BodyPlan> {
        if plans.len() <= sc {
            plans.resize_with(sc + 1, Vec::new);
        }
        let row = &mut plans[sc];
        if row.len() <= pos {
            row.resize_with(pos + 1, || None);
        }
        row[pos]
            .get_or_insert_with(|| {
                let s = p.streams.get(sc)?;
                let e = s.events.get(pos)?;
                plan::BodyPlan::new(
                    p,
                    names,
                    [
                        (Scope::EventCommonContext, s.common_context),
                        (Scope::EventSpecificContext, e.specific_context),
                        (Scope::EventPayload, e.payload),
                    ],
                )
            })
            .as_ref()
    }

    /// The decoder stopped: release the bytes of its last packet.
    pub(super) fn stop(&mut self) {
        self.done = true;
        if let Some(pe) = self.dec.current_packet() {
            let end = pe.offset.saturating_add(pe.total_bytes);
            if let Some(rel) = &mut self.rel {
                rel.finish(pe.file, end);
            }
        }
    }

    /// Append up to `max` items to `c`.
    pub(super) fn fill(&mut self, c: &mut Chunk, max: usize) {
        std::mem::swap(&mut self.fp.out, &mut c.bytes);
        std::mem::swap(&mut self.fp.marks, &mut c.marks);
        std::mem::swap(&mut self.fp.raw, &mut c.raw);
        let none = (0, 0);
        while c.items.len() < max && !self.done {
            let step = self.dec.advance(&mut self.pcp);
            if std::mem::take(&mut self.pcp.opened) {
                self.pc.clear();
                self.pc.extend_from_slice(&self.pcp.out);
                self.pc_visible = self.pcp.pc_visible;
            }
            let kind = match step {
                Err(e) => {
                    c.error = Some(e);
                    self.stop();
                    break;
                }
                Ok(Step::PacketBegin { clock }) => {
                    if let (Some(pe), Some(rel)) = (self.dec.current_packet(), &mut self.rel) {
                        rel.packet(pe.file, pe.offset);
                    }
                    RawKind::PacketBegin(clock)
                }
                Ok(Step::PacketEnd { clock }) => RawKind::PacketEnd(clock),
                Ok(Step::Discarded(d)) => RawKind::Discarded(Box::new(d)),
                Ok(Step::End) => {
                    self.stop();
                    RawKind::End
                }
                Ok(Step::Event { clock, class }) => {
                    let fp = &mut self.fp;
                    let (b0, m0, r0) = (fp.out.len(), fp.marks.len(), fp.raw.len());
                    fp.start_line = true;
                    if self.pc_visible {
                        fp.start_line = false;
                        if self.scope_names {
                            fp.out.extend_from_slice(b"stream.packet.context = ");
                        }
                        fp.out.extend_from_slice(&self.pc);
                    }
                    // The class's plan when it has one; the decoder with
                    // the printer when not, or when the plan fails (the
                    // error is then the decoder's).
                    let planned = match self.dec.pending_body().filter(|_| self.use_plans) {
                        Some(at) => match Self::plan(&mut self.plans, self.prog, fp.names, at) {
                            Some(plan) => {
                                let (l, start_line) = (fp.out.len(), fp.start_line);
                                let ok = self.dec.body_by(|p, c| plan.run(p, c, fp));
                                if !ok {
                                    fp.out.truncate(l);
                                    fp.marks.truncate(m0);
                                    fp.raw.truncate(r0);
                                    fp.start_line = start_line;
                                }
                                ok
                            }
                            None => false,
                        },
                        None => false,
                    };
                    if let Err(e) = if planned { Ok(()) } else { self.dec.body(fp) } {
                        fp.out.truncate(b0);
                        fp.marks.truncate(m0);
                        fp.raw.truncate(r0);
                        c.error = Some(e);
                        self.stop();
                        break;
                    }
                    c.items.push(Raw {
                        kind: RawKind::Event {
                            clock,
                            class: class as u32,
                        },
                        body: (b0 as u32, fp.out.len() as u32),
                        marks: (m0 as u32, fp.marks.len() as u32),
                    });
                    continue;
                }
            };
            c.items.push(Raw {
                kind,
                body: none,
                marks: none,
            });
        }
        // (a packet may be large: what is read of it is released as it goes)
        if let (Some((file, at)), Some(rel)) = (self.dec.position(), &mut self.rel) {
            rel.packet(file, at);
        }
        std::mem::swap(&mut self.fp.out, &mut c.bytes);
        std::mem::swap(&mut self.fp.marks, &mut c.marks);
        std::mem::swap(&mut self.fp.raw, &mut c.raw);
    }
}

/// Where a stream's rendered items come from.
pub(super) enum Feed<'d> {
    Local(Box<Renderer<'d>>),
    Remote(std::sync::mpsc::Receiver<Chunk>),
    /// Packets that arrive while the printer runs (a live session).
    Live(Box<live::LiveFeed<'d>>),
    /// Segments of consecutive packets rendered by several workers:
    /// segment `i` comes from `workers[i % workers.len()]`.
    Segments {
        workers: Vec<std::sync::mpsc::Receiver<Chunk>>,
        cur: usize,
        count: usize,
    },
}

/// One data stream: its rendered items and babeltrace2's message queue.
pub(super) struct StreamRun<'d> {
    pub(super) feed: Feed<'d>,
    /// The chunk being read, its number, and the chunks read before it
    /// that queued messages may point into.
    pub(super) chunk: Chunk,
    pub(super) seq: u64,
    pub(super) held: Held,
    pub(super) next: usize,
    pub(super) trace: usize,
    pub(super) group: usize,
    /// Clock class of the stream class (frequency, offsets).
    pub(super) clock: Option<(u64, i64, u64)>,
    /// The clock's frequency and base offset in ns (`None`: no clock, or
    /// one whose offset overflows).
    pub(super) base: Option<(u64, i64)>,
    /// First pool index of the stream class's event classes.
    pub(super) pool_base: usize,
    pub(super) queue: Ring,
    /// Messages at the queue's front that the muxer has handed out (in
    /// the batch being made; the sink pops them).
    pub(super) taken: usize,
    pub(super) started: bool,
    pub(super) ended: bool,
    /// A live stream said it is quiet: the refill stops there.
    pub(super) pause: bool,
    /// The clock value of its last inactivity message (live streams).
    pub(super) inactive_until: Option<u64>,
    /// An error hit while producing; returned when the queue is refilled.
    pub(super) error: Option<StreamError>,
    /// Where chunks go once read (for the workers).
    pub(super) pool: Option<&'d ChunkPool>,
}

/// What the sink needs of a stream besides its messages.
#[derive(Clone, Copy)]
pub(super) struct StreamRef {
    pub(super) trace: usize,
    pub(super) group: usize,
    pub(super) clock: Option<(u64, i64, u64)>,
    pub(super) pool_base: usize,
}

impl StreamRun<'_> {
    pub(super) fn src(&self) -> StreamRef {
        StreamRef {
            trace: self.trace,
            group: self.group,
            clock: self.clock,
            pool_base: self.pool_base,
        }
    }

    /// The first message not handed out yet (there is one).
    #[inline]
    pub(super) fn head(&self) -> &Msg {
        self.queue.get(self.taken)
    }

    /// The time of an event's clock value `v` (`clock_ns`, quicker).
    #[inline]
    pub(super) fn event_ns(&self, v: u64) -> Option<i64> {
        let (freq, base) = self.base?;
        fs::ns_from_base(freq, base, v)
    }

    /// Read `c` next; the chunk read so far is held until no queued
    /// message points into it.
    pub(super) fn replace_chunk(&mut self, c: Chunk) {
        hand_over(&mut self.chunk, &mut self.held, &mut self.seq, c);
        self.release();
    }

    /// Give back the held chunks that no queued message points into.
    #[inline]
    pub(super) fn release(&mut self) {
        let oldest = match self.queue.len() {
            0 => self.seq,
            _ => self.queue.get(0).seq,
        };
        while self.held.front().is_some_and(|h| h.0 < oldest) {
            if let (Some((_, c)), Some(p)) = (self.held.pop_front(), self.pool) {
                p.give(c);
            }
        }
    }

    /// Make `chunk.items[next]` the next rendered item (`false`: there
    /// is none left).
    #[inline]
    pub(super) fn next_raw(&mut self) -> Result<bool, StreamError> {
        if self.next < self.chunk.items.len() {
            return Ok(true);
        }
        self.next_chunk()
    }

    /// [`StreamRun::next_raw`] once the chunk is read.
    pub(super) fn next_chunk(&mut self) -> Result<bool, StreamError> {
        loop {
            if self.next < self.chunk.items.len() {
                return Ok(true);
            }
            if let Some(e) = self.chunk.error.clone() {
                // (messages may still hold the chunk: it is read no more)
                let seg_end = self.chunk.seg_end;
                self.replace_chunk(Chunk {
                    seg_end,
                    ..Chunk::default()
                });
                return Err(e);
            }
            match &mut self.feed {
                Feed::Local(r) => {
                    if r.done {
                        return Ok(false);
                    }
                    // (the chunk is reused when no queued message may point
                    // into it)
                    if self.queue.len() > 0 {
                        let room = self.chunk.sizes();
                        let c = match self.pool {
                            Some(p) => p.take(room),
                            None => Chunk::with_room(room),
                        };
                        hand_over(&mut self.chunk, &mut self.held, &mut self.seq, c);
                    }
                    let c = &mut self.chunk;
                    c.items.clear();
                    c.bytes.clear();
                    c.marks.clear();
                    c.raw.clear();
                    r.fill(c, CHUNK);
                }
                Feed::Remote(rx) => match rx.recv() {
                    Ok(c) => self.replace_chunk(c),
                    Err(_) => return Ok(false),
                },
                Feed::Live(f) => {
                    if f.ended {
                        return Ok(false);
                    }
                    if self.queue.len() > 0 {
                        let room = self.chunk.sizes();
                        hand_over(
                            &mut self.chunk,
                            &mut self.held,
                            &mut self.seq,
                            Chunk::with_room(room),
                        );
                    }
                    let c = &mut self.chunk;
                    c.items.clear();
                    c.bytes.clear();
                    c.marks.clear();
                    c.raw.clear();
                    f.fill(c);
                    if let Some(b) = f.pool_base {
                        self.pool_base = b;
                    }
                }
                Feed::Segments {
                    workers,
                    cur,
                    count,
                } => {
                    if self.chunk.seg_end {
                        *cur += 1;
                        self.chunk.seg_end = false;
                    }
                    if *cur >= *count {
                        return Ok(false);
                    }
                    let k = workers.len();
                    match workers[*cur % k].recv() {
                        Ok(c) => self.replace_chunk(c),
                        Err(_) => return Ok(false),
                    }
                }
            }
            self.next = 0;
            self.release();
        }
    }
}

/// A worker: render a stream chunk by chunk until the printer stops
/// listening or the stream ends.
pub(super) fn render_worker(
    mut r: Renderer<'_>,
    tx: std::sync::mpsc::SyncSender<Chunk>,
    pool: &ChunkPool,
) {
    let mut room = [0; 3];
    while !r.done {
        let mut c = pool.take(room);
        r.fill(&mut c, CHUNK);
        room = c.sizes();
        if tx.send(c).is_err() {
            break;
        }
    }
}

/// A segment worker: render segments `w`, `w + k`, ... of a stream (their
/// packet ranges in `segs`), each ending with a `seg_end` chunk; only the
/// last segment keeps the stream's end.
#[allow(clippy::too_many_arguments)]
pub(super) fn segment_worker<'d>(
    t: &'d Trace,
    loader: &'d dyn Loader,
    g: &'d fs::StreamGroup,
    names: Names,
    plans: bool,
    segs: Vec<std::ops::Range<usize>>,
    w: usize,
    k: usize,
    tx: std::sync::mpsc::SyncSender<Chunk>,
    pool: &ChunkPool,
) {
    let n = segs.len();
    let mut i = w;
    let mut room = [0; 3];
    while i < n {
        let mut r = Renderer::new(t, g, names, segs[i].clone(), loader, plans);
        loop {
            let mut c = pool.take(room);
            r.fill(&mut c, CHUNK);
            room = c.sizes();
            let stop = r.done;
            if stop {
                if i + 1 < n {
                    c.items.retain(|it| !matches!(it.kind, RawKind::End));
                }
                c.seg_end = true;
            }
            let failed = c.error.is_some();
            if tx.send(c).is_err() || failed {
                return;
            }
            if stop {
                break;
            }
        }
        i += k;
    }
}

/// Cut a stream's packets into segments of about `bytes` bytes.
pub(super) fn segments(
    packets: &[crate::stream::PacketEntry],
    bytes: u64,
) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut acc = 0u64;
    for (i, p) in packets.iter().enumerate() {
        acc += p.total_bytes;
        if acc >= bytes {
            out.push(start..i + 1);
            start = i + 1;
            acc = 0;
        }
    }
    if start < packets.len() || out.is_empty() {
        out.push(start..packets.len());
    }
    out
}

/// babeltrace2's message batch size (`MSG_BATCH_SIZE`).
pub(super) const BATCH: usize = 15;

pub(super) fn clock_ns(c: Option<(u64, i64, u64)>, v: u64) -> Option<i64> {
    let (f, s, o) = c?;
    fs::clock_ns(f, s, o, v)
}

/// babeltrace2's `bt_common_clock_value_from_ns_from_origin`.
pub(super) fn raw_from_ns(c: (u64, i64, u64), ns: i64) -> Option<u64> {
    let (freq, off_s, off_c) = c;
    let off_ns = off_s.checked_mul(1_000_000_000)?;
    let add = if freq == 1_000_000_000 {
        off_c as i64
    } else {
        (off_c as i64).checked_mul(1_000_000_000)? / freq as i64
    };
    let off = off_ns.checked_add(add)?;
    if ns < off {
        return None;
    }
    let v = (ns - off) as u64;
    let periods = v / 1_000_000_000;
    let rem = v - periods * 1_000_000_000;
    let pc = periods.checked_mul(freq)?;
    freq.checked_mul(rem)?
        .checked_div(1_000_000_000)?
        .checked_add(pc)
}
