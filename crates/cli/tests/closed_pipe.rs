//! `tracemux ... | head`: when the reader of stdout goes away, tracemux
//! stops quietly with success, as trace-cmd, babeltrace2 and uftrace end
//! (by SIGPIPE) without a message. Each case prints far more than a pipe
//! holds, so that its writes fail once the reader has gone.

mod common;
use common::*;
use std::io::Read;
use std::process::{Command, Stdio};

fn check(args: &[&str]) {
    let root = repo_root();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tracemux"))
        .env("TZ", "UTC")
        .args(args)
        .current_dir(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tracemux runs");
    let mut head = [0u8; 100];
    let mut stdout = child.stdout.take().expect("stdout");
    stdout.read_exact(&mut head).expect("some output");
    drop(stdout);
    let out = child.wait_with_output().expect("tracemux ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{args:?}: {:?}, stderr: {err}",
        out.status
    );
    assert!(err.is_empty(), "{args:?}: stderr: {err}");
}

#[test]
fn ctf_text() {
    check(&["report", "tests/fixtures/ctf/lttng-ust-discard-small/trace"]);
}

#[test]
fn tracedat_text() {
    check(&["report", "tests/fixtures/tracedat/v7-syscalls/trace.dat"]);
}

#[test]
fn uftrace_dump() {
    let d = "tests/fixtures/uftrace/corpus/pg-args-retval/uftrace.data";
    check(&["dump", d]);
}

#[test]
fn json_lines() {
    check(&[
        "report",
        "--json",
        "tests/fixtures/tracedat/v7-syscalls/trace.dat",
    ]);
}
