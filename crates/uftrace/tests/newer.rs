//! Data directories written by newer uftrace (0.14 to 0.16): the
//! SYM_SIZE feature bit with `.sym` files in the `ADDR SIZE TYPE NAME`
//! format, and feature bits no version defines yet. They are read (a
//! recording rewritten in the newer form replays as before); unknown bits
//! are reported as a warning, an error only with `strict`.

use std::path::{Path, PathBuf};

use tracemux_uftrace::header::feat;
use tracemux_uftrace::replay::{replay, ReplayOptions};
use tracemux_uftrace::{Demangle, OpenOptions, UftraceData};

fn recording() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/uftrace/recorded/pg-dlopen")
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
    }
}

/// A `.sym` file of 0.13 (`ADDR TYPE NAME`) as 0.14+ writes it
/// (`%016lx %08x %c %s`): each symbol's size is the distance to the next
/// line's address.
fn with_sizes(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let addr = |l: &str| u64::from_str_radix(l.split(' ').next().unwrap_or(""), 16).ok();
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        let (Some(a), Some((_, rest))) = (addr(l), l.split_once(' ')) else {
            out.push_str(l);
            out.push('\n');
            continue;
        };
        let next = lines[i + 1..].iter().find_map(|n| addr(n));
        let size = next.map_or(0, |n| n.saturating_sub(a));
        out.push_str(&format!("{a:016x} {size:08x} {rest}\n"));
    }
    out
}

fn set_feat(dir: &Path, bits: u64) {
    let mut info = std::fs::read(dir.join("info")).expect("info");
    let mut m = u64::from_le_bytes(info[16..24].try_into().expect("8 bytes"));
    m |= bits;
    info[16..24].copy_from_slice(&m.to_le_bytes());
    std::fs::write(dir.join("info"), info).expect("info");
}

fn run(dir: &Path) -> (Vec<u8>, Vec<u8>) {
    let mut out = Vec::new();
    let mut warn = Vec::new();
    replay(dir, &ReplayOptions::default(), &mut out, &mut warn).expect("replay");
    (out, warn)
}

#[test]
fn sym_size_recording_replays_as_before() {
    let tmp = std::env::temp_dir().join(format!("tracemux-uftrace-newer-{}", std::process::id()));
    copy_dir(&recording().join("uftrace.data"), &tmp);
    let mut converted = 0;
    for e in std::fs::read_dir(&tmp).expect("read_dir").flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "sym") {
            let t = std::fs::read_to_string(&p).expect("sym");
            std::fs::write(&p, with_sizes(&t)).expect("sym");
            converted += 1;
        }
    }
    assert!(converted > 3);
    set_feat(&tmp, feat::SYM_SIZE);
    let (out, warn) = run(&tmp);
    let want = std::fs::read(recording().join("replay.txt")).expect("replay.txt");
    assert_eq!(
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&want)
    );
    assert!(warn.is_empty(), "{}", String::from_utf8_lossy(&warn));

    // a bit no uftrace defines: a warning, the same output; strict: an error
    set_feat(&tmp, 1 << 40);
    let (out, warn) = run(&tmp);
    assert_eq!(out, want);
    assert!(String::from_utf8_lossy(&warn).contains("unknown feature bits 0x10000000000"));
    let strict = OpenOptions {
        demangle: Demangle::Simple,
        strict: true,
    };
    assert!(UftraceData::open(&tmp, strict).is_err());
    let _ = std::fs::remove_dir_all(&tmp);
}

/// The recordings of `tests/fixtures/uftrace/newer` (uftrace 0.19).
fn newer_recordings() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/uftrace/newer");
    tracemux_testkit::sorted_entries(&root)
        .into_iter()
        .filter(|p| p.join("uftrace.data/info").is_file())
        .collect()
}

/// The recordings of uftrace 0.19 print as 0.19 (their outputs are
/// compared in outputs.rs and recorded.rs); with the flavour set to 0.13
/// the task table is 0.13's, byte for byte, as 0.13 printed it on the same
/// recording (`report-task.old.txt`): the flavour is the only difference.
#[test]
fn newer_recordings_follow_their_uftrace_and_flavour_switches() {
    use tracemux_uftrace::report::{report, ReportOptions};
    use tracemux_uftrace::Flavor;
    let dirs = newer_recordings();
    assert!(dirs.len() >= 5, "{dirs:?}");
    let mut compared = 0;
    for dir in dirs {
        let o = OpenOptions {
            demangle: Demangle::Simple,
            strict: false,
        };
        let mut data = UftraceData::open(&dir.join("uftrace.data"), o).expect("open");
        assert_eq!(data.flavor, Flavor::V0_19, "{}", dir.display());
        let opts = ReportOptions {
            task: true,
            ..ReportOptions::default()
        };
        let (mut out, mut warn) = (Vec::new(), Vec::new());
        report(&mut data, &opts, &mut out, &mut warn).expect("report");
        let want = std::fs::read(dir.join("report-task.txt")).expect("report-task.txt");
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&want)
        );
        let Ok(old) = std::fs::read(dir.join("report-task.old.txt")) else {
            continue;
        };
        let codes = std::fs::read_to_string(dir.join("exit-codes.old.txt")).unwrap_or_default();
        if !codes
            .lines()
            .any(|l| l.starts_with("report-task:") && l.ends_with("exit 0"))
        {
            continue; // 0.13 could not read this recording
        }
        data.flavor = Flavor::V0_13;
        let (mut out, mut warn) = (Vec::new(), Vec::new());
        report(&mut data, &opts, &mut out, &mut warn).expect("report");
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&old),
            "{}",
            dir.display()
        );
        compared += 1;
    }
    assert!(compared >= 2, "{compared}");
}

/// What 0.13 makes of the 0.19 recordings, as kept beside them: it cannot
/// read the argument specs of 0.19's `info` or its watch points (exit 1),
/// and it resolves no symbol of a recording whose `.sym` files have sizes
/// when the session's maps come first (raw addresses), while tracemux
/// reads both (the README's status table says so).
#[test]
fn what_uftrace_013_made_of_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/uftrace/newer");
    let codes =
        |rec: &str| std::fs::read_to_string(root.join(rec).join("exit-codes.old.txt")).unwrap();
    for rec in ["pg-args-types", "pg-watch-octal"] {
        let c = codes(rec);
        assert!(
            c.lines()
                .any(|l| l.starts_with("replay:") && l.ends_with("exit 1")),
            "{rec}: {c}"
        );
    }
    let old = std::fs::read_to_string(root.join("pg-threads-fork/replay.old.txt")).unwrap();
    let new = std::fs::read_to_string(root.join("pg-threads-fork/replay.txt")).unwrap();
    assert!(
        old.contains("| <") && !new.contains("| <"),
        "raw addresses in 0.13's replay only"
    );
}
