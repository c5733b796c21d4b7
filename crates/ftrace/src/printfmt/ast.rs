//! The parsed `print fmt`: arguments as a tree that mirrors libtraceevent's
//! `struct tep_print_arg`, and the format string cut into segments
//! (libtraceevent's `print_cache`).

use std::fmt::Write as _;

use tracemux_core::model::FieldDef;

/// Index of an argument node in [`PrintFmt::arena`].
pub type ArgId = u32;

/// A field an argument refers to: one of the event's common fields or one
/// of its own fields (index into the respective list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldRef {
    Common(u32),
    Own(u32),
}

/// One `{ value, "string" }` entry of `__print_flags` / `__print_symbolic`.
/// Both sides are kept as the text libtraceevent keeps (the value already
/// evaluated to a decimal number when it was an expression).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagSym {
    pub value: String,
    pub str: String,
}

/// One argument node (libtraceevent's `TEP_PRINT_*` kinds).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PrintArg {
    /// `TEP_PRINT_NULL`: an empty operand (the left side of a unary op).
    #[default]
    Null,
    /// `TEP_PRINT_ATOM`: a number, a string literal (without quotes, escapes
    /// kept), or a run of words (`unsigned int`, later a cast's type).
    Atom(String),
    /// `TEP_PRINT_FIELD`: `REC->name`. `field` is `None` when the event has
    /// no such field (libtraceevent accepts that and prints nothing useful).
    Field {
        name: String,
        field: Option<FieldRef>,
    },
    /// `__print_flags(field, delim, { v, "s" }...)`.
    Flags {
        field: Option<ArgId>,
        delim: Option<String>,
        flags: Vec<FlagSym>,
    },
    /// `__print_symbolic(field, { v, "s" }...)`.
    Symbol {
        field: Option<ArgId>,
        symbols: Vec<FlagSym>,
    },
    /// `__print_hex(field, size)`.
    Hex { field: ArgId, size: ArgId },
    /// `__print_hex_str(field, size)`.
    HexStr { field: ArgId, size: ArgId },
    /// `__print_array(field, count, el_size)`.
    IntArray {
        field: ArgId,
        count: ArgId,
        el_size: ArgId,
    },
    /// `TEP_PRINT_TYPE`: a cast `(type)item`.
    Type { ty: String, item: ArgId },
    /// `TEP_PRINT_STRING`: `__get_str(name)` / `__get_rel_str(name)`; the
    /// field is looked up by name when printing.
    Str { name: String },
    /// `__get_dynamic_array(f)`, `__get_rel_dynamic_array(f)`,
    /// `__get_sockaddr(f)`, `__get_sockaddr_rel(f)` (always an own field).
    DynamicArray { field: FieldRef },
    /// `__get_dynamic_array_len(f)` / `__get_rel_dynamic_array_len(f)`.
    DynamicArrayLen { field: FieldRef },
    /// `TEP_PRINT_OP`: unary (left is a `Null` node), binary, `?` (right is
    /// a `:` node holding both branches) or `[` (left indexed by right).
    Op {
        op: String,
        prio: i32,
        left: Option<ArgId>,
        right: Option<ArgId>,
    },
    /// `TEP_PRINT_FUNC`: a call to a helper registered by a plugin.
    Func { name: String, args: Vec<ArgId> },
    /// `__get_bitmask(name)` / `__get_rel_bitmask(name)`.
    Bitmask { name: String },
    /// `__get_cpumask(name)` / `__get_rel_cpumask(name)`.
    Cpumask { name: String },
    /// Argument `n` of a `bprint` record (a number or a string decoded from
    /// the record by libtraceevent's `make_bprint_args`).
    BArg(u32),
}

impl PrintArg {
    /// libtraceevent's numeric `enum tep_print_arg_type` value (shown by
    /// some of its error texts, e.g. `ARG TYPE NOT FIELD BUT 7`).
    pub fn c_type(&self) -> u32 {
        match self {
            PrintArg::Null => 0,
            PrintArg::Atom(_) => 1,
            PrintArg::Field { .. } => 2,
            PrintArg::Flags { .. } => 3,
            PrintArg::Symbol { .. } => 4,
            PrintArg::Hex { .. } => 5,
            PrintArg::IntArray { .. } => 6,
            PrintArg::Type { .. } => 7,
            PrintArg::Str { .. } => 8,
            PrintArg::DynamicArray { .. } => 10,
            PrintArg::Op { .. } => 11,
            PrintArg::Func { .. } => 12,
            PrintArg::Bitmask { .. } => 13,
            PrintArg::DynamicArrayLen { .. } => 14,
            PrintArg::HexStr { .. } => 15,
            PrintArg::Cpumask { .. } => 16,
            PrintArg::BArg(_) => 1,
        }
    }
}

/// What a segment of the format string is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegKind {
    /// Literal text (escapes already processed, `%%` already `%`; also the
    /// `>X<` marker libtraceevent emits for an unknown conversion `%X`).
    Literal,
    /// An integer conversion `d i u x X o`.
    Digit,
    /// A `%p` conversion with its extension letters (`%ps`, `%pI4`...).
    Pointer,
    /// `%s`.
    String,
}

/// One entry of the segmented format string (libtraceevent's
/// `struct tep_print_parse`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub kind: SegKind,
    /// For literals the text; for conversions the printf spec from `%` to
    /// the conversion character (for `%p`, its extension letters included).
    pub text: String,
    /// The argument converted (index into [`PrintFmt::args`]).
    pub arg: Option<usize>,
    /// The argument of a `*` width/precision (index into [`PrintFmt::args`]).
    pub len_arg: Option<usize>,
    /// Length modifier count: `h` -1, `hh` -2, `l`/`z` 1, `ll`/`L` 2.
    pub ls: i32,
}

/// Printable ASCII as is (backslash doubled), anything else as `\xNN`.
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        match b {
            b'\\' => o.push_str("\\\\"),
            0x20..=0x7e => o.push(b as char),
            _ => {
                let _ = write!(o, "\\x{b:02x}");
            }
        }
    }
    o
}

/// A parsed `print fmt`.
#[derive(Debug, Clone, Default)]
pub struct PrintFmt {
    /// The format string as libtraceevent keeps it (adjacent strings joined,
    /// backslash escapes not yet processed).
    pub format: String,
    /// All argument nodes; [`ArgId`]s index this.
    pub arena: Vec<PrintArg>,
    /// The top-level arguments, in order.
    pub args: Vec<ArgId>,
    /// libtraceevent would flag this event `TEP_EVENT_FL_FAILED` (its pretty
    /// output is `[FAILED TO PARSE]` followed by the raw fields).
    pub failed: bool,
    /// The segments (`print_cache`): `None` when parsing the arguments
    /// failed, or for `ftrace/bprint` which has its format in each record.
    pub segments: Option<Vec<Segment>>,
}

impl PrintFmt {
    pub fn arg(&self, id: ArgId) -> &PrintArg {
        &self.arena[id as usize]
    }

    /// A compact, deterministic text form of an argument tree (used by the
    /// tests and by the comparison tool in `examples/`).
    pub fn dump_arg(&self, id: ArgId, common: &[FieldDef], own: &[FieldDef], out: &mut String) {
        let opt = |s: &Self, a: Option<ArgId>, out: &mut String| match a {
            Some(a) => s.dump_arg(a, common, own, out),
            None => out.push('-'),
        };
        let fname = |r: FieldRef| match r {
            FieldRef::Common(i) => format!("c:{}", common[i as usize].name),
            FieldRef::Own(i) => format!("o:{}", own[i as usize].name),
        };
        let syms = |v: &[FlagSym], out: &mut String| {
            out.push('[');
            for (i, f) in v.iter().enumerate() {
                if i > 0 {
                    out.push(';');
                }
                let _ = write!(out, "{}={}", esc(&f.value), esc(&f.str));
            }
            out.push(']');
        };
        match self.arg(id) {
            PrintArg::Null => out.push_str("null"),
            PrintArg::Atom(a) => {
                let _ = write!(out, "atom({})", esc(a));
            }
            PrintArg::Field { name, field } => {
                let _ = write!(
                    out,
                    "field({name},{})",
                    field.map_or("-".to_string(), fname)
                );
            }
            PrintArg::Flags {
                field,
                delim,
                flags,
            } => {
                out.push_str("flags(");
                opt(self, *field, out);
                let _ = write!(out, ",{},", delim.as_deref().map_or("-".to_string(), esc));
                syms(flags, out);
                out.push(')');
            }
            PrintArg::Symbol { field, symbols } => {
                out.push_str("sym(");
                opt(self, *field, out);
                out.push(',');
                syms(symbols, out);
                out.push(')');
            }
            PrintArg::Hex { field, size } | PrintArg::HexStr { field, size } => {
                out.push_str(if matches!(self.arg(id), PrintArg::Hex { .. }) {
                    "hex("
                } else {
                    "hexstr("
                });
                self.dump_arg(*field, common, own, out);
                out.push(',');
                self.dump_arg(*size, common, own, out);
                out.push(')');
            }
            PrintArg::IntArray {
                field,
                count,
                el_size,
            } => {
                out.push_str("intarray(");
                self.dump_arg(*field, common, own, out);
                out.push(',');
                self.dump_arg(*count, common, own, out);
                out.push(',');
                self.dump_arg(*el_size, common, own, out);
                out.push(')');
            }
            PrintArg::Type { ty, item } => {
                let _ = write!(out, "type({ty},");
                self.dump_arg(*item, common, own, out);
                out.push(')');
            }
            PrintArg::Str { name } => {
                let _ = write!(out, "str({name})");
            }
            PrintArg::DynamicArray { field } => {
                let _ = write!(out, "dynarray({})", fname(*field));
            }
            PrintArg::DynamicArrayLen { field } => {
                let _ = write!(out, "dynlen({})", fname(*field));
            }
            PrintArg::Op {
                op,
                prio,
                left,
                right,
            } => {
                let _ = write!(out, "op({op},{prio},");
                opt(self, *left, out);
                out.push(',');
                opt(self, *right, out);
                out.push(')');
            }
            PrintArg::Func { name, args } => {
                let _ = write!(out, "func({name},[");
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        out.push(';');
                    }
                    self.dump_arg(*a, common, own, out);
                }
                out.push_str("])");
            }
            PrintArg::Bitmask { name } => {
                let _ = write!(out, "bitmask({name})");
            }
            PrintArg::Cpumask { name } => {
                let _ = write!(out, "cpumask({name})");
            }
            PrintArg::BArg(n) => {
                let _ = write!(out, "barg({n})");
            }
        }
    }

    /// The whole parse in the text form of [`PrintFmt::dump_arg`]: one line
    /// for the status, one per argument, one per segment.
    pub fn dump(&self, common: &[FieldDef], own: &[FieldDef]) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "failed={}", self.failed as u8);
        if !self.failed || self.segments.is_some() {
            for (i, &a) in self.args.iter().enumerate() {
                let _ = write!(out, "arg{i}=");
                self.dump_arg(a, common, own, &mut out);
                out.push('\n');
            }
        }
        if let Some(segs) = &self.segments {
            for s in segs {
                let k = match s.kind {
                    SegKind::Literal => "S",
                    SegKind::Digit => "D",
                    SegKind::Pointer => "P",
                    SegKind::String => "s",
                };
                let ix = |a: Option<usize>| a.map_or("-".to_string(), |a| a.to_string());
                let _ = writeln!(
                    out,
                    "seg {k} ls={} arg={} len={} [{}]",
                    s.ls,
                    ix(s.arg),
                    ix(s.len_arg),
                    esc(&s.text)
                );
            }
        }
        out
    }
}
