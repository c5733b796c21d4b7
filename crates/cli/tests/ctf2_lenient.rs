//! `tracemux report` / `stats` on the CTF 2 traces of
//! `tests/fixtures/ctf2-lenient` (issue 17): forgiven irregularities are
//! one warning each on stderr, every event is printed and the exit status
//! is 1, as for damage (issue 40); `--strict`
//! refuses them with an error naming the metadata file and the offset.

mod common;

#[test]
fn lenient_by_default_refused_with_strict() {
    let root = common::repo_root().join("tests/fixtures/ctf2-lenient");
    for case in ["trailing-commas", "no-record-separator", "draft-names"] {
        let dir = root.join(case);
        let want = std::fs::read(dir.join("expected.txt")).unwrap();
        let out = common::tracemux(&["report", "trace"], &dir);
        // read on with a warning, exit status 1 as for damage (issue 40)
        assert_eq!(out.status.code(), Some(1), "{case}: {out:?}");
        assert_eq!(out.stdout, want, "{case}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{case}: {err}");
        assert!(
            err.starts_with("tracemux: warning: trace/metadata: CTF 2 metadata"),
            "{case}: {err}"
        );

        for cmd in [
            &["report", "--strict", "trace"][..],
            &["stats", "--strict", "trace"],
        ] {
            let out = common::tracemux(cmd, &dir);
            assert!(!out.status.success(), "{case} {cmd:?}: {out:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("trace/metadata: CTF 2 metadata"),
                "{case}: {err}"
            );
            assert!(err.contains("refused in strict mode"), "{case}: {err}");
            assert!(
                err.contains("in section 'metadata' at offset 0x"),
                "{case}: {err}"
            );
        }
    }
    // Valid CTF 2 that an earlier version refused: no warning, strict or not.
    for case in ["optional-ids", "no-id-fields", "packetized-checksum"] {
        let dir = root.join(case);
        let want = std::fs::read(dir.join("expected.txt")).unwrap();
        let out = common::tracemux(&["report", "--strict", "trace"], &dir);
        assert!(out.status.success(), "{case}: {out:?}");
        assert_eq!(out.stdout, want, "{case}");
        assert!(out.stderr.is_empty(), "{case}: {out:?}");
    }
}
