//! `report` and `info`: LTT events printed in the babeltrace2 text style,
//! and a summary of the trace.
//!
//! No tool prints LTT traces any more; the lines follow what `babeltrace2`
//! prints for a CTF trace (LTTng's later format), with the choices below.
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
use tracemux_core::model::Value;

use crate::format::{Base, FieldError, FieldKind};
use crate::header::TraceHeader;
use crate::markers::type_key;
use crate::trace::{EventRef, Loader, LostRef, Merged, OpenOptions, Trace};
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

/// Print every event of the LTT trace `dir` to `out` in time order,
/// warnings to `warn`.
pub fn report(
    dir: &Path,
    opts: &ReportOptions<'_>,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> Result<ReportStats> {
    let trace = Trace::open(
        dir,
        &OpenOptions {
            strict: opts.strict,
            loader: opts.loader,
        },
    )?;
    report_trace(&trace, opts, out, warn)
}

/// [`report`] on an opened trace.
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
    let mut p = Printer::new(trace, opts);
    let mut events = trace.events();
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    while let Some(m) = events.next_merged()? {
        match m {
            Merged::Event(ev) => {
                if let Err(e) = p.event(&mut buf, &ev) {
                    if opts.strict {
                        return Err(e);
                    }
                    writeln!(warn, "warning: {e}").map_err(io)?;
                    stats.warnings += 1;
                }
                stats.events += 1;
                if buf.len() >= 1 << 16 {
                    out.write_all(&buf).map_err(io)?;
                    buf.clear();
                }
            }
            Merged::Lost(l) => {
                let mut line = Vec::new();
                p.lost(&mut line, &l);
                warn.write_all(&line).map_err(io)?;
                stats.lost += 1;
            }
            Merged::Damage(e) => {
                writeln!(warn, "warning: {e}").map_err(io)?;
                stats.warnings += 1;
            }
        }
    }
    out.write_all(&buf).map_err(io)?;
    out.flush().map_err(io)?;
    Ok(stats)
}

/// Formats events as lines.
pub struct Printer<'t> {
    trace: &'t Trace,
    clock_seconds: bool,
    clock_cycles: bool,
    clock_date: bool,
    no_delta: bool,
    last_ns: Option<u64>,
    last_tsc: Option<u64>,
    /// Types whose payload did not decode, already reported.
    bad_seen: Vec<bool>,
}

impl<'t> Printer<'t> {
    pub fn new(trace: &'t Trace, opts: &ReportOptions<'_>) -> Self {
        Printer {
            trace,
            clock_seconds: opts.clock_seconds,
            clock_cycles: opts.clock_cycles,
            clock_date: opts.clock_date,
            no_delta: opts.no_delta,
            last_ns: None,
            last_tsc: None,
            bad_seen: vec![false; 1 << 16],
        }
    }

    fn time(&self, out: &mut Vec<u8>, ns: u64, tsc: u64) {
        if self.clock_cycles {
            let _ = write!(out, "{tsc:020}");
        } else {
            write_time(out, ns, self.clock_seconds, self.clock_date);
        }
    }

    /// Append the line of `ev` to `out`. When its payload does not match
    /// its format the line shows the raw bytes and the error is returned
    /// (once per event type) for the caller to report.
    pub fn event(&mut self, out: &mut Vec<u8>, ev: &EventRef<'_>) -> Result<()> {
        let raw = &ev.raw;
        out.push(b'[');
        self.time(out, ev.ns, raw.tsc);
        out.extend_from_slice(b"] ");
        if !self.no_delta {
            out.push(b'(');
            if self.clock_cycles {
                match self.last_tsc {
                    Some(l) => {
                        let _ = write!(out, "+{:012}", raw.tsc.wrapping_sub(l));
                    }
                    None => out.extend_from_slice(b"+????????????"),
                }
            } else {
                match self.last_ns {
                    Some(l) => {
                        let d = ev.ns.wrapping_sub(l);
                        out.push(b'+');
                        push_uint(out, d / 1_000_000_000);
                        out.push(b'.');
                        push_padded(out, d % 1_000_000_000, 9);
                    }
                    None => out.extend_from_slice(b"+?.?????????"),
                }
            }
            out.extend_from_slice(b") ");
        }
        self.last_ns = Some(ev.ns);
        self.last_tsc = Some(raw.tsc);
        let reg = self.trace.registry();
        let ty = reg.get(raw.facility, raw.event);
        match ty {
            Some(t) => out.extend_from_slice(t.full_name.as_bytes()),
            None => {
                match reg.facility_name(raw.facility) {
                    Some(f) => out.extend_from_slice(f.as_bytes()),
                    None => {
                        out.extend_from_slice(b"facility_");
                        push_uint(out, raw.facility as u64);
                    }
                }
                out.extend_from_slice(b":event_");
                push_uint(out, raw.event as u64);
            }
        }
        out.extend_from_slice(b": { cpu_id = ");
        let f = &self.trace.files()[ev.file as usize];
        push_uint(out, f.cpu as u64);
        out.extend_from_slice(b" }");
        let endian = f
            .layout
            .as_ref()
            .map(|l| l.header.endian)
            .unwrap_or(tracemux_core::Endian::Little);
        let Some(t) = ty else {
            write_raw(out, raw.payload);
            out.push(b'\n');
            return Ok(());
        };
        let mark = out.len();
        let problem = match t.decode(raw.payload, endian) {
            Some(it) => {
                let mut first = true;
                let mut err = None;
                for r in it {
                    match r {
                        Ok((spec, v)) => {
                            out.extend_from_slice(if first { b", { " } else { b", " });
                            first = false;
                            out.extend_from_slice(spec.name.as_bytes());
                            out.extend_from_slice(b" = ");
                            write_value(out, spec.kind, spec.base, spec.size, v);
                        }
                        Err(e) => {
                            err = Some(e);
                            break;
                        }
                    }
                }
                if err.is_none() && !first {
                    out.extend_from_slice(b" }");
                }
                err.map(|e: FieldError| e.to_string())
            }
            None => Some(format!(
                "format unusable: {}",
                t.fields.as_ref().err().map_or("", |m| m.as_str())
            )),
        };
        let Some(msg) = problem else {
            out.push(b'\n');
            return Ok(());
        };
        out.truncate(mark);
        write_raw(out, raw.payload);
        out.push(b'\n');
        let k = type_key(raw.facility, raw.event) as usize;
        let reported = std::mem::replace(&mut self.bad_seen[k], true);
        if reported && !self.trace.strict() {
            return Ok(());
        }
        Err(Error::invalid(
            format!(
                "{} event of {} bytes does not match its format ({msg}); shown as raw bytes",
                t.full_name, raw.size
            ),
            format!("{}: block {} event", f.name, raw.block),
            raw.offset,
        ))
    }

    /// Append the warning line for data a flight-recorder tracefile lost.
    pub fn lost(&self, out: &mut Vec<u8>, l: &LostRef) {
        let f = &self.trace.files()[l.file as usize];
        out.extend_from_slice(b"WARNING: Tracer may have discarded events between [");
        write_time(out, l.from_ns, self.clock_seconds, self.clock_date);
        out.extend_from_slice(b"] and [");
        write_time(out, l.to_ns, self.clock_seconds, self.clock_date);
        let _ = writeln!(
            out,
            "] in tracefile \"{}\" (flight recorder mode: its first block starts after the trace start).",
            f.name
        );
    }
}

fn write_raw(out: &mut Vec<u8>, payload: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b", { _size = ");
    push_uint(out, payload.len() as u64);
    out.extend_from_slice(b", _raw = \"");
    for &b in payload {
        out.push(HEX[(b >> 4) as usize]);
        out.push(HEX[(b & 15) as usize]);
    }
    out.extend_from_slice(b"\" }");
}

fn push_uint(out: &mut Vec<u8>, v: u64) {
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(v).as_bytes());
}

fn push_padded(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut b = itoa::Buffer::new();
    let s = b.format(v);
    for _ in s.len()..width {
        out.push(b'0');
    }
    out.extend_from_slice(s.as_bytes());
}

/// A field value in babeltrace2's notation.
fn write_value(out: &mut Vec<u8>, kind: FieldKind, base: Base, size: u8, v: Value<'_>) {
    let bits = size as u32 * 8;
    let masked = |u: u64| {
        if bits >= 64 || bits == 0 {
            u
        } else {
            u & ((1u64 << bits) - 1)
        }
    };
    match (v, base) {
        (Value::Str(s), _) => write_string(out, s),
        (Value::Unsigned(u), Base::Hex) => {
            let _ = write!(out, "0x{:X}", masked(u));
        }
        (Value::Signed(i), Base::Hex) => {
            let _ = write!(out, "0x{:X}", masked(i as u64));
        }
        (Value::Unsigned(u), Base::Octal) => {
            let _ = write!(out, "0{:o}", masked(u));
        }
        (Value::Signed(i), Base::Octal) => {
            let _ = write!(out, "0{:o}", masked(i as u64));
        }
        (Value::Unsigned(u), Base::Decimal) => push_uint(out, u),
        (Value::Signed(i), Base::Decimal) => {
            let mut b = itoa::Buffer::new();
            out.extend_from_slice(b.format(i).as_bytes());
        }
        _ => {
            let _ = kind;
            out.extend_from_slice(b"?");
        }
    }
}

/// A string quoted and escaped as babeltrace2 does: `\\ \' \" \?`, the C
/// escapes of control characters, `\xNN` for the other ones; other bytes
/// as they are.
pub fn write_string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &c in s {
        match c {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\'' => out.extend_from_slice(b"\\'"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'?' => out.extend_from_slice(b"\\?"),
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x1b => out.extend_from_slice(b"\\e"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x0b => out.extend_from_slice(b"\\v"),
            0..=0x1f | 0x7f => {
                let _ = write!(out, "\\x{c:02x}");
            }
            _ => out.push(c),
        }
    }
    out.push(b'"');
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// A time in ns since the epoch, as babeltrace2 prints it (UTC).
pub fn write_time(out: &mut Vec<u8>, ns: u64, seconds: bool, date: bool) {
    let s = ns / 1_000_000_000;
    let frac = ns % 1_000_000_000;
    if seconds {
        push_uint(out, s);
    } else {
        if date {
            let (y, m, d) = civil((s / 86_400) as i64);
            let _ = write!(out, "{y:04}-{m:02}-{d:02} ");
        }
        let tod = s % 86_400;
        push_padded(out, tod / 3600, 2);
        out.push(b':');
        push_padded(out, tod / 60 % 60, 2);
        out.push(b':');
        push_padded(out, tod % 60, 2);
    }
    out.push(b'.');
    push_padded(out, frac, 9);
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
    pub events: u64,
    /// Sum of `lost_size` (padding at the end of the blocks).
    pub padding: u64,
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
    /// Flight recorder: the first block starts after the trace start.
    pub lost_before_ns: Option<u64>,
    pub damage: u64,
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
                        fs.first_ns.get_or_insert(ns);
                        fs.last_ns = Some(ns);
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
    let trace = Trace::open(
        dir,
        &OpenOptions {
            strict: opts.strict,
            loader: opts.loader,
        },
    )?;
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
        Some(ns) => write_time(out, ns, false, true),
        None => out.push(b'-'),
    }
}

/// The text of `info`.
pub fn write_summary(o: &mut Vec<u8>, s: &Summary, path: &str) {
    let _ = writeln!(o, "Trace: {path}");
    let _ = writeln!(o, "Format: legacy LTT (LTTng 0.x, 2008 trace format)");
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
        write_time(o, h.start_time_ns(), false, true);
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
        opt_time(o, f.first_ns);
        o.extend_from_slice(b", last ");
        opt_time(o, f.last_ns);
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
                write_time(o, ns, false, true);
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
        write_time(&mut o, 1_213_000_000_000_000_123, false, true);
        assert_eq!(o, b"2008-06-09 08:26:40.000000123");
        o.clear();
        write_time(&mut o, 5_000_000_001, true, false);
        assert_eq!(o, b"5.000000001");
        o.clear();
        write_time(&mut o, 86_399_999_999_999, false, false);
        assert_eq!(o, b"23:59:59.999999999");
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(11_016), (2000, 2, 29));
        assert_eq!(civil(11_017), (2000, 3, 1));
        assert_eq!(civil(-1), (1969, 12, 31));
    }

    #[test]
    fn escapes_like_babeltrace() {
        let mut o = Vec::new();
        write_string(&mut o, b"a\"b\\c?\t\x01\xc3\xa9");
        assert_eq!(o, b"\"a\\\"b\\\\c\\?\\t\\x01\xc3\xa9\"");
    }

    #[test]
    fn values() {
        let mut o = Vec::new();
        write_value(&mut o, FieldKind::Signed, Base::Hex, 2, Value::Signed(-1));
        o.push(b' ');
        write_value(
            &mut o,
            FieldKind::Unsigned,
            Base::Octal,
            4,
            Value::Unsigned(8),
        );
        o.push(b' ');
        write_value(
            &mut o,
            FieldKind::Signed,
            Base::Decimal,
            4,
            Value::Signed(-7),
        );
        assert_eq!(o, b"0xFFFF 010 -7");
    }
}
