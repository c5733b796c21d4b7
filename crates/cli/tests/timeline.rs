//! Several traces of several formats as one timeline (issue 38), on the
//! recordings of `tests/fixtures/timeline/` (trace-cmd with `-C mono` and
//! with its default `local` clock, LTTng-UST and uftrace, recorded at
//! once): the merged stream is in time order; each input's events are all
//! there, in its own order, shifted by one constant; at least 98% of the
//! user-space events of each thread fall inside an interval where the
//! kernel ran that thread (and a 1 ms misalignment breaks that); inputs
//! that share no clock and no events are refused, naming `--clock-offset`.
//! `tests/fixtures/timeline/check.py` makes the same checks on a new
//! recording.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{repo_root, tracemux};
use serde_json::Value;

fn set(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures/timeline").join(name)
}

fn inputs(dir: &Path) -> [String; 3] {
    ["trace.dat", "lttng", "uftrace.data"].map(|n| dir.join(n).display().to_string())
}

fn json_lines(args: &[&str]) -> Vec<Value> {
    let out = tracemux(args, &repo_root());
    assert!(
        out.status.success(),
        "tracemux {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The line without its `ts` and `input`: what must be the same alone and
/// merged.
fn body(v: &Value) -> Value {
    let mut v = v.clone();
    let o = v.as_object_mut().unwrap();
    o.remove("ts");
    o.remove("input");
    v
}

fn ts(v: &Value) -> u64 {
    v["ts"].as_u64().unwrap()
}

/// The share of user-space events (not the kernel's, not uftrace's own
/// scheduler records) of each thread that fall inside an interval where
/// the kernel ran that thread, with the user events moved by `skew` ns;
/// events outside the kernel trace's time span are not counted.
pub fn contained(lines: &[Value], kernel: &str, skew: i64) -> (usize, usize) {
    let mut open: HashMap<i64, u64> = HashMap::new();
    let mut seen: HashMap<i64, ()> = HashMap::new();
    let mut running: HashMap<i64, Vec<(u64, u64)>> = HashMap::new();
    let k: Vec<&Value> = lines.iter().filter(|v| v["input"] == kernel).collect();
    let (start, end) = (ts(k[0]), ts(k[k.len() - 1]));
    for v in &k {
        if v["event"] != "sched_switch" {
            continue;
        }
        let t = ts(v);
        let prev = v["fields"]["prev_pid"].as_i64().unwrap();
        let next = v["fields"]["next_pid"].as_i64().unwrap();
        let from = match open.remove(&prev) {
            Some(f) => Some(f),
            None if !seen.contains_key(&prev) => Some(start),
            None => None,
        };
        if let Some(f) = from {
            running.entry(prev).or_default().push((f, t));
        }
        seen.insert(prev, ());
        seen.insert(next, ());
        open.insert(next, t);
    }
    for (tid, f) in open {
        running.entry(tid).or_default().push((f, end));
    }
    let (mut inside, mut all) = (0, 0);
    for v in lines {
        if v["input"] == kernel || v["type"] != "event" || v["system"] == "linux" {
            continue;
        }
        let t = ts(v) as i64 + skew;
        if t < start as i64 || t > end as i64 {
            continue;
        }
        all += 1;
        let tid = v["pid"].as_i64().unwrap();
        if running
            .get(&tid)
            .is_some_and(|iv| iv.iter().any(|&(a, b)| a as i64 <= t && t <= b as i64))
        {
            inside += 1;
        }
    }
    (inside, all)
}

fn check_set(name: &str) -> String {
    let dir = set(name);
    let ins = inputs(&dir);
    let mut args = vec!["report", "--json"];
    args.extend(ins.iter().map(String::as_str));
    let merged = json_lines(&args);
    // time order
    for w in merged.windows(2) {
        assert!(ts(&w[0]) <= ts(&w[1]), "{name}: out of order at {}", w[1]);
    }
    // each input all there, in its own order, shifted by one constant
    for inp in &ins {
        let alone = json_lines(&["report", "--json", inp]);
        let mine: Vec<&Value> = merged.iter().filter(|v| v["input"] == **inp).collect();
        assert_eq!(mine.len(), alone.len(), "{name}: {inp} events");
        assert!(!alone.is_empty());
        let shift = ts(mine[0]) as i128 - ts(&alone[0]) as i128;
        for (m, a) in mine.iter().zip(&alone) {
            let d = ts(m) as i128 - ts(a) as i128;
            assert_eq!(d, shift, "{name}: {inp} shift");
            let mut m = body(m);
            // a name the input does not know may come from another input
            // (the kernel's saved command lines)
            if a["comm"].is_null() {
                m["comm"] = Value::Null;
            }
            assert_eq!(m, body(a), "{name}: {inp}");
        }
    }
    // containment
    let (inside, all) = contained(&merged, &ins[0], 0);
    assert!(all > 400, "{name}: {all} user events counted");
    assert!(
        inside * 100 >= all * 98,
        "{name}: {inside} of {all} user events inside a running interval"
    );
    for skew in [1_000_000i64, -1_000_000] {
        let (bad, all) = contained(&merged, &ins[0], skew);
        assert!(
            bad * 100 < all * 90,
            "{name}: {bad} of {all} still inside when {skew} ns off"
        );
    }
    let mut args = vec!["info"];
    args.extend(ins.iter().map(String::as_str));
    let out = tracemux(&args, &repo_root());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn mono_recording_lines_up_by_its_clocks() {
    let info = check_set("mono");
    // every input on CLOCK_MONOTONIC: no estimate
    assert_eq!(info.matches("same clock as input 0").count(), 2, "{info}");
    assert!(!info.contains("estimated"), "{info}");
}

#[test]
fn local_clock_recording_is_placed_by_estimates() {
    let info = check_set("local");
    assert!(info.contains("trace_clock local"), "{info}");
    // uftrace by its sched-out records, then LTTng exact against it (the
    // same clock: the best estimate is taken first, then the same-clock
    // rule)
    assert!(info.contains("from sched-out pairs"), "{info}");
    assert!(info.contains("same clock as input 2"), "{info}");
    // LTTng alone against the local-clock kernel: by running intervals,
    // its epoch offset told apart from what the clocks differ by
    let d = set("local");
    let (k, l) = (d.join("trace.dat"), d.join("lttng"));
    let out = tracemux(
        &["info", k.to_str().unwrap(), l.to_str().unwrap()],
        &repo_root(),
    );
    let two = String::from_utf8_lossy(&out.stdout);
    assert!(two.contains("from running intervals"), "{two}");
    assert!(
        two.contains("once their stated offsets are taken out"),
        "{two}"
    );
}

#[test]
fn given_offset_overrides_and_unrelated_inputs_are_refused() {
    let k = set("local").join("trace.dat").display().to_string();
    let perf = repo_root()
        .join("tests/fixtures/perf/tp-sched/perf.data")
        .display()
        .to_string();
    let out = tracemux(&["report", "--json", &k, &perf], &repo_root());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("--clock-offset {perf}=NS")), "{err}");
    let given = format!("{perf}=-5");
    let alone = json_lines(&["report", "--json", &perf]);
    let merged = json_lines(&["report", "--json", &k, &perf, "--clock-offset", &given]);
    let mine: Vec<&Value> = merged.iter().filter(|v| v["input"] == *perf).collect();
    assert_eq!(mine.len(), alone.len());
    for (m, a) in mine.iter().zip(&alone) {
        assert_eq!(ts(m) as i128, ts(a) as i128 - 5);
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tracemux-timeline-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Parquet and CTF of a timeline say where each event comes from and how
/// each input was placed: Parquet an `input` column in every table and the
/// inputs (clock, shift, estimate with its pairs and spread) in `meta.json`;
/// CTF the inputs in its environment, each input's streams named after it,
/// and every event read back.
#[test]
fn conversions_say_their_inputs() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = set("local");
    let ins = inputs(&dir);
    let tmp = scratch("conv");
    let pq = tmp.join("out.parquet");
    let mut args = vec!["convert", "-q", "--to", "parquet"];
    args.extend(ins.iter().map(String::as_str));
    args.extend(["-o", pq.to_str().unwrap()]);
    let out = tracemux(&args, &repo_root());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(pq.join("meta.json")).unwrap()).unwrap();
    let inp = meta["inputs"].as_array().unwrap();
    assert_eq!(inp.len(), 3);
    for (i, x) in inp.iter().enumerate() {
        assert_eq!(x["name"], ins[i].as_str());
    }
    assert_eq!(inp[0]["placed"]["how"], "reference");
    assert_eq!(inp[0]["clock"]["name"], "local");
    let e = &inp[2]["placed"];
    assert_eq!(e["how"], "estimated", "{e}");
    assert_eq!(e["method"], "sched-out pairs");
    assert!(e["pairs"].as_u64().unwrap() >= 3, "{e}");
    assert!(e["spread_ns"].as_u64().unwrap() < 20_000, "{e}");
    assert_eq!(inp[2]["shift_ns"], e["offset_ns"]);
    assert_eq!(inp[1]["placed"]["how"], "same clock");
    let mut rows = 0;
    for f in std::fs::read_dir(&pq).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_none_or(|x| x != "parquet") {
            continue;
        }
        let r = SerializedFileReader::new(std::fs::File::open(&p).unwrap()).unwrap();
        let m = r.metadata().file_metadata();
        assert!(
            m.schema_descr()
                .columns()
                .iter()
                .any(|c| c.name() == "input"),
            "{}",
            p.display()
        );
        if p.file_name().unwrap() == "events.parquet" {
            rows = m.num_rows();
        }
    }
    let merged = {
        let mut a = vec!["report", "--json"];
        a.extend(ins.iter().map(String::as_str));
        json_lines(&a)
    };
    assert_eq!(rows as usize, merged.len());

    let ctf = tmp.join("out.ctf");
    let mut args = vec!["convert", "-q", "--to", "ctf"];
    args.extend(ins.iter().map(String::as_str));
    args.extend(["-o", ctf.to_str().unwrap()]);
    let out = tracemux(&args, &repo_root());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(ctf.join("metadata")).unwrap();
    for (i, x) in ins.iter().enumerate() {
        assert!(md.contains(&format!("input{i} = \"{x}\";")), "{md}");
        assert!(md.contains(&format!("input{i}_shift_ns = ")), "{md}");
        let named = std::fs::read_dir(&ctf).unwrap().any(|f| {
            f.unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(&format!("input{i}_"))
        });
        assert!(named, "no stream file of input {i}");
    }
    assert!(
        md.contains("input2_placed = \"estimated against input 0"),
        "{md}"
    );
    // every event back, of the same classes, at the same times
    let back = json_lines(&["report", "--json", ctf.to_str().unwrap()]);
    assert_eq!(back.len(), merged.len());
    let key = |v: &Value| (ts(v), v["system"].to_string(), v["event"].to_string());
    let mut a: Vec<_> = back.iter().map(key).collect();
    let mut b: Vec<_> = merged.iter().map(key).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Several trace.dat as arguments are one timeline too (trace-cmd's own
/// merge is `-i A -i B`): two kernels of different clocks and no shared
/// events are refused naming `--clock-offset`, and read with it; an
/// argument that is not a trace is an error, never dropped.
#[test]
fn several_tracedat_arguments_are_a_timeline_or_an_error() {
    let m = set("mono").join("trace.dat").display().to_string();
    let l = set("local").join("trace.dat").display().to_string();
    let out = tracemux(&["report", &m, &l], &repo_root());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("--clock-offset {l}=NS")), "{err}");
    let given = format!("{l}=7");
    let merged = json_lines(&["report", &m, &l, "--clock-offset", &given]);
    let alone_m = json_lines(&["report", "--json", &m]);
    let alone_l = json_lines(&["report", "--json", &l]);
    assert_eq!(merged.len(), alone_m.len() + alone_l.len());
    assert_eq!(
        merged.iter().filter(|v| v["input"] == *l).count(),
        alone_l.len()
    );
    for bad in ["/nonexistent/trace.dat", "README.md"] {
        let out = tracemux(&["report", &m, bad], &repo_root());
        assert!(!out.status.success(), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(bad), "{err}");
    }
}
