//! babeltrace2's text output of traces whose packets arrive while they
//! are printed: a live LTTng session (`crate::live`), or a trace directory
//! still being written (`--follow`).
//!
//! The printer is the one of finished traces ([`super::Printer`]: its
//! muxer order, clocks, event object pools and stale strings, warnings);
//! only where the packets come from differs. A [`PacketSource`] hands out
//! the packets of each data stream in order and may wait for them; it may
//! also say that a stream is quiet up to some time (a relayd's beacon),
//! which lets the muxer print the other streams' events before that time
//! without waiting, and it may add traces (new metadata) and streams at
//! any time. Before the muxer picks a message, every stream has either a
//! message or a known quiet time, and the source has told about every
//! stream it knows: so nothing is printed out of order, and nothing twice.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::rc::Rc;
use std::sync::Arc;

use tracemux_core::{Error, ErrorKind};

use super::{
    io, parse_time, plan, stream_error, Body, Chunk, Feed, Held, Names, Printer, Raw, RawKind,
    Ring, StreamRun, Summary, TextOptions, TextOut, TimeSpec, BATCH,
};
use crate::decode::{PacketInfo, Program};
use crate::fs::{Quirks, StreamGroup, Trace};
use crate::ir::TraceClass;
use crate::mux::MsgKind;
use crate::stream::StreamDecoder;

/// The metadata of a trace, as known at some point of a live session
/// (a newer one replaces it when metadata is appended).
#[derive(Debug)]
pub struct LiveTrace {
    pub tc: TraceClass,
    pub prog: Program,
    pub quirks: Quirks,
    /// babeltrace2's name of the trace (`None`: unnamed, as live traces).
    pub name: Option<String>,
}

impl LiveTrace {
    /// Compile `tc`.
    pub fn new(tc: TraceClass) -> Result<LiveTrace, Error> {
        let prog = Program::compile(&tc).map_err(|e| Error::invalid(e.0, "metadata", 0))?;
        let quirks = crate::fs::quirks_of(&tc);
        Ok(LiveTrace {
            tc,
            prog,
            quirks,
            name: None,
        })
    }
}

/// What a source says of a data stream when asked for its next packet.
pub enum LiveItem {
    /// The stream's next packet (one or more CTF packets), to be decoded
    /// with `trace`.
    Packet {
        bytes: Vec<u8>,
        trace: Arc<LiveTrace>,
    },
    /// No packet yet; the stream is quiet up to this value of its clock.
    Inactive(u64),
    /// The stream ended (or the source failed or was interrupted: see
    /// [`PacketSource::take_error`]).
    End,
}

/// A data stream a source knows of.
#[derive(Debug, Clone)]
pub struct StreamInfo {
    /// Index of its trace in [`PacketSource::traces`].
    pub trace: usize,
    /// babeltrace2's name of the stream.
    pub name: String,
    /// Its ID when its packets carry no `stream_instance_id`.
    pub fallback_id: u64,
}

/// Packets that arrive while they are printed.
pub trait PacketSource {
    /// The traces whose metadata is known (a trace's entry is replaced by
    /// a newer one when its metadata grows; traces are never removed).
    fn traces(&self) -> &[Arc<LiveTrace>];
    /// The data streams known (never removed; only streams of known
    /// traces).
    fn streams(&self) -> &[StreamInfo];
    /// The next packet of stream `s`, waiting for it as long as the stream
    /// is neither quiet nor ended. May learn of new traces and streams.
    fn next(&mut self, s: usize) -> LiveItem;
    /// No stream is left: wait until there are new streams (`true`) or the
    /// source ends (`false`).
    fn wait(&mut self) -> bool;
    /// The error that ended the source, if any (taken once).
    fn take_error(&mut self) -> Option<Box<dyn std::error::Error + Send + Sync>>;
    /// The source ended because the user interrupted it.
    fn interrupted(&self) -> bool {
        false
    }
    /// Where trace `t` (as in [`PacketSource::traces`]) lives, as a path
    /// of the source (a relayd's path of the trace; empty if none).
    fn trace_path(&self, _t: usize) -> &str {
        ""
    }
}

/// Why a live report stopped short.
#[derive(Debug, thiserror::Error)]
pub enum LiveReportError {
    /// A trace could not be printed.
    #[error(transparent)]
    Trace(#[from] Error),
    /// The source failed (network, relayd, files).
    #[error(transparent)]
    Source(Box<dyn std::error::Error + Send + Sync>),
}

/// A live stream's feed: the packets of stream `stream` of the source,
/// rendered as they arrive.
pub(super) struct LiveFeed<'d> {
    src: &'d RefCell<dyn PacketSource + 'd>,
    stream: usize,
    prev: Option<PacketInfo>,
    names: Names,
    use_plans: bool,
    plans: plan::PlanTable,
    plans_of: Option<Arc<LiveTrace>>,
    /// Stream class position and instance ID of its first packet.
    pub(super) first: Option<(usize, Option<u64>)>,
    pub(super) ended: bool,
    /// Its trace and the printer's event object pools.
    trace: usize,
    pools: Rc<RefCell<Pools>>,
    class: Option<usize>,
    /// The first pool of its stream class, for the metadata now known.
    pub(super) pool_base: Option<usize>,
}

impl LiveFeed<'_> {
    /// Render what the stream has next into `c` (emptied by the caller).
    pub(super) fn fill(&mut self, c: &mut Chunk) {
        let item = self.src.borrow_mut().next(self.stream);
        let none = (0, 0);
        match item {
            LiveItem::Packet { bytes, trace } => self.render(&trace, &bytes, c),
            LiveItem::Inactive(clock) => c.items.push(Raw {
                kind: RawKind::Inactivity(clock),
                body: none,
                marks: none,
            }),
            LiveItem::End => {
                self.ended = true;
                c.items.push(Raw {
                    kind: RawKind::End,
                    body: none,
                    marks: none,
                });
            }
        }
    }

    fn render(&mut self, t: &Arc<LiveTrace>, bytes: &[u8], c: &mut Chunk) {
        let (packets, err) = crate::stream::index_file(&t.prog, t.tc.uuid, 0, bytes);
        if let Some(e) = err {
            c.error = Some(e);
            return;
        }
        if self.class.is_none() {
            self.first = packets.first().map(|p| (p.stream, p.info.stream_id));
            self.class = packets.first().map(|p| p.stream);
        }
        if let Some(class) = self.class {
            let events = t.prog.streams.get(class).map_or(0, |s| s.events.len());
            self.pool_base = Some(self.pools.borrow_mut().base(self.trace, class, events));
        }
        if !self.plans_of.as_ref().is_some_and(|p| Arc::ptr_eq(p, t)) {
            self.plans.clear();
            self.plans_of = Some(t.clone());
        }
        let mut dec = StreamDecoder::new(&t.prog, t.tc.uuid, vec![bytes], packets);
        dec.set_quirks(t.quirks.lttng_crash, t.quirks.lttng_event_after_packet);
        dec.set_previous(self.prev);
        let mut r = super::Renderer::with_decoder(dec, &t.prog, self.names, self.use_plans);
        r.plans = std::mem::take(&mut self.plans);
        r.fill(c, usize::MAX);
        if matches!(c.items.last().map(|i| &i.kind), Some(RawKind::End)) {
            c.items.pop();
        }
        self.prev = r.dec.current_packet().map(|p| p.info).or(self.prev);
        self.plans = std::mem::take(&mut r.plans);
    }
}

/// Event object pools of the live printer: a range of pool indices per
/// (trace, stream class), grown when the metadata adds event classes.
#[derive(Default)]
struct Pools {
    bases: HashMap<(usize, usize), (usize, usize)>,
    next: usize,
}

impl Pools {
    fn base(&mut self, trace: usize, class: usize, events: usize) -> usize {
        let next = &mut self.next;
        let e = self.bases.entry((trace, class)).or_insert_with(|| {
            let room = (events * 2).max(64);
            *next += room;
            (*next - room, room)
        });
        if events > e.1 {
            let room = events * 2;
            *e = (*next, room);
            *next += room;
        }
        e.0
    }
}

fn parse_bound(v: &Option<String>, what: &str) -> Result<Option<TimeSpec>, Error> {
    v.as_deref()
        .map(|s| {
            parse_time(s)
                .ok_or_else(|| Error::invalid(format!("invalid {what} time `{s}`"), "options", 0))
        })
        .transpose()
}

/// Print what `src` delivers, as babeltrace2 prints a live session, until
/// the source ends (or `--end` is passed). Event lines go to `out`
/// (flushed whenever the printer is about to wait), warnings to `warn`.
pub fn report_live<'d>(
    src: &'d RefCell<dyn PacketSource + 'd>,
    opts: &TextOptions,
    out: &mut dyn TextOut,
    warn: &mut dyn Write,
) -> Result<Summary, LiveReportError> {
    let begin = parse_bound(&opts.begin, "--begin")?;
    let end = parse_bound(&opts.end, "--end")?;
    let mut summary = Summary::default();
    let mut traces: Vec<Trace> = Vec::new();
    let mut known: Vec<Arc<LiveTrace>> = Vec::new();
    let mut p = Printer::new(opts, &traces);
    p.begin = begin;
    p.end = end;
    let mut rts: Vec<StreamRun<'d>> = Vec::new();
    let mut active: Vec<usize> = Vec::new();
    let pools = Rc::new(RefCell::new(Pools::default()));
    let mut obuf: Vec<u8> = Vec::new();
    let block = out.block_size().max(1 << 12);
    let mut batch = Vec::with_capacity(1);
    let result = 'outer: loop {
        // The sink asks the muxer for a batch (as for finished traces: the
        // event objects held by a batch are what babeltrace2's pools and
        // stale strings depend on)...
        batch.clear();
        let mut damage = None;
        let mut stop: Option<Result<(), LiveReportError>> = None;
        while batch.len() < BATCH {
            // New traces, metadata and streams first: the muxer must know
            // every stream before it picks.
            sync(
                src,
                opts,
                &pools,
                &mut traces,
                &mut known,
                &mut rts,
                &mut active,
                &mut p,
            );
            // (the printer may wait now: what is printed goes out first)
            if rts_need_refill(&rts, &active) && !obuf.is_empty() {
                out.block(&mut obuf).map_err(io)?;
                out.flush().map_err(io)?;
            }
            if let Err(e) = p.fill_heads(&mut rts, &mut active) {
                damage = Some(e);
                break;
            }
            if let Some(e) = src.borrow_mut().take_error() {
                stop = Some(Err(LiveReportError::Source(e)));
                break;
            }
            if src.borrow().interrupted() {
                stop = Some(Ok(()));
                break;
            }
            if grew(src, &known, &rts) {
                continue;
            }
            first_packets(&mut traces, &mut rts);
            if active.is_empty() {
                break;
            }
            if !p.pick(&traces, &mut rts, &active, &mut batch) {
                break;
            }
            // babeltrace2's lttng-live: a message older than the last one
            // returned is an error, but for discarded-data notices that
            // begin before the stream's last quiet time, which begin there
            // instead.
            let s = batch[batch.len() - 1];
            if let Err(e) = in_order(&traces, &mut rts[s], &mut p) {
                stop = Some(Err(e));
                break;
            }
        }
        // ... and prints it, releasing each message after printing.
        for &s in &batch {
            if p.reached_end {
                break;
            }
            let rt = &mut rts[s];
            let src_of = rt.src();
            let chunks = (&rt.chunk, rt.seq, &rt.held);
            let Some(m) = rt.queue.front_mut() else {
                continue;
            };
            p.sink(&traces, src_of, chunks, m, &mut obuf, &mut summary);
            rt.queue.pop_front();
            rt.taken -= 1;
            if !rt.held.is_empty() {
                rt.release();
            }
            if !p.warnbuf.is_empty() {
                out.block(&mut obuf).map_err(io)?;
                out.flush().map_err(io)?;
                warn.write_all(&p.warnbuf).map_err(io)?;
                p.warnbuf.clear();
            }
        }
        if obuf.len() >= block {
            out.block(&mut obuf).map_err(io)?;
        }
        if p.reached_end {
            break Ok(());
        }
        if let Some(r) = stop {
            break r;
        }
        if let Some((s, e)) = damage {
            let rt = &mut rts[s];
            let error = stream_error(&traces[rt.trace], rt.group, &e);
            if opts.strict {
                break Err(LiveReportError::Trace(error));
            }
            summary.damaged += 1;
            out.block(&mut obuf).map_err(io)?;
            out.flush().map_err(io)?;
            writeln!(
                warn,
                "tracemux: warning: {error} (rest of this stream skipped)"
            )
            .map_err(io)?;
            rt.ended = true;
            rt.error = None;
            continue;
        }
        if active.is_empty() {
            out.block(&mut obuf).map_err(io)?;
            out.flush().map_err(io)?;
            if src.borrow_mut().wait() {
                continue 'outer;
            }
            if let Some(e) = src.borrow_mut().take_error() {
                break 'outer Err(LiveReportError::Source(e));
            }
            break 'outer Ok(());
        }
    };
    out.block(&mut obuf).map_err(io)?;
    warn.write_all(&p.warnbuf).map_err(io)?;
    out.flush().map_err(io)?;
    result.map(|()| summary)
}

/// The check of [`report_live`] on the message just handed out by
/// stream `rt`.
fn in_order(
    traces: &[Trace],
    rt: &mut StreamRun<'_>,
    p: &mut Printer<'_>,
) -> Result<(), LiveReportError> {
    let before = p.prev_returned;
    p.prev_returned = p.last_returned;
    let (clock, until) = (rt.clock, rt.inactive_until);
    let (t, g) = (rt.trace, rt.group);
    let m = rt.queue.get_mut(rt.taken - 1);
    let Some(ts) = m.ts else {
        return Ok(());
    };
    if ts >= before || m.kind == MsgKind::Inactivity {
        return Ok(());
    }
    let quiet = until.and_then(|c| super::clock_ns(clock, c));
    match (&mut m.body, quiet) {
        (Body::Notice(d), Some(q)) if q > ts => {
            d.begin = until;
            m.ts = Some(q);
            p.last_returned = q;
            p.prev_returned = q;
            Ok(())
        }
        _ => Err(LiveReportError::Trace(Error::new(
            ErrorKind::Invalid(format!(
                "stream \"{}\": a message at {ts} ns after one at {before} ns",
                traces[t].streams[g].name
            )),
            "live",
            0,
        ))),
    }
}

/// Whether an active live stream has nothing queued (its refill may wait).
fn rts_need_refill(rts: &[StreamRun<'_>], active: &[usize]) -> bool {
    active
        .iter()
        .any(|&s| rts[s].queue.len() == rts[s].taken && matches!(rts[s].feed, Feed::Live(_)))
}

/// Whether the source knows traces or streams the printer does not.
fn grew(
    src: &RefCell<dyn PacketSource + '_>,
    known: &[Arc<LiveTrace>],
    rts: &[StreamRun<'_>],
) -> bool {
    let s = src.borrow();
    let t = s.traces();
    s.streams().len() > rts.len()
        || t.len() > known.len()
        || t.iter().zip(known).any(|(a, b)| !Arc::ptr_eq(a, b))
}

/// Take in the source's new traces, metadata and streams.
#[allow(clippy::too_many_arguments)]
fn sync<'d>(
    src: &'d RefCell<dyn PacketSource + 'd>,
    opts: &TextOptions,
    pools: &Rc<RefCell<Pools>>,
    traces: &mut Vec<Trace>,
    known: &mut Vec<Arc<LiveTrace>>,
    rts: &mut Vec<StreamRun<'d>>,
    active: &mut Vec<usize>,
    p: &mut Printer<'_>,
) {
    let s = src.borrow();
    let mut changed = false;
    for (i, lt) in s.traces().iter().enumerate() {
        if i < known.len() {
            if Arc::ptr_eq(&known[i], lt) {
                continue;
            }
            let t = &mut traces[i];
            t.tc = lt.tc.clone();
            t.prog = lt.prog.clone();
            t.quirks = lt.quirks;
            t.name = lt.name.clone().unwrap_or_default();
            t.anonymous = lt.name.is_none();
            known[i] = lt.clone();
        } else {
            traces.push(Trace {
                dirs: Vec::new(),
                name: lt.name.clone().unwrap_or_default(),
                tc: lt.tc.clone(),
                prog: lt.prog.clone(),
                files: Vec::new(),
                streams: Vec::new(),
                damage: Vec::new(),
                notes: Vec::new(),
                quirks: lt.quirks,
                anonymous: lt.name.is_none(),
            });
            known.push(lt.clone());
        }
        changed = true;
    }
    if changed {
        p.trace_rank = crate::mux::trace_ranks(traces);
        p.heads.clear();
    }
    for k in rts.len()..s.streams().len() {
        let info = &s.streams()[k];
        let Some(t) = traces.get_mut(info.trace) else {
            break;
        };
        let clock =
            announce_stream(t, info).map(|c| (c.frequency, c.offset_seconds, c.offset_cycles));
        let feed = LiveFeed {
            src,
            stream: k,
            prev: None,
            names: opts.names,
            use_plans: !opts.no_body_plans,
            plans: Vec::new(),
            plans_of: None,
            first: None,
            ended: false,
            trace: info.trace,
            pools: pools.clone(),
            class: None,
            pool_base: None,
        };
        rts.push(StreamRun {
            feed: Feed::Live(Box::new(feed)),
            chunk: Chunk::default(),
            seq: 0,
            held: Held::new(),
            next: 0,
            trace: info.trace,
            group: t.streams.len() - 1,
            clock,
            base: clock.and_then(|(f, s, o)| Some((f, crate::fs::clock_base_ns(f, s, o)?))),
            pool_base: 0,
            queue: Ring::with_capacity(2 * BATCH),
            taken: 0,
            started: false,
            ended: false,
            pause: false,
            inactive_until: None,
            error: None,
            pool: None,
        });
        active.push(k);
    }
}

/// Streams whose first packet arrived: their class, ID and clock.
fn first_packets(traces: &mut [Trace], rts: &mut [StreamRun<'_>]) {
    for rt in rts.iter_mut() {
        let Feed::Live(f) = &mut rt.feed else {
            continue;
        };
        let t = &mut traces[rt.trace];
        if let Some((class, instance)) = f.first.take() {
            let g = &mut t.streams[rt.group];
            g.class = class;
            g.class_id = t.prog.streams.get(class).map_or(0, |s| s.id);
            g.instance_id = instance;
            if let Some(i) = instance {
                g.id = i;
            }
            rt.clock = t
                .prog
                .streams
                .get(class)
                .and_then(|s| s.default_clock)
                .and_then(|c| t.tc.clocks.get(c))
                .map(|c| (c.frequency, c.offset_seconds, c.offset_cycles));
            rt.base = rt
                .clock
                .and_then(|(f, s, o)| Some((f, crate::fs::clock_base_ns(f, s, o)?)));
        }
    }
}

/// Stream `info` of a live session added to its trace `t` (its class
/// known at its first packet), and the clock its times are read in until
/// then: the trace's first stream clock.
pub(crate) fn announce_stream<'t>(
    t: &'t mut crate::fs::Trace,
    info: &StreamInfo,
) -> Option<&'t crate::ir::ClockClass> {
    t.streams.push(StreamGroup {
        class: 0,
        class_id: 0,
        instance_id: None,
        id: info.fallback_id,
        name: info.name.clone(),
        files: Vec::new(),
        begin_ns: Vec::new(),
        packets: Vec::new(),
    });
    t.prog
        .streams
        .iter()
        .find_map(|sc| sc.default_clock)
        .and_then(|c| t.tc.clocks.get(c))
}
