//! The ftrace `print fmt` engine, as libtraceevent 1.7.1 (the library
//! behind `trace-cmd report`) implements it.
//!
//! - [`parse_print_fmt`] parses the text after `print fmt: ` into a
//!   [`PrintFmt`]: the argument trees ([`PrintArg`], mirroring
//!   `struct tep_print_arg`), the format string cut into [`Segment`]s
//!   (libtraceevent's `print_cache`), and whether libtraceevent would mark
//!   the event failed (`[FAILED TO PARSE]`). The parser follows
//!   libtraceevent step by step, quirks included, so that exactly the same
//!   formats fail.
//! - [`FtracePrinter`] is the [`ClassPrinter`] of an ftrace event class.
//!   Its raw view is `trace-cmd report -R`'s (`tep_print_fields`): each
//!   field is printed through the conversion of the format that prints
//!   exactly that field (a field argument, possibly cast), with the `0x` of
//!   a preceding `0x` literal; other fields are printed by type.
//!
//! Printing allocates nothing: what can be decided per class is decided
//! when the printer is built.

mod ast;
mod eval;
pub mod lexer;
mod parse;
pub mod printf;
mod segments;
mod strto;
pub use strto::{atoll, strtoll, strtoull};

#[cfg(test)]
mod pretty_tests;
#[cfg(test)]
mod test_util;
#[cfg(test)]
mod tests;

mod bprint;
mod plugins;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tracemux_core::model::{ClassPrinter, FieldDef, FieldFlags, PrintCtx};

use crate::format::EventFormat;
use crate::printfmt::plugins::{kind_for, Kind, Plugin};

pub use ast::{ArgId, FieldRef, FlagSym, PrintArg, PrintFmt, SegKind, Segment};
pub use eval::{eval_type_str, printk_text};
pub use parse::{parse_print_fmt, FuncHandlers, ParseInput, DEFAULT_FUNC_HANDLERS};

#[cfg(test)]
pub(crate) use eval::{bitmask_text, cpumask_text};
use eval::{dynamic_offset_field, read_number, Conv, Env, Rec};
use printf::{put_hex, put_hex2, put_i64, put_u64, Spec};

/// How one field is printed in the raw view (decided per class).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// By its type (`print_field_raw`).
    Raw,
    /// Through segment `seg` of the format, `0x` first if `has_0x`.
    Seg { seg: u32, has_0x: bool },
}

#[derive(Debug, Clone)]
struct SegInfo {
    /// The printf conversion (digits and strings), if glibc-parsable.
    spec: Option<Spec>,
    /// For pointers: where the letters after `p` start in the text.
    ext: usize,
}

/// What the segments of a format need besides their text.
fn seg_infos(segs: &[Segment]) -> Vec<SegInfo> {
    segs.iter()
        .map(|s| match s.kind {
            SegKind::Digit | SegKind::String => SegInfo {
                spec: Spec::parse(&s.text),
                ext: 0,
            },
            SegKind::Pointer => SegInfo {
                spec: None,
                ext: s.text.find('p').map_or(s.text.len(), |i| i + 1),
            },
            SegKind::Literal => SegInfo { spec: None, ext: 0 },
        })
        .collect()
}

/// The printer of one ftrace event class.
#[derive(Debug)]
pub struct FtracePrinter {
    name: String,
    common: Vec<FieldDef>,
    fields: Vec<FieldDef>,
    long_size: u32,
    pf: PrintFmt,
    segs: Vec<SegInfo>,
    plans: Vec<Plan>,
    /// libtraceevent drops a field's "string" property the first time it
    /// prints the field as `ARRAY[...]` (not printable), for the rest of the
    /// run; this is that state, per own field.
    not_string: Vec<AtomicBool>,
    /// Addresses of function names used as numbers (see `Env`).
    atom_cache: Vec<OnceLock<u64>>,
    /// Per argument node: the field `__get_str(name)` & co. refer to.
    named: Vec<Option<FieldRef>>,
    /// Per argument node: the masks of casts (see `Env::casts`).
    casts: Vec<(u64, u64)>,
    /// The plugin event handler trace-cmd report uses for this event.
    plugin: Option<Plugin>,
    /// `ftrace/bprint`: the format comes with each record.
    is_bprint: bool,
    /// A bprint format failed to parse: libtraceevent then marks the event
    /// failed for the rest of the run.
    bprint_failed: AtomicBool,
    /// Changes of `not_string` and `bprint_failed` so far.
    sticky_changes: AtomicU64,
    /// Parsed bprint formats by (printk address, number of arguments).
    bprint_cache: Mutex<HashMap<(u64, usize), Arc<bprint::BprintFmt>>>,
    /// The arguments of the bprint record being printed (reused).
    bprint_args: Mutex<Vec<eval::BArg>>,
}

impl FtracePrinter {
    /// Build the printer of a parsed `format` file. `system` is the event's
    /// system (`ftrace` changes a few things); `long_size` the trace's size
    /// of a C `long`.
    ///
    /// Note: `format.print_fmt` must be the whole print fmt text, which can
    /// span several lines (a quoted string may hold a newline).
    pub fn new(format: &EventFormat, system: &str, long_size: u32) -> Self {
        Self::from_parts(
            &format.name,
            system,
            format.common_fields.clone(),
            format.fields.clone(),
            &format.print_fmt,
            long_size,
        )
    }

    /// Like [`FtracePrinter::new`], from the parts of the format.
    pub fn from_parts(
        name: &str,
        system: &str,
        common: Vec<FieldDef>,
        fields: Vec<FieldDef>,
        print_fmt: &str,
        long_size: u32,
    ) -> Self {
        let is_ftrace = system == "ftrace";
        let input = ParseInput {
            common: &common,
            fields: &fields,
            long_size,
            is_ftrace,
            is_bprint: is_ftrace && name == "bprint",
            funcs: DEFAULT_FUNC_HANDLERS,
        };
        let pf = parse_print_fmt(print_fmt, &input);
        let mut p = Self::from_parsed(name, common, fields, pf, long_size);
        p.is_bprint = is_ftrace && name == "bprint";
        p.plugin = kind_for(system, name).map(|k| Plugin::new(k, &p.common, &p.fields));
        p
    }

    /// Build the printer from an already parsed print fmt.
    pub fn from_parsed(
        name: &str,
        common: Vec<FieldDef>,
        fields: Vec<FieldDef>,
        pf: PrintFmt,
        long_size: u32,
    ) -> Self {
        let segs = seg_infos(pf.segments.as_deref().unwrap_or(&[]));
        let plans = raw_plans(&pf, &fields);
        let casts = eval::cast_masks(&pf);
        let not_string = fields.iter().map(|_| AtomicBool::new(false)).collect();
        let atom_cache = pf.arena.iter().map(|_| OnceLock::new()).collect();
        // tep_find_any_field: common fields first
        let find_any = |n: &str| {
            common
                .iter()
                .position(|f| f.name == n)
                .map(|i| FieldRef::Common(i as u32))
                .or_else(|| {
                    fields
                        .iter()
                        .position(|f| f.name == n)
                        .map(|i| FieldRef::Own(i as u32))
                })
        };
        let named = pf
            .arena
            .iter()
            .map(|a| match a {
                PrintArg::Str { name }
                | PrintArg::Bitmask { name }
                | PrintArg::Cpumask { name } => find_any(name),
                _ => None,
            })
            .collect();
        FtracePrinter {
            name: name.to_string(),
            common,
            fields,
            long_size,
            pf,
            segs,
            plans,
            not_string,
            atom_cache,
            named,
            casts,
            plugin: None,
            is_bprint: false,
            bprint_failed: AtomicBool::new(false),
            sticky_changes: AtomicU64::new(0),
            bprint_cache: Mutex::new(HashMap::new()),
            bprint_args: Mutex::new(Vec::new()),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The same printer without trace-cmd's plugin handler: the bare
    /// `print fmt`, as programs that load no plugins (uftrace) print it.
    pub fn without_plugin(mut self) -> Self {
        self.plugin = None;
        self
    }

    /// The parsed print fmt.
    pub fn print_fmt(&self) -> &PrintFmt {
        &self.pf
    }

    /// libtraceevent would print this event as `[FAILED TO PARSE]`.
    pub fn failed(&self) -> bool {
        self.pf.failed
    }

    pub fn common_fields(&self) -> &[FieldDef] {
        &self.common
    }

    pub fn fields(&self) -> &[FieldDef] {
        &self.fields
    }

    fn env<'a>(&'a self, rec: Rec<'a>, ctx: &'a PrintCtx<'a>) -> Env<'a> {
        Env {
            pf: &self.pf,
            common: &self.common,
            own: &self.fields,
            long_size: self.long_size,
            atom_cache: &self.atom_cache,
            named: &self.named,
            bargs: &[],
            casts: &self.casts,
            rec,
            ctx,
        }
    }

    /// The value of own field `i` as libtraceevent prints it in the raw
    /// view, appended to `out` (without the ` name=`). `data[..size]` is the
    /// record; `data` may go on with the rest of its page.
    pub fn write_raw_field(
        &self,
        out: &mut Vec<u8>,
        i: usize,
        data: &[u8],
        size: usize,
        ctx: &PrintCtx<'_>,
    ) {
        let data = Rec {
            data,
            size: size.min(data.len()),
        };
        match self.plans[i] {
            Plan::Raw => self.print_field_raw(out, i, data, ctx),
            Plan::Seg { seg, has_0x } => {
                if has_0x {
                    out.extend_from_slice(b"0x");
                }
                self.print_segment(out, seg as usize, data, ctx);
            }
        }
    }

    /// `print_parse_data` of one segment.
    fn print_segment(&self, out: &mut Vec<u8>, k: usize, data: Rec<'_>, ctx: &PrintCtx<'_>) {
        let Some(segs) = self.pf.segments.as_deref() else {
            return;
        };
        print_seg(&self.env(data, ctx), &segs[k], &self.segs[k], out);
    }

    /// libtraceevent's `pretty_print`: `[FAILED TO PARSE]` and the raw
    /// fields for a format it could not parse, else every segment.
    fn pretty_print(&self, out: &mut Vec<u8>, rec: Rec<'_>, ctx: &PrintCtx<'_>) {
        if self.pf.failed || (self.is_bprint && self.bprint_failed.load(Ordering::Relaxed)) {
            out.extend_from_slice(b"[FAILED TO PARSE]");
            self.write_raw_fields(out, rec.data, rec.size, ctx);
            return;
        }
        if self.is_bprint {
            self.print_bprint(out, rec, ctx);
            return;
        }
        let Some(segs) = self.pf.segments.as_deref() else {
            return;
        };
        let env = self.env(rec, ctx);
        for (seg, info) in segs.iter().zip(&self.segs) {
            print_seg(&env, seg, info, out);
        }
    }
}

/// `print_parse_data`: one segment of a format.
fn print_seg(env: &Env<'_>, seg: &Segment, info: &SegInfo, out: &mut Vec<u8>) {
    {
        let arg_of = |ix: Option<usize>| ix.map(|i| env.pf.args[i]);
        let len_arg = arg_of(seg.len_arg).map(|a| env.eval_num_arg(a) as i32);
        let Some(arg) = arg_of(seg.arg) else {
            out.extend_from_slice(seg.text.as_bytes());
            return;
        };
        match seg.kind {
            SegKind::Digit => {
                let conv = Conv {
                    spec: info.spec.as_ref(),
                    text: &seg.text,
                    star: len_arg,
                    ls: seg.ls,
                };
                env.print_number(out, conv, arg);
            }
            SegKind::Pointer => {
                let ext = &seg.text.as_bytes()[info.ext..];
                env.print_pointer(out, ext, len_arg.unwrap_or(1), arg);
            }
            SegKind::String => {
                if len_arg.is_some_and(|l| l < 0) {
                    // libtraceevent then calls printf("%.*s", str) without
                    // the length: the string pointer becomes the precision.
                    // trace-cmd 3.1.6 (Debian 12, x86-64) prints the
                    // conversion text itself; so do we.
                    out.extend_from_slice(seg.text.as_bytes());
                    return;
                }
                env.print_string(out, info.spec.as_ref(), len_arg, arg)
            }
            SegKind::Literal => printf::put_small(out, seg.text.as_bytes()),
        }
    }
}

impl FtracePrinter {
    /// `print_field_raw`: a field printed by its type.
    fn print_field_raw(&self, out: &mut Vec<u8>, i: usize, rec: Rec<'_>, ctx: &PrintCtx<'_>) {
        let f = &self.fields[i];
        let fl = f.flags;
        if fl.has(FieldFlags::ARRAY) {
            let (offset, len) = if fl.has(FieldFlags::DYNAMIC) {
                dynamic_offset_field(f, rec, ctx.endian)
            } else {
                (f.offset, f.size)
            };
            let offset = offset as usize;
            let bytes = rec.data.get(offset..).unwrap_or(&[]);
            let is_string =
                fl.has(FieldFlags::STRING) && !self.not_string[i].load(Ordering::Relaxed);
            if is_string && is_printable_array(bytes, len as usize) {
                // printed with "%s": up to the NUL, even past the field
                let n = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
                out.extend_from_slice(&bytes[..n]);
            } else {
                out.extend_from_slice(b"ARRAY[");
                let n = (len as usize).min(bytes.len());
                for (k, &b) in bytes[..n].iter().enumerate() {
                    if k > 0 {
                        out.extend_from_slice(b", ");
                    }
                    put_hex2(out, b);
                }
                out.push(b']');
                if !self.not_string[i].swap(true, Ordering::Relaxed) {
                    self.sticky_changes.fetch_add(1, Ordering::Relaxed);
                }
            }
            return;
        }
        let val = read_number(ctx.endian, rec.data, f.offset as usize, f.size as usize);
        if fl.has(FieldFlags::POINTER) {
            out.extend_from_slice(b"0x");
            put_hex(out, val);
        } else if fl.has(FieldFlags::SIGNED) {
            match f.size {
                4 if fl.has(FieldFlags::LONG) => {
                    out.extend_from_slice(b"0x");
                    put_hex(out, val & 0xffff_ffff);
                }
                4 => put_i64(out, val as u32 as i32 as i64),
                2 => {
                    // "%2d"
                    let v = val as u16 as i16;
                    if (0..10).contains(&v) {
                        out.push(b' ');
                    }
                    put_i64(out, v as i64);
                }
                1 => put_i64(out, val as u8 as i8 as i64),
                _ => put_i64(out, val as i64),
            }
        } else if fl.has(FieldFlags::LONG) {
            out.extend_from_slice(b"0x");
            put_hex(out, val);
        } else {
            put_u64(out, val);
        }
    }
}

/// `is_printable_array`: up to `len` bytes or the first NUL, all printable
/// or white space (as C `char`: bytes >= 0x80 are neither).
fn is_printable_array(p: &[u8], len: usize) -> bool {
    for i in 0..len {
        let c = p.get(i).copied().unwrap_or(0);
        if c == 0 {
            break;
        }
        if !((0x20..=0x7e).contains(&c) || c == b' ' || (9..=13).contains(&c)) {
            return false;
        }
    }
    true
}

/// What `print_selected_fields` / `print_field` decide for each own field:
/// walk the segments from the cursor (wrapping around once) for one whose
/// argument, casts aside, is exactly this field. After a match the cursor
/// moves past it; after a match on the last segment it is gone, and the
/// remaining fields print raw.
fn raw_plans(pf: &PrintFmt, fields: &[FieldDef]) -> Vec<Plan> {
    let segs = pf.segments.as_deref().unwrap_or(&[]);
    let n = segs.len();
    let mut cursor = if n > 0 { Some(0usize) } else { None };
    let strip = |mut id: ArgId| {
        while let PrintArg::Type { item, .. } = pf.arg(id) {
            id = *item;
        }
        id
    };
    fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let Some(start) = cursor else { return Plan::Raw };
            if pf.failed || f.flags.has(FieldFlags::ARRAY) || f.flags.has(FieldFlags::STRING) {
                return Plan::Raw;
            }
            let mut k = start;
            let mut has_0x = false;
            loop {
                let s = &segs[k];
                if s.kind == SegKind::Literal {
                    has_0x = s.text.len() > 1 && s.text.ends_with("0x");
                } else {
                    let hit = s.arg.is_some_and(|a| {
                        matches!(pf.arg(strip(pf.args[a])),
                            PrintArg::Field { field: Some(FieldRef::Own(j)), .. } if *j as usize == i)
                    });
                    if hit {
                        cursor = if k + 1 < n { Some(k + 1) } else { None };
                        return Plan::Seg { seg: k as u32, has_0x };
                    }
                    has_0x = false;
                }
                k = if k + 1 < n { k + 1 } else { 0 };
                if k == start {
                    return Plan::Raw;
                }
            }
        })
        .collect()
}

impl ClassPrinter for FtracePrinter {
    fn write_raw_fields(&self, out: &mut Vec<u8>, data: &[u8], size: usize, ctx: &PrintCtx<'_>) {
        for (i, f) in self.fields.iter().enumerate() {
            out.push(b' ');
            out.extend_from_slice(f.name.as_bytes());
            out.push(b'=');
            self.write_raw_field(out, i, data, size, ctx);
        }
    }

    /// libtraceevent's `print_event_info` in pretty mode: the plugin
    /// handler, then (if it asks for it, or there is none) the print fmt.
    fn write_pretty(
        &self,
        out: &mut Vec<u8>,
        data: &[u8],
        size: usize,
        ctx: &PrintCtx<'_>,
    ) -> bool {
        let size = size.min(data.len());
        if let Some(p) = &self.plugin {
            if !p.run(self, out, data, size, ctx) {
                return true;
            }
        }
        self.pretty_print(out, Rec { data, size }, ctx);
        true
    }

    fn wants_next(&self) -> bool {
        self.plugin
            .as_ref()
            .is_some_and(|p| p.kind() == Kind::FgraphEntry)
    }

    fn stateful(&self) -> bool {
        self.plugin
            .as_ref()
            .is_some_and(|p| p.kind() == Kind::Function)
    }

    fn sticky_changes(&self) -> u64 {
        self.sticky_changes.load(Ordering::Relaxed)
    }

    fn sticky(&self) -> Vec<bool> {
        let mut v: Vec<bool> = self
            .not_string
            .iter()
            .map(|f| f.load(Ordering::Relaxed))
            .collect();
        v.push(self.bprint_failed.load(Ordering::Relaxed));
        v
    }

    fn set_sticky(&self, flags: &[bool]) {
        for (f, &on) in self.not_string.iter().zip(flags) {
            f.store(on, Ordering::Relaxed);
        }
        if let Some(&on) = flags.get(self.not_string.len()) {
            self.bprint_failed.store(on, Ordering::Relaxed);
        }
    }
}
