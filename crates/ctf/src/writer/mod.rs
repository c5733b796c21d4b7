//! CTF writer: a sink of the common event model that writes a CTF 1.8
//! (TSDL) or CTF 2 (JSON) trace directory that babeltrace2 reads.
//!
//! [`CtfWriter::create`] builds one IR trace class ([`crate::ir`]) from the
//! source's [`TraceMeta`]; [`CtfWriter::event`] serializes each event's
//! values straight into the packet buffer of its stream;
//! [`CtfWriter::finish`] closes the packets and writes the `metadata` file
//! (TSDL from the IR by [`tsdl::write_tsdl`], or CTF 2 by
//! [`crate::ctf2::write_metadata`] from the same IR).
//!
//! # Layout of the trace
//!
//! * One data stream class (id 0), one data stream file per (buffer, CPU)
//!   stream of the source (`stream_CPU`, `BUFFER_CPU` for named buffers),
//!   made of packets of about [`WriterOptions::packet_size`] bytes.
//! * Packet header: `magic`, `uuid`, `stream_id`. Packet context:
//!   `timestamp_begin`, `timestamp_end` (first and last event of the
//!   packet), `content_size`, `packet_size`, `packet_seq_num`,
//!   `events_discarded` (the running count of events the source reported
//!   lost on that stream), `cpu_id`. A loss ends the packet before it and
//!   is written as babeltrace2 places it (see [`CtfWriter::lost`]): an
//!   empty packet whose `events_discarded` rises, or a gap in
//!   `packet_seq_num` for a loss of unknown size.
//! * Event header: `id` (32 bits, the source's class id) and `timestamp`
//!   (64 bits, mapped to the clock: no wrapping).
//! * One clock: the source's first clock ([`TraceMeta::clocks`]), else one
//!   named after the buffer's clock. Event times are nanoseconds, so the
//!   frequency is 1 GHz; the clock's offset carries the source's offset so
//!   absolute times survive; `absolute` when its origin is the Unix epoch.
//! * Event classes: the source's classes, named `system:name` (`name` when
//!   there is no system). The model's common context and specific context
//!   together become the event class's context (`event.context`), the
//!   payload its `fields`: babeltrace2 prints them as two blocks after the
//!   packet context's `{ cpu_id = N }`; Trace Compass shows context fields
//!   as `context._NAME` and payload fields by name. Field classes: see
//!   [`layout`].
//! * Environment: the source's key/value pairs, then `hostname` (from the
//!   source's environment, else the second word of its `uname`),
//!   `tracer_name = "tracemux"`, `tracer_version`, `source_format`,
//!   `source_tracer_version`, `source_uname`.
//!
//! Classes that a source makes after it started are added when their
//! first event comes (the metadata is written last). Events without a
//! class are written with a class of their own named
//! `<unknown event N>` holding `payload_size`, as the babeltrace-style
//! printer shows them.

pub mod layout;
pub mod ser;
pub mod tsdl;

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use tracemux_core::model::{visit_fields, Event, Lost, PrintCtx, TraceMeta};
use tracemux_core::typed::{FieldSchema, FieldType, Scope as MScope};
use tracemux_core::{Error, ErrorKind};

use crate::ir::{
    ArrayClass, ByteOrder, ClockClass, CtfVersion, EnvValue, EventClass, FieldClass, IntClass,
    Length, Member, Roles, Scope, StreamClass, StructClass, TraceClass,
};
use layout::{Arena, Builder, Kind};
use ser::{Frame, Ser};

/// What to write.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// CTF 2 metadata instead of CTF 1.8.
    pub ctf2: bool,
    /// Packets close once their events take this many bytes.
    pub packet_size: usize,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            ctf2: false,
            packet_size: 256 << 10,
        }
    }
}

/// What [`CtfWriter::finish`] wrote.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WriteSummary {
    pub events: u64,
    pub packets: u64,
    pub streams: u64,
    pub event_classes: u64,
    pub discarded: u64,
    /// Losses of unknown size, written as gaps in the packet sequence.
    pub discarded_packets: u64,
    pub bytes: u64,
}

/// Packet header (24 bytes) + context (7 x 8 bytes... see `flush`).
const PACKET_HEADER: usize = 4 + 16 + 4;
const PACKET_CONTEXT: usize = 8 * 6 + 4;
const MAGIC: u32 = 0xC1FC_1FC1;

struct ClassOut {
    root: u32,
    starts: [u32; 4],
}

struct StreamOut {
    name: String,
    cpu: u32,
    file: Option<BufWriter<File>>,
    buf: Vec<u8>,
    first_ts: Option<u64>,
    last_ts: u64,
    seq: u64,
    discarded: u64,
    /// `discarded` as of the last packet written.
    written_discarded: u64,
    /// A loss not written yet (its count, its time): written when the
    /// stream's next event comes, at the earlier of the two times (a CTF
    /// source's loss is timed at the end of its packet, past the events
    /// that follow it), or at the end.
    pending_loss: Option<(Option<u64>, u64)>,
}

impl StreamOut {
    /// A stream with nothing written yet.
    fn new(name: String, cpu: u32) -> Self {
        StreamOut {
            name,
            cpu,
            file: None,
            buf: Vec::new(),
            first_ts: None,
            last_ts: 0,
            seq: 0,
            discarded: 0,
            written_discarded: 0,
            pending_loss: None,
        }
    }
}

/// A CTF trace directory being written.
pub struct CtfWriter {
    dir: PathBuf,
    opts: WriterOptions,
    tc: TraceClass,
    arena: Arena,
    classes: HashMap<u32, ClassOut>,
    /// Classes made for events without a class, by type id.
    unknown: HashMap<u32, u64>,
    next_unknown_id: u64,
    streams: Vec<StreamOut>,
    frames: Vec<Frame>,
    summary: WriteSummary,
    /// The clock offset (ns) that event times include
    /// ([`tracemux_core::model::ClockInfo::offset_ns`]): written as the
    /// clock's offset and taken off each time, so that the clock values
    /// plus the offset give the source's times back.
    clock_offset: u64,
    /// Whether packets say their CPU (`cpu_id`): always, but for a CTF
    /// source whose packets did not (its events have no CPU to show).
    with_cpu: bool,
    /// Losses written where babeltrace2 places them at the source's loss
    /// (see [`CtfWriter::lost`]); not for CTF sources, whose losses are
    /// timed by their packets (there the count goes into the next
    /// packet's context, as before).
    place_losses: bool,
    /// Whether the source is a CTF trace (whose classes say whether they
    /// have a payload structure at all; other formats always get one).
    source_ctf: bool,
    /// Classes are written under their index in the class table (a
    /// timeline of several inputs), not their own ids.
    by_index: bool,
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::new(
        ErrorKind::Io(format!("{}: {e}", path.display())),
        "CTF output",
        0,
    )
}

fn int(len: u32, roles: Roles) -> FieldClass {
    FieldClass::Int(IntClass {
        roles,
        align: 8,
        ..IntClass::new(len, ByteOrder::Little, false)
    })
}

fn clocked(len: u32, roles: Roles) -> FieldClass {
    FieldClass::Int(IntClass {
        roles,
        align: 8,
        mapped_clock: Some(0),
        ..IntClass::new(len, ByteOrder::Little, false)
    })
}

fn member(name: &str, class: FieldClass) -> Member {
    Member {
        name: name.into(),
        class,
    }
}

/// A stable 64-bit FNV-1a hash (for the trace UUID).
fn fnv(h: &mut u64, b: &[u8]) {
    for &c in b {
        *h ^= u64::from(c);
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

/// An environment value: an integer when the text is one, as written.
fn env_value(v: &str) -> EnvValue {
    match v.parse::<i64>() {
        Ok(i) if i.to_string() == v => EnvValue::Int(i),
        _ => EnvValue::Str(v.to_string()),
    }
}

impl CtfWriter {
    /// Start a trace in `dir` (created; it must not hold a trace already)
    /// for the classes and streams of `meta`.
    pub fn create(dir: &Path, meta: &TraceMeta, opts: WriterOptions) -> Result<Self, Error> {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let mut tc = TraceClass::new(if opts.ctf2 {
            CtfVersion::Ctf2
        } else {
            CtfVersion::Ctf1
        });
        // uuid: a hash of what the trace says about itself
        let mut h1 = 0xcbf2_9ce4_8422_2325u64;
        let mut h2 = 0x8422_2325_cbf2_9ce4u64;
        for c in meta.classes.iter() {
            fnv(&mut h1, c.name.as_bytes());
            fnv(&mut h2, &c.id.to_le_bytes());
        }
        for (k, v) in &meta.env {
            fnv(&mut h1, k.as_bytes());
            fnv(&mut h2, v.as_bytes());
        }
        fnv(&mut h1, meta.uname.as_deref().unwrap_or("").as_bytes());
        fnv(&mut h2, &(meta.streams.len() as u64).to_le_bytes());
        let mut uuid = [0u8; 16];
        uuid[..8].copy_from_slice(&h1.to_le_bytes());
        uuid[8..].copy_from_slice(&h2.to_le_bytes());
        uuid[6] = (uuid[6] & 0x0f) | 0x40;
        uuid[8] = (uuid[8] & 0x3f) | 0x80;
        tc.uuid = Some(uuid);

        // environment
        let mut env: Vec<(String, EnvValue)> = Vec::new();
        let mut add = |k: String, v: EnvValue| {
            if !env.iter().any(|(x, _)| *x == k) {
                env.push((k, v));
            }
        };
        for (k, v) in &meta.env {
            add(layout::ctf_name(k), env_value(v));
        }
        if let Some(h) = meta.hostname() {
            add("hostname".into(), EnvValue::Str(h.to_string()));
        }
        add("tracer_name".into(), EnvValue::Str("tracemux".into()));
        add(
            "tracer_version".into(),
            EnvValue::Str(env!("CARGO_PKG_VERSION").into()),
        );
        if let Some(f) = meta.format {
            add("source_format".into(), EnvValue::Str(f.name().into()));
        }
        if let Some(v) = &meta.tracer_version {
            add("source_tracer_version".into(), EnvValue::Str(v.clone()));
        }
        if let Some(u) = &meta.uname {
            add("source_uname".into(), EnvValue::Str(u.clone()));
        }
        // a timeline: each input, its format, clock and shift (its
        // streams are the files named `input<i>_...`)
        for (i, inp) in meta.inputs.iter().enumerate() {
            add(format!("input{i}"), EnvValue::Str(inp.name.clone()));
            if let Some(f) = inp.format {
                add(format!("input{i}_format"), EnvValue::Str(f.name().into()));
            }
            add(
                format!("input{i}_clock"),
                EnvValue::Str(inp.clock.source.clone()),
            );
            add(format!("input{i}_shift_ns"), EnvValue::Int(inp.shift_ns));
            add(
                format!("input{i}_placed"),
                EnvValue::Str(tracemux_core::timeline::describe(&meta.inputs, i)),
            );
        }
        tc.environment = env;

        // clock
        let (name, offset_ns, epoch, desc, cuuid) = match meta.clocks.first() {
            Some(c) => (
                c.name.clone(),
                c.offset_ns,
                c.origin_unix_epoch,
                c.description.clone(),
                c.uuid,
            ),
            None => (
                meta.buffers
                    .first()
                    .map(|b| b.clock.clone())
                    .filter(|c| !c.is_empty())
                    .unwrap_or_else(|| "monotonic".into()),
                0,
                false,
                None,
                None,
            ),
        };
        let mut clock = ClockClass::new(layout::ctf_name(&name));
        // (a negative offset is not taken off the times: they stay unsigned)
        let offset_ns = offset_ns.max(0);
        clock.offset_seconds = offset_ns.div_euclid(1_000_000_000);
        clock.offset_cycles = offset_ns.rem_euclid(1_000_000_000) as u64;
        clock.origin_is_unix_epoch = epoch;
        clock.description = desc;
        clock.uuid = cuuid;
        clock.precision = Some(1);
        tc.clocks.push(clock);

        tc.packet_header = Some(StructClass::new(vec![
            member("magic", int(32, Roles::PACKET_MAGIC)),
            member(
                "uuid",
                FieldClass::Array(ArrayClass {
                    element: Box::new(int(8, Roles::NONE)),
                    length: Length::Static(16),
                    min_align: 1,
                    roles: Roles::METADATA_STREAM_UUID,
                }),
            ),
            member("stream_id", int(32, Roles::DATA_STREAM_CLASS_ID)),
        ]));
        let mut sc = StreamClass::new(0);
        sc.default_clock = Some(0);
        sc.packet_context = Some(StructClass::new(vec![
            member(
                "timestamp_begin",
                clocked(
                    64,
                    Roles::PACKET_BEGIN_DEFAULT_CLOCK_TIMESTAMP | Roles::DEFAULT_CLOCK_TIMESTAMP,
                ),
            ),
            member(
                "timestamp_end",
                clocked(64, Roles::PACKET_END_DEFAULT_CLOCK_TIMESTAMP),
            ),
            member("content_size", int(64, Roles::PACKET_CONTENT_LENGTH)),
            member("packet_size", int(64, Roles::PACKET_TOTAL_LENGTH)),
            member("packet_seq_num", int(64, Roles::PACKET_SEQUENCE_NUMBER)),
            member(
                "events_discarded",
                int(64, Roles::DISCARDED_EVENT_COUNTER_SNAPSHOT),
            ),
        ]));
        let with_cpu = meta.format != Some(tracemux_core::model::Format::Ctf)
            || meta.classes.iter().any(|c| {
                c.schema()
                    .scope(tracemux_core::typed::Scope::PacketContext)
                    .iter()
                    .any(|f| f.name == "cpu_id")
            });
        if with_cpu {
            if let Some(pc) = sc.packet_context.as_mut() {
                pc.members.push(member("cpu_id", int(32, Roles::NONE)));
            }
        }
        sc.event_header = Some(StructClass::new(vec![
            member("id", int(32, Roles::EVENT_CLASS_ID)),
            member("timestamp", clocked(64, Roles::DEFAULT_CLOCK_TIMESTAMP)),
        ]));
        tc.stream_classes.push(sc);

        let mut w = CtfWriter {
            dir: dir.to_path_buf(),
            opts,
            tc,
            arena: Arena::default(),
            classes: HashMap::new(),
            unknown: HashMap::new(),
            next_unknown_id: 0,
            streams: Vec::new(),
            frames: Vec::with_capacity(16),
            summary: WriteSummary::default(),
            clock_offset: offset_ns.max(0) as u64,
            with_cpu,
            source_ctf: meta.format == Some(tracemux_core::model::Format::Ctf),
            by_index: !meta.inputs.is_empty(),
            place_losses: meta.format != Some(tracemux_core::model::Format::Ctf),
        };
        let mut max_id = 0u64;
        for c in meta.classes.iter() {
            let id = w.class_key(c);
            if !w.classes.contains_key(&id) {
                w.add_model_class(u64::from(id), c);
                max_id = max_id.max(u64::from(id));
            }
        }
        w.next_unknown_id = (max_id + 1).max(1 << 31);
        // streams: one per (buffer, cpu)
        for (si, s) in meta.streams.iter().enumerate() {
            let buffer = meta
                .buffers
                .get(s.buffer as usize)
                .map(|b| b.name.as_str())
                .unwrap_or("");
            let mut base = if buffer.is_empty() {
                "stream".to_string()
            } else {
                layout::ctf_name(buffer)
            };
            // a timeline's streams say their input
            if let Some(i) = tracemux_core::timeline::input_of_stream(meta, si as u32) {
                base = format!("input{i}_{base}");
            }
            let mut name = format!("{base}_{}", s.cpu);
            let mut k = 1;
            while w.streams.iter().any(|x| x.name == name) || name == "metadata" {
                name = format!("{base}_{}_{k}", s.cpu);
                k += 1;
            }
            w.streams.push(StreamOut::new(name, s.cpu));
        }
        Ok(w)
    }

    /// The id a class is written under: its own, or for a timeline of
    /// several inputs (whose classes may share ids) its place in the merged
    /// class table.
    fn class_key(&self, c: &tracemux_core::model::EventClass) -> u32 {
        if self.by_index {
            c.index.index() as u32
        } else {
            c.id
        }
    }

    /// Add a class of the model under `id`.
    fn add_model_class(&mut self, id: u64, c: &tracemux_core::model::EventClass) {
        let name = if c.system.is_empty() {
            c.name.clone()
        } else {
            format!("{}:{}", c.system, c.name)
        };
        let schema = c.schema();
        let ctx: Vec<FieldSchema> = schema
            .scope(MScope::CommonContext)
            .iter()
            .chain(schema.scope(MScope::SpecificContext))
            .cloned()
            .collect();
        let ncommon = schema.scope(MScope::CommonContext).len() as u32;
        let declared = !self.source_ctf || schema.scopes.iter().any(|s| s.scope == MScope::Payload);
        self.add_class(
            id,
            name,
            &ctx,
            ncommon,
            schema.scope(MScope::Payload),
            declared,
        );
    }

    /// Add an event class: `ctx` (common then specific context, `ncommon`
    /// of them common) as its context, `payload` as its fields.
    fn add_class(
        &mut self,
        id: u64,
        name: String,
        ctx: &[FieldSchema],
        ncommon: u32,
        payload: &[FieldSchema],
        payload_declared: bool,
    ) {
        let mut b = Builder {
            arena: &mut self.arena,
            scope: Scope::EventSpecificContext,
            path: Vec::new(),
        };
        let (cm, cn) = b.members(ctx);
        b.scope = Scope::EventPayload;
        let (pm, pn) = b.members(payload);
        let mut ec = EventClass::new(id, Some(name));
        if !cm.is_empty() {
            ec.specific_context = Some(StructClass::new(cm));
        }
        // a payload structure, if empty (babeltrace2 shows `{ }`), unless
        // the source's class has none
        if payload_declared || !pm.is_empty() {
            ec.payload = Some(StructClass::new(pm));
        }
        let nctx = cn.len() as u32;
        let mut kids = cn;
        kids.extend_from_slice(&pn);
        let first = self.arena.kids.len() as u32;
        let n = kids.len() as u32;
        self.arena.kids.extend_from_slice(&kids);
        self.arena.nodes.push(layout::Node {
            kind: Kind::Struct,
            first,
            n,
        });
        let root = (self.arena.nodes.len() - 1) as u32;
        self.classes.insert(
            id as u32,
            ClassOut {
                root,
                starts: [0, ncommon.min(nctx), nctx, n],
            },
        );
        self.tc.stream_classes[0].event_classes.push(ec);
        self.summary.event_classes += 1;
    }

    fn stream_index(&mut self, stream: u32, cpu: u32) -> usize {
        let i = stream as usize;
        if i < self.streams.len() {
            return i;
        }
        // a stream the source did not announce: one per CPU
        let name = format!("extra_{cpu}");
        if let Some(p) = self.streams.iter().position(|s| s.name == name) {
            return p;
        }
        self.streams.push(StreamOut::new(name, cpu));
        self.streams.len() - 1
    }

    /// Append one event.
    pub fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<(), Error> {
        let si = self.stream_index(ev.stream, ev.cpu);
        if let Some((count, ts)) = self.streams[si].pending_loss.take() {
            self.write_loss(si, count, ts.min(ev.ts))?;
        }
        let key = ev.class.map(|c| self.class_key(c));
        let (id, unknown) = match (ev.class, key) {
            (Some(_), Some(k)) if self.classes.contains_key(&k) => (u64::from(k), false),
            (Some(c), Some(k)) => {
                // a class the source made after it started
                self.add_model_class(u64::from(k), c);
                (u64::from(k), false)
            }
            _ => {
                let id = match self.unknown.get(&ev.type_id) {
                    Some(&id) => id,
                    None => {
                        let id = self.next_unknown_id;
                        self.next_unknown_id += 1;
                        self.unknown.insert(ev.type_id, id);
                        let fields = [FieldSchema::new("payload_size", FieldType::u(64))];
                        self.add_class(
                            id,
                            format!("<unknown event {}>", ev.type_id),
                            &[],
                            0,
                            &fields,
                            true,
                        );
                        id
                    }
                };
                (id, true)
            }
        };
        let st = &mut self.streams[si];
        // times never go backwards in a stream (babeltrace2 requires it)
        let ts = ev.ts.saturating_sub(self.clock_offset).max(st.last_ts);
        if st.first_ts.is_none() {
            st.first_ts = Some(ts);
        }
        st.last_ts = ts;
        st.buf.extend_from_slice(&(id as u32).to_le_bytes());
        st.buf.extend_from_slice(&ts.to_le_bytes());
        if unknown {
            st.buf
                .extend_from_slice(&(ev.data.len() as u64).to_le_bytes());
        } else if let Some(c) = self.classes.get(&(id as u32)) {
            let ctx = PrintCtx {
                ts: ev.ts,
                classes: Some(&meta.classes),
                ..PrintCtx::of(meta, ev)
            };
            let mut ser = Ser {
                arena: &self.arena,
                out: &mut st.buf,
                frames: &mut self.frames,
                starts: c.starts,
            };
            ser.begin(c.root);
            visit_fields(ev, &ctx, &mut ser);
            ser.finish();
        }
        self.summary.events += 1;
        if self.streams[si].buf.len() >= self.opts.packet_size {
            self.flush(si)?;
        }
        Ok(())
    }

    /// Events lost on a stream, before `l.ts` (the time of the stream's
    /// next event). babeltrace2 places a loss by the packets around it: a
    /// rise of `events_discarded` between the ends of two packets, a gap
    /// in `packet_seq_num` between the end of one and the beginning of the
    /// next, and none in or before a stream's first packet. So the events
    /// before the loss end their packet, a stream that has no packet yet
    /// gets an empty one at `l.ts`, and then
    /// * a loss of `n` events is an empty packet at `l.ts` whose
    ///   `events_discarded` is `n` more: "discarded n events between [the
    ///   last event before] and [l.ts]";
    /// * a loss of unknown size (trace-cmd's `[EVENTS DROPPED]`, discarded
    ///   packets, a damaged part of the source) a gap in the packet
    ///   sequence numbers: "discarded 1 packet between [the last event
    ///   before] and [the next event]".
    pub fn lost(&mut self, l: &Lost) -> Result<(), Error> {
        if l.count == Some(0) {
            return Ok(());
        }
        let si = self.stream_index(l.stream, l.cpu);
        if self.streams[si].first_ts.is_some() {
            self.flush(si)?;
        }
        if !self.place_losses {
            match l.count {
                None => {
                    self.streams[si].seq += 1;
                    self.summary.discarded_packets += 1;
                }
                Some(n) => {
                    self.summary.discarded += n;
                    let st = &mut self.streams[si];
                    st.discarded = st.discarded.saturating_add(n);
                }
            }
            return Ok(());
        }
        if let Some((count, ts)) = self.streams[si].pending_loss.take() {
            self.write_loss(si, count, ts.min(l.ts))?;
        }
        self.streams[si].pending_loss = Some((l.count, l.ts));
        Ok(())
    }

    /// The loss [`CtfWriter::lost`] held back, at `ts`.
    fn write_loss(&mut self, si: usize, count: Option<u64>, ts: u64) -> Result<(), Error> {
        if self.streams[si].file.is_none() {
            self.empty_packet(si, ts)?;
        }
        match count {
            None => {
                self.streams[si].seq += 1;
                self.summary.discarded_packets += 1;
            }
            Some(n) => {
                self.summary.discarded += n;
                let st = &mut self.streams[si];
                st.discarded = st.discarded.saturating_add(n);
                self.empty_packet(si, ts)?;
            }
        }
        Ok(())
    }

    /// A packet with no events at `ts` (or at the stream's last time, when
    /// that is later) on stream `si`, whose events are all written.
    fn empty_packet(&mut self, si: usize, ts: u64) -> Result<(), Error> {
        let st = &mut self.streams[si];
        st.last_ts = st.last_ts.max(ts);
        self.write_packet(si)
    }

    /// Write the packet of stream `si` (if it has events or a new
    /// discarded count).
    fn flush(&mut self, si: usize) -> Result<(), Error> {
        let st = &self.streams[si];
        if st.first_ts.is_none() && st.discarded == st.written_discarded {
            return Ok(());
        }
        self.write_packet(si)
    }

    /// Write the packet of stream `si`, even with no events.
    fn write_packet(&mut self, si: usize) -> Result<(), Error> {
        let uuid = self.tc.uuid.unwrap_or_default();
        let st = &mut self.streams[si];
        if st.file.is_none() {
            let p = self.dir.join(&st.name);
            let f = File::create(&p).map_err(|e| io(&p, e))?;
            st.file = Some(BufWriter::with_capacity(1 << 20, f));
            self.summary.streams += 1;
        }
        let begin = st.first_ts.unwrap_or(st.last_ts);
        let end = st.last_ts;
        let head_len = PACKET_HEADER + PACKET_CONTEXT - if self.with_cpu { 0 } else { 4 };
        let total = head_len + st.buf.len();
        let bits = (total as u64) * 8;
        let mut head = [0u8; PACKET_HEADER + PACKET_CONTEXT];
        let mut at = 0;
        let mut put = |b: &[u8]| {
            head[at..at + b.len()].copy_from_slice(b);
            at += b.len();
        };
        put(&MAGIC.to_le_bytes());
        put(&uuid);
        put(&0u32.to_le_bytes());
        put(&begin.to_le_bytes());
        put(&end.to_le_bytes());
        put(&bits.to_le_bytes());
        put(&bits.to_le_bytes());
        put(&st.seq.to_le_bytes());
        put(&st.discarded.to_le_bytes());
        put(&st.cpu.to_le_bytes());
        let p = self.dir.join(&st.name);
        let f = st.file.as_mut().expect("opened above");
        f.write_all(&head[..head_len]).map_err(|e| io(&p, e))?;
        f.write_all(&st.buf).map_err(|e| io(&p, e))?;
        self.summary.bytes += total as u64;
        self.summary.packets += 1;
        st.seq += 1;
        st.buf.clear();
        st.first_ts = None;
        st.written_discarded = st.discarded;
        Ok(())
    }

    /// Close every packet and write the metadata.
    pub fn finish(mut self) -> Result<WriteSummary, Error> {
        for i in 0..self.streams.len() {
            self.flush(i)?;
            if let Some((count, ts)) = self.streams[i].pending_loss.take() {
                self.write_loss(i, count, ts)?;
                if count.is_none() {
                    // (a gap shows only before a packet)
                    self.empty_packet(i, ts)?;
                }
            }
            let p = self.dir.join(&self.streams[i].name);
            if let Some(mut f) = self.streams[i].file.take() {
                f.flush().map_err(|e| io(&p, e))?;
            }
        }
        let text = if self.opts.ctf2 {
            crate::ctf2::write_metadata(&self.tc)?
        } else {
            tsdl::write_tsdl(&self.tc)
        };
        let p = self.dir.join("metadata");
        std::fs::write(&p, text.as_bytes()).map_err(|e| io(&p, e))?;
        self.summary.bytes += text.len() as u64;
        Ok(self.summary)
    }

    /// The trace class written so far.
    pub fn trace_class(&self) -> &TraceClass {
        &self.tc
    }
}
