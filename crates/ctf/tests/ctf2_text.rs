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

use std::path::Path;

use common::{ctf2_copy, differences, metadata_files, traces, translated, variants};
use tracemux_ctf::text::report;

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
        for (name, opts, expected) in variants(&t) {
            let mut out = Vec::new();
            let mut err = Vec::new();
            let r = report(std::slice::from_ref(&input), &opts, &mut out, &mut err);
            checked += 1;
            let exp_err = std::fs::read(t.join(format!("{name}.stderr"))).unwrap_or_default();
            bad.extend(differences(
                &format!("{tag}/{name}"),
                &r,
                (&expected, &out),
                (&exp_err, &err),
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch_root);
    assert!(checked >= 56, "only {checked} variants checked");
    tracemux_testkit::assert_all_passed(&bad, checked, "differ");
}
