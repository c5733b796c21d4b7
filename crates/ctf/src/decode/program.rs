//! The program: a trace class compiled once into flat [`Node`]s (field
//! kinds, lengths, alignments, the slots later fields read), per stream
//! and event class.

use super::*;

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
    pub(super) fn of(name: Option<&str>) -> TaskField {
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

pub(super) fn rev_of(bo: ByteOrder, bit: BitOrder) -> bool {
    bit != BitOrder::default_for(bo)
}

pub(super) struct Builder {
    pub(super) p: Program,
    /// (node, location) of every length/selector to resolve.
    pub(super) pending: Vec<(u32, FieldLocation, &'static str)>,
}

/// `label` in 32 bytes, if it fits (see [`Node::label32`]).
pub(super) fn padded(label: &[u8]) -> Option<Box<[u8; 32]>> {
    let mut p = [0u8; 32];
    p.get_mut(..label.len())?.copy_from_slice(label);
    Some(Box::new(p))
}

impl Builder {
    pub(super) fn push(&mut self, n: Node) -> u32 {
        self.p.nodes.push(n);
        (self.p.nodes.len() - 1) as u32
    }

    pub(super) fn node(&mut self, fc: &FieldClass, name: Option<&str>) -> u32 {
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
    pub(super) fn number(&mut self, root: Option<u32>, base: u32) -> u32 {
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

    pub(super) fn scope(&mut self, s: &Option<StructClass>) -> Option<u32> {
        s.as_ref()
            .map(|s| self.node(&FieldClass::Struct(s.clone()), None))
    }

    /// Nodes reached by `path` from `root` (see [`FieldLocation`]).
    pub(super) fn targets(&self, root: u32, path: &[String], out: &mut Vec<u32>) {
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
    pub(super) fn resolve(
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
    pub(super) fn finish(&mut self) {
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
    pub(super) fn compute_visible(&mut self) {
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

    pub(super) fn force_invisible(&mut self, id: u32) {
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

    pub(super) fn vis(&mut self, id: u32, deps: &mut [bool]) {
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
