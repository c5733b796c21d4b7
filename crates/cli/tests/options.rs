//! `tracemux report` with trace-cmd's event selection options (`-F`, `-v`,
//! `--cpu`, `-I`, `-S`, `--pid`, `--comm`, `--ts-offset`, `--ts2secs`,
//! `--ts-diff`, several `-i`) and metadata listings (`-E`, `--events`, `-P`,
//! `-f`, `--check-events`), compared byte for byte with trace-cmd 3.1.6 on
//! the recordings of tests/fixtures/report-options (see its README.md).
//!
//! Each fixture directory lists its cases in exit-codes.txt as
//! `CASE: trace-cmd report ARGS -> exit N`; the test runs
//! `tracemux report ARGS` in the same directory and compares stdout with
//! report-CASE.txt, and success with success (trace-cmd exits 255 where
//! tracemux exits 1). Cases where trace-cmd crashed are skipped.

mod common;
use common::*;
use std::path::Path;

/// `NAME: trace-cmd report ARGS -> exit N`, ARGS quoted by bash's `printf %q`.
fn parse_case(line: &str) -> Option<(String, Vec<String>, i32)> {
    let (name, rest) = line.split_once(": trace-cmd report ")?;
    let (args, code) = rest.rsplit_once(" -> exit ")?;
    let mut v = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut it = args.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => {
                if let Some(n) = it.next() {
                    cur.push(n);
                }
                any = true;
            }
            ' ' => {
                if any || !cur.is_empty() {
                    v.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            '\'' => {
                for n in it.by_ref() {
                    if n == '\'' {
                        break;
                    }
                    cur.push(n);
                }
                any = true;
            }
            _ => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        v.push(cur);
    }
    Some((name.to_string(), v, code.trim().parse().ok()?))
}

fn dir(name: &str) -> std::path::PathBuf {
    repo_root().join("tests/fixtures/report-options").join(name)
}

/// Run the cases of a fixture directory accepted by `only`; panic with
/// every mismatch.
fn check(d: &Path, only: &dyn Fn(&str) -> bool) {
    let codes = std::fs::read_to_string(d.join("exit-codes.txt")).expect("exit-codes.txt");
    let mut failures = Vec::new();
    let mut checked = 0;
    for line in codes.lines() {
        let (name, args, code) = parse_case(line).expect("a case line");
        if !only(&name) || !(0..=128).contains(&code) {
            continue;
        }
        let want = std::fs::read(d.join(format!("report-{name}.txt"))).expect("reference");
        let mut full = vec!["report"];
        full.extend(args.iter().map(|s| s.as_str()));
        let out = tracemux(&full, d);
        checked += 1;
        let ok = out.status.success() == (code == 0);
        if out.stdout != want || !ok {
            failures.push(format!(
                "{} {name} (exit {:?}, trace-cmd {code}): {}{}",
                d.display(),
                out.status.code(),
                first_diff(&want, &out.stdout),
                if ok {
                    String::new()
                } else {
                    format!("\n  stderr: {}", String::from_utf8_lossy(&out.stderr))
                }
            ));
        }
    }
    assert!(checked > 0, "no case checked in {}", d.display());
    common::assert_no_failures(&failures, "mismatches");
}

/// Cases whose options trace-cmd ignores, so that tracemux's plain raw view
/// already prints the same (`-i FILE -F` drops the filter, `--ts-offset` is
/// ignored with one file, a `--comm` name that is not in the trace adds no
/// filter).
#[test]
fn options_trace_cmd_ignores() {
    let plain = |n: &str| matches!(n, "R" | "F-after-i" | "ts-offset" | "comm-missing");
    check(&dir("sched-irq"), &plain);
    check(&dir("v6"), &|n| n == "R");
    check(&dir("instance"), &|n| n == "R");
}

/// One test a fixture directory: every case of it matches trace-cmd.
macro_rules! every_case_matches {
    ($($test:ident: $dir:literal,)*) => {
        $(
            #[test]
            fn $test() {
                check(&dir($dir), &|_| true);
            }
        )*
    };
}

every_case_matches! {
    filters_cpus_irqs_pids_match_trace_cmd: "sched-irq",
    metadata_listings_match_trace_cmd: "v6",
    instances_match_trace_cmd: "instance",
    several_files_match_trace_cmd: "two-files",
    host_and_guest_files_match_trace_cmd: "host-guest",
    stack_traces_and_lost_events_match_trace_cmd: "corpus",
}

#[test]
fn case_lines_parse() {
    let (n, a, c) = parse_case(
        r#"F-x: trace-cmd report -R -F sched_switch:\ prev_comm\ ==\ \"a\ b\" -v '' trace.dat -> exit 255"#,
    )
    .unwrap();
    assert_eq!(n, "F-x");
    assert_eq!(
        a,
        vec![
            "-R",
            "-F",
            "sched_switch: prev_comm == \"a b\"",
            "-v",
            "",
            "trace.dat"
        ]
    );
    assert_eq!(c, 255);
}
