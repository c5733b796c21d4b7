//! `tracemux stats`: the event count agrees with the corpus count (lines of
//! trace-cmd's own `report -R`) on every trace.dat fixture.

mod common;

use std::process::Command;

#[test]
fn stats_counts_every_event() {
    let mut checked = 0;
    for dir in common::fixture_dirs("tracedat") {
        let Some(want) = common::event_count(&dir) else {
            continue;
        };
        let out = Command::new(env!("CARGO_BIN_EXE_tracemux"))
            .arg("stats")
            .arg(dir.join("trace.dat"))
            .output()
            .expect("run tracemux");
        let text = String::from_utf8_lossy(&out.stdout);
        let got = common::stats_number(&text, "events ")
            .unwrap_or_else(|| panic!("{}: no events line in\n{text}", dir.display()));
        // the corpus count is of report -R lines, which include one line per
        // lost-events marker
        let markers = common::stats_number(&text, "lost events ").unwrap_or(0);
        assert_eq!(got + markers, want, "{}", dir.display());
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} fixtures with event-count.txt");
}
