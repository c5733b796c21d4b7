//! yactfr element listings of the CTF 1.8 conformance cases and of the
//! barectf trace: our decoder must produce yactfr's listing line for line
//! (for `fail-*` cases: the same lines, then an error at the same bit
//! offset; the error message wording is ours).

use std::path::{Path, PathBuf};

use tracemux_ctf::{decode::Program, listing::Listing, stream::decode_file, tsdl};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ctf")
}

/// Listing of `trace/stream` with `trace/metadata`.
fn listing(trace: &Path) -> String {
    let meta = std::fs::read(trace.join("metadata")).unwrap();
    let data = std::fs::read(trace.join("stream")).unwrap();
    let tc = tsdl::parse_metadata(&meta).unwrap();
    let prog = Program::compile(&tc).unwrap();
    let mut l = Listing::new(&tc);
    if let Err(e) = decode_file(&prog, tc.uuid, &data, &mut l) {
        l.error(e.packet_offset * 8 + e.error.bit, &e.error.to_string());
    }
    l.out
}

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

fn check_dir(root: &Path) -> (usize, Vec<String>) {
    let mut bad = Vec::new();
    let mut n = 0;
    let Ok(rd) = std::fs::read_dir(root) else {
        return (0, bad);
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
        if !same(&expected, &got, name.starts_with("fail-")) {
            bad.push(name);
        }
    }
    (n, bad)
}

#[test]
fn ctf1_conformance_listings() {
    let mut total = 0;
    let mut bad = Vec::new();
    for root in [
        fixtures().join("conformance"),
        corpus().join("ctf1-conformance"),
    ] {
        let (n, b) = check_dir(&root);
        total += n;
        bad.extend(b);
    }
    assert!(
        bad.is_empty(),
        "{} of {total} listings differ: {bad:?}",
        bad.len()
    );
}

#[test]
fn barectf_listing_matches_yactfr() {
    for d in [
        fixtures().join("barectf-bitfields"),
        corpus().join("ctf/barectf-bitfields"),
    ] {
        let Ok(expected) = std::fs::read_to_string(d.join("yactfr-elements.txt")) else {
            continue;
        };
        assert_eq!(listing(&d.join("trace")), expected);
    }
}
