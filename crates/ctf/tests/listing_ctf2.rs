//! yactfr element listings of the CTF 2 conformance cases: the CTF 2
//! metadata frontend and the decoder must produce yactfr's listing line for
//! line (for `fail-*` cases: the same lines, then an error at the same bit
//! offset; the error message wording is ours). The cases are in
//! `tests/fixtures/ctf2` (and `shared/corpus/ctf2` when present).

mod common;

use common::{check_listings, corpus, fixtures};
use tracemux_ctf::{ctf2, ir::TraceClass};

fn parse(meta: &[u8]) -> TraceClass {
    ctf2::parse_metadata(meta).unwrap()
}

/// Cases where the decoder knowingly differs from yactfr, and why. The
/// test fails when one of them starts to match (then remove it here).
const KNOWN_DECODER_GAPS: &[(&str, &str)] = &[];

#[test]
fn ctf2_conformance_listings() {
    let mut total = 0;
    let mut bad = Vec::new();
    let mut fixed = Vec::new();
    for root in [fixtures("ctf2"), corpus("ctf2")] {
        let c = check_listings(&root, parse, KNOWN_DECODER_GAPS);
        total += c.cases;
        bad.extend(c.bad);
        fixed.extend(c.fixed);
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
    let expected = 47 * (corpus("ctf2").is_dir() as usize + fixtures("ctf2").is_dir() as usize);
    assert_eq!(total, expected);
}
