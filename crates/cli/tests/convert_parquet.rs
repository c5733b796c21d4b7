//! `convert --to parquet` on every fixture of every format, read back with
//! the `parquet` crate's Arrow reader and compared with `report --json` of
//! the same trace: one row per event in `events` and in its class's table,
//! the same time, CPU and task, and every field of every scope equal to its
//! column (integers, text, lists, byte arrays, structures, variants as
//! `_tag` + option, enumerations as `value` + `label`). The same check
//! with pyarrow, DuckDB and polars lives in tests/convert/check-parquet.sh.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{json, Map, Value};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tracemux-parquet-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> std::process::Output {
    common::tracemux(args, &common::repo_root())
}

fn report(src: &Path) -> Vec<Value> {
    common::report_json(src)
}

fn convert(srcs: &[&Path], out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["convert", "-q", "--force", "--to", "parquet"];
    args.extend(srcs.iter().map(|p| p.to_str().unwrap()));
    args.extend(["-o", out.to_str().unwrap()]);
    args.extend(extra);
    run(&args)
}

/// A table read back: its rows as JSON-like values.
fn read(path: &Path) -> (arrow_schema::SchemaRef, Vec<Map<String, Value>>) {
    let f = std::fs::File::open(path).unwrap();
    let b = ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    let schema = b.schema().clone();
    let mut rows = Vec::new();
    for batch in b.build().unwrap() {
        let batch: RecordBatch = batch.unwrap();
        for i in 0..batch.num_rows() {
            let mut m = Map::new();
            for (f, col) in batch.schema().fields().iter().zip(batch.columns()) {
                m.insert(f.name().clone(), cell(col.as_ref(), i));
            }
            rows.push(m);
        }
    }
    (schema, rows)
}

/// One value of an Arrow array as JSON (binary as an array of bytes).
fn cell(a: &dyn Array, i: usize) -> Value {
    if a.is_null(i) {
        return Value::Null;
    }
    macro_rules! prim {
        ($t:ty) => {
            json!(a.as_primitive::<$t>().value(i))
        };
    }
    match a.data_type() {
        DataType::Int8 => prim!(Int8Type),
        DataType::Int16 => prim!(Int16Type),
        DataType::Int32 => prim!(Int32Type),
        DataType::Int64 => prim!(Int64Type),
        DataType::UInt8 => prim!(UInt8Type),
        DataType::UInt16 => prim!(UInt16Type),
        DataType::UInt32 => prim!(UInt32Type),
        DataType::UInt64 => prim!(UInt64Type),
        DataType::Float32 => prim!(Float32Type),
        DataType::Float64 => prim!(Float64Type),
        DataType::Boolean => json!(a.as_boolean().value(i)),
        DataType::Utf8 => json!(a.as_string::<i32>().value(i)),
        DataType::Binary => json!(a.as_binary::<i32>().value(i)),
        DataType::Dictionary(_, _) => {
            let d = a.as_dictionary::<Int32Type>();
            let k = d.keys().value(i) as usize;
            cell(d.values().as_ref(), k)
        }
        DataType::List(_) => {
            let l = a.as_list::<i32>();
            let v = l.value(i);
            Value::Array((0..v.len()).map(|j| cell(v.as_ref(), j)).collect())
        }
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let mut m = Map::new();
            for (f, c) in fields.iter().zip(s.columns()) {
                m.insert(f.name().clone(), cell(c.as_ref(), i));
            }
            Value::Object(m)
        }
        other => panic!("unexpected column type {other}"),
    }
}

/// `report --json`'s `j` against the column value `p` (see the module
/// documentation for the shapes); differences go to `errs`.
fn same(j: &Value, p: &Value, path: &str, errs: &mut Vec<String>) {
    if errs.len() > 3 {
        return;
    }
    match (j, p) {
        (Value::Object(jo), Value::Object(po)) if jo.len() == 2 && jo.contains_key("labels") => {
            same(&jo["value"], &po["value"], path, errs);
            let labels: Vec<&str> = jo["labels"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap())
                .collect();
            let want = if labels.is_empty() {
                Value::Null
            } else {
                json!(labels.join(","))
            };
            if po["label"] != want {
                errs.push(format!("{path}: label {} != {want}", po["label"]));
            }
        }
        (Value::Object(jo), Value::Object(po)) if po.contains_key("_tag") => {
            let Some((opt, v)) = jo.iter().next() else {
                return errs.push(format!("{path}: empty variant"));
            };
            if po["_tag"] != json!(opt) {
                errs.push(format!("{path}: option {} != {opt}", po["_tag"]));
            } else {
                same(v, po.get(opt).unwrap_or(&Value::Null), path, errs);
            }
        }
        (Value::Object(jo), Value::Object(po)) => {
            for (k, v) in jo {
                match po.get(k) {
                    Some(c) => same(v, c, &format!("{path}.{k}"), errs),
                    None => errs.push(format!("{path}.{k}: no column")),
                }
            }
        }
        (Value::Array(ja), Value::Array(pa)) if ja.len() == pa.len() => {
            for (k, (a, b)) in ja.iter().zip(pa).enumerate() {
                same(a, b, &format!("{path}[{k}]"), errs);
            }
        }
        (Value::Number(a), Value::Number(b)) if a.is_f64() || b.is_f64() => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            if (a - b).abs() > 1e-6 * a.abs().max(1.0) {
                errs.push(format!("{path}: {b} != {a}"));
            }
        }
        (Value::Number(_), Value::Bool(b)) => {
            if j != &json!(u8::from(*b)) {
                errs.push(format!("{path}: {p} != {j}"));
            }
        }
        _ if j == p => {}
        _ => errs.push(format!("{path}: {p} != {j}")),
    }
}

/// Convert `src`, then check every table against `report --json`.
/// Returns the meta.json written and the tables read.
fn check(name: &str, src: &Path, out: &Path) -> (Value, BTreeMap<String, Vec<Map<String, Value>>>) {
    let o = convert(&[src], out, &[]);
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{name}: convert failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    let mut tables = BTreeMap::new();
    for (t, d) in meta["tables"].as_object().unwrap() {
        let (_, rows) = read(&out.join(d["file"].as_str().unwrap()));
        assert_eq!(
            rows.len() as u64,
            d["rows"].as_u64().unwrap(),
            "{name}: {t} rows"
        );
        tables.insert(t.clone(), rows);
    }
    let records = report(src);
    let events: Vec<&Value> = records.iter().filter(|r| r["type"] == "event").collect();
    let lost = records.iter().filter(|r| r["type"] == "lost").count();
    assert_eq!(tables["lost"].len(), lost, "{name}: lost rows");
    let long = &tables["events"];
    assert_eq!(long.len(), events.len(), "{name}: events rows");
    for (i, (r, e)) in long.iter().zip(&events).enumerate() {
        for k in ["ts", "cpu", "pid", "system", "event"] {
            assert_eq!(r[k], e[k], "{name}: events row {i}: {k}");
        }
        let fields: Value = serde_json::from_str(r["fields"].as_str().unwrap()).unwrap();
        assert_eq!(
            &fields,
            e.get("fields").unwrap_or(&json!({})),
            "{name}: row {i}"
        );
    }
    // each class's table, in order
    let mut owner = BTreeMap::new();
    for (t, d) in meta["tables"].as_object().unwrap() {
        if let (Some(s), Some(e)) = (d["system"].as_str(), d["event"].as_str()) {
            owner.insert((s.to_string(), e.to_string()), t.clone());
        }
    }
    let mut at: BTreeMap<String, usize> = BTreeMap::new();
    for e in &events {
        let (Some(s), Some(n)) = (e["system"].as_str(), e["event"].as_str()) else {
            continue;
        };
        let t = &owner[&(s.to_string(), n.to_string())];
        let k = at.entry(t.clone()).or_default();
        let r = &tables[t][*k];
        *k += 1;
        for c in ["ts", "cpu", "pid"] {
            assert_eq!(r[c], e[c], "{name}: {t} row {k}: {c}");
        }
        let mut errs = Vec::new();
        for (scope, obj) in e.as_object().unwrap() {
            if scope == "fields" {
                for (f, v) in obj.as_object().unwrap() {
                    let col = format!("field_{f}");
                    let c = r.get(&col).or_else(|| r.get(f));
                    match c {
                        Some(c) => same(v, c, f, &mut errs),
                        None => errs.push(format!("{f}: no column")),
                    }
                }
            } else if scope.ends_with("_context") {
                same(obj, r.get(scope).unwrap_or(&json!({})), scope, &mut errs);
            }
        }
        assert!(errs.is_empty(), "{name}: {t} row {k}: {errs:?}");
    }
    for (t, n) in &at {
        assert_eq!(tables[t].len(), *n, "{name}: {t} has rows of no event");
    }
    (meta, tables)
}

#[test]
fn every_fixture_as_tables() {
    let scratch = tmp("all");
    let mut n = 0;
    for (name, src, _) in common::every_fixture(&scratch) {
        if report(&src).is_empty() {
            continue;
        }
        check(&name, &src, &scratch.join("out").join(&name));
        n += 1;
    }
    assert!(n >= 40, "only {n} fixtures checked");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The column types each format's classes get.
#[test]
fn table_schemas() {
    let scratch = tmp("schemas");
    let root = common::repo_root().join("tests/fixtures");
    let schema = |src: &Path, out: &str, table: &str| -> String {
        let dir = scratch.join(out);
        if !dir.exists() {
            let o = convert(&[src], &dir, &[]);
            assert!(o.status.code().is_some_and(|c| c <= 1));
        }
        let (s, _) = read(&dir.join(format!("{table}.parquet")));
        s.fields()
            .iter()
            .map(|f| format!("{}:{}", f.name(), f.data_type()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    // trace.dat: ftrace's fixed layouts, common_* fields as a structure
    let td = root.join("tracedat/v6-sched-irq-timer/trace.dat");
    let s = schema(&td, "td", "sched__sched_switch");
    assert!(
        s.starts_with(
            "ts:Int64 cpu:UInt32 pid:Int32 comm:Dictionary(Int32, Utf8) common_context:Struct("
        ),
        "{s}"
    );
    assert!(s.contains("prev_comm:Utf8 prev_pid:Int32 prev_prio:Int32 prev_state:Int64 next_comm:Utf8 next_pid:Int32"), "{s}");
    // a payload field named like a common column keeps its value
    let s = schema(&td, "td", "sched__sched_wakeup");
    assert!(s.contains("field_comm:Utf8 field_pid:Int32"), "{s}");
    // trace.dat with instances: the buffer column
    let s = schema(
        &root.join("tracedat/v7-instance-B/trace.dat"),
        "inst",
        "events",
    );
    assert!(s.contains("buffer:Dictionary(Int32, Utf8)"), "{s}");
    // CTF (LTTng-UST): stream, the contexts as structures, typed payload
    let ctf = root.join("ctf/lttng-ust-pid/trace");
    let o = convert(&[&ctf], &scratch.join("ctf"), &[]);
    assert!(o.status.success());
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(scratch.join("ctf/meta.json")).unwrap())
            .unwrap();
    let cols: Vec<String> = meta["tables"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|t| t["columns"].as_array().unwrap().clone())
        .map(|c| {
            format!(
                "{}:{}",
                c["name"].as_str().unwrap(),
                c["type"].as_str().unwrap()
            )
        })
        .collect();
    assert!(cols.iter().any(|c| c == "stream:UInt32"), "{cols:?}");
    assert!(
        cols.iter().any(|c| c.starts_with("common_context:Struct(")
            || c.starts_with("specific_context:Struct(")),
        "{cols:?}"
    );
    // uftrace: arguments as a list of variants, the return value optional
    let uf = root.join("uftrace/corpus/pg-args-retval/uftrace.data");
    let s = schema(&uf, "uf", "uftrace__entry");
    assert!(s.contains("args:List("), "{s}");
    assert!(s.contains("_tag"), "{s}");
    let s = schema(&uf, "uf", "uftrace__exit");
    assert!(s.contains("retval:"), "{s}");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A row's `comm` is the task's name at that time: a `sched_switch` row
/// is its previous task's, whose name the event itself gives.
#[test]
fn comm_over_time() {
    let scratch = tmp("comm");
    let src = common::repo_root().join("tests/fixtures/tracedat/v6-sched-irq-timer/trace.dat");
    let (meta, tables) = check("v6", &src, &scratch.join("v6"));
    let sw = &tables["sched__sched_switch"];
    assert!(sw.len() > 100);
    for (i, r) in sw.iter().enumerate() {
        if r["prev_pid"] != json!(0) {
            assert_eq!(r["comm"], r["prev_comm"], "row {i}");
        }
    }
    // the trace has tasks that changed name (fork, then exec)
    assert!(meta["comm_changes"].as_u64().unwrap() > 0);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Several traces: one Hive-partitioned dataset, a partition per trace
/// (traces of several formats with `--partition`: without it they are one
/// timeline, `crates/cli/tests/timeline.rs`).
#[test]
fn hive_partitions() {
    let scratch = tmp("hive");
    let root = common::repo_root().join("tests/fixtures");
    let a = root.join("tracedat/v6-sched-irq-timer/trace.dat");
    let b = root.join("tracedat/v7-instance-B/trace.dat");
    let c = root.join("ctf/lttng-ust-pid/trace");
    let out = scratch.join("ds");
    let o = convert(&[&a, &b, &c], &out, &["--partition"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for t in ["v6-sched-irq-timer", "v7-instance-B", "trace"] {
        let p = out.join(format!("events/trace={t}/part-0.parquet"));
        assert!(p.exists(), "{}", p.display());
        assert!(out.join(format!("_meta/{t}.json")).exists());
    }
    let (_, rows) = read(&out.join("sched__sched_switch/trace=v6-sched-irq-timer/part-0.parquet"));
    let want = report(&a)
        .iter()
        .filter(|r| r["event"] == "sched_switch")
        .count();
    assert_eq!(rows.len(), want);
    // one trace with --partition
    let o = convert(&[&a], &scratch.join("one"), &["--partition"]);
    assert!(o.status.success());
    assert!(scratch
        .join("one/events/trace=v6-sched-irq-timer/part-0.parquet")
        .exists());
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `--no-events-table`: the class tables and `lost` as without it, no
/// `events` table, and `meta.json` does not list one.
#[test]
fn without_the_events_table() {
    let scratch = tmp("no-events");
    let src = common::repo_root().join("tests/fixtures/tracedat/v7-lost-events/trace.dat");
    let (all, with) = (scratch.join("all"), scratch.join("classes"));
    assert!(convert(&[&src], &all, &[]).status.success());
    let o = convert(&[&src], &with, &["--no-events-table"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(all.join("events.parquet").exists());
    assert!(!with.join("events.parquet").exists());
    let names = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "events.parquet")
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&all), names(&with));
    for n in names(&with).iter().filter(|n| n.ends_with(".parquet")) {
        assert_eq!(read(&all.join(n)).1, read(&with.join(n)).1, "{n}");
    }
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(with.join("meta.json")).unwrap()).unwrap();
    assert!(meta["tables"].get("events").is_none());
    assert!(meta["tables"]["lost"]["rows"].as_u64().unwrap() > 0);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Damage: what can be read is written, the damage is in meta.json, and
/// `--strict` refuses.
#[test]
fn damaged_input() {
    let scratch = tmp("damage");
    let src = common::repo_root().join("tests/fixtures/tracedat/v6-sched-irq-timer/trace.dat");
    let mut bytes = std::fs::read(&src).unwrap();
    let n = bytes.len();
    // the records are at the end (kallsyms, before them, is large)
    bytes.truncate(n - n / 10);
    let cut = scratch.join("cut.dat");
    std::fs::write(&cut, &bytes).unwrap();
    let out = scratch.join("cut");
    let o = convert(&[&cut], &out, &[]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    assert!(meta["damage"]["count"].as_u64().unwrap() > 0, "{meta}");
    assert!(meta["events"].as_u64().unwrap() > 1000);
    let o = convert(&[&cut], &scratch.join("strict"), &["--strict"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cut.dat"));
    assert!(!scratch.join("strict").exists());
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The stored result of tests/convert/check-parquet.sh (pyarrow, DuckDB,
/// polars) says every fixture passed and the mutations were noticed.
#[test]
fn oracle_results_stored() {
    let p = common::repo_root().join("tests/fixtures/convert/parquet-oracle.txt");
    let text = std::fs::read_to_string(p).expect("parquet-oracle.txt");
    let last = text.lines().last().unwrap();
    assert!(last.contains(" 0 failed"), "{last}");
    let ok = text.lines().filter(|l| l.contains(": OK")).count();
    assert!(ok >= 40, "{ok} fixtures passed");
    assert!(text.contains("mutation drop: detected"));
    assert!(text.contains("mutation field: detected"));
    assert!(text.contains("hive dataset of 3 traces: OK"));
}

/// The stored result of tests/sql/check-sql.sh (`tracemux sql` against
/// DuckDB on the Parquet output; it needs the feature `sql` and DuckDB,
/// so it is not run here): every fixture's queries agreed, and the big
/// trace's query gave the same rows.
#[test]
fn sql_oracle_results_stored() {
    let p = common::repo_root().join("tests/fixtures/sql/oracle.txt");
    let text = std::fs::read_to_string(p).expect("tests/fixtures/sql/oracle.txt");
    for name in [
        "tracedat-v7-clock-global",
        "ctf-perf-data-convert-sched",
        "uftrace-pg-threads-fork",
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} missing"));
        assert!(line.contains(": OK ("), "{line}");
    }
    assert!(!text.contains("FAIL") && !text.contains("DIFFERENT"));
    assert!(text.contains("results: same rows"));
}

/// The stored result of tests/spark/check-spark.sh (PySpark `local[2]`;
/// not run here): the traces of tests/spark/fixtures.txt converted now
/// into one shared dataset hold, per table and trace, the rows Spark read
/// (the writer's counts in `_meta/NAME.json`), and Spark read every table
/// and the Hive dataset's sched_switch with one Int64 `prev_state`.
#[test]
fn spark_result_stored() {
    let root = common::repo_root();
    let text = std::fs::read_to_string(root.join("tests/fixtures/spark/spark-result.txt"))
        .expect("tests/fixtures/spark/spark-result.txt");
    assert!(text.lines().last().unwrap().ends_with(": OK"), "{text}");
    assert!(text.contains("hive sched__sched_switch: prev_state bigint"));
    let list = std::fs::read_to_string(root.join("tests/spark/fixtures.txt")).unwrap();
    let srcs: Vec<PathBuf> = list
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .map(|l| root.join(l))
        .collect();
    let srcs: Vec<&Path> = srcs.iter().map(|p| p.as_path()).collect();
    let out = tmp("spark").join("ds");
    let o = convert(&srcs, &out, &["--layout", "shared"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("_SUCCESS").exists());
    let mut want = Vec::new();
    for e in std::fs::read_dir(out.join("_meta")).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().unwrap().to_string_lossy().starts_with('_') {
            continue;
        }
        let desc: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(desc["layout"], "shared");
        assert_eq!(desc["schema"], "portable");
        let trace = desc["trace"].as_str().unwrap().to_string();
        for (table, d) in desc["tables"].as_object().unwrap() {
            let n = d["rows"].as_u64().unwrap();
            if n > 0 {
                want.push(format!("rows {table} {trace} {n}"));
            }
        }
    }
    want.sort();
    let mut got: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("rows "))
        .map(|l| l.to_string())
        .collect();
    got.sort();
    assert_eq!(got, want);
    let _ = std::fs::remove_dir_all(out.parent().unwrap());
}

/// What `tests/spark/check_spark_module.py` (tracemux.spark on Spark,
/// with workers killed; run by `tests/spark/check-spark.sh`) found, stored:
/// every check passed, and each fixture's event count in its summary is
/// what `report --json` gives today (a reader that changes a count makes
/// the stored result stale: run the script again).
#[test]
fn spark_module_result_stored() {
    let root = common::repo_root();
    let text = std::fs::read_to_string(root.join("tests/fixtures/spark/spark-module-result.txt"))
        .expect("tests/fixtures/spark/spark-module-result.txt");
    assert_eq!(text.lines().last(), Some("tracemux.spark: OK"), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("FAIL")), "{text}");
    for what in [
        "killed, after staging",
        "killed, after publishing",
        "DuckDB reads",
        "polars reads",
        "in tracemux sql over each trace",
    ] {
        assert!(
            text.lines()
                .any(|l| l.starts_with("ok ") && l.contains(what)),
            "{what}: {text}"
        );
    }
    let list = std::fs::read_to_string(root.join("tests/spark/fixtures.txt")).unwrap();
    let mut srcs: Vec<PathBuf> = list
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .map(|l| root.join(l))
        .collect();
    srcs.push(root.join("tests/fixtures/ctf2/auto-translated--pass-all-basic-features-be/trace"));
    srcs.push(root.join("tests/fixtures/perf/syscalls/perf.data"));
    // "  NAME: ok events=N damaged=0", in the order of the inputs
    let summary: Vec<(String, u64)> = text
        .lines()
        .skip_while(|l| *l != "summary (A):")
        .skip(1)
        .take(srcs.len())
        .map(|l| {
            let (name, rest) = l.trim().split_once(": ").unwrap();
            assert!(rest.starts_with("ok events="), "{l}");
            let n = rest["ok events=".len()..].split(' ').next().unwrap();
            (name.to_string(), n.parse().unwrap())
        })
        .collect();
    assert_eq!(summary.len(), srcs.len());
    for (src, (name, n)) in srcs.iter().zip(&summary) {
        let events = report(src).iter().filter(|r| r["type"] == "event").count() as u64;
        assert_eq!(events, *n, "{name}: {}", src.display());
    }
}
