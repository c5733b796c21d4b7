//! Event values into packet bytes: a [`FieldVisitor`] that walks the
//! class's arena nodes alongside the visit and appends every value in the
//! CTF layout (little-endian, byte-aligned) to the packet buffer.
//!
//! The visit and the schema are matched by position: each leaf, structure,
//! array, variant or optional the visitor hands over fills the next field
//! of the schema. Fields the visit leaves out are written with default
//! values (0, empty string, empty sequence, first option), values beyond
//! the schema are dropped, so the bytes always match the metadata.

use tracemux_core::layout::FieldRef;
use tracemux_core::model::{Base, Value};
use tracemux_core::typed::{FieldVisitor, Scope};

use super::layout::{Arena, Kind};

/// Where the next value goes.
#[derive(Debug, Clone, Copy)]
pub enum Frame {
    /// Members of a structure node (or the event root), next at `pos`.
    Seq { node: u32, pos: u32 },
    /// Elements of an array: `expect` of them, `done` so far.
    Arr { elem: u32, expect: u64, done: u64 },
    /// The one value of a variant option or a present optional.
    One { node: u32, done: bool },
    /// Values that have no place in the schema (nesting depth).
    Skip { depth: u32 },
    /// The structure around the variant, optional or array of the frame
    /// above (its tag or length and value: nothing else to write), closed
    /// with it.
    Wrapped,
}

/// The serializer of one event.
pub struct Ser<'a> {
    pub arena: &'a Arena,
    pub out: &'a mut Vec<u8>,
    pub frames: &'a mut Vec<Frame>,
    /// Where each scope starts among the root's members:
    /// [common, specific, payload, end].
    pub starts: [u32; 4],
}

fn put(out: &mut Vec<u8>, v: u64, bytes: u8) {
    out.extend_from_slice(&v.to_le_bytes()[..bytes as usize]);
}

impl Ser<'_> {
    /// Open the event: the root structure's members.
    pub fn begin(&mut self, root: u32) {
        self.frames.clear();
        self.frames.push(Frame::Seq { node: root, pos: 0 });
    }

    /// Close everything and write defaults for what the visit left out.
    pub fn finish(&mut self) {
        while !self.frames.is_empty() {
            self.close();
        }
    }

    fn default(&mut self, node: u32) {
        let n = self.arena.nodes[node as usize];
        match n.kind {
            Kind::Int(b) | Kind::Float(b) => put(self.out, 0, b),
            Kind::Str => self.out.push(0),
            Kind::Array(None) => put(self.out, 0, 4),
            Kind::ArrayExt => {}
            Kind::Array(Some(len)) => {
                let elem = self.arena.kids[n.first as usize];
                for _ in 0..len {
                    self.default(elem);
                }
            }
            Kind::Struct => {
                for i in 0..n.n {
                    self.default(self.arena.kids[(n.first + i) as usize]);
                }
            }
            Kind::Variant => {
                put(self.out, 0, 4);
                if n.n > 0 {
                    self.default(self.arena.kids[n.first as usize]);
                }
            }
            Kind::Optional => put(self.out, 0, 4),
            Kind::Wrap => {
                if n.n > 0 {
                    self.default(self.arena.kids[n.first as usize]);
                }
            }
        }
    }

    /// The node the next value fills (`None`: it has no place).
    fn slot(&mut self) -> Option<u32> {
        match self.frames.last_mut()? {
            Frame::Seq { node, pos } => {
                let k = self.arena.kid(*node, *pos)?;
                *pos += 1;
                Some(k)
            }
            Frame::Arr { elem, expect, done } => {
                if *done < *expect {
                    *done += 1;
                    Some(*elem)
                } else {
                    None
                }
            }
            Frame::One { node, done } => {
                if *done {
                    None
                } else {
                    *done = true;
                    Some(*node)
                }
            }
            Frame::Skip { .. } | Frame::Wrapped => None,
        }
    }

    /// The variant, optional or array inside `node` when it is the
    /// structure around one (a [`Frame::Wrapped`] is pushed, closed with it), else
    /// `node`.
    fn unwrap(&mut self, node: u32) -> u32 {
        if self.arena.nodes[node as usize].kind != Kind::Wrap {
            return node;
        }
        match self.arena.kid(node, 0) {
            Some(k) => {
                self.frames.push(Frame::Wrapped);
                k
            }
            None => node,
        }
    }

    /// Pop the top frame, completing it with defaults.
    fn close(&mut self) {
        match self.frames.pop() {
            Some(Frame::Seq { node, pos }) => {
                self.default_members(node, pos..self.arena.nodes[node as usize].n)
            }
            Some(Frame::Arr { elem, expect, done }) => {
                for _ in done..expect {
                    self.default(elem);
                }
            }
            Some(Frame::One { node, done: false }) => self.default(node),
            _ => {}
        }
    }

    /// Defaults for the members `range` of the structure `node`.
    fn default_members(&mut self, node: u32, range: std::ops::Range<u32>) {
        for i in range {
            if let Some(k) = self.arena.kid(node, i) {
                self.default(k);
            }
        }
    }

    /// Move the root sequence on to its member `to` (a scope's start or
    /// end), defaults for the members passed over.
    fn advance_root(&mut self, to: u32) {
        if let Some(Frame::Seq { node, pos }) = self.frames.last_mut() {
            let (node, from) = (*node, *pos);
            if from < to {
                *pos = to;
                self.default_members(node, from..to);
            }
        }
    }

    /// A nested value that `slot` (if any) cannot hold: the slot gets its
    /// default and the value is skipped.
    fn skip_nested(&mut self, slot: Option<u32>) {
        if let Some(n) = slot {
            self.default(n);
        }
        self.frames.push(Frame::Skip { depth: 1 });
    }

    /// Where an array, variant or optional begins: its node (inside the
    /// structure that wraps it, if any) when its kind `fits`; else `None`,
    /// and the value is skipped.
    fn wrapped_slot(&mut self, fits: fn(Kind) -> bool) -> Option<u32> {
        if self.nested_skip() {
            return None;
        }
        match self.slot().map(|n| self.unwrap(n)) {
            Some(n) if fits(self.arena.nodes[n as usize].kind) => Some(n),
            other => {
                self.skip_nested(other);
                None
            }
        }
    }

    /// A nested value begins: `true` when the caller pushed a frame for
    /// it; otherwise a skip level was added.
    fn nested_skip(&mut self) -> bool {
        if let Some(Frame::Skip { depth }) = self.frames.last_mut() {
            *depth += 1;
            return true;
        }
        false
    }

    fn nested_end(&mut self) {
        let deep = self.frames.len() > 1;
        match self.frames.last_mut() {
            Some(Frame::Skip { depth }) => {
                *depth -= 1;
                if *depth > 0 {
                    return;
                }
                self.frames.pop();
            }
            // never close the root here
            Some(_) if deep => self.close(),
            _ => return,
        }
        // the structure around a variant or optional ends with it
        if let Some(Frame::Wrapped) = self.frames.last() {
            self.frames.pop();
        }
    }

    /// Write a leaf value into `node`.
    fn leaf(&mut self, node: u32, v: &Value<'_>) {
        let n = self.arena.nodes[node as usize];
        match n.kind {
            Kind::Int(b) => put(self.out, v.raw_u64(), b),
            Kind::Float(b) => {
                let f = match *v {
                    Value::Float(f) => f,
                    Value::Unsigned(x) => x as f64,
                    Value::Signed(x) => x as f64,
                    _ => 0.0,
                };
                if b == 4 {
                    put(self.out, u64::from((f as f32).to_bits()), 4);
                } else {
                    put(self.out, f.to_bits(), 8);
                }
            }
            Kind::Str => {
                match *v {
                    Value::Str(s) | Value::Bytes(s) => {
                        let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
                        self.out.extend_from_slice(&s[..end]);
                    }
                    Value::IntArray {
                        data, elem_size: 1, ..
                    } => {
                        let end = data.iter().position(|&c| c == 0).unwrap_or(data.len());
                        self.out.extend_from_slice(&data[..end]);
                    }
                    Value::Unsigned(x) => self
                        .out
                        .extend_from_slice(itoa::Buffer::new().format(x).as_bytes()),
                    Value::Signed(x) => self
                        .out
                        .extend_from_slice(itoa::Buffer::new().format(x).as_bytes()),
                    _ => {}
                }
                self.out.push(0);
            }
            Kind::Array(_) | Kind::ArrayExt => {
                let len = match n.kind {
                    Kind::Array(l) => l,
                    _ => None,
                };
                let elem = self.arena.kids[n.first as usize];
                let count = match *v {
                    Value::IntArray {
                        data, elem_size, ..
                    } => data.len() / (elem_size.max(1) as usize),
                    Value::Bytes(b) | Value::Str(b) => b.len(),
                    _ => 0,
                } as u64;
                let count = match len {
                    Some(n) => n,
                    None if n.kind == Kind::ArrayExt => count,
                    None => {
                        let c = count.min(u64::from(u32::MAX));
                        put(self.out, c, 4);
                        c
                    }
                };
                for i in 0..count {
                    let x = match *v {
                        Value::IntArray { .. } => v.array_elem(i as usize),
                        Value::Bytes(b) | Value::Str(b) => b.get(i as usize).map(|&c| c as i128),
                        _ => None,
                    };
                    match x {
                        Some(x) => self.leaf(elem, &Value::Unsigned(x as u64)),
                        None => self.default(elem),
                    }
                }
            }
            // a dynamic array around which the writer put a structure
            Kind::Wrap if n.n > 0 => self.leaf(self.arena.kids[n.first as usize], v),
            _ => self.default(node),
        }
    }
}

impl FieldVisitor for Ser<'_> {
    fn field(&mut self, _f: FieldRef<'_>, _base: Base, value: Value<'_>) {
        if let Some(n) = self.slot() {
            self.leaf(n, &value);
        }
    }

    fn enum_field(&mut self, _f: FieldRef<'_>, value: Value<'_>, _labels: &[&str]) {
        if let Some(n) = self.slot() {
            self.leaf(n, &value);
        }
    }

    fn scope_begin(&mut self, scope: Scope) {
        while self.frames.len() > 1 {
            self.close();
        }
        let (start, _) = match scope {
            Scope::CommonContext => (self.starts[0], self.starts[1]),
            Scope::SpecificContext => (self.starts[1], self.starts[2]),
            Scope::Payload => (self.starts[2], self.starts[3]),
            _ => {
                self.frames.push(Frame::Skip { depth: 1 });
                return;
            }
        };
        self.advance_root(start);
    }

    fn scope_end(&mut self, scope: Scope) {
        if let Some(Frame::Skip { .. }) = self.frames.last() {
            if !matches!(
                scope,
                Scope::CommonContext | Scope::SpecificContext | Scope::Payload
            ) {
                self.frames.pop();
                return;
            }
        }
        while self.frames.len() > 1 {
            self.close();
        }
        let end = match scope {
            Scope::CommonContext => self.starts[1],
            Scope::SpecificContext => self.starts[2],
            Scope::Payload => self.starts[3],
            _ => return,
        };
        self.advance_root(end);
    }

    fn struct_begin(&mut self, _f: FieldRef<'_>) {
        if self.nested_skip() {
            return;
        }
        match self.slot() {
            Some(n) if self.arena.nodes[n as usize].kind == Kind::Struct => {
                self.frames.push(Frame::Seq { node: n, pos: 0 })
            }
            other => self.skip_nested(other),
        }
    }

    fn struct_end(&mut self) {
        self.nested_end();
    }

    fn array_begin(&mut self, _f: FieldRef<'_>, len: u64) {
        let Some(n) = self.wrapped_slot(|k| matches!(k, Kind::Array(_) | Kind::ArrayExt)) else {
            return;
        };
        let node = self.arena.nodes[n as usize];
        let elem = self.arena.kids[node.first as usize];
        let expect = match node.kind {
            Kind::Array(Some(k)) => k,
            Kind::ArrayExt => len,
            _ => {
                let l = len.min(u64::from(u32::MAX));
                put(self.out, l, 4);
                l
            }
        };
        self.frames.push(Frame::Arr {
            elem,
            expect,
            done: 0,
        });
    }

    fn array_end(&mut self) {
        self.nested_end();
    }

    fn variant_begin(&mut self, _f: FieldRef<'_>, o_: FieldRef<'_>) {
        let option = o_.option();
        let Some(n) = self.wrapped_slot(|k| k == Kind::Variant) else {
            return;
        };
        let i = self.arena.option_index(n, option).unwrap_or(0);
        match self.arena.kid(n, i) {
            Some(k) => {
                put(self.out, u64::from(i), 4);
                self.frames.push(Frame::One {
                    node: k,
                    done: false,
                });
            }
            None => self.skip_nested(Some(n)),
        }
    }

    fn variant_end(&mut self) {
        self.nested_end();
    }

    fn optional_begin(&mut self, _f: FieldRef<'_>, present: bool) {
        let Some(n) = self.wrapped_slot(|k| k == Kind::Optional) else {
            return;
        };
        let k = self.arena.kid(n, 0).unwrap_or(n);
        put(self.out, present as u64, 4);
        self.frames.push(Frame::One {
            node: k,
            done: !present,
        });
    }

    fn optional_end(&mut self) {
        self.nested_end();
    }
}
