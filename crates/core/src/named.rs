//! Visits written with field names: for tests, tools and fuzz targets that
//! describe values by name, never for a path events take (each name is
//! looked up as it comes).
//!
//! [`Named`] records calls named as the fields of a class's layout are
//! named ([`crate::layout`]), infers a schema from them when there is none
//! ([`Named::schema`]: the first value seen at a place gives its type),
//! and replays them into any [`FieldVisitor`] with the fields of a layout
//! ([`Named::replay`]); a name the layout does not have is
//! [`FieldId::UNKNOWN`].

use crate::layout::{ClassLayout, FieldId};
use crate::model::{Base, Value};
use crate::typed::{
    ArrayLen, ClassSchema, FieldSchema, FieldTape, FieldType, FieldVisitor, IntType, Scope,
};

/// One recorded call.
#[derive(Debug, Clone, PartialEq)]
enum Call {
    ScopeBegin(Scope),
    ScopeEnd(Scope),
    StructBegin(String),
    StructEnd,
    ArrayBegin(String, u64),
    ArrayEnd,
    VariantBegin(String, String),
    VariantEnd,
    OptionalBegin(String, bool),
    OptionalEnd,
    Field(String, Base, Owned),
    Enum(String, Owned, Vec<String>),
}

/// A value, owned.
#[derive(Debug, Clone, PartialEq)]
enum Owned {
    U(u64),
    S(i64),
    F(f64),
    B(bool),
    Str(Vec<u8>),
    Bytes(Vec<u8>),
    Ints(Vec<u8>, u8, bool, crate::Endian),
}

impl Owned {
    fn of(v: Value<'_>) -> Owned {
        match v {
            Value::Unsigned(x) => Owned::U(x),
            Value::Signed(x) => Owned::S(x),
            Value::Float(x) => Owned::F(x),
            Value::Bool(x) => Owned::B(x),
            Value::Str(b) => Owned::Str(b.to_vec()),
            Value::Bytes(b) => Owned::Bytes(b.to_vec()),
            Value::IntArray {
                data,
                elem_size,
                signed,
                endian,
            } => Owned::Ints(data.to_vec(), elem_size, signed, endian),
        }
    }
    fn value(&self) -> Value<'_> {
        match self {
            Owned::U(x) => Value::Unsigned(*x),
            Owned::S(x) => Value::Signed(*x),
            Owned::F(x) => Value::Float(*x),
            Owned::B(x) => Value::Bool(*x),
            Owned::Str(b) => Value::Str(b),
            Owned::Bytes(b) => Value::Bytes(b),
            Owned::Ints(d, e, s, en) => Value::IntArray {
                data: d,
                elem_size: *e,
                signed: *s,
                endian: *en,
            },
        }
    }
    fn ty(&self, base: Base) -> FieldType {
        match self {
            Owned::U(_) => FieldType::Int(IntType {
                base,
                ..IntType::new(64, false)
            }),
            Owned::S(_) => FieldType::Int(IntType {
                base,
                ..IntType::new(64, true)
            }),
            Owned::F(_) => FieldType::Float { bits: 64 },
            Owned::B(_) => FieldType::Bool,
            Owned::Str(_) => FieldType::Str,
            Owned::Bytes(_) => FieldType::Blob,
            Owned::Ints(d, e, s, _) => FieldType::Array {
                elem: Box::new(FieldType::Int(IntType::new(e.saturating_mul(8), *s))),
                len: ArrayLen::Static((d.len() / (*e).max(1) as usize) as u64),
            },
        }
    }
}

/// A visit written by names (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct Named {
    calls: Vec<Call>,
}

impl Named {
    pub fn new() -> Named {
        Named::default()
    }
    pub fn scope_begin(&mut self, s: Scope) -> &mut Self {
        self.calls.push(Call::ScopeBegin(s));
        self
    }
    pub fn scope_end(&mut self, s: Scope) -> &mut Self {
        self.calls.push(Call::ScopeEnd(s));
        self
    }
    pub fn field(&mut self, name: &str, base: Base, v: Value<'_>) -> &mut Self {
        self.calls
            .push(Call::Field(name.into(), base, Owned::of(v)));
        self
    }
    pub fn enum_field(&mut self, name: &str, v: Value<'_>, labels: &[&str]) -> &mut Self {
        let labels = labels.iter().map(|l| l.to_string()).collect();
        self.calls
            .push(Call::Enum(name.into(), Owned::of(v), labels));
        self
    }
    pub fn struct_begin(&mut self, name: &str) -> &mut Self {
        self.calls.push(Call::StructBegin(name.into()));
        self
    }
    pub fn struct_end(&mut self) -> &mut Self {
        self.calls.push(Call::StructEnd);
        self
    }
    pub fn array_begin(&mut self, name: &str, len: u64) -> &mut Self {
        self.calls.push(Call::ArrayBegin(name.into(), len));
        self
    }
    pub fn array_end(&mut self) -> &mut Self {
        self.calls.push(Call::ArrayEnd);
        self
    }
    /// A variant: its value follows (named like the variant, or
    /// anything: inside a variant the name is not looked at).
    pub fn variant_begin(&mut self, name: &str, option: &str) -> &mut Self {
        self.calls
            .push(Call::VariantBegin(name.into(), option.into()));
        self
    }
    pub fn variant_end(&mut self) -> &mut Self {
        self.calls.push(Call::VariantEnd);
        self
    }
    pub fn optional_begin(&mut self, name: &str, present: bool) -> &mut Self {
        self.calls.push(Call::OptionalBegin(name.into(), present));
        self
    }
    pub fn optional_end(&mut self) -> &mut Self {
        self.calls.push(Call::OptionalEnd);
        self
    }

    /// A schema the calls fit: scopes in [`Scope`] order, each field where
    /// it first came, typed by the first value seen there (integers as 64
    /// bits, enumerations with no mappings, integer arrays static).
    pub fn schema(&self) -> ClassSchema {
        let mut s = ClassSchema::default();
        let mut it = self.calls.iter().peekable();
        let mut scope = Scope::Payload;
        while let Some(c) = it.next() {
            match c {
                Call::ScopeBegin(x) => {
                    scope = *x;
                    s.declare(scope);
                }
                Call::ScopeEnd(_) => {}
                c => {
                    if let Some(f) = one(c, &mut it) {
                        let at = s.scopes.iter().position(|x| x.scope == scope);
                        let list = match at {
                            Some(i) => &mut s.scopes[i].fields,
                            None => {
                                s.declare(scope);
                                let i = s.scopes.iter().position(|x| x.scope == scope);
                                &mut s.scopes[i.unwrap_or(0)].fields
                            }
                        };
                        merge_into(list, f);
                    }
                }
            }
        }
        s
    }

    /// The calls into `v`, each field found by name in `layout`.
    pub fn replay(&self, layout: &ClassLayout, v: &mut dyn FieldVisitor) {
        // where names are looked up: the scope, then each open compound
        // (for a variant or optional: the field its value is)
        let mut scope = Scope::Payload;
        let mut open: Vec<(FieldId, Option<FieldId>)> = Vec::new();
        let resolve =
            |scope: Scope, open: &[(FieldId, Option<FieldId>)], name: &str| match open.last() {
                None => layout.find(scope, name).unwrap_or(FieldId::UNKNOWN),
                Some((_, Some(inner))) => *inner,
                Some((p, None)) => match layout.get(*p).ty() {
                    FieldType::Struct(_) => layout
                        .children(*p)
                        .find(|c| layout.get(*c).name() == name)
                        .unwrap_or(FieldId::UNKNOWN),
                    _ => layout.child(*p, 0),
                },
            };
        for c in &self.calls {
            match c {
                Call::ScopeBegin(s) => {
                    scope = *s;
                    open.clear();
                    v.scope_begin(*s);
                }
                Call::ScopeEnd(s) => v.scope_end(*s),
                Call::Field(n, b, x) => {
                    let id = resolve(scope, &open, n);
                    v.field(layout.get(id), *b, x.value());
                }
                Call::Enum(n, x, labels) => {
                    let id = resolve(scope, &open, n);
                    let l: Vec<&str> = labels.iter().map(String::as_str).collect();
                    v.enum_field(layout.get(id), x.value(), &l);
                }
                Call::StructBegin(n) => {
                    let id = resolve(scope, &open, n);
                    v.struct_begin(layout.get(id));
                    open.push((id, None));
                }
                Call::ArrayBegin(n, len) => {
                    let id = resolve(scope, &open, n);
                    v.array_begin(layout.get(id), *len);
                    open.push((id, None));
                }
                Call::VariantBegin(n, o) => {
                    let id = resolve(scope, &open, n);
                    let opt = layout.option(id, o);
                    v.variant_begin(layout.get(id), layout.get(opt));
                    open.push((id, Some(opt)));
                }
                Call::OptionalBegin(n, p) => {
                    let id = resolve(scope, &open, n);
                    v.optional_begin(layout.get(id), *p);
                    open.push((id, Some(layout.child(id, 0))));
                }
                Call::StructEnd => {
                    open.pop();
                    v.struct_end();
                }
                Call::ArrayEnd => {
                    open.pop();
                    v.array_end();
                }
                Call::VariantEnd => {
                    open.pop();
                    v.variant_end();
                }
                Call::OptionalEnd => {
                    open.pop();
                    v.optional_end();
                }
            }
        }
    }

    /// The calls recorded on a [`FieldTape`] with the fields of `layout`.
    pub fn tape(&self, layout: &ClassLayout) -> FieldTape {
        let mut t = FieldTape::new();
        self.replay(layout, &mut t);
        t
    }
}

/// The field that call `c` (and the calls inside it, from `it`) gives.
fn one<'c, I: Iterator<Item = &'c Call>>(
    c: &Call,
    it: &mut std::iter::Peekable<I>,
) -> Option<FieldSchema> {
    Some(match c {
        Call::Field(n, b, x) => FieldSchema::new(n.clone(), x.ty(*b)),
        Call::Enum(n, x, _) => FieldSchema::new(n.clone(), x.ty(Base::Dec)),
        Call::StructBegin(n) => {
            let mut members = Vec::new();
            for f in inner(it) {
                merge_into(&mut members, f);
            }
            FieldSchema::new(n.clone(), FieldType::Struct(members))
        }
        Call::ArrayBegin(n, _) => {
            let elem = inner(it)
                .into_iter()
                .next()
                .map_or(FieldType::Blob, |f| f.ty);
            let ty = FieldType::Array {
                elem: Box::new(elem),
                len: ArrayLen::Dynamic,
            };
            FieldSchema::new(n.clone(), ty)
        }
        Call::VariantBegin(n, o) => {
            let content = inner(it)
                .into_iter()
                .next()
                .map_or(FieldType::Struct(Vec::new()), |f| f.ty);
            let opts = vec![FieldSchema::new(o.clone(), content)];
            FieldSchema::new(n.clone(), FieldType::Variant(opts))
        }
        Call::OptionalBegin(n, _) => {
            let content = inner(it)
                .into_iter()
                .next()
                .map_or(FieldType::Blob, |f| f.ty);
            FieldSchema::new(n.clone(), FieldType::Optional(Box::new(content)))
        }
        _ => return None,
    })
}

/// The fields of the calls up to the end of the compound just begun.
fn inner<'c, I: Iterator<Item = &'c Call>>(it: &mut std::iter::Peekable<I>) -> Vec<FieldSchema> {
    let mut out = Vec::new();
    while let Some(c) = it.next() {
        match c {
            Call::StructEnd | Call::ArrayEnd | Call::VariantEnd | Call::OptionalEnd => break,
            Call::ScopeBegin(_) | Call::ScopeEnd(_) => break,
            c => {
                if let Some(f) = one(c, it) {
                    out.push(f);
                }
            }
        }
    }
    out
}

/// `f` into `list`: a new field, or merged into the one of its name (a
/// variant gains the options it lacked).
fn merge_into(list: &mut Vec<FieldSchema>, f: FieldSchema) {
    match list.iter_mut().find(|x| x.name == f.name) {
        None => list.push(f),
        Some(old) => {
            if let (FieldType::Variant(a), FieldType::Variant(b)) = (&mut old.ty, f.ty) {
                for o in b {
                    if !a.iter().any(|x| x.name == o.name) {
                        a.push(o);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inferred_schema_and_replay_by_name() {
        let mut n = Named::new();
        n.scope_begin(Scope::Payload)
            .field("a", Base::Hex, Value::Unsigned(1))
            .struct_begin("s")
            .field("t", Base::Dec, Value::Str(b"x"))
            .struct_end()
            .array_begin("arr", 2)
            .field("", Base::Dec, Value::Signed(-1))
            .field("", Base::Dec, Value::Signed(-2))
            .array_end()
            .variant_begin("v", "one")
            .field("v", Base::Dec, Value::Bool(true))
            .variant_end()
            .variant_begin("v", "two")
            .field("v", Base::Dec, Value::Str(b"y"))
            .variant_end()
            .scope_end(Scope::Payload);
        let s = n.schema();
        let p = s.scope(Scope::Payload);
        assert_eq!(p.len(), 4, "{p:?}");
        assert!(matches!(&p[3].ty, FieldType::Variant(o) if o.len() == 2));
        let l = ClassLayout::of(&s);
        let t = n.tape(&l);
        let names: Vec<String> = t
            .steps(&l)
            .map(|s| match s {
                crate::typed::TapeStep::Field(f, _, _) => f.name().to_string(),
                crate::typed::TapeStep::VariantBegin(_, o) => format!("<{}>", o.option()),
                _ => "-".into(),
            })
            .collect();
        assert_eq!(
            names,
            [
                "-", "a", "-", "t", "-", "-", "", "", "-", "<one>", "v", "-", "<two>", "v", "-",
                "-"
            ]
        );
        // a name the layout lacks
        let mut m = Named::new();
        m.scope_begin(Scope::Payload)
            .field("nope", Base::Dec, Value::Unsigned(0));
        let t = m.tape(&l);
        let second = t.steps(&l).nth(1);
        match second {
            Some(crate::typed::TapeStep::Field(f, _, _)) => {
                assert_eq!(f.id, FieldId::UNKNOWN)
            }
            other => panic!("{other:?}"),
        };
    }
}
