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
