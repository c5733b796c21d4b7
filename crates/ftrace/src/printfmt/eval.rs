//! Evaluating arguments against a record, as libtraceevent's
//! `eval_num_arg` and the `print_arg_*` helpers do.

use std::sync::OnceLock;

use tracemux_core::bytes::Endian;
use tracemux_core::model::{FieldDef, FieldFlags, PrintCtx};

use super::ast::{ArgId, FieldRef, PrintArg, PrintFmt};
use super::printf::{fmt_int, fmt_str, put_hex, put_hex2, put_u64, Spec};
use super::strto::strtoull;

/// libtraceevent's `eval_type_str`: what a cast does to a value. Only the
/// sized types it knows are truncated (`u8`..`u32`, `s8`..`s32`, `char`,
/// `short`, `int`, with or without `unsigned`); signed types are truncated
/// too, not sign-extended. Pointers, `long`, `struct`s and unknown types
/// keep the value. With `pointer`, the type must end in `*`, which is
/// dropped first (the cast of an array element read through `[]`).
pub fn eval_type_str(val: u64, ty: &str, pointer: bool) -> u64 {
    let len = ty.len();
    if len < 2 {
        return val;
    }
    if pointer {
        if !ty.ends_with('*') {
            return val;
        }
        return match ty.get(..len - 2) {
            Some(t) => eval_type_str(val, t, false),
            None => val,
        };
    }
    if ty.ends_with('*') || ty.starts_with("struct") {
        return val;
    }
    match ty {
        "u8" | "s8" => return val & 0xff,
        "u16" | "s16" => return val & 0xffff,
        "u32" | "s32" => return val & 0xffff_ffff,
        "u64" | "s64" => return val,
        _ => {}
    }
    let t = ty.strip_prefix("unsigned ").unwrap_or(ty);
    match t {
        "char" => val & 0xff,
        "short" => val & 0xffff,
        "int" => val & 0xffff_ffff,
        _ => val,
    }
}

/// `tep_read_number`: 1, 2, 4 or 8 bytes at `off`; anything else (or out
/// of the record) reads 0.
#[inline]
pub(crate) fn read_number(endian: Endian, data: &[u8], off: usize, size: usize) -> u64 {
    data.get(off..)
        .and_then(|b| endian.read_uint(b, size))
        .unwrap_or(0)
}

/// Where a `__data_loc`/`__rel_loc` field's data is (`dynamic_offset_field`),
/// with libtraceevent's overflow rules: an offset past the record becomes
/// 0, a length reaching past it becomes 0. The old 2-byte form has no
/// length: the data runs to the end of the record.
pub(crate) fn dynamic_offset_field(f: &FieldDef, rec: Rec<'_>, endian: Endian) -> (u32, u32) {
    let size = rec.size as u64;
    if f.offset as u64 + f.size as u64 > size {
        return (0, 0);
    }
    let val = read_number(endian, rec.data, f.offset as usize, f.size as usize);
    let o = (val & 0xffff) as u32;
    let ds = rec.size as u32;
    let l = if f.size == 2 {
        ds.wrapping_sub(o)
    } else {
        ((val >> 16) & 0xffff) as u32
    };
    let mut offset = if o > ds { 0 } else { o };
    let len = if o.wrapping_add(l) > ds { 0 } else { l };
    if f.flags.has(FieldFlags::RELATIVE) {
        offset = offset.wrapping_add(f.offset + f.size);
    }
    (offset, len)
}

/// A record as libtraceevent sees it: `data[..size]` is the record, and
/// `data` goes on with what follows it in the page (read by the printers
/// that do not check bounds).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rec<'a> {
    pub data: &'a [u8],
    pub size: usize,
}

/// A conversion as printed: its parsed spec (if glibc would parse it), its
/// text, the value of its `*` argument, its length modifier count.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Conv<'a> {
    pub spec: Option<&'a Spec>,
    pub text: &'a str,
    pub star: Option<i32>,
    pub ls: i32,
}

/// One argument of a `bprint` record, as libtraceevent's
/// `make_bprint_args` decodes it: a number (an ATOM holding `%lld` of the
/// value) or a string (a BSTRING).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BArg {
    Num(u64),
    /// Offset and length of the string in the record.
    Str(u32, u32),
}

impl BArg {
    fn bytes<'d>(&self, data: &'d [u8]) -> &'d [u8] {
        match *self {
            BArg::Str(s, l) => data
                .get(s as usize..(s as usize + l as usize).min(data.len()))
                .unwrap_or(&[]),
            BArg::Num(_) => &[],
        }
    }
}

/// What evaluation needs: the parse, the event's fields and the record.
pub(crate) struct Env<'a> {
    pub pf: &'a PrintFmt,
    pub common: &'a [FieldDef],
    pub own: &'a [FieldDef],
    pub long_size: u32,
    /// Per argument node: the address a function-name atom stands for,
    /// looked up once (libtraceevent rewrites the atom the same way).
    pub atom_cache: &'a [OnceLock<u64>],
    /// Per argument node: the field a `__get_str`/`__get_bitmask`/
    /// `__get_cpumask` names (looked up by name among all fields).
    pub named: &'a [Option<FieldRef>],
    /// The arguments of a `bprint` record ([`PrintArg::BArg`] indexes them).
    pub bargs: &'a [BArg],
    /// Per argument node: for casts, what `eval_type_str` keeps of a
    /// value (a mask), as a cast and as the cast of an array element.
    pub casts: &'a [(u64, u64)],
    /// The record being printed and its context.
    pub rec: Rec<'a>,
    pub ctx: &'a PrintCtx<'a>,
}

/// The masks [`Env::casts`] holds for a parse.
pub(crate) fn cast_masks(pf: &PrintFmt) -> Vec<(u64, u64)> {
    pf.arena
        .iter()
        .map(|a| match a {
            PrintArg::Type { ty, .. } => (
                eval_type_str(u64::MAX, ty, false),
                eval_type_str(u64::MAX, ty, true),
            ),
            _ => (u64::MAX, u64::MAX),
        })
        .collect()
}

impl Env<'_> {
    pub fn field(&self, r: FieldRef) -> &FieldDef {
        match r {
            FieldRef::Common(i) => &self.common[i as usize],
            FieldRef::Own(i) => &self.own[i as usize],
        }
    }

    fn node(&self, id: ArgId) -> &PrintArg {
        self.pf.arg(id)
    }

    /// Skip casts.
    pub fn strip_types(&self, mut id: ArgId) -> ArgId {
        while let PrintArg::Type { item, .. } = self.node(id) {
            id = *item;
        }
        id
    }

    fn read_field(&self, f: &FieldDef, endian: Endian) -> u64 {
        // check_data_offset_size
        if f.offset as u64 + f.size as u64 > self.rec.size as u64 {
            return 0;
        }
        read_number(endian, self.rec.data, f.offset as usize, f.size as usize)
    }

    /// libtraceevent's `eval_num_arg`. Deviations: a `__get_dynamic_array`
    /// without index evaluates to the data's offset in the record (C: an
    /// address in the reader's memory); plugin functions evaluate to 0.
    pub fn eval_num_arg(&self, id: ArgId) -> u64 {
        let endian = self.ctx.endian;
        match self.node(id) {
            PrintArg::Null => 0,
            PrintArg::Atom(a) => {
                // (the value of an atom never changes: computed once)
                let value = || {
                    let v = strtoull(a);
                    if v != 0 || a.as_bytes().first().is_some_and(|c| c.is_ascii_digit()) {
                        return v;
                    }
                    // test_for_symbol: a function name stands for its address
                    self.ctx
                        .symbols
                        .iter()
                        .find(|s| s.name == *a)
                        .map_or(0, |s| s.addr)
                };
                match self.atom_cache.get(id as usize) {
                    Some(c) => *c.get_or_init(value),
                    None => value(),
                }
            }
            PrintArg::Field { field: Some(r), .. } => self.read_field(self.field(*r), endian),
            PrintArg::Field { field: None, .. } => 0,
            PrintArg::Type { ty, item } => {
                let v = self.eval_num_arg(*item);
                match self.casts.get(id as usize) {
                    Some(&(m, _)) => v & m,
                    None => eval_type_str(v, ty, false),
                }
            }
            PrintArg::DynamicArrayLen { field } => {
                dynamic_offset_field(self.field(*field), self.rec, endian).1 as u64
            }
            PrintArg::DynamicArray { field } => {
                let o = dynamic_offset_field(self.field(*field), self.rec, endian).0;
                // (C: the address of the data, or of the record when the
                // offset is past it)
                if o as usize > self.rec.size {
                    0
                } else {
                    o as u64
                }
            }
            PrintArg::Op {
                op, left, right, ..
            } => self.eval_op(op, *left, *right),
            PrintArg::BArg(i) => match self.bargs.get(*i as usize) {
                Some(BArg::Num(v)) => *v,
                _ => 0,
            },
            PrintArg::Func { name, args } => {
                // (printed into a scratch buffer that is dropped)
                let mut scratch = Vec::new();
                self.call_func(&mut scratch, name, args)
            }
            _ => 0,
        }
    }

    /// `process_defined_func`: a helper function registered by a plugin,
    /// printing into `out`; returns its value.
    pub fn call_func(&self, out: &mut Vec<u8>, name: &str, args: &[ArgId]) -> u64 {
        let mut vals = [0u64; 4];
        let mut ptrs: [Option<usize>; 4] = [None; 4];
        for (k, &a) in args.iter().enumerate().take(4) {
            vals[k] = self.eval_num_arg(a);
            // a pointer into the record (possibly cast to another pointer)
            let mut b = a;
            while let PrintArg::Type { ty, item } = self.node(b) {
                if !ty.ends_with('*') {
                    break;
                }
                b = *item;
            }
            if let PrintArg::DynamicArray { .. } = self.node(b) {
                ptrs[k] = Some(vals[k] as usize);
            }
        }
        crate::printfmt::plugins::call_print_function(out, name, &vals, &ptrs, self.rec.data)
    }

    fn eval_opt(&self, id: Option<ArgId>) -> u64 {
        id.map_or(0, |i| self.eval_num_arg(i))
    }

    fn eval_op(&self, op: &str, left: Option<ArgId>, right: Option<ArgId>) -> u64 {
        let endian = self.ctx.endian;
        if op == "[" {
            let r = self.eval_opt(right);
            let Some(mut larg) = left else { return 0 };
            let mut typearg = None;
            while let PrintArg::Type { item, .. } = self.node(larg) {
                if typearg.is_none() {
                    typearg = Some(larg);
                }
                larg = *item;
            }
            let mut field_size = self.long_size as u64;
            let offset: u64 = match self.node(larg) {
                PrintArg::DynamicArray { field } => {
                    let f = self.field(*field);
                    let (o, _) = dynamic_offset_field(f, self.rec, endian);
                    if f.elem_size != 0 {
                        field_size = f.elem_size as u64;
                    }
                    (o as u64).wrapping_add(r) & 0xffff_ffff
                }
                PrintArg::Field {
                    field: Some(fr), ..
                } => {
                    let f = self.field(*fr);
                    field_size = f.elem_size as u64;
                    (f.offset as u64).wrapping_add(r.wrapping_mul(f.elem_size as u64)) & 0xffff_ffff
                }
                PrintArg::Field { field: None, .. } => return 0,
                // "[" is no arithmetic operator: unknown op
                _ => return 0,
            };
            if offset + field_size > self.rec.size as u64 {
                return 0;
            }
            let mut v = read_number(endian, self.rec.data, offset as usize, field_size as usize);
            if let Some(t) = typearg {
                if let PrintArg::Type { ty, .. } = self.node(t) {
                    v = match self.casts.get(t as usize) {
                        Some(&(_, m)) => v & m,
                        None => eval_type_str(v, ty, true),
                    };
                }
            }
            return v;
        }
        if op == "?" {
            let l = self.eval_opt(left);
            let Some(r) = right else { return 0 };
            let (a, b) = match self.node(r) {
                PrintArg::Op { left, right, .. } => (*left, *right),
                _ => return 0,
            };
            return if l != 0 {
                self.eval_opt(a)
            } else {
                self.eval_opt(b)
            };
        }
        let l = self.eval_opt(left);
        let r = self.eval_opt(right);
        let b = op.as_bytes();
        let second = b.get(1).copied().unwrap_or(0);
        match b.first().copied().unwrap_or(0) {
            b'!' => match second {
                0 => (r == 0) as u64,
                b'=' => (l != r) as u64,
                _ => 0,
            },
            b'~' => !r,
            b'|' => {
                if second != 0 {
                    (l != 0 || r != 0) as u64
                } else {
                    l | r
                }
            }
            b'&' => {
                if second != 0 {
                    (l != 0 && r != 0) as u64
                } else {
                    l & r
                }
            }
            b'<' => match second {
                0 => (l < r) as u64,
                b'<' => l.wrapping_shl(r as u32),
                b'=' => (l <= r) as u64,
                _ => 0,
            },
            b'>' => match second {
                0 => (l > r) as u64,
                b'>' => l.wrapping_shr(r as u32),
                b'=' => (l >= r) as u64,
                _ => 0,
            },
            b'=' if second == b'=' => (l == r) as u64,
            b'-' => l.wrapping_sub(r),
            b'+' => l.wrapping_add(r),
            b'/' => l.checked_div(r).unwrap_or(0),
            b'%' => l.checked_rem(r).unwrap_or(0),
            b'*' => l.wrapping_mul(r),
            _ => 0,
        }
    }

    /// `print_arg_number`: an integer conversion of `arg`.
    pub fn print_number(&self, out: &mut Vec<u8>, conv: Conv<'_>, arg: ArgId) {
        let Conv {
            spec,
            text,
            star,
            ls,
        } = conv;
        let val = self.eval_num_arg(arg);
        let bits = match ls {
            -2 => 8,
            -1 => 16,
            0 => 32,
            1 | 2 => 64,
            // "bad count": nothing is printed
            _ => return,
        };
        match spec {
            Some(sp) => fmt_int(out, sp, star, val, bits),
            None => out.extend_from_slice(text.as_bytes()),
        }
    }

    /// `print_arg_pointer`: `%p` and its extensions; `ext` is what follows
    /// the `p` in the conversion.
    pub fn print_pointer(&self, out: &mut Vec<u8>, ext: &[u8], plen: i32, arg: ArgId) {
        if let PrintArg::BArg(i) = self.node(arg) {
            if let Some(b @ BArg::Str(..)) = self.bargs.get(*i as usize) {
                out.extend_from_slice(b.bytes(self.rec.data));
                return;
            }
        }
        match ext.first().copied().unwrap_or(0) {
            c @ (b'F' | b'f' | b'S' | b's') => {
                let val = self.eval_num_arg(arg);
                match self.ctx.symbols.find_func(val) {
                    Some(sym) => {
                        out.extend_from_slice(sym.name.as_bytes());
                        if c == b'F' || c == b'S' {
                            out.extend_from_slice(b"+0x");
                            put_hex(out, val.wrapping_sub(sym.addr));
                        }
                    }
                    None => {
                        out.extend_from_slice(b"0x");
                        put_hex(out, val);
                    }
                }
            }
            b'M' | b'm' => self.print_mac(out, ext, arg),
            b'I' | b'i' => self.print_ip(out, ext, arg),
            b'U' => self.print_uuid(out, ext, arg),
            b'h' => self.print_raw_buff(out, ext, plen, arg),
            _ => {
                // glibc's "%p"
                let val = self.eval_num_arg(arg);
                if val == 0 {
                    out.extend_from_slice(b"(nil)");
                } else {
                    out.extend_from_slice(b"0x");
                    put_hex(out, val);
                }
            }
        }
    }

    /// The field behind the casts of a `%pM`-style argument, or the error
    /// text libtraceevent prints.
    fn pointer_field(&self, out: &mut Vec<u8>, arg: ArgId) -> Option<&FieldDef> {
        if let PrintArg::Func { name, args } = self.node(arg) {
            // a plugin function prints its own output
            self.call_func(out, name, args);
            return None;
        }
        let a = self.strip_types(arg);
        match self.node(a) {
            PrintArg::Field { field, .. } => field.map(|r| self.field(r)),
            other => {
                out.extend_from_slice(b"ARG TYPE NOT FIELD BUT ");
                put_u64(out, self.c_type(other) as u64);
                None
            }
        }
    }

    /// The `N` bytes of the field behind a `%pM`-style argument; `None`
    /// after the error text (`invalid` when the field is not `N` bytes).
    fn pointer_bytes<const N: usize>(
        &self,
        out: &mut Vec<u8>,
        arg: ArgId,
        invalid: &[u8],
    ) -> Option<[u8; N]> {
        let f = self.pointer_field(out, arg)?;
        if f.size as usize != N {
            out.extend_from_slice(invalid);
            return None;
        }
        let mut b = [0u8; N];
        copy_bytes(&mut b, self.rec.data, f.offset as usize);
        Some(b)
    }

    /// libtraceevent's type number of a node (a bprint string is a BSTRING).
    fn c_type(&self, a: &PrintArg) -> u32 {
        match a {
            PrintArg::BArg(i) => match self.bargs.get(*i as usize) {
                Some(BArg::Str(..)) => 9,
                _ => 1,
            },
            other => other.c_type(),
        }
    }

    fn print_mac(&self, out: &mut Vec<u8>, ext: &[u8], arg: ArgId) {
        let Some(mut b) = self.pointer_bytes::<6>(out, arg, b"INVALIDMAC") else {
            return;
        };
        let sep: &[u8] = if ext[0] == b'm' {
            b""
        } else if ext.get(1) == Some(&b'F') {
            b"-"
        } else {
            b":"
        };
        if ext.get(1) == Some(&b'R') {
            b.reverse();
        }
        for (i, &x) in b.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(sep);
            }
            put_hex2(out, x);
        }
    }

    fn print_ip(&self, out: &mut Vec<u8>, ext: &[u8], arg: ArgId) {
        let i = ext[0];
        let rest = &ext[1.min(ext.len())..];
        let at = |k: usize| rest.get(k).copied().unwrap_or(0);
        let reverse_of = |p: u8| match p {
            b'h' => self.ctx.endian == Endian::Little,
            b'l' => true,
            _ => false,
        };
        match at(0) {
            b'4' => {
                let reverse = reverse_of(at(1));
                let Some(b) = self.pointer_bytes(out, arg, b"INVALIDIPv4") else {
                    return;
                };
                print_ip4(out, i, reverse, &b);
            }
            b'6' => {
                let have_c = i == b'I' && at(1) == b'c';
                let Some(b) = self.pointer_bytes(out, arg, b"INVALIDIPv6") else {
                    return;
                };
                if have_c {
                    print_ip6c(out, &b);
                } else {
                    print_ip6(out, i, &b);
                }
            }
            b'S' => {
                let mut k = 1;
                let (mut have_p, mut have_c) = (false, false);
                if i == b'I' {
                    if at(k) == b'p' {
                        have_p = true;
                        k += 1;
                    }
                    if at(k) == b'c' {
                        have_c = true;
                        k += 1;
                    }
                }
                let reverse = reverse_of(at(k));
                if let PrintArg::Func { name, args } = self.node(arg) {
                    self.call_func(out, name, args);
                    return;
                }
                let a = self.strip_types(arg);
                let (offset, len) = match self.node(a) {
                    PrintArg::Field { field: Some(r), .. } => {
                        let f = self.field(*r);
                        (f.offset, f.size)
                    }
                    PrintArg::Field { field: None, .. } => return,
                    PrintArg::DynamicArray { field } => {
                        dynamic_offset_field(self.field(*field), self.rec, self.ctx.endian)
                    }
                    other => {
                        out.extend_from_slice(b"ARG NOT FIELD NOR DYNAMIC ARRAY BUT TYPE ");
                        put_u64(out, self.c_type(other) as u64);
                        return;
                    }
                };
                let mut sa = [0u8; 28];
                copy_bytes(&mut sa, self.rec.data, offset as usize);
                // sa_family in the reader's (x86: little-endian) order
                match u16::from_le_bytes([sa[0], sa[1]]) {
                    2 => {
                        if len < 16 {
                            out.extend_from_slice(b"INVALIDIPv4");
                            return;
                        }
                        print_ip4(out, i, reverse, &[sa[4], sa[5], sa[6], sa[7]]);
                        if have_p {
                            out.push(b':');
                            put_u64(out, u16::from_be_bytes([sa[2], sa[3]]) as u64);
                        }
                    }
                    10 => {
                        if len < 28 {
                            out.extend_from_slice(b"INVALIDIPv6");
                            return;
                        }
                        if have_p {
                            out.push(b'[');
                        }
                        let mut a6 = [0u8; 16];
                        a6.copy_from_slice(&sa[8..24]);
                        if have_c {
                            print_ip6c(out, &a6);
                        } else {
                            print_ip6(out, i, &a6);
                        }
                        if have_p {
                            out.extend_from_slice(b"]:");
                            put_u64(out, u16::from_be_bytes([sa[2], sa[3]]) as u64);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn print_uuid(&self, out: &mut Vec<u8>, ext: &[u8], arg: ArgId) {
        const GUID: [usize; 16] = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15];
        let (upper, guid) = match ext.get(1) {
            Some(b'L') => (true, true),
            Some(b'l') => (false, true),
            Some(b'B') => (true, false),
            _ => (false, false),
        };
        let Some(b) = self.pointer_bytes::<16>(out, arg, b"INVALIDUUID") else {
            return;
        };
        for i in 0..16 {
            let x = b[if guid { GUID[i] } else { i }];
            if upper {
                out.extend_from_slice(format_upper_hex2(x).as_slice());
            } else {
                put_hex2(out, x);
            }
            if matches!(i, 3 | 5 | 7 | 9) {
                out.push(b'-');
            }
        }
    }

    fn print_raw_buff(&self, out: &mut Vec<u8>, ext: &[u8], plen: i32, arg: ArgId) {
        let delim: &[u8] = match ext.get(1) {
            Some(b'C') => b":",
            Some(b'D') => b"-",
            Some(b'N') => b"",
            _ => b" ",
        };
        let field = match self.node(arg) {
            PrintArg::DynamicArray { field } => *field,
            PrintArg::Func { name, args } => {
                self.call_func(out, name, args);
                return;
            }
            other => {
                out.extend_from_slice(b"ARG TYPE NOT FIELD BUT ");
                put_u64(out, self.c_type(other) as u64);
                return;
            }
        };
        let (offset, arr_len) = dynamic_offset_field(self.field(field), self.rec, self.ctx.endian);
        // (C compares an int with an unsigned int)
        let mut n = plen as u32;
        if arr_len < n {
            n = arr_len;
        }
        if (n as i32) < 1 {
            return;
        }
        for k in 0..n as usize {
            if k > 0 {
                out.extend_from_slice(delim);
            }
            put_hex2(
                out,
                self.rec.data.get(offset as usize + k).copied().unwrap_or(0),
            );
        }
    }

    /// `print_arg_string`: `print_str_arg` into a helper buffer, of which
    /// only the part before its first NUL is kept.
    pub fn print_string(
        &self,
        out: &mut Vec<u8>,
        spec: Option<&Spec>,
        star: Option<i32>,
        arg: ArgId,
    ) {
        let start = out.len();
        self.print_str_arg(out, spec, star, arg);
        if let Some(p) = out[start..].iter().position(|&b| b == 0) {
            out.truncate(start + p);
        }
    }

    /// `print_str_arg`: what a `%s` conversion prints for each kind of
    /// argument.
    pub fn print_str_arg(
        &self,
        out: &mut Vec<u8>,
        spec: Option<&Spec>,
        star: Option<i32>,
        arg: ArgId,
    ) {
        // print_str_to_seq: the string as a C string, through the conversion
        let put = |out: &mut Vec<u8>, s: &[u8]| {
            let s = &s[..s.iter().position(|&b| b == 0).unwrap_or(s.len())];
            match spec {
                Some(sp) => fmt_str(out, sp, star, s),
                None => out.extend_from_slice(s),
            }
        };
        let endian = self.ctx.endian;
        match self.node(arg) {
            PrintArg::Null => {}
            PrintArg::Atom(a) => put(out, a.as_bytes()),
            PrintArg::BArg(i) => match self.bargs.get(*i as usize) {
                Some(b @ BArg::Str(..)) => put(out, b.bytes(self.rec.data)),
                Some(BArg::Num(v)) => {
                    // the ATOM holds "%lld" of the value
                    let mut b = Vec::with_capacity(20);
                    super::printf::put_i64(&mut b, *v as i64);
                    put(out, &b);
                }
                None => {}
            },
            PrintArg::Field { field: Some(r), .. } => {
                let f = self.field(*r);
                let off = f.offset as usize;
                if !f.flags.has(FieldFlags::ARRAY) && f.size == self.long_size {
                    // a pointer: a trace_printk() format string, or the
                    // address in hex (read in the reader's byte order)
                    let mut b = [0u8; 8];
                    let n = if self.long_size == 8 { 8 } else { 4 };
                    copy_bytes(&mut b[..n], self.rec.data, off);
                    let addr = u64::from_le_bytes(b);
                    match printk_text(self.ctx.printk, addr) {
                        Some(s) => out.extend_from_slice(s.as_bytes()),
                        None => put_hex(out, addr),
                    }
                    return;
                }
                // zero-sized fields mean the rest of the record
                let len = if f.size != 0 {
                    f.size as usize
                } else if self.rec.size >= off {
                    self.rec.size - off
                } else {
                    // (C: a failed allocation, nothing printed)
                    return;
                };
                let s = self
                    .rec
                    .data
                    .get(off..)
                    .map_or(&[][..], |d| &d[..len.min(d.len())]);
                put(out, s);
            }
            PrintArg::Field { field: None, .. } => {}
            PrintArg::Flags {
                field,
                delim,
                flags,
            } => {
                let mut val = field.map_or(0, |f| self.eval_num_arg(f)) as i64;
                let mut printed = false;
                for fl in flags {
                    let fval = eval_flag(&fl.value);
                    if val == 0 && fval < 0 {
                        put(out, fl.str.as_bytes());
                        break;
                    }
                    if fval > 0 && (val & fval) == fval {
                        if printed {
                            if let Some(d) = delim {
                                out.extend_from_slice(d.as_bytes());
                            }
                        }
                        put(out, fl.str.as_bytes());
                        printed = true;
                        val &= !fval;
                    }
                }
                if val != 0 {
                    if printed {
                        if let Some(d) = delim {
                            out.extend_from_slice(d.as_bytes());
                        }
                    }
                    out.extend_from_slice(b"0x");
                    put_hex(out, val as u64);
                }
            }
            PrintArg::Symbol { field, symbols } => {
                let val = field.map_or(0, |f| self.eval_num_arg(f)) as i64;
                match symbols.iter().find(|f| eval_flag(&f.value) == val) {
                    Some(f) => put(out, f.str.as_bytes()),
                    None => {
                        out.extend_from_slice(b"0x");
                        put_hex(out, val as u64);
                    }
                }
            }
            PrintArg::Hex { field, size } | PrintArg::HexStr { field, size } => {
                let spaced = matches!(self.node(arg), PrintArg::Hex { .. });
                let Some(off) = self.array_start(*field) else {
                    return;
                };
                let len = self.eval_num_arg(*size) as u32 as usize;
                let avail = self.rec.data.len().saturating_sub(off);
                for i in 0..len.min(avail) {
                    if i > 0 && spaced {
                        out.push(b' ');
                    }
                    put_hex2(out, self.rec.data[off + i]);
                }
            }
            PrintArg::IntArray {
                field,
                count,
                el_size,
            } => {
                let Some(mut off) = self.array_start(*field) else {
                    return;
                };
                let len = self.eval_num_arg(*count) as u32;
                let mut es = self.eval_num_arg(*el_size) as i32;
                for i in 0..len {
                    if off >= self.rec.data.len() {
                        break;
                    }
                    if i > 0 {
                        out.push(b' ');
                    }
                    // read in the reader's (little-endian) byte order
                    let mut b = [0u8; 8];
                    match es {
                        1 | 2 | 4 | 8 => {
                            copy_bytes(&mut b[..es as usize], self.rec.data, off);
                            put_u64(out, u64::from_le_bytes(b));
                        }
                        _ => {
                            out.extend_from_slice(b"BAD SIZE:");
                            super::printf::put_i64(out, es as i64);
                            out.extend_from_slice(b" 0x");
                            put_hex(out, self.rec.data[off] as u64);
                            es = 1;
                        }
                    }
                    off += es as usize;
                }
            }
            PrintArg::Type { .. } => {}
            PrintArg::Str { .. } => {
                let Some(r) = self.named.get(arg as usize).copied().flatten() else {
                    return;
                };
                let (off, len) = dynamic_offset_field(self.field(r), self.rec, endian);
                if len == 0 {
                    return;
                }
                put(out, self.rec.data.get(off as usize..).unwrap_or(&[]));
            }
            PrintArg::Bitmask { .. } | PrintArg::Cpumask { .. } => {
                let Some(r) = self.named.get(arg as usize).copied().flatten() else {
                    return;
                };
                let (off, len) = dynamic_offset_field(self.field(r), self.rec, endian);
                let mut bytes = [0u8; 512];
                let n = (len as usize).min(bytes.len());
                copy_bytes(&mut bytes[..n], self.rec.data, off as usize);
                let big = endian == Endian::Big;
                let bitmask = matches!(self.node(arg), PrintArg::Bitmask { .. });
                let text = |o: &mut Vec<u8>| {
                    if bitmask {
                        bitmask_text(o, &bytes[..n], big);
                    } else {
                        cpumask_text(o, &bytes[..n], big);
                    }
                };
                if spec.is_none_or(|s| s.is_plain()) {
                    // (no NUL in the text: straight into the output)
                    text(out);
                } else {
                    let mut t = Vec::new();
                    text(&mut t);
                    put(out, &t);
                }
            }
            PrintArg::Op {
                op, left, right, ..
            } => {
                if !op.starts_with('?') {
                    return;
                }
                let val = left.map_or(0, |l| self.eval_num_arg(l));
                let Some(r) = right else { return };
                if let PrintArg::Op {
                    left: a, right: b, ..
                } = self.node(*r)
                {
                    let pick = if val != 0 { *a } else { *b };
                    if let Some(p) = pick {
                        self.print_str_arg(out, spec, star, p);
                    }
                }
            }
            PrintArg::Func { name, args } => {
                self.call_func(out, name, args);
            }
            PrintArg::DynamicArray { .. } | PrintArg::DynamicArrayLen { .. } => {}
        }
    }

    /// Where the data of a `__print_hex`/`__print_array` field starts.
    fn array_start(&self, field: ArgId) -> Option<usize> {
        match self.node(field) {
            PrintArg::DynamicArray { field } => {
                Some(dynamic_offset_field(self.field(*field), self.rec, self.ctx.endian).0 as usize)
            }
            PrintArg::Field { field: Some(r), .. } => Some(self.field(*r).offset as usize),
            _ => None,
        }
    }
}

/// libtraceevent's `eval_flag`: a flag value given as a number, or one of
/// the few names it knows (softirq vectors, hrtimer restart modes); -1
/// otherwise.
fn eval_flag(flag: &str) -> i64 {
    if flag.as_bytes().first().is_some_and(|c| c.is_ascii_digit()) {
        return strtoull(flag) as i64;
    }
    const NAMES: &[(&str, i64)] = &[
        ("HI_SOFTIRQ", 0),
        ("TIMER_SOFTIRQ", 1),
        ("NET_TX_SOFTIRQ", 2),
        ("NET_RX_SOFTIRQ", 3),
        ("BLOCK_SOFTIRQ", 4),
        ("IRQ_POLL_SOFTIRQ", 5),
        ("TASKLET_SOFTIRQ", 6),
        ("SCHED_SOFTIRQ", 7),
        ("HRTIMER_SOFTIRQ", 8),
        ("RCU_SOFTIRQ", 9),
        ("HRTIMER_NORESTART", 0),
        ("HRTIMER_RESTART", 1),
    ];
    NAMES
        .iter()
        .find(|(n, _)| *n == flag)
        .map_or(-1, |&(_, v)| v)
}

/// The text of a printk format as libtraceevent registers it: the stored
/// format without its trailing `\n` escape.
pub fn printk_text(table: &tracemux_core::tables::PrintkTable, addr: u64) -> Option<&str> {
    table.get(addr).map(|s| s.strip_suffix("\\n").unwrap_or(s))
}

/// `print_bitmask_to_seq`'s text: the bytes as hex, most significant
/// first, with a comma every 4 bytes.
pub(crate) fn bitmask_text(out: &mut Vec<u8>, data: &[u8], big: bool) {
    let size = data.len();
    let nr_bits = (size * 8) as i64;
    let mut str_size = (nr_bits + 3) / 4;
    str_size += (nr_bits - 1) / 32;
    let str_size = str_size.max(0) as usize;
    let mut s = vec![0u8; str_size];
    let mut len = 0usize;
    let mut i = str_size as i64 - 2;
    while i >= 0 {
        let index = if big { size - (len + 1) } else { len };
        let b = data.get(index).copied().unwrap_or(0);
        let mut h = Vec::with_capacity(2);
        put_hex2(&mut h, b);
        s[i as usize] = h[0];
        s[i as usize + 1] = h[1];
        len += 1;
        if len & 3 == 0 && i > 0 {
            i -= 1;
            s[i as usize] = b',';
        }
        i -= 2;
    }
    out.extend_from_slice(&s);
}

/// `print_cpumask_to_seq`'s text: ranges of set bits (`0-3,8`).
pub(crate) fn cpumask_text(out: &mut Vec<u8>, data: &[u8], big: bool) {
    let size = data.len();
    let nr_bits = (size * 8) as i64;
    let (mut firstone, mut firstzero): (i64, i64) = (-1, -1);
    let mut first = true;
    let ffs = |v: u32| v.trailing_zeros() as i64;
    for i in 0..size {
        let index = if big { size - (i + 1) } else { i };
        let mut byte = data[index] as u32;
        loop {
            if firstone < 0 && byte != 0 {
                let b = ffs(byte);
                byte |= (1u32 << b) - 1;
                firstone = b + (i as i64) * 8;
            }
            if firstone < 0 {
                break;
            }
            if (!byte) & 0xff != 0 {
                let z = ffs(!byte & 0xff);
                byte &= !((1u32 << z) - 1);
                firstzero = z + (i as i64) * 8;
            } else if i == size - 1 {
                firstzero = nr_bits;
                byte = 0;
            } else {
                break;
            }
            if !first {
                out.push(b',');
            }
            first = false;
            super::printf::put_i64(out, firstone);
            if firstzero > firstone + 1 {
                out.push(b'-');
                super::printf::put_i64(out, firstzero - 1);
            }
            firstzero = -1;
            firstone = -1;
            if byte & 0xff == 0 {
                break;
            }
        }
    }
    let _ = firstzero;
}

fn format_upper_hex2(b: u8) -> [u8; 2] {
    const H: &[u8; 16] = b"0123456789ABCDEF";
    [H[(b >> 4) as usize], H[(b & 15) as usize]]
}

/// Copy what the record has at `off` into `dst` (zeros past its end).
fn copy_bytes(dst: &mut [u8], data: &[u8], off: usize) {
    if let Some(src) = data.get(off..) {
        let n = dst.len().min(src.len());
        dst[..n].copy_from_slice(&src[..n]);
    }
}

fn print_ip4(out: &mut Vec<u8>, i: u8, reverse: bool, b: &[u8; 4]) {
    for k in 0..4 {
        if k > 0 {
            out.push(b'.');
        }
        let x = if reverse { b[3 - k] } else { b[k] };
        if i == b'i' {
            out.push(b'0' + x / 100);
            out.push(b'0' + x / 10 % 10);
            out.push(b'0' + x % 10);
        } else {
            put_u64(out, x as u64);
        }
    }
}

fn print_ip6(out: &mut Vec<u8>, i: u8, b: &[u8; 16]) {
    for j in (0..16).step_by(2) {
        put_hex2(out, b[j]);
        put_hex2(out, b[j + 1]);
        if i == b'I' && j < 14 {
            out.push(b':');
        }
    }
}

fn print_ip6c(out: &mut Vec<u8>, a: &[u8; 16]) {
    let word = |k: usize| u16::from_be_bytes([a[2 * k], a[2 * k + 1]]);
    let v4mapped = a[..8].iter().all(|&x| x == 0) && a[8..12] == [0, 0, 0xff, 0xff];
    let isatap = [a[8] | 0x02, a[9], a[10], a[11]] == [0x02, 0x00, 0x5e, 0xfe];
    let use_ipv4 = v4mapped || isatap;
    let range = if use_ipv4 { 6 } else { 8 };
    let mut zerolength = [0u8; 8];
    for (i, z) in zerolength.iter_mut().enumerate().take(range) {
        for j in i..range {
            if word(j) != 0 {
                break;
            }
            *z += 1;
        }
    }
    let mut longest = 1;
    let mut colonpos: isize = -1;
    for (i, &z) in zerolength.iter().enumerate().take(range) {
        if z > longest {
            longest = z;
            colonpos = i as isize;
        }
    }
    if longest == 1 {
        colonpos = -1;
    }
    let mut needcolon = false;
    let mut i = 0usize;
    while i < range {
        if i as isize == colonpos {
            if needcolon || i == 0 {
                out.push(b':');
            }
            out.push(b':');
            needcolon = false;
            i += longest as usize;
            continue;
        }
        if needcolon {
            out.push(b':');
        }
        let w = word(i);
        let (hi, lo) = ((w >> 8) as u8, (w & 0xff) as u8);
        if hi != 0 {
            put_hex(out, hi as u64);
            put_hex2(out, lo);
        } else {
            put_hex(out, lo as u64);
        }
        needcolon = true;
        i += 1;
    }
    if use_ipv4 {
        if needcolon {
            out.push(b':');
        }
        print_ip4(out, b'I', false, &[a[12], a[13], a[14], a[15]]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts() {
        assert_eq!(eval_type_str(0x1_2345_6789, "int", false), 0x2345_6789);
        assert_eq!(eval_type_str(u64::MAX, "s8", false), 0xff);
        assert_eq!(eval_type_str(u64::MAX, "unsigned short", false), 0xffff);
        assert_eq!(eval_type_str(u64::MAX, "long", false), u64::MAX);
        assert_eq!(eval_type_str(u64::MAX, "void *", false), u64::MAX);
        assert_eq!(eval_type_str(u64::MAX, "pid_t", false), u64::MAX);
        assert_eq!(eval_type_str(u64::MAX, "u8 *", true), 0xff);
        assert_eq!(eval_type_str(u64::MAX, "u8", true), u64::MAX);
    }

    #[test]
    fn ipv6_compressed() {
        let mut o = Vec::new();
        let a = std::net::Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1).octets();
        print_ip6c(&mut o, &a);
        assert_eq!(o, b"2001:db8::1");
        o.clear();
        let mut m = [0u8; 16];
        m[10] = 0xff;
        m[11] = 0xff;
        m[12..].copy_from_slice(&[10, 0, 0, 1]);
        print_ip6c(&mut o, &m);
        assert_eq!(o, b"::ffff:10.0.0.1");
    }
}
