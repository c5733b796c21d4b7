//! The `info` file: a 40-byte binary header followed by text sections.
//!
//! Header layout (uftrace file format versions 3 and 4):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `Ftrace!\0` |
//! | 8 | 4 | version (3 or 4) |
//! | 12 | 2 | header size (40) |
//! | 14 | 1 | endianness (1 = little, 2 = big, as ELF `EI_DATA`) |
//! | 15 | 1 | ELF class (1 = 32-bit, 2 = 64-bit) |
//! | 16 | 8 | feature mask ([`feat`]) |
//! | 24 | 8 | info mask ([`info_bit`]) |
//! | 32 | 2 | max stack depth |
//! | 34 | 6 | unused |
//!
//! The text sections follow in the order of the info mask bits, one
//! `key:value` line each (some sections have a `key:lines=N` line first).

use tracemux_core::{Endian, Error, Result};

/// `Ftrace!\0`.
pub const MAGIC: &[u8; 8] = b"Ftrace!\0";

/// Whether `data` (the first bytes of a recording's `info` file) starts
/// with [`MAGIC`].
pub fn sniff(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}
/// Size of the binary header.
pub const HEADER_SIZE: usize = 40;

/// Feature mask bits (what the recording contains).
pub mod feat {
    pub const PLTHOOK: u64 = 1 << 0;
    pub const TASK_SESSION: u64 = 1 << 1;
    pub const KERNEL: u64 = 1 << 2;
    pub const ARGUMENT: u64 = 1 << 3;
    pub const RETVAL: u64 = 1 << 4;
    pub const SYM_REL_ADDR: u64 = 1 << 5;
    pub const MAX_STACK: u64 = 1 << 6;
    pub const EVENT: u64 = 1 << 7;
    pub const PERF_EVENT: u64 = 1 << 8;
    pub const AUTO_ARGS: u64 = 1 << 9;
    pub const DEBUG_INFO: u64 = 1 << 10;
    pub const ESTIMATE_RETURN: u64 = 1 << 11;
    /// uftrace 0.14+: `.sym` files give each symbol's size
    /// (`ADDR SIZE TYPE NAME`; read here, uftrace 0.13 reads no symbol
    /// from them).
    pub const SYM_SIZE: u64 = 1 << 12;
    /// Every bit uftrace 0.13 knows.
    pub const KNOWN_013: u64 = (1 << 12) - 1;
    /// Every bit this reader knows (0.13's and those of 0.14 to 0.16);
    /// others are reported, and read past, as 0.13 does.
    pub const KNOWN: u64 = KNOWN_013 | SYM_SIZE;
}

/// Info mask bits (which text sections follow the header).
pub mod info_bit {
    pub const EXE_NAME: u64 = 1 << 0;
    pub const EXE_BUILD_ID: u64 = 1 << 1;
    pub const EXIT_STATUS: u64 = 1 << 2;
    pub const CMDLINE: u64 = 1 << 3;
    pub const CPUINFO: u64 = 1 << 4;
    pub const MEMINFO: u64 = 1 << 5;
    pub const OSINFO: u64 = 1 << 6;
    pub const TASKINFO: u64 = 1 << 7;
    pub const USAGEINFO: u64 = 1 << 8;
    pub const LOADINFO: u64 = 1 << 9;
    pub const ARG_SPEC: u64 = 1 << 10;
    pub const RECORD_DATE: u64 = 1 << 11;
    pub const PATTERN_TYPE: u64 = 1 << 12;
    pub const VERSION: u64 = 1 << 13;
    /// uftrace 0.17+: `utc_offset:SECONDS` (wall clock minus the
    /// recording's clock when it started).
    pub const UTC_OFFSET: u64 = 1 << 14;
}

/// The decoded 40-byte header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeader {
    pub version: u32,
    pub header_size: u16,
    /// Byte order of every binary file of the recording.
    pub endian: Endian,
    /// 1 = 32-bit, 2 = 64-bit (`ELFCLASS*`).
    pub elf_class: u8,
    pub feat_mask: u64,
    pub info_mask: u64,
    /// Max stack depth; uftrace uses 65535 when `MAX_STACK` is not set.
    pub max_stack: u16,
}

impl FileHeader {
    /// Parse the header at the start of `data` (the `info` file).
    pub fn parse(data: &[u8]) -> Result<FileHeader> {
        if data.len() < HEADER_SIZE {
            return Err(Error::eof("info header", data.len() as u64));
        }
        if &data[..8] != MAGIC {
            return Err(Error::new(
                tracemux_core::ErrorKind::BadMagic,
                "info header",
                0,
            ));
        }
        let endian = match data[14] {
            2 => Endian::Big,
            _ => Endian::Little,
        };
        let u16_at = |o: usize| endian.u16([data[o], data[o + 1]]);
        let u32_at = |o: usize| endian.u32([data[o], data[o + 1], data[o + 2], data[o + 3]]);
        let u64_at = |o: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&data[o..o + 8]);
            endian.u64(b)
        };
        let version = u32_at(8);
        if !(3..=4).contains(&version) {
            return Err(Error::new(
                tracemux_core::ErrorKind::Unsupported(format!("file version {version}")),
                "info header",
                8,
            ));
        }
        let feat_mask = u64_at(16);
        let mut max_stack = u16_at(32);
        if feat_mask & feat::MAX_STACK == 0 {
            max_stack = 65535;
        }
        Ok(FileHeader {
            version,
            header_size: u16_at(12),
            endian,
            elf_class: data[15],
            feat_mask,
            info_mask: u64_at(24),
            max_stack,
        })
    }

    /// Whether the recorded program was 64-bit (sizes of `long` and pointers).
    pub fn is_lp64(&self) -> bool {
        self.elf_class == 2
    }
}

/// How function name patterns of the recording are matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PatternType {
    None,
    Simple,
    #[default]
    Regex,
    Glob,
}

impl PatternType {
    pub fn parse(s: &str) -> PatternType {
        match s {
            "simple" => PatternType::Simple,
            "regex" => PatternType::Regex,
            "glob" => PatternType::Glob,
            _ => PatternType::None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            PatternType::Simple => "simple",
            PatternType::Regex => "regex",
            PatternType::Glob => "glob",
            PatternType::None => "none",
        }
    }
}

/// The text sections of the `info` file (absent ones stay `None`/zero).
#[derive(Debug, Clone, Default)]
pub struct InfoSections {
    pub exename: Option<String>,
    pub build_id: [u8; 20],
    pub exit_status: i32,
    pub cmdline: Option<String>,
    pub cpu: CpuInfo,
    pub meminfo: Option<String>,
    pub os: OsInfo,
    pub nr_tid: i32,
    /// Task ids in recording order; the order of `tids` decides ties
    /// when records of several tasks have the same timestamp.
    pub tids: Vec<i32>,
    pub usage: Usage,
    pub load: [f32; 3],
    pub argspec: Option<String>,
    pub retspec: Option<String>,
    pub autoarg: Option<String>,
    pub autoret: Option<String>,
    pub autoenum: Option<String>,
    pub auto_args_enabled: bool,
    pub record_date: Option<String>,
    pub elapsed_time: Option<String>,
    pub pattern: PatternType,
    pub uftrace_version: Option<String>,
    /// `utc_offset:` (info bit `UTC_OFFSET`, uftrace 0.17+).
    pub utc_offset: Option<String>,
}

/// The `cpuinfo:` section.
#[derive(Debug, Clone, Default)]
pub struct CpuInfo {
    pub online: i32,
    pub possible: i32,
    pub desc: Option<String>,
}

/// The `osinfo:` section.
#[derive(Debug, Clone, Default)]
pub struct OsInfo {
    pub kernel: Option<String>,
    pub hostname: Option<String>,
    pub distro: Option<String>,
}

/// The `usageinfo:` section: the recorded program's resource usage.
#[derive(Debug, Clone, Default)]
pub struct Usage {
    /// System and user CPU time (s).
    pub stime: f64,
    pub utime: f64,
    /// Voluntary and involuntary context switches.
    pub vctxsw: i64,
    pub ictxsw: i64,
    /// Peak resident set size (KB).
    pub maxrss: i64,
    pub major_fault: i64,
    pub minor_fault: i64,
    /// Blocks read and written.
    pub rblock: i64,
    pub wblock: i64,
}

/// Line reader over the text part with C `fgets`-like behaviour.
struct Lines<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Lines<'a> {
    /// The next line including its `\n` (if any), or `None` at the end.
    fn next(&mut self) -> Option<&'a str> {
        if self.pos >= self.data.len() {
            return None;
        }
        let rest = &self.data[self.pos..];
        let n = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |i| i + 1);
        self.pos += n;
        Some(std::str::from_utf8(&rest[..n]).unwrap_or(""))
    }
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }
}

/// Reads one info section; false when it is malformed.
type SectionReader = fn(&mut InfoSections, &mut Lines) -> bool;

/// Drop one trailing newline (uftrace's `copy_info_str`).
fn chomp(s: &str) -> &str {
    s.strip_suffix('\n').unwrap_or(s)
}

/// C `strtol`-like: leading integer of `s` (0 when none).
pub(crate) fn c_atol(s: &str) -> i64 {
    let t = s.trim_start();
    let b = t.as_bytes();
    let mut i = 0;
    let neg = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut v: i64 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        v = v.saturating_mul(10).saturating_add((b[i] - b'0') as i64);
        i += 1;
    }
    if neg {
        -v
    } else {
        v
    }
}

/// C `strtod`-like: leading floating number of `s` (0 when none).
pub(crate) fn c_atof(s: &str) -> f64 {
    let t = s.trim_start();
    let end = t
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit() || c == '.' || ((c == '-' || c == '+') && i == 0) || c == 'e')
        })
        .map_or(t.len(), |(i, _)| i);
    let mut e = end;
    while e > 0 {
        if let Ok(v) = t[..e].parse::<f64>() {
            return v;
        }
        e -= 1;
    }
    0.0
}

/// Two numbers separated by `" / "` (as in `"10 / 10 (voluntary / involuntary)"`).
fn pair(s: &str) -> (i64, i64) {
    let a = c_atol(s);
    let b = s.split_once('/').map_or(0, |(_, r)| c_atol(r));
    (a, b)
}

impl InfoSections {
    /// Parse the text sections after the header, in info-mask order.
    ///
    /// Parsing stops at the first malformed section (as uftrace does); the
    /// sections read so far are kept and the error says where it stopped.
    pub fn parse(text: &[u8], base: u64, info_mask: u64) -> (InfoSections, Option<Error>) {
        let mut info = InfoSections::default();
        let mut lines = Lines {
            data: text,
            pos: 0,
            base,
        };
        let handlers: [(u64, &str, SectionReader); 15] = [
            (info_bit::EXE_NAME, "exename", read_exe_name),
            (info_bit::EXE_BUILD_ID, "build_id", read_build_id),
            (info_bit::EXIT_STATUS, "exit_status", read_exit_status),
            (info_bit::CMDLINE, "cmdline", read_cmdline),
            (info_bit::CPUINFO, "cpuinfo", read_cpuinfo),
            (info_bit::MEMINFO, "meminfo", read_meminfo),
            (info_bit::OSINFO, "osinfo", read_osinfo),
            (info_bit::TASKINFO, "taskinfo", read_taskinfo),
            (info_bit::USAGEINFO, "usageinfo", read_usageinfo),
            (info_bit::LOADINFO, "loadinfo", read_loadinfo),
            (info_bit::ARG_SPEC, "argspec", read_argspec),
            (info_bit::RECORD_DATE, "record_date", read_record_date),
            (info_bit::PATTERN_TYPE, "pattern_type", read_pattern_type),
            (info_bit::VERSION, "uftrace_version", read_version),
            (info_bit::UTC_OFFSET, "utc_offset", read_utc_offset),
        ];
        for (bit, name, f) in handlers {
            if info_mask & bit == 0 {
                continue;
            }
            let at = lines.offset();
            if !f(&mut info, &mut lines) {
                return (
                    info,
                    Some(Error::invalid(
                        format!("cannot read info section '{name}'"),
                        "info",
                        at,
                    )),
                );
            }
        }
        (info, None)
    }
}

fn keyed<'a>(lines: &mut Lines<'a>, key: &str) -> Option<&'a str> {
    let l = lines.next()?;
    l.strip_prefix(key)
}

fn read_exe_name(i: &mut InfoSections, l: &mut Lines) -> bool {
    keyed(l, "exename:")
        .map(|v| i.exename = Some(chomp(v).to_string()))
        .is_some()
}

fn read_build_id(i: &mut InfoSections, l: &mut Lines) -> bool {
    let Some(v) = keyed(l, "build_id:") else {
        return false;
    };
    let b = v.as_bytes();
    for k in 0..20 {
        let hex = |c: Option<&u8>| c.and_then(|&c| (c as char).to_digit(16));
        match (hex(b.get(2 * k)), hex(b.get(2 * k + 1))) {
            (Some(h), Some(lo)) => i.build_id[k] = (h << 4 | lo) as u8,
            _ => return false,
        }
    }
    true
}

fn read_exit_status(i: &mut InfoSections, l: &mut Lines) -> bool {
    keyed(l, "exit_status:")
        .map(|v| i.exit_status = c_atol(v) as i32)
        .is_some()
}

fn read_cmdline(i: &mut InfoSections, l: &mut Lines) -> bool {
    keyed(l, "cmdline:")
        .map(|v| i.cmdline = Some(chomp(v).to_string()))
        .is_some()
}

fn lines_count(v: &str) -> Option<i64> {
    v.strip_prefix("lines=").map(c_atol)
}

/// A section of `KEY` lines: `KEYlines=N`, then N lines `KEY...`, each
/// given to `line` (false: malformed); more than `max` is malformed.
fn counted(l: &mut Lines, key: &str, max: i64, mut line: impl FnMut(&str) -> bool) -> bool {
    let Some(n) = keyed(l, key).and_then(lines_count) else {
        return false;
    };
    if n > max {
        return false;
    }
    for _ in 0..n.max(0) {
        match keyed(l, key) {
            Some(v) if line(v) => {}
            _ => return false,
        }
    }
    true
}

fn read_cpuinfo(i: &mut InfoSections, l: &mut Lines) -> bool {
    counted(l, "cpuinfo:", 2, |v| {
        if let Some(r) = v.strip_prefix("nr_cpus=") {
            let (a, b) = pair(r);
            i.cpu.online = a as i32;
            i.cpu.possible = b as i32;
        } else if let Some(r) = v.strip_prefix("desc=") {
            i.cpu.desc = Some(chomp(r).to_string());
        }
        true
    })
}

fn read_meminfo(i: &mut InfoSections, l: &mut Lines) -> bool {
    keyed(l, "meminfo:")
        .map(|v| i.meminfo = Some(chomp(v).to_string()))
        .is_some()
}

fn read_osinfo(i: &mut InfoSections, l: &mut Lines) -> bool {
    counted(l, "osinfo:", 3, |v| {
        if let Some(r) = v.strip_prefix("kernel=") {
            i.os.kernel = Some(chomp(r).to_string());
        } else if let Some(r) = v.strip_prefix("hostname=") {
            i.os.hostname = Some(chomp(r).to_string());
        } else if let Some(r) = v.strip_prefix("distro=") {
            i.os.distro = Some(chomp(r).to_string());
        }
        true
    })
}

fn read_taskinfo(i: &mut InfoSections, l: &mut Lines) -> bool {
    counted(l, "taskinfo:", 2, |v| {
        if let Some(r) = v.strip_prefix("nr_tid=") {
            i.nr_tid = c_atol(r) as i32;
        } else if let Some(r) = v.strip_prefix("tids=") {
            let r = chomp(r);
            i.tids.clear();
            for t in r.split(',') {
                if t.is_empty()
                    || !t
                        .trim_start()
                        .starts_with(|c: char| c.is_ascii_digit() || c == '-')
                {
                    return false;
                }
                i.tids.push(c_atol(t) as i32);
            }
        } else {
            return false;
        }
        true
    })
}

fn read_usageinfo(i: &mut InfoSections, l: &mut Lines) -> bool {
    counted(l, "usageinfo:", 6, |v| {
        if let Some(r) = v.strip_prefix("systime=") {
            i.usage.stime = c_atof(r);
        } else if let Some(r) = v.strip_prefix("usrtime=") {
            i.usage.utime = c_atof(r);
        } else if let Some(r) = v.strip_prefix("ctxsw=") {
            (i.usage.vctxsw, i.usage.ictxsw) = pair(r);
        } else if let Some(r) = v.strip_prefix("maxrss=") {
            i.usage.maxrss = c_atol(r);
        } else if let Some(r) = v.strip_prefix("pagefault=") {
            (i.usage.major_fault, i.usage.minor_fault) = pair(r);
        } else if let Some(r) = v.strip_prefix("iops=") {
            (i.usage.rblock, i.usage.wblock) = pair(r);
        }
        true
    })
}

fn read_loadinfo(i: &mut InfoSections, l: &mut Lines) -> bool {
    let Some(v) = keyed(l, "loadinfo:") else {
        return false;
    };
    let mut it = v.split('/');
    for k in 0..3 {
        match it.next() {
            Some(x) => i.load[k] = c_atof(x) as f32,
            None => break,
        }
    }
    true
}

fn read_argspec(i: &mut InfoSections, l: &mut Lines) -> bool {
    let Some(v) = keyed(l, "argspec:") else {
        return false;
    };
    let Some(n) = lines_count(v) else {
        // old format: a single argspec line
        i.argspec = Some(chomp(v).to_string());
        return true;
    };
    if n > 6 {
        return false;
    }
    for _ in 0..n.max(0) {
        let Some(line) = l.next() else {
            return false;
        };
        if let Some(r) = line.strip_prefix("argspec:") {
            i.argspec = Some(chomp(r).to_string());
        } else if let Some(r) = line.strip_prefix("retspec:") {
            i.retspec = Some(chomp(r).to_string());
        } else if let Some(r) = line.strip_prefix("argauto:") {
            i.autoarg = Some(chomp(r).to_string());
        } else if let Some(r) = line.strip_prefix("retauto:") {
            i.autoret = Some(chomp(r).to_string());
        } else if let Some(r) = line.strip_prefix("enumauto:") {
            i.autoenum = Some(chomp(r).to_string());
        } else if line.starts_with("auto-args:1") {
            i.auto_args_enabled = true;
        } else {
            return false;
        }
    }
    true
}

fn read_record_date(i: &mut InfoSections, l: &mut Lines) -> bool {
    let Some(v) = keyed(l, "record_date:") else {
        return false;
    };
    i.record_date = Some(chomp(v).to_string());
    let Some(v) = keyed(l, "elapsed_time:") else {
        return false;
    };
    i.elapsed_time = Some(chomp(v).to_string());
    true
}

fn read_pattern_type(i: &mut InfoSections, l: &mut Lines) -> bool {
    keyed(l, "pattern_type:")
        .map(|v| i.pattern = PatternType::parse(chomp(v)))
        .is_some()
}

fn read_version(i: &mut InfoSections, l: &mut Lines) -> bool {
    keyed(l, "uftrace_version:")
        .map(|v| i.uftrace_version = Some(chomp(v).to_string()))
        .is_some()
}

fn read_utc_offset(i: &mut InfoSections, l: &mut Lines) -> bool {
    keyed(l, "utc_offset:")
        .map(|v| i.utc_offset = Some(chomp(v).to_string()))
        .is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(version: u32, feat: u64) -> Vec<u8> {
        let mut h = MAGIC.to_vec();
        h.extend_from_slice(&version.to_le_bytes());
        h.extend_from_slice(&40u16.to_le_bytes());
        h.push(1);
        h.push(2);
        h.extend_from_slice(&feat.to_le_bytes());
        h.extend_from_slice(&(info_bit::EXE_NAME | info_bit::TASKINFO).to_le_bytes());
        h.extend_from_slice(&1024u16.to_le_bytes());
        h.extend_from_slice(&[0; 6]);
        h
    }

    #[test]
    fn parses_header_and_sections() {
        let h = header(4, feat::MAX_STACK | feat::TASK_SESSION);
        let fh = FileHeader::parse(&h).unwrap();
        assert_eq!(fh.version, 4);
        assert_eq!(fh.max_stack, 1024);
        assert!(fh.is_lp64());
        let text = b"exename:/bin/x\ntaskinfo:lines=2\ntaskinfo:nr_tid=2\ntaskinfo:tids=5,7\n";
        let (info, err) = InfoSections::parse(text, 40, fh.info_mask);
        assert!(err.is_none());
        assert_eq!(info.exename.as_deref(), Some("/bin/x"));
        assert_eq!(info.tids, vec![5, 7]);
    }

    #[test]
    fn rejects_bad_magic_version_and_truncation() {
        let mut h = header(4, 0);
        assert!(FileHeader::parse(&h[..39]).is_err());
        h[0] = b'X';
        assert!(FileHeader::parse(&h).is_err());
        let h = header(9, 0);
        assert!(FileHeader::parse(&h).is_err());
        let h = header(3, 0);
        assert_eq!(FileHeader::parse(&h).unwrap().max_stack, 65535);
    }

    #[test]
    fn stops_at_malformed_section() {
        let (info, err) = InfoSections::parse(b"exename:/a\ntaskinfo:bogus\n", 40, 0x81);
        assert_eq!(info.exename.as_deref(), Some("/a"));
        let e = err.unwrap();
        assert_eq!(e.offset, 40 + 11);
    }
}
