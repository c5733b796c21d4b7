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

// ---------------------------------------------------------------------
// Top level

struct StreamT {
    id: u64,
    pc: Option<StructT>,
    eh: Option<StructT>,
    ec: Option<StructT>,
    events: Vec<EventT>,
    pos: Pos,
}

impl StreamT {
    /// A stream class with nothing declared yet (ID 0).
    fn new(pos: Pos) -> Self {
        StreamT {
            id: 0,
            pc: None,
            eh: None,
            ec: None,
            events: Vec::new(),
            pos,
        }
    }
}

struct EventT {
    id: u64,
    name: String,
    log_level: Option<i64>,
    emf_uri: Option<String>,
    sc: Option<StructT>,
    payload: Option<StructT>,
}

/// Lower parsed TSDL to a trace class.
pub fn lower(entries: &[Entry]) -> Result<TraceClass, TsdlError> {
    // The native byte order comes first.
    let mut native = None;
    let mut trace_block = None;
    for (body, pos) in blocks(entries, BlockKind::Trace) {
        if trace_block.is_some() {
            return Err(err(pos, "more than one `trace` block"));
        }
        trace_block = Some((body, pos));
        for a in body {
            if let Entry::Assign { lhs, value, pos } = a {
                if lhs_name(lhs) == "byte_order" {
                    let bo = byte_order_of(value, ByteOrder::Little, *pos)?;
                    let s = value.as_text().unwrap_or_default();
                    if s == "native" {
                        return Err(err(*pos, "the trace byte order cannot be `native`"));
                    }
                    native = Some(bo);
                }
            }
        }
    }
    let Some((trace_body, trace_pos)) = trace_block else {
        return Err(err(Pos::default(), "missing `trace` block"));
    };
    let native = native.ok_or_else(|| err(trace_pos, "missing `byte_order` in `trace` block"))?;
    let mut cx = Ctx {
        scopes: vec![DeclScope::default()],
        native,
        clocks: Vec::new(),
        env: Vec::new(),
        is_lttng: false,
    };
    let mut tc = TraceClass::new(CtfVersion::Ctf1);
    tc.native_byte_order = native;

    for (body, _) in blocks(entries, BlockKind::Env) {
        cx.env_block(body)?;
    }
    for (body, pos) in blocks(entries, BlockKind::Clock) {
        cx.clock_block(body, pos)?;
    }
    for e in entries {
        if !matches!(e, Entry::Block { .. }) {
            cx.type_decl(e)?;
        }
    }
    // trace
    let mut packet_header = None;
    {
        let mut seen = (false, false, false);
        cx.block(trace_body, |cx, lhs, assigned, pos| {
            match (lhs, assigned) {
                ("major", Assigned::Value(value)) => {
                    if get_uint(value, pos, "major")? != 1 {
                        return Err(err(pos, "trace major version must be 1"));
                    }
                    seen.0 = true;
                }
                ("minor", Assigned::Value(value)) => {
                    if get_uint(value, pos, "minor")? != 8 {
                        return Err(err(pos, "trace minor version must be 8"));
                    }
                    seen.1 = true;
                }
                ("uuid", Assigned::Value(value)) => {
                    let s = get_text(value, pos, "uuid")?;
                    tc.uuid = Some(parse_uuid(&s).ok_or_else(|| err(pos, "malformed UUID"))?);
                }
                ("byte_order", Assigned::Value(_)) => seen.2 = true,
                ("packet.header", Assigned::Type(spec, decl)) => {
                    if packet_header.is_some() {
                        return Err(err(pos, "duplicate `packet.header`"));
                    }
                    packet_header = Some(cx.scope_type(spec, decl, pos)?);
                }
                _ => {}
            }
            Ok(())
        })?;
        if !seen.0 || !seen.1 {
            return Err(err(
                trace_pos,
                "missing `major` or `minor` in `trace` block",
            ));
        }
    }
    // streams
    let mut streams: Vec<StreamT> = Vec::new();
    for (body, pos) in blocks(entries, BlockKind::Stream) {
        let st = cx.stream_block(body, pos)?;
        match st.0 {
            Some(id) => {
                let has = packet_header
                    .as_ref()
                    .is_some_and(|h| has_stream_id(&h.members));
                if !has {
                    return Err(err(
                        pos,
                        "stream class with an `id` but no `stream_id` field in the packet header",
                    ));
                }
                if streams.iter().any(|s| s.id == id) {
                    return Err(err(pos, format!("duplicate stream class ID {id}")));
                }
                streams.push(StreamT { id, ..st.1 });
            }
            None => {
                if !streams.is_empty() {
                    return Err(err(pos, "only one stream class may lack an `id`"));
                }
                streams.push(StreamT { id: 0, ..st.1 });
            }
        }
    }
    // events
    for (body, pos) in blocks(entries, BlockKind::Event) {
        let (ev, sid) = cx.event_block(body, pos)?;
        let si = match sid {
            Some(id) => streams
                .iter()
                .position(|s| s.id == id)
                .ok_or_else(|| err(pos, format!("event refers to unknown stream class {id}")))?,
            None => match streams.len() {
                0 => {
                    streams.push(StreamT::new(pos));
                    0
                }
                1 => 0,
                _ => {
                    return Err(err(
                        pos,
                        "event without `stream_id` in a trace with several stream classes",
                    ))
                }
            },
        };
        let (ev, id_set) = ev;
        let mut ev = ev;
        if !id_set {
            if !streams[si].events.is_empty() {
                return Err(err(
                    pos,
                    "only one event class per stream class may lack an `id`",
                ));
            }
            ev.id = 0;
        }
        if streams[si].events.iter().any(|x| x.id == ev.id) {
            return Err(err(pos, format!("duplicate event class ID {}", ev.id)));
        }
        streams[si].events.push(ev);
    }

    tc.environment = cx.env.clone();
    tc.clocks = cx.clocks.clone();
    finish(tc, packet_header, streams)
}

impl Ctx {
    fn env_block(&mut self, body: &[Entry]) -> Result<(), TsdlError> {
        for e in body {
            let Entry::Assign { lhs, value, pos } = e else {
                return Err(err(entry_pos(e), "unexpected entry in `env` block"));
            };
            let key = lhs_name(lhs);
            let v = match value {
                Value::Str(s) => EnvValue::Str(s.clone()),
                Value::Path(p) => EnvValue::Str(p.join(".")),
                Value::UInt(u) => EnvValue::Int(*u as i64),
                Value::SInt(s) => EnvValue::Int(*s),
            };
            if key == "tracer_name" {
                if let EnvValue::Str(s) = &v {
                    if s.starts_with("lttng") {
                        self.is_lttng = true;
                    }
                }
            }
            let _ = pos;
            self.env.push((key, v));
        }
        Ok(())
    }

    fn clock_block(&mut self, body: &[Entry], pos: Pos) -> Result<(), TsdlError> {
        let mut c = ClockClass::new("");
        let mut name = None;
        let mut off_s: i64 = 0;
        let mut off_c: u64 = 0;
        for e in body {
            let Entry::Assign { lhs, value, pos } = e else {
                return Err(err(entry_pos(e), "unexpected entry in `clock` block"));
            };
            let pos = *pos;
            match lhs_name(lhs).as_str() {
                "name" => name = Some(get_text(value, pos, "name")?),
                "uuid" => {
                    let s = get_text(value, pos, "uuid")?;
                    c.uuid = Some(parse_uuid(&s).ok_or_else(|| err(pos, "malformed UUID"))?);
                }
                "description" => c.description = Some(get_text(value, pos, "description")?),
                "freq" => {
                    let f = get_uint(value, pos, "freq")?;
                    if f == 0 || f == u64::MAX {
                        return Err(err(pos, format!("invalid clock frequency {f}")));
                    }
                    c.frequency = f;
                }
                "precision" => c.precision = Some(get_uint(value, pos, "precision")?),
                "offset_s" => off_s = get_sint(value, pos, "offset_s")?,
                "offset" => off_c = get_uint(value, pos, "offset")?,
                "absolute" => c.origin_is_unix_epoch = get_bool(value, pos, "absolute")?,
                _ => {}
            }
        }
        let name = name.ok_or_else(|| err(pos, "clock without a `name`"))?;
        if self.clocks.iter().any(|k| k.name == name) {
            return Err(err(pos, format!("duplicate clock class `{name}`")));
        }
        if self.is_lttng && name == "monotonic" {
            c.origin_is_unix_epoch = true;
        }
        if off_c >= c.frequency {
            let s = off_c / c.frequency;
            off_s = off_s.wrapping_add(s as i64);
            off_c -= s * c.frequency;
        }
        c.name = name;
        c.offset_seconds = off_s;
        c.offset_cycles = off_c;
        self.clocks.push(c);
        Ok(())
    }

    /// Map unmapped integers called `field` (at any depth) to the only
    /// clock class.
    fn auto_map(&mut self, s: &mut StructT, field: &str, pos: Pos) -> Result<(), TsdlError> {
        fn walk(cx: &mut Ctx, named: &mut [Named], field: &str, pos: Pos) -> Result<(), TsdlError> {
            for n in named {
                if n.name == field {
                    if let T::Int(i) = &mut n.t {
                        if i.class.mapped_clock.is_none() {
                            let idx = match cx.clocks.len() {
                                0 => {
                                    cx.clocks.push(ClockClass::new("default"));
                                    0
                                }
                                1 => 0,
                                _ => {
                                    return Err(err(
                                        pos,
                                        format!("`{field}` is not mapped to a clock and there are several clock classes"),
                                    ))
                                }
                            };
                            i.class.mapped_clock = Some(idx);
                        }
                    }
                }
                match &mut n.t {
                    T::Struct(s) => walk(cx, &mut s.members, field, pos)?,
                    T::Variant(v) => walk(cx, &mut v.options, field, pos)?,
                    _ => {}
                }
            }
            Ok(())
        }
        walk(self, &mut s.members, field, pos)
    }

    #[allow(clippy::type_complexity)]
    fn stream_block(
        &mut self,
        body: &[Entry],
        pos: Pos,
    ) -> Result<(Option<u64>, StreamT), TsdlError> {
        let mut id = None;
        let mut st = StreamT::new(pos);
        self.block(body, |cx, lhs, assigned, pos| {
            match (lhs, assigned) {
                ("id", Assigned::Value(value)) => id = Some(get_uint(value, pos, "id")?),
                ("event.header", Assigned::Type(spec, decl)) => {
                    let mut s = cx.scope_type(spec, decl, pos)?;
                    cx.auto_map(&mut s, "timestamp", pos)?;
                    st.eh = Some(s);
                }
                ("event.context", Assigned::Type(spec, decl)) => {
                    st.ec = Some(cx.scope_type(spec, decl, pos)?)
                }
                ("packet.context", Assigned::Type(spec, decl)) => {
                    let mut s = cx.scope_type(spec, decl, pos)?;
                    cx.auto_map(&mut s, "timestamp_begin", pos)?;
                    cx.auto_map(&mut s, "timestamp_end", pos)?;
                    st.pc = Some(s);
                }
                _ => {}
            }
            Ok(())
        })?;
        Ok((id, st))
    }

    #[allow(clippy::type_complexity)]
    fn event_block(
        &mut self,
        body: &[Entry],
        pos: Pos,
    ) -> Result<((EventT, bool), Option<u64>), TsdlError> {
        let mut ev = EventT {
            id: 0,
            name: String::new(),
            log_level: None,
            emf_uri: None,
            sc: None,
            payload: None,
        };
        let mut name = None;
        let mut id_set = false;
        let mut sid = None;
        self.block(body, |cx, lhs, assigned, pos| {
            match (lhs, assigned) {
                ("name", Assigned::Value(value)) if name.is_none() => {
                    name = Some(get_text(value, pos, "name")?);
                }
                ("id", Assigned::Value(value)) => {
                    let v = get_uint(value, pos, "id")?;
                    if v > i64::MAX as u64 {
                        return Err(err(pos, "event class ID too large"));
                    }
                    ev.id = v;
                    id_set = true;
                }
                ("stream_id", Assigned::Value(value)) => {
                    sid = Some(get_uint(value, pos, "stream_id")?)
                }
                ("loglevel", Assigned::Value(value)) => {
                    let v = get_uint(value, pos, "loglevel")?;
                    if v <= 14 {
                        ev.log_level = Some(v as i64);
                    }
                }
                ("model.emf.uri", Assigned::Value(value)) => {
                    let s = get_text(value, pos, "model.emf.uri")?;
                    if !s.is_empty() {
                        ev.emf_uri = Some(s);
                    }
                }
                ("context", Assigned::Type(spec, decl)) => {
                    ev.sc = Some(cx.scope_type(spec, decl, pos)?)
                }
                ("fields", Assigned::Type(spec, decl)) => {
                    ev.payload = Some(cx.scope_type(spec, decl, pos)?)
                }
                _ => {}
            }
            Ok(())
        })?;
        ev.name = name.ok_or_else(|| err(pos, "event without a `name`"))?;
        Ok(((ev, id_set), sid))
    }
}

// ---------------------------------------------------------------------
// Meanings, clocks, text arrays, resolution, conversion

fn int_member<'a>(s: &'a mut StructT, name: &str) -> Option<&'a mut IntT> {
    s.members
        .iter_mut()
        .find(|m| m.name == name)
        .and_then(|m| match &mut m.t {
            T::Int(i) => Some(i),
            _ => None,
        })
}

fn set_role(s: &mut Option<StructT>, name: &str, r: Roles) {
    if let Some(s) = s {
        if let Some(i) = int_member(s, name) {
            i.class.roles |= r;
        }
    }
}

/// Packet header `stream_id` at any depth: every integer member named
/// `stream_id`, in nested structures too (through arrays, sequences and
/// variant options, which are not named themselves), selects the data
/// stream class, the last one decoded winning. CTF 1.8 names "the
/// `stream_id` packet header field" without saying it must be a direct
/// member; yactfr gives the role at any depth (its conformance case with
/// several such fields is valid). babeltrace2 2.0.4 reads only the
/// top-level member (see the README's deliberate differences).
fn set_stream_id_roles(named: &mut [Named]) {
    fn walk(t: &mut T) {
        match t {
            T::Struct(s) => set_stream_id_roles(&mut s.members),
            T::Variant(v) => v.options.iter_mut().for_each(|o| walk(&mut o.t)),
            T::Array(e, _) | T::Seq(e, _, _) => walk(e),
            _ => {}
        }
    }
    for n in named {
        match &mut n.t {
            T::Int(i) if n.name == "stream_id" => i.class.roles |= Roles::DATA_STREAM_CLASS_ID,
            t => walk(t),
        }
    }
}

/// Whether a packet header has a `stream_id` integer at any depth (see
/// [`set_stream_id_roles`]).
fn has_stream_id(named: &[Named]) -> bool {
    fn walk(t: &T) -> bool {
        match t {
            T::Struct(s) => has_stream_id(&s.members),
            T::Variant(v) => v.options.iter().any(|o| walk(&o.t)),
            T::Array(e, _) | T::Seq(e, _, _) => walk(e),
            _ => false,
        }
    }
    named.iter().any(|n| match &n.t {
        T::Int(_) => n.name == "stream_id",
        t => walk(t),
    })
}

/// Event header `id` at any depth (variant options and array elements
/// themselves are not named, so they do not match).
fn set_id_roles(named: &mut [Named]) {
    for n in named {
        match &mut n.t {
            T::Int(i) if n.name == "id" => i.class.roles |= Roles::EVENT_CLASS_ID,
            T::Struct(s) => set_id_roles(&mut s.members),
            T::Variant(v) => {
                for o in &mut v.options {
                    match &mut o.t {
                        T::Struct(s) => set_id_roles(&mut s.members),
                        T::Variant(_) => set_id_roles(std::slice::from_mut(o)),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

/// Every integer mapped to a clock updates the default clock.
fn clock_roles(t: &mut T) {
    match t {
        T::Int(i) if i.class.mapped_clock.is_some() => {
            i.class.roles |= Roles::DEFAULT_CLOCK_TIMESTAMP;
        }
        T::Struct(s) => s.members.iter_mut().for_each(|m| clock_roles(&mut m.t)),
        T::Variant(v) => v.options.iter_mut().for_each(|m| clock_roles(&mut m.t)),
        T::Array(e, _) | T::Seq(e, _, _) => clock_roles(e),
        _ => {}
    }
}

fn find_clock(t: &T, found: &mut Option<usize>) -> Result<(), String> {
    match t {
        T::Int(i) => {
            if let Some(c) = i.class.mapped_clock {
                if let Some(f) = *found {
                    if f != c {
                        return Err(
                            "integers of one stream class are mapped to different clock classes"
                                .into(),
                        );
                    }
                }
                *found = Some(c);
            }
        }
        T::Struct(s) => {
            for m in &s.members {
                find_clock(&m.t, found)?;
            }
        }
        T::Variant(v) => {
            for m in &v.options {
                find_clock(&m.t, found)?;
            }
        }
        T::Array(e, _) | T::Seq(e, _, _) => find_clock(e, found)?,
        _ => {}
    }
    Ok(())
}

fn struct_as_t(s: &Option<StructT>) -> Option<T> {
    s.as_ref().map(|s| T::Struct(s.clone()))
}

/// The six scope roots visible from one event class.
struct Roots<'a> {
    roots: [Option<&'a T>; 6],
}

/// One frame of the resolution stack: a compound and the index of the
/// child being visited (`usize::MAX` for an array element).
type Frame<'a> = (&'a T, usize);

const ARRAY_IDX: usize = usize::MAX;

fn child_by_orig<'a>(t: &'a T, name: &str) -> Option<(usize, &'a T)> {
    let named = match t {
        T::Struct(s) => &s.members,
        T::Variant(v) => &v.options,
        _ => return None,
    };
    named
        .iter()
        .enumerate()
        .find(|(_, m)| m.orig == name)
        .map(|(i, m)| (i, &m.t))
}

/// One way `tokens` reach a field from a compound: the index path (with
/// `ARRAY_IDX` for array elements), the positions of that path where a
/// variant was crossed without naming one of its options, and the target.
type Reach<'a> = (Vec<usize>, Vec<usize>, &'a T);

/// Every field `tokens` reach from `t`. A variant whose options do not
/// include the next token is crossed into each of its options, as yactfr
/// resolves `outer.len` where each option of variant `outer` has its own
/// `len` (at another place, of another type): one target per option, and
/// none if an option has no such field (the length or selector would not
/// be known after that option). `src_index` bounds the first token to the
/// children of `t` before the source.
fn tokens_to_path<'a>(tokens: &[&str], t: &'a T, src_index: usize) -> Vec<Reach<'a>> {
    let mut out = Vec::new();
    reach(
        tokens,
        t,
        src_index,
        &mut Vec::new(),
        &mut Vec::new(),
        &mut out,
        0,
    );
    out
}

/// Crossed variants deeper than this are not followed (a bound on the
/// work of a metadata text of nested variants).
const MAX_REACH_DEPTH: usize = 64;

/// Targets of one location beyond this are refused (the location is not
/// resolved): each is a path through every variant crossed.
const MAX_REACHED: usize = 1024;

fn reach<'a>(
    tokens: &[&str],
    t: &'a T,
    src_index: usize,
    path: &mut Vec<usize>,
    implicit: &mut Vec<usize>,
    out: &mut Vec<Reach<'a>>,
    depth: usize,
) -> bool {
    if tokens.is_empty() {
        // (nested variants multiply the targets: a bound on the work)
        if out.len() >= MAX_REACHED {
            return false;
        }
        out.push((path.clone(), implicit.clone(), t));
        return true;
    }
    match t {
        T::Array(e, _) | T::Seq(e, _, _) => {
            path.push(ARRAY_IDX);
            let ok = reach(tokens, e, usize::MAX, path, implicit, out, depth);
            path.pop();
            ok
        }
        T::Variant(v)
            if src_index == usize::MAX
                && !v.options.is_empty()
                && !v.options.iter().any(|o| o.orig == tokens[0]) =>
        {
            if depth >= MAX_REACH_DEPTH {
                return false;
            }
            let before = out.len();
            for (i, o) in v.options.iter().enumerate() {
                implicit.push(path.len());
                path.push(i);
                let ok = reach(tokens, &o.t, usize::MAX, path, implicit, out, depth + 1);
                path.pop();
                implicit.pop();
                if !ok {
                    out.truncate(before);
                    return false;
                }
            }
            true
        }
        _ => {
            let Some((i, c)) = child_by_orig(t, tokens[0]) else {
                return false;
            };
            if i > src_index {
                return false;
            }
            path.push(i);
            let ok = reach(&tokens[1..], c, usize::MAX, path, implicit, out, depth);
            path.pop();
            ok
        }
    }
}

const PREFIXES: [(&str, usize); 6] = [
    ("trace.packet.header.", 3),
    ("stream.packet.context.", 3),
    ("stream.event.header.", 3),
    ("stream.event.context.", 3),
    ("event.context.", 2),
    ("event.fields.", 2),
];

/// Names of an index path (for the IR location), but for the variants
/// crossed at the positions `implicit` (the decoder crosses a variant
/// whose options do not include the next name into each of them).
fn path_names(root: &T, path: &[usize], implicit: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    let mut t = root;
    for (k, &i) in path.iter().enumerate() {
        if implicit.contains(&k) {
            if let T::Variant(v) = t {
                t = &v.options[i].t;
                continue;
            }
        }
        match t {
            T::Array(e, _) | T::Seq(e, _, _) => t = e,
            T::Struct(s) => {
                out.push(s.members[i].name.clone());
                t = &s.members[i].t;
            }
            T::Variant(v) => {
                out.push(v.options[i].name.clone());
                t = &v.options[i].t;
            }
            _ => break,
        }
    }
    out
}

struct Resolved<'a> {
    loc: FieldLocation,
    /// The fields the location reaches (one per option of each variant
    /// crossed without naming an option).
    targets: Vec<&'a T>,
}

fn resolve<'a>(
    pathstr: &str,
    pos: Pos,
    scope: Scope,
    stack: &[Frame<'a>],
    roots: &Roots<'a>,
) -> Result<Resolved<'a>, TsdlError> {
    let fail = |why: &str| err(pos, format!("cannot resolve `{pathstr}`: {why}"));
    let tokens: Vec<&str> = pathstr.split('.').collect();
    if tokens.iter().any(|t| t.is_empty()) {
        return Err(fail("empty path element"));
    }
    let abs = PREFIXES
        .iter()
        .enumerate()
        .find(|(_, (p, _))| pathstr.starts_with(p));
    let (tscope, reached) = if let Some((si, (_, n))) = abs {
        let tscope = Scope::ALL[si];
        let root = roots.roots[si].ok_or_else(|| fail("that scope has no field class"))?;
        let r = tokens_to_path(&tokens[*n..], root, usize::MAX);
        if r.is_empty() {
            return Err(fail(
                "no such field (in every option of the variants it crosses)",
            ));
        }
        (tscope, r)
    } else {
        let mut found = Vec::new();
        for pi in (0..stack.len()).rev() {
            let (parent, idx) = stack[pi];
            let r = tokens_to_path(&tokens, parent, idx);
            if !r.is_empty() {
                let head: Vec<usize> = stack[..pi].iter().map(|f| f.1).collect();
                let shift = head.len();
                for (tail, implicit, t) in r {
                    let mut p = head.clone();
                    p.extend(tail);
                    let implicit = implicit.into_iter().map(|k| k + shift).collect();
                    found.push((p, implicit, t));
                }
                break;
            }
        }
        if found.is_empty() {
            return Err(fail("no such field before it"));
        }
        (scope, found)
    };
    if tscope > scope {
        return Err(fail("the target is in a later scope"));
    }
    for (path, _, _) in &reached {
        if path.is_empty() {
            return Err(fail("the target is a scope"));
        }
        if tscope == scope {
            let ctx: Vec<usize> = stack.iter().map(|f| f.1).collect();
            let mut lca = 0;
            loop {
                if lca == path.len() || lca == ctx.len() {
                    return Err(fail("the target contains the source"));
                }
                if path[lca] != ctx[lca] {
                    break;
                }
                lca += 1;
            }
            if path[lca] >= ctx[lca] {
                return Err(fail("the target does not come before the source"));
            }
        }
    }
    let root = roots.roots[tscope as usize].ok_or_else(|| fail("no root"))?;
    let (p0, i0, _) = &reached[0];
    Ok(Resolved {
        loc: FieldLocation::new(tscope, path_names(root, p0, i0)),
        targets: reached.iter().map(|r| r.2).collect(),
    })
}

fn int_ranges(raw: &[(String, u64, u64)], signed: bool, label: &str) -> Vec<IntRange> {
    raw.iter()
        .filter(|(l, _, _)| l == label)
        .map(|(_, lo, hi)| {
            if signed {
                IntRange::new(*lo as i64 as i128, *hi as i64 as i128)
            } else {
                IntRange::new(*lo as i128, *hi as i128)
            }
        })
        .collect()
}

fn to_mappings(raw: &[(String, u64, u64)], signed: bool) -> Vec<Mapping> {
    let mut out: Vec<Mapping> = Vec::new();
    for (l, lo, hi) in raw {
        let r = if signed {
            IntRange::new(*lo as i64 as i128, *hi as i64 as i128)
        } else {
            IntRange::new(*lo as i128, *hi as i128)
        };
        match out.iter_mut().find(|m| m.name == *l) {
            Some(m) => m.ranges.push(r),
            None => out.push(Mapping {
                name: l.clone(),
                ranges: vec![r],
            }),
        }
    }
    out
}

/// Whether an array/sequence element makes it a string (8-bit,
/// byte-aligned integer with a text encoding).
fn is_text_elem(e: &T) -> bool {
    matches!(e, T::Int(i) if i.text && i.class.len == 8 && i.class.align == 8)
}

struct Conv<'a> {
    scope: Scope,
    roots: Roots<'a>,
}

impl<'a> Conv<'a> {
    /// An array or sequence `t` of `length` elements `e`; of text
    /// elements, a string.
    fn array(
        &self,
        t: &'a T,
        e: &'a T,
        length: Length,
        stack: &mut Vec<Frame<'a>>,
    ) -> Result<FieldClass, TsdlError> {
        if is_text_elem(e) {
            return Ok(FieldClass::String(StringClass {
                kind: StringKind::Sized(length),
                encoding: StringEncoding::Utf8,
            }));
        }
        Ok(FieldClass::Array(ArrayClass {
            element: Box::new(self.conv_child(t, ARRAY_IDX, e, stack)?),
            length,
            min_align: 1,
            roles: Roles::NONE,
        }))
    }

    /// The child `i` of the compound `t` (`ARRAY_IDX`: its element),
    /// converted with `t` on the resolution stack.
    fn conv_child(
        &self,
        t: &'a T,
        i: usize,
        child: &'a T,
        stack: &mut Vec<Frame<'a>>,
    ) -> Result<FieldClass, TsdlError> {
        stack.push((t, i));
        let c = self.conv(child, stack);
        stack.pop();
        c
    }

    fn conv(&self, t: &'a T, stack: &mut Vec<Frame<'a>>) -> Result<FieldClass, TsdlError> {
        Ok(match t {
            T::Int(i) => {
                let mut c = i.class.clone();
                if let Some(m) = &i.mappings {
                    c.mappings = to_mappings(m, c.signed);
                }
                FieldClass::Int(c)
            }
            T::Float(f) => FieldClass::Float(f.clone()),
            T::Str(e) => FieldClass::String(StringClass {
                kind: StringKind::NullTerminated,
                encoding: *e,
            }),
            T::Struct(s) => {
                let mut members = Vec::with_capacity(s.members.len());
                for (i, m) in s.members.iter().enumerate() {
                    members.push(Member {
                        name: m.name.clone(),
                        class: self.conv_child(t, i, &m.t, stack)?,
                    });
                }
                FieldClass::Struct(StructClass {
                    members,
                    min_align: s.min_align.max(1),
                })
            }
            T::Variant(v) => {
                let Some((tag, pos)) = &v.tag else {
                    return Err(err(Pos::default(), "variant without a tag"));
                };
                let r = resolve(tag, *pos, self.scope, stack, &self.roots)?;
                let mut tags = r.targets.iter().map(|t| match t {
                    T::Int(IntT {
                        mappings: Some(maps),
                        class,
                        ..
                    }) => Some((maps, class.signed)),
                    _ => None,
                });
                let Some(Some((maps, signed))) = tags.next() else {
                    return Err(err(
                        *pos,
                        format!("variant tag `{tag}` is not an enumeration"),
                    ));
                };
                // A tag reached through a variant, one per option: the
                // options' ranges are the tag's, so every one must map
                // the same labels to the same values.
                for other in tags {
                    match other {
                        None => {
                            return Err(err(
                                *pos,
                                format!("variant tag `{tag}` is not an enumeration in every option it is reached through"),
                            ))
                        }
                        Some((m, sg)) if m != maps || sg != signed => {
                            return Err(err(
                                *pos,
                                format!("variant tag `{tag}`: the enumerations reached through a variant map different values"),
                            ))
                        }
                        Some(_) => {}
                    }
                }
                let mut options = Vec::with_capacity(v.options.len());
                for (i, o) in v.options.iter().enumerate() {
                    let c = self.conv_child(t, i, &o.t, stack)?;
                    options.push(VariantOption {
                        name: Some(o.name.clone()),
                        ranges: int_ranges(maps, signed, &o.orig),
                        class: c,
                    });
                }
                FieldClass::Variant(VariantClass {
                    selector: r.loc,
                    options,
                })
            }
            T::Array(e, n) => self.array(t, e, Length::Static(*n), stack)?,
            T::Seq(e, lref, pos) => {
                let r = resolve(lref, *pos, self.scope, stack, &self.roots)?;
                if !r.targets.iter().all(|t| matches!(t, T::Int(_))) {
                    return Err(err(
                        *pos,
                        format!("sequence length `{lref}` is not an integer"),
                    ));
                }
                self.array(t, e, Length::Dynamic(r.loc), stack)?
            }
        })
    }

    fn scope_root(&self, root: &'a Option<T>) -> Result<Option<StructClass>, TsdlError> {
        match root {
            None => Ok(None),
            Some(t) => match self.conv(t, &mut Vec::new())? {
                FieldClass::Struct(s) => Ok(Some(s)),
                _ => unreachable!("scope roots are structures"),
            },
        }
    }
}

fn mk<'a>(scope: Scope, roots: [Option<&'a T>; 6]) -> Conv<'a> {
    Conv {
        scope,
        roots: Roots { roots },
    }
}

fn finish(
    mut tc: TraceClass,
    mut ph: Option<StructT>,
    mut streams: Vec<StreamT>,
) -> Result<TraceClass, TsdlError> {
    // Meanings.
    set_role(&mut ph, "magic", Roles::PACKET_MAGIC);
    if let Some(h) = &mut ph {
        set_stream_id_roles(&mut h.members);
    }
    set_role(&mut ph, "stream_instance_id", Roles::DATA_STREAM_ID);
    let mut uuid_field = false;
    if let Some(h) = &ph {
        uuid_field = h
            .members
            .iter()
            .any(|m| m.name == "uuid" && matches!(&m.t, T::Array(_, 16)));
    }
    for st in &mut streams {
        set_role(
            &mut st.pc,
            "timestamp_begin",
            Roles::PACKET_BEGIN_DEFAULT_CLOCK_TIMESTAMP,
        );
        set_role(
            &mut st.pc,
            "timestamp_end",
            Roles::PACKET_END_DEFAULT_CLOCK_TIMESTAMP,
        );
        if let Some(pc) = &mut st.pc {
            if let Some(i) = int_member(pc, "timestamp_end") {
                // Not a clock update (babeltrace2 drops the mapping).
                i.class.mapped_clock = None;
            }
        }
        set_role(
            &mut st.pc,
            "events_discarded",
            Roles::DISCARDED_EVENT_COUNTER_SNAPSHOT,
        );
        set_role(&mut st.pc, "packet_seq_num", Roles::PACKET_SEQUENCE_NUMBER);
        set_role(&mut st.pc, "packet_size", Roles::PACKET_TOTAL_LENGTH);
        set_role(&mut st.pc, "content_size", Roles::PACKET_CONTENT_LENGTH);
        if let Some(eh) = &mut st.eh {
            set_id_roles(&mut eh.members);
        }
    }
    // Default clocks.
    if let Some(h) = &ph {
        let mut f = None;
        find_clock(&T::Struct(h.clone()), &mut f).map_err(|m| err(Pos::default(), m))?;
        if f.is_some() {
            return Err(err(
                Pos::default(),
                "packet header integers cannot be mapped to a clock",
            ));
        }
    }
    let mut default_clocks = Vec::new();
    for st in &streams {
        let mut f = None;
        let check = |t: &Option<StructT>, f: &mut Option<usize>| -> Result<(), TsdlError> {
            if let Some(s) = t {
                find_clock(&T::Struct(s.clone()), f).map_err(|m| err(st.pos, m))?;
            }
            Ok(())
        };
        check(&st.pc, &mut f)?;
        check(&st.eh, &mut f)?;
        check(&st.ec, &mut f)?;
        for ev in &st.events {
            check(&ev.sc, &mut f)?;
            check(&ev.payload, &mut f)?;
        }
        default_clocks.push(f);
    }

    // Convert, scope by scope.
    let ph_t = struct_as_t(&ph).map(|mut t| {
        clock_roles(&mut t);
        t
    });
    let conv_ph = Conv {
        scope: Scope::PacketHeader,
        roots: Roots {
            roots: [ph_t.as_ref(), None, None, None, None, None],
        },
    };
    tc.packet_header = conv_ph.scope_root(&ph_t)?;
    if uuid_field {
        if let Some(h) = &mut tc.packet_header {
            for m in &mut h.members {
                if m.name == "uuid" {
                    if let FieldClass::Array(a) = &mut m.class {
                        a.roles |= Roles::METADATA_STREAM_UUID;
                    }
                }
            }
        }
    }
    for (st, dc) in streams.iter().zip(default_clocks) {
        let prep = |s: &Option<StructT>| {
            struct_as_t(s).map(|mut t| {
                clock_roles(&mut t);
                t
            })
        };
        let pc = prep(&st.pc);
        let eh = prep(&st.eh);
        let ec = prep(&st.ec);
        let mut sc = StreamClass::new(st.id);
        sc.default_clock = dc;
        let base = [
            ph_t.as_ref(),
            pc.as_ref(),
            eh.as_ref(),
            ec.as_ref(),
            None,
            None,
        ];
        sc.packet_context = mk(Scope::PacketContext, base).scope_root(&pc)?;
        sc.event_header = mk(Scope::EventHeader, base).scope_root(&eh)?;
        sc.event_common_context = mk(Scope::EventCommonContext, base).scope_root(&ec)?;
        for ev in &st.events {
            let esc = prep(&ev.sc);
            let epl = prep(&ev.payload);
            let mut roots = base;
            roots[4] = esc.as_ref();
            roots[5] = epl.as_ref();
            let mut ec = EventClass::new(ev.id, Some(ev.name.clone()));
            ec.log_level = ev.log_level;
            ec.emf_uri = ev.emf_uri.clone();
            ec.specific_context = mk(Scope::EventSpecificContext, roots).scope_root(&esc)?;
            ec.payload = mk(Scope::EventPayload, roots).scope_root(&epl)?;
            sc.event_classes.push(ec);
        }
        tc.stream_classes.push(sc);
    }
    Ok(tc)
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
