//! Symbol tables (`<module>.sym`), debug info (`<module>.dbg`) and the
//! process maps of a session (`sid-<id>.map`).
//!
//! A `.sym` file lists `ADDR TYPE NAME` lines (hex address relative to the
//! module's load address, type one of `?TtwPKDdvu`), sorted by address; a
//! symbol's size runs to the next symbol (or to a `?`/`__sym_end` marker).
//! A `.dbg` file has `F: <offset> <name>` lines followed by `L:` (source
//! line), `A:` (argument spec) and `R:` (return spec) lines, and `E:` enum
//! definitions.

use std::collections::HashMap;

use crate::demangle::{demangle, Demangle};
use crate::enums::EnumDefs;

/// One symbol of a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Address relative to the module's first mapping.
    pub addr: u64,
    pub size: u64,
    /// `T`, `t`, `w`, `P` (PLT), `K` (kernel), `D`, `d`, `v`, `u`.
    pub kind: u8,
    /// Demangled per the open options.
    pub name: Box<str>,
}

impl Symbol {
    /// A PLT entry (a library call as seen from the calling module).
    pub fn is_plt(&self) -> bool {
        self.kind == b'P'
    }
}

/// Argument specs and source lines a `.dbg` file gives per function offset.
#[derive(Debug, Clone, Default)]
pub struct DebugInfo {
    /// Offset -> argument spec (`@arg1,arg2/p`); `None` marks a conflict.
    pub args: HashMap<u64, Option<String>>,
    pub rets: HashMap<u64, Option<String>>,
    pub enums: EnumDefs,
    /// Offset -> (file, line).
    pub lines: HashMap<u64, (String, u32)>,
}

impl DebugInfo {
    pub fn has_argspec(&self) -> bool {
        !self.args.is_empty() || !self.rets.is_empty()
    }
}

/// A loaded module (executable or library) with its symbols.
#[derive(Debug, Clone, Default)]
pub struct Module {
    /// Full path as in the map file.
    pub path: String,
    pub build_id: String,
    /// Sorted by address.
    pub symbols: Vec<Symbol>,
    pub debug: DebugInfo,
    /// Whether a `.sym` file was found.
    pub has_symfile: bool,
}

fn is_symbol_end(name: &str) -> bool {
    matches!(name, "__sym_end" | "__dynsym_end" | "__func_end")
}

/// Leading hex number like `strtoull(s, &end, 16)`; returns (value, rest).
fn strtoull_hex(s: &str) -> (u64, &str) {
    let t = s.trim_start();
    let mut b = t.as_bytes();
    let mut skip = t.len() - b.len();
    if b.len() > 2 && b[0] == b'0' && (b[1] == b'x' || b[1] == b'X') && b[2].is_ascii_hexdigit() {
        b = &b[2..];
        skip += 2;
    }
    let mut v: u64 = 0;
    let mut n = 0;
    while n < b.len() && b[n].is_ascii_hexdigit() {
        v = v
            .wrapping_mul(16)
            .wrapping_add((b[n] as char).to_digit(16).unwrap_or(0) as u64);
        n += 1;
    }
    if n == 0 {
        return (0, s);
    }
    (v, &t[skip + n..])
}

impl Module {
    /// Parse the text of a `.sym` file.
    pub fn load_symbols(&mut self, text: &str, mode: Demangle) {
        const ALLOWED: &[u8] = b"?TtwPKDdvu";
        let mut prev_addr = u64::MAX;
        let mut prev_type = b'X';
        let syms = &mut self.symbols;
        for line in text.split('\n') {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (addr, mut rest) = strtoull_hex(line);
            let rb = rest.as_bytes();
            if rb.len() < 2 || rb[0] != b' ' {
                continue;
            }
            // uftrace 0.14+ (feature SYM_SIZE): `ADDR SIZE TYPE NAME`, the
            // size in hex; a type is never a digit
            let mut size = 0u64;
            if rb[1].is_ascii_digit() {
                let (v, r) = strtoull_hex(&rest[1..]);
                size = v & u64::from(u32::MAX);
                rest = r;
            }
            let rb = rest.as_bytes();
            if rb.len() < 2 || rb[0] != b' ' {
                continue;
            }
            let kind = rb[1];
            if rb.get(2) != Some(&b' ') {
                continue;
            }
            let mut name = &rest[3..];
            if let Some(t) = name.find('\t') {
                name = &name[..t];
            }
            if addr == prev_addr && kind == prev_type {
                continue;
            }
            if !ALLOWED.contains(&kind) {
                continue;
            }
            prev_addr = addr;
            prev_type = kind;
            if kind == b'?' || is_symbol_end(name) {
                if let Some(last) = syms.last_mut() {
                    if last.size == 0 {
                        last.size = addr.wrapping_sub(last.addr);
                    }
                }
                continue;
            }
            if let Some(last) = syms.last_mut() {
                if last.size == 0 {
                    last.size = addr.wrapping_sub(last.addr);
                }
            }
            syms.push(Symbol {
                addr,
                size,
                kind,
                name: demangle(name, mode).into_boxed_str(),
            });
        }
        syms.sort_by_key(|s| s.addr);
    }

    /// The symbol containing the module-relative address `addr`
    /// (`sym.addr <= addr < sym.addr + size`), never an end marker.
    pub fn find(&self, addr: u64) -> Option<&Symbol> {
        let i = self.symbols.partition_point(|s| s.addr <= addr);
        let s = self.symbols.get(i.checked_sub(1)?)?;
        if addr < s.addr.wrapping_add(s.size) && !is_symbol_end(&s.name) {
            Some(s)
        } else {
            None
        }
    }

    /// Parse the text of a `.dbg` file; a malformed file keeps no argspecs.
    pub fn load_debug(&mut self, text: &str) -> bool {
        let d = &mut self.debug;
        let mut func: Option<()> = None;
        let mut offset = 0u64;
        for line in text.split('\n') {
            if line.is_empty() {
                continue;
            }
            if line.starts_with('#') {
                continue;
            }
            let b = line.as_bytes();
            if b.len() < 3 || b[1] != b':' || b[2] != b' ' {
                d.args.clear();
                d.rets.clear();
                return false;
            }
            let rest = &line[3..];
            match b[0] {
                b'F' => {
                    let (off, _) = strtoull_hex(rest);
                    offset = off;
                    func = Some(());
                }
                b'A' | b'R' => {
                    if func.is_none() {
                        d.args.clear();
                        d.rets.clear();
                        return false;
                    }
                    let map = if b[0] == b'A' {
                        &mut d.args
                    } else {
                        &mut d.rets
                    };
                    match map.get_mut(&offset) {
                        Some(v) => *v = None,
                        None => {
                            map.insert(offset, Some(rest.to_string()));
                        }
                    }
                }
                b'E' => {
                    if !d.enums.parse(rest) {
                        d.args.clear();
                        d.rets.clear();
                        return false;
                    }
                }
                b'L' => {
                    let line_no = crate::header::c_atol(rest) as u32;
                    let file = rest.split_once(' ').map_or("", |(_, f)| f);
                    d.lines.insert(offset, (file.to_string(), line_no));
                }
                _ => {
                    d.args.clear();
                    d.rets.clear();
                    return false;
                }
            }
        }
        true
    }
}

/// The header comments of a `.sym`/`.dbg` file: (`# path name:`, `# build-id:`).
pub fn symfile_header(text: &str) -> (Option<&str>, Option<&str>) {
    let mut path = None;
    let mut bid = None;
    for line in text.split('\n') {
        if !line.starts_with('#') {
            break;
        }
        if let Some(p) = line.strip_prefix("# path name: ") {
            path = Some(p);
        }
        if let Some(b) = line.strip_prefix("# build-id: ") {
            bid = Some(b);
        }
    }
    (path, bid)
}

/// The alternative file name uftrace uses when two modules share a base
/// name: `<stem>-<first 4 build-id chars>.sym`, or a checksum of the path.
pub fn alt_symfile_name(file: &str, path: &str, build_id: &str) -> String {
    let stem = file.strip_suffix(".sym").unwrap_or(file);
    if !build_id.is_empty() {
        // the first 4 bytes of the id (a damaged map may hold non-ASCII:
        // stop at a character boundary instead of splitting one)
        let n = (0..=build_id.len().min(4))
            .rev()
            .find(|&i| build_id.is_char_boundary(i))
            .unwrap_or(0);
        return format!("{stem}-{}.sym", &build_id[..n]);
    }
    let mut csum: u16 = 0;
    for b in path.bytes() {
        csum = csum.wrapping_add(b as i8 as i16 as u16);
    }
    format!("{stem}-{csum:04x}.sym")
}

/// One mapping of a session map file (segments of one file merged).
#[derive(Debug, Clone)]
pub struct Map {
    pub start: u64,
    pub end: u64,
    pub prot: [u8; 4],
    pub libname: String,
    pub build_id: String,
    /// Index into [`crate::Modules`], when symbols are loaded for it.
    pub module: Option<usize>,
}

impl Map {
    /// The file name part of the path.
    pub fn basename(&self) -> &str {
        basename(&self.libname)
    }
}

pub fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// Parsed `sid-*.map` file.
#[derive(Debug, Clone, Default)]
pub struct SessionMaps {
    pub maps: Vec<Map>,
    /// Start of the kernel address space, guessed from the `[stack]` line
    /// (0 when there is none: then every address counts as kernel, as in
    /// uftrace).
    pub kernel_base: u64,
}

/// uftrace's `guess_kernel_base` from the stack address: the base of the
/// first row whose bound the address is below.
fn guess_kernel_base(addr: u64) -> u64 {
    const BELOW: [(u64, u64); 7] = [
        (0x4000_0000, 0x4000_0000),
        (0x8000_0000, 0x8000_0000),
        (0xB000_0000, 0xB000_0000),
        (0xC000_0000, 0xC000_0000),
        (0x80_0000_0000, 0xFFFF_FF80_0000_0000),
        (0x400_0000_0000, 0xFFFF_FC00_0000_0000),
        (0x8000_0000_0000, 0xFFFF_8000_0000_0000),
    ];
    BELOW
        .iter()
        .find(|&&(bound, _)| addr < bound)
        .map_or(0xFFFF_0000_0000_0000, |&(_, base)| base)
}

impl SessionMaps {
    /// Parse the text of a map file (`/proc/PID/maps` lines, optionally
    /// followed by `build-id:<hex>`).
    pub fn parse(text: &str) -> SessionMaps {
        let mut out = SessionMaps::default();
        for line in text.split('\n') {
            let mut f = line.split_ascii_whitespace();
            let (Some(range), Some(prot), Some(_off), Some(_dev), Some(_ino), Some(path)) =
                (f.next(), f.next(), f.next(), f.next(), f.next(), f.next())
            else {
                continue;
            };
            let Some((s, e)) = range.split_once('-') else {
                continue;
            };
            let (start, _) = strtoull_hex(s);
            let (end, _) = strtoull_hex(e);
            if path.starts_with('[') {
                if path.starts_with("[stack") {
                    out.kernel_base = guess_kernel_base(start);
                }
                continue;
            }
            if let Some(last) = out.maps.last_mut() {
                if last.libname == path {
                    last.end = end;
                    continue;
                }
            }
            let build_id = f
                .next()
                .and_then(|b| b.strip_prefix("build-id:"))
                .unwrap_or("")
                .to_string();
            let mut p = [0u8; 4];
            for (d, s) in p.iter_mut().zip(prot.bytes()) {
                *d = s;
            }
            out.maps.push(Map {
                start,
                end,
                prot: p,
                libname: path.to_string(),
                build_id,
                module: None,
            });
        }
        out
    }

    /// The mapping containing `addr` (first match in file order).
    pub fn find(&self, addr: u64) -> Option<&Map> {
        self.maps.iter().find(|m| m.start <= addr && addr < m.end)
    }

    pub fn is_kernel(&self, addr: u64) -> bool {
        addr >= self.kernel_base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_base_by_stack_address() {
        assert_eq!(guess_kernel_base(0x3FFF_FFFF), 0x4000_0000);
        assert_eq!(guess_kernel_base(0x4000_0000), 0x8000_0000);
        assert_eq!(guess_kernel_base(0xBFFF_F000), 0xC000_0000);
        assert_eq!(guess_kernel_base(0x7FFC_1234_5000), 0xFFFF_8000_0000_0000);
        assert_eq!(guess_kernel_base(0x8000_0000_0000), 0xFFFF_0000_0000_0000);
    }

    #[test]
    fn alt_symfile_name_of_a_damaged_build_id() {
        assert_eq!(
            alt_symfile_name("libc.so.6.sym", "/lib/libc.so.6", "ab12cd"),
            "libc.so.6-ab12.sym"
        );
        // byte 4 inside a multi-byte character: no panic, shorter prefix
        assert_eq!(alt_symfile_name("x.sym", "/x", "abc\u{e9}f"), "x-abc.sym");
        assert_eq!(
            alt_symfile_name("x.sym", "/x", "\u{2713}"),
            "x-\u{2713}.sym"
        );
    }

    #[test]
    fn symbol_sizes_and_lookup() {
        let mut m = Module::default();
        m.load_symbols(
            "# symbols: 3\n0000000000001000 T a\n0000000000001010 t b\n0000000000001030 ? __sym_end\n",
            Demangle::Simple,
        );
        assert_eq!(m.symbols.len(), 2);
        assert_eq!(m.find(0x100f).unwrap().name.as_ref(), "a");
        assert_eq!(m.find(0x102f).unwrap().name.as_ref(), "b");
        assert!(m.find(0x1030).is_none());
        assert!(m.find(0xfff).is_none());
    }

    #[test]
    fn maps_merge_segments_and_find_stack() {
        let t = "1000-2000 r-xp 00000000 00:00 0  /bin/x build-id:ab\n2000-3000 r--p 0 00:00 0 /bin/x\n7ffc103a8000-7ffc103c9000 rw-p 0 00:00 0 [stack]\n";
        let m = SessionMaps::parse(t);
        assert_eq!(m.maps.len(), 1);
        assert_eq!(m.maps[0].end, 0x3000);
        assert_eq!(m.maps[0].build_id, "ab");
        assert_eq!(m.kernel_base, 0xFFFF_8000_0000_0000);
        assert!(m.find(0x2fff).is_some());
    }

    #[test]
    fn dbg_parse() {
        let mut m = Module::default();
        assert!(m.load_debug("# path name: /x\nF: 1259 fib\nL: 11 a.c\nA: @arg1\nR: @retval\n"));
        assert_eq!(m.debug.args[&0x1259].as_deref(), Some("@arg1"));
        assert!(!m.load_debug("bogus\n"));
        assert!(m.debug.args.is_empty());
    }
}
