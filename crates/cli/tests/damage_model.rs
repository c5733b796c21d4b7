//! Damaged input through the common event model, for every format: each
//! file of a fixture trace (trace.dat; CTF metadata and stream files;
//! uftrace's info, task.txt, map, symbol and data files; LTT tracefiles of
//! a trace made by the fixture writer)
//! truncated at several points and with bytes flipped or zeroed, then
//! `report --json` and `convert --to ctf --reencode` run on it. Neither may
//! panic or hang (exit 0, or 1 with the damage reported); JSON output stays
//! one object per line.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::repo_root;

/// Copy `src` (a file or a directory tree) to `dst`.
fn copy_tree(src: &Path, dst: &Path) {
    if src.is_dir() {
        std::fs::create_dir_all(dst).unwrap();
        for e in std::fs::read_dir(src).unwrap().flatten() {
            copy_tree(&e.path(), &dst.join(e.file_name()));
        }
    } else {
        std::fs::copy(src, dst).unwrap();
    }
}

/// One damage: its name, a length to cut the file to, bytes to write at an
/// offset.
type Damage = (String, Option<usize>, Option<(usize, Vec<u8>)>);

/// The damages tried on one file of `len` bytes.
fn damages(len: usize) -> Vec<Damage> {
    let mut v = Vec::new();
    for k in [0usize, 1, 2, 3, 5, 8, 13] {
        let at = len * k / 16;
        v.push((format!("cut@{at}"), Some(at), None));
    }
    // a deterministic spread of patches: flipped bytes, zeroed and
    // all-ones runs (extreme length words)
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..9 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if len == 0 {
            break;
        }
        let at = (x as usize) % len;
        let bytes = match i % 3 {
            0 => vec![0xff; 8],
            1 => vec![0; 8],
            _ => vec![(x >> 32) as u8 ^ 0x5a],
        };
        v.push((format!("patch{i}@{at}"), None, Some((at, bytes))));
    }
    v
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tracemux"))
        .env("TZ", "UTC")
        .args(args)
        .output()
        .expect("tracemux runs")
}

/// The files to damage in a trace (relative to it), and how to name the
/// trace on the command line (relative to its copy).
fn case(trace: &Path, files: &[&str]) -> (PathBuf, Vec<String>) {
    (
        trace.to_path_buf(),
        files.iter().map(|s| s.to_string()).collect(),
    )
}

#[test]
fn damaged_inputs_of_every_format_never_crash_the_model_paths() {
    let f = repo_root().join("tests/fixtures");
    let ctf = f.join("ctf/lttng-ust-uid/trace");
    let uft = f.join("uftrace/recorded/pg-args-types/uftrace.data");
    let ltt = common::ltt_trace("damage");
    let cases = [
        case(&f.join("tracedat/v7-instance-B/trace.dat"), &[""]),
        case(
            &ctf,
            &["ust/uid/0/64-bit/metadata", "ust/uid/0/64-bit/ch0_0"],
        ),
        case(
            &uft,
            &[
                "info",
                "task.txt",
                "sid-3fd97dcb33407cc3.map",
                "args.sym",
                "11151.dat",
                "perf-cpu0.dat",
            ],
        ),
        case(&ltt, &["cpu_0", "cpu_1", "control/facilities_0"]),
    ];
    let tmp = std::env::temp_dir().join(format!("tracemux-damage-model-{}", std::process::id()));
    let mut runs = 0;
    let mut fails = Vec::new();
    for (trace, files) in &cases {
        for file in files {
            let orig = if file.is_empty() {
                std::fs::read(trace).unwrap()
            } else {
                std::fs::read(trace.join(file)).unwrap()
            };
            for (name, cut, patch) in damages(orig.len()) {
                let _ = std::fs::remove_dir_all(&tmp);
                std::fs::create_dir_all(&tmp).unwrap();
                let copy = tmp.join("t");
                copy_tree(trace, &copy);
                let target = if file.is_empty() {
                    copy.clone()
                } else {
                    copy.join(file)
                };
                let mut b = orig.clone();
                if let Some(c) = cut {
                    b.truncate(c);
                }
                if let Some((at, bytes)) = &patch {
                    for (i, x) in bytes.iter().enumerate() {
                        if let Some(slot) = b.get_mut(at + i) {
                            *slot = *x;
                        }
                    }
                }
                std::fs::write(&target, &b).unwrap();
                let what = format!("{} {file} {name}", trace.display());
                let c = copy.to_str().unwrap();
                let json = run(&["report", "--json", c]);
                let out = tmp.join("out");
                let conv = run(&[
                    "convert",
                    "-q",
                    "--reencode",
                    "--to",
                    "ctf",
                    "-o",
                    out.to_str().unwrap(),
                    c,
                ]);
                runs += 2;
                for (cmd, o) in [("report --json", &json), ("convert", &conv)] {
                    let code = o.status.code();
                    let err = String::from_utf8_lossy(&o.stderr);
                    if !matches!(code, Some(0) | Some(1)) || err.contains("panicked") {
                        fails.push(format!(
                            "{what}: {cmd}: exit {code:?}: {}",
                            err.lines().last().unwrap_or("")
                        ));
                    }
                }
                for (n, line) in json.stdout.split(|&c| c == b'\n').enumerate() {
                    if !line.is_empty()
                        && serde_json::from_slice::<serde_json::Value>(line).is_err()
                    {
                        fails.push(format!("{what}: report --json line {} is not JSON", n + 1));
                        break;
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(
        fails.is_empty(),
        "{} of {runs} runs failed:\n{}",
        fails.len(),
        fails.join("\n")
    );
    assert!(runs > 100);
}
