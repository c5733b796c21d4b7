//! `tracemux report` on the CTF 2 traces of `tests/fixtures/ctf2-violations`
//! (issue 40, item 2; written by its `make.py` from the specification's
//! rules, see its `RECORD.md`):
//!
//! * the packetized metadata of CTF2-PMETA-1.0 (44-byte headers, both byte
//!   orders) is valid: read with no warning, strict or not;
//! * every violation is read on with one warning naming the file and the
//!   byte offset and exit status 1, and refused by `--strict` with an error
//!   naming the file, the section and the same offset.
//!
//! The expected text is tracemux's output checked by hand against the
//! bytes `make.py` writes (babeltrace2 2.0.4, the one installed, reads no
//! CTF 2).

mod common;

#[test]
fn packetized_metadata_of_both_byte_orders() {
    let root = common::repo_root().join("tests/fixtures/ctf2-violations");
    for case in ["pmeta-le", "pmeta-be"] {
        let dir = root.join(case);
        let want = std::fs::read(dir.join("expected.txt")).unwrap();
        for args in [&["report", "trace"][..], &["report", "--strict", "trace"]] {
            let out = common::tracemux(args, &dir);
            assert_eq!(out.status.code(), Some(0), "{case} {args:?}: {out:?}");
            assert_eq!(out.stdout, want, "{case}");
            assert!(out.stderr.is_empty(), "{case}: {out:?}");
        }
    }
}

#[test]
fn violations_warned_exit_1_refused_by_strict() {
    let root = common::repo_root().join("tests/fixtures/ctf2-violations");
    // case, file named, section of the strict error, byte offset
    let cases = [
        // the first JSON text has no 0x1E before it, the later ones have
        ("first-fragment-no-rs", "trace/metadata", "metadata", 0),
        // the second metadata packet (at 44 + 628) has another UUID
        ("pmeta-uuid-mismatch", "trace/metadata", "metadata", 676),
        // the second data packet (at 24) holds a UUID not the trace's
        ("packet-uuid-differs", "trace/stream", "packet header", 24),
        // `length` 5 of the UTF-16LE string (the first of two places)
        ("string-size-odd", "trace/metadata", "metadata", 1211),
    ];
    for (case, file, section, offset) in cases {
        let dir = root.join(case);
        let want = std::fs::read(dir.join("expected.txt")).unwrap();
        let out = common::tracemux(&["report", "trace"], &dir);
        assert_eq!(out.status.code(), Some(1), "{case}: {out:?}");
        assert_eq!(out.stdout, want, "{case}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{case}: {err}");
        assert!(err.starts_with("tracemux: warning: "), "{case}: {err}");
        assert!(err.contains(file), "{case}: {err}");
        assert!(
            err.trim_end().ends_with(&format!("(byte offset {offset})")),
            "{case}: {err}"
        );

        let out = common::tracemux(&["report", "--strict", "trace"], &dir);
        assert_eq!(out.status.code(), Some(1), "{case} strict: {out:?}");
        assert!(out.stdout.is_empty(), "{case} strict: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(file), "{case}: {err}");
        assert!(err.contains("refused in strict mode"), "{case}: {err}");
        assert!(
            err.contains(&format!("in section '{section}' at offset {offset:#x}")),
            "{case}: {err}"
        );
    }
}
