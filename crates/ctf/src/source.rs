//! CTF traces as a source of the common event model
//! ([`tracemux_core::model::RecordSource`]), so that every sink (JSON
//! lines, converters) can consume them.
//!
//! The records come in exactly the order the babeltrace2 text output
//! ([`crate::text`]) prints the events: the same data streams, decoded by
//! the same [`StreamDecoder`], merged by babeltrace2's muxer rules
//! ([`crate::mux`]).
//!
//! How CTF maps onto the model:
//!
//! | model | CTF |
//! |---|---|
//! | `TraceMeta::format` | `Format::Ctf` |
//! | `BufferInfo` | one per trace (name: babeltrace2's trace name; clock: the first clock's name) |
//! | `StreamInfo` / `Event::stream` | one per data stream, traces in order; `cpu` = the first packet's `cpu_id` (else 0) |
//! | `EventClass::id` / `Event::type_id` | a number per (trace, stream class, event class), in metadata order |
//! | `EventClass::system` / `name` | the event class name split at the first `:` (`provider:event`); no `:`: system `""` |
//! | `EventClass::schema` | packet context, event header, stream event context (common context), event context (specific context), payload |
//! | `TraceMeta::clocks` | every clock class of every trace |
//! | `TraceMeta::env` | every trace's environment, values as text |
//! | `Event::ts` | ns from the clock origin, clock offset included (babeltrace2's absolute time; 0 without a clock or before the origin) |
//! | `Event::cpu` | the packet context's `cpu_id` (else 0) |
//! | `Event::pid` | a context field `vtid`, `tid` or `pid` (in that order of preference), else -1 |
//! | `Event::data` / `ext` | the bytes of the event record (header to payload) |
//! | `Event::tape` | every scope's values (packet header excluded) |
//! | `Record::Lost` | discarded events (count when the packet counters give it); discarded packets (count unknown) |
//! | `Record::Damage` | a packet that cannot be read (lenient mode; the rest of that stream is skipped, as in the text output) |

use std::collections::VecDeque;
use std::path::PathBuf;

use tracemux_core::layout::FieldId;
use tracemux_core::model::{
    Base, BufferInfo, ClassTable, ClockInfo, Event, EventClass, Format, Lost, Progress, Record,
    RecordSource, StreamInfo, TraceMeta, Value,
};
use tracemux_core::typed::{
    ArrayLen, ClassSchema, EnumMapping, FieldSchema, FieldTape, FieldType, FieldVisitor, IntType,
    Scope as MScope,
};
use tracemux_core::Error;

use crate::decode::{IntValue, Kind, Node, Program, TaskField, Visitor};
use crate::fs::{self, Loader, Trace};
use crate::ir::{
    ClockClass, DisplayBase, EnvValue, FieldClass, Length, Mapping, Scope, StructClass,
};
use crate::mux::{Head, MsgKind};
use crate::stream::{Discarded, Step, StreamDecoder};

/// Find and open the CTF traces under `paths` (as the text output does).
pub fn open(paths: &[PathBuf], loader: &dyn Loader) -> Result<Vec<Trace>, Error> {
    let found = fs::discover_some(paths)?;
    fs::open_traces(&found, paths, loader, (0, 0))
}

fn model_scope(s: Scope) -> Option<MScope> {
    match s {
        Scope::PacketHeader => None,
        Scope::PacketContext => Some(MScope::PacketContext),
        Scope::EventHeader => Some(MScope::EventHeader),
        Scope::EventCommonContext => Some(MScope::CommonContext),
        Scope::EventSpecificContext => Some(MScope::SpecificContext),
        Scope::EventPayload => Some(MScope::Payload),
    }
}

fn mappings(m: &[Mapping]) -> Vec<EnumMapping> {
    m.iter()
        .map(|m| EnumMapping {
            label: m.name.clone(),
            ranges: m.ranges.iter().map(|r| (r.lower, r.upper)).collect(),
        })
        .collect()
}

/// The model's field class for an IR field class.
pub fn field_type(c: &FieldClass) -> FieldType {
    match c {
        FieldClass::Int(i) => FieldType::Int(IntType {
            bits: i.len.min(64) as u8,
            signed: i.signed,
            base: i.base.into(),
            mappings: mappings(&i.mappings),
        }),
        FieldClass::Float(f) => FieldType::Float { bits: f.len as u8 },
        FieldClass::Bool(_) => FieldType::Bool,
        // bit arrays and bit maps: their bits as an unsigned integer
        FieldClass::BitArray(b) => FieldType::Int(IntType::hex(b.len.min(64) as u8, false)),
        FieldClass::VarInt(v) => FieldType::Int(IntType {
            bits: 64,
            signed: v.signed,
            base: v.base.into(),
            mappings: mappings(&v.mappings),
        }),
        FieldClass::String(_) => FieldType::Str,
        FieldClass::Blob(_) => FieldType::Blob,
        FieldClass::Array(a) => FieldType::Array {
            elem: Box::new(field_type(&a.element)),
            len: match a.length {
                Length::Static(n) => ArrayLen::Static(n),
                Length::Dynamic(_) => ArrayLen::Dynamic,
            },
        },
        FieldClass::Struct(s) => FieldType::Struct(members(s)),
        FieldClass::Variant(v) => FieldType::Variant(
            v.options
                .iter()
                .map(|o| FieldSchema::new(o.name.clone().unwrap_or_default(), field_type(&o.class)))
                .collect(),
        ),
        FieldClass::Optional(o) => FieldType::Optional(Box::new(field_type(&o.class))),
    }
}

fn members(s: &StructClass) -> Vec<FieldSchema> {
    s.members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut ty = field_type(&m.class);
            // a length given by an earlier member of this structure
            if let (FieldClass::Array(a), FieldType::Array { len, .. }) = (&m.class, &mut ty) {
                if let Length::Dynamic(loc) = &a.length {
                    if let Some(j) = loc
                        .path
                        .last()
                        .and_then(|n| s.members[..i].iter().rposition(|p| &p.name == n))
                    {
                        *len = ArrayLen::Sibling(j as u32);
                    }
                }
            }
            FieldSchema::new(m.name.clone(), ty)
        })
        .collect()
}

/// The typed schema of event class `ec` of stream class `sc`.
pub fn class_schema(sc: &crate::ir::StreamClass, ec: &crate::ir::EventClass) -> ClassSchema {
    let mut s = ClassSchema::default();
    for (scope, st) in [
        (MScope::PacketContext, &sc.packet_context),
        (MScope::EventHeader, &sc.event_header),
        (MScope::CommonContext, &sc.event_common_context),
        (MScope::SpecificContext, &ec.specific_context),
        (MScope::Payload, &ec.payload),
    ] {
        if let Some(st) = st {
            s.push(scope, members(st));
            s.declare(scope);
        }
    }
    s
}

pub(crate) fn clock_info(c: &ClockClass) -> ClockInfo {
    ClockInfo {
        name: c.name.clone(),
        freq: c.frequency,
        offset_ns: fs::clock_base_ns(c.frequency, c.offset_seconds, c.offset_cycles).unwrap_or(0),
        origin_unix_epoch: c.origin_is_unix_epoch,
        description: c.description.clone(),
        uuid: c.uuid,
    }
}

/// `uname` and `tracer_version` of `meta` from the first trace's
/// environment (LTTng's `sysname`, `hostname`..., `tracer_name`,
/// `tracer_major`...).
pub(crate) fn uname_and_tracer(tc: Option<&crate::ir::TraceClass>, meta: &mut TraceMeta) {
    let env = |k: &str| {
        tc.and_then(|tc| tc.env(k))
            .map(env_text)
            .filter(|s| !s.is_empty())
    };
    let uname: Vec<String> = ["sysname", "hostname", "kernel_release", "kernel_version"]
        .iter()
        .filter_map(|k| env(k))
        .collect();
    meta.uname = (!uname.is_empty()).then(|| uname.join(" "));
    meta.tracer_version = env("tracer_name").map(|name| {
        let v: Vec<String> = ["tracer_major", "tracer_minor", "tracer_patchlevel"]
            .iter()
            .filter_map(|k| env(k))
            .collect();
        if v.is_empty() {
            name
        } else {
            format!("{name} {}", v.join("."))
        }
    });
}

pub(crate) fn env_text(v: &EnvValue) -> String {
    match v {
        EnvValue::Int(i) => i.to_string(),
        EnvValue::Str(s) => s.clone(),
    }
}

/// Where the recording visitor writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Nowhere,
    Packet,
    Event,
}

/// Per-stream recording state: the packet context's values (copied to
/// the start of each event's tape), the event's values, and what the event
/// says about its CPU and task. Values are recorded with the field ids the
/// program gave its nodes ([`Node::field`]: their ids in the layout of
/// every event class of the stream class, or of the node's event class).
#[derive(Default)]
pub(crate) struct Capture {
    pc: FieldTape,
    pub(crate) ev: FieldTape,
    /// Where the packet context's values end in `ev` (kept from event to
    /// event of a packet: only each event's own values are recorded anew).
    pc_in_ev: Option<tracemux_core::typed::TapeMark>,
    target: Option<Target>,
    /// The scope being decoded.
    scope: Option<Scope>,
    /// Nesting below the scope's root structure (1: its direct members).
    depth: u32,
    tmp: Vec<u8>,
    pub(crate) cpu: Option<u64>,
    /// (preference, value) of the best task field so far.
    pub(crate) pid: Option<(u8, i64)>,
    pub(crate) ev_begin: u64,
    pub(crate) ev_end: u64,
}

impl Capture {
    fn tape(&mut self) -> Option<&mut FieldTape> {
        match self.target {
            Some(Target::Packet) => Some(&mut self.pc),
            Some(Target::Event) => Some(&mut self.ev),
            _ => None,
        }
    }
}

/// Records what the decoder reads into a [`Capture`].
pub(crate) struct Rec<'a> {
    pub(crate) prog: &'a Program,
    pub(crate) c: &'a mut Capture,
}

/// The model's field id of node `n`.
fn field_of(n: &Node) -> FieldId {
    FieldId::new(n.field)
}

impl Rec<'_> {
    fn leaf(&mut self, n: &Node, base: Base, v: Value<'_>) {
        if let Some(t) = self.c.tape() {
            t.put(field_of(n), base, v);
        }
    }

    fn int_value(&mut self, n: &Node, v: IntValue, base: DisplayBase, maps: &[Mapping]) {
        let c = &mut *self.c;
        if c.depth == 1 && n.task != TaskField::None {
            match c.target {
                Some(Target::Packet) if n.task == TaskField::CpuId => {
                    c.cpu = Some(v.as_i128() as u64);
                }
                Some(Target::Event)
                    if matches!(
                        c.scope,
                        Some(Scope::EventCommonContext | Scope::EventSpecificContext)
                    ) =>
                {
                    let pref = match n.task {
                        TaskField::Vtid => Some(0),
                        TaskField::Tid => Some(1),
                        TaskField::Pid => Some(2),
                        _ => None,
                    };
                    if let Some(p) = pref {
                        if c.pid.is_none_or(|(q, _)| p < q) {
                            c.pid = Some((p, v.as_i128() as i64));
                        }
                    }
                }
                _ => {}
            }
        }
        let val = match v {
            IntValue::U(x) => Value::Unsigned(x),
            IntValue::S(x) => Value::Signed(x),
        };
        let Some(t) = c.tape() else { return };
        if maps.is_empty() {
            t.put(field_of(n), base.into(), val);
            return;
        }
        let x = v.as_i128();
        let mut labels: [&str; 8] = [""; 8];
        let mut k = 0;
        for m in maps {
            if k < labels.len() && m.ranges.iter().any(|r| r.contains(x)) {
                labels[k] = &m.name;
                k += 1;
            }
        }
        t.put_enum(field_of(n), val, &labels[..k]);
    }

    /// A structure, array, variant or optional begins.
    fn open(&mut self, f: impl FnOnce(&mut FieldTape)) {
        if let Some(t) = self.c.tape() {
            f(t);
        }
        self.c.depth += 1;
    }

    fn close(&mut self, f: impl FnOnce(&mut FieldTape)) {
        if let Some(t) = self.c.tape() {
            f(t);
        }
        self.c.depth = self.c.depth.saturating_sub(1);
    }
}

impl Visitor for Rec<'_> {
    fn packet_begin(&mut self, _file_offset: u64) {
        self.c.pc.clear();
        self.c.pc_in_ev = None;
        self.c.cpu = None;
    }

    fn event_begin(&mut self, at: u64) {
        let c = &mut *self.c;
        match c.pc_in_ev {
            Some(m) => c.ev.truncate(m),
            None => {
                c.ev.clear();
                c.ev.append(&c.pc);
                c.pc_in_ev = Some(c.ev.mark());
            }
        }
        c.pid = None;
        c.ev_begin = at;
        c.ev_end = at;
    }

    fn event_end(&mut self, at: u64) {
        self.c.ev_end = at;
    }

    fn scope_begin(&mut self, scope: Scope, _at: u64) {
        let c = &mut *self.c;
        c.depth = 0;
        c.scope = Some(scope);
        c.target = Some(match scope {
            Scope::PacketHeader => Target::Nowhere,
            Scope::PacketContext => Target::Packet,
            _ => Target::Event,
        });
        if let (Some(ms), Some(t)) = (model_scope(scope), c.tape()) {
            t.scope_begin(ms);
        }
    }

    fn scope_end(&mut self, scope: Scope, _at: u64) {
        let c = &mut *self.c;
        if let (Some(ms), Some(t)) = (model_scope(scope), c.tape()) {
            t.scope_end(ms);
        }
        c.target = None;
        c.scope = None;
    }

    fn struct_begin(&mut self, node: &Node, _at: u64) {
        if self.c.depth == 0 {
            // the scope's root structure is the scope itself
            self.c.depth = 1;
            return;
        }
        self.open(|t| t.put_struct(field_of(node)));
    }

    fn struct_end(&mut self, _node: &Node, _end: u64) {
        if self.c.depth <= 1 {
            self.c.depth = 0;
            return;
        }
        self.close(|t| t.struct_end());
    }

    fn array_begin(&mut self, node: &Node, len: u64, _at: u64) {
        self.open(|t| t.put_array(field_of(node), len));
    }

    fn array_end(&mut self, _node: &Node, _end: u64) {
        self.close(|t| t.array_end());
    }

    fn variant_begin(&mut self, node: &Node, _selector: i128, option: usize, _at: u64) {
        let opt = match node.kind {
            Kind::Variant { first, count, .. } => self
                .prog
                .variant_options(first, count)
                .get(option)
                .map_or(FieldId::UNKNOWN, |o| {
                    field_of(&self.prog.nodes[o.node as usize])
                }),
            _ => FieldId::UNKNOWN,
        };
        self.open(|t| t.put_variant(field_of(node), opt));
    }

    fn variant_end(&mut self, _node: &Node, _end: u64) {
        self.close(|t| t.variant_end());
    }

    fn optional_begin(&mut self, node: &Node, enabled: bool, _selector: i128, _at: u64) {
        self.open(|t| t.put_optional(field_of(node), enabled));
    }

    fn optional_end(&mut self, _node: &Node, _end: u64) {
        self.close(|t| t.optional_end());
    }

    fn int(&mut self, node: &Node, v: IntValue, _at: u64) {
        match &node.kind {
            Kind::Int { base, mappings, .. } | Kind::VarInt { base, mappings, .. } => {
                self.int_value(node, v, *base, mappings)
            }
            _ => self.int_value(node, v, DisplayBase::Decimal, &[]),
        }
    }

    fn float(&mut self, node: &Node, v: f64, _at: u64) {
        self.leaf(node, Base::Dec, Value::Float(v));
    }

    fn boolean(&mut self, node: &Node, v: bool, _at: u64) {
        self.leaf(node, Base::Dec, Value::Bool(v));
    }

    fn bit_array(&mut self, node: &Node, v: u64, _at: u64) {
        self.leaf(node, Base::Hex, Value::Unsigned(v));
    }

    fn string(&mut self, node: &Node, raw: &[u8], _at: u64, _end: u64) {
        let enc = match &node.kind {
            Kind::String { encoding, .. } => *encoding,
            _ => Default::default(),
        };
        let mut tmp = std::mem::take(&mut self.c.tmp);
        let text = crate::text::string_text(raw, enc, &mut tmp);
        if let Some(t) = self.c.tape() {
            t.put(field_of(node), Base::Dec, Value::Str(text));
        }
        self.c.tmp = tmp;
    }

    fn blob(&mut self, node: &Node, bytes: &[u8], _at: u64, _end: u64) {
        self.leaf(node, Base::Hex, Value::Bytes(bytes));
    }
}

/// A message of a stream, as babeltrace2's source produces it.
#[derive(Debug, Clone, Copy)]
struct Msg {
    kind: MsgKind,
    ts: Option<i64>,
    class: usize,
    notice: Option<Discarded>,
}

/// One data stream being read.
struct Stream<'t> {
    dec: StreamDecoder<'t>,
    rel: fs::Releaser<'t>,
    prog: &'t Program,
    cap: Capture,
    trace: usize,
    group: usize,
    clock: Option<&'t ClockClass>,
    /// Model class id of the stream class's first event class.
    class_base: u32,
    head: Option<Msg>,
    started: bool,
    ended: bool,
}

impl Stream<'_> {
    fn ns(&self, cycles: u64) -> Option<i64> {
        self.clock.and_then(|c| fs::ns_from_origin(c, cycles))
    }

    fn stop(&mut self) {
        self.ended = true;
        if let Some(pe) = self.dec.current_packet() {
            self.rel
                .finish(pe.file, pe.offset.saturating_add(pe.total_bytes));
        }
    }

    /// The next message of the stream (`None` at its end).
    fn produce(&mut self) -> Result<Option<Msg>, crate::stream::StreamError> {
        let mk = |kind, ts| Msg {
            kind,
            ts,
            class: 0,
            notice: None,
        };
        if self.ended {
            return Ok(None);
        }
        if !self.started {
            self.started = true;
            return Ok(Some(mk(MsgKind::StreamBegin, None)));
        }
        let mut rec = Rec {
            prog: self.prog,
            c: &mut self.cap,
        };
        let step = match self.dec.advance(&mut rec) {
            Ok(s) => s,
            Err(e) => {
                self.stop();
                return Err(e);
            }
        };
        Ok(Some(match step {
            Step::PacketBegin { clock } => {
                if let Some(pe) = self.dec.current_packet() {
                    self.rel.packet(pe.file, pe.offset);
                }
                mk(MsgKind::PacketBegin, clock.and_then(|c| self.ns(c)))
            }
            Step::PacketEnd { clock } => mk(MsgKind::PacketEnd, clock.and_then(|c| self.ns(c))),
            Step::Discarded(d) => Msg {
                notice: Some(d),
                ..mk(
                    if d.packets {
                        MsgKind::DiscardedPackets
                    } else {
                        MsgKind::Discarded
                    },
                    d.begin.and_then(|b| self.ns(b)),
                )
            },
            Step::Event { clock, class } => {
                if let Err(e) = self.dec.body(&mut rec) {
                    self.stop();
                    return Err(e);
                }
                Msg {
                    class,
                    ..mk(MsgKind::Event, Some(self.ns(clock).unwrap_or(i64::MIN)))
                }
            }
            Step::End => {
                self.stop();
                mk(MsgKind::StreamEnd, None)
            }
        }))
    }
}

/// The records of one or several CTF traces, in babeltrace2's order.
pub struct CtfSource<'t> {
    traces: &'t [Trace],
    meta: TraceMeta,
    streams: Vec<Stream<'t>>,
    rank: Vec<u32>,
    active: Vec<usize>,
    last_returned: i64,
    strict: bool,
    /// The stream whose head the last record was (its tape is lent out).
    current: Option<usize>,
    /// Damage found while indexing, reported first.
    damage: VecDeque<Error>,
    failed: bool,
}

impl<'t> CtfSource<'t> {
    /// A source over `traces` (from [`open`]). Consumed bytes are given
    /// back to `loader` ([`Loader::release`]). With `strict`, damage found
    /// while indexing is an error here, and damage found while decoding
    /// an error of [`RecordSource::next_record`].
    pub fn new(traces: &'t [Trace], loader: &'t dyn Loader, strict: bool) -> Result<Self, Error> {
        let mut damage = VecDeque::new();
        for t in traces {
            // What was forgiven in the metadata: refused in strict mode
            // (the caller reports it otherwise, see `Trace::notes`).
            if let Some(n) = t.notes.first().filter(|_| strict) {
                return Err(n.to_error());
            }
            for d in &t.damage {
                let e = d.to_error();
                if strict {
                    return Err(e);
                }
                damage.push_back(e);
            }
        }
        let mut classes = ClassTable::new();
        let mut meta = TraceMeta {
            format: Some(Format::Ctf),
            endian: traces.first().map(|t| t.tc.native_byte_order),
            long_size: 8,
            ..TraceMeta::default()
        };
        // class ids: per (trace, IR stream class) the id of its first class
        let mut bases: Vec<Vec<u32>> = Vec::new();
        let mut next_id: u32 = 0;
        for t in traces {
            let mut b = Vec::new();
            for sc in &t.tc.stream_classes {
                b.push(next_id);
                for ec in &sc.event_classes {
                    let full = ec.name.as_deref().unwrap_or("<unknown>");
                    let (system, name) = full.split_once(':').unwrap_or(("", full));
                    classes.push(EventClass::with_schema(
                        next_id,
                        system,
                        name,
                        class_schema(sc, ec),
                    ));
                    next_id += 1;
                }
            }
            bases.push(b);
            meta.clocks.extend(t.tc.clocks.iter().map(clock_info));
            meta.env.extend(
                t.tc.environment
                    .iter()
                    .map(|(k, v)| (k.clone(), env_text(v))),
            );
        }
        meta.classes = classes;
        uname_and_tracer(traces.first().map(|t| &t.tc), &mut meta);
        let mut streams = Vec::new();
        for (ti, t) in traces.iter().enumerate() {
            let mut cpus = 0;
            for (gi, g) in t.streams.iter().enumerate() {
                let sp = t.prog.streams.get(g.class);
                let clock = sp
                    .and_then(|s| s.default_clock)
                    .and_then(|c| t.tc.clocks.get(c));
                let sc_pos = sp.and_then(|s| t.tc.stream_classes.iter().position(|x| x.id == s.id));
                let files: Vec<&[u8]> = g.files.iter().map(|&f| (*t.files[f].1).as_ref()).collect();
                let cpu = first_cpu(t, &files, g);
                cpus = cpus.max(cpu + 1);
                meta.streams.push(StreamInfo {
                    buffer: ti as u32,
                    cpu,
                });
                let mut dec = StreamDecoder::new(&t.prog, t.tc.uuid, files, g.packets.clone());
                dec.set_quirks(t.quirks.lttng_crash, t.quirks.lttng_event_after_packet);
                streams.push(Stream {
                    dec,
                    rel: fs::Releaser::new(loader, t, g),
                    prog: &t.prog,
                    cap: Capture::default(),
                    trace: ti,
                    group: gi,
                    clock,
                    class_base: sc_pos.map_or(u32::MAX, |p| bases[ti][p]),
                    head: None,
                    started: false,
                    ended: false,
                });
            }
            meta.buffers.push(BufferInfo {
                name: t.name.clone(),
                clock: t
                    .tc
                    .clocks
                    .first()
                    .map(|c| c.name.clone())
                    .unwrap_or_default(),
                page_size: 0,
                cpus,
            });
            meta.cpus = meta.cpus.max(cpus);
        }
        Ok(CtfSource {
            traces,
            meta,
            active: (0..streams.len()).collect(),
            streams,
            rank: crate::mux::trace_ranks(traces),
            last_returned: i64::MIN,
            strict,
            current: None,
            damage,
            failed: false,
        })
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

    /// The next message of the muxer, and its stream (`Ok(None)`: the
    /// end; `Err`: a damaged stream, as a record or an error).
    fn mux_next(&mut self) -> Result<Option<usize>, Error> {
        let mut i = 0;
        while i < self.active.len() {
            let s = self.active[i];
            if self.streams[s].head.is_none() {
                match self.streams[s].produce() {
                    Ok(Some(m)) => self.streams[s].head = Some(m),
                    Ok(None) => {
                        self.active.swap_remove(i);
                        continue;
                    }
                    Err(e) => {
                        let st = &self.streams[s];
                        return Err(crate::text::stream_error(
                            &self.traces[st.trace],
                            st.group,
                            &e,
                        ));
                    }
                }
            }
            i += 1;
        }
        let heads = self.active.iter().filter_map(|&s| {
            let m = self.streams[s].head?;
            Some((s, m.ts.unwrap_or(self.last_returned)))
        });
        let best = crate::mux::earliest(heads, |a, b| {
            crate::mux::compare(self.traces, &self.rank, self.head(a), self.head(b))
        });
        let Some((s, ts)) = best else {
            return Ok(None);
        };
        self.last_returned = ts;
        Ok(Some(s))
    }
}

/// The `cpu_id` of the first packet of stream `g` (0 without one).
fn first_cpu(t: &Trace, files: &[&[u8]], g: &fs::StreamGroup) -> u32 {
    let Some(p) = g.packets.first() else {
        return 0;
    };
    let mut dec = StreamDecoder::new(&t.prog, t.tc.uuid, files.to_vec(), vec![p.clone()]);
    let mut cap = Capture::default();
    let mut rec = Rec {
        prog: &t.prog,
        c: &mut cap,
    };
    loop {
        match dec.advance(&mut rec) {
            Ok(Step::PacketBegin { .. }) | Ok(Step::End) | Err(_) => break,
            Ok(_) => {}
        }
    }
    cap.cpu.map_or(0, |c| c as u32)
}

impl RecordSource for CtfSource<'_> {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn progress(&self) -> Option<Progress> {
        let p = self.streams.iter().fold(Progress::default(), |p, s| {
            let (done, total) = s.dec.progress();
            p + Progress { done, total }
        });
        Some(p).filter(|p| p.total > 0)
    }

    // the event's stream records its next event into the tape it gets,
    // from scratch: its packet's context replayed first
    fn swaps_tapes(&self) -> bool {
        true
    }
    fn swap_tape(&mut self, t: &mut tracemux_core::typed::FieldTape) {
        if let Some(s) = self.current {
            let c = &mut self.streams[s].cap;
            std::mem::swap(&mut c.ev, t);
            c.pc_in_ev = None;
        }
    }

    fn next_record(&mut self) -> tracemux_core::Result<Option<Record<'_>>> {
        if let Some(e) = self.damage.pop_front() {
            return Ok(Some(Record::Damage(e)));
        }
        if self.failed {
            return Ok(None);
        }
        if let Some(s) = self.current.take() {
            self.streams[s].head = None;
        }
        loop {
            let s = match self.mux_next() {
                Ok(Some(s)) => s,
                Ok(None) => return Ok(None),
                Err(e) => {
                    if self.strict {
                        self.failed = true;
                        return Err(e);
                    }
                    return Ok(Some(Record::Damage(e)));
                }
            };
            let Some(m) = self.streams[s].head else {
                continue;
            };
            match m.kind {
                MsgKind::Event => {
                    self.current = Some(s);
                    let st = &self.streams[s];
                    let t = &self.traces[st.trace];
                    let id = st.class_base.wrapping_add(m.class as u32);
                    let pe = st.dec.current_packet();
                    let mut data: &[u8] = &[];
                    if let Some(pe) = pe {
                        let bytes = t.streams[st.group]
                            .files
                            .get(pe.file)
                            .and_then(|&f| t.files.get(f))
                            .map_or(&[][..], |f| (*f.1).as_ref());
                        let a = pe.offset.saturating_add(st.cap.ev_begin / 8) as usize;
                        let b = pe.offset.saturating_add(st.cap.ev_end.div_ceil(8)) as usize;
                        data = bytes.get(a..b.min(bytes.len())).unwrap_or(&[]);
                    }
                    return Ok(Some(Record::Event(Event {
                        ts: m.ts.map_or(0, |t| t.max(0) as u64),
                        stream: s as u32,
                        cpu: st.cap.cpu.map_or(0, |c| c as u32),
                        type_id: id,
                        class: self.meta.classes.get(id),
                        pid: st.cap.pid.map_or(-1, |(_, p)| p as i32),
                        data,
                        ext: data,
                        endian: t.tc.native_byte_order,
                        file_pos: pe.map_or(0, |p| p.offset.saturating_add(p.total_bytes)),
                        tape: Some(&st.cap.ev),
                        raw_ts: None,
                    })));
                }
                MsgKind::Discarded | MsgKind::DiscardedPackets => {
                    self.streams[s].head = None;
                    let Some(d) = m.notice else { continue };
                    return Ok(Some(Record::Lost(Lost {
                        stream: s as u32,
                        cpu: self.meta.streams.get(s).map_or(0, |x| x.cpu),
                        ts: self.last_returned.max(0) as u64,
                        count: if d.packets { None } else { d.count },
                    })));
                }
                _ => {
                    self.streams[s].head = None;
                }
            }
        }
    }
}
