//! `report` of a trace.dat printed on several threads gives the bytes one
//! thread gives (`TRACEMUX_THREADS=1`): every trace.dat fixture (recorded,
//! synthetic, and the ones of the option cases), in each trace-cmd view,
//! with batches of a few events so that every fixture crosses hundreds of
//! batch boundaries (the comm column, lost-events lines and damage
//! warnings across them).

mod common;
use common::*;

use std::path::Path;
use std::process::{Command, Output};

fn report(threads: &str, args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracemux"))
        .env("TZ", "UTC")
        .env("TRACEMUX_THREADS", threads)
        .env("TRACEMUX_BATCH", "7")
        .arg("report")
        .args(args)
        .arg(file)
        .output()
        .expect("tracemux runs")
}

#[test]
fn several_threads_print_what_one_prints() {
    let mut files: Vec<_> = [fixture_dirs("tracedat"), fixture_dirs("synthetic")]
        .concat()
        .into_iter()
        .map(|d| d.join("trace.dat"))
        .collect();
    for sub in ["sched-irq", "v6", "instance", "two-files", "host-guest"] {
        let d = repo_root().join("tests/fixtures/report-options").join(sub);
        if let Ok(rd) = std::fs::read_dir(&d) {
            files.extend(
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "dat")),
            );
        }
    }
    assert!(files.len() > 30, "{} files", files.len());
    let views: [&[&str]; 6] = [
        &[],
        &["-R"],
        &["-l"],
        &["-R", "-l"],
        &["-t", "--cpu", "0"],
        &["-F", "sched_switch,sched_wakeup"],
    ];
    let mut fails = Vec::new();
    let mut compared = 0;
    for f in &files {
        for v in views {
            let one = report("1", v, f);
            let many = report("3", v, f);
            compared += 1;
            if one.stdout != many.stdout || one.stderr != many.stderr || one.status != many.status {
                fails.push(format!(
                    "{} {v:?}: {}",
                    f.display(),
                    first_diff(&one.stdout, &many.stdout)
                ));
            }
        }
    }
    assert_no_failures(&fails, &format!("of {compared} runs differ"));
}
