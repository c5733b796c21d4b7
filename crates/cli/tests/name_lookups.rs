//! The converters resolve the fields they read once per event class, not
//! per event: the process's count of name lookups (in class layouts and in
//! event trees) grows with the classes of a trace, never with its events.
//! (One test in its own binary: the counters are the process's.)

use std::path::{Path, PathBuf};

use tracemux_convert::{run, NoHooks, Options, To};

fn lookups() -> u64 {
    tracemux_core::layout::name_lookups() + tracemux_export::tree::name_lookups()
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel)
}

#[test]
fn converters_look_names_up_per_class_not_per_event() {
    let dir = std::env::temp_dir().join(format!("tracemux-lookups-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // traces with many events per class (the uftrace and perf fixtures
    // have too few events to tell a per-event lookup from per-class ones)
    let inputs = [
        "tracedat/v6-sched-irq-timer/trace.dat",
        "tracedat/v7-syscalls/trace.dat",
        "ctf/perf-data-convert-sched",
        "ctf/lttng-ust-uid",
    ];
    let sinks = [
        (To::Perfetto, "p.pftrace"),
        (To::Chrome, "c.json"),
        (To::Jsonl, "j.jsonl"),
        (To::Parquet, "parquet"),
    ];
    let mut failures = Vec::new();
    for input in inputs {
        for (to, out) in sinks {
            let mut o = Options::new(vec![fixture(input)], dir.join(out), to);
            o.force = true;
            let before = lookups();
            let s = run(&o, &NoHooks).unwrap_or_else(|e| panic!("{input} {to:?}: {e}"));
            let n = lookups() - before;
            assert!(s.events >= 1000, "{input}: only {} events", s.events);
            // a lookup per event (or per field of an event) would be at
            // least the event count; per class it is a few dozen a class
            if n * 4 > s.events {
                failures.push(format!(
                    "{input} -> {to:?}: {n} lookups for {} events",
                    s.events
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
