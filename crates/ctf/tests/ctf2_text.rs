//! The CTF 1.8 fixture traces with their metadata translated to CTF 2
//! (`tests/fixtures/ctf2/translated/`, written by `ctf2::write_metadata`)
//! print exactly what babeltrace2 2.0.4 printed for the CTF 1.8 originals:
//! same data streams, other metadata language, same text, for every option
//! variant of the fixture (stdout byte for byte, warnings without the
//! stream paths).
//!
//! The translated metadata files are fixtures: `translations_are_current`
//! checks that the writer still produces them (set `TRACEMUX_UPDATE_CTF2=1`
//! to rewrite them after a deliberate writer change; they are our output,
//! the text expectations stay babeltrace2's).

mod common;

use std::path::{Path, PathBuf};

use common::{options, read_ref, strip_stream_names};
use tracemux_ctf::text::report;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// The fixture traces (directories with `exit-codes.txt` and `trace/`).
fn traces() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures().join("ctf"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("exit-codes.txt").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// Paths (relative to `root`) of the `metadata` files under `root`.
fn metadata_files(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(root.join(rel))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        let r = rel.join(p.file_name().unwrap());
        if p.is_dir() {
            metadata_files(root, &r, out);
        } else if r.file_name().is_some_and(|n| n == "metadata") {
            out.push(r);
        }
    }
}

/// The committed translation of `trace`'s metadata file `rel`.
fn translated(trace: &Path, rel: &Path) -> PathBuf {
    fixtures()
        .join("ctf2/translated")
        .join(trace.file_name().unwrap())
        .join(rel)
}

#[test]
fn translations_are_current() {
    let update = std::env::var_os("TRACEMUX_UPDATE_CTF2").is_some();
    let mut n = 0;
    for t in traces() {
        let mut metas = Vec::new();
        metadata_files(&t.join("trace"), Path::new(""), &mut metas);
        for rel in metas {
            let tsdl = std::fs::read(t.join("trace").join(&rel)).unwrap();
            let tc = tracemux_ctf::tsdl::parse_metadata(&tsdl).unwrap();
            let json = tracemux_ctf::ctf2::write_metadata(&tc).unwrap();
            let dst = translated(&t, &rel);
            if update {
                std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
                std::fs::write(&dst, &json).unwrap();
            }
            let committed =
                std::fs::read_to_string(&dst).unwrap_or_else(|e| panic!("{}: {e}", dst.display()));
            assert_eq!(committed, json, "{} is stale", dst.display());
            n += 1;
        }
    }
    assert_eq!(n, 8);
}

fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let p = e.path();
        let d = dst.join(e.file_name());
        if p.is_dir() {
            copy_tree(&p, &d);
        } else {
            std::fs::copy(&p, &d).unwrap();
        }
    }
}

/// A copy of `trace/` with every metadata file replaced by its CTF 2
/// translation, in a fresh directory `.../trace` (babeltrace2 was run on
/// `trace`: trace names derive from it).
fn ctf2_copy(t: &Path, scratch: &Path) -> PathBuf {
    let dst = scratch.join("trace");
    copy_tree(&t.join("trace"), &dst);
    let mut metas = Vec::new();
    metadata_files(&t.join("trace"), Path::new(""), &mut metas);
    for rel in metas {
        std::fs::copy(translated(t, &rel), dst.join(&rel)).unwrap();
    }
    dst
}

#[test]
fn translated_traces_print_like_babeltrace2() {
    let scratch_root =
        std::env::temp_dir().join(format!("tracemux-ctf2-text-{}", std::process::id()));
    let mut checked = 0;
    let mut bad = Vec::new();
    for t in traces() {
        let tag = t.file_name().unwrap().to_string_lossy().into_owned();
        let scratch = scratch_root.join(&tag);
        let input = ctf2_copy(&t, &scratch);
        let codes = std::fs::read_to_string(t.join("exit-codes.txt")).unwrap();
        for line in codes.lines() {
            let Some((name, rest)) = line.split_once(": babeltrace2 ") else {
                continue;
            };
            let cmd = rest.split(" -> ").next().unwrap_or("");
            let args: Vec<&str> = cmd.split_whitespace().collect();
            let (Some(opts), Some(expected)) = (options(&args), read_ref(&t, name)) else {
                continue;
            };
            let mut out = Vec::new();
            let mut err = Vec::new();
            let r = report(std::slice::from_ref(&input), &opts, &mut out, &mut err);
            checked += 1;
            match r {
                Err(e) => bad.push(format!("{tag}/{name}: error {e}")),
                Ok(_) if out != expected => {
                    let n = String::from_utf8_lossy(&expected)
                        .lines()
                        .zip(String::from_utf8_lossy(&out).lines())
                        .position(|(a, b)| a != b)
                        .map(|i| i + 1);
                    bad.push(format!(
                        "{tag}/{name}: stdout differs (first at line {n:?})"
                    ));
                }
                Ok(_) => {}
            }
            let exp_err = std::fs::read(t.join(format!("{name}.stderr"))).unwrap_or_default();
            if strip_stream_names(&exp_err) != strip_stream_names(&err) {
                bad.push(format!("{tag}/{name}: stderr differs"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch_root);
    assert!(checked >= 56, "only {checked} variants checked");
    assert!(
        bad.is_empty(),
        "{} of {checked} differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
