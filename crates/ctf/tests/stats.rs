//! Decode-only counts against babeltrace2's `sink.utils.counter` totals
//! (the last block of each fixture's `bt2-counter.txt`).

use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ctf")
}

/// The last block of a counter output: (events, packet beginnings,
/// discarded event messages, discarded packet messages).
fn totals(text: &str) -> (u64, u64, u64, u64) {
    let block = text.trim_end().rsplit("\n\n").next().unwrap_or("");
    let get = |what: &str| {
        block
            .lines()
            .find(|l| {
                let l = l.trim_end();
                l.ends_with(what) || l.ends_with(what.trim_end_matches('s'))
            })
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (
        get("Event messages"),
        get("Packet beginning messages"),
        get("Discarded event messages"),
        get("Discarded packet messages"),
    )
}

#[test]
fn counts_match_babeltrace2_counter() {
    let mut checked = 0;
    for e in std::fs::read_dir(fixtures()).unwrap().flatten() {
        let d = e.path();
        let Ok(text) = std::fs::read_to_string(d.join("bt2-counter.txt")) else {
            continue;
        };
        let (events, packets, de, dp) = totals(&text);
        let c = tracemux_ctf::stats::count(&[d.join("trace")], true).unwrap();
        assert_eq!(c.events, events, "{}", d.display());
        let p: u64 = c.streams.iter().map(|s| s.packets).sum();
        assert_eq!(p, packets, "{}", d.display());
        // Notices: one per stream and packet that has a known count (or an
        // unknown one); compare presence, not the count of messages.
        let known: u64 = c.streams.iter().map(|s| s.discarded_events).sum::<u64>()
            + c.streams
                .iter()
                .map(|s| s.discarded_events_unknown)
                .sum::<u64>();
        assert_eq!(known > 0, de > 0, "{}", d.display());
        let dpk: u64 = c.streams.iter().map(|s| s.discarded_packets).sum();
        assert_eq!(dpk > 0, dp > 0, "{}", d.display());
        let per_class: u64 = c.classes.iter().map(|k| k.events).sum();
        assert_eq!(per_class, c.events);
        checked += 1;
    }
    assert!(checked >= 8);
}
