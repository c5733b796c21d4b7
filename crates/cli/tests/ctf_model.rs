//! CTF traces through the common event model on the command line:
//! `tracemux report --json` / `--style json` print one JSON object per
//! event record (as many as the decode-only counts, in the text output's
//! order), `--style babeltrace` is the babeltrace2 text output unchanged,
//! and the text-only options are refused with `--json`.

mod common;

#[test]
fn json_lines_one_per_event_in_text_order() {
    let mut checked = 0;
    for d in common::ctf_dirs() {
        let out = common::tracemux(&["report", "--json", "trace"], &d);
        assert!(
            out.status.success(),
            "{}: {}",
            d.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let counts = tracemux_ctf::stats::count(&[d.join("trace")], false).unwrap();
        let text = String::from_utf8(out.stdout.clone()).unwrap();
        let mut events = 0u64;
        let mut names = Vec::new();
        for l in text.lines() {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}: {l}", d.display()));
            if v["type"] == "event" {
                events += 1;
                assert!(v["fields"].is_object(), "{l}");
                let sys = v["system"].as_str().unwrap();
                let ev = v["event"].as_str().unwrap();
                let full = if sys.is_empty() {
                    ev.to_string()
                } else {
                    format!("{sys}:{ev}")
                };
                names.push((v["buffer"].as_str().unwrap().to_string(), full));
            } else {
                assert_eq!(v["type"], "lost", "{l}");
            }
        }
        assert_eq!(events, counts.events, "{}", d.display());
        // the order of the babeltrace2 text output: `[TIME] TRACENAME: ...`
        // (the trace name is the model's buffer name)
        let bt = common::tracemux(&["report", "--no-delta", "--fields", "trace", "trace"], &d);
        let bt = String::from_utf8_lossy(&bt.stdout).into_owned();
        let lines: Vec<&str> = bt.lines().collect();
        assert_eq!(lines.len(), names.len(), "{}", d.display());
        for (i, (l, (buffer, full))) in lines.iter().zip(&names).enumerate() {
            let rest = l.split_once("] ").map_or(*l, |x| x.1);
            let rest = rest.strip_prefix(buffer.as_str()).unwrap_or(rest);
            let name = rest.split_once(": ").map_or(rest, |x| x.0);
            assert_eq!(name, full, "{}: event {i}: {l}", d.display());
        }
        // --style json is --json
        let styled = common::tracemux(&["report", "--style", "json", "trace"], &d);
        assert_eq!(styled.stdout, out.stdout, "{}", d.display());
        checked += 1;
    }
    assert_eq!(checked, 8);
}

#[test]
fn style_babeltrace_is_the_text_output() {
    let d = common::repo_root().join("tests/fixtures/ctf/lttng-ust-discard-small");
    let plain = common::tracemux(&["report", "trace"], &d);
    let styled = common::tracemux(&["report", "--style", "babeltrace", "trace"], &d);
    assert!(plain.status.success());
    assert_eq!(plain.stdout, styled.stdout);
    assert_eq!(plain.stderr, styled.stderr);
    assert_eq!(
        plain.stdout,
        common::reference(&d, "bt2").expect("bt2.txt"),
        "the babeltrace2 text"
    );
}

#[test]
fn json_losses_and_text_only_options() {
    // lttng-ust-discard-small discarded events: `lost` lines with counts
    let d = common::repo_root().join("tests/fixtures/ctf/lttng-ust-discard-small");
    let out = common::tracemux(&["report", "--json", "trace"], &d);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines().any(|l| l.starts_with("{\"type\":\"lost\"")),
        "no lost line"
    );
    let bad = common::tracemux(&["report", "--json", "--clock-seconds", "trace"], &d);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--clock-seconds"));
}
