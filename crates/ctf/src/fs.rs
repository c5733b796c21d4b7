//! CTF traces on disk: finding trace directories, reading their metadata,
//! grouping stream files into data streams, indexing packets.
//!
//! Discovery and grouping follow babeltrace2 2.0 (`babeltrace2 DIR`):
//!
//! * an input directory is a trace when it holds a `metadata` file;
//!   otherwise its subdirectories are searched, recursively (so LTTng's
//!   `ust/uid/0/64-bit`, `ust/pid/app-1234-.../`, `kernel/`, snapshot and
//!   rotation-archive layouts are all found);
//! * traces with the same UUID are one trace (their streams merge: same
//!   stream class and stream instance ID = same stream, packets merged by
//!   time, duplicates dropped — overlapping LTTng snapshots);
//! * every regular, non-empty, non-hidden file of a trace directory other
//!   than `metadata` is a stream file (`index/` is a directory, skipped);
//! * stream files whose first packets carry the same stream class and
//!   `stream_instance_id` are one data stream (tracefile rotation
//!   `ch0_N_M`), ordered by their first packet's time;
//! * a trace is named `HOSTNAME/RELATIVE/PATH` (path from the input to the
//!   trace directory; just the hostname when the trace is the input, or
//!   when several directories make up the trace); a stream is named by the
//!   path of its first file; streams without `stream_instance_id` get IDs
//!   0, 1, ... in the order of their first file's path.
//!
//! Files are read through a [`Loader`] so that the binary can map them
//! (this crate has no `unsafe`).

use std::path::{Path, PathBuf};

use tracemux_core::{Error, ErrorKind};

use crate::decode::Program;
use crate::ir::{EnvValue, TraceClass};
use crate::stream::{index_file_with, PacketEntry, StreamError};

/// Bytes of a file, owned or mapped.
pub type FileBytes = Box<dyn AsRef<[u8]> + Send + Sync>;

/// Reads whole files (the binary maps them).
///
/// Readers call [`Loader::release`] as they consume a stream file, so that
/// a loader that maps files can drop the pages already read and keep the
/// resident memory flat whatever the trace size. Readers may call it from
/// several threads at once (hence `Sync`).
pub trait Loader: Sync {
    /// The bytes of the file at `path`.
    fn load(&self, path: &Path) -> std::io::Result<FileBytes>;

    /// The reader is done with bytes `start..end` of the file loaded from
    /// `path` (named as [`normalize_path`] names it) for now; it may read
    /// them again later, so the bytes must stay readable (dropping the
    /// pages of a read-only file mapping is fine; they fault back in).
    /// The default does nothing.
    fn release(&self, path: &Path, start: u64, end: u64) {
        let _ = (path, start, end);
    }
}

/// Bytes a reader consumes before it tells the loader (see
/// [`Loader::release`]).
pub const RELEASE_STEP: u64 = 1 << 20;

/// Tells a [`Loader`] which bytes of a stream's files were consumed, in
/// steps of [`RELEASE_STEP`], as the packets of a stream are read in
/// order.
pub struct Releaser<'a> {
    loader: &'a dyn Loader,
    /// Paths of the stream's files (indexed like `PacketEntry::file`).
    paths: Vec<&'a Path>,
    /// Current file, first byte not yet released, first byte not consumed.
    cur: Option<(usize, u64, u64)>,
}

impl<'a> Releaser<'a> {
    /// A releaser for the files of stream `g` of trace `t`.
    pub fn new(loader: &'a dyn Loader, t: &'a Trace, g: &StreamGroup) -> Self {
        let paths = g
            .files
            .iter()
            .filter_map(|&f| t.files.get(f).map(|x| x.0.as_path()))
            .collect();
        Releaser {
            loader,
            paths,
            cur: None,
        }
    }

    /// The bytes of `file` before `offset` (from the stream's previous
    /// packet on) are done: a packet starts there, or the decoder is past
    /// them.
    pub fn packet(&mut self, file: usize, offset: u64) {
        match self.cur {
            Some((f, from, to)) if f == file && offset >= from => {
                let to = to.max(offset);
                self.cur = Some((f, from, to));
                if to - from >= RELEASE_STEP {
                    self.flush();
                }
            }
            _ => {
                self.flush();
                self.cur = Some((file, offset, offset));
            }
        }
    }

    /// The stream ended (or stopped) at byte `end` of `file`.
    pub fn finish(&mut self, file: usize, end: u64) {
        self.packet(file, end);
        self.flush();
    }

    /// Release everything consumed so far.
    pub fn flush(&mut self) {
        if let Some((f, from, to)) = self.cur {
            if to > from {
                self.release(f, from, to);
                self.cur = Some((f, to, to));
            }
        }
    }

    fn release(&self, file: usize, start: u64, end: u64) {
        if let Some(p) = self.paths.get(file) {
            self.loader.release(p, start, end);
        }
    }
}

/// A [`Loader`] that reads files into memory with `std::fs::read`.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReadLoader;

impl Loader for ReadLoader {
    fn load(&self, path: &Path) -> std::io::Result<FileBytes> {
        Ok(Box::new(std::fs::read(path)?))
    }
}

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io(format!("{}: {e}", path.display())), "file", 0)
}

/// CTF version of a file's first bytes, by their magic alone (what
/// recognises a CTF metadata file among files of every format): 2 for a
/// JSON text sequence (first byte 0x1E) or metadata packets of version 2
/// (CTF2-PMETA-1.0), 1 for packets of another version (magic 0x75D11D57 in
/// either byte order) or text starting with `/* CTF 1.`.
pub fn sniff(head: &[u8]) -> Option<u8> {
    if head.first() == Some(&0x1e) || crate::tsdl::packet_version(head).is_some_and(|v| v.0 == 2) {
        return Some(2);
    }
    if crate::tsdl::is_packetized(head) || head.starts_with(b"/* CTF 1.") {
        return Some(1);
    }
    None
}

/// CTF version of the bytes of a file known to be metadata: [`sniff`],
/// and 2 for a CTF 2 fragment written without its record separator
/// (forgiven, see `ctf2::Leniency`): TSDL text cannot start with `{`.
pub fn metadata_version(head: &[u8]) -> Option<u8> {
    if head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
        return Some(2);
    }
    sniff(head)
}

/// Whether `path` is (or is the `metadata` file of) a CTF trace directory,
/// by content. Plain TSDL without the `/* CTF 1.8` line is recognised when
/// it parses.
pub fn is_ctf(path: &Path) -> bool {
    let meta = if path.is_dir() {
        path.join("metadata")
    } else {
        path.to_path_buf()
    };
    let Ok(data) = std::fs::read(&meta) else {
        return false;
    };
    match metadata_version(&data) {
        Some(_) => true,
        None => crate::tsdl::parse_metadata(&data).is_ok(),
    }
}

/// A trace directory found under an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The directory (input path joined with the relative path).
    pub dir: PathBuf,
    /// Path from the input to `dir` ("" when the input is the trace).
    pub rel: String,
    /// Which input it was found under.
    pub input: usize,
}

/// [`discover`], with an error naming the inputs when no trace is found.
pub fn discover_some(inputs: &[PathBuf]) -> Result<Vec<Found>, Error> {
    let found = discover(inputs)?;
    if found.is_empty() {
        let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::invalid(
            format!("no CTF trace found in {}", names.join(", ")),
            "input",
            0,
        ));
    }
    Ok(found)
}

/// Find the trace directories under `inputs` (directories, or `metadata`
/// files). Directory entries are visited in name order.
pub fn discover(inputs: &[PathBuf]) -> Result<Vec<Found>, Error> {
    let mut out = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let meta = std::fs::metadata(input).map_err(|e| io_err(input, e))?;
        if meta.is_file() {
            // A metadata file: its directory is the trace.
            let dir = input
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from("."));
            out.push(Found {
                dir,
                rel: String::new(),
                input: i,
            });
            continue;
        }
        walk(input, "", i, &mut out, 0)?;
    }
    Ok(out)
}

fn walk(
    dir: &Path,
    rel: &str,
    input: usize,
    out: &mut Vec<Found>,
    depth: u32,
) -> Result<(), Error> {
    if depth > 64 {
        return Ok(());
    }
    if dir.join("metadata").is_file() {
        out.push(Found {
            dir: dir.to_path_buf(),
            rel: rel.to_string(),
            input,
        });
        return Ok(());
    }
    let rd = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => return Ok(()),
        Err(e) => return Err(io_err(dir, e)),
    };
    let mut names: Vec<String> = rd
        .flatten()
        .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for n in names {
        let r = if rel.is_empty() {
            n.clone()
        } else {
            format!("{rel}/{n}")
        };
        walk(&dir.join(&n), &r, input, out, depth + 1)?;
    }
    Ok(())
}

/// Make a path absolute and normalise `.` and `..` (as babeltrace2 names
/// streams), without touching the file system beyond the current
/// directory.
pub fn normalize_path(p: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let mut out = PathBuf::from("/");
    for c in abs.components() {
        match c {
            std::path::Component::Normal(s) => out.push(s),
            std::path::Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

/// One data stream of a trace: its files and packets.
#[derive(Debug, Clone)]
pub struct StreamGroup {
    /// Position of its stream class in `Program::streams`.
    pub class: usize,
    pub class_id: u64,
    /// `stream_instance_id` from the packet header.
    pub instance_id: Option<u64>,
    /// babeltrace2's stream ID (the instance ID, or assigned).
    pub id: u64,
    /// Path of its first file (babeltrace2's stream name).
    pub name: String,
    /// Indices into [`Trace::files`], ordered by first packet time.
    pub files: Vec<usize>,
    /// Time (ns from origin) of each file's first packet (-1: unknown).
    pub begin_ns: Vec<i64>,
    /// Packets in reading order; `PacketEntry::file` indexes `files`.
    pub packets: Vec<PacketEntry>,
}

/// Damage found while indexing (kept packets are usable).
#[derive(Debug, Clone)]
pub struct Damage {
    pub path: PathBuf,
    pub error: StreamError,
}

impl Damage {
    /// `PATH: packet at offset 0x...: ERROR`.
    pub fn message(&self) -> String {
        format!(
            "{}: packet at offset {:#x}: {}",
            self.path.display(),
            self.error.packet_offset,
            self.error.error
        )
    }

    /// The damage as an error at its offset in the stream file.
    pub fn to_error(&self) -> Error {
        Error::new(
            ErrorKind::Invalid(self.message()),
            "stream",
            self.error.byte_offset(),
        )
    }
}

/// An opened trace.
pub struct Trace {
    pub dirs: Vec<PathBuf>,
    /// babeltrace2's trace name.
    pub name: String,
    pub tc: TraceClass,
    pub prog: Program,
    pub files: Vec<(PathBuf, FileBytes)>,
    pub streams: Vec<StreamGroup>,
    /// Files whose indexing stopped at an error.
    pub damage: Vec<Damage>,
    /// What was forgiven in the metadata (of the trace's directories).
    pub notes: Vec<MetadataNote>,
    /// babeltrace2 quirk flags from the environment.
    pub quirks: Quirks,
    /// The trace has no name (babeltrace2's live traces): no `trace`
    /// field, "(unknown)" in warnings.
    pub anonymous: bool,
}

/// Tracer bugs babeltrace2 works around.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Quirks {
    /// LTTng: a packet end time of 0 after a crash.
    pub lttng_crash: bool,
    /// Old LTTng: events after the packet end time.
    pub lttng_event_after_packet: bool,
}

fn env_str<'a>(tc: &'a TraceClass, k: &str) -> Option<&'a str> {
    match tc.env(k) {
        Some(EnvValue::Str(s)) => Some(s),
        _ => None,
    }
}

fn env_int(tc: &TraceClass, k: &str) -> Option<i64> {
    match tc.env(k) {
        Some(EnvValue::Int(i)) => Some(*i),
        _ => None,
    }
}

pub fn quirks_of(tc: &TraceClass) -> Quirks {
    let Some(name) = env_str(tc, "tracer_name") else {
        return Quirks::default();
    };
    let Some(major) = env_int(tc, "tracer_major") else {
        return Quirks::default();
    };
    let minor = env_int(tc, "tracer_minor").unwrap_or(0);
    let patch = env_int(tc, "tracer_patch")
        .or_else(|| env_int(tc, "tracer_patchlevel"))
        .unwrap_or(0);
    let lttng = name == "lttng-ust" || name == "lttng-modules";
    let after = match name {
        "lttng-ust" => major < 2 || (major == 2 && minor < 11),
        "lttng-modules" => {
            major < 2
                || (major == 2
                    && match minor {
                        10 => patch < 10,
                        9 => patch < 13,
                        m => m < 9,
                    })
        }
        _ => false,
    };
    Quirks {
        lttng_crash: lttng,
        lttng_event_after_packet: after,
    }
}

/// Read and parse the metadata of a trace directory (what is forgiven in
/// CTF 2 metadata is not reported: see [`read_metadata_noted`]).
pub fn read_metadata(dir: &Path, loader: &dyn Loader) -> Result<TraceClass, Error> {
    read_metadata_noted(dir, loader, false).map(|(tc, _)| tc)
}

/// Something forgiven in a metadata file ([`crate::ctf2::Leniency`]): by
/// default reported as a warning, refused in strict mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataNote {
    /// The metadata file (or, for a data packet's UUID, the stream file).
    pub path: PathBuf,
    /// The section of the error in strict mode: `metadata`, or `packet
    /// header` for a data packet.
    pub section: &'static str,
    pub kind: crate::ctf2::Leniency,
    /// Where (first met), what and how often.
    pub detail: crate::ctf2::Ctf2Error,
}

impl MetadataNote {
    /// The warning text: file, what, byte offset.
    pub fn message(&self) -> String {
        format!(
            "{}: {} (byte offset {})",
            self.path.display(),
            self.what(),
            self.detail.offset
        )
    }

    /// What is wrong: the CTF 2 metadata error text, or for a data packet
    /// its message alone.
    fn what(&self) -> String {
        if self.section == "metadata" {
            self.detail.to_string()
        } else {
            self.detail.msg.clone()
        }
    }

    /// The error of strict mode.
    pub fn to_error(&self) -> Error {
        Error::new(
            ErrorKind::Invalid(format!(
                "{}: {} (refused in strict mode)",
                self.path.display(),
                self.what()
            )),
            self.section,
            self.detail.offset as u64,
        )
    }
}

/// Read and parse the metadata of a trace directory; with `strict`, what
/// CTF 2 metadata may get wrong and this reader forgives is an error,
/// else it is returned (once per kind).
pub fn read_metadata_noted(
    dir: &Path,
    loader: &dyn Loader,
    strict: bool,
) -> Result<(TraceClass, Vec<MetadataNote>), Error> {
    let path = dir.join("metadata");
    let data = loader.load(&path).map_err(|e| io_err(&path, e))?;
    parse_metadata_bytes((*data).as_ref(), &path, strict)
}

/// Parse metadata bytes (plain or packetized TSDL, or CTF 2), errors and
/// notes naming `path` (a file, or where the bytes came from).
pub fn parse_metadata_bytes(
    bytes: &[u8],
    path: &Path,
    strict: bool,
) -> Result<(TraceClass, Vec<MetadataNote>), Error> {
    let path = path.to_path_buf();
    let named = |e: Error| {
        let msg = format!("{}: {}", path.display(), e.kind);
        Error::new(ErrorKind::Invalid(msg), "metadata", e.offset)
    };
    match metadata_version(bytes) {
        Some(2) => {
            let text;
            let mut notes = Vec::new();
            let json = if crate::tsdl::is_packetized(bytes) {
                let (t, pn) = crate::ctf2::pmeta::depacketize(bytes).map_err(named)?;
                text = t;
                for n in pn {
                    let note = MetadataNote {
                        path: path.clone(),
                        section: "metadata",
                        kind: crate::ctf2::Leniency::MetadataPacket,
                        detail: crate::ctf2::Ctf2Error {
                            fragment: 0,
                            offset: n.offset,
                            path: String::new(),
                            msg: n.msg,
                            unsupported: false,
                        },
                    };
                    if strict {
                        return Err(note.to_error());
                    }
                    // one note of the kind, at its first place
                    if notes.is_empty() {
                        notes.push(note);
                    }
                }
                &text[..]
            } else {
                bytes
            };
            let p = crate::ctf2::parse_with(json, strict).map_err(|e| named(e.into_error()))?;
            notes.extend(p.notes.into_iter().map(|(kind, detail)| MetadataNote {
                path: path.clone(),
                section: "metadata",
                kind,
                detail,
            }));
            Ok((p.tc, notes))
        }
        _ => crate::tsdl::parse_metadata(bytes)
            .map(|tc| (tc, Vec::new()))
            .map_err(named),
    }
}

/// Nanoseconds from origin of `cycles` of a clock class, as babeltrace2
/// computes it (`None` on overflow).
pub fn ns_from_origin(cc: &crate::ir::ClockClass, cycles: u64) -> Option<i64> {
    clock_ns(cc.frequency, cc.offset_seconds, cc.offset_cycles, cycles)
}

/// bt2's conversion of a cycle count to nanoseconds.
pub fn cycles_to_ns(freq: u64, v: u64) -> u64 {
    if freq == 1_000_000_000 {
        v
    } else {
        let d = (1e9 * v as f64) / freq as f64;
        if d >= u64::MAX as f64 {
            u64::MAX
        } else {
            d as u64
        }
    }
}

/// Base offset of a clock class in ns (`None` on overflow).
pub fn clock_base_ns(freq: u64, off_s: i64, off_c: u64) -> Option<i64> {
    if !(i64::MIN / 1_000_000_000..=i64::MAX / 1_000_000_000 - 2).contains(&off_s) {
        return None;
    }
    Some(off_s * 1_000_000_000 + cycles_to_ns(freq, off_c) as i64)
}

pub(crate) fn clock_ns(freq: u64, off_s: i64, off_c: u64, v: u64) -> Option<i64> {
    ns_from_base(freq, clock_base_ns(freq, off_s, off_c)?, v)
}

/// [`clock_ns`] with the clock's base offset ([`clock_base_ns`]) known.
#[inline]
pub(crate) fn ns_from_base(freq: u64, base: i64, v: u64) -> Option<i64> {
    let vns = cycles_to_ns(freq, v);
    if vns >= i64::MAX as u64 {
        return None;
    }
    let vns = vns as i64;
    if base > 0 && vns > i64::MAX - base {
        return None;
    }
    Some(base + vns)
}

/// Apply babeltrace2's `--clock-offset` / `--clock-offset-ns` to every
/// clock class (`clock-class-offset-s` / `-ns` of `src.ctf.fs`).
pub fn apply_clock_offset(tc: &mut TraceClass, offset_s: i64, offset_ns: i64) {
    if offset_s == 0 && offset_ns == 0 {
        return;
    }
    let (extra_s, ns) = if offset_ns < 0 {
        let abs = offset_ns.unsigned_abs() as i64;
        let extra = -(abs / 1_000_000_000 + 1);
        (extra, (offset_ns - extra * 1_000_000_000) as u64)
    } else {
        let extra = offset_ns / 1_000_000_000;
        (extra, (offset_ns - extra * 1_000_000_000) as u64)
    };
    for c in &mut tc.clocks {
        let f = c.frequency.max(1);
        let cycles = if f == 1_000_000_000 {
            ns
        } else {
            ((ns as f64 * f as f64) / 1e9) as u64
        };
        let mut s = c
            .offset_seconds
            .wrapping_add(offset_s)
            .wrapping_add(extra_s);
        let mut cy = c.offset_cycles.wrapping_add(cycles);
        if cy >= f {
            s = s.wrapping_add((cy / f) as i64);
            cy %= f;
        }
        c.offset_seconds = s;
        c.offset_cycles = cy;
    }
}

struct FileInfo {
    file: usize,
    class: usize,
    instance: Option<u64>,
    begin_ns: Option<i64>,
    packets: Vec<PacketEntry>,
}

/// Open the traces found by [`discover`]: group by UUID, read stream files,
/// index packets, form data streams. Traces come out in the order of their
/// first directory. `clock_offset` is (seconds, nanoseconds).
pub fn open_traces(
    found: &[Found],
    inputs: &[PathBuf],
    loader: &dyn Loader,
    clock_offset: (i64, i64),
) -> Result<Vec<Trace>, Error> {
    // Parse every metadata first.
    let mut parsed = Vec::with_capacity(found.len());
    let mut notes = Vec::with_capacity(found.len());
    for f in found {
        let (mut tc, n) = read_metadata_noted(&f.dir, loader, false)?;
        apply_clock_offset(&mut tc, clock_offset.0, clock_offset.1);
        parsed.push(tc);
        notes.push(n);
    }
    // Group by UUID (traces without UUID stand alone).
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, tc) in parsed.iter().enumerate() {
        let g = tc
            .uuid
            .and_then(|u| groups.iter().position(|g| parsed[g[0]].uuid == Some(u)));
        match g {
            Some(g) => groups[g].push(i),
            None => groups.push(vec![i]),
        }
    }
    let mut out = Vec::new();
    for g in groups {
        // The metadata with the most stream and event classes wins.
        let count = |tc: &TraceClass| {
            tc.stream_classes.len()
                + tc.stream_classes
                    .iter()
                    .map(|s| s.event_classes.len())
                    .sum::<usize>()
        };
        let mut winner = g[0];
        for &i in &g[1..] {
            if count(&parsed[i]) > count(&parsed[winner]) {
                winner = i;
            }
        }
        let tc = parsed[winner].clone();
        let prog = Program::compile(&tc).map_err(|e| {
            Error::invalid(
                format!("{}: {e}", found[winner].dir.join("metadata").display()),
                "metadata",
                0,
            )
        })?;
        let suffix = if g.len() == 1 && !found[g[0]].rel.is_empty() {
            Some(found[g[0]].rel.clone())
        } else {
            None
        };
        let _ = inputs;
        let mut name = String::new();
        if let Some(h) = env_str(&tc, "hostname") {
            name.push_str(h);
            if suffix.is_some() {
                name.push('/');
            }
        }
        if let Some(s) = &suffix {
            name.push_str(s);
        }
        let mut trace = Trace {
            dirs: g.iter().map(|&i| found[i].dir.clone()).collect(),
            name,
            quirks: quirks_of(&tc),
            tc,
            prog,
            files: Vec::new(),
            streams: Vec::new(),
            damage: Vec::new(),
            notes: g.iter().flat_map(|&i| notes[i].clone()).collect(),
            anonymous: false,
        };
        for &i in &g {
            add_dir(&mut trace, &found[i].dir, loader)?;
        }
        // Deterministic order and stream IDs (babeltrace2 sorts groups by
        // the path of their first file).
        trace.streams.sort_by(|a, b| a.name.cmp(&b.name));
        let mut next_id = 0;
        for s in &mut trace.streams {
            s.id = match s.instance_id {
                Some(i) => i,
                None => {
                    next_id += 1;
                    next_id - 1
                }
            };
        }
        out.push(trace);
    }
    Ok(out)
}

/// CTF2-SPEC-2.0: a field with the role `metadata-stream-uuid` holds the
/// UUID of the metadata stream. A packet whose header holds another one is
/// read as the trace's (as babeltrace2 and yactfr read it) and noted once
/// per trace: its file, the packet's byte offset and how many packets.
///
/// A CTF 1.8 trace is read so silently, as babeltrace2 2.0 reads it (the
/// `pass-pkt-uuid-differs` conformance case): the note is CTF 2's.
fn packet_uuid_notes(trace: &mut Trace, path: &Path, packets: &[PacketEntry]) {
    if trace.tc.version != crate::ir::CtfVersion::Ctf2 {
        return;
    }
    let Some(want) = trace.tc.uuid else {
        return;
    };
    for p in packets {
        let Some(u) = p.info.uuid.filter(|u| *u != want) else {
            continue;
        };
        let kind = crate::ctf2::Leniency::PacketUuid;
        if let Some(n) = trace.notes.iter_mut().find(|n| n.kind == kind) {
            n.detail.fragment += 1;
            let count = n.detail.fragment;
            if let Some(i) = n.detail.msg.find(" (") {
                n.detail.msg.truncate(i);
            }
            n.detail
                .msg
                .push_str(&format!(" ({count} packets, the first here)"));
            continue;
        }
        trace.notes.push(MetadataNote {
            path: path.to_path_buf(),
            section: "packet header",
            kind,
            detail: crate::ctf2::Ctf2Error {
                // (the count of packets)
                fragment: 1,
                offset: p.offset as usize,
                path: String::new(),
                msg: format!(
                    "packet at offset {:#x}: metadata stream UUID {} in the packet header is not the trace's ({})",
                    p.offset,
                    crate::ir::uuid_string(&u),
                    crate::ir::uuid_string(&want)
                ),
                unsupported: false,
            },
        });
    }
}

fn add_dir(trace: &mut Trace, dir: &Path, loader: &dyn Loader) -> Result<(), Error> {
    let rd = std::fs::read_dir(dir).map_err(|e| io_err(dir, e))?;
    let mut names: Vec<String> = rd
        .flatten()
        .filter(|e| {
            e.file_type()
                .map(|t| t.is_file() || t.is_symlink())
                .unwrap_or(false)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "metadata" && !n.starts_with('.'))
        .collect();
    names.sort();
    let norm = normalize_path(dir);
    let mut infos = Vec::new();
    for n in names {
        let path = dir.join(&n);
        if !path.is_file() {
            continue;
        }
        let data = loader.load(&path).map_err(|e| io_err(&path, e))?;
        if (*data).as_ref().is_empty() {
            continue;
        }
        let fi = trace.files.len();
        let bytes: &[u8] = (*data).as_ref();
        // Indexing touches every packet header: give the pages back as
        // it goes, and all of them at the end.
        let key = norm.join(&n);
        let mut released = 0;
        let (packets, err) = index_file_with(&trace.prog, trace.tc.uuid, 0, bytes, &mut |off| {
            if off >= released + RELEASE_STEP {
                loader.release(&key, released, off);
                released = off;
            }
        });
        loader.release(&key, 0, bytes.len() as u64);
        if let Some(e) = err {
            trace.damage.push(Damage {
                path: norm.join(&n),
                error: e,
            });
        }
        packet_uuid_notes(trace, &norm.join(&n), &packets);
        trace.files.push((norm.join(&n), data));
        let Some(first) = packets.first() else {
            continue;
        };
        let class = first.stream;
        let sc = trace.prog.streams.get(class);
        let begin_ns = match (first.info.begin_clock, sc.and_then(|s| s.default_clock)) {
            (Some(v), Some(ci)) => trace.tc.clocks.get(ci).and_then(|c| ns_from_origin(c, v)),
            _ => None,
        };
        infos.push(FileInfo {
            file: fi,
            class,
            instance: first.info.stream_id,
            begin_ns,
            packets,
        });
    }
    for fi in infos {
        let class_id = trace.prog.streams.get(fi.class).map(|s| s.id).unwrap_or(0);
        let path = trace.files[fi.file].0.to_string_lossy().into_owned();
        // Without an instance ID or a begin time, a file is a stream alone.
        let key = match (fi.instance, fi.begin_ns) {
            (Some(i), Some(_)) => Some(i),
            _ => None,
        };
        let existing = key.and_then(|k| {
            trace
                .streams
                .iter()
                .position(|s| s.class == fi.class && s.instance_id == Some(k))
        });
        let sc = trace.prog.streams.get(fi.class);
        let clock = sc
            .and_then(|s| s.default_clock)
            .and_then(|c| trace.tc.clocks.get(c).cloned());
        let pkt_ns = |p: &PacketEntry| -> i64 {
            match (&clock, p.info.begin_clock) {
                (Some(c), Some(v)) => ns_from_origin(c, v).unwrap_or(-1),
                _ => -1,
            }
        };
        match existing {
            None => {
                let mut packets = fi.packets;
                for p in &mut packets {
                    p.file = 0;
                }
                trace.streams.push(StreamGroup {
                    class: fi.class,
                    class_id,
                    instance_id: key,
                    id: 0,
                    name: path,
                    files: vec![fi.file],
                    begin_ns: vec![fi.begin_ns.unwrap_or(-1)],
                    packets,
                });
            }
            Some(si) => {
                let s = &mut trace.streams[si];
                let local = s.files.len();
                // Keep files ordered by their first packet's time (a tie
                // goes after the existing file).
                let pos = s
                    .begin_ns
                    .iter()
                    .position(|&b| fi.begin_ns.unwrap_or(-1) < b)
                    .unwrap_or(local);
                s.files.insert(pos, fi.file);
                s.begin_ns.insert(pos, fi.begin_ns.unwrap_or(-1));
                // Re-number the packets' file indices.
                for p in &mut s.packets {
                    if p.file >= pos {
                        p.file += 1;
                    }
                }
                if pos == 0 {
                    s.name = path;
                }
                // Insert packets sorted by begin time, dropping duplicates.
                for mut p in fi.packets {
                    p.file = pos;
                    let ns = pkt_ns(&p);
                    let i = s
                        .packets
                        .iter()
                        .position(|q| ns <= pkt_ns(q))
                        .unwrap_or(s.packets.len());
                    let dup = s.packets.get(i).is_some_and(|q| {
                        q.total_bytes == p.total_bytes
                            && q.info.begin_clock == p.info.begin_clock
                            && q.info.end_clock == p.info.end_clock
                            && q.info.seq_num == p.info.seq_num
                    });
                    if !dup {
                        s.packets.insert(i, p);
                    }
                }
            }
        }
    }
    Ok(())
}
