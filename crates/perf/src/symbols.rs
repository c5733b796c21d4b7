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

/// The symbols of one dso, sorted by start.
#[derive(Debug, Clone, Default)]
pub struct Symbols {
    pub syms: Vec<Sym>,
}

fn underscores(s: &str) -> usize {
    s.bytes().take_while(|&b| b == b'_').count()
}

/// `choose_best_symbol`: whether `b` should replace `a`.
fn better(a: &Sym, b: &Sym) -> bool {
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
    let (ua, ub) = (underscores(&a.name), underscores(&b.name));
    if ua != ub {
        return ub < ua;
    }
    b.name.len() > a.name.len()
}

/// `symbols__fixup_duplicate`: of symbols at one address, the best.
fn dedupe(syms: Vec<Sym>) -> Vec<Sym> {
    let mut out: Vec<Sym> = Vec::with_capacity(syms.len());
    for s in syms {
        match out.last_mut() {
            Some(last) if last.start == s.start => {
                if better(last, &s) {
                    *last = s;
                }
            }
            _ => out.push(s),
        }
    }
    out
}

/// `symbols__fixup_end`: a symbol without a size ends where the next one
/// starts; the last one at the next page boundary plus a page.
fn fixup_end(syms: &mut [Sym]) {
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

impl Symbols {
    /// Sort (stably: symbols at one address keep their order), then drop
    /// duplicates and fix the ends in perf's order: ELF files
    /// (`dso__load_sym`) drop duplicates first, kallsyms
    /// (`__dso__load_kallsyms`) fixes the ends first, so of several kallsyms
    /// names at one address only the last has a size, and it wins.
    pub fn finish(mut syms: Vec<Sym>, kallsyms: bool) -> Symbols {
        syms.sort_by_key(|s| s.start);
        if kallsyms {
            fixup_end(&mut syms);
            syms = dedupe(syms);
        } else {
            syms = dedupe(syms);
            fixup_end(&mut syms);
        }
        Symbols { syms }
    }

    /// The symbol holding `addr`.
    pub fn find(&self, addr: u64) -> Option<&Sym> {
        let i = self.syms.partition_point(|s| s.start <= addr);
        let s = self.syms.get(i.checked_sub(1)?)?;
        (addr < s.end).then_some(s)
    }

    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }
}

/// Parse a kallsyms text (`ADDR TYPE NAME [MODULE]` lines); `None` when
/// no line is of that form.
pub fn parse_kallsyms(text: &[u8]) -> Option<Symbols> {
    let mut v = Vec::new();
    let mut any = false;
    for line in text.split(|&b| b == b'\n') {
        let line = String::from_utf8_lossy(line);
        let mut it = line.split_ascii_whitespace();
        let (Some(a), Some(t), Some(name)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(a, 16) else {
            continue;
        };
        any = true;
        let t = t.as_bytes()[0];
        if !matches!(t.to_ascii_uppercase(), b'T' | b'W' | b'D' | b'B') {
            continue;
        }
        if it.next().is_some() {
            // a module's symbol: perf puts it in the module's map
            continue;
        }
        let binding = if t.is_ascii_uppercase() {
            if t == b'W' {
                2
            } else {
                1
            }
        } else if t == b'w' {
            2
        } else {
            0
        };
        v.push(Sym {
            start: addr,
            end: addr,
            name: name.to_string(),
            binding,
        });
    }
    any.then(|| Symbols::finish(v, true))
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

/// Read the symbols of an ELF file's bytes; `None` when it is not ELF or
/// has no symbol table. Every offset and size is checked against the file.
pub fn parse_elf(b: &[u8]) -> Option<Symbols> {
    if b.get(..4)? != b"\x7fELF" {
        return None;
    }
    let is64 = *b.get(4)? == 2;
    let e = if *b.get(5)? == 2 {
        Endian::Big
    } else {
        Endian::Little
    };
    let mut c = Cursor::new(b, e, "elf");
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
    if shnum.checked_mul(shentsize)?.checked_add(shoff)? > b.len() as u64
        || shentsize < if is64 { 64 } else { 40 }
    {
        return None;
    }
    let mut sh = Vec::new();
    for i in 0..shnum {
        let mut s = Cursor::new(b, e, "elf section");
        s.seek((shoff + i * shentsize) as usize).ok()?;
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
    let data = |s: &Shdr| -> Option<&[u8]> {
        if s.type_ == 8 {
            return Some(&[]); // NOBITS
        }
        b.get(s.offset as usize..s.offset.checked_add(s.size)? as usize)
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
    let strtab = data(sh.get(symtab.link as usize)?)?;
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
        if n.is_empty() {
            continue;
        }
        let start = if adjust {
            value.wrapping_sub(sec.addr).wrapping_add(sec.offset)
        } else {
            value
        };
        v.push(Sym {
            start,
            end: start.saturating_add(size),
            name: String::from_utf8_lossy(n).into_owned(),
            binding: bind.min(2),
        });
    }
    Some(Symbols::finish(v, false))
}

fn memchr_text(name: &[u8]) -> bool {
    name.windows(5).any(|w| w == b".text")
}

/// Read the ELF symbols of `path` (an absolute dso path) under `symfs`.
pub fn load_elf(symfs: Option<&Path>, path: &str) -> Option<Symbols> {
    let p = match symfs {
        Some(root) => root.join(path.trim_start_matches('/')),
        None => Path::new(path).to_path_buf(),
    };
    let b = std::fs::read(p).ok()?;
    parse_elf(&b)
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
        let t = Symbols::finish(v.clone(), false);
        assert_eq!(t.syms[0].name, "_text");
        let k = Symbols::finish(v, true);
        assert_eq!(k.syms[0].name, "__stext");
        assert_eq!(k.find(0x150).unwrap().name, "__stext");
        assert_eq!(t.syms[0].end, 0x200);
        assert_eq!(t.find(0x250).unwrap().name, "b");
        assert_eq!(t.find(0x30f).unwrap().name, "c");
        assert!(t.find(0x310).is_none());
        assert!(t.find(0xff).is_none());
    }

    #[test]
    fn kallsyms_lines() {
        let k = b"ffffffff81000000 T _text\nffffffff81000100 t local_fn\nffffffff81000200 r rodata\nffffffff81000300 T mod_fn\t[ext4]\n";
        let t = parse_kallsyms(k).unwrap();
        assert_eq!(t.syms.len(), 2);
        assert_eq!(t.find(0xffffffff81000150).unwrap().name, "local_fn");
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
