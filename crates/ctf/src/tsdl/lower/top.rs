//! The top level of a TSDL trace: the trace, clock, stream and event
//! blocks lowered into the trace class, each stream's and event's types
//! resolved in its scope.

use super::*;

pub(super) struct StreamT {
    pub(super) id: u64,
    pub(super) pc: Option<StructT>,
    pub(super) eh: Option<StructT>,
    pub(super) ec: Option<StructT>,
    pub(super) events: Vec<EventT>,
    pub(super) pos: Pos,
}

impl StreamT {
    /// A stream class with nothing declared yet (ID 0).
    pub(super) fn new(pos: Pos) -> Self {
        StreamT {
            id: 0,
            pc: None,
            eh: None,
            ec: None,
            events: Vec::new(),
            pos,
        }
    }
}

pub(super) struct EventT {
    pub(super) id: u64,
    pub(super) name: String,
    pub(super) log_level: Option<i64>,
    pub(super) emf_uri: Option<String>,
    pub(super) sc: Option<StructT>,
    pub(super) payload: Option<StructT>,
}

/// Lower parsed TSDL to a trace class.
pub fn lower(entries: &[Entry]) -> Result<TraceClass, TsdlError> {
    // The native byte order comes first.
    let mut native = None;
    let mut trace_block = None;
    for (body, pos) in blocks(entries, BlockKind::Trace) {
        if trace_block.is_some() {
            return Err(err(pos, "more than one `trace` block"));
        }
        trace_block = Some((body, pos));
        for a in body {
            if let Entry::Assign { lhs, value, pos } = a {
                if lhs_name(lhs) == "byte_order" {
                    let bo = byte_order_of(value, ByteOrder::Little, *pos)?;
                    let s = value.as_text().unwrap_or_default();
                    if s == "native" {
                        return Err(err(*pos, "the trace byte order cannot be `native`"));
                    }
                    native = Some(bo);
                }
            }
        }
    }
    let Some((trace_body, trace_pos)) = trace_block else {
        return Err(err(Pos::default(), "missing `trace` block"));
    };
    let native = native.ok_or_else(|| err(trace_pos, "missing `byte_order` in `trace` block"))?;
    let mut cx = Ctx {
        scopes: vec![DeclScope::default()],
        native,
        clocks: Vec::new(),
        env: Vec::new(),
        is_lttng: false,
    };
    let mut tc = TraceClass::new(CtfVersion::Ctf1);
    tc.native_byte_order = native;

    for (body, _) in blocks(entries, BlockKind::Env) {
        cx.env_block(body)?;
    }
    for (body, pos) in blocks(entries, BlockKind::Clock) {
        cx.clock_block(body, pos)?;
    }
    for e in entries {
        if !matches!(e, Entry::Block { .. }) {
            cx.type_decl(e)?;
        }
    }
    // trace
    let mut packet_header = None;
    {
        let mut seen = (false, false, false);
        cx.block(trace_body, |cx, lhs, assigned, pos| {
            match (lhs, assigned) {
                ("major", Assigned::Value(value)) => {
                    if get_uint(value, pos, "major")? != 1 {
                        return Err(err(pos, "trace major version must be 1"));
                    }
                    seen.0 = true;
                }
                ("minor", Assigned::Value(value)) => {
                    if get_uint(value, pos, "minor")? != 8 {
                        return Err(err(pos, "trace minor version must be 8"));
                    }
                    seen.1 = true;
                }
                ("uuid", Assigned::Value(value)) => {
                    let s = get_text(value, pos, "uuid")?;
                    tc.uuid = Some(parse_uuid(&s).ok_or_else(|| err(pos, "malformed UUID"))?);
                }
                ("byte_order", Assigned::Value(_)) => seen.2 = true,
                ("packet.header", Assigned::Type(spec, decl)) => {
                    if packet_header.is_some() {
                        return Err(err(pos, "duplicate `packet.header`"));
                    }
                    packet_header = Some(cx.scope_type(spec, decl, pos)?);
                }
                _ => {}
            }
            Ok(())
        })?;
        if !seen.0 || !seen.1 {
            return Err(err(
                trace_pos,
                "missing `major` or `minor` in `trace` block",
            ));
        }
    }
    // streams
    let mut streams: Vec<StreamT> = Vec::new();
    for (body, pos) in blocks(entries, BlockKind::Stream) {
        let st = cx.stream_block(body, pos)?;
        match st.0 {
            Some(id) => {
                let has = packet_header
                    .as_ref()
                    .is_some_and(|h| has_stream_id(&h.members));
                if !has {
                    return Err(err(
                        pos,
                        "stream class with an `id` but no `stream_id` field in the packet header",
                    ));
                }
                if streams.iter().any(|s| s.id == id) {
                    return Err(err(pos, format!("duplicate stream class ID {id}")));
                }
                streams.push(StreamT { id, ..st.1 });
            }
            None => {
                if !streams.is_empty() {
                    return Err(err(pos, "only one stream class may lack an `id`"));
                }
                streams.push(StreamT { id: 0, ..st.1 });
            }
        }
    }
    // events
    for (body, pos) in blocks(entries, BlockKind::Event) {
        let (ev, sid) = cx.event_block(body, pos)?;
        let si = match sid {
            Some(id) => streams
                .iter()
                .position(|s| s.id == id)
                .ok_or_else(|| err(pos, format!("event refers to unknown stream class {id}")))?,
            None => match streams.len() {
                0 => {
                    streams.push(StreamT::new(pos));
                    0
                }
                1 => 0,
                _ => {
                    return Err(err(
                        pos,
                        "event without `stream_id` in a trace with several stream classes",
                    ))
                }
            },
        };
        let (ev, id_set) = ev;
        let mut ev = ev;
        if !id_set {
            if !streams[si].events.is_empty() {
                return Err(err(
                    pos,
                    "only one event class per stream class may lack an `id`",
                ));
            }
            ev.id = 0;
        }
        if streams[si].events.iter().any(|x| x.id == ev.id) {
            return Err(err(pos, format!("duplicate event class ID {}", ev.id)));
        }
        streams[si].events.push(ev);
    }

    tc.environment = cx.env.clone();
    tc.clocks = cx.clocks.clone();
    finish(tc, packet_header, streams)
}

impl Ctx {
    pub(super) fn env_block(&mut self, body: &[Entry]) -> Result<(), TsdlError> {
        for e in body {
            let Entry::Assign { lhs, value, pos } = e else {
                return Err(err(entry_pos(e), "unexpected entry in `env` block"));
            };
            let key = lhs_name(lhs);
            let v = match value {
                Value::Str(s) => EnvValue::Str(s.clone()),
                Value::Path(p) => EnvValue::Str(p.join(".")),
                Value::UInt(u) => EnvValue::Int(*u as i64),
                Value::SInt(s) => EnvValue::Int(*s),
            };
            if key == "tracer_name" {
                if let EnvValue::Str(s) = &v {
                    if s.starts_with("lttng") {
                        self.is_lttng = true;
                    }
                }
            }
            let _ = pos;
            self.env.push((key, v));
        }
        Ok(())
    }

    pub(super) fn clock_block(&mut self, body: &[Entry], pos: Pos) -> Result<(), TsdlError> {
        let mut c = ClockClass::new("");
        let mut name = None;
        let mut off_s: i64 = 0;
        let mut off_c: u64 = 0;
        for e in body {
            let Entry::Assign { lhs, value, pos } = e else {
                return Err(err(entry_pos(e), "unexpected entry in `clock` block"));
            };
            let pos = *pos;
            match lhs_name(lhs).as_str() {
                "name" => name = Some(get_text(value, pos, "name")?),
                "uuid" => {
                    let s = get_text(value, pos, "uuid")?;
                    c.uuid = Some(parse_uuid(&s).ok_or_else(|| err(pos, "malformed UUID"))?);
                }
                "description" => c.description = Some(get_text(value, pos, "description")?),
                "freq" => {
                    let f = get_uint(value, pos, "freq")?;
                    if f == 0 || f == u64::MAX {
                        return Err(err(pos, format!("invalid clock frequency {f}")));
                    }
                    c.frequency = f;
                }
                "precision" => c.precision = Some(get_uint(value, pos, "precision")?),
                "offset_s" => off_s = get_sint(value, pos, "offset_s")?,
                "offset" => off_c = get_uint(value, pos, "offset")?,
                "absolute" => c.origin_is_unix_epoch = get_bool(value, pos, "absolute")?,
                _ => {}
            }
        }
        let name = name.ok_or_else(|| err(pos, "clock without a `name`"))?;
        if self.clocks.iter().any(|k| k.name == name) {
            return Err(err(pos, format!("duplicate clock class `{name}`")));
        }
        if self.is_lttng && name == "monotonic" {
            c.origin_is_unix_epoch = true;
        }
        if off_c >= c.frequency {
            let s = off_c / c.frequency;
            off_s = off_s.wrapping_add(s as i64);
            off_c -= s * c.frequency;
        }
        c.name = name;
        c.offset_seconds = off_s;
        c.offset_cycles = off_c;
        self.clocks.push(c);
        Ok(())
    }

    /// Map unmapped integers called `field` (at any depth) to the only
    /// clock class.
    pub(super) fn auto_map(
        &mut self,
        s: &mut StructT,
        field: &str,
        pos: Pos,
    ) -> Result<(), TsdlError> {
        fn walk(cx: &mut Ctx, named: &mut [Named], field: &str, pos: Pos) -> Result<(), TsdlError> {
            for n in named {
                if n.name == field {
                    if let T::Int(i) = &mut n.t {
                        if i.class.mapped_clock.is_none() {
                            let idx = match cx.clocks.len() {
                                0 => {
                                    cx.clocks.push(ClockClass::new("default"));
                                    0
                                }
                                1 => 0,
                                _ => {
                                    return Err(err(
                                        pos,
                                        format!("`{field}` is not mapped to a clock and there are several clock classes"),
                                    ))
                                }
                            };
                            i.class.mapped_clock = Some(idx);
                        }
                    }
                }
                match &mut n.t {
                    T::Struct(s) => walk(cx, &mut s.members, field, pos)?,
                    T::Variant(v) => walk(cx, &mut v.options, field, pos)?,
                    _ => {}
                }
            }
            Ok(())
        }
        walk(self, &mut s.members, field, pos)
    }

    #[allow(clippy::type_complexity)]
    pub(super) fn stream_block(
        &mut self,
        body: &[Entry],
        pos: Pos,
    ) -> Result<(Option<u64>, StreamT), TsdlError> {
        let mut id = None;
        let mut st = StreamT::new(pos);
        self.block(body, |cx, lhs, assigned, pos| {
            match (lhs, assigned) {
                ("id", Assigned::Value(value)) => id = Some(get_uint(value, pos, "id")?),
                ("event.header", Assigned::Type(spec, decl)) => {
                    let mut s = cx.scope_type(spec, decl, pos)?;
                    cx.auto_map(&mut s, "timestamp", pos)?;
                    st.eh = Some(s);
                }
                ("event.context", Assigned::Type(spec, decl)) => {
                    st.ec = Some(cx.scope_type(spec, decl, pos)?)
                }
                ("packet.context", Assigned::Type(spec, decl)) => {
                    let mut s = cx.scope_type(spec, decl, pos)?;
                    cx.auto_map(&mut s, "timestamp_begin", pos)?;
                    cx.auto_map(&mut s, "timestamp_end", pos)?;
                    st.pc = Some(s);
                }
                _ => {}
            }
            Ok(())
        })?;
        Ok((id, st))
    }

    #[allow(clippy::type_complexity)]
    pub(super) fn event_block(
        &mut self,
        body: &[Entry],
        pos: Pos,
    ) -> Result<((EventT, bool), Option<u64>), TsdlError> {
        let mut ev = EventT {
            id: 0,
            name: String::new(),
            log_level: None,
            emf_uri: None,
            sc: None,
            payload: None,
        };
        let mut name = None;
        let mut id_set = false;
        let mut sid = None;
        self.block(body, |cx, lhs, assigned, pos| {
            match (lhs, assigned) {
                ("name", Assigned::Value(value)) if name.is_none() => {
                    name = Some(get_text(value, pos, "name")?);
                }
                ("id", Assigned::Value(value)) => {
                    let v = get_uint(value, pos, "id")?;
                    if v > i64::MAX as u64 {
                        return Err(err(pos, "event class ID too large"));
                    }
                    ev.id = v;
                    id_set = true;
                }
                ("stream_id", Assigned::Value(value)) => {
                    sid = Some(get_uint(value, pos, "stream_id")?)
                }
                ("loglevel", Assigned::Value(value)) => {
                    let v = get_uint(value, pos, "loglevel")?;
                    if v <= 14 {
                        ev.log_level = Some(v as i64);
                    }
                }
                ("model.emf.uri", Assigned::Value(value)) => {
                    let s = get_text(value, pos, "model.emf.uri")?;
                    if !s.is_empty() {
                        ev.emf_uri = Some(s);
                    }
                }
                ("context", Assigned::Type(spec, decl)) => {
                    ev.sc = Some(cx.scope_type(spec, decl, pos)?)
                }
                ("fields", Assigned::Type(spec, decl)) => {
                    ev.payload = Some(cx.scope_type(spec, decl, pos)?)
                }
                _ => {}
            }
            Ok(())
        })?;
        ev.name = name.ok_or_else(|| err(pos, "event without a `name`"))?;
        Ok(((ev, id_set), sid))
    }
}
