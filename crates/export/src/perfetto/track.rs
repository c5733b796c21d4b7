//! User-space events as track events: slices and instants on a sequence per
//! thread, their names and debug annotations interned per sequence and
//! encoded straight into the bytes prost would write.

use super::*;

impl<W: Write + Send + 'static> PerfettoWriter<W> {
    pub(super) fn track_event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> std::io::Result<()> {
        let class = ev.class;
        let kind = match class {
            Some(c) => *self.kinds.get_or_insert_with(c.index, || TrackKind::of(c)),
            None => TrackKind::Other,
        };
        let fields = class.map(|c| self.plan(c).fields).unwrap_or_default();
        // most uftrace entries and exits need no value tree (and their
        // sequence's description none either: the recording says the pid)
        let call = match kind {
            TrackKind::Entry | TrackKind::Exit if self.cur_uftrace.is_some() => ev
                .tape
                .zip(class)
                .and_then(|(t, c)| plain_call(t, c.layout(), kind == TrackKind::Entry)),
            _ => None,
        };
        let uftrace = kind != TrackKind::Other || self.cur_uftrace.is_some();
        // the other events' annotations come straight from their recorded
        // values when these are well formed (else from the value tree)
        let steps = ev
            .tape
            .filter(|t| call.is_none() && !uftrace && t.scopes_once());
        let key = if ev.pid >= 0 {
            TrackKey::Thread(ev.pid)
        } else {
            TrackKey::Stream(ev.stream)
        };
        let described = self.seqs.contains_key(&key);
        let mut collected = false;
        if call.is_none() && (steps.is_none() || !described) {
            self.tree.collect(meta, ev);
            collected = true;
        }
        if !described {
            self.describe(meta, key, ev.cpu, fields.process)?;
        }
        let t = &self.tree;
        let title = &mut self.title;
        title.clear();
        let (ty, named, skip_name) = match kind {
            TrackKind::Entry => {
                let name = match &call {
                    Some(c) => Some(c.name),
                    None => t.at(Scope::Payload, fields.name).map(|i| t.bytes(i)),
                };
                if let Some(n) = name {
                    title.push_str(&String::from_utf8_lossy(n));
                }
                (TYPE_SLICE_BEGIN, name.is_some(), true)
            }
            TrackKind::Exit => (TYPE_SLICE_END, false, true),
            _ => match class {
                None => {
                    let _ = write!(title, "type {}", ev.type_id);
                    (TYPE_INSTANT, true, false)
                }
                // `system:name`, written when the sequence first sees the
                // class (below)
                Some(_) => (TYPE_INSTANT, true, false),
            },
        };
        let seq = self.seqs.get_mut(&key).expect("sequence made above");
        let seq_id = seq.id;
        self.new_names.clear();
        self.new_ann_names.clear();
        // an instant of a class is named the same every time: its name's
        // iid is looked up once per class and sequence
        let by_class = class.filter(|_| kind != TrackKind::Entry);
        let known = by_class.and_then(|c| seq.class_names.get(c.index).copied());
        if let (Some(c), None) = (by_class, known) {
            if !c.system.is_empty() {
                title.push_str(&c.system);
                title.push(':');
            }
            title.push_str(&c.name);
        }
        let name_iid =
            named.then(
                || match known.or_else(|| seq.names.get(title.as_str()).copied()) {
                    Some(n) => n,
                    None => {
                        let n = seq.names.len() as u64 + 1;
                        seq.names.insert(title.clone(), n);
                        self.new_names.push(EventName {
                            iid: Some(n),
                            name: Some(title.clone()),
                        });
                        n
                    }
                },
            );
        if let (Some(c), Some(n), None) = (by_class, name_iid, known) {
            seq.class_names.get_or_insert_with(c.index, || n);
        }
        let anns = &mut self.ann_buf;
        anns.clear();
        let mut names = Interner {
            map: &mut seq.ann_names,
            new: &mut self.new_ann_names,
            fields: class.map(|c| seq.field_iids.get_or_insert_with(c.index, Vec::new)),
        };
        // uftrace entry/exit leave out what a reader knows: empty `args`,
        // an absent `retval`, and an exit's `addr` when it is the one of
        // the innermost open entry of the thread
        let addr = match &call {
            Some(c) => Some(c.addr),
            None if skip_name => t
                .at(Scope::Payload, fields.addr)
                .and_then(|i| t.int(i))
                .map(|a| a as u64),
            None => None,
        };
        let mut known_addr = false;
        if skip_name {
            if ty == TYPE_SLICE_BEGIN {
                seq.stack.extend(addr);
            } else {
                let top = seq.stack.pop();
                known_addr = addr.is_some() && top == addr;
            }
        }
        if let (Some(a), false) = (call.as_ref().map(|c| c.addr), known_addr) {
            // what the loop below puts for the `addr` of a plain call
            let start = anns.len();
            put_varint(anns, 3, a);
            let iid = names.iid("addr");
            frame(anns, start, Some(iid), ANNOTATIONS);
        }
        let direct = steps.is_some_and(|tape| {
            let layout = class.map_or(&tracemux_core::layout::EMPTY, |c| c.layout());
            let ok = put_scopes(tape, layout, &mut names, anns).is_some();
            if !ok {
                anns.clear();
            }
            ok
        });
        if steps.is_some() && !direct && !collected {
            self.tree.collect(meta, ev);
        }
        let t = &self.tree;
        for i in t
            .top(Scope::Payload)
            .take_while(|_| call.is_none() && !direct)
        {
            if skip_name
                && (t.name_is(i, "name")
                    || (known_addr && t.name_is(i, "addr"))
                    || (t.name_is(i, "args")
                        && t.nodes[i].kind == Kind::Arr
                        && t.children(i).next().is_none())
                    || (t.name_is(i, "retval") && t.nodes[i].kind == Kind::Null))
            {
                continue;
            }
            put_annotation(t, i, Some(t.name(i)), ANNOTATIONS, &mut names, anns);
        }
        if !uftrace && !direct {
            for scope in [Scope::CommonContext, Scope::SpecificContext] {
                let start = anns.len();
                for i in t.top(scope) {
                    put_annotation(t, i, Some(t.name(i)), DICT_ENTRIES, &mut names, anns);
                }
                if anns.len() > start {
                    let iid = names.iid(scope.name());
                    frame(anns, start, Some(iid), ANNOTATIONS);
                }
            }
        }
        // a packet that uses no interned name does not need the state
        // (a uftrace exit mostly: 2 bytes of each)
        let needs = name_iid.is_some() || !anns.is_empty();
        let flags = needs.then_some(SEQ_NEEDS_INCREMENTAL_STATE);
        let interned = self.take_interned();
        self.stats.track_events += 1;
        if interned.is_none() {
            // most packets: framed here, as prost would encode the one below
            self.stats.packets += 1;
            let anns = &self.ann_buf;
            let te = TrackEventBytes {
                ts: ev.ts,
                seq: seq_id,
                flags,
                ty,
                name_iid,
                annotations: anns,
            };
            return self.out.push_framed(|out| te.frame(out));
        }
        let encoded_annotations = self.arena.keep(&self.ann_buf);
        let pk = TracePacket {
            timestamp: Some(ev.ts),
            trusted_packet_sequence_id: Some(seq_id),
            interned_data: interned,
            sequence_flags: flags,
            data: Some(Data::TrackEvent(TrackEvent {
                encoded_annotations,
                r#type: Some(ty),
                name_iid,
                ..Default::default()
            })),
            ..Default::default()
        };
        self.packet(pk, 1)
    }

    /// A packet sequence for a thread or stream: its first packet clears
    /// the incremental state, describes its track and makes it the default
    /// track of the sequence's events.
    /// (`process`: the field of the event in the tree that says its
    /// process.)
    pub(super) fn describe(
        &mut self,
        meta: &TraceMeta,
        key: TrackKey,
        cpu: u32,
        process: FieldId,
    ) -> std::io::Result<()> {
        let id = self.seqs.len() as u32 + 1;
        let uuid = Seq::track_uuid(id);
        let desc = match key {
            TrackKey::Thread(tid) => {
                let t = &self.tree;
                // a timeline's uftrace input: its process; a thread the
                // kernel's task table places: that group
                let pid = self
                    .cur_uftrace
                    .or_else(|| meta.tgids.get(&tid).copied())
                    .or_else(|| {
                        t.at(Scope::CommonContext, process)
                            .and_then(|i| t.int(i))
                            .map(|v| v as i32)
                    })
                    .unwrap_or(tid);
                TrackDescriptor {
                    uuid: Some(uuid),
                    thread: Some(ThreadDescriptor {
                        pid: Some(pid),
                        tid: Some(i64::from(tid)),
                        thread_name: meta.tasks.get(tid).map(str::to_string),
                    }),
                    ..Default::default()
                }
            }
            TrackKey::Stream(s) => {
                let buffer = meta
                    .streams
                    .get(s as usize)
                    .and_then(|st| meta.buffers.get(st.buffer as usize))
                    .map_or("", |b| b.name.as_str());
                let name = if buffer.is_empty() {
                    format!("stream {s} (cpu {cpu})")
                } else {
                    format!("{buffer} stream {s} (cpu {cpu})")
                };
                TrackDescriptor {
                    uuid: Some(uuid),
                    name: Some(name),
                    ..Default::default()
                }
            }
        };
        self.seqs.insert(key, Seq::new(id));
        self.packet(
            TracePacket {
                trusted_packet_sequence_id: Some(id),
                sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED),
                first_packet_on_sequence: Some(true),
                trace_packet_defaults: Some(TracePacketDefaults {
                    track_event_defaults: Some(TrackEventDefaults {
                        track_uuid: Some(uuid),
                    }),
                }),
                data: Some(Data::TrackDescriptor(desc)),
                ..Default::default()
            },
            1,
        )
    }
}

/// A `TracePacket` of a `TrackEvent` that interns nothing.
pub(super) struct TrackEventBytes<'a> {
    pub(super) ts: u64,
    pub(super) seq: u32,
    pub(super) flags: Option<u32>,
    pub(super) ty: i32,
    pub(super) name_iid: Option<u64>,
    /// Encoded debug annotations (each framed as field 4).
    pub(super) annotations: &'a [u8],
}

impl TrackEventBytes<'_> {
    /// The packet framed as a field of the `Trace`, appended to `out`: the
    /// bytes prost writes for the `TracePacket` (whose fields go in the
    /// order of their numbers, the `data` oneof by its lowest, 1: first).
    pub(super) fn frame(&self, out: &mut Vec<u8>) {
        use prost::encoding::{encode_varint, encoded_len_varint as len};
        let ty = i64::from(self.ty) as u64;
        let te = self.annotations.len() + 1 + len(ty) + self.name_iid.map_or(0, |n| 1 + len(n));
        let packet = 1
            + len(te as u64)
            + te
            + 1
            + len(self.ts)
            + 1
            + len(u64::from(self.seq))
            + self.flags.map_or(0, |f| 1 + len(u64::from(f)));
        out.push(0x0a);
        encode_varint(packet as u64, out);
        // TracePacket.track_event (11)
        out.push(11 << 3 | 2);
        encode_varint(te as u64, out);
        out.extend_from_slice(self.annotations);
        put_varint(out, 9, ty);
        if let Some(n) = self.name_iid {
            put_varint(out, 10, n);
        }
        put_varint(out, 8, self.ts);
        put_varint(out, 10, u64::from(self.seq));
        if let Some(f) = self.flags {
            put_varint(out, 13, u64::from(f));
        }
    }
}

/// The annotations of a track event that is not uftrace's, from the
/// recorded values: the bytes [`put_annotation`] writes from the value
/// tree, names interned in the same order (the payload's fields, then each
/// context as a dictionary), for a tape whose scopes come once
/// ([`FieldTape::scopes_once`]). `None` (with part of it written) when the
/// steps are not a sequence of values.
pub(super) fn put_scopes(
    t: &FieldTape,
    layout: &ClassLayout,
    names: &mut Interner<'_>,
    out: &mut Vec<u8>,
) -> Option<()> {
    let mut it = t.scope_steps(layout, Scope::Payload).peekable();
    while let Some(s) = it.next() {
        put_step(s, &mut it, Named::Own, ANNOTATIONS, names, out)?;
    }
    for scope in [Scope::CommonContext, Scope::SpecificContext] {
        let start = out.len();
        let mut it = t.scope_steps(layout, scope).peekable();
        while let Some(s) = it.next() {
            put_step(s, &mut it, Named::Own, DICT_ENTRIES, names, out)?;
        }
        if out.len() > start {
            let iid = names.iid(scope.name());
            frame(out, start, Some(iid), ANNOTATIONS);
        }
    }
    Some(())
}

/// What a value is named in its annotation.
#[derive(Clone, Copy)]
pub(super) enum Named<'a> {
    /// By its own name (a field, a member).
    Own,
    /// Not at all (an array element).
    No,
    /// By another name (an optional's, a variant's option).
    As(&'a str),
}

impl<'a> Named<'a> {
    /// How the members of a compound named so are named (array elements
    /// have none).
    pub(super) fn members(array: bool) -> Named<'a> {
        if array {
            Named::No
        } else {
            Named::Own
        }
    }
}

/// One value that starts with step `first` (the rest from `it`), as
/// [`put_annotation`] writes the tree's node of it; `Some(false)` when it
/// makes no node (a present optional without a value).
pub(super) fn put_step<'a, I: Iterator<Item = TapeStep<'a>>>(
    first: TapeStep<'a>,
    it: &mut Steps<'a, I>,
    named: Named<'a>,
    tag: u32,
    names: &mut Interner<'_>,
    out: &mut Vec<u8>,
) -> Option<bool> {
    let start = out.len();
    let own = match first {
        TapeStep::Field(n, _, v) => {
            put_leaf(v, names, out);
            n
        }
        TapeStep::StructBegin(n) | TapeStep::ArrayBegin(n, _) => {
            let array = matches!(first, TapeStep::ArrayBegin(..));
            let mut any = false;
            loop {
                match it.next()? {
                    TapeStep::StructEnd if !array => break,
                    TapeStep::ArrayEnd if array => break,
                    s => {
                        let child_tag = if array { ARRAY_VALUES } else { DICT_ENTRIES };
                        any |= put_step(s, it, Named::members(array), child_tag, names, out)?;
                    }
                }
            }
            if !any {
                put_bytes(out, 9, if array { b"[]" } else { b"{}" });
            }
            n
        }
        TapeStep::VariantBegin(n, option) => {
            // only the first value counts, as in the tree
            let mut first_done = false;
            loop {
                match it.next()? {
                    TapeStep::VariantEnd => break,
                    s => {
                        let mut scratch = Vec::new();
                        let sink = if first_done { &mut scratch } else { &mut *out };
                        let made =
                            put_step(s, it, Named::As(option.option()), DICT_ENTRIES, names, sink)?;
                        if !first_done && made {
                            first_done = true;
                        } else if !scratch.is_empty() {
                            // a second value: the tree leaves it out, but its
                            // names would be interned: not the tree's order
                            return None;
                        }
                    }
                }
            }
            n
        }
        TapeStep::OptionalBegin(n, false) => {
            matches!(it.next()?, TapeStep::OptionalEnd).then_some(())?;
            n
        }
        TapeStep::OptionalBegin(n, true) => {
            let inner = match named {
                Named::Own => Named::As(n.name()),
                other => other,
            };
            let made = match it.next()? {
                TapeStep::OptionalEnd => return Some(false),
                TapeStep::OptionalBegin(..) => return None,
                s => put_step(s, it, inner, tag, names, out)?,
            };
            matches!(it.next()?, TapeStep::OptionalEnd).then_some(made)?;
            return Some(made);
        }
        TapeStep::Enum(n, v, count) => {
            let value = out.len();
            put_leaf(v, names, out);
            let iid = names.iid("value");
            frame(out, value, Some(iid), DICT_ENTRIES);
            let labels = out.len();
            for _ in 0..count {
                let TapeStep::Label(l) = it.next()? else {
                    return None;
                };
                let at = out.len();
                put_bytes(out, 6, l.as_bytes());
                frame(out, at, None, ARRAY_VALUES);
            }
            if out.len() == labels {
                put_bytes(out, 9, b"[]");
            }
            let iid = names.iid("labels");
            frame(out, labels, Some(iid), DICT_ENTRIES);
            n
        }
        _ => return None,
    };
    let iid = match named {
        Named::Own => Some(names.field(own)),
        Named::No => None,
        Named::As(n) => Some(names.iid(n)),
    };
    frame(out, start, iid, tag);
    Some(true)
}

/// A leaf value as [`put_annotation`] writes the tree's node of it (byte
/// blobs and integer arrays are arrays of numbers).
pub(super) fn put_leaf(v: Value<'_>, names: &mut Interner<'_>, out: &mut Vec<u8>) {
    use prost::encoding::{encode_key, WireType};
    let _ = names;
    match v {
        Value::Unsigned(x) => put_varint(out, 3, x),
        Value::Signed(x) => put_varint(out, 4, x as u64),
        Value::Float(x) => {
            encode_key(5, WireType::SixtyFourBit, out);
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        Value::Bool(x) => put_varint(out, 2, u64::from(x)),
        Value::Str(b) => put_bytes(out, 6, String::from_utf8_lossy(b).as_bytes()),
        Value::Bytes(b) => {
            for &x in b {
                let at = out.len();
                put_varint(out, 3, u64::from(x));
                frame(out, at, None, ARRAY_VALUES);
            }
            if b.is_empty() {
                put_bytes(out, 9, b"[]");
            }
        }
        Value::IntArray {
            data,
            elem_size,
            signed,
            ..
        } => {
            let n = data.len() / elem_size.max(1) as usize;
            for j in 0..n {
                let at = out.len();
                match v.array_elem(j) {
                    Some(x) if signed => put_varint(out, 4, x as i64 as u64),
                    Some(x) => put_varint(out, 3, x as u64),
                    None => {}
                }
                frame(out, at, None, ARRAY_VALUES);
            }
            if n == 0 {
                put_bytes(out, 9, b"[]");
            }
        }
    }
}

/// A uftrace entry or exit of the usual shape: its address and function
/// name, no arguments (entry) or no return value (exit).
pub(super) struct Call<'a> {
    pub(super) addr: u64,
    pub(super) name: &'a [u8],
}

/// `t` as a [`Call`], when it is one.
pub(super) fn plain_call<'a>(
    t: &'a FieldTape,
    layout: &'a ClassLayout,
    entry: bool,
) -> Option<Call<'a>> {
    let mut it = t.scope_steps(layout, Scope::Payload);
    let TapeStep::Field(a, _, Value::Unsigned(addr)) = it.next()? else {
        return None;
    };
    let TapeStep::Field(n, _, Value::Str(name)) = it.next()? else {
        return None;
    };
    (a.name() == "addr" && n.name() == "name").then_some(())?;
    match (entry, it.next()?, it.next()?) {
        (true, TapeStep::ArrayBegin(f, 0), TapeStep::ArrayEnd) if f.name() == "args" => {}
        (false, TapeStep::OptionalBegin(f, false), TapeStep::OptionalEnd)
            if f.name() == "retval" => {}
        _ => return None,
    }
    it.next().is_none().then_some(Call { addr, name })
}

/// Debug annotation names interned on a sequence.
/// Blocks of bytes shared by the encoded parts of many events (one
/// allocation for many, freed when the last of them is written).
#[derive(Default)]
pub(super) struct Arena(pub(super) prost::bytes::BytesMut);

impl Arena {
    const BLOCK: usize = 1 << 16;

    /// A copy of `b` in the arena.
    pub(super) fn keep(&mut self, b: &[u8]) -> prost::bytes::Bytes {
        if self.0.capacity() < b.len() {
            self.0.reserve(Self::BLOCK.max(b.len()));
        }
        self.0.extend_from_slice(b);
        self.0.split().freeze()
    }
}

pub(super) struct Interner<'a> {
    pub(super) map: &'a mut HashMap<String, u64>,
    pub(super) new: &'a mut Vec<DebugAnnotationName>,
    /// The iids of the fields of the event's class, by field id (0: not
    /// interned yet): each name is looked up once per class and sequence.
    pub(super) fields: Option<&'a mut Vec<u64>>,
}

impl Interner<'_> {
    /// The iid of field `f`'s name.
    pub(super) fn field(&mut self, f: FieldRef<'_>) -> u64 {
        let k = f.id.index();
        if let Some(&i) = self.fields.as_ref().and_then(|c| c.get(k)) {
            if i != 0 {
                return i;
            }
        }
        let i = self.iid(f.name());
        if let Some(c) = self.fields.as_deref_mut() {
            if k < c.len().max(1 << 16) {
                if c.len() <= k {
                    c.resize(k + 1, 0);
                }
                c[k] = i;
            }
        }
        i
    }

    pub(super) fn iid(&mut self, name: &str) -> u64 {
        if let Some(&i) = self.map.get(name) {
            return i;
        }
        let i = self.map.len() as u64 + 1;
        self.map.insert(name.to_string(), i);
        self.new.push(DebugAnnotationName {
            iid: Some(i),
            name: Some(name.to_string()),
        });
        i
    }
}

/// Field numbers of `DebugAnnotation`s: in a `TrackEvent`, in a
/// dictionary, in an array.
pub(super) const ANNOTATIONS: u32 = 4;

pub(super) const DICT_ENTRIES: u32 = 11;

pub(super) const ARRAY_VALUES: u32 = 12;

/// Node `i` as an encoded debug annotation, framed as field `tag` of its
/// message and appended to `out`; `name` is interned after the names its
/// value uses. Values nest as `report --json` nests them: structures as
/// dictionaries, arrays as arrays, a variant as a dictionary of its option,
/// an enumeration as `{value, labels}`; an absent optional has no value.
/// The bytes are those prost writes for the `DebugAnnotation` message.
pub(super) fn put_annotation(
    t: &Tree,
    i: usize,
    name: Option<&str>,
    tag: u32,
    names: &mut Interner<'_>,
    out: &mut Vec<u8>,
) {
    use prost::encoding::{encode_key, WireType};
    let start = out.len();
    match t.nodes[i].kind {
        Kind::U(x) => put_varint(out, 3, x),
        Kind::S(x) => put_varint(out, 4, x as u64),
        Kind::F(x) => {
            encode_key(5, WireType::SixtyFourBit, out);
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        Kind::B(x) => put_varint(out, 2, u64::from(x)),
        Kind::Str(..) => put_bytes(out, 6, String::from_utf8_lossy(t.bytes(i)).as_bytes()),
        Kind::Null => {}
        // Protobuf cannot tell an empty container from no value: empty ones
        // are written as their JSON text.
        Kind::Obj | Kind::Arr if t.children(i).next().is_none() => {
            let json = if t.nodes[i].kind == Kind::Obj {
                "{}"
            } else {
                "[]"
            };
            put_bytes(out, 9, json.as_bytes());
        }
        Kind::Obj => {
            for c in t.children(i) {
                put_annotation(t, c, Some(t.name(c)), DICT_ENTRIES, names, out);
            }
        }
        Kind::Arr => {
            for c in t.children(i) {
                put_annotation(t, c, None, ARRAY_VALUES, names, out);
            }
        }
        Kind::Variant(..) => {
            if let Some(c) = t.children(i).next() {
                let option = String::from_utf8_lossy(t.bytes(i));
                put_annotation(t, c, Some(&option), DICT_ENTRIES, names, out);
            }
        }
        Kind::Enum => {
            let mut ch = t.children(i);
            if let Some(v) = ch.next() {
                put_annotation(t, v, Some("value"), DICT_ENTRIES, names, out);
            }
            let labels = out.len();
            for c in ch {
                put_annotation(t, c, None, ARRAY_VALUES, names, out);
            }
            if out.len() == labels {
                put_bytes(out, 9, b"[]");
            }
            let iid = names.iid("labels");
            frame(out, labels, Some(iid), DICT_ENTRIES);
        }
    }
    let iid = name.map(|n| names.iid(n));
    frame(out, start, iid, tag);
}

/// Make `out[start..]` (the fields of a `DebugAnnotation` after its name)
/// the message: its `name_iid` put first, framed as field `tag`.
pub(super) fn frame(out: &mut Vec<u8>, start: usize, name_iid: Option<u64>, tag: u32) {
    use prost::encoding::{encode_key, encode_varint, WireType};
    let mut name = [0u8; 16];
    let mut rest = &mut name[..];
    if let Some(iid) = name_iid {
        encode_key(1, WireType::Varint, &mut rest);
        encode_varint(iid, &mut rest);
    }
    let name_len = 16 - rest.len();
    let mut head = [0u8; 16];
    let mut rest = &mut head[..];
    encode_key(tag, WireType::LengthDelimited, &mut rest);
    encode_varint((out.len() - start + name_len) as u64, &mut rest);
    let head_len = 16 - rest.len();
    // the value moves up to make room for the head and the name
    let k = head_len + name_len;
    let end = out.len();
    out.resize(end + k, 0);
    out.copy_within(start..end, start + k);
    out[start..start + head_len].copy_from_slice(&head[..head_len]);
    out[start + head_len..start + k].copy_from_slice(&name[..name_len]);
}
