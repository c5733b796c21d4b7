//! Golden tests: `uftrace replay` and `uftrace info` outputs of the corpus
//! fixtures, byte for byte. `UFTRACE_BLESS` is not supported on purpose:
//! the expectations are uftrace 0.13's own outputs.

use std::path::{Path, PathBuf};

use tracemux_uftrace::replay::{parse_fields, replay, ReplayOptions};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/uftrace/corpus")
        .join(name)
}

const NAMES: [&str; 4] = ["pg-basic", "pg-args-retval", "finstrument", "dynamic-plain"];

fn expected(dir: &Path, name: &str) -> Vec<u8> {
    let p = dir.join(name);
    if p.exists() {
        return std::fs::read(p).unwrap();
    }
    let z = dir.join(format!("{name}.zst"));
    zstd::decode_all(std::fs::File::open(z).unwrap()).unwrap()
}

fn run(dir: &Path, opts: &ReplayOptions) -> Vec<u8> {
    let mut out = Vec::new();
    let mut err = Vec::new();
    replay(&dir.join("uftrace.data"), opts, &mut out, &mut err).unwrap();
    assert!(err.is_empty(), "{}", String::from_utf8_lossy(&err));
    out
}

fn check(name: &str, reference: &str, opts: &ReplayOptions) {
    let dir = fixture(name);
    let got = run(&dir, opts);
    let want = expected(&dir, reference);
    if got != want {
        let g = String::from_utf8_lossy(&got);
        let w = String::from_utf8_lossy(&want);
        for (i, (a, b)) in g.lines().zip(w.lines()).enumerate() {
            if a != b {
                panic!(
                    "{name}/{reference}: line {}:\n got: {a:?}\nwant: {b:?}",
                    i + 1
                );
            }
        }
        panic!(
            "{name}/{reference}: {} lines, want {}",
            g.lines().count(),
            w.lines().count()
        );
    }
}

#[test]
fn replay_default() {
    for n in NAMES {
        check(n, "replay.txt", &ReplayOptions::default());
    }
}

#[test]
fn replay_a() {
    for n in NAMES {
        check(n, "replay-a.txt", &ReplayOptions::default());
    }
}

#[test]
fn replay_fields_all() {
    let opts = ReplayOptions {
        fields: Some(parse_fields("time,delta,duration,tid,addr").unwrap()),
        ..ReplayOptions::default()
    };
    for n in NAMES {
        check(n, "replay-fields-all.txt", &opts);
    }
}

#[test]
fn replay_no_libcall() {
    let mut opts = ReplayOptions::default();
    opts.walk.no_libcall = true;
    for n in NAMES {
        check(n, "replay-no-libcall.txt", &opts);
    }
}

fn check_info(name: &str, task: bool) {
    let dir = fixture(name);
    let mut out = Vec::new();
    let mut err = Vec::new();
    let d = dir.join("uftrace.data");
    if task {
        tracemux_uftrace::info::info_task(&d, &mut out, &mut err).unwrap();
    } else {
        tracemux_uftrace::info::info(&d, &mut out, &mut err).unwrap();
    }
    assert!(err.is_empty(), "{}", String::from_utf8_lossy(&err));
    let want = std::fs::read(dir.join(if task { "info-task.txt" } else { "info.txt" })).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&want),
        "{name}"
    );
}

#[test]
fn info_and_info_task() {
    for n in NAMES {
        check_info(n, false);
        check_info(n, true);
    }
}
