//! A small LTT writer for tests and fixtures: traces from a description.
//!
//! It writes what the reader reads (the layout in [`crate::header`],
//! [`crate::tracefile`] and [`crate::markers`]): either byte order, 32- or
//! 64-bit arch sizes, heartbeat on (32-bit event timestamps, with
//! `core:time_heartbeat` events inserted wherever two events of a tracefile
//! are 2^32 cycles or more apart, so the counter can be followed across
//! wraps) or off (64-bit timestamps), aligned or packed, flight-recorder
//! mode with the oldest blocks of a tracefile dropped (overwritten), any
//! number of CPUs, facilities and control tracefiles.
//!
//! `control/facilities_0` gets a `core:marker_id` and a `core:marker_format`
//! event for every event type, at `start_tsc`. [`Built::expected`] lists
//! every event as written (including those the writer added), per
//! tracefile in file order, with the values the reader must decode.

use std::path::Path;

use tracemux_core::bytes::Endian;

use crate::format::{parse_format, FieldKind, FieldSpec, Sizes};
use crate::header::{pad_to, HEADERS_END, LTT_MAGIC};
use crate::markers::{
    CORE_FACILITY, CORE_MARKER_FORMAT, CORE_MARKER_ID, CORE_TIME_HEARTBEAT, MARKER_FORMAT_FORMAT,
    MARKER_ID_FORMAT,
};
use crate::trace::{FileBytes, Trace};

/// A field value to write (and, in [`Expected`], as the reader decodes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    U(u64),
    I(i64),
    Str(Vec<u8>),
}

/// An event type of the description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeId {
    pub facility: u8,
    pub event: u8,
}

#[derive(Debug, Clone)]
struct TypeDesc {
    id: TypeId,
    name: String,
    format: String,
}

#[derive(Debug, Clone)]
enum Payload {
    Args(Vec<Arg>),
    Raw(Vec<u8>),
}

#[derive(Debug, Clone)]
struct EventDesc {
    tsc: u64,
    ty: TypeId,
    payload: Payload,
}

#[derive(Debug, Clone, Default)]
struct FileDesc {
    name: String,
    events: Vec<EventDesc>,
    overwritten_blocks: usize,
}

/// A trace to write. Fields are the trace header's; the builder methods add
/// facilities, event types and events.
#[derive(Debug, Clone)]
pub struct TraceDesc {
    pub endian: Endian,
    pub arch_size: u8,
    /// 32-bit event timestamps and heartbeat events.
    pub heartbeat: bool,
    /// 0: packed; else the alignment of event headers (data are aligned on
    /// `arch_size`, fields on `min(size, alignment)`).
    pub alignment: u8,
    pub flight_recorder: bool,
    pub block_size: u32,
    pub arch_type: u32,
    pub arch_variant: u32,
    pub float_word_order: u32,
    pub major_version: u8,
    pub minor_version: u8,
    pub tsc_lsb_truncate: u8,
    pub tscbits: u8,
    pub compact_data_shift: u8,
    pub freq_scale: u32,
    pub start_freq: u64,
    pub start_tsc: u64,
    pub start_monotonic: u64,
    pub start_time_sec: u32,
    pub start_time_nsec: u32,
    /// C type sizes written in `marker_id` (default: int 4, the others
    /// `arch_size`, alignment = `alignment`).
    pub sizes: Option<Sizes>,
    facilities: Vec<(u8, String)>,
    types: Vec<TypeDesc>,
    files: Vec<FileDesc>,
}

impl Default for TraceDesc {
    /// Little-endian, 64-bit, no heartbeat, packed, 4 KiB blocks, a 1 GHz
    /// counter starting at 1000 cycles, 2008-06-09 08:26:40 UTC.
    fn default() -> Self {
        TraceDesc {
            endian: Endian::Little,
            arch_size: 8,
            heartbeat: false,
            alignment: 0,
            flight_recorder: false,
            block_size: 4096,
            arch_type: 2,
            arch_variant: 0,
            float_word_order: 0,
            major_version: 1,
            minor_version: 0,
            tsc_lsb_truncate: 0,
            tscbits: 0,
            compact_data_shift: 0,
            freq_scale: 1,
            start_freq: 1_000_000_000,
            start_tsc: 1000,
            start_monotonic: 0,
            start_time_sec: 1_213_000_000,
            start_time_nsec: 0,
            sizes: None,
            facilities: Vec::new(),
            types: Vec::new(),
            files: Vec::new(),
        }
    }
}

/// One event as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// Tracefile (relative path).
    pub file: String,
    pub tsc: u64,
    pub facility: u8,
    pub event: u8,
    /// `facility:event` (`facility_N:event_M` for a type no marker names).
    pub name: String,
    /// Field values as the reader decodes them (sizes applied).
    pub args: Vec<Arg>,
    /// The payload bytes.
    pub payload: Vec<u8>,
}

/// A written trace: its files and the events in them.
#[derive(Debug, Clone)]
pub struct Built {
    /// (relative path, bytes), facilities file first.
    pub files: Vec<(String, Vec<u8>)>,
    /// Every event of every tracefile, per tracefile in file order.
    pub expected: Vec<Expected>,
}

impl Built {
    /// Write the files under `dir` (created as needed).
    pub fn write_dir(&self, dir: &Path) -> std::io::Result<()> {
        for (name, data) in &self.files {
            let p = dir.join(name);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(p, data)?;
        }
        Ok(())
    }

    /// Open the written trace from memory.
    pub fn open(&self, strict: bool) -> tracemux_core::Result<Trace> {
        let files = self
            .files
            .iter()
            .map(|(n, d)| (n.clone(), Box::new(d.clone()) as FileBytes))
            .collect();
        Trace::from_files(files, strict)
    }
}

impl TraceDesc {
    /// Sizes of the user markers.
    pub fn marker_sizes(&self) -> Sizes {
        self.sizes
            .unwrap_or_else(|| Sizes::for_arch(self.arch_size, self.alignment))
    }

    /// Add a facility; its id (1, 2, ...).
    pub fn facility(&mut self, name: &str) -> u8 {
        let id = self.facilities.len() as u8 + 1;
        self.facilities.push((id, name.into()));
        id
    }

    /// Add an event type of facility `facility` with a marker format.
    pub fn event(&mut self, facility: u8, name: &str, format: &str) -> TypeId {
        let event = self
            .types
            .iter()
            .filter(|t| t.id.facility == facility)
            .count() as u8;
        let id = TypeId { facility, event };
        self.types.push(TypeDesc {
            id,
            name: name.into(),
            format: format.into(),
        });
        id
    }

    fn file(&mut self, name: &str) -> &mut FileDesc {
        if let Some(i) = self.files.iter().position(|f| f.name == name) {
            return &mut self.files[i];
        }
        self.files.push(FileDesc {
            name: name.into(),
            ..FileDesc::default()
        });
        self.files.last_mut().expect("just pushed")
    }

    /// Add an event to `cpu_N`.
    pub fn push(&mut self, cpu: u32, tsc: u64, ty: TypeId, args: Vec<Arg>) {
        self.push_to(&format!("cpu_{cpu}"), tsc, ty, args);
    }

    /// Add an event to any tracefile (`control/processes_0`, ...).
    pub fn push_to(&mut self, file: &str, tsc: u64, ty: TypeId, args: Vec<Arg>) {
        self.file(file).events.push(EventDesc {
            tsc,
            ty,
            payload: Payload::Args(args),
        });
    }

    /// Add an event with a raw payload and any ids (e.g. a facility that no
    /// marker names).
    pub fn push_raw(&mut self, file: &str, tsc: u64, facility: u8, event: u8, payload: Vec<u8>) {
        self.file(file).events.push(EventDesc {
            tsc,
            ty: TypeId { facility, event },
            payload: Payload::Raw(payload),
        });
    }

    /// Make `file` exist even without events (one empty block).
    pub fn touch(&mut self, file: &str) {
        self.file(file);
    }

    /// Drop the first `n` blocks of `file`, as a flight recorder that
    /// overwrote them.
    pub fn overwrite_blocks(&mut self, file: &str, n: usize) {
        self.file(file).overwritten_blocks = n;
    }

    /// Write every tracefile.
    pub fn build(&self) -> Result<Built, String> {
        if !matches!(self.arch_size, 1 | 2 | 4 | 8) {
            return Err(format!("arch_size {}", self.arch_size));
        }
        if (self.block_size as usize) < HEADERS_END + 16 {
            return Err(format!("block size {} too small", self.block_size));
        }
        let msizes = self.marker_sizes();
        let csizes = Sizes::for_arch(self.arch_size, self.alignment);
        let mut specs: Vec<(TypeId, String, Vec<FieldSpec>)> = Vec::new();
        for t in &self.types {
            let f = parse_format(t.format.as_bytes(), &msizes)
                .map_err(|e| format!("format of {}: {e}", t.name))?;
            let fac = self.facility_name(t.id.facility);
            specs.push((t.id, format!("{fac}:{}", t.name), f));
        }
        // the facilities tracefile: marker_id + marker_format per type
        let mid = parse_format(MARKER_ID_FORMAT.as_bytes(), &csizes)?;
        let mfmt = parse_format(MARKER_FORMAT_FORMAT.as_bytes(), &csizes)?;
        let mut fac_events = Vec::new();
        for t in &self.types {
            let fac = self.facility_name(t.id.facility);
            let args = vec![
                Arg::Str(fac.as_bytes().to_vec()),
                Arg::Str(t.name.as_bytes().to_vec()),
                Arg::U(t.id.facility as u64),
                Arg::U(t.id.event as u64),
                Arg::U(msizes.int_size as u64),
                Arg::U(msizes.long_size as u64),
                Arg::U(msizes.pointer_size as u64),
                Arg::U(msizes.size_t_size as u64),
                Arg::U(msizes.alignment as u64),
            ];
            fac_events.push(Ev::new(
                self,
                self.start_tsc,
                CORE_FACILITY,
                CORE_MARKER_ID,
                "core:marker_id",
                &mid,
                csizes.alignment,
                args,
            )?);
            let args = vec![
                Arg::Str(fac.as_bytes().to_vec()),
                Arg::Str(t.name.as_bytes().to_vec()),
                Arg::Str(t.format.as_bytes().to_vec()),
            ];
            fac_events.push(Ev::new(
                self,
                self.start_tsc,
                CORE_FACILITY,
                CORE_MARKER_FORMAT,
                "core:marker_format",
                &mfmt,
                csizes.alignment,
                args,
            )?);
        }
        let mut built = Built {
            files: Vec::new(),
            expected: Vec::new(),
        };
        let fac_name = "control/facilities_0";
        let mut fac_written = false;
        let mut jobs: Vec<(String, Vec<Ev>, usize)> = Vec::new();
        for f in &self.files {
            let mut evs = Vec::new();
            if f.name == fac_name {
                evs.append(&mut fac_events);
                fac_written = true;
            }
            for e in &f.events {
                evs.push(match &e.payload {
                    Payload::Raw(p) => Ev {
                        tsc: e.tsc,
                        facility: e.ty.facility,
                        event: e.ty.event,
                        name: self.raw_name(e.ty),
                        payload: p.clone(),
                        args: Vec::new(),
                    },
                    Payload::Args(a) => {
                        let (_, name, sp) = specs
                            .iter()
                            .find(|s| s.0 == e.ty)
                            .ok_or_else(|| format!("unknown type {:?}", e.ty))?;
                        Ev::new(
                            self,
                            e.tsc,
                            e.ty.facility,
                            e.ty.event,
                            name,
                            sp,
                            msizes.alignment,
                            a.clone(),
                        )?
                    }
                });
            }
            // per tracefile, time order (stable: equal times keep their order)
            evs.sort_by_key(|e| e.tsc);
            jobs.push((f.name.clone(), evs, f.overwritten_blocks));
        }
        if !fac_written {
            fac_events.sort_by_key(|e| e.tsc);
            jobs.insert(0, (fac_name.into(), fac_events, 0));
        } else if let Some(i) = jobs.iter().position(|j| j.0 == fac_name) {
            let j = jobs.remove(i);
            jobs.insert(0, j);
        }
        for (name, evs, drop) in jobs {
            let (bytes, exp) = self.write_file(&name, evs, drop)?;
            built.files.push((name, bytes));
            built.expected.extend(exp);
        }
        Ok(built)
    }

    fn facility_name(&self, id: u8) -> String {
        if id == CORE_FACILITY {
            return "core".into();
        }
        self.facilities
            .iter()
            .find(|f| f.0 == id)
            .map_or_else(|| format!("facility_{id}"), |f| f.1.clone())
    }

    fn raw_name(&self, t: TypeId) -> String {
        if t.facility == CORE_FACILITY {
            let core = [
                "marker_id",
                "marker_format",
                "time_heartbeat",
                "time_heartbeat_full",
            ];
            if let Some(n) = core.get(t.event as usize) {
                return format!("core:{n}");
            }
        }
        let named = self.types.iter().find(|d| d.id == t);
        match named {
            Some(d) => format!("{}:{}", self.facility_name(t.facility), d.name),
            None => format!("{}:event_{}", self.facility_name(t.facility), t.event),
        }
    }

    fn put16(&self, b: &mut Vec<u8>, v: u16) {
        b.extend_from_slice(&match self.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        });
    }
    fn put32(&self, b: &mut Vec<u8>, v: u32) {
        b.extend_from_slice(&match self.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        });
    }
    fn put64(&self, b: &mut Vec<u8>, v: u64) {
        b.extend_from_slice(&match self.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        });
    }

    /// The 101 bytes of block headers.
    fn headers(&self, begin: u64, end: u64, lost: u32) -> Vec<u8> {
        let mut b = Vec::with_capacity(HEADERS_END);
        self.put64(&mut b, begin);
        self.put64(&mut b, self.start_freq);
        self.put64(&mut b, end);
        self.put64(&mut b, self.start_freq);
        self.put32(&mut b, lost);
        self.put32(&mut b, self.block_size);
        self.put32(&mut b, LTT_MAGIC);
        self.put32(&mut b, self.arch_type);
        self.put32(&mut b, self.arch_variant);
        self.put32(&mut b, self.float_word_order);
        b.extend_from_slice(&[
            self.arch_size,
            self.major_version,
            self.minor_version,
            self.flight_recorder as u8,
            self.heartbeat as u8,
            self.alignment,
            self.tsc_lsb_truncate,
            self.tscbits,
            self.compact_data_shift,
        ]);
        self.put32(&mut b, self.freq_scale);
        self.put64(&mut b, self.start_freq);
        self.put64(&mut b, self.start_tsc);
        self.put64(&mut b, self.start_monotonic);
        self.put32(&mut b, self.start_time_sec);
        self.put32(&mut b, self.start_time_nsec);
        debug_assert_eq!(b.len(), HEADERS_END);
        b
    }

    /// Lay the events of one tracefile out in blocks.
    fn write_file(
        &self,
        name: &str,
        evs: Vec<Ev>,
        drop_blocks: usize,
    ) -> Result<(Vec<u8>, Vec<Expected>), String> {
        let bs = self.block_size as usize;
        let align = self.alignment as usize;
        let hs = if self.heartbeat { 8 } else { 12 };
        let mut blocks: Vec<Block> = Vec::new();
        let first_tsc = evs.first().map_or(self.start_tsc, |e| e.tsc);
        let mut cur = Block::new(self.start_tsc.min(first_tsc));
        let mut tsc = cur.begin;
        let mut queue: std::collections::VecDeque<Ev> = evs.into();
        while let Some(ev) = queue.pop_front() {
            if self.heartbeat && ev.tsc.wrapping_sub(tsc) >= 1 << 32 && ev.tsc > tsc {
                // a heartbeat so that the counter can be followed
                let hb = Ev {
                    tsc: tsc + 0xffff_ffff,
                    facility: CORE_FACILITY,
                    event: CORE_TIME_HEARTBEAT,
                    name: "core:time_heartbeat".into(),
                    payload: Vec::new(),
                    args: Vec::new(),
                };
                queue.push_front(ev);
                queue.push_front(hb);
                continue;
            }
            let size = ev.payload.len();
            if size > u16::MAX as usize {
                return Err(format!("{name}: event of {size} bytes"));
            }
            let place = |len: usize| {
                let pos = len + pad_to(len, align);
                let mut dpos = pos + hs;
                if align != 0 {
                    dpos += pad_to(dpos, self.arch_size as usize);
                }
                (pos, dpos, dpos + size)
            };
            let mut at = place(cur.data.len());
            if at.2 > bs {
                let next = Block::new(ev.tsc);
                blocks.push(std::mem::replace(&mut cur, next));
                at = place(cur.data.len());
                if at.2 > bs {
                    return Err(format!(
                        "{name}: event of {size} bytes does not fit a {bs}-byte block"
                    ));
                }
            }
            let (pos, dpos, _) = at;
            cur.data.resize(pos, 0);
            if self.heartbeat {
                self.put32(&mut cur.data, ev.tsc as u32);
            } else {
                self.put64(&mut cur.data, ev.tsc);
            }
            cur.data.push(ev.facility);
            cur.data.push(ev.event);
            self.put16(&mut cur.data, size as u16);
            cur.data.resize(dpos, 0);
            cur.data.extend_from_slice(&ev.payload);
            cur.end = ev.tsc;
            tsc = ev.tsc;
            cur.events.push(Expected {
                file: name.into(),
                tsc: ev.tsc,
                facility: ev.facility,
                event: ev.event,
                name: ev.name,
                args: ev.args,
                payload: ev.payload,
            });
        }
        blocks.push(cur);
        let mut out = Vec::new();
        let mut exp = Vec::new();
        for b in blocks.into_iter().skip(drop_blocks) {
            let used = b.data.len();
            let mut h = self.headers(b.begin, b.end, (bs - used) as u32);
            h.extend_from_slice(&b.data[HEADERS_END..]);
            h.resize(bs, 0);
            out.extend_from_slice(&h);
            exp.extend(b.events);
        }
        Ok((out, exp))
    }
}

struct Block {
    begin: u64,
    end: u64,
    data: Vec<u8>,
    events: Vec<Expected>,
}

impl Block {
    fn new(begin: u64) -> Block {
        Block {
            begin,
            end: begin,
            data: vec![0; HEADERS_END],
            events: Vec::new(),
        }
    }
}

/// An event ready to lay out.
struct Ev {
    tsc: u64,
    facility: u8,
    event: u8,
    name: String,
    payload: Vec<u8>,
    args: Vec<Arg>,
}

impl Ev {
    #[allow(clippy::too_many_arguments)]
    fn new(
        d: &TraceDesc,
        tsc: u64,
        facility: u8,
        event: u8,
        name: &str,
        specs: &[FieldSpec],
        alignment: u8,
        args: Vec<Arg>,
    ) -> Result<Ev, String> {
        if args.len() != specs.len() {
            return Err(format!(
                "{name}: {} values for {} fields",
                args.len(),
                specs.len()
            ));
        }
        let mut p = Vec::new();
        let mut norm = Vec::with_capacity(args.len());
        for (a, s) in args.into_iter().zip(specs) {
            match (s.kind, a) {
                (FieldKind::String, Arg::Str(v)) => {
                    if v.contains(&0) {
                        return Err(format!("{name}: NUL inside string field {}", s.name));
                    }
                    p.extend_from_slice(&v);
                    p.push(0);
                    norm.push(Arg::Str(v));
                }
                (FieldKind::String, a) => {
                    return Err(format!("{name}: {a:?} for string field {}", s.name))
                }
                (_, Arg::Str(_)) => return Err(format!("{name}: string for field {}", s.name)),
                (kind, a) => {
                    let raw = match a {
                        Arg::U(u) => u,
                        Arg::I(i) => i as u64,
                        Arg::Str(_) => 0,
                    };
                    let size = s.size as usize;
                    if alignment != 0 {
                        p.resize(p.len() + pad_to(p.len(), size.min(alignment as usize)), 0);
                    }
                    let e = if s.network_order {
                        Endian::Big
                    } else {
                        d.endian
                    };
                    let bytes = match e {
                        Endian::Little => raw.to_le_bytes()[..size].to_vec(),
                        Endian::Big => raw.to_be_bytes()[8 - size..].to_vec(),
                    };
                    p.extend_from_slice(&bytes);
                    let masked = if size == 8 {
                        raw
                    } else {
                        raw & ((1u64 << (size * 8)) - 1)
                    };
                    norm.push(match kind {
                        FieldKind::Signed => {
                            Arg::I(tracemux_core::model::sign_extend(masked, size))
                        }
                        _ => Arg::U(masked),
                    });
                }
            }
        }
        Ok(Ev {
            tsc,
            facility,
            event,
            name: name.into(),
            payload: p,
            args: norm,
        })
    }
}
