//! `convert --to perfetto` and `--to chrome` on a fixture of every format,
//! checked against `report --json` of the same trace: the Perfetto output
//! is decoded packet by packet with the writer's own prost messages, the
//! Chrome output with serde_json. Every event must be there once, with its
//! time, CPU, task and fields (typed ftrace messages field by field under
//! Perfetto's names, generic events and debug annotations whole); sequences
//! must clear their incremental state before using interned names; uftrace
//! slices must come per thread in the order of the recording. The same
//! checks against Perfetto's official schema live in
//! tests/convert/check-perfetto.sh.

mod common;
mod perfetto_decode;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use tracemux_export::prost::{self, Message};
use tracemux_export::proto::*;

use common::{every_fixture as fixtures, FixtureKind as Kind};
use perfetto_decode::*;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tracemux-perfetto-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `report --json` of a trace: its event and lost lines.
fn report(src: &Path) -> Vec<Value> {
    common::report_json(src)
}

fn convert(src: &Path, out: &Path, to: &str) {
    convert_with(src, out, to, &[])
}

fn convert_with(src: &Path, out: &Path, to: &str, extra: &[&str]) {
    let mut args = vec![
        "convert",
        "-q",
        "--force",
        src.to_str().unwrap(),
        "--to",
        to,
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = common::tracemux(&args, Path::new("."));
    assert!(
        out.exists(),
        "{}: no output: {}",
        src.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Two JSON values equal, numbers by value (an i64 and a u64 of the same
/// number are equal; a typed message's narrower integers are compared
/// after the same truncation the writer does), a generic field's JSON text
/// against the source's value.
fn same(src: &Value, out: &Value) -> bool {
    match (src, out) {
        (Value::Number(a), Value::Number(b)) => {
            if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
                return x == y || x as i32 == y as i32 || x as u32 as i64 == y;
            }
            if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
                return x == y;
            }
            if let (Some(x), Some(y)) = (a.as_u64(), b.as_i64()) {
                return x as i64 == y || x as u32 as i64 == y || x as i32 as i64 == y;
            }
            a.as_f64() == b.as_f64()
        }
        (Value::String(s), Value::String(t)) => s == t,
        // A field the source could not decode (`null` in JSON lines) is an
        // empty byte string in the model.
        (Value::Null, Value::Array(a)) => a.is_empty(),
        (Value::Null, Value::String(t)) => t == "[]",
        (v, Value::String(t)) if !v.is_string() => {
            serde_json::from_str::<Value>(t).is_ok_and(|p| same(v, &p))
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, x)| b.get(k).is_some_and(|y| same(x, y)))
        }
        (a, b) => a == b,
    }
}

/// A debug annotation's value as JSON (no value: null).
fn ann_json(a: &DebugAnnotation, names: &HashMap<u64, String>) -> Value {
    if let Some(x) = a.uint_value {
        json!(x)
    } else if let Some(x) = a.int_value {
        json!(x)
    } else if let Some(x) = a.double_value {
        json!(x)
    } else if let Some(x) = a.bool_value {
        json!(x)
    } else if let Some(x) = &a.string_value {
        json!(x)
    } else if let Some(x) = &a.legacy_json_value {
        serde_json::from_str(x).expect("legacy JSON value parses")
    } else if !a.dict_entries.is_empty() {
        let mut m = Map::new();
        for e in &a.dict_entries {
            m.insert(ann_name(e, names), ann_json(e, names));
        }
        Value::Object(m)
    } else if !a.array_values.is_empty() {
        Value::Array(a.array_values.iter().map(|e| ann_json(e, names)).collect())
    } else {
        Value::Null
    }
}

fn ann_name(a: &DebugAnnotation, names: &HashMap<u64, String>) -> String {
    match (&a.name, a.name_iid) {
        (Some(n), _) => n.clone(),
        (None, Some(i)) => names
            .get(&i)
            .cloned()
            .unwrap_or_else(|| panic!("annotation name {i} not interned")),
        _ => String::new(),
    }
}

/// An event as both sides are compared: time, cpu (ftrace) or thread
/// (track events), name, fields.
type Row = (u64, i64, i64, String, String);

/// Numbers as one form: a float with an integral value as that integer
/// (JSON lines write `99767` for a float that a debug annotation keeps as
/// `99767.0`).
fn canon(v: &Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap();
            if f.fract() == 0.0 && f.abs() < 9.0e15 {
                json!(f as i64)
            } else {
                v.clone()
            }
        }
        Value::Array(a) => Value::Array(a.iter().map(canon).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), canon(v))).collect()),
        _ => v.clone(),
    }
}

fn row_key(ts: u64, a: i64, b: i64, name: &str, fields: &Map<String, Value>) -> Row {
    let fields = match canon(&Value::Object(fields.clone())) {
        Value::Object(m) => m,
        _ => unreachable!(),
    };
    (
        ts,
        a,
        b,
        name.to_string(),
        Value::Object(fields.clone()).to_string(),
    )
}

/// The expected fields of a source event: its payload, plus its context
/// scopes for CTF/LTT instants.
fn src_fields(e: &Value, with_contexts: bool, drop_name: bool) -> Map<String, Value> {
    let mut m = e["fields"].as_object().cloned().unwrap_or_default();
    if drop_name {
        m.remove("name");
    }
    if with_contexts {
        for s in ["common_context", "specific_context"] {
            if let Some(o) = e
                .get(s)
                .filter(|o| o.as_object().is_some_and(|o| !o.is_empty()))
            {
                m.insert(s.to_string(), o.clone());
            }
        }
    }
    m
}

fn event_title(e: &Value) -> String {
    if e["event"].is_null() {
        return format!("type {}", e["type_id"]);
    }
    let sys = e["system"].as_str().unwrap_or("");
    let name = e["event"].as_str().unwrap_or("");
    if sys.is_empty() {
        name.to_string()
    } else {
        format!("{sys}:{name}")
    }
}

/// Interned names of a sequence by iid.
type Interned = HashMap<u64, String>;

struct Checked {
    events: usize,
    typed: usize,
    generic: usize,
    track: usize,
    lost: usize,
}

/// The interned data of the perf sample sequence.
#[derive(Default)]
struct PerfTables {
    functions: HashMap<u64, String>,
    paths: HashMap<u64, String>,
    mappings: HashMap<u64, Vec<u64>>,
    frames: HashMap<u64, Frame>,
    callstacks: HashMap<u64, Vec<u64>>,
}

impl PerfTables {
    fn add(&mut self, i: &InternedData) -> Result<(), String> {
        fn once<T>(
            m: &mut HashMap<u64, T>,
            k: Option<u64>,
            v: T,
            what: &str,
        ) -> Result<(), String> {
            let k = k.ok_or(format!("{what} without iid"))?;
            if m.insert(k, v).is_some() {
                return Err(format!("{what} {k} interned twice"));
            }
            Ok(())
        }
        for f in &i.function_names {
            let s = String::from_utf8(f.str.clone().unwrap_or_default()).unwrap();
            once(&mut self.functions, f.iid, s, "function name")?;
        }
        for f in &i.mapping_paths {
            let s = String::from_utf8(f.str.clone().unwrap_or_default()).unwrap();
            once(&mut self.paths, f.iid, s, "mapping path")?;
        }
        for m in &i.mappings {
            once(
                &mut self.mappings,
                m.iid,
                m.path_string_ids.clone(),
                "mapping",
            )?;
        }
        for f in &i.frames {
            once(&mut self.frames, f.iid, f.clone(), "frame")?;
        }
        for c in &i.callstacks {
            once(
                &mut self.callstacks,
                c.iid,
                c.frame_ids.clone(),
                "callstack",
            )?;
        }
        Ok(())
    }

    /// The frames of a callstack, the sampled function first, as
    /// "PATH REL_PC FUNCTION" (the path as Perfetto joins it).
    fn stack(&self, iid: u64) -> Result<Vec<String>, String> {
        let ids = self
            .callstacks
            .get(&iid)
            .ok_or(format!("callstack {iid} not interned"))?;
        let mut out = Vec::new();
        for f in ids.iter().rev() {
            let f = self
                .frames
                .get(f)
                .ok_or(format!("frame {f} not interned"))?;
            let m = f.mapping_id.ok_or("frame without mapping")?;
            let parts = self
                .mappings
                .get(&m)
                .ok_or(format!("mapping {m} not interned"))?;
            let mut path = String::new();
            for p in parts {
                path.push('/');
                path.push_str(self.paths.get(p).ok_or(format!("path {p} not interned"))?);
            }
            let func = match f.function_name_id {
                Some(n) => self
                    .functions
                    .get(&n)
                    .ok_or(format!("function {n} not interned"))?
                    .as_str(),
                None => "",
            };
            out.push(format!("{path} {:x} {func}", f.rel_pc.unwrap_or(0)));
        }
        Ok(out)
    }
}

/// What a perf sample of the source's JSON lines becomes in Perfetto: a
/// `PerfSample` of its thread with its frames (see `PerfTables::stack`).
fn perf_sample_row(e: &Value) -> (Row, Map<String, Value>, String) {
    let f = &e["fields"];
    let opt = |v: &Value| v.as_i64().filter(|&v| v != -1 && v != i64::from(u32::MAX));
    let (mut mode, mut stack) = (None, Vec::new());
    for line in f["frames"].as_str().unwrap().lines() {
        let c: Vec<&str> = line.splitn(5, '\t').collect();
        mode.get_or_insert(if c[2] == "k" { 1 } else { 2 });
        let path = if c[3].starts_with('/') {
            c[3].to_string()
        } else {
            format!("/{}", c[3])
        };
        stack.push(format!("{path} {} {}", c[1], c[4]));
    }
    let mut m = Map::new();
    m.insert("pid".into(), json!(opt(&f["pid"])));
    m.insert("tid".into(), json!(opt(&f["tid"])));
    m.insert("period".into(), f["period"].clone());
    m.insert("mode".into(), json!(mode.unwrap_or(0)));
    m.insert("stack".into(), json!(stack));
    let tid = opt(&f["tid"]).unwrap_or(-1);
    let key = row_key(
        e["ts"].as_u64().unwrap(),
        e["cpu"].as_i64().unwrap(),
        tid,
        "perf sample",
        &Map::new(),
    );
    (key, m, "perf sample".into())
}

/// Decode a Perfetto output and check it against the source's JSON lines.
fn check_perfetto(
    name: &str,
    kind: Kind,
    src: &[Value],
    syms: &[(u64, String)],
    data: &[u8],
) -> Result<Checked, String> {
    let pk = packets(data);
    let expanded = expand_compact(&pk).map_err(|e| format!("{name}: {e}"))?;
    let mut ksyms: HashMap<u64, String> = HashMap::new();
    let mut descs: HashMap<u32, DescriptorProto> = HashMap::new();
    let mut stacks: HashMap<i64, Vec<Value>> = HashMap::new();
    let mut ftrace_seq = None;
    let mut perf_seq = None;
    let mut perf_tables = PerfTables::default();
    let kernel = matches!(kind, Kind::TraceDat | Kind::KernelCtf | Kind::PerfTp);
    let mut got: Vec<(Row, Map<String, Value>, bool)> = Vec::new();
    let mut lost_out: BTreeMap<u32, usize> = BTreeMap::new();
    let mut seq_tid: HashMap<u32, i64> = HashMap::new();
    let mut seq_names: HashMap<u32, (Interned, Interned)> = HashMap::new();
    // per thread: the entry/exit sequence in packet order
    let mut slices: HashMap<i64, Vec<(u64, i32, String)>> = HashMap::new();
    let mut open: HashMap<i64, Vec<String>> = HashMap::new();
    let (mut typed, mut generic, mut track) = (0, 0, 0);
    for p in &pk {
        match &p.data {
            Some(Data::FtraceEvents(b)) => {
                let cpu = b.cpu.ok_or("bundle without cpu")?;
                if b.lost_events == Some(true) {
                    *lost_out.entry(cpu).or_default() += 1;
                }
                let seq = p.trusted_packet_sequence_id;
                match ftrace_seq {
                    None => {
                        ftrace_seq = Some(seq);
                        if p.sequence_flags.unwrap_or(0) & SEQ_INCREMENTAL_STATE_CLEARED == 0 {
                            return Err(format!("{name}: the first bundle keeps old state"));
                        }
                    }
                    Some(s) if s != seq => {
                        return Err(format!("{name}: bundles on sequences {s:?} and {seq:?}"))
                    }
                    _ => {}
                }
                if let Some(i) = &p.interned_data {
                    for k in &i.kernel_symbols {
                        let s = String::from_utf8_lossy(k.str.as_deref().unwrap_or(&[]));
                        ksyms.insert(k.iid.unwrap(), s.into_owned());
                    }
                }
                for g in &b.generic_event_descriptors {
                    let d = DescriptorProto::decode(g.event_descriptor.as_deref().unwrap_or(&[]))
                        .map_err(|e| e.to_string())?;
                    if descs.insert(g.field_id.unwrap_or(0) as u32, d).is_some() {
                        return Err(format!("{name}: generic event described twice"));
                    }
                }
                for e in &b.event {
                    let (n, mut m, is_typed) = match &e.event {
                        Some(k) => ftrace_fields(k),
                        None => {
                            let (n, m) =
                                described_fields(e, &descs).map_err(|x| format!("{name}: {x}"))?;
                            (n, m, false)
                        }
                    };
                    if !syms.is_empty() && (n == "funcgraph_entry" || n == "funcgraph_exit") {
                        let iid = m["func"].as_u64().ok_or("funcgraph without func")?;
                        let f = ksyms.get(&iid).ok_or(format!(
                            "{name}: kernel symbol {iid} used before it was interned"
                        ))?;
                        m.insert("func".into(), json!(f));
                    }
                    if is_typed {
                        typed += 1;
                    } else {
                        generic += 1;
                    }
                    let pid = e.pid.map_or(-1, i64::from);
                    got.push((
                        row_key(
                            e.timestamp.ok_or("no timestamp")?,
                            cpu.into(),
                            pid,
                            &n,
                            &Map::new(),
                        ),
                        m,
                        is_typed,
                    ));
                }
            }
            Some(Data::TrackDescriptor(d)) => {
                let seq = p
                    .trusted_packet_sequence_id
                    .ok_or("descriptor without sequence")?;
                if p.sequence_flags.unwrap_or(0) & SEQ_INCREMENTAL_STATE_CLEARED == 0 {
                    return Err(format!(
                        "{name}: sequence {seq} starts without clearing its state"
                    ));
                }
                if seq_names.insert(seq, Default::default()).is_some() {
                    return Err(format!("{name}: sequence {seq} described twice"));
                }
                let tid = d.thread.as_ref().and_then(|t| t.tid).unwrap_or(-1);
                seq_tid.insert(seq, tid);
            }
            Some(Data::TrackEvent(te)) => {
                track += 1;
                let seq = p
                    .trusted_packet_sequence_id
                    .ok_or("track event without sequence")?;
                let Some(names) = seq_names.get_mut(&seq) else {
                    return Err(format!("{name}: track event on undescribed sequence {seq}"));
                };
                if let Some(i) = &p.interned_data {
                    for n in &i.event_names {
                        names.0.insert(n.iid.unwrap(), n.name.clone().unwrap());
                    }
                    for n in &i.debug_annotation_names {
                        names.1.insert(n.iid.unwrap(), n.name.clone().unwrap());
                    }
                }
                let title = match te.name_iid {
                    Some(i) => names
                        .0
                        .get(&i)
                        .cloned()
                        .ok_or(format!("{name}: event name {i} not interned"))?,
                    None => String::new(),
                };
                let mut m = Map::new();
                for a in &te.debug_annotations {
                    m.insert(ann_name(a, &names.1), ann_json(a, &names.1));
                }
                let tid = seq_tid[&seq];
                // uftrace entry/exit leave out empty args, an absent
                // retval and an exit's addr that is its entry's
                let st = stacks.entry(tid).or_default();
                if te.r#type == Some(TYPE_SLICE_BEGIN) {
                    m.entry("args").or_insert(json!([]));
                    st.extend(m.get("addr").cloned());
                } else if te.r#type == Some(TYPE_SLICE_END) {
                    if let Some(a) = st.pop() {
                        m.entry("addr").or_insert(a);
                    }
                    m.entry("retval").or_insert(Value::Null);
                }
                if title == "lost events" && te.r#type == Some(TYPE_INSTANT) {
                    let cpu = m
                        .get("cpu")
                        .and_then(Value::as_u64)
                        .ok_or("lost without cpu")?;
                    *lost_out.entry(cpu as u32).or_default() += 1;
                    continue;
                }
                let ts = p.timestamp.ok_or("track event without time")?;
                let ty = te.r#type.unwrap_or(0);
                if ty == TYPE_SLICE_BEGIN || ty == TYPE_SLICE_END {
                    slices.entry(tid).or_default().push((ts, ty, title.clone()));
                    let st = open.entry(tid).or_default();
                    if ty == TYPE_SLICE_BEGIN {
                        st.push(title.clone());
                    } else {
                        // an exit without its entry (a fork child's
                        // returns): as in the source, which the order
                        // check below compares
                        st.pop();
                    }
                }
                let label = match ty {
                    TYPE_SLICE_BEGIN => format!("B {title}"),
                    TYPE_SLICE_END => "E".to_string(),
                    _ => title,
                };
                got.push((row_key(ts, tid, 0, &label, &m), Map::new(), false));
            }
            Some(Data::PerfSample(ps)) => {
                let seq = p
                    .trusted_packet_sequence_id
                    .ok_or("sample without sequence")?;
                match perf_seq {
                    None => {
                        perf_seq = Some(seq);
                        if p.sequence_flags.unwrap_or(0) & SEQ_INCREMENTAL_STATE_CLEARED == 0 {
                            return Err(format!("{name}: the first sample keeps old state"));
                        }
                    }
                    Some(s) if s != seq => {
                        return Err(format!("{name}: samples on sequences {s} and {seq}"))
                    }
                    _ => {}
                }
                if let Some(i) = &p.interned_data {
                    perf_tables.add(i).map_err(|e| format!("{name}: {e}"))?;
                }
                let stack = match ps.callstack_iid {
                    Some(i) => perf_tables.stack(i).map_err(|e| format!("{name}: {e}"))?,
                    None => Vec::new(),
                };
                let mut m = Map::new();
                m.insert("pid".into(), json!(ps.pid));
                m.insert("tid".into(), json!(ps.tid));
                m.insert("period".into(), json!(ps.timebase_count));
                m.insert("mode".into(), json!(ps.cpu_mode.unwrap_or(0)));
                m.insert("stack".into(), json!(stack));
                let ts = p.timestamp.ok_or("sample without time")?;
                let cpu = ps.cpu.ok_or("sample without cpu")?;
                let tid = ps.tid.map_or(-1, i64::from);
                got.push((
                    row_key(ts, cpu.into(), tid, "perf sample", &Map::new()),
                    m,
                    false,
                ));
            }
            _ => {}
        }
    }
    for (cpu, e) in &expanded {
        let (n, m, _) = ftrace_fields(e.event.as_ref().unwrap());
        typed += 1;
        got.push((
            row_key(
                e.timestamp.unwrap(),
                i64::from(*cpu),
                e.pid.map_or(-1, i64::from),
                &n,
                &Map::new(),
            ),
            m,
            true,
        ));
    }
    // The expected rows.
    let mut want: Vec<(Row, Map<String, Value>, String)> = Vec::new();
    let mut lost_src: BTreeMap<u32, usize> = BTreeMap::new();
    let mut want_slices: HashMap<i64, Vec<(u64, i32, String)>> = HashMap::new();
    for e in src {
        if e["type"] == "lost" {
            *lost_src
                .entry(e["cpu"].as_u64().unwrap() as u32)
                .or_default() += 1;
            continue;
        }
        let ts = e["ts"].as_u64().unwrap();
        let sys = e["system"].as_str().unwrap_or("");
        let ev = e["event"].as_str().unwrap_or("");
        let pid = e["pid"].as_i64().unwrap();
        if sys == "perf" && e["fields"]["frames"].is_string() {
            want.push(perf_sample_row(e));
            continue;
        }
        if kernel && sys != "uftrace" {
            let mut fields = e["fields"].as_object().cloned().unwrap_or_default();
            if !syms.is_empty() && sys == "ftrace" && ev.starts_with("funcgraph_") {
                if let Some(a) = fields.get("func").and_then(Value::as_u64) {
                    fields.insert("func".into(), json!(symbol_name(syms, a)));
                }
            }
            let pid = if pid >= 0 {
                pid
            } else {
                ["common_pid", "perf_tid"]
                    .iter()
                    .find_map(|k| fields.get(*k).and_then(Value::as_i64))
                    .unwrap_or(-1)
            };
            let ev = if e["event"].is_null() {
                format!("type_{}", e["type_id"])
            } else {
                ev.to_string()
            };
            want.push((
                row_key(ts, e["cpu"].as_i64().unwrap(), pid, &ev, &Map::new()),
                fields,
                ev,
            ));
        } else {
            let uf = kind == Kind::Uftrace;
            let tid = if pid >= 0 { pid } else { -1 };
            let (label, drop) = match (sys, ev) {
                ("uftrace", "entry") => (
                    format!("B {}", e["fields"]["name"].as_str().unwrap_or("")),
                    true,
                ),
                ("uftrace", "exit") => ("E".to_string(), true),
                _ => (event_title(e), false),
            };
            if drop {
                let ty = if ev == "entry" {
                    TYPE_SLICE_BEGIN
                } else {
                    TYPE_SLICE_END
                };
                let t = if ty == TYPE_SLICE_BEGIN {
                    label[2..].to_string()
                } else {
                    String::new()
                };
                want_slices.entry(tid).or_default().push((ts, ty, t));
            }
            let m = src_fields(e, !uf, drop);
            want.push((row_key(ts, tid, 0, &label, &m), Map::new(), String::new()));
        }
    }
    if got.len() != want.len() {
        return Err(format!(
            "{name}: {} events written, {} in the source",
            got.len(),
            want.len()
        ));
    }
    got.sort_by(|a, b| a.0.cmp(&b.0));
    want.sort_by(|a, b| a.0.cmp(&b.0));
    // ftrace rows with the same (ts, cpu, pid, name) are compared as
    // groups: fields decide within a group.
    let mut i = 0;
    while i < got.len() {
        let key = |r: &Row| (r.0, r.1, r.2, r.3.clone(), r.4.clone());
        let mut j = i;
        while j < got.len() && key(&got[j].0) == key(&got[i].0) {
            j += 1;
        }
        if j > want.len() || want[i..j].iter().any(|w| key(&w.0) != key(&got[i].0)) {
            return Err(format!(
                "{name}: event differs: wrote {:?}, source {:?}",
                got[i].0, want[i].0
            ));
        }
        let mut used = vec![false; j - i];
        for g in &got[i..j] {
            let hit = want[i..j].iter().enumerate().position(|(k, w)| {
                !used[k] && {
                    let exp = if g.2 {
                        let mut m = Map::new();
                        for (pf, names) in typed_fields(&w.2) {
                            if let Some(v) = names.iter().find_map(|n| w.1.get(*n)) {
                                m.insert(pf.to_string(), v.clone());
                            }
                        }
                        m
                    } else {
                        w.1.clone()
                    };
                    same(&Value::Object(exp), &Value::Object(g.1.clone()))
                }
            });
            match hit {
                Some(k) => used[k] = true,
                None => {
                    return Err(format!(
                        "{name}: fields differ at {:?}: wrote {:?}, source {:?}",
                        g.0,
                        g.1,
                        want[i..j].iter().map(|w| &w.1).collect::<Vec<_>>()
                    ))
                }
            }
        }
        i = j;
    }
    if lost_out != lost_src {
        return Err(format!(
            "{name}: lost markers per cpu {lost_out:?}, source {lost_src:?}"
        ));
    }
    if slices != want_slices {
        return Err(format!(
            "{name}: uftrace slices not in the recording's order per thread"
        ));
    }
    Ok(Checked {
        events: got.len(),
        typed,
        generic,
        track,
        lost: lost_out.values().sum(),
    })
}

/// Check a Chrome JSON output against the source's JSON lines.
fn check_chrome(name: &str, kind: Kind, src: &[Value], text: &str) -> Result<usize, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("{name}: JSON: {e}"))?;
    let evs = doc["traceEvents"].as_array().ok_or("no traceEvents")?;
    // exact times: the raw text of each event line's "ts"
    let raw_ts: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("{\"name\""))
        .map(|l| {
            let at = l.find("\"ph\":\"").unwrap();
            let rest = &l[at..];
            let t = &rest[rest.find("\"ts\":").unwrap() + 5..];
            t[..t.find(',').unwrap()].to_string()
        })
        .collect();
    if raw_ts.len() != evs.len() {
        return Err(format!("{name}: one event per line expected"));
    }
    let kernel = matches!(kind, Kind::TraceDat | Kind::KernelCtf | Kind::PerfTp);
    let mut got = Vec::new();
    let mut stacks: HashMap<(i64, i64), i64> = HashMap::new();
    let mut unmatched = 0;
    for (e, ts) in evs.iter().zip(&raw_ts) {
        let ph = e["ph"].as_str().unwrap_or("");
        let cat = e["cat"].as_str().unwrap_or("");
        let key = (
            e["pid"].as_i64().unwrap_or(0),
            e["tid"].as_i64().unwrap_or(0),
        );
        match ph {
            "B" => *stacks.entry(key).or_default() += 1,
            "E" => {
                let d = stacks.entry(key).or_default();
                *d -= 1;
                if *d < 0 && cat != "cpu" {
                    unmatched += 1;
                    *d = 0;
                }
                if *d < 0 && cat == "cpu" {
                    return Err(format!("{name}: E without B on {key:?} at {ts}"));
                }
            }
            _ => {}
        }
        if ph == "M" || cat == "cpu" || cat == "lost" {
            continue;
        }
        let label = match ph {
            "B" => format!("B {}", e["name"].as_str().unwrap()),
            "E" => format!("E {}", e["name"].as_str().unwrap()),
            _ => e["name"].as_str().unwrap().to_string(),
        };
        let tid = if key.0 == tracemux_export::chrome::STREAM_PID {
            -1
        } else {
            key.1
        };
        got.push((
            ts.clone(),
            e["cpu"].as_i64().unwrap(),
            tid,
            label,
            canon(&e["args"]).to_string(),
        ));
    }
    let mut want = Vec::new();
    let mut src_depth: HashMap<i64, i64> = HashMap::new();
    let mut src_unmatched = 0;
    for e in src
        .iter()
        .filter(|e| e["type"] == "event" && e["system"] == "uftrace")
    {
        let d = src_depth.entry(e["pid"].as_i64().unwrap()).or_default();
        if e["event"] == "entry" {
            *d += 1;
        } else if e["event"] == "exit" {
            *d -= 1;
            if *d < 0 {
                src_unmatched += 1;
                *d = 0;
            }
        }
    }
    if unmatched != src_unmatched {
        return Err(format!("{name}: chrome: {unmatched} E without B, {src_unmatched} exits without entry in the source"));
    }
    for e in src.iter().filter(|e| e["type"] == "event") {
        let ts = e["ts"].as_u64().unwrap();
        let sys = e["system"].as_str().unwrap_or("");
        let ev = e["event"].as_str().unwrap_or("");
        let (label, drop) = match (sys, ev) {
            ("uftrace", "entry") => (
                format!("B {}", e["fields"]["name"].as_str().unwrap_or("")),
                true,
            ),
            ("uftrace", "exit") => (
                format!("E {}", e["fields"]["name"].as_str().unwrap_or("")),
                true,
            ),
            _ => (event_title(e), false),
        };
        let ctx = !matches!(kind, Kind::TraceDat | Kind::Uftrace | Kind::PerfTp);
        let m = src_fields(e, ctx, drop);
        let pid = e["pid"].as_i64().unwrap();
        want.push((
            format!("{}.{:03}", ts / 1000, ts % 1000),
            e["cpu"].as_i64().unwrap(),
            pid.max(-1),
            label,
            canon(&Value::Object(m)).to_string(),
        ));
    }
    if got.len() != want.len() {
        return Err(format!(
            "{name}: chrome: {} events written, {} in the source",
            got.len(),
            want.len()
        ));
    }
    got.sort();
    want.sort();
    for (g, w) in got.iter().zip(&want) {
        let same_fields = same(
            &serde_json::from_str(&w.4).unwrap(),
            &serde_json::from_str(&g.4).unwrap(),
        );
        if (&g.0, g.1, g.2, &g.3) != (&w.0, w.1, w.2, &w.3) || !same_fields {
            return Err(format!(
                "{name}: chrome event differs: wrote {g:?}, source {w:?}"
            ));
        }
    }
    let _ = kernel;
    Ok(got.len())
}

#[test]
fn perfetto_and_chrome_of_every_fixture() {
    let scratch = tmp("all");
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    let (mut n_events, mut n_fixtures) = (0, 0);
    for (name, src, kind) in fixtures(&scratch) {
        let lines = report(&src);
        if lines.is_empty() {
            continue;
        }
        n_fixtures += 1;
        let pf = scratch.join(format!("{name}.pftrace"));
        convert(&src, &pf, "perfetto");
        let data = std::fs::read(&pf).unwrap();
        let syms = if kind == Kind::TraceDat {
            kallsyms(&src)
        } else {
            Vec::new()
        };
        match check_perfetto(&name, kind, &lines, &syms, &data) {
            Ok(c) => {
                n_events += c.events;
                summary.push(format!(
                    "{name}: {} events ({} typed, {} generic, {} track), {} lost markers, {} bytes",
                    c.events,
                    c.typed,
                    c.generic,
                    c.track,
                    c.lost,
                    data.len()
                ));
            }
            Err(e) => failures.push(e),
        }
        let cj = scratch.join(format!("{name}.json"));
        if kind == Kind::Uftrace {
            // a recording gives uftrace's own form (see below); selecting
            // (everything here) sends it through the model like the others
            convert_with(&src, &cj, "chrome", &["--begin", "0"]);
        } else {
            convert(&src, &cj, "chrome");
        }
        let text = std::fs::read_to_string(&cj).unwrap();
        if let Err(e) = check_chrome(&name, kind, &lines, &text) {
            failures.push(e);
        }
    }
    eprintln!("{}", summary.join("\n"));
    eprintln!("{n_fixtures} fixtures, {n_events} events checked");
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(n_fixtures >= 30, "only {n_fixtures} fixtures found");
    common::assert_no_failures(&failures, "failures");
}

/// `--to chrome` of a uftrace recording, nothing selected, writes what
/// `uftrace dump --chrome` wrote (the recorded fixtures' stored outputs of
/// uftrace 0.13, apart from the `recorded_time` uftrace takes from the
/// file's time), which is also what `tracemux dump --chrome` writes.
#[test]
fn chrome_of_a_recording_is_uftraces() {
    let scratch = tmp("uftrace-chrome");
    let root = common::repo_root().join("tests/fixtures/uftrace/recorded");
    let mut checked = 0;
    for d in tracemux_testkit::sorted_entries(&root) {
        let Ok(want) = std::fs::read_to_string(d.join("dump-chrome.txt")) else {
            continue;
        };
        let src = d.join("uftrace.data");
        let out = scratch.join("out.json");
        convert(&src, &out, "chrome");
        let got = std::fs::read_to_string(&out).unwrap();
        let dump = common::tracemux(&["dump", "--chrome", src.to_str().unwrap()], Path::new("."));
        assert_eq!(got.as_bytes(), dump.stdout, "{}", d.display());
        let keep = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| !l.starts_with("\"recorded_time\""))
                .map(str::to_string)
                .collect()
        };
        common::assert_same_lines(&keep(&got), &keep(&want));
        assert!(got.contains("\"recorded_time\""));
        checked += 1;
    }
    assert!(checked >= 8, "{checked} recordings");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The acceptance case: a sched trace's switches carry prev/next comm, pid,
/// prio and state as the source has them, in per-CPU bundles.
#[test]
fn sched_switch_fields_and_bundles() {
    let root = common::repo_root();
    let src = root.join("tests/fixtures/tracedat/v6-sched-irq-timer/trace.dat");
    let scratch = tmp("sched");
    let pf = scratch.join("t.pftrace");
    convert_with(&src, &pf, "perfetto", &["--full-sched"]);
    let pk = packets(&std::fs::read(&pf).unwrap());
    let mut switches = Vec::new();
    for p in &pk {
        if let Some(Data::FtraceEvents(b)) = &p.data {
            assert!(b.event.len() <= tracemux_export::perfetto::BUNDLE_EVENTS);
            let mut last = 0;
            for e in &b.event {
                assert!(e.timestamp.unwrap() >= last, "a bundle is in time order");
                last = e.timestamp.unwrap();
                if let Some(FtraceKind::SchedSwitch(s)) = &e.event {
                    switches.push((b.cpu.unwrap(), e.timestamp.unwrap(), s.clone()));
                }
            }
        }
    }
    let first: Vec<Value> = report(&src)
        .into_iter()
        .filter(|e| e["event"] == "sched_switch")
        .collect();
    assert_eq!(switches.len(), first.len());
    switches.sort_by_key(|s| (s.1, s.0));
    let (cpu, ts, s) = &switches[0];
    let e = first
        .iter()
        .find(|e| e["ts"] == json!(ts) && e["cpu"] == json!(cpu))
        .unwrap();
    let f = &e["fields"];
    assert_eq!(s.prev_comm.as_deref(), f["prev_comm"].as_str());
    assert_eq!(s.prev_pid.map(i64::from), f["prev_pid"].as_i64());
    assert_eq!(s.prev_prio.map(i64::from), f["prev_prio"].as_i64());
    assert_eq!(s.prev_state, f["prev_state"].as_i64());
    assert_eq!(s.next_comm.as_deref(), f["next_comm"].as_str());
    assert_eq!(s.next_pid.map(i64::from), f["next_pid"].as_i64());
    assert_eq!(s.next_prio.map(i64::from), f["next_prio"].as_i64());
    let info = pk.iter().find_map(|p| match &p.data {
        Some(Data::SystemInfo(s)) => Some(s.clone()),
        _ => None,
    });
    let u = info.and_then(|i| i.utsname).expect("utsname");
    assert_eq!(u.release.as_deref(), Some("6.18.44-fc-v669"));
    assert_eq!(u.machine.as_deref(), Some("x86_64"));
    let tree = pk.iter().find_map(|p| match &p.data {
        Some(Data::ProcessTree(t)) => Some(t.clone()),
        _ => None,
    });
    assert!(tree.is_some_and(|t| t
        .threads
        .iter()
        .any(|t| t.name.as_deref() == Some("trace-cmd"))));
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The ftrace events of a Perfetto trace as comparable rows (cpu, time,
/// pid, name, fields), compact ones expanded.
fn ftrace_rows(pk: &[TracePacket]) -> Vec<(u32, u64, i64, String, String)> {
    let mut rows = Vec::new();
    let mut descs = HashMap::new();
    for p in pk {
        if let Some(Data::FtraceEvents(b)) = &p.data {
            for g in &b.generic_event_descriptors {
                let d = DescriptorProto::decode(g.event_descriptor.as_deref().unwrap()).unwrap();
                descs.insert(g.field_id.unwrap() as u32, d);
            }
        }
    }
    let mut add = |cpu: u32, e: &FtraceEvent| {
        let (n, m) = match &e.event {
            Some(k) => {
                let (n, m, _) = ftrace_fields(k);
                (n, m)
            }
            None => described_fields(e, &descs).unwrap(),
        };
        rows.push((
            cpu,
            e.timestamp.unwrap(),
            e.pid.map_or(-1, i64::from),
            n,
            Value::Object(m).to_string(),
        ));
    };
    for p in pk {
        if let Some(Data::FtraceEvents(b)) = &p.data {
            for e in &b.event {
                add(b.cpu.unwrap(), e);
            }
        }
    }
    for (cpu, e) in expand_compact(pk).unwrap() {
        add(cpu, &e);
    }
    rows.sort();
    rows
}

/// compact_sched: most switches and wakings of a sched trace go to the
/// compact columns, described generic events replace named ones, the file
/// gets smaller, and decoded they are the events `--full-sched
/// --named-generic` writes. `--compress`: the same packets, zlib-compressed.
#[test]
fn compact_sched_and_compressed_packets() {
    let root = common::repo_root();
    let src = root.join("tests/fixtures/tracedat/v6-sched-irq-timer/trace.dat");
    let scratch = tmp("compact");
    let (c, f, z) = (
        scratch.join("c.pftrace"),
        scratch.join("f.pftrace"),
        scratch.join("z.pftrace"),
    );
    convert(&src, &c, "perfetto");
    convert_with(&src, &f, "perfetto", &["--full-sched", "--named-generic"]);
    convert_with(&src, &z, "perfetto", &["--compress"]);
    let (cd, fd, zd) = (
        std::fs::read(&c).unwrap(),
        std::fs::read(&f).unwrap(),
        std::fs::read(&z).unwrap(),
    );
    let (cp, fp) = (packets(&cd), packets(&fd));
    let n_compact: usize = cp
        .iter()
        .filter_map(|p| match &p.data {
            Some(Data::FtraceEvents(b)) => b
                .compact_sched
                .as_ref()
                .map(|c| c.switch_timestamp.len() + c.waking_timestamp.len()),
            _ => None,
        })
        .sum();
    let n_sched = report(&src)
        .iter()
        .filter(|e| e["event"] == "sched_switch" || e["event"] == "sched_waking")
        .count();
    assert!(
        n_compact * 10 >= n_sched * 9,
        "{n_compact} of {n_sched} sched events compact"
    );
    assert!(cd.len() * 3 < fd.len() * 2, "{} vs {}", cd.len(), fd.len());
    assert!(fp.iter().all(|p| match &p.data {
        Some(Data::FtraceEvents(b)) =>
            b.compact_sched.is_none() && b.event.iter().all(|e| e.dense.is_none()),
        _ => true,
    }));
    // common_flags are not in the compact columns: compare without them
    assert_eq!(ftrace_rows(&cp), ftrace_rows(&fp));
    // compressed: the same packets
    assert!(zd.len() * 2 < cd.len(), "{} vs {}", zd.len(), cd.len());
    let mut b = &zd[1..];
    let len = prost::encoding::decode_varint(&mut b).unwrap() as usize;
    let first = TracePacket::decode(&b[..len]).unwrap();
    assert!(matches!(first.data, Some(Data::CompressedPackets(_))));
    let zp = packets(&zd);
    assert!(zp.len() > 1);
    assert_eq!(zp, cp);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// funcgraph_entry/exit name their function through interned kernel
/// symbols defined on the bundles' sequence before use.
#[test]
fn funcgraph_functions_are_interned_kernel_symbols() {
    let root = common::repo_root();
    let src = root.join("tests/fixtures/synthetic/ftrace-v7/trace.dat");
    let scratch = tmp("ksyms");
    let pf = scratch.join("t.pftrace");
    convert(&src, &pf, "perfetto");
    let pk = packets(&std::fs::read(&pf).unwrap());
    let syms = kallsyms(&src);
    assert!(!syms.is_empty());
    let mut names = HashMap::new();
    let mut seen = Vec::new();
    for p in &pk {
        if let Some(i) = &p.interned_data {
            for k in &i.kernel_symbols {
                names.insert(
                    k.iid.unwrap(),
                    String::from_utf8(k.str.clone().unwrap()).unwrap(),
                );
            }
        }
        if let Some(Data::FtraceEvents(b)) = &p.data {
            for e in &b.event {
                if let Some(FtraceKind::FuncgraphEntry(f)) = &e.event {
                    seen.push(names[&f.func.unwrap()].clone());
                }
            }
        }
    }
    let want: Vec<String> = report(&src)
        .iter()
        .filter(|e| e["event"] == "funcgraph_entry")
        .map(|e| symbol_name(&syms, e["fields"]["func"].as_u64().unwrap()))
        .collect();
    assert!(seen.contains(&"vfs_read".to_string()), "{seen:?}");
    let (mut a, mut b) = (seen, want);
    a.sort();
    b.sort();
    assert_eq!(a, b);
    let _ = std::fs::remove_dir_all(&scratch);
}
