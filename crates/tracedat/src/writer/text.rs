//! Default metadata texts and option payload encoding for the writer.

use super::pages::put_uint;
use super::TraceOption;
use crate::options::{OptionId, TimeShift};
use tracemux_core::bytes::Endian;

/// The kernel's `events/header_page` for a `commit` word of `commit_size`
/// bytes (4 on 32-bit kernels, 8 on 64-bit ones) and pages of `page_size`
/// bytes, in the exact layout Linux prints it.
pub fn header_page(commit_size: u32, page_size: u32) -> String {
    let data = 8 + commit_size;
    format!(
        "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
         \tfield: local_t commit;\toffset:8;\tsize:{commit_size};\tsigned:1;\n\
         \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
         \tfield: char data;\toffset:{data};\tsize:{};\tsigned:0;\n",
        page_size.saturating_sub(data)
    )
}

/// The kernel's `events/header_event` (the same on every kernel since 2.6.31).
pub const HEADER_EVENT: &str = "# compressed entry header\n\
\ttype_len    :    5 bits\n\
\ttime_delta  :   27 bits\n\
\tarray       :   32 bits\n\
\n\
\tpadding     : type == 29\n\
\ttime_extend : type == 30\n\
\ttime_stamp : type == 31\n\
\tdata max type_len  == 28\n";

fn cstr(s: &str) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    v
}

impl TraceOption {
    /// Any option id with a verbatim payload.
    pub fn raw(id: u16, data: impl Into<Vec<u8>>) -> Self {
        TraceOption::Raw {
            id,
            data: data.into(),
        }
    }

    /// A NUL-terminated string option (DATE, UNAME, VERSION, CPUSTAT, ...).
    pub fn text(id: OptionId, text: &str) -> Self {
        TraceOption::Raw {
            id: id.0,
            data: cstr(text),
        }
    }

    /// DATE: microseconds between the trace clock and the time of day,
    /// written the way trace-cmd writes it (`"0x<hex>"`).
    pub fn date_us(us: u64) -> Self {
        Self::text(OptionId::DATE, &format!("0x{us:x}"))
    }

    /// OFFSET: nanoseconds added to every timestamp (decimal text).
    pub fn offset_ns(ns: i64) -> Self {
        Self::text(OptionId::OFFSET, &ns.to_string())
    }

    /// TRACECLOCK: the tracefs `trace_clock` text with `clock` selected,
    /// e.g. `"[local] global counter ...\n"`.
    pub fn trace_clock(clock: &str) -> Self {
        let all = [
            "local", "global", "counter", "uptime", "perf", "mono", "mono_raw", "boot", "tai",
            "x86-tsc",
        ];
        let mut s: Vec<String> = all
            .iter()
            .map(|c| {
                if *c == clock {
                    format!("[{c}]")
                } else {
                    c.to_string()
                }
            })
            .collect();
        if !all.contains(&clock) {
            s.push(format!("[{clock}]"));
        }
        Self::text(OptionId::TRACECLOCK, &format!("{}\n", s.join(" ")))
    }
}

/// The (id, payload) of an option in a file of endianness `e`.
pub(crate) fn encode_option(o: &TraceOption, e: Endian) -> (u16, Vec<u8>) {
    let mut d = Vec::new();
    match o {
        TraceOption::Raw { id, data } => return (*id, data.clone()),
        TraceOption::U32 { id, value } => {
            put_uint(&mut d, e, *value as u64, 4);
            return (*id, d);
        }
        TraceOption::U64 { id, value } => {
            put_uint(&mut d, e, *value, 8);
            return (*id, d);
        }
        TraceOption::Tsc2Nsec(t) => {
            put_uint(&mut d, e, t.mult as u64, 4);
            put_uint(&mut d, e, t.shift as u64, 4);
            put_uint(&mut d, e, t.offset, 8);
            return (OptionId::TSC2NSEC.0, d);
        }
        TraceOption::TimeShift(t) => encode_time_shift(t, e, &mut d),
    }
    (OptionId::TIME_SHIFT.0, d)
}

/// TIME_SHIFT: peer id, flags, CPU count; per CPU the sample count and the
/// times, offsets and scalings; then, if any CPU has fraction bits, one
/// fraction array per CPU (missing entries written as 0).
fn encode_time_shift(t: &TimeShift, e: Endian, d: &mut Vec<u8>) {
    put_uint(d, e, t.peer_trace_id, 8);
    put_uint(d, e, t.flags as u64, 4);
    put_uint(d, e, t.cpus.len() as u64, 4);
    for c in &t.cpus {
        let n = c.times.len();
        put_uint(d, e, n as u64, 4);
        for v in [&c.times, &c.offsets, &c.scalings] {
            for i in 0..n {
                put_uint(d, e, v.get(i).copied().unwrap_or(0) as u64, 8);
            }
        }
    }
    if t.cpus.iter().any(|c| !c.fractions.is_empty()) {
        for c in &t.cpus {
            for i in 0..c.times.len() {
                put_uint(d, e, c.fractions.get(i).copied().unwrap_or(0) as u64, 8);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracemux_ftrace::format::parse_header_page;

    #[test]
    fn header_page_matches_kernel() {
        let t = header_page(8, 4096);
        assert_eq!(t.len(), 205);
        assert!(t.contains("\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n"));
        let h = parse_header_page(&header_page(4, 8192), 4);
        assert_eq!((h.commit_size, h.data_offset), (4, 12));
        assert_eq!(HEADER_EVENT.len(), 205);
    }
}
