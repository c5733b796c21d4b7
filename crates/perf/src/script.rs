//! `perf script`'s text (perf 6.1, builtin-script.c and util/evsel_fprintf.c).
//!
//! Layout of a SAMPLE line, field by field, when selected:
//! - comm: `%16s ` (right-aligned in 16), but `%s ` when the line prints
//!   ip and the event has a callchain;
//! - pid and tid: `%5d/%-5d `; pid alone or tid alone: `%5d `;
//! - cpu: `[%03d] `;
//! - time: `secs.usecs` (microseconds truncated) right-aligned in 12, then
//!   `: `; with `--ns` `%5lu.%09lu: `;
//! - period: `%10lu ` (the attribute's period when the sample has none);
//! - event: the name right-aligned to the longest event name of the
//!   recording, then `: `;
//! - trace: the tracepoint's `print fmt` text (libtraceevent, no plugins);
//! - addr: `%16lx`;
//! - ip: without a callchain ` %16lx`, then ` sym` (`+0x<off>` with
//!   symoff; `[unknown]` when none) and ` (dso)` (`[unknown]` without a
//!   map); with a callchain a newline and one line per entry:
//!   `\t%16lx sym+off (dso)\n` where the address is the one in the dso (user
//!   maps: `ip - start + pgoff`), markers skipped, at most 127 entries;
//! - the line ends with `\n` (after a callchain that makes an empty line).
//!
//! `--show-task-events` and `--show-mmap-events` print COMM, FORK, EXIT,
//! MMAP and MMAP2 records with the same leading fields (of the event the
//! record's id names, or the first event) and perf's record text.

use std::io::Write;
use std::path::PathBuf;

use tracemux_core::model::PrintCtx;
use tracemux_core::tables::{PrintkTable, SymbolTable};
use tracemux_core::{Cursor, Endian, Error};

use crate::attr::{parse_trailer, SampleId};
use crate::consts::{
    misc, rec, sample as st, PERF_CONTEXT_KERNEL, PERF_CONTEXT_MAX, PERF_CONTEXT_USER,
};
use crate::fields::{self, FieldSets};
use crate::machine::Machine;
use crate::records::RawRecord;
use crate::sample::parse_sample;
use crate::PerfData;

/// The options of `perf script` that tracemux takes.
#[derive(Debug, Clone, Default)]
pub struct ScriptOptions {
    /// `-F` arguments, in order.
    pub fields: Vec<String>,
    pub ns: bool,
    pub show_task_events: bool,
    pub show_mmap_events: bool,
    pub symfs: Option<PathBuf>,
    pub kallsyms: Option<PathBuf>,
    /// Damage is an error.
    pub strict: bool,
}

/// What a run printed and found.
#[derive(Debug, Default)]
pub struct ScriptReport {
    pub samples: u64,
    /// Warnings perf would print on stderr.
    pub warnings: Vec<String>,
    /// Damage found (lenient mode).
    pub damage: Vec<Error>,
}

/// Why `script` stopped.
#[derive(Debug)]
pub enum ScriptError {
    /// perf refuses these options for this recording (its message).
    Usage(String),
    /// Damage, in strict mode.
    Damage(Error),
    Io(std::io::Error),
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScriptError::Usage(m) => f.write_str(m),
            ScriptError::Damage(e) => e.fmt(f),
            ScriptError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ScriptError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ScriptError::Damage(e) => Some(e),
            ScriptError::Io(e) => Some(e),
            ScriptError::Usage(_) => None,
        }
    }
}

/// Per event: what to print.
struct Ev {
    fields: u64,
    name: String,
    callchain: bool,
    period: u64,
    tp: Option<usize>,
}

fn put_padded(out: &mut Vec<u8>, s: &[u8], width: usize, left: bool) {
    let pad = width.saturating_sub(s.len());
    if left {
        out.extend_from_slice(s);
    }
    out.resize(out.len() + pad, b' ');
    if !left {
        out.extend_from_slice(s);
    }
}

fn put_int(out: &mut Vec<u8>, v: i64, width: usize, left: bool) {
    let mut b = itoa::Buffer::new();
    put_padded(out, b.format(v).as_bytes(), width, left);
}

fn put_uint(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut b = itoa::Buffer::new();
    put_padded(out, b.format(v).as_bytes(), width, false);
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `%{width}lx`.
fn put_hex(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut buf = [0u8; 16];
    let mut i = 16;
    let mut x = v;
    loop {
        i -= 1;
        buf[i] = HEX[(x & 15) as usize];
        x >>= 4;
        if x == 0 {
            break;
        }
    }
    put_padded(out, &buf[i..], width, false);
}

/// `%#lx` (0 prints as `0`).
fn put_hex_alt(out: &mut Vec<u8>, v: u64) {
    if v != 0 {
        out.extend_from_slice(b"0x");
    }
    put_hex(out, v, 0);
}

fn put_time(out: &mut Vec<u8>, t: u64, ns: bool) {
    let secs = t / 1_000_000_000;
    let rem = t % 1_000_000_000;
    if ns {
        put_uint(out, secs, 5);
        out.push(b'.');
        let mut b = itoa::Buffer::new();
        let s = b.format(rem);
        out.resize(out.len() + 9 - s.len(), b'0');
        out.extend_from_slice(s.as_bytes());
    } else {
        let mut tmp = Vec::with_capacity(24);
        let mut b = itoa::Buffer::new();
        tmp.extend_from_slice(b.format(secs).as_bytes());
        tmp.push(b'.');
        let us = rem / 1000;
        let s = b.format(us);
        tmp.resize(tmp.len() + 6 - s.len(), b'0');
        tmp.extend_from_slice(s.as_bytes());
        put_padded(out, &tmp, 12, false);
    }
    out.extend_from_slice(b": ");
}

/// The printer's state over one run.
struct Script<'p, 'a> {
    p: &'p PerfData<'a>,
    opts: &'p ScriptOptions,
    evs: Vec<Ev>,
    name_width: usize,
    machine: Machine,
    e: Endian,
    ids: crate::records::IdMap,
    empty_syms: SymbolTable,
    empty_printk: PrintkTable,
    report: ScriptReport,
}

impl<'p, 'a> Script<'p, 'a> {
    /// The leading fields of a line (`perf_sample__fprintf_start`).
    fn start(&mut self, out: &mut Vec<u8>, ev: usize, tid_for_comm: i32, s: &SampleId) {
        let f = self.evs[ev].fields;
        if f & fields::COMM != 0 {
            // perf's machine__findnew_thread: the thread exists from here on
            let pid = s.pid.map_or(-1, |v| v as i32);
            let comm = if tid_for_comm == s.tid.map_or(-1, |v| v as i32) {
                self.machine.findnew(pid, tid_for_comm).comm.as_str()
            } else {
                self.machine
                    .threads
                    .get(&tid_for_comm)
                    .map_or(":-1", |t| t.comm.as_str())
            };
            if f & fields::IP != 0 && self.evs[ev].callchain {
                out.extend_from_slice(comm.as_bytes());
                out.push(b' ');
            } else {
                put_padded(out, comm.as_bytes(), 16, false);
                out.push(b' ');
            }
        }
        let pid = s.pid.map_or(-1, |v| v as i32) as i64;
        let tid = s.tid.map_or(-1, |v| v as i32) as i64;
        if f & fields::PID != 0 && f & fields::TID != 0 {
            put_int(out, pid, 5, false);
            out.push(b'/');
            put_int(out, tid, 5, true);
            out.push(b' ');
        } else if f & fields::PID != 0 {
            put_int(out, pid, 5, false);
            out.push(b' ');
        } else if f & fields::TID != 0 {
            put_int(out, tid, 5, false);
            out.push(b' ');
        }
        if f & fields::CPU != 0 {
            out.push(b'[');
            put_uint_zero(out, s.cpu.unwrap_or(0) as u64, 3);
            out.extend_from_slice(b"] ");
        }
        if f & fields::TIME != 0 {
            put_time(out, s.time.unwrap_or(0), self.opts.ns);
        }
    }

    fn sym(
        &mut self,
        out: &mut Vec<u8>,
        tid: i32,
        ip: u64,
        kernel: bool,
        f: u64,
        callchain_line: bool,
    ) {
        let r = self.machine.resolve(tid, ip, kernel);
        if callchain_line {
            out.push(b'\t');
            put_hex(out, if r.map.is_some() { r.addr } else { ip }, 16);
        } else if f & fields::IP != 0 {
            put_hex(out, ip, 16);
        }
        if f & fields::SYM != 0 {
            out.push(b' ');
            match r.sym {
                Some((start, name)) => {
                    out.extend_from_slice(name.as_bytes());
                    if f & fields::SYMOFFSET != 0 {
                        out.extend_from_slice(b"+0x");
                        put_hex(out, r.addr.wrapping_sub(start), 0);
                    }
                }
                None => out.extend_from_slice(b"[unknown]"),
            }
        }
        if f & fields::DSO != 0 {
            out.extend_from_slice(b" (");
            out.extend_from_slice(r.dso.unwrap_or("[unknown]").as_bytes());
            out.push(b')');
        }
    }

    fn sample(&mut self, out: &mut Vec<u8>, r: &RawRecord<'_>) -> Result<(), Error> {
        let ev = self.ids.attr_index(r.type_, r.body, self.e).unwrap_or(0);
        let Some(ea) = self.p.events.get(ev) else {
            return Err(Error::invalid("SAMPLE of no known event", "data", r.offset));
        };
        let s = parse_sample(&ea.attr, r.misc, r.body, r.offset + 8, self.e)?;
        self.report.samples += 1;
        let pid = s.pid.map_or(-1, |v| v as i32);
        let tid = s.tid.map_or(-1, |v| v as i32);
        let f = self.evs[ev].fields;
        if f & fields::COMM == 0 {
            self.machine.findnew(pid, tid);
        }
        let id = SampleId {
            pid: s.pid,
            tid: s.tid,
            time: s.time,
            id: s.id,
            stream_id: s.stream_id,
            cpu: s.cpu,
        };
        self.start(out, ev, tid, &id);
        if f & fields::PERIOD != 0 {
            put_uint(out, s.period.unwrap_or(self.evs[ev].period), 10);
            out.push(b' ');
        }
        if f & fields::EVNAME != 0 {
            let w = self.name_width;
            let name = std::mem::take(&mut self.evs[ev].name);
            put_padded(out, name.as_bytes(), w, false);
            self.evs[ev].name = name;
            out.extend_from_slice(b": ");
        }
        if f & fields::TRACE != 0 {
            if let (Some(raw), Some(tp)) = (s.raw, self.evs[ev].tp) {
                let t = self.p.tracing.as_ref().expect("tp implies tracing data");
                let fmt = &t.formats[tp];
                let ctx = PrintCtx::new(
                    t.endian.unwrap_or(self.e),
                    t.long_size,
                    &self.empty_syms,
                    &t.printk,
                    s.cpu.unwrap_or(0),
                );
                use tracemux_core::model::ClassPrinter;
                let _ = &self.empty_printk;
                fmt.printer.write_pretty(out, raw, raw.len(), &ctx);
            }
        }
        if f & fields::ADDR != 0 {
            put_hex(out, s.addr.unwrap_or(0), 16);
        }
        if f & fields::IP != 0 {
            let kernel_mode = s.misc & misc::CPUMODE_MASK == misc::KERNEL;
            if self.evs[ev].callchain && ea.attr.sample_type & st::CALLCHAIN != 0 {
                out.push(b'\n');
                let mut kernel = kernel_mode;
                let mut n = 0;
                for ip in s.callchain(self.e) {
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
                    self.sym(out, tid, ip, kernel, f, true);
                    out.push(b'\n');
                }
            } else {
                out.push(b' ');
                self.sym(out, tid, s.ip.unwrap_or(0), kernel_mode, f, false);
            }
        }
        if f & fields::PHYS_ADDR != 0 {
            put_hex(out, s.phys_addr.unwrap_or(0), 16);
        }
        out.push(b'\n');
        Ok(())
    }

    /// The sample_id of a non-sample record, and its event.
    fn side_id(&self, r: &RawRecord<'_>, pid: i32, tid: i32) -> (usize, SampleId) {
        let ev = self.ids.attr_index(r.type_, r.body, self.e).unwrap_or(0);
        let a = &self.p.events[ev].attr;
        match parse_trailer(a, r.body, self.e) {
            Some(s) => (ev, s),
            None => (
                ev,
                SampleId {
                    pid: Some(pid as u32),
                    tid: Some(tid as u32),
                    time: Some(0),
                    cpu: Some(0),
                    ..SampleId::default()
                },
            ),
        }
    }

    fn side(&mut self, out: &mut Vec<u8>, r: &RawRecord<'_>) -> Result<(), Error> {
        let mut c = Cursor::with_base(r.body, r.offset + 8, self.e, "record");
        match r.type_ {
            rec::COMM => {
                let pid = c.u32()? as i32;
                let tid = c.u32()? as i32;
                let name = c.cstr()?;
                let name = String::from_utf8_lossy(name).into_owned();
                self.machine.comm(pid, tid, &name);
                if self.opts.show_task_events {
                    let (ev, id) = self.side_id(r, pid, tid);
                    self.start(out, ev, tid, &id);
                    out.extend_from_slice(b"PERF_RECORD_COMM");
                    if r.misc & misc::COMM_EXEC != 0 {
                        out.extend_from_slice(b" exec");
                    }
                    out.extend_from_slice(b": ");
                    out.extend_from_slice(name.as_bytes());
                    out.push(b':');
                    put_int(out, pid as i64, 0, false);
                    out.push(b'/');
                    put_int(out, tid as i64, 0, false);
                    out.push(b'\n');
                }
            }
            rec::FORK | rec::EXIT => {
                let pid = c.u32()? as i32;
                let ppid = c.u32()? as i32;
                let tid = c.u32()? as i32;
                let ptid = c.u32()? as i32;
                let _time = c.u64()?;
                let fork = r.type_ == rec::FORK;
                if fork {
                    self.machine
                        .fork(pid, tid, ppid, ptid, r.misc & (1 << 13) == 0);
                } else {
                    self.machine.findnew(pid, tid);
                }
                if self.opts.show_task_events {
                    let (ev, id) = self.side_id(r, pid, tid);
                    self.start(out, ev, tid, &id);
                    out.extend_from_slice(if fork {
                        b"PERF_RECORD_FORK("
                    } else {
                        b"PERF_RECORD_EXIT("
                    });
                    for (i, v) in [pid, tid, ppid, ptid].into_iter().enumerate() {
                        put_int(out, v as i64, 0, false);
                        out.extend_from_slice(match i {
                            0 | 2 => b":",
                            1 => b"):(",
                            _ => b")\n",
                        });
                    }
                }
                if !fork {
                    self.machine.exit(tid);
                }
            }
            rec::MMAP | rec::MMAP2 => {
                let pid = c.u32()? as i32;
                let tid = c.u32()? as i32;
                let start = c.u64()?;
                let len = c.u64()?;
                let pgoff = c.u64()?;
                let mut extra = None;
                let mut prot = 0;
                let mut flags = 0;
                if r.type_ == rec::MMAP2 {
                    let b = c.bytes(24)?;
                    prot = c.u32()?;
                    flags = c.u32()?;
                    extra = Some(b);
                }
                let name = String::from_utf8_lossy(c.cstr()?).into_owned();
                self.machine.mmap(pid, tid, start, len, pgoff, &name);
                if self.opts.show_mmap_events {
                    let (ev, id) = self.side_id(r, pid, tid);
                    self.start(out, ev, tid, &id);
                    out.extend_from_slice(if extra.is_some() {
                        b"PERF_RECORD_MMAP2 "
                    } else {
                        b"PERF_RECORD_MMAP "
                    });
                    put_int(out, pid as i64, 0, false);
                    out.push(b'/');
                    put_int(out, tid as i64, 0, false);
                    out.extend_from_slice(b": [");
                    put_hex_alt(out, start);
                    out.push(b'(');
                    put_hex_alt(out, len);
                    out.extend_from_slice(b") @ ");
                    put_hex_alt(out, pgoff);
                    match extra {
                        Some(b) => {
                            let mut x = Cursor::new(b, self.e, "mmap2");
                            if r.misc & misc::MMAP_BUILD_ID != 0 {
                                let n = (b[0] as usize).min(20);
                                out.push(b' ');
                                for &byte in &b[4..4 + n] {
                                    out.push(HEX[(byte >> 4) as usize]);
                                    out.push(HEX[(byte & 15) as usize]);
                                }
                            } else {
                                let maj = x.u32()?;
                                let min = x.u32()?;
                                let ino = x.u64()?;
                                let gen = x.u64()?;
                                out.push(b' ');
                                put_hex_zero(out, maj as u64, 2);
                                out.push(b':');
                                put_hex_zero(out, min as u64, 2);
                                out.push(b' ');
                                put_uint(out, ino, 0);
                                out.push(b' ');
                                put_uint(out, gen, 0);
                            }
                            out.extend_from_slice(b"]: ");
                            out.push(if prot & 1 != 0 { b'r' } else { b'-' });
                            out.push(if prot & 2 != 0 { b'w' } else { b'-' });
                            out.push(if prot & 4 != 0 { b'x' } else { b'-' });
                            out.push(if flags & 1 != 0 { b's' } else { b'p' });
                        }
                        None => {
                            out.extend_from_slice(b"]: ");
                            out.push(if r.misc & misc::MMAP_DATA != 0 {
                                b'r'
                            } else {
                                b'x'
                            });
                        }
                    }
                    out.push(b' ');
                    out.extend_from_slice(name.as_bytes());
                    out.push(b'\n');
                }
            }
            _ => {}
        }
        Ok(())
    }
}

fn put_uint_zero(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut b = itoa::Buffer::new();
    let s = b.format(v);
    out.resize(out.len() + width.saturating_sub(s.len()), b'0');
    out.extend_from_slice(s.as_bytes());
}

fn put_hex_zero(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut tmp = Vec::with_capacity(16);
    put_hex(&mut tmp, v, 0);
    out.resize(out.len() + width.saturating_sub(tmp.len()), b'0');
    out.extend_from_slice(&tmp);
}

/// Print `p` as `perf script` would, to `w`.
pub fn script(
    p: &PerfData<'_>,
    opts: &ScriptOptions,
    w: &mut dyn Write,
) -> Result<ScriptReport, ScriptError> {
    script_with(p, opts, w, &mut |_| {})
}

/// [`script`], telling `release` from time to time the file offset below
/// which no byte is needed any more (a caller that maps the file drops
/// those pages: memory stays flat whatever the file's size).
pub fn script_with(
    p: &PerfData<'_>,
    opts: &ScriptOptions,
    w: &mut dyn Write,
    release: &mut dyn FnMut(u64),
) -> Result<ScriptReport, ScriptError> {
    let mut sets = FieldSets::parse(&opts.fields).map_err(ScriptError::Usage)?;
    let names: Vec<&str> = (0..p.events.len()).map(|i| p.event_name(i)).collect();
    sets.check(&p.events, &names).map_err(ScriptError::Usage)?;
    let any_callchain = p
        .events
        .iter()
        .any(|e| e.attr.sample_type & st::CALLCHAIN != 0);
    let evs: Vec<Ev> = p
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| Ev {
            fields: sets.fields(fields::output_type(e.attr.type_)),
            name: names[i].to_string(),
            callchain: any_callchain && e.attr.sample_type & st::CALLCHAIN != 0,
            period: e.attr.sample_period,
            tp: if e.attr.type_ == crate::consts::attr_type::TRACEPOINT {
                p.tracing
                    .as_ref()
                    .and_then(|t| t.by_id.get(&u32::try_from(e.attr.config).ok()?).copied())
            } else {
                None
            },
        })
        .collect();
    let name_width = names.iter().map(|n| n.len()).max().unwrap_or(0);
    let mut s = Script {
        p,
        opts,
        evs,
        name_width,
        machine: {
            let mut m = Machine::new(opts.symfs.clone(), opts.kallsyms.clone());
            m.build_ids = p
                .features
                .build_ids
                .iter()
                .map(|b| (b.filename.clone(), b.id.clone()))
                .collect();
            m
        },
        e: p.endian(),
        ids: p.id_map(),
        empty_syms: SymbolTable::default(),
        empty_printk: PrintkTable::default(),
        report: ScriptReport {
            warnings: sets.warnings.clone(),
            damage: p.damage.clone(),
            ..ScriptReport::default()
        },
    };
    if opts.strict {
        if let Some(e) = p.damage.first() {
            return Err(ScriptError::Damage(e.clone()));
        }
    }
    let mut out = Vec::with_capacity(1 << 17);
    let mut records = p.records();
    while let Some(r) = records.next_record() {
        let res = if p.events.is_empty() {
            Ok(())
        } else if r.type_ == rec::SAMPLE {
            s.sample(&mut out, &r)
        } else {
            s.side(&mut out, &r)
        };
        if let Err(e) = res {
            if opts.strict {
                return Err(ScriptError::Damage(e));
            }
            s.report.damage.push(e);
        }
        if out.len() >= 1 << 16 {
            w.write_all(&out).map_err(ScriptError::Io)?;
            out.clear();
            release(records.consumed_to());
        }
    }
    w.write_all(&out).map_err(ScriptError::Io)?;
    let mut report = s.report;
    report.damage.append(&mut records.damage);
    if opts.strict {
        if let Some(e) = report.damage.first() {
            return Err(ScriptError::Damage(e.clone()));
        }
    }
    Ok(report)
}
