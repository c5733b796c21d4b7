//! Symbols as perf 6.1 resolves them for `perf script`: from an ELF file's
//! `.symtab` (else `.dynsym`) or from a kallsyms file.
//!
//! perf's rules kept here (util/symbol-elf.c, util/symbol.c):
//! - ELF: function (`STT_FUNC`, `STT_GNU_IFUNC`) and object symbols with a
//!   name and a section, and `STT_NOTYPE` labels in a section whose name
//!   holds `.text`; for `ET_EXEC`/`ET_REL` files the address becomes a file
//!   offset (`st_value - sh_addr + sh_offset`), since perf looks symbols up
//!   by the map's file offset (`ip - start + pgoff`); `ET_DYN` values stay.
//! - kallsyms: `T`, `W`, `D`, `B` symbols (either case).
//! - Symbols at the same address: the one with a size beats one without,
//!   then non-weak beats weak, global beats local, fewer leading
//!   underscores, the longer name, else the first (`choose_best_symbol`).
//! - A symbol without a size ends where the next one starts; the last one
//!   ends at the next page boundary plus a page (`symbols__fixup_end`).

use std::path::Path;

use tracemux_core::{Cursor, Endian};

/// One symbol: `[start, end)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sym {
    pub start: u64,
    pub end: u64,
    pub name: String,
    /// 0 local, 1 global, 2 weak (ELF's STB_*).
    pub binding: u8,
}

/// The symbols of one dso, sorted by start. Names are kept in one byte
/// arena, or, for a large ELF string table, read from the file when a
/// symbol is first printed (a 200 MB library has 18 MB of names).
#[derive(Debug, Default)]
pub struct Symbols {
    pub syms: Vec<SymEntry>,
    names: Names,
    cache: std::collections::HashMap<u32, Box<str>>,
    /// Whether names are demangled when printed (ELF files: perf
    /// demangles user-space symbols, not the kernel's).
    demangle: bool,
}

/// One symbol, without its name: `[start, end)`, where its name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymEntry {
    pub start: u64,
    pub end: u64,
    name_off: u64,
    name_len: u32,
}

#[derive(Debug, Default)]
enum Names {
    #[default]
    None,
    Arena(Vec<u8>),
    /// The string table at `base` of the file at `path`.
    File(std::path::PathBuf, u64),
}

/// String tables above this size are not kept in memory.
const ARENA_MAX: usize = 1 << 20;

/// A symbol while a table is built: its name borrowed from the text or
/// string table it was read from (`name_off` is where it is there).
#[derive(Debug, Clone, Copy)]
pub struct RawSym<'n> {
    pub start: u64,
    pub end: u64,
    pub binding: u8,
    pub name: &'n [u8],
    pub name_off: u64,
}

/// A symbol name as perf 6.1 (Debian) prints it: demangled by GNU
/// libiberty's `cplus_demangle(name, DMGL_NO_OPTS)` (perf's
/// `demangle_sym` without `-v`), which tries Rust first, then the C++
/// (Itanium) ABI; `None` when the name is neither. Without options: no
/// function parameters or return types, no clone suffixes (`.llvm.N`,
/// `.cold`), Rust without crate disambiguators and legacy hashes.
pub fn demangle(name: &str) -> Option<String> {
    let b = name.as_bytes();
    if b.starts_with(b"_R") || is_legacy_rust(b) {
        if let Ok(d) = rustc_demangle::try_demangle(name) {
            return Some(format!("{d:#}"));
        }
        if b.starts_with(b"_R") {
            return None;
        }
    }
    if !b.starts_with(b"_Z") {
        return None;
    }
    let sym = cpp_demangle::Symbol::new(b).ok()?;
    let opts = cpp_demangle::DemangleOptions::new()
        .no_params()
        .no_return_type();
    sym.demangle_with_options(&opts).ok()
}

/// libiberty's test for a legacy Rust name: `_ZN...E` whose last path
/// element is `17h` and 16 hex digits (a suffix after `E` allowed).
fn is_legacy_rust(b: &[u8]) -> bool {
    if !b.starts_with(b"_ZN") {
        return false;
    }
    let end = b.iter().position(|&c| c == b'.').unwrap_or(b.len());
    let b = &b[..end];
    b.len() > 20
        && b.ends_with(b"E")
        && b[b.len() - 20..b.len() - 17] == *b"17h"
        && b[b.len() - 17..b.len() - 1]
            .iter()
            .all(|c| c.is_ascii_hexdigit())
}

fn underscores(s: &[u8]) -> usize {
    s.iter().take_while(|&&b| b == b'_').count()
}

/// `choose_best_symbol`: whether `b` should replace `a` (names as perf
/// holds them: demangled when `demangled`).
fn better(a: &RawSym<'_>, b: &RawSym<'_>, demangled: bool) -> bool {
    let (la, lb) = (a.end - a.start, b.end - b.start);
    if la == 0 && lb > 0 {
        return true;
    }
    if la > 0 && lb == 0 {
        return false;
    }
    let (wa, wb) = (a.binding == 2, b.binding == 2);
    if wa != wb {
        return wa;
    }
    let (ga, gb) = (a.binding == 1, b.binding == 1);
    if ga != gb {
        return gb;
    }
    let name = |s: &RawSym<'_>| -> Option<String> {
        demangled
            .then(|| demangle(std::str::from_utf8(s.name).ok()?))
            .flatten()
    };
    let (da, db) = (name(a), name(b));
    let na = da.as_deref().map_or(a.name, str::as_bytes);
    let nb = db.as_deref().map_or(b.name, str::as_bytes);
    let (ua, ub) = (underscores(na), underscores(nb));
    if ua != ub {
        return ub < ua;
    }
    nb.len() > na.len()
}

/// `symbols__fixup_duplicate`: of symbols at one address, the best (in
/// place).
fn dedupe(mut syms: Vec<RawSym<'_>>, demangled: bool) -> Vec<RawSym<'_>> {
    let mut w = 0;
    for r in 0..syms.len() {
        if w > 0 && syms[w - 1].start == syms[r].start {
            if better(&syms[w - 1], &syms[r], demangled) {
                syms[w - 1] = syms[r];
            }
        } else {
            syms[w] = syms[r];
            w += 1;
        }
    }
    syms.truncate(w);
    syms.shrink_to_fit();
    syms
}

/// `symbols__fixup_end`: a symbol without a size ends where the next one
/// starts; the last one at the next page boundary plus a page.
fn fixup_end(syms: &mut [RawSym<'_>]) {
    for i in 1..syms.len() {
        if syms[i - 1].end == syms[i - 1].start {
            syms[i - 1].end = syms[i].start;
        }
    }
    if let Some(last) = syms.last_mut() {
        if last.end == last.start {
            last.end = (last.start.saturating_add(4095) & !4095).saturating_add(4096);
        }
    }
}

/// Sort (stably: symbols at one address keep their order), then drop
/// duplicates and fix the ends in perf's order: ELF files (`dso__load_sym`)
/// drop duplicates first, kallsyms (`__dso__load_kallsyms`) fixes the ends
/// first, so of several kallsyms names at one address only the last has a
/// size, and it wins.
fn order(mut syms: Vec<RawSym<'_>>, kallsyms: bool) -> Vec<RawSym<'_>> {
    syms.sort_by_key(|s| s.start);
    if kallsyms {
        fixup_end(&mut syms);
        dedupe(syms, false)
    } else {
        let mut v = dedupe(syms, true);
        fixup_end(&mut v);
        v
    }
}

impl Symbols {
    /// A table of owned symbols (tests, small tables).
    pub fn finish(syms: Vec<Sym>, kallsyms: bool) -> Symbols {
        let raw = syms
            .iter()
            .map(|s| RawSym {
                start: s.start,
                end: s.end,
                binding: s.binding,
                name: s.name.as_bytes(),
                name_off: 0,
            })
            .collect();
        let mut t = Symbols::arena(order(raw, kallsyms));
        t.demangle = !kallsyms;
        t
    }

    /// Names copied into an arena.
    fn arena(syms: Vec<RawSym<'_>>) -> Symbols {
        let mut arena = Vec::new();
        let entries = syms
            .into_iter()
            .map(|s| {
                let off = arena.len() as u64;
                arena.extend_from_slice(s.name);
                SymEntry {
                    start: s.start,
                    end: s.end,
                    name_off: off,
                    name_len: s.name.len() as u32,
                }
            })
            .collect();
        Symbols {
            syms: entries,
            names: Names::Arena(arena),
            cache: Default::default(),
            demangle: false,
        }
    }

    /// Names left in the file's string table at `base`.
    fn in_file(syms: Vec<RawSym<'_>>, path: std::path::PathBuf, base: u64) -> Symbols {
        let entries = syms
            .into_iter()
            .map(|s| SymEntry {
                start: s.start,
                end: s.end,
                name_off: s.name_off,
                name_len: s.name.len().min(u32::MAX as usize) as u32,
            })
            .collect();
        Symbols {
            syms: entries,
            names: Names::File(path, base),
            cache: Default::default(),
            demangle: true,
        }
    }

    /// The name of symbol `i` (`[unknown]`-free: empty when unreadable).
    pub fn name(&mut self, i: usize) -> &str {
        let Some(e) = self.syms.get(i).copied() else {
            return "";
        };
        let demangle = self.demangle;
        match &self.names {
            Names::None => "",
            Names::Arena(a) => {
                let b = a
                    .get(e.name_off as usize..e.name_off as usize + e.name_len as usize)
                    .unwrap_or(&[]);
                let raw = std::str::from_utf8(b).unwrap_or("");
                if !demangle || !(raw.starts_with("_Z") || raw.starts_with("_R")) {
                    return raw;
                }
                self.cache
                    .entry(i as u32)
                    .or_insert_with(|| demangle_or(raw).into_boxed_str())
            }
            Names::File(path, base) => {
                let (path, base) = (path.clone(), *base);
                self.cache.entry(i as u32).or_insert_with(|| {
                    let raw = name_from_file(&path, base + e.name_off)
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                        .unwrap_or_default();
                    if demangle {
                        demangle_or(&raw).into_boxed_str()
                    } else {
                        raw.into_boxed_str()
                    }
                })
            }
        }
    }

    /// Move every symbol by `delta` (kernel relocation).
    pub fn shift(&mut self, delta: u64) {
        for x in &mut self.syms {
            x.start = x.start.wrapping_add(delta);
            x.end = x.end.wrapping_add(delta);
        }
    }

    /// The index of the symbol holding `addr`.
    pub fn find(&self, addr: u64) -> Option<usize> {
        let i = self
            .syms
            .partition_point(|s| s.start <= addr)
            .checked_sub(1)?;
        (addr < self.syms[i].end).then_some(i)
    }

    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }
}

/// `demangle(raw)`, else `raw`.
fn demangle_or(raw: &str) -> String {
    demangle(raw).unwrap_or_else(|| raw.to_string())
}

/// Parse a kallsyms text (`ADDR TYPE NAME [MODULE]` lines); `None` when
/// no line is of that form.
pub fn parse_kallsyms(text: &[u8]) -> Option<Symbols> {
    let mut v = Vec::new();
    let mut any = false;
    for line in text.split(|&b| b == b'\n') {
        let mut it = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty());
        let (Some(a), Some(t), Some(name)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        let Some(addr) = std::str::from_utf8(a)
            .ok()
            .and_then(|a| u64::from_str_radix(a, 16).ok())
        else {
            continue;
        };
        any = true;
        let t = t[0];
        if !matches!(t.to_ascii_uppercase(), b'T' | b'W' | b'D' | b'B') {
            continue;
        }
        if it.next().is_some() {
            // a module's symbol: perf puts it in the module's map
            continue;
        }
        let binding = match t {
            b'W' | b'w' => 2,
            _ if t.is_ascii_uppercase() => 1,
            _ => 0,
        };
        v.push(RawSym {
            start: addr,
            end: addr,
            name,
            binding,
            name_off: 0,
        });
    }
    any.then(|| Symbols::arena(order(v, true)))
}

/// The address of `name` in a kallsyms text.
pub fn kallsyms_addr(text: &[u8], name: &str) -> Option<u64> {
    for line in text.split(|&b| b == b'\n') {
        let line = String::from_utf8_lossy(line);
        let mut it = line.split_ascii_whitespace();
        if let (Some(a), Some(_), Some(n)) = (it.next(), it.next(), it.next()) {
            if n == name {
                return u64::from_str_radix(a, 16).ok();
            }
        }
    }
    None
}

struct Shdr {
    name: u32,
    type_: u32,
    addr: u64,
    offset: u64,
    size: u64,
    link: u32,
    entsize: u64,
}

/// Where ELF bytes come from: memory, or a file read at offsets (a
/// library of hundreds of MB is not read whole).
pub trait ReadAt {
    fn len(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `n` bytes at `off`, when the source has them.
    fn read(&self, off: u64, n: u64) -> Option<Vec<u8>>;
}

impl ReadAt for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }
    fn read(&self, off: u64, n: u64) -> Option<Vec<u8>> {
        self.get(off as usize..off.checked_add(n)? as usize)
            .map(|b| b.to_vec())
    }
}

impl ReadAt for std::fs::File {
    fn len(&self) -> u64 {
        self.metadata().map_or(0, |m| m.len())
    }
    fn read(&self, off: u64, n: u64) -> Option<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        if off.checked_add(n)? > ReadAt::len(self) {
            return None;
        }
        let mut b = vec![0u8; n as usize];
        self.read_exact_at(&mut b, off).ok()?;
        Some(b)
    }
}

/// The NUL-terminated string at `off` (at most 64 KiB of it).
fn cstr_at<R: ReadAt + ?Sized>(src: &R, off: u64) -> Vec<u8> {
    let mut want = 256u64;
    loop {
        let n = want.min(src.len().saturating_sub(off));
        let Some(b) = src.read(off, n) else {
            return Vec::new();
        };
        if let Some(z) = b.iter().position(|&x| x == 0) {
            return b[..z].to_vec();
        }
        if n < want || want >= 1 << 16 {
            return b;
        }
        want *= 4;
    }
}

fn name_from_file(path: &Path, off: u64) -> Option<Vec<u8>> {
    let f = std::fs::File::open(path).ok()?;
    Some(cstr_at(&f, off))
}

/// Read the symbols of an ELF file's bytes; `None` when it is not ELF or
/// has no symbol table.
pub fn parse_elf(b: &[u8]) -> Option<Symbols> {
    elf_symbols(b, None)
}

/// The symbols of an ELF file from `src`; names of a large string table
/// stay in the file at `path`. Every offset and size is checked against
/// the file's length before anything is read or allocated.
fn elf_symbols<R: ReadAt + ?Sized>(src: &R, path: Option<&Path>) -> Option<Symbols> {
    let total = src.len();
    let head = src.read(0, 64.min(total))?;
    if head.get(..4)? != b"\x7fELF" {
        return None;
    }
    let is64 = *head.get(4)? == 2;
    let e = if *head.get(5)? == 2 {
        Endian::Big
    } else {
        Endian::Little
    };
    let mut c = Cursor::new(&head, e, "elf");
    c.seek(16).ok()?;
    let etype = c.u16().ok()?;
    c.seek(if is64 { 0x28 } else { 0x20 }).ok()?;
    let shoff = if is64 {
        c.u64().ok()?
    } else {
        c.u32().ok()? as u64
    };
    c.seek(if is64 { 0x3a } else { 0x2e }).ok()?;
    let shentsize = c.u16().ok()? as u64;
    let shnum = c.u16().ok()? as u64;
    let shstrndx = c.u16().ok()? as usize;
    if shentsize < if is64 { 64 } else { 40 }
        || shnum.checked_mul(shentsize)?.checked_add(shoff)? > total
    {
        return None;
    }
    let table = src.read(shoff, shnum * shentsize)?;
    let mut sh = Vec::new();
    for i in 0..shnum {
        let mut s = Cursor::new(&table, e, "elf section");
        s.seek((i * shentsize) as usize).ok()?;
        let name = s.u32().ok()?;
        let type_ = s.u32().ok()?;
        let (addr, offset, size, link, entsize);
        if is64 {
            s.u64().ok()?;
            addr = s.u64().ok()?;
            offset = s.u64().ok()?;
            size = s.u64().ok()?;
            link = s.u32().ok()?;
            s.u32().ok()?;
            s.u64().ok()?;
            entsize = s.u64().ok()?;
        } else {
            s.u32().ok()?;
            addr = s.u32().ok()? as u64;
            offset = s.u32().ok()? as u64;
            size = s.u32().ok()? as u64;
            link = s.u32().ok()?;
            s.u32().ok()?;
            s.u32().ok()?;
            entsize = s.u32().ok()? as u64;
        }
        sh.push(Shdr {
            name,
            type_,
            addr,
            offset,
            size,
            link,
            entsize,
        });
    }
    let data = |s: &Shdr| -> Option<Vec<u8>> {
        if s.type_ == 8 {
            return Some(Vec::new()); // NOBITS
        }
        src.read(s.offset, s.size)
    };
    let shstr = data(sh.get(shstrndx)?)?;
    let sec_name = |s: &Shdr| -> &[u8] {
        let n = shstr.get(s.name as usize..).unwrap_or(&[]);
        &n[..n.iter().position(|&x| x == 0).unwrap_or(n.len())]
    };
    let symtab = sh
        .iter()
        .find(|s| s.type_ == 2)
        .or_else(|| sh.iter().find(|s| s.type_ == 11))?;
    let strsec = sh.get(symtab.link as usize)?;
    // a large string table stays in the file: names are read when needed
    let big = path.is_some() && strsec.size as usize > ARENA_MAX && strsec.type_ != 8;
    let strtab = if big { Vec::new() } else { data(strsec)? };
    let syms = data(symtab)?;
    let ent = if symtab.entsize == 0 {
        if is64 {
            24
        } else {
            16
        }
    } else {
        symtab.entsize as usize
    };
    let adjust = etype == 2 || etype == 1; // ET_EXEC, ET_REL
    let mut v = Vec::new();
    for chunk in syms.chunks_exact(ent) {
        let mut s = Cursor::new(chunk, e, "elf symbol");
        let (name, info, shndx, value, size);
        if is64 {
            name = s.u32().ok()?;
            info = s.u8().ok()?;
            s.u8().ok()?;
            shndx = s.u16().ok()?;
            value = s.u64().ok()?;
            size = s.u64().ok()?;
        } else {
            name = s.u32().ok()?;
            value = s.u32().ok()? as u64;
            size = s.u32().ok()? as u64;
            info = s.u8().ok()?;
            s.u8().ok()?;
            shndx = s.u16().ok()?;
        }
        let typ = info & 0xf;
        let bind = info >> 4;
        if name == 0 || shndx == 0 || shndx >= 0xff00 {
            continue;
        }
        let Some(sec) = sh.get(shndx as usize) else {
            continue;
        };
        let is_func = typ == 2 || typ == 10;
        let is_obj = typ == 1;
        let is_label = typ == 0 && memchr_text(sec_name(sec));
        if !is_func && !is_obj && !is_label {
            continue;
        }
        let n = strtab.get(name as usize..).unwrap_or(&[]);
        let n = &n[..n.iter().position(|&x| x == 0).unwrap_or(n.len())];
        if n.is_empty() && !big {
            continue;
        }
        let start = if adjust {
            value.wrapping_sub(sec.addr).wrapping_add(sec.offset)
        } else {
            value
        };
        v.push(RawSym {
            start,
            end: start.saturating_add(size),
            name: n,
            binding: bind.min(2),
            name_off: name as u64,
        });
    }
    if !big {
        let mut t = Symbols::arena(order(v, false));
        t.demangle = true;
        return Some(t);
    }
    // names from the file, for the symbols that share an address (the
    // only ones whose names decide anything)
    v.sort_by_key(|s| s.start);
    let mut store: Vec<(usize, Vec<u8>)> = Vec::new();
    for i in 0..v.len() {
        let dup = (i > 0 && v[i - 1].start == v[i].start)
            || v.get(i + 1).is_some_and(|n| n.start == v[i].start);
        if dup {
            store.push((i, cstr_at(src, strsec.offset + v[i].name_off)));
        }
    }
    drop(syms);
    for (i, n) in &store {
        v[*i].name = n;
    }
    let p = path?.to_path_buf();
    Some(Symbols::in_file(order(v, false), p, strsec.offset))
}

fn memchr_text(name: &[u8]) -> bool {
    name.windows(5).any(|w| w == b".text")
}

/// What perf needs to know of a candidate file: its build id, whether it
/// has `.symtab`, and its `.gnu_debuglink` name.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ElfInfo {
    pub build_id: Option<Vec<u8>>,
    pub has_symtab: bool,
    pub has_dynsym: bool,
    pub debuglink: Option<String>,
}

/// Read an ELF file's build id (`NT_GNU_BUILD_ID` note), symbol table
/// kinds and debuglink; `None` when it is not ELF.
pub fn elf_info<R: ReadAt + ?Sized>(src: &R) -> Option<ElfInfo> {
    let total = src.len();
    let head = src.read(0, 64.min(total))?;
    if head.get(..4)? != b"\x7fELF" {
        return None;
    }
    let is64 = *head.get(4)? == 2;
    let e = if *head.get(5)? == 2 {
        Endian::Big
    } else {
        Endian::Little
    };
    let mut c = Cursor::new(&head, e, "elf");
    c.seek(if is64 { 0x28 } else { 0x20 }).ok()?;
    let shoff = if is64 {
        c.u64().ok()?
    } else {
        c.u32().ok()? as u64
    };
    c.seek(if is64 { 0x3a } else { 0x2e }).ok()?;
    let shentsize = c.u16().ok()? as u64;
    let shnum = c.u16().ok()? as u64;
    let shstrndx = c.u16().ok()? as u64;
    if shentsize < if is64 { 64 } else { 40 }
        || shnum.checked_mul(shentsize)?.checked_add(shoff)? > total
    {
        return None;
    }
    let table = src.read(shoff, shnum * shentsize)?;
    let field = |i: u64| -> Option<(u32, u32, u64, u64)> {
        let mut s = Cursor::new(&table, e, "elf section");
        s.seek((i * shentsize) as usize).ok()?;
        let name = s.u32().ok()?;
        let t = s.u32().ok()?;
        if is64 {
            s.skip(16).ok()?;
            Some((name, t, s.u64().ok()?, s.u64().ok()?))
        } else {
            s.skip(8).ok()?;
            Some((name, t, s.u32().ok()? as u64, s.u32().ok()? as u64))
        }
    };
    let (_, _, so, ss) = field(shstrndx)?;
    let shstr = src.read(so, ss.min(1 << 20))?;
    let mut info = ElfInfo::default();
    for i in 0..shnum {
        let Some((name, t, off, size)) = field(i) else {
            continue;
        };
        let n = shstr.get(name as usize..).unwrap_or(&[]);
        let n = &n[..n.iter().position(|&x| x == 0).unwrap_or(n.len())];
        match t {
            2 => info.has_symtab = true,
            11 => info.has_dynsym = true,
            7 if info.build_id.is_none() && size <= 4096 => {
                // notes: namesz, descsz, type, name, desc (4-aligned)
                let Some(b) = src.read(off, size) else {
                    continue;
                };
                let mut p = 0usize;
                while p + 12 <= b.len() {
                    let w = |k: usize| e.u32([b[k], b[k + 1], b[k + 2], b[k + 3]]) as usize;
                    let (nsz, dsz, typ) = (w(p), w(p + 4), w(p + 8));
                    let nstart = p + 12;
                    let dstart = nstart + nsz.div_ceil(4) * 4;
                    let end = dstart + dsz.div_ceil(4) * 4;
                    if dstart + dsz > b.len() {
                        break;
                    }
                    if typ == 3 && b.get(nstart..nstart + nsz) == Some(b"GNU\0") {
                        info.build_id = Some(b[dstart..dstart + dsz].to_vec());
                        break;
                    }
                    p = end;
                }
            }
            1 if n == b".gnu_debuglink" && size <= 4096 => {
                if let Some(b) = src.read(off, size) {
                    let z = b.iter().position(|&x| x == 0).unwrap_or(b.len());
                    info.debuglink = Some(String::from_utf8_lossy(&b[..z]).into_owned());
                }
            }
            _ => {}
        }
    }
    Some(info)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Read the symbols of the dso at `path` (an absolute path of the traced
/// machine) as perf 6.1's `dso__load` finds them, every candidate under
/// `symfs`: the file's `.gnu_debuglink` target (beside it, in `.debug/`,
/// under `/usr/lib/debug`), `/usr/lib/debug/PATH.debug`,
/// `/usr/lib/debug/PATH`, `/usr/lib/debug/.build-id/xx/rest.debug`, the
/// file itself. The first candidate with a `.symtab` (and the dso's build
/// id, when it is known) gives the symbols; else the file's `.dynsym`.
/// `build_id` is the recording's (HEADER_BUILD_ID), else the file's.
pub fn load_elf(symfs: Option<&Path>, path: &str, build_id: Option<&[u8]>) -> Option<Symbols> {
    let under = |p: &str| -> std::path::PathBuf {
        match symfs {
            Some(root) => root.join(p.trim_start_matches('/')),
            None => Path::new(p).to_path_buf(),
        }
    };
    // perf's symsrc__init: with a recorded build id, a file of another
    // build (or of none) gives no symbols
    let other_build =
        |info: &ElfInfo| build_id.is_some_and(|want| info.build_id.as_deref() != Some(want));
    let own = under(path);
    let own_info = std::fs::File::open(&own).ok().and_then(|f| elf_info(&f));
    let bid: Option<Vec<u8>> = build_id
        .map(<[u8]>::to_vec)
        .or_else(|| own_info.as_ref().and_then(|i| i.build_id.clone()));
    let dir = Path::new(path)
        .parent()
        .map_or(String::new(), |d| d.to_string_lossy().into_owned());
    let mut cands: Vec<String> = Vec::new();
    if let Some(link) = own_info.as_ref().and_then(|i| i.debuglink.clone()) {
        cands.push(format!("{dir}/{link}"));
        cands.push(format!("{dir}/.debug/{link}"));
        cands.push(format!("/usr/lib/debug{dir}/{link}"));
    }
    cands.push(format!("/usr/lib/debug{path}.debug"));
    cands.push(format!("/usr/lib/debug{path}"));
    if let Some(b) = bid.as_ref().filter(|b| !b.is_empty()) {
        let h = hex(b);
        cands.push(format!(
            "/usr/lib/debug/.build-id/{}/{}.debug",
            &h[..2],
            &h[2..]
        ));
    }
    cands.push(path.to_string());
    for cand in &cands {
        let p = under(cand);
        if !p.is_file() {
            continue;
        }
        let Ok(f) = std::fs::File::open(&p) else {
            continue;
        };
        let Some(info) = elf_info(&f) else { continue };
        if other_build(&info) {
            continue;
        }
        if info.has_symtab {
            return elf_symbols(&f, Some(&p));
        }
    }
    // no symbol table anywhere: the file's dynamic symbols, unless it is
    // another build than the recorded one
    if own_info.as_ref().is_none_or(other_build) {
        return None;
    }
    let f = std::fs::File::open(&own).ok()?;
    elf_symbols(&f, Some(&own))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(start: u64, end: u64, name: &str, binding: u8) -> Sym {
        Sym {
            start,
            end,
            name: name.into(),
            binding,
        }
    }

    #[test]
    fn duplicates_and_ends() {
        let v = vec![
            s(0x100, 0x100, "_text", 1),
            s(0x100, 0x100, "__stext", 1),
            s(0x200, 0x200, "b", 0),
            s(0x300, 0x310, "c", 1),
        ];
        let mut t = Symbols::finish(v.clone(), false);
        assert_eq!(t.name(0), "_text");
        let mut k = Symbols::finish(v, true);
        assert_eq!(k.name(0), "__stext");
        {
            let i = k.find(0x150).unwrap();
            assert_eq!(k.name(i), "__stext");
        }
        assert_eq!(t.syms[0].end, 0x200);
        {
            let i = t.find(0x250).unwrap();
            assert_eq!(t.name(i), "b");
        }
        {
            let i = t.find(0x30f).unwrap();
            assert_eq!(t.name(i), "c");
        }
        assert!(t.find(0x310).is_none());
        assert!(t.find(0xff).is_none());
    }

    #[test]
    fn kallsyms_lines() {
        let k = b"ffffffff81000000 T _text\nffffffff81000100 t local_fn\nffffffff81000200 r rodata\nffffffff81000300 T mod_fn\t[ext4]\n";
        let mut t = parse_kallsyms(k).unwrap();
        assert_eq!(t.syms.len(), 2);
        {
            let i = t.find(0xffffffff81000150).unwrap();
            assert_eq!(t.name(i), "local_fn");
        }
        assert_eq!(kallsyms_addr(k, "_text"), Some(0xffffffff81000000));
        assert!(parse_kallsyms(b"nothing here\n").is_none());
    }

    #[test]
    fn not_elf() {
        assert!(parse_elf(b"\x7fELF").is_none());
        assert!(parse_elf(b"hello").is_none());
        let mut b = vec![0u8; 64];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        b[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse_elf(&b).is_none());
    }
}
