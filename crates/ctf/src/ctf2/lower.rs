//! CTF 2 fragments (CTF2-SPEC-2.0 sections 5.4 to 5.9) lowered to the IR.

use std::collections::{HashMap, HashSet};

use super::check::check_locations;
use super::fc::{Alias, FcLower, Fcx};
use super::json::{Kind, Value};
use super::util::{Cx, JPath, Res};
use super::{Ctf2Error, Leniency, Notes};
use crate::ir::*;

/// Field classes and path elements produced at most (see
/// `FcLower::budget`): every one written out costs at least a few bytes
/// of JSON, so only alias expansion can come near this.
fn budget_for(input_len: usize) -> usize {
    100_000usize.saturating_add(input_len.saturating_mul(4))
}

struct Lowerer<'j> {
    c: Cx,
    aliases: Vec<Alias<'j>>,
    by_name: HashMap<&'j str, usize>,
    budget: usize,
    tc: TraceClass,
    /// Index in `tc.clocks` of each clock class `id`.
    clock_ids: HashMap<&'j str, usize>,
    /// Index in `tc.stream_classes` of each data stream class ID.
    stream_ids: HashMap<u64, usize>,
    /// (data stream class ID, event record class ID) pairs seen.
    event_ids: HashSet<(u64, u64)>,
    have_trace_class: bool,
    notes: Notes,
}

/// Lower parsed fragments `(number, value)` in order; what is forgiven
/// goes to `notes`.
pub(crate) fn lower(
    frags: &[(usize, Value)],
    input_len: usize,
    notes: &mut Notes,
) -> Res<TraceClass> {
    let Some((_, first)) = frags.first() else {
        return Err(Ctf2Error {
            fragment: 0,
            offset: 0,
            path: String::new(),
            msg: "no fragment: a CTF 2 metadata stream starts with a preamble".into(),
            unsupported: false,
        });
    };
    let mut l = Lowerer {
        c: Cx { frag: frags[0].0 },
        aliases: Vec::new(),
        by_name: HashMap::new(),
        budget: budget_for(input_len),
        tc: TraceClass::new(CtfVersion::Ctf2),
        clock_ids: HashMap::new(),
        stream_ids: HashMap::new(),
        event_ids: HashSet::new(),
        have_trace_class: false,
        notes: std::mem::take(notes),
    };
    let root = JPath::root();
    for (i, (number, v)) in frags.iter().enumerate() {
        l.c = Cx { frag: *number };
        let c = l.c;
        c.obj(v, &root)?;
        let tv = c.req(v, "type", &root)?;
        let ty = c.str(tv, &root.key("type"))?;
        if i == 0 && ty != "preamble" {
            return Err(c.err(first, &root, "the first fragment must be a preamble"));
        }
        match ty {
            "preamble" if i == 0 => l.preamble(v)?,
            "preamble" => return Err(c.err(v, &root, "a second preamble")),
            "field-class-alias" => l.alias(v)?,
            "trace-class" => l.trace_class(v)?,
            "clock-class" => l.clock_class(v)?,
            "data-stream-class" => l.stream_class(v)?,
            "event-record-class" => l.event_class(v)?,
            o => {
                return Err(c.err(
                    tv,
                    &root.key("type"),
                    format!("unknown fragment type `{o}`"),
                ))
            }
        }
    }
    l.tc.native_byte_order = native_byte_order(&l.tc);
    *notes = l.notes;
    Ok(l.tc)
}

/// The byte order of the packet magic number field, else little-endian.
fn native_byte_order(tc: &TraceClass) -> ByteOrder {
    tc.packet_header
        .as_ref()
        .and_then(|h| {
            h.members.iter().find_map(|m| match &m.class {
                FieldClass::Int(i) if i.roles.has(Roles::PACKET_MAGIC) => Some(i.byte_order),
                _ => None,
            })
        })
        .unwrap_or(ByteOrder::Little)
}

/// Parse a UUID string (`8-4-4-4-12` hexadecimal digits).
fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let hex: Vec<u8> = s.bytes().filter(|&b| b != b'-').collect();
    let dashes = [8, 13, 18, 23];
    if s.len() != 36
        || dashes.iter().any(|&i| s.as_bytes()[i] != b'-')
        || hex.len() != 32
        || !hex.iter().all(u8::is_ascii_hexdigit)
    {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, pair) in hex.chunks(2).enumerate() {
        let t = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(t, 16).ok()?;
    }
    Some(out)
}

/// An attribute of the babeltrace2 namespace, else of the LTTng one (the
/// order babeltrace2 looks them up in), in `attrs` (the `attributes`).
fn attr<'v>(attrs: Option<&'v Value>, name: &str) -> Option<&'v Value> {
    let a = attrs?;
    ["babeltrace.org,2020", "lttng.org,2009"]
        .iter()
        .find_map(|ns| a.get(ns).and_then(|n| n.get(name)))
}

/// A UUID as an array of 16 bytes.
fn uuid_array(c: &Cx, u: &Value, p: &JPath) -> Res<[u8; 16]> {
    let a = c.arr(u, p)?;
    if a.len() != 16 {
        return Err(c.err(u, p, "a UUID has 16 elements"));
    }
    let mut uuid = [0u8; 16];
    for (i, b) in a.iter().enumerate() {
        let n = c.int(b, &p.index(i))?;
        uuid[i] =
            u8::try_from(n).map_err(|_| c.err(b, &p.index(i), format!("{n} is not a byte")))?;
    }
    Ok(uuid)
}

impl<'j> Lowerer<'j> {
    /// Note a draft name read as its 2.0 equivalent.
    fn draft(&mut self, v: &Value, p: &JPath, what: &'static str) {
        let e = self.c.err(v, p, "");
        self.notes.add(Leniency::DraftName, what, e);
    }

    fn preamble(&mut self, v: &Value) -> Res<()> {
        let c = self.c;
        let root = JPath::root();
        let vv = c.req(v, "version", &root)?;
        let ver = c.int(vv, &root.key("version"))?;
        if ver != 2 {
            return Err(c.unsupported(vv, &root.key("version"), format!("CTF version {ver}")));
        }
        if let Some(u) = v.get("uuid") {
            self.tc.uuid = Some(uuid_array(&c, u, &root.key("uuid"))?);
        }
        c.refuse_extensions(v, &root, |x, p, ns, name| {
            c.unsupported(
                x,
                p,
                format!("the metadata requires extension `{ns}` / `{name}`"),
            )
        })
    }

    /// A fragment's context and root path, once the fragment is seen to
    /// have no extensions.
    fn fragment(&self, v: &Value) -> Res<(Cx, JPath<'static>)> {
        let root = JPath::root();
        self.c.no_ext(v, &root)?;
        Ok((self.c, root))
    }

    fn alias(&mut self, v: &'j Value) -> Res<()> {
        let (c, root) = self.fragment(v)?;
        let nv = c.req(v, "name", &root)?;
        let name = c.str(nv, &root.key("name"))?;
        if self.by_name.contains_key(name) {
            return Err(c.err(nv, &root.key("name"), format!("duplicate alias `{name}`")));
        }
        let fv = c.req(v, "field-class", &root)?;
        let entry = match &fv.kind {
            Kind::Str(target) => {
                let Some(&i) = self.by_name.get(target.as_str()) else {
                    return Err(c.err(
                        fv,
                        &root.key("field-class"),
                        format!("no field class alias named `{target}` before this point"),
                    ));
                };
                Alias {
                    name,
                    ..self.aliases[i]
                }
            }
            Kind::Obj(_) => Alias {
                name,
                body: fv,
                visible: self.aliases.len(),
            },
            _ => {
                return Err(c.err(
                    fv,
                    &root.key("field-class"),
                    format!(
                        "expected a field class or an alias name, found {}",
                        fv.kind_name()
                    ),
                ))
            }
        };
        self.by_name.insert(name, self.aliases.len());
        self.aliases.push(entry);
        Ok(())
    }

    /// Lower the root structure of `scope` (property `key` of `v`) and
    /// check its field locations against the scopes lowered before.
    fn scope(
        &mut self,
        v: &'j Value,
        scope: Scope,
        clock: Option<usize>,
        earlier: &[Option<&StructClass>; 6],
    ) -> Res<Option<StructClass>> {
        let key = scope_key(scope);
        let Some(sv) = v.get(key) else {
            return Ok(None);
        };
        let root = JPath::root();
        let p = root.key(key);
        let mut cx = Fcx::new(scope, self.aliases.len(), clock);
        let mut fl = FcLower {
            c: self.c,
            aliases: &self.aliases,
            by_name: &self.by_name,
            budget: &mut self.budget,
            notes: &mut self.notes,
        };
        let FieldClass::Struct(s) = fl.fc(sv, &p, &mut cx)? else {
            return Err(self
                .c
                .err(sv, &p, "a scope field class must be a structure"));
        };
        let mut scopes: [Option<&StructClass>; 6] = *earlier;
        scopes[scope as usize] = Some(&s);
        let forgiven = check_locations(self.c.frag, &cx, &scopes, &mut self.notes)?;
        let mut s = FieldClass::Struct(s);
        for rec in forgiven {
            strip_ranges(&mut s, &rec.s_path, &rec.loc);
        }
        let FieldClass::Struct(s) = s else {
            unreachable!("a structure stays a structure")
        };
        Ok(Some(s))
    }

    fn trace_class(&mut self, v: &'j Value) -> Res<()> {
        let (c, root) = self.fragment(v)?;
        if self.have_trace_class {
            return Err(c.err(v, &root, "a second trace class"));
        }
        if !self.tc.stream_classes.is_empty() {
            return Err(c.err(
                v,
                &root,
                "the trace class must come before data stream classes",
            ));
        }
        self.have_trace_class = true;
        let name = c.opt_str(v, "name", &root)?.filter(|s| !s.is_empty());
        let uid = c.opt_str(v, "uid", &root)?.filter(|s| !s.is_empty());
        self.tc.name = name.or(uid).map(str::to_string);
        if let Some(env) = v.get("environment") {
            let p = root.key("environment");
            for (k, ev) in c.obj(env, &p)? {
                let val = match &ev.kind {
                    Kind::Str(s) => EnvValue::Str(s.clone()),
                    Kind::Int(_) => EnvValue::Int(c.i64(ev, &p.key(k))?),
                    _ => {
                        return Err(c.err(
                            ev,
                            &p.key(k),
                            format!(
                                "an environment value is an integer or a string, not {}",
                                ev.kind_name()
                            ),
                        ))
                    }
                };
                self.tc.environment.push((k.clone(), val));
            }
        }
        self.tc.packet_header = self.scope(v, Scope::PacketHeader, None, &[None; 6])?;
        Ok(())
    }

    fn clock_class(&mut self, v: &'j Value) -> Res<()> {
        let (c, root) = self.fragment(v)?;
        // Drafts of CTF 2 named clock classes by `name` (no `id`).
        let iv = match (v.get("id"), v.get("name")) {
            (None, Some(n)) => {
                self.draft(
                    n,
                    &root.key("name"),
                    "clock class `name` without `id` (a draft's identifier; read as the `id`)",
                );
                n
            }
            _ => c.req(v, "id", &root)?,
        };
        let id = c.str(iv, &root.key("id"))?;
        if self.clock_ids.contains_key(id) {
            return Err(c.err(iv, &root.key("id"), format!("duplicate clock class `{id}`")));
        }
        let fv = c.req(v, "frequency", &root)?;
        let frequency = c.u64(fv, &root.key("frequency"))?;
        if frequency == 0 {
            return Err(c.err(
                fv,
                &root.key("frequency"),
                "frequency must be greater than zero",
            ));
        }
        let mut cc = ClockClass::new(c.opt_str(v, "name", &root)?.unwrap_or(id));
        cc.frequency = frequency;
        cc.precision = c.opt_u64(v, "precision", &root)?;
        cc.description = c.opt_str(v, "description", &root)?.map(str::to_string);
        cc.uuid = c.opt_str(v, "uid", &root)?.and_then(parse_uuid);
        if let (None, Some(u)) = (v.get("uid"), v.get("uuid")) {
            // A draft's 16-byte UUID array (2.0: a `uid` string).
            let p = root.key("uuid");
            cc.uuid = Some(uuid_array(&c, u, &p)?);
            self.draft(u, &p, "clock class `uuid` (a draft's name; 2.0 has `uid`)");
        }
        if let (None, Some(o)) = (v.get("origin"), v.get("origin-is-unix-epoch")) {
            let p = root.key("origin-is-unix-epoch");
            let Kind::Bool(b) = o.kind else {
                return Err(c.err(
                    o,
                    &p,
                    format!("expected a boolean, found {}", o.kind_name()),
                ));
            };
            cc.origin_is_unix_epoch = b;
            self.draft(
                o,
                &p,
                "clock class `origin-is-unix-epoch` (a draft's name; 2.0 has `origin`)",
            );
        }
        if let Some(o) = v.get("origin") {
            let p = root.key("origin");
            cc.origin_is_unix_epoch = match &o.kind {
                Kind::Str(s) if s == "unix-epoch" => true,
                Kind::Obj(_) => false,
                _ => {
                    return Err(c.err(o, &p, "an origin is \"unix-epoch\" or an object"));
                }
            };
        }
        let offset = match (v.get("offset-from-origin"), v.get("offset")) {
            (None, Some(o)) => {
                self.draft(
                    o,
                    &root.key("offset"),
                    "clock class `offset` (a draft's name; 2.0 has `offset-from-origin`)",
                );
                Some((o, "offset"))
            }
            (o, _) => o.map(|o| (o, "offset-from-origin")),
        };
        if let Some((off, key)) = offset {
            let p = root.key(key);
            c.obj(off, &p)?;
            if let Some(s) = off.get("seconds") {
                cc.offset_seconds = c.i64(s, &p.key("seconds"))?;
            }
            cc.offset_cycles = c.opt_u64(off, "cycles", &p)?.unwrap_or(0);
        }
        self.clock_ids.insert(id, self.tc.clocks.len());
        self.tc.clocks.push(cc);
        Ok(())
    }

    fn stream_class(&mut self, v: &'j Value) -> Res<()> {
        let (c, root) = self.fragment(v)?;
        let id = c.opt_u64(v, "id", &root)?.unwrap_or(0);
        if self.stream_ids.contains_key(&id) {
            return Err(c.err(v, &root, format!("duplicate data stream class ID {id}")));
        }
        let mut sc = StreamClass::new(id);
        sc.name = c.opt_str(v, "name", &root)?.map(str::to_string);
        let dcc = match (
            v.get("default-clock-class-id"),
            v.get("default-clock-class-name"),
        ) {
            (None, Some(n)) => {
                self.draft(n, &root.key("default-clock-class-name"), "data stream class `default-clock-class-name` (a draft's name; 2.0 has `default-clock-class-id`)");
                Some((n, "default-clock-class-name"))
            }
            (i, _) => i.map(|i| (i, "default-clock-class-id")),
        };
        if let Some((cv, key)) = dcc {
            let p = root.key(key);
            let cid = c.str(cv, &p)?;
            let Some(&i) = self.clock_ids.get(cid) else {
                return Err(c.err(cv, &p, format!("no clock class `{cid}` before this point")));
            };
            sc.default_clock = Some(i);
        }
        let clock = sc.default_clock;
        let ph = self.tc.packet_header.take();
        let r = self.stream_scopes(v, &mut sc, clock, ph.as_ref());
        self.tc.packet_header = ph;
        r?;
        self.stream_ids.insert(id, self.tc.stream_classes.len());
        self.tc.stream_classes.push(sc);
        Ok(())
    }

    fn stream_scopes(
        &mut self,
        v: &'j Value,
        sc: &mut StreamClass,
        clock: Option<usize>,
        ph: Option<&StructClass>,
    ) -> Res<()> {
        let mut earlier = [ph, None, None, None, None, None];
        let mut field_class = |scope, earlier: &_| self.scope(v, scope, clock, earlier);
        let pc = field_class(Scope::PacketContext, &earlier)?;
        earlier[1] = pc.as_ref();
        let eh = field_class(Scope::EventHeader, &earlier)?;
        earlier[2] = eh.as_ref();
        let cc = field_class(Scope::EventCommonContext, &earlier)?;
        sc.packet_context = pc;
        sc.event_header = eh;
        sc.event_common_context = cc;
        Ok(())
    }

    fn event_class(&mut self, v: &'j Value) -> Res<()> {
        let (c, root) = self.fragment(v)?;
        let sid = c.opt_u64(v, "data-stream-class-id", &root)?.unwrap_or(0);
        let Some(&si) = self.stream_ids.get(&sid) else {
            return Err(c.err(
                v,
                &root,
                format!("no data stream class with ID {sid} before this point"),
            ));
        };
        let id = c.opt_u64(v, "id", &root)?.unwrap_or(0);
        if !self.event_ids.insert((sid, id)) {
            return Err(c.err(
                v,
                &root,
                format!("duplicate event record class ID {id} in data stream class {sid}"),
            ));
        }
        let mut ec = EventClass::new(id, c.opt_str(v, "name", &root)?.map(str::to_string));
        let attrs = match (v.get("attributes"), v.get("user-attributes")) {
            (None, Some(u)) => {
                self.draft(
                    u,
                    &root.key("user-attributes"),
                    "`user-attributes` (a draft's name; 2.0 has `attributes`)",
                );
                Some(u)
            }
            (a, _) => a,
        };
        if let Some(l) = attr(attrs, "log-level") {
            ec.log_level = match &l.kind {
                Kind::Str(s) => LOG_LEVELS.iter().position(|n| n == s).map(|i| i as i64),
                Kind::Int(i) => i64::try_from(*i).ok(),
                _ => None,
            };
        }
        if let Some(Kind::Str(s)) = attr(attrs, "emf-uri").map(|u| &u.kind) {
            ec.emf_uri = Some(s.clone());
        }
        // Lower with the data stream class and the packet header moved out
        // of the trace class, so that they can be borrowed alongside.
        let sc = self.tc.stream_classes.swap_remove(si);
        let ph = self.tc.packet_header.take();
        let r = self.event_scopes(v, &mut ec, &sc, ph.as_ref());
        self.tc.packet_header = ph;
        self.tc.stream_classes.push(sc);
        let last = self.tc.stream_classes.len() - 1;
        self.tc.stream_classes.swap(si, last);
        r?;
        self.tc.stream_classes[si].event_classes.push(ec);
        Ok(())
    }

    fn event_scopes(
        &mut self,
        v: &'j Value,
        ec: &mut EventClass,
        sc: &StreamClass,
        ph: Option<&StructClass>,
    ) -> Res<()> {
        let mut earlier = sc.scope_roots(ph);
        let clock = sc.default_clock;
        let mut field_class = |scope, earlier: &_| self.scope(v, scope, clock, earlier);
        let spec = field_class(Scope::EventSpecificContext, &earlier)?;
        earlier[4] = spec.as_ref();
        let payload = field_class(Scope::EventPayload, &earlier)?;
        ec.specific_context = spec;
        ec.payload = payload;
        Ok(())
    }
}

/// The property of a fragment that holds the field class of `scope`.
fn scope_key(scope: Scope) -> &'static str {
    match scope {
        Scope::PacketHeader => "packet-header-field-class",
        Scope::PacketContext => "packet-context-field-class",
        Scope::EventHeader => "event-record-header-field-class",
        Scope::EventCommonContext => "event-record-common-context-field-class",
        Scope::EventSpecificContext => "specific-context-field-class",
        Scope::EventPayload => "payload-field-class",
    }
}

/// Drop the selector ranges of the optionals at `here` (member names from
/// the scope root) whose selector is `loc`: given on a boolean selector,
/// they are ignored.
fn strip_ranges(fc: &mut FieldClass, here: &[String], loc: &FieldLocation) {
    match fc {
        FieldClass::Struct(s) => {
            if let Some((name, rest)) = here.split_first() {
                for m in s.members.iter_mut().filter(|m| &m.name == name) {
                    strip_ranges(&mut m.class, rest, loc);
                }
            }
        }
        FieldClass::Array(a) => strip_ranges(&mut a.element, here, loc),
        FieldClass::Variant(v) => {
            for o in &mut v.options {
                strip_ranges(&mut o.class, here, loc);
            }
        }
        FieldClass::Optional(o) => {
            if here.is_empty() && &o.selector == loc {
                o.selector_ranges = None;
            }
            strip_ranges(&mut o.class, here, loc);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::parse_uuid;

    #[test]
    fn uuids() {
        assert_eq!(
            parse_uuid("4d86e02c-f527-4971-b960-971d26074bd4"),
            Some([
                0x4d, 0x86, 0xe0, 0x2c, 0xf5, 0x27, 0x49, 0x71, 0xb9, 0x60, 0x97, 0x1d, 0x26, 0x07,
                0x4b, 0xd4
            ])
        );
        assert_eq!(parse_uuid(""), None);
        assert_eq!(parse_uuid("4d86e02c-f527-4971-b960-971d26074bdx"), None);
        assert_eq!(parse_uuid("4d86e02cf-527-4971-b960-971d26074bd4"), None);
        assert_eq!(parse_uuid("+d86e02c-f527-4971-b960-971d26074bd4"), None);
    }
}
