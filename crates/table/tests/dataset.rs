//! Datasets: traces of several kernels in shared files with one schema
//! (the portable schema), files rolled at a size, the `_SUCCESS` marker.

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use tracemux_core::model::{Record, RecordSource};
use tracemux_table::{Dataset, Layout, TablesWriter, WriteOptions};
use tracemux_tracedat::reader::{ReadOptions, Reader};
use tracemux_tracedat::TraceDat;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel)
        .join("trace.dat")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tracemux-ds-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Write fixture `rel` with `w`; its number of `sched_switch` events.
fn write(
    rel: &str,
    w: impl FnOnce(&tracemux_core::model::TraceMeta) -> TablesWriter,
) -> (TablesWriter, tracemux_core::model::TraceMeta, usize) {
    let data = std::fs::read(fixture(rel)).unwrap();
    let t = TraceDat::parse(&data, false).unwrap();
    let mut src = Reader::new(&t, &ReadOptions::default()).unwrap();
    let m = src.meta().clone();
    let mut w = w(&m);
    let mut switches = 0;
    while let Some(rec) = src.next_record().unwrap() {
        match rec {
            Record::Event(ev) => {
                if ev.class.is_some_and(|c| c.name == "sched_switch") {
                    switches += 1;
                }
                w.event(&m, &ev).unwrap()
            }
            Record::Lost(l) => w.lost(&m, &l).unwrap(),
            Record::Damage(_) => {}
        }
    }
    (w, m, switches)
}

fn rows_of(files: &[PathBuf]) -> Vec<arrow_array::RecordBatch> {
    files
        .iter()
        .flat_map(|p| {
            let f = std::fs::File::open(p).unwrap();
            ParquetRecordBatchReaderBuilder::try_new(f)
                .unwrap()
                .build()
                .unwrap()
                .map(|b| b.unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A 64-bit and a 32-bit kernel's traces (`prev_state` a `long`: int64
/// in one, int32 in the other) in one shared file with one schema.
#[test]
fn shared_files_one_schema() {
    let dir = tmp("shared");
    let opts = |trace: &str| WriteOptions {
        layout: Layout::Shared {
            trace: trace.into(),
        },
        portable: true,
        ..Default::default()
    };
    let ds = Dataset::new(&dir, &opts("a")).unwrap();
    let (w, m, a) = write("tracedat/v7-clock-global", |m| {
        TablesWriter::in_dataset(ds, m, opts("a")).unwrap()
    });
    let (_, ds) = w.finish_in(&m).unwrap();
    let (w, m, b) = write("synthetic/long4-v7", |m| {
        TablesWriter::in_dataset(ds, m, opts("b")).unwrap()
    });
    let (_, ds) = w.finish_in(&m).unwrap();
    assert!(!dir.join("_SUCCESS").exists(), "complete before finished");
    ds.finish().unwrap();
    assert!(dir.join("_SUCCESS").exists());
    assert!(dir.join("_meta/a.json").exists() && dir.join("_meta/b.json").exists());
    assert!(a > 0 && b > 0, "{a} {b}");
    let files: Vec<PathBuf> = std::fs::read_dir(dir.join("sched__sched_switch"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let batches = rows_of(&files);
    let schema = batches[0].schema();
    assert_eq!(schema.field(0).name(), "trace");
    assert_eq!(
        schema.field_with_name("prev_state").unwrap().data_type(),
        &DataType::Int64
    );
    let (mut na, mut nb) = (0, 0);
    for batch in &batches {
        let t = batch.column(0).as_dictionary::<Int32Type>();
        let values = t.values().as_string::<i32>();
        for i in 0..t.len() {
            match values.value(t.keys().value(i) as usize) {
                "a" => na += 1,
                "b" => nb += 1,
                other => panic!("trace {other}"),
            }
        }
    }
    assert_eq!((na, nb), (a, b));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A table's file closes at `file_size` and its rows go on in the next.
#[test]
fn files_roll_at_their_size() {
    let dir = tmp("roll");
    let opts = WriteOptions {
        file_size: 1,
        batch_rows: 64,
        ..Default::default()
    };
    let (w, m, n) = write("tracedat/v7-clock-global", |m| {
        TablesWriter::new(&dir, m, opts.clone()).unwrap()
    });
    let desc = w.finish(&m).unwrap();
    let listed: Vec<PathBuf> = desc["tables"]["sched__sched_switch"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| dir.join(f.as_str().unwrap()))
        .collect();
    assert!(listed.len() > 1, "{listed:?}");
    assert!(dir.join("sched__sched_switch.parquet").exists());
    assert!(dir.join("sched__sched_switch.1.parquet").exists());
    let rows: usize = rows_of(&listed).iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, n);
    let _ = std::fs::remove_dir_all(&dir);
}
