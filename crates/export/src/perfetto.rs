//! Perfetto's protobuf trace format, written as a stream of `TracePacket`s.
//!
//! Kernel traces (trace.dat, LTTng kernel and perf CTF traces) become
//! per-CPU `FtraceEventBundle`s: the events Perfetto knows get their typed
//! message (mapped by event and field name, LTTng's `*_tid` names included),
//! every other event a `GenericFtraceEvent` with every payload field; a
//! loss sets `lost_events` on the CPU's next bundle. User-space traces
//! (uftrace, CTF user-space traces, LTT) become track events on one packet
//! sequence per thread (per stream when the event has no thread): uftrace
//! function entry/exit as slice begin/end, other events as instants, every
//! field as a debug annotation; event and annotation names are interned on
//! each sequence after its incremental state was cleared.
//!
//! All timestamps are the model's `Event::ts` on Perfetto's default trace
//! clock, so ftrace bundles and track events line up. Packets are written as
//! they are produced (bundles hold at most [`BUNDLE_EVENTS`] events),
//! encoded on a second thread (`packets.rs`); memory stays flat apart
//! from the per-thread interning tables.
//!
//! Speed: events of fixed-layout classes (trace.dat) are read straight from
//! their records through a per-class `Layout`; the others go through the
//! tree of their values ([`Tree`]). Debug annotations are encoded from the
//! tree into bytes as they are built (the bytes prost writes for the
//! `DebugAnnotation` messages), so that a track event allocates nothing.

use std::fmt::Write as _;

use foldhash::{HashMap, HashMapExt};
use std::io::Write;

use prost::Message;
use tracemux_core::idmap::IdMap;
use tracemux_core::layout::{ClassId, ClassLayout, ClassMap, FieldId, FieldRef};
use tracemux_core::model::{Event, EventClass, FieldDef, Format, Lost, TraceMeta, Value};
use tracemux_core::tasks::TaskTracker;
use tracemux_core::typed::{FieldTape, Scope, TapeStep};
use tracemux_core::Endian;

use crate::packets::Packets;
use crate::perf_samples::PerfSamples;
use crate::proto::*;
use crate::tree::{resolve, Kind, Tree};
use crate::typed_events::{record_value, value_int, Fields, Layout, ToMessage, TreeSlots, Typed};

pub use crate::packets::BUNDLE_EVENTS;

mod descriptors;
mod ftrace;
mod track;

use descriptors::*;
use ftrace::*;
use track::*;

pub use crate::packets::COMPRESS_CHUNK;

/// The packet sequence of the ftrace bundles (track-event sequences count
/// from 1).
pub const FTRACE_SEQUENCE: u32 = 0x7fff_0001;

/// How a [`PerfettoWriter`] writes.
#[derive(Debug, Clone, Copy)]
pub struct PerfettoOptions {
    /// `sched_switch` and `sched_waking` in the bundles' `compact_sched`
    /// columns where nothing is lost by it (see [`CompactSched`]); else
    /// every event as a full `FtraceEvent`.
    pub compact_sched: bool,
    /// Packets in zlib `compressed_packets` of about [`COMPRESS_CHUNK`]
    /// bytes each.
    pub compress: bool,
    /// Events Perfetto has no message for as messages of per-class
    /// descriptors in the bundles (`generic_event_descriptors`, Perfetto
    /// v50+); else as `GenericFtraceEvent`s naming every field.
    pub describe_generic: bool,
}

impl Default for PerfettoOptions {
    fn default() -> Self {
        PerfettoOptions {
            compact_sched: true,
            compress: false,
            describe_generic: true,
        }
    }
}

/// What a [`PerfettoWriter`] wrote.
#[derive(Debug, Default, Clone, Copy)]
pub struct PerfettoStats {
    pub packets: u64,
    pub bytes: u64,
    /// Events written in ftrace bundles.
    pub ftrace_events: u64,
    /// Of those, the ones written as `GenericFtraceEvent`.
    pub generic_events: u64,
    /// Of those, the ones written in `compact_sched` columns.
    pub compact_events: u64,
    /// Kernel symbols interned (function names of `funcgraph_*`).
    pub kernel_symbols: u64,
    /// Events written as track events.
    pub track_events: u64,
    /// Packet sequences (threads and streams) of track events.
    pub sequences: u32,
    /// perf samples written as `PerfSample`s.
    pub perf_samples: u64,
}

struct Pending {
    cpu: u32,
    events: Vec<FtraceEvent>,
    lost: bool,
    compact: CompactSched,
    comms: HashMap<String, u32>,
    /// The last timestamps written in `compact`'s columns.
    switch_ts: u64,
    waking_ts: u64,
    /// Kernel symbols this bundle uses (addresses).
    symbols: Vec<u64>,
    /// Described generic events this bundle uses (class keys).
    descriptors: Vec<ClassId>,
}

impl Pending {
    fn new(cpu: u32) -> Self {
        Pending {
            cpu,
            events: Vec::with_capacity(BUNDLE_EVENTS),
            lost: false,
            compact: CompactSched::default(),
            comms: HashMap::new(),
            switch_ts: 0,
            waking_ts: 0,
            symbols: Vec::new(),
            descriptors: Vec::new(),
        }
    }
    fn len(&self) -> usize {
        self.events.len() + self.compact.len()
    }
    fn comm(&mut self, c: &str) -> u32 {
        if let Some(&i) = self.comms.get(c) {
            return i;
        }
        let i = self.compact.intern_table.len() as u32;
        self.compact.intern_table.push(c.to_string());
        self.comms.insert(c.to_string(), i);
        i
    }
}

/// What the last `sched_switch` on a CPU left running: the state a reader
/// of compact `sched_switch` and `sched_waking` events infers their missing
/// fields from.
#[derive(Default)]
struct CpuSched {
    /// Time and `next_pid`, `next_comm`, `next_prio` of the last switch.
    last: Option<(u64, i32, String, i32)>,
    /// Another switch had the same time (or came out of order): which one
    /// is last is ambiguous until the next switch.
    tie: bool,
}

/// A generic event class written with a descriptor: its field number in
/// `FtraceEvent`, its fields (name, protobuf type), whether a bundle
/// carried the descriptor yet.
struct Dense {
    tag: u32,
    fields: Vec<(String, i32)>,
    descriptor: GenericEventDescriptor,
    written: bool,
}

/// What the writer does with the events of a class.
#[derive(Debug, Clone, Copy)]
struct Plan {
    /// The message Perfetto has for them, if any.
    typed: Option<Typed>,
    /// Where their fields are, for a class of a fixed layout.
    layout: Option<Layout>,
    /// Where the typed message's fields are in an event's tree.
    slots: Option<TreeSlots>,
    /// The other fields read from the tree.
    fields: ClassFields,
}

/// The fields the writer reads from the trees of a class's events besides
/// its typed message's, resolved by name once per class.
#[derive(Debug, Clone, Copy, Default)]
struct ClassFields {
    /// `common_pid` or `perf_tid` (events without a task).
    pid: FieldId,
    /// `common_flags`.
    flags: FieldId,
    /// A uftrace entry's function name and address.
    name: FieldId,
    addr: FieldId,
    /// LTTng's `vpid` context, or a `pid` one.
    process: FieldId,
}

impl ClassFields {
    fn of(c: &EventClass) -> ClassFields {
        ClassFields {
            pid: resolve(c, Scope::Payload, &["common_pid", "perf_tid"]),
            flags: resolve(c, Scope::CommonContext, &["common_flags"]),
            name: resolve(c, Scope::Payload, &["name"]),
            addr: resolve(c, Scope::Payload, &["addr"]),
            process: resolve(c, Scope::CommonContext, &["vpid", "pid"]),
        }
    }
}

/// One event of a bundle before it is placed, and the described class
/// it is of: `(class key, descriptor written)`.
struct Built {
    event: FtraceEvent,
    descriptor: Option<(ClassId, bool)>,
}

/// A kernel symbol: its interned id, and whether a packet defined it yet.
struct Ksym {
    iid: u64,
    name: Vec<u8>,
    written: bool,
}
/// What a class's events are on a track: uftrace's entries and exits
/// (slices), uftrace's other events, or any other event (instants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TrackKind {
    Entry,
    Exit,
    Uftrace,
    Other,
}

impl TrackKind {
    fn of(c: &EventClass) -> TrackKind {
        match (c.system.as_str(), c.name.as_str()) {
            ("uftrace", "entry") => TrackKind::Entry,
            ("uftrace", "exit") => TrackKind::Exit,
            ("uftrace", _) => TrackKind::Uftrace,
            _ => TrackKind::Other,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum TrackKey {
    Thread(i32),
    Stream(u32),
}

struct Seq {
    id: u32,
    names: HashMap<String, u64>,
    ann_names: HashMap<String, u64>,
    /// [`Interner::fields`] of each class seen on the sequence.
    field_iids: ClassMap<Vec<u64>>,
    /// The iid of the name of each class's instants on the sequence.
    class_names: ClassMap<u64>,
    /// uftrace: the `addr` of the open entries of the thread.
    stack: Vec<u64>,
}

impl Seq {
    /// Sequence `id`, nothing interned on it yet.
    fn new(id: u32) -> Seq {
        Seq {
            id,
            names: HashMap::new(),
            ann_names: HashMap::new(),
            field_iids: ClassMap::new(),
            class_names: ClassMap::new(),
            stack: Vec::new(),
        }
    }

    /// The uuid of the track of sequence `id`.
    fn track_uuid(id: u32) -> u64 {
        0x7472_6d78_0000_0000u64 | u64::from(id)
    }
}

/// A sink of the model writing Perfetto's protobuf format to `W` (on a
/// thread of its own).
pub struct PerfettoWriter<W: Write + Send + 'static> {
    out: Packets<W>,
    opts: PerfettoOptions,
    kernel: bool,
    cpu_sched: IdMap<CpuSched>,
    ksyms: HashMap<u64, Ksym>,
    /// Generic event classes by address: `None` when they cannot be
    /// described (too many fields).
    dense: HashMap<ClassId, Option<Dense>>,
    dense_buf: Vec<u8>,
    /// The encoded debug annotations of the track event being built.
    ann_buf: Vec<u8>,
    /// The name of the track event being built.
    title: String,
    /// Where encoded parts of events are kept until they are written.
    arena: Arena,
    /// Whether a bundle was written (the first clears the ftrace sequence's
    /// incremental state).
    ftrace_started: bool,
    uftrace_pid: Option<i32>,
    /// A timeline of several inputs: whether each input's events go to
    /// ftrace bundles, and its uftrace process (by input).
    input_kernel: Vec<bool>,
    input_uftrace: Vec<bool>,
    /// The uftrace process of the event being written.
    cur_uftrace: Option<i32>,
    /// A timeline's clock snapshot and alignment are written (before the
    /// first event).
    timeline_written: bool,
    /// Thread groups the events say (`task_newtask`, `sched_process_exec`,
    /// LTTng's `vtid`/`vpid` contexts): a process tree of them at the end.
    tasks: TaskTracker,
    /// How each class's events are written on a track.
    kinds: ClassMap<TrackKind>,
    /// The trace's own task names and thread groups (for the end).
    task_meta: TraceMeta,
    tree: Tree,
    pending: IdMap<Option<Pending>>,
    /// What to do with each class's events, by class id (with the class's
    /// address: merged traces may share ids).
    plans: ClassMap<Plan>,
    seqs: HashMap<TrackKey, Seq>,
    /// Names newly interned by the event being built.
    new_names: Vec<EventName>,
    new_ann_names: Vec<DebugAnnotationName>,
    /// perf samples as `PerfSample`s (perf.data only).
    perf: Option<PerfSamples>,
    stats: PerfettoStats,
}

pub(crate) fn uftrace_pid(meta: &TraceMeta) -> Option<i32> {
    if meta.format == Some(Format::Uftrace) {
        meta.tasks.sorted().first().map(|t| t.0)
    } else {
        None
    }
}

/// Whether a trace's events go to ftrace bundles: trace.dat, and CTF
/// traces of the kernel (LTTng's `domain = kernel`, or perf's converted
/// sched events).
pub fn is_kernel_trace(meta: &TraceMeta) -> bool {
    match meta.format {
        Some(Format::TraceDat) => true,
        Some(Format::Uftrace) | Some(Format::Ltt) => false,
        // trace.dat sources do not name their format: ftrace layouts
        // (classes with `common_*` fields) say it.
        _ => {
            meta.env.iter().any(|(k, v)| k == "domain" && v == "kernel")
                || meta.classes.iter().any(|c| {
                    !c.common_fields.is_empty()
                        || c.name == "sched_switch"
                        || c.name == "sched_waking"
                })
        }
    }
}

impl<W: Write + Send + 'static> PerfettoWriter<W> {
    /// Start the trace: `SystemInfo` (uname) and a `ProcessTree` of the
    /// trace's task names.
    pub fn new(meta: &TraceMeta, out: W) -> std::io::Result<Self> {
        Self::with_options(meta, out, PerfettoOptions::default())
    }

    /// [`PerfettoWriter::new`] with options.
    pub fn with_options(meta: &TraceMeta, out: W, opts: PerfettoOptions) -> std::io::Result<Self> {
        let uftrace_pid = uftrace_pid(meta);
        let mut w = PerfettoWriter {
            out: Packets::start(out, opts.compress)?,
            opts,
            kernel: meta.inputs.is_empty() && is_kernel_trace(meta),
            cpu_sched: IdMap::new(),
            ksyms: HashMap::new(),
            dense: HashMap::new(),
            dense_buf: Vec::new(),
            ann_buf: Vec::new(),
            title: String::new(),
            arena: Arena::default(),
            ftrace_started: false,
            uftrace_pid,
            input_kernel: meta
                .inputs
                .iter()
                .map(|i| matches!(i.format, Some(Format::TraceDat) | Some(Format::Perf)))
                .collect(),
            input_uftrace: meta
                .inputs
                .iter()
                .map(|i| i.format == Some(Format::Uftrace))
                .collect(),
            cur_uftrace: uftrace_pid,
            timeline_written: meta.inputs.is_empty(),
            tasks: TaskTracker::new(),
            kinds: ClassMap::new(),
            task_meta: TraceMeta {
                tasks: meta.tasks.clone(),
                tgids: meta.tgids.clone(),
                ..TraceMeta::default()
            },
            tree: Tree::default(),
            pending: IdMap::new(),
            plans: ClassMap::new(),
            seqs: HashMap::new(),
            new_names: Vec::new(),
            new_ann_names: Vec::new(),
            perf: (meta.format == Some(Format::Perf)).then(PerfSamples::new),
            stats: PerfettoStats::default(),
        };
        w.packet(
            TracePacket {
                data: Some(Data::SystemInfo(system_info(meta))),
                ..Default::default()
            },
            1,
        )?;
        let mut tree = ProcessTree::default();
        for (tid, comm) in meta.tasks.sorted() {
            tree.threads.push(Thread {
                tid: Some(tid),
                name: Some(comm.to_string()),
                tgid: meta.tgids.get(&tid).copied().or(w.uftrace_pid),
            });
        }
        // the processes: the recording's (uftrace), then every other
        // thread group the trace's task table says
        let mut groups: Vec<i32> = w.uftrace_pid.into_iter().collect();
        let mut said: Vec<i32> = meta.tgids.values().copied().filter(|&p| p > 0).collect();
        said.sort_unstable();
        said.dedup();
        groups.extend(said.into_iter().filter(|g| Some(*g) != w.uftrace_pid));
        for pid in groups {
            tree.processes.push(process(meta, pid));
        }
        if !tree.threads.is_empty() {
            w.packet(
                TracePacket {
                    data: Some(Data::ProcessTree(tree)),
                    ..Default::default()
                },
                1,
            )?;
        }
        Ok(w)
    }

    /// Write one packet (holding `weight` events).
    fn packet(&mut self, p: TracePacket, weight: usize) -> std::io::Result<()> {
        self.stats.packets += 1;
        self.out.push(p, weight)
    }

    /// One event of the model.
    pub fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> std::io::Result<()> {
        if !self.timeline_written {
            self.timeline(meta, ev.ts)?;
        }
        if let Some(p) = self.perf.as_mut() {
            if let Some(pk) = p.packet(ev) {
                self.stats.perf_samples += 1;
                return self.packet(pk, 1);
            }
        }
        if let Some(c) = ev.class {
            if self.tasks.learns_from(c) {
                self.tasks.learn(meta, ev);
            }
        }
        let uftrace = match ev.class {
            Some(c) => {
                *self.kinds.get_or_insert_with(c.index, || TrackKind::of(c)) != TrackKind::Other
            }
            None => false,
        };
        let kernel = if meta.inputs.is_empty() {
            self.kernel
        } else {
            let i = tracemux_core::timeline::input_of_stream(meta, ev.stream);
            let i = i.unwrap_or(usize::MAX);
            self.cur_uftrace = if self.input_uftrace.get(i) == Some(&true) {
                Some(meta.tgids.get(&ev.pid).copied().unwrap_or(ev.pid))
            } else {
                None
            };
            self.input_kernel.get(i) == Some(&true)
        };
        if kernel && !uftrace {
            self.ftrace(meta, ev)
        } else {
            self.track_event(meta, ev)
        }
    }

    /// Events were lost before `l.ts` on a CPU: the CPU's next bundle says
    /// so (kernel traces), or an instant `lost events` on the stream's track
    /// with the `cpu` and `count` (others).
    pub fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> std::io::Result<()> {
        if !self.timeline_written {
            self.timeline(meta, l.ts)?;
        }
        let kernel = if meta.inputs.is_empty() {
            self.kernel
        } else {
            let i = tracemux_core::timeline::input_of_stream(meta, l.stream);
            self.input_kernel.get(i.unwrap_or(usize::MAX)) == Some(&true)
        };
        if !kernel {
            return self.lost_instant(meta, l);
        }
        let s = l.stream;
        if let Some(Some(p)) = self.pending.get(s) {
            if p.len() > 0 || p.lost {
                self.flush_bundle(s)?;
            }
        }
        let p = self
            .pending
            .slot(s)
            .get_or_insert_with(|| Pending::new(l.cpu));
        p.lost = true;
        Ok(())
    }

    /// The names interned since the last packet, for the next packet to
    /// carry (`None`: none).
    fn take_interned(&mut self) -> Option<InternedData> {
        (!self.new_names.is_empty() || !self.new_ann_names.is_empty()).then(|| InternedData {
            event_names: std::mem::take(&mut self.new_names),
            debug_annotation_names: std::mem::take(&mut self.new_ann_names),
            ..Default::default()
        })
    }

    /// Write what is pending and flush; returns what was written.
    pub fn finish(mut self) -> std::io::Result<(W, PerfettoStats)> {
        for s in self.pending.ids() {
            self.flush_bundle(s)?;
        }
        self.learned_groups()?;
        self.stats.sequences = self.seqs.len() as u32;
        let (out, bytes) = self.out.finish()?;
        self.stats.bytes = bytes;
        Ok((out, self.stats))
    }
}

type Steps<'a, I> = std::iter::Peekable<I>;

/// The packets of a `compressed_packets` field (zlib) as the framed bytes
/// of a `Trace`.
pub fn inflate(z: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(z.len() * 4);
    std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(z), &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracemux_core::model::Base;
    use tracemux_core::named::Named;
    use tracemux_core::typed::FieldVisitor;

    fn call_tape(entry: bool, args: u64) -> (FieldTape, ClassLayout) {
        let mut t = Named::new();
        t.scope_begin(Scope::CommonContext);
        t.field("tid", Base::Dec, Value::Signed(1));
        t.scope_end(Scope::CommonContext);
        t.scope_begin(Scope::Payload);
        t.field("addr", Base::Hex, Value::Unsigned(0x1234));
        t.field("name", Base::Dec, Value::Str(b"main"));
        if entry {
            t.array_begin("args", args);
            for _ in 0..args {
                t.field("", Base::Dec, Value::Signed(-1));
            }
            t.array_end();
        } else {
            t.optional_begin("retval", args > 0);
            if args > 0 {
                t.field("", Base::Dec, Value::Signed(0));
            }
            t.optional_end();
        }
        t.scope_end(Scope::Payload);
        let l = ClassLayout::of(&t.schema());
        (t.tape(&l), l)
    }

    /// A track event framed by hand has the bytes prost writes.
    #[test]
    fn track_event_bytes_are_prosts() {
        let anns = [0x22, 0x04, 0x08, 0x01, 0x18, 0x07];
        for (ts, seq, flags, ty, name_iid, a) in [
            (0, 1, None, TYPE_SLICE_END, None, &[][..]),
            (1 << 40, 300, Some(2), TYPE_SLICE_BEGIN, Some(5), &anns[..]),
            (
                u64::MAX,
                u32::MAX,
                Some(2),
                TYPE_INSTANT,
                Some(1 << 35),
                &anns[..],
            ),
            (127, 128, None, -1, Some(0), &anns[..2]),
        ] {
            let mut mine = Vec::new();
            TrackEventBytes {
                ts,
                seq,
                flags,
                ty,
                name_iid,
                annotations: a,
            }
            .frame(&mut mine);
            let p = TracePacket {
                timestamp: Some(ts),
                trusted_packet_sequence_id: Some(seq),
                sequence_flags: flags,
                data: Some(Data::TrackEvent(TrackEvent {
                    encoded_annotations: prost::bytes::Bytes::copy_from_slice(a),
                    r#type: Some(ty),
                    name_iid,
                    ..Default::default()
                })),
                ..Default::default()
            };
            let mut theirs = vec![0x0a];
            p.encode_length_delimited(&mut theirs).unwrap();
            assert_eq!(mine, theirs, "{ts} {seq} {flags:?} {ty} {name_iid:?}");
        }
    }

    /// The annotations written from the recorded values are the bytes
    /// written from the value tree, names interned in the same order.
    #[test]
    fn annotations_from_the_tape_are_the_trees() {
        let ints = [1u8, 0, 0xff, 0xff];
        let mut t = Named::new();
        t.scope_begin(Scope::PacketContext);
        t.field("cpu_id", Base::Dec, Value::Unsigned(3));
        t.scope_end(Scope::PacketContext);
        t.scope_begin(Scope::CommonContext);
        t.field("vtid", Base::Dec, Value::Signed(-7));
        t.optional_begin("maybe", false);
        t.optional_end();
        t.scope_end(Scope::CommonContext);
        t.scope_begin(Scope::Payload);
        t.field("u", Base::Hex, Value::Unsigned(1 << 40));
        t.field("f", Base::Dec, Value::Float(-2.5));
        t.field("b", Base::Dec, Value::Bool(true));
        t.field("s", Base::Dec, Value::Str(b"caf\xc3\xa9 \xff"));
        t.field("blob", Base::Dec, Value::Bytes(&[9, 8]));
        t.field("noblob", Base::Dec, Value::Bytes(&[]));
        t.field(
            "ia",
            Base::Dec,
            Value::IntArray {
                data: &ints,
                elem_size: 2,
                signed: true,
                endian: tracemux_core::Endian::Little,
            },
        );
        t.struct_begin("st");
        t.array_begin("arr", 2);
        t.field("", Base::Dec, Value::Signed(-1));
        t.struct_begin("");
        t.struct_end();
        t.array_end();
        t.array_begin("empty", 0);
        t.array_end();
        t.optional_begin("opt", true);
        t.field("inner", Base::Dec, Value::Unsigned(5));
        t.optional_end();
        t.optional_begin("none", true);
        t.optional_end();
        t.struct_end();
        t.variant_begin("var", "choice");
        t.struct_begin("choice");
        t.field("x", Base::Dec, Value::Unsigned(1));
        t.struct_end();
        t.variant_end();
        t.enum_field("color", Value::Signed(2), &["RED", "ALSO"]);
        t.enum_field("plain", Value::Unsigned(9), &[]);
        t.scope_end(Scope::Payload);
        t.scope_begin(Scope::SpecificContext);
        t.field("ctx", Base::Dec, Value::Str(b"c"));
        t.scope_end(Scope::SpecificContext);
        let l = ClassLayout::of(&t.schema());
        let t = t.tape(&l);
        assert!(t.scopes_once());

        let mut tree = Tree::default();
        t.replay(&l, &mut tree);
        let (mut map, mut new) = (HashMap::new(), Vec::new());
        let mut names = Interner {
            map: &mut map,
            new: &mut new,
            fields: None,
        };
        let mut want = Vec::new();
        for i in tree.top(Scope::Payload) {
            put_annotation(
                &tree,
                i,
                Some(tree.name(i)),
                ANNOTATIONS,
                &mut names,
                &mut want,
            );
        }
        for scope in [Scope::CommonContext, Scope::SpecificContext] {
            let start = want.len();
            for i in tree.top(scope) {
                let name = Some(tree.name(i));
                put_annotation(&tree, i, name, DICT_ENTRIES, &mut names, &mut want);
            }
            if want.len() > start {
                let iid = names.iid(scope.name());
                frame(&mut want, start, Some(iid), ANNOTATIONS);
            }
        }
        let (mut map2, mut new2) = (HashMap::new(), Vec::new());
        let mut names2 = Interner {
            map: &mut map2,
            new: &mut new2,
            fields: None,
        };
        let mut got = Vec::new();
        put_scopes(&t, &l, &mut names2, &mut got).expect("well formed");
        assert_eq!(got, want);
        assert_eq!(new2, new);
        assert!(new.len() > 15, "{new:?}");

        // not a sequence of values: refused (the tree is used)
        let mut bad = FieldTape::new();
        bad.scope_begin(Scope::Payload);
        bad.put_struct(tracemux_core::layout::FieldId::new(0));
        bad.scope_end(Scope::Payload);
        assert!(bad.scopes_once());
        let (mut map3, mut new3) = (HashMap::new(), Vec::new());
        let mut names3 = Interner {
            map: &mut map3,
            new: &mut new3,
            fields: None,
        };
        assert!(put_scopes(&bad, &l, &mut names3, &mut Vec::new()).is_none());
        // a scope twice, or a value outside the scopes: not taken
        let mut twice = FieldTape::new();
        for _ in 0..2 {
            twice.scope_begin(Scope::Payload);
            twice.scope_end(Scope::Payload);
        }
        assert!(!twice.scopes_once());
        let mut outside = FieldTape::new();
        outside.put(
            tracemux_core::layout::FieldId::new(0),
            Base::Dec,
            Value::Unsigned(1),
        );
        assert!(!outside.scopes_once());
    }

    /// Only entries without arguments and exits without a return value
    /// take the short way; the rest go through the value tree.
    #[test]
    fn plain_calls() {
        for entry in [true, false] {
            let (t, l) = call_tape(entry, 0);
            let c = plain_call(&t, &l, entry).expect("a plain call");
            assert_eq!((c.addr, c.name), (0x1234, &b"main"[..]));
            assert!(plain_call(&t, &l, !entry).is_none());
            let (t1, l1) = call_tape(entry, 1);
            assert!(plain_call(&t1, &l1, entry).is_none());
        }
        let (mut t, l) = call_tape(true, 0);
        t.put(
            tracemux_core::layout::FieldId::new(0),
            Base::Dec,
            Value::Bool(true),
        );
        assert!(plain_call(&t, &l, true).is_some(), "(outside the payload)");
        assert!(plain_call(&FieldTape::new(), &l, true).is_none());
    }
}
