//! `perf report --header-only` (less its `captured on` line) and
//! `perf report --stats`, byte for byte, on every fixture.

use tracemux_perf::{info, PerfData};

#[test]
fn header_and_stats_are_byte_identical() {
    let mut n = 0;
    let mut failures = Vec::new();
    for dir in tracemux_testkit::sorted_entries(&tracemux_testkit::fixtures().join("perf")) {
        let Ok(data) = std::fs::read(dir.join("perf.data")) else {
            continue;
        };
        let p = PerfData::open(&data, false).unwrap();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut got = Vec::new();
        info::header_only(&p, &mut got).unwrap();
        let want = std::fs::read(dir.join("header.txt")).unwrap();
        if got != want {
            failures.push(format!(
                "{name}/header: {}",
                tracemux_testkit::first_diff(&want, &got)
            ));
        }
        let c = p.count();
        let mut got = Vec::new();
        info::stats(&p, &c.records, &c.samples, &mut got).unwrap();
        // perf 6.1's report fails on the pipe-mode fixture: no golden
        let Ok(want) = std::fs::read(dir.join("stats.txt")) else {
            continue;
        };
        if got != want {
            failures.push(format!(
                "{name}/stats: {}",
                tracemux_testkit::first_diff(&want, &got)
            ));
        }
        n += 2;
    }
    assert!(n >= 14, "{n}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
