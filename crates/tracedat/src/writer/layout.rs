//! File layout: the v6 sequential file and the v7 section file.
//!
//! v6: initial header, header_page/header_event, formats, kallsyms,
//! printk, cmdlines, CPU count, `options  ` + options + bare `0`, then
//! either `latency  ` + text, or `flyrecord` + CPU table + clock trailer +
//! page-aligned CPU data, followed by each instance's own `flyrecord`
//! block (pointed at by its BUFFER option).
//!
//! v7: initial header, the metadata sections (16–21), an options section
//! (section references, the given options, CPUCOUNT), then per buffer a
//! data section (3 or 22) followed by an options section holding its
//! BUFFER / BUFFER_TEXT option, all chained by DONE, and the strings
//! section last — the order trace-cmd 3.1.6 writes.

use std::borrow::Cow;
use std::io::SeekFrom;

use super::pages::{pack_pages, put_uint};
use super::text::{encode_option, HEADER_EVENT};
use super::{
    compress, BufferData, Compression, Compressor, PageSpill, TraceData, TraceFile, WriteError,
    WriteSeek,
};
use crate::file::{section_id, MAGIC, SECTION_COMPRESSED};
use crate::options::OptionId;
use tracemux_core::bytes::Endian;

/// Pages per compressed chunk (trace-cmd's `PAGES_IN_CHUNK`).
const PAGES_IN_CHUNK: usize = 10;
/// Chunk size of compressed latency text: 10 × the recorder's page size.
const LATENCY_CHUNK: usize = PAGES_IN_CHUNK * 4096;
/// Bytes copied at a time from a spill file into an uncompressed output.
const COPY_CHUNK: usize = 1 << 20;

/// Where written bytes go: memory (metadata pieces) or the output file.
enum Sink<'w> {
    Mem(Vec<u8>),
    Stream(&'w mut dyn WriteSeek),
}

/// An output writing integers in one endianness. Write errors are kept
/// (and later writes skipped) until [`Out::finish`].
pub(super) struct Out<'w> {
    sink: Sink<'w>,
    pos: u64,
    e: Endian,
    err: Option<std::io::Error>,
}

impl<'w> Out<'w> {
    fn mem(e: Endian) -> Out<'static> {
        Out {
            sink: Sink::Mem(Vec::new()),
            pos: 0,
            e,
            err: None,
        }
    }
    fn stream(w: &'w mut dyn WriteSeek, e: Endian) -> Self {
        Out {
            sink: Sink::Stream(w),
            pos: 0,
            e,
            err: None,
        }
    }
    /// The bytes of a memory output.
    fn into_vec(self) -> Vec<u8> {
        match self.sink {
            Sink::Mem(v) => v,
            Sink::Stream(_) => Vec::new(),
        }
    }
    /// Flush a stream output; the first write error, if any.
    fn finish(mut self) -> Result<(), WriteError> {
        if self.err.is_none() {
            if let Sink::Stream(w) = &mut self.sink {
                if let Err(e) = w.flush() {
                    self.err = Some(e);
                }
            }
        }
        match self.err {
            Some(e) => Err(WriteError(format!("cannot write: {e}"))),
            None => Ok(()),
        }
    }
    fn pos(&self) -> u64 {
        self.pos
    }
    fn uint(&mut self, v: u64, n: usize) {
        let mut b = Vec::with_capacity(8);
        put_uint(&mut b, self.e, v, n);
        self.bytes(&b);
    }
    fn u16(&mut self, v: u16) {
        self.uint(v as u64, 2);
    }
    fn u32(&mut self, v: u32) {
        self.uint(v as u64, 4);
    }
    fn u64(&mut self, v: u64) {
        self.uint(v, 8);
    }
    fn bytes(&mut self, b: &[u8]) {
        self.pos += b.len() as u64;
        match &mut self.sink {
            Sink::Mem(v) => v.extend_from_slice(b),
            Sink::Stream(w) => {
                if self.err.is_none() {
                    if let Err(e) = w.write_all(b) {
                        self.err = Some(e);
                    }
                }
            }
        }
    }
    fn cstr(&mut self, s: &str) {
        self.bytes(s.as_bytes());
        self.bytes(&[0]);
    }
    /// Overwrite the 8-byte integer at `at`.
    fn patch_u64(&mut self, at: u64, v: u64) {
        let mut b = Vec::new();
        put_uint(&mut b, self.e, v, 8);
        match &mut self.sink {
            Sink::Mem(buf) => {
                let at = at as usize;
                buf[at..at + 8].copy_from_slice(&b);
            }
            Sink::Stream(w) => {
                if self.err.is_some() {
                    return;
                }
                let end = self.pos;
                let r = (|| {
                    w.seek(SeekFrom::Start(at))?;
                    w.write_all(&b)?;
                    w.seek(SeekFrom::Start(end))?;
                    Ok(())
                })();
                if let Err(e) = r {
                    self.err = Some(e);
                }
            }
        }
    }
    /// Zero-fill up to a multiple of `align`.
    fn align(&mut self, align: u64) {
        let p = self.pos().div_ceil(align) * align;
        let n = (p - self.pos) as usize;
        if n > 0 {
            self.bytes(&vec![0; n]);
        }
    }
}

fn initial_header<'w>(f: &TraceFile, w: &'w mut dyn WriteSeek) -> Out<'w> {
    let mut o = Out::stream(w, f.endian);
    o.bytes(MAGIC);
    o.cstr(&f.version.to_string());
    o.bytes(&[u8::from(f.endian == Endian::Big), f.long_size]);
    o.u32(f.page_size);
    o
}

// ---- metadata pieces, identical in v6 and in v7 sections ----------------

fn headers(f: &TraceFile, o: &mut Out) {
    let hp = f.header_page_text();
    let he = f
        .header_event
        .clone()
        .unwrap_or_else(|| HEADER_EVENT.as_bytes().to_vec());
    o.bytes(b"header_page\0");
    o.u64(hp.len() as u64);
    o.bytes(&hp);
    o.bytes(b"header_event\0");
    o.u64(he.len() as u64);
    o.bytes(&he);
}

fn ftrace_formats(f: &TraceFile, o: &mut Out) {
    o.u32(f.ftrace_formats.len() as u32);
    for t in &f.ftrace_formats {
        o.u64(t.len() as u64);
        o.bytes(t);
    }
}

fn event_systems(f: &TraceFile, o: &mut Out) {
    o.u32(f.systems.len() as u32);
    for (name, evs) in &f.systems {
        o.cstr(name);
        o.u32(evs.len() as u32);
        for t in evs {
            o.u64(t.len() as u64);
            o.bytes(t);
        }
    }
}

fn sized_u32(t: &[u8], o: &mut Out) {
    o.u32(t.len() as u32);
    o.bytes(t);
}

fn cmdlines(f: &TraceFile, o: &mut Out) {
    o.u64(f.cmdlines.len() as u64);
    o.bytes(&f.cmdlines);
}

/// Pages of one CPU: in memory (pre-packed ones borrowed) or a range of
/// the spill file.
enum Pages<'b> {
    Mem(Cow<'b, [u8]>),
    Spilled { offset: u64, len: u64 },
}

impl Pages<'_> {
    fn len(&self) -> u64 {
        match self {
            Pages::Mem(p) => p.len() as u64,
            Pages::Spilled { len, .. } => *len,
        }
    }

    /// Call `f` on consecutive pieces of at most `chunk` bytes (all of
    /// them `chunk` bytes but the last).
    fn for_chunks(
        &self,
        chunk: usize,
        spill: &mut Option<&mut PageSpill>,
        f: &mut dyn FnMut(&[u8]) -> Result<(), WriteError>,
    ) -> Result<(), WriteError> {
        match self {
            Pages::Mem(p) => p.chunks(chunk).try_for_each(f),
            Pages::Spilled { offset, len } => {
                let spill = spill
                    .as_deref_mut()
                    .ok_or_else(|| WriteError("spilled pages without a spill file".into()))?;
                let mut buf = vec![0; chunk.min(*len as usize)];
                let mut done = 0;
                while done < *len {
                    let n = (*len - done).min(chunk as u64) as usize;
                    spill
                        .read_at(offset + done, &mut buf[..n])
                        .map_err(|e| WriteError(format!("cannot read the spill file: {e}")))?;
                    f(&buf[..n])?;
                    done += n as u64;
                }
                Ok(())
            }
        }
    }

    /// Write the pages as they are.
    fn copy_to(&self, o: &mut Out, spill: &mut Option<&mut PageSpill>) -> Result<(), WriteError> {
        self.for_chunks(COPY_CHUNK, spill, &mut |c| {
            o.bytes(c);
            Ok(())
        })
    }
}

/// One CPU's pages: (cpu, pages).
type CpuPages<'b> = (u32, Pages<'b>);

/// Pages of every CPU stream of `b`.
fn buffer_pages<'b>(f: &TraceFile, b: &'b BufferData) -> Result<Vec<CpuPages<'b>>, WriteError> {
    let fmt = f.page_format(b);
    let mut v = Vec::new();
    for c in &b.cpus {
        let pages = pack_pages(&c.items, fmt)
            .map_err(|e| WriteError(format!("buffer \"{}\" cpu {}: {}", b.name, c.cpu, e.0)))?;
        v.push((c.cpu, Pages::Mem(Cow::Owned(pages))));
    }
    let whole = |cpu: u32, len: u64| {
        if len % fmt.page_size as u64 != 0 {
            return Err(WriteError(format!(
                "buffer \"{}\" cpu {cpu}: packed data is not whole pages",
                b.name
            )));
        }
        Ok(())
    };
    for (cpu, pages) in &b.packed {
        whole(*cpu, pages.len() as u64)?;
        v.push((*cpu, Pages::Mem(Cow::Borrowed(&pages[..]))));
    }
    for &(cpu, offset, len) in &b.spilled {
        whole(cpu, len)?;
        v.push((cpu, Pages::Spilled { offset, len }));
    }
    Ok(v)
}

// ---- v6 -----------------------------------------------------------------

/// The most CPUs a version 6 CPU table is written for (Linux builds for
/// at most 8192, `CONFIG_NR_CPUS`): a larger count or CPU number comes from
/// damage, and would size the table (16 bytes a CPU) and its bookkeeping.
pub const MAX_V6_CPUS: u32 = 1 << 16;

/// `flyrecord` + CPU table + clock trailer + CPU data of one buffer.
fn v6_flyrecord(
    f: &TraceFile,
    b: &BufferData,
    o: &mut Out,
    spill: &mut Option<&mut PageSpill>,
) -> Result<(), WriteError> {
    let ps = f.page_size as u64;
    if b.page_size.is_some_and(|p| p != f.page_size) {
        return Err(WriteError("v6 buffers use the file's page size".into()));
    }
    if f.cpus > MAX_V6_CPUS {
        return Err(WriteError(format!(
            "a version 6 file has a table entry for every CPU below its CPU count; {} CPUs is \
             past the {MAX_V6_CPUS} written (a damaged CPU number or count?)",
            f.cpus
        )));
    }
    let mut pages: Vec<Vec<Pages>> = (0..f.cpus).map(|_| Vec::new()).collect();
    for (cpu, p) in buffer_pages(f, b)? {
        let slot = pages
            .get_mut(cpu as usize)
            .ok_or_else(|| WriteError(format!("cpu {cpu} not below the CPU count {}", f.cpus)))?;
        slot.push(p);
    }
    o.bytes(b"flyrecord\0");
    let table = o.pos();
    for _ in 0..f.cpus {
        o.u64(0);
        o.u64(0);
    }
    if !b.clock.is_empty() {
        let c = format!("[{}]", b.clock);
        o.u64(c.len() as u64);
        o.bytes(c.as_bytes());
    }
    for (i, p) in pages.iter().enumerate() {
        o.align(ps);
        let at = table + 16 * i as u64;
        let len: u64 = p.iter().map(|x| x.len()).sum();
        if len > 0 {
            o.patch_u64(at, o.pos());
            o.patch_u64(at + 8, len);
        }
        for x in p {
            x.copy_to(o, spill)?;
        }
    }
    Ok(())
}

pub(super) fn write_v6(
    f: &TraceFile,
    w: &mut dyn WriteSeek,
    mut spill: Option<&mut PageSpill>,
) -> Result<(), WriteError> {
    if f.compression != Compression::None {
        return Err(WriteError("v6 files cannot be compressed".into()));
    }
    let mut o = initial_header(f, w);
    headers(f, &mut o);
    ftrace_formats(f, &mut o);
    event_systems(f, &mut o);
    sized_u32(&f.kallsyms, &mut o);
    sized_u32(&f.printk, &mut o);
    cmdlines(f, &mut o);
    o.u32(f.cpus);
    o.bytes(b"options  \0");
    for opt in &f.options {
        let (id, data) = encode_option(opt, f.endian);
        o.u16(id);
        o.u32(data.len() as u32);
        o.bytes(&data);
    }
    // BUFFER options of instances: u64 offset (patched below) + name.
    let buffers: &[BufferData] = match &f.data {
        TraceData::Flyrecord(b) => b,
        TraceData::Latency { .. } => &[],
    };
    let mut patches = Vec::new();
    for b in buffers.iter().skip(1) {
        o.u16(OptionId::BUFFER.0);
        o.u32(8 + b.name.len() as u32 + 1);
        patches.push(o.pos());
        o.u64(0);
        o.cstr(&b.name);
    }
    o.u16(0);
    match &f.data {
        TraceData::Latency { text, .. } => {
            o.bytes(b"latency  \0");
            o.bytes(text);
        }
        TraceData::Flyrecord(bufs) => {
            if bufs.first().is_some_and(|b| !b.name.is_empty()) {
                return Err(WriteError(
                    "v6: the first buffer must be the top one".into(),
                ));
            }
            let empty = BufferData::default();
            v6_flyrecord(f, bufs.first().unwrap_or(&empty), &mut o, &mut spill)?;
            for (b, at) in bufs.iter().skip(1).zip(patches) {
                o.align(f.page_size as u64);
                o.patch_u64(at, o.pos());
                v6_flyrecord(f, b, &mut o, &mut spill)?;
            }
        }
    }
    o.finish()
}

// ---- v7 -----------------------------------------------------------------

struct V7<'w, 's> {
    o: Out<'w>,
    strings: Vec<u8>,
    comp: Compression,
    spill: Option<&'s mut PageSpill>,
}

impl V7<'_, '_> {
    fn string(&mut self, s: &str) -> u32 {
        let id = self.strings.len() as u32;
        self.strings.extend_from_slice(s.as_bytes());
        self.strings.push(0);
        id
    }

    /// Write a section header with a 0 size; returns (header offset, body start).
    fn section_start(&mut self, id: u16, desc: &str, compressed: bool) -> (u64, u64) {
        let desc = self.string(desc);
        let at = self.o.pos();
        self.o.u16(id);
        self.o.u16(if compressed { SECTION_COMPRESSED } else { 0 });
        self.o.u32(desc);
        self.o.u64(0);
        (at, self.o.pos())
    }

    fn section_end(&mut self, (at, body): (u64, u64)) {
        let size = self.o.pos() - body;
        self.o.patch_u64(at + 8, size);
    }

    /// A metadata section: the body compressed as one block when the file
    /// is compressed. Returns the section's offset.
    fn meta(&mut self, id: u16, desc: &str, body: &[u8]) -> Result<u64, WriteError> {
        let compressed = self.comp != Compression::None;
        let s = self.section_start(id, desc, compressed);
        if compressed {
            let z = compress(self.comp, body)?;
            self.o.u32(z.len() as u32);
            self.o.u32(body.len() as u32);
            self.o.bytes(&z);
        } else {
            self.o.bytes(body);
        }
        self.section_end(s);
        Ok(s.0)
    }

    /// Data as stored: raw, or `u32 count` + chunks of `chunk` input bytes.
    /// Returns the size trace-cmd records (without the count).
    fn data(&mut self, d: &Pages, chunk: usize) -> Result<u64, WriteError> {
        if self.comp == Compression::None {
            d.copy_to(&mut self.o, &mut self.spill)?;
            return Ok(d.len());
        }
        self.o.u32(d.len().div_ceil(chunk as u64) as u32);
        let start = self.o.pos();
        let (o, comp) = (&mut self.o, self.comp);
        let mut batch = Batch::new(comp, chunk);
        d.for_chunks(chunk, &mut self.spill, &mut |c| {
            if batch.push(c) {
                batch.flush(o)?;
            }
            Ok(())
        })?;
        batch.flush(o)?;
        Ok(self.o.pos() - start)
    }

    /// An options section holding `opts` and DONE; returns (section
    /// offset, offset of the DONE payload for chaining).
    fn options(&mut self, opts: &[(u16, Vec<u8>)]) -> (u64, u64) {
        let s = self.section_start(section_id::OPTIONS, "options", false);
        for (id, data) in opts {
            self.o.u16(*id);
            self.o.u32(data.len() as u32);
            self.o.bytes(data);
        }
        self.o.u16(OptionId::DONE.0);
        self.o.u32(8);
        let done = self.o.pos();
        self.o.u64(0);
        self.section_end(s);
        (s.0, done)
    }
}

/// Chunks of pages gathered to be compressed on every core there is, then
/// written in their order: the same bytes as compressing them one by one
/// (a zstd frame depends only on its input and the level).
struct Batch {
    comp: Compression,
    chunk: usize,
    /// The chunks' bytes, one after the other; `ends[i]` is where chunk
    /// `i` ends.
    data: Vec<u8>,
    ends: Vec<usize>,
    /// Threads that compress: this one and `workers - 1` more.
    workers: usize,
}

/// Chunks a batch holds before it is compressed (of 10 pages each: 2.6 MB
/// with 4 KB pages).
const BATCH_CHUNKS: usize = 64;

impl Batch {
    fn new(comp: Compression, chunk: usize) -> Batch {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        Batch {
            comp,
            chunk,
            data: Vec::new(),
            ends: Vec::new(),
            workers,
        }
    }

    /// Add a chunk; true when the batch is full.
    fn push(&mut self, c: &[u8]) -> bool {
        if self.data.capacity() == 0 {
            self.data
                .reserve_exact(self.chunk.saturating_mul(BATCH_CHUNKS));
        }
        self.data.extend_from_slice(c);
        self.ends.push(self.data.len());
        self.ends.len() >= BATCH_CHUNKS
    }

    /// Compress the chunks held and write each as trace-cmd stores it
    /// (compressed size, input size, bytes).
    fn flush(&mut self, o: &mut Out) -> Result<(), WriteError> {
        let n = self.ends.len();
        if n == 0 {
            return Ok(());
        }
        let chunks: Vec<&[u8]> = (0..n)
            .map(|i| {
                let a = if i == 0 { 0 } else { self.ends[i - 1] };
                &self.data[a..self.ends[i]]
            })
            .collect();
        let comp = self.comp;
        let per = n.div_ceil(self.workers.max(1));
        let mut parts: Vec<Result<Vec<Vec<u8>>, WriteError>> = Vec::new();
        std::thread::scope(|s| {
            let mut groups = chunks.chunks(per.max(1));
            let first = groups.next().unwrap_or(&[]);
            let others: Vec<_> = groups
                .map(|g| s.spawn(move || compress_all(comp, g)))
                .collect();
            parts.push(compress_all(comp, first));
            for h in others {
                parts.push(
                    h.join()
                        .unwrap_or_else(|_| Err(WriteError("a compression thread failed".into()))),
                );
            }
        });
        let mut i = 0;
        for part in parts {
            for z in part? {
                o.u32(z.len() as u32);
                o.u32(chunks[i].len() as u32);
                o.bytes(&z);
                i += 1;
            }
        }
        self.data.clear();
        self.ends.clear();
        Ok(())
    }
}

/// Every chunk of `g` compressed, in order, with one compressor.
fn compress_all(c: Compression, g: &[&[u8]]) -> Result<Vec<Vec<u8>>, WriteError> {
    let mut z = Compressor::new(c)?;
    g.iter().map(|d| z.compress(d)).collect()
}

fn section_ref(id: OptionId, off: u64, e: Endian) -> (u16, Vec<u8>) {
    let mut d = Vec::new();
    put_uint(&mut d, e, off, 8);
    (id.0, d)
}

pub(super) fn write_v7(
    f: &TraceFile,
    w: &mut dyn WriteSeek,
    spill: Option<&mut PageSpill>,
) -> Result<(), WriteError> {
    let e = f.endian;
    let mut o = initial_header(f, w);
    o.cstr(f.compression.name());
    o.cstr(
        f.compression_version
            .as_deref()
            .unwrap_or(f.compression.default_version()),
    );
    let first_options_at = o.pos();
    o.u64(0);
    let mut w = V7 {
        o,
        strings: Vec::new(),
        comp: f.compression,
        spill,
    };
    let mut opts = Vec::new();
    let piece = |g: &dyn Fn(&mut Out)| {
        let mut p = Out::mem(e);
        g(&mut p);
        p.into_vec()
    };
    let metas: [(u16, &str, Vec<u8>); 6] = [
        (16, "headers", piece(&|p| headers(f, p))),
        (17, "ftrace events", piece(&|p| ftrace_formats(f, p))),
        (18, "events format", piece(&|p| event_systems(f, p))),
        (19, "kallsyms", piece(&|p| sized_u32(&f.kallsyms, p))),
        (20, "printk", piece(&|p| sized_u32(&f.printk, p))),
        (21, "command lines", piece(&|p| cmdlines(f, p))),
    ];
    let mut cmdlines_ref = None;
    for (id, desc, body) in metas {
        let off = w.meta(id, desc, &body)?;
        let r = section_ref(OptionId(id), off, e);
        // trace-cmd lists CMDLINES after the other options
        if id == section_id::CMDLINES {
            cmdlines_ref = Some(r);
        } else {
            opts.push(r);
        }
    }
    opts.extend(f.options.iter().map(|x| encode_option(x, e)));
    opts.extend(cmdlines_ref);
    let mut cpucount = Vec::new();
    put_uint(&mut cpucount, e, f.cpus as u64, 4);
    opts.push((OptionId::CPUCOUNT.0, cpucount));
    let (first, mut done) = w.options(&opts);
    w.o.patch_u64(first_options_at, first);

    match &f.data {
        TraceData::Latency { clock, text } => {
            let s = w.section_start(
                section_id::BUFFER_TEXT,
                "buffer latency",
                f.compression != Compression::None,
            );
            w.data(&Pages::Mem(Cow::Borrowed(text)), LATENCY_CHUNK)?;
            w.section_end(s);
            let mut d = Vec::new();
            put_uint(&mut d, e, s.0, 8);
            d.push(0); // name "" (top)
            d.extend_from_slice(clock.as_bytes());
            d.push(0);
            let (next, _) = w.options(&[(OptionId::BUFFER_TEXT.0, d)]);
            w.o.patch_u64(done, next);
        }
        TraceData::Flyrecord(bufs) => {
            for b in bufs {
                let ps = b.page_size.unwrap_or(f.page_size);
                let align = ps.max(f.page_size) as u64;
                let pages = buffer_pages(f, b)?;
                let s = w.section_start(
                    section_id::BUFFER,
                    &format!("buffer flyrecord {}", b.name),
                    f.compression != Compression::None,
                );
                let mut table = Vec::new();
                for (cpu, p) in &pages {
                    if p.len() == 0 {
                        continue; // trace-cmd leaves out CPUs without data
                    }
                    w.o.align(align);
                    let at = w.o.pos();
                    let size = w.data(p, PAGES_IN_CHUNK * ps as usize)?;
                    table.push((*cpu, at, size));
                }
                w.section_end(s);
                let mut d = Vec::new();
                put_uint(&mut d, e, s.0, 8);
                d.extend_from_slice(b.name.as_bytes());
                d.push(0);
                d.extend_from_slice(b.clock.as_bytes());
                d.push(0);
                put_uint(&mut d, e, ps as u64, 4);
                put_uint(&mut d, e, table.len() as u64, 4);
                for (cpu, at, size) in table {
                    put_uint(&mut d, e, cpu as u64, 4);
                    put_uint(&mut d, e, at, 8);
                    put_uint(&mut d, e, size, 8);
                }
                let (next, next_done) = w.options(&[(OptionId::BUFFER.0, d)]);
                w.o.patch_u64(done, next);
                done = next_done;
            }
        }
    }
    // The strings section names itself, so its description goes in first.
    let compressed = f.compression != Compression::None;
    let desc = w.string("strings");
    let strings = std::mem::take(&mut w.strings);
    let at = w.o.pos();
    w.o.u16(section_id::STRINGS);
    w.o.u16(if compressed { SECTION_COMPRESSED } else { 0 });
    w.o.u32(desc);
    w.o.u64(0);
    let body = w.o.pos();
    if compressed {
        let z = compress(f.compression, &strings)?;
        w.o.u32(z.len() as u32);
        w.o.u32(strings.len() as u32);
        w.o.bytes(&z);
    } else {
        w.o.bytes(&strings);
    }
    let size = w.o.pos() - body;
    w.o.patch_u64(at + 8, size);
    w.o.finish()
}
