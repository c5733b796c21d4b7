//! Byte-for-byte comparison with the real tools' outputs stored next to each
//! fixture (see tests/fixtures/*/README.md for where they come from).

mod common;
use common::*;

/// (reference name, tracemux report arguments)
const REPORT_MODES: &[(&str, &[&str])] = &[
    ("report", &["report", "trace.dat"]),
    ("report-t", &["report", "-t", "trace.dat"]),
    ("report-l", &["report", "-l", "trace.dat"]),
    ("report-R", &["report", "-R", "trace.dat"]),
    ("report-stat", &["report", "--stat", "trace.dat"]),
    ("report-cpus", &["report", "--cpus", "trace.dat"]),
    (
        "report-first-last",
        &["report", "--first-event", "--last-event", "trace.dat"],
    ),
    ("report-uname", &["report", "--uname", "trace.dat"]),
    (
        "report-version",
        &["report", "--tracer-version", "trace.dat"],
    ),
];

/// Every report mode on every fixture of `kind`: byte for byte, and at
/// least `at_least` comparisons made.
fn check_kind(kind: &str, at_least: usize) {
    let mut checked = 0;
    let mut failures = Vec::new();
    for dir in fixture_dirs(kind) {
        let codes = std::fs::read_to_string(dir.join("exit-codes.txt")).unwrap_or_default();
        for (name, args) in REPORT_MODES {
            let Some(want) = reference(&dir, name) else {
                continue;
            };
            // trace-cmd crashed on this one (e.g. --cpus on latency files):
            // nothing to compare with
            let crashed = codes.lines().any(|l| {
                l.starts_with(&format!("{name}:"))
                    && !l.ends_with("exit 0")
                    && !l.ends_with("exit 1")
            });
            if crashed {
                continue;
            }
            let out = tracemux(args, &dir);
            checked += 1;
            if out.stdout != want {
                failures.push(format!(
                    "{} {}: {}",
                    dir.display(),
                    name,
                    first_diff(&want, &out.stdout)
                ));
            }
        }
    }
    assert!(
        checked >= at_least,
        "expected the {kind} fixtures, checked only {checked}"
    );
    common::assert_no_failures(&failures, "mismatches");
}

#[test]
fn tracedat_reports_match_trace_cmd() {
    check_kind("tracedat", 60);
}

#[test]
fn event_counts_match() {
    for dir in fixture_dirs("tracedat") {
        let want = common::event_count(&dir).unwrap() as usize;
        let out = tracemux(&["report", "--json", "trace.dat"], &dir);
        assert!(
            out.status.success(),
            "{}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        // event-count.txt counts report -R lines minus the header, which
        // includes the EVENTS DROPPED lines
        let n = out
            .stdout
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count();
        assert_eq!(n, want, "{}", dir.display());
    }
}

#[test]
fn synthetic_reports_match_trace_cmd() {
    check_kind("synthetic", 50);
}
