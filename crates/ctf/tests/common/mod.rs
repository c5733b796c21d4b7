//! Helpers shared by the CTF tests: where the fixtures are, the fixture
//! traces and their CTF 2 copies, reference outputs, babeltrace2 command
//! lines as options, warnings without stream paths, yactfr listings.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};

use tracemux_ctf::decode::Program;
use tracemux_ctf::ir::TraceClass;
use tracemux_ctf::listing::Listing;
use tracemux_ctf::stream::decode_file;
use tracemux_ctf::text::{report, TextOptions};

/// `tests/fixtures/REL` of the repository.
pub fn fixtures(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel)
}

/// `REL` of the shared corpus beside the repository (absent on most
/// machines: the tests that use it skip what is not there).
pub fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(rel)
}

/// The subdirectories of `root` that hold `marker` (a file or a
/// directory), sorted; none when `root` cannot be read.
pub fn dirs_with(root: &Path, marker: &str) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(marker).exists())
        .collect();
    dirs.sort();
    dirs
}

/// The fixture traces (directories with `exit-codes.txt` and `trace/`).
pub fn traces() -> Vec<PathBuf> {
    dirs_with(&fixtures("ctf"), "exit-codes.txt")
}

/// The babeltrace2 text runs that `exit-codes.txt` of the fixture `d`
/// lists: (name, options, babeltrace2's stdout). Other sinks and runs
/// without a stored output are left out.
pub fn variants(d: &Path) -> Vec<(String, TextOptions, Vec<u8>)> {
    let codes = std::fs::read_to_string(d.join("exit-codes.txt")).unwrap();
    let mut v = Vec::new();
    for line in codes.lines() {
        let Some((name, rest)) = line.split_once(": babeltrace2 ") else {
            continue;
        };
        let cmd = rest.split(" -> ").next().unwrap_or("");
        let args: Vec<&str> = cmd.split_whitespace().collect();
        if let (Some(opts), Some(expected)) = (options(&args), read_ref(d, name)) {
            v.push((name.to_string(), opts, expected));
        }
    }
    v
}

pub fn copy_tree(src: &Path, dst: &Path) {
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

/// Paths (relative to `root`) of the `metadata` files under `root`.
pub fn metadata_files(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
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

/// The committed CTF 2 translation of the fixture `trace`'s metadata
/// file `rel`.
pub fn translated(trace: &Path, rel: &Path) -> PathBuf {
    fixtures("ctf2/translated")
        .join(trace.file_name().unwrap())
        .join(rel)
}

/// A copy of `t/trace` with every metadata file replaced by its CTF 2
/// translation, in a fresh directory `scratch/trace` (babeltrace2 was run
/// on `trace`: trace names derive from it).
pub fn ctf2_copy(t: &Path, scratch: &Path) -> PathBuf {
    let dst = scratch.join("trace");
    copy_tree(&t.join("trace"), &dst);
    let mut metas = Vec::new();
    metadata_files(&t.join("trace"), Path::new(""), &mut metas);
    for rel in metas {
        std::fs::copy(translated(t, &rel), dst.join(&rel)).unwrap();
    }
    dst
}

/// yactfr's element listing of the stream `data` described by `tc`, an
/// error line where decoding stops.
pub fn listing_of(tc: &TraceClass, data: &[u8]) -> String {
    let prog = Program::compile(tc).unwrap();
    let mut l = Listing::new(tc);
    if let Err(e) = decode_file(&prog, tc.uuid, data, &mut l) {
        l.error(e.packet_offset * 8 + e.error.bit, &e.error.to_string());
    }
    l.out
}

/// The listing of `trace/stream` described by `trace/metadata` (read with
/// `parse`).
pub fn listing(trace: &Path, parse: fn(&[u8]) -> TraceClass) -> String {
    let meta = std::fs::read(trace.join("metadata")).unwrap();
    let data = std::fs::read(trace.join("stream")).unwrap();
    listing_of(&parse(&meta), &data)
}

/// Listings compared: for a `fail-*` case, all lines but the error
/// message text of the last line.
pub fn same_listing(expected: &str, got: &str, fail: bool) -> bool {
    if !fail {
        return expected == got;
    }
    let e: Vec<&str> = expected.lines().collect();
    let g: Vec<&str> = got.lines().collect();
    if e.len() != g.len() || e.is_empty() {
        return false;
    }
    let n = e.len() - 1;
    e[..n] == g[..n] && e[n].split_whitespace().next() == g[n].split_whitespace().next()
}

/// What [`check_listings`] found under one root.
#[derive(Default)]
pub struct ListingCheck {
    /// Cases checked.
    pub cases: usize,
    /// Cases that differ from yactfr (known gaps left out).
    pub bad: Vec<String>,
    /// Known gaps that now match.
    pub fixed: Vec<String>,
}

/// Every case under `root` with an `expected-elements.txt` against its
/// listing; `gaps` names the cases expected to differ.
pub fn check_listings(
    root: &Path,
    parse: fn(&[u8]) -> TraceClass,
    gaps: &[(&str, &str)],
) -> ListingCheck {
    let mut c = ListingCheck::default();
    for d in dirs_with(root, "expected-elements.txt") {
        let expected = std::fs::read_to_string(d.join("expected-elements.txt")).unwrap();
        c.cases += 1;
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        let got = listing(&d.join("trace"), parse);
        let matches = same_listing(&expected, &got, name.contains("fail-"));
        let known = gaps.iter().any(|(k, _)| *k == name);
        if known && matches {
            c.fixed.push(name);
        } else if !known && !matches {
            c.bad.push(name);
        }
    }
    c
}

/// A reference output: `NAME.txt`, or `NAME.txt.zst` decompressed.
pub fn read_ref(dir: &Path, name: &str) -> Option<Vec<u8>> {
    if let Ok(b) = std::fs::read(dir.join(format!("{name}.txt"))) {
        return Some(b);
    }
    let z = std::fs::read(dir.join(format!("{name}.txt.zst"))).ok()?;
    let mut out = Vec::new();
    zstd::stream::read::Decoder::new(&z[..])
        .ok()?
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

/// Options from a babeltrace2 command line (as in `exit-codes.txt`);
/// `None` for other sinks.
pub fn options(args: &[&str]) -> Option<TextOptions> {
    let mut o = TextOptions {
        timezone: Some("UTC".into()),
        ..TextOptions::default()
    };
    for a in args {
        let (k, v) = a.split_once('=').unwrap_or((a, ""));
        match k {
            k if o.set_flag(k) => {}
            "--names" => o.set_names(v).ok()?,
            "--fields" => o.set_fields(v).ok()?,
            "trace" => {}
            _ => return None,
        }
    }
    Some(o)
}

/// Warnings without the stream file paths (those of the recording
/// machine in the references).
pub fn strip_stream_names(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    s.lines()
        .map(
            |l| match (l.find("within stream \""), l.rfind("\" (stream class")) {
                (Some(a), Some(b)) if b > a => format!("{}{}", &l[..a], &l[b + 1..]),
                _ => l.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

/// What differs between a `report` run (its result, stdout and warnings)
/// and babeltrace2's (`expected` stdout, `exp_err` stderr, compared
/// without stream paths), each prefixed with `tag`.
pub fn differences<T, E: std::fmt::Display>(
    tag: &str,
    r: &Result<T, E>,
    (expected, out): (&[u8], &[u8]),
    (exp_err, err): (&[u8], &[u8]),
) -> Vec<String> {
    let mut bad = Vec::new();
    match r {
        Err(e) => bad.push(format!("{tag}: error {e}")),
        Ok(_) if out != expected => {
            let n = String::from_utf8_lossy(expected)
                .lines()
                .zip(String::from_utf8_lossy(out).lines())
                .position(|(a, b)| a != b)
                .map(|i| i + 1);
            bad.push(format!("{tag}: stdout differs (first at line {n:?})"));
        }
        Ok(_) => {}
    }
    if strip_stream_names(exp_err) != strip_stream_names(err) {
        bad.push(format!("{tag}: stderr differs"));
    }
    bad
}

/// A conformance case `d`: its name, and babeltrace2's exit code and
/// stdout (`exit-code.txt`, `bt2.txt`).
pub fn bt2_case(d: &Path) -> (String, i32, Vec<u8>) {
    let name = d.file_name().unwrap().to_string_lossy().into_owned();
    let code: i32 = std::fs::read_to_string(d.join("exit-code.txt"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (name, code, std::fs::read(d.join("bt2.txt")).unwrap())
}

/// `report` of `d/trace` with babeltrace2's default options, damage an
/// error: (events or the error, stdout, warnings).
pub fn run_strict(d: &Path) -> (Result<u64, String>, Vec<u8>, Vec<u8>) {
    let opts = TextOptions {
        strict: true,
        ..options(&[]).unwrap()
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let r = report(&[d.join("trace")], &opts, &mut out, &mut err)
        .map(|s| s.events)
        .map_err(|e| e.to_string());
    (r, out, err)
}
