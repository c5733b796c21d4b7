//! tracemux's own CTF 1.8 conformance cases (`tests/fixtures/ctf/
//! conformance-extra/`, written by its `make.py`, recorded by its
//! `record.sh`): every case against babeltrace2 2.0.4's real output.
//!
//! * babeltrace2 exits 0: the same stdout, byte for byte, and the same
//!   (empty) stderr;
//! * `fail-*` (invalid CTF; babeltrace2 fails too): an error, and the same
//!   stdout before it;
//! * `pass-*` where babeltrace2 fails on valid CTF: tracemux follows the
//!   format as yactfr does; the expected stdout is babeltrace2's output of
//!   `equiv-<rest>`, the same stream bytes described by metadata that
//!   babeltrace2 reads (see `RECORD.md`).

mod common;

use std::path::PathBuf;

use common::{bt2_case, dirs_with, fixtures, run_strict};

fn root() -> PathBuf {
    fixtures("ctf/conformance-extra")
}

#[test]
fn conformance_extra_against_babeltrace2() {
    let dirs = dirs_with(&root(), "trace");
    assert!(dirs.len() >= 13, "cases missing in {}", root().display());
    let mut bad = Vec::new();
    for d in &dirs {
        let (name, code, bt2) = bt2_case(d);
        let (r, out, err) = run_strict(d);
        let fail = name.starts_with("fail-");
        if fail {
            if r.is_ok() {
                bad.push(format!("{name}: no error"));
            }
            if out != bt2 {
                bad.push(format!("{name}: stdout before the error differs"));
            }
            continue;
        }
        // babeltrace2's output, or where it fails on valid CTF, its output
        // of `equiv-<rest>`
        let (want, of) = if code == 0 {
            (bt2, String::new())
        } else {
            let rest = name.strip_prefix("pass-").unwrap_or(&name);
            let equiv = root().join(format!("equiv-{rest}"));
            let want = std::fs::read(equiv.join("bt2.txt"))
                .unwrap_or_else(|_| panic!("{name}: babeltrace2 fails and no equiv-{rest}"));
            assert_eq!(
                std::fs::read_to_string(equiv.join("exit-code.txt"))
                    .unwrap()
                    .trim(),
                "0",
                "equiv-{rest}"
            );
            (want, format!(" from equiv-{rest}'s"))
        };
        if let Err(e) = &r {
            bad.push(format!("{name}: error {e}"));
        }
        if out != want {
            bad.push(format!(
                "{name}: stdout differs{of}:\n{}",
                String::from_utf8_lossy(&out)
            ));
        }
        if code != 0 {
            if !err.is_empty() {
                bad.push(format!("{name}: stderr {}", String::from_utf8_lossy(&err)));
            }
            continue;
        }
        // babeltrace2's own log lines (packet header user fields in the
        // `equiv-*` cases) are not reproduced.
        let bt2_err = std::fs::read(d.join("bt2.stderr")).unwrap();
        if !name.starts_with("equiv-") && err != bt2_err {
            bad.push(format!(
                "{name}: stderr differs:\n{}",
                String::from_utf8_lossy(&err)
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A packet whose UUID differs from the trace's is read like any other
/// (babeltrace2 2.0.4 does, silently; so does yactfr): every event of both
/// streams, in the lenient and the strict mode.
#[test]
fn packet_uuid_differing_from_the_trace_uuid() {
    let d = root().join("pass-pkt-uuid-differs");
    let (r, out, err) = run_strict(&d);
    assert_eq!(r, Ok(7));
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 7);
    assert!(err.is_empty());
}
