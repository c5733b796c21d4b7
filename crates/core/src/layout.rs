//! The model's index space: event classes by [`ClassId`], their fields by
//! [`FieldId`].
//!
//! Sinks resolve what they need once per class (a column, a Perfetto
//! slot, an escaped JSON key) and then read values by index; nothing on
//! the path of an event compares names, and no class is known by its
//! address.
//!
//! A class's [`ClassLayout`] is its [`ClassSchema`] flattened in preorder:
//! the scopes in [`Scope`] order, in each its fields, each field followed
//! by what it holds (a structure's members, an array's element, a
//! variant's options, an optional's value). A field's [`FieldId`] is its
//! place in that order, so the fields of the scopes a CTF stream class
//! gives every event (packet context, event header, common context) have
//! the same ids in every event class of the stream.
//!
//! Each node carries the name a [`crate::typed::FieldVisitor`] receives
//! it with: a member's name; for what a variant or an optional holds, the
//! variant's or optional's own name; for an array's element, nothing.

use crate::schema::{ArrayLen, ClassSchema, FieldSchema, FieldType, Scope};
use crate::value::Base;

/// An event class's place in its trace's [`crate::model::ClassTable`]:
/// classes are numbered from 0 in the order the table received them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClassId(u32);

impl Default for ClassId {
    fn default() -> Self {
        ClassId::UNLISTED
    }
}

impl ClassId {
    /// The id of a class that is in no table (made by hand, or a copy
    /// made elsewhere): sinks keep nothing for it.
    pub const UNLISTED: ClassId = ClassId(u32::MAX);

    pub const fn new(index: u32) -> ClassId {
        ClassId(index)
    }
    /// The index, for tables that sinks keep per class.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// Lookups of a field by name in a class layout ([`ClassLayout::find`])
/// made by this process.
static NAME_LOOKUPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many times this process looked a field up by its name in a class
/// layout: what a test counts to show that the sinks resolve names once
/// per class, not per event.
pub fn name_lookups() -> u64 {
    NAME_LOOKUPS.load(std::sync::atomic::Ordering::Relaxed)
}

/// A field's place in its class's [`ClassLayout`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldId(u32);

impl Default for FieldId {
    fn default() -> Self {
        FieldId::UNKNOWN
    }
}

impl FieldId {
    /// What no layout holds: a field a producer could not place. It reads
    /// as a nameless blob of the payload ([`ClassLayout::get`]).
    pub const UNKNOWN: FieldId = FieldId(u32::MAX);

    pub const fn new(index: u32) -> FieldId {
        FieldId(index)
    }
    pub const fn index(self) -> usize {
        self.0 as usize
    }
    /// The raw number (what tapes store).
    pub const fn raw(self) -> u32 {
        self.0
    }
}

/// One field of a class's layout.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldNode {
    /// The name visitors receive (see the module documentation).
    pub name: String,
    /// For a variant's option: the option's name; else empty.
    pub option: String,
    pub scope: Scope,
    /// The field holding this one (`None` for a field of a scope).
    pub parent: Option<FieldId>,
    /// 0 for a field of a scope, one more per level of nesting.
    pub depth: u16,
    /// Its place among its parent's children (a member's index, an
    /// option's index; 0 for an array's element and an optional's value).
    pub position: u32,
    /// The index just after this field's subtree.
    pub end: u32,
    pub ty: FieldType,
}

impl FieldNode {
    /// The base an integer of this field is shown in (decimal for
    /// everything else).
    pub fn base(&self) -> Base {
        match &self.ty {
            FieldType::Int(i) => i.base,
            _ => Base::Dec,
        }
    }
}

/// A field as visitors receive it: its id and its node.
#[derive(Debug, Clone, Copy)]
pub struct FieldRef<'l> {
    pub id: FieldId,
    pub node: &'l FieldNode,
}

impl<'l> FieldRef<'l> {
    pub fn name(&self) -> &'l str {
        &self.node.name
    }
    pub fn scope(&self) -> Scope {
        self.node.scope
    }
    pub fn ty(&self) -> &'l FieldType {
        &self.node.ty
    }
    /// The option's name, for what a variant holds.
    pub fn option(&self) -> &'l str {
        &self.node.option
    }
    pub fn depth(&self) -> u16 {
        self.node.depth
    }
}

/// What [`ClassLayout::get`] gives for an id the layout does not hold.
static UNKNOWN: FieldNode = FieldNode {
    name: String::new(),
    option: String::new(),
    scope: Scope::Payload,
    parent: None,
    depth: 0,
    position: 0,
    end: 0,
    ty: FieldType::Blob,
};

/// A class's fields flattened into [`FieldId`]s (see the module
/// documentation).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClassLayout {
    nodes: Vec<FieldNode>,
    /// Per scope (in [`Scope::ALL`] order), the ids of its fields.
    members: [Vec<FieldId>; 5],
    /// The scopes the schema declares, in order (some may be empty).
    scopes: Vec<Scope>,
}

fn scope_slot(s: Scope) -> usize {
    match s {
        Scope::PacketContext => 0,
        Scope::EventHeader => 1,
        Scope::CommonContext => 2,
        Scope::SpecificContext => 3,
        Scope::Payload => 4,
    }
}

/// The layout of no field (what a class-less event's values are read
/// with).
pub static EMPTY: ClassLayout = ClassLayout::empty();

impl ClassLayout {
    /// A layout of no field.
    pub const fn empty() -> ClassLayout {
        ClassLayout {
            nodes: Vec::new(),
            members: [Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new()],
            scopes: Vec::new(),
        }
    }

    /// The layout of `schema`.
    pub fn of(schema: &ClassSchema) -> ClassLayout {
        let mut l = ClassLayout::default();
        for s in &schema.scopes {
            l.scopes.push(s.scope);
            for (i, f) in s.fields.iter().enumerate() {
                let id = l.push(&f.name, "", s.scope, None, 0, i as u32, &f.ty);
                l.members[scope_slot(s.scope)].push(id);
            }
        }
        l
    }

    /// Add `ty` named `name` and everything it holds.
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        name: &str,
        option: &str,
        scope: Scope,
        parent: Option<FieldId>,
        depth: u16,
        position: u32,
        ty: &FieldType,
    ) -> FieldId {
        let id = FieldId(self.nodes.len() as u32);
        self.nodes.push(FieldNode {
            name: name.to_string(),
            option: option.to_string(),
            scope,
            parent,
            depth,
            position,
            end: 0,
            ty: ty.clone(),
        });
        let d = depth.saturating_add(1);
        match ty {
            FieldType::Struct(members) => {
                for (i, m) in members.iter().enumerate() {
                    self.push(&m.name, "", scope, Some(id), d, i as u32, &m.ty);
                }
            }
            FieldType::Array { elem, .. } => {
                self.push("", "", scope, Some(id), d, 0, elem);
            }
            FieldType::Variant(options) => {
                for (i, o) in options.iter().enumerate() {
                    self.push(name, &o.name, scope, Some(id), d, i as u32, &o.ty);
                }
            }
            FieldType::Optional(t) => {
                self.push(name, "", scope, Some(id), d, 0, t);
            }
            _ => {}
        }
        self.nodes[id.index()].end = self.nodes.len() as u32;
        id
    }

    /// How many fields the layout holds (ids are below it).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Field `id`; an id the layout does not hold gives a nameless blob of
    /// the payload.
    #[inline]
    pub fn get(&self, id: FieldId) -> FieldRef<'_> {
        FieldRef {
            id,
            node: self.nodes.get(id.index()).unwrap_or(&UNKNOWN),
        }
    }

    /// Every field, in id order.
    pub fn iter(&self) -> impl Iterator<Item = FieldRef<'_>> {
        self.nodes.iter().enumerate().map(|(i, node)| FieldRef {
            id: FieldId(i as u32),
            node,
        })
    }

    /// The fields of `scope` (not what they hold), in order.
    pub fn members(&self, scope: Scope) -> &[FieldId] {
        &self.members[scope_slot(scope)]
    }

    /// The `i`th field of `scope` ([`FieldId::UNKNOWN`] past the end).
    #[inline]
    pub fn member(&self, scope: Scope, i: usize) -> FieldId {
        self.members[scope_slot(scope)]
            .get(i)
            .copied()
            .unwrap_or(FieldId::UNKNOWN)
    }

    /// The scopes the class declares, in order.
    pub fn scopes(&self) -> &[Scope] {
        &self.scopes
    }

    /// The field of `scope` named `name` (to resolve once per class, never
    /// per event: [`name_lookups`] counts the calls).
    pub fn find(&self, scope: Scope, name: &str) -> Option<FieldId> {
        NAME_LOOKUPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.members(scope)
            .iter()
            .copied()
            .find(|&id| self.nodes[id.index()].name == name)
    }

    /// What `id` holds directly: a structure's members, an array's
    /// element, a variant's options, an optional's value.
    pub fn children(&self, id: FieldId) -> impl Iterator<Item = FieldId> + '_ {
        let (mut at, end) = match self.nodes.get(id.index()) {
            Some(n) => (id.index() + 1, n.end as usize),
            None => (0, 0),
        };
        std::iter::from_fn(move || {
            if at >= end {
                return None;
            }
            let c = at;
            at = self.nodes[c].end as usize;
            Some(FieldId(c as u32))
        })
    }

    /// The `i`th of what `id` holds ([`FieldId::UNKNOWN`] when it holds
    /// fewer).
    pub fn child(&self, id: FieldId, i: usize) -> FieldId {
        self.children(id).nth(i).unwrap_or(FieldId::UNKNOWN)
    }

    /// The field at `path` in `scope`: the name of a field of the scope,
    /// then of what each holds in turn (a member's name, an option's name;
    /// `""` for an array's element or an optional's value).
    /// [`FieldId::UNKNOWN`] when there is none. For resolving once per
    /// class, never per event.
    pub fn path(&self, scope: Scope, path: &[&str]) -> FieldId {
        let Some((first, rest)) = path.split_first() else {
            return FieldId::UNKNOWN;
        };
        let Some(mut at) = self.find(scope, first) else {
            return FieldId::UNKNOWN;
        };
        for step in rest {
            let parent = &self.nodes[at.index()];
            let found = self.children(at).find(|c| {
                let n = &self.nodes[c.index()];
                match parent.ty {
                    FieldType::Struct(_) => n.name == *step,
                    FieldType::Variant(_) => n.option == *step,
                    _ => step.is_empty(),
                }
            });
            match found {
                Some(c) => at = c,
                None => return FieldId::UNKNOWN,
            }
        }
        at
    }

    /// The option of variant `id` named `option`.
    pub fn option(&self, id: FieldId, option: &str) -> FieldId {
        self.children(id)
            .find(|c| self.nodes[c.index()].option == option)
            .unwrap_or(FieldId::UNKNOWN)
    }

    /// The schema the layout was made of, back from it.
    pub fn schema(&self) -> ClassSchema {
        let mut s = ClassSchema::default();
        for &scope in &self.scopes {
            s.declare(scope);
            let fields = self
                .members(scope)
                .iter()
                .map(|&id| {
                    let n = &self.nodes[id.index()];
                    FieldSchema::new(n.name.clone(), n.ty.clone())
                })
                .collect();
            s.push(scope, fields);
        }
        s
    }
}

/// What a sink made for each class, by [`ClassId`], made at the class's
/// first event. A class with no id ([`ClassId::UNLISTED`]) or an id past
/// any table a trace could hold is made anew each time (no memory is sized
/// by an id).
#[derive(Debug, Clone)]
pub struct ClassMap<T> {
    slots: Vec<Option<T>>,
    spare: Option<T>,
}

impl<T> Default for ClassMap<T> {
    fn default() -> Self {
        ClassMap {
            slots: Vec::new(),
            spare: None,
        }
    }
}

impl<T> ClassMap<T> {
    /// The most classes a map keeps (ids at or past it are made anew each
    /// time).
    pub const LIMIT: usize = 1 << 20;

    pub fn new() -> Self {
        Self::default()
    }

    /// What was made for `id`, made by `make` if nothing was yet.
    #[inline]
    pub fn get_or_insert_with(&mut self, id: ClassId, make: impl FnOnce() -> T) -> &mut T {
        let i = id.index();
        if i >= Self::LIMIT {
            return self.spare.insert(make());
        }
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        self.slots[i].get_or_insert_with(make)
    }

    /// What was made for `id`, if anything.
    #[inline]
    pub fn get(&self, id: ClassId) -> Option<&T> {
        self.slots.get(id.index()).and_then(|s| s.as_ref())
    }

    /// What was made for `id`, if anything, to change.
    #[inline]
    pub fn get_mut(&mut self, id: ClassId) -> Option<&mut T> {
        self.slots.get_mut(id.index()).and_then(|s| s.as_mut())
    }

    /// Everything made, with the ids it was made for.
    pub fn iter(&self) -> impl Iterator<Item = (ClassId, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|t| (ClassId(i as u32), t)))
    }
}

/// Whether the values of a class always take the same places: no
/// variants, optionals or arrays of a length given per event. (Classes of
/// such a shape can be read by index without recording a visit.)
pub fn fixed_shape(ty: &FieldType) -> bool {
    match ty {
        FieldType::Variant(_) | FieldType::Optional(_) => false,
        FieldType::Array { elem, len } => matches!(len, ArrayLen::Static(_)) && fixed_shape(elem),
        FieldType::Struct(m) => m.iter().all(|f| fixed_shape(&f.ty)),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::typed::IntType;

    fn schema() -> ClassSchema {
        let mut s = ClassSchema::default();
        s.push(
            Scope::CommonContext,
            vec![FieldSchema::new("tid", FieldType::s(32))],
        );
        s.push(
            Scope::Payload,
            vec![
                FieldSchema::new("a", FieldType::Int(IntType::hex(64, false))),
                FieldSchema::new(
                    "s",
                    FieldType::Struct(vec![
                        FieldSchema::new("x", FieldType::u(8)),
                        FieldSchema::new(
                            "arr",
                            FieldType::Array {
                                elem: Box::new(FieldType::Str),
                                len: ArrayLen::Dynamic,
                            },
                        ),
                    ]),
                ),
                FieldSchema::new(
                    "v",
                    FieldType::Variant(vec![
                        FieldSchema::new("i", FieldType::s(16)),
                        FieldSchema::new("t", FieldType::Str),
                    ]),
                ),
                FieldSchema::new("o", FieldType::Optional(Box::new(FieldType::Bool))),
            ],
        );
        s
    }

    #[test]
    fn preorder_names_and_ends() {
        let l = ClassLayout::of(&schema());
        let names: Vec<(&str, &str, u16)> = l
            .iter()
            .map(|f| (f.name(), f.option(), f.depth()))
            .collect();
        assert_eq!(
            names,
            [
                ("tid", "", 0),
                ("a", "", 0),
                ("s", "", 0),
                ("x", "", 1),
                ("arr", "", 1),
                ("", "", 2),
                ("v", "", 0),
                ("v", "i", 1),
                ("v", "t", 1),
                ("o", "", 0),
                ("o", "", 1),
            ]
        );
        assert_eq!(l.members(Scope::CommonContext), [FieldId(0)]);
        assert_eq!(
            l.members(Scope::Payload),
            [FieldId(1), FieldId(2), FieldId(6), FieldId(9)]
        );
        assert_eq!(l.get(FieldId(2)).node.end, 6);
        let kids: Vec<_> = l.children(FieldId(2)).collect();
        assert_eq!(kids, [FieldId(3), FieldId(4)]);
        assert_eq!(l.option(FieldId(6), "t"), FieldId(8));
        assert_eq!(l.child(FieldId(4), 0), FieldId(5));
        assert_eq!(l.get(FieldId(5)).node.parent, Some(FieldId(4)));
        assert_eq!(l.find(Scope::Payload, "v"), Some(FieldId(6)));
        assert_eq!(l.find(Scope::Payload, "x"), None);
        assert_eq!(l.path(Scope::Payload, &["s", "arr", ""]), FieldId(5));
        assert_eq!(l.path(Scope::Payload, &["v", "t"]), FieldId(8));
        assert_eq!(l.path(Scope::Payload, &["o", ""]), FieldId(10));
        assert_eq!(l.path(Scope::Payload, &["s", "y"]), FieldId::UNKNOWN);
        assert_eq!(l.path(Scope::CommonContext, &["a"]), FieldId::UNKNOWN);
        assert_eq!(l.get(FieldId(1)).node.base(), Base::Hex);
        assert_eq!(l.schema(), schema());
    }

    #[test]
    fn unknown_ids_read_as_nameless_blobs() {
        let l = ClassLayout::of(&schema());
        let f = l.get(FieldId::UNKNOWN);
        assert_eq!(f.name(), "");
        assert_eq!(f.ty(), &FieldType::Blob);
        assert_eq!(l.children(FieldId::UNKNOWN).count(), 0);
        assert_eq!(l.member(Scope::Payload, 99), FieldId::UNKNOWN);
        assert_eq!(
            ClassLayout::default().get(FieldId::new(0)).name(),
            "",
            "an empty layout holds nothing"
        );
    }

    #[test]
    fn shapes() {
        assert!(fixed_shape(&FieldType::u(8)));
        assert!(!fixed_shape(&FieldType::Optional(Box::new(FieldType::u(
            8
        )))));
        let st = FieldType::Array {
            elem: Box::new(FieldType::u(8)),
            len: ArrayLen::Static(4),
        };
        assert!(fixed_shape(&st));
        let dy = FieldType::Array {
            elem: Box::new(FieldType::u(8)),
            len: ArrayLen::Dynamic,
        };
        assert!(!fixed_shape(&dy));
    }
}
