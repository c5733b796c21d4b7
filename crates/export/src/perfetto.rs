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
use crate::typed_events::{record_value, value_int, Fields, Layout, TreeSlots, Typed};

pub use crate::packets::BUNDLE_EVENTS;

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

/// The process of a uftrace recording (its first task), whose threads its
/// tasks are; `None` for other traces.
/// Process `pid` of a process tree: its command line is its name.
fn process(meta: &TraceMeta, pid: i32) -> Process {
    Process {
        pid: Some(pid),
        ppid: None,
        cmdline: meta
            .tasks
            .get(pid)
            .map(|c| vec![c.to_string()])
            .unwrap_or_default(),
        cmdline_is_comm: Some(true),
    }
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

    fn lost_instant(&mut self, meta: &TraceMeta, l: &Lost) -> std::io::Result<()> {
        let key = TrackKey::Stream(l.stream);
        if !self.seqs.contains_key(&key) {
            self.new_stream_sequence(meta, l.stream, l.cpu)?;
        }
        let seq = self.seqs.get_mut(&key).expect("sequence made above");
        let seq_id = seq.id;
        self.new_names.clear();
        self.new_ann_names.clear();
        let n = seq.names.len() as u64 + 1;
        let name_iid = *seq
            .names
            .entry("lost events".into())
            .or_insert_with_key(|k| {
                self.new_names.push(EventName {
                    iid: Some(n),
                    name: Some(k.clone()),
                });
                n
            });
        let mut names = Interner {
            map: &mut seq.ann_names,
            new: &mut self.new_ann_names,
            fields: None,
        };
        let anns = vec![
            DebugAnnotation {
                name_iid: Some(names.iid("cpu")),
                uint_value: Some(u64::from(l.cpu)),
                ..Default::default()
            },
            DebugAnnotation {
                name_iid: Some(names.iid("count")),
                uint_value: l.count,
                ..Default::default()
            },
        ];
        let interned = self.take_interned();
        self.packet(
            TracePacket {
                timestamp: Some(l.ts),
                trusted_packet_sequence_id: Some(seq_id),
                interned_data: interned,
                sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
                data: Some(Data::TrackEvent(TrackEvent {
                    debug_annotations: anns,
                    r#type: Some(TYPE_INSTANT),
                    name_iid: Some(name_iid),
                    ..Default::default()
                })),
                ..Default::default()
            },
            1,
        )
    }

    fn new_stream_sequence(
        &mut self,
        meta: &TraceMeta,
        stream: u32,
        cpu: u32,
    ) -> std::io::Result<()> {
        // the descriptor of a stream track needs no event fields
        self.tree.clear();
        let ev_cpu = cpu;
        let key = TrackKey::Stream(stream);
        self.describe(meta, key, ev_cpu, FieldId::UNKNOWN)
    }

    /// A timeline of several inputs: a clock snapshot at `ts` saying each
    /// input's own clock (ids from 128 on, in the order of the inputs) and
    /// the system clocks the inputs stamp, against the packets' clock (the
    /// first input's, written as BOOTTIME); and on a track of its own, an
    /// instant per input saying how it was placed (clock, shift, method,
    /// offset, pairs, spread).
    fn timeline(&mut self, meta: &TraceMeta, ts: u64) -> std::io::Result<()> {
        use tracemux_core::timeline::Alignment;
        self.timeline_written = true;
        let mut clocks = vec![Clock {
            clock_id: Some(CLOCK_BOOTTIME),
            timestamp: Some(ts),
        }];
        let mut system = Vec::new();
        for (i, inp) in meta.inputs.iter().enumerate() {
            // the input's own time at `ts`
            let own = (ts as i128) - i128::from(inp.shift_ns);
            if let Ok(own) = u64::try_from(own) {
                clocks.push(Clock {
                    clock_id: Some(128 + i as u32),
                    timestamp: Some(own),
                });
            }
            let id = match inp.clock.clock.as_str() {
                "monotonic" if inp.clock.system => Some(CLOCK_MONOTONIC),
                "monotonic-raw" if inp.clock.system => Some(CLOCK_MONOTONIC_RAW),
                "realtime" if inp.clock.system => Some(CLOCK_REALTIME),
                _ => None,
            };
            let clock = own - i128::from(inp.clock.base_ns);
            if let (Some(id), Ok(c)) = (id, u64::try_from(clock)) {
                if !system.contains(&id) {
                    system.push(id);
                    clocks.push(Clock {
                        clock_id: Some(id),
                        timestamp: Some(c),
                    });
                }
            }
        }
        self.packet(
            TracePacket {
                timestamp: Some(ts),
                data: Some(Data::ClockSnapshot(ClockSnapshot {
                    clocks,
                    primary_trace_clock: Some(CLOCK_BOOTTIME as i32),
                })),
                ..Default::default()
            },
            1,
        )?;
        let id = self.seqs.len() as u32 + 1;
        let uuid = Seq::track_uuid(id);
        self.seqs.insert(TrackKey::Stream(u32::MAX), Seq::new(id));
        self.packet(
            TracePacket {
                trusted_packet_sequence_id: Some(id),
                sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED),
                first_packet_on_sequence: Some(true),
                data: Some(Data::TrackDescriptor(TrackDescriptor {
                    uuid: Some(uuid),
                    name: Some("tracemux timeline: clock alignment".into()),
                    ..Default::default()
                })),
                ..Default::default()
            },
            1,
        )?;
        for inp in &meta.inputs {
            let s = |n: &str, v: String| DebugAnnotation {
                name: Some(n.into()),
                string_value: Some(v),
                ..Default::default()
            };
            let int = |n: &str, v: i64| DebugAnnotation {
                name: Some(n.into()),
                int_value: Some(v),
                ..Default::default()
            };
            let mut anns = vec![
                s("input", inp.name.clone()),
                s(
                    "clock",
                    format!("{} ({})", inp.clock.clock, inp.clock.source),
                ),
                int("shift_ns", inp.shift_ns),
            ];
            match &inp.alignment {
                Alignment::Reference => anns.push(s("placed", "reference".into())),
                Alignment::SameClock { with } => {
                    anns.push(s("placed", "same clock".into()));
                    anns.push(int("with_input", *with as i64));
                }
                Alignment::Given => anns.push(s("placed", "given (--clock-offset)".into())),
                Alignment::Estimated(e) => {
                    anns.push(s("placed", format!("estimated from {}", e.method)));
                    anns.push(int("against_input", e.against as i64));
                    anns.push(int("offset_ns", e.offset_ns));
                    anns.push(int("clock_offset_ns", e.clock_offset_ns));
                    anns.push(int("pairs", e.pairs as i64));
                    anns.push(int("tried", e.tried as i64));
                    anns.push(int("spread_ns", e.spread_ns as i64));
                }
            }
            self.packet(
                TracePacket {
                    timestamp: Some(ts),
                    trusted_packet_sequence_id: Some(id),
                    data: Some(Data::TrackEvent(TrackEvent {
                        debug_annotations: anns,
                        r#type: Some(TYPE_INSTANT),
                        track_uuid: Some(uuid),
                        name: Some(format!("clock of {}", inp.name)),
                        ..Default::default()
                    })),
                    ..Default::default()
                },
                1,
            )?;
        }
        Ok(())
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

    /// The thread groups learned from the events that the trace's task
    /// table did not say, as one more process tree (threads with their
    /// tgid, and each group's process).
    fn learned_groups(&mut self) -> std::io::Result<()> {
        let meta = &self.task_meta;
        let learned: Vec<(i32, i32)> = self
            .tasks
            .learned_tgids()
            .into_iter()
            .filter(|(t, g)| meta.tgids.get(t) != Some(g))
            .collect();
        if learned.is_empty() {
            return Ok(());
        }
        let mut tree = ProcessTree::default();
        for &(tid, tgid) in &learned {
            tree.threads.push(Thread {
                tid: Some(tid),
                // the name the first process tree gave it (the trace's
                // table), not the last one of the events
                name: meta.tasks.get(tid).map(str::to_string),
                tgid: Some(tgid),
            });
        }
        let mut groups: Vec<i32> = learned.iter().map(|l| l.1).collect();
        groups.sort_unstable();
        groups.dedup();
        for pid in groups {
            tree.processes.push(process(meta, pid));
        }
        drop(learned);
        self.packet(
            TracePacket {
                data: Some(Data::ProcessTree(tree)),
                ..Default::default()
            },
            1,
        )
    }

    fn flush_bundle(&mut self, s: u32) -> std::io::Result<()> {
        let Some(p) = self.pending.get_mut(s).and_then(|p| p.as_mut()) else {
            return Ok(());
        };
        if p.len() == 0 && !p.lost {
            return Ok(());
        }
        // kernel symbols first used by this bundle
        let mut kernel_symbols = Vec::new();
        for addr in p.symbols.drain(..) {
            if let Some(k) = self.ksyms.get_mut(&addr) {
                if !k.written {
                    k.written = true;
                    kernel_symbols.push(InternedString {
                        iid: Some(k.iid),
                        str: Some(k.name.clone()),
                    });
                }
            }
        }
        let mut descriptors = Vec::new();
        for key in p.descriptors.drain(..) {
            if let Some(Some(d)) = self.dense.get_mut(&key) {
                if !d.written {
                    d.written = true;
                    descriptors.push(d.descriptor.clone());
                }
            }
        }
        // the buffers of the next bundle: ones the encoder is done with
        let compact = (!p.compact.is_empty())
            .then(|| std::mem::replace(&mut p.compact, self.out.compact_buffer()));
        let events = std::mem::replace(&mut p.events, self.out.events_buffer());
        let weight = events.len() + compact.as_ref().map_or(0, |c| c.len());
        let bundle = FtraceEventBundle {
            cpu: Some(p.cpu),
            event: events,
            lost_events: p.lost.then_some(true),
            compact_sched: compact,
            generic_event_descriptors: descriptors,
        };
        p.lost = false;
        p.comms.clear();
        p.switch_ts = 0;
        p.waking_ts = 0;
        let first = !self.ftrace_started;
        self.ftrace_started = true;
        let mut pk = TracePacket {
            trusted_packet_sequence_id: Some(FTRACE_SEQUENCE),
            sequence_flags: Some(if first {
                SEQ_INCREMENTAL_STATE_CLEARED
            } else {
                SEQ_NEEDS_INCREMENTAL_STATE
            }),
            first_packet_on_sequence: first.then_some(true),
            interned_data: None,
            data: Some(Data::FtraceEvents(bundle)),
            ..Default::default()
        };
        if !kernel_symbols.is_empty() {
            self.stats.kernel_symbols += kernel_symbols.len() as u64;
            pk.interned_data = Some(InternedData {
                kernel_symbols,
                ..Default::default()
            });
        }
        self.packet(pk, weight)
    }

    /// What the writer does with the events of class `c`, found at its
    /// first event.
    fn plan(&mut self, c: &EventClass) -> Plan {
        *self.plans.get_or_insert_with(c.index, || {
            let typed = Typed::of(c);
            Plan {
                typed,
                layout: Layout::of(c, typed),
                slots: typed.map(|t| TreeSlots::of(c, t)),
                fields: ClassFields::of(c),
            }
        })
    }

    /// An event of a bundle read straight from its record (classes of a
    /// fixed layout); `None`: read it through the tree.
    fn read_record(&mut self, ev: &Event<'_>, c: &EventClass, plan: Plan) -> Option<Built> {
        let layout = plan.layout.filter(|_| ev.tape.is_none())?;
        let (data, endian) = (ev.data, ev.endian);
        let int = |defs: &[FieldDef], i: Option<u16>| {
            i.and_then(|i| value_int(record_value(defs, i, data, endian)))
        };
        let mut b = Built {
            event: FtraceEvent {
                timestamp: Some(ev.ts),
                pid: if ev.pid >= 0 {
                    Some(ev.pid as u32)
                } else {
                    int(&c.fields, layout.pid()).map(|v| v as u32)
                },
                common_flags: int(&c.common_fields, layout.flags()).map(|v| v as u32),
                event: None,
                dense: None,
            },
            descriptor: None,
        };
        match plan.typed {
            Some(t) => b.event.event = Some(t.message(&Fields::record(c, &layout, data, endian))),
            None if self.opts.describe_generic => {
                let (key, tag, written) =
                    dense_record(&self.dense, c, data, endian, &mut self.dense_buf)?;
                b.event.dense = Some((tag, Packed::new(&self.dense_buf)));
                b.descriptor = Some((key, written));
            }
            None => return None,
        }
        Some(b)
    }

    /// An event of a bundle from the tree of its values.
    fn read_tree(&mut self, meta: &TraceMeta, ev: &Event<'_>, plan: Option<Plan>) -> Built {
        self.tree.collect(meta, ev);
        let t = &self.tree;
        let fields = plan.map(|p| p.fields).unwrap_or_default();
        let pid = if ev.pid >= 0 {
            Some(ev.pid as u32)
        } else {
            t.at(Scope::Payload, fields.pid)
                .and_then(|i| t.int(i))
                .map(|v| v as u32)
        };
        let common_flags = t
            .at(Scope::CommonContext, fields.flags)
            .and_then(|i| t.int(i))
            .map(|v| v as u32);
        let mut b = Built {
            event: FtraceEvent {
                timestamp: Some(ev.ts),
                pid,
                common_flags,
                event: None,
                dense: None,
            },
            descriptor: None,
        };
        match plan.and_then(|p| p.typed.zip(p.slots)) {
            Some((ty, slots)) => b.event.event = Some(ty.message(&Fields::tree(t, &slots))),
            None => {
                let d = if self.opts.describe_generic {
                    dense_event(&mut self.dense, ev, t, &mut self.dense_buf)
                } else {
                    None
                };
                match d {
                    Some((key, tag, written)) => {
                        b.event.dense = Some((tag, Packed::new(&self.dense_buf)));
                        b.descriptor = Some((key, written));
                    }
                    None => b.event.event = Some(FtraceKind::Generic(generic(ev, t))),
                }
            }
        }
        b
    }

    fn ftrace(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> std::io::Result<()> {
        let plan = ev.class.map(|c| (c, self.plan(c)));
        let mut built = match plan {
            Some((c, plan)) => match self.read_record(ev, c, plan) {
                Some(b) => b,
                None => self.read_tree(meta, ev, Some(plan)),
            },
            None => self.read_tree(meta, ev, None),
        };
        if plan.is_none_or(|(_, p)| p.typed.is_none()) {
            self.stats.generic_events += 1;
        }
        self.stats.ftrace_events += 1;
        let s = ev.stream;
        // funcgraph: the function's name interned on the bundles' sequence
        let func = match &mut built.event.event {
            Some(FtraceKind::FuncgraphEntry(e)) => e.func.as_mut(),
            Some(FtraceKind::FuncgraphExit(e)) => e.func.as_mut(),
            _ => None,
        };
        let mut new_symbol = None;
        if let Some(f) = func {
            if !meta.symbols.is_empty() {
                let n = self.ksyms.len() as u64 + 1;
                let k = self.ksyms.entry(*f).or_insert_with(|| Ksym {
                    iid: n,
                    name: symbol_name(meta, *f).into_bytes(),
                    written: false,
                });
                if !k.written {
                    new_symbol = Some(*f);
                }
                *f = k.iid;
            }
        }
        let p = self
            .pending
            .slot(s)
            .get_or_insert_with(|| Pending::new(ev.cpu));
        p.cpu = ev.cpu;
        if let Some(a) = new_symbol {
            p.symbols.push(a);
        }
        if let Some((key, false)) = built.descriptor {
            p.descriptors.push(key);
        }
        let st = self.cpu_sched.slot(ev.cpu);
        let fe = &built.event;
        let compacted = self.opts.compact_sched
            && fe
                .event
                .as_ref()
                .is_some_and(|k| compact(p, st, ev.ts, fe.pid, fe.common_flags, k));
        if let Some(FtraceKind::SchedSwitch(e)) = &fe.event {
            // what runs on the CPU now
            let tie = match &st.last {
                Some(l) => l.0 >= ev.ts,
                None => false,
            };
            st.tie = tie;
            let mut comm = match st.last.take() {
                Some(l) => l.2,
                None => String::new(),
            };
            comm.clear();
            comm.push_str(e.next_comm.as_deref().unwrap_or_default());
            st.last = Some((
                ev.ts,
                e.next_pid.unwrap_or(-1),
                comm,
                e.next_prio.unwrap_or(0),
            ));
        }
        if compacted {
            self.stats.compact_events += 1;
        } else {
            p.events.push(built.event);
        }
        if p.len() >= BUNDLE_EVENTS {
            self.flush_bundle(s)?;
        }
        Ok(())
    }

    fn track_event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> std::io::Result<()> {
        let class = ev.class;
        let kind = match class {
            Some(c) => *self.kinds.get_or_insert_with(c.index, || TrackKind::of(c)),
            None => TrackKind::Other,
        };
        let fields = class.map(|c| self.plan(c).fields).unwrap_or_default();
        // most uftrace entries and exits need no value tree (and their
        // sequence's description none either: the recording says the pid)
        let call = match kind {
            TrackKind::Entry | TrackKind::Exit if self.cur_uftrace.is_some() => ev
                .tape
                .zip(class)
                .and_then(|(t, c)| plain_call(t, c.layout(), kind == TrackKind::Entry)),
            _ => None,
        };
        let uftrace = kind != TrackKind::Other || self.cur_uftrace.is_some();
        // the other events' annotations come straight from their recorded
        // values when these are well formed (else from the value tree)
        let steps = ev
            .tape
            .filter(|t| call.is_none() && !uftrace && t.scopes_once());
        let key = if ev.pid >= 0 {
            TrackKey::Thread(ev.pid)
        } else {
            TrackKey::Stream(ev.stream)
        };
        let described = self.seqs.contains_key(&key);
        let mut collected = false;
        if call.is_none() && (steps.is_none() || !described) {
            self.tree.collect(meta, ev);
            collected = true;
        }
        if !described {
            self.describe(meta, key, ev.cpu, fields.process)?;
        }
        let t = &self.tree;
        let title = &mut self.title;
        title.clear();
        let (ty, named, skip_name) = match kind {
            TrackKind::Entry => {
                let name = match &call {
                    Some(c) => Some(c.name),
                    None => t.at(Scope::Payload, fields.name).map(|i| t.bytes(i)),
                };
                if let Some(n) = name {
                    title.push_str(&String::from_utf8_lossy(n));
                }
                (TYPE_SLICE_BEGIN, name.is_some(), true)
            }
            TrackKind::Exit => (TYPE_SLICE_END, false, true),
            _ => match class {
                None => {
                    let _ = write!(title, "type {}", ev.type_id);
                    (TYPE_INSTANT, true, false)
                }
                // `system:name`, written when the sequence first sees the
                // class (below)
                Some(_) => (TYPE_INSTANT, true, false),
            },
        };
        let seq = self.seqs.get_mut(&key).expect("sequence made above");
        let seq_id = seq.id;
        self.new_names.clear();
        self.new_ann_names.clear();
        // an instant of a class is named the same every time: its name's
        // iid is looked up once per class and sequence
        let by_class = class.filter(|_| kind != TrackKind::Entry);
        let known = by_class.and_then(|c| seq.class_names.get(c.index).copied());
        if let (Some(c), None) = (by_class, known) {
            if !c.system.is_empty() {
                title.push_str(&c.system);
                title.push(':');
            }
            title.push_str(&c.name);
        }
        let name_iid =
            named.then(
                || match known.or_else(|| seq.names.get(title.as_str()).copied()) {
                    Some(n) => n,
                    None => {
                        let n = seq.names.len() as u64 + 1;
                        seq.names.insert(title.clone(), n);
                        self.new_names.push(EventName {
                            iid: Some(n),
                            name: Some(title.clone()),
                        });
                        n
                    }
                },
            );
        if let (Some(c), Some(n), None) = (by_class, name_iid, known) {
            seq.class_names.get_or_insert_with(c.index, || n);
        }
        let anns = &mut self.ann_buf;
        anns.clear();
        let mut names = Interner {
            map: &mut seq.ann_names,
            new: &mut self.new_ann_names,
            fields: class.map(|c| seq.field_iids.get_or_insert_with(c.index, Vec::new)),
        };
        // uftrace entry/exit leave out what a reader knows: empty `args`,
        // an absent `retval`, and an exit's `addr` when it is the one of
        // the innermost open entry of the thread
        let addr = match &call {
            Some(c) => Some(c.addr),
            None if skip_name => t
                .at(Scope::Payload, fields.addr)
                .and_then(|i| t.int(i))
                .map(|a| a as u64),
            None => None,
        };
        let mut known_addr = false;
        if skip_name {
            if ty == TYPE_SLICE_BEGIN {
                seq.stack.extend(addr);
            } else {
                let top = seq.stack.pop();
                known_addr = addr.is_some() && top == addr;
            }
        }
        if let (Some(a), false) = (call.as_ref().map(|c| c.addr), known_addr) {
            // what the loop below puts for the `addr` of a plain call
            let start = anns.len();
            put_varint(anns, 3, a);
            let iid = names.iid("addr");
            frame(anns, start, Some(iid), ANNOTATIONS);
        }
        let direct = steps.is_some_and(|tape| {
            let layout = class.map_or(&tracemux_core::layout::EMPTY, |c| c.layout());
            let ok = put_scopes(tape, layout, &mut names, anns).is_some();
            if !ok {
                anns.clear();
            }
            ok
        });
        if steps.is_some() && !direct && !collected {
            self.tree.collect(meta, ev);
        }
        let t = &self.tree;
        for i in t
            .top(Scope::Payload)
            .take_while(|_| call.is_none() && !direct)
        {
            if skip_name
                && (t.name_is(i, "name")
                    || (known_addr && t.name_is(i, "addr"))
                    || (t.name_is(i, "args")
                        && t.nodes[i].kind == Kind::Arr
                        && t.children(i).next().is_none())
                    || (t.name_is(i, "retval") && t.nodes[i].kind == Kind::Null))
            {
                continue;
            }
            put_annotation(t, i, Some(t.name(i)), ANNOTATIONS, &mut names, anns);
        }
        if !uftrace && !direct {
            for scope in [Scope::CommonContext, Scope::SpecificContext] {
                let start = anns.len();
                for i in t.top(scope) {
                    put_annotation(t, i, Some(t.name(i)), DICT_ENTRIES, &mut names, anns);
                }
                if anns.len() > start {
                    let iid = names.iid(scope.name());
                    frame(anns, start, Some(iid), ANNOTATIONS);
                }
            }
        }
        // a packet that uses no interned name does not need the state
        // (a uftrace exit mostly: 2 bytes of each)
        let needs = name_iid.is_some() || !anns.is_empty();
        let flags = needs.then_some(SEQ_NEEDS_INCREMENTAL_STATE);
        let interned = self.take_interned();
        self.stats.track_events += 1;
        if interned.is_none() {
            // most packets: framed here, as prost would encode the one below
            self.stats.packets += 1;
            let anns = &self.ann_buf;
            let te = TrackEventBytes {
                ts: ev.ts,
                seq: seq_id,
                flags,
                ty,
                name_iid,
                annotations: anns,
            };
            return self.out.push_framed(|out| te.frame(out));
        }
        let encoded_annotations = self.arena.keep(&self.ann_buf);
        let pk = TracePacket {
            timestamp: Some(ev.ts),
            trusted_packet_sequence_id: Some(seq_id),
            interned_data: interned,
            sequence_flags: flags,
            data: Some(Data::TrackEvent(TrackEvent {
                encoded_annotations,
                r#type: Some(ty),
                name_iid,
                ..Default::default()
            })),
            ..Default::default()
        };
        self.packet(pk, 1)
    }

    /// A packet sequence for a thread or stream: its first packet clears
    /// the incremental state, describes its track and makes it the default
    /// track of the sequence's events.
    /// (`process`: the field of the event in the tree that says its
    /// process.)
    fn describe(
        &mut self,
        meta: &TraceMeta,
        key: TrackKey,
        cpu: u32,
        process: FieldId,
    ) -> std::io::Result<()> {
        let id = self.seqs.len() as u32 + 1;
        let uuid = Seq::track_uuid(id);
        let desc = match key {
            TrackKey::Thread(tid) => {
                let t = &self.tree;
                // a timeline's uftrace input: its process; a thread the
                // kernel's task table places: that group
                let pid = self
                    .cur_uftrace
                    .or_else(|| meta.tgids.get(&tid).copied())
                    .or_else(|| {
                        t.at(Scope::CommonContext, process)
                            .and_then(|i| t.int(i))
                            .map(|v| v as i32)
                    })
                    .unwrap_or(tid);
                TrackDescriptor {
                    uuid: Some(uuid),
                    thread: Some(ThreadDescriptor {
                        pid: Some(pid),
                        tid: Some(i64::from(tid)),
                        thread_name: meta.tasks.get(tid).map(str::to_string),
                    }),
                    ..Default::default()
                }
            }
            TrackKey::Stream(s) => {
                let buffer = meta
                    .streams
                    .get(s as usize)
                    .and_then(|st| meta.buffers.get(st.buffer as usize))
                    .map_or("", |b| b.name.as_str());
                let name = if buffer.is_empty() {
                    format!("stream {s} (cpu {cpu})")
                } else {
                    format!("{buffer} stream {s} (cpu {cpu})")
                };
                TrackDescriptor {
                    uuid: Some(uuid),
                    name: Some(name),
                    ..Default::default()
                }
            }
        };
        self.seqs.insert(key, Seq::new(id));
        self.packet(
            TracePacket {
                trusted_packet_sequence_id: Some(id),
                sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED),
                first_packet_on_sequence: Some(true),
                trace_packet_defaults: Some(TracePacketDefaults {
                    track_event_defaults: Some(TrackEventDefaults {
                        track_uuid: Some(uuid),
                    }),
                }),
                data: Some(Data::TrackDescriptor(desc)),
                ..Default::default()
            },
            1,
        )
    }
}

/// A `TracePacket` of a `TrackEvent` that interns nothing.
struct TrackEventBytes<'a> {
    ts: u64,
    seq: u32,
    flags: Option<u32>,
    ty: i32,
    name_iid: Option<u64>,
    /// Encoded debug annotations (each framed as field 4).
    annotations: &'a [u8],
}

impl TrackEventBytes<'_> {
    /// The packet framed as a field of the `Trace`, appended to `out`: the
    /// bytes prost writes for the `TracePacket` (whose fields go in the
    /// order of their numbers, the `data` oneof by its lowest, 1: first).
    fn frame(&self, out: &mut Vec<u8>) {
        use prost::encoding::{encode_varint, encoded_len_varint as len};
        let ty = i64::from(self.ty) as u64;
        let te = self.annotations.len() + 1 + len(ty) + self.name_iid.map_or(0, |n| 1 + len(n));
        let packet = 1
            + len(te as u64)
            + te
            + 1
            + len(self.ts)
            + 1
            + len(u64::from(self.seq))
            + self.flags.map_or(0, |f| 1 + len(u64::from(f)));
        out.push(0x0a);
        encode_varint(packet as u64, out);
        // TracePacket.track_event (11)
        out.push(11 << 3 | 2);
        encode_varint(te as u64, out);
        out.extend_from_slice(self.annotations);
        put_varint(out, 9, ty);
        if let Some(n) = self.name_iid {
            put_varint(out, 10, n);
        }
        put_varint(out, 8, self.ts);
        put_varint(out, 10, u64::from(self.seq));
        if let Some(f) = self.flags {
            put_varint(out, 13, u64::from(f));
        }
    }
}

/// The annotations of a track event that is not uftrace's, from the
/// recorded values: the bytes [`put_annotation`] writes from the value
/// tree, names interned in the same order (the payload's fields, then each
/// context as a dictionary), for a tape whose scopes come once
/// ([`FieldTape::scopes_once`]). `None` (with part of it written) when the
/// steps are not a sequence of values.
fn put_scopes(
    t: &FieldTape,
    layout: &ClassLayout,
    names: &mut Interner<'_>,
    out: &mut Vec<u8>,
) -> Option<()> {
    let mut it = t.scope_steps(layout, Scope::Payload).peekable();
    while let Some(s) = it.next() {
        put_step(s, &mut it, Named::Own, ANNOTATIONS, names, out)?;
    }
    for scope in [Scope::CommonContext, Scope::SpecificContext] {
        let start = out.len();
        let mut it = t.scope_steps(layout, scope).peekable();
        while let Some(s) = it.next() {
            put_step(s, &mut it, Named::Own, DICT_ENTRIES, names, out)?;
        }
        if out.len() > start {
            let iid = names.iid(scope.name());
            frame(out, start, Some(iid), ANNOTATIONS);
        }
    }
    Some(())
}

/// What a value is named in its annotation.
#[derive(Clone, Copy)]
enum Named<'a> {
    /// By its own name (a field, a member).
    Own,
    /// Not at all (an array element).
    No,
    /// By another name (an optional's, a variant's option).
    As(&'a str),
}

impl<'a> Named<'a> {
    /// How the members of a compound named so are named (array elements
    /// have none).
    fn members(array: bool) -> Named<'a> {
        if array {
            Named::No
        } else {
            Named::Own
        }
    }
}

type Steps<'a, I> = std::iter::Peekable<I>;

/// One value that starts with step `first` (the rest from `it`), as
/// [`put_annotation`] writes the tree's node of it; `Some(false)` when it
/// makes no node (a present optional without a value).
fn put_step<'a, I: Iterator<Item = TapeStep<'a>>>(
    first: TapeStep<'a>,
    it: &mut Steps<'a, I>,
    named: Named<'a>,
    tag: u32,
    names: &mut Interner<'_>,
    out: &mut Vec<u8>,
) -> Option<bool> {
    let start = out.len();
    let own = match first {
        TapeStep::Field(n, _, v) => {
            put_leaf(v, names, out);
            n
        }
        TapeStep::StructBegin(n) | TapeStep::ArrayBegin(n, _) => {
            let array = matches!(first, TapeStep::ArrayBegin(..));
            let mut any = false;
            loop {
                match it.next()? {
                    TapeStep::StructEnd if !array => break,
                    TapeStep::ArrayEnd if array => break,
                    s => {
                        let child_tag = if array { ARRAY_VALUES } else { DICT_ENTRIES };
                        any |= put_step(s, it, Named::members(array), child_tag, names, out)?;
                    }
                }
            }
            if !any {
                put_bytes(out, 9, if array { b"[]" } else { b"{}" });
            }
            n
        }
        TapeStep::VariantBegin(n, option) => {
            // only the first value counts, as in the tree
            let mut first_done = false;
            loop {
                match it.next()? {
                    TapeStep::VariantEnd => break,
                    s => {
                        let mut scratch = Vec::new();
                        let sink = if first_done { &mut scratch } else { &mut *out };
                        let made =
                            put_step(s, it, Named::As(option.option()), DICT_ENTRIES, names, sink)?;
                        if !first_done && made {
                            first_done = true;
                        } else if !scratch.is_empty() {
                            // a second value: the tree leaves it out, but its
                            // names would be interned: not the tree's order
                            return None;
                        }
                    }
                }
            }
            n
        }
        TapeStep::OptionalBegin(n, false) => {
            matches!(it.next()?, TapeStep::OptionalEnd).then_some(())?;
            n
        }
        TapeStep::OptionalBegin(n, true) => {
            let inner = match named {
                Named::Own => Named::As(n.name()),
                other => other,
            };
            let made = match it.next()? {
                TapeStep::OptionalEnd => return Some(false),
                TapeStep::OptionalBegin(..) => return None,
                s => put_step(s, it, inner, tag, names, out)?,
            };
            matches!(it.next()?, TapeStep::OptionalEnd).then_some(made)?;
            return Some(made);
        }
        TapeStep::Enum(n, v, count) => {
            let value = out.len();
            put_leaf(v, names, out);
            let iid = names.iid("value");
            frame(out, value, Some(iid), DICT_ENTRIES);
            let labels = out.len();
            for _ in 0..count {
                let TapeStep::Label(l) = it.next()? else {
                    return None;
                };
                let at = out.len();
                put_bytes(out, 6, l.as_bytes());
                frame(out, at, None, ARRAY_VALUES);
            }
            if out.len() == labels {
                put_bytes(out, 9, b"[]");
            }
            let iid = names.iid("labels");
            frame(out, labels, Some(iid), DICT_ENTRIES);
            n
        }
        _ => return None,
    };
    let iid = match named {
        Named::Own => Some(names.field(own)),
        Named::No => None,
        Named::As(n) => Some(names.iid(n)),
    };
    frame(out, start, iid, tag);
    Some(true)
}

/// A leaf value as [`put_annotation`] writes the tree's node of it (byte
/// blobs and integer arrays are arrays of numbers).
fn put_leaf(v: Value<'_>, names: &mut Interner<'_>, out: &mut Vec<u8>) {
    use prost::encoding::{encode_key, WireType};
    let _ = names;
    match v {
        Value::Unsigned(x) => put_varint(out, 3, x),
        Value::Signed(x) => put_varint(out, 4, x as u64),
        Value::Float(x) => {
            encode_key(5, WireType::SixtyFourBit, out);
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        Value::Bool(x) => put_varint(out, 2, u64::from(x)),
        Value::Str(b) => put_bytes(out, 6, String::from_utf8_lossy(b).as_bytes()),
        Value::Bytes(b) => {
            for &x in b {
                let at = out.len();
                put_varint(out, 3, u64::from(x));
                frame(out, at, None, ARRAY_VALUES);
            }
            if b.is_empty() {
                put_bytes(out, 9, b"[]");
            }
        }
        Value::IntArray {
            data,
            elem_size,
            signed,
            ..
        } => {
            let n = data.len() / elem_size.max(1) as usize;
            for j in 0..n {
                let at = out.len();
                match v.array_elem(j) {
                    Some(x) if signed => put_varint(out, 4, x as i64 as u64),
                    Some(x) => put_varint(out, 3, x as u64),
                    None => {}
                }
                frame(out, at, None, ARRAY_VALUES);
            }
            if n == 0 {
                put_bytes(out, 9, b"[]");
            }
        }
    }
}

/// A uftrace entry or exit of the usual shape: its address and function
/// name, no arguments (entry) or no return value (exit).
struct Call<'a> {
    addr: u64,
    name: &'a [u8],
}

/// `t` as a [`Call`], when it is one.
fn plain_call<'a>(t: &'a FieldTape, layout: &'a ClassLayout, entry: bool) -> Option<Call<'a>> {
    let mut it = t.scope_steps(layout, Scope::Payload);
    let TapeStep::Field(a, _, Value::Unsigned(addr)) = it.next()? else {
        return None;
    };
    let TapeStep::Field(n, _, Value::Str(name)) = it.next()? else {
        return None;
    };
    (a.name() == "addr" && n.name() == "name").then_some(())?;
    match (entry, it.next()?, it.next()?) {
        (true, TapeStep::ArrayBegin(f, 0), TapeStep::ArrayEnd) if f.name() == "args" => {}
        (false, TapeStep::OptionalBegin(f, false), TapeStep::OptionalEnd)
            if f.name() == "retval" => {}
        _ => return None,
    }
    it.next().is_none().then_some(Call { addr, name })
}

/// The packets of a `compressed_packets` field (zlib) as the framed bytes
/// of a `Trace`.
pub fn inflate(z: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(z.len() * 4);
    std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(z), &mut out)?;
    Ok(out)
}

/// The generic event `ev` as a message of its class's descriptor (in
/// `buf`): `(class key, field number, descriptor written)`, or `None` when
/// its class has no descriptor (over 31 fields) or the event's fields do
/// not fit it (then it is written as a `GenericFtraceEvent`). A class is
/// described by its first event: its payload fields in order, unsigned
/// integers as `uint64`, signed as `int64`, strings and anything else (as
/// JSON text) as `string`.
fn dense_event(
    classes: &mut HashMap<ClassId, Option<Dense>>,
    ev: &Event<'_>,
    t: &Tree,
    buf: &mut Vec<u8>,
) -> Option<(ClassId, u32, bool)> {
    let c = ev.class?;
    // a class in no table has no id to keep its descriptor by: written as
    // a generic event
    let key = Some(c.index).filter(|&i| i != ClassId::UNLISTED)?;
    let n = classes.len() as u32;
    let d = classes
        .entry(key)
        .or_insert_with(|| {
            let fields: Vec<(String, i32)> = t
                .top(Scope::Payload)
                .map(|i| {
                    let ty = match t.nodes[i].kind {
                        Kind::U(_) => FIELD_TYPE_UINT64,
                        Kind::S(_) => FIELD_TYPE_INT64,
                        _ => FIELD_TYPE_STRING,
                    };
                    (t.name(i).to_string(), ty)
                })
                .collect();
            if fields.len() > 31 {
                return None;
            }
            let desc = DescriptorProto {
                name: Some(c.name.clone()),
                field: fields
                    .iter()
                    .enumerate()
                    .map(|(k, (name, ty))| FieldDescriptorProto {
                        name: Some(name.clone()),
                        number: Some(k as i32 + 1),
                        label: Some(FIELD_LABEL_OPTIONAL),
                        r#type: Some(*ty),
                    })
                    .collect(),
            };
            let tag = DENSE_FIELD_BASE + n;
            Some(Dense {
                tag,
                fields,
                descriptor: GenericEventDescriptor {
                    field_id: Some(tag as i32),
                    event_descriptor: Some(desc.encode_to_vec()),
                    group_name: Some(c.system.clone()),
                },
                written: false,
            })
        })
        .as_ref()?;
    buf.clear();
    let mut k = 0;
    for i in t.top(Scope::Payload) {
        let (name, ty) = d.fields.get(k)?;
        if !t.name_is(i, name) {
            return None;
        }
        let num = k as u32 + 1;
        match (t.nodes[i].kind, *ty) {
            (Kind::U(x), FIELD_TYPE_UINT64) => put_varint(buf, num, x),
            (Kind::S(x), FIELD_TYPE_INT64) => put_varint(buf, num, x as u64),
            (Kind::U(_) | Kind::S(_), _) => return None,
            (_, FIELD_TYPE_STRING) => {
                // a string as it is, anything else as its JSON text
                let mut json = Vec::new();
                let text = match t.nodes[i].kind {
                    Kind::Str(..) => t.bytes(i),
                    _ => {
                        t.json(i, &mut json);
                        &json
                    }
                };
                put_bytes(buf, num, String::from_utf8_lossy(text).as_bytes());
            }
            _ => return None,
        }
        k += 1;
    }
    (k == d.fields.len()).then_some((key, d.tag, d.written))
}

/// Field `num` of a message: a varint.
fn put_varint(out: &mut Vec<u8>, num: u32, x: u64) {
    use prost::encoding::{encode_key, encode_varint, WireType};
    encode_key(num, WireType::Varint, out);
    encode_varint(x, out);
}

/// Field `num` of a message: length-delimited bytes (text, a message).
fn put_bytes(out: &mut Vec<u8>, num: u32, b: &[u8]) {
    use prost::encoding::{encode_key, encode_varint, WireType};
    encode_key(num, WireType::LengthDelimited, out);
    encode_varint(b.len() as u64, out);
    out.extend_from_slice(b);
}

/// [`dense_event`] of a fixed-layout class's record, read straight from
/// it once the class's descriptor exists; `None` when the tree must decide
/// (no descriptor yet, or a value that is not a number or text of the
/// descriptor's type).
fn dense_record(
    classes: &HashMap<ClassId, Option<Dense>>,
    c: &EventClass,
    data: &[u8],
    endian: Endian,
    buf: &mut Vec<u8>,
) -> Option<(ClassId, u32, bool)> {
    let key = c.index;
    let d = classes.get(&key)?.as_ref()?;
    // the descriptor was made from the tree of this class, one field per
    // definition
    if d.fields.len() != c.fields.len() {
        return None;
    }
    buf.clear();
    for (k, (f, (_, ty))) in c.fields.iter().zip(&d.fields).enumerate() {
        let num = k as u32 + 1;
        match (f.value(data, endian)?, *ty) {
            (Value::Unsigned(x), FIELD_TYPE_UINT64) => put_varint(buf, num, x),
            (Value::Signed(x), FIELD_TYPE_INT64) => put_varint(buf, num, x as u64),
            (Value::Str(s), FIELD_TYPE_STRING) => {
                put_bytes(buf, num, String::from_utf8_lossy(s).as_bytes())
            }
            _ => return None,
        }
    }
    Some((key, d.tag, d.written))
}

/// A kernel address as a name: the symbol it is in (`name+0xOFF` inside
/// it), else the address in hex.
fn symbol_name(meta: &TraceMeta, addr: u64) -> String {
    match meta.symbols.lookup(addr) {
        Some(s) if s.addr == addr => s.name.to_string(),
        Some(s) => format!("{}+0x{:x}", s.name, addr - s.addr),
        None => format!("0x{addr:x}"),
    }
}

/// Put a `sched_switch` or `sched_waking` into the bundle's compact columns
/// when a reader gets every field back: a switch whose `prev_*` are the
/// `next_*` of the previous switch on the CPU (strictly earlier and not
/// tied) and whose pid is its `prev_pid`; a waking by the task that
/// switch left running, with its flags and no `success` field. Returns
/// whether it did.
fn compact(
    p: &mut Pending,
    st: &CpuSched,
    ts: u64,
    pid: Option<u32>,
    flags: Option<u32>,
    kind: &FtraceKind,
) -> bool {
    let Some((last_ts, run_pid, run_comm, run_prio)) = &st.last else {
        return false;
    };
    if st.tie || ts <= *last_ts || pid != Some(*run_pid as u32) {
        return false;
    }
    match kind {
        FtraceKind::SchedSwitch(e) => {
            let (
                Some(prev_comm),
                Some(prev_pid),
                Some(prev_prio),
                Some(prev_state),
                Some(next_comm),
                Some(next_pid),
                Some(next_prio),
            ) = (
                &e.prev_comm,
                e.prev_pid,
                e.prev_prio,
                e.prev_state,
                &e.next_comm,
                e.next_pid,
                e.next_prio,
            )
            else {
                return false;
            };
            if prev_pid != *run_pid || prev_comm != run_comm || prev_prio != *run_prio {
                return false;
            }
            let c = p.comm(next_comm);
            let k = &mut p.compact;
            k.switch_timestamp.push(ts - p.switch_ts);
            p.switch_ts = ts;
            k.switch_prev_state.push(prev_state);
            k.switch_next_pid.push(next_pid);
            k.switch_next_prio.push(next_prio);
            k.switch_next_comm_index.push(c);
            true
        }
        FtraceKind::SchedWaking(e) => {
            let (Some(comm), Some(wpid), Some(prio), Some(target_cpu), None, Some(flags)) =
                (&e.comm, e.pid, e.prio, e.target_cpu, e.success, flags)
            else {
                return false;
            };
            let c = p.comm(comm);
            let k = &mut p.compact;
            k.waking_timestamp.push(ts - p.waking_ts);
            p.waking_ts = ts;
            k.waking_pid.push(wpid);
            k.waking_target_cpu.push(target_cpu);
            k.waking_prio.push(prio);
            k.waking_comm_index.push(c);
            k.waking_common_flags.push(flags);
            true
        }
        _ => false,
    }
}

/// Debug annotation names interned on a sequence.
/// Blocks of bytes shared by the encoded parts of many events (one
/// allocation for many, freed when the last of them is written).
#[derive(Default)]
struct Arena(prost::bytes::BytesMut);

impl Arena {
    const BLOCK: usize = 1 << 16;

    /// A copy of `b` in the arena.
    fn keep(&mut self, b: &[u8]) -> prost::bytes::Bytes {
        if self.0.capacity() < b.len() {
            self.0.reserve(Self::BLOCK.max(b.len()));
        }
        self.0.extend_from_slice(b);
        self.0.split().freeze()
    }
}

struct Interner<'a> {
    map: &'a mut HashMap<String, u64>,
    new: &'a mut Vec<DebugAnnotationName>,
    /// The iids of the fields of the event's class, by field id (0: not
    /// interned yet): each name is looked up once per class and sequence.
    fields: Option<&'a mut Vec<u64>>,
}

impl Interner<'_> {
    /// The iid of field `f`'s name.
    fn field(&mut self, f: FieldRef<'_>) -> u64 {
        let k = f.id.index();
        if let Some(&i) = self.fields.as_ref().and_then(|c| c.get(k)) {
            if i != 0 {
                return i;
            }
        }
        let i = self.iid(f.name());
        if let Some(c) = self.fields.as_deref_mut() {
            if k < c.len().max(1 << 16) {
                if c.len() <= k {
                    c.resize(k + 1, 0);
                }
                c[k] = i;
            }
        }
        i
    }

    fn iid(&mut self, name: &str) -> u64 {
        if let Some(&i) = self.map.get(name) {
            return i;
        }
        let i = self.map.len() as u64 + 1;
        self.map.insert(name.to_string(), i);
        self.new.push(DebugAnnotationName {
            iid: Some(i),
            name: Some(name.to_string()),
        });
        i
    }
}

/// Field numbers of `DebugAnnotation`s: in a `TrackEvent`, in a
/// dictionary, in an array.
const ANNOTATIONS: u32 = 4;
const DICT_ENTRIES: u32 = 11;
const ARRAY_VALUES: u32 = 12;

/// Node `i` as an encoded debug annotation, framed as field `tag` of its
/// message and appended to `out`; `name` is interned after the names its
/// value uses. Values nest as `report --json` nests them: structures as
/// dictionaries, arrays as arrays, a variant as a dictionary of its option,
/// an enumeration as `{value, labels}`; an absent optional has no value.
/// The bytes are those prost writes for the `DebugAnnotation` message.
fn put_annotation(
    t: &Tree,
    i: usize,
    name: Option<&str>,
    tag: u32,
    names: &mut Interner<'_>,
    out: &mut Vec<u8>,
) {
    use prost::encoding::{encode_key, WireType};
    let start = out.len();
    match t.nodes[i].kind {
        Kind::U(x) => put_varint(out, 3, x),
        Kind::S(x) => put_varint(out, 4, x as u64),
        Kind::F(x) => {
            encode_key(5, WireType::SixtyFourBit, out);
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        Kind::B(x) => put_varint(out, 2, u64::from(x)),
        Kind::Str(..) => put_bytes(out, 6, String::from_utf8_lossy(t.bytes(i)).as_bytes()),
        Kind::Null => {}
        // Protobuf cannot tell an empty container from no value: empty ones
        // are written as their JSON text.
        Kind::Obj | Kind::Arr if t.children(i).next().is_none() => {
            let json = if t.nodes[i].kind == Kind::Obj {
                "{}"
            } else {
                "[]"
            };
            put_bytes(out, 9, json.as_bytes());
        }
        Kind::Obj => {
            for c in t.children(i) {
                put_annotation(t, c, Some(t.name(c)), DICT_ENTRIES, names, out);
            }
        }
        Kind::Arr => {
            for c in t.children(i) {
                put_annotation(t, c, None, ARRAY_VALUES, names, out);
            }
        }
        Kind::Variant(..) => {
            if let Some(c) = t.children(i).next() {
                let option = String::from_utf8_lossy(t.bytes(i));
                put_annotation(t, c, Some(&option), DICT_ENTRIES, names, out);
            }
        }
        Kind::Enum => {
            let mut ch = t.children(i);
            if let Some(v) = ch.next() {
                put_annotation(t, v, Some("value"), DICT_ENTRIES, names, out);
            }
            let labels = out.len();
            for c in ch {
                put_annotation(t, c, None, ARRAY_VALUES, names, out);
            }
            if out.len() == labels {
                put_bytes(out, 9, b"[]");
            }
            let iid = names.iid("labels");
            frame(out, labels, Some(iid), DICT_ENTRIES);
        }
    }
    let iid = name.map(|n| names.iid(n));
    frame(out, start, iid, tag);
}

/// Make `out[start..]` (the fields of a `DebugAnnotation` after its name)
/// the message: its `name_iid` put first, framed as field `tag`.
fn frame(out: &mut Vec<u8>, start: usize, name_iid: Option<u64>, tag: u32) {
    use prost::encoding::{encode_key, encode_varint, WireType};
    let mut name = [0u8; 16];
    let mut rest = &mut name[..];
    if let Some(iid) = name_iid {
        encode_key(1, WireType::Varint, &mut rest);
        encode_varint(iid, &mut rest);
    }
    let name_len = 16 - rest.len();
    let mut head = [0u8; 16];
    let mut rest = &mut head[..];
    encode_key(tag, WireType::LengthDelimited, &mut rest);
    encode_varint((out.len() - start + name_len) as u64, &mut rest);
    let head_len = 16 - rest.len();
    // the value moves up to make room for the head and the name
    let k = head_len + name_len;
    let end = out.len();
    out.resize(end + k, 0);
    out.copy_within(start..end, start + k);
    out[start..start + head_len].copy_from_slice(&head[..head_len]);
    out[start + head_len..start + k].copy_from_slice(&name[..name_len]);
}

/// `SystemInfo` from the trace's uname (and environment, for CTF).
fn system_info(meta: &TraceMeta) -> SystemInfo {
    let env = |k: &str| {
        meta.env
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    let words: Vec<&str> = meta
        .uname
        .as_deref()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let mut u = Utsname::default();
    if let Some(rel) = env("kernel_release") {
        u.sysname = env("sysname");
        u.release = Some(rel);
        u.version = env("kernel_version");
    } else if meta.format == Some(Format::Uftrace) {
        u.sysname = words.first().map(|s| s.to_string());
        u.release = words.get(1).map(|s| s.to_string());
    } else if words.len() >= 3 {
        // trace-cmd: "sysname nodename release machine"
        u.sysname = Some(words[0].to_string());
        u.release = Some(words[2].to_string());
        if words.len() >= 4 {
            u.machine = words.last().map(|s| s.to_string());
        }
    }
    let page_size = meta.buffers.first().map(|b| b.page_size).filter(|&p| p > 0);
    SystemInfo {
        utsname: (u != Utsname::default()).then_some(u),
        page_size,
        num_cpus: (meta.cpus > 0).then_some(meta.cpus),
    }
}

/// Every payload field of `ev` as a `GenericFtraceEvent`: integers as
/// integers, strings as strings, anything else as its JSON text.
fn generic(ev: &Event<'_>, t: &Tree) -> GenericFtraceEvent {
    let mut g = GenericFtraceEvent {
        event_name: Some(
            ev.class
                .map_or_else(|| format!("type_{}", ev.type_id), |c| c.name.clone()),
        ),
        field: Vec::new(),
    };
    let mut json = Vec::new();
    for i in t.top(Scope::Payload) {
        let value = match t.nodes[i].kind {
            Kind::U(x) => GenericValue::UintValue(x),
            Kind::S(x) => GenericValue::IntValue(x),
            Kind::Str(..) => GenericValue::StrValue(t.text(i)),
            _ => {
                json.clear();
                t.json(i, &mut json);
                GenericValue::StrValue(String::from_utf8_lossy(&json).into_owned())
            }
        };
        g.field.push(GenericField {
            name: Some(t.name(i).to_string()),
            value: Some(value),
        });
    }
    g
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
