//! A small trace.dat writer, for tests, fixtures and fuzz seeds.
//!
//! It writes what trace-cmd 3.1.6 writes (file versions 6 and 7, laid out
//! as its `trace-output.c` does) and also what a little-endian 64-bit
//! recorder never produces: big-endian files, 4-byte `long`s and `commit`
//! words, other page sizes, latency (text) data, any option, every
//! ring-buffer record type and missed-events flags.
//!
//! Describe the file with a [`TraceFile`], then call
//! [`TraceFile::to_bytes`] (or [`TraceFile::write_to`] to stream it into a
//! file; pages too many to keep in memory can wait in a [`PageSpill`]):
//!
//! ```
//! use tracemux_tracedat::writer::{BufferData, CpuStream, Event, Item, TraceFile};
//! use tracemux_core::bytes::Endian;
//!
//! let mut f = TraceFile::new(7, Endian::Big);
//! f.cpus = 1;
//! let mut top = BufferData::new("", "local");
//! top.cpus.push(CpuStream {
//!     cpu: 0,
//!     items: vec![Item::Event(Event::at(1_000, vec![1, 0, 0, 0, 7, 0, 0, 0]))],
//! });
//! f.set_buffers(vec![top]);
//! let bytes = f.to_bytes().unwrap();
//! assert!(tracemux_tracedat::sniff(&bytes));
//! ```
//!
//! Event payloads are written as given (padded with zeros to 4 bytes), so
//! they must already be in the file's endianness; the writer knows nothing
//! of event formats. Time handling and page packing are described in
//! [`pages`].

mod layout;
pub mod pages;
pub mod text;

pub use crate::options::{TimeShift, TimeShiftCpu, Tsc2Nsec};
pub use pages::{pack_pages, stored_len, PageFormat, PagePacker};
pub use tracemux_ftrace::page::Missed;

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};

use tracemux_core::bytes::Endian;

/// An output the writer can seek back in (to fill in offsets and sizes).
pub trait WriteSeek: Write + Seek {}

impl<T: Write + Seek> WriteSeek for T {}

/// Packed pages kept in a file rather than in memory (a converter's
/// spill), referenced from [`BufferData::spilled`] by offset and length.
/// Appends go to the end; reads happen when the trace file is written.
#[derive(Debug)]
pub struct PageSpill {
    file: File,
    len: u64,
}

impl PageSpill {
    /// An empty spill in `file` (opened for reading and writing; its
    /// previous contents are ignored and overwritten).
    pub fn new(file: File) -> Self {
        PageSpill { file, len: 0 }
    }

    /// Bytes appended so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Append `data`; returns its offset.
    pub fn append(&mut self, data: &[u8]) -> std::io::Result<u64> {
        let at = self.len;
        self.file.seek(SeekFrom::Start(at))?;
        self.file.write_all(data)?;
        self.len += data.len() as u64;
        Ok(at)
    }

    /// Fill `buf` from `offset`.
    pub fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        if offset.saturating_add(buf.len() as u64) > self.len {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "past the end of the spilled pages",
            ));
        }
        self.file.seek(SeekFrom::Start(offset))?;
        self.file.read_exact(buf)
    }
}

/// Why a file could not be written (inconsistent description).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteError(pub String);

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WriteError {}

/// v7 compression of metadata sections and flyrecord data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Zstd,
    Zlib,
}

impl Compression {
    /// The algorithm name written in the file header.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Zstd => "zstd",
            Compression::Zlib => "zlib",
        }
    }

    /// The version string trace-cmd 3.1.6 on Debian 12 writes (empty for none).
    pub fn default_version(self) -> &'static str {
        match self {
            Compression::None => "",
            Compression::Zstd => "1.5.4",
            Compression::Zlib => "1.2.13",
        }
    }
}

/// An option to store. v7 files get the section-reference options
/// (16–21), CPUCOUNT, BUFFER and BUFFER_TEXT automatically; v6 files get
/// the BUFFER options of instances automatically. Everything else is
/// written in the order given, in the first options list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceOption {
    /// Any id (known or not) with a verbatim payload.
    Raw {
        id: u16,
        data: Vec<u8>,
    },
    /// A 4-byte integer in file endianness (e.g. CPUCOUNT).
    U32 {
        id: u16,
        value: u32,
    },
    /// An 8-byte integer in file endianness (e.g. TRACEID).
    U64 {
        id: u16,
        value: u64,
    },
    Tsc2Nsec(Tsc2Nsec),
    TimeShift(TimeShift),
}

/// When an event happened, on the raw ring-buffer clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Time {
    /// Absolute raw time.
    Abs(u64),
    /// Raw time relative to the previous item's time (to 0 for the first).
    Delta(u64),
}

/// One data event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub time: Time,
    /// The record as stored, in file endianness (for ftrace: starts with
    /// `common_type`). Padded with zeros to a multiple of 4.
    pub payload: Vec<u8>,
    /// Use the long header (type_len 0, length word) even for payloads up
    /// to 112 bytes. Longer and empty payloads always use it.
    pub long_form: bool,
}

impl Event {
    pub fn at(ts: u64, payload: Vec<u8>) -> Self {
        Event {
            time: Time::Abs(ts),
            payload,
            long_form: false,
        }
    }

    pub fn after(delta: u64, payload: Vec<u8>) -> Self {
        Event {
            time: Time::Delta(delta),
            payload,
            long_form: false,
        }
    }

    /// The same event with the long (type_len 0) header.
    pub fn long(mut self) -> Self {
        self.long_form = true;
        self
    }
}

/// What goes into a CPU's pages, in order. See [`pages`] for the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Event(Event),
    /// A padding record (type 29): `len` bytes after the header word
    /// (stored in `array[0]`; a multiple of 4, at least 4). `delta` is
    /// added to the time, as kbuffer does.
    Padding {
        delta: u32,
        len: u32,
    },
    /// An absolute TIME_STAMP record (type 31): the low 59 bits of the
    /// time; the top 5 bits stay those of the current time.
    TimeStamp(u64),
    /// A TIME_EXTEND record (type 30) adding this delta (< 2^59).
    TimeExtend(u64),
    /// Close the current page; the next page gets these missed-events flags.
    NewPage(Missed),
}

/// The items of one CPU.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CpuStream {
    pub cpu: u32,
    pub items: Vec<Item>,
}

/// A ring buffer: the top-level one (name `""`) or an instance.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BufferData {
    pub name: String,
    /// The clock written in the v7 BUFFER option and, for the top buffer
    /// of a v6 file, in the flyrecord clock trailer (`[clock]`; omitted
    /// when empty).
    pub clock: String,
    /// v7 only: the page size of this buffer (default: the file's).
    pub page_size: Option<u32>,
    /// CPU streams. v6 files need `cpu < TraceFile::cpus`; CPUs without
    /// pages get an empty table entry (v6) or are left out (v7).
    pub cpus: Vec<CpuStream>,
    /// CPU data already packed into whole pages of this buffer's page
    /// format (by [`PagePacker`]), as (cpu, pages); written after `cpus`.
    pub packed: Vec<(u32, Vec<u8>)>,
    /// Like `packed`, but held in the [`PageSpill`] given to
    /// [`TraceFile::write_spilled`], as (cpu, offset, length); written
    /// after `packed`.
    pub spilled: Vec<(u32, u64, u64)>,
}

impl BufferData {
    pub fn new(name: &str, clock: &str) -> Self {
        BufferData {
            name: name.to_string(),
            clock: clock.to_string(),
            ..Default::default()
        }
    }
}

/// The trace data of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceData {
    /// Ring-buffer pages; the first buffer should be the top one (`""`).
    Flyrecord(Vec<BufferData>),
    /// Latency tracing: the text of tracefs `trace` (v6 `latency` tag, v7
    /// BUFFER_TEXT section with this clock).
    Latency { clock: String, text: Vec<u8> },
}

/// A whole trace.dat file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceFile {
    /// 6 or 7.
    pub version: u32,
    pub endian: Endian,
    /// Bytes in a `long` (header byte): 4 or 8.
    pub long_size: u8,
    /// Size of the page `commit` word in the generated header_page: 4 or 8.
    pub commit_size: u8,
    pub page_size: u32,
    /// v7 only; v6 files must use `None`.
    pub compression: Compression,
    /// The compression version string (default [`Compression::default_version`]).
    pub compression_version: Option<String>,
    /// header_page text (default: [`text::header_page`] for `commit_size`).
    pub header_page: Option<Vec<u8>>,
    /// header_event text (default: [`text::HEADER_EVENT`]).
    pub header_event: Option<Vec<u8>>,
    /// Format files of the `ftrace` system.
    pub ftrace_formats: Vec<Vec<u8>>,
    /// Other systems and their format files.
    pub systems: Vec<(String, Vec<Vec<u8>>)>,
    pub kallsyms: Vec<u8>,
    pub printk: Vec<u8>,
    pub cmdlines: Vec<u8>,
    /// CPU count: the v6 header field, the v7 CPUCOUNT option.
    pub cpus: u32,
    pub options: Vec<TraceOption>,
    pub data: TraceData,
}

impl TraceFile {
    /// An empty flyrecord file: long and commit size 8, 4096-byte pages,
    /// no compression, one CPU, no metadata, no options, no buffers.
    pub fn new(version: u32, endian: Endian) -> Self {
        TraceFile {
            version,
            endian,
            long_size: 8,
            commit_size: 8,
            page_size: 4096,
            compression: Compression::None,
            compression_version: None,
            header_page: None,
            header_event: None,
            ftrace_formats: Vec::new(),
            systems: Vec::new(),
            kallsyms: Vec::new(),
            printk: Vec::new(),
            cmdlines: Vec::new(),
            cpus: 1,
            options: Vec::new(),
            data: TraceData::Flyrecord(Vec::new()),
        }
    }

    /// Replace the trace data with these flyrecord buffers.
    pub fn set_buffers(&mut self, buffers: Vec<BufferData>) {
        self.data = TraceData::Flyrecord(buffers);
    }

    /// The header_page text that will be written.
    pub fn header_page_text(&self) -> Vec<u8> {
        self.header_page.clone().unwrap_or_else(|| {
            text::header_page(self.commit_size as u32, self.page_size).into_bytes()
        })
    }

    /// The page format of a buffer.
    pub fn page_format(&self, b: &BufferData) -> PageFormat {
        PageFormat {
            endian: self.endian,
            commit_size: self.commit_size as u32,
            page_size: b.page_size.unwrap_or(self.page_size),
        }
    }

    /// Write the file.
    pub fn to_bytes(&self) -> Result<Vec<u8>, WriteError> {
        let mut c = std::io::Cursor::new(Vec::new());
        self.write_to(&mut c)?;
        Ok(c.into_inner())
    }

    /// Write the file into `w`, which must be at position 0 (offsets and
    /// sizes are filled in afterwards by seeking back), as it goes: only
    /// metadata pieces and one chunk of pages at a time are held in
    /// memory. The bytes are those of [`TraceFile::to_bytes`].
    pub fn write_to(&self, w: &mut dyn WriteSeek) -> Result<(), WriteError> {
        self.write(w, None)
    }

    /// [`TraceFile::write_to`] for buffers whose pages are (partly) in
    /// `spill` ([`BufferData::spilled`]).
    pub fn write_spilled(
        &self,
        w: &mut dyn WriteSeek,
        spill: &mut PageSpill,
    ) -> Result<(), WriteError> {
        self.write(w, Some(spill))
    }

    fn write(
        &self,
        w: &mut dyn WriteSeek,
        spill: Option<&mut PageSpill>,
    ) -> Result<(), WriteError> {
        if self.long_size != 4 && self.long_size != 8 {
            return Err(WriteError(format!("long size {}", self.long_size)));
        }
        if !self.page_size.is_power_of_two() {
            return Err(WriteError(format!("page size {}", self.page_size)));
        }
        match self.version {
            6 => layout::write_v6(self, w, spill),
            7 => layout::write_v7(self, w, spill),
            v => Err(WriteError(format!("file version {v} (6 or 7)"))),
        }
    }
}

/// Compress `data` as trace-cmd does: zstd frames without a content size,
/// zlib streams at best compression.
pub fn compress(c: Compression, data: &[u8]) -> Result<Vec<u8>, WriteError> {
    Compressor::new(c)?.compress(data)
}

/// [`compress`] for many pieces: one zstd context for all of them.
pub(crate) struct Compressor {
    c: Compression,
    zstd: Option<zstd::bulk::Compressor<'static>>,
}

impl Compressor {
    pub(crate) fn new(c: Compression) -> Result<Compressor, WriteError> {
        let zstd = match c {
            Compression::Zstd => {
                let mut z = zstd::bulk::Compressor::new(zstd::DEFAULT_COMPRESSION_LEVEL)
                    .map_err(|e| Compressor::fail(c, e))?;
                z.set_parameter(zstd::zstd_safe::CParameter::ContentSizeFlag(false))
                    .map_err(|e| Compressor::fail(c, e))?;
                Some(z)
            }
            _ => None,
        };
        Ok(Compressor { c, zstd })
    }

    fn fail(c: Compression, e: std::io::Error) -> WriteError {
        WriteError(format!("{} compression: {e}", c.name()))
    }

    pub(crate) fn compress(&mut self, data: &[u8]) -> Result<Vec<u8>, WriteError> {
        use std::io::Write;
        let c = self.c;
        match (c, self.zstd.as_mut()) {
            (Compression::Zstd, Some(z)) => z.compress(data).map_err(|e| Compressor::fail(c, e)),
            (Compression::Zlib, _) => {
                let mut e =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
                e.write_all(data).map_err(|e| Compressor::fail(c, e))?;
                e.finish().map_err(|e| Compressor::fail(c, e))
            }
            _ => Ok(data.to_vec()),
        }
    }
}
