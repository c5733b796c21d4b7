//! The body of a SAMPLE record: the fields its attribute's `sample_type`
//! selects, in the kernel's order (`perf_output_sample`), borrowed from the
//! record's bytes. Variable-length parts (read values, callchain, raw data,
//! branch stack, registers, user stack, aux data) are checked against the
//! record's size before they are taken, so no size in the record sizes an
//! allocation.

use tracemux_core::{Cursor, Endian, Result};

use crate::attr::Attr;
use crate::consts::{read as rf, sample as st};

/// One parsed SAMPLE. Absent fields are `None` (or empty).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sample<'a> {
    pub ip: Option<u64>,
    pub pid: Option<u32>,
    pub tid: Option<u32>,
    pub time: Option<u64>,
    pub addr: Option<u64>,
    pub id: Option<u64>,
    pub stream_id: Option<u64>,
    pub cpu: Option<u32>,
    pub period: Option<u64>,
    /// The READ values, raw (see [`read_values`]).
    pub read: &'a [u8],
    /// The callchain: `nr` u64 words, markers included.
    pub callchain: &'a [u8],
    /// RAW data (a tracepoint's record: `common_type`, ...).
    pub raw: Option<&'a [u8]>,
    /// BRANCH_STACK entries: `nr` × (from, to, flags), after `hw_idx`.
    pub branch_nr: u64,
    pub branch_hw_idx: Option<u64>,
    pub branches: &'a [u8],
    pub regs_user_abi: u64,
    pub regs_user: &'a [u8],
    pub stack_user: &'a [u8],
    pub stack_user_dyn_size: u64,
    pub weight: Option<u64>,
    pub data_src: Option<u64>,
    pub transaction: Option<u64>,
    pub regs_intr_abi: u64,
    pub regs_intr: &'a [u8],
    pub phys_addr: Option<u64>,
    pub aux: &'a [u8],
    pub cgroup: Option<u64>,
    pub data_page_size: Option<u64>,
    pub code_page_size: Option<u64>,
    /// The header's `misc` (cpumode, exact ip).
    pub misc: u16,
}

impl<'a> Sample<'a> {
    /// The callchain entries (markers included).
    pub fn callchain(&self, e: Endian) -> impl Iterator<Item = u64> + 'a {
        let b = self.callchain;
        b.chunks_exact(8).map(move |w| match e {
            Endian::Little => u64::from_le_bytes(w.try_into().unwrap_or([0; 8])),
            Endian::Big => u64::from_be_bytes(w.try_into().unwrap_or([0; 8])),
        })
    }
}

fn words<'a>(c: &mut Cursor<'a>, n: u64, what: &str) -> Result<&'a [u8]> {
    let bytes = n
        .checked_mul(8)
        .filter(|&b| b <= c.remaining() as u64)
        .ok_or_else(|| c.invalid(format!("{what} of {n} entries runs past the record")))?;
    c.bytes(bytes as usize)
}

/// The size of a READ value for `read_format`.
fn read_size(c: &mut Cursor<'_>, read_format: u64) -> Result<u64> {
    let one = 1 + (read_format & rf::ID != 0) as u64 + (read_format & rf::LOST != 0) as u64;
    let times = (read_format & rf::TOTAL_TIME_ENABLED != 0) as u64
        + (read_format & rf::TOTAL_TIME_RUNNING != 0) as u64;
    if read_format & rf::GROUP != 0 {
        let mut p = *c;
        let nr = p.u64()?;
        let n = nr
            .checked_mul(one)
            .and_then(|v| v.checked_add(1 + times))
            .ok_or_else(|| c.invalid("READ group count overflows"))?;
        Ok(n)
    } else {
        Ok(one + times)
    }
}

/// Parse the body of a SAMPLE record (after the 8-byte header) of `attr`.
pub fn parse_sample<'a>(
    attr: &Attr,
    misc: u16,
    body: &'a [u8],
    base: u64,
    e: Endian,
) -> Result<Sample<'a>> {
    let mut c = Cursor::with_base(body, base, e, "sample");
    let t = attr.sample_type;
    let mut s = Sample {
        misc,
        ..Sample::default()
    };
    if t & st::IDENTIFIER != 0 {
        s.id = Some(c.u64()?);
    }
    if t & st::IP != 0 {
        s.ip = Some(c.u64()?);
    }
    if t & st::TID != 0 {
        s.pid = Some(c.u32()?);
        s.tid = Some(c.u32()?);
    }
    if t & st::TIME != 0 {
        s.time = Some(c.u64()?);
    }
    if t & st::ADDR != 0 {
        s.addr = Some(c.u64()?);
    }
    if t & st::ID != 0 {
        s.id = Some(c.u64()?);
    }
    if t & st::STREAM_ID != 0 {
        s.stream_id = Some(c.u64()?);
    }
    if t & st::CPU != 0 {
        s.cpu = Some(c.u32()?);
        c.u32()?;
    }
    if t & st::PERIOD != 0 {
        s.period = Some(c.u64()?);
    }
    if t & st::READ != 0 {
        let n = read_size(&mut c, attr.read_format)?;
        s.read = words(&mut c, n, "READ")?;
    }
    if t & st::CALLCHAIN != 0 {
        let nr = c.u64()?;
        s.callchain = words(&mut c, nr, "callchain")?;
    }
    if t & st::RAW != 0 {
        let size = c.u32()? as usize;
        if size > c.remaining() {
            return Err(c.invalid(format!("RAW data of {size} bytes runs past the record")));
        }
        s.raw = Some(c.bytes(size)?);
    }
    if t & st::BRANCH_STACK != 0 {
        let nr = c.u64()?;
        s.branch_nr = nr;
        // PERF_SAMPLE_BRANCH_HW_INDEX
        if attr.branch_sample_type & (1 << 17) != 0 {
            s.branch_hw_idx = Some(c.u64()?);
        }
        let n = nr
            .checked_mul(3)
            .ok_or_else(|| c.invalid("branch stack count overflows"))?;
        s.branches = words(&mut c, n, "branch stack")?;
    }
    if t & st::REGS_USER != 0 {
        s.regs_user_abi = c.u64()?;
        if s.regs_user_abi != 0 {
            s.regs_user = words(
                &mut c,
                attr.sample_regs_user.count_ones() as u64,
                "user registers",
            )?;
        }
    }
    if t & st::STACK_USER != 0 {
        let size = c.u64()?;
        if size > c.remaining() as u64 {
            return Err(c.invalid(format!("user stack of {size} bytes runs past the record")));
        }
        s.stack_user = c.bytes(size as usize)?;
        if size != 0 {
            s.stack_user_dyn_size = c.u64()?;
        }
    }
    if t & (st::WEIGHT | st::WEIGHT_STRUCT) != 0 {
        s.weight = Some(c.u64()?);
    }
    if t & st::DATA_SRC != 0 {
        s.data_src = Some(c.u64()?);
    }
    if t & st::TRANSACTION != 0 {
        s.transaction = Some(c.u64()?);
    }
    if t & st::REGS_INTR != 0 {
        s.regs_intr_abi = c.u64()?;
        if s.regs_intr_abi != 0 {
            s.regs_intr = words(
                &mut c,
                attr.sample_regs_intr.count_ones() as u64,
                "interrupt registers",
            )?;
        }
    }
    if t & st::PHYS_ADDR != 0 {
        s.phys_addr = Some(c.u64()?);
    }
    if t & st::CGROUP != 0 {
        s.cgroup = Some(c.u64()?);
    }
    if t & st::DATA_PAGE_SIZE != 0 {
        s.data_page_size = Some(c.u64()?);
    }
    if t & st::CODE_PAGE_SIZE != 0 {
        s.code_page_size = Some(c.u64()?);
    }
    if t & st::AUX != 0 {
        let size = c.u64()?;
        if size > c.remaining() as u64 {
            return Err(c.invalid(format!("AUX data of {size} bytes runs past the record")));
        }
        s.aux = c.bytes(size as usize)?;
    }
    Ok(s)
}

/// One counter of a READ field: value, id, lost.
pub type ReadValue = (u64, Option<u64>, Option<u64>);

/// The enabled and running times and the counters of a READ field.
pub type ReadValues = (Option<u64>, Option<u64>, Vec<ReadValue>);

/// The values of a READ field: (value, id, lost) of each counter, and the
/// enabled/running times.
pub fn read_values(read: &[u8], read_format: u64, e: Endian) -> ReadValues {
    let mut c = Cursor::new(read, e, "read");
    let mut out = Vec::new();
    let group = read_format & rf::GROUP != 0;
    let nr = if group { c.u64().unwrap_or(0) } else { 1 };
    let mut enabled = None;
    let mut running = None;
    let one = |c: &mut Cursor<'_>| -> Option<(u64, Option<u64>, Option<u64>)> {
        let v = c.u64().ok()?;
        let id = if read_format & rf::ID != 0 {
            Some(c.u64().ok()?)
        } else {
            None
        };
        let lost = if read_format & rf::LOST != 0 {
            Some(c.u64().ok()?)
        } else {
            None
        };
        Some((v, id, lost))
    };
    if group {
        if read_format & rf::TOTAL_TIME_ENABLED != 0 {
            enabled = c.u64().ok();
        }
        if read_format & rf::TOTAL_TIME_RUNNING != 0 {
            running = c.u64().ok();
        }
        for _ in 0..nr.min(read.len() as u64 / 8) {
            match one(&mut c) {
                Some(v) => out.push(v),
                None => break,
            }
        }
    } else {
        let v = c.u64().unwrap_or(0);
        if read_format & rf::TOTAL_TIME_ENABLED != 0 {
            enabled = c.u64().ok();
        }
        if read_format & rf::TOTAL_TIME_RUNNING != 0 {
            running = c.u64().ok();
        }
        let id = if read_format & rf::ID != 0 {
            c.u64().ok()
        } else {
            None
        };
        let lost = if read_format & rf::LOST != 0 {
            c.u64().ok()
        } else {
            None
        };
        out.push((v, id, lost));
    }
    (enabled, running, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(t: u64) -> Attr {
        Attr {
            sample_type: t,
            ..Attr::default()
        }
    }

    fn le(v: &[u64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn fields_in_kernel_order() {
        let a = attr(st::IP | st::TID | st::TIME | st::CPU | st::PERIOD | st::CALLCHAIN);
        let body = le(&[0x1234, (9u64 << 32) | 8, 77, 1, 4000, 2, 0xa, 0xb]);
        let s = parse_sample(&a, 2, &body, 0, Endian::Little).unwrap();
        assert_eq!(s.ip, Some(0x1234));
        assert_eq!((s.pid, s.tid), (Some(8), Some(9)));
        assert_eq!(s.time, Some(77));
        assert_eq!(s.cpu, Some(1));
        assert_eq!(s.period, Some(4000));
        assert_eq!(
            s.callchain(Endian::Little).collect::<Vec<_>>(),
            vec![0xa, 0xb]
        );
    }

    #[test]
    fn every_truncation_is_an_error() {
        let a = attr(st::IP | st::TIME | st::CALLCHAIN | st::RAW);
        let mut body = le(&[1, 2, 1, 5]);
        body.extend_from_slice(&4u32.to_le_bytes());
        body.extend_from_slice(&[1, 2, 3, 4]);
        assert!(parse_sample(&a, 0, &body, 0, Endian::Little).is_ok());
        for n in 0..body.len() {
            assert!(
                parse_sample(&a, 0, &body[..n], 0, Endian::Little).is_err(),
                "{n}"
            );
        }
    }

    #[test]
    fn huge_counts_are_refused() {
        let a = attr(st::CALLCHAIN);
        let body = le(&[u64::MAX, 1]);
        assert!(parse_sample(&a, 0, &body, 0, Endian::Little).is_err());
        let mut a = attr(st::READ);
        a.read_format = rf::GROUP | rf::ID;
        let body = le(&[u64::MAX / 2, 1]);
        assert!(parse_sample(&a, 0, &body, 0, Endian::Little).is_err());
    }
}
