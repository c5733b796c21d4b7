//! yactfr element listings of the CTF 2 conformance cases: the CTF 2
//! metadata frontend and the decoder must produce yactfr's listing line for
//! line (for `fail-*` cases: the same lines, then an error at the same bit
//! offset; the error message wording is ours). The cases are in
//! `tests/fixtures/ctf2` (and `shared/corpus/ctf2` when present).

use std::path::{Path, PathBuf};

use tracemux_ctf::{ctf2, decode::Program, listing::Listing, stream::decode_file};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/ctf2")
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ctf2")
}

/// Listing of `trace/stream` with `trace/metadata`.
fn listing(trace: &Path) -> String {
    let meta = std::fs::read(trace.join("metadata")).unwrap();
    let data = std::fs::read(trace.join("stream")).unwrap();
    let tc = ctf2::parse_metadata(&meta).unwrap();
    let prog = Program::compile(&tc).unwrap();
    let mut l = Listing::new(&tc);
    if let Err(e) = decode_file(&prog, tc.uuid, &data, &mut l) {
        l.error(e.packet_offset * 8 + e.error.bit, &e.error.to_string());
    }
    l.out
}

/// Cases where the decoder knowingly differs from yactfr, and why. The
/// test fails when one of them starts to match (then remove it here).
const KNOWN_DECODER_GAPS: &[(&str, &str)] = &[];

/// Compare all lines but the error message text of the last line.
fn same(expected: &str, got: &str, fail: bool) -> bool {
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

/// (cases checked, names of those that differ, names of known gaps that
/// match).
fn check_dir(root: &Path) -> (usize, Vec<String>, Vec<String>) {
    let mut bad = Vec::new();
    let mut fixed = Vec::new();
    let mut n = 0;
    let Ok(rd) = std::fs::read_dir(root) else {
        return (0, bad, fixed);
    };
    let mut dirs: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for d in dirs {
        let Ok(expected) = std::fs::read_to_string(d.join("expected-elements.txt")) else {
            continue;
        };
        n += 1;
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        let got = listing(&d.join("trace"));
        let matches = same(&expected, &got, name.contains("fail-"));
        let known = KNOWN_DECODER_GAPS.iter().any(|(k, _)| *k == name);
        if known && matches {
            fixed.push(name);
        } else if !known && !matches {
            bad.push(name);
        }
    }
    (n, bad, fixed)
}

#[test]
fn ctf2_conformance_listings() {
    let mut total = 0;
    let mut bad = Vec::new();
    let mut fixed = Vec::new();
    for root in [fixtures(), corpus()] {
        let (n, b, f) = check_dir(&root);
        total += n;
        bad.extend(b);
        fixed.extend(f);
    }
    assert!(
        fixed.is_empty(),
        "known gaps now match yactfr, remove them from KNOWN_DECODER_GAPS: {fixed:?}"
    );
    assert!(
        bad.is_empty(),
        "{} of {total} listings differ: {bad:?}",
        bad.len()
    );
    // The 47 cases of the corpus (when present) and their copies in the
    // repository.
    let expected = 47 * (corpus().is_dir() as usize + fixtures().is_dir() as usize);
    assert_eq!(total, expected);
}
