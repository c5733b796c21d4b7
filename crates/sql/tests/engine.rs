//! The engine on a trace.dat fixture: derived tables against values
//! computed by hand (see crates/cli/tests/sql.rs for how), pushdowns and
//! LIMIT against unfiltered answers. (With the feature `engine` only.)
#![cfg(feature = "engine")]

use std::path::PathBuf;
use std::sync::Arc;

use tracemux_sql::datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use tracemux_sql::{Engine, Paths};

fn engine() -> Engine {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/tracedat/v7-clock-global/trace.dat");
    let e = Engine::new().unwrap();
    e.add_trace(Arc::new(Paths {
        paths: vec![p],
        strict: false,
    }))
    .unwrap();
    e
}

/// Rows as comma-separated text (nulls empty).
fn rows(e: &Engine, q: &str) -> Vec<String> {
    let mut a = e.query(q).unwrap();
    let mut out = Vec::new();
    let opts = FormatOptions::default();
    while let Some(b) = e.next(&mut a).unwrap() {
        let f: Vec<_> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts).unwrap())
            .collect();
        for i in 0..b.num_rows() {
            let cells: Vec<String> = f.iter().map(|f| f.value(i).to_string()).collect();
            out.push(cells.join(","));
        }
    }
    out
}

#[test]
fn derived_tables_by_hand() {
    let e = engine();
    assert_eq!(
        rows(
            &e,
            "SELECT ts, dur, tid, end_state, priority FROM sched_slice WHERE cpu = 0 ORDER BY ts LIMIT 6"
        ),
        [
            "2320978947681,1164191,9172,R,120",
            "2320980111872,4403437,9101,R,120",
            "2320984515309,19268,8844,S,120",
            "2320984534577,116980,9172,Z,120",
            "2320984651557,383865,8844,S,120",
            "2320985035422,1179613,9176,S,120",
        ]
    );
    assert_eq!(
        rows(
            &e,
            "SELECT ts, dur, state, cpu FROM thread_state WHERE tid = 8844 ORDER BY ts LIMIT 5"
        ),
        [
            "2320980109699,4405610,R,",
            "2320984515309,19268,Running,0",
            "2320984534577,14404,S,",
            "2320984548981,102576,R,",
            "2320984651557,383865,Running,0",
        ]
    );
    assert_eq!(
        rows(
            &e,
            "SELECT tid, name, start_ts, end_ts, upid FROM thread WHERE tid IN (8844, 9172) ORDER BY tid"
        ),
        ["8844,load.sh,,,", "9172,date,,,"]
    );
    let n = rows(&e, "SELECT count(*) FROM sched__sched_switch");
    assert_eq!(rows(&e, "SELECT count(*) FROM sched_slice"), n);
}

#[test]
fn pushdowns_and_limit() {
    let e = engine();
    let all = rows(&e, "SELECT ts, cpu, pid FROM events ORDER BY ts, cpu, pid");
    let v: Vec<(i64, u32, i32)> = all
        .iter()
        .map(|l| {
            let x: Vec<&str> = l.split(',').collect();
            (
                x[0].parse().unwrap(),
                x[1].parse().unwrap(),
                x[2].parse().unwrap(),
            )
        })
        .collect();
    let (lo, hi) = (v[v.len() / 4].0, v[v.len() / 2].0);
    let want: Vec<String> = v
        .iter()
        .filter(|r| r.0 >= lo && r.0 < hi && r.1 == 1 && r.2 != 0)
        .map(|r| format!("{},{},{}", r.0, r.1, r.2))
        .collect();
    let q = format!(
        "SELECT ts, cpu, pid FROM events WHERE ts >= {lo} AND {hi} > ts AND cpu IN (1) \
         AND pid <> 0 ORDER BY ts, cpu, pid"
    );
    assert!(!want.is_empty());
    assert_eq!(rows(&e, &q), want);
    let first = rows(&e, "SELECT ts FROM events LIMIT 3");
    assert_eq!(first.len(), 3);
    assert_eq!(first[0], v[0].0.to_string());
    let t = rows(&e, "tables");
    assert!(t.iter().any(|x| x == "sched_slice"));
    let d = rows(&e, "describe lost");
    assert_eq!(d.len(), 5, "{d:?}");
}

/// A projection reaches the reader: the payload fields decoded are those
/// the query names (counted by the scan, not timed).
#[test]
fn projection_decodes_only_the_named_fields() {
    let e = engine();
    let t = "sched__sched_switch";
    let count = |q: &str| -> u64 { rows(&e, q)[0].parse().unwrap() };
    let n = count(&format!("SELECT count(*) FROM {t}"));
    let n0 = count(&format!("SELECT count(*) FROM {t} WHERE cpu = 0"));
    assert!(n > 0 && n0 > 0 && n0 < n);
    assert_eq!(
        e.decoded_values(t).unwrap(),
        Some(0),
        "count(*) decodes no field"
    );
    rows(&e, &format!("SELECT next_pid FROM {t}"));
    assert_eq!(e.decoded_values(t).unwrap(), Some(n), "one field a row");
    rows(
        &e,
        &format!("SELECT next_pid, prev_comm FROM {t} WHERE cpu = 0"),
    );
    assert_eq!(
        e.decoded_values(t).unwrap(),
        Some(n + 2 * n0),
        "CPU 0's rows, two fields"
    );
    rows(&e, &format!("SELECT * FROM {t}"));
    // 7 payload fields and the 4 common_* ones of `common_context`
    assert_eq!(e.decoded_values(t).unwrap(), Some(n + 2 * n0 + 11 * n));
    assert_eq!(e.decoded_values("sched_slice").unwrap(), None);
}

/// Every table of a trace answers under its own name, upper-case letters
/// kept (perf's CTF has an event class `dummy:HG`: table `dummy__HG`).
#[test]
fn tables_by_their_exact_names() {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/ctf/perf-data-convert-sched/trace");
    let e = Engine::new().unwrap();
    let paths = Arc::new(Paths {
        paths: vec![p],
        strict: false,
    });
    e.add_trace(paths.clone()).unwrap();
    let listed = rows(&e, "tables");
    assert!(listed.iter().any(|t| t == "dummy__HG"), "{listed:?}");
    for t in &listed {
        let n = rows(&e, &format!("SELECT count(*) FROM \"{t}\""));
        assert_eq!(n.len(), 1, "{t}");
    }
}
