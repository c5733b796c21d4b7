//! `convert` of the formats whose reader runs on its own thread (CTF,
//! uftrace, LTT) writes the bytes the serial conversion writes
//! (`TRACEMUX_THREADS=1`): every such fixture into JSON lines, Perfetto,
//! Chrome JSON and CTF, with batches of a few events so that every fixture
//! crosses many batch boundaries; and a damaged recording gives the same
//! output and warnings, and with `--strict` the same error.

mod common;
use common::*;

use std::path::Path;
use std::process::{Command, Output};

fn convert_with(threads: &str, src: &Path, to: &str, out: &Path, strict: bool) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tracemux"));
    c.env("TZ", "UTC")
        .env("TRACEMUX_THREADS", threads)
        .env("TRACEMUX_BATCH", "3")
        .args(["convert", "-q", "--force"]);
    if strict {
        c.arg("--strict");
    }
    c.arg(src)
        .args(["--to", to, "-o"])
        .arg(out)
        .output()
        .expect("tracemux runs")
}

#[test]
fn the_reader_on_its_own_thread_gives_the_serial_bytes() {
    let scratch = Scratch::new("convert-threads");
    let mut srcs: Vec<_> = every_fixture(scratch.0.as_path())
        .into_iter()
        .filter(|(_, _, k)| !matches!(k, FixtureKind::TraceDat))
        .map(|(n, p, _)| (n, p, false))
        .collect();
    // damage: a uftrace task file and a CTF stream file cut short, and a
    // run of garbage in the middle of another CTF stream
    let uf = scratch.0.as_path().join("uftrace-cut");
    copy_dir(
        &repo_root().join("tests/fixtures/uftrace/corpus/pg-basic/uftrace.data"),
        &uf,
    );
    cut(&uf.join("1369.dat"), 5000);
    let ctf = scratch.0.as_path().join("ctf-cut");
    copy_dir(
        &repo_root().join("tests/fixtures/ctf/lttng-ust-uid/trace"),
        &ctf,
    );
    let streams = ctf.join("ust/uid/0/64-bit");
    let len = std::fs::metadata(streams.join("ch0_0")).unwrap().len();
    cut(&streams.join("ch0_0"), len * 2 / 3);
    let mut b = std::fs::read(streams.join("ch0_1")).unwrap();
    let mid = b.len() / 2;
    b[mid..mid + 64].fill(0xa5);
    std::fs::write(streams.join("ch0_1"), b).unwrap();
    for (n, p) in [("damaged-uftrace", uf), ("damaged-ctf", ctf)] {
        srcs.push((n.to_string(), p.clone(), false));
        srcs.push((format!("{n}-strict"), p, true));
    }
    assert!(srcs.len() > 20, "{} sources", srcs.len());
    let mut fails = Vec::new();
    let mut compared = 0;
    for (name, src, strict) in &srcs {
        for to in ["jsonl", "perfetto", "chrome", "ctf"] {
            let one_out = scratch.0.as_path().join(format!("{name}.1.{to}"));
            let two_out = scratch.0.as_path().join(format!("{name}.2.{to}"));
            let one = convert_with("1", src, to, &one_out, *strict);
            let two = convert_with("2", src, to, &two_out, *strict);
            compared += 1;
            let a = contents(&one_out);
            let b = contents(&two_out);
            if a != b || one.stderr != two.stderr || one.status != two.status {
                fails.push(format!(
                    "{name} --to {to}: {} / stderr {:?} vs {:?}",
                    tracemux_testkit::first_diff(&a, &b),
                    String::from_utf8_lossy(&one.stderr),
                    String::from_utf8_lossy(&two.stderr)
                ));
            }
        }
    }
    assert_no_failures(&fails, &format!("of {compared} conversions differ"));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

fn cut(file: &Path, len: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.set_len(len).unwrap();
}

/// A directory under the system's temporary directory, removed at the end.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let d = std::env::temp_dir().join(format!("tracemux-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A file's bytes, or a directory's files (names and bytes, in order).
fn contents(p: &Path) -> Vec<u8> {
    if !p.is_dir() {
        return std::fs::read(p).unwrap_or_default();
    }
    let mut out = Vec::new();
    for e in tracemux_testkit::sorted_entries(p) {
        out.extend_from_slice(e.file_name().unwrap().to_string_lossy().as_bytes());
        out.push(0);
        out.extend(contents(&e));
    }
    out
}

/// An output that is a device or a pipe (`-o /dev/null`) is written where
/// it is, not replaced by a file renamed over it (which would turn
/// /dev/null into a file for the whole machine): here a FIFO, read on
/// another thread, stays a FIFO and gets what a file gets.
#[cfg(unix)]
#[test]
fn a_pipe_output_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let scratch = Scratch::new("convert-fifo");
    let src = repo_root().join("tests/fixtures/tracedat/v6-sched-irq-timer/trace.dat");
    let file = scratch.0.join("out.jsonl");
    let o = convert_with("1", &src, "jsonl", &file, false);
    assert!(o.status.success());
    let want = std::fs::read(&file).unwrap();
    let fifo = scratch.0.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("no mkfifo here: not checked");
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    // no --force needed: nothing is replaced
    let o = Command::new(env!("CARGO_BIN_EXE_tracemux"))
        .args(["convert", "-q"])
        .arg(&src)
        .args(["--to", "jsonl", "-o"])
        .arg(&fifo)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = reader.join().unwrap();
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(got, want);
}
