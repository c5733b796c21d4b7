//! trace.dat options: ids, names and decoders for every id 0 to 25.

use std::borrow::Cow;
use std::fmt::Write as _;

use tracemux_core::bytes::{Cursor, Endian};
use tracemux_core::error::Result;

/// An option id as stored. Unknown ids are kept, never fatal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OptionId(pub u16);

impl OptionId {
    pub const DONE: OptionId = OptionId(0);
    pub const DATE: OptionId = OptionId(1);
    pub const CPUSTAT: OptionId = OptionId(2);
    pub const BUFFER: OptionId = OptionId(3);
    pub const TRACECLOCK: OptionId = OptionId(4);
    pub const UNAME: OptionId = OptionId(5);
    pub const HOOK: OptionId = OptionId(6);
    pub const OFFSET: OptionId = OptionId(7);
    pub const CPUCOUNT: OptionId = OptionId(8);
    pub const VERSION: OptionId = OptionId(9);
    pub const PROCMAPS: OptionId = OptionId(10);
    pub const TRACEID: OptionId = OptionId(11);
    pub const TIME_SHIFT: OptionId = OptionId(12);
    pub const GUEST: OptionId = OptionId(13);
    pub const TSC2NSEC: OptionId = OptionId(14);
    pub const STRINGS: OptionId = OptionId(15);
    pub const HEADER_INFO: OptionId = OptionId(16);
    pub const FTRACE_EVENTS: OptionId = OptionId(17);
    pub const EVENT_FORMATS: OptionId = OptionId(18);
    pub const KALLSYMS: OptionId = OptionId(19);
    pub const PRINTK: OptionId = OptionId(20);
    pub const CMDLINES: OptionId = OptionId(21);
    pub const BUFFER_TEXT: OptionId = OptionId(22);
    pub const BTF_FILE: OptionId = OptionId(23);
    pub const LAST_BOOT_INFO: OptionId = OptionId(24);
    pub const MODULES_FILE: OptionId = OptionId(25);

    /// The name, as `trace-cmd dump --options` prints it.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "DONE",
            1 => "DATE",
            2 => "CPUSTAT",
            3 => "BUFFER",
            4 => "TRACECLOCK",
            5 => "UNAME",
            6 => "HOOK",
            7 => "OFFSET",
            8 => "CPUCOUNT",
            9 => "VERSION",
            10 => "PROCMAPS",
            11 => "TRACEID",
            12 => "TIME_SHIFT",
            13 => "GUEST",
            14 => "TSC2NSEC",
            15 => "STRINGS",
            16 => "HEADERS",
            17 => "FTRACE EVENTS",
            18 => "EVENT FORMATS",
            19 => "KALLSYMS",
            20 => "PRINTK",
            21 => "CMDLINES",
            22 => "BUFFER_LAT",
            23 => "BTF_FILE",
            24 => "LAST_BOOT_INFO",
            25 => "MODULES_FILE",
            _ => return None,
        })
    }

    /// Options whose body is the 8-byte offset of a metadata section.
    pub fn is_section_ref(self) -> bool {
        matches!(self.0, 16..=21) || self == OptionId::BTF_FILE || self == OptionId::MODULES_FILE
    }
}

/// One stored option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionRec<'a> {
    pub id: OptionId,
    /// Offset of the option header (file offset, or offset in the
    /// decompressed options section when that section is compressed).
    pub offset: u64,
    pub data: Cow<'a, [u8]>,
    /// v7: file offset of the options section holding this option.
    pub section: Option<u64>,
}

impl OptionRec<'_> {
    pub fn u64_at(&self, at: usize, e: Endian) -> Option<u64> {
        e.read_uint(self.data.get(at..)?, 8)
    }
    pub fn u32_at(&self, at: usize, e: Endian) -> Option<u32> {
        e.read_uint(self.data.get(at..)?, 4).map(|v| v as u32)
    }
    /// The body as text up to the first NUL.
    pub fn text(&self) -> String {
        let n = self
            .data
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.data.len());
        String::from_utf8_lossy(&self.data[..n]).into_owned()
    }
}

/// TSC2NSEC: `ns = (cycles * mult) >> shift` (+ offset, stored but unused by trace-cmd 3.1.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tsc2Nsec {
    pub mult: u32,
    pub shift: u32,
    pub offset: u64,
}

/// One CPU's time-sync samples from TIME_SHIFT.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TimeShiftCpu {
    pub times: Vec<i64>,
    pub offsets: Vec<i64>,
    pub scalings: Vec<i64>,
    /// Fraction bits of the scaling ratio (trace-cmd >= 3.0 appends these).
    pub fractions: Vec<i64>,
}

/// TIME_SHIFT: host/guest synchronisation data.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TimeShift {
    pub peer_trace_id: u64,
    pub flags: u32,
    pub cpus: Vec<TimeShiftCpu>,
}

/// GUEST: a guest traced in this session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guest {
    pub name: String,
    pub trace_id: u64,
    /// (vcpu id, host pid)
    pub vcpus: Vec<(u32, u32)>,
}

pub fn parse_tsc2nsec(data: &[u8], e: Endian) -> Result<Tsc2Nsec> {
    let mut c = Cursor::new(data, e, "option TSC2NSEC");
    Ok(Tsc2Nsec {
        mult: c.u32()?,
        shift: c.u32()?,
        offset: c.u64()?,
    })
}

/// A u32 count of items of `per` bytes each, refused when the rest of the
/// data cannot hold them (so a corrupt count cannot allocate much).
fn bounded_count(c: &mut Cursor<'_>, per: usize) -> Result<usize> {
    let count = c.u32()?;
    let n = count as usize;
    if n.saturating_mul(per) > c.remaining() {
        return Err(c.invalid(format!("count {count} larger than the remaining data")));
    }
    Ok(n)
}

/// A [`bounded_count`] of items, each read by `item`.
fn bounded_list<T>(
    c: &mut Cursor<'_>,
    per: usize,
    mut item: impl FnMut(&mut Cursor<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    let n = bounded_count(c, per)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(item(c)?);
    }
    Ok(v)
}

pub fn parse_time_shift(data: &[u8], e: Endian) -> Result<TimeShift> {
    let mut c = Cursor::new(data, e, "option TIME_SHIFT");
    let peer_trace_id = c.u64()?;
    let flags = c.u32()?;
    let mut cpus = bounded_list(&mut c, 4, |c| {
        // every sample takes 24 bytes
        let n = bounded_count(c, 24)?;
        let mut cpu = TimeShiftCpu::default();
        for v in [&mut cpu.times, &mut cpu.offsets, &mut cpu.scalings] {
            for _ in 0..n {
                v.push(c.i64()?);
            }
        }
        Ok(cpu)
    })?;
    // Optional fraction arrays, one per CPU, when bytes remain.
    if !c.is_empty() {
        for cpu in cpus.iter_mut() {
            let n = cpu.times.len();
            if c.remaining() < n * 8 {
                break;
            }
            for _ in 0..n {
                cpu.fractions.push(c.i64()?);
            }
        }
    }
    Ok(TimeShift {
        peer_trace_id,
        flags,
        cpus,
    })
}

pub fn parse_guest(data: &[u8], e: Endian) -> Result<Guest> {
    let mut c = Cursor::new(data, e, "option GUEST");
    let name = c.cstring()?;
    let trace_id = c.u64()?;
    let vcpus = bounded_list(&mut c, 8, |c| Ok((c.u32()?, c.u32()?)))?;
    Ok(Guest {
        name,
        trace_id,
        vcpus,
    })
}

/// `describe` of a parsed option body, or why it could not be parsed.
fn or_damaged<T, E: std::fmt::Display>(
    r: Result<T, E>,
    describe: impl FnOnce(T) -> String,
) -> String {
    r.map_or_else(|err| format!("damaged: {err}"), describe)
}

/// A readable description of an option's body, for `tracemux info`.
pub fn describe(o: &OptionRec<'_>, e: Endian) -> String {
    let mut s = String::new();
    let text = || o.text().trim_end().to_string();
    match o.id {
        OptionId::DONE => {
            let _ = write!(s, "next options section at {}", o.u64_at(0, e).unwrap_or(0));
        }
        OptionId::DATE => {
            let _ = write!(s, "{} (µs between trace clock and time of day)", text());
        }
        OptionId::OFFSET => {
            let _ = write!(s, "{} (ns added to every timestamp)", text());
        }
        OptionId::CPUSTAT
        | OptionId::TRACECLOCK
        | OptionId::UNAME
        | OptionId::VERSION
        | OptionId::HOOK => {
            s = text().replace('\n', "; ");
        }
        OptionId::PROCMAPS | OptionId::LAST_BOOT_INFO => {
            let t = text();
            let _ = write!(s, "{} bytes of text, {} lines", t.len(), t.lines().count());
        }
        OptionId::CPUCOUNT => {
            let _ = write!(
                s,
                "{}",
                o.u32_at(0, e).map_or("?".into(), |v| v.to_string())
            );
        }
        OptionId::TRACEID => {
            let _ = write!(
                s,
                "{}",
                o.u64_at(0, e).map_or("?".into(), |v| format!("{v:#X}"))
            );
        }
        OptionId::TSC2NSEC => {
            s = or_damaged(parse_tsc2nsec(&o.data, e), |t| {
                format!("mult {} shift {} offset {}", t.mult, t.shift, t.offset)
            });
        }
        OptionId::TIME_SHIFT => {
            s = or_damaged(parse_time_shift(&o.data, e), |t| {
                format!(
                    "peer trace id {:#X}, flags {:#x}, {} cpus, samples per cpu [{}]{}",
                    t.peer_trace_id,
                    t.flags,
                    t.cpus.len(),
                    t.cpus
                        .iter()
                        .map(|c| c.times.len().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    if t.cpus.iter().any(|c| !c.fractions.is_empty()) {
                        ", with fraction bits"
                    } else {
                        ""
                    }
                )
            });
        }
        OptionId::GUEST => {
            s = or_damaged(parse_guest(&o.data, e), |g| {
                format!(
                    "guest '{}' trace id {:#X}, {} vcpus",
                    g.name,
                    g.trace_id,
                    g.vcpus.len()
                )
            });
        }
        OptionId::BUFFER | OptionId::BUFFER_TEXT => {
            let mut c = Cursor::new(&o.data, e, "option");
            let off = c.u64().unwrap_or(0);
            let name = c.cstring().unwrap_or_default();
            let _ = write!(s, "buffer \"{name}\" data at {off}");
        }
        id if id.is_section_ref() => {
            let _ = write!(s, "section at {}", o.u64_at(0, e).unwrap_or(0));
        }
        _ => {
            let _ = write!(s, "{} bytes (unknown option id {})", o.data.len(), o.id.0);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_shift_with_fractions() {
        let mut d = Vec::new();
        d.extend_from_slice(&7u64.to_le_bytes());
        d.extend_from_slice(&1u32.to_le_bytes());
        d.extend_from_slice(&1u32.to_le_bytes()); // 1 cpu
        d.extend_from_slice(&2u32.to_le_bytes()); // 2 samples
        for v in [10i64, 20, -5, -6, 1, 1] {
            d.extend_from_slice(&v.to_le_bytes());
        }
        let t = parse_time_shift(&d, Endian::Little).unwrap();
        assert_eq!(t.cpus[0].offsets, vec![-5, -6]);
        assert!(t.cpus[0].fractions.is_empty());
        for v in [3i64, 4] {
            d.extend_from_slice(&v.to_le_bytes());
        }
        let t = parse_time_shift(&d, Endian::Little).unwrap();
        assert_eq!(t.cpus[0].fractions, vec![3, 4]);
        // a huge count is refused, not allocated
        d[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(parse_time_shift(&d, Endian::Little).is_err());
    }

    #[test]
    fn names() {
        assert_eq!(OptionId(16).name(), Some("HEADERS"));
        assert_eq!(OptionId(99).name(), None);
        assert!(OptionId::MODULES_FILE.is_section_ref());
        assert!(!OptionId::LAST_BOOT_INFO.is_section_ref());
    }
}
