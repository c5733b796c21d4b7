//! Argument and return-value specs (`-A fib@arg1/x`, `-R f@retval/s`,
//! auto-args tables, `.dbg` specs), enum definitions, and the per-session
//! filter table that maps a function address to its triggers and specs.
//!
//! The record decoder needs this table: the argument blob that follows a
//! record with `more = 1` has no length of its own, its layout is given by
//! the spec list of the function (in list order, each value aligned to 4
//! bytes, the whole blob padded to 8).

use std::collections::{BTreeMap, HashMap};

use crate::enums::EnumDefs;
use crate::pattern::Pattern;

/// Index of the return value in a spec list.
pub const RETVAL_IDX: i32 = 0;

/// How a value is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgFmt {
    Auto,
    Sint,
    Uint,
    Hex,
    /// `o` (uftrace 0.16+): octal.
    Oct,
    Str,
    Char,
    Float,
    StdString,
    Ptr,
    Enum,
    Struct,
}

impl ArgFmt {
    /// The printf conversion character uftrace uses (`"diuxoscfSpet"`).
    pub fn spec_char(self) -> u8 {
        b"diuxoscfSpet"[self as usize]
    }
}

/// Where the value was taken from (only used to merge specs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgLoc {
    Index,
    Float,
    Reg(i16),
    Stack(i16),
}

/// One argument or return value spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgSpec {
    /// 1-based argument index, or [`RETVAL_IDX`].
    pub idx: i32,
    pub fmt: ArgFmt,
    /// Size in bytes of the stored value (strings: the length prefix follows).
    pub size: u32,
    pub loc: ArgLoc,
    /// Enum or struct type name.
    pub type_name: Option<Box<str>>,
    /// Set by an exact-name pattern (wins over regex-matched specs).
    pub exact: bool,
}

impl ArgSpec {
    pub fn is_retval(&self) -> bool {
        self.idx == RETVAL_IDX
    }
    fn same_slot(&self, o: &ArgSpec) -> bool {
        match (self.loc, o.loc) {
            (ArgLoc::Index, ArgLoc::Index) | (ArgLoc::Float, ArgLoc::Float) => self.idx == o.idx,
            (ArgLoc::Reg(a), ArgLoc::Reg(b)) => a == b,
            (ArgLoc::Stack(a), ArgLoc::Stack(b)) => a == b,
            _ => false,
        }
    }
}

fn leading_int(s: &str) -> (i64, &str) {
    let b = s.as_bytes();
    let mut i = 0;
    let neg = b.first() == Some(&b'-');
    if neg || b.first() == Some(&b'+') {
        i = 1;
    }
    let st = i;
    let mut v: i64 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        v = v.saturating_mul(10).saturating_add((b[i] - b'0') as i64);
        i += 1;
    }
    if i == st {
        return (0, s);
    }
    (if neg { -v } else { v }, &s[i..])
}

/// x86-64 (and common) register names accepted after `%`.
fn register_number(name: &str) -> Option<i16> {
    const REGS: &[&str] = &[
        "rdi", "rsi", "rdx", "rcx", "r8", "r9", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
        "xmm6", "xmm7", "rax", "rbx", "rbp", "rsp", "r10", "r11", "r12", "r13", "r14", "r15",
    ];
    let l = name.to_ascii_lowercase();
    REGS.iter().position(|r| *r == l).map(|p| p as i16)
}

/// Parse one spec item (`arg2/x32`, `fparg1/80`, `retval/s`, `arg3/e:flags`,
/// `arg1/t16:mystruct`, `arg2%stack+1`). `lp64` selects the default size.
pub fn parse_argspec(s: &str, lp64: bool) -> Option<ArgSpec> {
    let mut fmt = ArgFmt::Auto;
    let mut size: u32 = if lp64 { 8 } else { 4 };
    let mut loc = ArgLoc::Index;
    let idx: i32;
    let mut suffix: &str;
    let b = s.as_bytes();
    if s.starts_with("arg") && b.get(3).is_some_and(|c| c.is_ascii_digit()) {
        let (v, r) = leading_int(&s[3..]);
        idx = v as i32;
        suffix = r;
    } else if let Some(r) = s.strip_prefix("retval") {
        idx = RETVAL_IDX;
        suffix = r;
    } else if s.starts_with("fparg") && b.get(5).is_some_and(|c| c.is_ascii_digit()) {
        let (v, r) = leading_int(&s[5..]);
        idx = v as i32;
        suffix = r;
        fmt = ArgFmt::Float;
        loc = ArgLoc::Float;
        size = 8;
    } else {
        return None;
    }
    let mut type_name = None;
    'parse: {
        if suffix.is_empty() {
            break 'parse;
        }
        if !suffix.starts_with('%') {
            suffix = suffix.strip_prefix('/')?;
            let c = suffix.as_bytes().first().copied().unwrap_or(0);
            let mut want_size = true;
            match c {
                b'd' => fmt = ArgFmt::Auto,
                b'i' => fmt = ArgFmt::Sint,
                b'u' => fmt = ArgFmt::Uint,
                b'x' => fmt = ArgFmt::Hex,
                b'o' => fmt = ArgFmt::Oct,
                b's' => fmt = ArgFmt::Str,
                b'c' => {
                    fmt = ArgFmt::Char;
                    size = 1;
                }
                b'f' => {
                    fmt = ArgFmt::Float;
                    loc = ArgLoc::Float;
                    size = 8;
                }
                b'S' => fmt = ArgFmt::StdString,
                b'p' => fmt = ArgFmt::Ptr,
                b'e' => {
                    fmt = ArgFmt::Enum;
                    let r = &suffix[1..];
                    let r = r.strip_prefix(':')?;
                    let first = r.as_bytes().first().copied().unwrap_or(0);
                    if !(first.is_ascii_alphabetic() || first == b'_') {
                        return None;
                    }
                    let end = r.find('%').unwrap_or(r.len());
                    type_name = Some(r[..end].into());
                    suffix = &r[end..];
                    want_size = false;
                }
                b't' => {
                    fmt = ArgFmt::Struct;
                    let (v, r) = leading_int(&suffix[1..]);
                    size = v.clamp(0, u16::MAX as i64) as u32;
                    suffix = r;
                    if let Some(r) = suffix.strip_prefix(':') {
                        let end = r.find('%').unwrap_or(r.len());
                        type_name = Some(r[..end].into());
                        suffix = &r[end..];
                    }
                    if let Some(regs) = suffix.strip_prefix('%') {
                        if !regs.starts_with("stack+") {
                            let mut last = None;
                            for reg in regs.split('+') {
                                if let Some(n) = register_number(reg) {
                                    last = Some(n);
                                }
                            }
                            if let Some(n) = last {
                                loc = ArgLoc::Reg(n);
                            }
                            break 'parse;
                        }
                    } else {
                        break 'parse;
                    }
                    want_size = false;
                }
                d if fmt == ArgFmt::Float && d.is_ascii_digit() => {
                    // fparg1/32: size directly
                    let (bits, r) = leading_int(suffix);
                    size = float_or_int_size(bits, true)?;
                    suffix = r;
                    want_size = false;
                }
                _ => return None,
            }
            if want_size {
                suffix = &suffix[1..];
                if suffix.is_empty() {
                    break 'parse;
                }
                if !suffix.starts_with('%') {
                    let (bits, r) = leading_int(suffix);
                    size = float_or_int_size(bits, fmt == ArgFmt::Float)?;
                    suffix = r;
                }
            }
        }
        if let Some(r) = suffix.strip_prefix('%') {
            if let Some(st) = r.strip_prefix("stack") {
                loc = ArgLoc::Stack(leading_int(st).0 as i16);
            } else {
                loc = ArgLoc::Reg(register_number(r)?);
            }
        } else if !suffix.is_empty() {
            return None;
        }
    }
    Some(ArgSpec {
        idx,
        fmt,
        size,
        loc,
        type_name,
        exact: false,
    })
}

fn float_or_int_size(bits: i64, float: bool) -> Option<u32> {
    match bits {
        8 | 16 | 32 | 64 => Some(bits as u32 / 8),
        80 if float => Some(10),
        _ => None,
    }
}

/// Trigger flags (uftrace's `TRIGGER_FL_*`).
pub mod trig {
    pub const DEPTH: u32 = 1 << 0;
    pub const FILTER: u32 = 1 << 1;
    pub const BACKTRACE: u32 = 1 << 2;
    pub const TRACE: u32 = 1 << 3;
    pub const TRACE_ON: u32 = 1 << 4;
    pub const TRACE_OFF: u32 = 1 << 5;
    pub const ARGUMENT: u32 = 1 << 6;
    pub const RECOVER: u32 = 1 << 7;
    pub const RETVAL: u32 = 1 << 8;
    pub const COLOR: u32 = 1 << 9;
    pub const TIME_FILTER: u32 = 1 << 10;
    pub const READ: u32 = 1 << 11;
    pub const FINISH: u32 = 1 << 13;
    pub const AUTO_ARGS: u32 = 1 << 14;
    pub const CALLER: u32 = 1 << 15;
    pub const SIGNAL: u32 = 1 << 16;
    pub const HIDE: u32 = 1 << 17;
    pub const LOC: u32 = 1 << 18;
    pub const SIZE_FILTER: u32 = 1 << 19;
}

/// Filter mode of a `-F` (in) or `-N` (out) trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FilterMode {
    #[default]
    None,
    In,
    Out,
}

/// A parsed trigger (the actions after `@`).
#[derive(Debug, Clone, Default)]
pub struct Trigger {
    pub flags: u32,
    pub depth: i32,
    pub fmode: FilterMode,
    pub time: u64,
    pub size: u64,
    pub color: u8,
    pub args: Vec<ArgSpec>,
}

impl Trigger {
    /// Merge `other` into this trigger (uftrace's `add_trigger`).
    pub fn add(&mut self, other: &Trigger, exact: bool) {
        self.flags |= other.flags;
        if other.flags & trig::DEPTH != 0 {
            self.depth = other.depth;
        }
        if other.flags & trig::FILTER != 0 {
            self.fmode = other.fmode;
        }
        if other.flags & trig::TRACE_ON != 0 {
            self.flags &= !trig::TRACE_OFF;
        }
        if other.flags & trig::TRACE_OFF != 0 {
            self.flags &= !trig::TRACE_ON;
        }
        if other.flags & (trig::ARGUMENT | trig::RETVAL) != 0 {
            for a in &other.args {
                add_arg_spec(&mut self.args, a, exact);
            }
        }
        if other.flags & trig::COLOR != 0 {
            self.color = other.color;
        }
        if other.flags & trig::TIME_FILTER != 0 {
            self.time = other.time;
        }
        if other.flags & trig::SIZE_FILTER != 0 {
            self.size = other.size;
        }
    }
}

fn add_arg_spec(list: &mut Vec<ArgSpec>, a: &ArgSpec, exact: bool) {
    if let Some(o) = list.iter_mut().find(|o| a.same_slot(o)) {
        if exact || !o.exact {
            let keep_idx = o.idx;
            *o = a.clone();
            o.idx = keep_idx;
            o.exact = exact;
        }
    } else {
        let mut n = a.clone();
        n.exact = exact;
        list.push(n);
    }
}

/// Parse a time like `10us`, `1.5ms`, `2s`, `100` (ns by default unless
/// `default_unit_exp` says otherwise: 0 = ns, 3 = us).
pub fn parse_time(s: &str, default_unit_exp: u32) -> u64 {
    let t = s.trim();
    let num_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(num_end);
    let (ip, fp) = num.split_once('.').unwrap_or((num, ""));
    let exp: u32 = match unit {
        "ns" | "nsec" => 0,
        "us" | "usec" => 3,
        "ms" | "msec" => 6,
        "s" | "sec" => 9,
        "m" | "min" => return (ip.parse::<u64>().unwrap_or(0)).saturating_mul(60_000_000_000),
        "" => default_unit_exp,
        _ => default_unit_exp,
    };
    let mut v: u64 = ip.parse().unwrap_or(0);
    let mut digits = fp.bytes();
    for _ in 0..exp {
        v = v.saturating_mul(10);
        if let Some(d) = digits.next() {
            if d.is_ascii_digit() {
                v = v.saturating_add((d - b'0') as u64);
            }
        }
    }
    v
}

/// An invalid action in a trigger item (the whole item is skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadAction;

/// Parse the actions after `@` of one trigger item into `tr`; `allowed`
/// restricts the action kinds as uftrace's `orig_flags` does (0 = any).
/// Returns the module name (a token that is no action) or `Err` when an
/// action is invalid (the whole item is then skipped).
pub fn parse_actions(
    actions: &str,
    tr: &mut Trigger,
    allowed: u32,
    lp64: bool,
) -> Result<Option<String>, BadAction> {
    let mut module = None;
    for act in actions.split(',').filter(|a| !a.is_empty()) {
        let lower = act.to_ascii_lowercase();
        let starts = |p: &str| lower.starts_with(p);
        let kind: Option<(u32, &str)> = [
            (trig::ARGUMENT, "arg"),
            (trig::ARGUMENT, "fparg"),
            (trig::RETVAL, "retval"),
            (trig::FILTER, "filter"),
            (trig::FILTER, "notrace"),
            (trig::FILTER, "depth="),
            (trig::FILTER, "time="),
            (trig::FILTER, "size="),
            (trig::FILTER, "caller"),
            (trig::FILTER, "hide"),
            (trig::SIGNAL, "trace"),
            (trig::SIGNAL, "finish"),
            (0, "read="),
            (0, "color="),
            (0, "backtrace"),
            (0, "recover"),
            (0, "auto-args"),
        ]
        .into_iter()
        .find(|(_, n)| starts(n));
        let Some((fl, name)) = kind else {
            if module.is_none() {
                module = Some(act.to_string());
            }
            continue;
        };
        if allowed != 0 && allowed & fl == 0 {
            continue;
        }
        match name {
            "arg" => {
                if !act.as_bytes().get(3).is_some_and(|c| c.is_ascii_digit()) {
                    return Err(BadAction);
                }
                tr.args.push(parse_argspec(act, lp64).ok_or(BadAction)?);
                tr.flags |= trig::ARGUMENT;
            }
            "fparg" => {
                if !act.as_bytes().get(5).is_some_and(|c| c.is_ascii_digit()) {
                    return Err(BadAction);
                }
                tr.args.push(parse_argspec(act, lp64).ok_or(BadAction)?);
                tr.flags |= trig::ARGUMENT;
            }
            "retval" => {
                tr.args.push(parse_argspec(act, lp64).ok_or(BadAction)?);
                tr.flags |= trig::RETVAL;
            }
            "filter" => {
                tr.flags |= trig::FILTER;
                tr.fmode = FilterMode::In;
            }
            "notrace" => {
                tr.flags |= trig::FILTER;
                tr.fmode = FilterMode::Out;
            }
            "depth=" => {
                let (d, _) = leading_int(&act[6..]);
                if !(0..=65535).contains(&d) {
                    return Err(BadAction);
                }
                tr.flags |= trig::DEPTH;
                tr.depth = d as i32;
            }
            "time=" => {
                tr.flags |= trig::TIME_FILTER;
                tr.time = parse_time(&act[5..], 3);
            }
            "size=" => {
                tr.flags |= trig::SIZE_FILTER;
                tr.size = leading_int(&act[5..]).0.max(0) as u64;
            }
            "caller" => tr.flags |= trig::CALLER,
            "hide" => tr.flags |= trig::HIDE,
            "trace" => {
                let mut r = &lower[5..];
                if r.starts_with('_') || r.starts_with('-') {
                    r = &r[1..];
                }
                match r {
                    "" => tr.flags |= trig::TRACE,
                    "on" => tr.flags |= trig::TRACE_ON,
                    "off" => tr.flags |= trig::TRACE_OFF,
                    _ => {}
                }
            }
            "finish" => tr.flags |= trig::FINISH,
            "read=" => {}
            "color=" => {
                tr.flags |= trig::COLOR;
            }
            "backtrace" => tr.flags |= trig::BACKTRACE,
            "recover" => tr.flags |= trig::RECOVER,
            "auto-args" => tr.flags |= trig::ARGUMENT | trig::RETVAL,
            _ => {}
        }
    }
    Ok(module)
}

/// One entry of a session's filter table: a function address range and
/// what applies to it.
#[derive(Debug, Clone)]
pub struct FilterEntry {
    pub start: u64,
    pub end: u64,
    pub name: Box<str>,
    pub trigger: Trigger,
}

/// Address-sorted filter entries of a session.
#[derive(Debug, Clone, Default)]
pub struct FilterTable {
    pub entries: Vec<FilterEntry>,
}

impl FilterTable {
    /// The entry whose range contains `addr`.
    #[inline]
    pub fn find(&self, addr: u64) -> Option<&FilterEntry> {
        let i = self.entries.partition_point(|e| e.start <= addr);
        let e = self.entries.get(i.checked_sub(1)?)?;
        (addr < e.end).then_some(e)
    }

    fn find_start_mut(&mut self, start: u64) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&start, |e| e.start)
    }
}

/// Auto-args table: spec per function name (from the `argauto`/`retauto`
/// info lines).
#[derive(Debug, Clone, Default)]
pub struct AutoArgs {
    pub args: BTreeMap<String, Trigger>,
    pub rets: BTreeMap<String, Trigger>,
    pub enums: EnumDefs,
}

impl AutoArgs {
    pub fn build(
        argauto: Option<&str>,
        retauto: Option<&str>,
        enums: Option<&str>,
        lp64: bool,
        mode: crate::Demangle,
    ) -> AutoArgs {
        let mut a = AutoArgs::default();
        if let Some(e) = enums {
            a.enums.parse(e);
        }
        for (src, flag, map) in [
            (argauto, trig::ARGUMENT, &mut a.args),
            (retauto, trig::RETVAL, &mut a.rets),
        ] {
            let Some(src) = src else { continue };
            for item in src.split(';') {
                let Some((name, acts)) = item.split_once('@') else {
                    continue;
                };
                let mut tr = Trigger::default();
                if parse_actions(acts, &mut tr, flag, lp64).is_err() {
                    continue;
                }
                let name = crate::demangle::demangle(name, mode);
                map.entry(name).or_default().add(&tr, true);
            }
        }
        a
    }
}

/// Settings for building filter tables.
pub struct FilterSetting<'a> {
    pub ptype: crate::PatternType,
    pub lp64: bool,
    pub auto_args: bool,
    pub auto: &'a AutoArgs,
    pub demangle: crate::Demangle,
}

/// What a module needs to offer for filter building.
pub struct ModuleView<'a> {
    pub map_start: u64,
    pub basename: &'a str,
    pub module: &'a crate::symbols::Module,
    pub is_exec: bool,
}

/// Add every item of a `;`-separated trigger string (`NAME@actions`) to
/// `table` for the symbols of `mods` (uftrace's `setup_trigger`).
/// `flags` are the base trigger flags (FILTER for `-F`, ARGUMENT for
/// argspecs...). Returns whether any filter (not argument) item matched
/// with mode IN/OUT, to update the global filter mode.
pub fn setup_trigger(
    spec: &str,
    mods: &[ModuleView<'_>],
    table: &mut FilterTable,
    flags: u32,
    setting: &FilterSetting<'_>,
) -> Vec<FilterMode> {
    let mut modes = Vec::new();
    for item in spec.split(';').filter(|s| !s.is_empty()) {
        let mut tr = Trigger {
            flags,
            ..Trigger::default()
        };
        let (mut name, acts) = match item.split_once('@') {
            Some((n, a)) => (n, Some(a)),
            None => (item, None),
        };
        let allowed = flags & !trig::AUTO_ARGS;
        let module = match acts {
            Some(a) => match parse_actions(a, &mut tr, allowed, setting.lp64) {
                Ok(m) => m,
                Err(BadAction) => continue,
            },
            None => None,
        };
        if flags & trig::FILTER != 0 {
            if let Some(n) = name.strip_prefix('!') {
                tr.fmode = FilterMode::Out;
                name = n;
            } else {
                tr.fmode = FilterMode::In;
            }
        }
        let dname = crate::demangle::demangle(name, setting.demangle);
        let patt = Pattern::new(setting.ptype, &dname);
        let mut count = 0;
        match module.as_deref() {
            Some(m) if m.eq_ignore_ascii_case("PLT") => {
                if let Some(mv) = mods.iter().find(|v| v.is_exec) {
                    count += add_entries(table, &patt, &tr, mv, true, setting);
                }
            }
            Some(m) if m.eq_ignore_ascii_case("kernel") || m == "K" => {}
            Some(m) => {
                if let Some(mv) = mods.iter().find(|v| v.basename.starts_with(m)) {
                    count += add_entries(table, &patt, &tr, mv, false, setting);
                }
            }
            None => {
                for mv in mods {
                    count += add_entries(table, &patt, &tr, mv, false, setting);
                }
            }
        }
        if count > 0 && tr.flags & trig::FILTER != 0 {
            modes.push(tr.fmode);
        }
    }
    modes
}

fn add_entries(
    table: &mut FilterTable,
    patt: &Pattern,
    tr: &Trigger,
    mv: &ModuleView<'_>,
    plt_only: bool,
    setting: &FilterSetting<'_>,
) -> usize {
    let mut n = 0;
    for sym in &mv.module.symbols {
        if !patt.matches(&sym.name) {
            continue;
        }
        if plt_only && !sym.is_plt() {
            continue;
        }
        n += add_filter(table, sym, tr, mv, patt.is_simple(), setting);
    }
    n
}

/// A spec string of a `.dbg` entry (`@arg1,arg2/p`) as a trigger.
fn dwarf_trigger(spec: &str, flag: u32, lp64: bool) -> Option<Trigger> {
    let acts = spec.split_once('@').map_or(spec, |(_, a)| a);
    let mut tr = Trigger::default();
    parse_actions(acts, &mut tr, flag, lp64).ok()?;
    if tr.args.is_empty() {
        return None;
    }
    Some(tr)
}

fn add_filter(
    table: &mut FilterTable,
    sym: &crate::symbols::Symbol,
    tr: &Trigger,
    mv: &ModuleView<'_>,
    exact: bool,
    setting: &FilterSetting<'_>,
) -> usize {
    let mut flags = tr.flags;
    let dbg = &mv.module.debug;
    // The automatic spec of `flag` (arguments or return value) when the
    // trigger asks for it without one: the debug info's, else the built-in
    // one; without either, the flag is dropped.
    let mut auto =
        |flag: u32, dwarf: &HashMap<u64, Option<String>>, builtin: &BTreeMap<String, Trigger>| {
            if flags & flag == 0 || !tr.args.is_empty() {
                return None;
            }
            let found = dbg
                .has_argspec()
                .then(|| dwarf.get(&sym.addr)?.as_deref())
                .flatten()
                .and_then(|s| dwarf_trigger(s, flag, setting.lp64))
                .or_else(|| builtin.get(&*sym.name).cloned());
            if found.is_none() {
                flags &= !flag;
            }
            found
        };
    let auto_arg = auto(trig::ARGUMENT, &dbg.args, &setting.auto.args);
    let auto_ret = auto(trig::RETVAL, &dbg.rets, &setting.auto.rets);
    if flags == trig::AUTO_ARGS {
        return 0;
    }
    let mut eff = tr.clone();
    eff.flags = flags;
    let start = sym.addr.wrapping_add(mv.map_start);
    let end = sym.addr.wrapping_add(sym.size).wrapping_add(mv.map_start);
    match table.find_start_mut(start) {
        Ok(i) => {
            let e = &mut table.entries[i];
            let args_flags = flags & !trig::AUTO_ARGS;
            if flags & trig::AUTO_ARGS != 0 && e.trigger.flags & args_flags != 0 {
                return 0;
            }
            e.trigger.add(&eff, exact);
            if let Some(a) = &auto_arg {
                e.trigger.add(a, exact);
            }
            if let Some(a) = &auto_ret {
                e.trigger.add(a, exact);
            }
            1
        }
        Err(i) => {
            let mut t = Trigger::default();
            t.add(&eff, exact);
            if let Some(a) = &auto_arg {
                t.add(a, exact);
            }
            if let Some(a) = &auto_ret {
                t.add(a, exact);
            }
            table.entries.insert(
                i,
                FilterEntry {
                    start,
                    end,
                    name: sym.name.clone(),
                    trigger: t,
                },
            );
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specs() {
        let a = parse_argspec("arg1", true).unwrap();
        assert_eq!((a.idx, a.fmt, a.size), (1, ArgFmt::Auto, 8));
        let a = parse_argspec("fparg2/32", true).unwrap();
        assert_eq!(
            (a.idx, a.fmt, a.size, a.loc),
            (2, ArgFmt::Float, 4, ArgLoc::Float)
        );
        let a = parse_argspec("retval/f64", true).unwrap();
        assert_eq!((a.idx, a.fmt, a.size), (0, ArgFmt::Float, 8));
        let a = parse_argspec("arg2/s", true).unwrap();
        assert_eq!(a.fmt, ArgFmt::Str);
        let a = parse_argspec("arg3/e:uft_mmap_prot", true).unwrap();
        assert_eq!(a.type_name.as_deref(), Some("uft_mmap_prot"));
        let a = parse_argspec("arg1/x32", true).unwrap();
        assert_eq!((a.fmt, a.size), (ArgFmt::Hex, 4));
        let a = parse_argspec("arg1/c", true).unwrap();
        assert_eq!(a.size, 1);
        let a = parse_argspec("arg1/t16:pt", true).unwrap();
        assert_eq!((a.fmt, a.size), (ArgFmt::Struct, 16));
        let a = parse_argspec("arg2%stack+1", true).unwrap();
        assert_eq!(a.loc, ArgLoc::Stack(1));
        assert!(parse_argspec("arg1/z", true).is_none());
        assert!(parse_argspec("arg1/i12", true).is_none());
        assert!(parse_argspec("foo", true).is_none());
    }

    #[test]
    fn enums() {
        let mut e = EnumDefs::default();
        assert!(e.parse(
            "enum uft_mmap_prot { PROT_NONE = 0, PROT_READ = 1, PROT_WRITE = 2, PROT_EXEC = 4 };"
        ));
        assert_eq!(
            e.format("uft_mmap_prot", 3).unwrap(),
            "PROT_WRITE|PROT_READ"
        );
        assert_eq!(e.format("uft_mmap_prot", 0).unwrap(), "PROT_NONE");
        assert_eq!(
            e.format("uft_mmap_prot", 9).unwrap(),
            "PROT_EXEC|PROT_WRITE|PROT_READ|PROT_NONE+0x2"
        );
        assert!(e.format("nope", 1).is_none());
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("10us", 0), 10_000);
        assert_eq!(parse_time("1.5ms", 0), 1_500_000);
        assert_eq!(parse_time("7", 0), 7);
    }
}
