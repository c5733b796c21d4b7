//! Column builders shaped by a [`FieldType`] tree, filled by a
//! [`FieldVisitor`].
//!
//! A table's columns form a tree of nodes kept in one arena (`Vec<Node>`),
//! so the visitor can hold the path it is in as node indices. Structures,
//! arrays, variants and enumerations are container nodes; everything else a
//! leaf with an Arrow builder. A row is complete when every node's length
//! matches its parent's: whatever an event did not give (a damaged event, a
//! field of another shape) is padded with nulls when its container closes,
//! so no event is ever dropped and every column keeps its type.

use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Float32Builder, Float64Builder, Int16Builder, Int32Builder,
    Int64Builder, Int8Builder, StringBuilder, StringDictionaryBuilder, UInt16Builder,
    UInt32Builder, UInt64Builder, UInt8Builder,
};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, ListArray, StructArray};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields};
use tracemux_core::layout::{FieldId, FieldRef};
use tracemux_core::model::{Base, Value};
use tracemux_core::typed::{FieldSchema, FieldType, FieldVisitor, IntType, Scope};

/// Index of a node in [`Columns::nodes`].
pub type NodeId = usize;

/// A leaf builder.
enum Leaf {
    I8(Int8Builder),
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    U8(UInt8Builder),
    U16(UInt16Builder),
    U32(UInt32Builder),
    U64(UInt64Builder),
    F32(Float32Builder),
    F64(Float64Builder),
    Bool(BooleanBuilder),
    Utf8(StringBuilder),
    /// Text with few distinct values (task names, enumeration labels).
    Dict(StringDictionaryBuilder<Int32Type>),
    Bin(BinaryBuilder),
}

impl Leaf {
    // Builders start empty and grow with the rows they get: a table that
    // gets few rows (most of a wide trace's) holds little.
    fn dict() -> Leaf {
        Leaf::Dict(StringDictionaryBuilder::with_capacity(0, 0, 0))
    }
    fn int(t: &IntType) -> Leaf {
        match (t.bits, t.signed) {
            (0..=8, true) => Leaf::I8(Int8Builder::with_capacity(0)),
            (9..=16, true) => Leaf::I16(Int16Builder::with_capacity(0)),
            (17..=32, true) => Leaf::I32(Int32Builder::with_capacity(0)),
            (_, true) => Leaf::I64(Int64Builder::with_capacity(0)),
            (0..=8, false) => Leaf::U8(UInt8Builder::with_capacity(0)),
            (9..=16, false) => Leaf::U16(UInt16Builder::with_capacity(0)),
            (17..=32, false) => Leaf::U32(UInt32Builder::with_capacity(0)),
            (_, false) => Leaf::U64(UInt64Builder::with_capacity(0)),
        }
    }
    fn data_type(&self) -> DataType {
        match self {
            Leaf::I8(_) => DataType::Int8,
            Leaf::I16(_) => DataType::Int16,
            Leaf::I32(_) => DataType::Int32,
            Leaf::I64(_) => DataType::Int64,
            Leaf::U8(_) => DataType::UInt8,
            Leaf::U16(_) => DataType::UInt16,
            Leaf::U32(_) => DataType::UInt32,
            Leaf::U64(_) => DataType::UInt64,
            Leaf::F32(_) => DataType::Float32,
            Leaf::F64(_) => DataType::Float64,
            Leaf::Bool(_) => DataType::Boolean,
            Leaf::Utf8(_) => DataType::Utf8,
            Leaf::Dict(_) => {
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
            }
            Leaf::Bin(_) => DataType::Binary,
        }
    }
    fn len(&self) -> usize {
        use arrow_array::builder::ArrayBuilder;
        match self {
            Leaf::I8(b) => b.len(),
            Leaf::I16(b) => b.len(),
            Leaf::I32(b) => b.len(),
            Leaf::I64(b) => b.len(),
            Leaf::U8(b) => b.len(),
            Leaf::U16(b) => b.len(),
            Leaf::U32(b) => b.len(),
            Leaf::U64(b) => b.len(),
            Leaf::F32(b) => b.len(),
            Leaf::F64(b) => b.len(),
            Leaf::Bool(b) => b.len(),
            Leaf::Utf8(b) => b.len(),
            Leaf::Dict(b) => b.len(),
            Leaf::Bin(b) => b.len(),
        }
    }
    fn null(&mut self) {
        match self {
            Leaf::I8(b) => b.append_null(),
            Leaf::I16(b) => b.append_null(),
            Leaf::I32(b) => b.append_null(),
            Leaf::I64(b) => b.append_null(),
            Leaf::U8(b) => b.append_null(),
            Leaf::U16(b) => b.append_null(),
            Leaf::U32(b) => b.append_null(),
            Leaf::U64(b) => b.append_null(),
            Leaf::F32(b) => b.append_null(),
            Leaf::F64(b) => b.append_null(),
            Leaf::Bool(b) => b.append_null(),
            Leaf::Utf8(b) => b.append_null(),
            Leaf::Dict(b) => b.append_null(),
            Leaf::Bin(b) => b.append_null(),
        }
    }
    /// Append `v`, converted to this column's type; `false` (and a null)
    /// when it has another shape.
    fn push(&mut self, v: Value<'_>) -> bool {
        let (i, u, f) = match v {
            Value::Unsigned(x) => (x as i64, x, x as f64),
            Value::Signed(x) => (x, x as u64, x as f64),
            Value::Bool(b) => (b as i64, b as u64, b as u8 as f64),
            Value::Float(x) => (x as i64, x as u64, x),
            Value::Str(b) | Value::Bytes(b) => return self.push_bytes(b),
            Value::IntArray { data, .. } => return self.push_bytes(data),
        };
        match self {
            Leaf::I8(b) => b.append_value(i as i8),
            Leaf::I16(b) => b.append_value(i as i16),
            Leaf::I32(b) => b.append_value(i as i32),
            Leaf::I64(b) => b.append_value(i),
            Leaf::U8(b) => b.append_value(u as u8),
            Leaf::U16(b) => b.append_value(u as u16),
            Leaf::U32(b) => b.append_value(u as u32),
            Leaf::U64(b) => b.append_value(u),
            Leaf::F32(b) => b.append_value(f as f32),
            Leaf::F64(b) => b.append_value(f),
            Leaf::Bool(b) => b.append_value(u != 0),
            _ => {
                self.null();
                return false;
            }
        }
        true
    }
    fn push_bytes(&mut self, b: &[u8]) -> bool {
        match self {
            Leaf::Utf8(s) => s.append_value(text(b)),
            Leaf::Dict(s) => {
                s.append_value(text(b));
            }
            Leaf::Bin(s) => s.append_value(b),
            _ => {
                self.null();
                return false;
            }
        }
        true
    }
    fn push_str(&mut self, s: &str) {
        match self {
            Leaf::Utf8(b) => b.append_value(s),
            Leaf::Dict(b) => {
                b.append_value(s);
            }
            Leaf::Bin(b) => b.append_value(s.as_bytes()),
            _ => self.null(),
        }
    }
    fn finish(&mut self) -> ArrayRef {
        match self {
            Leaf::I8(b) => Arc::new(b.finish()),
            Leaf::I16(b) => Arc::new(b.finish()),
            Leaf::I32(b) => Arc::new(b.finish()),
            Leaf::I64(b) => Arc::new(b.finish()),
            Leaf::U8(b) => Arc::new(b.finish()),
            Leaf::U16(b) => Arc::new(b.finish()),
            Leaf::U32(b) => Arc::new(b.finish()),
            Leaf::U64(b) => Arc::new(b.finish()),
            Leaf::F32(b) => Arc::new(b.finish()),
            Leaf::F64(b) => Arc::new(b.finish()),
            Leaf::Bool(b) => Arc::new(b.finish()),
            Leaf::Utf8(b) => Arc::new(b.finish()),
            Leaf::Dict(b) => Arc::new(b.finish()),
            Leaf::Bin(b) => Arc::new(b.finish()),
        }
    }
}

/// `b` as text: as it is when it is UTF-8 (checked by the standard
/// library's word-at-a-time validation, much faster than the lossy scan),
/// else with U+FFFD for what is not.
#[inline]
fn text(b: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}

enum Kind {
    Leaf(Leaf),
    /// Members by name; also variants (first member `_tag`, the chosen
    /// option's name, then one member per option) and enumerations
    /// (`value`, `label`).
    Struct {
        children: Vec<NodeId>,
        valid: NullBufferBuilder,
        len: usize,
        shape: Shape,
    },
    List {
        child: NodeId,
        offsets: Vec<i32>,
        valid: NullBufferBuilder,
    },
    /// A field class with no column (an empty structure: Parquet cannot
    /// store one); whatever comes for it is skipped.
    Absent,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Struct,
    Variant,
    Enum,
}

struct Node {
    name: String,
    kind: Kind,
    /// `false` for a top-level column projected away: nothing is
    /// appended to it and it is not in the table.
    live: bool,
}

/// What to do with the value the visitor hands over next.
#[derive(Clone, Copy)]
enum Frame {
    /// Members of a structure (or of the table's root) by name.
    Struct(NodeId),
    /// The elements of an array.
    List(NodeId),
    /// The one value of a variant's chosen option, or of a present
    /// optional: goes to this node, once.
    Once(Option<NodeId>),
    /// Inside something without a column: nested begins and ends counted.
    Skip(u32),
}

/// Where a field's values go, as [`Columns::lookup`] found it.
#[derive(Clone, Copy, Default)]
enum Slot {
    /// This member of the structure.
    Node(NodeId),
    /// This field of [`Columns::payload`].
    Payload(usize),
    /// No column: skipped (counted as unknown).
    #[default]
    Nowhere,
}

/// A field's [`Slot`] in the structure it was resolved in (`parent`: that
/// structure's node + 1; 0: not resolved yet).
#[derive(Clone, Copy, Default)]
struct Resolved {
    parent: u32,
    slot: Slot,
}

/// The top level of a table (the columns of one row) as a structure node
/// without validity: [`Columns::ROOT`].
pub struct Columns {
    nodes: Vec<Node>,
    stack: Vec<Frame>,
    /// The payload's fields by their own name (their columns may be
    /// named otherwise, see [`Columns::add_scope`]); `None` when projected
    /// away.
    payload: Vec<(String, Option<NodeId>)>,
    /// The structure column of each scope but the payload.
    scopes: Vec<(Scope, NodeId)>,
    /// Where the next payload field is likely to be in `payload`.
    hint: usize,
    /// Where each field of the class went, by its [`FieldId`]: resolved
    /// by name at its first value, read by index after.
    resolved: Vec<Resolved>,
    /// Values that had another shape than their column (counted, nulled).
    pub mismatches: u64,
    /// Values for which no column exists (counted, skipped).
    pub unknown: u64,
    /// Field values handed to these columns by visits (wanted or not,
    /// see [`FieldVisitor::wants`]): what a projection saves shows here.
    pub visited: u64,
    /// Some payload field was projected away.
    projected: bool,
    /// Every integer column Int64 and every float Float64 (the portable
    /// schema of datasets, see [`Columns::portable`]).
    wide: bool,
}

impl Columns {
    pub const ROOT: NodeId = 0;

    pub fn new() -> Self {
        Columns {
            nodes: vec![Node {
                name: String::new(),
                kind: Kind::Struct {
                    children: Vec::new(),
                    valid: NullBufferBuilder::new(0),
                    len: 0,
                    shape: Shape::Struct,
                },
                live: true,
            }],
            stack: Vec::new(),
            payload: Vec::new(),
            scopes: Vec::new(),
            hint: 0,
            resolved: Vec::new(),
            mismatches: 0,
            unknown: 0,
            visited: 0,
            projected: false,
            wide: false,
        }
    }

    /// Columns of the portable schema: every integer Int64 (an unsigned
    /// 64-bit value kept as its bit pattern, as Perfetto's trace processor
    /// keeps it), every float Float64, so that a table has one schema
    /// whatever the width a kernel, architecture or format gives a field.
    pub fn portable() -> Self {
        Columns {
            wide: true,
            ..Columns::new()
        }
    }

    /// Rename top-level column `name` to `to` (the dataset's rule for a
    /// field of another kind than the column of that name had before).
    pub fn rename(&mut self, name: &str, to: &str) {
        if let Some(id) = self.child(Self::ROOT, name) {
            self.nodes[id].name = to.to_string();
        }
    }

    /// Keep only the top-level columns for which `keep` says yes (a
    /// projection): the others get no values, payload fields and scopes
    /// without a column are skipped without being counted as unknown, and
    /// [`Columns::fields`] no longer lists them. Names and types of the
    /// columns kept do not change.
    pub fn project(&mut self, keep: &dyn Fn(&str) -> bool) {
        let Kind::Struct { children, .. } = &self.nodes[Self::ROOT].kind else {
            return;
        };
        let mut dropped = Vec::new();
        let kept: Vec<NodeId> = children
            .iter()
            .copied()
            .filter(|&c| {
                let k = keep(&self.nodes[c].name);
                if !k {
                    dropped.push(c);
                }
                k
            })
            .collect();
        for &c in &dropped {
            self.nodes[c].live = false;
        }
        for (_, id) in &mut self.payload {
            if id.is_some_and(|c| dropped.contains(&c)) {
                *id = None;
                self.projected = true;
            }
        }
        self.scopes.retain(|(_, c)| !dropped.contains(c));
        if let Kind::Struct { children, .. } = &mut self.nodes[Self::ROOT].kind {
            *children = kept;
        }
    }

    /// Whether top-level column `id` is in the table (see
    /// [`Columns::project`]).
    pub fn is_live(&self, id: NodeId) -> bool {
        self.nodes[id].live
    }

    /// Add a top-level column of type `ty` named `name` (made unique among
    /// the columns).
    pub fn add(&mut self, name: &str, ty: &FieldType) -> NodeId {
        self.add_to(Self::ROOT, name, ty)
    }

    /// Add a top-level text column with dictionary encoding.
    pub fn add_dict(&mut self, name: &str) -> NodeId {
        let id = self.push_node(name, Kind::Leaf(Leaf::dict()));
        self.attach(Self::ROOT, id);
        id
    }

    /// The scopes besides the payload that have a column.
    pub fn scopes(&self) -> impl Iterator<Item = Scope> + '_ {
        self.scopes.iter().map(|&(s, _)| s)
    }

    pub fn has_column(&self, name: &str) -> bool {
        self.child(Self::ROOT, name).is_some()
    }

    fn push_node(&mut self, name: &str, kind: Kind) -> NodeId {
        self.nodes.push(Node {
            name: name.to_string(),
            kind,
            live: true,
        });
        self.nodes.len() - 1
    }

    fn attach(&mut self, parent: NodeId, child: NodeId) {
        // unique, non-empty member names (Arrow and Parquet need them)
        let mut name = std::mem::take(&mut self.nodes[child].name);
        if name.is_empty() {
            name = "_".into();
        }
        if self.child(parent, &name).is_some() {
            let mut k = 2;
            while self.child(parent, &format!("{name}_{k}")).is_some() {
                k += 1;
            }
            name = format!("{name}_{k}");
        }
        self.nodes[child].name = name;
        if let Kind::Struct { children, .. } = &mut self.nodes[parent].kind {
            children.push(child);
        }
    }

    fn add_to(&mut self, parent: NodeId, name: &str, ty: &FieldType) -> NodeId {
        let id = self.build(name, ty);
        self.attach(parent, id);
        id
    }

    /// A node (and its subtree) for `ty`, not attached.
    fn build(&mut self, name: &str, ty: &FieldType) -> NodeId {
        match ty {
            FieldType::Int(t) if !t.mappings.is_empty() => {
                let id = self.new_struct(name, Shape::Enum);
                self.add_to(id, "value", &FieldType::Int(IntType::new(t.bits, t.signed)));
                let l = self.push_node("label", Kind::Leaf(Leaf::dict()));
                self.attach(id, l);
                id
            }
            FieldType::Int(_) if self.wide => {
                self.push_node(name, Kind::Leaf(Leaf::I64(Int64Builder::with_capacity(0))))
            }
            FieldType::Int(t) => self.push_node(name, Kind::Leaf(Leaf::int(t))),
            FieldType::Bool => self.push_node(
                name,
                Kind::Leaf(Leaf::Bool(BooleanBuilder::with_capacity(0))),
            ),
            FieldType::Float { bits: 32 } if !self.wide => self.push_node(
                name,
                Kind::Leaf(Leaf::F32(Float32Builder::with_capacity(0))),
            ),
            FieldType::Float { .. } => self.push_node(
                name,
                Kind::Leaf(Leaf::F64(Float64Builder::with_capacity(0))),
            ),
            FieldType::Str => self.push_node(
                name,
                Kind::Leaf(Leaf::Utf8(StringBuilder::with_capacity(0, 0))),
            ),
            FieldType::Blob => self.push_node(
                name,
                Kind::Leaf(Leaf::Bin(BinaryBuilder::with_capacity(0, 0))),
            ),
            FieldType::Array { elem, .. } => {
                let child = self.build("item", elem);
                if matches!(self.nodes[child].kind, Kind::Absent) {
                    return self.push_node(name, Kind::Absent);
                }
                self.push_node(
                    name,
                    Kind::List {
                        child,
                        offsets: vec![0],
                        valid: NullBufferBuilder::new(0),
                    },
                )
            }
            FieldType::Struct(members) => self.build_struct(name, members, Shape::Struct),
            FieldType::Variant(options) => self.build_struct(name, options, Shape::Variant),
            FieldType::Optional(inner) => self.build(name, inner),
        }
    }

    fn new_struct(&mut self, name: &str, shape: Shape) -> NodeId {
        self.push_node(
            name,
            Kind::Struct {
                children: Vec::new(),
                valid: NullBufferBuilder::new(0),
                len: 0,
                shape,
            },
        )
    }

    fn build_struct(&mut self, name: &str, members: &[FieldSchema], shape: Shape) -> NodeId {
        let id = self.new_struct(name, shape);
        if shape == Shape::Variant {
            let t = self.push_node("_tag", Kind::Leaf(Leaf::dict()));
            self.attach(id, t);
        }
        for m in members {
            let c = self.build(&m.name, &m.ty);
            if matches!(self.nodes[c].kind, Kind::Absent) {
                continue;
            }
            self.attach(id, c);
        }
        match &self.nodes[id].kind {
            Kind::Struct { children, .. } if children.is_empty() => {
                self.nodes[id].kind = Kind::Absent;
            }
            _ => {}
        }
        id
    }

    /// Add the fields of one scope as top-level columns (or, for every
    /// scope but the payload, as one structure column named after the
    /// scope).
    pub fn add_scope(&mut self, scope: Scope, fields: &[FieldSchema]) {
        if scope == Scope::EventHeader {
            return;
        }
        if scope == Scope::Payload {
            for f in fields {
                let name = if self.has_column(&f.name) {
                    format!("field_{}", f.name)
                } else {
                    f.name.clone()
                };
                let id = self.build(&name, &f.ty);
                if !matches!(self.nodes[id].kind, Kind::Absent) {
                    self.attach(Self::ROOT, id);
                    self.payload.push((f.name.clone(), Some(id)));
                }
            }
            return;
        }
        let id = self.build_struct(scope.name(), fields, Shape::Struct);
        if !matches!(self.nodes[id].kind, Kind::Absent) {
            self.attach(Self::ROOT, id);
            self.scopes.push((scope, id));
        }
    }

    /// The structure column of `scope` (not the payload), if the table has
    /// one (and it was not projected away).
    pub(crate) fn scope_column(&self, scope: Scope) -> Option<NodeId> {
        self.scopes
            .iter()
            .find(|(s, _)| *s == scope)
            .map(|&(_, c)| c)
    }

    /// The members of structure column `id`.
    pub(crate) fn members(&self, id: NodeId) -> &[NodeId] {
        match &self.nodes[id].kind {
            Kind::Struct { children, .. } => children,
            _ => &[],
        }
    }

    /// The column of each payload field, in order (`None`: projected
    /// away), or `None` when some field has no column at all.
    pub(crate) fn payload_columns(&self, fields: usize) -> Option<Vec<Option<NodeId>>> {
        (self.payload.len() == fields).then(|| self.payload.iter().map(|&(_, c)| c).collect())
    }

    /// Value `v` into column `id` of the current row (a field the flat
    /// path reads: counted as visited).
    #[inline]
    pub(crate) fn put(&mut self, id: NodeId, v: Value<'_>) {
        self.visited += 1;
        self.leaf_value(id, v);
    }

    /// Open structure column `id` for the current row.
    #[inline]
    pub(crate) fn open(&mut self, id: NodeId) {
        self.open_struct(id);
    }

    fn child(&self, parent: NodeId, name: &str) -> Option<NodeId> {
        match &self.nodes[parent].kind {
            Kind::Struct { children, .. } => children
                .iter()
                .copied()
                .find(|&c| self.nodes[c].name == name),
            _ => None,
        }
    }

    fn len(&self, id: NodeId) -> usize {
        match &self.nodes[id].kind {
            Kind::Leaf(l) => l.len(),
            Kind::Struct { len, .. } => *len,
            Kind::List { offsets, .. } => offsets.len() - 1,
            Kind::Absent => 0,
        }
    }

    /// Rows in the table so far.
    pub fn rows(&self) -> usize {
        self.len(Self::ROOT)
    }

    /// Append a null to `id` (and, for containers, to what they need).
    fn null(&mut self, id: NodeId) {
        match &mut self.nodes[id].kind {
            Kind::Leaf(l) => l.null(),
            Kind::Struct { valid, len, .. } => {
                valid.append_null();
                *len += 1;
                self.pad(id);
            }
            Kind::List { offsets, valid, .. } => {
                let last = *offsets.last().unwrap_or(&0);
                offsets.push(last);
                valid.append_null();
            }
            Kind::Absent => {}
        }
    }

    /// Pad the members of structure `id` with nulls up to its length.
    fn pad(&mut self, id: NodeId) {
        let (n, len) = match &self.nodes[id].kind {
            Kind::Struct { children, len, .. } => (children.len(), *len),
            _ => return,
        };
        for k in 0..n {
            let c = match &self.nodes[id].kind {
                Kind::Struct { children, .. } => children[k],
                _ => return,
            };
            while self.len(c) < len {
                self.null(c);
            }
        }
    }

    /// Start a row: the top-level columns expect values.
    pub fn begin_row(&mut self) {
        if let Kind::Struct { len, valid, .. } = &mut self.nodes[Self::ROOT].kind {
            *len += 1;
            valid.append_non_null();
        }
        self.stack.clear();
        self.stack.push(Frame::Struct(Self::ROOT));
        self.hint = 0;
    }

    /// End a row: whatever the event did not give becomes null.
    pub fn end_row(&mut self) {
        self.stack.clear();
        self.pad(Self::ROOT);
    }

    /// Set top-level column `id` of the current row.
    pub fn set(&mut self, id: NodeId, v: Value<'_>) {
        if self.nodes[id].live && self.len(id) < self.rows() {
            if let Kind::Leaf(l) = &mut self.nodes[id].kind {
                if !l.push(v) {
                    self.mismatches += 1;
                }
            }
        }
    }

    /// Set top-level text column `id` of the current row.
    pub fn set_str(&mut self, id: NodeId, s: &str) {
        if self.nodes[id].live && self.len(id) < self.rows() {
            if let Kind::Leaf(l) = &mut self.nodes[id].kind {
                l.push_str(s);
            }
        }
    }

    /// Where the next value, of field `f`, goes: a node not yet filled in
    /// this row, or `None` (the value is skipped).
    fn target(&mut self, f: FieldRef<'_>) -> Option<NodeId> {
        let frame = *self.stack.last()?;
        let t = match frame {
            Frame::Struct(p) => {
                let node = match self.lookup(f, p) {
                    Slot::Node(c) => Some(c),
                    Slot::Payload(k) => self.payload[k].1,
                    Slot::Nowhere => {
                        self.unknown += 1;
                        return None;
                    }
                };
                // a payload field projected away: skipped, not unknown
                return node.filter(|&c| self.len(c) < self.len(p));
            }
            Frame::List(p) => match self.nodes[p].kind {
                Kind::List { child, .. } => Some(child),
                _ => None,
            },
            Frame::Once(t) => {
                if let Some(Frame::Once(slot)) = self.stack.last_mut() {
                    *slot = None;
                }
                t
            }
            Frame::Skip(_) => return None,
        };
        if t.is_none() {
            self.unknown += 1;
        }
        t
    }

    /// Where field `f` goes among the members of structure `p` (the
    /// table's root: the payload's fields): from [`Columns::resolved`],
    /// or by its name the first time (and when `f` arrives in another
    /// structure than before).
    #[inline]
    fn lookup(&mut self, f: FieldRef<'_>, p: NodeId) -> Slot {
        let i = f.id.index();
        if let Some(r) = self.resolved.get(i) {
            if r.parent == p as u32 + 1 {
                return r.slot;
            }
        }
        let name = f.name();
        let slot = if p == Self::ROOT {
            // fields come in schema order: try the one after the last
            let k = match self.payload.get(self.hint) {
                Some((n, _)) if n == name => Some(self.hint),
                _ => self.payload.iter().position(|(n, _)| n == name),
            };
            match k {
                Some(k) => {
                    self.hint = k + 1;
                    Slot::Payload(k)
                }
                None => Slot::Nowhere,
            }
        } else {
            self.child(p, name).map_or(Slot::Nowhere, Slot::Node)
        };
        // ids are places in the class's layout: bounded by it, not by a
        // file (an id past any layout is not kept)
        if f.id != FieldId::UNKNOWN && i < (1 << 20) {
            if self.resolved.len() <= i {
                self.resolved.resize(i + 1, Resolved::default());
            }
            self.resolved[i] = Resolved {
                parent: p as u32 + 1,
                slot,
            };
        }
        slot
    }

    /// A compound where the schema has another kind: a null there.
    fn mismatch(&mut self, id: NodeId) -> Option<Frame> {
        self.mismatches += 1;
        self.null(id);
        None
    }

    fn skipping(&mut self) -> bool {
        matches!(self.stack.last(), Some(Frame::Skip(_)) | None)
    }

    /// Enter a container: push `f`, or a skip frame when there is no node
    /// of the right kind.
    fn enter(&mut self, f: Option<Frame>) {
        match (f, self.stack.last_mut()) {
            (None, Some(Frame::Skip(depth))) => *depth += 1,
            (None, _) => self.stack.push(Frame::Skip(1)),
            (Some(f), _) => self.stack.push(f),
        }
    }

    /// Leave a container; `close` runs on the node of the frame left.
    fn leave(&mut self) -> Option<Frame> {
        let at_root = self.stack.len() == 1;
        match self.stack.last_mut() {
            Some(Frame::Skip(depth)) if *depth > 1 => {
                *depth -= 1;
                None
            }
            // the table's root stays
            Some(Frame::Struct(Self::ROOT)) if at_root => None,
            _ => self.stack.pop(),
        }
    }

    fn leaf_value(&mut self, id: NodeId, v: Value<'_>) {
        match &mut self.nodes[id].kind {
            Kind::Leaf(l) => {
                if !l.push(v) {
                    self.mismatches += 1;
                }
            }
            Kind::List { .. } => self.list_from_leaf(id, v),
            Kind::Struct {
                shape: Shape::Enum, ..
            } => self.enum_value(id, v, &[]),
            _ => {
                self.mismatches += 1;
                self.null(id);
            }
        }
    }

    /// An array that came as one leaf (ftrace arrays, bytes): its elements.
    fn list_from_leaf(&mut self, id: NodeId, v: Value<'_>) {
        let Kind::List { child, .. } = self.nodes[id].kind else {
            return;
        };
        match v {
            Value::IntArray {
                data, elem_size, ..
            } => {
                let n = data.len() / usize::from(elem_size.max(1));
                for j in 0..n {
                    match v.array_elem(j) {
                        Some(x) if x < 0 => self.leaf_value(child, Value::Signed(x as i64)),
                        Some(x) => self.leaf_value(child, Value::Unsigned(x as u64)),
                        None => self.null(child),
                    }
                }
            }
            // what a reader gives for a field it could not decode
            Value::Bytes([]) => {
                self.mismatches += 1;
                return self.null(id);
            }
            Value::Bytes(b) | Value::Str(b) => {
                for &x in b {
                    self.leaf_value(child, Value::Unsigned(u64::from(x)));
                }
            }
            other => self.leaf_value(child, other),
        }
        self.close_list(id);
    }

    fn close_list(&mut self, id: NodeId) {
        let Kind::List { child, .. } = self.nodes[id].kind else {
            return;
        };
        let n = self.len(child) as i32;
        if let Kind::List { offsets, valid, .. } = &mut self.nodes[id].kind {
            offsets.push(n);
            valid.append_non_null();
        }
    }

    fn enum_value(&mut self, id: NodeId, v: Value<'_>, labels: &[&str]) {
        let Kind::Struct {
            children,
            valid,
            len,
            shape: Shape::Enum,
        } = &mut self.nodes[id].kind
        else {
            return self.leaf_value(id, v);
        };
        valid.append_non_null();
        *len += 1;
        let (value, label) = (children[0], children[1]);
        self.leaf_value(value, v);
        if !labels.is_empty() {
            if let Kind::Leaf(l) = &mut self.nodes[label].kind {
                if labels.len() == 1 {
                    l.push_str(labels[0]);
                } else {
                    l.push_str(&labels.join(","));
                }
            }
        }
        self.pad(id);
    }

    fn open_struct(&mut self, id: NodeId) {
        if let Kind::Struct { valid, len, .. } = &mut self.nodes[id].kind {
            valid.append_non_null();
            *len += 1;
        }
    }

    /// The columns' types, as Arrow fields (top level).
    pub fn fields(&self) -> Fields {
        match &self.nodes[Self::ROOT].kind {
            Kind::Struct { children, .. } => children
                .iter()
                .map(|&c| self.field(c))
                .collect::<Vec<_>>()
                .into(),
            _ => Fields::empty(),
        }
    }

    fn field(&self, id: NodeId) -> Field {
        Field::new(&self.nodes[id].name, self.data_type(id), true)
    }

    fn data_type(&self, id: NodeId) -> DataType {
        match &self.nodes[id].kind {
            Kind::Leaf(l) => l.data_type(),
            Kind::Struct { children, .. } => DataType::Struct(
                children
                    .iter()
                    .map(|&c| self.field(c))
                    .collect::<Vec<_>>()
                    .into(),
            ),
            Kind::List { child, .. } => DataType::List(Arc::new(self.field(*child))),
            Kind::Absent => DataType::Null,
        }
    }

    /// Take the rows built so far as arrays (one per top-level column);
    /// the builders start again empty.
    pub fn finish(&mut self) -> Vec<ArrayRef> {
        let children = match &mut self.nodes[Self::ROOT].kind {
            Kind::Struct {
                children,
                len,
                valid,
                ..
            } => {
                *len = 0;
                valid.finish();
                children.clone()
            }
            _ => Vec::new(),
        };
        children.into_iter().map(|c| self.finish_node(c)).collect()
    }

    fn finish_node(&mut self, id: NodeId) -> ArrayRef {
        let dt = self.data_type(id);
        match &mut self.nodes[id].kind {
            Kind::Leaf(l) => l.finish(),
            Kind::Struct {
                children,
                valid,
                len,
                ..
            } => {
                let nulls = valid.finish();
                *len = 0;
                let kids = children.clone();
                let arrays: Vec<ArrayRef> = kids.iter().map(|&c| self.finish_node(c)).collect();
                let DataType::Struct(fields) = dt else {
                    unreachable!("a structure node has a structure type")
                };
                Arc::new(StructArray::new(fields, arrays, nulls))
            }
            Kind::List {
                child,
                offsets,
                valid,
            } => {
                let nulls = valid.finish();
                let offs = std::mem::replace(offsets, vec![0]);
                let child = *child;
                let values = self.finish_node(child);
                let DataType::List(f) = dt else {
                    unreachable!("a list node has a list type")
                };
                Arc::new(ListArray::new(
                    f,
                    OffsetBuffer::new(ScalarBuffer::from(offs)),
                    values,
                    nulls,
                ))
            }
            Kind::Absent => Arc::new(arrow_array::NullArray::new(0)),
        }
    }
}

impl Default for Columns {
    fn default() -> Self {
        Self::new()
    }
}

impl FieldVisitor for Columns {
    fn wants(&self, f_: FieldRef<'_>) -> bool {
        let scope = f_.scope();
        let name = f_.name();
        match scope {
            Scope::EventHeader => false,
            Scope::Payload => {
                !self.projected || !self.payload.iter().any(|(n, c)| n == name && c.is_none())
            }
            s => self.scopes.iter().any(|(x, _)| *x == s),
        }
    }
    fn field(&mut self, f_: FieldRef<'_>, _base: Base, value: Value<'_>) {
        self.visited += 1;
        if let Some(t) = self.target(f_) {
            self.leaf_value(t, value);
        }
    }
    fn enum_field(&mut self, f_: FieldRef<'_>, value: Value<'_>, labels: &[&str]) {
        self.visited += 1;
        if let Some(t) = self.target(f_) {
            self.enum_value(t, value, labels);
        }
    }
    fn scope_begin(&mut self, scope: Scope) {
        // back at the row's top level (an unbalanced visit is cut here)
        self.stack.truncate(1);
        match scope {
            Scope::EventHeader => self.stack.push(Frame::Skip(1)),
            Scope::Payload => {}
            s => {
                let col = self.scopes.iter().find(|(x, _)| *x == s).map(|&(_, c)| c);
                let f = col.filter(|&c| self.len(c) < self.rows()).map(|id| {
                    self.open_struct(id);
                    Frame::Struct(id)
                });
                self.enter(f);
            }
        }
    }
    fn scope_end(&mut self, _scope: Scope) {
        while self.stack.len() > 1 {
            if let Some(Frame::Struct(id)) = self.stack.pop() {
                self.pad(id);
            }
        }
    }
    fn struct_begin(&mut self, f_: FieldRef<'_>) {
        if self.skipping() {
            return self.enter(None);
        }
        let f = self.target(f_).and_then(|id| match self.nodes[id].kind {
            Kind::Struct {
                shape: Shape::Struct,
                ..
            } => {
                self.open_struct(id);
                Some(Frame::Struct(id))
            }
            _ => self.mismatch(id),
        });
        self.enter(f);
    }
    fn struct_end(&mut self) {
        if let Some(Frame::Struct(id)) = self.leave() {
            self.pad(id);
        }
    }
    fn array_begin(&mut self, f_: FieldRef<'_>, _len: u64) {
        if self.skipping() {
            return self.enter(None);
        }
        let f = self.target(f_).and_then(|id| match self.nodes[id].kind {
            Kind::List { .. } => Some(Frame::List(id)),
            _ => self.mismatch(id),
        });
        self.enter(f);
    }
    fn array_end(&mut self) {
        if let Some(Frame::List(id)) = self.leave() {
            self.close_list(id);
        }
    }
    fn variant_begin(&mut self, f_: FieldRef<'_>, o_: FieldRef<'_>) {
        let option = o_.option();
        if self.skipping() {
            return self.enter(None);
        }
        let f = self.target(f_).and_then(|id| match self.nodes[id].kind {
            Kind::Struct {
                shape: Shape::Variant,
                ref children,
                ..
            } => {
                let tag = children[0];
                self.open_struct(id);
                if let Kind::Leaf(l) = &mut self.nodes[tag].kind {
                    l.push_str(option);
                }
                let opt = self.child(id, option);
                if opt.is_none() {
                    self.unknown += 1;
                }
                // the option's value comes next, once; the variant's
                // members are padded when it ends
                self.stack.push(Frame::Struct(id));
                Some(Frame::Once(opt))
            }
            _ => self.mismatch(id),
        });
        self.enter(f);
    }
    fn variant_end(&mut self) {
        match self.leave() {
            Some(Frame::Once(_)) => {
                if let Some(Frame::Struct(id)) = self.stack.pop() {
                    self.pad(id);
                }
            }
            Some(Frame::Struct(id)) => self.pad(id),
            _ => {}
        }
    }
    fn optional_begin(&mut self, f_: FieldRef<'_>, present: bool) {
        if self.skipping() {
            return self.enter(None);
        }
        let t = self.target(f_);
        if !present {
            if let Some(id) = t {
                self.null(id);
            }
            return self.enter(Some(Frame::Once(None)));
        }
        self.enter(Some(Frame::Once(t)));
    }
    fn optional_end(&mut self) {
        self.leave();
    }
}
