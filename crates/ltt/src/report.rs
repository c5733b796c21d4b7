//! `report` and `info`: LTT events printed in the babeltrace2 text style,
//! and a summary of the trace.
//!
//! No tool prints LTT traces any more; the lines follow what `babeltrace2`
//! prints for a CTF trace (LTTng's later format), with the choices below.
//! They are printed by the shared printer
//! ([`tracemux_render::babeltrace::BabeltracePrinter`], set up by
//! [`printer`]) over the events of the common model ([`LttSource`]); this
//! module only drives it and writes the warnings.
//!
//! ```text
//! [08:26:40.000001000] (+0.000001000) fs:open: { cpu_id = 1 }, { fd = 3, name = "/etc/passwd" }
//! ```
//!
//! - The time is the event's time of day in UTC (babeltrace2 with
//!   `--clock-gmt`; its default is the local time zone), `--clock-date`
//!   adds the date, `--clock-seconds` prints seconds since the epoch,
//!   `--clock-cycles` the 64-bit cycle count (20 digits, delta 12 digits).
//! - The delta is the time since the previous printed event, `+?.?????????`
//!   for the first.
//! - The name is `facility:event` as the facilities tracefiles name them.
//! - `{ cpu_id = N }` is the N of the tracefile name (`cpu_N`, and also the
//!   per-CPU control files such as `control/processes_N`), where babeltrace2
//!   prints the LTTng packet context's `cpu_id`.
//! - The fields are the marker format's, in order, named as in the format
//!   string; integers in decimal, `%x`/`%p` as `0x` + upper-case hex, `%o`
//!   as `0` + octal (babeltrace2's display bases); strings quoted and
//!   escaped as babeltrace2 escapes them. An event with no fields has no
//!   field braces.
//! - An event whose type is unknown, or whose payload does not match its
//!   format, is printed as `{ _size = N, _raw = "0a1b..." }`: its size and
//!   its payload bytes in hex. A warning names the file and offset.
//! - Ties in time go to the control tracefiles, then CPUs by number, then
//!   file order.
//!
//! Warnings go to the `warn` writer: damage (`warning: ... at offset ...`)
//! and, for a flight-recorder tracefile whose first block starts after the
//! trace start, a line in the style of babeltrace2's discarded-events
//! warning.

use std::io::Write;
use std::path::Path;

use tracemux_core::error::{Error, ErrorKind, Result};
use tracemux_core::model::{Lost, Record, RecordSource};
use tracemux_core::Endian;
use tracemux_render::babeltrace::{clock_time, BabeltracePrinter};

use crate::format::FieldError;
use crate::header::TraceHeader;
use crate::markers::{type_key, EventType};
use crate::source::LttSource;
use crate::trace::{Loader, OpenOptions, Trace};
use crate::tracefile::Item;

/// How `report` prints (babeltrace2's everyday flags).
#[derive(Clone, Copy, Default)]
pub struct ReportOptions<'l> {
    /// Damage and unknown event types are errors.
    pub strict: bool,
    /// `[seconds.nanoseconds]` since the epoch (`--clock-seconds`).
    pub clock_seconds: bool,
    /// Cycle counts instead of times (`--clock-cycles`).
    pub clock_cycles: bool,
    /// The date before the time of day (`--clock-date`).
    pub clock_date: bool,
    /// No `(+delta)` (`--no-delta`).
    pub no_delta: bool,
    /// How files are loaded (memory map in the CLI).
    pub loader: Option<Loader<'l>>,
}

/// What `report` did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReportStats {
    pub events: u64,
    /// Damage, unknown event types and payloads that do not match their
    /// format, reported to `warn`.
    pub warnings: u64,
    /// Flight-recorder tracefiles that lost their first blocks (also
    /// reported to `warn`; not damage).
    pub lost: u64,
}

fn io(e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io(e.to_string()), "output", 0)
}

/// The LTT trace `dir`, opened as `opts` say.
fn open(dir: &Path, opts: &ReportOptions<'_>) -> Result<Trace> {
    Trace::open(
        dir,
        &OpenOptions {
            strict: opts.strict,
            loader: opts.loader,
        },
    )
}

/// Print every event of the LTT trace `dir` to `out` in time order,
/// warnings to `warn`.
pub fn report(
    dir: &Path,
    opts: &ReportOptions<'_>,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> Result<ReportStats> {
    let trace = open(dir, opts)?;
    report_trace(&trace, opts, out, warn)
}

/// [`report`] on an opened trace: its events through the model
/// ([`LttSource`]) and the shared babeltrace2-style printer
/// ([`BabeltracePrinter`]).
pub fn report_trace(
    trace: &Trace,
    opts: &ReportOptions<'_>,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> Result<ReportStats> {
    let mut stats = ReportStats::default();
    for p in trace.problems() {
        writeln!(warn, "warning: {p}").map_err(io)?;
        stats.warnings += 1;
    }
    let mut src = LttSource::new(trace);
    // (the records borrow the source, so its description is copied once)
    let meta = src.meta().clone();
    let mut p = printer(opts);
    let reg = trace.registry();
    // types whose payload did not decode, already reported
    let mut bad_seen = vec![false; 1 << 16];
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut name = Vec::new();
    loop {
        let mut bad = None;
        match src.next_record()? {
            None => break,
            Some(Record::Event(ev)) => {
                stats.events += 1;
                let (fid, eid) = ((ev.type_id >> 8) as u8, ev.type_id as u8);
                match reg.get(fid, eid) {
                    None => {
                        name.clear();
                        match reg.facility_name(fid) {
                            Some(f) => name.extend_from_slice(f.as_bytes()),
                            None => {
                                let _ = write!(name, "facility_{fid}");
                            }
                        }
                        let _ = write!(name, ":event_{eid}");
                        p.write_raw_event(&mut buf, &meta, &ev, Some(&name));
                    }
                    Some(t) => match payload_problem(t, ev.data, ev.endian) {
                        None => p.write_event(&mut buf, &meta, &ev),
                        Some(msg) => {
                            p.write_raw_event(&mut buf, &meta, &ev, None);
                            let k = type_key(fid, eid) as usize;
                            let reported = std::mem::replace(&mut bad_seen[k], true);
                            if !reported || trace.strict() {
                                bad = Some((t, msg));
                            }
                        }
                    },
                }
            }
            Some(Record::Lost(l)) => {
                let mut line = Vec::new();
                lost(&mut line, trace, &l, opts);
                warn.write_all(&line).map_err(io)?;
                stats.lost += 1;
                continue;
            }
            Some(Record::Damage(e)) => {
                writeln!(warn, "warning: {e}").map_err(io)?;
                stats.warnings += 1;
                continue;
            }
        }
        if let (Some((t, msg)), Some(at)) = (bad, src.last_event_place()) {
            let f = &trace.files()[at.file as usize];
            let e = Error::invalid(
                format!(
                    "{} event of {} bytes does not match its format ({msg}); shown as raw bytes",
                    t.full_name, at.size
                ),
                format!("{}: block {} event", f.name, at.block),
                at.offset,
            );
            if opts.strict {
                return Err(e);
            }
            writeln!(warn, "warning: {e}").map_err(io)?;
            stats.warnings += 1;
        }
        if buf.len() >= 1 << 16 {
            out.write_all(&buf).map_err(io)?;
            buf.clear();
        }
    }
    out.write_all(&buf).map_err(io)?;
    out.flush().map_err(io)?;
    Ok(stats)
}

/// The shared printer set up as `report` prints LTT events: the clock
/// options, times as read (no CTF stream to keep monotonic), no payload
/// block for an event without fields, field names as the format names
/// them.
pub fn printer(opts: &ReportOptions<'_>) -> BabeltracePrinter {
    let mut p = BabeltracePrinter::new();
    p.no_delta = opts.no_delta;
    p.clock_seconds = opts.clock_seconds;
    p.clock_cycles = opts.clock_cycles;
    p.clock_date = opts.clock_date;
    p.times_as_given = true;
    p.omit_empty_payload = true;
    p.names_as_given = true;
    p
}

/// Why a payload does not match the format of its type (it is then shown
/// as raw bytes), if it does not.
pub fn payload_problem(t: &EventType, payload: &[u8], endian: Endian) -> Option<String> {
    match t.decode(payload, endian) {
        Some(mut it) => it.find_map(|r| r.err()).map(|e: FieldError| e.to_string()),
        None => Some(format!(
            "format unusable: {}",
            t.fields.as_ref().err().map_or("", |m| m.as_str())
        )),
    }
}

/// The warning line for data a flight-recorder tracefile lost, in the
/// style of babeltrace2's discarded-events warning.
pub fn lost(out: &mut Vec<u8>, trace: &Trace, l: &Lost, opts: &ReportOptions<'_>) {
    let f = &trace.files()[l.stream as usize];
    let from = f.layout.as_ref().map_or(0, |x| x.header.start_time_ns());
    out.extend_from_slice(b"WARNING: Tracer may have discarded events between [");
    clock_time(out, from, opts.clock_seconds, opts.clock_date);
    out.extend_from_slice(b"] and [");
    clock_time(out, l.ts, opts.clock_seconds, opts.clock_date);
    let _ = writeln!(
        out,
        "] in tracefile \"{}\" (flight recorder mode: its first block starts after the trace start).",
        f.name
    );
}

/// The times (ns) of the first and the last event of a tracefile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub first: u64,
    pub last: u64,
}

/// Per-tracefile numbers gathered by [`summarize`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileSummary {
    pub name: String,
    pub cpu: u32,
    pub len: u64,
    pub block_size: u64,
    /// Blocks whose headers are intact.
    pub blocks: u64,
    /// Places that could not be read (lenient mode).
    pub damage: u64,
    pub events: u64,
    /// Sum of `lost_size` (padding at the end of the blocks).
    pub padding: u64,
    /// Flight recorder: the first block starts after the trace start.
    pub lost_before_ns: Option<u64>,
    /// Times of the first and the last event (none: no event).
    pub span_ns: Option<Span>,
}

/// What `info` prints.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub header: Option<TraceHeader>,
    /// The tracefile the header was taken from.
    pub header_file: String,
    pub files: Vec<FileSummary>,
    /// (facility id, name).
    pub facilities: Vec<(u8, String)>,
    /// (`facility:event`, count), in the order of the known types, then
    /// the unknown ones by id.
    pub counts: Vec<(String, u64)>,
    /// Problems (lenient mode), in the order met.
    pub problems: Vec<Error>,
}

/// Read every tracefile once and count.
pub fn summarize(trace: &Trace) -> Result<Summary> {
    let mut counts = vec![0u64; 1 << 16];
    let mut s = Summary {
        header: trace.header().copied(),
        problems: trace.problems().to_vec(),
        ..Summary::default()
    };
    for (i, f) in trace.files().iter().enumerate() {
        let mut fs = FileSummary {
            name: f.name.clone(),
            cpu: f.cpu,
            len: f.len,
            block_size: f.layout.as_ref().map_or(0, |l| l.block_size as u64),
            ..FileSummary::default()
        };
        if s.header_file.is_empty() && f.layout.is_some() {
            s.header_file = f.name.clone();
        }
        if let (Some(mut st), Some(l)) = (trace.stream(i), f.layout.as_ref()) {
            let h = &l.header;
            while let Some(item) = st.next_item()? {
                match item {
                    Item::Block(bh, _, _) => {
                        if fs.blocks == 0
                            && h.flight_recorder != 0
                            && bh.begin.cycle_count > h.start_tsc
                        {
                            fs.lost_before_ns = Some(h.tsc_to_ns(bh.begin.cycle_count));
                        }
                        fs.blocks += 1;
                        fs.padding += bh.lost_size as u64;
                    }
                    Item::Event(ev) => {
                        let ns = h.tsc_to_ns(ev.tsc);
                        fs.span_ns
                            .get_or_insert(Span {
                                first: ns,
                                last: ns,
                            })
                            .last = ns;
                        fs.events += 1;
                        counts[type_key(ev.facility, ev.event) as usize] += 1;
                    }
                    Item::Damage(e) => {
                        fs.damage += 1;
                        s.problems.push(e);
                    }
                }
            }
        }
        s.files.push(fs);
    }
    let reg = trace.registry();
    s.facilities = reg.facilities().map(|(i, n)| (i, n.to_string())).collect();
    for t in reg.types() {
        let k = type_key(t.facility_id, t.event_id) as usize;
        s.counts.push((t.full_name.clone(), counts[k]));
        counts[k] = 0;
    }
    for (k, &n) in counts.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let (fid, eid) = ((k >> 8) as u8, k as u8);
        let fac = reg
            .facility_name(fid)
            .map_or_else(|| format!("facility_{fid}"), str::to_string);
        s.counts.push((format!("{fac}:event_{eid} (unknown)"), n));
    }
    Ok(s)
}

/// Print a summary of the LTT trace `dir`: trace header, tracefiles,
/// facilities, event counts per `facility:event`, lost data.
pub fn info(
    dir: &Path,
    opts: &ReportOptions<'_>,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> Result<Summary> {
    let trace = open(dir, opts)?;
    let s = summarize(&trace)?;
    let mut o = Vec::new();
    write_summary(&mut o, &s, &dir.display().to_string());
    out.write_all(&o).map_err(io)?;
    for p in &s.problems {
        writeln!(warn, "warning: {p}").map_err(io)?;
    }
    Ok(s)
}

fn opt_time(out: &mut Vec<u8>, ns: Option<u64>) {
    match ns {
        Some(ns) => clock_time(out, ns, false, true),
        None => out.push(b'-'),
    }
}

/// The text of `info`.
pub fn write_summary(o: &mut Vec<u8>, s: &Summary, path: &str) {
    // the first lines as `info` prints them for every format
    let _ = writeln!(o, "Trace {path}");
    let version = s
        .header
        .as_ref()
        .map(|h| format!("{}.{}", h.major_version, h.minor_version));
    let format = tracemux_core::model::Format::Ltt.describe(version.as_deref());
    let _ = writeln!(o, "  format                {format}");
    if let Some(h) = &s.header {
        let _ = writeln!(o, "Trace header (from {}):", s.header_file);
        let _ = writeln!(o, "  byte order: {}", h.endian.name());
        let _ = writeln!(
            o,
            "  arch_type: {}  arch_variant: {}  float_word_order: {}",
            h.arch_type, h.arch_variant, h.float_word_order
        );
        let _ = writeln!(o, "  arch_size: {}", h.arch_size);
        let _ = writeln!(o, "  version: {}.{}", h.major_version, h.minor_version);
        let _ = writeln!(o, "  flight_recorder: {}", h.flight_recorder);
        let _ = writeln!(
            o,
            "  has_heartbeat: {} ({}-bit event timestamps)",
            h.has_heartbeat,
            if h.has_heartbeat != 0 { 32 } else { 64 }
        );
        let _ = writeln!(
            o,
            "  alignment: {}{}",
            h.alignment,
            if h.alignment == 0 { " (packed)" } else { "" }
        );
        let _ = writeln!(
            o,
            "  tsc_lsb_truncate: {}  tscbits: {}  compact_data_shift: {}",
            h.tsc_lsb_truncate, h.tscbits, h.compact_data_shift
        );
        let _ = writeln!(o, "  freq_scale: {}", h.freq_scale);
        let _ = writeln!(o, "  start_freq: {}", h.start_freq);
        let _ = writeln!(o, "  start_tsc: {}", h.start_tsc);
        let _ = writeln!(o, "  start_monotonic: {}", h.start_monotonic);
        let _ = write!(
            o,
            "  start_time: {}.{:09} (",
            h.start_time_sec, h.start_time_nsec
        );
        clock_time(o, h.start_time_ns(), false, true);
        let _ = writeln!(o, " UTC)");
    } else {
        let _ = writeln!(o, "Trace header: none readable");
    }
    let _ = writeln!(o, "Tracefiles:");
    for f in &s.files {
        let _ = write!(
            o,
            "  {}: cpu {}, {} bytes, block size {}, {} blocks, {} events, {} bytes of padding (lost_size), first ",
            f.name, f.cpu, f.len, f.block_size, f.blocks, f.events, f.padding
        );
        opt_time(o, f.span_ns.map(|s| s.first));
        o.extend_from_slice(b", last ");
        opt_time(o, f.span_ns.map(|s| s.last));
        if f.damage > 0 {
            let _ = write!(o, ", {} damaged places", f.damage);
        }
        o.push(b'\n');
    }
    let _ = writeln!(o, "Facilities:");
    for (id, n) in &s.facilities {
        let _ = writeln!(o, "  {id}: {n}");
    }
    let _ = writeln!(o, "Events:");
    for (n, c) in &s.counts {
        let _ = writeln!(o, "  {n}: {c}");
    }
    let total: u64 = s.files.iter().map(|f| f.events).sum();
    let _ = writeln!(o, "  total: {total}");
    let _ = writeln!(o, "Lost data:");
    let pad: u64 = s.files.iter().map(|f| f.padding).sum();
    let _ = writeln!(o, "  padding at block ends (lost_size): {pad} bytes");
    let fr = s.header.is_some_and(|h| h.flight_recorder != 0);
    if fr {
        let mut any = false;
        for f in &s.files {
            if let Some(ns) = f.lost_before_ns {
                any = true;
                let _ = write!(o, "  {}: flight recorder: blocks before ", f.name);
                clock_time(o, ns, false, true);
                let _ = writeln!(o, " were overwritten");
            }
        }
        if !any {
            let _ = writeln!(
                o,
                "  flight recorder mode: no tracefile starts after the trace start"
            );
        }
    }
    let damage: u64 = s.files.iter().map(|f| f.damage).sum();
    let _ = writeln!(o, "  damaged places skipped: {damage}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        let mut o = Vec::new();
        clock_time(&mut o, 1_213_000_000_000_000_123, false, true);
        assert_eq!(o, b"2008-06-09 08:26:40.000000123");
        o.clear();
        clock_time(&mut o, 5_000_000_001, true, false);
        assert_eq!(o, b"5.000000001");
        o.clear();
        clock_time(&mut o, 86_399_999_999_999, false, false);
        assert_eq!(o, b"23:59:59.999999999");
        o.clear();
        clock_time(&mut o, 951_782_400_000_000_000, false, true);
        assert_eq!(o, b"2000-02-29 00:00:00.000000000");
    }
}
