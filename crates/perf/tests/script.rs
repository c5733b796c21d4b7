//! `perf script` byte for byte: every case of every fixture under
//! tests/fixtures/perf (see its RECORD.md), against the output the
//! installed perf 6.1 made (`tests/perf/check-perf.sh` re-makes them).

use std::path::{Path, PathBuf};

use tracemux_perf::script::{script, ScriptOptions};
use tracemux_perf::PerfData;

fn root() -> PathBuf {
    tracemux_testkit::fixtures().join("perf")
}

/// Split a case's arguments into options (the ones the fixtures use).
fn options(dir: &Path, args: &str) -> ScriptOptions {
    let mut o = ScriptOptions {
        symfs: Some(dir.join("../symfs")),
        kallsyms: Some(dir.join("../kallsyms")),
        ..ScriptOptions::default()
    };
    let mut it = args.split_whitespace();
    while let Some(a) = it.next() {
        match a {
            "-F" => o.fields.push(it.next().expect("-F value").to_string()),
            "--ns" => o.ns = true,
            "--show-task-events" => o.show_task_events = true,
            "--show-mmap-events" => o.show_mmap_events = true,
            _ => panic!("case argument {a} not known to the test"),
        }
    }
    o
}

#[test]
fn every_case_is_byte_identical() {
    let mut failures = Vec::new();
    let mut n = 0;
    for dir in tracemux_testkit::sorted_entries(&root()) {
        let Ok(cases) = std::fs::read_to_string(dir.join("cases")) else {
            continue;
        };
        let data = std::fs::read(dir.join("perf.data")).unwrap();
        for line in cases.lines().filter(|l| !l.is_empty()) {
            let (name, args) = line.split_once('|').unwrap();
            let want = std::fs::read(dir.join(format!("{name}.txt"))).unwrap();
            let p = PerfData::open(&data, false).unwrap();
            let mut got = Vec::new();
            script(&p, &options(&dir, args), &mut got).unwrap();
            n += 1;
            if got != want {
                if std::env::var_os("PERF_DIFF_DIR").is_some() {
                    std::fs::write(
                        format!(
                            "/tmp/perfdiff-{}-{name}.txt",
                            dir.file_name().unwrap().to_string_lossy()
                        ),
                        &got,
                    )
                    .unwrap();
                }
                failures.push(format!(
                    "{}/{name} ({args}): {}",
                    dir.file_name().unwrap().to_string_lossy(),
                    tracemux_testkit::first_diff(&want, &got)
                ));
            }
        }
    }
    assert!(n >= 50, "only {n} cases");
    assert!(
        failures.is_empty(),
        "{} of {n} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
