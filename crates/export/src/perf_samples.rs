//! perf samples as Perfetto `PerfSample` packets, their call stacks
//! interned as Perfetto's profilers intern them (`InternedData`:
//! `function_names`, `mapping_paths`, `mappings`, `frames`, `callstacks`),
//! so that the Perfetto UI shows CPU profiles and flame graphs.
//!
//! The events are those of a perf.data's non-tracepoint classes (system
//! `perf`), whose fixed layout has `pid`, `tid`, `period` and `frames`, a
//! `__data_loc char[]` with one line per frame, the sampled function first:
//! `ADDR\tDSO_ADDR\tk|u\tDSO\tSYMBOL\n` (written by `tracemux-perf`'s model
//! source, which names frames as `perf script` does). A frame is the
//! function `SYMBOL` (none when empty) at `DSO_ADDR` in the mapping of the
//! file `DSO`; the sample's CPU mode is its first frame's.
//!
//! All samples go on one packet sequence ([`PERF_SEQUENCE`]); its first
//! packet clears the incremental state and each packet carries what it
//! interns first. The tables grow with the distinct frames and stacks of
//! the trace, not with its samples.

use foldhash::{HashMap, HashMapExt};
use tracemux_core::layout::ClassMap;
use tracemux_core::model::{Event, EventClass, FieldDef, FieldFlags};
use tracemux_core::Endian;

use crate::proto::*;

/// The packet sequence of perf samples.
pub const PERF_SEQUENCE: u32 = 0x7fff_0002;

/// Where a perf sample class keeps what a `PerfSample` needs.
#[derive(Clone, Copy)]
struct Plan {
    pid: Option<u32>,
    tid: Option<u32>,
    period: Option<u32>,
    frames: u32,
}

fn offset_of(fields: &[FieldDef], name: &str, size: u32) -> Option<u32> {
    fields
        .iter()
        .find(|f| f.name == name && f.size == size)
        .map(|f| f.offset)
}

impl Plan {
    fn of(c: &EventClass) -> Option<Plan> {
        Some(Plan {
            pid: offset_of(&c.fields, "pid", 4),
            tid: offset_of(&c.fields, "tid", 4),
            period: offset_of(&c.fields, "period", 8),
            frames: c
                .fields
                .iter()
                .find(|f| f.name == "frames" && f.flags.has(FieldFlags::DYNAMIC))?
                .offset,
        })
    }
}

/// Whether the events of `c` become `PerfSample`s.
pub fn is_perf_sample_class(c: &EventClass) -> bool {
    c.system == "perf" && Plan::of(c).is_some()
}

fn read<const N: usize>(d: &[u8], at: Option<u32>) -> Option<[u8; N]> {
    let at = at? as usize;
    d.get(at..at.checked_add(N)?)?.try_into().ok()
}

fn u32_of(d: &[u8], at: Option<u32>, e: Endian) -> Option<u32> {
    let b = read::<4>(d, at)?;
    Some(match e {
        Endian::Little => u32::from_le_bytes(b),
        Endian::Big => u32::from_be_bytes(b),
    })
}

fn u64_of(d: &[u8], at: Option<u32>, e: Endian) -> Option<u64> {
    let b = read::<8>(d, at)?;
    Some(match e {
        Endian::Little => u64::from_le_bytes(b),
        Endian::Big => u64::from_be_bytes(b),
    })
}

/// The interning tables of the perf sample sequence.
pub(crate) struct PerfSamples {
    started: bool,
    plans: ClassMap<Option<Plan>>,
    functions: HashMap<String, u64>,
    paths: HashMap<String, u64>,
    mappings: HashMap<String, u64>,
    frames: HashMap<(u64, u64, u64), u64>,
    callstacks: HashMap<Vec<u64>, u64>,
    new: InternedData,
    stack: Vec<u64>,
    /// Samples written.
    pub samples: u64,
}

fn intern(map: &mut HashMap<String, u64>, new: &mut Vec<InternedString>, s: &str) -> u64 {
    if let Some(&i) = map.get(s) {
        return i;
    }
    let i = map.len() as u64 + 1;
    map.insert(s.to_string(), i);
    new.push(InternedString {
        iid: Some(i),
        str: Some(s.as_bytes().to_vec()),
    });
    i
}

impl PerfSamples {
    pub(crate) fn new() -> Self {
        PerfSamples {
            plans: ClassMap::new(),
            functions: HashMap::new(),
            paths: HashMap::new(),
            mappings: HashMap::new(),
            frames: HashMap::new(),
            callstacks: HashMap::new(),
            started: false,
            new: InternedData::default(),
            stack: Vec::new(),
            samples: 0,
        }
    }

    fn plan(&mut self, c: &EventClass) -> Option<Plan> {
        *self.plans.get_or_insert_with(c.index, || Plan::of(c))
    }

    fn mapping(&mut self, dso: &str) -> u64 {
        if let Some(&i) = self.mappings.get(dso) {
            return i;
        }
        let mut ids = Vec::new();
        for part in dso.split('/').filter(|p| !p.is_empty()) {
            ids.push(intern(&mut self.paths, &mut self.new.mapping_paths, part));
        }
        let i = self.mappings.len() as u64 + 1;
        self.mappings.insert(dso.to_string(), i);
        self.new.mappings.push(Mapping {
            iid: Some(i),
            path_string_ids: ids,
        });
        i
    }

    /// The `PerfSample` packet of `ev`, or `None` when its class is not a
    /// perf sample class (the caller writes it as any other event).
    pub(crate) fn packet(&mut self, ev: &Event<'_>) -> Option<TracePacket> {
        let c = ev.class?;
        let plan = self.plan(c)?;
        let d = ev.data;
        let e = ev.endian;
        let loc = u32_of(d, Some(plan.frames), e).unwrap_or(0);
        let (at, len) = ((loc & 0xffff) as usize, (loc >> 16) as usize);
        let text = d.get(at..at.saturating_add(len)).unwrap_or(&[]);
        let text = String::from_utf8_lossy(text);
        self.stack.clear();
        let mut mode = None;
        for line in text.lines() {
            let mut f = line.splitn(5, '\t');
            let (Some(_ip), Some(rel), Some(m), Some(dso), sym) =
                (f.next(), f.next(), f.next(), f.next(), f.next())
            else {
                continue;
            };
            let rel = u64::from_str_radix(rel, 16).unwrap_or(0);
            mode.get_or_insert(if m == "k" {
                CPU_MODE_KERNEL
            } else {
                CPU_MODE_USER
            });
            let map = self.mapping(dso);
            let func = match sym {
                Some(s) if !s.is_empty() => {
                    intern(&mut self.functions, &mut self.new.function_names, s)
                }
                _ => 0,
            };
            let n = self.frames.len() as u64 + 1;
            let iid = *self.frames.entry((map, rel, func)).or_insert_with(|| {
                self.new.frames.push(Frame {
                    iid: Some(n),
                    function_name_id: (func != 0).then_some(func),
                    mapping_id: Some(map),
                    rel_pc: Some(rel),
                });
                n
            });
            self.stack.push(iid);
        }
        // Perfetto's callstacks list the outermost frame first
        self.stack.reverse();
        let callstack = if self.stack.is_empty() {
            None
        } else if let Some(&i) = self.callstacks.get(&self.stack) {
            Some(i)
        } else {
            let i = self.callstacks.len() as u64 + 1;
            self.callstacks.insert(self.stack.clone(), i);
            self.new.callstacks.push(Callstack {
                iid: Some(i),
                frame_ids: self.stack.clone(),
            });
            Some(i)
        };
        let ids = |v: Option<u32>| v.filter(|&v| v != u32::MAX);
        let flags = if self.started {
            SEQ_NEEDS_INCREMENTAL_STATE
        } else {
            SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE
        };
        let first = !self.started;
        self.started = true;
        self.samples += 1;
        let n = &self.new;
        let interned = (!n.function_names.is_empty()
            || !n.mapping_paths.is_empty()
            || !n.mappings.is_empty()
            || !n.frames.is_empty()
            || !n.callstacks.is_empty())
        .then(|| std::mem::take(&mut self.new));
        Some(TracePacket {
            timestamp: Some(ev.ts),
            trusted_packet_sequence_id: Some(PERF_SEQUENCE),
            interned_data: interned,
            sequence_flags: Some(flags),
            first_packet_on_sequence: first.then_some(true),
            data: Some(Data::PerfSample(PerfSample {
                cpu: Some(ev.cpu),
                pid: ids(u32_of(d, plan.pid, e)),
                tid: ids(u32_of(d, plan.tid, e)),
                callstack_iid: callstack,
                cpu_mode: Some(mode.unwrap_or(CPU_MODE_UNKNOWN)),
                timebase_count: u64_of(d, plan.period, e),
            })),
            ..Default::default()
        })
    }
}
