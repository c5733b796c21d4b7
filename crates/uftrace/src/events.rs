//! Event ids and names (`events.txt`, builtin and perf events).

use std::io::Write;

use tracemux_core::Endian;

/// uftrace event ids.
pub mod id {
    pub const BUILTIN: u32 = 100_000;
    pub const READ_PROC_STATM: u32 = 100_001;
    pub const READ_PAGE_FAULT: u32 = 100_002;
    pub const DIFF_PROC_STATM: u32 = 100_003;
    pub const DIFF_PAGE_FAULT: u32 = 100_004;
    pub const READ_PMU_CYCLE: u32 = 100_005;
    pub const DIFF_PMU_CYCLE: u32 = 100_006;
    pub const READ_PMU_CACHE: u32 = 100_007;
    pub const DIFF_PMU_CACHE: u32 = 100_008;
    pub const READ_PMU_BRANCH: u32 = 100_009;
    pub const DIFF_PMU_BRANCH: u32 = 100_010;
    pub const WATCH_CPU: u32 = 100_011;
    /// uftrace 0.17+ (`-W var:NAME`): the variable's address, then its
    /// value (what is left of the record's data).
    pub const WATCH_VAR: u32 = 100_012;
    pub const PERF: u32 = 200_000;
    pub const PERF_SCHED_IN: u32 = 200_001;
    pub const PERF_SCHED_OUT: u32 = 200_002;
    pub const PERF_SCHED_BOTH: u32 = 200_003;
    pub const PERF_TASK: u32 = 200_004;
    pub const PERF_EXIT: u32 = 200_005;
    pub const PERF_COMM: u32 = 200_006;
    pub const PERF_SCHED_OUT_PREEMPT: u32 = 200_007;
    pub const PERF_SCHED_BOTH_PREEMPT: u32 = 200_008;
    pub const USER: u32 = 1_000_000;
    pub const EXTERN_DATA: u32 = 2_000_000;
}

/// Whether `addr` is one of the schedule event ids.
pub fn is_sched_event(addr: u64) -> bool {
    matches!(
        u32::try_from(addr).unwrap_or(0),
        id::PERF_SCHED_IN
            | id::PERF_SCHED_OUT
            | id::PERF_SCHED_OUT_PREEMPT
            | id::PERF_SCHED_BOTH
            | id::PERF_SCHED_BOTH_PREEMPT
    )
}

/// The text of a builtin or perf event's payload (uftrace's
/// `event_get_data_str`), appended to `out`; false (nothing appended) for
/// an event without one. `verbose` (replay) marks the differences of the
/// `DIFF_*` events with `+` and adds their ratio, and prints the payload of
/// the events below the builtin ids.
pub fn data_text(out: &mut Vec<u8>, ev: u32, d: &[u8], endian: Endian, verbose: bool) -> bool {
    let u = |i: usize| -> u64 {
        d.get(i * 8..i * 8 + 8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, |a| endian.u64(a))
    };
    let cstr = d.split(|&b| b == 0).next().unwrap_or(&[]);
    let diff = verbose
        && matches!(
            ev,
            id::DIFF_PROC_STATM
                | id::DIFF_PAGE_FAULT
                | id::DIFF_PMU_CYCLE
                | id::DIFF_PMU_CACHE
                | id::DIFF_PMU_BRANCH
        );
    let p = if diff { "+" } else { "" };
    // (writing to a Vec cannot fail)
    match ev {
        id::EXTERN_DATA => {
            out.extend_from_slice(b"msg=\"");
            out.extend_from_slice(cstr);
            out.push(b'"');
        }
        id::PERF_COMM => {
            out.extend_from_slice(b"comm=\"");
            if verbose {
                // replay prints the name as UTF-8 text
                out.extend_from_slice(String::from_utf8_lossy(cstr).as_bytes());
            } else {
                out.extend_from_slice(cstr);
            }
            out.push(b'"');
        }
        id::READ_PROC_STATM | id::DIFF_PROC_STATM => {
            let (v, r, s) = (u(0), u(1), u(2));
            let _ = write!(out, "vmsize={p}{v}KB vmrss={p}{r}KB shared={p}{s}KB");
        }
        id::READ_PAGE_FAULT | id::DIFF_PAGE_FAULT => {
            let _ = write!(out, "major={p}{} minor={p}{}", u(0), u(1));
        }
        id::READ_PMU_CYCLE | id::DIFF_PMU_CYCLE => {
            let (c, i) = (u(0), u(1));
            let _ = write!(out, "cycles={p}{c} instructions={p}{i}");
            if diff {
                let _ = write!(out, " IPC={:.2}", i as f32 / c as f32);
            }
        }
        id::READ_PMU_CACHE | id::DIFF_PMU_CACHE => {
            misses(out, p, "refers", u(0), u(1), diff.then_some("hit"));
        }
        id::READ_PMU_BRANCH | id::DIFF_PMU_BRANCH => {
            misses(out, p, "branch", u(0), u(1), diff.then_some("predict"));
        }
        id::WATCH_CPU => {
            let v = d
                .get(..4)
                .and_then(|b| b.try_into().ok())
                .map_or(0, |a| endian.u32(a) as i32);
            let _ = write!(out, "cpu={v}");
        }
        id::WATCH_VAR => watch_var(out, d, endian, true, None),
        x if verbose && x < id::BUILTIN => {
            out.extend_from_slice(String::from_utf8_lossy(d).as_bytes());
        }
        _ => return false,
    }
    true
}

/// `memcpy` of `bytes` (at most 8) into a zeroed `u64` of byte order
/// `endian`, as uftrace reads a value into a wider integer.
fn memcpy_u64(bytes: &[u8], endian: Endian) -> u64 {
    let mut b = [0u8; 8];
    let n = bytes.len().min(8);
    b[..n].copy_from_slice(&bytes[..n]);
    match endian {
        Endian::Little => u64::from_le_bytes(b),
        Endian::Big => u64::from_be_bytes(b),
    }
}

/// The address of a `watch:var` record's variable (`lp64`: 8 bytes, else 4).
pub fn watch_var_addr(d: &[u8], endian: Endian, lp64: bool) -> u64 {
    let n = if lp64 { 8 } else { 4 };
    let a = &d[..n.min(d.len())];
    match endian {
        Endian::Little => memcpy_u64(a, endian),
        // the address is a whole `unsigned long`
        Endian::Big => a.iter().fold(0u64, |v, &x| (v << 8) | x as u64),
    }
}

/// The text of a `watch:var` record (uftrace 0.17+'s `event_get_data_str`):
/// `NAME=HEX` with the variable's symbol, else `[0xADDR]=HEX`; the value is
/// the bytes after the address (at most 8) copied into a 64-bit integer.
pub fn watch_var(out: &mut Vec<u8>, d: &[u8], endian: Endian, lp64: bool, name: Option<&str>) {
    let n = if lp64 { 8 } else { 4 };
    let addr = watch_var_addr(d, endian, lp64);
    let value = memcpy_u64(d.get(n..).unwrap_or(&[]), endian);
    match name {
        Some(s) => {
            let _ = write!(out, "{s}={value:x}");
        }
        // `%#lx`: no 0x before a 0
        None if addr == 0 => {
            let _ = write!(out, "[0]={value:x}");
        }
        None => {
            let _ = write!(out, "[{addr:#x}]={value:x}");
        }
    }
}

/// A PMU count and its misses (`NAME=N misses=M`), and with `ratio` the
/// share that did not miss (` RATIO=P%`).
fn misses(out: &mut Vec<u8>, p: &str, name: &str, n: u64, m: u64, ratio: Option<&str>) {
    let _ = write!(out, "{name}={p}{n} misses={p}{m}");
    if let Some(ratio) = ratio {
        let pct = 100.0 * n.wrapping_sub(m) as f64 / n as f64;
        let _ = write!(out, " {ratio}={pct:.2}%");
    }
}

/// User events declared in `events.txt` (`EVENT: <id> <provider>:<event>`).
#[derive(Debug, Clone, Default)]
pub struct UserEvents {
    pub events: Vec<(u32, String)>,
}

impl UserEvents {
    pub fn parse(text: &str) -> UserEvents {
        let mut out = UserEvents::default();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("EVENT") else {
                continue;
            };
            let rest = rest.get(2..).unwrap_or("");
            let mut it = rest.split_ascii_whitespace();
            let (Some(id), Some(name)) = (it.next(), it.next()) else {
                continue;
            };
            let Ok(id) = id.parse::<u32>() else { continue };
            if !name.contains(':') {
                continue;
            }
            out.events.push((id, name.to_string()));
        }
        out
    }

    /// The name uftrace prints for event `id` (kernel events: `None`).
    pub fn name(&self, id: u32) -> Option<std::borrow::Cow<'_, str>> {
        use std::borrow::Cow;
        if id == id::EXTERN_DATA {
            return Some(Cow::Borrowed("external-data"));
        }
        if id >= id::USER {
            return Some(match self.events.iter().find(|(i, _)| *i == id) {
                Some((_, n)) => Cow::Borrowed(n.as_str()),
                None => Cow::Owned(format!("user_event:{id}")),
            });
        }
        if id >= id::PERF {
            return Some(Cow::Borrowed(match id {
                id::PERF_SCHED_IN => "linux:sched-in",
                id::PERF_SCHED_OUT => "linux:sched-out",
                id::PERF_SCHED_OUT_PREEMPT => "linux:sched-out (pre-empted)",
                id::PERF_SCHED_BOTH => "linux:schedule",
                id::PERF_SCHED_BOTH_PREEMPT => "linux:schedule (pre-empted)",
                id::PERF_TASK => "linux:task-new",
                id::PERF_EXIT => "linux:task-exit",
                id::PERF_COMM => "linux:task-name",
                _ => "linux:unknown",
            }));
        }
        if id >= id::BUILTIN {
            return Some(Cow::Owned(match id {
                id::READ_PROC_STATM => "read:proc/statm".into(),
                id::READ_PAGE_FAULT => "read:page-fault".into(),
                id::READ_PMU_CYCLE => "read:pmu-cycle".into(),
                id::READ_PMU_CACHE => "read:pmu-cache".into(),
                id::READ_PMU_BRANCH => "read:pmu-branch".into(),
                id::DIFF_PROC_STATM => "diff:proc/statm".into(),
                id::DIFF_PAGE_FAULT => "diff:page-fault".into(),
                id::DIFF_PMU_CYCLE => "diff:pmu-cycle".into(),
                id::DIFF_PMU_CACHE => "diff:pmu-cache".into(),
                id::DIFF_PMU_BRANCH => "diff:pmu-branch".into(),
                id::WATCH_CPU => "watch:cpu".into(),
                id::WATCH_VAR => "watch:var".into(),
                _ => format!("builtin_event:{id}"),
            }));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(ev: u32, d: &[u8], verbose: bool) -> Option<String> {
        let mut out = Vec::new();
        data_text(&mut out, ev, d, Endian::Little, verbose).then(|| String::from_utf8(out).unwrap())
    }

    #[test]
    fn payload_text() {
        let d: Vec<u8> = [10u64, 4, 0].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(
            text(id::DIFF_PAGE_FAULT, &d, false).unwrap(),
            "major=10 minor=4"
        );
        assert_eq!(
            text(id::DIFF_PAGE_FAULT, &d, true).unwrap(),
            "major=+10 minor=+4"
        );
        assert_eq!(
            text(id::DIFF_PMU_CACHE, &d, true).unwrap(),
            "refers=+10 misses=+4 hit=60.00%"
        );
        assert_eq!(
            text(id::READ_PMU_CYCLE, &d[..4], true).unwrap(),
            "cycles=0 instructions=0"
        );
        assert_eq!(text(id::PERF_COMM, b"ab\0c", false).unwrap(), "comm=\"ab\"");
        assert_eq!(text(7, b"x=1", true).unwrap(), "x=1");
        assert_eq!(text(7, b"x=1", false), None);
        assert_eq!(text(id::PERF_SCHED_IN, &d, true), None);
    }
}
