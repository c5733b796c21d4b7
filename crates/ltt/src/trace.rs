//! A whole trace: its tracefiles, found by name and content, the event
//! types the facilities tracefiles name, and the events of all tracefiles
//! merged by time.
//!
//! Spec, "A trace is contained in a directory tree": `cpu_N` tracefiles at
//! the root (gaps in N allowed), `control/facilities_N`, `interrupts_N`,
//! `modules_N`, `network_N`, `processes_N`. Files with those names are read
//! as tracefiles whatever they hold (a bad one is reported); any other file
//! of the root or of `control/` is read when it holds LTT blocks (the magic
//! number after the first block header), and skipped otherwise (so
//! `system.xml` or bookmarks do not disturb).
//!
//! The library does no `unsafe`: files are loaded through a [`Loader`],
//! which the CLI implements with a memory map; the default reads the file.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::path::Path;

use tracemux_core::error::{Error, ErrorKind, Result};

use crate::header::{sniff, TraceHeader};
use crate::markers::{type_key, Registry, CORE_FACILITY, CORE_MARKER_FORMAT, CORE_MARKER_ID};
use crate::tracefile::{read_layout, Item, Layout, RawEvent, Stream, TracefileKind};

/// The bytes of one file: a memory map, or a buffer.
pub type FileBytes = Box<dyn std::ops::Deref<Target = [u8]>>;

/// Loads a file's bytes (the CLI passes one that memory-maps).
pub type Loader<'l> = &'l dyn Fn(&Path) -> std::io::Result<FileBytes>;

/// The default [`Loader`]: reads the whole file.
pub fn read_file(path: &Path) -> std::io::Result<FileBytes> {
    Ok(Box::new(std::fs::read(path)?))
}

/// How to open a trace.
#[derive(Clone, Copy, Default)]
pub struct OpenOptions<'l> {
    /// Damage is an error (default: reported, and every intact block kept).
    pub strict: bool,
    /// How files are loaded ([`read_file`] when `None`).
    pub loader: Option<Loader<'l>>,
}

/// One tracefile of the trace.
#[derive(Debug, Clone)]
pub struct TracefileInfo {
    /// Path relative to the trace directory (`cpu_0`, `control/facilities_0`).
    pub name: String,
    pub kind: TracefileKind,
    /// The N of `cpu_N` / `facilities_N` (0 if the name has none).
    pub cpu: u32,
    pub len: u64,
    /// The first block's headers; `None` when the file cannot be read (the
    /// reason is in [`Trace::problems`]).
    pub layout: Option<Layout>,
}

/// An opened trace.
pub struct Trace {
    files: Vec<TracefileInfo>,
    data: Vec<FileBytes>,
    registry: Registry,
    header: Option<TraceHeader>,
    strict: bool,
    problems: Vec<Error>,
}

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io(e.to_string()), path.display().to_string(), 0)
}

impl Trace {
    /// Open the trace directory `path` (or a single tracefile).
    pub fn open(path: &Path, opts: &OpenOptions<'_>) -> Result<Trace> {
        let load = opts.loader.unwrap_or(&read_file);
        let mut files = Vec::new();
        let meta = std::fs::metadata(path).map_err(|e| io_err(path, e))?;
        if !meta.is_dir() {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let data = load(path).map_err(|e| io_err(path, e))?;
            files.push((name, data));
            return Trace::from_files(files, opts.strict);
        }
        for (sub, prefix) in [(path.to_path_buf(), ""), (path.join("control"), "control/")] {
            let Ok(rd) = std::fs::read_dir(&sub) else {
                continue;
            };
            let mut names: Vec<_> = rd
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            for n in names {
                let rel = format!("{prefix}{n}");
                let (kind, _) = TracefileKind::from_name(&rel);
                let p = sub.join(&n);
                let data = match load(&p) {
                    Ok(d) => d,
                    // an unreadable file of another name is not ours
                    Err(_) if kind == TracefileKind::Other => continue,
                    Err(e) => return Err(io_err(&p, e)),
                };
                if kind == TracefileKind::Other && !sniff(&data) {
                    continue;
                }
                files.push((rel, data));
            }
        }
        if files.is_empty() {
            return Err(Error::new(
                ErrorKind::BadMagic,
                format!(
                    "{}: no LTT tracefile (cpu_N, control/*_N) in this directory",
                    path.display()
                ),
                0,
            ));
        }
        Trace::from_files(files, opts.strict)
    }

    /// A trace made of in-memory tracefiles, named by their path relative
    /// to the trace directory.
    pub fn from_files(files: Vec<(String, FileBytes)>, strict: bool) -> Result<Trace> {
        let mut files: Vec<_> = files
            .into_iter()
            .map(|(name, data)| {
                let (kind, cpu) = TracefileKind::from_name(&name);
                (kind, cpu, name, data)
            })
            .collect();
        files.sort_by(|a, b| (a.0, a.1, &a.2).cmp(&(b.0, b.1, &b.2)));
        let mut problems = Vec::new();
        let mut infos = Vec::with_capacity(files.len());
        let mut data = Vec::with_capacity(files.len());
        for (kind, cpu, name, bytes) in files {
            let layout = if bytes.is_empty() {
                None
            } else {
                match read_layout(&bytes, &name) {
                    Ok(l) => Some(l),
                    Err(e) if strict => return Err(e),
                    Err(e) => {
                        problems.push(e);
                        None
                    }
                }
            };
            infos.push(TracefileInfo {
                name,
                kind,
                cpu,
                len: bytes.len() as u64,
                layout,
            });
            data.push(bytes);
        }
        let header = infos
            .iter()
            .find_map(|f| f.layout.as_ref().map(|l| l.header));
        if let Some(h) = &header {
            for f in &infos {
                if let Some(l) = &f.layout {
                    if !l.header.same_layout(h) {
                        let e = Error::invalid(
                            "trace header differs from the other tracefiles' (byte order, sizes or time base); \
                             its own is used for its events",
                            format!("{}: trace header", f.name),
                            40,
                        );
                        if strict {
                            return Err(e);
                        }
                        problems.push(e);
                    }
                }
            }
        }
        let (arch, align) = header.map_or((8, 0), |h| (h.arch_size, h.alignment));
        let mut t = Trace {
            files: infos,
            data,
            registry: Registry::new(arch, align),
            header,
            strict,
            problems,
        };
        t.read_facilities()?;
        Ok(t)
    }

    /// Register the `marker_id` / `marker_format` events of the facilities
    /// tracefiles. Damage in them is reported by the event pass, not here.
    fn read_facilities(&mut self) -> Result<()> {
        let mut reg = std::mem::replace(&mut self.registry, Registry::new(8, 0));
        let mut found = Vec::new();
        for (i, f) in self.files.iter().enumerate() {
            if f.kind != TracefileKind::Facilities {
                continue;
            }
            let Some(layout) = &f.layout else { continue };
            let mut s = Stream::new(&f.name, &self.data[i], layout, false);
            while let Ok(Some(item)) = s.next_item() {
                let Item::Event(ev) = item else { continue };
                if ev.facility != CORE_FACILITY
                    || !matches!(ev.event, CORE_MARKER_ID | CORE_MARKER_FORMAT)
                {
                    continue;
                }
                let before = reg.problems.len();
                reg.register(ev.event, ev.payload, layout.header.endian);
                for p in reg.problems.drain(before..) {
                    found.push(Error::invalid(
                        p,
                        format!("{}: marker event", f.name),
                        ev.offset,
                    ));
                }
            }
        }
        self.registry = reg;
        if self.strict {
            if let Some(e) = found.into_iter().next() {
                return Err(e);
            }
        } else {
            self.problems.extend(found);
        }
        Ok(())
    }

    /// The tracefiles, control files first, then CPUs, by number.
    pub fn files(&self) -> &[TracefileInfo] {
        &self.files
    }

    /// The bytes of tracefile `i`.
    pub fn data(&self, i: usize) -> &[u8] {
        &self.data[i]
    }

    /// The event types named by the facilities tracefiles.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The trace header (of the first readable tracefile).
    pub fn header(&self) -> Option<&TraceHeader> {
        self.header.as_ref()
    }

    /// Whether damage is an error.
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// Problems found while opening (unreadable tracefiles, conflicting
    /// marker events), in lenient mode.
    pub fn problems(&self) -> &[Error] {
        &self.problems
    }

    /// The events of tracefile `i` in file order, `None` if it has no
    /// readable first block.
    pub fn stream(&self, i: usize) -> Option<Stream<'_>> {
        let f = self.files.get(i)?;
        let l = f.layout.as_ref()?;
        Some(Stream::new(&f.name, &self.data[i], l, self.strict))
    }

    /// The events of all tracefiles merged by time.
    pub fn events(&self) -> Events<'_> {
        Events::new(self)
    }
}

/// An event with its time and tracefile.
#[derive(Debug, Clone, Copy)]
pub struct EventRef<'a> {
    /// Index of the tracefile in [`Trace::files`].
    pub file: u32,
    /// Time in ns since the epoch.
    pub ns: u64,
    pub raw: RawEvent<'a>,
}

/// Data a flight-recorder tracefile may have lost: its first block starts
/// after the trace start, so the blocks before were overwritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostRef {
    pub file: u32,
    /// The trace start and the start of the first block kept, in ns.
    pub from_ns: u64,
    pub to_ns: u64,
}

/// What [`Events`] yields.
#[derive(Debug, Clone)]
pub enum Merged<'a> {
    Event(EventRef<'a>),
    Lost(LostRef),
    /// Damage (or an event type no `marker_id` names), reported as soon as
    /// it is met; reading continues after it.
    Damage(Error),
}

enum Head<'a> {
    Event(RawEvent<'a>),
    Lost(LostRef),
}

/// The events of all tracefiles, merged by time; ties go to the tracefile
/// listed first (control files, then CPUs). A k-way merge that stays on the
/// current tracefile while it is still the earliest.
pub struct Events<'a> {
    trace: &'a Trace,
    streams: Vec<Option<Stream<'a>>>,
    heads: Vec<Option<Head<'a>>>,
    first_block_seen: Vec<bool>,
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    queue: VecDeque<Error>,
    /// The stream the last item came from (refilled on the next call).
    last: Option<u32>,
    started: bool,
    done: bool,
    unknown_seen: Vec<bool>,
}

impl<'a> Events<'a> {
    fn new(trace: &'a Trace) -> Self {
        let n = trace.files.len();
        Events {
            trace,
            streams: (0..n).map(|i| trace.stream(i)).collect(),
            heads: (0..n).map(|_| None).collect(),
            first_block_seen: vec![false; n],
            heap: BinaryHeap::with_capacity(n),
            queue: VecDeque::new(),
            last: None,
            started: false,
            done: false,
            unknown_seen: vec![false; 1 << 16],
        }
    }

    fn ns(&self, i: u32, tsc: u64) -> u64 {
        match &self.trace.files[i as usize].layout {
            Some(l) => l.header.tsc_to_ns(tsc),
            None => 0,
        }
    }

    /// Read stream `i` until its next event (or lost marker); damage goes
    /// to the queue. Returns the head's time key.
    fn refill(&mut self, i: u32) -> Result<Option<u64>> {
        let iu = i as usize;
        loop {
            let Some(s) = self.streams[iu].as_mut() else {
                return Ok(None);
            };
            let item = match s.next_item() {
                Ok(Some(it)) => it,
                Ok(None) => {
                    self.streams[iu] = None;
                    return Ok(None);
                }
                Err(e) => {
                    self.streams[iu] = None;
                    return Err(e);
                }
            };
            match item {
                Item::Damage(e) => self.queue.push_back(e),
                Item::Block(bh, _, _) => {
                    if self.first_block_seen[iu] {
                        continue;
                    }
                    self.first_block_seen[iu] = true;
                    let Some(l) = &self.trace.files[iu].layout else {
                        continue;
                    };
                    let h = &l.header;
                    if h.flight_recorder != 0 && bh.begin.cycle_count > h.start_tsc {
                        let lost = LostRef {
                            file: i,
                            from_ns: h.start_time_ns(),
                            to_ns: h.tsc_to_ns(bh.begin.cycle_count),
                        };
                        self.heads[iu] = Some(Head::Lost(lost));
                        return Ok(Some(lost.to_ns));
                    }
                }
                Item::Event(ev) => {
                    if self.trace.registry.get(ev.facility, ev.event).is_none() {
                        self.unknown(i, &ev)?;
                    }
                    let ns = self.ns(i, ev.tsc);
                    self.heads[iu] = Some(Head::Event(ev));
                    return Ok(Some(ns));
                }
            }
        }
    }

    /// An event of a type no `marker_id` named: an error in strict mode,
    /// else reported once per type.
    fn unknown(&mut self, i: u32, ev: &RawEvent<'_>) -> Result<()> {
        let k = type_key(ev.facility, ev.event) as usize;
        if self.unknown_seen[k] {
            return Ok(());
        }
        self.unknown_seen[k] = true;
        let reg = &self.trace.registry;
        let what = match reg.facility_name(ev.facility) {
            Some(f) => format!("facility {} ({f}) has no event {}", ev.facility, ev.event),
            None => format!("unknown facility {} (event {})", ev.facility, ev.event),
        };
        let e = Error::new(
            ErrorKind::Invalid(format!(
                "{what}: no marker_id names it; its events are shown as raw bytes"
            )),
            format!("{}: event header", self.trace.files[i as usize].name),
            ev.offset,
        );
        if self.trace.strict {
            return Err(e);
        }
        self.queue.push_back(e);
        Ok(())
    }

    fn fail(&mut self, e: Error) -> Result<Option<Merged<'a>>> {
        self.done = true;
        Err(e)
    }

    /// The next item in time order, `None` at the end. After an error the
    /// iterator stays empty.
    pub fn next_merged(&mut self) -> Result<Option<Merged<'a>>> {
        if self.done {
            return Ok(None);
        }
        if !self.started {
            self.started = true;
            for i in 0..self.streams.len() as u32 {
                match self.refill(i) {
                    Ok(Some(ns)) => self.heap.push(Reverse((ns, i))),
                    Ok(None) => {}
                    Err(e) => return self.fail(e),
                }
            }
        }
        let mut next = None;
        if let Some(i) = self.last.take() {
            match self.refill(i) {
                // still the earliest: no heap operation
                Ok(Some(ns)) if self.heap.peek().is_none_or(|Reverse(top)| (ns, i) <= *top) => {
                    next = Some((ns, i))
                }
                Ok(Some(ns)) => self.heap.push(Reverse((ns, i))),
                Ok(None) => {}
                Err(e) => return self.fail(e),
            }
        }
        if let Some(e) = self.queue.pop_front() {
            if let Some(k) = next {
                self.heap.push(Reverse(k));
            }
            return Ok(Some(Merged::Damage(e)));
        }
        let Some((ns, i)) = next.or_else(|| self.heap.pop().map(|Reverse(k)| k)) else {
            self.done = true;
            return Ok(None);
        };
        self.last = Some(i);
        Ok(match self.heads[i as usize].take() {
            Some(Head::Event(raw)) => Some(Merged::Event(EventRef { file: i, ns, raw })),
            Some(Head::Lost(l)) => Some(Merged::Lost(l)),
            None => None,
        })
    }
}
