//! TSDL semantics: from the syntax tree to the IR.
//!
//! Follows what CTF 1.8.3 says and, where it leaves room, what babeltrace2
//! 2.0 does, because its output is the reference:
//!
//! * blocks are visited in this order: `env`, `clock`, the root type
//!   declarations, `trace`, `stream`, `event` (so a root `typealias` may
//!   follow the blocks that use it); `native` is the `trace` block's
//!   `byte_order`, found first;
//! * declaration scopes nest (root, blocks, structure and variant bodies);
//! * one leading underscore is removed from member and option names; a
//!   type registered under a name (`typealias`, `typedef`, `struct foo`) and
//!   each later use of that name work on copies, and each copy removes one
//!   more leading underscore from the names inside it (babeltrace2 does
//!   this; it matters only for names starting with several underscores);
//! * sequence lengths and variant tags are resolved like babeltrace2: a
//!   relative path is looked up from the innermost enclosing structure,
//!   variant or array outwards, its first element among the members before
//!   the source field; an absolute path starts with a scope prefix
//!   (`stream.packet.context.`...); the target must come before the source;
//! * special fields get their [`Roles`] by name (see [`crate::ir`]);
//! * fields named `timestamp` (event header) and `timestamp_begin`/
//!   `timestamp_end` (packet context) that are not mapped to a clock are
//!   mapped to the only clock class (a `default` 1 GHz clock class is
//!   created when there is none);
//! * the default clock of a stream class is the clock that its integers
//!   are mapped to (two different clocks in one stream class is an error).

use std::collections::HashMap;

use super::lexer::Pos;
use super::parser::{BlockKind, Declarator, Entry, Enumerator, Spec, SpecList, Value};
use super::TsdlError;
use crate::ir::*;

mod resolve;
mod top;

use resolve::*;
pub use top::*;

/// A field class while the metadata is being lowered: names are not final
/// and paths are not resolved yet.
#[derive(Debug, Clone)]
enum T {
    Int(IntT),
    Float(FloatClass),
    Str(StringEncoding),
    Struct(StructT),
    Variant(VariantT),
    Array(Box<T>, u64),
    Seq(Box<T>, String, Pos),
}

#[derive(Debug, Clone)]
struct IntT {
    class: IntClass,
    /// `encoding = UTF8/ASCII`.
    text: bool,
    /// Enumeration mappings: label, then raw 64-bit range bounds.
    mappings: Option<Vec<(String, u64, u64)>>,
}

#[derive(Debug, Clone)]
struct Named {
    /// The name as used by path lookups (babeltrace2's "original" name).
    orig: String,
    /// The name shown (one leading underscore removed).
    name: String,
    t: T,
}

impl Named {
    fn new(orig: &str, t: T) -> Self {
        Named {
            orig: orig.to_string(),
            name: strip_underscore(orig).to_string(),
            t,
        }
    }
}

#[derive(Debug, Clone)]
struct StructT {
    members: Vec<Named>,
    min_align: u32,
}

#[derive(Debug, Clone)]
struct VariantT {
    tag: Option<(String, Pos)>,
    options: Vec<Named>,
}

fn strip_underscore(s: &str) -> &str {
    s.strip_prefix('_').unwrap_or(s)
}

/// babeltrace2's deep copy: every member/option name becomes the copy's
/// original name, and loses one more leading underscore.
fn copy_t(t: &T) -> T {
    fn named(n: &Named) -> Named {
        Named {
            orig: n.name.clone(),
            name: strip_underscore(&n.name).to_string(),
            t: copy_t(&n.t),
        }
    }
    match t {
        T::Struct(s) => T::Struct(StructT {
            members: s.members.iter().map(named).collect(),
            min_align: s.min_align,
        }),
        T::Variant(v) => T::Variant(VariantT {
            tag: v.tag.clone(),
            options: v.options.iter().map(named).collect(),
        }),
        T::Array(e, n) => T::Array(Box::new(copy_t(e)), *n),
        T::Seq(e, r, p) => T::Seq(Box::new(copy_t(e)), r.clone(), *p),
        other => other.clone(),
    }
}

#[derive(Default)]
struct DeclScope {
    aliases: HashMap<String, T>,
    structs: HashMap<String, T>,
    variants: HashMap<String, T>,
    enums: HashMap<String, T>,
}

#[derive(Clone, Copy)]
enum Ns {
    Alias,
    Struct,
    Variant,
    Enum,
}

impl Ns {
    /// The keyword of a declaration in this namespace (`struct`...).
    fn keyword(self) -> &'static str {
        match self {
            Ns::Alias => "typealias",
            Ns::Struct => "struct",
            Ns::Variant => "variant",
            Ns::Enum => "enum",
        }
    }
}

impl DeclScope {
    fn names(&self, ns: Ns) -> &HashMap<String, T> {
        match ns {
            Ns::Alias => &self.aliases,
            Ns::Struct => &self.structs,
            Ns::Variant => &self.variants,
            Ns::Enum => &self.enums,
        }
    }
}

struct Ctx {
    scopes: Vec<DeclScope>,
    native: ByteOrder,
    clocks: Vec<ClockClass>,
    env: Vec<(String, EnvValue)>,
    is_lttng: bool,
}

fn err(pos: Pos, msg: impl Into<String>) -> TsdlError {
    TsdlError::new(pos, msg)
}

impl Ctx {
    fn push(&mut self) {
        self.scopes.push(DeclScope::default());
    }
    fn pop(&mut self) {
        self.scopes.pop();
    }

    fn map(&mut self, ns: Ns) -> &mut HashMap<String, T> {
        let s = self.scopes.last_mut().expect("root scope");
        match ns {
            Ns::Alias => &mut s.aliases,
            Ns::Struct => &mut s.structs,
            Ns::Variant => &mut s.variants,
            Ns::Enum => &mut s.enums,
        }
    }

    fn register(&mut self, ns: Ns, name: &str, t: &T, pos: Pos) -> Result<(), TsdlError> {
        let m = self.map(ns);
        if m.contains_key(name) {
            return Err(err(
                pos,
                format!("type `{name}` is already declared in this scope"),
            ));
        }
        m.insert(name.to_string(), copy_t(t));
        Ok(())
    }

    fn lookup(&self, ns: Ns, name: &str) -> Option<T> {
        for s in self.scopes.iter().rev() {
            if let Some(t) = s.names(ns).get(name) {
                return Some(copy_t(t));
            }
        }
        None
    }

    fn declared_locally(&self, ns: Ns, name: &str) -> bool {
        let s = self.scopes.last().expect("root scope");
        s.names(ns).contains_key(name)
    }

    /// A `struct`, `variant` or `enum` without a body: the one declared
    /// under `name`.
    fn declared(&self, ns: Ns, name: &Option<String>, pos: Pos) -> Result<T, TsdlError> {
        let n = name.as_deref().unwrap_or("");
        self.lookup(ns, n)
            .ok_or_else(|| err(pos, format!("unknown type `{} {n}`", ns.keyword())))
    }

    /// A `struct`, `variant` or `enum` with a body must not declare its
    /// name again in the same scope.
    fn not_redeclared(&self, ns: Ns, name: &Option<String>, pos: Pos) -> Result<(), TsdlError> {
        match name {
            Some(n) if self.declared_locally(ns, n) => Err(err(
                pos,
                format!("`{} {n}` is already declared", ns.keyword()),
            )),
            _ => Ok(()),
        }
    }
}

fn lhs_name(lhs: &[String]) -> String {
    lhs.join(".")
}

/// The bodies and places of the top-level blocks of a kind, in order.
fn blocks(entries: &[Entry], kind: BlockKind) -> impl Iterator<Item = (&[Entry], Pos)> {
    entries.iter().filter_map(move |e| match e {
        Entry::Block { kind: k, body, pos } if *k == kind => Some((&body[..], *pos)),
        _ => None,
    })
}

/// What an assignment in a `trace`, `stream` or `event` block assigns.
enum Assigned<'e> {
    /// `lhs = value;`
    Value(&'e Value),
    /// `lhs := type;`
    Type(&'e SpecList, &'e Option<Declarator>),
}

fn get_uint(v: &Value, pos: Pos, what: &str) -> Result<u64, TsdlError> {
    match v {
        Value::UInt(u) => Ok(*u),
        _ => Err(err(pos, format!("`{what}`: expecting an unsigned integer"))),
    }
}

fn get_sint(v: &Value, pos: Pos, what: &str) -> Result<i64, TsdlError> {
    match v {
        Value::UInt(u) if *u <= i64::MAX as u64 => Ok(*u as i64),
        Value::SInt(s) => Ok(*s),
        _ => Err(err(pos, format!("`{what}`: expecting an integer"))),
    }
}

fn get_bool(v: &Value, pos: Pos, what: &str) -> Result<bool, TsdlError> {
    match v {
        Value::UInt(u) => Ok(*u != 0),
        Value::SInt(s) => Ok(*s != 0),
        Value::Path(p) if p.len() == 1 => match p[0].as_str() {
            "true" | "TRUE" => Ok(true),
            "false" | "FALSE" => Ok(false),
            _ => Err(err(pos, format!("`{what}`: expecting a boolean"))),
        },
        _ => Err(err(pos, format!("`{what}`: expecting a boolean"))),
    }
}

fn get_text(v: &Value, pos: Pos, what: &str) -> Result<String, TsdlError> {
    v.as_text()
        .ok_or_else(|| err(pos, format!("`{what}`: expecting a string")))
}

/// Parse `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
pub fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let b = s.as_bytes();
    if b.len() != 36 {
        return None;
    }
    let mut out = [0u8; 16];
    let mut k = 0;
    let mut i = 0;
    while i < 36 {
        if matches!(i, 8 | 13 | 18 | 23) {
            if b[i] != b'-' {
                return None;
            }
            i += 1;
            continue;
        }
        let hi = (b[i] as char).to_digit(16)?;
        let lo = (b[i + 1] as char).to_digit(16)?;
        out[k] = (hi * 16 + lo) as u8;
        k += 1;
        i += 2;
    }
    Some(out)
}

fn byte_order_of(v: &Value, native: ByteOrder, pos: Pos) -> Result<ByteOrder, TsdlError> {
    let s = get_text(v, pos, "byte_order")?;
    match s.as_str() {
        "be" | "network" | "big_endian" => Ok(ByteOrder::Big),
        "le" | "little_endian" => Ok(ByteOrder::Little),
        "native" => Ok(native),
        _ => Err(err(pos, format!("invalid byte order `{s}`"))),
    }
}

impl Ctx {
    fn integer(&mut self, body: &[Entry], pos: Pos) -> Result<T, TsdlError> {
        let mut size = None;
        let mut align = None;
        let mut signed = false;
        let mut bo = self.native;
        let mut base = DisplayBase::Decimal;
        let mut text = false;
        let mut clock = None;
        for e in body {
            let Entry::Assign { lhs, value, pos } = e else {
                return Err(err(entry_pos(e), "unexpected entry in `integer` block"));
            };
            let pos = *pos;
            match lhs_name(lhs).as_str() {
                "size" => {
                    let v = get_uint(value, pos, "size")?;
                    if v == 0 || v > 64 {
                        return Err(err(pos, format!("integer size {v} is not in 1..=64")));
                    }
                    size = Some(v as u32);
                }
                "align" => {
                    let v = get_uint(value, pos, "align")?;
                    if v == 0 || !v.is_power_of_two() || v > 1 << 30 {
                        return Err(err(pos, format!("alignment {v} is not a power of two")));
                    }
                    align = Some(v as u32);
                }
                "signed" => signed = get_bool(value, pos, "signed")?,
                "byte_order" => bo = byte_order_of(value, self.native, pos)?,
                "base" => {
                    base = match value {
                        Value::UInt(2) => DisplayBase::Binary,
                        Value::UInt(8) => DisplayBase::Octal,
                        Value::UInt(10) => DisplayBase::Decimal,
                        Value::UInt(16) => DisplayBase::Hexadecimal,
                        Value::Path(p) if p.len() == 1 => match p[0].as_str() {
                            "decimal" | "dec" | "d" | "i" | "u" => DisplayBase::Decimal,
                            "hexadecimal" | "hex" | "x" | "X" | "p" => DisplayBase::Hexadecimal,
                            "octal" | "oct" | "o" => DisplayBase::Octal,
                            "binary" | "b" => DisplayBase::Binary,
                            _ => return Err(err(pos, "invalid integer base")),
                        },
                        _ => return Err(err(pos, "invalid integer base")),
                    }
                }
                "encoding" => {
                    let s = get_text(value, pos, "encoding")?;
                    text = match s.as_str() {
                        "UTF8" | "utf8" | "utf-8" | "UTF-8" | "ASCII" | "ascii" => true,
                        "none" => false,
                        _ => return Err(err(pos, format!("unknown encoding `{s}`"))),
                    };
                }
                "map" => {
                    let Value::Path(p) = value else {
                        return Err(err(pos, "`map`: expecting `clock.NAME.value`"));
                    };
                    if p.len() != 3 || p[0] != "clock" || p[2] != "value" {
                        return Err(err(pos, "`map`: expecting `clock.NAME.value`"));
                    }
                    let idx = self
                        .clocks
                        .iter()
                        .position(|c| c.name == p[1])
                        .ok_or_else(|| {
                            err(pos, format!("`map`: no clock class named `{}`", p[1]))
                        })?;
                    clock = Some(idx);
                }
                _ => {} // unknown attributes are ignored (babeltrace2 warns)
            }
        }
        let size = size.ok_or_else(|| err(pos, "integer without `size`"))?;
        let mut c = IntClass::new(size, bo, signed);
        c.align = align.unwrap_or(if size % 8 == 0 { 8 } else { 1 });
        c.base = base;
        c.text = text;
        c.mapped_clock = clock;
        Ok(T::Int(IntT {
            class: c,
            text,
            mappings: None,
        }))
    }

    fn float(&mut self, body: &[Entry], pos: Pos) -> Result<T, TsdlError> {
        let mut exp = None;
        let mut mant = None;
        let mut bo = self.native;
        let mut align = None;
        for e in body {
            let Entry::Assign { lhs, value, pos } = e else {
                return Err(err(
                    entry_pos(e),
                    "unexpected entry in `floating_point` block",
                ));
            };
            let pos = *pos;
            match lhs_name(lhs).as_str() {
                "exp_dig" => exp = Some(get_uint(value, pos, "exp_dig")?),
                "mant_dig" => mant = Some(get_uint(value, pos, "mant_dig")?),
                "byte_order" => bo = byte_order_of(value, self.native, pos)?,
                "align" => {
                    let v = get_uint(value, pos, "align")?;
                    if v == 0 || !v.is_power_of_two() || v > 1 << 30 {
                        return Err(err(pos, format!("alignment {v} is not a power of two")));
                    }
                    align = Some(v as u32);
                }
                _ => {}
            }
        }
        let (Some(exp), Some(mant)) = (exp, mant) else {
            return Err(err(pos, "floating point without `exp_dig` and `mant_dig`"));
        };
        let len = match (exp, mant) {
            (8, 24) => 32,
            (11, 53) => 64,
            _ => {
                return Err(err(
                    pos,
                    format!("floating point with exp_dig={exp}, mant_dig={mant} is not supported"),
                ))
            }
        };
        Ok(T::Float(FloatClass {
            len,
            align: align.unwrap_or(if (exp + mant) % 8 == 0 { 8 } else { 1 }),
            byte_order: bo,
            bit_order: BitOrder::default_for(bo),
        }))
    }

    fn string(&mut self, body: &[Entry]) -> Result<T, TsdlError> {
        let mut enc = StringEncoding::Utf8;
        for e in body {
            if let Entry::Assign { lhs, value, pos } = e {
                if lhs_name(lhs) == "encoding" {
                    let s = get_text(value, *pos, "encoding")?;
                    enc = match s.as_str() {
                        "UTF8" | "utf8" | "utf-8" | "UTF-8" | "ASCII" | "ascii" | "none" => {
                            StringEncoding::Utf8
                        }
                        _ => return Err(err(*pos, format!("unknown encoding `{s}`"))),
                    };
                }
            }
        }
        Ok(T::Str(enc))
    }

    /// Resolve a specifier list to a type.
    fn spec_list(&mut self, sl: &SpecList) -> Result<T, TsdlError> {
        let mut words = Vec::new();
        let mut compound = None;
        for it in &sl.items {
            match it {
                Spec::Word(w) => {
                    if w != "const" {
                        words.push(w.as_str());
                    }
                }
                other => {
                    if compound.is_some() {
                        return Err(err(sl.pos, "more than one type in a specifier list"));
                    }
                    compound = Some(other);
                }
            }
        }
        if let Some(c) = compound {
            if !words.is_empty() {
                return Err(err(
                    sl.pos,
                    format!("unexpected `{}` with a compound type", words.join(" ")),
                ));
            }
            return self.compound(c, sl.pos);
        }
        let name = words.join(" ");
        self.lookup(Ns::Alias, &name)
            .ok_or_else(|| err(sl.pos, format!("unknown type `{name}`")))
    }

    fn compound(&mut self, s: &Spec, pos: Pos) -> Result<T, TsdlError> {
        match s {
            Spec::Word(_) => unreachable!("words are handled by spec_list"),
            Spec::Integer(b) => self.integer(b, pos),
            Spec::Float(b) => self.float(b, pos),
            Spec::String(b) => self.string(b),
            Spec::Struct { name, body, align } => {
                let Some(body) = body else {
                    return self.declared(Ns::Struct, name, pos);
                };
                self.not_redeclared(Ns::Struct, name, pos)?;
                let mut min_align = 1;
                if let Some(a) = align {
                    let v = get_uint(a, pos, "align")?;
                    if v == 0 || !v.is_power_of_two() || v > 1 << 30 {
                        return Err(err(pos, format!("alignment {v} is not a power of two")));
                    }
                    min_align = v as u32;
                }
                self.push();
                let members = self.body(body, false);
                self.pop();
                let t = T::Struct(StructT {
                    members: members?,
                    min_align,
                });
                if let Some(n) = name {
                    self.register(Ns::Struct, n, &t, pos)?;
                }
                Ok(t)
            }
            Spec::Variant { name, tag, body } => {
                let mut t = match body {
                    None => self.declared(Ns::Variant, name, pos)?,
                    Some(body) => {
                        self.not_redeclared(Ns::Variant, name, pos)?;
                        self.push();
                        let options = self.body(body, true);
                        self.pop();
                        let t = T::Variant(VariantT {
                            tag: None,
                            options: options?,
                        });
                        if let Some(n) = name {
                            self.register(Ns::Variant, n, &t, pos)?;
                        }
                        t
                    }
                };
                if let (Some(tag), T::Variant(v)) = (tag, &mut t) {
                    v.tag = Some((tag.join("."), pos));
                }
                Ok(t)
            }
            Spec::Enum {
                name,
                container,
                body,
            } => {
                let Some(body) = body else {
                    return self.declared(Ns::Enum, name, pos);
                };
                self.not_redeclared(Ns::Enum, name, pos)?;
                let ct = match container {
                    Some(c) => self.spec_list(c)?,
                    None => self.lookup(Ns::Alias, "int").ok_or_else(|| {
                        err(
                            pos,
                            "enumeration without a container type and no `int` type",
                        )
                    })?,
                };
                let T::Int(mut it) = ct else {
                    return Err(err(pos, "enumeration container is not an integer"));
                };
                it.mappings = Some(enumerators(body)?);
                let t = T::Int(it);
                if let Some(n) = name {
                    self.register(Ns::Enum, n, &t, pos)?;
                }
                Ok(t)
            }
        }
    }

    /// Apply a declarator to a base type: arrays and sequences.
    fn declarate(&mut self, base: T, d: &Declarator) -> Result<T, TsdlError> {
        let mut t = base;
        // `x[a][b]` is an array of `a` arrays of `b` elements: wrap from the
        // innermost (last) dimension outwards.
        for dim in d.dims.iter().rev() {
            t = match dim {
                Value::UInt(n) => T::Array(Box::new(t), *n),
                Value::Path(p) if p.len() == 2 && p[0] == "env" => {
                    let v = self
                        .env
                        .iter()
                        .find(|(k, _)| *k == p[1])
                        .map(|(_, v)| v.clone());
                    match v {
                        Some(EnvValue::Int(n)) if n >= 0 => T::Array(Box::new(t), n as u64),
                        _ => {
                            return Err(err(
                                d.pos,
                                format!(
                                    "array length `env.{}` is not a non-negative integer",
                                    p[1]
                                ),
                            ))
                        }
                    }
                }
                Value::Path(p) => T::Seq(Box::new(t), p.join("."), d.pos),
                _ => return Err(err(d.pos, "invalid array length")),
            };
        }
        if d.pointers > 0 {
            if let T::Int(i) = &mut t {
                i.class.base = DisplayBase::Hexadecimal;
            }
        }
        Ok(t)
    }

    /// A structure or variant body: members (or options) in order.
    fn body(&mut self, body: &[Entry], variant: bool) -> Result<Vec<Named>, TsdlError> {
        let mut out: Vec<Named> = Vec::new();
        for e in body {
            match e {
                Entry::Decl { spec, decls, pos } => {
                    if decls.is_empty() {
                        // A bare type declaration (`struct foo {...};`).
                        self.spec_list(spec)?;
                        continue;
                    }
                    for d in decls {
                        let base = self.spec_list(spec)?;
                        let t = self.declarate(base, d)?;
                        let Some(name) = &d.name else {
                            return Err(err(*pos, "field without a name"));
                        };
                        if out.iter().any(|m| m.orig == *name) {
                            let what = if variant { "option" } else { "field" };
                            return Err(err(d.pos, format!("duplicate {what} `{name}`")));
                        }
                        out.push(Named::new(name, t));
                    }
                }
                other => self.type_decl(other)?,
            }
        }
        Ok(out)
    }

    /// The entries of a `trace`, `stream` or `event` block, in a scope of
    /// their own: `assigned` gets each assignment (its left-hand side
    /// joined with dots), type declarations are declared in the scope.
    fn block(
        &mut self,
        body: &[Entry],
        mut assigned: impl FnMut(&mut Self, &str, Assigned<'_>, Pos) -> Result<(), TsdlError>,
    ) -> Result<(), TsdlError> {
        self.push();
        let r = (|| {
            for e in body {
                match e {
                    Entry::Assign { lhs, value, pos } => {
                        assigned(self, &lhs_name(lhs), Assigned::Value(value), *pos)?
                    }
                    Entry::TypeAssign {
                        lhs,
                        spec,
                        decl,
                        pos,
                    } => assigned(self, &lhs_name(lhs), Assigned::Type(spec, decl), *pos)?,
                    other => self.type_decl(other)?,
                }
            }
            Ok(())
        })();
        self.pop();
        r
    }

    /// `typedef`, `typealias` or a bare type declaration.
    fn type_decl(&mut self, e: &Entry) -> Result<(), TsdlError> {
        match e {
            Entry::Typedef { spec, decls, .. } => {
                for d in decls {
                    let base = self.spec_list(spec)?;
                    let t = self.declarate(base, d)?;
                    if matches!(&t, T::Variant(v) if v.tag.is_none()) {
                        return Err(err(d.pos, "typedef of an untagged variant"));
                    }
                    let Some(name) = &d.name else {
                        return Err(err(d.pos, "typedef without a name"));
                    };
                    self.register(Ns::Alias, name, &t, d.pos)?;
                }
                Ok(())
            }
            Entry::Typealias {
                target,
                target_decl,
                alias,
                alias_decl,
                pos,
            } => {
                let base = self.spec_list(target)?;
                let t = self.declarate(base, target_decl)?;
                if matches!(&t, T::Variant(v) if v.tag.is_none()) {
                    return Err(err(*pos, "typealias of an untagged variant"));
                }
                let mut name = alias.join(" ");
                for _ in 0..alias_decl.pointers {
                    name.push_str(" *");
                }
                self.register(Ns::Alias, &name, &t, *pos)
            }
            Entry::Decl { spec, decls, pos } => {
                if !decls.is_empty() {
                    return Err(err(*pos, "unexpected field declaration here"));
                }
                self.spec_list(spec)?;
                Ok(())
            }
            other => Err(err(entry_pos(other), "unexpected entry here")),
        }
    }

    fn scope_type(
        &mut self,
        spec: &SpecList,
        decl: &Option<Declarator>,
        pos: Pos,
    ) -> Result<StructT, TsdlError> {
        let mut t = self.spec_list(spec)?;
        if let Some(d) = decl {
            t = self.declarate(t, d)?;
        }
        match t {
            T::Struct(s) => Ok(s),
            _ => Err(err(pos, "a scope's type must be a structure")),
        }
    }
}

fn entry_pos(e: &Entry) -> Pos {
    match e {
        Entry::Assign { pos, .. }
        | Entry::TypeAssign { pos, .. }
        | Entry::Decl { pos, .. }
        | Entry::Typedef { pos, .. }
        | Entry::Typealias { pos, .. }
        | Entry::Block { pos, .. } => *pos,
    }
}

fn enumerators(body: &[Enumerator]) -> Result<Vec<(String, u64, u64)>, TsdlError> {
    let mut out = Vec::new();
    let mut next: u64 = 0;
    for e in body {
        let raw = |v: &Value| -> Result<u64, TsdlError> {
            match v {
                Value::UInt(u) => Ok(*u),
                Value::SInt(s) => Ok(*s as u64),
                _ => Err(err(
                    e.pos,
                    format!("enumerator `{}`: expecting an integer", e.label),
                )),
            }
        };
        let (lo, hi) = match e.values.len() {
            0 => (next, next),
            1 => {
                let v = raw(&e.values[0])?;
                (v, v)
            }
            _ => (raw(&e.values[0])?, raw(&e.values[1])?),
        };
        next = hi.wrapping_add(1);
        out.push((e.label.clone(), lo, hi));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::parse_text;
    use crate::ir::*;

    const HEAD: &str = "typealias integer { size = 8; } := u8;
        typealias integer { size = 32; map = clock.c.value; } := clk32;
        clock { name = c; freq = 1000; offset = 2500; };
        trace { major = 1; minor = 8; byte_order = le;
          packet.header := struct { u8 magic; u8 uuid[16]; u8 stream_id; }; };
        env { hostname = \"h\"; n = -3; };\n";

    fn payload(tc: &TraceClass) -> &StructClass {
        tc.stream_classes[0].event_classes[0]
            .payload
            .as_ref()
            .unwrap()
    }

    #[test]
    fn names_paths_text_and_roles() {
        let tc = parse_text(
            format!(
                "{HEAD} struct s {{ u8 __x; }};
                 stream {{ id = 0; packet.context := struct {{ clk32 timestamp_begin; clk32 timestamp_end; u8 packet_size; }};
                   event.header := struct {{ u8 id; clk32 timestamp; }}; }};
                 event {{ name = e; stream_id = 0; fields := struct {{
                   u8 _len; integer {{ size = 8; encoding = UTF8; }} _txt[_len];
                   struct s a; u8 arr[2][3]; }}; }};"
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(tc.clocks[0].offset_seconds, 2);
        assert_eq!(tc.clocks[0].offset_cycles, 500);
        assert_eq!(tc.env("n"), Some(&EnvValue::Int(-3)));
        let sc = &tc.stream_classes[0];
        assert_eq!(sc.default_clock, Some(0));
        let pc = sc.packet_context.as_ref().unwrap();
        assert!(pc.members[0]
            .class
            .roles()
            .has(Roles::DEFAULT_CLOCK_TIMESTAMP));
        assert!(!pc.members[1]
            .class
            .roles()
            .has(Roles::DEFAULT_CLOCK_TIMESTAMP));
        assert!(pc.members[2].class.roles().has(Roles::PACKET_TOTAL_LENGTH));
        let eh = sc.event_header.as_ref().unwrap();
        assert!(eh.members[0].class.roles().has(Roles::EVENT_CLASS_ID));
        let ph = tc.packet_header.as_ref().unwrap();
        assert!(ph.members[1].class.roles().has(Roles::METADATA_STREAM_UUID));
        let p = payload(&tc);
        assert_eq!(p.members[0].name, "len");
        let FieldClass::String(s) = &p.members[1].class else {
            panic!("text sequence: {:?}", p.members[1])
        };
        assert_eq!(
            s.kind,
            StringKind::Sized(Length::Dynamic(FieldLocation::new(
                Scope::EventPayload,
                vec!["len".into()]
            )))
        );
        // Registered and used through `struct s`: two copies, two more
        // underscores gone.
        let FieldClass::Struct(a) = &p.members[2].class else {
            panic!()
        };
        assert_eq!(a.members[0].name, "x");
        let FieldClass::Array(outer) = &p.members[3].class else {
            panic!()
        };
        assert_eq!(outer.length, Length::Static(2));
        assert!(matches!(&*outer.element, FieldClass::Array(i) if i.length == Length::Static(3)));
    }

    #[test]
    fn errors() {
        let bad = [
            "trace { major = 1; minor = 8; };",
            "trace { major = 1; minor = 8; byte_order = le; }; event { name = e; fields := struct { nope x; }; };",
            "typealias integer { size = 8; } := u8; trace { major = 1; minor = 8; byte_order = le; };
             event { name = e; fields := struct { u8 s[len]; u8 len; }; };",
            "typealias integer { size = 65; } := u8; trace { major = 1; minor = 8; byte_order = le; };",
        ];
        for b in bad {
            let e = parse_text(b.as_bytes()).unwrap_err();
            assert!(e.pos.line >= 1 || e.msg.contains("byte_order"), "{b}: {e}");
        }
    }
}
