//! A perf.data as a source of the common event model, so every converter
//! takes it.
//!
//! - A tracepoint sample is an event of its ftrace class (the format from
//!   the tracing data, with its fixed-layout `FieldDef`s and its `print
//!   fmt`), its payload the RAW data: `common_type` first, as a trace.dat
//!   record, so sched events land where trace.dat's do (Perfetto's CPU
//!   tracks, the SQL sched tables).
//! - Any other sample (cpu-clock, cycles...) is an event of a class `perf`
//!   / event name whose fixed layout this module writes for each sample:
//!   `ip`, `pid`, `tid`, `period`, `addr`, the callchain as a
//!   `__data_loc u64[]` (markers included, as perf stores them) and
//!   `frames`, a `__data_loc char[]` naming each frame as `perf script`
//!   resolves it (see [`FRAME_LINE`]).
//! - LOST and LOST_SAMPLES are [`Record::Lost`]; damage is
//!   [`Record::Damage`]; the other records (COMM, MMAP, ...) are not events.
//! - Streams are CPUs (samples without CPU are CPU 0); tasks are the last
//!   comm of each tid (a first pass over the COMM records).
//!
//! The source keeps perf's threads and maps ([`crate::machine`]) from the
//! COMM, FORK, EXIT and MMAP records in the order perf delivers them, so
//! the frames are named as `perf script` names them (symbols from the
//! files and kallsyms of this machine, as perf finds them); a sink such as
//! Perfetto's writer (`PerfSample` with interned callstacks) needs only
//! the event.

use std::path::PathBuf;
use std::sync::Arc;

use tracemux_core::model::{
    BufferInfo, ClassTable, ClockInfo, Event, EventClass, FieldDef, Format, Lost, Progress, Record,
    RecordSource, StreamInfo, TraceMeta,
};
use tracemux_core::{Cursor, Result};
use tracemux_ftrace::format::parse_field_line;

use crate::consts::{
    attr_type, misc, rec, sample as st, PERF_CONTEXT_KERNEL, PERF_CONTEXT_MAX, PERF_CONTEXT_USER,
};
use crate::machine::Machine;
use crate::records::{IdMap, Records};
use crate::sample::parse_sample;
use crate::PerfData;

/// Class ids of non-tracepoint events start here (tracepoint ids are the
/// kernel's, below 65536).
pub const SAMPLE_CLASS_BASE: u32 = 0x1_0000;

/// The fixed layout of a non-tracepoint sample's payload.
const SAMPLE_FIELDS: [&str; 7] = [
    "field:unsigned long ip;\toffset:0;\tsize:8;\tsigned:0;",
    "field:int pid;\toffset:8;\tsize:4;\tsigned:1;",
    "field:int tid;\toffset:12;\tsize:4;\tsigned:1;",
    "field:u64 period;\toffset:16;\tsize:8;\tsigned:0;",
    "field:u64 addr;\toffset:24;\tsize:8;\tsigned:0;",
    "field:__data_loc u64[] callchain;\toffset:32;\tsize:4;\tsigned:0;",
    "field:__data_loc char[] frames;\toffset:36;\tsize:4;\tsigned:0;",
];
const SAMPLE_HEAD: usize = 40;

/// The layout of one line of a sample's `frames` field, one line per
/// frame from the sampled function outwards (the callchain without its
/// context markers, else the sample's `ip`), fields separated by tabs:
/// the address, the address in its dso (perf's `map_ip`), `k` or `u`
/// (kernel or user space), the dso (`[unknown]` when no map holds the
/// address) and the symbol (empty when none is known); a newline ends
/// each line. At most 127 frames (perf script's limit), and only whole
/// lines up to the `__data_loc`'s 65535 bytes.
pub const FRAME_LINE: &str = "ADDR\tDSO_ADDR\tk|u\tDSO\tSYMBOL\n";

fn sample_fields() -> Vec<FieldDef> {
    SAMPLE_FIELDS
        .iter()
        .filter_map(|l| parse_field_line(l, 8, false).ok())
        .collect()
}

/// The model's description of a perf.data.
pub fn trace_meta(p: &PerfData<'_>, cpus: u32, tasks: &[(i32, String)]) -> TraceMeta {
    let mut classes = ClassTable::new();
    if let Some(t) = &p.tracing {
        for f in &t.formats {
            classes.push(EventClass {
                index: tracemux_core::layout::ClassId::UNLISTED,
                id: f.id,
                system: f.system.clone(),
                name: f.name.clone(),
                common_fields: f.common_fields.clone(),
                fields: f.fields.clone(),
                print_fmt: f.print_fmt.clone(),
                printer: Some(f.printer.clone() as Arc<dyn tracemux_core::model::ClassPrinter>),
                schema: None,
                compiled: Default::default(),
            });
        }
    }
    let fields = sample_fields();
    for (i, ev) in p.events.iter().enumerate() {
        if ev.attr.type_ != attr_type::TRACEPOINT {
            classes.push(EventClass {
                index: tracemux_core::layout::ClassId::UNLISTED,
                id: SAMPLE_CLASS_BASE + i as u32,
                system: "perf".into(),
                name: p.event_name(i).to_string(),
                common_fields: Vec::new(),
                fields: fields.clone(),
                print_fmt: String::new(),
                printer: None,
                schema: None,
                compiled: Default::default(),
            });
        }
    }
    let f = &p.features;
    let mut env = Vec::new();
    for (k, v) in [
        ("hostname", &f.hostname),
        ("os_release", &f.osrelease),
        ("perf_version", &f.version),
        ("arch", &f.arch),
        ("cpu_desc", &f.cpudesc),
    ] {
        if let Some(v) = v {
            env.push((k.to_string(), v.clone()));
        }
    }
    if let Some(c) = &f.cmdline {
        env.push(("cmdline".into(), c.join(" ")));
    }
    // `perf record -k CLOCK`: the events' times are that clock's (a
    // timeline relates it to the other inputs' clocks), not perf_clock
    if let Some(a) = p
        .events
        .iter()
        .map(|e| &e.attr)
        .find(|a| a.flag(crate::attr::flag::USE_CLOCKID))
    {
        env.push(("clockid".into(), a.clockid.to_string()));
    }
    let mut task_table = tracemux_core::tables::TaskTable::default();
    for (tid, comm) in tasks {
        task_table.insert(*tid, comm.clone());
    }
    let t = p.tracing.as_ref();
    TraceMeta {
        endian: Some(p.endian()),
        long_size: t.map_or(8, |t| t.long_size),
        cpus,
        buffers: vec![BufferInfo {
            name: String::new(),
            clock: "perf".into(),
            page_size: t.map_or(4096, |t| t.page_size),
            cpus,
        }],
        streams: (0..cpus).map(|cpu| StreamInfo { buffer: 0, cpu }).collect(),
        classes,
        tasks: task_table,
        tgids: Default::default(),
        symbols: t.map(|t| t.kallsyms.clone()).unwrap_or_default(),
        printk: t.map(|t| t.printk.clone()).unwrap_or_default(),
        uname: f
            .osrelease
            .as_ref()
            .map(|r| format!("Linux {} {r}", f.hostname.as_deref().unwrap_or(""))),
        tracer_version: f.version.as_ref().map(|v| format!("perf {v}")),
        format: Some(Format::Perf),
        clocks: vec![ClockInfo {
            name: "perf".into(),
            freq: 1_000_000_000,
            description: Some("perf_clock (the kernel's local clock, ns since boot)".into()),
            ..ClockInfo::default()
        }],
        env,
        ..TraceMeta::default()
    }
}

/// The events of a perf.data in perf's order.
pub struct PerfSource<'p, 'a> {
    p: &'p PerfData<'a>,
    meta: TraceMeta,
    records: Records<'a>,
    ids: IdMap,
    buf: Vec<u8>,
    frames: Vec<u8>,
    machine: Machine,
    damage_seen: usize,
    strict: bool,
    done: bool,
}

impl<'p, 'a> PerfSource<'p, 'a> {
    /// Name the frames from the files under `symfs` and the `kallsyms`
    /// file (as `perf script --symfs --kallsyms`) instead of this
    /// machine's.
    pub fn with_symbols(mut self, symfs: Option<PathBuf>, kallsyms: Option<PathBuf>) -> Self {
        self.machine = Machine::for_data(self.p, symfs, kallsyms);
        self
    }

    /// A source over `p`. Lenient unless `strict` (then damage ends it
    /// with an error).
    pub fn new(p: &'p PerfData<'a>, strict: bool) -> Self {
        // first pass: comms and CPUs
        let e = p.endian();
        let ids = p.id_map();
        let mut r = p.records().unordered();
        let mut tasks: std::collections::HashMap<i32, String> = Default::default();
        let mut tgids: std::collections::HashMap<i32, i32> = Default::default();
        let mut max_cpu = 0u32;
        while let Some(x) = r.next_record() {
            match x.type_ {
                rec::COMM if x.body.len() > 8 => {
                    let pid = e.u32(x.body[0..4].try_into().unwrap_or([0; 4])) as i32;
                    let tid = e.u32(x.body[4..8].try_into().unwrap_or([0; 4])) as i32;
                    if pid > 0 && tid > 0 {
                        tgids.insert(tid, pid);
                    }
                    let name = &x.body[8..];
                    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                    let name = String::from_utf8_lossy(&name[..end]).into_owned();
                    tasks.insert(tid, name);
                }
                rec::FORK if x.body.len() >= 16 => {
                    // a thread takes its parent's comm
                    let w = |i: usize| e.u32(x.body[i..i + 4].try_into().unwrap_or([0; 4])) as i32;
                    let (tid, ptid) = (w(8), w(12));
                    if w(0) > 0 && tid > 0 {
                        tgids.insert(tid, w(0));
                    }
                    if !tasks.contains_key(&tid) {
                        if let Some(c) = tasks.get(&ptid).cloned() {
                            tasks.insert(tid, c);
                        }
                    }
                }
                rec::SAMPLE => {
                    if let Some(i) = ids.attr_index(x.type_, x.body, e) {
                        if let Ok(s) = parse_sample(&p.events[i].attr, x.misc, x.body, 0, e) {
                            max_cpu = max_cpu.max(s.cpu.unwrap_or(0).min(4095));
                            if let (Some(pid), Some(tid)) = (s.pid, s.tid) {
                                if pid as i32 > 0 && tid as i32 > 0 {
                                    tgids.entry(tid as i32).or_insert(pid as i32);
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        let cpus = p
            .features
            .nrcpus
            .map_or(1, |(avail, _)| avail.clamp(1, 4096))
            .max(max_cpu + 1);
        let mut meta = trace_meta(p, cpus, &{
            let mut t: Vec<(i32, String)> = tasks.into_iter().collect();
            t.sort_unstable();
            t
        });
        meta.tgids = tgids;
        PerfSource {
            p,
            meta,
            records: p.records(),
            ids,
            buf: Vec::new(),
            frames: Vec::new(),
            machine: Machine::for_data(p, None, None),
            damage_seen: p.damage.len(),
            strict,
            done: false,
        }
    }
}

impl PerfSource<'_, '_> {
    /// The file offset below which no byte is needed any more.
    pub fn consumed_to(&self) -> u64 {
        self.records.consumed_to()
    }
}

impl RecordSource for PerfSource<'_, '_> {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn progress(&self) -> Option<Progress> {
        let (done, total) = self.records.progress();
        Some(Progress { done, total }).filter(|p| p.total > 0)
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>> {
        if self.done {
            return Ok(None);
        }
        if self.damage_seen > 0 {
            // damage found while opening
            self.damage_seen -= 1;
            let e = self.p.damage[self.damage_seen].clone();
            if self.strict {
                self.done = true;
                return Err(e);
            }
            return Ok(Some(Record::Damage(e)));
        }
        let e = self.p.endian();
        loop {
            if let Some(d) = self.records.damage.pop() {
                if self.strict {
                    self.done = true;
                    return Err(d);
                }
                return Ok(Some(Record::Damage(d)));
            }
            let Some(loc) = self.records.next_loc() else {
                if let Some(d) = self.records.damage.pop() {
                    if self.strict {
                        self.done = true;
                        return Err(d);
                    }
                    return Ok(Some(Record::Damage(d)));
                }
                self.done = true;
                return Ok(None);
            };
            if matches!(
                loc.type_,
                rec::COMM | rec::FORK | rec::EXIT | rec::MMAP | rec::MMAP2
            ) {
                let r = self.records.view(&loc);
                if let Err(d) = self.machine.apply(&r, e) {
                    if self.strict {
                        self.done = true;
                        return Err(d);
                    }
                    return Ok(Some(Record::Damage(d)));
                }
                continue;
            }
            if !matches!(loc.type_, rec::SAMPLE | rec::LOST | rec::LOST_SAMPLES) {
                continue;
            }
            let r = self.records.view(&loc);
            match r.type_ {
                rec::SAMPLE => {
                    let Some(i) = self.ids.attr_index(r.type_, r.body, e) else {
                        return Ok(Some(Record::Damage(tracemux_core::Error::invalid(
                            "SAMPLE of no known event",
                            "data",
                            r.offset,
                        ))));
                    };
                    let attr = &self.p.events[i].attr;
                    let s = match parse_sample(attr, r.misc, r.body, r.offset + 8, e) {
                        Ok(s) => s,
                        Err(err) => {
                            if self.strict {
                                self.done = true;
                                return Err(err);
                            }
                            return Ok(Some(Record::Damage(err)));
                        }
                    };
                    let cpu = s.cpu.unwrap_or(0).min(self.meta.cpus.saturating_sub(1));
                    let ts = s.time.unwrap_or(0);
                    let pid = s.tid.map_or(-1, |t| t as i32);
                    if attr.type_ == attr_type::TRACEPOINT {
                        let raw = s.raw.unwrap_or(&[]);
                        let type_id = u32::try_from(attr.config).unwrap_or(u32::MAX);
                        let class = self.meta.classes.get(type_id);
                        return Ok(Some(Record::Event(Event {
                            ts,
                            stream: cpu,
                            cpu,
                            type_id,
                            class,
                            pid,
                            data: raw,
                            ext: raw,
                            endian: e,
                            file_pos: r.offset + 8 + r.body.len() as u64,
                            tape: None,
                            raw_ts: None,
                        })));
                    }
                    let b = &mut self.buf;
                    b.clear();
                    let chain = if attr.sample_type & st::CALLCHAIN != 0 {
                        s.callchain
                    } else {
                        &[]
                    };
                    let put32 = |b: &mut Vec<u8>, v: u32| {
                        b.extend_from_slice(&match e {
                            tracemux_core::Endian::Little => v.to_le_bytes(),
                            tracemux_core::Endian::Big => v.to_be_bytes(),
                        })
                    };
                    let put64 = |b: &mut Vec<u8>, v: u64| {
                        b.extend_from_slice(&match e {
                            tracemux_core::Endian::Little => v.to_le_bytes(),
                            tracemux_core::Endian::Big => v.to_be_bytes(),
                        })
                    };
                    put64(b, s.ip.unwrap_or(0));
                    put32(b, s.pid.unwrap_or(u32::MAX));
                    put32(b, s.tid.unwrap_or(u32::MAX));
                    put64(b, s.period.unwrap_or(attr.sample_period));
                    put64(b, s.addr.unwrap_or(0));
                    let len = chain.len().min(0xffff);
                    let len = len - len % 8;
                    put32(b, ((len as u32) << 16) | SAMPLE_HEAD as u32);
                    let kernel = s.misc & misc::CPUMODE_MASK == misc::KERNEL;
                    let tid = s.tid.map_or(-1, |t| t as i32);
                    self.machine.findnew(s.pid.map_or(-1, |v| v as i32), tid);
                    let f = &mut self.frames;
                    f.clear();
                    if chain.is_empty() {
                        put_frame(f, &mut self.machine, tid, s.ip.unwrap_or(0), kernel);
                    } else {
                        put_frames(f, &mut self.machine, tid, s.callchain(e), kernel);
                    }
                    let flen = f.len().min(0xffff) as u32;
                    put32(b, (flen << 16) | (SAMPLE_HEAD + len) as u32);
                    b.extend_from_slice(&chain[..len]);
                    b.extend_from_slice(&f[..flen as usize]);
                    let type_id = SAMPLE_CLASS_BASE + i as u32;
                    let class = self.meta.classes.get(type_id);
                    return Ok(Some(Record::Event(Event {
                        ts,
                        stream: cpu,
                        cpu,
                        type_id,
                        class,
                        pid,
                        data: &self.buf,
                        ext: &self.buf,
                        endian: e,
                        file_pos: r.offset + 8 + r.body.len() as u64,
                        tape: None,
                        raw_ts: None,
                    })));
                }
                _ => {
                    // LOST or LOST_SAMPLES (the others were skipped above)
                    let mut c = Cursor::new(r.body, e, "LOST");
                    let count = if r.type_ == rec::LOST {
                        c.u64().ok();
                        c.u64().ok()
                    } else {
                        c.u64().ok()
                    };
                    let i = self.ids.attr_index(r.type_, r.body, e).unwrap_or(0);
                    let tr = self
                        .p
                        .events
                        .get(i)
                        .and_then(|ev| crate::attr::parse_trailer(&ev.attr, r.body, e));
                    let cpu = tr
                        .and_then(|t| t.cpu)
                        .unwrap_or(0)
                        .min(self.meta.cpus.saturating_sub(1));
                    return Ok(Some(Record::Lost(Lost {
                        stream: cpu,
                        cpu,
                        ts: r.time,
                        count,
                    })));
                }
            }
        }
    }
}

/// The lines of `frames` for a callchain (see [`FRAME_LINE`]).
fn put_frames(
    out: &mut Vec<u8>,
    m: &mut Machine,
    tid: i32,
    chain: impl Iterator<Item = u64>,
    mut kernel: bool,
) {
    let mut n = 0;
    for ip in chain {
        if ip >= PERF_CONTEXT_MAX {
            match ip {
                PERF_CONTEXT_KERNEL => kernel = true,
                PERF_CONTEXT_USER => kernel = false,
                _ => {}
            }
            continue;
        }
        if n == 127 {
            break;
        }
        n += 1;
        let before = out.len();
        put_frame(out, m, tid, ip, kernel);
        if out.len() > 0xffff {
            out.truncate(before);
            break;
        }
    }
}

/// One line of `frames`.
fn put_frame(out: &mut Vec<u8>, m: &mut Machine, tid: i32, ip: u64, kernel: bool) {
    use std::io::Write as _;
    let r = m.resolve(tid, ip, kernel);
    let _ = write!(out, "{ip:x}\t{:x}\t", r.addr);
    out.push(if kernel { b'k' } else { b'u' });
    out.push(b'\t');
    put_clean(out, r.dso.unwrap_or("[unknown]"));
    out.push(b'\t');
    if let Some((_, name)) = r.sym {
        put_clean(out, name);
    }
    out.push(b'\n');
}

/// `s` with tabs and newlines as spaces (they separate the fields).
fn put_clean(out: &mut Vec<u8>, s: &str) {
    out.extend(
        s.bytes()
            .map(|b| if b == b'\t' || b == b'\n' { b' ' } else { b }),
    );
}
