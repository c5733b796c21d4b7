//! The typed model's class schemas as CTF: the IR of every event class
//! (for the metadata) and a compact node arena the value serializer walks
//! (for the data streams).
//!
//! Mapping (field class of the model -> CTF field class):
//!
//! * integers -> integers of 8, 16, 32 or 64 bits (the model's size
//!   rounded up to whole bytes), byte-aligned, little-endian, with the
//!   model's signedness and display base; with mappings: an enumeration;
//! * booleans -> unsigned 8-bit integers (CTF 1.8 has no booleans);
//! * floats -> 32/64-bit IEEE 754;
//! * strings -> null-terminated UTF-8 strings;
//! * blobs -> sequences of unsigned 8-bit integers;
//! * static arrays -> arrays; dynamic arrays -> sequences whose length is
//!   an unsigned 32-bit member `_NAME_length` just before them;
//! * structures -> structures;
//! * variants -> variants selected by an unsigned 32-bit enumeration member
//!   `_NAME_tag` just before them (one label per option, the option's
//!   name, mapped to its index; an option named as a TSDL keyword gets a
//!   leading `_`, in its name and label: [`option_name`]);
//! * optionals -> the same, with the two options `absent` (an empty
//!   structure) and `present`, tag `_NAME_tag`;
//! * a variant, optional, dynamic array or blob with no enclosing
//!   structure to hold its tag or length (an array element, a variant
//!   option, an optional's value) -> a structure of two members, the tag
//!   `_value_tag` (the length `_value_length`) and the field itself,
//!   `value` (CTF 1.8 finds a variant's tag and a sequence's length by
//!   name in an enclosing structure: babeltrace2 rejects one it cannot
//!   find).
//!
//! Names are made identifiers: characters other than ASCII letters, digits
//! and `_` become `_`, and a name that is empty or starts with a digit gets
//! a leading `_`. [`ctf_name`] is the rule (the babeltrace-style printer of
//! `tracemux-render` applies the same).

use tracemux_core::model::Base;
use tracemux_core::typed::{ArrayLen, FieldSchema, FieldType, IntType};

use crate::ir::{
    ArrayClass, ByteOrder, DisplayBase, FieldClass, FieldLocation, FloatClass, IntClass, IntRange,
    Length, Mapping, Member, Roles, Scope, StringClass, StringEncoding, StringKind, StructClass,
    VariantClass, VariantOption,
};

/// A field name as an identifier (see the module documentation).
pub use tracemux_core::ident::ident as ctf_name;
use tracemux_core::ident::TSDL_KEYWORDS;

/// A variant option's name as written (and the label of its tag): with a
/// leading `_` when it is a TSDL keyword (uftrace's `char`, `enum`,
/// `struct`), which CTF 1.8 cannot name a field.
pub fn option_name(name: &str) -> std::borrow::Cow<'_, str> {
    if TSDL_KEYWORDS.contains(&name) {
        format!("_{name}").into()
    } else {
        name.into()
    }
}

/// The size in bits a model integer of `bits` bits is written with.
pub fn int_bits(bits: u8) -> u8 {
    match bits {
        0..=8 => 8,
        9..=16 => 16,
        17..=32 => 32,
        _ => 64,
    }
}

/// One node of the serializer's arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An integer of this many bytes.
    Int(u8),
    Float(u8),
    Str,
    /// An array: `Some(n)` elements, or a `u32` length then that many.
    Array(Option<u64>),
    /// An array whose length is a member of the source's own, written
    /// before it (`_NAME_length` already in the schema).
    ArrayExt,
    Struct,
    /// A `u32` tag, then the option of that index.
    Variant,
    /// A `u32` tag (0 absent, 1 present), then the value when present.
    Optional,
    /// The structure around a variant, optional or dynamic array that has
    /// no enclosing structure for its tag or length: its one child is that
    /// field (the tag or length is written with it).
    Wrap,
}

/// A node: its kind and its children (`kids[first..first + n]`): members
/// of a structure, options of a variant, the element of an array, the
/// value of an optional.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    pub kind: Kind,
    pub first: u32,
    pub n: u32,
}

/// The serializer's view of every class.
#[derive(Debug, Default)]
pub struct Arena {
    pub nodes: Vec<Node>,
    pub kids: Vec<u32>,
    /// Option names of variant nodes, by node index (sparse).
    pub options: Vec<(u32, Vec<String>)>,
}

impl Arena {
    #[inline]
    pub fn kid(&self, node: u32, i: u32) -> Option<u32> {
        let n = self.nodes[node as usize];
        if i < n.n {
            Some(self.kids[(n.first + i) as usize])
        } else {
            None
        }
    }

    /// The index of the option called `name` of variant `node`.
    pub fn option_index(&self, node: u32, name: &str) -> Option<u32> {
        let i = self.options.binary_search_by_key(&node, |o| o.0).ok()?;
        let opts = &self.options[i].1;
        opts.iter()
            .position(|o| o == name)
            .or_else(|| {
                let n = ctf_name(name);
                let n = option_name(&n);
                opts.iter().position(|o| *o == n)
            })
            .map(|p| p as u32)
    }

    fn push(&mut self, kind: Kind, kids: &[u32]) -> u32 {
        let first = self.kids.len() as u32;
        self.kids.extend_from_slice(kids);
        self.nodes.push(Node {
            kind,
            first,
            n: kids.len() as u32,
        });
        (self.nodes.len() - 1) as u32
    }
}

/// The name of the value member of the structure around a variant,
/// optional or dynamic array without an enclosing structure (its tag:
/// `_value_tag`, its length: `_value_length`).
pub const WRAP_VALUE: &str = "value";

/// Builds IR field classes and arena nodes from model field classes.
pub struct Builder<'a> {
    pub arena: &'a mut Arena,
    pub scope: Scope,
    /// Member names from the scope's root to the structure being built.
    pub path: Vec<String>,
}

fn int_class(bits: u8, signed: bool, base: DisplayBase) -> IntClass {
    IntClass {
        base,
        align: 8,
        ..IntClass::new(u32::from(bits), ByteOrder::Little, signed)
    }
}

fn u32_class() -> FieldClass {
    FieldClass::Int(int_class(32, false, DisplayBase::Decimal))
}

fn display_base(b: Base) -> DisplayBase {
    match b {
        Base::Dec => DisplayBase::Decimal,
        Base::Hex => DisplayBase::Hexadecimal,
        Base::Oct => DisplayBase::Octal,
        Base::Bin => DisplayBase::Binary,
    }
}

impl Builder<'_> {
    /// The members of a structure of `fields`, and the arena nodes of
    /// the fields (length and tag members have no node of their own: the
    /// serializer writes them with the array or variant).
    pub fn members(&mut self, fields: &[FieldSchema]) -> (Vec<Member>, Vec<u32>) {
        let mut members = Vec::with_capacity(fields.len());
        let mut nodes = Vec::with_capacity(fields.len());
        for f in fields {
            let name = ctf_name(&f.name);
            // the member that gives a dynamic array its length, when the
            // source has one: the one the schema names, else `_NAME_length`
            let own_len: Option<String> = match &f.ty {
                FieldType::Array {
                    len: ArrayLen::Sibling(j),
                    ..
                } => fields.get(*j as usize).map(|g| ctf_name(&g.name)),
                FieldType::Array { .. } | FieldType::Blob => {
                    let len_name = format!("_{name}_length");
                    fields
                        .iter()
                        .any(|g| ctf_name(&g.name) == len_name)
                        .then_some(len_name)
                }
                _ => None,
            };
            let own_len_given = own_len.is_some();
            match &f.ty {
                FieldType::Array {
                    len: ArrayLen::Dynamic | ArrayLen::Sibling(_),
                    ..
                }
                | FieldType::Blob
                    if !own_len_given =>
                {
                    members.push(Member {
                        name: format!("_{name}_length"),
                        class: u32_class(),
                    });
                }
                FieldType::Variant(opts) => {
                    let labels = opts
                        .iter()
                        .map(|o| option_name(&ctf_name(&o.name)).into_owned())
                        .collect();
                    members.push(Member {
                        name: format!("_{name}_tag"),
                        class: tag_class(labels),
                    });
                }
                FieldType::Optional(_) => {
                    members.push(Member {
                        name: format!("_{name}_tag"),
                        class: tag_class(vec!["absent".into(), "present".into()]),
                    });
                }
                _ => {}
            }
            let (mut class, node) = self.typed(&name, &f.ty, true);
            if let Some(len_member) = own_len {
                if matches!(self.arena.nodes[node as usize].kind, Kind::Array(None)) {
                    self.arena.nodes[node as usize].kind = Kind::ArrayExt;
                    if let FieldClass::Array(a) = &mut class {
                        a.length = Length::Dynamic(self.location(len_member));
                    }
                }
            }
            members.push(Member { name, class });
            nodes.push(node);
        }
        (members, nodes)
    }

    fn location(&self, member: String) -> FieldLocation {
        let mut path = self.path.clone();
        path.push(member);
        FieldLocation::new(self.scope, path)
    }

    /// The IR class and arena node of one field called `name` that is no
    /// member of a structure (an array element, a variant option, an
    /// optional's value): a variant, optional, dynamic array or blob
    /// becomes a structure `{ _value_tag, value }` (`_value_length`; see
    /// the module documentation).
    pub fn field(&mut self, name: &str, ty: &FieldType) -> (FieldClass, u32) {
        let ty = match ty {
            FieldType::Variant(_) | FieldType::Optional(_) | FieldType::Blob => ty.clone(),
            // (no sibling to give the length here)
            FieldType::Array {
                elem,
                len: ArrayLen::Dynamic | ArrayLen::Sibling(_),
            } => FieldType::Array {
                elem: elem.clone(),
                len: ArrayLen::Dynamic,
            },
            _ => return self.typed(name, ty, false),
        };
        // (the wrapper is no member: the path stays that of the field)
        let (members, nodes) = self.members(&[FieldSchema::new(WRAP_VALUE, ty)]);
        (
            FieldClass::Struct(StructClass::new(members)),
            self.arena.push(Kind::Wrap, &nodes),
        )
    }

    /// The IR class and arena node of one field called `name` (a member
    /// of a structure when it is a variant, optional or dynamic array: the
    /// structure holds its tag or length). `member`: the field is a member
    /// of a structure, whose name is part of the paths of the fields in it
    /// (a field location's path names structure members only).
    fn typed(&mut self, name: &str, ty: &FieldType, member: bool) -> (FieldClass, u32) {
        match ty {
            FieldType::Int(it) => (
                FieldClass::Int(int_ir(it)),
                self.arena.push(Kind::Int(int_bits(it.bits) / 8), &[]),
            ),
            FieldType::Bool => (
                FieldClass::Int(int_class(8, false, DisplayBase::Decimal)),
                self.arena.push(Kind::Int(1), &[]),
            ),
            FieldType::Float { bits } => {
                let len = if *bits <= 32 { 32 } else { 64 };
                (
                    FieldClass::Float(FloatClass {
                        len,
                        align: 8,
                        byte_order: ByteOrder::Little,
                        bit_order: crate::ir::BitOrder::FirstToLast,
                    }),
                    self.arena.push(Kind::Float(len as u8 / 8), &[]),
                )
            }
            FieldType::Str => (
                FieldClass::String(StringClass {
                    kind: StringKind::NullTerminated,
                    encoding: StringEncoding::Utf8,
                }),
                self.arena.push(Kind::Str, &[]),
            ),
            FieldType::Blob => {
                let elem = FieldType::u(8);
                self.array(name, &elem, ArrayLen::Dynamic, member)
            }
            FieldType::Array { elem, len } => self.array(name, elem, *len, member),
            FieldType::Struct(fields) => {
                if member {
                    self.path.push(name.to_string());
                }
                let (members, nodes) = self.members(fields);
                if member {
                    self.path.pop();
                }
                (
                    FieldClass::Struct(StructClass::new(members)),
                    self.arena.push(Kind::Struct, &nodes),
                )
            }
            FieldType::Variant(opts) => {
                let mut options = Vec::with_capacity(opts.len());
                let mut nodes = Vec::with_capacity(opts.len());
                let mut names = Vec::with_capacity(opts.len());
                for (i, o) in opts.iter().enumerate() {
                    let oname = option_name(&ctf_name(&o.name)).into_owned();
                    self.path.push(name.to_string());
                    let (class, node) = self.field(&oname, &o.ty);
                    self.path.pop();
                    options.push(VariantOption {
                        name: Some(oname.clone()),
                        ranges: vec![IntRange::new(i as i128, i as i128)],
                        class,
                    });
                    nodes.push(node);
                    names.push(oname);
                }
                let selector = self.location(format!("_{name}_tag"));
                let node = self.arena.push(Kind::Variant, &nodes);
                self.arena.options.push((node, names));
                (
                    FieldClass::Variant(VariantClass { selector, options }),
                    node,
                )
            }
            FieldType::Optional(inner) => {
                self.path.push(name.to_string());
                let (class, node) = self.field("present", inner);
                self.path.pop();
                let selector = self.location(format!("_{name}_tag"));
                let options = vec![
                    VariantOption {
                        name: Some("absent".into()),
                        ranges: vec![IntRange::new(0, 0)],
                        class: FieldClass::Struct(StructClass::new(Vec::new())),
                    },
                    VariantOption {
                        name: Some("present".into()),
                        ranges: vec![IntRange::new(1, 1)],
                        class,
                    },
                ];
                (
                    FieldClass::Variant(VariantClass { selector, options }),
                    self.arena.push(Kind::Optional, &[node]),
                )
            }
        }
    }

    fn array(
        &mut self,
        name: &str,
        elem: &FieldType,
        len: ArrayLen,
        member: bool,
    ) -> (FieldClass, u32) {
        if member {
            self.path.push(name.to_string());
        }
        let (class, node) = self.field("", elem);
        if member {
            self.path.pop();
        }
        let (length, n) = match len {
            ArrayLen::Static(n) => (Length::Static(n), Some(n)),
            ArrayLen::Dynamic | ArrayLen::Sibling(_) => (
                Length::Dynamic(self.location(format!("_{name}_length"))),
                None,
            ),
        };
        (
            FieldClass::Array(ArrayClass {
                element: Box::new(class),
                length,
                min_align: 1,
                roles: Roles::NONE,
            }),
            self.arena.push(Kind::Array(n), &[node]),
        )
    }
}

fn int_ir(it: &IntType) -> IntClass {
    let mut c = int_class(int_bits(it.bits), it.signed, display_base(it.base));
    c.mappings = it
        .mappings
        .iter()
        .map(|m| Mapping {
            name: m.label.clone(),
            ranges: m.ranges.iter().map(|&(l, u)| IntRange::new(l, u)).collect(),
        })
        .collect();
    c
}

fn tag_class(labels: Vec<String>) -> FieldClass {
    let mut c = int_class(32, false, DisplayBase::Decimal);
    c.mappings = labels
        .into_iter()
        .enumerate()
        .map(|(i, name)| Mapping {
            name,
            ranges: vec![IntRange::new(i as i128, i as i128)],
        })
        .collect();
    FieldClass::Int(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_without_a_structure_are_wrapped() {
        let var = FieldType::Variant(vec![
            FieldSchema::new("char", FieldType::Str),
            FieldSchema::new("raw", FieldType::Blob),
        ]);
        let fields = [FieldSchema::new(
            "args",
            FieldType::Array {
                elem: Box::new(var),
                len: ArrayLen::Dynamic,
            },
        )];
        let mut arena = Arena::default();
        let mut b = Builder {
            arena: &mut arena,
            scope: Scope::EventPayload,
            path: Vec::new(),
        };
        let (members, nodes) = b.members(&fields);
        let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["_args_length", "args"]);
        let FieldClass::Array(a) = &members[1].class else {
            panic!("array")
        };
        let FieldClass::Struct(w) = &*a.element else {
            panic!("wrapped element")
        };
        let names: Vec<&str> = w.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["_value_tag", "value"]);
        let FieldClass::Variant(v) = &w.members[1].class else {
            panic!("variant")
        };
        // paths name structure members only
        assert_eq!(v.selector.path, ["args", "_value_tag"]);
        let opts: Vec<_> = v.options.iter().map(|o| o.name.as_deref()).collect();
        assert_eq!(opts, [Some("_char"), Some("raw")]);
        // the blob option: a structure of its length and itself
        let FieldClass::Struct(r) = &v.options[1].class else {
            panic!("wrapped blob")
        };
        let FieldClass::Array(blob) = &r.members[1].class else {
            panic!("blob")
        };
        let Length::Dynamic(l) = &blob.length else {
            panic!("sequence")
        };
        assert_eq!(l.path, ["args", "value", "_value_length"]);
        // serializer nodes: array -> wrap -> variant
        let arr = arena.nodes[nodes[0] as usize];
        assert_eq!(arr.kind, Kind::Array(None));
        let wrap = arena.kids[arr.first as usize];
        assert_eq!(arena.nodes[wrap as usize].kind, Kind::Wrap);
        let var = arena.kid(wrap, 0).unwrap();
        assert_eq!(arena.nodes[var as usize].kind, Kind::Variant);
        assert_eq!(arena.option_index(var, "char"), Some(0));
    }

    #[test]
    fn integer_sizes_round_up() {
        // (names: `ctf_name` is tracemux_core::ident::ident, tested there)
        assert_eq!(int_bits(3), 8);
        assert_eq!(int_bits(33), 64);
    }
}
