//! Unit tests of the CTF 2 frontend: every field class, location rules,
//! fragment rules, and the errors (with fragment, offset and JSON pointer).

use super::*;
use crate::ir::*;

/// A metadata stream of the given fragments.
fn meta(frags: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in frags {
        out.push(RS);
        out.extend_from_slice(f.as_bytes());
        out.push(b'\n');
    }
    out
}

const PRE: &str = r#"{"type": "preamble", "version": 2}"#;
const DSC: &str = r#"{"type": "data-stream-class"}"#;

fn u8le() -> &'static str {
    r#"{"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "little-endian"}"#
}

/// A metadata stream with one event record class whose payload has these
/// members (`"name": field-class` pairs in JSON).
fn payload(members: &[(&str, &str)]) -> Vec<u8> {
    let ms: Vec<String> = members
        .iter()
        .map(|(n, fc)| format!(r#"{{"name": "{n}", "field-class": {fc}}}"#))
        .collect();
    let erc = format!(
        r#"{{"type": "event-record-class", "payload-field-class": {{"type": "structure", "member-classes": [{}]}}}}"#,
        ms.join(", ")
    );
    meta(&[PRE, DSC, &erc])
}

fn ok(data: &[u8]) -> TraceClass {
    match parse(data) {
        Ok(tc) => tc,
        Err(e) => panic!("{e}"),
    }
}

/// The error of strict mode (what is forgiven by default included).
fn err(data: &[u8]) -> Ctf2Error {
    match parse_with(data, true).map(|p| p.tc) {
        Ok(tc) => panic!("parsed: {tc:#?}"),
        Err(e) => e,
    }
}

fn payload_of(tc: &TraceClass) -> &StructClass {
    tc.stream_classes[0].event_classes[0]
        .payload
        .as_ref()
        .unwrap()
}

fn member<'t>(tc: &'t TraceClass, name: &str) -> &'t FieldClass {
    &payload_of(tc).member(name).unwrap().class
}

/// Offset of the first occurrence of `needle` in `data`.
fn at(data: &[u8], needle: &str) -> usize {
    data.windows(needle.len())
        .position(|w| w == needle.as_bytes())
        .unwrap()
}

#[test]
fn minimal_stream() {
    let tc = ok(&meta(&[PRE]));
    assert_eq!(tc.version, CtfVersion::Ctf2);
    assert!(tc.stream_classes.is_empty());
    let tc = ok(&meta(&[PRE, DSC, r#"{"type": "event-record-class"}"#]));
    assert_eq!(tc.stream_classes[0].id, 0);
    assert_eq!(tc.stream_classes[0].event_classes[0].id, 0);
    assert_eq!(tc.stream_classes[0].event_classes[0].name, None);
}

#[test]
fn fixed_length_integers() {
    let tc = ok(&payload(&[
        ("a", u8le()),
        (
            "b",
            r#"{"type": "fixed-length-signed-integer", "length": 13, "byte-order": "big-endian",
               "alignment": 16, "preferred-display-base": 16, "unknown": [1, {"x": null}],
               "attributes": {"my.ns": {"anything": true}}}"#,
        ),
        (
            "c",
            r#"{"type": "fixed-length-unsigned-integer", "length": 64, "byte-order": "big-endian",
               "bit-order": "first-to-last", "mappings": {"z": [[1, 2], [5, 5]], "a": [[0, 0]]}}"#,
        ),
    ]));
    let FieldClass::Int(a) = member(&tc, "a") else {
        panic!()
    };
    assert_eq!(*a, {
        let mut i = IntClass::new(8, ByteOrder::Little, false);
        i.align = 1; // CTF 2 default alignment, whatever the length
        i
    });
    let FieldClass::Int(b) = member(&tc, "b") else {
        panic!()
    };
    assert!(b.signed);
    assert_eq!((b.len, b.align, b.byte_order), (13, 16, ByteOrder::Big));
    assert_eq!(b.bit_order, BitOrder::LastToFirst);
    assert_eq!(b.base, DisplayBase::Hexadecimal);
    let FieldClass::Int(c) = member(&tc, "c") else {
        panic!()
    };
    assert_eq!(c.bit_order, BitOrder::FirstToLast);
    // Mappings stay in metadata order.
    let names: Vec<&str> = c.mappings.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["z", "a"]);
    assert_eq!(
        c.mappings[0].ranges,
        [IntRange::new(1, 2), IntRange::new(5, 5)]
    );
}

#[test]
fn other_fixed_length_fields() {
    let tc = ok(&payload(&[
        (
            "ba",
            r#"{"type": "fixed-length-bit-array", "length": 3, "byte-order": "little-endian"}"#,
        ),
        (
            "bm",
            r#"{"type": "fixed-length-bit-map", "length": 8, "byte-order": "big-endian",
               "flags": {"one": [[0, 0]], "high": [[4, 7]]}}"#,
        ),
        (
            "b",
            r#"{"type": "fixed-length-boolean", "length": 8, "byte-order": "little-endian", "alignment": 8}"#,
        ),
        (
            "f",
            r#"{"type": "fixed-length-floating-point-number", "length": 64, "byte-order": "big-endian"}"#,
        ),
    ]));
    let FieldClass::BitArray(ba) = member(&tc, "ba") else {
        panic!()
    };
    assert_eq!((ba.len, ba.flags.is_none()), (3, true));
    let FieldClass::BitArray(bm) = member(&tc, "bm") else {
        panic!()
    };
    let flags = bm.flags.as_ref().unwrap();
    assert_eq!(flags[1].name, "high");
    assert_eq!(flags[1].ranges, [IntRange::new(4, 7)]);
    assert!(matches!(member(&tc, "b"), FieldClass::Bool(b) if b.align == 8 && b.len == 8));
    assert!(
        matches!(member(&tc, "f"), FieldClass::Float(f) if f.len == 64 && f.bit_order == BitOrder::LastToFirst)
    );
}

#[test]
fn variable_length_integers_strings_blobs() {
    let tc = ok(&payload(&[
        (
            "v",
            r#"{"type": "variable-length-unsigned-integer", "roles": ["packet-sequence-number"]}"#,
        ),
        (
            "s",
            r#"{"type": "variable-length-signed-integer", "preferred-display-base": 8,
               "mappings": {"neg": [[-9, -1]]}}"#,
        ),
        (
            "nt",
            r#"{"type": "null-terminated-string", "encoding": "utf-16le"}"#,
        ),
        (
            "sl",
            r#"{"type": "static-length-string", "length": 4, "encoding": "utf-32be"}"#,
        ),
        (
            "dl",
            r#"{"type": "dynamic-length-string", "length-field-location": {"path": ["v"]}}"#,
        ),
        (
            "sb",
            r#"{"type": "static-length-blob", "length": 16, "media-type": "image/png"}"#,
        ),
        (
            "db",
            r#"{"type": "dynamic-length-blob", "length-field-location": {"origin": "event-record-payload", "path": ["v"]}}"#,
        ),
    ]));
    assert_eq!(
        *member(&tc, "v"),
        FieldClass::VarInt(VarIntClass {
            signed: false,
            base: DisplayBase::Decimal,
            roles: Roles::PACKET_SEQUENCE_NUMBER,
            mappings: vec![],
        })
    );
    assert!(matches!(member(&tc, "s"), FieldClass::VarInt(v)
        if v.signed && v.base == DisplayBase::Octal && v.mappings[0].ranges[0] == IntRange::new(-9, -1)));
    assert_eq!(
        *member(&tc, "nt"),
        FieldClass::String(StringClass {
            kind: StringKind::NullTerminated,
            encoding: StringEncoding::Utf16Le
        })
    );
    assert_eq!(
        *member(&tc, "sl"),
        FieldClass::String(StringClass {
            kind: StringKind::Sized(Length::Static(4)),
            encoding: StringEncoding::Utf32Be
        })
    );
    let v_loc = FieldLocation::new(Scope::EventPayload, vec!["v".into()]);
    assert_eq!(
        *member(&tc, "dl"),
        FieldClass::String(StringClass {
            kind: StringKind::Sized(Length::Dynamic(v_loc.clone())),
            encoding: StringEncoding::Utf8
        })
    );
    assert!(matches!(member(&tc, "sb"), FieldClass::Blob(b)
        if b.length == Length::Static(16) && b.media_type == "image/png"));
    assert!(matches!(member(&tc, "db"), FieldClass::Blob(b)
        if b.length == Length::Dynamic(v_loc.clone()) && b.media_type == "application/octet-stream"));
}

#[test]
fn arrays_structures_optionals_variants() {
    let tc = ok(&payload(&[
        ("n", u8le()),
        (
            "sla",
            &format!(
                r#"{{"type": "static-length-array", "length": 3, "minimum-alignment": 32, "element-field-class": {}}}"#,
                u8le()
            ),
        ),
        (
            "dla",
            r#"{"type": "dynamic-length-array", "length-field-location": {"path": ["n"]},
               "element-field-class": {"type": "structure", "minimum-alignment": 64}}"#,
        ),
        (
            "sel",
            r#"{"type": "fixed-length-boolean", "length": 8, "byte-order": "little-endian"}"#,
        ),
        (
            "opt",
            r#"{"type": "optional", "selector-field-location": {"path": ["sel"]},
               "field-class": {"type": "null-terminated-string"}}"#,
        ),
        (
            "var",
            r#"{"type": "variant", "selector-field-location": {"path": ["n"]}, "options": [
                 {"name": "x", "selector-field-ranges": [[0, 3], [10, 10]], "field-class": {"type": "null-terminated-string"}},
                 {"selector-field-ranges": [[4, 9]], "field-class": {"type": "variable-length-unsigned-integer"}}]}"#,
        ),
        (
            "iopt",
            r#"{"type": "optional", "selector-field-location": {"path": ["n"]},
               "selector-field-ranges": [[1, 255]], "field-class": {"type": "null-terminated-string"}}"#,
        ),
    ]));
    let FieldClass::Array(sla) = member(&tc, "sla") else {
        panic!()
    };
    assert_eq!((sla.length.clone(), sla.min_align), (Length::Static(3), 32));
    let FieldClass::Array(dla) = member(&tc, "dla") else {
        panic!()
    };
    assert_eq!(
        dla.length,
        Length::Dynamic(FieldLocation::new(Scope::EventPayload, vec!["n".into()]))
    );
    assert!(
        matches!(&*dla.element, FieldClass::Struct(s) if s.min_align == 64 && s.members.is_empty())
    );
    let FieldClass::Optional(o) = member(&tc, "opt") else {
        panic!()
    };
    assert_eq!(o.selector_ranges, None);
    let FieldClass::Optional(o) = member(&tc, "iopt") else {
        panic!()
    };
    assert_eq!(o.selector_ranges, Some(vec![IntRange::new(1, 255)]));
    let FieldClass::Variant(v) = member(&tc, "var") else {
        panic!()
    };
    assert_eq!(v.options[0].name.as_deref(), Some("x"));
    assert_eq!(v.options[1].name, None);
    assert_eq!(v.options[1].ranges, [IntRange::new(4, 9)]);
}

#[test]
fn relative_locations() {
    // Inside a nested structure, in an array element, with parents (null).
    let tc = ok(&payload(&[
        ("len", u8le()),
        (
            "outer",
            &format!(
                r#"{{"type": "structure", "member-classes": [
                 {{"name": "n", "field-class": {u8}}},
                 {{"name": "arr", "field-class": {{"type": "static-length-array", "length": 2,
                   "element-field-class": {{"type": "structure", "member-classes": [
                     {{"name": "m", "field-class": {u8}}},
                     {{"name": "a", "field-class": {{"type": "dynamic-length-string", "length-field-location": {{"path": ["m"]}}}}}},
                     {{"name": "b", "field-class": {{"type": "dynamic-length-string", "length-field-location": {{"path": [null, "n"]}}}}}},
                     {{"name": "c", "field-class": {{"type": "dynamic-length-string", "length-field-location": {{"path": [null, null, "len"]}}}}}},
                     {{"name": "d", "field-class": {{"type": "dynamic-length-string", "length-field-location": {{"path": ["m", null, "m"]}}}}}}
                   ]}}}}}}
               ]}}"#,
                u8 = u8le()
            ),
        ),
    ]));
    let FieldClass::Struct(outer) = member(&tc, "outer") else {
        panic!()
    };
    let FieldClass::Array(arr) = &outer.member("arr").unwrap().class else {
        panic!()
    };
    let FieldClass::Struct(el) = &*arr.element else {
        panic!()
    };
    let loc = |name: &str| match &el.member(name).unwrap().class {
        FieldClass::String(StringClass {
            kind: StringKind::Sized(Length::Dynamic(l)),
            ..
        }) => l.path.clone(),
        _ => panic!(),
    };
    assert_eq!(loc("a"), ["outer", "arr", "m"]);
    assert_eq!(loc("b"), ["outer", "n"]);
    assert_eq!(loc("c"), ["len"]);
    assert_eq!(loc("d"), ["outer", "arr", "m"]);
}

#[test]
fn locations_through_variants_and_other_scopes() {
    // Spec example 91: the length is in a structure that a variant selects.
    let data = meta(&[
        PRE,
        r#"{"type": "data-stream-class", "event-record-common-context-field-class": {"type": "structure",
             "member-classes": [{"name": "sel", "field-class": {"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "little-endian"}}]}}"#,
        r#"{"type": "event-record-class", "payload-field-class": {"type": "structure", "member-classes": [
             {"name": "glass", "field-class": {"type": "variant",
                "selector-field-location": {"origin": "event-record-common-context", "path": ["sel"]},
                "options": [
                  {"selector-field-ranges": [[0, 0]], "field-class": {"type": "structure", "member-classes": [
                     {"name": "eagle", "field-class": {"type": "fixed-length-unsigned-integer", "length": 16, "byte-order": "little-endian"}}]}},
                  {"selector-field-ranges": [[5, 5]], "field-class": {"type": "structure", "member-classes": [
                     {"name": "eagle", "field-class": {"type": "variable-length-unsigned-integer"}},
                     {"name": "lock", "field-class": {"type": "dynamic-length-blob",
                        "length-field-location": {"origin": "event-record-payload", "path": ["glass", "eagle"]}}}]}}]}},
             {"name": "margin", "field-class": {"type": "dynamic-length-array",
                "length-field-location": {"origin": "event-record-payload", "path": ["glass", "eagle"]},
                "element-field-class": {"type": "null-terminated-string"}}}]}}"#,
    ]);
    let tc = ok(&data);
    let FieldClass::Variant(v) = member(&tc, "glass") else {
        panic!()
    };
    assert_eq!(
        v.selector,
        FieldLocation::new(Scope::EventCommonContext, vec!["sel".into()])
    );
}

#[test]
fn location_errors() {
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[(
                "s",
                r#"{"type": "dynamic-length-string", "length-field-location": {"path": ["nope"]}}"#,
            )],
            "no field at [\"nope\"]",
        ),
        (
            &[
                (
                    "s",
                    r#"{"type": "dynamic-length-string", "length-field-location": {"path": ["n"]}}"#,
                ),
                ("n", u8le()),
            ],
            "not decoded before",
        ),
        (
            &[
                (
                    "n",
                    r#"{"type": "fixed-length-signed-integer", "length": 8, "byte-order": "little-endian"}"#,
                ),
                (
                    "s",
                    r#"{"type": "dynamic-length-string", "length-field-location": {"path": ["n"]}}"#,
                ),
            ],
            "not an unsigned integer",
        ),
        (
            &[
                ("n", r#"{"type": "null-terminated-string"}"#),
                (
                    "v",
                    r#"{"type": "variant", "selector-field-location": {"path": ["n"]},
                          "options": [{"selector-field-ranges": [[0, 0]], "field-class": {"type": "null-terminated-string"}}]}"#,
                ),
            ],
            "is not an integer",
        ),
        (
            &[
                ("n", u8le()),
                (
                    "o",
                    r#"{"type": "optional", "selector-field-location": {"path": ["n"]}, "field-class": {"type": "null-terminated-string"}}"#,
                ),
            ],
            "selector-field-ranges missing",
        ),
        (
            &[
                (
                    "b",
                    r#"{"type": "fixed-length-boolean", "length": 1, "byte-order": "little-endian"}"#,
                ),
                (
                    "o",
                    r#"{"type": "optional", "selector-field-location": {"path": ["b"]},
                          "selector-field-ranges": [[1, 1]], "field-class": {"type": "null-terminated-string"}}"#,
                ),
            ],
            "boolean selector",
        ),
        (
            &[(
                "s",
                r#"{"type": "dynamic-length-string", "length-field-location": {"origin": "packet-context", "path": ["n"]}}"#,
            )],
            "does not exist here",
        ),
        (
            &[(
                "s",
                r#"{"type": "dynamic-length-string", "length-field-location": {"path": [null, "n"]}}"#,
            )],
            "above the root",
        ),
        (
            &[(
                "s",
                r#"{"type": "dynamic-length-string", "length-field-location": {"path": ["n", null]}}"#,
            )],
            "last element of a path",
        ),
        (
            &[(
                "s",
                r#"{"type": "dynamic-length-string", "length-field-location": {"path": []}}"#,
            )],
            "cannot be empty",
        ),
        (
            &[(
                "s",
                r#"{"type": "dynamic-length-string", "length-field-location": {"origin": "nowhere", "path": ["n"]}}"#,
            )],
            "unknown origin",
        ),
        (
            &[
                (
                    "a",
                    r#"{"type": "static-length-array", "length": 2, "element-field-class": {"type": "structure",
                          "member-classes": [{"name": "n", "field-class": {"type": "variable-length-unsigned-integer"}}]}}"#,
                ),
                (
                    "s",
                    r#"{"type": "dynamic-length-string", "length-field-location": {"path": ["a", "n"]}}"#,
                ),
            ],
            "enters the array",
        ),
    ];
    for (members, want) in cases {
        let data = payload(members);
        let e = err(&data);
        assert!(e.to_string().contains(want), "{e} (wanted {want:?})");
        assert_eq!(e.fragment, 3);
        // The offset is that of the location object (or a value inside it).
        let loc_at = at(&data, "-field-location");
        assert!(
            e.offset > loc_at,
            "{e}: offset {} before {loc_at}",
            e.offset
        );
    }
}

#[test]
fn later_scope_is_an_error() {
    let data = meta(&[
        PRE,
        r#"{"type": "data-stream-class", "packet-context-field-class": {"type": "structure", "member-classes": [
             {"name": "s", "field-class": {"type": "dynamic-length-string",
               "length-field-location": {"origin": "event-record-payload", "path": ["n"]}}}]}}"#,
    ]);
    let e = err(&data);
    assert!(e.to_string().contains("decoded after"), "{e}");
    assert_eq!(
        e.path,
        "/packet-context-field-class/member-classes/0/field-class/length-field-location"
    );
}

#[test]
fn variant_option_ranges_must_not_intersect() {
    let data = payload(&[
        ("n", u8le()),
        (
            "v",
            r#"{"type": "variant", "selector-field-location": {"path": ["n"]}, "options": [
                {"selector-field-ranges": [[0, 3], [20, 30]], "field-class": {"type": "null-terminated-string"}},
                {"selector-field-ranges": [[4, 9]], "field-class": {"type": "null-terminated-string"}},
                {"selector-field-ranges": [[10, 25]], "field-class": {"type": "null-terminated-string"}}]}"#,
        ),
    ]);
    let e = err(&data);
    assert!(e.msg.contains("options 0 and 2 intersect"), "{e}");
    // Overlapping ranges of one option are fine.
    ok(&payload(&[
        ("n", u8le()),
        (
            "v",
            r#"{"type": "variant", "selector-field-location": {"path": ["n"]}, "options": [
                {"selector-field-ranges": [[0, 3], [2, 8]], "field-class": {"type": "null-terminated-string"}}]}"#,
        ),
    ]));
}

#[test]
fn aliases() {
    let data = meta(&[
        PRE,
        &format!(
            r#"{{"type": "field-class-alias", "name": "u8", "field-class": {}}}"#,
            u8le()
        ),
        r#"{"type": "field-class-alias", "name": "byte", "field-class": "u8"}"#,
        // A relative location inside an alias resolves where it is used.
        r#"{"type": "field-class-alias", "name": "pstr", "field-class": {"type": "structure", "member-classes": [
             {"name": "len", "field-class": "byte"},
             {"name": "text", "field-class": {"type": "dynamic-length-string", "length-field-location": {"path": ["len"]}}}]}}"#,
        DSC,
        r#"{"type": "event-record-class", "payload-field-class": {"type": "structure", "member-classes": [
             {"name": "a", "field-class": "pstr"}, {"name": "b", "field-class": "pstr"}]}}"#,
    ]);
    let tc = ok(&data);
    for name in ["a", "b"] {
        let FieldClass::Struct(s) = member(&tc, name) else {
            panic!()
        };
        assert!(matches!(&s.members[0].class, FieldClass::Int(i) if i.len == 8));
        let FieldClass::String(StringClass {
            kind: StringKind::Sized(Length::Dynamic(l)),
            ..
        }) = &s.members[1].class
        else {
            panic!()
        };
        assert_eq!(l.path, [name, "len"]);
    }
}

#[test]
fn alias_errors() {
    // An alias may only use aliases defined before it.
    let data = meta(&[
        PRE,
        r#"{"type": "field-class-alias", "name": "a", "field-class": {"type": "structure", "member-classes": [
             {"name": "x", "field-class": "b"}]}}"#,
        &format!(
            r#"{{"type": "field-class-alias", "name": "b", "field-class": {}}}"#,
            u8le()
        ),
        DSC,
        r#"{"type": "event-record-class", "payload-field-class": "a"}"#,
    ]);
    let e = err(&data);
    assert!(e.msg.contains("no field class alias named `b`"), "{e}");
    assert_eq!(
        e.path,
        "/payload-field-class -> alias \"a\" /field-class/member-classes/0/field-class"
    );
    assert_eq!(e.offset, at(&data, "\"b\"}]"));
    assert_eq!(e.fragment, 5);
    // Unknown, duplicate, and a scope that is not a structure.
    let e = err(&meta(&[
        PRE,
        r#"{"type": "field-class-alias", "name": "a", "field-class": "zz"}"#,
    ]));
    assert!(e.msg.contains("`zz`"), "{e}");
    let e = err(&meta(&[
        PRE,
        r#"{"type": "field-class-alias", "name": "a", "field-class": {"type": "null-terminated-string"}}"#,
        r#"{"type": "field-class-alias", "name": "a", "field-class": {"type": "null-terminated-string"}}"#,
    ]));
    assert!(e.msg.contains("duplicate alias"), "{e}");
    let e = err(&meta(&[
        PRE,
        r#"{"type": "field-class-alias", "name": "a", "field-class": {"type": "null-terminated-string"}}"#,
        r#"{"type": "data-stream-class", "packet-context-field-class": "a"}"#,
    ]));
    assert!(e.msg.contains("must be a structure"), "{e}");
}

/// Metadata whose event record payload is alias `a{n-1}` of a chain of `n`
/// aliases: `a0` a `u8`, each next one a structure of `members` members of
/// the previous one.
fn alias_chain(n: usize, members: usize) -> Vec<u8> {
    let mut frags = vec![
        PRE.to_string(),
        format!(
            r#"{{"type": "field-class-alias", "name": "a0", "field-class": {}}}"#,
            u8le()
        ),
    ];
    for i in 1..n {
        let ms: Vec<String> = (0..members)
            .map(|j| format!(r#"{{"name": "m{j}", "field-class": "a{}"}}"#, i - 1))
            .collect();
        frags.push(format!(
            r#"{{"type": "field-class-alias", "name": "a{i}", "field-class": {{"type": "structure", "member-classes": [{}]}}}}"#,
            ms.join(",")
        ));
    }
    frags.push(DSC.into());
    frags.push(format!(
        r#"{{"type": "event-record-class", "payload-field-class": "a{}"}}"#,
        n - 1
    ));
    let refs: Vec<&str> = frags.iter().map(String::as_str).collect();
    meta(&refs)
}

#[test]
fn alias_expansion_is_bounded() {
    // Each alias holds 16 of the previous one: 16^40 fields if expanded.
    let e = err(&alias_chain(40, 16));
    assert!(e.unsupported);
    assert!(e.msg.contains("too many field classes"), "{e}");
}

#[test]
fn alias_nesting_is_bounded() {
    let e = err(&alias_chain(400, 1));
    assert!(e.msg.contains("nested deeper"), "{e}");
}

#[test]
fn trace_class_clocks_and_roles() {
    let data = meta(&[
        r#"{"type": "preamble", "version": 2, "uuid": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,255]}"#,
        r#"{"type": "trace-class", "name": "", "uid": "the-uid", "environment": {"hostname": "box", "vpid": 42, "domain": "ust"},
            "packet-header-field-class": {"type": "structure", "member-classes": [
              {"name": "magic", "field-class": {"type": "fixed-length-unsigned-integer", "length": 32, "byte-order": "big-endian",
                 "roles": ["packet-magic-number"]}},
              {"name": "uuid", "field-class": {"type": "static-length-blob", "length": 16, "roles": ["metadata-stream-uuid"]}},
              {"name": "sid", "field-class": {"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "big-endian",
                 "roles": ["data-stream-class-id", "some-future-role"]}},
              {"name": "dsid", "field-class": {"type": "variable-length-unsigned-integer", "roles": ["data-stream-id"]}}]}}"#,
        r#"{"type": "clock-class", "id": "c0", "frequency": 1000}"#,
        r#"{"type": "clock-class", "id": "mono", "name": "monotonic", "frequency": 1000000000, "precision": 3,
            "description": "Monotonic Clock", "origin": "unix-epoch", "uid": "00112233-4455-6677-8899-aabbccddeeff",
            "offset-from-origin": {"seconds": -5, "cycles": 7}, "accuracy": 9}"#,
        r#"{"type": "data-stream-class", "id": 3, "name": "ds", "default-clock-class-id": "mono",
            "packet-context-field-class": {"type": "structure", "member-classes": [
              {"name": "ts", "field-class": {"type": "fixed-length-unsigned-integer", "length": 64, "byte-order": "big-endian",
                 "roles": ["default-clock-timestamp"]}},
              {"name": "end", "field-class": {"type": "fixed-length-unsigned-integer", "length": 64, "byte-order": "big-endian",
                 "roles": ["packet-end-default-clock-timestamp"]}},
              {"name": "d", "field-class": {"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "big-endian",
                 "roles": ["discarded-event-record-counter-snapshot", "packet-sequence-number", "packet-total-length", "packet-content-length"]}}]},
            "event-record-header-field-class": {"type": "structure", "member-classes": [
              {"name": "id", "field-class": {"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "big-endian",
                 "roles": ["event-record-class-id"]}}]}}"#,
        r#"{"type": "event-record-class", "data-stream-class-id": 3, "id": 7, "name": "ev",
            "attributes": {"lttng.org,2009": {"log-level": "debug:line", "emf-uri": "http://x"}}}"#,
        r#"{"type": "event-record-class", "data-stream-class-id": 3, "id": 8,
            "attributes": {"babeltrace.org,2020": {"log-level": "warning"}, "lttng.org,2009": {"log-level": "info"}}}"#,
    ]);
    let tc = ok(&data);
    assert_eq!(tc.uuid.unwrap()[15], 255);
    assert_eq!(tc.name.as_deref(), Some("the-uid"));
    assert_eq!(tc.native_byte_order, ByteOrder::Big);
    assert_eq!(
        tc.environment,
        [
            ("hostname".to_string(), EnvValue::Str("box".into())),
            ("vpid".to_string(), EnvValue::Int(42)),
            ("domain".to_string(), EnvValue::Str("ust".into())),
        ]
    );
    let ph = tc.packet_header.as_ref().unwrap();
    let roles: Vec<Roles> = ph.members.iter().map(|m| m.class.roles()).collect();
    assert_eq!(
        roles,
        [
            Roles::PACKET_MAGIC,
            Roles::METADATA_STREAM_UUID,
            Roles::DATA_STREAM_CLASS_ID,
            Roles::DATA_STREAM_ID
        ]
    );
    assert_eq!(tc.clocks[0].name, "c0");
    assert_eq!(tc.clocks[0].frequency, 1000);
    assert!(!tc.clocks[0].origin_is_unix_epoch);
    let c = &tc.clocks[1];
    assert_eq!(c.name, "monotonic");
    assert_eq!((c.offset_seconds, c.offset_cycles), (-5, 7));
    assert_eq!(c.precision, Some(3));
    assert_eq!(c.description.as_deref(), Some("Monotonic Clock"));
    assert!(c.origin_is_unix_epoch);
    assert_eq!(c.uuid.unwrap()[1], 0x11);
    let sc = tc.stream_class(3).unwrap();
    assert_eq!(sc.name.as_deref(), Some("ds"));
    assert_eq!(sc.default_clock, Some(1));
    let pc = sc.packet_context.as_ref().unwrap();
    let FieldClass::Int(ts) = &pc.members[0].class else {
        panic!()
    };
    assert_eq!(
        (ts.roles, ts.mapped_clock),
        (Roles::DEFAULT_CLOCK_TIMESTAMP, Some(1))
    );
    let FieldClass::Int(end) = &pc.members[1].class else {
        panic!()
    };
    assert_eq!(
        (end.roles, end.mapped_clock),
        (Roles::PACKET_END_DEFAULT_CLOCK_TIMESTAMP, None)
    );
    assert_eq!(
        pc.members[2].class.roles(),
        Roles::DISCARDED_EVENT_COUNTER_SNAPSHOT
            | Roles::PACKET_SEQUENCE_NUMBER
            | Roles::PACKET_TOTAL_LENGTH
            | Roles::PACKET_CONTENT_LENGTH
    );
    let eh = sc.event_header.as_ref().unwrap();
    assert_eq!(eh.members[0].class.roles(), Roles::EVENT_CLASS_ID);
    let ev = sc.event_class(7).unwrap();
    assert_eq!(ev.name.as_deref(), Some("ev"));
    assert_eq!(ev.log_level, Some(13));
    assert_eq!(ev.emf_uri.as_deref(), Some("http://x"));
    // babeltrace2's namespace first.
    assert_eq!(sc.event_class(8).unwrap().log_level, Some(4));
}

#[test]
fn fragment_rules() {
    let e = err(&meta(&[DSC]));
    assert!(e.msg.contains("first fragment must be a preamble"), "{e}");
    let e = err(&meta(&[PRE, PRE]));
    assert!(e.msg.contains("second preamble"), "{e}");
    assert_eq!(e.fragment, 2);
    let e = err(&meta(&[PRE, DSC, r#"{"type": "trace-class"}"#]));
    assert!(e.msg.contains("before data stream classes"), "{e}");
    let e = err(&meta(&[
        PRE,
        r#"{"type": "trace-class"}"#,
        r#"{"type": "trace-class"}"#,
    ]));
    assert!(e.msg.contains("second trace class"), "{e}");
    let e = err(&meta(&[PRE, DSC, DSC]));
    assert!(e.msg.contains("duplicate data stream class ID 0"), "{e}");
    let e = err(&meta(&[PRE, r#"{"type": "event-record-class"}"#]));
    assert!(e.msg.contains("no data stream class with ID 0"), "{e}");
    let e = err(&meta(&[
        PRE,
        DSC,
        r#"{"type": "event-record-class", "id": 1}"#,
        r#"{"type": "event-record-class", "id": 1}"#,
    ]));
    assert!(e.msg.contains("duplicate event record class ID 1"), "{e}");
    let e = err(&meta(&[
        PRE,
        r#"{"type": "data-stream-class", "default-clock-class-id": "c"}"#,
    ]));
    assert!(e.msg.contains("no clock class `c`"), "{e}");
    let e = err(&meta(&[
        PRE,
        r#"{"type": "clock-class", "id": "c", "frequency": 1}"#,
        r#"{"type": "clock-class", "id": "c", "frequency": 1}"#,
    ]));
    assert!(e.msg.contains("duplicate clock class"), "{e}");
    let e = err(&meta(&[
        PRE,
        r#"{"type": "clock-class", "id": "c", "frequency": 0}"#,
    ]));
    assert!(e.msg.contains("greater than zero"), "{e}");
    let e = err(&meta(&[PRE, r#"{"type": "what"}"#]));
    assert!(e.msg.contains("unknown fragment type `what`"), "{e}");
    assert_eq!(e.path, "/type");
    let e = err(&meta(&[PRE, "[1]"]));
    assert!(e.msg.contains("expected an object"), "{e}");
    let e = err(&meta(&[r#"{"type": "preamble", "version": 3}"#]));
    assert!(e.unsupported && e.msg.contains("CTF version 3"), "{e}");
    let e = err(&meta(&[
        r#"{"type": "preamble", "version": 2, "uuid": [1, 2]}"#,
    ]));
    assert!(e.msg.contains("16 elements"), "{e}");
    let e = err(&meta(&[
        PRE,
        r#"{"type": "trace-class", "environment": {"k": [1]}}"#,
    ]));
    assert_eq!(e.path, "/environment/k");
    // Empty texts between separators are skipped; numbering counts them.
    let mut data = meta(&[PRE]);
    data.extend_from_slice(b"\x1e\n\x1e{\"type\": \"nope\"}");
    let e = err(&data);
    assert_eq!(e.fragment, 3);
}

#[test]
fn extensions() {
    let e = err(&meta(&[
        r#"{"type": "preamble", "version": 2, "extensions": {"my.ns": {"piano": {"keys": 88}}}}"#,
    ]));
    assert!(e.unsupported);
    assert!(
        e.msg.contains("requires extension `my.ns` / `piano`"),
        "{e}"
    );
    assert_eq!(e.path, "/extensions/my.ns/piano");
    // Declaring no extension is fine.
    ok(&meta(&[
        r#"{"type": "preamble", "version": 2, "extensions": {"my.ns": {}}}"#,
    ]));
    // An extension elsewhere cannot have been declared.
    let e = err(&payload(&[(
        "x",
        r#"{"type": "null-terminated-string", "extensions": {"ns": {"e": 1}}}"#,
    )]));
    assert!(e.msg.contains("not declared in the preamble"), "{e}");
    assert_eq!(
        e.path,
        "/payload-field-class/member-classes/0/field-class/extensions/ns/e"
    );
}

#[test]
fn field_class_errors_name_the_value() {
    let cases: &[(&str, &str, &str)] = &[
        (
            r#"{"type": "fixed-length-unsigned-integer", "length": 0, "byte-order": "little-endian"}"#,
            "greater than zero",
            "/length",
        ),
        (
            r#"{"type": "fixed-length-unsigned-integer", "length": 8}"#,
            "missing property `byte-order`",
            "",
        ),
        (
            r#"{"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "middle"}"#,
            "unknown byte order",
            "/byte-order",
        ),
        (
            r#"{"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "big-endian", "bit-order": "x"}"#,
            "unknown bit order",
            "/bit-order",
        ),
        (
            r#"{"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "big-endian", "alignment": 3}"#,
            "not a positive power of two",
            "/alignment",
        ),
        (
            r#"{"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "big-endian", "preferred-display-base": 7}"#,
            "display base 7",
            "/preferred-display-base",
        ),
        (
            r#"{"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "big-endian", "mappings": {"m": [[3, 1]]}}"#,
            "lower bound 3 > upper bound 1",
            "/mappings/m/0",
        ),
        (
            r#"{"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "big-endian", "mappings": {"m": []}}"#,
            "at least one range",
            "/mappings/m",
        ),
        (
            r#"{"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "big-endian", "mappings": {"m": [[1.5, 2]]}}"#,
            "expected an integer",
            "/mappings/m/0/0",
        ),
        (
            r#"{"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "big-endian", "roles": ["x", 3]}"#,
            "expected a string",
            "/roles/1",
        ),
        (
            r#"{"type": "fixed-length-bit-map", "length": 8, "byte-order": "big-endian"}"#,
            "missing property `flags`",
            "",
        ),
        (
            r#"{"type": "null-terminated-string", "encoding": "latin-1"}"#,
            "unknown encoding",
            "/encoding",
        ),
        (
            r#"{"type": "static-length-string", "length": -1}"#,
            "not in the range",
            "/length",
        ),
        (
            r#"{"type": "static-length-array", "length": 1}"#,
            "missing property `element-field-class`",
            "",
        ),
        (
            r#"{"type": "structure", "member-classes": [{"name": "a", "field-class": {"type": "null-terminated-string"}},
                {"name": "a", "field-class": {"type": "null-terminated-string"}}]}"#,
            "structure members with the same name",
            "/member-classes/1/name",
        ),
        (
            r#"{"type": "variant", "selector-field-location": {"path": ["x"]}, "options": []}"#,
            "at least one option",
            "/options",
        ),
        (
            r#"{"type": "blob"}"#,
            "unknown field class type `blob`",
            "/type",
        ),
        (r#"{"length": 3}"#, "missing property `type`", ""),
        (r#"7"#, "expected an object", ""),
    ];
    let base = "/payload-field-class/member-classes/0/field-class";
    for (fc, want, sub) in cases {
        let data = payload(&[("x", fc)]);
        let e = err(&data);
        assert!(e.msg.contains(want), "{fc}: {e} (wanted {want:?})");
        assert_eq!(e.path, format!("{base}{sub}"), "{fc}: {e}");
        assert!(!e.unsupported, "{e}");
    }
}

#[test]
fn unsupported_field_classes() {
    for fc in [
        r#"{"type": "fixed-length-unsigned-integer", "length": 65, "byte-order": "big-endian"}"#,
        r#"{"type": "fixed-length-boolean", "length": 128, "byte-order": "big-endian"}"#,
        r#"{"type": "fixed-length-floating-point-number", "length": 16, "byte-order": "big-endian"}"#,
        r#"{"type": "fixed-length-floating-point-number", "length": 128, "byte-order": "big-endian"}"#,
        r#"{"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "big-endian", "alignment": 4294967296}"#,
    ] {
        let e = err(&payload(&[("x", fc)]));
        assert!(e.unsupported, "{fc}: {e}");
    }
}

#[test]
fn json_syntax_errors_name_the_offset() {
    let data = meta(&[PRE, r#"{"type": "data-stream-class", "id": }"#]);
    let e = err(&data);
    assert_eq!(e.fragment, 2);
    assert_eq!(e.offset, at(&data, "\"id\": }") + 6);
    assert!(e.msg.starts_with("JSON syntax"), "{e}");
    let full = e.clone().into_error().to_string();
    assert!(
        full.starts_with("CTF 2 metadata, fragment 2: JSON syntax: expected a JSON value"),
        "{full}"
    );
    assert!(full.ends_with(&format!("in section 'metadata' at offset {:#x}", e.offset)));
}

#[test]
fn not_a_json_sequence() {
    assert!(is_ctf2(b"  \n\x1e{}"));
    assert!(!is_ctf2(b"/* CTF 1.8 */"));
    assert!(!is_ctf2(b""));
    let e = err(b"{\"type\": \"preamble\"}");
    assert!(
        e.msg.contains("not preceded by the record separator"),
        "{e}"
    );
    assert_eq!((e.fragment, e.offset), (1, 0));
    // Forgiven by default, then lowered.
    let e = parse(b"{\"type\": \"preamble\"}").unwrap_err();
    assert!(e.msg.contains("missing property `version`"), "{e}");
    let e = err(b"");
    assert!(e.msg.contains("no record separator"), "{e}");
    let e = err(b"/* CTF 1.8 */");
    assert!(e.msg.contains("no record separator"), "{e}");
    let e = err(b" x\x1e{}");
    assert_eq!(e.offset, 1);
    let e = err(b"\x1e \n");
    assert!(e.msg.contains("no fragment"), "{e}");
    let frags = fragments(b"\n\x1eab\x1e\x1ec").unwrap();
    let got: Vec<(usize, usize, &[u8])> =
        frags.iter().map(|f| (f.number, f.offset, f.text)).collect();
    assert_eq!(
        got,
        [(1, 2, &b"ab"[..]), (2, 5, &b""[..]), (3, 6, &b"c"[..])]
    );
}

/// A metadata stream using every kind of fragment and field class.
fn rich() -> Vec<u8> {
    let mut frags = vec![
        r#"{"type": "preamble", "version": 2, "uuid": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}"#.to_string(),
        format!(r#"{{"type": "field-class-alias", "name": "u8", "field-class": {}}}"#, u8le()),
        r#"{"type": "trace-class", "environment": {"a": 1},
            "packet-header-field-class": {"type": "structure", "member-classes": [
              {"name": "magic", "field-class": {"type": "fixed-length-unsigned-integer", "length": 32, "byte-order": "little-endian", "roles": ["packet-magic-number"]}}]}}"#.to_string(),
        r#"{"type": "clock-class", "id": "c", "frequency": 1000, "offset-from-origin": {"seconds": 1, "cycles": 2}}"#.to_string(),
        r#"{"type": "data-stream-class", "default-clock-class-id": "c",
            "packet-context-field-class": {"type": "structure", "member-classes": [{"name": "n", "field-class": "u8"}]}}"#.to_string(),
    ];
    frags.push(String::from_utf8(payload(&[
        ("n", "\"u8\""),
        ("b", r#"{"type": "fixed-length-boolean", "length": 1, "byte-order": "little-endian"}"#),
        ("f", r#"{"type": "fixed-length-floating-point-number", "length": 32, "byte-order": "little-endian"}"#),
        ("m", r#"{"type": "fixed-length-bit-map", "length": 7, "byte-order": "little-endian", "flags": {"x": [[1, 2]]}}"#),
        ("v", r#"{"type": "variable-length-signed-integer"}"#),
        ("s", r#"{"type": "dynamic-length-string", "length-field-location": {"origin": "packet-context", "path": ["n"]}}"#),
        ("o", r#"{"type": "optional", "selector-field-location": {"path": ["b"]}, "field-class": {"type": "static-length-blob", "length": 2}}"#),
        ("w", r#"{"type": "variant", "selector-field-location": {"path": ["v"]}, "options": [
            {"selector-field-ranges": [[-1, 1]], "field-class": {"type": "dynamic-length-array", "length-field-location": {"path": ["n"]}, "element-field-class": "u8"}}]}"#),
    ])).unwrap()
        .split('\x1e')
        .nth(3)
        .unwrap()
        .replace(r#""type": "event-record-class""#, r#""type": "event-record-class", "id": 1"#));
    let refs: Vec<&str> = frags.iter().map(|s| s.trim_end()).collect();
    meta(&refs)
}

#[test]
fn rich_metadata_parses() {
    let tc = ok(&rich());
    assert_eq!(tc.stream_classes[0].event_classes[0].id, 1);
    assert_eq!(payload_of(&tc).members.len(), 8);
}

/// What the writer writes reads back as the same trace class.
#[test]
fn written_metadata_reads_back() {
    let tc = ok(&rich());
    let json = write_metadata(&tc).unwrap();
    assert_eq!(ok(json.as_bytes()), tc);
    // A CTF 2 path through a variant whose option has the name of the next
    // element (CTF 2 never names options in paths).
    let tc = ok(&payload(&[
        ("n", u8le()),
        (
            "v",
            &format!(
                r#"{{"type": "variant", "selector-field-location": {{"path": ["n"]}}, "options": [
                {{"name": "len", "selector-field-ranges": [[0, 9]], "field-class": {{"type": "structure",
                  "member-classes": [{{"name": "len", "field-class": {u8}}}]}}}}]}}"#,
                u8 = u8le()
            ),
        ),
        (
            "s",
            r#"{"type": "dynamic-length-string", "length-field-location": {"path": ["v", "len"]}}"#,
        ),
    ]));
    let json = write_metadata(&tc).unwrap();
    assert!(json.contains(r#""path": ["v", "len"]"#), "{json}");
    assert_eq!(ok(json.as_bytes()), tc);
}

#[test]
fn too_deep_for_json_is_refused() {
    let tc = ok(&alias_chain(60, 1));
    let e = write_metadata(&tc).unwrap_err();
    assert!(e.to_string().contains("nested too deeply"), "{e}");
}

/// Every truncation and many corruptions of a valid metadata stream give
/// an error or a trace class, never a panic.
#[test]
fn truncated_and_corrupted_never_panic() {
    let data = rich();
    for n in 0..data.len() {
        let _ = parse(&data[..n]);
    }
    let mut x = 0x2545F4914F6CDD1Du64;
    for _ in 0..3000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut d = data.clone();
        let i = (x % d.len() as u64) as usize;
        d[i] = (x >> 32) as u8;
        let _ = parse(&d);
    }
}
