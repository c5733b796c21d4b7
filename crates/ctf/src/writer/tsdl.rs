//! A trace class as CTF 1.8 TSDL text (the plain, non-packetized metadata
//! form), for the field classes the writer produces: integers and
//! enumerations, floats, null-terminated strings, arrays, sequences,
//! structures and variants. Every field class is written in place (no
//! `typealias`, no named structures), and every member name gets one
//! leading `_` that readers strip again, so no name can clash with a TSDL
//! keyword.
//!
//! Variant options are written as they are named (the writer's layout
//! gives TSDL keywords a leading `_`: [`option_name`]), and so are the
//! labels of their tag: babeltrace2 2.0 finds an option's mapping by the
//! option's name as written, leading `_` included.

use std::fmt::Write as _;

use super::layout::option_name;

use crate::ir::{
    ByteOrder, DisplayBase, EnvValue, FieldClass, IntClass, Length, StructClass, TraceClass,
};

/// A TSDL string literal.
fn lit(out: &mut String, s: &str) {
    crate::ctf2::push_quoted(out, s, |out, c| {
        let _ = write!(out, "\\x{c:02x}");
    });
}

fn uuid(u: &[u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (i, b) in u.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn bo(b: ByteOrder) -> &'static str {
    match b {
        ByteOrder::Little => "le",
        ByteOrder::Big => "be",
    }
}

struct Emitter<'a> {
    tc: &'a TraceClass,
    out: String,
}

impl Emitter<'_> {
    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push('\t');
        }
    }

    fn int(&mut self, c: &IntClass) {
        let _ = write!(
            self.out,
            "integer {{ size = {}; align = {}; signed = {}; byte_order = {}; base = {};",
            c.len,
            c.align,
            c.signed as u8,
            bo(c.byte_order),
            match c.base {
                DisplayBase::Binary => 2,
                DisplayBase::Octal => 8,
                DisplayBase::Decimal => 10,
                DisplayBase::Hexadecimal => 16,
            }
        );
        if let Some(k) = c.mapped_clock.and_then(|i| self.tc.clocks.get(i)) {
            let _ = write!(self.out, " map = clock.{}.value;", k.name);
        }
        self.out.push_str(" }");
    }

    /// The type part of a declaration (what goes before the name).
    fn ty(&mut self, f: &FieldClass, depth: usize) {
        match f {
            FieldClass::Int(c) if !c.mappings.is_empty() => {
                self.out.push_str("enum : ");
                let plain = IntClass {
                    mappings: Vec::new(),
                    ..c.clone()
                };
                self.int(&plain);
                self.out.push_str(" {");
                for (i, m) in c.mappings.iter().enumerate() {
                    for (j, r) in m.ranges.iter().enumerate() {
                        if i + j > 0 {
                            self.out.push(',');
                        }
                        self.out.push('\n');
                        self.indent(depth + 1);
                        lit(&mut self.out, &m.name);
                        if r.lower == r.upper {
                            let _ = write!(self.out, " = {}", r.lower);
                        } else {
                            let _ = write!(self.out, " = {} ... {}", r.lower, r.upper);
                        }
                    }
                }
                self.out.push('\n');
                self.indent(depth);
                self.out.push('}');
            }
            FieldClass::Int(c) => self.int(c),
            FieldClass::Float(c) => {
                let (e, m) = if c.len == 32 { (8, 24) } else { (11, 53) };
                let _ = write!(
                    self.out,
                    "floating_point {{ exp_dig = {e}; mant_dig = {m}; align = {}; byte_order = {}; }}",
                    c.align,
                    bo(c.byte_order)
                );
            }
            FieldClass::String(_) => self.out.push_str("string { encoding = UTF8; }"),
            FieldClass::Struct(s) => self.structure(s, depth),
            FieldClass::Variant(v) => {
                let tag = v.selector.path.last().map(String::as_str).unwrap_or("");
                let _ = writeln!(self.out, "variant <_{tag}> {{");
                for o in &v.options {
                    self.indent(depth + 1);
                    let name = option_name(o.name.as_deref().unwrap_or(""));
                    self.decl(&name, &o.class, depth + 1, false);
                }
                self.indent(depth);
                self.out.push('}');
            }
            FieldClass::Array(a) => self.ty(&a.element, depth),
            // never produced by the writer
            _ => self.out.push_str("struct { }"),
        }
    }

    fn structure(&mut self, s: &StructClass, depth: usize) {
        if s.members.is_empty() {
            self.out.push_str("struct { }");
            return;
        }
        self.out.push_str("struct {\n");
        for (i, m) in s.members.iter().enumerate() {
            self.indent(depth + 1);
            // the tag of a variant: its labels are the options' names
            // as written
            if let FieldClass::Int(c) = &m.class {
                let tag = s.members[i + 1..].iter().any(|v| {
                    matches!(&v.class, FieldClass::Variant(v)
                        if v.selector.path.last() == Some(&m.name))
                });
                if tag && c.mappings.iter().any(|l| option_name(&l.name) != l.name) {
                    let mut c = c.clone();
                    for l in &mut c.mappings {
                        l.name = option_name(&l.name).into_owned();
                    }
                    self.decl(&m.name, &FieldClass::Int(c), depth + 1, true);
                    continue;
                }
            }
            self.decl(&m.name, &m.class, depth + 1, true);
        }
        self.indent(depth);
        self.out.push('}');
        if s.min_align > 1 {
            let _ = write!(self.out, " align({})", s.min_align);
        }
    }

    /// `TYPE _NAME[LEN];` (`underscore`: prefix the name with `_`).
    fn decl(&mut self, name: &str, f: &FieldClass, depth: usize, underscore: bool) {
        self.ty(f, depth);
        self.out.push(' ');
        if underscore {
            self.out.push('_');
        }
        self.out.push_str(name);
        let mut f = f;
        while let FieldClass::Array(a) = f {
            match &a.length {
                Length::Static(n) => {
                    let _ = write!(self.out, "[{n}]");
                }
                Length::Dynamic(loc) => {
                    let l = loc.path.last().map(String::as_str).unwrap_or("");
                    let _ = write!(self.out, "[_{l}]");
                }
            }
            f = &a.element;
        }
        self.out.push_str(";\n");
    }

    fn scope(&mut self, key: &str, s: Option<&StructClass>) {
        if let Some(s) = s {
            let _ = write!(self.out, "\t{key} := ");
            self.structure(s, 1);
            self.out.push_str(";\n");
        }
    }
}

/// The TSDL metadata text of `tc` (`/* CTF 1.8 */` first).
pub fn write_tsdl(tc: &TraceClass) -> String {
    let mut e = Emitter {
        tc,
        out: String::with_capacity(1 << 16),
    };
    e.out.push_str("/* CTF 1.8 */\n\n");
    e.out.push_str("trace {\n\tmajor = 1;\n\tminor = 8;\n");
    if let Some(u) = &tc.uuid {
        let _ = writeln!(e.out, "\tuuid = \"{}\";", uuid(u));
    }
    let _ = writeln!(e.out, "\tbyte_order = {};", bo(tc.native_byte_order));
    e.scope("packet.header", tc.packet_header.as_ref());
    e.out.push_str("};\n\n");
    if !tc.environment.is_empty() {
        e.out.push_str("env {\n");
        for (k, v) in &tc.environment {
            let _ = write!(e.out, "\t{k} = ");
            match v {
                EnvValue::Int(i) => {
                    let _ = write!(e.out, "{i}");
                }
                EnvValue::Str(s) => lit(&mut e.out, s),
            }
            e.out.push_str(";\n");
        }
        e.out.push_str("};\n\n");
    }
    for c in &tc.clocks {
        let _ = writeln!(e.out, "clock {{\n\tname = {};", c.name);
        if let Some(u) = &c.uuid {
            let _ = writeln!(e.out, "\tuuid = \"{}\";", uuid(u));
        }
        if let Some(d) = &c.description {
            e.out.push_str("\tdescription = ");
            lit(&mut e.out, d);
            e.out.push_str(";\n");
        }
        let _ = writeln!(e.out, "\tfreq = {};", c.frequency);
        if let Some(p) = c.precision {
            let _ = writeln!(e.out, "\tprecision = {p};");
        }
        let _ = writeln!(e.out, "\toffset_s = {};", c.offset_seconds);
        let _ = writeln!(e.out, "\toffset = {};", c.offset_cycles);
        let _ = writeln!(
            e.out,
            "\tabsolute = {};\n}};\n",
            if c.origin_is_unix_epoch {
                "TRUE"
            } else {
                "FALSE"
            }
        );
    }
    for s in &tc.stream_classes {
        let _ = writeln!(e.out, "stream {{\n\tid = {};", s.id);
        e.scope("packet.context", s.packet_context.as_ref());
        e.scope("event.header", s.event_header.as_ref());
        e.scope("event.context", s.event_common_context.as_ref());
        e.out.push_str("};\n\n");
        for ec in &s.event_classes {
            e.out.push_str("event {\n\tname = ");
            lit(&mut e.out, ec.name.as_deref().unwrap_or(""));
            let _ = writeln!(e.out, ";\n\tid = {};\n\tstream_id = {};", ec.id, s.id);
            if let Some(l) = ec.log_level {
                let _ = writeln!(e.out, "\tloglevel = {l};");
            }
            e.scope("context", ec.specific_context.as_ref());
            e.scope("fields", ec.payload.as_ref());
            e.out.push_str("};\n\n");
        }
    }
    e.out
}
