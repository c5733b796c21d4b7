//! Traces whose packets arrive while they are read (a live session, a
//! directory being written: any [`PacketSource`]) as a source of the
//! common event model, for `convert net://...` and `report --json`
//! of a live session: the events stream into the sink as they arrive.
//!
//! The records and their order are those of [`crate::source::CtfSource`]
//! on the same trace read from disk once it is complete: the same
//! decoder, the same muxer rules ([`crate::mux`]), the same model classes
//! (one per trace, stream class and event class, in metadata order) and
//! streams. As in the text output of live traces ([`crate::text::report_live`]),
//! the muxer picks a message only when every stream it knows has one or
//! is known to be quiet up to some time (a beacon), so nothing comes out
//! of order.
//!
//! What grows while the trace is read grows the metadata
//! ([`LiveRecords::meta`]): classes of metadata that arrives later are
//! appended (the ids of the earlier ones do not change), streams that
//! appear later are appended, a stream's CPU is known from its first
//! packet. Sinks get the metadata as it is when each record is handed
//! out ([`LiveRecords::next_with_meta`]).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use tracemux_core::model::{
    BufferInfo, Event, EventClass, Format, Lost, Record, RecordSource, StreamInfo, TraceMeta,
};
use tracemux_core::typed::FieldTape;
use tracemux_core::Error;

use crate::decode::PacketInfo;
use crate::fs::Trace;
use crate::ir::ClockClass;
use crate::mux::{Head, MsgKind};
use crate::source::{class_schema, clock_info, env_text, uname_and_tracer, Capture, Rec};
use crate::stream::{Discarded, Step, StreamDecoder, StreamError};
use crate::text::{LiveItem, LiveTrace, PacketSource};

/// An event decoded from a packet that arrived (owned: the packet's
/// bytes are not kept).
struct Ev {
    data: Vec<u8>,
    tape: FieldTape,
    cpu: u32,
    pid: i32,
    file_pos: u64,
}

/// A message of a stream, as [`crate::source`] produces them.
struct Msg {
    kind: MsgKind,
    ts: Option<i64>,
    /// Position of the event's class in its IR stream class.
    class: usize,
    notice: Option<Discarded>,
    ev: Option<Box<Ev>>,
}

impl Msg {
    fn of(kind: MsgKind, ts: Option<i64>) -> Msg {
        Msg {
            kind,
            ts,
            class: 0,
            notice: None,
            ev: None,
        }
    }
}

struct LStream {
    trace: usize,
    group: usize,
    queue: VecDeque<Msg>,
    /// Damage found in the packets decoded into `queue` (after them).
    damage: Option<StreamError>,
    head: Option<Msg>,
    started: bool,
    ended: bool,
    prev: Option<PacketInfo>,
    /// Its default clock, once its first packet says its class (until
    /// then: its trace's first clock).
    clock: Option<ClockClass>,
    classed: bool,
    /// The time (ns) its last beacon said it is quiet up to.
    quiet: Option<i64>,
    /// Bytes received before the packets being decoded (`Event::file_pos`
    /// as in the stream's file on disk).
    received: u64,
    cap: Capture,
}

/// What the next record is, once found.
enum Ready {
    Event(usize),
    Lost(Lost),
    Damage(Error),
}

/// The records of a [`PacketSource`], as they arrive.
pub struct LiveRecords<S: PacketSource> {
    src: S,
    traces: Vec<Trace>,
    known: Vec<Arc<LiveTrace>>,
    rank: Vec<u32>,
    meta: TraceMeta,
    /// Model class id by (trace, IR stream class position, event class
    /// position).
    ids: HashMap<(usize, usize, usize), u32>,
    streams: Vec<LStream>,
    active: Vec<usize>,
    last_returned: i64,
    strict: bool,
    ready: Option<Ready>,
    /// The stream whose head the last record was.
    current: Option<usize>,
    /// Spent decoded events, kept boxed: a stream's head is a `Box<Ev>`
    /// that moves between the stream and this list without copying.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<Ev>>,
    failed: bool,
    done: bool,
}

/// babeltrace2's name of a trace that `src` serves: its own name, or the
/// host name and the trace's path (what its directory would be named).
fn trace_name(src: &dyn PacketSource, t: usize, lt: &LiveTrace) -> String {
    if let Some(n) = &lt.name {
        return n.clone();
    }
    let host = match lt.tc.env("hostname") {
        Some(crate::ir::EnvValue::Str(h)) => h.clone(),
        _ => String::new(),
    };
    let path: Vec<&str> = src
        .trace_path(t)
        .split('/')
        .filter(|c| !c.is_empty() && *c != "." && *c != "..")
        .collect();
    let rel = path.join("/");
    match (host.is_empty(), rel.is_empty()) {
        (false, false) => format!("{host}/{rel}"),
        (false, true) => host,
        (true, _) => rel,
    }
}

impl<S: PacketSource> LiveRecords<S> {
    /// Records of `src`; with `strict`, damage is an error.
    pub fn new(src: S, strict: bool) -> LiveRecords<S> {
        LiveRecords {
            src,
            traces: Vec::new(),
            known: Vec::new(),
            rank: Vec::new(),
            meta: TraceMeta {
                format: Some(Format::Ctf),
                long_size: 8,
                ..TraceMeta::default()
            },
            ids: HashMap::new(),
            streams: Vec::new(),
            active: Vec::new(),
            last_returned: i64::MIN,
            strict,
            ready: None,
            current: None,
            spare: Vec::new(),
            failed: false,
            done: false,
        }
    }

    /// The source.
    pub fn source(&self) -> &S {
        &self.src
    }

    /// The source, to detach it for instance.
    pub fn source_mut(&mut self) -> &mut S {
        &mut self.src
    }

    /// The metadata as known now.
    pub fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    /// Wait for the first record (or the end) without taking it: then
    /// [`LiveRecords::meta`] knows every stream that has sent data and its
    /// CPU, and the classes of the metadata received so far (what a sink
    /// needs before its first event).
    pub fn wait_first(&mut self) -> tracemux_core::Result<()> {
        if self.ready.is_none() && !self.done {
            self.drop_current();
            self.ready = self.advance()?;
            if self.ready.is_none() {
                self.done = true;
            }
        }
        Ok(())
    }

    /// The next record with the metadata as it is now (`None`: the end).
    pub fn next_with_meta(&mut self) -> tracemux_core::Result<Option<(Record<'_>, &TraceMeta)>> {
        if self.ready.is_none() && !self.done {
            self.drop_current();
            self.ready = self.advance()?;
        }
        let Some(r) = self.ready.take() else {
            self.done = true;
            return Ok(None);
        };
        let rec = match r {
            Ready::Lost(l) => Record::Lost(l),
            Ready::Damage(e) => Record::Damage(e),
            Ready::Event(s) => {
                self.current = Some(s);
                let st = &self.streams[s];
                let Some(m) = &st.head else {
                    return Ok(None);
                };
                let Some(ev) = &m.ev else {
                    return Ok(None);
                };
                let t = &self.traces[st.trace];
                let sc = t
                    .prog
                    .streams
                    .get(t.streams[st.group].class)
                    .and_then(|p| t.tc.stream_classes.iter().position(|x| x.id == p.id));
                let id = sc
                    .and_then(|sc| self.ids.get(&(st.trace, sc, m.class)))
                    .copied()
                    .unwrap_or(u32::MAX);
                Record::Event(Event {
                    ts: m.ts.map_or(0, |t| t.max(0) as u64),
                    stream: s as u32,
                    cpu: ev.cpu,
                    type_id: id,
                    class: self.meta.classes.get(id),
                    pid: ev.pid,
                    data: &ev.data,
                    ext: &ev.data,
                    endian: t.tc.native_byte_order,
                    file_pos: ev.file_pos,
                    tape: Some(&ev.tape),
                    raw_ts: None,
                })
            }
        };
        Ok(Some((rec, &self.meta)))
    }

    /// The error that ended the source, if any, or whether it was
    /// interrupted.
    pub fn take_error(&mut self) -> Option<Box<dyn std::error::Error + Send + Sync>> {
        self.src.take_error()
    }

    fn drop_current(&mut self) {
        if let Some(s) = self.current.take() {
            if let Some(ev) = self.streams[s].head.take().and_then(|m| m.ev) {
                self.spare.push(ev);
            }
        }
    }

    /// Take in the source's new traces, metadata and streams.
    fn sync(&mut self) {
        let src = &self.src;
        let mut changed = false;
        for (i, lt) in src.traces().iter().enumerate() {
            if i < self.known.len() && Arc::ptr_eq(&self.known[i], lt) {
                continue;
            }
            let name = trace_name(src, i, lt);
            if i < self.known.len() {
                let t = &mut self.traces[i];
                t.tc = lt.tc.clone();
                t.prog = lt.prog.clone();
                t.quirks = lt.quirks;
                t.name = name;
                self.known[i] = lt.clone();
            } else {
                self.traces.push(Trace {
                    dirs: Vec::new(),
                    name,
                    tc: lt.tc.clone(),
                    prog: lt.prog.clone(),
                    files: Vec::new(),
                    streams: Vec::new(),
                    damage: Vec::new(),
                    notes: Vec::new(),
                    quirks: lt.quirks,
                    anonymous: false,
                });
                self.known.push(lt.clone());
            }
            changed = true;
        }
        if changed {
            self.rank = crate::mux::trace_ranks(&self.traces);
            self.describe();
        }
        let src = &self.src;
        for k in self.streams.len()..src.streams().len() {
            let info = &src.streams()[k];
            let Some(t) = self.traces.get_mut(info.trace) else {
                break;
            };
            let clock = crate::text::announce_stream(t, info).cloned();
            self.streams.push(LStream {
                trace: info.trace,
                group: t.streams.len() - 1,
                queue: VecDeque::new(),
                damage: None,
                head: None,
                started: false,
                ended: false,
                prev: None,
                clock,
                classed: false,
                quiet: None,
                received: 0,
                cap: Capture::default(),
            });
            self.meta.streams.push(StreamInfo {
                buffer: info.trace as u32,
                cpu: 0,
            });
            self.active.push(k);
        }
    }

    /// The metadata's description of the traces, and their new classes.
    fn describe(&mut self) {
        let m = &mut self.meta;
        m.endian = self.traces.first().map(|t| t.tc.native_byte_order);
        m.clocks.clear();
        m.env.clear();
        for (ti, t) in self.traces.iter().enumerate() {
            for (si, sc) in t.tc.stream_classes.iter().enumerate() {
                for (ei, ec) in sc.event_classes.iter().enumerate() {
                    if self.ids.contains_key(&(ti, si, ei)) {
                        continue;
                    }
                    let id = m.classes.next_id().index() as u32;
                    let full = ec.name.as_deref().unwrap_or("<unknown>");
                    let (system, name) = full.split_once(':').unwrap_or(("", full));
                    m.classes.push(EventClass::with_schema(
                        id,
                        system,
                        name,
                        class_schema(sc, ec),
                    ));
                    self.ids.insert((ti, si, ei), id);
                }
            }
            m.clocks.extend(t.tc.clocks.iter().map(clock_info));
            m.env.extend(
                t.tc.environment
                    .iter()
                    .map(|(k, v)| (k.clone(), env_text(v))),
            );
            let clock =
                t.tc.clocks
                    .first()
                    .map(|c| c.name.clone())
                    .unwrap_or_default();
            match m.buffers.get_mut(ti) {
                Some(b) => {
                    b.name = t.name.clone();
                    b.clock = clock;
                }
                None => m.buffers.push(BufferInfo {
                    name: t.name.clone(),
                    clock,
                    page_size: 0,
                    cpus: 0,
                }),
            }
        }
        uname_and_tracer(self.traces.first().map(|t| &t.tc), m);
    }

    /// Whether the source knows traces or streams not taken in.
    fn grew(&self) -> bool {
        let t = self.src.traces();
        self.src.streams().len() > self.streams.len()
            || t.len() > self.known.len()
            || t.iter().zip(&self.known).any(|(a, b)| !Arc::ptr_eq(a, b))
    }

    /// Decode a packet that arrived on stream `k` into its queue.
    fn decode(&mut self, k: usize, bytes: &[u8], lt: &LiveTrace) {
        let st = &mut self.streams[k];
        let (packets, err) = crate::stream::index_file(&lt.prog, lt.tc.uuid, 0, bytes);
        if let Some(e) = err {
            st.damage = Some(e);
        }
        if !st.classed {
            if let Some(p) = packets.first() {
                st.classed = true;
                let t = &mut self.traces[st.trace];
                let g = &mut t.streams[st.group];
                g.class = p.stream;
                g.class_id = lt.prog.streams.get(p.stream).map_or(0, |s| s.id);
                g.instance_id = p.info.stream_id;
                if let Some(i) = p.info.stream_id {
                    g.id = i;
                }
                st.clock = lt
                    .prog
                    .streams
                    .get(p.stream)
                    .and_then(|s| s.default_clock)
                    .and_then(|c| lt.tc.clocks.get(c))
                    .cloned();
            }
        }
        let base = st.received;
        st.received += bytes.len() as u64;
        let mut dec = StreamDecoder::new(&lt.prog, lt.tc.uuid, vec![bytes], packets);
        dec.set_quirks(lt.quirks.lttng_crash, lt.quirks.lttng_event_after_packet);
        dec.set_previous(st.prev);
        let ns = |clock: &Option<ClockClass>, c: u64| {
            clock
                .as_ref()
                .and_then(|cc| crate::fs::ns_from_origin(cc, c))
        };
        loop {
            let mut rec = Rec {
                prog: &lt.prog,
                c: &mut st.cap,
            };
            let step = match dec.advance(&mut rec) {
                Ok(s) => s,
                Err(e) => {
                    st.damage = Some(e);
                    break;
                }
            };
            let m = match step {
                Step::PacketBegin { clock } => {
                    let cpu = st.cap.cpu.map_or(0, |c| c as u32);
                    let (s, b) = (&mut self.meta.streams[k], &mut self.meta.buffers);
                    if st.prev.is_none() && dec.current_packet().is_some_and(|p| p.offset == 0) {
                        s.cpu = cpu;
                        if let Some(b) = b.get_mut(st.trace) {
                            b.cpus = b.cpus.max(cpu + 1);
                            self.meta.cpus = self.meta.cpus.max(cpu + 1);
                        }
                    }
                    Msg::of(MsgKind::PacketBegin, clock.and_then(|c| ns(&st.clock, c)))
                }
                Step::PacketEnd { clock } => {
                    Msg::of(MsgKind::PacketEnd, clock.and_then(|c| ns(&st.clock, c)))
                }
                Step::Discarded(d) => Msg {
                    notice: Some(d),
                    ..Msg::of(
                        if d.packets {
                            MsgKind::DiscardedPackets
                        } else {
                            MsgKind::Discarded
                        },
                        d.begin.and_then(|b| ns(&st.clock, b)),
                    )
                },
                Step::Event { clock, class } => {
                    if let Err(e) = dec.body(&mut rec) {
                        st.damage = Some(e);
                        break;
                    }
                    let mut ev = self.spare.pop().unwrap_or_else(|| {
                        Box::new(Ev {
                            data: Vec::new(),
                            tape: FieldTape::new(),
                            cpu: 0,
                            pid: -1,
                            file_pos: 0,
                        })
                    });
                    let c = &st.cap;
                    ev.tape.copy_from(&c.ev);
                    ev.cpu = c.cpu.map_or(0, |c| c as u32);
                    ev.pid = c.pid.map_or(-1, |(_, p)| p as i32);
                    ev.data.clear();
                    ev.file_pos = 0;
                    if let Some(pe) = dec.current_packet() {
                        let a = pe.offset.saturating_add(c.ev_begin / 8) as usize;
                        let b = pe.offset.saturating_add(c.ev_end.div_ceil(8)) as usize;
                        ev.data
                            .extend_from_slice(bytes.get(a..b.min(bytes.len())).unwrap_or(&[]));
                        ev.file_pos = base + pe.offset.saturating_add(pe.total_bytes);
                    }
                    Msg {
                        class,
                        ev: Some(ev),
                        ..Msg::of(
                            MsgKind::Event,
                            Some(ns(&st.clock, clock).unwrap_or(i64::MIN)),
                        )
                    }
                }
                Step::End => break,
            };
            st.queue.push_back(m);
        }
        st.prev = dec.current_packet().map(|p| p.info).or(st.prev);
    }

    /// The next message of stream `k` (`None`: it ended), waiting for it.
    fn produce(&mut self, k: usize) -> Result<Option<Msg>, StreamError> {
        loop {
            let st = &mut self.streams[k];
            if st.ended {
                return Ok(None);
            }
            if !st.started {
                st.started = true;
                return Ok(Some(Msg::of(MsgKind::StreamBegin, None)));
            }
            if let Some(mut m) = st.queue.pop_front() {
                // babeltrace2's lttng-live: discarded data that begins
                // before the stream's last beacon begins at the beacon
                if matches!(m.kind, MsgKind::Discarded | MsgKind::DiscardedPackets) {
                    if let (Some(q), Some(ts)) = (st.quiet, m.ts) {
                        m.ts = Some(ts.max(q));
                    }
                }
                return Ok(Some(m));
            }
            if let Some(e) = st.damage.take() {
                st.ended = true;
                return Err(e);
            }
            match self.src.next(k) {
                LiveItem::Packet { bytes, trace } => self.decode(k, &bytes, &trace),
                LiveItem::Inactive(c) => {
                    let st = &mut self.streams[k];
                    let ts = st
                        .clock
                        .as_ref()
                        .and_then(|cc| crate::fs::ns_from_origin(cc, c));
                    st.quiet = ts.or(st.quiet);
                    return Ok(Some(Msg::of(MsgKind::Inactivity, ts)));
                }
                LiveItem::End => {
                    let st = &mut self.streams[k];
                    st.ended = true;
                    return Ok(Some(Msg::of(MsgKind::StreamEnd, None)));
                }
            }
        }
    }

    fn head(&self, s: usize) -> Head {
        let st = &self.streams[s];
        let m = st.head.as_ref();
        Head {
            trace: st.trace,
            group: st.group,
            kind: m.map_or(MsgKind::StreamEnd, |m| m.kind),
            class: m.map_or(0, |m| m.class),
        }
    }

    /// Find the next record.
    fn advance(&mut self) -> tracemux_core::Result<Option<Ready>> {
        if self.failed {
            return Ok(None);
        }
        loop {
            self.sync();
            // every stream known has a message (or is known quiet) first
            let mut i = 0;
            let mut damage = None;
            while i < self.active.len() {
                let s = self.active[i];
                if self.streams[s].head.is_none() {
                    match self.produce(s) {
                        Ok(Some(m)) => self.streams[s].head = Some(m),
                        Ok(None) => {
                            self.active.remove(i);
                            continue;
                        }
                        Err(e) => {
                            let st = &self.streams[s];
                            damage = Some(crate::text::stream_error(
                                &self.traces[st.trace],
                                st.group,
                                &e,
                            ));
                            break;
                        }
                    }
                }
                i += 1;
            }
            if let Some(e) = damage {
                if self.strict {
                    self.failed = true;
                    return Err(e);
                }
                return Ok(Some(Ready::Damage(e)));
            }
            if let Some(e) = self.src.take_error() {
                self.failed = true;
                return Err(Error::new(
                    tracemux_core::ErrorKind::Invalid(e.to_string()),
                    "live",
                    0,
                ));
            }
            if self.grew() {
                continue;
            }
            if self.active.is_empty() {
                if self.src.wait() {
                    continue;
                }
                if let Some(e) = self.src.take_error() {
                    self.failed = true;
                    return Err(Error::new(
                        tracemux_core::ErrorKind::Invalid(e.to_string()),
                        "live",
                        0,
                    ));
                }
                return Ok(None);
            }
            let heads = self.active.iter().filter_map(|&s| {
                let m = self.streams[s].head.as_ref()?;
                Some((s, m.ts.unwrap_or(self.last_returned)))
            });
            let best = crate::mux::earliest(heads, |a, b| {
                crate::mux::compare(&self.traces, &self.rank, self.head(a), self.head(b))
            });
            let Some((s, ts)) = best else {
                continue;
            };
            let Some(m) = self.streams[s].head.take() else {
                continue;
            };
            // (a beacon is never older than what was returned: it is the
            // time the stream is quiet up to)
            if m.kind != MsgKind::Inactivity {
                self.last_returned = ts;
            }
            match m.kind {
                MsgKind::Event => {
                    self.streams[s].head = Some(m);
                    return Ok(Some(Ready::Event(s)));
                }
                MsgKind::Discarded | MsgKind::DiscardedPackets => {
                    let Some(d) = m.notice else { continue };
                    return Ok(Some(Ready::Lost(Lost {
                        stream: s as u32,
                        cpu: self.meta.streams.get(s).map_or(0, |x| x.cpu),
                        ts: self.last_returned.max(0) as u64,
                        count: if d.packets { None } else { d.count },
                    })));
                }
                _ => {}
            }
        }
    }
}

impl<S: PacketSource> RecordSource for LiveRecords<S> {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn next_record(&mut self) -> tracemux_core::Result<Option<Record<'_>>> {
        Ok(self.next_with_meta()?.map(|(r, _)| r))
    }
}
