//! CTF to CTF: `convert --to ctf` of every CTF fixture, read back by
//! tracemux's babeltrace2-identical printer, against babeltrace2's own output
//! of the original (`bt2.txt`). Checked by hand with babeltrace2 2.0.4 on the
//! converted traces too (same results; README "Converting").
//!
//! Known differences, asserted as such so that a change shows:
//! - babeltrace2's stale strings: an empty text sequence prints the string of
//!   an earlier event of the same packet, so which string shows depends on the
//!   original's packet layout (LTTng traces, `seq_text`): those lines must be
//!   equal but for that value;
//! - barectf-bitfields: the written trace adds `cpu_id` to the packet context
//!   and a `_NAME_length` member beside the original's own length fields
//!   (the model does not say which field gives a sequence its length yet).

mod common;

use common::{reference, repo_root, tracemux};

/// A line without the value of `seq_text = "..."`.
fn without_seq_text(l: &str) -> Option<String> {
    let i = l.find("seq_text = \"")? + "seq_text = \"".len();
    let j = i + l[i..].find("\", ")?;
    Some(format!("{}{}", &l[..i], &l[j..]))
}

#[test]
fn ctf_sources_convert_to_what_babeltrace2_printed() {
    let base = repo_root().join("tests/fixtures/ctf");
    let mut checked = 0;
    for name in [
        "bt2-converted-from-lttng-uid",
        "perf-data-convert-sched",
        "lttng-ust-uid",
        "lttng-ust-pid",
        "lttng-ust-discard-small",
        "lttng-ust-overwrite-small",
        "lttng-ust-switch-timer-tracefiles",
        "barectf-bitfields",
    ] {
        let dir = base.join(name);
        let want = String::from_utf8(reference(&dir, "bt2").unwrap()).unwrap();
        let out = std::env::temp_dir().join(format!("tracemux-c2c-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let src = dir.join("trace");
        let r = tracemux(
            &[
                "convert",
                "-q",
                "--to",
                "ctf",
                "-o",
                out.to_str().unwrap(),
                src.to_str().unwrap(),
            ],
            &repo_root(),
        );
        assert!(
            r.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let got = tracemux(&["report", out.to_str().unwrap()], &repo_root());
        let _ = std::fs::remove_dir_all(&out);
        let got = String::from_utf8(got.stdout).unwrap();
        let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
        assert_eq!(w.len(), g.len(), "{name}: line count");
        let differing: Vec<(&str, &str)> = w
            .iter()
            .zip(&g)
            .filter(|(a, b)| a != b)
            .map(|(a, b)| (*a, *b))
            .collect();
        match name {
            "bt2-converted-from-lttng-uid" | "perf-data-convert-sched" => {
                assert!(differing.is_empty(), "{name}: {:?}", differing.first())
            }
            "barectf-bitfields" => assert!(
                differing.iter().all(|(_, b)| b.contains("{ cpu_id = 0 }")),
                "{name}: {:?}",
                differing.first()
            ),
            _ => {
                for (a, b) in &differing {
                    assert!(
                        without_seq_text(a).is_some() && without_seq_text(a) == without_seq_text(b),
                        "{name}: a difference other than a stale string:\n{a}\n{b}"
                    );
                }
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 8);
}
