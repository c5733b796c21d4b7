//! Write a trace class as CTF 2 metadata (CTF2-SPEC-2.0 section 5): the
//! other direction of [`super::parse`], for `convert --to ctf2` and for
//! translating CTF 1.8 traces to CTF 2.
//!
//! The output is a JSON text sequence with one fragment per line: a
//! preamble, the trace class, the clock classes, then each data stream
//! class followed by its event record classes. What CTF 2 spells
//! differently from the IR:
//!
//! * a CTF 1.8 `uuid` packet header array of 16 bytes becomes a
//!   16-byte static-length BLOB with the `metadata-stream-uuid` role;
//! * field locations get an `origin` and lose the variant option names a
//!   CTF 1.8 path may contain (CTF 2 enters variants implicitly);
//! * variant options that no selector value can choose (a CTF 1.8 option
//!   without an enumeration mapping) are left out;
//! * the IR's packet-beginning role, the `text` flag of lone integers and
//!   clock mappings other than the data stream class's default clock have
//!   no CTF 2 form and are dropped;
//! * an event record class's log level and EMF URI become LTTng
//!   attributes (`lttng.org,2009`), as LTTng writes them.
//!
//! It fails (unsupported) on a trace class that CTF 2 cannot express: a
//! variant no option of which can be selected, a CTF 1.8 path where one
//! name designates both a variant option and a member, field classes
//! nested too deeply for a JSON text of [`super::json::MAX_DEPTH`] levels.

use std::fmt::Write as _;

use tracemux_core::{Error, ErrorKind};

use crate::ir::*;

fn unsupported(msg: String) -> Error {
    Error::new(ErrorKind::Unsupported(msg), "metadata", 0)
}

/// A JSON string literal.
fn js(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_quoted(&mut out, s, |out, c| {
        let _ = write!(out, "\\u{c:04x}");
    });
    out
}

fn range_set(ranges: &[IntRange]) -> String {
    let items: Vec<String> = ranges
        .iter()
        .map(|r| format!("[{}, {}]", r.lower, r.upper))
        .collect();
    format!("[{}]", items.join(", "))
}

fn mappings(ms: &[Mapping]) -> String {
    let items: Vec<String> = ms
        .iter()
        .filter(|m| !m.ranges.is_empty())
        .map(|m| format!("{}: {}", js(&m.name), range_set(&m.ranges)))
        .collect();
    format!("{{{}}}", items.join(", "))
}

fn roles(r: Roles) -> Option<String> {
    const NAMES: [(Roles, &str); 11] = [
        (Roles::PACKET_MAGIC, "packet-magic-number"),
        (Roles::METADATA_STREAM_UUID, "metadata-stream-uuid"),
        (Roles::DATA_STREAM_CLASS_ID, "data-stream-class-id"),
        (Roles::DATA_STREAM_ID, "data-stream-id"),
        (Roles::PACKET_TOTAL_LENGTH, "packet-total-length"),
        (Roles::PACKET_CONTENT_LENGTH, "packet-content-length"),
        (Roles::DEFAULT_CLOCK_TIMESTAMP, "default-clock-timestamp"),
        (
            Roles::PACKET_END_DEFAULT_CLOCK_TIMESTAMP,
            "packet-end-default-clock-timestamp",
        ),
        (
            Roles::DISCARDED_EVENT_COUNTER_SNAPSHOT,
            "discarded-event-record-counter-snapshot",
        ),
        (Roles::PACKET_SEQUENCE_NUMBER, "packet-sequence-number"),
        (Roles::EVENT_CLASS_ID, "event-record-class-id"),
    ];
    let names: Vec<String> = NAMES
        .iter()
        .filter(|(bit, _)| r.has(*bit))
        .map(|(_, n)| js(n))
        .collect();
    (!names.is_empty()).then(|| format!("[{}]", names.join(", ")))
}

fn byte_order(bo: ByteOrder) -> &'static str {
    match bo {
        ByteOrder::Little => "little-endian",
        ByteOrder::Big => "big-endian",
    }
}

/// `"type": ..., "length": ..., "byte-order": ...` and the optional
/// `bit-order` and `alignment` of a fixed-length field class.
fn fixed(ty: &str, len: u32, align: u32, bo: ByteOrder, bit: BitOrder) -> String {
    let mut s = format!(
        "\"type\": {}, \"length\": {len}, \"byte-order\": \"{}\"",
        js(ty),
        byte_order(bo)
    );
    if bit != BitOrder::default_for(bo) {
        s.push_str(match bit {
            BitOrder::FirstToLast => ", \"bit-order\": \"first-to-last\"",
            BitOrder::LastToFirst => ", \"bit-order\": \"last-to-first\"",
        });
    }
    if align != 1 {
        let _ = write!(s, ", \"alignment\": {align}");
    }
    s
}

fn base(b: DisplayBase) -> String {
    match b {
        DisplayBase::Decimal => String::new(),
        b => format!(", \"preferred-display-base\": {}", b as u32),
    }
}

fn encoding(e: StringEncoding) -> &'static str {
    match e {
        StringEncoding::Utf8 => "",
        StringEncoding::Utf16Be => ", \"encoding\": \"utf-16be\"",
        StringEncoding::Utf16Le => ", \"encoding\": \"utf-16le\"",
        StringEncoding::Utf32Be => ", \"encoding\": \"utf-32be\"",
        StringEncoding::Utf32Le => ", \"encoding\": \"utf-32le\"",
    }
}

fn origin(s: Scope) -> &'static str {
    match s {
        Scope::PacketHeader => "packet-header",
        Scope::PacketContext => "packet-context",
        Scope::EventHeader => "event-record-header",
        Scope::EventCommonContext => "event-record-common-context",
        Scope::EventSpecificContext => "event-record-specific-context",
        Scope::EventPayload => "event-record-payload",
    }
}

/// A CTF 1.8 `uuid` array that CTF 2 writes as a BLOB: 16 byte-aligned
/// 8-bit integers.
fn uuid_array(a: &ArrayClass) -> bool {
    a.roles.has(Roles::METADATA_STREAM_UUID)
        && a.length == Length::Static(16)
        && matches!(&*a.element, FieldClass::Int(i) if i.len == 8 && i.align % 8 == 0)
}

/// Writes field classes; knows the root structures of the scopes that
/// field locations may refer to.
struct W<'t> {
    /// The trace class came from TSDL: its paths may name variant options.
    ctf1: bool,
    roots: [Option<&'t StructClass>; 6],
    /// Default clock of the data stream class (the only clock CTF 2 maps).
    clock: Option<usize>,
}

impl W<'_> {
    /// The CTF 2 path of an IR location: the member names only (a CTF 1.8
    /// path may go through a variant option by its name).
    fn path(&self, loc: &FieldLocation) -> Result<Vec<String>, Error> {
        if !self.ctf1 {
            return Ok(loc.path.clone());
        }
        let Some(root) = self.roots[loc.scope as usize] else {
            return Err(unsupported(format!(
                "field location in the missing {} scope",
                loc.scope.tsdl_name()
            )));
        };
        let mut out = Vec::new();
        let mut cur: Vec<&FieldClass> = Vec::new();
        let mut structs: Vec<&StructClass> = vec![root];
        for name in &loc.path {
            // Enter arrays and optionals; note variants with an option of
            // this name (the CTF 1.8 way of naming the option).
            let mut by_option = Vec::new();
            let mut stack = std::mem::take(&mut cur);
            while let Some(f) = stack.pop() {
                match f {
                    FieldClass::Array(a) => stack.push(&a.element),
                    FieldClass::Optional(o) => stack.push(&o.class),
                    FieldClass::Variant(v) => {
                        match v.options.iter().find(|o| o.name.as_deref() == Some(name)) {
                            Some(o) => by_option.push(&o.class),
                            None => stack.extend(v.options.iter().map(|o| &o.class)),
                        }
                    }
                    FieldClass::Struct(s) => structs.push(s),
                    _ => {}
                }
            }
            if !by_option.is_empty() {
                if !structs.is_empty() {
                    return Err(unsupported(format!(
                        "field location {:?}: `{name}` names both a variant option and a member",
                        loc.path
                    )));
                }
                cur = by_option;
                continue;
            }
            out.push(name.clone());
            cur = structs
                .drain(..)
                .filter_map(|s| s.member(name).map(|m| &m.class))
                .collect();
        }
        Ok(out)
    }

    fn location(&self, key: &str, loc: &FieldLocation) -> Result<String, Error> {
        let path: Vec<String> = self.path(loc)?.iter().map(|n| js(n)).collect();
        Ok(format!(
            "\"{key}\": {{\"origin\": \"{}\", \"path\": [{}]}}",
            origin(loc.scope),
            path.join(", ")
        ))
    }

    fn length(&self, ty: &str, len: &Length) -> Result<String, Error> {
        Ok(match len {
            Length::Static(n) => format!("\"type\": \"static-length-{ty}\", \"length\": {n}"),
            Length::Dynamic(l) => format!(
                "\"type\": \"dynamic-length-{ty}\", {}",
                self.location("length-field-location", l)?
            ),
        })
    }

    fn fc(&self, f: &FieldClass) -> Result<String, Error> {
        let body = match f {
            FieldClass::Int(i) => {
                let ty = if i.signed {
                    "fixed-length-signed-integer"
                } else {
                    "fixed-length-unsigned-integer"
                };
                let mut s = fixed(ty, i.len, i.align, i.byte_order, i.bit_order);
                s.push_str(&base(i.base));
                if !i.mappings.is_empty() {
                    let _ = write!(s, ", \"mappings\": {}", mappings(&i.mappings));
                }
                let mut r = i.roles;
                r.0 &= !Roles::PACKET_BEGIN_DEFAULT_CLOCK_TIMESTAMP.0;
                if i.mapped_clock.is_some() && i.mapped_clock != self.clock {
                    r.0 &= !Roles::DEFAULT_CLOCK_TIMESTAMP.0;
                }
                if let Some(r) = roles(r) {
                    let _ = write!(s, ", \"roles\": {r}");
                }
                s
            }
            FieldClass::Float(x) => fixed(
                "fixed-length-floating-point-number",
                x.len,
                x.align,
                x.byte_order,
                x.bit_order,
            ),
            FieldClass::Bool(b) => fixed(
                "fixed-length-boolean",
                b.len,
                b.align,
                b.byte_order,
                b.bit_order,
            ),
            FieldClass::BitArray(b) => match &b.flags {
                None => fixed(
                    "fixed-length-bit-array",
                    b.len,
                    b.align,
                    b.byte_order,
                    b.bit_order,
                ),
                Some(flags) => format!(
                    "{}, \"flags\": {}",
                    fixed(
                        "fixed-length-bit-map",
                        b.len,
                        b.align,
                        b.byte_order,
                        b.bit_order
                    ),
                    mappings(flags)
                ),
            },
            FieldClass::VarInt(v) => {
                let mut s = format!(
                    "\"type\": \"variable-length-{}-integer\"{}",
                    if v.signed { "signed" } else { "unsigned" },
                    base(v.base)
                );
                if !v.mappings.is_empty() {
                    let _ = write!(s, ", \"mappings\": {}", mappings(&v.mappings));
                }
                if let Some(r) = roles(v.roles) {
                    let _ = write!(s, ", \"roles\": {r}");
                }
                s
            }
            FieldClass::String(st) => {
                let kind = match &st.kind {
                    StringKind::NullTerminated => "\"type\": \"null-terminated-string\"".into(),
                    StringKind::Sized(l) => self.length("string", l)?,
                };
                format!("{kind}{}", encoding(st.encoding))
            }
            FieldClass::Blob(b) => {
                let mut s = self.length("blob", &b.length)?;
                if b.media_type != "application/octet-stream" {
                    let _ = write!(s, ", \"media-type\": {}", js(&b.media_type));
                }
                if let Some(r) = roles(b.roles) {
                    let _ = write!(s, ", \"roles\": {r}");
                }
                s
            }
            FieldClass::Array(a) if uuid_array(a) => {
                "\"type\": \"static-length-blob\", \"length\": 16, \"roles\": [\"metadata-stream-uuid\"]"
                    .to_string()
            }
            FieldClass::Array(a) => {
                let mut s = self.length("array", &a.length)?;
                if a.min_align != 1 {
                    let _ = write!(s, ", \"minimum-alignment\": {}", a.min_align);
                }
                let _ = write!(s, ", \"element-field-class\": {}", self.fc(&a.element)?);
                s
            }
            FieldClass::Struct(st) => return self.structure(st),
            FieldClass::Variant(v) => {
                let mut opts = Vec::new();
                for o in v.options.iter().filter(|o| !o.ranges.is_empty()) {
                    let mut s = String::from("{");
                    if let Some(n) = &o.name {
                        let _ = write!(s, "\"name\": {}, ", js(n));
                    }
                    let _ = write!(
                        s,
                        "\"selector-field-ranges\": {}, \"field-class\": {}}}",
                        range_set(&o.ranges),
                        self.fc(&o.class)?
                    );
                    opts.push(s);
                }
                if opts.is_empty() {
                    return Err(unsupported(
                        "a variant none of whose options can be selected".into(),
                    ));
                }
                format!(
                    "\"type\": \"variant\", {}, \"options\": [{}]",
                    self.location("selector-field-location", &v.selector)?,
                    opts.join(", ")
                )
            }
            FieldClass::Optional(o) => {
                let mut s = format!(
                    "\"type\": \"optional\", {}",
                    self.location("selector-field-location", &o.selector)?
                );
                if let Some(r) = &o.selector_ranges {
                    let _ = write!(s, ", \"selector-field-ranges\": {}", range_set(r));
                }
                let _ = write!(s, ", \"field-class\": {}", self.fc(&o.class)?);
                s
            }
        };
        Ok(format!("{{{body}}}"))
    }

    fn structure(&self, st: &StructClass) -> Result<String, Error> {
        let mut members = Vec::with_capacity(st.members.len());
        for m in &st.members {
            members.push(format!(
                "{{\"name\": {}, \"field-class\": {}}}",
                js(&m.name),
                self.fc(&m.class)?
            ));
        }
        let mut s = String::from("{\"type\": \"structure\"");
        if st.min_align != 1 {
            let _ = write!(s, ", \"minimum-alignment\": {}", st.min_align);
        }
        let _ = write!(s, ", \"member-classes\": [{}]}}", members.join(", "));
        Ok(s)
    }

    /// `, "KEY": STRUCT` when the scope exists.
    fn scope(&self, key: &str, s: Option<&StructClass>) -> Result<String, Error> {
        Ok(match s {
            Some(s) => format!(", \"{key}\": {}", self.structure(s)?),
            None => String::new(),
        })
    }
}

/// Nesting depth of a JSON text (brackets outside strings).
fn json_depth(json: &str) -> usize {
    let (mut depth, mut max, mut in_str, mut esc) = (0usize, 0usize, false, false);
    for b in json.bytes() {
        if in_str {
            match b {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Append one fragment (record separator, JSON text, line feed). A text
/// nested deeper than JSON readers accept is refused.
fn fragment(out: &mut String, json: &str) -> Result<(), Error> {
    if json_depth(json) > super::json::MAX_DEPTH {
        return Err(unsupported(format!(
            "field classes nested too deeply for a JSON text of at most {} levels",
            super::json::MAX_DEPTH
        )));
    }
    out.push('\u{1e}');
    out.push_str(json);
    out.push('\n');
    Ok(())
}

/// The IDs of the clock classes (their names, made unique).
fn clock_ids(tc: &TraceClass) -> Vec<String> {
    let mut ids: Vec<String> = Vec::with_capacity(tc.clocks.len());
    for (i, c) in tc.clocks.iter().enumerate() {
        let id = if ids.contains(&c.name) {
            format!("{}#{i}", c.name)
        } else {
            c.name.clone()
        };
        ids.push(id);
    }
    ids
}

/// The CTF 2 metadata stream of a trace class. Fails (unsupported) when
/// the trace class uses something CTF 2 cannot express (see the module
/// documentation).
pub fn write_metadata(tc: &TraceClass) -> Result<String, Error> {
    let mut out = String::new();
    let mut pre = String::from("{\"type\": \"preamble\", \"version\": 2");
    if let Some(u) = &tc.uuid {
        let bytes: Vec<String> = u.iter().map(u8::to_string).collect();
        let _ = write!(pre, ", \"uuid\": [{}]", bytes.join(", "));
    }
    pre.push('}');
    fragment(&mut out, &pre)?;

    let mut t = String::from("{\"type\": \"trace-class\"");
    if let Some(n) = &tc.name {
        let _ = write!(t, ", \"name\": {}", js(n));
    }
    if !tc.environment.is_empty() {
        let env: Vec<String> = tc
            .environment
            .iter()
            .map(|(k, v)| match v {
                EnvValue::Int(i) => format!("{}: {i}", js(k)),
                EnvValue::Str(s) => format!("{}: {}", js(k), js(s)),
            })
            .collect();
        let _ = write!(t, ", \"environment\": {{{}}}", env.join(", "));
    }
    let ph = tc.packet_header.as_ref();
    let ctf1 = tc.version == CtfVersion::Ctf1;
    let w = W {
        ctf1,
        roots: [ph, None, None, None, None, None],
        clock: None,
    };
    t.push_str(&w.scope("packet-header-field-class", ph)?);
    t.push('}');
    fragment(&mut out, &t)?;

    let ids = clock_ids(tc);
    for (c, id) in tc.clocks.iter().zip(&ids) {
        let mut s = format!(
            "{{\"type\": \"clock-class\", \"id\": {}, \"name\": {}, \"frequency\": {}",
            js(id),
            js(&c.name),
            c.frequency
        );
        if let Some(d) = &c.description {
            let _ = write!(s, ", \"description\": {}", js(d));
        }
        if let Some(p) = c.precision {
            let _ = write!(s, ", \"precision\": {p}");
        }
        if c.origin_is_unix_epoch {
            s.push_str(", \"origin\": \"unix-epoch\"");
        }
        if c.offset_seconds != 0 || c.offset_cycles != 0 {
            let _ = write!(
                s,
                ", \"offset-from-origin\": {{\"seconds\": {}, \"cycles\": {}}}",
                c.offset_seconds, c.offset_cycles
            );
        }
        if let Some(u) = &c.uuid {
            let _ = write!(s, ", \"uid\": \"{}\"", uuid_string(u));
        }
        s.push('}');
        fragment(&mut out, &s)?;
    }

    for sc in &tc.stream_classes {
        let mut w = W {
            ctf1,
            roots: sc.scope_roots(ph),
            clock: sc.default_clock,
        };
        let mut s = format!("{{\"type\": \"data-stream-class\", \"id\": {}", sc.id);
        if let Some(n) = &sc.name {
            let _ = write!(s, ", \"name\": {}", js(n));
        }
        if let Some(c) = sc.default_clock {
            let id = ids
                .get(c)
                .ok_or_else(|| unsupported(format!("default clock {c} does not exist")))?;
            let _ = write!(s, ", \"default-clock-class-id\": {}", js(id));
        }
        s.push_str(&w.scope("packet-context-field-class", w.roots[1])?);
        s.push_str(&w.scope("event-record-header-field-class", w.roots[2])?);
        s.push_str(&w.scope("event-record-common-context-field-class", w.roots[3])?);
        s.push('}');
        fragment(&mut out, &s)?;
        for ec in &sc.event_classes {
            w.roots[4] = ec.specific_context.as_ref();
            w.roots[5] = ec.payload.as_ref();
            let mut s = format!(
                "{{\"type\": \"event-record-class\", \"id\": {}, \"data-stream-class-id\": {}",
                ec.id, sc.id
            );
            if let Some(n) = &ec.name {
                let _ = write!(s, ", \"name\": {}", js(n));
            }
            let mut attrs = Vec::new();
            if let Some(l) = ec.log_level {
                match usize::try_from(l).ok().and_then(|i| LOG_LEVELS.get(i)) {
                    Some(name) => attrs.push(format!("\"log-level\": {}", js(name))),
                    None => attrs.push(format!("\"log-level\": {l}")),
                }
            }
            if let Some(u) = &ec.emf_uri {
                attrs.push(format!("\"emf-uri\": {}", js(u)));
            }
            if !attrs.is_empty() {
                let _ = write!(
                    s,
                    ", \"attributes\": {{\"lttng.org,2009\": {{{}}}}}",
                    attrs.join(", ")
                );
            }
            s.push_str(&w.scope("specific-context-field-class", w.roots[4])?);
            s.push_str(&w.scope("payload-field-class", w.roots[5])?);
            s.push('}');
            fragment(&mut out, &s)?;
        }
    }
    Ok(out)
}

/// Append `s` as a double-quoted literal of the metadata (TSDL or CTF 2
/// JSON): `"`, `\`, newline, tab and carriage return as C escapes, other
/// control characters written by `control`.
pub(crate) fn push_quoted(out: &mut String, s: &str, control: fn(&mut String, u32)) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => control(out, c as u32),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped() {
        assert_eq!(
            js("a\"b\\c\n\u{1}\u{1e}é"),
            "\"a\\\"b\\\\c\\n\\u0001\\u001eé\""
        );
    }

    #[test]
    fn json_depths() {
        assert_eq!(json_depth(r#"{"a": [1, {"b": "[[[{"}], "c": "\"["}"#), 3);
        assert_eq!(json_depth("1"), 0);
    }

    #[test]
    fn uuid_strings() {
        let u = [
            0x4d, 0x86, 0xe0, 0x2c, 0xf5, 0x27, 0x49, 0x71, 0xb9, 0x60, 0x97, 0x1d, 0x26, 0x07,
            0x4b, 0xd4,
        ];
        assert_eq!(uuid_string(&u), "4d86e02c-f527-4971-b960-971d26074bd4");
    }
}
