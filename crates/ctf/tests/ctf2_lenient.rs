//! CTF 2 as other producers write it (issue 17): the hand-made traces of
//! `tests/fixtures/ctf2-lenient` (see its README for the rule each checks
//! and how the bytes were made).
//!
//! For every case:
//! * the text output is `expected.txt` (worked out from the specification;
//!   babeltrace2 2.0.4, the one installed where the fixtures were made,
//!   reads no CTF 2);
//! * what is forgiven is reported once per kind, as `warnings.txt` says
//!   (no file: nothing is forgiven, the trace is valid CTF 2);
//! * with a `twin/` (the same stream with metadata in strict CTF 2.0), the
//!   twin prints the same text and the same yactfr element listing, with
//!   no warning, in strict mode too;
//! * strict mode refuses exactly the cases with warnings, with an error
//!   that names the metadata file and the byte offset of the warning.
//!
//! Then traces that are really invalid are refused with or without strict
//! mode.

mod common;

use std::path::{Path, PathBuf};

use common::{dirs_with, fixtures, listing_of};

use tracemux_ctf::ctf2::{self, Leniency};
use tracemux_ctf::decode::Program;
use tracemux_ctf::fs::{read_metadata_noted, ReadLoader};
use tracemux_ctf::ir::TraceClass;
use tracemux_ctf::listing::Listing;
use tracemux_ctf::stream::decode_file;
use tracemux_ctf::text::{report, TextOptions};

fn root() -> PathBuf {
    fixtures("ctf2-lenient")
}

fn cases() -> Vec<PathBuf> {
    dirs_with(&root(), "trace")
}

fn opts(strict: bool) -> TextOptions {
    TextOptions {
        timezone: Some("UTC".into()),
        threads: Some(1),
        strict,
        ..TextOptions::default()
    }
}

/// Text output and warnings (the metadata path removed) of `trace`.
fn run(trace: &Path, strict: bool) -> Result<(String, String), tracemux_core::Error> {
    let (mut out, mut warn) = (Vec::new(), Vec::new());
    report(&[trace.to_path_buf()], &opts(strict), &mut out, &mut warn)?;
    let prefix = format!("tracemux: warning: {}: ", trace.join("metadata").display());
    let warn = String::from_utf8(warn).unwrap();
    let warn: String = warn
        .lines()
        .map(|l| format!("{}\n", l.strip_prefix(&prefix).unwrap_or(l)))
        .collect();
    Ok((String::from_utf8(out).unwrap(), warn))
}

/// yactfr's element listing of the single stream file of `trace`.
fn listing(trace: &Path) -> String {
    let (tc, _) = read_metadata_noted(trace, &ReadLoader, false).unwrap();
    listing_of(&tc, &std::fs::read(trace.join("stream")).unwrap())
}

#[test]
fn every_case_prints_its_expected_text() {
    let cases = cases();
    assert!(cases.len() >= 9, "{cases:?}");
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let trace = case.join("trace");
        let want = std::fs::read_to_string(case.join("expected.txt")).unwrap();
        let want_warn = std::fs::read_to_string(case.join("warnings.txt")).unwrap_or_default();
        let (out, warn) = run(&trace, false).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(out, want, "{name}: text");
        assert_eq!(warn, want_warn, "{name}: warnings");
        assert!(!want.is_empty(), "{name}: every event printed");
        // One warning per kind at most.
        assert!(warn.lines().count() <= 4, "{name}: {warn}");

        let twin = case.join("twin");
        if twin.is_dir() {
            let (tout, twarn) = run(&twin, true).unwrap_or_else(|e| panic!("{name} twin: {e}"));
            assert_eq!(tout, want, "{name}: twin text");
            assert_eq!(twarn, "", "{name}: twin warnings");
            assert_eq!(listing(&trace), listing(&twin), "{name}: listing");
        }

        match run(&trace, true) {
            Ok((out, _)) => {
                assert!(want_warn.is_empty(), "{name}: accepted in strict mode");
                assert_eq!(out, want, "{name}: strict text");
            }
            Err(e) => {
                assert!(!want_warn.is_empty(), "{name}: refused in strict mode: {e}");
                let text = e.to_string();
                let meta = trace.join("metadata").display().to_string();
                assert!(text.contains(&meta), "{name}: {text}");
                assert!(text.contains("refused in strict mode"), "{name}: {text}");
                // The offset of the (first) warning.
                let off: u64 = want_warn
                    .rsplit_once("(byte offset ")
                    .and_then(|(_, t)| t.trim_end().strip_suffix(')'))
                    .and_then(|t| t.parse().ok())
                    .unwrap_or_else(|| panic!("{name}: no offset in {want_warn}"));
                assert_eq!(e.offset, off, "{name}: {text}");
                assert_eq!(e.section, "metadata", "{name}");
            }
        }
    }
}

#[test]
fn notes_say_which_kind() {
    let kinds = |case: &str| -> Vec<Leniency> {
        let t = root().join(case).join("trace");
        let (_, notes) = read_metadata_noted(&t, &ReadLoader, false).unwrap();
        notes.iter().map(|n| n.kind).collect()
    };
    assert_eq!(kinds("trailing-commas"), [Leniency::Json]);
    assert_eq!(kinds("no-record-separator"), [Leniency::Json]);
    assert_eq!(kinds("concatenated-fragments"), [Leniency::Json]);
    assert_eq!(kinds("draft-names"), [Leniency::DraftName]);
    assert_eq!(kinds("duplicate-members"), [Leniency::DuplicateMember]);
    assert_eq!(
        kinds("bool-selector-ranges"),
        [Leniency::BoolSelectorRanges]
    );
    for valid in ["optional-ids", "no-id-fields", "packetized-checksum"] {
        assert_eq!(kinds(valid), [], "{valid}");
    }
}

/// The trace class of case `name`, read leniently, which must be its
/// twin's (read strictly).
fn same_as_twin(name: &str) -> TraceClass {
    let (tc, _) =
        read_metadata_noted(&root().join(name).join("trace"), &ReadLoader, false).unwrap();
    let (twin, _) =
        read_metadata_noted(&root().join(name).join("twin"), &ReadLoader, true).unwrap();
    assert_eq!(tc, twin, "{name}");
    tc
}

#[test]
fn draft_enumerations_are_integers_with_mappings() {
    let tc = same_as_twin("draft-names");
    let cc = &tc.clocks[0];
    assert_eq!(cc.name, "mono");
    assert_eq!((cc.offset_seconds, cc.offset_cycles), (1_700_000_000, 500));
    assert!(cc.origin_is_unix_epoch);
    assert_eq!(cc.uuid, Some(core::array::from_fn(|i| i as u8)));
    assert_eq!(tc.stream_classes[0].event_classes[0].log_level, Some(4));
}

#[test]
fn bool_selector_ranges_are_dropped() {
    same_as_twin("bool-selector-ranges");
}

/// The metadata of `optional-ids` with `from` replaced by `to`.
fn variant(from: &str, to: &str) -> Vec<u8> {
    let m = std::fs::read_to_string(root().join("optional-ids/trace/metadata")).unwrap();
    m.replace(from, to).into_bytes()
}

#[test]
fn invalid_traces_are_refused_either_way() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "major version",
            variant("\"version\": 2", "\"version\": 3"),
            "CTF version 3",
        ),
        (
            "unknown fragment type",
            variant("\"trace-class\"", "\"trace-klass\""),
            "unknown fragment type `trace-klass`",
        ),
        (
            "trailing comma alone",
            variant("\"version\": 2", "\"version\": 2,,"),
            "JSON syntax",
        ),
        (
            "text after a fragment",
            variant("\"version\": 2}", "\"version\": 2} x"),
            "JSON syntax: unexpected data after the JSON value",
        ),
        (
            "duplicate event record class ID",
            variant("\"id\": 1, ", ""),
            "duplicate event record class ID 0",
        ),
    ];
    for (what, meta, want) in cases {
        for strict in [false, true] {
            let e = ctf2::parse_with(&meta, strict).unwrap_err();
            assert!(e.to_string().contains(want), "{what}: {e}");
            assert!(e.offset > 0 && e.offset < meta.len(), "{what}: {e:?}");
        }
    }
}

/// A metadata packet (CTF2-PMETA-1.0 / CTF 1.8 layout), little-endian.
fn packet(content: &[u8], version: (u8, u8), scheme: u8, total_extra: i64) -> Vec<u8> {
    let n = 37 + content.len() as i64;
    let mut p = 0x75d1_1d57u32.to_le_bytes().to_vec();
    p.extend_from_slice(&[7; 16]);
    p.extend_from_slice(&0xdead_beefu32.to_le_bytes());
    p.extend_from_slice(&((n * 8) as u32).to_le_bytes());
    p.extend_from_slice(&(((n + total_extra) * 8) as u32).to_le_bytes());
    p.extend_from_slice(&[0, 0, scheme, version.0, version.1]);
    p.extend_from_slice(content);
    p
}

/// Read `meta` as the metadata of a trace directory.
fn read_dir_metadata(name: &str, meta: &[u8]) -> Result<(), tracemux_core::Error> {
    let dir = std::env::temp_dir().join(format!(
        "tracemux-ctf2-lenient-{}-{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("metadata"), meta).unwrap();
    let r = read_metadata_noted(&dir, &ReadLoader, false).map(|_| ());
    std::fs::remove_dir_all(&dir).unwrap();
    r
}

#[test]
fn metadata_packets() {
    let text = std::fs::read(root().join("optional-ids/trace/metadata")).unwrap();
    // Checksum scheme 0: the checksum field is ignored (CTF 1.8 and 2).
    read_dir_metadata("ok", &packet(&text, (2, 0), 0, 0)).unwrap();
    let tsdl = b"/* CTF 1.8 */ trace { major = 1; minor = 8; byte_order = le; };";
    let tc = tracemux_ctf::tsdl::parse_metadata(&packet(tsdl, (1, 8), 0, 4)).unwrap();
    assert_eq!(tc.version, tracemux_ctf::ir::CtfVersion::Ctf1);
    // Another checksum scheme is not supported; its offset is named.
    let e = read_dir_metadata("scheme", &packet(&text, (2, 0), 1, 0)).unwrap_err();
    assert!(e.to_string().contains("checksum scheme 1"), "{e}");
    assert_eq!(e.offset, 34);
    // A total size smaller than the content size.
    let e = read_dir_metadata("total", &packet(&text, (2, 0), 0, -1)).unwrap_err();
    assert!(e.to_string().contains("content size"), "{e}");
    // Packets of two versions.
    let mut two = packet(&text[..10], (2, 0), 0, 0);
    two.extend(packet(&text[10..], (1, 8), 0, 0));
    let e = read_dir_metadata("versions", &two).unwrap_err();
    assert!(
        e.to_string()
            .contains("version 1.8 in a CTF 2 metadata stream"),
        "{e}"
    );
    assert_eq!(e.offset, 47);
    // A CTF 2 packet read as TSDL, and the other way round.
    assert!(tracemux_ctf::tsdl::parse_metadata(&packet(&text, (2, 0), 0, 0)).is_err());
    assert!(read_dir_metadata("tsdl", &packet(tsdl, (2, 0), 0, 0)).is_err());
}

/// Several event record classes, no event record class ID field, none
/// with ID 0: the data cannot say which class an event record is of.
#[test]
fn no_class_with_id_zero() {
    let trace = root().join("no-id-fields/trace");
    let meta = std::fs::read_to_string(trace.join("metadata"))
        .unwrap()
        .replace(
            "\"event-record-class\", \"name\": \"zero\"",
            "\"event-record-class\", \"id\": 4, \"name\": \"four\"",
        );
    let tc = ctf2::parse(meta.as_bytes()).unwrap();
    let prog = Program::compile(&tc).unwrap();
    let data = std::fs::read(trace.join("stream")).unwrap();
    let mut l = Listing::new(&tc);
    let e = decode_file(&prog, tc.uuid, &data, &mut l).unwrap_err();
    assert!(
        e.error.to_string().contains("several event record classes"),
        "{e:?}"
    );
}
