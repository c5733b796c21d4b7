//! Streaming the events of a trace.dat: one stream per buffer and CPU,
//! pages decoded in place from the mapped file or from one reusable
//! decompressed chunk, merged by time in trace-cmd's order.

use crate::compress::{Codec, Decoder};
use crate::file::{DataKind, TraceDat};
use crate::options::{parse_time_shift, parse_tsc2nsec, OptionId, TimeShift, Tsc2Nsec};
use std::sync::Arc;
use tracemux_core::bytes::{Cursor, Endian};
use tracemux_core::error::{Error, Result};
use tracemux_core::model::{
    BufferInfo, ClassTable, Event, Lost, Progress, Record, RecordSource, StreamInfo, TraceMeta,
};
use tracemux_ftrace::format::parse_format;
use tracemux_ftrace::page::{next_in, PageLayout, PageState};
use tracemux_ftrace::tables::{parse_cmdlines, parse_kallsyms, parse_printk};

/// How to read.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Stop at the first damage instead of reporting it and going on.
    pub strict: bool,
    /// Do not apply any timestamp correction (trace-cmd's `--raw-ts`).
    pub raw_ts: bool,
    /// Ignore the DATE option (trace-cmd's `--nodate`).
    pub no_date: bool,
    /// Extra offset added to every timestamp (ns).
    pub ts_offset: i64,
    /// Leave the kallsyms section unread: the trace's description then has
    /// no kernel symbols. For readers that never turn an address into a
    /// name (the Parquet tables), it saves the table's memory (about 6 MB
    /// for a kernel of 120 k symbols).
    pub no_symbols: bool,
}

/// One time-sync sample of a guest CPU (TIME_SHIFT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncSample {
    pub time: i64,
    pub offset: i64,
    pub scaling: i64,
    pub fraction: i64,
}

/// TIME_SHIFT corrections: per CPU, samples sorted by time without
/// duplicate times, and the protocol flags (bit 0: interpolate).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostSync {
    pub flags: u32,
    pub cpus: Vec<Vec<SyncSample>>,
}

const TSYNC_FLAG_INTERPOLATE: u32 = 1;

impl HostSync {
    pub fn from_option(t: &TimeShift) -> HostSync {
        let cpus = t
            .cpus
            .iter()
            .map(|c| {
                let mut v: Vec<SyncSample> = (0..c.times.len())
                    .map(|i| SyncSample {
                        time: c.times[i],
                        offset: c.offsets.get(i).copied().unwrap_or(0),
                        scaling: c.scalings.get(i).copied().unwrap_or(1),
                        fraction: c.fractions.get(i).copied().unwrap_or(0),
                    })
                    .collect();
                v.sort_by_key(|s| s.time);
                v.dedup_by_key(|s| s.time);
                v
            })
            .collect();
        HostSync {
            flags: t.flags,
            cpus,
        }
    }

    fn correct(&self, ts: u64, min: &SyncSample, max: &SyncSample) -> u64 {
        let tscor = if self.flags & TSYNC_FLAG_INTERPOLATE != 0 {
            let delta = max.time.wrapping_sub(min.time);
            let off = (ts as i64)
                .wrapping_sub(min.time)
                .wrapping_mul(max.offset.wrapping_sub(min.offset));
            if delta == 0 {
                min.offset
            } else {
                min.offset.wrapping_add(off.wrapping_add(delta / 2) / delta)
            }
        } else {
            min.offset
        };
        let shift = (min.fraction as u64).min(63) as u32;
        let ts = ts.wrapping_mul(min.scaling as u64) >> shift;
        ts.wrapping_add(tscor as u64)
    }

    /// trace-cmd's `timestamp_host_sync`: pick the samples around `ts`,
    /// interpolate the offset, scale.
    pub fn apply(&self, ts: u64, cpu: u32) -> u64 {
        let Some(s) = self.cpus.get(cpu as usize) else {
            return ts;
        };
        let n = s.len();
        match n {
            0 => ts,
            1 => ts.wrapping_add(s[0].offset as u64),
            2 => self.correct(ts, &s[0], &s[1]),
            _ => {
                // the comparisons are unsigned, as in trace-cmd
                if ts <= s[0].time as u64 {
                    return self.correct(ts, &s[0], &s[1]);
                }
                if ts >= s[n - 1].time as u64 {
                    return self.correct(ts, &s[n - 2], &s[n - 1]);
                }
                let (mut lo, mut hi) = (0i64, n as i64 - 1);
                let mut mid = (lo + hi) / 2;
                while lo <= hi {
                    let t = s[mid as usize].time as u64;
                    if ts < t {
                        hi = mid - 1;
                    } else if ts > t {
                        lo = mid + 1;
                    } else {
                        break;
                    }
                    mid = (lo + hi) / 2;
                }
                let m = (mid.max(0) as usize).min(n - 2);
                self.correct(ts, &s[m], &s[m + 1])
            }
        }
    }
}

/// How raw ring-buffer timestamps become trace time (trace-cmd's
/// `timestamp_calc`): guest TIME_SHIFT sync, then TSC2NSEC, then the
/// DATE/OFFSET/user offset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimeCalc {
    pub host_sync: Option<HostSync>,
    pub tsc2nsec: Option<Tsc2Nsec>,
    pub offset: i64,
    pub raw: bool,
    /// A clock frequency in Hz given by the user (trace-cmd's `--ts2secs`):
    /// timestamps are multiplied by `1e9 / HZ` (as a C `double`) instead of
    /// the TSC2NSEC conversion.
    pub ts2secs: Option<u64>,
}

impl TimeCalc {
    #[inline]
    pub fn apply(&self, ts: u64, cpu: u32) -> u64 {
        if self.raw {
            return ts;
        }
        let mut ts = ts;
        if let Some(h) = &self.host_sync {
            ts = h.apply(ts, cpu);
        }
        if let Some(hz) = self.ts2secs {
            ts = (ts as f64 * (1_000_000_000f64 / hz as f64)) as u64;
        } else if let Some(t) = self.tsc2nsec {
            if t.mult != 0 {
                ts = mul_u64_u32_shr(ts, t.mult as u64, t.shift);
            }
        }
        ts.wrapping_add(self.offset as u64)
    }
}

/// trace-cmd's 64x32 multiply-and-shift, with its exact truncations.
fn mul_u64_u32_shr(a: u64, mul: u64, shift: u32) -> u64 {
    let al = a as u32 as u64;
    let ah = a >> 32;
    let mut ret = al.wrapping_mul(mul).checked_shr(shift).unwrap_or(0);
    if ah != 0 {
        ret = ret.wrapping_add(
            ah.wrapping_mul(mul)
                .checked_shl(32u32.wrapping_sub(shift))
                .unwrap_or(0),
        );
    }
    ret
}

/// Build the common model from the container's metadata. Format files that
/// cannot be parsed are reported and skipped.
pub fn build_meta(t: &TraceDat<'_>, damage: &mut Vec<Error>) -> TraceMeta {
    build_meta_with(t, true, damage)
}

/// [`build_meta`], with the kernel symbols read or not (`symbols`).
pub fn build_meta_with(t: &TraceDat<'_>, symbols: bool, damage: &mut Vec<Error>) -> TraceMeta {
    let mut m = TraceMeta {
        endian: Some(t.endian),
        long_size: t.long_size,
        cpus: t.cpus,
        format: Some(tracemux_core::model::Format::TraceDat),
        ..Default::default()
    };
    let mut classes = ClassTable::new();
    let mut add = |text: &[u8], system: &str, is_ftrace: bool, damage: &mut Vec<Error>| {
        let text = String::from_utf8_lossy(text);
        match parse_format(&text, t.long_size, is_ftrace) {
            Ok(f) => classes.push(tracemux_ftrace::event_class(&f, system, t.long_size)),
            Err(e) => damage.push(Error::invalid(
                format!("bad {system} event format ({e})"),
                if is_ftrace {
                    "ftrace events"
                } else {
                    "events format"
                },
                0,
            )),
        }
    };
    for f in &t.ftrace_formats {
        add(f, "ftrace", true, damage);
    }
    for (sys, evs) in &t.systems {
        for f in evs {
            add(f, sys, false, damage);
        }
    }
    m.classes = classes;
    if symbols {
        parse_kallsyms(&t.kallsyms, &mut m.symbols);
    }
    parse_printk(&t.printk, &mut m.printk);
    parse_cmdlines(&t.cmdlines, &mut m.tasks);
    m.uname = t.option_text(OptionId::UNAME);
    m.tracer_version = t.option_text(OptionId::VERSION);
    for (bi, b) in t.buffers.iter().enumerate() {
        m.buffers.push(BufferInfo {
            name: b.name.clone(),
            clock: b.clock.clone(),
            page_size: b.page_size,
            cpus: b.cpus.len() as u32,
        });
        for c in &b.cpus {
            m.streams.push(StreamInfo {
                buffer: bi as u32,
                cpu: c.cpu,
            });
        }
    }
    m
}

/// The time correction trace-cmd applies to this file.
pub fn time_calc(t: &TraceDat<'_>, opts: &ReadOptions) -> TimeCalc {
    let mut offset: i64 = opts.ts_offset;
    let mut tsc2nsec = None;
    let mut host_sync = None;
    for o in &t.options {
        match o.id {
            OptionId::DATE if !opts.no_date => {
                offset = offset.wrapping_add(strtoll(&o.text()).wrapping_mul(1000));
            }
            OptionId::OFFSET => offset = offset.wrapping_add(strtoll(&o.text())),
            OptionId::TSC2NSEC => tsc2nsec = parse_tsc2nsec(&o.data, t.endian).ok(),
            OptionId::TIME_SHIFT if o.data.len() >= 16 => {
                if let Ok(ts) = parse_time_shift(&o.data, t.endian) {
                    host_sync = Some(HostSync::from_option(&ts));
                }
            }
            _ => {}
        }
    }
    TimeCalc {
        host_sync,
        tsc2nsec,
        offset,
        raw: opts.raw_ts,
        ts2secs: None,
    }
}

/// C `strtoll(s, NULL, 0)`: optional sign, then hex (0x), octal (0) or decimal.
pub use tracemux_ftrace::printfmt::strtoll;

enum Source<'a> {
    /// Pages straight from the file.
    Mapped,
    /// v7 compressed chunks: the rest of the chunk table and the chunks left.
    Chunked {
        table: Cursor<'a>,
        left: u32,
        codec: Codec,
        dec: Box<Decoder>,
    },
}

struct Stream<'a> {
    cpu: u32,
    src: Source<'a>,
    /// The bytes pages are cut from: the file region (mapped) or the current
    /// decompressed chunk (`buf`).
    region: &'a [u8],
    region_base: u64,
    /// File offset where this stream's data starts.
    file_start: u64,
    /// Bytes of this stream's data in the file.
    data_len: u64,
    buf: Vec<u8>,
    /// Counts the chunks decompressed into `buf` (tells them apart).
    serial: u64,
    /// Offset in the block of the next page to load.
    next_page: usize,
    /// Current page: data area range in the block, and iteration state.
    page_data: (usize, usize),
    page_base: u64,
    state: PageState,
    /// First event of the page not yet seen (for the missed-events marker).
    page_first: bool,
    page_missed: Option<Option<u64>>,
    layout: PageLayout,
    time: Arc<TimeCalc>,
    /// The current event: corrected ts, payload range in the block.
    cur: Option<(u64, usize, usize)>,
    /// The file offset where the bytes of the current page (or compressed
    /// chunk) end.
    file_end: u64,
    /// A lost-events marker to deliver before `cur`.
    lost: Option<Option<u64>>,
    finished: bool,
}

impl<'a> Stream<'a> {
    fn block(&self) -> &[u8] {
        match self.src {
            Source::Mapped => self.region,
            Source::Chunked { .. } => &self.buf,
        }
    }

    /// Load the next chunk (compressed source). Ok(false) at the end.
    fn next_chunk(&mut self) -> Result<bool> {
        let Source::Chunked {
            table,
            left,
            codec,
            dec,
        } = &mut self.src
        else {
            return Ok(false);
        };
        if *left == 0 {
            return Ok(false);
        }
        *left -= 1;
        let off = table.offset();
        let csize = table.u32()?;
        let usize_ = table.u32()?;
        let input = table.bytes(csize as usize)?;
        self.region_base = off;
        self.next_page = 0;
        self.serial += 1;
        dec.decompress(
            *codec,
            input,
            usize_ as usize,
            &mut self.buf,
            "flyrecord chunk",
            off,
        )?;
        Ok(true)
    }

    /// Advance to the next data event. Damage is returned as `Err` and the
    /// stream continues after it on the next call.
    fn advance(&mut self) -> Result<()> {
        self.cur = None;
        let e = self.layout.endian;
        loop {
            if self.finished {
                return Ok(());
            }
            if !self.state.done {
                let (s, n) = self.page_data;
                let block = match self.src {
                    Source::Mapped => self.region,
                    Source::Chunked { .. } => &self.buf[..],
                };
                let data = &block[s..s + n];
                match next_in(data, &mut self.state, e, self.page_base) {
                    Some(Ok(ev)) => {
                        if self.page_first {
                            self.page_first = false;
                            // trace-cmd reports missed events only when the
                            // first record of the page sits at offset 0.
                            if ev.offset == 0 {
                                self.lost = self.page_missed;
                            }
                        }
                        self.cur = Some((self.time.apply(ev.ts, self.cpu), s + ev.start, ev.len));
                        return Ok(());
                    }
                    Some(Err(err)) => return Err(err),
                    None => self.state.done = true,
                }
            }
            // load the next page
            let ps = self.layout.page_size as usize;
            if self.next_page >= self.block().len() {
                match self.next_chunk() {
                    Ok(true) => continue,
                    Ok(false) => {
                        self.finished = true;
                        return Ok(());
                    }
                    Err(err) => {
                        // a bad chunk header ends the stream; a chunk that does
                        // not decompress is skipped
                        if matches!(err.kind, tracemux_core::ErrorKind::UnexpectedEof) {
                            self.finished = true;
                        }
                        self.buf.clear();
                        self.next_page = 0;
                        return Err(err);
                    }
                }
            }
            let start = self.next_page;
            let blen = self.block().len();
            let end = (start + ps).min(blen);
            self.next_page = start + ps;
            let page_base = self.region_base + start as u64;
            let hdr = self.layout.data_offset as usize;
            if end - start < hdr {
                self.finished = matches!(self.src, Source::Mapped);
                return Err(Error::invalid(
                    format!("truncated page ({} bytes)", end - start),
                    "flyrecord page",
                    page_base,
                ));
            }
            self.file_end = match self.src {
                Source::Mapped => self.region_base + (start + ps) as u64,
                Source::Chunked { ref table, .. } => table.offset(),
            };
            let page = &self.block()[start..end];
            let ts = e.read_uint(page, 8).unwrap_or(0);
            let flags = e
                .read_uint(&page[8..], self.layout.commit_size as usize)
                .unwrap_or(0);
            let size = (flags & ((1 << 27) - 1)) as usize;
            let avail = page.len() - hdr;
            let missed = if flags & (1 << 31) != 0 {
                if flags & (1 << 30) != 0 {
                    Some(
                        page.get(hdr + size..)
                            .and_then(|b| e.read_uint(b, self.layout.commit_size as usize)),
                    )
                } else {
                    Some(None)
                }
            } else {
                None
            };
            self.page_data = (start + hdr, size.min(avail));
            self.page_base = page_base + hdr as u64;
            self.state = PageState {
                pos: 0,
                ts,
                done: false,
            };
            self.page_first = true;
            self.page_missed = missed;
            if size > avail {
                return Err(Error::invalid(
                    format!(
                        "page commit size {size} is larger than the page data area ({avail} bytes)"
                    ),
                    "flyrecord page",
                    page_base + 8,
                ));
            }
        }
    }
}

/// The block an event's bytes were cut from.
pub enum EventBytes<'a, 'r> {
    /// A CPU's region of the file: lives as long as the file.
    Mapped(&'a [u8]),
    /// A decompressed chunk, owned by the reader until it moves on: copy it
    /// to keep it. (`stream`, `serial`) names one chunk of the trace.
    Chunk {
        stream: u32,
        serial: u64,
        bytes: &'r [u8],
    },
}

/// The bytes a printer is given for the record at `start..start + len` of
/// `block` (its [`Event::ext`]): libtraceevent may read past the record
/// (static arrays), into the following bytes of its buffer, so up to 64 KiB
/// of them.
pub fn ext_of(block: &[u8], start: usize, len: usize) -> &[u8] {
    &block[start..block.len().min(start + len + 65536).max(start + len)]
}

/// Events of every buffer and CPU of a trace.dat, in trace-cmd's order:
/// smallest timestamp first; on a tie the earlier buffer (top-level first,
/// then instances in file order), then the lower CPU.
pub struct Reader<'a> {
    meta: TraceMeta,
    streams: Vec<Stream<'a>>,
    /// Stream whose current event was handed out last (advance it first).
    last: Option<usize>,
    /// Stream whose current event [`Reader::peek_same_buffer`] returned.
    peeked: Option<usize>,
    /// An error met while peeking (strict mode), returned by the next call
    /// to `next_record`.
    deferred: Option<Error>,
    damage: std::collections::VecDeque<Error>,
    strict: bool,
    failed: bool,
    endian: Endian,
}

impl<'a> Reader<'a> {
    pub fn new(t: &TraceDat<'a>, opts: &ReadOptions) -> Result<Reader<'a>> {
        Self::with_time_calc(t, opts, time_calc(t, opts))
    }

    /// Like [`Reader::new`], with the timestamp correction given (e.g.
    /// [`time_calc`] with [`TimeCalc::ts2secs`] set).
    pub fn with_time_calc(
        t: &TraceDat<'a>,
        opts: &ReadOptions,
        time: TimeCalc,
    ) -> Result<Reader<'a>> {
        let mut damage: Vec<Error> = t.damage.clone();
        let meta = build_meta_with(t, !opts.no_symbols, &mut damage);
        if opts.strict {
            if let Some(e) = damage.first() {
                return Err(e.clone());
            }
        }
        let time = Arc::new(time);
        let mut streams = Vec::new();
        if t.kind == DataKind::Flyrecord {
            for b in t.buffers.iter() {
                let layout = page_layout(t, b);
                for c in &b.cpus {
                    let mut s = Stream {
                        cpu: c.cpu,
                        src: Source::Mapped,
                        region: &[],
                        region_base: c.offset,
                        file_start: c.offset,
                        data_len: 0,
                        buf: Vec::new(),
                        serial: 0,
                        next_page: 0,
                        page_data: (0, 0),
                        page_base: 0,
                        state: PageState {
                            done: true,
                            ..Default::default()
                        },
                        page_first: false,
                        page_missed: None,
                        layout,
                        time: time.clone(),
                        cur: None,
                        file_end: 0,
                        lost: None,
                        finished: false,
                    };
                    let start = usize::try_from(c.offset).unwrap_or(usize::MAX);
                    // For compressed data the stored size covers the chunks
                    // but not the 4-byte chunk count before them.
                    let extra = if b.compressed && c.size > 0 { 4 } else { 0 };
                    let size = usize::try_from(c.size)
                        .unwrap_or(usize::MAX)
                        .saturating_add(extra);
                    let file = t.data;
                    let end = start.saturating_add(size);
                    if c.size > 0 && (start > file.len() || end > file.len()) {
                        damage.push(b.truncated(c, end, file.len()));
                    }
                    let region = file
                        .get(start.min(file.len())..end.min(file.len()))
                        .unwrap_or(&[]);
                    s.data_len = region.len() as u64;
                    if b.compressed && c.size > 0 {
                        let mut table =
                            Cursor::with_base(region, c.offset, t.endian, "flyrecord chunks");
                        match table.u32() {
                            Ok(count) => {
                                s.src = Source::Chunked {
                                    table,
                                    left: count,
                                    codec: t.codec,
                                    dec: Box::default(),
                                }
                            }
                            Err(e) => {
                                damage.push(e);
                                s.finished = true;
                            }
                        }
                    } else {
                        s.region = region;
                    }
                    streams.push(s);
                }
            }
        }
        if opts.strict {
            if let Some(e) = damage.first() {
                return Err(e.clone());
            }
        }
        let mut r = Reader {
            meta,
            streams,
            last: None,
            peeked: None,
            deferred: None,
            damage: damage.into(),
            strict: opts.strict,
            failed: false,
            endian: t.endian,
        };
        for i in 0..r.streams.len() {
            r.advance(i)?;
        }
        Ok(r)
    }

    /// For each stream, the file range it has finished reading (its start
    /// up to the page or chunk it is on). The caller may drop these bytes
    /// from memory (e.g. `madvise(MADV_DONTNEED)` on a file mapping) to keep
    /// the resident set flat on large traces; nothing before these points is
    /// read again.
    pub fn consumed(&self) -> Vec<(u64, u64)> {
        self.streams
            .iter()
            .map(|s| {
                let start = s.file_start;
                let end = match &s.src {
                    Source::Mapped => {
                        s.region_base
                            + (s.next_page as u64).saturating_sub(s.layout.page_size as u64)
                    }
                    Source::Chunked { table, .. } => table.offset(),
                };
                (start, end.max(start))
            })
            .collect()
    }

    /// Bytes of the streams' data read (a stream counts as far as
    /// [`Reader::consumed`] says; a finished one in full), of all there are.
    pub fn progress(&self) -> Progress {
        let consumed = self.consumed();
        self.streams
            .iter()
            .zip(consumed)
            .fold(Progress::default(), |p, (s, (start, end))| {
                let done = if s.finished {
                    s.data_len
                } else {
                    (end - start).min(s.data_len)
                };
                p + Progress {
                    done,
                    total: s.data_len,
                }
            })
    }

    /// The payload of the record that comes next, in time order, among the
    /// streams of the buffer `stream` belongs to, without taking it
    /// (trace-cmd's `tracecmd_peek_next_data` on that buffer's handle;
    /// its function graph printer looks ahead this way). `None` at the end
    /// of the buffer.
    pub fn peek_same_buffer(&mut self, stream: u32) -> Option<&[u8]> {
        self.peeked = None;
        if self.failed || self.deferred.is_some() {
            return None;
        }
        if let Some(i) = self.last.take() {
            if let Err(e) = self.advance(i) {
                self.deferred = Some(e);
                return None;
            }
        }
        let buffer = self.meta.streams.get(stream as usize)?.buffer;
        let mut best: Option<(u64, usize)> = None;
        for (i, s) in self.streams.iter().enumerate() {
            if self.meta.streams.get(i).map(|m| m.buffer) != Some(buffer) {
                continue;
            }
            if let Some((ts, _, _)) = s.cur {
                if best.is_none_or(|(bts, _)| ts < bts) {
                    best = Some((ts, i));
                }
            }
        }
        let (_, i) = best?;
        self.peeked = Some(i);
        let s = &self.streams[i];
        let (_, start, len) = s.cur?;
        Some(&s.block()[start..start + len])
    }

    /// Where the bytes of the event [`RecordSource::next_record`] returned
    /// last live, and its payload's range in them (`start`, `len`), so that
    /// another thread can print it later: see [`EventBytes`].
    pub fn last_event_bytes(&self) -> Option<(EventBytes<'a, '_>, usize, usize)> {
        let i = self.last?;
        let s = &self.streams[i];
        let (_, start, len) = s.cur?;
        let bytes = match s.src {
            Source::Mapped => EventBytes::Mapped(s.region),
            Source::Chunked { .. } => EventBytes::Chunk {
                stream: i as u32,
                serial: s.serial,
                bytes: &s.buf,
            },
        };
        Some((bytes, start, len))
    }

    /// Take the record [`Reader::peek_same_buffer`] returned: it will not
    /// be returned by `next_record` (nor the lost-events marker before it).
    pub fn consume_peeked(&mut self) {
        if let Some(i) = self.peeked.take() {
            self.streams[i].lost = None;
            self.last = Some(i);
        }
    }

    fn advance(&mut self, i: usize) -> Result<()> {
        // a damaged page ends with an error; keep going after it (bounded:
        // every error moves the stream forward by at least a page or chunk)
        loop {
            match self.streams[i].advance() {
                Ok(()) => return Ok(()),
                Err(e) => {
                    if self.strict {
                        self.failed = true;
                        return Err(e);
                    }
                    self.damage.push_back(e);
                }
            }
        }
    }
}

impl RecordSource for Reader<'_> {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn progress(&self) -> Option<Progress> {
        Some(Reader::progress(self)).filter(|p| p.total > 0)
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>> {
        self.peeked = None;
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        if self.failed {
            return Ok(None);
        }
        if let Some(e) = self.damage.pop_front() {
            return Ok(Some(Record::Damage(e)));
        }
        if let Some(i) = self.last.take() {
            self.advance(i)?;
            if let Some(e) = self.damage.pop_front() {
                return Ok(Some(Record::Damage(e)));
            }
        }
        // pick the smallest (ts, stream index)
        let mut best: Option<(u64, usize)> = None;
        for (i, s) in self.streams.iter().enumerate() {
            if let Some((ts, _, _)) = s.cur {
                if best.is_none() || best.is_some_and(|(bts, _)| ts < bts) {
                    best = Some((ts, i));
                }
            }
        }
        let Some((ts, i)) = best else {
            return Ok(None);
        };
        let s = &mut self.streams[i];
        if let Some(count) = s.lost.take() {
            return Ok(Some(Record::Lost(Lost {
                stream: i as u32,
                cpu: s.cpu,
                ts,
                count,
            })));
        }
        self.last = Some(i);
        let s = &self.streams[i];
        let (_, start, len) = s.cur.expect("selected stream has an event");
        let data = &s.block()[start..start + len];
        let ext = ext_of(s.block(), start, len);
        let type_id = self.endian.read_uint(data, 2).unwrap_or(0) as u32;
        let pid = self
            .endian
            .read_uint(data.get(4..).unwrap_or(&[]), 4)
            .map_or(-1, |v| v as u32 as i32);
        Ok(Some(Record::Event(Event {
            ts,
            stream: i as u32,
            cpu: s.cpu,
            type_id,
            class: self.meta.classes.get(type_id),
            pid,
            data,
            ext,
            endian: self.endian,
            file_pos: s.file_end,
            tape: None,
            raw_ts: None,
        })))
    }
}

impl tracemux_core::merge::PeekSource for Reader<'_> {
    fn peek_ts(&mut self) -> Result<Option<u64>> {
        if self.failed {
            return Ok(None);
        }
        if !self.damage.is_empty() || self.deferred.is_some() {
            return Ok(Some(0));
        }
        if let Some(i) = self.last.take() {
            self.advance(i)?;
            if !self.damage.is_empty() {
                return Ok(Some(0));
            }
        }
        Ok(self.streams.iter().filter_map(|s| s.cur.map(|c| c.0)).min())
    }
}

/// The page layout `trace-cmd report` reads a buffer with: the top buffer
/// with the file header's page size, instances with their own.
pub fn page_layout(t: &TraceDat<'_>, b: &crate::file::Buffer) -> PageLayout {
    let hp = tracemux_ftrace::format::parse_header_page(
        &String::from_utf8_lossy(&t.header_page),
        t.long_size,
    );
    PageLayout {
        endian: t.endian,
        commit_size: hp.commit_size,
        data_offset: hp.data_offset,
        page_size: if b.name.is_empty() {
            t.page_size
        } else {
            b.page_size
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtoll_like_c() {
        assert_eq!(strtoll("0x10"), 16);
        assert_eq!(strtoll("-5xyz"), -5);
        assert_eq!(strtoll("010"), 8);
        assert_eq!(strtoll("junk"), 0);
        assert_eq!(strtoll("0xffffffffffffffffff"), i64::MAX);
        assert_eq!(strtoll("-99999999999999999999"), i64::MIN);
    }

    #[test]
    fn tsc_conversion() {
        assert_eq!(mul_u64_u32_shr(1000, 3, 1), 1500);
        let big = (5u64 << 32) + 7;
        assert_eq!(mul_u64_u32_shr(big, 1 << 10, 10), big);
    }
}
