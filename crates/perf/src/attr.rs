//! `struct perf_event_attr` as perf.data stores it (in the attrs section of
//! a file, in HEADER_ATTR records of a pipe), and what follows from it: the
//! layout of a SAMPLE record and of the `sample_id` trailer of the other
//! records.
//!
//! The attribute is read by its own `size` field (it grew from 64 bytes in
//! 2.6.31 to 136 in 6.x); fields past that size are zero, as the kernel
//! treats them.

use tracemux_core::{Cursor, Result};

use crate::consts::sample as st;

/// The attribute of one event (one `-e` of perf record).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attr {
    pub type_: u32,
    /// The attribute's own size.
    pub size: u32,
    pub config: u64,
    /// `sample_period`, or `sample_freq` when [`Attr::freq`].
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    /// The bit field word (`disabled`, `inherit`, ... `sample_id_all` ...).
    pub flags: u64,
    pub wakeup_events: u32,
    pub bp_type: u32,
    pub config1: u64,
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub aux_sample_size: u32,
    pub sig_data: u64,
    pub config3: u64,
}

/// Bits of [`Attr::flags`] (their positions in the C bit field).
pub mod flag {
    pub const DISABLED: u64 = 1 << 0;
    pub const INHERIT: u64 = 1 << 1;
    pub const PINNED: u64 = 1 << 2;
    pub const EXCLUSIVE: u64 = 1 << 3;
    pub const EXCLUDE_USER: u64 = 1 << 4;
    pub const EXCLUDE_KERNEL: u64 = 1 << 5;
    pub const EXCLUDE_HV: u64 = 1 << 6;
    pub const EXCLUDE_IDLE: u64 = 1 << 7;
    pub const MMAP: u64 = 1 << 8;
    pub const COMM: u64 = 1 << 9;
    pub const FREQ: u64 = 1 << 10;
    pub const INHERIT_STAT: u64 = 1 << 11;
    pub const ENABLE_ON_EXEC: u64 = 1 << 12;
    pub const TASK: u64 = 1 << 13;
    pub const WATERMARK: u64 = 1 << 14;
    /// Two bits: `precise_ip`.
    pub const PRECISE_IP_SHIFT: u32 = 15;
    pub const MMAP_DATA: u64 = 1 << 17;
    pub const SAMPLE_ID_ALL: u64 = 1 << 18;
    pub const EXCLUDE_HOST: u64 = 1 << 19;
    pub const EXCLUDE_GUEST: u64 = 1 << 20;
    pub const EXCLUDE_CALLCHAIN_KERNEL: u64 = 1 << 21;
    pub const EXCLUDE_CALLCHAIN_USER: u64 = 1 << 22;
    pub const MMAP2: u64 = 1 << 23;
    pub const COMM_EXEC: u64 = 1 << 24;
    pub const USE_CLOCKID: u64 = 1 << 25;
    pub const CONTEXT_SWITCH: u64 = 1 << 26;
    pub const WRITE_BACKWARD: u64 = 1 << 27;
    pub const NAMESPACES: u64 = 1 << 28;
    pub const KSYMBOL: u64 = 1 << 29;
    pub const BPF_EVENT: u64 = 1 << 30;
    pub const AUX_OUTPUT: u64 = 1 << 31;
    pub const CGROUP: u64 = 1 << 32;
    pub const TEXT_POKE: u64 = 1 << 33;
    pub const BUILD_ID: u64 = 1 << 34;
    pub const INHERIT_THREAD: u64 = 1 << 35;
    pub const REMOVE_ON_EXEC: u64 = 1 << 36;
    pub const SIGTRAP: u64 = 1 << 37;

    /// The names `perf evlist -v` prints, with their bits, in its order.
    pub const NAMES: [(&str, u64); 36] = [
        ("disabled", DISABLED),
        ("inherit", INHERIT),
        ("pinned", PINNED),
        ("exclusive", EXCLUSIVE),
        ("exclude_user", EXCLUDE_USER),
        ("exclude_kernel", EXCLUDE_KERNEL),
        ("exclude_hv", EXCLUDE_HV),
        ("exclude_idle", EXCLUDE_IDLE),
        ("mmap", MMAP),
        ("comm", COMM),
        ("freq", FREQ),
        ("inherit_stat", INHERIT_STAT),
        ("enable_on_exec", ENABLE_ON_EXEC),
        ("task", TASK),
        ("watermark", WATERMARK),
        ("mmap_data", MMAP_DATA),
        ("sample_id_all", SAMPLE_ID_ALL),
        ("exclude_host", EXCLUDE_HOST),
        ("exclude_guest", EXCLUDE_GUEST),
        ("exclude_callchain_kernel", EXCLUDE_CALLCHAIN_KERNEL),
        ("exclude_callchain_user", EXCLUDE_CALLCHAIN_USER),
        ("mmap2", MMAP2),
        ("comm_exec", COMM_EXEC),
        ("use_clockid", USE_CLOCKID),
        ("context_switch", CONTEXT_SWITCH),
        ("write_backward", WRITE_BACKWARD),
        ("namespaces", NAMESPACES),
        ("ksymbol", KSYMBOL),
        ("bpf_event", BPF_EVENT),
        ("aux_output", AUX_OUTPUT),
        ("cgroup", CGROUP),
        ("text_poke", TEXT_POKE),
        ("build_id", BUILD_ID),
        ("inherit_thread", INHERIT_THREAD),
        ("remove_on_exec", REMOVE_ON_EXEC),
        ("sigtrap", SIGTRAP),
    ];
}

/// The smallest attribute perf.data ever held (`PERF_ATTR_SIZE_VER0`).
pub const ATTR_SIZE_VER0: u32 = 64;

impl Attr {
    /// Read an attribute at the cursor: its `size` bytes (at least 64; a
    /// size of 0 means 64, as for the kernel). The cursor moves past it.
    pub fn parse(c: &mut Cursor<'_>) -> Result<Attr> {
        let start = *c;
        let type_ = c.u32()?;
        let size = c.u32()?;
        let size = if size == 0 { ATTR_SIZE_VER0 } else { size };
        if size < ATTR_SIZE_VER0 {
            return Err(start.invalid(format!("perf_event_attr size {size} below 64")));
        }
        let mut whole = start;
        let body = whole.bytes(size as usize)?;
        // read the known part from a zero-padded copy of at most 136 bytes
        let mut buf = [0u8; 136];
        let n = body.len().min(buf.len());
        buf[..n].copy_from_slice(&body[..n]);
        let mut b = Cursor::with_base(&buf, start.offset(), c.endian(), c.section());
        b.skip(8)?;
        let config = b.u64()?;
        let sample_period = b.u64()?;
        let sample_type = b.u64()?;
        let read_format = b.u64()?;
        let flags = b.u64()?;
        let wakeup_events = b.u32()?;
        let bp_type = b.u32()?;
        let config1 = b.u64()?;
        let config2 = b.u64()?;
        let branch_sample_type = b.u64()?;
        let sample_regs_user = b.u64()?;
        let sample_stack_user = b.u32()?;
        let clockid = b.i32()?;
        let sample_regs_intr = b.u64()?;
        let aux_watermark = b.u32()?;
        let sample_max_stack = b.u16()?;
        b.u16()?;
        let aux_sample_size = b.u32()?;
        b.u32()?;
        let sig_data = b.u64()?;
        let config3 = b.u64()?;
        *c = whole;
        Ok(Attr {
            type_,
            size,
            config,
            sample_period,
            sample_type,
            read_format,
            flags,
            wakeup_events,
            bp_type,
            config1,
            config2,
            branch_sample_type,
            sample_regs_user,
            sample_stack_user,
            clockid,
            sample_regs_intr,
            aux_watermark,
            sample_max_stack,
            aux_sample_size,
            sig_data,
            config3,
        })
    }

    pub fn has(&self, sample_bits: u64) -> bool {
        self.sample_type & sample_bits != 0
    }

    pub fn flag(&self, f: u64) -> bool {
        self.flags & f != 0
    }

    /// Whether the records other than SAMPLE end with a `sample_id` trailer.
    pub fn sample_id_all(&self) -> bool {
        self.flag(flag::SAMPLE_ID_ALL)
    }

    /// The size in bytes of the `sample_id` trailer.
    pub fn id_trailer_size(&self) -> usize {
        let t = self.sample_type;
        let mut n = 0;
        for bit in [
            st::TID,
            st::TIME,
            st::ID,
            st::STREAM_ID,
            st::CPU,
            st::IDENTIFIER,
        ] {
            if t & bit != 0 {
                n += 8;
            }
        }
        n
    }

    /// Where the event id is in a SAMPLE record: its index in u64 words
    /// from the start of the body (perf's `id_pos`), or `None` without one.
    pub fn sample_id_pos(&self) -> Option<usize> {
        let t = self.sample_type;
        if t & st::IDENTIFIER != 0 {
            return Some(0);
        }
        if t & st::ID == 0 {
            return None;
        }
        let mut n = 0;
        for bit in [st::IP, st::TID, st::TIME, st::ADDR] {
            if t & bit != 0 {
                n += 1;
            }
        }
        Some(n)
    }

    /// Where the event id is in a `sample_id` trailer: its index in u64
    /// words counted back from the end (1 = last word; perf's `is_pos`).
    pub fn trailer_id_pos(&self) -> Option<usize> {
        let t = self.sample_type;
        if t & st::IDENTIFIER != 0 {
            return Some(1);
        }
        if t & st::ID == 0 {
            return None;
        }
        let mut n = 1;
        for bit in [st::STREAM_ID, st::CPU] {
            if t & bit != 0 {
                n += 1;
            }
        }
        Some(n)
    }
}

/// What a `sample_id` trailer (or the same fields of a SAMPLE) says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampleId {
    pub pid: Option<u32>,
    pub tid: Option<u32>,
    pub time: Option<u64>,
    pub id: Option<u64>,
    pub stream_id: Option<u64>,
    pub cpu: Option<u32>,
}

/// Parse the `sample_id` trailer at the end of `body` (the bytes after the
/// 8-byte record header) for `attr`. `None` when the body is too short or
/// the attribute has no trailer.
pub fn parse_trailer(attr: &Attr, body: &[u8], e: tracemux_core::Endian) -> Option<SampleId> {
    if !attr.sample_id_all() {
        return None;
    }
    let n = attr.id_trailer_size();
    if n == 0 || body.len() < n {
        return None;
    }
    let mut c = Cursor::new(&body[body.len() - n..], e, "sample_id");
    let t = attr.sample_type;
    let mut s = SampleId::default();
    if t & st::TID != 0 {
        s.pid = c.u32().ok();
        s.tid = c.u32().ok();
    }
    if t & st::TIME != 0 {
        s.time = c.u64().ok();
    }
    if t & st::ID != 0 {
        s.id = c.u64().ok();
    }
    if t & st::STREAM_ID != 0 {
        s.stream_id = c.u64().ok();
    }
    if t & st::CPU != 0 {
        s.cpu = c.u32().ok();
        c.u32().ok()?;
    }
    if t & st::IDENTIFIER != 0 {
        s.id = c.u64().ok();
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracemux_core::Endian;

    fn attr_bytes(size: u32, sample_type: u64, flags: u64) -> Vec<u8> {
        let mut v = vec![0u8; (size as usize).max(48)];
        v[0..4].copy_from_slice(&1u32.to_le_bytes());
        v[4..8].copy_from_slice(&size.to_le_bytes());
        v[24..32].copy_from_slice(&sample_type.to_le_bytes());
        v[40..48].copy_from_slice(&flags.to_le_bytes());
        v
    }

    #[test]
    fn reads_by_its_own_size() {
        let b = attr_bytes(64, st::TID | st::TIME, flag::SAMPLE_ID_ALL);
        let mut c = Cursor::new(&b, Endian::Little, "attrs");
        let a = Attr::parse(&mut c).unwrap();
        assert_eq!(c.remaining(), 0);
        assert_eq!(a.size, 64);
        assert!(a.sample_id_all());
        assert_eq!(a.id_trailer_size(), 16);
        let b = attr_bytes(200, st::IDENTIFIER, 0);
        let mut c = Cursor::new(&b, Endian::Little, "attrs");
        let a = Attr::parse(&mut c).unwrap();
        assert_eq!(c.remaining(), 0);
        assert_eq!(a.sample_id_pos(), Some(0));
        assert_eq!(a.trailer_id_pos(), Some(1));
    }

    #[test]
    fn truncated_attr_is_an_error() {
        let b = attr_bytes(120, 0, 0);
        for n in 0..b.len() {
            let mut c = Cursor::new(&b[..n], Endian::Little, "attrs");
            assert!(Attr::parse(&mut c).is_err(), "{n}");
        }
        let mut b = attr_bytes(32, 0, 0);
        b.truncate(32);
        let mut c = Cursor::new(&b, Endian::Little, "attrs");
        assert!(Attr::parse(&mut c).is_err());
    }

    #[test]
    fn trailer_fields() {
        let mut a = Attr {
            sample_type: st::TID | st::TIME | st::CPU | st::ID,
            flags: flag::SAMPLE_ID_ALL,
            ..Attr::default()
        };
        let mut body = vec![0xaa; 5];
        body.extend_from_slice(&7u32.to_le_bytes());
        body.extend_from_slice(&8u32.to_le_bytes());
        body.extend_from_slice(&99u64.to_le_bytes());
        body.extend_from_slice(&5u64.to_le_bytes());
        body.extend_from_slice(&3u32.to_le_bytes());
        body.extend_from_slice(&0u32.to_le_bytes());
        let s = parse_trailer(&a, &body, Endian::Little).unwrap();
        assert_eq!(
            (s.pid, s.tid, s.time, s.id, s.cpu),
            (Some(7), Some(8), Some(99), Some(5), Some(3))
        );
        assert_eq!(a.trailer_id_pos(), Some(2));
        a.flags = 0;
        assert!(parse_trailer(&a, &body, Endian::Little).is_none());
    }
}
