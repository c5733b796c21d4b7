//! The binary decoder: a trace class compiled to flat [`Node`]s, and a
//! streaming field decoder that reports every field to a [`Visitor`].
//!
//! Nothing here allocates per event: the compiled program is built once,
//! field values are passed to the visitor as they are read (strings and
//! BLOBs borrow the packet bytes), and the values that later fields need
//! (lengths, selectors) are kept in a fixed table of slots.
//!
//! Bit reading follows CTF: a fixed-length field of `len` bits starts at
//! the current bit position after alignment; little-endian fields take
//! their first bit from the least significant bit of the first byte,
//! big-endian fields from the most significant bit. A CTF 2 field whose
//! bit order is not the default for its byte order is read as usual and its
//! `len` bits are then reversed (yactfr does the same). Changing the byte
//! order in the middle of a byte is an error, checked from the start of
//! each scope (babeltrace2 does the check per scope).

use crate::ir::*;

/// No slot.
pub const NO_SLOT: u16 = u16::MAX;

/// How a length is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Len {
    Static(u64),
    /// The value kept in this slot.
    Slot(u16),
}

/// What a node decodes.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// Fixed-length integer (an enumeration when `mappings` is not empty).
    Int {
        len: u8,
        bo: ByteOrder,
        /// The bit order is not the default for `bo`: reverse the bits.
        rev: bool,
        signed: bool,
        base: DisplayBase,
        mappings: Box<[Mapping]>,
    },
    Float {
        len: u8,
        bo: ByteOrder,
        rev: bool,
    },
    Bool {
        len: u8,
        bo: ByteOrder,
        rev: bool,
    },
    BitArray {
        len: u8,
        bo: ByteOrder,
        rev: bool,
        /// Bit-map flags (`None`: a plain bit array).
        flags: Option<Box<[Mapping]>>,
    },
    VarInt {
        signed: bool,
        base: DisplayBase,
        mappings: Box<[Mapping]>,
    },
    /// A string: null-terminated (`len: None`) or of `len` bytes.
    String {
        len: Option<Len>,
        encoding: StringEncoding,
    },
    Blob {
        len: Len,
        media_type: Box<str>,
    },
    /// Members are `children[first..first + count]`.
    Struct {
        first: u32,
        count: u32,
    },
    Array {
        elem: u32,
        len: Len,
    },
    /// Options are `options[first..first + count]`.
    Variant {
        slot: u16,
        /// The selector is a signed integer.
        sel_signed: bool,
        first: u32,
        count: u32,
    },
    Optional {
        slot: u16,
        /// The selector is a signed integer.
        sel_signed: bool,
        /// `None`: boolean selector; else `ranges[first..first + count]`.
        ranges: Option<(u32, u32)>,
        child: u32,
    },
}

/// One compiled field class.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: Kind,
    /// Alignment in bits before the field.
    pub align: u32,
    /// Member name, for direct structure members only.
    pub name: Option<Box<str>>,
    /// `, NAME = ` (empty without a name): what a printer writes before a
    /// named member (its tail, ` NAME = `, before the first one).
    pub label: Box<[u8]>,
    /// The label in 32 bytes (zeros after it) when it fits: printers append
    /// it with one copy of fixed size and cut back to `label.len()`.
    pub label32: Option<Box<[u8; 32]>>,
    /// Slot where the value is kept for later lengths/selectors.
    pub save: u16,
    pub roles: Roles,
    /// Integer mapped to a clock class (CTF 1.8 `map`).
    pub mapped_clock: bool,
    /// babeltrace2 2.0 shows this field ("in IR"): false for integers with
    /// a role or a clock mapping that no visible sequence/variant needs,
    /// for structures/arrays/variants with nothing visible inside, and for
    /// the packet header and event header scopes.
    pub visible: bool,
    /// Size in bits when the field always has the same size and needs no
    /// alignment inside (lets decode-only runs skip it).
    pub fixed_bits: Option<u64>,
    /// Nothing inside has a role or a slot (may be skipped when fields
    /// are not wanted).
    pub inert: bool,
    /// The field's id in the model's layout of its event class
    /// ([`tracemux_core::layout::FieldId`]): for the scopes of a stream
    /// class, the same in every event class of it (see
    /// [`Builder::number`]). 0 for scope roots and the packet header.
    pub field: u32,
    /// What the model takes this member for, by its name, when it is one
    /// ([`TaskField`]): set once with [`Node::field`], so that the model
    /// source compares no names per record.
    pub task: TaskField,
}

/// Members whose values the model source keeps apart: the CPU of a
/// packet (`cpu_id`) and the task of an event, best first (`vtid`, `tid`,
/// `pid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskField {
    #[default]
    None,
    Vtid,
    Tid,
    Pid,
    CpuId,
}

impl TaskField {
    fn of(name: Option<&str>) -> TaskField {
        match name {
            Some("vtid") => TaskField::Vtid,
            Some("tid") => TaskField::Tid,
            Some("pid") => TaskField::Pid,
            Some("cpu_id") => TaskField::CpuId,
            _ => TaskField::None,
        }
    }
}

/// One variant option.
#[derive(Debug, Clone, PartialEq)]
pub struct VarOpt {
    pub name: Option<Box<str>>,
    pub ranges: Box<[IntRange]>,
    pub node: u32,
}

/// Compiled event class.
#[derive(Debug, Clone)]
pub struct EventProg {
    pub id: u64,
    pub specific_context: Option<u32>,
    pub payload: Option<u32>,
}

/// Compiled stream class.
#[derive(Debug, Clone)]
pub struct StreamProg {
    pub id: u64,
    pub packet_context: Option<u32>,
    pub event_header: Option<u32>,
    pub common_context: Option<u32>,
    pub default_clock: Option<usize>,
    /// Event classes, sorted by ID (index parallel to `event_index`).
    pub events: Vec<EventProg>,
    /// Index into the stream class's `event_classes` (IR), sorted by ID.
    pub event_index: Vec<usize>,
    /// The packet context has a discarded events counter / sequence
    /// number / begin and end times (babeltrace2's stream class flags).
    pub has_discarded_events: bool,
    pub has_packet_seq_num: bool,
    pub has_ts_begin: bool,
    pub has_ts_end: bool,
}

impl StreamProg {
    /// Whether each packet sets the whole default clock (a 64-bit packet
    /// begin time in the packet context): packets can then be decoded
    /// independently of the ones before.
    pub fn packets_independent(&self, p: &Program) -> bool {
        let Some(pc) = self.packet_context else {
            return self.event_header.is_none();
        };
        let Kind::Struct { first, count } = p.nodes[pc as usize].kind else {
            return false;
        };
        p.members(first, count).iter().any(|&m| {
            let n = &p.nodes[m as usize];
            n.roles.has(Roles::DEFAULT_CLOCK_TIMESTAMP)
                && matches!(n.kind, Kind::Int { len: 64, .. })
        })
    }

    /// Alignment of an event record: that of its first scope (the event
    /// header, or with none, the first context or payload of the only event
    /// class).
    pub fn event_align(&self, p: &Program) -> u32 {
        let first = self.event_header.or(self.common_context).or_else(|| {
            self.events
                .first()
                .and_then(|e| e.specific_context.or(e.payload))
        });
        first.map(|n| p.nodes[n as usize].align).unwrap_or(1)
    }

    /// Position of event class `id` in `events`.
    #[inline]
    pub fn event_pos(&self, id: u64) -> Option<usize> {
        if let Some(e) = self.events.get(id as usize) {
            if e.id == id {
                return Some(id as usize);
            }
        }
        self.events.binary_search_by_key(&id, |e| e.id).ok()
    }
}

/// A trace class compiled for decoding.
#[derive(Debug, Clone)]
pub struct Program {
    pub nodes: Vec<Node>,
    pub children: Vec<u32>,
    pub options: Vec<VarOpt>,
    pub ranges: Vec<IntRange>,
    pub slots: usize,
    pub packet_header: Option<u32>,
    pub streams: Vec<StreamProg>,
    /// CTF 2: without a data-stream-class-id (event-record-class-id) field,
    /// the data stream class (event record class) ID is 0. CTF 1.8 has no
    /// such rule: there, only a single class can go without its ID field.
    pub implicit_id_zero: bool,
}

/// A compile error (an unresolvable location, a length field of the
/// wrong kind...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError(pub String);

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn rev_of(bo: ByteOrder, bit: BitOrder) -> bool {
    bit != BitOrder::default_for(bo)
}

struct Builder {
    p: Program,
    /// (node, location) of every length/selector to resolve.
    pending: Vec<(u32, FieldLocation, &'static str)>,
}

/// `label` in 32 bytes, if it fits (see [`Node::label32`]).
fn padded(label: &[u8]) -> Option<Box<[u8; 32]>> {
    let mut p = [0u8; 32];
    p.get_mut(..label.len())?.copy_from_slice(label);
    Some(Box::new(p))
}

impl Builder {
    fn push(&mut self, n: Node) -> u32 {
        self.p.nodes.push(n);
        (self.p.nodes.len() - 1) as u32
    }

    fn node(&mut self, fc: &FieldClass, name: Option<&str>) -> u32 {
        let name: Option<Box<str>> = name.map(Into::into);
        let label: Box<[u8]> = match &name {
            Some(n) => format!(", {n} = ").into_bytes().into_boxed_slice(),
            None => Box::new([]),
        };
        let base = |kind: Kind, align: u32, roles: Roles| Node {
            kind,
            align: align.max(1),
            name: name.clone(),
            label: label.clone(),
            label32: padded(&label),
            save: NO_SLOT,
            roles,
            mapped_clock: false,
            visible: true,
            fixed_bits: None,
            inert: roles.is_empty(),
            field: 0,
            task: TaskField::None,
        };
        match fc {
            FieldClass::Int(c) => {
                let mut n = base(
                    Kind::Int {
                        len: c.len.clamp(1, 64) as u8,
                        bo: c.byte_order,
                        rev: rev_of(c.byte_order, c.bit_order),
                        signed: c.signed,
                        base: c.base,
                        mappings: c.mappings.clone().into_boxed_slice(),
                    },
                    c.align,
                    c.roles,
                );
                n.mapped_clock = c.mapped_clock.is_some();
                self.push(n)
            }
            FieldClass::Float(c) => self.push(base(
                Kind::Float {
                    len: c.len as u8,
                    bo: c.byte_order,
                    rev: rev_of(c.byte_order, c.bit_order),
                },
                c.align,
                Roles::NONE,
            )),
            FieldClass::Bool(c) => self.push(base(
                Kind::Bool {
                    len: c.len.clamp(1, 64) as u8,
                    bo: c.byte_order,
                    rev: rev_of(c.byte_order, c.bit_order),
                },
                c.align,
                Roles::NONE,
            )),
            FieldClass::BitArray(c) => self.push(base(
                Kind::BitArray {
                    len: c.len.clamp(1, 64) as u8,
                    bo: c.byte_order,
                    rev: rev_of(c.byte_order, c.bit_order),
                    flags: c.flags.clone().map(Vec::into_boxed_slice),
                },
                c.align,
                Roles::NONE,
            )),
            FieldClass::VarInt(c) => self.push(base(
                Kind::VarInt {
                    signed: c.signed,
                    base: c.base,
                    mappings: c.mappings.clone().into_boxed_slice(),
                },
                8,
                c.roles,
            )),
            FieldClass::String(c) => {
                let id = self.push(base(
                    Kind::String {
                        len: None,
                        encoding: c.encoding,
                    },
                    8,
                    Roles::NONE,
                ));
                match &c.kind {
                    StringKind::NullTerminated => {}
                    StringKind::Sized(Length::Static(n)) => {
                        self.p.nodes[id as usize].kind = Kind::String {
                            len: Some(Len::Static(*n)),
                            encoding: c.encoding,
                        }
                    }
                    StringKind::Sized(Length::Dynamic(loc)) => {
                        self.pending.push((id, loc.clone(), "string length"))
                    }
                }
                id
            }
            FieldClass::Blob(c) => {
                let id = self.push(base(
                    Kind::Blob {
                        len: Len::Static(0),
                        media_type: c.media_type.as_str().into(),
                    },
                    8,
                    c.roles,
                ));
                match &c.length {
                    Length::Static(n) => {
                        if let Kind::Blob { len, .. } = &mut self.p.nodes[id as usize].kind {
                            *len = Len::Static(*n);
                        }
                    }
                    Length::Dynamic(loc) => self.pending.push((id, loc.clone(), "BLOB length")),
                }
                id
            }
            FieldClass::Struct(s) => {
                let id = self.push(base(
                    Kind::Struct { first: 0, count: 0 },
                    fc.alignment(),
                    Roles::NONE,
                ));
                let kids: Vec<u32> = s
                    .members
                    .iter()
                    .map(|m| self.node(&m.class, Some(&m.name)))
                    .collect();
                let first = self.p.children.len() as u32;
                self.p.children.extend_from_slice(&kids);
                self.p.nodes[id as usize].kind = Kind::Struct {
                    first,
                    count: kids.len() as u32,
                };
                id
            }
            FieldClass::Array(a) => {
                let id = self.push(base(
                    Kind::Array {
                        elem: 0,
                        len: Len::Static(0),
                    },
                    fc.alignment(),
                    a.roles,
                ));
                let elem = self.node(&a.element, None);
                let len = match &a.length {
                    Length::Static(n) => Len::Static(*n),
                    Length::Dynamic(loc) => {
                        self.pending.push((id, loc.clone(), "array length"));
                        Len::Static(0)
                    }
                };
                self.p.nodes[id as usize].kind = Kind::Array { elem, len };
                id
            }
            FieldClass::Variant(v) => {
                let id = self.push(base(
                    Kind::Variant {
                        slot: NO_SLOT,
                        sel_signed: false,
                        first: 0,
                        count: 0,
                    },
                    1,
                    Roles::NONE,
                ));
                let opts: Vec<VarOpt> = v
                    .options
                    .iter()
                    .map(|o| VarOpt {
                        name: o.name.as_deref().map(Into::into),
                        ranges: o.ranges.clone().into_boxed_slice(),
                        node: self.node(&o.class, None),
                    })
                    .collect();
                let first = self.p.options.len() as u32;
                let count = opts.len() as u32;
                self.p.options.extend(opts);
                self.p.nodes[id as usize].kind = Kind::Variant {
                    slot: NO_SLOT,
                    sel_signed: false,
                    first,
                    count,
                };
                self.pending
                    .push((id, v.selector.clone(), "variant selector"));
                id
            }
            FieldClass::Optional(o) => {
                let id = self.push(base(
                    Kind::Optional {
                        slot: NO_SLOT,
                        sel_signed: false,
                        ranges: None,
                        child: 0,
                    },
                    1,
                    Roles::NONE,
                ));
                let child = self.node(&o.class, None);
                let ranges = o.selector_ranges.as_ref().map(|r| {
                    let first = self.p.ranges.len() as u32;
                    self.p.ranges.extend_from_slice(r);
                    (first, r.len() as u32)
                });
                self.p.nodes[id as usize].kind = Kind::Optional {
                    slot: NO_SLOT,
                    sel_signed: false,
                    ranges,
                    child,
                };
                self.pending
                    .push((id, o.selector.clone(), "optional selector"));
                id
            }
        }
    }

    /// Give the fields of the scope just built at `root` (its nodes are
    /// the last ones) their model field ids, from `base` in preorder: the
    /// order the model's layout numbers a class's fields in (scopes in
    /// order, each field followed by what it holds). Returns `base` plus
    /// the number of fields.
    fn number(&mut self, root: Option<u32>, base: u32) -> u32 {
        let Some(root) = root else { return base };
        let end = self.p.nodes.len();
        let mut id = base;
        for n in &mut self.p.nodes[root as usize + 1..end] {
            n.field = id;
            n.task = TaskField::of(n.name.as_deref());
            id = id.saturating_add(1);
        }
        id
    }

    fn scope(&mut self, s: &Option<StructClass>) -> Option<u32> {
        s.as_ref()
            .map(|s| self.node(&FieldClass::Struct(s.clone()), None))
    }

    /// Nodes reached by `path` from `root` (see [`FieldLocation`]).
    fn targets(&self, root: u32, path: &[String], out: &mut Vec<u32>) {
        let n = &self.p.nodes[root as usize];
        if path.is_empty() {
            out.push(root);
            return;
        }
        match &n.kind {
            Kind::Struct { first, count } => {
                // The last member of that name (a later one shadows the
                // earlier ones).
                for &c in self.p.children[*first as usize..(*first + *count) as usize]
                    .iter()
                    .rev()
                {
                    if self.p.nodes[c as usize].name.as_deref() == Some(path[0].as_str()) {
                        self.targets(c, &path[1..], out);
                        return;
                    }
                }
            }
            Kind::Array { elem, .. } => self.targets(*elem, path, out),
            Kind::Optional { child, .. } => self.targets(*child, path, out),
            Kind::Variant { first, count, .. } => {
                let opts = &self.p.options[*first as usize..(*first + *count) as usize];
                if let Some(o) = opts
                    .iter()
                    .find(|o| o.name.as_deref() == Some(path[0].as_str()))
                {
                    self.targets(o.node, &path[1..], out);
                } else {
                    for o in opts {
                        self.targets(o.node, path, out);
                    }
                }
            }
            _ => {}
        }
    }

    /// Resolve the pending locations of one event class (or of the
    /// stream-level scopes when `roots[4..]` are `None`).
    fn resolve(
        &mut self,
        pending: Vec<(u32, FieldLocation, &'static str)>,
        roots: [Option<u32>; 6],
        slot_of: &mut std::collections::HashMap<u32, u16>,
    ) -> Result<(), CompileError> {
        for (id, loc, what) in pending {
            let root = roots[loc.scope as usize].ok_or_else(|| {
                CompileError(format!(
                    "{what}: scope {} has no field class",
                    loc.scope.tsdl_name()
                ))
            })?;
            let mut t = Vec::new();
            self.targets(root, &loc.path, &mut t);
            if t.is_empty() {
                return Err(CompileError(format!(
                    "{what}: no field at {}.{}",
                    loc.scope.tsdl_name(),
                    loc.path.join(".")
                )));
            }
            let signed = t.iter().any(|&n| {
                matches!(
                    self.p.nodes[n as usize].kind,
                    Kind::Int { signed: true, .. } | Kind::VarInt { signed: true, .. }
                )
            });
            let mut slot = None;
            for &n in &t {
                if let Some(&s) = slot_of.get(&n) {
                    slot = Some(s);
                }
            }
            let slot = match slot {
                Some(s) => s,
                None => {
                    if self.p.slots >= NO_SLOT as usize {
                        return Err(CompileError("too many length/selector fields".into()));
                    }
                    self.p.slots += 1;
                    (self.p.slots - 1) as u16
                }
            };
            for &n in &t {
                let ok = matches!(
                    self.p.nodes[n as usize].kind,
                    Kind::Int { .. } | Kind::VarInt { .. } | Kind::Bool { .. }
                );
                if !ok {
                    return Err(CompileError(format!(
                        "{what}: {}.{} is not an integer",
                        loc.scope.tsdl_name(),
                        loc.path.join(".")
                    )));
                }
                slot_of.insert(n, slot);
                self.p.nodes[n as usize].save = slot;
                self.p.nodes[n as usize].inert = false;
            }
            match &mut self.p.nodes[id as usize].kind {
                Kind::String { len, .. } => *len = Some(Len::Slot(slot)),
                Kind::Blob { len, .. } | Kind::Array { len, .. } => *len = Len::Slot(slot),
                Kind::Variant {
                    slot: s,
                    sel_signed,
                    ..
                }
                | Kind::Optional {
                    slot: s,
                    sel_signed,
                    ..
                } => {
                    *s = slot;
                    *sel_signed = signed;
                }
                _ => {}
            }
        }
        Ok(())
    }
}

impl Program {
    /// Compile a trace class.
    pub fn compile(tc: &TraceClass) -> Result<Program, CompileError> {
        let mut b = Builder {
            p: Program {
                nodes: Vec::new(),
                children: Vec::new(),
                options: Vec::new(),
                ranges: Vec::new(),
                slots: 0,
                packet_header: None,
                streams: Vec::new(),
                implicit_id_zero: tc.version == CtfVersion::Ctf2,
            },
            pending: Vec::new(),
        };
        let mut slot_of = std::collections::HashMap::new();
        b.p.packet_header = b.scope(&tc.packet_header);
        let pend = std::mem::take(&mut b.pending);
        b.resolve(
            pend,
            [b.p.packet_header, None, None, None, None, None],
            &mut slot_of,
        )?;
        for sc in &tc.stream_classes {
            // (each scope numbered as soon as it is built)
            let pc = b.scope(&sc.packet_context);
            let n = b.number(pc, 0);
            let eh = b.scope(&sc.event_header);
            let n = b.number(eh, n);
            let ec = b.scope(&sc.event_common_context);
            let stream_fields = b.number(ec, n);
            let roots = [b.p.packet_header, pc, eh, ec, None, None];
            let pend = std::mem::take(&mut b.pending);
            b.resolve(pend, roots, &mut slot_of)?;
            let mut order: Vec<usize> = (0..sc.event_classes.len()).collect();
            order.sort_by_key(|&i| sc.event_classes[i].id);
            let mut events = Vec::with_capacity(order.len());
            for &i in &order {
                let ev = &sc.event_classes[i];
                let spc = b.scope(&ev.specific_context);
                let n = b.number(spc, stream_fields);
                let pl = b.scope(&ev.payload);
                b.number(pl, n);
                let pend = std::mem::take(&mut b.pending);
                let mut r = roots;
                r[4] = spc;
                r[5] = pl;
                b.resolve(pend, r, &mut slot_of)?;
                events.push(EventProg {
                    id: ev.id,
                    specific_context: spc,
                    payload: pl,
                });
            }
            let pc_roles = |b: &Builder, r: Roles| -> bool {
                pc.is_some_and(|pc| {
                    let Kind::Struct { first, count } = b.p.nodes[pc as usize].kind else {
                        return false;
                    };
                    b.p.children[first as usize..(first + count) as usize]
                        .iter()
                        .any(|&c| b.p.nodes[c as usize].roles.has(r))
                })
            };
            let has_de = pc_roles(&b, Roles::DISCARDED_EVENT_COUNTER_SNAPSHOT);
            let has_sn = pc_roles(&b, Roles::PACKET_SEQUENCE_NUMBER);
            let has_tb = pc_roles(&b, Roles::PACKET_BEGIN_DEFAULT_CLOCK_TIMESTAMP)
                || (tc.version == CtfVersion::Ctf2 && pc_roles(&b, Roles::DEFAULT_CLOCK_TIMESTAMP));
            let has_te = pc_roles(&b, Roles::PACKET_END_DEFAULT_CLOCK_TIMESTAMP);
            b.p.streams.push(StreamProg {
                id: sc.id,
                packet_context: pc,
                event_header: eh,
                common_context: ec,
                default_clock: sc.default_clock,
                events,
                event_index: order,
                has_discarded_events: has_de,
                has_packet_seq_num: has_sn,
                has_ts_begin: has_tb,
                has_ts_end: has_te,
            });
        }
        let mut p = b.p;
        p.finish();
        Ok(p)
    }

    /// Children of a structure node.
    #[inline]
    pub fn members(&self, first: u32, count: u32) -> &[u32] {
        &self.children[first as usize..(first + count) as usize]
    }

    /// Options of a variant node.
    #[inline]
    pub fn variant_options(&self, first: u32, count: u32) -> &[VarOpt] {
        &self.options[first as usize..(first + count) as usize]
    }

    /// Stream class with ID `id`.
    pub fn stream_pos(&self, id: u64) -> Option<usize> {
        self.streams.iter().position(|s| s.id == id)
    }

    /// Compute `fixed_bits`, `inert` and `visible` once the slots are set.
    fn finish(&mut self) {
        let n = self.nodes.len();
        // Children always come after their parent: compute bottom-up.
        for i in (0..n).rev() {
            let (fixed, inert) = match &self.nodes[i].kind {
                Kind::Int { len, .. }
                | Kind::Float { len, .. }
                | Kind::Bool { len, .. }
                | Kind::BitArray { len, .. } => (Some(*len as u64), true),
                Kind::String {
                    len: Some(Len::Static(b)),
                    ..
                } => (b.checked_mul(8), true),
                Kind::Blob {
                    len: Len::Static(b),
                    ..
                } => (b.checked_mul(8), true),
                Kind::Struct { first, count } => {
                    let mut total = Some(0u64);
                    let mut inert = true;
                    for &c in self.members(*first, *count) {
                        let cn = &self.nodes[c as usize];
                        inert &= cn.inert;
                        total = match (total, cn.fixed_bits) {
                            (Some(t), Some(f)) if t % cn.align as u64 == 0 => t.checked_add(f),
                            _ => None,
                        };
                    }
                    (total, inert)
                }
                Kind::Array {
                    elem,
                    len: Len::Static(k),
                } => {
                    let e = &self.nodes[*elem as usize];
                    let f = e.fixed_bits.and_then(|f| {
                        if e.align == 1 || f % e.align as u64 == 0 {
                            f.checked_mul(*k)
                        } else {
                            None
                        }
                    });
                    (f, e.inert)
                }
                Kind::Array { elem, .. } => (None, self.nodes[*elem as usize].inert),
                Kind::Optional { child, .. } => (None, self.nodes[*child as usize].inert),
                Kind::Variant { first, count, .. } => {
                    let inert = self
                        .variant_options(*first, *count)
                        .iter()
                        .all(|o| self.nodes[o.node as usize].inert);
                    (None, inert)
                }
                _ => (None, true),
            };
            let node = &mut self.nodes[i];
            node.fixed_bits = fixed;
            node.inert = inert && node.roles.is_empty() && node.save == NO_SLOT;
        }
        self.compute_visible();
    }

    /// babeltrace2 2.0's "in IR" rule (see [`Node::visible`]).
    fn compute_visible(&mut self) {
        let mut deps = vec![false; self.slots];
        let streams = self.streams.clone();
        for s in &streams {
            for e in &s.events {
                if let Some(p) = e.payload {
                    self.vis(p, &mut deps);
                }
                if let Some(c) = e.specific_context {
                    self.vis(c, &mut deps);
                }
            }
            if let Some(c) = s.common_context {
                self.vis(c, &mut deps);
            }
            if let Some(h) = s.event_header {
                self.force_invisible(h);
            }
            if let Some(c) = s.packet_context {
                self.vis(c, &mut deps);
            }
        }
        if let Some(h) = self.packet_header {
            self.force_invisible(h);
        }
    }

    fn force_invisible(&mut self, id: u32) {
        self.nodes[id as usize].visible = false;
        match self.nodes[id as usize].kind.clone() {
            Kind::Struct { first, count } => {
                for c in self.members(first, count).to_vec() {
                    self.force_invisible(c);
                }
            }
            Kind::Variant { first, count, .. } => {
                for o in self.variant_options(first, count).to_vec() {
                    self.force_invisible(o.node);
                }
            }
            Kind::Array { elem, .. } => self.force_invisible(elem),
            Kind::Optional { child, .. } => self.force_invisible(child),
            _ => {}
        }
    }

    fn vis(&mut self, id: u32, deps: &mut [bool]) {
        let kind = self.nodes[id as usize].kind.clone();
        let v = match kind {
            Kind::Int { .. } | Kind::VarInt { .. } => {
                let n = &self.nodes[id as usize];
                let dep = n.save != NO_SLOT && deps[n.save as usize];
                (!n.mapped_clock && n.roles.is_empty()) || dep
            }
            Kind::Struct { first, count } => {
                let kids = self.members(first, count).to_vec();
                let mut any = kids.is_empty();
                for &c in kids.iter().rev() {
                    self.vis(c, deps);
                    any |= self.nodes[c as usize].visible;
                }
                any
            }
            Kind::Variant {
                slot, first, count, ..
            } => {
                let opts: Vec<u32> = self
                    .variant_options(first, count)
                    .iter()
                    .map(|o| o.node)
                    .collect();
                let mut any = false;
                for &o in opts.iter().rev() {
                    self.vis(o, deps);
                    any |= self.nodes[o as usize].visible;
                }
                if any {
                    for &o in &opts {
                        self.nodes[o as usize].visible = true;
                    }
                    if slot != NO_SLOT {
                        deps[slot as usize] = true;
                    }
                }
                any
            }
            Kind::Array { elem, len } => {
                self.vis(elem, deps);
                let mut v = self.nodes[elem as usize].visible;
                if self.nodes[id as usize]
                    .roles
                    .has(Roles::METADATA_STREAM_UUID)
                {
                    v = false;
                    self.nodes[elem as usize].visible = false;
                }
                if v {
                    if let Len::Slot(s) = len {
                        deps[s as usize] = true;
                    }
                }
                v
            }
            Kind::String {
                len: Some(Len::Slot(s)),
                ..
            }
            | Kind::Blob {
                len: Len::Slot(s), ..
            } => {
                deps[s as usize] = true;
                true
            }
            Kind::Optional { slot, child, .. } => {
                self.vis(child, deps);
                if slot != NO_SLOT {
                    deps[slot as usize] = true;
                }
                true
            }
            _ => true,
        };
        self.nodes[id as usize].visible = v;
    }
}

// ---------------------------------------------------------------------
// Errors

/// A decoding error and the bit offset (from the packet start) where it
/// was detected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// A read of `bits` bits would pass the packet content end.
    BeyondContent { bits: u64, remaining: u64 },
    /// A read of `bits` bits would pass the end of the data.
    EndOfData { bits: u64 },
    /// Byte order changes in the middle of a byte.
    ByteOrderChange,
    /// The selector value selects no variant option.
    BadSelector(i128),
    /// A length field holds a negative value.
    NegativeLength(i128),
    /// A LEB128 integer is longer than 10 bytes or wider than 64 bits.
    OversizedVarInt,
    /// Anything else (packet-level checks).
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub kind: DecodeErrorKind,
    /// Bit offset from the start of the packet.
    pub bit: u64,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            DecodeErrorKind::BeyondContent { bits, remaining } => write!(
                f,
                "cannot read {bits} bits: would pass the packet content end ({remaining} bits remaining)"
            ),
            DecodeErrorKind::EndOfData { bits } => {
                write!(f, "cannot read {bits} bits: end of data")
            }
            DecodeErrorKind::ByteOrderChange => f.write_str("byte order changes within a byte"),
            DecodeErrorKind::BadSelector(v) => {
                write!(f, "selector value {v} selects no variant option")
            }
            DecodeErrorKind::NegativeLength(v) => write!(f, "negative length {v}"),
            DecodeErrorKind::OversizedVarInt => f.write_str("oversized variable-length integer"),
            DecodeErrorKind::Other(m) => f.write_str(m),
        }
    }
}

// ---------------------------------------------------------------------
// The visitor

/// A decoded integer value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntValue {
    U(u64),
    S(i64),
}

impl IntValue {
    /// The value of `len` (1 to 64) bits `raw`, sign-extended when
    /// `signed`.
    #[inline]
    pub fn from_bits(raw: u64, len: u32, signed: bool) -> IntValue {
        if !signed {
            IntValue::U(raw)
        } else if len >= 64 {
            IntValue::S(raw as i64)
        } else {
            IntValue::S(((raw << (64 - len)) as i64) >> (64 - len))
        }
    }

    #[inline]
    pub fn as_i128(self) -> i128 {
        match self {
            IntValue::U(v) => v as i128,
            IntValue::S(v) => v as i128,
        }
    }
}

/// Receives what the decoder reads, in stream order.
///
/// All methods have empty default bodies, so a visitor implements only
/// what it needs. Offsets (`at`, `end`) are in bits from the start of the
/// **packet**; the packet's byte offset in its file is given to
/// [`Visitor::packet_begin`]. A field's `at` is its first bit after the
/// alignment padding; `end` (for blocks) is the first bit after the block.
/// A node's `name` is `Some` only for direct structure members.
///
/// Order of calls for one packet: `packet_begin`; the packet header
/// (`scope_begin(PacketHeader)`, fields, `scope_end`); `data_stream_info`;
/// the packet context; `packet_info`; then for each event record:
/// `event_begin`, the event header scope, `event_class`, the three other
/// event scopes, `event_end`; finally `packet_end`. Inside a scope, a
/// structure is `struct_begin`, its members, `struct_end`; an array is
/// `array_begin`, its elements, `array_end`; a variant or optional wraps its
/// selected field between `*_begin` and `*_end`. `clock_value` follows every
/// field that updates the default clock; `packet_magic` follows the magic
/// field; `metadata_uuid` comes after the last byte of the UUID field,
/// before its `array_end` (or after its `blob`).
///
/// With `FIELDS = false` the decoder does not call the field methods
/// (`struct_*` to `blob`) for fields it can skip, and does not read them
/// (decode-only runs).
pub trait Visitor {
    /// Whether field-level callbacks are wanted.
    const FIELDS: bool = true;
    /// Whether a packet whose magic number is not 0xC1FC1FC1 is an error.
    /// babeltrace2 rejects such a packet; yactfr (and so
    /// [`crate::listing::Listing`]) only reports the value and goes on.
    const CHECK_MAGIC: bool = true;
    /// Whether the event header is decoded with this visitor. With false
    /// it is decoded with none (the visitor gets no call between
    /// `event_begin` and `event_class`, `clock_value` included).
    const EVENT_HEADER: bool = true;

    fn packet_begin(&mut self, _file_offset: u64) {}
    fn data_stream_info(&mut self, _at: u64, _class_id: Option<u64>, _stream_id: Option<u64>) {}
    fn packet_info(&mut self, _at: u64, _info: &PacketInfo) {}
    fn packet_end(&mut self, _content_end: u64, _total_end: u64) {}
    fn event_begin(&mut self, _at: u64) {}
    /// The event record class is known (after the header). `class` is the
    /// position in the stream class's `event_classes` (IR) and its ID.
    fn event_class(&mut self, _at: u64, _class: usize, _id: u64) {}
    fn event_end(&mut self, _at: u64) {}
    fn scope_begin(&mut self, _scope: Scope, _at: u64) {}
    fn scope_end(&mut self, _scope: Scope, _at: u64) {}
    fn struct_begin(&mut self, _node: &Node, _at: u64) {}
    fn struct_end(&mut self, _node: &Node, _end: u64) {}
    fn array_begin(&mut self, _node: &Node, _len: u64, _at: u64) {}
    fn array_end(&mut self, _node: &Node, _end: u64) {}
    /// `option` is the index of the selected option in the variant.
    fn variant_begin(&mut self, _node: &Node, _selector: i128, _option: usize, _at: u64) {}
    fn variant_end(&mut self, _node: &Node, _end: u64) {}
    fn optional_begin(&mut self, _node: &Node, _enabled: bool, _selector: i128, _at: u64) {}
    fn optional_end(&mut self, _node: &Node, _end: u64) {}
    fn int(&mut self, _node: &Node, _v: IntValue, _at: u64) {}
    fn float(&mut self, _node: &Node, _v: f64, _at: u64) {}
    fn boolean(&mut self, _node: &Node, _v: bool, _at: u64) {}
    fn bit_array(&mut self, _node: &Node, _v: u64, _at: u64) {}
    /// `raw`: every byte of the field (terminator and bytes after it
    /// included); the text is `raw` up to the first null code unit.
    fn string(&mut self, _node: &Node, _raw: &[u8], _at: u64, _end: u64) {}
    fn blob(&mut self, _node: &Node, _bytes: &[u8], _at: u64, _end: u64) {}
    /// A string or BLOB that passes the content end or the end of the data:
    /// the bytes that are there (possibly none). An error follows.
    fn partial(&mut self, _node: &Node, _raw: &[u8], _at: u64) {}
    /// The default clock took value `v` (cycles) after the field that ends
    /// at `at`.
    fn clock_value(&mut self, _v: u64, _at: u64) {}
    fn packet_magic(&mut self, _v: u64, _at: u64) {}
    fn metadata_uuid(&mut self, _uuid: &[u8; 16], _at: u64) {}
}

/// Whether `b`, the 10th byte of a LEB128 integer (after 63 value bits),
/// ends it and keeps it within 64 bits: no continuation bit, and a value
/// of 0 or 1 when unsigned, 0 (positive) or 0x7F (negative, sign bits)
/// when signed.
fn last_varint_byte_fits(b: u64, signed: bool) -> bool {
    if signed {
        b == 0 || b == 0x7f
    } else {
        b <= 1
    }
}

/// A visitor that wants nothing (decode-only).
pub struct NullVisitor;

/// Reads every field as a visitor that prints them would (nothing is
/// skipped, so the decoder's state after each field is a printer's), and
/// does nothing with them.
pub struct Walk;

impl Visitor for Walk {}

impl Visitor for NullVisitor {
    const FIELDS: bool = false;
}

/// What the packet header and context said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PacketInfo {
    pub stream_class: Option<u64>,
    pub stream_id: Option<u64>,
    pub total_bits: Option<u64>,
    pub content_bits: Option<u64>,
    pub begin_clock: Option<u64>,
    pub end_clock: Option<u64>,
    pub seq_num: Option<u64>,
    pub discarded: Option<u64>,
    pub magic: Option<u64>,
    pub uuid: Option<[u8; 16]>,
}

// ---------------------------------------------------------------------
// The cursor

/// Decoder state over one packet's bytes.
pub struct Cursor<'d> {
    /// The packet's bytes (up to the end of the file or of the packet).
    pub data: &'d [u8],
    /// Current position, bits from `data[0]`.
    pub pos: u64,
    /// Content end in bits (reads may not pass it); `u64::MAX` when not
    /// known (the data end is the limit). Change it with [`Cursor::set_end`].
    pub end: u64,
    /// `min(end, data bits)`: the fast bound check.
    limit: u64,
    last_bo: Option<ByteOrder>,
    /// Length/selector slots.
    pub slots: Vec<i128>,
    /// Default clock value (cycles).
    pub clock: u64,
    /// What special fields said (reset per packet by the caller).
    pub info: PacketInfo,
    /// Last event class ID read in the current event header.
    pub event_id: Option<u64>,
    /// Scope being decoded.
    pub scope: Scope,
}

/// The low `len` bits set (all 64 from 64 on).
#[inline]
pub(crate) fn mask(len: u32) -> u64 {
    if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    }
}

#[inline]
fn reverse_bits(v: u64, len: u32) -> u64 {
    if len == 0 {
        return 0;
    }
    v.reverse_bits() >> (64 - len)
}

impl<'d> Cursor<'d> {
    pub fn new(data: &'d [u8], slots: usize) -> Self {
        Cursor {
            data,
            pos: 0,
            end: u64::MAX,
            limit: (data.len() as u64).saturating_mul(8),
            last_bo: None,
            slots: vec![0; slots],
            clock: 0,
            info: PacketInfo::default(),
            event_id: None,
            scope: Scope::PacketHeader,
        }
    }

    /// Where the cursor is (see [`Cursor::restore`]).
    pub fn mark(&self) -> (u64, Option<ByteOrder>, Scope) {
        (self.pos, self.last_bo, self.scope)
    }

    /// Go back to a [`Cursor::mark`] of the same packet.
    pub fn restore(&mut self, m: (u64, Option<ByteOrder>, Scope)) {
        (self.pos, self.last_bo, self.scope) = m;
    }

    /// Start decoding `scope` (as [`decode_scope`] does before its root).
    #[inline]
    pub fn scope_start(&mut self, scope: Scope) {
        self.scope = scope;
        self.last_bo = None;
    }

    /// The next `bytes` bytes at a byte boundary, integers of whole bytes
    /// in byte order `bo` (one or several, read by the caller): what
    /// [`Cursor::bits`] does for them, with one bound check.
    #[inline(always)]
    pub fn take(&mut self, bytes: usize, bo: ByteOrder) -> Result<&'d [u8], Box<DecodeError>> {
        debug_assert!(self.pos % 8 == 0);
        let len = (bytes as u64).saturating_mul(8);
        self.need(len)?;
        let at = (self.pos >> 3) as usize;
        self.pos += len;
        if bytes > 0 {
            self.last_bo = Some(bo);
        }
        Ok(&self.data[at..at + bytes])
    }

    /// Pass `bits` bits that nobody reads (the byte order of the last bits
    /// read is unknown then).
    #[inline]
    pub fn skip(&mut self, bits: u64) -> Result<(), Box<DecodeError>> {
        self.need(bits)?;
        self.pos += bits;
        self.last_bo = None;
        Ok(())
    }

    /// Set the content end (bits).
    pub fn set_end(&mut self, end: u64) {
        self.end = end;
        self.limit = end.min((self.data.len() as u64).saturating_mul(8));
    }

    /// Start over on another packet (keeps the slots' allocation).
    pub fn reset(&mut self, data: &'d [u8]) {
        self.data = data;
        self.pos = 0;
        self.end = u64::MAX;
        self.limit = (data.len() as u64).saturating_mul(8);
        self.last_bo = None;
        self.info = PacketInfo::default();
        self.event_id = None;
    }

    #[inline]
    #[cold]
    fn err(&self, kind: DecodeErrorKind) -> Box<DecodeError> {
        Box::new(DecodeError {
            kind,
            bit: self.pos,
        })
    }

    /// Check that `bits` bits can be read at the current position: past
    /// the content end is "beyond content" when the content ends inside the
    /// data, "end of data" otherwise.
    #[inline]
    fn need(&self, bits: u64) -> Result<(), Box<DecodeError>> {
        if self.pos.saturating_add(bits) <= self.limit {
            return Ok(());
        }
        self.need_fail(bits)
    }

    #[cold]
    #[inline(never)]
    fn need_fail(&self, bits: u64) -> Result<(), Box<DecodeError>> {
        let want = self.pos.saturating_add(bits);
        if want > self.end {
            Err(self.err(DecodeErrorKind::BeyondContent {
                bits,
                remaining: self.end.saturating_sub(self.pos),
            }))
        } else {
            Err(self.err(DecodeErrorKind::EndOfData { bits }))
        }
    }

    /// Bits that can be read from the current position.
    #[inline]
    pub(crate) fn room(&self) -> u64 {
        self.limit.saturating_sub(self.pos)
    }

    /// Pass `bits` bits just read (checked with [`Cursor::room`]), the
    /// last of them little-endian when `read`.
    #[inline]
    pub(crate) fn pass_fixed(&mut self, bits: u64, read: bool) {
        self.pos += bits;
        if read {
            self.last_bo = Some(ByteOrder::Little);
        }
    }

    /// Align to `align` bits (checked against the content end).
    #[inline]
    pub fn align(&mut self, align: u32) -> Result<(), Box<DecodeError>> {
        if align > 1 {
            let m = align as u64 - 1;
            let np = self.pos.saturating_add(m) & !m;
            if np != self.pos {
                self.need(np - self.pos)?;
                self.pos = np;
            }
        }
        Ok(())
    }

    /// Read `len` bits (1..=64) as an unsigned value.
    #[inline(always)]
    pub fn bits(&mut self, len: u32, bo: ByteOrder, rev: bool) -> Result<u64, Box<DecodeError>> {
        self.need(len as u64)?;
        let shift = (self.pos & 7) as u32;
        if shift != 0 {
            if let Some(l) = self.last_bo {
                if l != bo {
                    return Err(self.err(DecodeErrorKind::ByteOrderChange));
                }
            }
        }
        let byte = (self.pos >> 3) as usize;
        let v = if shift == 0 && len % 8 == 0 {
            let n = (len / 8) as usize;
            let s = &self.data[byte..byte + n];
            match (n, bo) {
                (1, _) => s[0] as u64,
                (2, ByteOrder::Little) => u16::from_le_bytes([s[0], s[1]]) as u64,
                (2, ByteOrder::Big) => u16::from_be_bytes([s[0], s[1]]) as u64,
                (4, ByteOrder::Little) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as u64,
                (4, ByteOrder::Big) => u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as u64,
                (8, ByteOrder::Little) => {
                    u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]])
                }
                (8, ByteOrder::Big) => {
                    u64::from_be_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]])
                }
                _ => self.slow(byte, shift, len, bo),
            }
        } else {
            self.slow(byte, shift, len, bo)
        };
        self.pos += len as u64;
        self.last_bo = Some(bo);
        Ok(if rev { reverse_bits(v, len) } else { v })
    }

    #[inline]
    fn slow(&self, byte: usize, shift: u32, len: u32, bo: ByteOrder) -> u64 {
        // Bit fields (event headers' IDs and times): one 8-byte load when
        // the bits fit in it and the data has 8 bytes from there.
        if shift + len <= 64 {
            if let Some(w) = self.data.get(byte..byte + 8) {
                let w: [u8; 8] = w.try_into().unwrap_or([0; 8]);
                return match bo {
                    ByteOrder::Little => (u64::from_le_bytes(w) >> shift) & mask(len),
                    ByteOrder::Big => (u64::from_be_bytes(w) >> (64 - shift - len)) & mask(len),
                };
            }
        }
        let nbytes = (shift + len).div_ceil(8) as usize;
        let s = &self.data[byte..byte + nbytes];
        let mut w: u128 = 0;
        match bo {
            ByteOrder::Little => {
                for (i, &b) in s.iter().enumerate() {
                    w |= (b as u128) << (8 * i);
                }
                ((w >> shift) as u64) & mask(len)
            }
            ByteOrder::Big => {
                for &b in s {
                    w = (w << 8) | b as u128;
                }
                let drop = nbytes as u32 * 8 - shift - len;
                ((w >> drop) as u64) & mask(len)
            }
        }
    }

    /// Update the default clock with an `len`-bit value (CTF's wrap rule).
    #[inline]
    pub fn update_clock(&mut self, v: u64, len: u32) {
        if len >= 64 {
            self.clock = v;
            return;
        }
        let m = mask(len);
        let cur_low = self.clock & m;
        let mut new = (self.clock & !m) | v;
        if v < cur_low {
            new = new.wrapping_add(1u64 << len);
        }
        self.clock = new;
    }

    pub(crate) fn slot_len(&self, len: Len) -> Result<u64, Box<DecodeError>> {
        match len {
            Len::Static(n) => Ok(n),
            Len::Slot(s) => {
                let v = self.slots[s as usize];
                if v < 0 {
                    Err(self.err(DecodeErrorKind::NegativeLength(v)))
                } else {
                    Ok(v.min(u64::MAX as i128) as u64)
                }
            }
        }
    }
}

/// Decode one scope (`root` must be a structure node).
pub fn decode_scope<V: Visitor>(
    p: &Program,
    c: &mut Cursor<'_>,
    v: &mut V,
    scope: Scope,
    root: u32,
) -> Result<(), DecodeError> {
    c.scope = scope;
    c.last_bo = None;
    let n = &p.nodes[root as usize];
    c.align(n.align).map_err(|e| *e)?;
    v.scope_begin(scope, c.pos);
    field(p, c, v, root).map_err(|e| *e)?;
    v.scope_end(scope, c.pos);
    Ok(())
}

fn apply_roles(
    c: &mut Cursor<'_>,
    v: &mut impl Visitor,
    n: &Node,
    val: u64,
    len: u32,
) -> Result<(), Box<DecodeError>> {
    let r = n.roles;
    // Event headers only have these two: the common case.
    const HOT: u16 = Roles::DEFAULT_CLOCK_TIMESTAMP.0 | Roles::EVENT_CLASS_ID.0;
    if r.0 & !HOT == 0 && c.scope != Scope::PacketContext {
        if r.has(Roles::DEFAULT_CLOCK_TIMESTAMP) {
            c.update_clock(val, len);
            v.clock_value(c.clock, c.pos);
        }
        if r.has(Roles::EVENT_CLASS_ID) {
            c.event_id = Some(val);
        }
        return Ok(());
    }
    if r.has(Roles::PACKET_BEGIN_DEFAULT_CLOCK_TIMESTAMP) {
        c.info.begin_clock = Some(val);
    }
    if r.has(Roles::DEFAULT_CLOCK_TIMESTAMP) {
        c.update_clock(val, len);
        if c.scope == Scope::PacketContext && c.info.begin_clock.is_none() {
            c.info.begin_clock = Some(c.clock);
        }
        v.clock_value(c.clock, c.pos);
    }
    if r.has(Roles::EVENT_CLASS_ID) {
        c.event_id = Some(val);
    }
    if r.has(Roles::PACKET_END_DEFAULT_CLOCK_TIMESTAMP) {
        c.info.end_clock = Some(val);
    }
    if r.has(Roles::PACKET_TOTAL_LENGTH) {
        if val % 8 != 0 {
            return Err(c.err(DecodeErrorKind::Other(format!(
                "packet total size {val} bits is not a multiple of 8"
            ))));
        }
        c.info.total_bits = Some(val);
    }
    if r.has(Roles::PACKET_CONTENT_LENGTH) {
        c.info.content_bits = Some(val);
    }
    if r.has(Roles::PACKET_TOTAL_LENGTH | Roles::PACKET_CONTENT_LENGTH) {
        match (c.info.total_bits, c.info.content_bits) {
            (Some(t), Some(k)) if k > t => {
                return Err(c.err(DecodeErrorKind::Other(format!(
                    "packet content size {k} bits exceeds its total size {t} bits"
                ))))
            }
            (_, Some(k)) => c.set_end(k),
            (Some(t), None) => c.set_end(t),
            _ => {}
        }
    }
    if r.has(Roles::DISCARDED_EVENT_COUNTER_SNAPSHOT) {
        c.info.discarded = Some(val);
    }
    if r.has(Roles::PACKET_SEQUENCE_NUMBER) {
        c.info.seq_num = Some(val);
    }
    if r.has(Roles::DATA_STREAM_CLASS_ID) {
        c.info.stream_class = Some(val);
    }
    if r.has(Roles::DATA_STREAM_ID) {
        c.info.stream_id = Some(val);
    }
    if r.has(Roles::PACKET_MAGIC) {
        c.info.magic = Some(val);
        v.packet_magic(val, c.pos);
    }
    Ok(())
}

/// Read `nbytes` bytes of a string or BLOB at the (byte-aligned) cursor.
/// When they pass the content end, the error is at the field's start;
/// when they pass the end of the data, the visitor gets the bytes that are
/// there (`partial`) and the error is at the end of the data.
fn sized_bytes<'d, V: Visitor>(
    c: &mut Cursor<'d>,
    v: &mut V,
    n: &Node,
    nbytes: u64,
) -> Result<&'d [u8], Box<DecodeError>> {
    let at = c.pos;
    let Some(bits) = nbytes.checked_mul(8) else {
        return Err(c.err(DecodeErrorKind::Other(format!("length {nbytes} too large"))));
    };
    let want = at.saturating_add(bits);
    let data_end = (c.data.len() as u64) * 8;
    if want > c.end && c.end <= data_end {
        if V::FIELDS {
            v.partial(n, &[], at);
        }
        return Err(c.err(DecodeErrorKind::BeyondContent {
            bits,
            remaining: c.end.saturating_sub(at),
        }));
    }
    if want > data_end {
        let b = (at >> 3) as usize;
        if V::FIELDS {
            v.partial(n, &c.data[b.min(c.data.len())..], at);
        }
        c.pos = data_end;
        return Err(c.err(DecodeErrorKind::EndOfData { bits: 8 }));
    }
    let b = (at >> 3) as usize;
    c.pos = want;
    Ok(&c.data[b..b + nbytes as usize])
}

/// Length in bytes (terminator included) of the null-terminated string at
/// the cursor, looked for in the whole data (not only the content).
fn nt_len(c: &Cursor<'_>, unit: usize) -> Option<u64> {
    let start = (c.pos >> 3) as usize;
    let hay = c.data.get(start..).unwrap_or(&[]);
    if unit == 1 {
        return memchr0(hay).map(|k| k as u64 + 1);
    }
    let mut k = 0usize;
    while k + unit <= hay.len() {
        if hay[k..k + unit].iter().all(|&b| b == 0) {
            return Some((k + unit) as u64);
        }
        k += unit;
    }
    None
}

#[inline]
fn memchr0(h: &[u8]) -> Option<usize> {
    memchr::memchr(0, h)
}

/// Decode one field.
pub fn field<V: Visitor>(
    p: &Program,
    c: &mut Cursor<'_>,
    v: &mut V,
    id: u32,
) -> Result<(), Box<DecodeError>> {
    let n = &p.nodes[id as usize];
    if !V::FIELDS && n.inert {
        if let Some(bits) = n.fixed_bits {
            c.align(n.align)?;
            c.skip(bits)?;
            return Ok(());
        }
    }
    match &n.kind {
        Kind::Int { .. } => int_field(c, v, n)?,
        Kind::Struct { first, count } => {
            c.align(n.align)?;
            if V::FIELDS {
                v.struct_begin(n, c.pos);
            }
            for &m in p.members(*first, *count) {
                // Integer members (most of them) without the recursion.
                let mn = &p.nodes[m as usize];
                if matches!(mn.kind, Kind::Int { .. }) && (V::FIELDS || !mn.inert) {
                    int_field(c, v, mn)?;
                } else {
                    field(p, c, v, m)?;
                }
            }
            if V::FIELDS {
                v.struct_end(n, c.pos);
            }
        }
        Kind::Array { elem, len } => {
            c.align(n.align)?;
            let l = c.slot_len(*len)?;
            let at = c.pos;
            let en = &p.nodes[*elem as usize];
            // Elements of zero bits would make a huge length loop for
            // nothing: bound it (others fail at the end of the data).
            if en.fixed_bits == Some(0) && l > 1 << 24 {
                return Err(c.err(DecodeErrorKind::Other(format!(
                    "array of {l} empty elements"
                ))));
            }
            if V::FIELDS {
                v.array_begin(n, l, at);
            }
            let uuid = n.roles.has(Roles::METADATA_STREAM_UUID) && l == 16;
            if !V::FIELDS && en.inert && !uuid {
                if let Some(eb) = en.fixed_bits {
                    if en.align == 1 || eb % en.align as u64 == 0 {
                        if l > 0 {
                            c.align(en.align)?;
                        }
                        let bits = eb.checked_mul(l).ok_or_else(|| {
                            c.err(DecodeErrorKind::Other("array too large".into()))
                        })?;
                        c.need(bits)?;
                        c.pos += bits;
                        c.last_bo = None;
                        return Ok(());
                    }
                }
            }
            let mut u = [0u8; 16];
            for i in 0..l {
                if uuid {
                    let before = c.pos;
                    field(p, c, v, *elem)?;
                    if c.pos - before == 8 && before % 8 == 0 {
                        u[i as usize] = c.data[(before >> 3) as usize];
                    }
                } else {
                    field(p, c, v, *elem)?;
                }
            }
            if uuid {
                c.info.uuid = Some(u);
                v.metadata_uuid(&u, c.pos);
            }
            if V::FIELDS {
                v.array_end(n, c.pos);
            }
        }
        Kind::Variant {
            slot, first, count, ..
        } => {
            let sel = if *slot == NO_SLOT {
                0
            } else {
                c.slots[*slot as usize]
            };
            let opts = p.variant_options(*first, *count);
            let Some(oi) = opts
                .iter()
                .position(|o| o.ranges.iter().any(|r| r.contains(sel)))
            else {
                return Err(c.err(DecodeErrorKind::BadSelector(sel)));
            };
            let on = &p.nodes[opts[oi].node as usize];
            c.align(on.align)?;
            if V::FIELDS {
                v.variant_begin(n, sel, oi, c.pos);
            }
            field(p, c, v, opts[oi].node)?;
            if V::FIELDS {
                v.variant_end(n, c.pos);
            }
        }
        _ => field_cold(p, c, v, n)?,
    }
    Ok(())
}

/// A fixed-length integer field.
#[inline(always)]
fn int_field<V: Visitor>(c: &mut Cursor<'_>, v: &mut V, n: &Node) -> Result<(), Box<DecodeError>> {
    let Some(r) = read_int(c, n)? else {
        return Ok(());
    };
    int_value(c, v, n, r.val, r.raw, r.len, r.at)
}

/// A fixed-length integer read by [`read_int`].
pub(crate) struct ReadInt {
    pub val: IntValue,
    /// Its bits, their number, and where they start.
    pub raw: u64,
    pub len: u32,
    pub at: u64,
}

/// Read the fixed-length integer `n` (`None` when it is not one). Nothing
/// is kept (see [`int_value`]).
#[inline(always)]
pub(crate) fn read_int(c: &mut Cursor<'_>, n: &Node) -> Result<Option<ReadInt>, Box<DecodeError>> {
    let Kind::Int {
        len,
        bo,
        rev,
        signed,
        ..
    } = &n.kind
    else {
        return Ok(None);
    };
    c.align(n.align)?;
    let at = c.pos;
    let len = *len as u32;
    let raw = c.bits(len, *bo, *rev)?;
    let val = IntValue::from_bits(raw, len, *signed);
    Ok(Some(ReadInt { val, raw, len, at }))
}

/// Read the floating-point number `n` (0 when it is not one).
#[inline]
pub(crate) fn read_float(c: &mut Cursor<'_>, n: &Node) -> Result<f64, Box<DecodeError>> {
    let Kind::Float { len, bo, rev } = &n.kind else {
        return Ok(0.0);
    };
    c.align(n.align)?;
    let raw = c.bits(*len as u32, *bo, *rev)?;
    Ok(if *len == 32 {
        f32::from_bits(raw as u32) as f64
    } else {
        f64::from_bits(raw)
    })
}

/// The length in bytes of the string `len`/`encoding` at the (aligned)
/// cursor: a null-terminated one's up to its terminator (or to the end of
/// the data and one more, so that reading it fails there).
fn string_len(
    c: &Cursor<'_>,
    len: &Option<Len>,
    encoding: StringEncoding,
) -> Result<u64, Box<DecodeError>> {
    match len {
        None => Ok(match nt_len(c, encoding.unit()) {
            Some(l) => l,
            None => ((c.data.len() as u64) - (c.pos >> 3)) + 1,
        }),
        Some(l) => c.slot_len(*l),
    }
}

/// Read the string `n`: every byte of the field (see [`Visitor::string`]).
#[inline]
pub(crate) fn read_string<'d>(c: &mut Cursor<'d>, n: &Node) -> Result<&'d [u8], Box<DecodeError>> {
    let Kind::String { len, encoding } = &n.kind else {
        return Ok(&[]);
    };
    c.align(8)?;
    let nbytes = string_len(c, len, *encoding)?;
    sized_bytes(c, &mut NullVisitor, n, nbytes)
}

/// An integer's value decoded (`raw` its bits, `len` their number): kept
/// for later lengths and selectors, visited, its roles applied.
#[inline(always)]
fn int_value<V: Visitor>(
    c: &mut Cursor<'_>,
    v: &mut V,
    n: &Node,
    val: IntValue,
    raw: u64,
    len: u32,
    at: u64,
) -> Result<(), Box<DecodeError>> {
    if n.save != NO_SLOT {
        c.slots[n.save as usize] = val.as_i128();
    }
    if V::FIELDS {
        v.int(n, val, at);
    }
    if !n.roles.is_empty() {
        apply_roles(c, v, n, raw, len)?;
    }
    Ok(())
}

/// The field kinds that LTTng-style event headers and payloads rarely use,
/// kept out of [`field`] so that its frame stays small.
#[inline(never)]
fn field_cold<V: Visitor>(
    p: &Program,
    c: &mut Cursor<'_>,
    v: &mut V,
    n: &Node,
) -> Result<(), Box<DecodeError>> {
    match &n.kind {
        Kind::Float { .. } => {
            c.align(n.align)?;
            let at = c.pos;
            let f = read_float(c, n)?;
            if V::FIELDS {
                v.float(n, f, at);
            }
        }
        Kind::Bool { len, bo, rev } => {
            c.align(n.align)?;
            let at = c.pos;
            let raw = c.bits(*len as u32, *bo, *rev)?;
            if n.save != NO_SLOT {
                c.slots[n.save as usize] = (raw != 0) as i128;
            }
            if V::FIELDS {
                v.boolean(n, raw != 0, at);
            }
        }
        Kind::BitArray { len, bo, rev, .. } => {
            c.align(n.align)?;
            let at = c.pos;
            let raw = c.bits(*len as u32, *bo, *rev)?;
            if V::FIELDS {
                v.bit_array(n, raw, at);
            }
        }
        Kind::VarInt { signed, .. } => {
            c.align(8)?;
            let at = c.pos;
            let mut val: u64 = 0;
            let mut shift = 0u32;
            loop {
                let b = c.bits(8, ByteOrder::Little, false)?;
                let payload = b & 0x7f;
                if shift == 63 && !last_varint_byte_fits(b, *signed) {
                    // The error is at the byte that overflows (as yactfr).
                    c.pos -= 8;
                    return Err(c.err(DecodeErrorKind::OversizedVarInt));
                }
                val |= payload << shift;
                shift += 7;
                if b & 0x80 == 0 {
                    break;
                }
            }
            let iv = if *signed {
                let s = if shift < 64 && (val >> (shift - 1)) & 1 == 1 {
                    (val | (u64::MAX << shift)) as i64
                } else {
                    val as i64
                };
                IntValue::S(s)
            } else {
                IntValue::U(val)
            };
            int_value(c, v, n, iv, val, 64, at)?;
        }
        Kind::String { len, encoding } => {
            c.align(8)?;
            let at = c.pos;
            let nbytes = string_len(c, len, *encoding)?;
            let raw = sized_bytes(c, v, n, nbytes)?;
            if V::FIELDS {
                v.string(n, raw, at, c.pos);
            }
        }
        Kind::Blob { len, .. } => {
            c.align(8)?;
            let at = c.pos;
            let l = c.slot_len(*len)?;
            let b = sized_bytes(c, v, n, l)?;
            if V::FIELDS {
                v.blob(n, b, at, c.pos);
            }
            if n.roles.has(Roles::METADATA_STREAM_UUID) && b.len() == 16 {
                let mut u = [0u8; 16];
                u.copy_from_slice(b);
                c.info.uuid = Some(u);
                v.metadata_uuid(&u, c.pos);
            }
        }
        Kind::Optional {
            slot,
            ranges,
            child,
            ..
        } => {
            let sel = if *slot == NO_SLOT {
                0
            } else {
                c.slots[*slot as usize]
            };
            let enabled = match ranges {
                None => sel != 0,
                Some((f, k)) => p.ranges[*f as usize..(*f + *k) as usize]
                    .iter()
                    .any(|r| r.contains(sel)),
            };
            if enabled {
                c.align(p.nodes[*child as usize].align)?;
            }
            if V::FIELDS {
                v.optional_begin(n, enabled, sel, c.pos);
            }
            if enabled {
                field(p, c, v, *child)?;
            }
            if V::FIELDS {
                v.optional_end(n, c.pos);
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_reads_both_orders() {
        // 0b1011_0110, 0b1100_0011
        let d = [0xB6u8, 0xC3];
        let mut c = Cursor::new(&d, 0);
        c.pos = 3;
        // LE: bits 3..8 of byte 0 (LSB first) then bits of byte 1.
        assert_eq!(c.bits(7, ByteOrder::Little, false).unwrap(), 0b11_10110);
        let mut c = Cursor::new(&d, 0);
        c.pos = 3;
        // BE: from MSB: 101 [10110 11] 000011
        assert_eq!(c.bits(7, ByteOrder::Big, false).unwrap(), 0b1011011);
        let mut c = Cursor::new(&d, 0);
        assert_eq!(c.bits(8, ByteOrder::Little, true).unwrap(), 0x6D);
        assert_eq!(c.bits(8, ByteOrder::Big, false).unwrap(), 0xC3);
    }

    #[test]
    fn byte_order_change_in_byte() {
        let d = [0u8; 4];
        let mut c = Cursor::new(&d, 0);
        c.bits(3, ByteOrder::Big, false).unwrap();
        let e = c.bits(5, ByteOrder::Little, false).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::ByteOrderChange);
        assert_eq!(e.bit, 3);
    }

    #[test]
    fn clock_wraps() {
        let mut c = Cursor::new(&[], 0);
        c.clock = 0x4D05;
        c.update_clock(0x04, 8);
        assert_eq!(c.clock, 0x4E04);
        c.update_clock(0x10, 8);
        assert_eq!(c.clock, 0x4E10);
    }

    #[test]
    fn beyond_content_vs_data() {
        let d = [0u8; 4];
        let mut c = Cursor::new(&d, 0);
        c.set_end(16);
        c.pos = 8;
        let e = c.bits(16, ByteOrder::Big, false).unwrap_err();
        assert_eq!(
            e.kind,
            DecodeErrorKind::BeyondContent {
                bits: 16,
                remaining: 8
            }
        );
        let mut c = Cursor::new(&d, 0);
        c.pos = 24;
        let e = c.bits(16, ByteOrder::Big, false).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::EndOfData { bits: 16 });
    }
}
