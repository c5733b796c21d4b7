//! The feature sections (file mode: the table after the data section; pipe
//! mode: HEADER_FEATURE records). Each known one is decoded as perf's
//! header.c writes it; every section, known or not, is also kept as bytes
//! ([`Features::raw`]) so that `dump` shows what a newer perf wrote.
//!
//! Strings are perf's `do_write_string`: a u32 length (of the padded
//! string, NUL included), then the bytes.

use tracemux_core::{Cursor, Endian, Result};

use crate::attr::Attr;
use crate::consts::feat;
use crate::header::EventAttr;

/// A build id of a dso (HEADER_BUILD_ID).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildId {
    pub pid: i32,
    pub misc: u16,
    /// The id bytes (20 for SHA-1 build ids).
    pub id: Vec<u8>,
    pub filename: String,
}

/// The decoded feature sections.
#[derive(Debug, Clone, Default)]
pub struct Features {
    pub hostname: Option<String>,
    pub osrelease: Option<String>,
    pub version: Option<String>,
    pub arch: Option<String>,
    /// (available, online)
    pub nrcpus: Option<(u32, u32)>,
    pub cpudesc: Option<String>,
    pub cpuid: Option<String>,
    /// kB
    pub total_mem: Option<u64>,
    pub cmdline: Option<Vec<String>>,
    pub event_desc: Vec<EventAttr>,
    pub build_ids: Vec<BuildId>,
    /// The resolution of the clock in ns (HEADER_CLOCKID).
    pub clockid_res_ns: Option<u64>,
    /// (version, clockid, wall clock ns, clockid ns) of HEADER_CLOCK_DATA.
    pub clock_data: Option<(u32, u32, u64, u64)>,
    /// (version, type, level, ratio, mmap_len) of HEADER_COMPRESSED.
    pub compressed: Option<(u32, u32, u32, u32, u32)>,
    /// (first, last) sample time.
    pub sample_time: Option<(u64, u64)>,
    pub dir_format: Option<u64>,
    /// The strings of PMU_MAPPINGS: (type, name).
    pub pmu_mappings: Vec<(u32, String)>,
    /// Every feature section: (id, absolute offset, bytes).
    pub raw: Vec<(u32, u64, Vec<u8>)>,
    /// Feature sections that could not be decoded: (id, error).
    pub errors: Vec<(u32, tracemux_core::Error)>,
}

fn string(c: &mut Cursor<'_>) -> Result<String> {
    let len = c.u32()? as usize;
    if len > c.remaining() {
        return Err(c.invalid(format!("string of {len} bytes runs past the section")));
    }
    let b = c.bytes(len)?;
    let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
    Ok(String::from_utf8_lossy(&b[..end]).into_owned())
}

fn strings(c: &mut Cursor<'_>) -> Result<Vec<String>> {
    let n = c.u32()?;
    // each string takes at least 4 bytes
    if n as usize > c.remaining() / 4 {
        return Err(c.invalid(format!("{n} strings do not fit in the section")));
    }
    (0..n).map(|_| string(c)).collect()
}

fn event_desc(c: &mut Cursor<'_>) -> Result<Vec<EventAttr>> {
    let nre = c.u32()?;
    let sz = c.u32()? as usize;
    if sz < 64 {
        return Err(c.invalid(format!("event_desc attribute size {sz} below 64")));
    }
    if nre as usize > c.remaining() / sz.max(1) {
        return Err(c.invalid(format!(
            "{nre} event descriptions do not fit in the section"
        )));
    }
    let mut out = Vec::new();
    for _ in 0..nre {
        let mut ac = c.sub(sz)?;
        let mut attr = Attr::parse(&mut ac)?;
        // the stored size may be the writer's; keep what was read
        attr.size = attr.size.min(sz as u32);
        let nr = c.u32()? as usize;
        let name = string(c)?;
        if nr > c.remaining() / 8 {
            return Err(c.invalid(format!("{nr} ids do not fit in the section")));
        }
        let ids = (0..nr).map(|_| c.u64()).collect::<Result<Vec<_>>>()?;
        out.push(EventAttr {
            attr,
            ids,
            name: Some(name),
        });
    }
    Ok(out)
}

fn build_ids(c: &mut Cursor<'_>) -> Result<Vec<BuildId>> {
    let mut out = Vec::new();
    while c.remaining() >= 8 {
        let start = *c;
        let _type = c.u32()?;
        let misc = c.u16()?;
        let size = c.u16()? as usize;
        if size < 8 + 4 + 24 {
            return Err(start.invalid(format!("build id record of {size} bytes")));
        }
        let mut r = c.sub(size - 8)?;
        let pid = r.i32()?;
        let raw = r.bytes(24)?;
        // PERF_RECORD_MISC_BUILD_ID_SIZE: byte 20 is the id's size
        let n = if misc & (1 << 15) != 0 {
            (raw[20] as usize).min(20)
        } else {
            20
        };
        let name = r.rest();
        let end = name.iter().position(|&x| x == 0).unwrap_or(name.len());
        out.push(BuildId {
            pid,
            misc,
            id: raw[..n].to_vec(),
            filename: String::from_utf8_lossy(&name[..end]).into_owned(),
        });
    }
    Ok(out)
}

impl Features {
    /// Decode the section of feature `id` (bytes at absolute `offset`).
    /// TRACING_DATA is only kept here; [`crate::tracing`] reads it.
    pub fn add(&mut self, id: u32, bytes: &[u8], offset: u64, e: Endian) {
        self.raw.push((id, offset, bytes.to_vec()));
        let name = feat::name(id).unwrap_or("feature");
        let mut c = Cursor::with_base(bytes, offset, e, name);
        let r: Result<()> = (|| {
            match id {
                feat::HOSTNAME => self.hostname = Some(string(&mut c)?),
                feat::OSRELEASE => self.osrelease = Some(string(&mut c)?),
                feat::VERSION => self.version = Some(string(&mut c)?),
                feat::ARCH => self.arch = Some(string(&mut c)?),
                feat::CPUDESC => self.cpudesc = Some(string(&mut c)?),
                feat::CPUID => self.cpuid = Some(string(&mut c)?),
                feat::NRCPUS => self.nrcpus = Some((c.u32()?, c.u32()?)),
                feat::TOTAL_MEM => self.total_mem = Some(c.u64()?),
                feat::CMDLINE => self.cmdline = Some(strings(&mut c)?),
                feat::EVENT_DESC => self.event_desc = event_desc(&mut c)?,
                feat::BUILD_ID => self.build_ids = build_ids(&mut c)?,
                feat::CLOCKID => self.clockid_res_ns = Some(c.u64()?),
                feat::CLOCK_DATA => {
                    self.clock_data = Some((c.u32()?, c.u32()?, c.u64()?, c.u64()?))
                }
                feat::COMPRESSED => {
                    self.compressed = Some((c.u32()?, c.u32()?, c.u32()?, c.u32()?, c.u32()?))
                }
                feat::SAMPLE_TIME => self.sample_time = Some((c.u64()?, c.u64()?)),
                feat::DIR_FORMAT => self.dir_format = Some(c.u64()?),
                feat::PMU_MAPPINGS => {
                    let n = c.u32()?;
                    for _ in 0..n.min(c.remaining() as u32 / 8) {
                        let t = c.u32()?;
                        let s = string(&mut c)?;
                        self.pmu_mappings.push((t, s));
                    }
                }
                _ => {}
            }
            Ok(())
        })();
        if let Err(err) = r {
            self.errors.push((id, err));
        }
    }

    /// The bytes of feature `id`, when present.
    pub fn raw(&self, id: u32) -> Option<&[u8]> {
        self.raw.iter().find(|r| r.0 == id).map(|r| r.2.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Vec<u8> {
        let mut b = v.as_bytes().to_vec();
        b.push(0);
        while b.len() % 8 != 0 {
            b.push(0);
        }
        let mut out = (b.len() as u32).to_le_bytes().to_vec();
        out.extend(b);
        out
    }

    #[test]
    fn strings_and_truncation() {
        let mut f = Features::default();
        let b = s("host1");
        f.add(feat::HOSTNAME, &b, 0, Endian::Little);
        assert_eq!(f.hostname.as_deref(), Some("host1"));
        for n in 0..b.len() {
            let mut f = Features::default();
            f.add(feat::HOSTNAME, &b[..n], 0, Endian::Little);
            assert!(f.hostname.is_none() && f.errors.len() == 1, "{n}");
        }
        let mut cmd = 2u32.to_le_bytes().to_vec();
        cmd.extend(s("perf"));
        cmd.extend(s("record"));
        let mut f = Features::default();
        f.add(feat::CMDLINE, &cmd, 0, Endian::Little);
        assert_eq!(f.cmdline.unwrap(), vec!["perf", "record"]);
        let mut f = Features::default();
        f.add(feat::CMDLINE, &u32::MAX.to_le_bytes(), 0, Endian::Little);
        assert_eq!(f.errors.len(), 1);
    }
}
