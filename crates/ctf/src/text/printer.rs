//! The printer: babeltrace2's messages in the muxer's order, each line
//! written as `sink.text.pretty` writes it (stale strings of pooled event
//! objects included).

use super::*;

/// A string field in a rendered body: byte offset and length of its
/// quoted text, its field (node address and array element), and its text
/// (range in the raw text buffer).
#[derive(Debug, Clone, Copy)]
pub(super) struct Mark {
    pub(super) off: u32,
    pub(super) len: u32,
    pub(super) node: usize,
    pub(super) elem: u64,
    pub(super) raw: (u32, u32),
}

/// babeltrace2's "stale string" behaviour: an empty string field shows the
/// last non-empty value held by the same (pooled) field object.
#[derive(Default)]
pub(super) struct Stale {
    /// By event object: its string fields' last non-empty values.
    pub(super) objs: Vec<ObjStrings>,
}

/// The last non-empty values of one event object's string fields, keyed
/// by field (node address, array element). An object always holds events
/// of one class, whose strings come in the same order event after event:
/// the position of a string among its event's marks finds its slot first.
#[derive(Default)]
pub(super) struct ObjStrings {
    pub(super) keys: Vec<(usize, u64)>,
    pub(super) values: Vec<Vec<u8>>,
    /// An index once the object has many string fields.
    pub(super) index: Option<std::collections::HashMap<(usize, u64), usize, IntHashBuild>>,
}

impl ObjStrings {
    /// The slot of field `key`, the string at position `hint` of its event.
    pub(super) fn find(&self, hint: usize, key: (usize, u64)) -> Option<usize> {
        if self.keys.get(hint) == Some(&key) {
            return Some(hint);
        }
        match &self.index {
            Some(ix) => ix.get(&key).copied(),
            None => self.keys.iter().position(|k| *k == key),
        }
    }

    /// The slot of field `key`, made when it has none.
    pub(super) fn slot(&mut self, hint: usize, key: (usize, u64)) -> &mut Vec<u8> {
        let i = match self.find(hint, key) {
            Some(i) => i,
            None => {
                let i = self.keys.len();
                self.keys.push(key);
                self.values.push(Vec::new());
                if let Some(ix) = &mut self.index {
                    ix.insert(key, i);
                } else if self.keys.len() > 16 {
                    let ix = self.keys.iter().enumerate().map(|(i, k)| (*k, i));
                    self.index = Some(ix.collect());
                }
                i
            }
        };
        &mut self.values[i]
    }
}

/// A small multiplicative hasher for integer keys (no DoS concern: keys
/// are our own object and node numbers).
#[derive(Default, Clone, Copy)]
pub(super) struct IntHasher(pub(super) u64);

impl std::hash::Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

pub(super) type IntHashBuild = std::hash::BuildHasherDefault<IntHasher>;

pub(super) struct Printer<'t> {
    pub(super) opts: &'t TextOptions,
    pub(super) clock: Clock,
    pub(super) last_ns: Option<i64>,
    pub(super) last_cycles: Option<u64>,
    pub(super) warnbuf: Vec<u8>,
    pub(super) trace_rank: Vec<u32>,
    pub(super) begin: Option<TimeSpec>,
    pub(super) end: Option<TimeSpec>,
    pub(super) begin_ns: Option<i64>,
    pub(super) end_ns: Option<i64>,
    /// babeltrace2's per-event-class event object pools (LIFO).
    pub(super) pools: Vec<Vec<u32>>,
    pub(super) next_obj: u32,
    /// Recycled body buffers.
    pub(super) spare: Vec<Vec<u8>>,
    pub(super) last_returned: i64,
    /// `last_returned` before the last message (the live printer's check).
    pub(super) prev_returned: i64,
    /// A message after `--end` was seen: nothing more is printed.
    pub(super) reached_end: bool,
    pub(super) stale: Stale,
    /// The fixed part of each event class's line head, by pool and by
    /// whether it starts the line (see [`static_head`]).
    pub(super) heads: Vec<Option<Vec<u8>>>,
    /// The clock options are the defaults: bracketed time of day and
    /// delta, no field names (see [`Printer::usual_head_at`]).
    pub(super) usual_head: bool,
}

impl<'t> Printer<'t> {
    pub(super) fn new(opts: &'t TextOptions, traces: &[Trace]) -> Self {
        let trace_rank = crate::mux::trace_ranks(traces);
        Printer {
            opts,
            clock: Clock::new(opts),
            last_ns: None,
            last_cycles: None,
            warnbuf: Vec::new(),
            trace_rank,
            begin: None,
            end: None,
            begin_ns: None,
            end_ns: None,
            pools: Vec::new(),
            next_obj: 0,
            spare: Vec::new(),
            last_returned: i64::MIN,
            prev_returned: i64::MIN,
            reached_end: false,
            stale: Stale::default(),
            heads: Vec::new(),
            usual_head: !opts.names.header && !opts.clock_cycles && !opts.no_delta,
        }
    }

    /// Produce the next message of a stream (babeltrace2's source
    /// iterator) onto its queue. `false` at the end.
    pub(super) fn produce(&mut self, rt: &mut StreamRun<'_>) -> Result<bool, StreamError> {
        let mk = |kind, ts| Msg {
            kind,
            ts,
            class: 0,
            cycles: 0,
            obj: 0,
            seq: 0,
            body: Body::None,
        };
        if rt.ended {
            return Ok(false);
        }
        if !rt.started {
            rt.started = true;
            let mut m = mk(MsgKind::StreamBegin, None);
            m.seq = rt.seq;
            *rt.queue.push() = m;
            return Ok(true);
        }
        if !rt.next_raw()? {
            rt.ended = true;
            return Ok(false);
        }
        let raw = &rt.chunk.items[rt.next];
        rt.next += 1;
        let m = match &raw.kind {
            &RawKind::Event { clock, class } => {
                let (body, marks) = (raw.body, raw.marks);
                let obj = self.obj(rt.pool_base + class as usize);
                let body = self.event_body(&rt.chunk, obj, body, marks);
                let ts = rt.event_ns(clock).or(Some(i64::MIN));
                // (in place, field by field)
                let seq = rt.seq;
                let m = rt.queue.push();
                m.kind = MsgKind::Event;
                m.seq = seq;
                m.ts = ts;
                m.class = class;
                m.cycles = clock;
                m.obj = obj;
                m.body = body;
                return Ok(true);
            }
            &RawKind::PacketBegin(clock) => mk(
                MsgKind::PacketBegin,
                clock.and_then(|c| clock_ns(rt.clock, c)),
            ),
            &RawKind::PacketEnd(clock) => mk(
                MsgKind::PacketEnd,
                clock.and_then(|c| clock_ns(rt.clock, c)),
            ),
            RawKind::Discarded(d) => {
                let mut m = mk(
                    if d.packets {
                        MsgKind::DiscardedPackets
                    } else {
                        MsgKind::Discarded
                    },
                    d.begin.and_then(|b| clock_ns(rt.clock, b)),
                );
                m.body = Body::Notice(d.clone());
                m
            }
            &RawKind::Inactivity(clock) => {
                rt.pause = true;
                rt.inactive_until = Some(clock);
                mk(MsgKind::Inactivity, clock_ns(rt.clock, clock))
            }
            RawKind::End => {
                rt.ended = true;
                mk(MsgKind::StreamEnd, None)
            }
        };
        let mut m = m;
        m.seq = rt.seq;
        *rt.queue.push() = m;
        Ok(true)
    }

    /// An event object from the pool of event class `pool` (babeltrace2's
    /// per-class object pools, LIFO).
    #[inline]
    pub(super) fn obj(&mut self, pool: usize) -> u32 {
        if self.pools.len() <= pool {
            self.pools.resize(pool + 1, Vec::new());
        }
        match self.pools[pool].pop() {
            Some(o) => o,
            None => {
                self.next_obj += 1;
                self.next_obj - 1
            }
        }
    }

    /// The body of an event whose text is `c.bytes[body]` and whose string
    /// marks are `c.marks[marks]`, printed by event object `obj`.
    ///
    /// babeltrace2's stale strings: an empty string shows the last
    /// non-empty value of the same field object (whose earlier uses are
    /// all printed: it was back in its pool).
    #[inline]
    pub(super) fn event_body(
        &mut self,
        c: &Chunk,
        obj: u32,
        (b0, b1): (u32, u32),
        marks: (u32, u32),
    ) -> Body {
        let (b0, b1) = (b0 as usize, b1 as usize);
        let mut own: Option<Vec<u8>> = None;
        let mut last = b0;
        let marks = &c.marks[marks.0 as usize..marks.1 as usize];
        if !marks.is_empty() {
            let objs = &mut self.stale.objs;
            if objs.len() <= obj as usize {
                objs.resize_with(obj as usize + 1, ObjStrings::default);
            }
            let strings = &mut objs[obj as usize];
            for (i, mk) in marks.iter().enumerate() {
                let text = &c.raw[mk.raw.0 as usize..mk.raw.1 as usize];
                let key = (mk.node, mk.elem);
                if text.is_empty() {
                    if let Some(k) = strings.find(i, key) {
                        let v = &strings.values[k];
                        if !v.is_empty() {
                            let body =
                                own.get_or_insert_with(|| self.spare.pop().unwrap_or_default());
                            body.extend_from_slice(&c.bytes[last..mk.off as usize]);
                            push_escaped(body, v);
                            last = (mk.off + mk.len) as usize;
                        }
                    }
                } else {
                    let v = strings.slot(i, key);
                    v.clear();
                    v.extend_from_slice(text);
                }
            }
        }
        match own {
            Some(mut body) => {
                body.extend_from_slice(&c.bytes[last..b1]);
                Body::Own(body)
            }
            None => Body::InChunk(b0 as u32, b1 as u32),
        }
    }

    /// Refill a stream's queue with up to one batch.
    pub(super) fn refill(&mut self, rt: &mut StreamRun<'_>) {
        if rt.error.is_some() {
            return;
        }
        for _ in 0..BATCH {
            match self.produce(rt) {
                Ok(true) if std::mem::take(&mut rt.pause) => break,
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    rt.error = Some(e);
                    break;
                }
            }
        }
    }

    /// babeltrace2's `common_muxing_compare_messages` for two queue heads
    /// with the same time (negative: `a` first).
    pub(super) fn compare(
        &self,
        traces: &[Trace],
        a: (&StreamRun<'_>, &Msg),
        b: (&StreamRun<'_>, &Msg),
    ) -> i64 {
        let head = |(rt, m): (&StreamRun<'_>, &Msg)| Head {
            trace: rt.trace,
            group: rt.group,
            kind: m.kind,
            class: m.class as usize,
        };
        crate::mux::compare(traces, &self.trace_rank, head(a), head(b))
    }

    /// One message from the muxer (`muxer_msg_iter_do_next_one`) onto
    /// `batch` (`false`: none is left), or the error of a stream that
    /// failed. The batch holds the message's stream: the message stays at
    /// the front of the stream's queue (counted in [`StreamRun::taken`]) until
    /// the sink pops it.
    pub(super) fn mux_next<'d>(
        &mut self,
        traces: &'d [Trace],
        rts: &mut [StreamRun<'d>],
        active: &mut Vec<usize>,
        batch: &mut Vec<usize>,
    ) -> Result<bool, (usize, StreamError)> {
        self.fill_heads(rts, active)?;
        Ok(self.pick(traces, rts, active, batch))
    }

    /// Give every active stream a head message, refilling the empty
    /// queues; streams that have none left leave `active`.
    pub(super) fn fill_heads(
        &mut self,
        rts: &mut [StreamRun<'_>],
        active: &mut Vec<usize>,
    ) -> Result<(), (usize, StreamError)> {
        let mut i = 0;
        while i < active.len() {
            let s = active[i];
            let rt = &mut rts[s];
            if rt.queue.len() == rt.taken {
                if let Some(e) = rt.error.take() {
                    return Err((s, e));
                }
                self.refill(rt);
                if rt.queue.len() == rt.taken {
                    if let Some(e) = rt.error.take() {
                        return Err((s, e));
                    }
                    active.swap_remove(i);
                    continue;
                }
            }
            i += 1;
        }
        Ok(())
    }

    /// Of the active streams' heads, hand the first out onto `batch`
    /// (`false`: no stream is active).
    pub(super) fn pick(
        &mut self,
        traces: &[Trace],
        rts: &mut [StreamRun<'_>],
        active: &[usize],
        batch: &mut Vec<usize>,
    ) -> bool {
        let heads = active
            .iter()
            .map(|&s| (s, rts[s].head().ts.unwrap_or(self.last_returned)));
        let best = crate::mux::earliest(heads, |a, b| {
            self.compare(traces, (&rts[a], rts[a].head()), (&rts[b], rts[b].head()))
        });
        let Some((s, ts)) = best else {
            return false;
        };
        self.last_returned = ts;
        rts[s].taken += 1;
        batch.push(s);
        true
    }

    pub(super) fn run(
        &mut self,
        traces: &[Trace],
        loader: &dyn Loader,
        out: &mut dyn TextOut,
        warn: &mut dyn Write,
        summary: &mut Summary,
    ) -> Result<(), Error> {
        let nstreams: usize = traces.iter().map(|t| t.streams.len()).sum();
        // Streams are rendered on worker threads when there is a core to
        // spare (the printer thread keeps babeltrace2's order and state).
        let parallel = nstreams <= 256
            && self.opts.threads != Some(1)
            && (self.opts.threads.is_some()
                || std::thread::available_parallelism()
                    .map(|n| n.get() > 1)
                    .unwrap_or(false));
        let names = self.opts.names;
        let plans = !self.opts.no_body_plans;
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(16);
        let total_bytes: u64 = traces
            .iter()
            .flat_map(|t| t.streams.iter())
            .flat_map(|g| g.packets.iter())
            .map(|p| p.total_bytes)
            .sum();
        let forced = self.opts.threads.filter(|&n| n > 1).map(|n| n.min(16));
        let seg_bytes = self.opts.segment_bytes.unwrap_or(512 << 10).max(1);
        // Workers: one per core, shared among the streams by their bytes.
        // (Two per core left a core idle a fifth of the time on 2 cores:
        // the printer reads the segments in order, and the worker of the
        // next one shared its core with workers already far ahead; one per
        // core, 13%, and 0.93 times the wall time, in 10 alternating runs.)
        let budget = cores.max(2);
        let independent = |t: &Trace, g: &fs::StreamGroup| {
            t.prog
                .streams
                .get(g.class)
                .is_some_and(|s| s.packets_independent(&t.prog))
        };
        let workers_of = |t: &Trace, g: &fs::StreamGroup| -> usize {
            if !parallel {
                return 0;
            }
            if !independent(t, g) {
                return 1;
            }
            let share = g.packets.iter().map(|p| p.total_bytes).sum::<u64>();
            forced.unwrap_or_else(|| {
                ((budget as u64 * share).div_ceil(total_bytes.max(1)) as usize).clamp(1, budget)
            })
        };
        let all_workers: usize = traces
            .iter()
            .flat_map(|t| t.streams.iter().map(move |g| workers_of(t, g)))
            .sum();
        // Rendered chunks waiting in the channels: about 16 MB in all (a
        // chunk holds 512 lines), so that workers run ahead of the printer
        // without holding the trace's text.
        let depth = (128 / all_workers.max(1)).clamp(2, 64);
        let chunk_pool = ChunkPool::default();
        let pool = &chunk_pool;
        std::thread::scope(|sc| {
            let mut rts: Vec<StreamRun<'_>> = Vec::new();
            let mut pool_base = 0;
            for (ti, t) in traces.iter().enumerate() {
                for (gi, g) in t.streams.iter().enumerate() {
                    let clock = t
                        .prog
                        .streams
                        .get(g.class)
                        .and_then(|s| s.default_clock)
                        .and_then(|c| t.tc.clocks.get(c))
                        .map(|c| (c.frequency, c.offset_seconds, c.offset_cycles));
                    // One pool per event class: stream groups of the same
                    // class share it.
                    let base = pool_base
                        + t.prog.streams[..g.class.min(t.prog.streams.len())]
                            .iter()
                            .map(|s| s.events.len())
                            .sum::<usize>();
                    // Workers for this stream: by its share of the data,
                    // when its packets can be decoded independently.
                    let k = workers_of(t, g).max(1);
                    let segs = segments(&g.packets, seg_bytes);
                    let feed = if parallel && k > 1 && segs.len() > 1 {
                        let mut workers = Vec::with_capacity(k);
                        for w in 0..k {
                            let (tx, rx) = std::sync::mpsc::sync_channel(depth);
                            let segs = segs.clone();
                            sc.spawn(move || {
                                segment_worker(t, loader, g, names, plans, segs, w, k, tx, pool)
                            });
                            workers.push(rx);
                        }
                        Feed::Segments {
                            workers,
                            cur: 0,
                            count: segs.len(),
                        }
                    } else if parallel {
                        let renderer =
                            Renderer::new(t, g, names, 0..g.packets.len(), loader, plans);
                        let (tx, rx) = std::sync::mpsc::sync_channel(depth);
                        sc.spawn(move || render_worker(renderer, tx, pool));
                        Feed::Remote(rx)
                    } else {
                        Feed::Local(Box::new(Renderer::new(
                            t,
                            g,
                            names,
                            0..g.packets.len(),
                            loader,
                            plans,
                        )))
                    };
                    rts.push(StreamRun {
                        feed,
                        chunk: Chunk::default(),
                        seq: 0,
                        held: Held::new(),
                        next: 0,
                        trace: ti,
                        group: gi,
                        clock,
                        base: clock.and_then(|(f, s, o)| Some((f, fs::clock_base_ns(f, s, o)?))),
                        pool_base: base,
                        queue: Ring::with_capacity(2 * BATCH),
                        taken: 0,
                        started: false,
                        ended: false,
                        pause: false,
                        inactive_until: None,
                        error: None,
                        pool: Some(pool),
                    });
                }
                pool_base += t.prog.streams.iter().map(|s| s.events.len()).sum::<usize>();
            }
            // Dropping `rts` (its receivers) at the end stops the workers.
            self.main_loop(traces, &mut rts, out, warn, summary)
        })
    }

    pub(super) fn main_loop<'d>(
        &mut self,
        traces: &'d [Trace],
        rts: &mut [StreamRun<'d>],
        out: &mut dyn TextOut,
        warn: &mut dyn Write,
        summary: &mut Summary,
    ) -> Result<(), Error> {
        let mut active: Vec<usize> = (0..rts.len()).collect();
        let block = out.block_size().max(1 << 12);
        let mut obuf: Vec<u8> = Vec::with_capacity(block + (block >> 2));
        let mut batch: Vec<usize> = Vec::with_capacity(BATCH);
        let mut failed: Option<Error> = None;
        'outer: loop {
            // The sink asks the muxer for a batch...
            batch.clear();
            let mut err = None;
            while batch.len() < BATCH {
                match self.mux_next(traces, rts, &mut active, &mut batch) {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(e) => {
                        err = Some(e);
                        break;
                    }
                }
            }
            if batch.is_empty() && err.is_none() {
                break;
            }
            // ... and prints it, releasing each message after printing.
            for &s in &batch {
                if self.reached_end {
                    break;
                }
                let rt = &mut rts[s];
                let src = rt.src();
                let chunks = (&rt.chunk, rt.seq, &rt.held);
                let Some(m) = rt.queue.front_mut() else {
                    continue;
                };
                self.sink(traces, src, chunks, m, &mut obuf, summary);
                rt.queue.pop_front();
                rt.taken -= 1;
                if !rt.held.is_empty() {
                    rt.release();
                }
                if !self.warnbuf.is_empty() {
                    out.block(&mut obuf).map_err(io)?;
                    warn.write_all(&self.warnbuf).map_err(io)?;
                    self.warnbuf.clear();
                }
            }
            if obuf.len() >= block {
                out.block(&mut obuf).map_err(io)?;
            }
            if self.reached_end {
                break;
            }
            if let Some((s, e)) = err {
                let rt = &mut rts[s];
                let error = stream_error(&traces[rt.trace], rt.group, &e);
                if self.opts.strict {
                    failed = Some(error);
                    break 'outer;
                }
                summary.damaged += 1;
                out.block(&mut obuf).map_err(io)?;
                writeln!(
                    warn,
                    "tracemux: warning: {error} (rest of this stream skipped)"
                )
                .map_err(io)?;
                rt.ended = true;
                rt.error = None;
            }
        }
        out.block(&mut obuf).map_err(io)?;
        warn.write_all(&self.warnbuf).map_err(io)?;
        self.warnbuf.clear();
        out.flush().map_err(io)?;
        match failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    pub(super) fn in_range(&mut self, ns: i64) -> (bool, bool) {
        // Resolve time-of-day bounds with the date of the first message.
        if self.begin_ns.is_none() {
            if let Some(b) = self.begin {
                self.begin_ns = Some(resolve_tod(b, ns, &self.clock));
            }
        }
        if self.end_ns.is_none() {
            if let Some(e) = self.end {
                self.end_ns = Some(resolve_tod(e, ns, &self.clock));
            }
        }
        let before = self.begin_ns.is_some_and(|b| ns < b);
        let after = self.end_ns.is_some_and(|e| ns > e);
        (before, after)
    }

    /// Handle one message as the pretty sink does, then release it.
    pub(super) fn sink(
        &mut self,
        traces: &[Trace],
        rt: StreamRef,
        (chunk, seq, held): (&Chunk, u64, &Held),
        m: &mut Msg,
        obuf: &mut Vec<u8>,
        summary: &mut Summary,
    ) {
        let t = &traces[rt.trace];
        // babeltrace2's trimmer: drop what comes before --begin; stop
        // everything at the first message after --end; a discarded-data
        // range that passes --end is cut there (and loses its count).
        let mut notice = match &m.body {
            Body::Notice(d) => Some(**d),
            _ => None,
        };
        let mut trimmed = false;
        if self.begin.is_some() || self.end.is_some() {
            if let Some(ns) = m.ts {
                let (before, after) = self.in_range(ns);
                if after {
                    self.reached_end = true;
                }
                trimmed = before || after;
                if let (Some(end), Some(d)) = (self.end_ns, notice.as_mut()) {
                    let e = d.end.and_then(|e| clock_ns(rt.clock, e));
                    if !trimmed && e.is_some_and(|e| e > end) {
                        d.end = rt.clock.and_then(|c| raw_from_ns(c, end));
                        d.count = None;
                    }
                }
            }
        }
        match m.kind {
            MsgKind::Discarded | MsgKind::DiscardedPackets if !trimmed => {
                if let Some(d) = notice {
                    self.discarded(t, rt, d);
                    summary.discarded_notices += 1;
                }
            }
            MsgKind::Event => {
                let class = m.class as usize;
                let pool = rt.pool_base + class;
                if !trimmed {
                    let has_clock = rt.clock.is_some();
                    let ns = m.ts.unwrap_or(i64::MIN);
                    let start_line = self.head(obuf, has_clock, m.cycles, ns);
                    self.fixed_head(obuf, t, rt.group, class, pool, start_line);
                    obuf.extend_from_slice(body_of(chunk, seq, held, m));
                    obuf.push(b'\n');
                    summary.events += 1;
                }
                self.pools[pool].push(m.obj);
                if let Body::Own(b) = &mut m.body {
                    let mut b = std::mem::take(b);
                    b.clear();
                    self.spare.push(b);
                }
            }
            _ => {}
        }
    }

    /// The time part of the line head (babeltrace2's
    /// `print_event_header`) onto `out`; whether what follows starts the
    /// line (no `, ` before it).
    pub(super) fn head(
        &mut self,
        out: &mut Vec<u8>,
        has_clock: bool,
        cycles: u64,
        ns: i64,
    ) -> bool {
        let o = self.opts;
        let names = o.names.header;
        if has_clock && self.usual_head && self.usual_head_at(out, ns) {
            return true;
        }
        if has_clock {
            if names {
                out.extend_from_slice(b"timestamp = ");
            } else {
                out.push(b'[');
            }
            if o.clock_cycles {
                put_padded(out, cycles, 20);
            } else {
                self.clock.push(out, ns, &mut self.warnbuf);
            }
            if !names {
                out.extend_from_slice(b"] ");
            }
            if !o.no_delta {
                if names {
                    out.extend_from_slice(b", delta = ");
                } else {
                    out.push(b'(');
                }
                if o.clock_cycles {
                    match self.last_cycles {
                        Some(l) => {
                            out.push(b'+');
                            put_padded(out, cycles.wrapping_sub(l), 12);
                        }
                        None => out.extend_from_slice(b"+????????????"),
                    }
                } else {
                    match self.last_ns {
                        Some(l) => {
                            let d = (ns as u64).wrapping_sub(l as u64);
                            out.push(b'+');
                            tracemux_core::digits::put_u64(out, d / 1_000_000_000);
                            out.push(b'.');
                            put_padded(out, d % 1_000_000_000, 9);
                        }
                        None => out.extend_from_slice(b"+?.?????????"),
                    }
                }
                if !names {
                    out.extend_from_slice(b") ");
                }
            }
            if o.clock_cycles {
                self.last_cycles = Some(cycles);
            } else {
                self.last_ns = Some(ns);
            }
            return !names;
        }
        true
    }

    /// The usual time part of a line head, `[HH:MM:SS.NNNNNNNNN]
    /// (+S.NNNNNNNNN) `, written at once when `ns` is within the second
    /// of the time before and less than ten seconds after it (`false`:
    /// nothing written, [`Printer::head`] writes it). Only with the
    /// default clock options ([`Printer::usual_head`]).
    #[inline(always)]
    pub(super) fn usual_head_at(&mut self, out: &mut Vec<u8>, ns: i64) -> bool {
        const E9: u64 = 1_000_000_000;
        const E8: u64 = 100_000_000;
        let Some(last) = self.last_ns else {
            return false;
        };
        let d = (ns as u64).wrapping_sub(last as u64);
        let Some((day, k)) = self.clock.cached(ns).filter(|_| d < 10 * E9) else {
            return false;
        };
        // The room for the longest head, written in place (fixed places
        // after the time of day), then cut back to what was written.
        const ROOM: usize = 64;
        const TAIL: usize = 27;
        let l = out.len();
        out.extend_from_slice(&[0; ROOM]);
        let Ok(at) = <&mut [u8; ROOM]>::try_from(&mut out[l..l + ROOM]) else {
            // (cannot be: the slice is ROOM long)
            out.truncate(l);
            return false;
        };
        at[0] = b'[';
        at[1..33].copy_from_slice(day);
        let Ok(t) = <&mut [u8; TAIL]>::try_from(&mut at[1 + k..1 + k + TAIL]) else {
            out.truncate(l);
            return false;
        };
        let n = ns as u64 % E9;
        t[0] = b'.';
        t[1] = b'0' + (n / E8) as u8;
        t[2..10].copy_from_slice(&digits::eight_digits(n % E8));
        t[10..14].copy_from_slice(b"] (+");
        t[14] = b'0' + (d / E9) as u8;
        t[15] = b'.';
        let dn = d % E9;
        t[16] = b'0' + (dn / E8) as u8;
        t[17..25].copy_from_slice(&digits::eight_digits(dn % E8));
        t[25..27].copy_from_slice(b") ");
        out.truncate(l + 1 + k + TAIL);
        self.last_ns = Some(ns);
        true
    }

    /// The rest of the line head, after the time (see [`static_head`]).
    pub(super) fn fixed_head(
        &mut self,
        out: &mut Vec<u8>,
        t: &Trace,
        group: usize,
        class: usize,
        pool: usize,
        start_line: bool,
    ) {
        let o = self.opts;
        let slot = pool * 2 + start_line as usize;
        if self.heads.len() <= slot {
            self.heads.resize(slot + 1, None);
        }
        let fixed = self.heads[slot].get_or_insert_with(|| {
            let mut v = Vec::new();
            static_head(o, t, group, class, start_line, &mut v);
            v
        });
        out.extend_from_slice(fixed);
    }

    /// babeltrace2's discarded events/packets warning.
    pub(super) fn discarded(&mut self, t: &Trace, rt: StreamRef, d: Discarded) {
        let g = &t.streams[rt.group];
        let mut w = std::mem::take(&mut self.warnbuf);
        let what = if d.packets { "packet" } else { "event" };
        match d.count {
            None => {
                w.extend_from_slice(b"WARNING: Tracer may have discarded ");
                w.extend_from_slice(what.as_bytes());
                w.push(b's');
            }
            Some(n) => {
                w.extend_from_slice(b"WARNING: Tracer discarded ");
                let mut b = itoa::Buffer::new();
                w.extend_from_slice(b.format(n).as_bytes());
                w.push(b' ');
                w.extend_from_slice(what.as_bytes());
                if n != 1 {
                    w.push(b's');
                }
            }
        }
        w.push(b' ');
        let range = match (d.begin, d.end) {
            (Some(b), Some(e)) => clock_ns(rt.clock, b).zip(clock_ns(rt.clock, e)),
            _ => None,
        };
        let mut extra = Vec::new();
        match range {
            Some((b, e)) => {
                w.extend_from_slice(b"between [");
                self.clock.push(&mut w, b, &mut extra);
                w.extend_from_slice(b"] and [");
                self.clock.push(&mut w, e, &mut extra);
                w.push(b']');
            }
            None => w.extend_from_slice(b"(unknown time range)"),
        }
        w.extend_from_slice(b" in trace \"");
        w.extend_from_slice(if t.anonymous {
            b"(unknown)"
        } else {
            t.name.as_bytes()
        });
        w.extend_from_slice(b"\" ");
        match t.tc.uuid {
            Some(u) => {
                w.extend_from_slice(b"(UUID: ");
                w.extend_from_slice(uuid_string(&u).as_bytes());
                w.extend_from_slice(b") ");
            }
            None => w.extend_from_slice(b"(no UUID) "),
        }
        w.extend_from_slice(b"within stream \"");
        w.extend_from_slice(g.name.as_bytes());
        w.extend_from_slice(b"\" (stream class ID: ");
        let mut b = itoa::Buffer::new();
        w.extend_from_slice(b.format(g.class_id).as_bytes());
        w.extend_from_slice(b", stream ID: ");
        w.extend_from_slice(b.format(g.id).as_bytes());
        w.extend_from_slice(b").\n");
        // A negative-time warning (if any) goes before the line, as
        // babeltrace2 prints it while formatting.
        if !extra.is_empty() {
            let mut x = extra;
            x.extend_from_slice(&w);
            w = x;
        }
        self.warnbuf = w;
    }
}

/// The part of an event's line head that is the same for every event of
/// its class (`print_event_header` after the time): trace name, host and
/// domain fields, log level, EMF URI and the event name.
pub(super) fn static_head(
    o: &TextOptions,
    t: &Trace,
    group: usize,
    class: usize,
    start_line: bool,
    out: &mut Vec<u8>,
) {
    let names = o.names.header;
    let tc = &t.tc;
    let mut dom = false;
    let sep = |out: &mut Vec<u8>, start_line: bool| {
        if !start_line {
            out.extend_from_slice(b", ");
        }
    };
    if o.fields.trace && !t.anonymous {
        sep(out, start_line);
        if names {
            out.extend_from_slice(b"trace = ");
        }
        out.extend_from_slice(t.name.as_bytes());
        if names {
            out.extend_from_slice(b", ");
        }
    }
    let env_field = |out: &mut Vec<u8>, dom: &mut bool, key: &str, label: &str| {
        if let Some(EnvValue::Str(s)) = tc.env(key) {
            sep(out, start_line);
            if names {
                out.extend_from_slice(label.as_bytes());
                out.extend_from_slice(b" = ");
            } else if *dom {
                out.push(b':');
            }
            out.extend_from_slice(s.as_bytes());
            *dom = true;
        }
    };
    if o.fields.hostname {
        if let Some(EnvValue::Str(s)) = tc.env("hostname") {
            sep(out, start_line);
            if names {
                out.extend_from_slice(b"trace:hostname = ");
            }
            out.extend_from_slice(s.as_bytes());
            dom = true;
        }
    }
    if o.fields.domain {
        env_field(out, &mut dom, "domain", "trace:domain");
    }
    if o.fields.procname {
        env_field(out, &mut dom, "procname", "trace:procname");
    }
    if o.fields.vpid {
        if let Some(EnvValue::Int(v)) = tc.env("vpid") {
            sep(out, start_line);
            if names {
                out.extend_from_slice(b"trace:vpid = ");
            } else if dom {
                out.push(b':');
            }
            out.push(b'(');
            let mut b = itoa::Buffer::new();
            out.extend_from_slice(b.format(*v).as_bytes());
            out.push(b')');
            dom = true;
        }
    }
    let sc = t
        .prog
        .streams
        .get(t.streams[group].class)
        .and_then(|s| tc.stream_class(s.id));
    let ec = sc.and_then(|s| s.event_classes.get(class));
    if o.fields.loglevel {
        if let Some(l) = ec.and_then(|e| e.log_level) {
            if (0..=14).contains(&l) {
                sep(out, start_line);
                if names {
                    out.extend_from_slice(b"loglevel = ");
                } else if dom {
                    out.push(b':');
                }
                out.extend_from_slice(LOG_LEVELS[l as usize].as_bytes());
                out.extend_from_slice(b" (");
                let mut b = itoa::Buffer::new();
                out.extend_from_slice(b.format(l).as_bytes());
                out.push(b')');
                dom = true;
            }
        }
    }
    if o.fields.emf {
        if let Some(u) = ec.and_then(|e| e.emf_uri.as_deref()) {
            sep(out, start_line);
            if names {
                out.extend_from_slice(b"model.emf.uri = ");
            } else if dom {
                out.push(b':');
            }
            out.extend_from_slice(u.as_bytes());
            dom = true;
        }
    }
    if dom && !names {
        out.push(b' ');
    }
    if !start_line {
        out.extend_from_slice(b", ");
    }
    if names {
        out.extend_from_slice(b"name = ");
    }
    match ec.and_then(|e| e.name.as_deref()) {
        Some(n) => out.extend_from_slice(n.as_bytes()),
        None => out.extend_from_slice(b"<unknown>"),
    }
    out.extend_from_slice(if names { b", " } else { b": " });
}

pub(super) fn resolve_tod(t: TimeSpec, first_ns: i64, clock: &Clock) -> i64 {
    match t {
        TimeSpec::Abs(v) => v,
        TimeSpec::OfDay(tod) => {
            // The date of the first message, in the zone used to print.
            let secs = first_ns.div_euclid(1_000_000_000);
            let off = if clock.gmt {
                0
            } else {
                clock.zone.offset(secs) as i64
            };
            let local = secs + off;
            let midnight = local - local.rem_euclid(86_400);
            (midnight - off) * 1_000_000_000 + tod
        }
    }
}

/// babeltrace2's names of the log levels (TSDL's), by level.
pub(super) const LOG_LEVELS: [&str; 15] = [
    "TRACE_EMERG",
    "TRACE_ALERT",
    "TRACE_CRIT",
    "TRACE_ERR",
    "TRACE_WARNING",
    "TRACE_NOTICE",
    "TRACE_INFO",
    "TRACE_DEBUG_SYSTEM",
    "TRACE_DEBUG_PROGRAM",
    "TRACE_DEBUG_PROCESS",
    "TRACE_DEBUG_MODULE",
    "TRACE_DEBUG_UNIT",
    "TRACE_DEBUG_FUNCTION",
    "TRACE_DEBUG_LINE",
    "TRACE_DEBUG",
];
