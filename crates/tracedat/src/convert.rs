//! trace.dat to trace.dat: what `trace-cmd convert` does (another file
//! version or compression), with optional trimming by time and event.
//!
//! The metadata is copied verbatim (header_page/header_event, formats,
//! kallsyms, printk, cmdlines, every option but the ones that describe the
//! layout, which the writer makes anew). Records are read per buffer and
//! CPU with their *raw* ring-buffer time ([`for_each_raw`]) and packed again
//! at that time, so the carried-over clock options (TSC2NSEC, OFFSET, DATE,
//! TIME_SHIFT) give every record the same time as in the source. A page
//! that reports missed events, whose first record is at its start (the
//! only case trace-cmd shows), becomes a new page with the same flags
//! before that record ([`Item::NewPage`]).
//!
//! The pages of each CPU are packed as the records are read (no per-record
//! copies are kept). [`convert`] keeps them in memory
//! ([`BufferData::packed`]); [`convert_spilled`] appends them to a
//! [`PageSpill`] file a megabyte at a time, and
//! [`TraceFile::write_spilled`] then streams the output file, so memory
//! stays bounded whatever the size of the trace.

use crate::compress::Decoder;
use crate::file::{Buffer, CpuData, DataKind, TraceDat};
use crate::options::OptionId;
use crate::reader::{build_meta, page_layout, time_calc, ReadOptions};
use crate::writer::{
    BufferData, Compression, Item, Missed, PagePacker, PageSpill, TraceData, TraceFile, TraceOption,
};
use tracemux_core::bytes::{Cursor, Endian};
use tracemux_core::error::{Error, Result};
use tracemux_core::model::ClassTable;
use tracemux_ftrace::format::parse_header_page;
use tracemux_ftrace::page::{Page, PageLayout};

/// What to write and what to keep.
#[derive(Debug, Clone)]
pub struct ConvertOptions {
    /// 6 or 7.
    pub version: u32,
    /// v7 only.
    pub compression: Compression,
    /// Keep records at or after this time (ns, corrected as `report` shows it).
    pub begin: Option<u64>,
    /// Keep records at or before this time.
    pub end: Option<u64>,
    /// Keep only these events (`name` or `system:name`); empty: all.
    pub events: Vec<String>,
    /// Stop at the first damage.
    pub strict: bool,
}

/// What a conversion did.
#[derive(Debug, Default)]
pub struct ConvertStats {
    pub events: u64,
    pub skipped: u64,
    /// Pages written with missed-events flags.
    pub lost_markers: u64,
    /// Sum of the known missed-events counts.
    pub lost_events: u64,
    /// Damage met (lenient mode) in the source's trace data.
    pub damage: Vec<Error>,
    /// Options that could not be carried over (ids).
    pub dropped_options: Vec<u16>,
}

/// One record as stored in a CPU's pages.
#[derive(Debug, Clone, Copy)]
pub struct RawRecord<'x> {
    /// Raw ring-buffer time (no correction).
    pub ts: u64,
    /// The payload as stored (padded to 4 bytes).
    pub data: &'x [u8],
    /// The page this record starts reported missed events before it.
    pub missed: Option<Missed>,
}

/// Options the writer produces from the layout (or that point at sections
/// it does not copy): not carried over.
fn layout_option(id: OptionId) -> bool {
    id == OptionId::DONE
        || id == OptionId::BUFFER
        || id == OptionId::BUFFER_TEXT
        || id == OptionId::CPUCOUNT
        || id.is_section_ref()
}

/// Copy the event formats of `t` (ftrace's own and every system's) into `f`.
pub fn copy_event_formats(t: &TraceDat<'_>, f: &mut TraceFile) {
    f.ftrace_formats = t.ftrace_formats.iter().map(|x| x.to_vec()).collect();
    f.systems = t
        .systems
        .iter()
        .map(|(s, v)| (s.clone(), v.iter().map(|x| x.to_vec()).collect()))
        .collect();
}

/// A [`TraceFile`] with the metadata of `t` (no trace data): same byte
/// order, long size, page size and `commit` size; every option but the
/// layout ones, in order. Returns the ids of options that cannot be
/// carried (references to BTF or modules sections).
pub fn trace_file_from(
    t: &TraceDat<'_>,
    version: u32,
    compression: Compression,
) -> (TraceFile, Vec<u16>) {
    let mut f = TraceFile::new(version, t.endian);
    f.long_size = t.long_size as u8;
    let hp = parse_header_page(&String::from_utf8_lossy(&t.header_page), t.long_size);
    f.commit_size = hp.commit_size as u8;
    f.page_size = t.page_size;
    f.compression = compression;
    f.header_page = Some(t.header_page.to_vec());
    f.header_event = Some(t.header_event.to_vec());
    copy_event_formats(t, &mut f);
    f.kallsyms = t.kallsyms.to_vec();
    f.printk = t.printk.to_vec();
    f.cmdlines = t.cmdlines.to_vec();
    f.cpus = t.cpus;
    let mut dropped = Vec::new();
    for o in &t.options {
        if layout_option(o.id) {
            if o.id == OptionId::BTF_FILE || o.id == OptionId::MODULES_FILE {
                dropped.push(o.id.0);
            }
            continue;
        }
        f.options.push(TraceOption::raw(o.id.0, o.data.to_vec()));
    }
    f.data = TraceData::Flyrecord(Vec::new());
    (f, dropped)
}

/// The clock of a buffer: the v7 BUFFER option's, or for v6 the flyrecord
/// clock trailer (`[clock]` after the CPU table), else the TRACECLOCK one.
pub fn buffer_clock(t: &TraceDat<'_>, b: &Buffer) -> String {
    if t.version != 6 {
        return b.clock.clone();
    }
    // the top buffer's offset is after its "flyrecord" tag, an instance's at it
    let table = b.offset + if b.name.is_empty() { 0 } else { 10 } + 16 * t.cpus as u64;
    let trailer = usize::try_from(table)
        .ok()
        .and_then(|at| t.data.get(at..))
        .and_then(|rest| {
            let mut c = Cursor::new(rest, t.endian, "flyrecord clock");
            let n = c.u64().ok()?;
            let s = c
                .bytes(usize::try_from(n).ok().filter(|&n| n < 256)?)
                .ok()?;
            let s = std::str::from_utf8(s).ok()?;
            let s = s.strip_prefix('[')?.strip_suffix(']')?;
            Some(s.to_string())
        });
    trailer.unwrap_or_else(|| b.clock.clone())
}

/// Call `f` on every data record of one CPU of one buffer, in stored
/// order, with its raw time. Damage is returned (strict) or pushed to
/// `damage` and skipped past (lenient), as the merged reader does.
/// `progress` is told the offset in the file up to which the source has
/// been read (after each page or chunk).
pub fn for_each_raw(
    t: &TraceDat<'_>,
    b: &Buffer,
    c: &CpuData,
    strict: bool,
    damage: &mut Vec<Error>,
    f: &mut dyn FnMut(RawRecord<'_>) -> Result<()>,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    let hurt = |e: Error, damage: &mut Vec<Error>| -> Result<()> {
        if strict {
            return Err(e);
        }
        damage.push(e);
        Ok(())
    };
    if c.size == 0 {
        return Ok(());
    }
    let layout = page_layout(t, b);
    let file = t.data;
    let start = usize::try_from(c.offset).unwrap_or(usize::MAX);
    let extra = if b.compressed { 4 } else { 0 };
    let end = start.saturating_add(
        usize::try_from(c.size)
            .unwrap_or(usize::MAX)
            .saturating_add(extra),
    );
    if start > file.len() || end > file.len() {
        hurt(b.truncated(c, end, file.len()), damage)?;
    }
    let region = file
        .get(start.min(file.len())..end.min(file.len()))
        .unwrap_or(&[]);
    if !b.compressed {
        return pages(region, c.offset, layout, strict, damage, f, progress);
    }
    let mut table = Cursor::with_base(region, c.offset, t.endian, "flyrecord chunks");
    let count = match table.u32() {
        Ok(n) => n,
        Err(e) => return hurt(e, damage),
    };
    let mut dec = Decoder::default();
    let mut buf = Vec::new();
    for _ in 0..count {
        let off = table.offset();
        let chunk = (|| -> Result<()> {
            let csize = table.u32()?;
            let usize_ = table.u32()?;
            let input = table.bytes(csize as usize)?;
            dec.decompress(
                t.codec,
                input,
                usize_ as usize,
                &mut buf,
                "flyrecord chunk",
                off,
            )
        })();
        match chunk {
            Ok(()) => pages(&buf, off, layout, strict, damage, f, &mut |_| {})?,
            Err(e) => {
                let eof = matches!(e.kind, tracemux_core::ErrorKind::UnexpectedEof);
                hurt(e, damage)?;
                if eof {
                    break;
                }
            }
        }
        progress(table.offset());
    }
    Ok(())
}

/// The records of consecutive pages in `block` (`base`: offset for errors
/// and `progress`, told the offset reached after each page).
fn pages(
    block: &[u8],
    base: u64,
    layout: PageLayout,
    strict: bool,
    damage: &mut Vec<Error>,
    f: &mut dyn FnMut(RawRecord<'_>) -> Result<()>,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    let ps = layout.page_size as usize;
    let hdr = layout.data_offset as usize;
    let hurt = |e: Error, damage: &mut Vec<Error>| -> Result<()> {
        if strict {
            return Err(e);
        }
        damage.push(e);
        Ok(())
    };
    let mut at = 0;
    while at < block.len() {
        if at > 0 {
            progress(base + at as u64);
        }
        let page = &block[at..(at + ps).min(block.len())];
        let page_base = base + at as u64;
        at += ps;
        if page.len() < hdr {
            return hurt(
                Error::invalid(
                    format!("truncated page ({} bytes)", page.len()),
                    "flyrecord page",
                    page_base,
                ),
                damage,
            );
        }
        let (p, err) = Page::parse_checked(page, page_base, layout);
        if let Some(e) = err {
            hurt(e, damage)?;
        }
        let Some(mut p) = p else { continue };
        let mut first = true;
        while let Some(r) = p.next() {
            match r {
                Ok(ev) => {
                    // trace-cmd reports missed events only when the first
                    // record of the page sits at its start
                    let missed =
                        (first && ev.offset == 0 && p.missed != Missed::None).then_some(p.missed);
                    first = false;
                    f(RawRecord {
                        ts: ev.ts,
                        data: ev.data,
                        missed,
                    })?;
                }
                Err(e) => {
                    hurt(e, damage)?;
                    break;
                }
            }
        }
    }
    Ok(())
}

/// Whether an event class passes an `--events` list.
fn wanted(classes: &ClassTable, events: &[String], endian: Endian, data: &[u8]) -> bool {
    if events.is_empty() {
        return true;
    }
    let type_id = endian.read_uint(data, 2).unwrap_or(0) as u32;
    let Some(c) = classes.get(type_id) else {
        return false;
    };
    events.iter().any(|want| match want.split_once(':') {
        Some((sys, name)) => sys == c.system && name == c.name,
        None => *want == c.name,
    })
}

fn merge_missed(a: Missed, b: Missed) -> Missed {
    match (a, b) {
        (Missed::None, x) | (x, Missed::None) => x,
        (Missed::Count(x), Missed::Count(y)) => Missed::Count(x.saturating_add(y)),
        _ => Missed::Unknown,
    }
}

/// Pages handed from a CPU's packer to the spill at a time.
const SPILL_AT: usize = 1 << 20;
/// Bytes of the source read before they are handed to `done`.
const FORGET_AT: u64 = 4 << 20;

/// Convert a parsed trace.dat into a [`TraceFile`] (see the module docs),
/// its pages in memory.
pub fn convert(t: &TraceDat<'_>, o: &ConvertOptions) -> Result<(TraceFile, ConvertStats)> {
    convert_with(t, o, None, &mut |_, _| {})
}

/// [`convert`] with the pages in `spill` ([`BufferData::spilled`]): write
/// the result with [`TraceFile::write_spilled`] and the same spill.
/// `done` is told each range of the source (offset, length) once its
/// records have been read, so that a caller mapping the file can let its
/// pages go.
pub fn convert_spilled(
    t: &TraceDat<'_>,
    o: &ConvertOptions,
    spill: &mut PageSpill,
    done: &mut dyn FnMut(u64, u64),
) -> Result<(TraceFile, ConvertStats)> {
    convert_with(t, o, Some(spill), done)
}

fn convert_with(
    t: &TraceDat<'_>,
    o: &ConvertOptions,
    mut spill: Option<&mut PageSpill>,
    done: &mut dyn FnMut(u64, u64),
) -> Result<(TraceFile, ConvertStats)> {
    let mut st = ConvertStats::default();
    let (mut f, dropped) = trace_file_from(t, o.version, o.compression);
    st.dropped_options = dropped;
    st.damage.extend(t.damage.iter().cloned());
    if o.strict {
        if let Some(e) = st.damage.first() {
            return Err(e.clone());
        }
    }
    if t.kind == DataKind::Latency {
        let clock = t
            .buffers
            .iter()
            .find(|b| b.latency)
            .map(|b| b.clock.clone())
            .or_else(|| t.trace_clock())
            .unwrap_or_default();
        f.data = TraceData::Latency {
            clock,
            text: t.latency_text.as_deref().unwrap_or(&[]).to_vec(),
        };
        return Ok((f, st));
    }
    let mut meta_damage = Vec::new();
    let meta = build_meta(t, &mut meta_damage);
    let tc = time_calc(t, &ReadOptions::default());
    let mut bufs = Vec::new();
    for b in t.buffers.iter().filter(|b| !b.latency) {
        let mut out = BufferData::new(&b.name, &buffer_clock(t, b));
        let layout = page_layout(t, b);
        // trace-cmd 3.1.6 cannot read compressed data of a buffer whose
        // page size differs from the file's ("bad page offset"): such a
        // buffer is repacked in pages of the file's size when compressing.
        if o.version == 7
            && !b.name.is_empty()
            && (o.compression == Compression::None || layout.page_size == t.page_size)
        {
            out.page_size = Some(layout.page_size);
        }
        let fmt = f.page_format(&out);
        for c in &b.cpus {
            let mut packer = PagePacker::new(fmt).map_err(|e| {
                Error::invalid(format!("cannot write pages: {e}"), "flyrecord", c.offset)
            })?;
            let mut pending = Missed::None;
            let mut werr: Option<String> = None;
            let spill_start = spill.as_ref().map_or(0, |s| s.len());
            // source pages read and not yet handed to `done`
            let mut unread = c.offset;
            let mut progress = |at: u64| {
                if at >= unread.saturating_add(FORGET_AT) {
                    done(unread, at - unread);
                    unread = at;
                }
            };
            let spill_err = |e: std::io::Error| format!("cannot write the spill file: {e}");
            let res = for_each_raw(
                t,
                b,
                c,
                o.strict,
                &mut st.damage,
                &mut |r| {
                    if let Some(m) = r.missed {
                        pending = merge_missed(pending, m);
                    }
                    let ts = tc.apply(r.ts, c.cpu);
                    let in_time =
                        !(o.begin.is_some_and(|x| ts < x) || o.end.is_some_and(|x| ts > x));
                    if !in_time {
                        // a loss before a record outside the range goes with it
                        pending = Missed::None;
                        st.skipped += 1;
                        return Ok(());
                    }
                    if !wanted(&meta.classes, &o.events, t.endian, r.data) {
                        st.skipped += 1;
                        return Ok(());
                    }
                    let mut res = Ok(());
                    if pending != Missed::None {
                        st.lost_markers += 1;
                        if let Missed::Count(n) = pending {
                            st.lost_events += n;
                        }
                        res = packer.push(&Item::NewPage(pending));
                        pending = Missed::None;
                    }
                    if res.is_ok() {
                        res = packer.event(r.ts, r.data);
                    }
                    if let Some(s) = spill.as_deref_mut() {
                        if res.is_ok() && packer.closed_len() >= SPILL_AT {
                            if let Err(e) = s.append(&packer.take_pages()) {
                                res = Err(crate::writer::WriteError(spill_err(e)));
                            }
                        }
                    }
                    match res {
                        Ok(()) => st.events += 1,
                        Err(e) => {
                            werr = Some(e.0);
                            return Err(Error::invalid(
                                "cannot write a record",
                                "flyrecord",
                                c.offset,
                            ));
                        }
                    }
                    Ok(())
                },
                &mut progress,
            );
            res.map_err(|e| match &werr {
                Some(w) => Error::invalid(
                    format!("buffer \"{}\" CPU {}: {w}", b.name, c.cpu),
                    "flyrecord",
                    c.offset,
                ),
                None => e,
            })?;
            let pages = packer.finish();
            match spill.as_deref_mut() {
                Some(s) => {
                    s.append(&pages).map_err(|e| {
                        Error::invalid(
                            format!("buffer \"{}\" CPU {}: {}", b.name, c.cpu, spill_err(e)),
                            "flyrecord",
                            c.offset,
                        )
                    })?;
                    let len = s.len() - spill_start;
                    if len > 0 {
                        out.spilled.push((c.cpu, spill_start, len));
                    }
                }
                None => {
                    if !pages.is_empty() {
                        out.packed.push((c.cpu, pages));
                    }
                }
            }
            let extra = if b.compressed { 4 } else { 0 };
            let end = c.offset.saturating_add(c.size).saturating_add(extra);
            done(unread, end.saturating_sub(unread));
        }
        bufs.push(out);
    }
    if o.version == 6 {
        // v6 has no room for buffer page sizes or CPUs past the count, and
        // needs the top buffer first
        if bufs.first().is_none_or(|b| !b.name.is_empty()) {
            let clock = t.trace_clock().unwrap_or_default();
            bufs.insert(0, BufferData::new("", &clock));
        }
        let max_cpu = bufs
            .iter()
            .flat_map(|b| {
                let packed = b.packed.iter().map(|p| p.0.saturating_add(1));
                packed.chain(b.spilled.iter().map(|p| p.0.saturating_add(1)))
            })
            .max()
            .unwrap_or(0);
        f.cpus = f.cpus.max(max_cpu);
    }
    f.data = TraceData::Flyrecord(bufs);
    Ok((f, st))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missed_merge() {
        assert_eq!(
            merge_missed(Missed::Count(2), Missed::Count(3)),
            Missed::Count(5)
        );
        assert_eq!(merge_missed(Missed::None, Missed::Unknown), Missed::Unknown);
        assert_eq!(
            merge_missed(Missed::Count(1), Missed::Unknown),
            Missed::Unknown
        );
    }
}
