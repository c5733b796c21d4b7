//! The subset of Perfetto's trace schema that tracemux writes, as prost
//! messages. Field numbers are those of Perfetto's public schema
//! (`protos/perfetto/trace/...`, package `perfetto.protos`); message and field
//! names follow it so that a reader of both can match them up. Only the
//! fields we write (or read back in tests) are declared: protobuf readers
//! skip the rest.

#![allow(missing_docs)]

/// `Trace`: the whole file, a stream of packets (field 1). Never built in
/// memory by the writer: it frames each packet as this message's field 1.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Trace {
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// `TracePacket`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    /// `SequenceFlags`: 1 incremental state cleared, 2 needs incremental state.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(message, optional, tag = "59")]
    pub trace_packet_defaults: Option<TracePacketDefaults>,
    #[prost(bool, optional, tag = "87")]
    pub first_packet_on_sequence: Option<bool>,
    #[prost(oneof = "Data", tags = "1, 2, 11, 45, 50, 60, 66")]
    pub data: Option<Data>,
}

/// `TracePacketDefaults`: defaults of a sequence's packets.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacketDefaults {
    #[prost(message, optional, tag = "11")]
    pub track_event_defaults: Option<TrackEventDefaults>,
}

/// `TrackEventDefaults`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEventDefaults {
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
}

pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
pub const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

/// `TracePacket.data` (a oneof). One is built per packet: the size of the
/// bundle variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Data {
    #[prost(message, tag = "1")]
    FtraceEvents(FtraceEventBundle),
    #[prost(message, tag = "2")]
    ProcessTree(ProcessTree),
    #[prost(message, tag = "11")]
    TrackEvent(TrackEvent),
    #[prost(message, tag = "45")]
    SystemInfo(SystemInfo),
    /// Packets (a `Trace`: each framed as field 1) compressed with zlib
    /// (deflate with the zlib header), as Perfetto's own tracing service
    /// writes them.
    #[prost(bytes, tag = "50")]
    CompressedPackets(Vec<u8>),
    #[prost(message, tag = "60")]
    TrackDescriptor(TrackDescriptor),
    #[prost(message, tag = "66")]
    PerfSample(PerfSample),
}

/// `PerfSample` (`protos/perfetto/trace/profiling/profile_packet.proto`):
/// one sample of a perf event, its call stack an iid into the sequence's
/// interned `callstacks`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PerfSample {
    #[prost(uint32, optional, tag = "1")]
    pub cpu: Option<u32>,
    #[prost(uint32, optional, tag = "2")]
    pub pid: Option<u32>,
    #[prost(uint32, optional, tag = "3")]
    pub tid: Option<u32>,
    #[prost(uint64, optional, tag = "4")]
    pub callstack_iid: Option<u64>,
    /// `Profiling.CpuMode`: [`CPU_MODE_KERNEL`], [`CPU_MODE_USER`].
    #[prost(int32, optional, tag = "5")]
    pub cpu_mode: Option<i32>,
    /// The sample's period (the timebase counter's increment).
    #[prost(uint64, optional, tag = "6")]
    pub timebase_count: Option<u64>,
}

pub const CPU_MODE_UNKNOWN: i32 = 0;
pub const CPU_MODE_KERNEL: i32 = 1;
pub const CPU_MODE_USER: i32 = 2;

/// `Callstack` (`profile_common.proto`): frame iids, the outermost
/// (bottom) frame first.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Callstack {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(uint64, repeated, tag = "2")]
    pub frame_ids: Vec<u64>,
}

/// `Frame`: a function (iid into `function_names`) at `rel_pc` in a
/// mapping (iid into `mappings`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Frame {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub function_name_id: Option<u64>,
    #[prost(uint64, optional, tag = "3")]
    pub mapping_id: Option<u64>,
    #[prost(uint64, optional, tag = "4")]
    pub rel_pc: Option<u64>,
}

/// `Mapping`: a mapped file, its path as iids into `mapping_paths`
/// (readers join them, each after a `/`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Mapping {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(uint64, repeated, tag = "7")]
    pub path_string_ids: Vec<u64>,
}

/// `FtraceEventBundle`: the events of one CPU.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FtraceEventBundle {
    #[prost(uint32, optional, tag = "1")]
    pub cpu: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    pub event: Vec<FtraceEvent>,
    /// Events were lost on this CPU before this bundle.
    #[prost(bool, optional, tag = "3")]
    pub lost_events: Option<bool>,
    #[prost(message, optional, tag = "4")]
    pub compact_sched: Option<CompactSched>,
    #[prost(message, repeated, tag = "11")]
    pub generic_event_descriptors: Vec<GenericEventDescriptor>,
}

/// `FtraceEventBundle.CompactSched`: the bundle's `sched_switch` and
/// `sched_waking` events as columns (packed arrays), their timestamps as
/// deltas from the previous one of the same kind (the first from 0), their
/// command names as indices into `intern_table`. A compact `sched_switch`
/// has no `prev_*` fields and no event pid: readers take them from the
/// previous switch on the CPU (its `next_*`); a compact `sched_waking` has no
/// pid of its own: it is the task running on the CPU.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CompactSched {
    #[prost(string, repeated, tag = "5")]
    pub intern_table: Vec<String>,
    #[prost(uint64, repeated, tag = "1")]
    pub switch_timestamp: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub switch_prev_state: Vec<i64>,
    #[prost(int32, repeated, tag = "3")]
    pub switch_next_pid: Vec<i32>,
    #[prost(int32, repeated, tag = "4")]
    pub switch_next_prio: Vec<i32>,
    #[prost(uint32, repeated, tag = "6")]
    pub switch_next_comm_index: Vec<u32>,
    #[prost(uint64, repeated, tag = "7")]
    pub waking_timestamp: Vec<u64>,
    #[prost(int32, repeated, tag = "8")]
    pub waking_pid: Vec<i32>,
    #[prost(int32, repeated, tag = "9")]
    pub waking_target_cpu: Vec<i32>,
    #[prost(int32, repeated, tag = "10")]
    pub waking_prio: Vec<i32>,
    #[prost(uint32, repeated, tag = "11")]
    pub waking_comm_index: Vec<u32>,
    #[prost(uint32, repeated, tag = "12")]
    pub waking_common_flags: Vec<u32>,
}

impl CompactSched {
    pub fn is_empty(&self) -> bool {
        self.switch_timestamp.is_empty() && self.waking_timestamp.is_empty()
    }
    /// Events in the columns.
    pub fn len(&self) -> usize {
        self.switch_timestamp.len() + self.waking_timestamp.len()
    }
    pub fn clear(&mut self) {
        self.intern_table.clear();
        self.switch_timestamp.clear();
        self.switch_prev_state.clear();
        self.switch_next_pid.clear();
        self.switch_next_prio.clear();
        self.switch_next_comm_index.clear();
        self.waking_timestamp.clear();
        self.waking_pid.clear();
        self.waking_target_cpu.clear();
        self.waking_prio.clear();
        self.waking_comm_index.clear();
        self.waking_common_flags.clear();
    }
}

/// `FtraceEvent`. Besides the typed messages of its `event` oneof, an
/// event can be an event of the bundle's `generic_event_descriptors`
/// (Perfetto v50+): a message of the described fields under the
/// descriptor's `field_id` (`dense`: that field number and the message's
/// bytes). Its `prost::Message` is written by hand for that field.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct FtraceEvent {
    pub timestamp: Option<u64>,
    pub pid: Option<u32>,
    pub common_flags: Option<u32>,
    pub event: Option<FtraceKind>,
    pub dense: Option<(u32, Packed)>,
}

/// The bytes of a small message, in place when they fit (no allocation
/// for most events), else on the heap.
#[derive(Clone, PartialEq, Debug)]
pub enum Packed {
    Inline {
        len: u8,
        bytes: [u8; Packed::INLINE],
    },
    Heap(Vec<u8>),
}

impl Packed {
    pub const INLINE: usize = 38;

    pub fn new(b: &[u8]) -> Packed {
        match b.len() {
            n if n <= Self::INLINE => {
                let mut bytes = [0; Self::INLINE];
                bytes[..n].copy_from_slice(b);
                Packed::Inline {
                    len: n as u8,
                    bytes,
                }
            }
            _ => Packed::Heap(b.to_vec()),
        }
    }
}

impl std::ops::Deref for Packed {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Packed::Inline { len, bytes } => &bytes[..*len as usize],
            Packed::Heap(v) => v,
        }
    }
}

/// The tags of [`FtraceKind`].
const FTRACE_KIND_TAGS: &[u32] = &[
    3, 4, 11, 13, 17, 20, 24, 25, 36, 37, 57, 58, 114, 235, 236, 237, 238, 239, 240, 327, 329, 330,
    437, 438, 491,
];

/// The smallest field number of a described generic event (above every
/// event of Perfetto's schema).
pub const DENSE_FIELD_BASE: u32 = 100_000;

impl prost::Message for FtraceEvent {
    fn encode_raw(&self, buf: &mut impl prost::bytes::BufMut) {
        use prost::encoding::*;
        if let Some(v) = &self.timestamp {
            uint64::encode(1, v, buf);
        }
        if let Some(v) = &self.pid {
            uint32::encode(2, v, buf);
        }
        if let Some(v) = &self.common_flags {
            uint32::encode(5, v, buf);
        }
        if let Some(k) = &self.event {
            k.encode(buf);
        }
        if let Some((tag, b)) = &self.dense {
            encode_key(*tag, WireType::LengthDelimited, buf);
            encode_varint(b.len() as u64, buf);
            buf.put_slice(b);
        }
    }
    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: prost::encoding::WireType,
        buf: &mut impl prost::bytes::Buf,
        ctx: prost::encoding::DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        use prost::encoding::*;
        match tag {
            1 => uint64::merge(wire_type, self.timestamp.get_or_insert(0), buf, ctx),
            2 => uint32::merge(wire_type, self.pid.get_or_insert(0), buf, ctx),
            5 => uint32::merge(wire_type, self.common_flags.get_or_insert(0), buf, ctx),
            t if FTRACE_KIND_TAGS.contains(&t) => {
                FtraceKind::merge(&mut self.event, tag, wire_type, buf, ctx)
            }
            t if t >= DENSE_FIELD_BASE => {
                let mut b = Vec::new();
                bytes::merge(wire_type, &mut b, buf, ctx)?;
                self.dense = Some((t, Packed::Heap(b)));
                Ok(())
            }
            _ => skip_field(wire_type, tag, buf, ctx),
        }
    }
    fn encoded_len(&self) -> usize {
        use prost::encoding::*;
        self.timestamp.map_or(0, |v| uint64::encoded_len(1, &v))
            + self.pid.map_or(0, |v| uint32::encoded_len(2, &v))
            + self.common_flags.map_or(0, |v| uint32::encoded_len(5, &v))
            + self.event.as_ref().map_or(0, |k| k.encoded_len())
            + self.dense.as_ref().map_or(0, |(t, b)| {
                key_len(*t) + encoded_len_varint(b.len() as u64) + b.len()
            })
    }
    fn clear(&mut self) {
        *self = FtraceEvent::default();
    }
}

/// `FtraceEventBundle.GenericEventDescriptor`: the message of a generic
/// event written under `field_id` in `FtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GenericEventDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub field_id: Option<i32>,
    /// A serialized `DescriptorProto` (the event's name and fields).
    #[prost(bytes = "vec", optional, tag = "2")]
    pub event_descriptor: Option<Vec<u8>>,
    /// The event's system (ftrace's group).
    #[prost(string, optional, tag = "3")]
    pub group_name: Option<String>,
}

/// protobuf's `DescriptorProto` (google/protobuf/descriptor.proto): what we
/// need of it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DescriptorProto {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(message, repeated, tag = "2")]
    pub field: Vec<FieldDescriptorProto>,
}

/// protobuf's `FieldDescriptorProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FieldDescriptorProto {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(int32, optional, tag = "3")]
    pub number: Option<i32>,
    /// 1: optional.
    #[prost(int32, optional, tag = "4")]
    pub label: Option<i32>,
    /// See the `FIELD_TYPE_*` constants.
    #[prost(int32, optional, tag = "5")]
    pub r#type: Option<i32>,
}

pub const FIELD_TYPE_INT64: i32 = 3;
pub const FIELD_TYPE_UINT64: i32 = 4;
pub const FIELD_TYPE_STRING: i32 = 9;
pub const FIELD_LABEL_OPTIONAL: i32 = 1;

/// `FtraceEvent.event` (a oneof): the typed event messages we write.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum FtraceKind {
    #[prost(message, tag = "3")]
    Print(PrintFtraceEvent),
    #[prost(message, tag = "4")]
    SchedSwitch(SchedSwitchFtraceEvent),
    #[prost(message, tag = "11")]
    CpuFrequency(CpuFtraceEvent),
    #[prost(message, tag = "13")]
    CpuIdle(CpuFtraceEvent),
    #[prost(message, tag = "17")]
    SchedWakeup(SchedWakeupFtraceEvent),
    #[prost(message, tag = "20")]
    SchedWaking(SchedWakeupFtraceEvent),
    #[prost(message, tag = "24")]
    SoftirqEntry(SoftirqFtraceEvent),
    #[prost(message, tag = "25")]
    SoftirqExit(SoftirqFtraceEvent),
    #[prost(message, tag = "36")]
    IrqHandlerEntry(IrqHandlerEntryFtraceEvent),
    #[prost(message, tag = "37")]
    IrqHandlerExit(IrqHandlerExitFtraceEvent),
    #[prost(message, tag = "57")]
    WorkqueueExecuteEnd(WorkqueueFtraceEvent),
    #[prost(message, tag = "58")]
    WorkqueueExecuteStart(WorkqueueFtraceEvent),
    #[prost(message, tag = "114")]
    SchedWakeupNew(SchedWakeupFtraceEvent),
    #[prost(message, tag = "235")]
    TaskNewtask(TaskNewtaskFtraceEvent),
    #[prost(message, tag = "236")]
    TaskRename(TaskRenameFtraceEvent),
    #[prost(message, tag = "237")]
    SchedProcessExec(SchedProcessExecFtraceEvent),
    #[prost(message, tag = "238")]
    SchedProcessExit(SchedProcessExitFtraceEvent),
    #[prost(message, tag = "239")]
    SchedProcessFork(SchedProcessForkFtraceEvent),
    #[prost(message, tag = "240")]
    SchedProcessFree(SchedProcessFreeFtraceEvent),
    #[prost(message, tag = "327")]
    Generic(GenericFtraceEvent),
    #[prost(message, tag = "329")]
    SysEnter(SysEnterFtraceEvent),
    #[prost(message, tag = "330")]
    SysExit(SysExitFtraceEvent),
    #[prost(message, tag = "437")]
    FuncgraphEntry(FuncgraphEntryFtraceEvent),
    #[prost(message, tag = "438")]
    FuncgraphExit(FuncgraphExitFtraceEvent),
    #[prost(message, tag = "491")]
    SchedMigrateTask(SchedMigrateTaskFtraceEvent),
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PrintFtraceEvent {
    #[prost(uint64, optional, tag = "1")]
    pub ip: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub buf: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedSwitchFtraceEvent {
    #[prost(string, optional, tag = "1")]
    pub prev_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub prev_pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prev_prio: Option<i32>,
    #[prost(int64, optional, tag = "4")]
    pub prev_state: Option<i64>,
    #[prost(string, optional, tag = "5")]
    pub next_comm: Option<String>,
    #[prost(int32, optional, tag = "6")]
    pub next_pid: Option<i32>,
    #[prost(int32, optional, tag = "7")]
    pub next_prio: Option<i32>,
}

/// `SchedWakeupFtraceEvent`, `SchedWakeupNewFtraceEvent` and
/// `SchedWakingFtraceEvent` (the same fields and numbers).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedWakeupFtraceEvent {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub success: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub target_cpu: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedProcessForkFtraceEvent {
    #[prost(string, optional, tag = "1")]
    pub parent_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub parent_pid: Option<i32>,
    #[prost(string, optional, tag = "3")]
    pub child_comm: Option<String>,
    #[prost(int32, optional, tag = "4")]
    pub child_pid: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedProcessExitFtraceEvent {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub prio: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedProcessFreeFtraceEvent {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedProcessExecFtraceEvent {
    #[prost(string, optional, tag = "1")]
    pub filename: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub old_pid: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TaskNewtaskFtraceEvent {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub comm: Option<String>,
    #[prost(uint64, optional, tag = "3")]
    pub clone_flags: Option<u64>,
    #[prost(int32, optional, tag = "4")]
    pub oom_score_adj: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TaskRenameFtraceEvent {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub oldcomm: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub newcomm: Option<String>,
    #[prost(int32, optional, tag = "4")]
    pub oom_score_adj: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedMigrateTaskFtraceEvent {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub orig_cpu: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub dest_cpu: Option<i32>,
    #[prost(int32, optional, tag = "6")]
    pub running: Option<i32>,
    #[prost(uint32, optional, tag = "7")]
    pub load: Option<u32>,
}

/// `CpuFrequencyFtraceEvent` and `CpuIdleFtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CpuFtraceEvent {
    #[prost(uint32, optional, tag = "1")]
    pub state: Option<u32>,
    #[prost(uint32, optional, tag = "2")]
    pub cpu_id: Option<u32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct IrqHandlerEntryFtraceEvent {
    #[prost(int32, optional, tag = "1")]
    pub irq: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(uint32, optional, tag = "3")]
    pub handler: Option<u32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct IrqHandlerExitFtraceEvent {
    #[prost(int32, optional, tag = "1")]
    pub irq: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub ret: Option<i32>,
}

/// `SoftirqEntryFtraceEvent` and `SoftirqExitFtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SoftirqFtraceEvent {
    #[prost(uint32, optional, tag = "1")]
    pub vec: Option<u32>,
}

/// `SysEnterFtraceEvent`; its `args` (six on Linux) kept without an
/// allocation.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct SysEnterFtraceEvent {
    pub id: Option<i64>,
    pub args: Args,
}

/// A list of integers stored in place up to six, beyond that on the heap.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Args {
    first: [u64; 6],
    len: usize,
    more: Vec<u64>,
}

impl Args {
    pub fn push(&mut self, v: u64) {
        match self.first.get_mut(self.len) {
            Some(slot) => *slot = v,
            None => self.more.push(v),
        }
        self.len += 1;
    }
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.first[..self.len.min(6)]
            .iter()
            .chain(&self.more)
            .copied()
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl FromIterator<u64> for Args {
    fn from_iter<I: IntoIterator<Item = u64>>(it: I) -> Self {
        let mut a = Args::default();
        for v in it {
            a.push(v);
        }
        a
    }
}

impl prost::Message for SysEnterFtraceEvent {
    fn encode_raw(&self, buf: &mut impl prost::bytes::BufMut) {
        use prost::encoding::*;
        if let Some(v) = &self.id {
            int64::encode(1, v, buf);
        }
        for v in self.args.iter() {
            uint64::encode(2, &v, buf);
        }
    }
    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: prost::encoding::WireType,
        buf: &mut impl prost::bytes::Buf,
        ctx: prost::encoding::DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        use prost::encoding::*;
        match tag {
            1 => int64::merge(wire_type, self.id.get_or_insert(0), buf, ctx),
            2 => {
                let mut v = Vec::new();
                uint64::merge_repeated(wire_type, &mut v, buf, ctx)?;
                v.into_iter().for_each(|x| self.args.push(x));
                Ok(())
            }
            _ => skip_field(wire_type, tag, buf, ctx),
        }
    }
    fn encoded_len(&self) -> usize {
        use prost::encoding::*;
        self.id.map_or(0, |v| int64::encoded_len(1, &v))
            + self
                .args
                .iter()
                .map(|v| uint64::encoded_len(2, &v))
                .sum::<usize>()
    }
    fn clear(&mut self) {
        *self = SysEnterFtraceEvent::default();
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SysExitFtraceEvent {
    #[prost(int64, optional, tag = "1")]
    pub id: Option<i64>,
    #[prost(int64, optional, tag = "2")]
    pub ret: Option<i64>,
}

/// `WorkqueueExecuteStartFtraceEvent` and `WorkqueueExecuteEndFtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WorkqueueFtraceEvent {
    #[prost(uint64, optional, tag = "1")]
    pub work: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub function: Option<u64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct FuncgraphEntryFtraceEvent {
    #[prost(int32, optional, tag = "1")]
    pub depth: Option<i32>,
    #[prost(uint64, optional, tag = "2")]
    pub func: Option<u64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct FuncgraphExitFtraceEvent {
    #[prost(uint64, optional, tag = "1")]
    pub calltime: Option<u64>,
    #[prost(int32, optional, tag = "2")]
    pub depth: Option<i32>,
    #[prost(uint64, optional, tag = "3")]
    pub func: Option<u64>,
    #[prost(uint64, optional, tag = "4")]
    pub overrun: Option<u64>,
    #[prost(uint64, optional, tag = "5")]
    pub rettime: Option<u64>,
}

/// `GenericFtraceEvent`: any event, its fields by name.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GenericFtraceEvent {
    #[prost(string, optional, tag = "1")]
    pub event_name: Option<String>,
    #[prost(message, repeated, tag = "2")]
    pub field: Vec<GenericField>,
}

/// `GenericFtraceEvent.Field`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GenericField {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(oneof = "GenericValue", tags = "3, 4, 5")]
    pub value: Option<GenericValue>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum GenericValue {
    #[prost(string, tag = "3")]
    StrValue(String),
    #[prost(int64, tag = "4")]
    IntValue(i64),
    #[prost(uint64, tag = "5")]
    UintValue(u64),
}

/// `ProcessTree`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessTree {
    #[prost(message, repeated, tag = "1")]
    pub processes: Vec<Process>,
    #[prost(message, repeated, tag = "2")]
    pub threads: Vec<Thread>,
}

/// `ProcessTree.Process`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Process {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub ppid: Option<i32>,
    #[prost(string, repeated, tag = "3")]
    pub cmdline: Vec<String>,
    #[prost(bool, optional, tag = "9")]
    pub cmdline_is_comm: Option<bool>,
}

/// `ProcessTree.Thread`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Thread {
    #[prost(int32, optional, tag = "1")]
    pub tid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
}

/// `SystemInfo`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SystemInfo {
    #[prost(message, optional, tag = "1")]
    pub utsname: Option<Utsname>,
    #[prost(uint32, optional, tag = "6")]
    pub page_size: Option<u32>,
    #[prost(uint32, optional, tag = "8")]
    pub num_cpus: Option<u32>,
}

/// `Utsname`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Utsname {
    #[prost(string, optional, tag = "1")]
    pub sysname: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub version: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub release: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub machine: Option<String>,
}

/// `TrackDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
}

/// `ProcessDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

/// `ThreadDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ThreadDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int64, optional, tag = "2")]
    pub tid: Option<i64>,
    #[prost(string, optional, tag = "5")]
    pub thread_name: Option<String>,
}

/// `TrackEvent`. Its debug annotations are messages in
/// `debug_annotations`, or already encoded (each framed as field 4) in
/// `encoded_annotations`, which is written after them (a decoder fills
/// `debug_annotations` only).
#[derive(Clone, PartialEq, Debug, Default)]
pub struct TrackEvent {
    pub category_iids: Vec<u64>,
    pub debug_annotations: Vec<DebugAnnotation>,
    pub encoded_annotations: prost::bytes::Bytes,
    /// `TrackEvent.Type`: see the `TYPE_*` constants.
    pub r#type: Option<i32>,
    pub name_iid: Option<u64>,
    pub track_uuid: Option<u64>,
    pub name: Option<String>,
}

impl prost::Message for TrackEvent {
    fn encode_raw(&self, buf: &mut impl prost::bytes::BufMut) {
        use prost::encoding::*;
        for v in &self.category_iids {
            uint64::encode(3, v, buf);
        }
        for m in &self.debug_annotations {
            message::encode(4, m, buf);
        }
        buf.put_slice(&self.encoded_annotations);
        if let Some(v) = &self.r#type {
            int32::encode(9, v, buf);
        }
        if let Some(v) = &self.name_iid {
            uint64::encode(10, v, buf);
        }
        if let Some(v) = &self.track_uuid {
            uint64::encode(11, v, buf);
        }
        if let Some(v) = &self.name {
            string::encode(23, v, buf);
        }
    }
    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: prost::encoding::WireType,
        buf: &mut impl prost::bytes::Buf,
        ctx: prost::encoding::DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        use prost::encoding::*;
        match tag {
            3 => uint64::merge_repeated(wire_type, &mut self.category_iids, buf, ctx),
            4 => message::merge_repeated(wire_type, &mut self.debug_annotations, buf, ctx),
            9 => int32::merge(wire_type, self.r#type.get_or_insert(0), buf, ctx),
            10 => uint64::merge(wire_type, self.name_iid.get_or_insert(0), buf, ctx),
            11 => uint64::merge(wire_type, self.track_uuid.get_or_insert(0), buf, ctx),
            23 => string::merge(
                wire_type,
                self.name.get_or_insert_with(String::new),
                buf,
                ctx,
            ),
            _ => skip_field(wire_type, tag, buf, ctx),
        }
    }
    fn encoded_len(&self) -> usize {
        use prost::encoding::*;
        uint64::encoded_len_repeated(3, &self.category_iids)
            + message::encoded_len_repeated(4, &self.debug_annotations)
            + self.encoded_annotations.len()
            + self.r#type.map_or(0, |v| int32::encoded_len(9, &v))
            + self.name_iid.map_or(0, |v| uint64::encoded_len(10, &v))
            + self.track_uuid.map_or(0, |v| uint64::encoded_len(11, &v))
            + self.name.as_ref().map_or(0, |v| string::encoded_len(23, v))
    }
    fn clear(&mut self) {
        *self = TrackEvent::default();
    }
}

pub const TYPE_SLICE_BEGIN: i32 = 1;
pub const TYPE_SLICE_END: i32 = 2;
pub const TYPE_INSTANT: i32 = 3;

/// `DebugAnnotation`: a named value, possibly nested.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
    #[prost(bool, optional, tag = "2")]
    pub bool_value: Option<bool>,
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    #[prost(double, optional, tag = "5")]
    pub double_value: Option<f64>,
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
    /// A value as JSON text (we write empty arrays and objects so).
    #[prost(string, optional, tag = "9")]
    pub legacy_json_value: Option<String>,
    #[prost(message, repeated, tag = "11")]
    pub dict_entries: Vec<DebugAnnotation>,
    #[prost(message, repeated, tag = "12")]
    pub array_values: Vec<DebugAnnotation>,
}

/// `InternedData`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedData {
    #[prost(message, repeated, tag = "2")]
    pub event_names: Vec<EventName>,
    #[prost(message, repeated, tag = "3")]
    pub debug_annotation_names: Vec<DebugAnnotationName>,
    /// Kernel function names: the `func` of `funcgraph_*` events is an iid
    /// into these (on the ftrace bundles' packet sequence).
    #[prost(message, repeated, tag = "26")]
    pub kernel_symbols: Vec<InternedString>,
    /// Names of the functions of `frames`.
    #[prost(message, repeated, tag = "5")]
    pub function_names: Vec<InternedString>,
    #[prost(message, repeated, tag = "6")]
    pub frames: Vec<Frame>,
    #[prost(message, repeated, tag = "7")]
    pub callstacks: Vec<Callstack>,
    /// The path components of `mappings`.
    #[prost(message, repeated, tag = "17")]
    pub mapping_paths: Vec<InternedString>,
    #[prost(message, repeated, tag = "19")]
    pub mappings: Vec<Mapping>,
}

/// `InternedString`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedString {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub str: Option<Vec<u8>>,
}

/// `DebugAnnotationName`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotationName {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

/// `EventName`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct EventName {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}
