//! The values of one event as a small tree, collected from a
//! [`FieldVisitor`] into reusable buffers (no allocation per event once they
//! have grown). Each node keeps the [`FieldId`] it was visited with: the
//! writers resolve the fields they read once per class (by name, in the
//! class's layout) and find them by id ([`Tree::at`]); they turn them into
//! debug annotations, or write them as JSON in the
//! shape of `report --json` (objects for structures, arrays, `{"OPTION": v}`
//! for variants, `null` for an absent optional, `{"value","labels"}` for
//! enumerations; byte blobs as arrays of numbers).

use std::sync::atomic::{AtomicU64, Ordering};
use tracemux_core::json::json_str;
use tracemux_core::layout::{FieldId, FieldRef};
use tracemux_core::model::{visit_fields, Base, Event, EventClass, PrintCtx, TraceMeta, Value};
use tracemux_core::typed::{FieldVisitor, Scope};

/// What a node holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    U(u64),
    S(i64),
    F(f64),
    B(bool),
    /// Text (a range of the tree's bytes).
    Str(u32, u32),
    /// Members follow, up to the node's `end`.
    Obj,
    /// Elements follow, up to the node's `end`.
    Arr,
    /// The chosen option's name (a range of the bytes); its value follows.
    Variant(u32, u32),
    /// An absent optional.
    Null,
    /// An enumeration: the value is the next node, then its labels (strings).
    Enum,
}

/// One value, in preorder; `end` is the index after its subtree.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    pub scope: Scope,
    /// 0 for a field of a scope.
    pub depth: u16,
    name: (u32, u32),
    /// The field it is ([`FieldId::UNKNOWN`] for an array's element, an
    /// enumeration's value and labels).
    pub field: FieldId,
    pub kind: Kind,
    pub end: u32,
}

/// Write all of `buf` to `out`, count it in `written`, and empty `buf`.
pub(crate) fn write_out(
    out: &mut impl std::io::Write,
    buf: &mut Vec<u8>,
    written: &mut u64,
) -> std::io::Result<()> {
    out.write_all(buf)?;
    *written += buf.len() as u64;
    buf.clear();
    Ok(())
}

/// The tree of one event.
#[derive(Debug, Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    text: Vec<u8>,
    open: Vec<usize>,
    scope: Option<Scope>,
    /// The name and id of a present optional: its value comes next.
    optional_name: Option<(u32, u32)>,
    optional_field: FieldId,
    /// The field the next node is.
    cur: FieldId,
}

/// Lookups of a field by its name in an event's tree ([`Tree::find`]) made
/// by this process: what a test counts to show that the writers resolve
/// names per class, not per event.
static NAME_LOOKUPS: AtomicU64 = AtomicU64::new(0);

/// How many times [`Tree::find`] has looked a field up by name.
pub fn name_lookups() -> u64 {
    NAME_LOOKUPS.load(Ordering::Relaxed)
}

/// The first of `names` that class `c` has at the top of `scope`
/// ([`FieldId::UNKNOWN`] when it has none): what a writer resolves once
/// per class, to find the field in each event's tree with [`Tree::at`].
pub fn resolve(c: &EventClass, scope: Scope, names: &[&str]) -> FieldId {
    let l = c.layout();
    names
        .iter()
        .find_map(|n| l.find(scope, n))
        .unwrap_or(FieldId::UNKNOWN)
}

impl Tree {
    /// The values of `ev`, in place of what the tree held.
    pub fn collect(&mut self, meta: &TraceMeta, ev: &Event<'_>) {
        self.clear();
        match ev.tape {
            // (the same visit, without a call through a vtable per value)
            Some(t) => t.replay(
                ev.class
                    .map_or(&tracemux_core::layout::EMPTY, |c| c.layout()),
                self,
            ),
            None => {
                visit_fields(ev, &PrintCtx::of(meta, ev), self);
            }
        }
    }

    pub fn clear(&mut self) {
        self.nodes.clear();
        self.text.clear();
        self.open.clear();
        self.scope = None;
        self.optional_name = None;
        self.cur = FieldId::UNKNOWN;
    }
    fn span(&mut self, b: &[u8]) -> (u32, u32) {
        let s = self.text.len() as u32;
        self.text.extend_from_slice(b);
        (s, self.text.len() as u32)
    }
    fn get(&self, s: (u32, u32)) -> &[u8] {
        self.text.get(s.0 as usize..s.1 as usize).unwrap_or(&[])
    }
    /// The name of node `i`.
    pub fn name(&self, i: usize) -> &str {
        std::str::from_utf8(self.get(self.nodes[i].name)).unwrap_or("")
    }
    /// Whether node `i` is named `name` (no UTF-8 check: the hot path of
    /// field lookups).
    pub fn name_is(&self, i: usize, name: &str) -> bool {
        self.get(self.nodes[i].name) == name.as_bytes()
    }
    /// The bytes of a string node (or of a variant's option name).
    pub fn bytes(&self, i: usize) -> &[u8] {
        match self.nodes[i].kind {
            Kind::Str(a, b) | Kind::Variant(a, b) => self.get((a, b)),
            _ => &[],
        }
    }
    /// A string node's text (invalid UTF-8 replaced).
    pub fn text(&self, i: usize) -> String {
        String::from_utf8_lossy(self.bytes(i)).into_owned()
    }
    fn push(&mut self, name: &str, kind: Kind) -> usize {
        let (name, field) = match self.optional_name.take() {
            Some(n) => (n, self.optional_field),
            None => (self.span(name.as_bytes()), self.cur),
        };
        self.cur = FieldId::UNKNOWN;
        let i = self.nodes.len();
        self.nodes.push(Node {
            scope: self.scope.unwrap_or(Scope::Payload),
            depth: self.open.len() as u16,
            name,
            field,
            kind,
            end: i as u32 + 1,
        });
        i
    }
    fn begin(&mut self, name: &str, kind: Kind) {
        let i = self.push(name, kind);
        self.open.push(i);
    }
    fn finish(&mut self) {
        if let Some(i) = self.open.pop() {
            self.nodes[i].end = self.nodes.len() as u32;
        }
    }
    fn leaf(&mut self, name: &str, v: Value<'_>) {
        match v {
            Value::Unsigned(x) => {
                self.push(name, Kind::U(x));
            }
            Value::Signed(x) => {
                self.push(name, Kind::S(x));
            }
            Value::Float(x) => {
                self.push(name, Kind::F(x));
            }
            Value::Bool(x) => {
                self.push(name, Kind::B(x));
            }
            Value::Str(s) => {
                let (a, b) = self.span(s);
                self.push(name, Kind::Str(a, b));
            }
            Value::Bytes(b) => {
                self.begin(name, Kind::Arr);
                for &x in b {
                    self.push("", Kind::U(u64::from(x)));
                }
                self.finish();
            }
            v @ Value::IntArray {
                data,
                elem_size,
                signed,
                ..
            } => {
                self.begin(name, Kind::Arr);
                let n = data.len() / elem_size.max(1) as usize;
                for j in 0..n {
                    match v.array_elem(j) {
                        Some(x) if signed => self.push("", Kind::S(x as i64)),
                        Some(x) => self.push("", Kind::U(x as u64)),
                        None => self.push("", Kind::Null),
                    };
                }
                self.finish();
            }
        }
    }

    /// The fields of `scope` at its top level: indices of nodes.
    pub fn top(&self, scope: Scope) -> impl Iterator<Item = usize> + '_ {
        let mut i = 0usize;
        std::iter::from_fn(move || {
            while i < self.nodes.len() {
                let n = &self.nodes[i];
                let at = i;
                i = (n.end as usize).max(i + 1);
                if n.depth == 0 && n.scope == scope {
                    return Some(at);
                }
            }
            None
        })
    }
    /// The top-level field `name` of `scope`, looked up by its name (for
    /// events of no class; the writers resolve a class's fields once and
    /// use [`Tree::at`]).
    pub fn find(&self, scope: Scope, name: &str) -> Option<usize> {
        NAME_LOOKUPS.fetch_add(1, Ordering::Relaxed);
        self.top(scope).find(|&i| self.name_is(i, name))
    }
    /// The top-level field `id` of `scope` (`None` for
    /// [`FieldId::UNKNOWN`]).
    pub fn at(&self, scope: Scope, id: FieldId) -> Option<usize> {
        if id == FieldId::UNKNOWN {
            return None;
        }
        self.top(scope).find(|&i| self.nodes[i].field == id)
    }
    /// The children of a container node.
    pub fn children(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let end = self.nodes[i].end as usize;
        let mut j = i + 1;
        std::iter::from_fn(move || {
            if j >= end {
                return None;
            }
            let at = j;
            j = (self.nodes[j].end as usize).max(j + 1);
            Some(at)
        })
    }
    /// An integer node as i128 (enumerations: their value).
    pub fn int(&self, i: usize) -> Option<i128> {
        match self.nodes[i].kind {
            Kind::U(x) => Some(x as i128),
            Kind::S(x) => Some(x as i128),
            Kind::B(x) => Some(x as i128),
            Kind::Enum => self.int(i + 1),
            _ => None,
        }
    }

    /// Node `i` as JSON (the shape of `report --json`).
    pub fn json(&self, i: usize, out: &mut Vec<u8>) {
        match self.nodes[i].kind {
            Kind::U(x) => out.extend_from_slice(x.to_string().as_bytes()),
            Kind::S(x) => out.extend_from_slice(x.to_string().as_bytes()),
            Kind::F(x) if x.is_finite() => out.extend_from_slice(x.to_string().as_bytes()),
            Kind::F(_) | Kind::Null => out.extend_from_slice(b"null"),
            Kind::B(x) => out.extend_from_slice(if x { b"true" } else { b"false" }),
            Kind::Str(..) => json_str(out, self.bytes(i)),
            Kind::Obj => {
                out.push(b'{');
                for (k, c) in self.children(i).enumerate() {
                    if k > 0 {
                        out.push(b',');
                    }
                    json_str(out, self.name(c).as_bytes());
                    out.push(b':');
                    self.json(c, out);
                }
                out.push(b'}');
            }
            Kind::Arr => {
                out.push(b'[');
                for (k, c) in self.children(i).enumerate() {
                    if k > 0 {
                        out.push(b',');
                    }
                    self.json(c, out);
                }
                out.push(b']');
            }
            Kind::Variant(..) => {
                out.push(b'{');
                json_str(out, self.bytes(i));
                out.push(b':');
                match self.children(i).next() {
                    Some(c) => self.json(c, out),
                    None => out.extend_from_slice(b"null"),
                }
                out.push(b'}');
            }
            Kind::Enum => {
                out.extend_from_slice(b"{\"value\":");
                let mut ch = self.children(i);
                match ch.next() {
                    Some(c) => self.json(c, out),
                    None => out.extend_from_slice(b"null"),
                }
                out.extend_from_slice(b",\"labels\":[");
                for (k, c) in ch.enumerate() {
                    if k > 0 {
                        out.push(b',');
                    }
                    self.json(c, out);
                }
                out.extend_from_slice(b"]}");
            }
        }
    }
}

impl FieldVisitor for Tree {
    fn field(&mut self, f_: FieldRef<'_>, _base: Base, value: Value<'_>) {
        let name = f_.name();
        self.cur = f_.id;
        self.leaf(name, value);
    }
    fn enum_field(&mut self, f_: FieldRef<'_>, value: Value<'_>, labels: &[&str]) {
        let name = f_.name();
        self.cur = f_.id;
        self.begin(name, Kind::Enum);
        self.leaf("value", value);
        for l in labels {
            let (a, b) = self.span(l.as_bytes());
            self.push("", Kind::Str(a, b));
        }
        self.finish();
    }
    fn scope_begin(&mut self, scope: Scope) {
        self.open.clear();
        self.scope = Some(scope);
    }
    fn scope_end(&mut self, _scope: Scope) {
        while !self.open.is_empty() {
            self.finish();
        }
    }
    fn struct_begin(&mut self, f_: FieldRef<'_>) {
        let name = f_.name();
        self.cur = f_.id;
        self.begin(name, Kind::Obj);
    }
    fn struct_end(&mut self) {
        self.finish();
    }
    fn array_begin(&mut self, f_: FieldRef<'_>, _len: u64) {
        let name = f_.name();
        self.cur = f_.id;
        self.begin(name, Kind::Arr);
    }
    fn array_end(&mut self) {
        self.finish();
    }
    fn variant_begin(&mut self, f_: FieldRef<'_>, o_: FieldRef<'_>) {
        let name = f_.name();
        let option = o_.option();
        let (a, b) = self.span(option.as_bytes());
        self.cur = f_.id;
        self.begin(name, Kind::Variant(a, b));
    }
    fn variant_end(&mut self) {
        self.finish();
    }
    fn optional_begin(&mut self, f_: FieldRef<'_>, present: bool) {
        let name = f_.name();
        if present {
            // Its value is named after the optional.
            self.optional_name = Some(self.span(name.as_bytes()));
            self.optional_field = f_.id;
        } else {
            self.cur = f_.id;
            self.push(name, Kind::Null);
        }
    }
    fn optional_end(&mut self) {
        self.optional_name = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracemux_core::layout::ClassLayout;
    use tracemux_core::named::Named;

    #[test]
    fn nested_values_as_json() {
        let mut n = Named::new();
        n.scope_begin(Scope::Payload);
        n.field("a", Base::Dec, Value::Signed(-1));
        n.struct_begin("s");
        n.field("x", Base::Dec, Value::Str(b"q\""));
        n.array_begin("arr", 2);
        n.field("", Base::Dec, Value::Unsigned(1));
        n.enum_field("", Value::Unsigned(3), &["X"]);
        n.array_end();
        n.struct_end();
        n.variant_begin("v", "o");
        n.field("v", Base::Dec, Value::Bool(true));
        n.variant_end();
        n.optional_begin("n", false);
        n.optional_end();
        n.field("b", Base::Dec, Value::Bytes(&[1, 2]));
        n.scope_end(Scope::Payload);
        let mut t = Tree::default();
        n.replay(&ClassLayout::of(&n.schema()), &mut t);
        let mut out = Vec::new();
        let names: Vec<_> = t
            .top(Scope::Payload)
            .map(|i| t.name(i).to_string())
            .collect();
        assert_eq!(names, ["a", "s", "v", "n", "b"]);
        for i in t.top(Scope::Payload) {
            t.json(i, &mut out);
            out.push(b' ');
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"-1 {"x":"q\"","arr":[1,{"value":3,"labels":["X"]}]} {"o":true} null [1,2] "#
        );
        assert_eq!(t.int(t.find(Scope::Payload, "a").unwrap()), Some(-1));
    }
}
