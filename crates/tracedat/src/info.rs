//! What a trace.dat says about itself (`tracemux info`'s layout, our
//! own): the container, its buffers, options, sections and metadata, then
//! what reading every event finds.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::file::SECTION_COMPRESSED;
use crate::inspect::{cpu_chunks, section_block_sizes, section_name};
use crate::options::describe;
use crate::reader::{ReadOptions, Reader};
use crate::tracecmd::{tracecmd_cpus, tracecmd_usecs};
use crate::{DataKind, OptionId, TraceDat};
use tracemux_core::model::{Format, Record, RecordSource};
use tracemux_ftrace::format::parse_header_page;

/// Width of the key column of `key  value` lines.
const KEY: usize = 22;

/// Everything `t` (the file at `path`) says about itself, before its
/// events are read.
pub fn container_text(path: &Path, t: &TraceDat<'_>) -> String {
    let mut s = String::new();
    container(&mut s, path, t);
    buffers(&mut s, t);
    options(&mut s, t);
    sections(&mut s, t);
    metadata(&mut s, t);
    s
}

fn kv(s: &mut String, key: &str, value: impl std::fmt::Display) {
    let _ = writeln!(s, "  {key:<KEY$}{value}");
}

/// An aligned table: `right[i]` right-aligns column i.
fn table(s: &mut String, indent: &str, head: &[&str], rows: &[Vec<String>], right: &[bool]) {
    let mut w: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if i < w.len() {
                w[i] = w[i].max(c.chars().count());
            }
        }
    }
    let line = |s: &mut String, cells: &[&str]| {
        let mut l = String::from(indent);
        let last = cells.len().saturating_sub(1);
        for (i, c) in cells.iter().enumerate() {
            let width = w.get(i).copied().unwrap_or(0);
            if right.get(i).copied().unwrap_or(false) {
                let _ = write!(l, "{c:>width$}");
            } else if i != last {
                let _ = write!(l, "{c:<width$}");
            } else {
                l.push_str(c);
            }
            if i != last {
                l.push_str("  ");
            }
        }
        s.push_str(l.trim_end());
        s.push('\n');
    };
    line(s, head);
    for r in rows {
        let cells: Vec<&str> = r.iter().map(|c| c.as_str()).collect();
        line(s, &cells);
    }
}

fn buffer_label(name: &str) -> String {
    if name.is_empty() {
        "\"\" (top)".to_string()
    } else {
        format!("\"{name}\"")
    }
}

fn container(s: &mut String, path: &Path, t: &TraceDat<'_>) {
    let _ = writeln!(s, "Trace {}", path.display());
    let version = t.version.to_string();
    kv(s, "format", Format::TraceDat.describe(Some(&version)));
    kv(s, "file size", format!("{} bytes", t.data.len()));
    kv(s, "endianness", t.endian.name());
    kv(s, "long size", format!("{} bytes", t.long_size));
    kv(s, "page size", format!("{} bytes", t.page_size));
    match &t.compression {
        None => kv(
            s,
            "compression",
            "none (version 6 files are never compressed)",
        ),
        Some((name, ver)) if ver.is_empty() => kv(s, "compression", name),
        Some((name, ver)) => kv(s, "compression", format!("{name} {ver}")),
    }
    if t.version >= 7 {
        kv(
            s,
            "first options",
            format!("section at {}", t.first_options),
        );
    }
    kv(s, "CPUs", tracecmd_cpus(t));
    let shown = if tracecmd_usecs(t) {
        "trace-cmd report shows secs.usecs"
    } else {
        "trace-cmd report shows raw clock values"
    };
    match t.trace_clock() {
        Some(c) => kv(s, "trace clock", format!("{c} ({shown})")),
        None => kv(
            s,
            "trace clock",
            format!("not recorded, local assumed ({shown})"),
        ),
    }
    if let Some(v) = t.option_text(OptionId::VERSION) {
        kv(s, "recorded by", format!("trace-cmd {v}"));
    }
    if let Some(v) = t.option_text(OptionId::UNAME) {
        kv(s, "system", v);
    }
    let kind = match t.kind {
        DataKind::Flyrecord => "flyrecord (ring-buffer pages)",
        DataKind::Latency => "latency (text)",
        DataKind::Unknown => "unknown (the file ends before saying)",
    };
    kv(s, "trace data", kind);
}

fn buffers(s: &mut String, t: &TraceDat<'_>) {
    let _ = writeln!(s, "\nBuffers ({})", t.buffers.len());
    if t.buffers.is_empty() {
        s.push_str("  none\n");
    }
    for b in &t.buffers {
        let kind = if b.latency {
            "latency text"
        } else if b.compressed {
            "compressed chunks"
        } else {
            "raw pages"
        };
        let _ = writeln!(
            s,
            "  {}  clock {}, page size {}, {} CPUs with data, data section at {}, {}",
            buffer_label(&b.name),
            if b.clock.is_empty() { "?" } else { &b.clock },
            b.page_size,
            b.cpus.len(),
            b.offset,
            kind
        );
        if b.cpus.is_empty() {
            continue;
        }
        let mut rows = Vec::new();
        for c in &b.cpus {
            let mut r = vec![c.cpu.to_string(), c.offset.to_string(), c.size.to_string()];
            if b.compressed {
                if c.size == 0 {
                    r.extend(["0".into(), "0".into()]);
                } else {
                    let st = cpu_chunks(t, c);
                    let chunks = if st.complete() {
                        st.chunks.to_string()
                    } else {
                        format!("{} of {}", st.present, st.chunks)
                    };
                    r.extend([chunks, st.uncompressed.to_string()]);
                }
            }
            r.push(format!("{}", c.size.div_ceil(b.page_size.max(1) as u64)));
            if b.compressed {
                // pages are counted in the uncompressed data
                let last = r.len() - 1;
                let unc: u64 = r[last - 1].parse().unwrap_or(0);
                r[last] = unc.div_ceil(b.page_size.max(1) as u64).to_string();
            }
            rows.push(r);
        }
        if b.compressed {
            table(
                s,
                "    ",
                &[
                    "CPU",
                    "offset",
                    "compressed",
                    "chunks",
                    "uncompressed",
                    "pages",
                ],
                &rows,
                &[true, true, true, true, true, true],
            );
        } else {
            table(
                s,
                "    ",
                &["CPU", "offset", "size", "pages"],
                &rows,
                &[true, true, true, true],
            );
        }
    }
    if let Some(text) = &t.latency_text {
        kv(s, "latency text", format!("{} bytes", text.len()));
    }
}

fn options(s: &mut String, t: &TraceDat<'_>) {
    let _ = writeln!(s, "\nOptions ({}, in file order)", t.options.len());
    if t.options.is_empty() {
        s.push_str("  none\n");
        return;
    }
    let compressed_section = |off: u64| {
        t.sections
            .iter()
            .any(|x| x.offset == off && x.flags & SECTION_COMPRESSED != 0)
    };
    let v7 = t.version >= 7;
    let mut rows = Vec::new();
    for o in &t.options {
        let mut r = Vec::new();
        if v7 {
            r.push(o.section.map_or(String::new(), |x| x.to_string()));
        }
        // options of a compressed section are located in its decompressed body
        let off = match o.section {
            Some(sec) if compressed_section(sec) => format!("+{}", o.offset),
            _ => o.offset.to_string(),
        };
        r.push(off);
        r.push(o.id.0.to_string());
        r.push(o.id.name().unwrap_or("(unknown)").to_string());
        r.push(o.data.len().to_string());
        r.push(describe(o, t.endian));
        rows.push(r);
    }
    if v7 {
        table(
            s,
            "  ",
            &["section", "offset", "id", "name", "size", "value"],
            &rows,
            &[true, true, true, false, true, false],
        );
    } else {
        table(
            s,
            "  ",
            &["offset", "id", "name", "size", "value"],
            &rows,
            &[true, true, false, true, false],
        );
    }
}

fn sections(s: &mut String, t: &TraceDat<'_>) {
    if t.version < 7 {
        return;
    }
    let _ = writeln!(s, "\nSections ({})", t.sections.len());
    let mut rows = Vec::new();
    for x in &t.sections {
        let flags = if x.flags & SECTION_COMPRESSED != 0 {
            format!("{:#x} compressed", x.flags)
        } else {
            format!("{:#x}", x.flags)
        };
        let size = match section_block_sizes(t, x) {
            Some((_, us)) => format!("{} ({} uncompressed)", x.size, us),
            None => x.size.to_string(),
        };
        rows.push(vec![
            x.offset.to_string(),
            x.id.to_string(),
            section_name(x.id).to_string(),
            format!("\"{}\"", x.desc),
            flags,
            size,
        ]);
    }
    table(
        s,
        "  ",
        &["offset", "id", "section", "description", "flags", "size"],
        &rows,
        &[true, true, false, false, false, false],
    );
}

fn metadata(s: &mut String, t: &TraceDat<'_>) {
    s.push_str("\nMetadata\n");
    let hp = parse_header_page(&String::from_utf8_lossy(&t.header_page), t.long_size);
    kv(
        s,
        "header page",
        format!(
            "{} bytes of text: commit field of {} bytes, so a {}-byte page header (data at offset {})",
            t.header_page.len(),
            hp.commit_size,
            8 + hp.commit_size,
            hp.data_offset
        ),
    );
    kv(
        s,
        "header event",
        format!("{} bytes of text", t.header_event.len()),
    );
    kv(s, "ftrace formats", t.ftrace_formats.len());
    let formats: usize = t.systems.iter().map(|(_, f)| f.len()).sum();
    kv(
        s,
        "event systems",
        format!("{} ({} formats)", t.systems.len(), formats),
    );
    let rows: Vec<Vec<String>> = t
        .systems
        .iter()
        .map(|(n, f)| vec![n.clone(), f.len().to_string()])
        .collect();
    if !rows.is_empty() {
        table(s, "    ", &["system", "formats"], &rows, &[false, true]);
    }
    let lines = |b: &[u8]| b.split(|&c| c == b'\n').filter(|l| !l.is_empty()).count();
    kv(
        s,
        "kallsyms",
        format!("{} bytes, {} symbols", t.kallsyms.len(), lines(&t.kallsyms)),
    );
    kv(
        s,
        "printk formats",
        format!("{} bytes, {} formats", t.printk.len(), lines(&t.printk)),
    );
    kv(
        s,
        "saved cmdlines",
        format!("{} bytes, {} tasks", t.cmdlines.len(), lines(&t.cmdlines)),
    );
}

#[derive(Default, Clone, Copy)]
struct Span {
    events: u64,
    first: Option<u64>,
    last: u64,
}

impl Span {
    fn add(&mut self, ts: u64) {
        self.events += 1;
        self.first.get_or_insert(ts);
        self.last = self.last.max(ts);
    }
}

fn fmt_ts(ts: Option<u64>, usecs: bool) -> String {
    match ts {
        None => "-".into(),
        Some(ts) if usecs => format!("{}.{:09}", ts / 1_000_000_000, ts % 1_000_000_000),
        Some(ts) => ts.to_string(),
    }
}

/// Told the file ranges a reader is done with, one per stream.
pub type Release<'r> = dyn FnMut(&[(u64, u64)]) + 'r;

/// Read every event of `t` and write their statistics to `s` (counts per
/// buffer and CPU and per event, time range, lost events); the damage
/// found is returned. `release` is told, now and then, the file ranges
/// the reader is done with (see [`Reader::consumed`]).
pub fn event_stats(
    s: &mut String,
    t: &TraceDat<'_>,
    strict: bool,
    release: &mut Release<'_>,
) -> tracemux_core::Result<Vec<tracemux_core::Error>> {
    let opts = ReadOptions {
        strict,
        ..Default::default()
    };
    let mut reader = Reader::new(t, &opts)?;
    let meta = reader.meta().clone();
    let mut per_stream = vec![Span::default(); meta.streams.len()];
    let mut per_type: HashMap<u32, u64> = HashMap::new();
    let mut all = Span::default();
    let mut lost_markers = 0u64;
    let mut lost_known = 0u64;
    let mut lost_unknown = 0u64;
    let mut damage = Vec::new();
    let mut n = 0u64;
    while let Some(rec) = reader.next_record()? {
        n += 1;
        match rec {
            Record::Event(ev) => {
                all.add(ev.ts);
                if let Some(st) = per_stream.get_mut(ev.stream as usize) {
                    st.add(ev.ts);
                }
                *per_type.entry(ev.type_id).or_default() += 1;
            }
            Record::Lost(l) => {
                lost_markers += 1;
                match l.count {
                    Some(n) => lost_known += n,
                    None => lost_unknown += 1,
                }
            }
            Record::Damage(e) => damage.push(e),
        }
        if n % 65536 == 0 {
            release(&reader.consumed());
        }
    }
    let usecs = tracecmd_usecs(t);
    let unit = if usecs {
        "seconds (ns precision)"
    } else {
        "raw clock values"
    };
    s.push_str("\nEvents\n");
    kv(s, "events", all.events);
    kv(s, "first timestamp", fmt_ts(all.first, usecs));
    kv(
        s,
        "last timestamp",
        fmt_ts(all.first.map(|_| all.last), usecs),
    );
    if let Some(f) = all.first {
        let d = all.last - f;
        if usecs {
            kv(
                s,
                "duration",
                format!("{}.{:09} s", d / 1_000_000_000, d % 1_000_000_000),
            );
        } else {
            kv(s, "duration", format!("{d} clock units"));
        }
    }
    kv(s, "timestamps in", unit);
    let markers = if lost_markers == 0 {
        "none".to_string()
    } else {
        let mut m = format!("{lost_markers} markers, {lost_known} events known lost");
        if lost_unknown > 0 {
            let _ = write!(m, ", {lost_unknown} markers without a count");
        }
        m
    };
    kv(s, "lost events", markers);

    if !meta.streams.is_empty() {
        s.push_str("\n  per buffer and CPU\n");
        let rows: Vec<Vec<String>> = meta
            .streams
            .iter()
            .zip(&per_stream)
            .map(|(st, sp)| {
                let b = meta
                    .buffers
                    .get(st.buffer as usize)
                    .map_or("?".into(), |b| buffer_label(&b.name));
                vec![
                    b,
                    st.cpu.to_string(),
                    sp.events.to_string(),
                    fmt_ts(sp.first, usecs),
                    fmt_ts(sp.first.map(|_| sp.last), usecs),
                ]
            })
            .collect();
        table(
            s,
            "    ",
            &["buffer", "CPU", "events", "first", "last"],
            &rows,
            &[false, true, true, true, true],
        );
    }

    if !per_type.is_empty() {
        let _ = writeln!(s, "\n  per event ({} kinds)", per_type.len());
        let mut v: Vec<(String, u64)> = per_type
            .into_iter()
            .map(|(id, n)| {
                let name = match meta.classes.get(id) {
                    Some(c) => format!("{}:{}", c.system, c.name),
                    None => format!("(unknown event id {id})"),
                };
                (name, n)
            })
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let total = all.events.max(1) as f64;
        let rows: Vec<Vec<String>> = v
            .into_iter()
            .map(|(name, n)| {
                vec![
                    n.to_string(),
                    format!("{:.1}%", n as f64 * 100.0 / total),
                    name,
                ]
            })
            .collect();
        table(
            s,
            "    ",
            &["events", "share", "event"],
            &rows,
            &[true, true, false],
        );
    }
    Ok(damage)
}
