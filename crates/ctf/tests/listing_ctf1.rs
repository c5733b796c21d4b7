//! yactfr element listings of the CTF 1.8 conformance cases and of the
//! barectf trace: our decoder must produce yactfr's listing line for line
//! (for `fail-*` cases: the same lines, then an error at the same bit
//! offset; the error message wording is ours).

mod common;

use common::{check_listings, corpus, fixtures, listing, ListingCheck};
use tracemux_ctf::{ir::TraceClass, tsdl};

fn parse(meta: &[u8]) -> TraceClass {
    tsdl::parse_metadata(meta).unwrap()
}

#[test]
fn ctf1_conformance_listings() {
    let mut total = 0;
    let mut bad = Vec::new();
    for root in [fixtures("ctf/conformance"), corpus("ctf1-conformance")] {
        let ListingCheck { cases, bad: b, .. } = check_listings(&root, parse, &[]);
        total += cases;
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
        fixtures("ctf/barectf-bitfields"),
        corpus("ctf/barectf-bitfields"),
    ] {
        let Ok(expected) = std::fs::read_to_string(d.join("yactfr-elements.txt")) else {
            continue;
        };
        assert_eq!(listing(&d.join("trace"), parse), expected);
    }
}
