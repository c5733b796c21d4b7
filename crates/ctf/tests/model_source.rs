//! CTF traces as a source of the common event model
//! (`tracemux_ctf::source::CtfSource`): the same events as the decode-only
//! counts, in the order and with the timestamps of the babeltrace2 text
//! output, with the values babeltrace2 printed on the tape, for every
//! fixture trace and its CTF 2 translation.

mod common;

use std::path::{Path, PathBuf};

use common::{ctf2_copy, fixtures, traces};

use tracemux_core::layout::FieldRef;
use tracemux_core::model::{Base, Record, RecordSource, Value};
use tracemux_core::typed::{FieldType, FieldVisitor, Scope};
use tracemux_ctf::fs::ReadLoader;
use tracemux_ctf::source::{open, CtfSource};
use tracemux_ctf::text::{report, Fields, TextOptions};

/// Every input: the fixtures, then their CTF 2 translations.
fn inputs() -> Vec<(String, PathBuf)> {
    let scratch = std::env::temp_dir().join(format!("tracemux-ctf-model-{}", std::process::id()));
    let mut v = Vec::new();
    for t in traces() {
        let tag = t.file_name().unwrap().to_string_lossy().into_owned();
        v.push((tag.clone(), t.join("trace")));
        v.push((format!("{tag} (CTF 2)"), ctf2_copy(&t, &scratch.join(&tag))));
    }
    v
}

/// (ts, full name, cpu, pid) of every event, and the number of losses.
fn model_events(trace: &Path) -> (Vec<(u64, String, u32, i32)>, u64) {
    let loader = ReadLoader;
    let traces = open(&[trace.to_path_buf()], &loader).unwrap();
    let mut src = CtfSource::new(&traces, &loader, false).unwrap();
    let mut evs = Vec::new();
    let mut lost = 0;
    while let Some(r) = src.next_record().unwrap() {
        match r {
            Record::Event(e) => {
                let c = e.class.expect("every event has its class");
                let full = if c.system.is_empty() {
                    c.name.clone()
                } else {
                    format!("{}:{}", c.system, c.name)
                };
                assert!(e.tape.is_some_and(|t| !t.is_empty()));
                assert!(!e.data.is_empty());
                evs.push((e.ts, full, e.cpu, e.pid));
            }
            Record::Lost(_) => lost += 1,
            Record::Damage(_) => {}
        }
    }
    (evs, lost)
}

/// (ts, name) of every line of the text output (seconds, no delta, no
/// header fields).
fn text_events(trace: &Path) -> Vec<(u64, String)> {
    let opts = TextOptions {
        clock_seconds: true,
        no_delta: true,
        fields: Fields {
            trace: false,
            hostname: false,
            domain: false,
            procname: false,
            vpid: false,
            loglevel: false,
            emf: false,
            callsite: false,
        },
        timezone: Some("UTC".into()),
        ..TextOptions::default()
    };
    let (mut out, mut warn) = (Vec::new(), Vec::new());
    report(&[trace.to_path_buf()], &opts, &mut out, &mut warn).unwrap();
    String::from_utf8_lossy(&out)
        .lines()
        .map(|l| {
            let (ts, rest) = match l.strip_prefix('[') {
                Some(r) => {
                    let (t, rest) = r.split_once("] ").unwrap();
                    let (s, ns) = t.split_once('.').unwrap();
                    let ns = s.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap();
                    (ns, rest)
                }
                None => (0, l),
            };
            (ts, rest.split_once(": ").unwrap().0.to_string())
        })
        .collect()
}

#[test]
fn same_events_as_counts_and_text_order() {
    let mut checked = 0;
    for (tag, trace) in inputs() {
        let (evs, lost) = model_events(&trace);
        let counts = tracemux_ctf::stats::count(std::slice::from_ref(&trace), false).unwrap();
        assert_eq!(evs.len() as u64, counts.events, "{tag}: event count");
        let notices: u64 = counts
            .streams
            .iter()
            .map(|s| s.discarded_events + s.discarded_events_unknown + s.discarded_packets)
            .sum();
        assert_eq!(lost > 0, notices > 0, "{tag}: losses");
        let text = text_events(&trace);
        assert_eq!(evs.len(), text.len(), "{tag}: text lines");
        for (i, ((ts, name, _, _), (tts, tname))) in evs.iter().zip(&text).enumerate() {
            assert_eq!((ts, name), (tts, tname), "{tag}: event {i}");
        }
        checked += 1;
    }
    assert_eq!(checked, 16);
}

/// Flattens a visit into `scope/path=value` lines.
#[derive(Default)]
struct Flat {
    path: Vec<String>,
    scope: String,
    lines: Vec<String>,
    /// Balance of begin/end calls.
    depth: i32,
}

impl Flat {
    fn push(&mut self, name: &str, v: String) {
        let mut p = self.path.join(".");
        if !name.is_empty() {
            if !p.is_empty() {
                p.push('.');
            }
            p.push_str(name);
        }
        self.lines.push(format!("{}/{}={}", self.scope, p, v));
    }
    fn has(&self, l: &str) -> bool {
        self.lines.iter().any(|x| x == l)
    }
}

impl Flat {
    /// Into a compound: `seg` on the path, one level deeper.
    fn enter(&mut self, seg: String) {
        self.path.push(seg);
        self.depth += 1;
    }
}

/// The ends of compounds: back out of what `enter` went into.
macro_rules! leave_on {
    ($($end:ident),*) => {$(
        fn $end(&mut self) {
            self.path.pop();
            self.depth -= 1;
        }
    )*};
}

impl FieldVisitor for Flat {
    fn field(&mut self, f_: FieldRef<'_>, base: Base, value: Value<'_>) {
        let name = f_.name();
        let v = match value {
            Value::Unsigned(x) if base == Base::Hex => format!("{x:#x}"),
            Value::Unsigned(x) => x.to_string(),
            Value::Signed(x) => x.to_string(),
            Value::Float(x) => x.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Str(s) => format!("{:?}", String::from_utf8_lossy(s)),
            Value::Bytes(b) => format!("{b:?}"),
            Value::IntArray { data, .. } => format!("{data:?}"),
        };
        self.push(name, v);
    }
    fn enum_field(&mut self, f_: FieldRef<'_>, value: Value<'_>, labels: &[&str]) {
        let name = f_.name();
        let v = match value {
            Value::Unsigned(x) => x.to_string(),
            Value::Signed(x) => x.to_string(),
            _ => "?".into(),
        };
        self.push(name, format!("{v}{labels:?}"));
    }
    fn scope_begin(&mut self, s: Scope) {
        self.scope = s.name().to_string();
        self.depth += 1;
    }
    fn scope_end(&mut self, _s: Scope) {
        self.depth -= 1;
    }
    fn struct_begin(&mut self, f_: FieldRef<'_>) {
        let name = f_.name();
        self.enter(name.to_string());
    }
    fn array_begin(&mut self, f_: FieldRef<'_>, len: u64) {
        let name = f_.name();
        self.enter(format!("{name}[{len}]"));
    }
    fn variant_begin(&mut self, f_: FieldRef<'_>, o_: FieldRef<'_>) {
        let name = f_.name();
        let option = o_.option();
        self.enter(format!("{name}<{option}>"));
    }
    fn optional_begin(&mut self, f_: FieldRef<'_>, present: bool) {
        let name = f_.name();
        self.enter(format!("{name}?{present}"));
    }
    leave_on!(struct_end, array_end, variant_end, optional_end);
}

/// The flattened tape of the first event of class `full` (and its cpu/pid).
fn first_of(trace: &Path, full: &str) -> (Flat, u32, i32) {
    let loader = ReadLoader;
    let traces = open(&[trace.to_path_buf()], &loader).unwrap();
    let mut src = CtfSource::new(&traces, &loader, true).unwrap();
    while let Some(r) = src.next_record().unwrap() {
        if let Record::Event(e) = r {
            let c = e.class.unwrap();
            let name = if c.system.is_empty() {
                c.name.clone()
            } else {
                format!("{}:{}", c.system, c.name)
            };
            if name == full {
                let mut f = Flat::default();
                e.tape.unwrap().replay(c.layout(), &mut f);
                assert_eq!(f.depth, 0, "balanced visit");
                return (f, e.cpu, e.pid);
            }
        }
    }
    panic!("no {full} in {}", trace.display());
}

#[test]
fn tape_holds_what_babeltrace2_printed() {
    let ctf = fixtures("ctf");
    // [12:39:42.403425209] vm corpus:ints: { cpu_id = 0 }, { vpid = 30575,
    // vtid = 30575, procname = "corpus_app" }, { i8 = -128, ..., u32_hex = 0x0, ... ch = 120 }
    for trace in [
        ctf.join("lttng-ust-uid/trace"),
        ctf.join("bt2-converted-from-lttng-uid/trace"),
    ] {
        let (f, cpu, pid) = first_of(&trace, "corpus:ints");
        assert_eq!((cpu, pid), (0, 30575));
        for l in [
            "packet_context/cpu_id=0",
            "common_context/vpid=30575",
            "common_context/vtid=30575",
            "common_context/procname=\"corpus_app\"",
            "payload/i8=-128",
            "payload/u64=0",
            "payload/u32_hex=0x0",
            "payload/ch=120",
        ] {
            assert!(f.has(l), "{}: {l} not in {:#?}", trace.display(), f.lines);
        }
        if trace.ends_with("lttng-ust-uid/trace") {
            // LTTng's header: an enumeration selecting a variant whose
            // value (a structure) is named after it
            assert!(
                f.has("event_header/id=65535[\"extended\"]"),
                "{:#?}",
                f.lines
            );
            assert!(f.has("event_header/v<extended>.v.id=0"), "{:#?}", f.lines);
        } else {
            assert!(f.has("event_header/id=0"), "{:#?}", f.lines);
        }
        let (f, _, _) = first_of(&trace, "corpus:strings");
        for l in [
            r#"payload/s="iteration 0 \"quoted\" \\ tab\tend""#,
            "payload/utf8=\"héllo wörld ✓\"",
            "payload/empty=\"\"",
        ] {
            assert!(f.has(l), "{}: {l} not in {:#?}", trace.display(), f.lines);
        }
    }
    // [00:00:01.001090000] enums: { color = ( "BLUE" : container = 2 ),
    // level = ( "LOW" : container = -46 ), sparse = ( <unknown> : container = 2322 ) }
    let (f, _, pid) = first_of(&ctf.join("barectf-bitfields/trace"), "enums");
    assert_eq!(pid, -1);
    for l in [
        "payload/color=2[\"BLUE\"]",
        "payload/level=-46[\"LOW\"]",
        "payload/sparse=2322[]",
    ] {
        assert!(f.has(l), "{l} not in {:#?}", f.lines);
    }
    let (f, _, _) = first_of(&ctf.join("barectf-bitfields/trace"), "odd_ints");
    for l in [
        "payload/u3=2",
        "payload/s5=10",
        "payload/s13=-3613",
        "payload/s64_odd=305253015172939776",
        "payload/u32_al2=1304001114",
    ] {
        assert!(f.has(l), "{l} not in {:#?}", f.lines);
    }
    // perf: { cpu_id = 0 }, { perf_ip = 0xFFFFFFFF813AA3E5, perf_tid = 462, ...,
    // comm = "migration/0", pid = 18 } (all payload: `pid` is not the task)
    let (f, cpu, pid) = first_of(
        &ctf.join("perf-data-convert-sched/trace"),
        "sched:sched_wakeup",
    );
    assert_eq!((cpu, pid), (0, -1));
    for l in [
        "packet_context/cpu_id=0",
        "payload/perf_ip=0xffffffff813aa3e5",
        "payload/perf_tid=462",
        "payload/comm=\"migration/0\"",
        "payload/pid=18",
    ] {
        assert!(f.has(l), "{l} not in {:#?}", f.lines);
    }
    // lttng-ust-pid: { cpu_id = 1 }, { vpid = 31439, vtid = 31443, ... }, { thread = 1, iter = 0 }
    let (f, cpu, pid) = first_of(&ctf.join("lttng-ust-pid/trace"), "corpus:thread_tick");
    assert_eq!((cpu, pid), (1, 31443));
    assert!(f.has("specific_context/vtid=31443") || f.has("common_context/vtid=31443"));
    assert!(f.has("payload/thread=1"));
}

#[test]
fn meta_classes_schemas_clocks_env() {
    let loader = ReadLoader;
    let trace = fixtures("ctf/lttng-ust-uid/trace");
    let traces = open(&[trace], &loader).unwrap();
    let src = CtfSource::new(&traces, &loader, true).unwrap();
    let m = src.meta();
    assert_eq!(m.format, Some(tracemux_core::model::Format::Ctf));
    let ints = m
        .classes
        .iter()
        .find(|c| c.system == "corpus" && c.name == "ints")
        .unwrap();
    // unique ids
    let mut ids: Vec<u32> = m.classes.iter().map(|c| c.id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), m.classes.len());
    let s = ints.schema();
    let scopes: Vec<Scope> = s.scopes.iter().map(|x| x.scope).collect();
    assert_eq!(
        scopes,
        [
            Scope::PacketContext,
            Scope::EventHeader,
            Scope::CommonContext,
            Scope::Payload
        ]
    );
    let find = |sc: Scope, n: &str| {
        s.scope(sc)
            .iter()
            .find(|f| f.name == n)
            .unwrap_or_else(|| panic!("{n}"))
            .ty
            .clone()
    };
    assert!(matches!(
        find(Scope::PacketContext, "cpu_id"),
        FieldType::Int(_)
    ));
    assert_eq!(find(Scope::CommonContext, "procname"), FieldType::Str);
    match find(Scope::Payload, "u32_hex") {
        FieldType::Int(i) => assert_eq!((i.bits, i.signed, i.base), (32, false, Base::Hex)),
        t => panic!("{t:?}"),
    }
    match find(Scope::Payload, "i8") {
        FieldType::Int(i) => assert_eq!((i.bits, i.signed), (8, true)),
        t => panic!("{t:?}"),
    }
    // LTTng's event header: a variant (compact/extended)
    assert!(s
        .scope(Scope::EventHeader)
        .iter()
        .any(|f| matches!(f.ty, FieldType::Variant(_))));
    let c = &m.clocks[0];
    assert_eq!(c.freq, 1_000_000_000);
    assert!(c.origin_unix_epoch);
    assert!(c.offset_ns > 1_600_000_000_000_000_000);
    assert!(c.uuid.is_some());
    assert!(m.env.iter().any(|(k, v)| k == "hostname" && v == "vm"));
    assert!(m.env.iter().any(|(k, v)| k == "domain" && v == "ust"));
    assert!(!m.streams.is_empty());
    // barectf: enumerations keep their mappings
    let trace = fixtures("ctf/barectf-bitfields/trace");
    let traces = open(&[trace], &loader).unwrap();
    let src = CtfSource::new(&traces, &loader, true).unwrap();
    let enums = src
        .meta()
        .classes
        .iter()
        .find(|c| c.name == "enums")
        .unwrap();
    assert_eq!(enums.system, "");
    let s = enums.schema();
    match &s.scope(Scope::Payload)[0].ty {
        FieldType::Int(i) => assert!(i.mappings.iter().any(|m| m.label == "BLUE")),
        t => panic!("{t:?}"),
    }
}

#[test]
fn damage_is_a_record_or_with_strict_an_error() {
    // yactfr's fail-dl-str-beyond-data: two events, then a string past the data
    let trace = fixtures("ctf/conformance/fail-dl-str-beyond-data/trace");
    let loader = ReadLoader;
    let traces = open(&[trace], &loader).unwrap();
    for strict in [false, true] {
        let mut src = CtfSource::new(&traces, &loader, strict).unwrap();
        let (mut events, mut damage, mut error) = (0, 0, 0);
        loop {
            match src.next_record() {
                Ok(Some(Record::Event(_))) => events += 1,
                Ok(Some(Record::Damage(e))) => {
                    assert!(e.to_string().contains("packet at offset 0x0"), "{e}");
                    damage += 1
                }
                Ok(Some(Record::Lost(_))) => {}
                Ok(None) => break,
                Err(e) => {
                    assert!(e.to_string().contains("end of data"), "{e}");
                    error += 1;
                    // the source stays empty after a fatal error
                    assert!(src.next_record().unwrap().is_none());
                    break;
                }
            }
        }
        assert_eq!(events, 2);
        assert_eq!((damage, error), if strict { (0, 1) } else { (1, 0) });
    }
}
