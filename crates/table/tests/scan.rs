//! The scanner on trace.dat fixtures: its tables and schemas are the
//! Parquet writer's, a full scan gives the rows the writer wrote, and
//! projection, filters, limit and batch size do what they say.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, UInt32Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use tracemux_core::model::{RecordSource, TraceMeta};
use tracemux_table::{tables, Scan, ScanSpec, TablesWriter, WriteOptions};
use tracemux_tracedat::reader::{ReadOptions, Reader};
use tracemux_tracedat::TraceDat;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel)
        .join("trace.dat")
}

/// Run `f` on the records of a trace.dat fixture.
fn with_source<T>(rel: &str, f: impl FnOnce(&mut dyn RecordSource) -> T) -> T {
    let data = std::fs::read(fixture(rel)).unwrap();
    let t = TraceDat::parse(&data, false).unwrap();
    let mut r = Reader::new(&t, &ReadOptions::default()).unwrap();
    f(&mut r)
}

fn meta(rel: &str) -> TraceMeta {
    with_source(rel, |s| s.meta().clone())
}

/// Scan with `spec`: the batches and the scan (for its counters).
fn scan(rel: &str, spec: &ScanSpec) -> (Vec<RecordBatch>, Scan) {
    with_source(rel, |src| {
        let mut s = Scan::new(src.meta(), spec).unwrap();
        let mut out = Vec::new();
        s.run(src, &mut |b| {
            out.push(b);
            true
        })
        .unwrap();
        (out, s)
    })
}

fn concat(schema: &SchemaRef, b: &[RecordBatch]) -> RecordBatch {
    arrow_select::concat::concat_batches(schema, b).unwrap()
}

fn column_names(schema: &SchemaRef) -> Vec<String> {
    schema.fields().iter().map(|f| f.name().clone()).collect()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tracemux-scan-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Every table the writer writes has the scanner's schema and rows.
#[test]
fn full_scans_equal_the_parquet_files() {
    for rel in [
        "tracedat/v7-clock-global",
        "tracedat/v7-lost-events",
        "synthetic/instances-v6",
    ] {
        let dir = tmp(&rel.replace('/', "-"));
        let m = meta(rel);
        with_source(rel, |src| {
            let mut w = TablesWriter::new(&dir, &m, WriteOptions::default()).unwrap();
            while let Some(rec) = src.next_record().unwrap() {
                match rec {
                    tracemux_core::model::Record::Event(ev) => w.event(&m, &ev).unwrap(),
                    tracemux_core::model::Record::Lost(l) => w.lost(&m, &l).unwrap(),
                    tracemux_core::model::Record::Damage(_) => {}
                }
            }
            w.finish(&m).unwrap();
        });
        let listed = tables(&m);
        let mut files = 0;
        for (name, schema) in &listed {
            let path = dir.join(format!("{name}.parquet"));
            if !path.exists() {
                // a class without events: no file, no rows
                let (b, _) = scan(rel, &ScanSpec::table(name));
                assert!(b.is_empty(), "{rel} {name}");
                continue;
            }
            files += 1;
            let f = std::fs::File::open(&path).unwrap();
            let reader = ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
            assert_eq!(reader.schema().as_ref(), schema.as_ref(), "{rel} {name}");
            let written: Vec<RecordBatch> = reader.build().unwrap().map(|b| b.unwrap()).collect();
            let (scanned, s) = scan(rel, &ScanSpec::table(name));
            assert_eq!(&s.schema(), schema, "{rel} {name}");
            assert_eq!(
                concat(schema, &written),
                concat(schema, &scanned),
                "{rel} {name}"
            );
        }
        assert!(files >= 3, "{rel}: {files} tables written");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn schemas_come_from_the_metadata() {
    let m = meta("tracedat/v7-clock-global");
    let t = tables(&m);
    let (_, s) = t
        .iter()
        .find(|(n, _)| n == "sched__sched_switch")
        .expect("sched_switch table");
    let cols: Vec<(&str, DataType)> = s
        .fields()
        .iter()
        .map(|f| (f.name().as_str(), f.data_type().clone()))
        .collect();
    let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
    assert_eq!(cols[0], ("ts", DataType::Int64));
    assert_eq!(cols[1], ("cpu", DataType::UInt32));
    assert_eq!(cols[2], ("pid", DataType::Int32));
    assert_eq!(cols[3], ("comm", dict.clone()));
    assert!(matches!(cols[4], ("common_context", DataType::Struct(_))));
    // the payload, as the kernel's format file declares it
    let payload: Vec<_> = cols[5..].iter().map(|(n, _)| *n).collect();
    assert_eq!(
        payload,
        [
            "prev_comm",
            "prev_pid",
            "prev_prio",
            "prev_state",
            "next_comm",
            "next_pid",
            "next_prio"
        ]
    );
    assert_eq!(cols[6].1, DataType::Int32);
    assert_eq!(cols[8].1, DataType::Int64);
    let names: Vec<&str> = t.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.ends_with(&["events", "lost"]));
    // one table per class, names unique
    assert_eq!(names.len(), m.classes.len() + 2);
    assert_eq!(names.iter().collect::<BTreeSet<_>>().len(), names.len());
}

#[test]
fn projection_decodes_only_what_is_asked() {
    let rel = "tracedat/v7-clock-global";
    let table = "sched__sched_switch";
    let (all, full) = scan(rel, &ScanSpec::table(table));
    let rows: usize = all.iter().map(|b| b.num_rows()).sum();
    assert!(rows > 1000, "{rows}");
    // every field of every row: 7 payload fields, 4 common_* ones
    assert_eq!(full.visited(), rows as u64 * 11);
    let spec = ScanSpec {
        columns: Some(vec!["next_pid".into(), "ts".into()]),
        ..ScanSpec::table(table)
    };
    let (some, s) = scan(rel, &spec);
    assert_eq!(s.visited(), rows as u64, "one value a row");
    let b = concat(&s.schema(), &some);
    assert_eq!(
        column_names(&b.schema()),
        ["ts", "next_pid"],
        "the table's order"
    );
    let a = concat(&full.schema(), &all);
    assert_eq!(b.column(0), a.column_by_name("ts").unwrap());
    assert_eq!(b.column(1), a.column_by_name("next_pid").unwrap());
    // no column at all: rows only (count(*))
    let spec = ScanSpec {
        columns: Some(vec![]),
        ..ScanSpec::table(table)
    };
    let (none, s) = scan(rel, &spec);
    assert_eq!(s.visited(), 0);
    assert_eq!(none.iter().map(|b| b.num_rows()).sum::<usize>(), rows);
}

#[test]
fn filters_limit_and_batches() {
    let rel = "tracedat/v7-clock-global";
    let table = "sched__sched_wakeup";
    let (all, full) = scan(rel, &ScanSpec::table(table));
    let a = concat(&full.schema(), &all);
    let ts = a.column_by_name("ts").unwrap().as_primitive::<Int64Type>();
    let cpu = a
        .column_by_name("cpu")
        .unwrap()
        .as_primitive::<UInt32Type>();
    let pid = a.column_by_name("pid").unwrap().as_primitive::<Int32Type>();
    let n = a.num_rows();
    let (lo, hi) = (ts.value(n / 4), ts.value(n / 2));
    let some_pid = pid.value(n / 3);
    let want = (0..n)
        .filter(|&i| ts.value(i) >= lo && ts.value(i) <= hi && cpu.value(i) == 1)
        .count();
    let spec = ScanSpec {
        ts_min: Some(lo),
        ts_max: Some(hi),
        cpus: Some(vec![1]),
        ..ScanSpec::table(table)
    };
    let (b, _) = scan(rel, &spec);
    let b = concat(&full.schema(), &b);
    assert_eq!(b.num_rows(), want);
    assert!(want > 0 && want < n);
    let bt = b.column_by_name("ts").unwrap().as_primitive::<Int64Type>();
    let bc = b
        .column_by_name("cpu")
        .unwrap()
        .as_primitive::<UInt32Type>();
    assert!((0..want).all(|i| bt.value(i) >= lo && bt.value(i) <= hi && bc.value(i) == 1));
    let spec = ScanSpec {
        pids: Some(vec![some_pid]),
        ..ScanSpec::table(table)
    };
    let (b, _) = scan(rel, &spec);
    let want = (0..n).filter(|&i| pid.value(i) == some_pid).count();
    assert_eq!(b.iter().map(|b| b.num_rows()).sum::<usize>(), want);
    // a limit stops the scan early
    let spec = ScanSpec {
        limit: Some(10),
        ..ScanSpec::table(table)
    };
    let (b, s) = scan(rel, &spec);
    assert!(s.is_done());
    assert_eq!(b.len(), 1);
    assert_eq!(b[0], a.slice(0, 10));
    assert!(s.records() < full.records() / 10, "{}", s.records());
    // batch size
    let spec = ScanSpec {
        batch_rows: 100,
        ..ScanSpec::table(table)
    };
    let (b, _) = scan(rel, &spec);
    assert!(b[..b.len() - 1].iter().all(|b| b.num_rows() == 100));
    assert_eq!(concat(&full.schema(), &b), a);
}

#[test]
fn events_lost_and_errors() {
    let rel = "tracedat/v7-lost-events";
    let (lost, s) = scan(rel, &ScanSpec::table("lost"));
    assert_eq!(
        column_names(&s.schema()),
        ["ts", "cpu", "pid", "comm", "count"]
    );
    let lost = concat(&s.schema(), &lost);
    assert!(lost.num_rows() > 0);
    assert_eq!(
        lost.column_by_name("pid").unwrap().null_count(),
        lost.num_rows()
    );
    let spec = ScanSpec {
        columns: Some(vec!["event".into()]),
        ..ScanSpec::table("events")
    };
    let (ev, s) = scan(rel, &spec);
    let ev = concat(&s.schema(), &ev);
    assert_eq!(s.visited(), 0, "the long table's JSON was not asked for");
    let events = with_source(rel, |src| {
        let mut n = 0;
        while let Some(r) = src.next_record().unwrap() {
            n += matches!(r, tracemux_core::model::Record::Event(_)) as usize;
        }
        n
    });
    assert_eq!(ev.num_rows(), events);
    let m = meta(rel);
    let e = Scan::new(&m, &ScanSpec::table("nope")).err().unwrap();
    assert_eq!(e.to_string(), "no table \"nope\" in this trace");
    let spec = ScanSpec {
        columns: Some(vec!["ts".into(), "bogus".into()]),
        ..ScanSpec::table("events")
    };
    let e = Scan::new(&m, &spec).err().unwrap();
    assert_eq!(e.to_string(), "table events: no column \"bogus\"");
}
