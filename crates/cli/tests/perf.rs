//! `tracemux report perf.data` through the binary, with perf script's own
//! options: every case of every fixture of tests/fixtures/perf against the
//! output of perf 6.1 (see RECORD.md there), and `info`/`stats` against
//! `perf report --header-only`/`--stats`.

mod common;

use common::{repo_root, tracemux};

#[test]
fn report_info_stats_through_the_binary() {
    let root = repo_root().join("tests/fixtures/perf");
    let mut n = 0;
    let mut bad = Vec::new();
    for dir in tracemux_testkit::sorted_entries(&root) {
        let Ok(cases) = std::fs::read_to_string(dir.join("cases")) else {
            continue;
        };
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut run = |what: &str, args: Vec<&str>, golden: &str| {
            let o = tracemux(&args, &dir);
            n += 1;
            let Ok(want) = std::fs::read(dir.join(golden)) else {
                return;
            };
            if !o.status.success() || o.stdout != want {
                bad.push(format!(
                    "{name}/{what}: exit {:?}, {}\n{}",
                    o.status.code(),
                    tracemux_testkit::first_diff(&want, &o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                ));
            }
        };
        for line in cases.lines().filter(|l| !l.is_empty()) {
            let (case, extra) = line.split_once('|').unwrap();
            let mut args = vec![
                "report",
                "-i",
                "perf.data",
                "--kallsyms",
                "../kallsyms",
                "--symfs",
                "../symfs",
            ];
            args.extend(extra.split_whitespace());
            run(case, args, &format!("{case}.txt"));
        }
        run("info", vec!["info", "perf.data"], "header.txt");
        run("stats", vec!["stats", "perf.data"], "stats.txt");
    }
    assert!(n >= 70, "{n}");
    assert!(
        bad.is_empty(),
        "{} of {n} differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn perf_options_apply_and_bad_fields_are_refused() {
    let dir = repo_root().join("tests/fixtures/perf/sw-cpu-clock");
    let o = tracemux(&["report", "perf.data", "-F", "comm,cpu"], &dir);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Samples for 'cpu-clock' event do not have CPU attribute set. Cannot print 'cpu' field."),
        "{err}"
    );
    let o = tracemux(&["report", "perf.data", "-F", "bogus"], &dir);
    assert_eq!(o.status.code(), Some(1));
    let o = tracemux(&["report", "perf.data", "--help"], &dir);
    assert!(String::from_utf8_lossy(&o.stdout).contains("--show-task-events"));
}
