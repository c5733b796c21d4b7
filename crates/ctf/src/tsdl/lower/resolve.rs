//! What lowering derives from the declared types: the roles of the
//! special fields (ids, timestamps, packet sizes), clocks mapped to fields,
//! text arrays, the resolution of length and tag paths, and the
//! conversion into the IR's field classes.

use super::*;

pub(super) fn int_member<'a>(s: &'a mut StructT, name: &str) -> Option<&'a mut IntT> {
    s.members
        .iter_mut()
        .find(|m| m.name == name)
        .and_then(|m| match &mut m.t {
            T::Int(i) => Some(i),
            _ => None,
        })
}

pub(super) fn set_role(s: &mut Option<StructT>, name: &str, r: Roles) {
    if let Some(s) = s {
        if let Some(i) = int_member(s, name) {
            i.class.roles |= r;
        }
    }
}

/// Packet header `stream_id` at any depth: every integer member named
/// `stream_id`, in nested structures too (through arrays, sequences and
/// variant options, which are not named themselves), selects the data
/// stream class, the last one decoded winning. CTF 1.8 names "the
/// `stream_id` packet header field" without saying it must be a direct
/// member; yactfr gives the role at any depth (its conformance case with
/// several such fields is valid). babeltrace2 2.0.4 reads only the
/// top-level member (see the README's deliberate differences).
pub(super) fn set_stream_id_roles(named: &mut [Named]) {
    fn walk(t: &mut T) {
        match t {
            T::Struct(s) => set_stream_id_roles(&mut s.members),
            T::Variant(v) => v.options.iter_mut().for_each(|o| walk(&mut o.t)),
            T::Array(e, _) | T::Seq(e, _, _) => walk(e),
            _ => {}
        }
    }
    for n in named {
        match &mut n.t {
            T::Int(i) if n.name == "stream_id" => i.class.roles |= Roles::DATA_STREAM_CLASS_ID,
            t => walk(t),
        }
    }
}

/// Whether a packet header has a `stream_id` integer at any depth (see
/// [`set_stream_id_roles`]).
pub(super) fn has_stream_id(named: &[Named]) -> bool {
    fn walk(t: &T) -> bool {
        match t {
            T::Struct(s) => has_stream_id(&s.members),
            T::Variant(v) => v.options.iter().any(|o| walk(&o.t)),
            T::Array(e, _) | T::Seq(e, _, _) => walk(e),
            _ => false,
        }
    }
    named.iter().any(|n| match &n.t {
        T::Int(_) => n.name == "stream_id",
        t => walk(t),
    })
}

/// Event header `id` at any depth (variant options and array elements
/// themselves are not named, so they do not match).
pub(super) fn set_id_roles(named: &mut [Named]) {
    for n in named {
        match &mut n.t {
            T::Int(i) if n.name == "id" => i.class.roles |= Roles::EVENT_CLASS_ID,
            T::Struct(s) => set_id_roles(&mut s.members),
            T::Variant(v) => {
                for o in &mut v.options {
                    match &mut o.t {
                        T::Struct(s) => set_id_roles(&mut s.members),
                        T::Variant(_) => set_id_roles(std::slice::from_mut(o)),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

/// Every integer mapped to a clock updates the default clock.
pub(super) fn clock_roles(t: &mut T) {
    match t {
        T::Int(i) if i.class.mapped_clock.is_some() => {
            i.class.roles |= Roles::DEFAULT_CLOCK_TIMESTAMP;
        }
        T::Struct(s) => s.members.iter_mut().for_each(|m| clock_roles(&mut m.t)),
        T::Variant(v) => v.options.iter_mut().for_each(|m| clock_roles(&mut m.t)),
        T::Array(e, _) | T::Seq(e, _, _) => clock_roles(e),
        _ => {}
    }
}

pub(super) fn find_clock(t: &T, found: &mut Option<usize>) -> Result<(), String> {
    match t {
        T::Int(i) => {
            if let Some(c) = i.class.mapped_clock {
                if let Some(f) = *found {
                    if f != c {
                        return Err(
                            "integers of one stream class are mapped to different clock classes"
                                .into(),
                        );
                    }
                }
                *found = Some(c);
            }
        }
        T::Struct(s) => {
            for m in &s.members {
                find_clock(&m.t, found)?;
            }
        }
        T::Variant(v) => {
            for m in &v.options {
                find_clock(&m.t, found)?;
            }
        }
        T::Array(e, _) | T::Seq(e, _, _) => find_clock(e, found)?,
        _ => {}
    }
    Ok(())
}

pub(super) fn struct_as_t(s: &Option<StructT>) -> Option<T> {
    s.as_ref().map(|s| T::Struct(s.clone()))
}

/// The six scope roots visible from one event class.
pub(super) struct Roots<'a> {
    pub(super) roots: [Option<&'a T>; 6],
}

/// One frame of the resolution stack: a compound and the index of the
/// child being visited (`usize::MAX` for an array element).
pub(super) type Frame<'a> = (&'a T, usize);

pub(super) const ARRAY_IDX: usize = usize::MAX;

pub(super) fn child_by_orig<'a>(t: &'a T, name: &str) -> Option<(usize, &'a T)> {
    let named = match t {
        T::Struct(s) => &s.members,
        T::Variant(v) => &v.options,
        _ => return None,
    };
    named
        .iter()
        .enumerate()
        .find(|(_, m)| m.orig == name)
        .map(|(i, m)| (i, &m.t))
}

/// One way `tokens` reach a field from a compound: the index path (with
/// `ARRAY_IDX` for array elements), the positions of that path where a
/// variant was crossed without naming one of its options, and the target.
pub(super) type Reach<'a> = (Vec<usize>, Vec<usize>, &'a T);

/// Every field `tokens` reach from `t`. A variant whose options do not
/// include the next token is crossed into each of its options, as yactfr
/// resolves `outer.len` where each option of variant `outer` has its own
/// `len` (at another place, of another type): one target per option, and
/// none if an option has no such field (the length or selector would not
/// be known after that option). `src_index` bounds the first token to the
/// children of `t` before the source.
pub(super) fn tokens_to_path<'a>(tokens: &[&str], t: &'a T, src_index: usize) -> Vec<Reach<'a>> {
    let mut out = Vec::new();
    reach(
        tokens,
        t,
        src_index,
        &mut Vec::new(),
        &mut Vec::new(),
        &mut out,
        0,
    );
    out
}

/// Crossed variants deeper than this are not followed (a bound on the
/// work of a metadata text of nested variants).
pub(super) const MAX_REACH_DEPTH: usize = 64;

/// Targets of one location beyond this are refused (the location is not
/// resolved): each is a path through every variant crossed.
pub(super) const MAX_REACHED: usize = 1024;

pub(super) fn reach<'a>(
    tokens: &[&str],
    t: &'a T,
    src_index: usize,
    path: &mut Vec<usize>,
    implicit: &mut Vec<usize>,
    out: &mut Vec<Reach<'a>>,
    depth: usize,
) -> bool {
    if tokens.is_empty() {
        // (nested variants multiply the targets: a bound on the work)
        if out.len() >= MAX_REACHED {
            return false;
        }
        out.push((path.clone(), implicit.clone(), t));
        return true;
    }
    match t {
        T::Array(e, _) | T::Seq(e, _, _) => {
            path.push(ARRAY_IDX);
            let ok = reach(tokens, e, usize::MAX, path, implicit, out, depth);
            path.pop();
            ok
        }
        T::Variant(v)
            if src_index == usize::MAX
                && !v.options.is_empty()
                && !v.options.iter().any(|o| o.orig == tokens[0]) =>
        {
            if depth >= MAX_REACH_DEPTH {
                return false;
            }
            let before = out.len();
            for (i, o) in v.options.iter().enumerate() {
                implicit.push(path.len());
                path.push(i);
                let ok = reach(tokens, &o.t, usize::MAX, path, implicit, out, depth + 1);
                path.pop();
                implicit.pop();
                if !ok {
                    out.truncate(before);
                    return false;
                }
            }
            true
        }
        _ => {
            let Some((i, c)) = child_by_orig(t, tokens[0]) else {
                return false;
            };
            if i > src_index {
                return false;
            }
            path.push(i);
            let ok = reach(&tokens[1..], c, usize::MAX, path, implicit, out, depth);
            path.pop();
            ok
        }
    }
}

pub(super) const PREFIXES: [(&str, usize); 6] = [
    ("trace.packet.header.", 3),
    ("stream.packet.context.", 3),
    ("stream.event.header.", 3),
    ("stream.event.context.", 3),
    ("event.context.", 2),
    ("event.fields.", 2),
];

/// Names of an index path (for the IR location), but for the variants
/// crossed at the positions `implicit` (the decoder crosses a variant
/// whose options do not include the next name into each of them).
pub(super) fn path_names(root: &T, path: &[usize], implicit: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    let mut t = root;
    for (k, &i) in path.iter().enumerate() {
        if implicit.contains(&k) {
            if let T::Variant(v) = t {
                t = &v.options[i].t;
                continue;
            }
        }
        match t {
            T::Array(e, _) | T::Seq(e, _, _) => t = e,
            T::Struct(s) => {
                out.push(s.members[i].name.clone());
                t = &s.members[i].t;
            }
            T::Variant(v) => {
                out.push(v.options[i].name.clone());
                t = &v.options[i].t;
            }
            _ => break,
        }
    }
    out
}

pub(super) struct Resolved<'a> {
    pub(super) loc: FieldLocation,
    /// The fields the location reaches (one per option of each variant
    /// crossed without naming an option).
    pub(super) targets: Vec<&'a T>,
}

pub(super) fn resolve<'a>(
    pathstr: &str,
    pos: Pos,
    scope: Scope,
    stack: &[Frame<'a>],
    roots: &Roots<'a>,
) -> Result<Resolved<'a>, TsdlError> {
    let fail = |why: &str| err(pos, format!("cannot resolve `{pathstr}`: {why}"));
    let tokens: Vec<&str> = pathstr.split('.').collect();
    if tokens.iter().any(|t| t.is_empty()) {
        return Err(fail("empty path element"));
    }
    let abs = PREFIXES
        .iter()
        .enumerate()
        .find(|(_, (p, _))| pathstr.starts_with(p));
    let (tscope, reached) = if let Some((si, (_, n))) = abs {
        let tscope = Scope::ALL[si];
        let root = roots.roots[si].ok_or_else(|| fail("that scope has no field class"))?;
        let r = tokens_to_path(&tokens[*n..], root, usize::MAX);
        if r.is_empty() {
            return Err(fail(
                "no such field (in every option of the variants it crosses)",
            ));
        }
        (tscope, r)
    } else {
        let mut found = Vec::new();
        for pi in (0..stack.len()).rev() {
            let (parent, idx) = stack[pi];
            let r = tokens_to_path(&tokens, parent, idx);
            if !r.is_empty() {
                let head: Vec<usize> = stack[..pi].iter().map(|f| f.1).collect();
                let shift = head.len();
                for (tail, implicit, t) in r {
                    let mut p = head.clone();
                    p.extend(tail);
                    let implicit = implicit.into_iter().map(|k| k + shift).collect();
                    found.push((p, implicit, t));
                }
                break;
            }
        }
        if found.is_empty() {
            return Err(fail("no such field before it"));
        }
        (scope, found)
    };
    if tscope > scope {
        return Err(fail("the target is in a later scope"));
    }
    for (path, _, _) in &reached {
        if path.is_empty() {
            return Err(fail("the target is a scope"));
        }
        if tscope == scope {
            let ctx: Vec<usize> = stack.iter().map(|f| f.1).collect();
            let mut lca = 0;
            loop {
                if lca == path.len() || lca == ctx.len() {
                    return Err(fail("the target contains the source"));
                }
                if path[lca] != ctx[lca] {
                    break;
                }
                lca += 1;
            }
            if path[lca] >= ctx[lca] {
                return Err(fail("the target does not come before the source"));
            }
        }
    }
    let root = roots.roots[tscope as usize].ok_or_else(|| fail("no root"))?;
    let (p0, i0, _) = &reached[0];
    Ok(Resolved {
        loc: FieldLocation::new(tscope, path_names(root, p0, i0)),
        targets: reached.iter().map(|r| r.2).collect(),
    })
}

pub(super) fn int_ranges(raw: &[(String, u64, u64)], signed: bool, label: &str) -> Vec<IntRange> {
    raw.iter()
        .filter(|(l, _, _)| l == label)
        .map(|(_, lo, hi)| {
            if signed {
                IntRange::new(*lo as i64 as i128, *hi as i64 as i128)
            } else {
                IntRange::new(*lo as i128, *hi as i128)
            }
        })
        .collect()
}

pub(super) fn to_mappings(raw: &[(String, u64, u64)], signed: bool) -> Vec<Mapping> {
    let mut out: Vec<Mapping> = Vec::new();
    for (l, lo, hi) in raw {
        let r = if signed {
            IntRange::new(*lo as i64 as i128, *hi as i64 as i128)
        } else {
            IntRange::new(*lo as i128, *hi as i128)
        };
        match out.iter_mut().find(|m| m.name == *l) {
            Some(m) => m.ranges.push(r),
            None => out.push(Mapping {
                name: l.clone(),
                ranges: vec![r],
            }),
        }
    }
    out
}

/// Whether an array/sequence element makes it a string (8-bit,
/// byte-aligned integer with a text encoding).
pub(super) fn is_text_elem(e: &T) -> bool {
    matches!(e, T::Int(i) if i.text && i.class.len == 8 && i.class.align == 8)
}

pub(super) struct Conv<'a> {
    pub(super) scope: Scope,
    pub(super) roots: Roots<'a>,
}

impl<'a> Conv<'a> {
    /// An array or sequence `t` of `length` elements `e`; of text
    /// elements, a string.
    pub(super) fn array(
        &self,
        t: &'a T,
        e: &'a T,
        length: Length,
        stack: &mut Vec<Frame<'a>>,
    ) -> Result<FieldClass, TsdlError> {
        if is_text_elem(e) {
            return Ok(FieldClass::String(StringClass {
                kind: StringKind::Sized(length),
                encoding: StringEncoding::Utf8,
            }));
        }
        Ok(FieldClass::Array(ArrayClass {
            element: Box::new(self.conv_child(t, ARRAY_IDX, e, stack)?),
            length,
            min_align: 1,
            roles: Roles::NONE,
        }))
    }

    /// The child `i` of the compound `t` (`ARRAY_IDX`: its element),
    /// converted with `t` on the resolution stack.
    pub(super) fn conv_child(
        &self,
        t: &'a T,
        i: usize,
        child: &'a T,
        stack: &mut Vec<Frame<'a>>,
    ) -> Result<FieldClass, TsdlError> {
        stack.push((t, i));
        let c = self.conv(child, stack);
        stack.pop();
        c
    }

    pub(super) fn conv(
        &self,
        t: &'a T,
        stack: &mut Vec<Frame<'a>>,
    ) -> Result<FieldClass, TsdlError> {
        Ok(match t {
            T::Int(i) => {
                let mut c = i.class.clone();
                if let Some(m) = &i.mappings {
                    c.mappings = to_mappings(m, c.signed);
                }
                FieldClass::Int(c)
            }
            T::Float(f) => FieldClass::Float(f.clone()),
            T::Str(e) => FieldClass::String(StringClass {
                kind: StringKind::NullTerminated,
                encoding: *e,
            }),
            T::Struct(s) => {
                let mut members = Vec::with_capacity(s.members.len());
                for (i, m) in s.members.iter().enumerate() {
                    members.push(Member {
                        name: m.name.clone(),
                        class: self.conv_child(t, i, &m.t, stack)?,
                    });
                }
                FieldClass::Struct(StructClass {
                    members,
                    min_align: s.min_align.max(1),
                })
            }
            T::Variant(v) => {
                let Some((tag, pos)) = &v.tag else {
                    return Err(err(Pos::default(), "variant without a tag"));
                };
                let r = resolve(tag, *pos, self.scope, stack, &self.roots)?;
                let mut tags = r.targets.iter().map(|t| match t {
                    T::Int(IntT {
                        mappings: Some(maps),
                        class,
                        ..
                    }) => Some((maps, class.signed)),
                    _ => None,
                });
                let Some(Some((maps, signed))) = tags.next() else {
                    return Err(err(
                        *pos,
                        format!("variant tag `{tag}` is not an enumeration"),
                    ));
                };
                // A tag reached through a variant, one per option: the
                // options' ranges are the tag's, so every one must map
                // the same labels to the same values.
                for other in tags {
                    match other {
                        None => {
                            return Err(err(
                                *pos,
                                format!("variant tag `{tag}` is not an enumeration in every option it is reached through"),
                            ))
                        }
                        Some((m, sg)) if m != maps || sg != signed => {
                            return Err(err(
                                *pos,
                                format!("variant tag `{tag}`: the enumerations reached through a variant map different values"),
                            ))
                        }
                        Some(_) => {}
                    }
                }
                let mut options = Vec::with_capacity(v.options.len());
                for (i, o) in v.options.iter().enumerate() {
                    let c = self.conv_child(t, i, &o.t, stack)?;
                    options.push(VariantOption {
                        name: Some(o.name.clone()),
                        ranges: int_ranges(maps, signed, &o.orig),
                        class: c,
                    });
                }
                FieldClass::Variant(VariantClass {
                    selector: r.loc,
                    options,
                })
            }
            T::Array(e, n) => self.array(t, e, Length::Static(*n), stack)?,
            T::Seq(e, lref, pos) => {
                let r = resolve(lref, *pos, self.scope, stack, &self.roots)?;
                if !r.targets.iter().all(|t| matches!(t, T::Int(_))) {
                    return Err(err(
                        *pos,
                        format!("sequence length `{lref}` is not an integer"),
                    ));
                }
                self.array(t, e, Length::Dynamic(r.loc), stack)?
            }
        })
    }

    pub(super) fn scope_root(&self, root: &'a Option<T>) -> Result<Option<StructClass>, TsdlError> {
        match root {
            None => Ok(None),
            Some(t) => match self.conv(t, &mut Vec::new())? {
                FieldClass::Struct(s) => Ok(Some(s)),
                _ => unreachable!("scope roots are structures"),
            },
        }
    }
}

pub(super) fn mk<'a>(scope: Scope, roots: [Option<&'a T>; 6]) -> Conv<'a> {
    Conv {
        scope,
        roots: Roots { roots },
    }
}

pub(super) fn finish(
    mut tc: TraceClass,
    mut ph: Option<StructT>,
    mut streams: Vec<StreamT>,
) -> Result<TraceClass, TsdlError> {
    // Meanings.
    set_role(&mut ph, "magic", Roles::PACKET_MAGIC);
    if let Some(h) = &mut ph {
        set_stream_id_roles(&mut h.members);
    }
    set_role(&mut ph, "stream_instance_id", Roles::DATA_STREAM_ID);
    let mut uuid_field = false;
    if let Some(h) = &ph {
        uuid_field = h
            .members
            .iter()
            .any(|m| m.name == "uuid" && matches!(&m.t, T::Array(_, 16)));
    }
    for st in &mut streams {
        set_role(
            &mut st.pc,
            "timestamp_begin",
            Roles::PACKET_BEGIN_DEFAULT_CLOCK_TIMESTAMP,
        );
        set_role(
            &mut st.pc,
            "timestamp_end",
            Roles::PACKET_END_DEFAULT_CLOCK_TIMESTAMP,
        );
        if let Some(pc) = &mut st.pc {
            if let Some(i) = int_member(pc, "timestamp_end") {
                // Not a clock update (babeltrace2 drops the mapping).
                i.class.mapped_clock = None;
            }
        }
        set_role(
            &mut st.pc,
            "events_discarded",
            Roles::DISCARDED_EVENT_COUNTER_SNAPSHOT,
        );
        set_role(&mut st.pc, "packet_seq_num", Roles::PACKET_SEQUENCE_NUMBER);
        set_role(&mut st.pc, "packet_size", Roles::PACKET_TOTAL_LENGTH);
        set_role(&mut st.pc, "content_size", Roles::PACKET_CONTENT_LENGTH);
        if let Some(eh) = &mut st.eh {
            set_id_roles(&mut eh.members);
        }
    }
    // Default clocks.
    if let Some(h) = &ph {
        let mut f = None;
        find_clock(&T::Struct(h.clone()), &mut f).map_err(|m| err(Pos::default(), m))?;
        if f.is_some() {
            return Err(err(
                Pos::default(),
                "packet header integers cannot be mapped to a clock",
            ));
        }
    }
    let mut default_clocks = Vec::new();
    for st in &streams {
        let mut f = None;
        let check = |t: &Option<StructT>, f: &mut Option<usize>| -> Result<(), TsdlError> {
            if let Some(s) = t {
                find_clock(&T::Struct(s.clone()), f).map_err(|m| err(st.pos, m))?;
            }
            Ok(())
        };
        check(&st.pc, &mut f)?;
        check(&st.eh, &mut f)?;
        check(&st.ec, &mut f)?;
        for ev in &st.events {
            check(&ev.sc, &mut f)?;
            check(&ev.payload, &mut f)?;
        }
        default_clocks.push(f);
    }

    // Convert, scope by scope.
    let ph_t = struct_as_t(&ph).map(|mut t| {
        clock_roles(&mut t);
        t
    });
    let conv_ph = Conv {
        scope: Scope::PacketHeader,
        roots: Roots {
            roots: [ph_t.as_ref(), None, None, None, None, None],
        },
    };
    tc.packet_header = conv_ph.scope_root(&ph_t)?;
    if uuid_field {
        if let Some(h) = &mut tc.packet_header {
            for m in &mut h.members {
                if m.name == "uuid" {
                    if let FieldClass::Array(a) = &mut m.class {
                        a.roles |= Roles::METADATA_STREAM_UUID;
                    }
                }
            }
        }
    }
    for (st, dc) in streams.iter().zip(default_clocks) {
        let prep = |s: &Option<StructT>| {
            struct_as_t(s).map(|mut t| {
                clock_roles(&mut t);
                t
            })
        };
        let pc = prep(&st.pc);
        let eh = prep(&st.eh);
        let ec = prep(&st.ec);
        let mut sc = StreamClass::new(st.id);
        sc.default_clock = dc;
        let base = [
            ph_t.as_ref(),
            pc.as_ref(),
            eh.as_ref(),
            ec.as_ref(),
            None,
            None,
        ];
        sc.packet_context = mk(Scope::PacketContext, base).scope_root(&pc)?;
        sc.event_header = mk(Scope::EventHeader, base).scope_root(&eh)?;
        sc.event_common_context = mk(Scope::EventCommonContext, base).scope_root(&ec)?;
        for ev in &st.events {
            let esc = prep(&ev.sc);
            let epl = prep(&ev.payload);
            let mut roots = base;
            roots[4] = esc.as_ref();
            roots[5] = epl.as_ref();
            let mut ec = EventClass::new(ev.id, Some(ev.name.clone()));
            ec.log_level = ev.log_level;
            ec.emf_uri = ev.emf_uri.clone();
            ec.specific_context = mk(Scope::EventSpecificContext, roots).scope_root(&esc)?;
            ec.payload = mk(Scope::EventPayload, roots).scope_root(&epl)?;
            sc.event_classes.push(ec);
        }
        tc.stream_classes.push(sc);
    }
    Ok(tc)
}
