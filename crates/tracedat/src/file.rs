//! The trace.dat container: initial header, v6 sequential layout, v7
//! sections and options. Everything here works on the mapped file and
//! checks every length against the bytes that remain.

use std::borrow::Cow;

use crate::compress::{Codec, Decoder};
use crate::options::{OptionId, OptionRec};
use tracemux_core::bytes::{Cursor, Endian};
use tracemux_core::error::{Error, ErrorKind, Result};

/// The first 10 bytes of every trace.dat file.
pub const MAGIC: &[u8; 10] = b"\x17\x08\x44tracing";

/// v7 section ids (the same numbering as option ids).
pub mod section_id {
    pub const OPTIONS: u16 = 0;
    pub const BUFFER: u16 = 3;
    pub const STRINGS: u16 = 15;
    pub const HEADER_INFO: u16 = 16;
    pub const FTRACE_EVENTS: u16 = 17;
    pub const EVENT_FORMATS: u16 = 18;
    pub const KALLSYMS: u16 = 19;
    pub const PRINTK: u16 = 20;
    pub const CMDLINES: u16 = 21;
    pub const BUFFER_TEXT: u16 = 22;
}

/// Flag of a v7 section header: the section body is compressed.
pub const SECTION_COMPRESSED: u16 = 1;

/// A v7 section header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub id: u16,
    pub flags: u16,
    /// Offset of the description in the strings section.
    pub desc_id: u32,
    /// The description, resolved through the strings section.
    pub desc: String,
    /// File offset of the 16-byte section header.
    pub offset: u64,
    /// Size of the section body in the file (compressed size if compressed).
    pub size: u64,
}

/// Per-CPU trace data of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuData {
    pub cpu: u32,
    pub offset: u64,
    pub size: u64,
}

/// A ring buffer (the top-level one, named "", or an instance).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Buffer {
    pub name: String,
    pub clock: String,
    pub page_size: u32,
    /// Offset of the buffer's data section (v7) or flyrecord header (v6).
    pub offset: u64,
    pub cpus: Vec<CpuData>,
    /// A latency (text) buffer rather than flyrecord pages.
    pub latency: bool,
    /// Whether the v7 data section is compressed (in chunks).
    pub compressed: bool,
}

impl Buffer {
    /// The data of `c` ends at `end`, past the end of the file (`len`).
    pub fn truncated(&self, c: &CpuData, end: usize, len: usize) -> Error {
        Error::invalid(
            format!(
                "CPU {} data of buffer \"{}\" needs {end} bytes but the file has {len} (truncated?)",
                c.cpu, self.name
            ),
            "flyrecord",
            c.offset,
        )
    }
}

/// What kind of trace data the file carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataKind {
    Flyrecord,
    Latency,
    /// The file ends before saying (truncated).
    Unknown,
}

/// Everything in a trace.dat file but the trace data itself.
#[derive(Debug, Clone)]
pub struct TraceDat<'a> {
    pub data: &'a [u8],
    pub version: u32,
    pub endian: Endian,
    pub long_size: u32,
    pub page_size: u32,
    /// v7: compression algorithm name and version (`none` when uncompressed).
    pub compression: Option<(String, String)>,
    pub codec: Codec,
    /// v7: offset of the first options section.
    pub first_options: u64,
    pub header_page: Cow<'a, [u8]>,
    pub header_event: Cow<'a, [u8]>,
    /// Format files of the `ftrace` system.
    pub ftrace_formats: Vec<Cow<'a, [u8]>>,
    /// Other event systems with their format files.
    pub systems: Vec<(String, Vec<Cow<'a, [u8]>>)>,
    pub kallsyms: Cow<'a, [u8]>,
    pub printk: Cow<'a, [u8]>,
    pub cmdlines: Cow<'a, [u8]>,
    /// CPU count from the header (v6) or the CPUCOUNT option (v7).
    pub cpus: u32,
    pub options: Vec<OptionRec<'a>>,
    /// v7 sections in file order, as found by walking headers and options.
    pub sections: Vec<Section>,
    /// Buffers; the top-level buffer ("") comes first when present.
    pub buffers: Vec<Buffer>,
    pub kind: DataKind,
    /// Latency trace text (v6 `latency` files, v7 BUFFER_TEXT sections).
    pub latency_text: Option<Cow<'a, [u8]>>,
    /// Damage found while reading metadata (lenient mode continues past it).
    pub damage: Vec<Error>,
}

/// Does `data` start like a trace.dat file?
pub fn sniff(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}

impl<'a> TraceDat<'a> {
    /// A container with the given header and nothing else (the starting
    /// point of the parser; also handy in tests).
    pub fn empty(
        data: &'a [u8],
        version: u32,
        endian: Endian,
        long_size: u32,
        page_size: u32,
    ) -> TraceDat<'a> {
        TraceDat {
            data,
            version,
            endian,
            long_size,
            page_size,
            compression: None,
            codec: Codec::None,
            first_options: 0,
            header_page: Cow::Borrowed(&[]),
            header_event: Cow::Borrowed(&[]),
            ftrace_formats: Vec::new(),
            systems: Vec::new(),
            kallsyms: Cow::Borrowed(&[]),
            printk: Cow::Borrowed(&[]),
            cmdlines: Cow::Borrowed(&[]),
            cpus: 0,
            options: Vec::new(),
            sections: Vec::new(),
            buffers: Vec::new(),
            kind: DataKind::Unknown,
            latency_text: None,
            damage: Vec::new(),
        }
    }

    /// Parse the container. Damage after the initial header is recorded in
    /// [`TraceDat::damage`] (lenient); with `strict` it is returned as an error.
    pub fn parse(data: &'a [u8], strict: bool) -> Result<TraceDat<'a>> {
        if !sniff(data) {
            return Err(Error::new(ErrorKind::BadMagic, "initial header", 0));
        }
        let mut c = Cursor::new(data, Endian::Little, "initial header");
        c.skip(MAGIC.len())?;
        let vs = c.cstr()?;
        let version: u32 = std::str::from_utf8(vs)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| {
                Error::invalid("bad version string", "initial header", MAGIC.len() as u64)
            })?;
        let endian = match c.u8()? {
            0 => Endian::Little,
            1 => Endian::Big,
            b => return Err(c.invalid(format!("bad endianness byte {b}"))),
        };
        c.set_endian(endian);
        let long_size = c.u8()? as u32;
        if long_size != 4 && long_size != 8 {
            return Err(c.invalid(format!("bad long size {long_size}")));
        }
        let page_size = c.u32()?;
        if !(64..=(1 << 26)).contains(&page_size) {
            return Err(c.invalid(format!("unlikely page size {page_size}")));
        }
        let mut t = TraceDat::empty(data, version, endian, long_size, page_size);
        let res = match version {
            0..=5 => {
                return Err(Error::new(
                    ErrorKind::Unsupported(format!("trace.dat version {version}")),
                    "initial header",
                    MAGIC.len() as u64,
                ))
            }
            6 => t.parse_v6(c),
            7 => t.parse_v7(c),
            _ => {
                return Err(Error::new(
                    ErrorKind::Unsupported(format!("trace.dat version {version} (newer than 7)")),
                    "initial header",
                    MAGIC.len() as u64,
                ))
            }
        };
        if let Err(e) = res {
            if strict {
                return Err(e);
            }
            t.damage.push(e);
        }
        if strict {
            if let Some(e) = t.damage.first() {
                return Err(e.clone());
            }
        }
        Ok(t)
    }

    // ---- v6 -------------------------------------------------------------

    fn parse_v6(&mut self, mut c: Cursor<'a>) -> Result<()> {
        c.set_section("header page");
        self.read_header_info(&mut c)?;
        c.set_section("ftrace events");
        self.ftrace_formats = read_ftrace_formats(&mut c, &Cow::Borrowed)?;
        c.set_section("event formats");
        self.systems = read_event_systems(&mut c, &Cow::Borrowed)?;
        c.set_section("kallsyms");
        let n = c.u32()?;
        self.kallsyms = Cow::Borrowed(c.bytes(n as usize)?);
        c.set_section("printk");
        let n = c.u32()?;
        self.printk = Cow::Borrowed(c.bytes(n as usize)?);
        c.set_section("command lines");
        let n = c.u64()?;
        self.cmdlines = Cow::Borrowed(c.bytes_u64(n)?);
        c.set_section("cpu count");
        self.cpus = c.u32()?;
        let mut kind = c.bytes(10)?;
        if kind == b"options  \0" {
            c.set_section("options");
            loop {
                let off = c.offset();
                let id = c.u16()?;
                if id == 0 {
                    break;
                }
                let size = c.u32()?;
                let body = c.bytes(size as usize)?;
                self.options.push(OptionRec {
                    id: OptionId(id),
                    offset: off,
                    data: Cow::Borrowed(body),
                    section: None,
                });
            }
            c.set_section("cpu data type");
            kind = c.bytes(10)?;
        }
        // BUFFER options name instances; their flyrecord headers are elsewhere.
        let mut instances = Vec::new();
        for o in &self.options {
            if o.id == OptionId::BUFFER {
                let mut oc = Cursor::with_base(&o.data, o.offset + 6, self.endian, "option BUFFER");
                let offset = oc.u64()?;
                let name = oc.cstring()?;
                instances.push((name, offset));
            }
        }
        let top_clock = self.trace_clock().unwrap_or_default();
        match kind {
            b"flyrecord\0" => {
                self.kind = DataKind::Flyrecord;
                c.set_section("flyrecord");
                let offset = c.offset();
                let cpus = self.read_v6_cpu_table(&mut c)?;
                self.buffers
                    .push(self.flyrecord(String::new(), &top_clock, offset, cpus));
                for (name, offset) in instances {
                    let r = (|| {
                        let start = usize::try_from(offset)
                            .ok()
                            .filter(|&o| o <= self.data.len());
                        let Some(start) = start else {
                            return Err(Error::eof("buffer flyrecord", offset));
                        };
                        let mut bc = Cursor::with_base(
                            &self.data[start..],
                            offset,
                            self.endian,
                            "buffer flyrecord",
                        );
                        if bc.bytes(10)? != b"flyrecord\0" {
                            return Err(Error::invalid(
                                "expected \"flyrecord\"",
                                "buffer flyrecord",
                                offset,
                            ));
                        }
                        self.read_v6_cpu_table(&mut bc)
                    })();
                    match r {
                        Ok(cpus) => {
                            let b = self.flyrecord(name, &top_clock, offset, cpus);
                            self.buffers.push(b);
                        }
                        Err(e) => self.damage.push(e),
                    }
                }
            }
            b"latency  \0" => {
                self.kind = DataKind::Latency;
                self.latency_text = Some(Cow::Borrowed(c.rest()));
            }
            _ => {
                return Err(Error::invalid(
                    "expected \"flyrecord\" or \"latency\"",
                    "cpu data type",
                    c.offset() - 10,
                ))
            }
        }
        Ok(())
    }

    fn read_v6_cpu_table(&self, c: &mut Cursor<'a>) -> Result<Vec<CpuData>> {
        let mut v = Vec::new();
        for cpu in 0..self.cpus {
            let offset = c.u64()?;
            let size = c.u64()?;
            v.push(CpuData { cpu, offset, size });
        }
        Ok(v)
    }

    /// A v6 flyrecord buffer (the file's page size, uncompressed pages).
    fn flyrecord(&self, name: String, clock: &str, offset: u64, cpus: Vec<CpuData>) -> Buffer {
        Buffer {
            name,
            clock: clock.to_string(),
            page_size: self.page_size,
            offset,
            cpus,
            latency: false,
            compressed: false,
        }
    }

    /// `header_page` and `header_event`, each a NUL-terminated tag and a u64 size.
    fn read_header_info(&mut self, c: &mut Cursor<'a>) -> Result<Cow<'a, [u8]>> {
        let tag = c.bytes(12)?;
        if tag != b"header_page\0" {
            return Err(c.invalid("expected \"header_page\""));
        }
        let n = c.u64()?;
        let hp = c.bytes_u64(n)?;
        c.set_section("header event");
        let tag = c.bytes(13)?;
        if tag != b"header_event\0" {
            return Err(c.invalid("expected \"header_event\""));
        }
        let n = c.u64()?;
        let he = c.bytes_u64(n)?;
        self.header_page = Cow::Borrowed(hp);
        self.header_event = Cow::Borrowed(he);
        Ok(Cow::Borrowed(&[]))
    }

    // ---- v7 -------------------------------------------------------------

    fn parse_v7(&mut self, mut c: Cursor<'a>) -> Result<()> {
        let name = c.cstring()?;
        let ver = c.cstring()?;
        self.codec = Codec::from_name(&name).ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported(format!("compression algorithm '{name}'")),
                "initial header",
                c.offset(),
            )
        })?;
        self.compression = Some((name, ver));
        self.first_options = c.u64()?;
        let after_header = c.offset();
        // The strings section(s): walk the section headers that follow the
        // initial header (trace-cmd does the same to find them).
        let strings = self.read_strings(after_header);
        // Options, chained by DONE.
        let mut next = self.first_options;
        let mut seen = Vec::new();
        while next != 0 {
            if seen.contains(&next) || seen.len() > 10_000 {
                self.damage.push(Error::invalid(
                    "options sections form a loop",
                    "options",
                    next,
                ));
                break;
            }
            seen.push(next);
            match self.read_options_section(next, &strings) {
                Ok(n) => next = n,
                Err(e) => {
                    self.damage.push(e);
                    break;
                }
            }
        }
        // Metadata sections referenced by options.
        let refs: Vec<(OptionId, u64)> = self
            .options
            .iter()
            .filter(|o| o.id.is_section_ref())
            .filter_map(|o| o.u64_at(0, self.endian).map(|v| (o.id, v)))
            .collect();
        for (id, off) in refs {
            if let Err(e) = self.read_meta_section(id, off, &strings) {
                self.damage.push(e);
            }
        }
        // CPU count and buffers.
        for o in &self.options {
            if o.id == OptionId::CPUCOUNT {
                if let Some(v) = o.u32_at(0, self.endian) {
                    self.cpus = v;
                }
            }
        }
        let bufs: Vec<(OptionId, u64, Cow<'a, [u8]>)> = self
            .options
            .iter()
            .filter(|o| o.id == OptionId::BUFFER || o.id == OptionId::BUFFER_TEXT)
            .map(|o| (o.id, o.offset, o.data.clone()))
            .collect();
        for (id, off, body) in bufs {
            match self.read_v7_buffer(id, off, &body, &strings) {
                Ok(b) => {
                    if b.name.is_empty() {
                        self.buffers.insert(0, b);
                    } else {
                        self.buffers.push(b);
                    }
                }
                Err(e) => self.damage.push(e),
            }
        }
        self.kind = if self.buffers.iter().any(|b| !b.latency) {
            DataKind::Flyrecord
        } else if self.buffers.iter().any(|b| b.latency) {
            DataKind::Latency
        } else {
            DataKind::Unknown
        };
        self.sections.sort_by_key(|s| s.offset);
        self.sections.dedup_by_key(|s| s.offset);
        Ok(())
    }

    fn slice_from(&self, off: u64, section: &'static str) -> Result<Cursor<'a>> {
        let start = usize::try_from(off)
            .ok()
            .filter(|&o| o <= self.data.len())
            .ok_or_else(|| Error::eof(section, off))?;
        Ok(Cursor::with_base(
            &self.data[start..],
            off,
            self.endian,
            section,
        ))
    }

    fn read_section_header(&self, c: &mut Cursor<'a>, strings: &[u8]) -> Result<Section> {
        let offset = c.offset();
        let id = c.u16()?;
        let flags = c.u16()?;
        let desc_id = c.u32()?;
        let size = c.u64()?;
        let desc = strings
            .get(desc_id as usize..)
            .map(|s| {
                let n = s.iter().position(|&b| b == 0).unwrap_or(s.len());
                String::from_utf8_lossy(&s[..n]).into_owned()
            })
            .unwrap_or_default();
        Ok(Section {
            id,
            flags,
            desc_id,
            desc,
            offset,
            size,
        })
    }

    /// The body of a section: decompressed when the section is compressed.
    fn section_body(
        &self,
        c: &mut Cursor<'a>,
        s: &Section,
        section: &'static str,
    ) -> Result<Cow<'a, [u8]>> {
        let body_off = c.offset();
        let body = c.bytes_u64(s.size).map_err(|e| e.in_section(section))?;
        if s.flags & SECTION_COMPRESSED == 0 || self.codec == Codec::None {
            return Ok(Cow::Borrowed(body));
        }
        let mut bc = Cursor::with_base(body, body_off, self.endian, section);
        let csize = bc.u32()?;
        let usize_ = bc.u32()?;
        let input = bc.bytes(csize as usize)?;
        let mut out = Vec::new();
        Decoder::default().decompress(
            self.codec,
            input,
            usize_ as usize,
            &mut out,
            section,
            body_off,
        )?;
        Ok(Cow::Owned(out))
    }

    fn read_strings(&mut self, start: u64) -> Vec<u8> {
        let mut strings = Vec::new();
        let Ok(mut c) = self.slice_from(start, "strings") else {
            return strings;
        };
        while c.remaining() >= 16 {
            let Ok(s) = self.read_section_header(&mut c, &[]) else {
                break;
            };
            if s.id == section_id::STRINGS {
                match self.section_body(&mut c, &s, "strings") {
                    Ok(b) => strings.extend_from_slice(&b),
                    Err(e) => {
                        self.damage.push(e);
                        break;
                    }
                }
            } else if c
                .skip(usize::try_from(s.size).unwrap_or(usize::MAX))
                .is_err()
            {
                break;
            }
        }
        // record the strings sections with their (now known) descriptions
        if let Ok(mut c) = self.slice_from(start, "strings") {
            while c.remaining() >= 16 {
                let Ok(s) = self.read_section_header(&mut c, &strings) else {
                    break;
                };
                let is_str = s.id == section_id::STRINGS;
                let size = usize::try_from(s.size).unwrap_or(usize::MAX);
                if is_str {
                    self.sections.push(s);
                }
                if c.skip(size).is_err() {
                    break;
                }
            }
        }
        strings
    }

    /// Read one options section; returns the offset of the next one (0: none).
    fn read_options_section(&mut self, off: u64, strings: &[u8]) -> Result<u64> {
        let mut c = self.slice_from(off, "options")?;
        let s = self.read_section_header(&mut c, strings)?;
        if s.id != section_id::OPTIONS {
            return Err(Error::invalid(
                format!("expected an options section (id 0), found id {}", s.id),
                "options",
                off,
            ));
        }
        let compressed = s.flags & SECTION_COMPRESSED != 0;
        let body_off = c.offset();
        let body = self.section_body(&mut c, &s, "options")?;
        self.sections.push(s);
        // Options of a compressed section are located by their offset in the
        // decompressed body; uncompressed ones by their file offset.
        let base = if compressed { 0 } else { body_off };
        let next;
        let mut oc_data: Vec<OptionRec<'a>> = Vec::new();
        {
            let (buf, borrowed): (&[u8], Option<&'a [u8]>) = match &body {
                Cow::Borrowed(b) => (b, Some(*b)),
                Cow::Owned(v) => (v.as_slice(), None),
            };
            let mut oc = Cursor::with_base(buf, base, self.endian, "options");
            loop {
                if oc.is_empty() {
                    return Err(Error::invalid(
                        "options section ends without DONE",
                        "options",
                        oc.offset(),
                    ));
                }
                let opt_off = oc.offset();
                let id = oc.u16()?;
                let size = oc.u32()?;
                let start = oc.pos();
                oc.skip(size as usize)?;
                let data: Cow<'a, [u8]> = match borrowed {
                    Some(b) => Cow::Borrowed(&b[start..start + size as usize]),
                    None => Cow::Owned(buf[start..start + size as usize].to_vec()),
                };
                let rec = OptionRec {
                    id: OptionId(id),
                    offset: opt_off,
                    data,
                    section: Some(off),
                };
                if id == 0 {
                    next = rec.u64_at(0, self.endian).unwrap_or(0);
                    oc_data.push(rec);
                    break;
                }
                oc_data.push(rec);
            }
        }
        self.options.extend(oc_data);
        Ok(next)
    }

    fn read_meta_section(&mut self, id: OptionId, off: u64, strings: &[u8]) -> Result<()> {
        let name: &'static str = match id {
            OptionId::HEADER_INFO => "headers",
            OptionId::FTRACE_EVENTS => "ftrace events",
            OptionId::EVENT_FORMATS => "events format",
            OptionId::KALLSYMS => "kallsyms",
            OptionId::PRINTK => "printk",
            OptionId::CMDLINES => "command lines",
            _ => "section",
        };
        let mut c = self.slice_from(off, name)?;
        let s = self.read_section_header(&mut c, strings)?;
        let body = self.section_body(&mut c, &s, name)?;
        self.sections.push(s);
        // Parse the body; when it was decompressed it is owned, so the
        // parts are copied out of it.
        fn own<'x>(b: &[u8]) -> Cow<'x, [u8]> {
            Cow::Owned(b.to_vec())
        }
        let borrowed: Option<&'a [u8]> = match &body {
            Cow::Borrowed(b) => Some(b),
            Cow::Owned(_) => None,
        };
        let pick = |b: &[u8]| -> Cow<'a, [u8]> {
            match borrowed {
                Some(all) => {
                    // b is a sub-slice of all: re-borrow with the long lifetime
                    let start = b.as_ptr() as usize - all.as_ptr() as usize;
                    Cow::Borrowed(&all[start..start + b.len()])
                }
                None => own(b),
            }
        };
        let mut c = Cursor::with_base(&body, 0, self.endian, name);
        let err_base = |e: Error| e;
        match id {
            OptionId::HEADER_INFO => {
                let tag = c.bytes(12).map_err(err_base)?;
                if tag != b"header_page\0" {
                    return Err(Error::invalid("expected \"header_page\"", name, off));
                }
                let n = c.u64()?;
                let hp = pick(c.bytes_u64(n)?);
                let tag = c.bytes(13)?;
                if tag != b"header_event\0" {
                    return Err(Error::invalid("expected \"header_event\"", name, off));
                }
                let n = c.u64()?;
                let he = pick(c.bytes_u64(n)?);
                self.header_page = hp;
                self.header_event = he;
            }
            OptionId::FTRACE_EVENTS => self.ftrace_formats = read_ftrace_formats(&mut c, &pick)?,
            OptionId::EVENT_FORMATS => self.systems = read_event_systems(&mut c, &pick)?,
            OptionId::KALLSYMS => {
                let n = c.u32()?;
                self.kallsyms = pick(c.bytes(n as usize)?);
            }
            OptionId::PRINTK => {
                let n = c.u32()?;
                self.printk = pick(c.bytes(n as usize)?);
            }
            OptionId::CMDLINES => {
                let n = c.u64()?;
                self.cmdlines = pick(c.bytes_u64(n)?);
            }
            _ => {}
        }
        Ok(())
    }

    fn read_v7_buffer(
        &mut self,
        id: OptionId,
        opt_off: u64,
        body: &[u8],
        strings: &[u8],
    ) -> Result<Buffer> {
        let sec: &'static str = if id == OptionId::BUFFER {
            "option BUFFER"
        } else {
            "option BUFFER_TEXT"
        };
        let mut c = Cursor::with_base(body, opt_off + 6, self.endian, sec);
        let offset = c.u64()?;
        let name = c.cstring()?;
        let clock = c.cstring()?;
        let mut b = Buffer {
            name,
            clock,
            page_size: self.page_size,
            offset,
            cpus: Vec::new(),
            latency: id == OptionId::BUFFER_TEXT,
            compressed: false,
        };
        if id == OptionId::BUFFER {
            b.page_size = c.u32()?;
            let n = c.u32()?;
            for _ in 0..n {
                let cpu = c.u32()?;
                let offset = c.u64()?;
                let size = c.u64()?;
                b.cpus.push(CpuData { cpu, offset, size });
            }
            if !(64..=(1 << 26)).contains(&b.page_size) {
                return Err(Error::invalid(
                    format!("unlikely page size {}", b.page_size),
                    sec,
                    opt_off,
                ));
            }
        }
        // The data section header.
        let mut sc = self.slice_from(offset, "buffer data")?;
        let s = self.read_section_header(&mut sc, strings)?;
        b.compressed = s.flags & SECTION_COMPRESSED != 0 && self.codec != Codec::None;
        if b.latency {
            let body_off = sc.offset();
            let body = sc
                .bytes_u64(s.size)
                .map_err(|e| e.in_section("buffer text"))?;
            self.latency_text = Some(if b.compressed {
                // like flyrecord data: a chunk count, then chunks
                let mut cc = Cursor::with_base(body, body_off, self.endian, "buffer text");
                let count = cc.u32()?;
                let mut text = Vec::new();
                let mut chunk = Vec::new();
                for _ in 0..count {
                    let off = cc.offset();
                    let csize = cc.u32()?;
                    let usize_ = cc.u32()?;
                    let input = cc.bytes(csize as usize)?;
                    Decoder::default().decompress(
                        self.codec,
                        input,
                        usize_ as usize,
                        &mut chunk,
                        "buffer text",
                        off,
                    )?;
                    text.extend_from_slice(&chunk);
                }
                Cow::Owned(text)
            } else {
                Cow::Borrowed(body)
            });
        }
        self.sections.push(s);
        Ok(b)
    }

    /// The trace clock in use: the bracketed entry of the TRACECLOCK option
    /// (e.g. `[local] global ...`), if present.
    pub fn trace_clock(&self) -> Option<String> {
        let o = self.options.iter().find(|o| o.id == OptionId::TRACECLOCK)?;
        let s = String::from_utf8_lossy(&o.data);
        let st = s.find('[')?;
        let en = s[st..].find(']')? + st;
        Some(s[st + 1..en].to_string())
    }

    /// Options with a given id.
    pub fn options_with(&self, id: OptionId) -> impl Iterator<Item = &OptionRec<'a>> {
        self.options.iter().filter(move |o| o.id == id)
    }

    /// The text of the first option with `id` (NUL and everything after it removed).
    pub fn option_text(&self, id: OptionId) -> Option<String> {
        self.options_with(id).next().map(|o| o.text())
    }
}

/// What a format's bytes in a section become: borrowed from the file, or
/// (v7) re-borrowed from the file or copied out of a decompressed section.
type Pick<'b, 'a> = dyn Fn(&'b [u8]) -> Cow<'a, [u8]> + 'b;

/// The ftrace formats: a u32 count, then each a u64 size and its text.
fn read_ftrace_formats<'b, 'a>(
    c: &mut Cursor<'b>,
    pick: &Pick<'b, 'a>,
) -> Result<Vec<Cow<'a, [u8]>>> {
    let count = c.u32()?;
    let mut v = Vec::new();
    for _ in 0..count {
        let n = c.u64()?;
        v.push(pick(c.bytes_u64(n)?));
    }
    Ok(v)
}

/// The event formats: a u32 count of systems, then each its name, a u32
/// count of events and their formats (a u64 size and its text).
#[allow(clippy::type_complexity)]
fn read_event_systems<'b, 'a>(
    c: &mut Cursor<'b>,
    pick: &Pick<'b, 'a>,
) -> Result<Vec<(String, Vec<Cow<'a, [u8]>>)>> {
    let count = c.u32()?;
    let mut v = Vec::new();
    for _ in 0..count {
        let sys = c.cstring()?;
        let n = c.u32()?;
        let mut evs = Vec::new();
        for _ in 0..n {
            let sz = c.u64()?;
            evs.push(pick(c.bytes_u64(sz)?));
        }
        v.push((sys, evs));
    }
    Ok(v)
}
