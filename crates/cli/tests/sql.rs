//! `tracemux sql` (built with `--features sql`): output formats, tables and
//! `describe`, statements from standard input, Parquet datasets, and the
//! derived scheduler tables checked against values computed by hand from
//! trace-cmd's own report of the fixture.
#![cfg(feature = "sql")]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

const GLOBAL: &str = "tests/fixtures/tracedat/v7-clock-global/trace.dat";

fn sql(args: &[&str]) -> String {
    let mut a = vec!["sql"];
    a.extend(args);
    let out = common::tracemux(&a, &common::repo_root());
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn csv(input: &str, q: &str) -> Vec<String> {
    sql(&["--format", "csv", input, "-e", q])
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tracemux-sql-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Events of each kind in `report --json`.
fn count(trace: &str, name: &str) -> usize {
    common::report_json(&common::repo_root().join(trace))
        .iter()
        .filter(|e| e["event"] == name)
        .count()
}

#[test]
fn formats() {
    let n = count(GLOBAL, "sched_switch");
    let q = "SELECT count(*) AS n FROM sched__sched_switch";
    let table = sql(&[GLOBAL, "-e", q]);
    let w = n.to_string().len();
    let line = format!("+{}+", "-".repeat(w + 2));
    let want = format!("{line}\n| {:<w$} |\n{line}\n| {n} |\n{line}\n", "n");
    assert_eq!(table, want);
    assert_eq!(csv(GLOBAL, q), [n.to_string()]);
    let json = sql(&["--format", "json", GLOBAL, "-e", q]);
    assert_eq!(json, format!("{{\"n\":{n}}}\n"));
    // several statements, dictionary columns written as text
    let out = sql(&[
        "--format",
        "csv",
        GLOBAL,
        "-e",
        "SELECT comm FROM sched__sched_switch WHERE pid = 8844 LIMIT 1",
        "-e",
        "SELECT 1 AS one",
    ]);
    assert_eq!(out, "comm\nload.sh\none\n1\n");
    // Parquet
    let dir = tmp("formats");
    let f = dir.join("out.parquet");
    let q = "SELECT ts, cpu, next_comm FROM sched__sched_switch ORDER BY ts";
    sql(&[
        "--format",
        "parquet",
        "-o",
        f.to_str().unwrap(),
        GLOBAL,
        "-e",
        q,
    ]);
    let r = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(&f).unwrap(),
    )
    .unwrap();
    let names: Vec<_> = r
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["ts", "cpu", "next_comm"]);
    let rows: usize = r.build().unwrap().map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, n);
    let out = common::tracemux(
        &["sql", "--format", "parquet", GLOBAL, "-e", q],
        &common::repo_root(),
    );
    assert!(!out.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tables_describe_and_stdin() {
    let t = csv(GLOBAL, "tables");
    for name in [
        "events",
        "lost",
        "sched__sched_switch",
        "sched__sched_wakeup",
        "sched_slice",
        "thread_state",
        "thread",
        "process",
    ] {
        assert!(t.iter().any(|l| l == name), "{name} in {t:?}");
    }
    let d = csv(GLOBAL, "describe sched__sched_wakeup");
    let cols: Vec<&str> = d.iter().map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(
        cols,
        [
            "ts",
            "cpu",
            "pid",
            "comm",
            "common_context",
            "field_comm",
            "field_pid",
            "prio",
            "target_cpu"
        ]
    );
    // statements on standard input, each ended by `;`
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tracemux"))
        .args(["sql", "--format", "csv", GLOBAL])
        .current_dir(common::repo_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"SELECT 2 AS two;\nSELECT count(*) AS n\n  FROM lost;\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "two\n2\nn\n0\n");
}

#[test]
fn pushdowns_answer_like_full_scans() {
    // filters the scan takes (ts, cpu, pid) and ones it does not, with and
    // without a limit: the same rows as filtering everything afterwards
    let all = csv(
        GLOBAL,
        "SELECT ts, cpu, pid FROM events ORDER BY ts, cpu, pid",
    );
    let rows: Vec<(i64, u32, i32)> = all
        .iter()
        .map(|l| {
            let v: Vec<&str> = l.split(',').collect();
            (
                v[0].parse().unwrap(),
                v[1].parse().unwrap(),
                v[2].parse().unwrap(),
            )
        })
        .collect();
    let (lo, hi) = (rows[rows.len() / 4].0, rows[rows.len() / 2].0);
    let want: Vec<String> = rows
        .iter()
        .filter(|r| r.0 >= lo && r.0 < hi && r.1 == 1 && r.2 != 0)
        .map(|r| format!("{},{},{}", r.0, r.1, r.2))
        .collect();
    let q = format!(
        "SELECT ts, cpu, pid FROM events WHERE ts >= {lo} AND {hi} > ts AND cpu IN (1) \
         AND pid <> 0 ORDER BY ts, cpu, pid"
    );
    assert_eq!(csv(GLOBAL, &q), want);
    assert!(!want.is_empty());
    let first = csv(GLOBAL, "SELECT ts FROM events LIMIT 3");
    assert_eq!(first.len(), 3);
    assert_eq!(first[0], rows[0].0.to_string());
    let p = rows[10].2;
    let n = rows.iter().filter(|r| r.2 == p).count();
    assert_eq!(
        csv(
            GLOBAL,
            &format!("SELECT count(*) FROM events WHERE pid = {p}")
        ),
        [n.to_string()]
    );
}

#[test]
fn parquet_datasets() {
    let dir = tmp("dataset");
    let out = common::tracemux(
        &[
            "convert",
            "-q",
            "--force",
            "--to",
            "parquet",
            GLOBAL,
            "-o",
            dir.to_str().unwrap(),
        ],
        &common::repo_root(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let q = "SELECT next_comm, count(*) AS n, sum(prev_state) AS s FROM sched__sched_switch \
             GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10";
    let live = csv(GLOBAL, q);
    assert_eq!(live.len(), 10);
    assert_eq!(csv(dir.to_str().unwrap(), q), live);
    // a Hive-partitioned dataset of two traces: one table with `trace`
    let hive = tmp("hive");
    let other = "tests/fixtures/tracedat/v7-clock-mono-raw/trace.dat";
    let out = common::tracemux(
        &[
            "convert",
            "-q",
            "--force",
            "--to",
            "parquet",
            "--partition",
            GLOBAL,
            other,
            "-o",
            hive.to_str().unwrap(),
        ],
        &common::repo_root(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = csv(
        hive.to_str().unwrap(),
        "SELECT trace, count(*) FROM sched__sched_switch GROUP BY 1 ORDER BY 1",
    );
    let want = [
        format!("v7-clock-global,{}", count(GLOBAL, "sched_switch")),
        format!("v7-clock-mono-raw,{}", count(other, "sched_switch")),
    ];
    assert_eq!(got, want);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&hive);
}

/// The first events on CPU 0 of the fixture, as `trace-cmd report -t`
/// prints them (tests/fixtures/tracedat/v7-clock-global/report-t.txt.zst),
/// with `prev_state` from `report -R`:
///
/// ```text
/// 2320.978947681 sched_switch trace-cmd:9161 [120] S(1) ==> load.sh:9172 [120]
/// 2320.980109699 sched_wakeup load.sh:8844 [120] CPU:000
/// 2320.980111872 sched_switch date:9172 [120] R(0) ==> lto cgu.0.rcgu.:9101 [120]
/// 2320.984515309 sched_switch lto cgu.0.rcgu.:9101 [120] R(0) ==> load.sh:8844 [120]
/// 2320.984534577 sched_switch load.sh:8844 [120] S(1) ==> date:9172 [120]
/// 2320.984548981 sched_wakeup load.sh:8844 [120] CPU:000
/// 2320.984651557 sched_switch date:9172 [120] X(32) ==> load.sh:8844 [120]
/// 2320.985035422 sched_switch load.sh:8844 [120] S(1) ==> load.sh:9176 [120]
/// 2320.986215035 sched_switch head:9176 [120] S(1) ==> load.sh:9177 [120]
/// ```
///
/// A slice runs from the switch that puts a task on the CPU to the next
/// switch on that CPU (dur = difference of the times), whose prev_state
/// is its end state (32 is the kernel's 0x20, `Z`, in the kernel's
/// print fmt; trace-cmd's plugin prints its older letter `X`).
#[test]
fn derived_tables_by_hand() {
    let got = csv(
        GLOBAL,
        "SELECT ts, dur, tid, end_state, priority FROM sched_slice WHERE cpu = 0 ORDER BY ts LIMIT 6",
    );
    assert_eq!(
        got,
        [
            "2320978947681,1164191,9172,R,120",
            "2320980111872,4403437,9101,R,120",
            "2320984515309,19268,8844,S,120",
            "2320984534577,116980,9172,Z,120",
            "2320984651557,383865,8844,S,120",
            "2320985035422,1179613,9176,S,120",
        ]
    );
    // task 8844: woken (R) before it first runs; Running on CPU 0;
    // sleeping (S) from its switch out to its next wakeup; and so on
    let got = csv(
        GLOBAL,
        "SELECT ts, dur, state, cpu FROM thread_state WHERE tid = 8844 ORDER BY ts LIMIT 5",
    );
    assert_eq!(
        got,
        [
            "2320980109699,4405610,R,",
            "2320984515309,19268,Running,0",
            "2320984534577,14404,S,",
            "2320984548981,102576,R,",
            "2320984651557,383865,Running,0",
        ]
    );
    // 9172 was load.sh, then (after its exec) date: its last name; the
    // trace has no fork, exit or exec events, so no times and no process
    let got = csv(
        GLOBAL,
        "SELECT tid, name, start_ts, end_ts, upid FROM thread WHERE tid IN (8844, 9172) ORDER BY tid",
    );
    assert_eq!(got, ["8844,load.sh,,,", "9172,date,,,"]);
    assert_eq!(csv(GLOBAL, "SELECT count(*) FROM process"), ["0"]);
    // every switch ends one slice and starts another
    let slices = csv(GLOBAL, "SELECT count(*) FROM sched_slice");
    let cpus = csv(
        GLOBAL,
        "SELECT count(DISTINCT cpu) FROM sched__sched_switch",
    );
    let n = count(GLOBAL, "sched_switch") as i64;
    assert_eq!(slices, [n.to_string()]);
    assert_eq!(
        csv(GLOBAL, "SELECT count(*) FROM sched_slice WHERE dur = -1"),
        cpus
    );
    let _ = Path::new(GLOBAL);
}
