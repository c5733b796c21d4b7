//! trace-cmd dump's view: the metadata of a trace.dat, printed exactly as
//! `trace-cmd dump` (3.1.6) prints it (`tracemux dump` is its command line).
//!
//! trace-cmd's dump does not use the parsed container: it walks the file
//! from the start, printing each piece as it reads it, and which pieces are
//! printed depends on a mask of selected items. This module does the same
//! walk over the mapped file, so its output follows the file byte for byte
//! (raw sizes, option order, the recursion into chained options sections,
//! the reverse order of the metadata sections). The differences are only in
//! how damage is handled: where trace-cmd dies (or reads out of bounds), the
//! walk stops, keeps what it printed and reports the damage on stderr.

use std::io::{self, Write};
use std::path::Path;

use crate::compress::{Codec, Decoder};
use crate::TraceDat;
use tracemux_core::bytes::Endian;

mod options;

/// The items of trace-cmd dump's mask (what [`dump`] prints).
pub const SUMMARY: u32 = 1 << 0;
pub const HEAD_PAGE: u32 = 1 << 1;
pub const HEAD_EVENT: u32 = 1 << 2;
pub const FTRACE_FORMAT: u32 = 1 << 3;
pub const EVENT_SYSTEMS: u32 = 1 << 4;
pub const EVENT_FORMAT: u32 = 1 << 5;
pub const KALLSYMS: u32 = 1 << 6;
pub const TRACE_PRINTK: u32 = 1 << 7;
pub const CMDLINES: u32 = 1 << 8;
pub const OPTIONS: u32 = 1 << 9;
pub const FLYRECORD: u32 = 1 << 10;
pub const CLOCK: u32 = 1 << 11;
pub const SECTIONS: u32 = 1 << 12;
pub const STRINGS: u32 = 1 << 13;

/// trace-cmd reads strings (names, versions) into 1024-byte buffers.
const DUMP_SIZE: usize = 1024;
/// The first option id trace-cmd 3.1.6 does not know (its TRACECMD_OPTION_MAX).
const OPTION_MAX: u16 = 23;
/// Bit 0 of a v7 section's flags: the body is compressed.
const SEC_COMPRESSED: u16 = 1;

/// trace-cmd dump of the trace.dat `file` (named `path` in the summary)
/// with the items of `mask` (bits above; trace-cmd's default is
/// [`SUMMARY`]) written to `out`. `Ok(None)`: the walk reached the end;
/// `Ok(Some(message))`: it stopped at damage, with trace-cmd's message
/// where it has one, keeping what it printed; `Err`: writing failed.
pub fn dump(
    file: &[u8],
    path: &Path,
    mask: u32,
    out: &mut dyn Write,
) -> io::Result<Option<String>> {
    match Dumper::new(file, mask, out).dump_file(path) {
        Ok(()) => Ok(None),
        Err(Stop::Io(e)) => Err(e),
        Err(Stop::Die(m)) => Ok(Some(m)),
    }
}

/// Per-CPU trace data that runs past the end of the file (a truncated
/// file: dump does not read the data, but the trace is damaged).
pub fn data_past_end(t: &TraceDat<'_>) -> Vec<String> {
    let len = t.data.len() as u64;
    let mut v = Vec::new();
    for b in &t.buffers {
        for c in &b.cpus {
            if c.size == 0 {
                continue;
            }
            // compressed data starts with a 4-byte chunk count the size leaves out
            let extra = if b.compressed { 4 } else { 0 };
            let end = c.offset.saturating_add(c.size).saturating_add(extra);
            if end > len {
                v.push(format!(
                    "CPU {} data of buffer \"{}\" ends at {} but the file has {} bytes (truncated?)",
                    c.cpu, b.name, end, len
                ));
            }
        }
    }
    v
}

/// Why the walk stopped early.
enum Stop {
    /// Writing the output failed.
    Io(io::Error),
    /// The file is damaged; the message says what could not be read
    /// (trace-cmd's `die` message where it has one).
    Die(String),
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Self {
        Stop::Io(e)
    }
}

type R<T> = std::result::Result<T, Stop>;

fn die<T>(m: impl Into<String>) -> R<T> {
    Err(Stop::Die(m.into()))
}

/// A decompressed block being read instead of the file.
struct Block {
    data: Vec<u8>,
    pos: usize,
}

struct Dumper<'a, 'o> {
    file: &'a [u8],
    /// Position in the file (may point past its end, as lseek allows).
    pos: u64,
    /// While set, reads come from this block (trace-cmd's `read_compress`).
    block: Option<Block>,
    endian: Endian,
    mask: u32,
    out: &'o mut dyn Write,
    version: u64,
    /// The compression handle: `None` for uncompressed files.
    codec: Option<Codec>,
    /// All v7 STRINGS sections, concatenated.
    strings: Vec<u8>,
    /// A TRACECLOCK option was seen (v6: the flyrecord clock is stored).
    has_clock: bool,
    /// v7 metadata sections named by options, most recent first.
    sections: Vec<(u16, u64, u32)>,
    /// v6 header CPU count.
    cpus: u32,
}

/// `%10.lld`: precision 0, so a zero prints as nothing, padded to 10.
fn pad10(v: i64) -> String {
    if v == 0 {
        " ".repeat(10)
    } else {
        format!("{v:>10}")
    }
}

/// Bytes up to the first NUL (C's `%s`).
fn cstr(b: &[u8]) -> &[u8] {
    let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    &b[..n]
}

impl<'a, 'o> Dumper<'a, 'o> {
    fn new(file: &'a [u8], mask: u32, out: &'o mut dyn Write) -> Self {
        Dumper {
            file,
            pos: 0,
            block: None,
            endian: Endian::Little,
            mask,
            out,
            version: 0,
            codec: None,
            strings: Vec::new(),
            has_clock: false,
            sections: Vec::new(),
            cpus: 0,
        }
    }

    // ---- output ---------------------------------------------------------

    #[inline]
    fn on(&self, ids: u32) -> bool {
        ids == 0 || ids & self.mask != 0
    }

    fn put(&mut self, ids: u32, b: &[u8]) -> R<()> {
        if self.on(ids) {
            self.out.write_all(b)?;
        }
        Ok(())
    }

    fn pf(&mut self, ids: u32, args: std::fmt::Arguments<'_>) -> R<()> {
        if self.on(ids) {
            self.out.write_fmt(args)?;
        }
        Ok(())
    }

    // ---- input ----------------------------------------------------------

    /// Read `n` bytes from the current source; `None` if fewer remain.
    fn read(&mut self, n: usize) -> Option<&[u8]> {
        match &mut self.block {
            Some(b) => {
                let s = b.data.get(b.pos..b.pos.checked_add(n)?)?;
                b.pos += n;
                Some(s)
            }
            None => {
                let start = usize::try_from(self.pos).ok()?;
                let s = self.file.get(start..start.checked_add(n)?)?;
                self.pos += n as u64;
                Some(s)
            }
        }
    }

    fn num(&mut self, n: usize) -> Option<u64> {
        let e = self.endian;
        let b = self.read(n)?;
        e.read_uint(b, n)
    }

    fn u16(&mut self) -> Option<u16> {
        self.num(2).map(|v| v as u16)
    }
    fn u32(&mut self) -> Option<u32> {
        self.num(4).map(|v| v as u32)
    }
    fn u64(&mut self) -> Option<u64> {
        self.num(8)
    }

    /// A NUL-terminated string of at most DUMP_SIZE bytes (NUL included).
    fn string(&mut self) -> Option<Vec<u8>> {
        let mut s = Vec::new();
        while s.len() < DUMP_SIZE {
            let c = self.read(1)?[0];
            if c == 0 {
                return Some(s);
            }
            s.push(c);
        }
        None
    }

    /// Position in the current source.
    fn tell(&self) -> u64 {
        match &self.block {
            Some(b) => b.pos as u64,
            None => self.pos,
        }
    }

    /// Move in the current source.
    fn seek(&mut self, to: u64) {
        match &mut self.block {
            Some(b) => b.pos = usize::try_from(to).unwrap_or(usize::MAX),
            None => self.pos = to,
        }
    }

    /// Move in the file; offsets that are negative as a C `off_t` fail.
    fn seek_file(&mut self, to: u64, what: &str) -> R<()> {
        if to > i64::MAX as u64 {
            return die(format!("cannot goto {what} {}", to as i64));
        }
        self.pos = to;
        Ok(())
    }

    /// trace-cmd's read_dump_string: `size` bytes in pieces of at most 1023,
    /// each printed up to its first NUL, then a newline.
    fn dump_string(&mut self, size: i32, ids: u32) -> R<()> {
        let mut size = size;
        let show = self.on(ids);
        while size != 0 {
            let lsize = if size < DUMP_SIZE as i32 {
                size
            } else {
                DUMP_SIZE as i32 - 1
            };
            if lsize < 0 {
                return die(format!("cannot read {lsize} bytes"));
            }
            let Some(piece) = self.read(lsize as usize) else {
                return die(format!("cannot read {lsize} bytes"));
            };
            if show {
                // copied: the piece borrows the input, the output is in self too
                let piece = cstr(piece).to_vec();
                self.out.write_all(&piece)?;
            }
            size -= lsize;
        }
        self.put(ids, b"\n")
    }

    /// Decompress the block at the file position and read from it.
    fn uncompress_block(&mut self, what: &str) -> R<()> {
        let Some(codec) = self.codec else {
            return Ok(());
        };
        self.block = None;
        let at = self.pos;
        let (Some(csize), Some(usize_)) = (self.u32(), self.u32()) else {
            return die(format!("cannot uncompress {what} block"));
        };
        let Some(input) = self.read(csize as usize) else {
            return die(format!("cannot uncompress {what} block"));
        };
        let mut data = Vec::new();
        if let Err(e) = Decoder::default().decompress(
            codec,
            input,
            usize_ as usize,
            &mut data,
            "compressed block",
            at,
        ) {
            return die(format!("cannot uncompress {what} block: {e}"));
        }
        self.block = Some(Block { data, pos: 0 });
        Ok(())
    }

    fn uncompress_reset(&mut self) {
        self.block = None;
    }

    fn meta_string(&self, id: i32) -> Option<&[u8]> {
        let i = usize::try_from(id)
            .ok()
            .filter(|&i| i < self.strings.len())?;
        Some(cstr(&self.strings[i..]))
    }

    // ---- the walk -------------------------------------------------------

    fn dump_file(&mut self, path: &Path) -> R<()> {
        self.put(SUMMARY, b"\n Tracing meta data in file ")?;
        self.put(SUMMARY, path.as_os_str().as_encoded_bytes())?;
        self.put(SUMMARY, b":\n")?;
        self.initial_format()?;
        self.compression()?;
        if self.version < 7 {
            self.v6_file()
        } else {
            self.v7_file()
        }
    }

    fn initial_format(&mut self) -> R<()> {
        self.put(SUMMARY, b"\t[Initial format]\n")?;
        match self.read(3) {
            None => return die("cannot read 3 bytes magic"),
            Some(m) if m != b"\x17\x08\x44" => return die("wrong file magic"),
            _ => {}
        }
        match self.read(7) {
            None => return die("cannot read 7 bytes tracing string"),
            Some(m) if m != b"tracing" => {
                let m = String::from_utf8_lossy(cstr(m)).into_owned();
                return die(format!("wrong tracing string: {m}"));
            }
            _ => {}
        }
        let Some(ver) = self.string() else {
            return die("no version string");
        };
        self.put(SUMMARY, b"\t\t")?;
        self.put(SUMMARY, &ver)?;
        self.put(SUMMARY, b"\t[Version]\n")?;
        // strtol(..., 10): leading decimal digits
        let digits: Vec<u8> = ver
            .iter()
            .copied()
            .skip_while(|c| c.is_ascii_whitespace())
            .take_while(|c| c.is_ascii_digit())
            .collect();
        self.version = std::str::from_utf8(&digits)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(if digits.is_empty() { 0 } else { u64::MAX });
        if self.version > 7 {
            return die(format!("Unsupported file version {}", self.version));
        }
        let Some(&[e]) = self.read(1) else {
            return die("cannot read file endianness");
        };
        let e = e as i8;
        self.pf(
            SUMMARY,
            format_args!(
                "\t\t{}\t[{} endian]\n",
                e,
                if e != 0 { "Big" } else { "Little" }
            ),
        )?;
        self.endian = if e != 0 { Endian::Big } else { Endian::Little };
        let Some(&[l]) = self.read(1) else {
            return die("cannot read file bytes per long");
        };
        self.pf(
            SUMMARY,
            format_args!("\t\t{}\t[Bytes in a long]\n", l as i8),
        )?;
        let Some(ps) = self.u32() else {
            return die("cannot read file page size");
        };
        self.pf(
            SUMMARY,
            format_args!("\t\t{}\t[Page size, bytes]\n", ps as i32),
        )
    }

    fn compression(&mut self) -> R<()> {
        if self.version < 7 {
            return Ok(());
        }
        let Some(name) = self.string() else {
            return die("no compression header");
        };
        let Some(ver) = self.string() else {
            return die("no compression version");
        };
        self.put(SUMMARY, b"\t\t")?;
        self.put(SUMMARY, &name)?;
        self.put(SUMMARY, b"\t[Compression algorithm]\n\t\t")?;
        self.put(SUMMARY, &ver)?;
        self.put(SUMMARY, b"\t[Compression version]\n")?;
        if name != b"none" {
            match Codec::from_name(&String::from_utf8_lossy(&name)) {
                Some(c) if !name.is_empty() => self.codec = Some(c),
                _ => return die("cannot uncompress the file"),
            }
        }
        Ok(())
    }

    // ---- pieces shared by v6 and v7 --------------------------------------

    fn header_page(&mut self) -> R<()> {
        self.header_file(b"header_page", "Header page", HEAD_PAGE)
    }

    fn header_event(&mut self) -> R<()> {
        self.header_file(b"header_event", "Header event", HEAD_EVENT)
    }

    /// The header page and header event sections: a label string (with its
    /// NUL), a u64 size, then text. (trace-cmd's message about the size is
    /// the same for both.)
    fn header_file(&mut self, tag: &[u8], label: &str, id: u32) -> R<()> {
        self.pf(SUMMARY | id, format_args!("\t[{label}, "))?;
        match self.read(tag.len() + 1) {
            None => return die(format!("cannot read {} bytes header string", tag.len())),
            Some(b) if !b.starts_with(tag) => {
                let b = String::from_utf8_lossy(cstr(b)).into_owned();
                return die(format!("wrong header string: {b}"));
            }
            _ => {}
        }
        let Some(size) = self.u64() else {
            return die("cannot read the size of the page header information");
        };
        self.pf(SUMMARY | id, format_args!("{} bytes]\n", size as i64))?;
        self.dump_string(size as i32, id)
    }

    /// `\t[LABEL, N UNIT]` of a section that starts with a u32 count.
    fn count(&mut self, ids: u32, label: &str, unit: &str, what: &str) -> R<u32> {
        self.pf(SUMMARY | ids, format_args!("\t[{label}, "))?;
        let Some(n) = self.u32() else {
            return die(format!("cannot read the count of the {what}"));
        };
        self.pf(SUMMARY | ids, format_args!("{} {unit}]\n", n as i32))?;
        Ok(n)
    }

    /// One format: its size (u64), then its text; `missing` is the error
    /// when the size cannot be read.
    fn format(&mut self, id: u32, missing: impl FnOnce() -> String) -> R<()> {
        let Some(size) = self.u64() else {
            return die(missing());
        };
        self.dump_string(size as i32, id)
    }

    fn ftrace_formats(&mut self) -> R<()> {
        let count = self.count(FTRACE_FORMAT, "Ftrace format", "events", "ftrace events")?;
        for left in (1..=count).rev() {
            self.format(FTRACE_FORMAT, || {
                format!("cannot read the size of the {} ftrace event", left as i32)
            })?;
        }
        Ok(())
    }

    fn event_formats(&mut self) -> R<()> {
        let ids = EVENT_FORMAT | EVENT_SYSTEMS;
        let systems = self.count(ids, "Events format", "systems", "event systems")?;
        for left in (1..=systems).rev() {
            let Some(name) = self.string() else {
                return die(format!(
                    "cannot read the name of the {}th system",
                    left as i32
                ));
            };
            let Some(events) = self.u32() else {
                return die(format!(
                    "cannot read the count of the events in system {}",
                    String::from_utf8_lossy(&name)
                ));
            };
            self.put(EVENT_SYSTEMS, b"\t\t")?;
            self.put(EVENT_SYSTEMS, &name)?;
            self.pf(
                EVENT_SYSTEMS,
                format_args!(" {} [system, events]\n", events as i32),
            )?;
            for n in (1..=events).rev() {
                self.format(EVENT_FORMAT, || {
                    format!(
                        "cannot read the format size of the {}th event from system {}",
                        n as i32,
                        String::from_utf8_lossy(&name)
                    )
                })?;
            }
        }
        Ok(())
    }

    /// kallsyms, printk and the saved command lines: a size (u32, u64 for
    /// the command lines), then text. `%d` of the size prints its low 32
    /// bits, signed.
    fn sized(&mut self, label: &str, what: &str, id: u32, wide: bool) -> R<()> {
        self.pf(SUMMARY | id, format_args!("\t[{label}, "))?;
        let size = if wide {
            self.u64()
        } else {
            self.u32().map(u64::from)
        };
        let Some(size) = size else {
            return die(format!("cannot read the size of the {what}"));
        };
        self.pf(SUMMARY | id, format_args!("{} bytes]\n", size as i32))?;
        self.dump_string(size as i32, id)
    }

    fn kallsyms(&mut self) -> R<()> {
        self.sized("Kallsyms", "kallsyms", KALLSYMS, false)
    }

    fn printk(&mut self) -> R<()> {
        self.sized("Trace printk", "trace printk", TRACE_PRINTK, false)
    }

    fn cmdlines(&mut self) -> R<()> {
        self.sized("Saved command lines", "saved command lines", CMDLINES, true)
    }

    // ---- v6 ---------------------------------------------------------------

    fn v6_file(&mut self) -> R<()> {
        self.header_page()?;
        self.header_event()?;
        self.ftrace_formats()?;
        self.event_formats()?;
        self.kallsyms()?;
        self.printk()?;
        self.cmdlines()?;
        let Some(cpus) = self.u32() else {
            return die("cannot read the cpu count");
        };
        self.cpus = cpus;
        self.pf(
            SUMMARY,
            format_args!("\t{} [CPUs with tracing data]\n", cpus as i32),
        )?;
        // A loop over 10-byte tags; anything else ends it.
        loop {
            let Some(tag) = self.read(10) else {
                return die("cannot read the rest of the header");
            };
            match tag {
                b"options  \0" => self.options()?,
                b"latency  \0" => self.put(SUMMARY, b"\t[Latency tracing data]\n")?,
                b"flyrecord\0" => self.v6_flyrecord()?,
                _ => {
                    self.pos -= 10;
                    return Ok(());
                }
            }
        }
    }

    fn v6_flyrecord(&mut self) -> R<()> {
        self.put(SUMMARY | FLYRECORD, b"\t[Flyrecord tracing data]\n")?;
        for i in 0..self.cpus {
            let Some(off) = self.u64() else {
                return die(format!("cannot read the cpu {} offset", i as i32));
            };
            let Some(size) = self.u64() else {
                return die(format!("cannot read the cpu {} size", i as i32));
            };
            self.pf(
                FLYRECORD,
                format_args!(
                    "\t {} {}\t[offset, size of cpu {}]\n",
                    pad10(off as i64),
                    pad10(size as i64),
                    i as i32
                ),
            )?;
        }
        let m = SUMMARY | CLOCK;
        self.put(m, b"\t[Tracing clock]\n")?;
        if !self.has_clock {
            return self.put(m, b"\t\t No tracing clock saved in the file\n");
        }
        let Some(size) = self.u64() else {
            return die("cannot read clock size");
        };
        let Some(clock) = usize::try_from(size).ok().and_then(|n| self.read(n)) else {
            return die(format!("cannot read clock {} bytes", size as i64));
        };
        let clock = cstr(clock).to_vec();
        self.put(m, b"\t\t")?;
        self.put(m, &clock)?;
        self.put(m, b"\n")
    }

    // ---- options ----------------------------------------------------------

    // ---- v7 ---------------------------------------------------------------

    fn v7_file(&mut self) -> R<()> {
        let Some(first_options) = self.u64() else {
            return die("cannot read offset of the first option section");
        };
        let start = self.pos;
        self.read_strings()?;
        self.pos = start;
        let count = self.walk_sections()?;
        self.pos = start;
        self.seek_file(first_options, "options offset")?;
        self.options()?;
        self.metadata_sections(count)
    }

    /// Collect the STRINGS sections, walking the section headers from the
    /// current position until one cannot be read.
    fn read_strings(&mut self) -> R<()> {
        loop {
            let Some(id) = self.u16() else {
                return Ok(());
            };
            let Some(flags) = self.u16() else {
                return die("cannot read section flags");
            };
            if self.u32().is_none() {
                return die("cannot read section description");
            }
            let Some(size) = self.u64() else {
                return die("cannot read section size");
            };
            if id == 15 {
                let body = self.pos;
                let rsize = if flags & SEC_COMPRESSED != 0 {
                    let r = self.file_u32(body + 4).unwrap_or(0);
                    if self.uncompress_block("strings").is_err() {
                        return Ok(());
                    }
                    r
                } else {
                    size as u32
                };
                let Some(bytes) = self.read(rsize as usize).map(|b| b.to_vec()) else {
                    self.uncompress_reset();
                    return Ok(());
                };
                self.print_strings(&bytes)?;
                self.uncompress_reset();
            } else {
                match self.pos.checked_add(size) {
                    Some(p) if p <= i64::MAX as u64 => self.pos = p,
                    _ => return Ok(()),
                }
            }
        }
    }

    fn file_u32(&self, at: u64) -> Option<u32> {
        let at = usize::try_from(at).ok()?;
        self.endian
            .read_uint(self.file.get(at..)?, 4)
            .map(|v| v as u32)
    }

    fn print_strings(&mut self, bytes: &[u8]) -> R<()> {
        let base = self.strings.len();
        self.strings.extend_from_slice(bytes);
        self.put(STRINGS, b"\t[String @ offset]\n")?;
        if self.on(STRINGS) {
            let mut p = 0;
            while p < bytes.len() {
                let s = cstr(&bytes[p..]);
                self.put(STRINGS, b"\t\t\"")?;
                self.put(STRINGS, s)?;
                self.pf(STRINGS, format_args!("\" @ {}\n", (base + p) as i32))?;
                p += s.len() + 1;
            }
        }
        Ok(())
    }

    /// Count (and with --sections print) every section header, walking
    /// contiguously from the current position to the end of the file.
    fn walk_sections(&mut self) -> R<i32> {
        let mut count = 0i32;
        loop {
            let soffset = self.pos;
            let Some(id) = self.u16() else {
                return Ok(count);
            };
            let Some(flags) = self.u16() else {
                return die("cannot read section flags");
            };
            let Some(desc_id) = self.u32() else {
                return die("cannot read section description");
            };
            let Some(mut size) = self.u64() else {
                return die("cannot read section size");
            };
            let desc = self
                .meta_string(desc_id as i32)
                .unwrap_or(b"Unknown")
                .to_vec();
            if id >= OPTION_MAX {
                self.pf(SECTIONS, format_args!("Unknown section id {id}: "))?;
                self.put(SECTIONS, &desc)?;
            }
            count += 1;
            self.pf(
                SECTIONS,
                format_args!("\t[Section {id:2} @ {:<16}\t\"", soffset as i64),
            )?;
            self.put(SECTIONS, &desc)?;
            if flags & SEC_COMPRESSED != 0 {
                if id == 3 || id == 22 {
                    self.pf(
                        SECTIONS,
                        format_args!("\", flags 0x{flags:X}, {} compressed bytes]\n", size as i64),
                    )?;
                } else {
                    let (Some(csize), Some(rsize)) = (self.u32(), self.u32()) else {
                        return die("cannot read section size");
                    };
                    self.pf(
                        SECTIONS,
                        format_args!(
                            "\", flags 0x{flags:X}, {} compressed, {} uncompressed]\n",
                            csize as i32, rsize as i32
                        ),
                    )?;
                    size = size.wrapping_sub(8);
                }
            } else {
                self.pf(
                    SECTIONS,
                    format_args!("\", flags 0x{flags:X}, {} bytes]\n", size as i64),
                )?;
            }
            match self.pos.checked_add(size) {
                Some(p) if p <= i64::MAX as u64 => self.pos = p,
                _ => return Ok(count),
            }
        }
    }

    /// The metadata sections named by options, most recently named first.
    fn metadata_sections(&mut self, count: i32) -> R<()> {
        let secs = std::mem::take(&mut self.sections);
        for (id, off, v) in secs {
            self.seek_file(off, "option offset")?;
            let flags = self.section_header(v)?;
            if flags & SEC_COMPRESSED != 0 {
                self.uncompress_block("section")?;
            }
            match id {
                16 => {
                    self.header_page()?;
                    self.header_event()?;
                }
                17 => self.ftrace_formats()?,
                18 => self.event_formats()?,
                19 => self.kallsyms()?,
                20 => self.printk()?,
                21 => self.cmdlines()?,
                _ => {}
            }
            self.uncompress_reset();
        }
        self.pf(SUMMARY | SECTIONS, format_args!("\t[{count} sections]\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pad10_like_printf() {
        assert_eq!(pad10(0), "          ");
        assert_eq!(pad10(4096), "      4096");
        assert_eq!(pad10(-1), "        -1");
    }
}
