//! `report --style trace-cmd|babeltrace|json` through the common event
//! model on every format: one line per event (and per loss), the same
//! events in the same order as the JSON lines, the payload's values shown.

mod common;

use common::{repo_root, tracemux};

fn lines(args: &[&str]) -> Vec<String> {
    let out = tracemux(args, &repo_root());
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn every_style_on_every_format() {
    let f = "tests/fixtures";
    let cases = [
        (
            format!("{f}/ctf/barectf-bitfields/trace"),
            vec!["trace-cmd"],
            "enums:                 color=BLUE level=LOW sparse=2322",
        ),
        (
            format!("{f}/uftrace/recorded/pg-args-types/uftrace.data"),
            vec!["trace-cmd", "babeltrace"],
            "name=i8 args=[-128]",
        ),
        (
            format!("{f}/tracedat/v7-instance-B/trace.dat"),
            vec!["babeltrace"],
            "",
        ),
    ];
    for (trace, styles, sample) in &cases {
        let json = lines(&["report", "--json", trace]);
        assert!(!json.is_empty(), "{trace}");
        for style in styles {
            let got = lines(&["report", "--style", style, trace]);
            if *style == "trace-cmd" {
                // trace-cmd prints strings raw (a newline in a value starts
                // a line): the events' names appear in order
                let all = got.join("\n");
                let mut at = 0;
                for j in &json {
                    let v: serde_json::Value = serde_json::from_str(j).unwrap();
                    if let Some(name) = v["event"].as_str() {
                        let pat = format!(" {name}:");
                        let k = all[at..].find(&pat);
                        assert!(k.is_some(), "{trace}: {name} after byte {at}");
                        at += k.unwrap() + pat.len();
                    }
                }
            } else {
                assert_eq!(
                    got.len(),
                    json.len(),
                    "{trace} --style {style}: one line per record"
                );
                for (g, j) in got.iter().zip(&json) {
                    let v: serde_json::Value = serde_json::from_str(j).unwrap();
                    if let Some(name) = v["event"].as_str() {
                        assert!(g.contains(name), "{trace} --style {style}: {g} / {j}");
                    }
                }
            }
            if *style == "trace-cmd" {
                assert!(
                    got.iter().any(|l| l.contains(sample)),
                    "{trace}: no line has {sample:?}"
                );
            }
        }
    }
}
