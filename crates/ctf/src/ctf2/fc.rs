//! CTF 2 field classes (CTF2-SPEC-2.0 section 5.3) lowered to IR field
//! classes, and the field locations they use, resolved and checked.

use std::collections::{HashMap, HashSet};

use super::json::{Kind, Value};
use super::util::{Cx, JPath, Res};
use super::{Leniency, Notes};
use crate::ir::*;

/// Deepest nesting of field classes (after alias expansion). JSON nesting
/// is bounded already, but aliases can nest without bound.
pub(crate) const MAX_FC_DEPTH: usize = 256;

/// A field class alias: its name, its body (a JSON object) and how many
/// aliases were defined before it (the only ones its body may use).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Alias<'j> {
    pub name: &'j str,
    pub body: &'j Value,
    pub visible: usize,
}

/// What a located field is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Need {
    Length,
    VariantSelector,
    OptionalSelector { has_ranges: bool },
}

/// A field location met while lowering a scope, checked once the whole
/// scope is lowered.
#[derive(Debug, Clone)]
pub(crate) struct LocRec {
    pub loc: FieldLocation,
    pub need: Need,
    /// Path of the field that needs the location.
    pub s_path: Vec<String>,
    /// Number of leaf fields lowered before that field, in this scope.
    pub ordinal: usize,
    /// Where the location is, for errors.
    pub off: usize,
    pub jpath: String,
}

/// State while lowering one root scope structure.
pub(crate) struct Fcx {
    pub scope: Scope,
    /// Paths (from the scope root) of the structures being lowered,
    /// innermost last: what relative field locations start from.
    pub frames: Vec<Vec<String>>,
    /// Number of aliases visible at this point.
    pub visible: usize,
    /// Default clock of the data stream class, for `mapped_clock`.
    pub clock: Option<usize>,
    pub depth: usize,
    /// The member names from the scope root down to the field being
    /// lowered (arrays, optionals and variants on the way add nothing).
    pub here: Vec<String>,
    pub locs: Vec<LocRec>,
    /// First leaf ordinal of each leaf path.
    pub leaf_first: HashMap<Vec<String>, usize>,
    pub ordinal: usize,
}

impl Fcx {
    pub(crate) fn new(scope: Scope, visible: usize, clock: Option<usize>) -> Self {
        Fcx {
            scope,
            frames: Vec::new(),
            visible,
            clock,
            depth: 0,
            here: Vec::new(),
            locs: Vec::new(),
            leaf_first: HashMap::new(),
            ordinal: 0,
        }
    }

    fn leaf(&mut self) {
        self.ordinal += 1;
        if !self.leaf_first.contains_key(&self.here) {
            self.leaf_first.insert(self.here.clone(), self.ordinal);
        }
    }
}

/// Lowers field classes; borrows the alias table and the expansion budget.
pub(crate) struct FcLower<'j, 'a> {
    pub c: Cx,
    pub aliases: &'a [Alias<'j>],
    pub by_name: &'a HashMap<&'j str, usize>,
    /// What may still be produced, in field classes plus path elements
    /// (bounds alias expansion, and the memory of the IR and of the
    /// checks).
    pub budget: &'a mut usize,
    /// What is forgiven.
    pub notes: &'a mut Notes,
}

/// The keyword property `key`: one of `names`, else an error naming it an
/// unknown `what`; when absent, `default` (none: it is required).
fn keyword<T: Copy>(
    c: &Cx,
    v: &Value,
    path: &JPath,
    key: &str,
    what: &str,
    names: &[(&str, T)],
    default: Option<T>,
) -> Res<T> {
    if let (None, Some(d)) = (v.get(key), default) {
        return Ok(d);
    }
    let kv = c.req(v, key, path)?;
    let p = path.key(key);
    let name = c.str(kv, &p)?;
    match names.iter().find(|(n, _)| *n == name) {
        Some(&(_, t)) => Ok(t),
        None => Err(c.err(kv, &p, format!("unknown {what} `{name}`"))),
    }
}

fn byte_order(c: &Cx, v: &Value, path: &JPath) -> Res<ByteOrder> {
    let names = [
        ("little-endian", ByteOrder::Little),
        ("big-endian", ByteOrder::Big),
    ];
    keyword(c, v, path, "byte-order", "byte order", &names, None)
}

fn bit_order(c: &Cx, v: &Value, path: &JPath, bo: ByteOrder) -> Res<BitOrder> {
    let names = [
        ("first-to-last", BitOrder::FirstToLast),
        ("last-to-first", BitOrder::LastToFirst),
    ];
    let default = BitOrder::default_for(bo);
    keyword(c, v, path, "bit-order", "bit order", &names, Some(default))
}

fn display_base(c: &Cx, v: &Value, path: &JPath) -> Res<DisplayBase> {
    let Some(b) = v.get("preferred-display-base") else {
        return Ok(DisplayBase::Decimal);
    };
    let p = path.key("preferred-display-base");
    match c.int(b, &p)? {
        2 => Ok(DisplayBase::Binary),
        8 => Ok(DisplayBase::Octal),
        10 => Ok(DisplayBase::Decimal),
        16 => Ok(DisplayBase::Hexadecimal),
        o => Err(c.err(b, &p, format!("display base {o} is not 2, 8, 10 or 16"))),
    }
}

fn encoding(c: &Cx, v: &Value, path: &JPath) -> Res<StringEncoding> {
    let names = [
        ("utf-8", StringEncoding::Utf8),
        ("utf-16be", StringEncoding::Utf16Be),
        ("utf-16le", StringEncoding::Utf16Le),
        ("utf-32be", StringEncoding::Utf32Be),
        ("utf-32le", StringEncoding::Utf32Le),
    ];
    let default = Some(StringEncoding::Utf8);
    keyword(c, v, path, "encoding", "encoding", &names, default)
}

/// The `roles` property. Unknown role names are ignored (a role that an
/// extension or a later specification defines changes nothing here).
fn roles(c: &Cx, v: &Value, path: &JPath) -> Res<Roles> {
    let Some(r) = v.get("roles") else {
        return Ok(Roles::NONE);
    };
    let p = path.key("roles");
    let mut out = Roles::NONE;
    for (i, name) in c.arr(r, &p)?.iter().enumerate() {
        out |= match c.str(name, &p.index(i))? {
            "packet-magic-number" => Roles::PACKET_MAGIC,
            "metadata-stream-uuid" => Roles::METADATA_STREAM_UUID,
            "data-stream-class-id" => Roles::DATA_STREAM_CLASS_ID,
            "data-stream-id" => Roles::DATA_STREAM_ID,
            "packet-total-length" => Roles::PACKET_TOTAL_LENGTH,
            "packet-content-length" => Roles::PACKET_CONTENT_LENGTH,
            "default-clock-timestamp" => Roles::DEFAULT_CLOCK_TIMESTAMP,
            "packet-end-default-clock-timestamp" => Roles::PACKET_END_DEFAULT_CLOCK_TIMESTAMP,
            "discarded-event-record-counter-snapshot" => Roles::DISCARDED_EVENT_COUNTER_SNAPSHOT,
            "packet-sequence-number" => Roles::PACKET_SEQUENCE_NUMBER,
            "event-record-class-id" => Roles::EVENT_CLASS_ID,
            _ => Roles::NONE,
        };
    }
    Ok(out)
}

/// Integer mappings or bit-map flags: names to range sets, in metadata
/// order.
fn mappings(c: &Cx, v: &Value, key: &str, path: &JPath) -> Res<Vec<Mapping>> {
    let Some(m) = v.get(key) else {
        return Ok(Vec::new());
    };
    let p = path.key(key);
    let mut out = Vec::new();
    for (name, rs) in c.obj(m, &p)? {
        out.push(Mapping {
            name: name.clone(),
            ranges: c.range_set(rs, &p.key(name))?,
        });
    }
    Ok(out)
}

/// A static length (`length`, a non-negative integer).
fn static_len(c: &Cx, v: &Value, path: &JPath) -> Res<u64> {
    c.u64(c.req(v, "length", path)?, &path.key("length"))
}

fn origin_scope(name: &str) -> Option<Scope> {
    Some(match name {
        "packet-header" => Scope::PacketHeader,
        "packet-context" => Scope::PacketContext,
        "event-record-header" => Scope::EventHeader,
        "event-record-common-context" => Scope::EventCommonContext,
        "event-record-specific-context" => Scope::EventSpecificContext,
        "event-record-payload" => Scope::EventPayload,
        _ => return None,
    })
}

impl<'j> FcLower<'j, '_> {
    /// Lower a field class (or the name of an alias) found at `cx.here`.
    pub(crate) fn fc(&mut self, v: &'j Value, path: &JPath, cx: &mut Fcx) -> Res<FieldClass> {
        if let Kind::Str(name) = &v.kind {
            let Some(&i) = self.by_name.get(name.as_str()).filter(|&&i| i < cx.visible) else {
                return Err(self.c.err(
                    v,
                    path,
                    format!("no field class alias named `{name}` before this point"),
                ));
            };
            let a = self.aliases[i];
            let saved = cx.visible;
            cx.visible = a.visible;
            let r = self.fc_obj(a.body, &path.alias(a.name), cx);
            cx.visible = saved;
            return r;
        }
        self.fc_obj(v, path, cx)
    }

    fn fc_obj(&mut self, v: &'j Value, path: &JPath, cx: &mut Fcx) -> Res<FieldClass> {
        // A field class costs its depth too: the paths kept for it (and
        // for the locations under it) grow with the depth.
        self.spend(1 + cx.here.len(), v, path)?;
        if cx.depth >= MAX_FC_DEPTH {
            return Err(self.c.unsupported(
                v,
                path,
                format!("field classes nested deeper than {MAX_FC_DEPTH} levels"),
            ));
        }
        cx.depth += 1;
        let r = self.fc_kind(v, path, cx);
        cx.depth -= 1;
        r
    }

    fn spend(&mut self, cost: usize, v: &Value, path: &JPath) -> Res<()> {
        if *self.budget < cost {
            return Err(self.c.unsupported(
                v,
                path,
                "too many field classes once aliases are expanded",
            ));
        }
        *self.budget -= cost;
        Ok(())
    }

    fn fc_kind(&mut self, v: &'j Value, path: &JPath, cx: &mut Fcx) -> Res<FieldClass> {
        let c = self.c;
        let tv = c.req(v, "type", path)?;
        let mut ty = c.str(tv, &path.key("type"))?;
        c.no_ext(v, path)?;
        // Drafts of CTF 2 had enumeration field classes: 2.0 integer field
        // classes with mappings.
        let draft = match ty {
            "fixed-length-unsigned-enumeration" => Some("fixed-length-unsigned-integer"),
            "fixed-length-signed-enumeration" => Some("fixed-length-signed-integer"),
            "variable-length-unsigned-enumeration" => Some("variable-length-unsigned-integer"),
            "variable-length-signed-enumeration" => Some("variable-length-signed-integer"),
            _ => None,
        };
        if let Some(t) = draft {
            self.notes.add(
                Leniency::DraftName,
                "enumeration field class type (a draft's name; read as an integer field class with mappings)",
                c.err(tv, &path.key("type"), ""),
            );
            ty = t;
        }
        let fc = match ty {
            "fixed-length-bit-array"
            | "fixed-length-bit-map"
            | "fixed-length-boolean"
            | "fixed-length-unsigned-integer"
            | "fixed-length-signed-integer"
            | "fixed-length-floating-point-number" => self.fixed(ty, v, path, cx)?,
            "variable-length-unsigned-integer" | "variable-length-signed-integer" => {
                FieldClass::VarInt(VarIntClass {
                    signed: ty == "variable-length-signed-integer",
                    base: display_base(&c, v, path)?,
                    roles: roles(&c, v, path)?,
                    mappings: mappings(&c, v, "mappings", path)?,
                })
            }
            "null-terminated-string" => FieldClass::String(StringClass {
                kind: StringKind::NullTerminated,
                encoding: encoding(&c, v, path)?,
            }),
            "static-length-string" | "dynamic-length-string" => {
                let length = self.length(ty, v, path, cx)?;
                let encoding = encoding(&c, v, path)?;
                // CTF2-SPEC-2.0: a string field is a sequence of code
                // units; a static length that is not a multiple of the
                // unit cannot be one (the partial unit is left out)
                if let Length::Static(n) = length {
                    let unit = encoding.unit() as u64;
                    if n % unit != 0 {
                        self.notes.add(
                            Leniency::StringSize,
                            "static-length string whose length in bytes is not a multiple of its encoding's code unit (the partial unit is left out)",
                            c.err(c.req(v, "length", path)?, &path.key("length"), ""),
                        );
                    }
                }
                FieldClass::String(StringClass {
                    kind: StringKind::Sized(length),
                    encoding,
                })
            }
            "static-length-blob" | "dynamic-length-blob" => {
                let length = self.length(ty, v, path, cx)?;
                FieldClass::Blob(BlobClass {
                    length,
                    media_type: c
                        .opt_str(v, "media-type", path)?
                        .unwrap_or("application/octet-stream")
                        .to_string(),
                    roles: roles(&c, v, path)?,
                })
            }
            "structure" => return self.structure(v, path, cx),
            "static-length-array" | "dynamic-length-array" => {
                let length = self.length(ty, v, path, cx)?;
                let min_align = c.align(v, "minimum-alignment", path)?;
                let e = c.req(v, "element-field-class", path)?;
                let element = self.fc(e, &path.key("element-field-class"), cx)?;
                return Ok(FieldClass::Array(ArrayClass {
                    element: Box::new(element),
                    length,
                    min_align,
                    roles: Roles::NONE,
                }));
            }
            "optional" => return self.optional(v, path, cx),
            "variant" => return self.variant(v, path, cx),
            o => {
                return Err(c.err(
                    v.get("type").unwrap_or(v),
                    &path.key("type"),
                    format!("unknown field class type `{o}`"),
                ))
            }
        };
        cx.leaf();
        Ok(fc)
    }

    /// The length of a string, BLOB or array: `length` for the
    /// `static-length-*` types, `length-field-location` for the others.
    fn length(&mut self, ty: &str, v: &Value, path: &JPath, cx: &mut Fcx) -> Res<Length> {
        Ok(if ty.starts_with("static-length-") {
            Length::Static(static_len(&self.c, v, path)?)
        } else {
            let loc = self.location(v, "length-field-location", path, cx, Need::Length)?;
            Length::Dynamic(loc)
        })
    }

    /// The fixed-length bit array family.
    fn fixed(&mut self, ty: &str, v: &Value, path: &JPath, cx: &Fcx) -> Res<FieldClass> {
        let c = self.c;
        let lv = c.req(v, "length", path)?;
        let lp = path.key("length");
        let len = c.u64(lv, &lp)?;
        if len == 0 {
            return Err(c.err(lv, &lp, "length must be greater than zero"));
        }
        let bo = byte_order(&c, v, path)?;
        let bit_order = bit_order(&c, v, path, bo)?;
        let align = c.align(v, "alignment", path)?;
        if ty == "fixed-length-floating-point-number" {
            if len != 32 && len != 64 {
                return Err(c.unsupported(
                    lv,
                    &lp,
                    format!("{len}-bit floating point numbers (only 32 and 64 bits)"),
                ));
            }
            return Ok(FieldClass::Float(FloatClass {
                len: len as u32,
                align,
                byte_order: bo,
                bit_order,
            }));
        }
        if len > 64 {
            return Err(c.unsupported(
                lv,
                &lp,
                format!("{len}-bit fixed-length fields (at most 64 bits)"),
            ));
        }
        let len = len as u32;
        Ok(match ty {
            "fixed-length-boolean" => FieldClass::Bool(BoolClass {
                len,
                align,
                byte_order: bo,
                bit_order,
            }),
            "fixed-length-bit-array" | "fixed-length-bit-map" => {
                let flags = if ty == "fixed-length-bit-map" {
                    c.req(v, "flags", path)?;
                    Some(mappings(&c, v, "flags", path)?)
                } else {
                    None
                };
                FieldClass::BitArray(BitArrayClass {
                    len,
                    align,
                    byte_order: bo,
                    bit_order,
                    flags,
                })
            }
            _ => {
                let roles = roles(&c, v, path)?;
                let mapped_clock = if roles.has(Roles::DEFAULT_CLOCK_TIMESTAMP) {
                    cx.clock
                } else {
                    None
                };
                FieldClass::Int(IntClass {
                    len,
                    align,
                    byte_order: bo,
                    bit_order,
                    signed: ty == "fixed-length-signed-integer",
                    base: display_base(&c, v, path)?,
                    text: false,
                    mapped_clock,
                    roles,
                    mappings: mappings(&c, v, "mappings", path)?,
                })
            }
        })
    }

    fn structure(&mut self, v: &'j Value, path: &JPath, cx: &mut Fcx) -> Res<FieldClass> {
        let c = self.c;
        let min_align = c.align(v, "minimum-alignment", path)?;
        let mut members = Vec::new();
        if let Some(ms) = v.get("member-classes") {
            let mp = path.key("member-classes");
            let list = c.arr(ms, &mp)?;
            let mut names = HashSet::new();
            cx.frames.push(cx.here.clone());
            for (i, m) in list.iter().enumerate() {
                let p = mp.index(i);
                c.obj(m, &p)?;
                c.no_ext(m, &p)?;
                let nv = c.req(m, "name", &p)?;
                let name = c.str(nv, &p.key("name"))?;
                if !names.insert(name) {
                    self.notes.add(
                        Leniency::DuplicateMember,
                        "structure members with the same name (the later one shadows the earlier ones in field locations)",
                        c.err(nv, &p.key("name"), ""),
                    );
                }
                let f = c.req(m, "field-class", &p)?;
                cx.here.push(name.to_string());
                let class = self.fc(f, &p.key("field-class"), cx);
                cx.here.pop();
                let class = class?;
                members.push(Member {
                    name: name.to_string(),
                    class,
                });
            }
            cx.frames.pop();
        }
        Ok(FieldClass::Struct(StructClass { members, min_align }))
    }

    fn optional(&mut self, v: &'j Value, path: &JPath, cx: &mut Fcx) -> Res<FieldClass> {
        let c = self.c;
        let selector_ranges = match v.get("selector-field-ranges") {
            None => None,
            Some(r) => Some(c.range_set(r, &path.key("selector-field-ranges"))?),
        };
        let need = Need::OptionalSelector {
            has_ranges: selector_ranges.is_some(),
        };
        let selector = self.location(v, "selector-field-location", path, cx, need)?;
        let f = c.req(v, "field-class", path)?;
        let class = self.fc(f, &path.key("field-class"), cx)?;
        Ok(FieldClass::Optional(OptionalClass {
            selector,
            selector_ranges,
            class: Box::new(class),
        }))
    }

    fn variant(&mut self, v: &'j Value, path: &JPath, cx: &mut Fcx) -> Res<FieldClass> {
        let c = self.c;
        let selector = self.location(
            v,
            "selector-field-location",
            path,
            cx,
            Need::VariantSelector,
        )?;
        let ov = c.req(v, "options", path)?;
        let op = path.key("options");
        let list = c.arr(ov, &op)?;
        if list.is_empty() {
            return Err(c.err(ov, &op, "a variant needs at least one option"));
        }
        let mut options = Vec::with_capacity(list.len());
        let mut names = HashSet::new();
        let mut all: Vec<(IntRange, usize)> = Vec::new();
        for (i, o) in list.iter().enumerate() {
            let p = op.index(i);
            c.obj(o, &p)?;
            c.no_ext(o, &p)?;
            let name = c.opt_str(o, "name", &p)?;
            if let Some(n) = name {
                if !names.insert(n) {
                    return Err(c.err(o, &p.key("name"), format!("duplicate option `{n}`")));
                }
            }
            let rv = c.req(o, "selector-field-ranges", &p)?;
            let ranges = c.range_set(rv, &p.key("selector-field-ranges"))?;
            all.extend(ranges.iter().map(|&r| (r, i)));
            let f = c.req(o, "field-class", &p)?;
            let class = self.fc(f, &p.key("field-class"), cx)?;
            options.push(VariantOption {
                name: name.map(str::to_string),
                ranges,
                class,
            });
        }
        // The ranges of two options must not intersect: sort and sweep.
        all.sort_by_key(|(r, _)| (r.lower, r.upper));
        let mut reach: Option<(i128, usize)> = None;
        for &(r, i) in &all {
            if let Some((hi, j)) = reach {
                if r.lower <= hi && j != i {
                    return Err(c.err(
                        ov,
                        &op,
                        format!(
                            "the selector ranges of options {} and {} intersect",
                            i.min(j),
                            i.max(j)
                        ),
                    ));
                }
                if r.upper > hi {
                    reach = Some((r.upper, i));
                }
            } else {
                reach = Some((r.upper, i));
            }
        }
        Ok(FieldClass::Variant(VariantClass { selector, options }))
    }

    /// Read the field location `key` of `v` and make it absolute.
    fn location(
        &mut self,
        v: &Value,
        key: &str,
        path: &JPath,
        cx: &mut Fcx,
        need: Need,
    ) -> Res<FieldLocation> {
        let c = self.c;
        let lv = c.req(v, key, path)?;
        let lp = path.key(key);
        // Drafts of CTF 2 wrote a location as an array: the scope name,
        // then the member names (always absolute).
        let draft = match &lv.kind {
            Kind::Arr(a) => match a.split_first() {
                Some((o, rest)) => match &o.kind {
                    Kind::Str(name) if origin_scope(name).is_some() => {
                        Some((origin_scope(name), rest))
                    }
                    _ => None,
                },
                None => None,
            },
            _ => None,
        };
        if draft.is_some() {
            self.notes.add(
                Leniency::DraftName,
                "field location as an array (a draft's form; read as an absolute location)",
                c.err(lv, &lp, ""),
            );
        } else {
            c.obj(lv, &lp)?;
        }
        let (scope, mut stack) = match (draft, lv.get("origin")) {
            (Some((Some(s), _)), _) => (s, vec![Vec::new()]),
            (_, Some(o)) => {
                let op = lp.key("origin");
                let name = c.str(o, &op)?;
                let Some(s) = origin_scope(name) else {
                    return Err(c.err(o, &op, format!("unknown origin `{name}`")));
                };
                (s, vec![Vec::new()])
            }
            _ => (cx.scope, cx.frames.clone()),
        };
        let (pv, pp) = match draft {
            Some(_) => (lv, lp),
            None => (c.req(lv, "path", &lp)?, lp.key("path")),
        };
        let elems = match draft {
            Some((_, rest)) => rest,
            None => c.arr(pv, &pp)?,
        };
        match elems.last() {
            None => return Err(c.err(pv, &pp, "a field location path cannot be empty")),
            Some(l) if l.kind == Kind::Null => {
                return Err(c.err(l, &pp, "the last element of a path cannot be null"))
            }
            _ => {}
        }
        for (i, e) in elems.iter().enumerate() {
            match &e.kind {
                Kind::Null => {
                    stack.pop();
                    if stack.is_empty() {
                        return Err(c.err(
                            e,
                            &pp.index(i),
                            "null goes above the root of the scope",
                        ));
                    }
                }
                Kind::Str(s) => {
                    let mut next = stack.last().cloned().unwrap_or_default();
                    next.push(s.clone());
                    stack.push(next);
                }
                _ => {
                    return Err(c.err(
                        e,
                        &pp.index(i),
                        format!("expected a string or null, found {}", e.kind_name()),
                    ))
                }
            }
        }
        let loc = FieldLocation::new(scope, stack.pop().unwrap_or_default());
        self.spend(loc.path.len() + cx.frames.len(), lv, &lp)?;
        cx.locs.push(LocRec {
            loc: loc.clone(),
            need,
            s_path: cx.here.clone(),
            ordinal: cx.ordinal,
            off: lv.off,
            jpath: lp.render(),
        });
        Ok(loc)
    }
}
