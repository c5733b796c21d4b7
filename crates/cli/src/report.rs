//! `tracemux report`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::Args;

use crate::open::{map, sniff, Kind, Releaser};
use crate::{warn, Out, Outcome};
use tracemux_core::model::{Record, RecordSource, TraceMeta};
use tracemux_render::tracecmd::{TimeFormat, TraceCmdPrinter};
use tracemux_tracedat::reader::{ReadOptions, Reader};
use tracemux_tracedat::{DataKind, OptionId, TraceDat};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Trace file(s) to read.
    #[arg(required_unless_present = "input")]
    pub traces: Vec<PathBuf>,
    /// Input file (trace-cmd's -i).
    #[arg(short = 'i', long = "input")]
    pub input: Option<PathBuf>,
    /// Raw view: every field as name=value (trace-cmd report -R).
    #[arg(short = 'R', long = "raw")]
    pub raw: bool,
    /// Timestamps in nanoseconds (trace-cmd report -t).
    #[arg(short = 't')]
    pub nsecs: bool,
    /// Latency columns: irqs-off, need-resched, hardirq/softirq, preempt
    /// depth (trace-cmd report -l).
    #[arg(short = 'l')]
    pub latency: bool,
    /// One JSON object per event and per lost-events marker.
    #[arg(long)]
    pub json: bool,
    /// The kernel buffer statistics stored in the file.
    #[arg(long)]
    pub stat: bool,
    /// The CPUs that have data.
    #[arg(long)]
    pub cpus: bool,
    /// With the CPU list: the time of each CPU's first event.
    #[arg(long)]
    pub first_event: bool,
    /// With the CPU list: the time of each CPU's last event.
    #[arg(long)]
    pub last_event: bool,
    /// The uname of the traced system and the tracer version.
    #[arg(long)]
    pub uname: bool,
    /// The version of the tool that recorded the trace (trace-cmd report --version).
    #[arg(long)]
    pub tracer_version: bool,
    /// Ignore the DATE option.
    #[arg(long)]
    pub nodate: bool,
    /// Do not correct timestamps (no offsets, no TSC conversion).
    #[arg(long)]
    pub raw_ts: bool,
    /// Stop at the first damaged byte instead of reporting it and going on.
    #[arg(long)]
    pub strict: bool,
    // --- event selection (see select.rs) ---
    /// Only events of these CPUs, e.g. `0,2-3` (trace-cmd report --cpu;
    /// with several files or instances, the CPUs of all buffers are
    /// numbered one after the other).
    #[arg(long = "cpu", value_name = "LIST")]
    pub cpu: Vec<String>,
    /// Event filter 'EVENTS[:FILTER]' (trace-cmd report -F), repeatable:
    /// e.g. 'sched_switch: prev_pid == 0', 'sched/.*: COMM =~ "^ba"'.
    #[arg(short = 'F', value_name = "FILTER")]
    pub filter: Vec<String>,
    /// The -F filters after this one hide the events they match.
    #[arg(short = 'v')]
    pub invert: bool,
    /// Hide events recorded in hard interrupt context.
    #[arg(short = 'I')]
    pub no_irqs: bool,
    /// Hide events recorded in soft interrupt context.
    #[arg(short = 'S')]
    pub no_softirqs: bool,
    /// Only events of these tasks (common_pid, pid or next_pid), repeatable.
    #[arg(long = "pid", value_name = "PID[,PID...]")]
    pub pid: Vec<String>,
    /// Only events of the tasks with this name, repeatable.
    #[arg(long = "comm", value_name = "COMM")]
    pub comm: Vec<String>,
    /// Add NS to the timestamps of the -i file before it (not the first).
    #[arg(long = "ts-offset", value_name = "NS", allow_hyphen_values = true)]
    pub ts_offset: Vec<String>,
    /// The trace clock runs at HZ: timestamps are converted with it.
    #[arg(long = "ts2secs", value_name = "HZ")]
    pub ts2secs: Vec<String>,
    /// Show the time since the previous event after each timestamp.
    #[arg(long = "ts-diff")]
    pub ts_diff: bool,
    /// List the events stored in the file (system:name).
    #[arg(short = 'E')]
    pub event_list: bool,
    /// Print the stored event formats (trace-cmd report --events).
    #[arg(long = "events")]
    pub events: bool,
    /// Print the stored printk formats.
    #[arg(short = 'P')]
    pub printk: bool,
    /// Print the stored kernel symbols.
    #[arg(short = 'f')]
    pub funcs: bool,
    /// Exit with 22 (EINVAL) if a stored event format cannot be read.
    #[arg(long = "check-events")]
    pub check_events: bool,
}

pub fn run(a: &ReportArgs) -> Result<Outcome> {
    let mut paths = a.traces.clone();
    if let Some(i) = &a.input {
        paths.insert(0, i.clone());
    }
    if paths.len() > 1 {
        bail!("reading several traces at once is not supported yet");
    }
    let path = &paths[0];
    match sniff(path)? {
        Kind::TraceDat => report_tracedat(path, a),
        k => bail!(
            "{}: {} traces are not supported yet",
            path.display(),
            k.name()
        ),
    }
}

/// The `cpus=N` number trace-cmd prints: the largest of the header CPU
/// count, the CPUCOUNT option and the top buffer's CPU ids.
pub fn tracecmd_cpus(t: &TraceDat<'_>) -> u32 {
    let top = t
        .buffers
        .iter()
        .find(|b| b.name.is_empty())
        .map_or(0, |b| b.cpus.iter().map(|c| c.cpu + 1).max().unwrap_or(0));
    let count = t
        .options_with(OptionId::CPUCOUNT)
        .filter_map(|o| o.u32_at(0, t.endian))
        .max()
        .unwrap_or(0);
    t.cpus.max(top).max(count)
}

/// Whether trace-cmd shows `secs.usecs` for this file (else raw clock values).
pub fn tracecmd_usecs(t: &TraceDat<'_>) -> bool {
    if t.options_with(OptionId::TSC2NSEC).next().is_some() {
        return true;
    }
    match t.trace_clock() {
        None => true,
        Some(c) => {
            matches!(
                c.as_str(),
                "local" | "global" | "uptime" | "perf" | "tai" | "tsc2nsec"
            ) || c.starts_with("mono")
        }
    }
}

fn report_tracedat(path: &Path, a: &ReportArgs) -> Result<Outcome> {
    let data = map(path)?;
    let t = TraceDat::parse(&data, a.strict)
        .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e))?;
    let mut out = Out::new();
    let cpus = tracecmd_cpus(&t);
    if t.kind == DataKind::Latency && !(a.cpus || a.first_event || a.last_event || a.json) {
        // A latency trace is text: trace-cmd prints it whatever the mode.
        let o = out.buf();
        o.extend_from_slice(format!("cpus={cpus}\n").as_bytes());
        let text: &[u8] = t.latency_text.as_deref().unwrap_or(&[]);
        // trace-cmd 3.1.6 reads a v6 latency file with a TRACECLOCK option
        // as if a clock trailer (u64 size + text) came first, and so loses
        // the first 8 bytes of the text; we print what it prints.
        let quirk = t.version == 6 && t.options_with(OptionId::TRACECLOCK).next().is_some();
        o.extend_from_slice(if quirk {
            text.get(8..).unwrap_or(&[])
        } else {
            text
        });
        o.push(b'\n');
        out.flush()?;
        return Ok(damage_outcome(path, &t.damage));
    }
    if a.tracer_version || a.uname || a.stat {
        let o = out.buf();
        o.extend_from_slice(format!("cpus={cpus}\n").as_bytes());
        if a.tracer_version {
            match t.option_text(OptionId::VERSION) {
                Some(v) => o.extend_from_slice(format!("{v}\n").as_bytes()),
                None => o.extend_from_slice(b" version was not recorded in this file\n"),
            }
        } else if a.uname {
            match t.option_text(OptionId::UNAME) {
                Some(v) => o.extend_from_slice(format!("{v}\n").as_bytes()),
                None => o.extend_from_slice(b" uname was not recorded in this file\n"),
            }
            match t.option_text(OptionId::VERSION) {
                Some(v) => o.extend_from_slice(format!("{v}\n").as_bytes()),
                None => o.extend_from_slice(b" version was not recorded in this file\n"),
            }
        } else {
            write_stat(o, &t)?;
        }
        out.flush()?;
        return Ok(damage_outcome(path, &t.damage));
    }
    let opts = ReadOptions {
        strict: a.strict,
        raw_ts: a.raw_ts,
        no_date: a.nodate,
        ts_offset: 0,
    };
    let mut reader =
        Reader::new(&t, &opts).map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e))?;
    let time = if a.raw_ts || !tracecmd_usecs(&t) {
        TimeFormat::Raw
    } else if a.nsecs {
        TimeFormat::Nsecs
    } else {
        TimeFormat::Usecs
    };
    let mut damaged = false;
    if a.cpus || a.first_event || a.last_event {
        return report_cpus(path, &mut reader, &mut out, time, a);
    }
    let mut printer = TraceCmdPrinter::new(reader.meta(), time);
    if a.latency {
        printer.set_latency(reader.meta(), true);
    }
    if !a.json {
        out.buf()
            .extend_from_slice(format!("cpus={cpus}\n").as_bytes());
    }
    // The meta is cloned out so records can borrow the reader mutably.
    let meta: TraceMeta = reader.meta().clone();
    let mut releaser = Releaser::default();
    let mut n: u64 = 0;
    // an event whose printer looks at the next record, copied out of the reader
    let mut held: Vec<u8> = Vec::new();
    let mut lookahead: Vec<bool> = Vec::new();
    for c in meta.classes.iter() {
        let id = c.id as usize;
        let wants = meta
            .classes
            .get(c.id)
            .and_then(|c| c.printer.as_ref())
            .is_some_and(|p| p.wants_next());
        if wants && id < 1 << 20 {
            if lookahead.len() <= id {
                lookahead.resize(id + 1, false);
            }
            lookahead[id] = true;
        }
    }
    loop {
        n += 1;
        if n % 65536 == 0 {
            releaser.release(&data, &reader.consumed());
        }
        let rec = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                out.flush()?;
                bail!("{}: {}", path.display(), e);
            }
        };
        match rec {
            Record::Event(ev) => {
                if a.json {
                    tracemux_render::jsonl::write_event(out.buf(), &meta, &ev);
                } else if a.raw {
                    printer.write_raw(out.buf(), &meta, &ev, ev.ext);
                } else if !lookahead.get(ev.type_id as usize).copied().unwrap_or(false) {
                    printer.write_pretty(out.buf(), &meta, &ev, None);
                } else {
                    // (function graph entries: trace-cmd looks at the next
                    // record of the buffer to print leaf functions on one line)
                    held.clear();
                    let keep = ev.ext.len().min(ev.data.len() + 256);
                    held.extend_from_slice(&ev.ext[..keep]);
                    let (len, stream, type_id) = (ev.data.len(), ev.stream, ev.type_id);
                    let copy = tracemux_core::model::Event {
                        class: meta.classes.get(type_id),
                        data: &held[..len],
                        ext: &held,
                        ..ev
                    };
                    let next = reader.peek_same_buffer(stream);
                    if printer.write_pretty(out.buf(), &meta, &copy, next) {
                        reader.consume_peeked();
                    }
                }
            }
            Record::Lost(l) => {
                if a.json {
                    tracemux_render::jsonl::write_lost(out.buf(), &meta, &l);
                } else {
                    printer.write_lost(out.buf(), &meta, &l);
                }
            }
            Record::Damage(e) => {
                out.flush()?;
                warn(path, &e);
                damaged = true;
            }
        }
        out.maybe_flush()?;
    }
    out.flush()?;
    Ok(if damaged {
        Outcome::Damaged
    } else {
        Outcome::Ok
    })
}

fn damage_outcome(path: &Path, d: &[tracemux_core::Error]) -> Outcome {
    for e in d {
        warn(path, e);
    }
    if d.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Damaged
    }
}

fn write_stat(o: &mut Vec<u8>, t: &TraceDat<'_>) -> Result<()> {
    o.extend_from_slice(b"\nKernel buffer statistics:\n  Note: \"entries\" are the entries left in the kernel ring buffer and are not\n        recorded in the trace data. They should all be zero.\n\n");
    let mut any = false;
    for opt in t.options_with(OptionId::CPUSTAT) {
        any = true;
        let d = &opt.data;
        if d.is_empty() {
            continue;
        }
        // the last byte (the NUL) becomes a newline
        o.extend_from_slice(&d[..d.len() - 1]);
        o.push(b'\n');
    }
    if any {
        o.push(b'\n');
    } else {
        o.extend_from_slice(b" No stats in this file\n");
    }
    // Per-CPU data location of the top buffer; compressed files show the
    // offsets the data would have once decompressed, as trace-cmd does.
    if let Some(b) = t.buffers.iter().find(|b| b.name.is_empty()) {
        let ps = b.page_size.max(1) as u64;
        let mut next = ps;
        for c in &b.cpus {
            let (off, size) = if b.compressed && c.size > 0 {
                let size = uncompressed_size(t, c.offset, c.size);
                let off = next;
                next = (next + size).div_ceil(ps) * ps;
                (off, size)
            } else {
                (c.offset, c.size)
            };
            o.extend_from_slice(
                format!(
                    "CPU{} data recorded at offset=0x{:x}\n    {} bytes in size\n",
                    c.cpu, off, size
                )
                .as_bytes(),
            );
        }
    }
    Ok(())
}

/// Sum of the uncompressed sizes of a CPU's chunks.
fn uncompressed_size(t: &TraceDat<'_>, offset: u64, size: u64) -> u64 {
    let start = offset as usize;
    let end = start.saturating_add(size as usize).min(t.data.len());
    let Some(region) = t.data.get(start..end) else {
        return 0;
    };
    let mut c = tracemux_core::Cursor::new(region, t.endian, "flyrecord chunks");
    let Ok(count) = c.u32() else { return 0 };
    let mut total = 0u64;
    for _ in 0..count {
        let (Ok(cs), Ok(us)) = (c.u32(), c.u32()) else {
            break;
        };
        total += us as u64;
        if c.skip(cs as usize).is_err() {
            break;
        }
    }
    total
}

fn report_cpus(
    path: &Path,
    reader: &mut Reader<'_>,
    out: &mut Out,
    time: TimeFormat,
    a: &ReportArgs,
) -> Result<Outcome> {
    let meta = reader.meta().clone();
    let ncpu = meta
        .cpus
        .max(meta.streams.iter().map(|s| s.cpu + 1).max().unwrap_or(0)) as usize;
    let mut first: Vec<Option<u64>> = vec![None; ncpu];
    let mut last: Vec<Option<u64>> = vec![None; ncpu];
    let mut damaged = false;
    loop {
        match reader.next_record() {
            Ok(Some(Record::Event(ev))) => {
                // top buffer only
                let top = meta
                    .streams
                    .get(ev.stream as usize)
                    .and_then(|s| meta.buffers.get(s.buffer as usize))
                    .is_some_and(|b| b.name.is_empty());
                if top && (ev.cpu as usize) < ncpu {
                    let c = ev.cpu as usize;
                    first[c].get_or_insert(ev.ts);
                    last[c] = Some(ev.ts);
                }
            }
            Ok(Some(Record::Lost(_))) => {}
            Ok(Some(Record::Damage(e))) => {
                warn(path, &e);
                damaged = true;
            }
            Ok(None) => break,
            Err(e) => bail!("{}: {}", path.display(), e),
        }
    }
    let p = TraceCmdPrinter::new(&meta, time);
    let o = out.buf();
    o.extend_from_slice(format!("List of CPUs in {} with data:\n", path.display()).as_bytes());
    for c in 0..ncpu {
        let Some(f) = first[c] else { continue };
        o.extend_from_slice(format!("  {c}").as_bytes());
        let ts = |o: &mut Vec<u8>, label: &[u8], v: u64| {
            o.extend_from_slice(label);
            let mut tmp = Vec::new();
            p.write_time(&mut tmp, v);
            // no leading space, no colon
            let s = if tmp.first() == Some(&b' ') {
                &tmp[1..]
            } else {
                &tmp[..]
            };
            o.extend_from_slice(&s[..s.len() - 1]);
        };
        if a.first_event {
            ts(o, b"\tFirst event:", f);
        }
        if a.last_event {
            ts(o, b"\tLast event:", last[c].unwrap_or(f));
        }
        o.push(b'\n');
    }
    out.flush()?;
    Ok(if damaged {
        Outcome::Damaged
    } else {
        Outcome::Ok
    })
}
