//! The synthetic fixtures (`tests/fixtures/synthetic/`, written by
//! `examples/make_fixtures.rs`) read with `TraceDat::parse` + `Reader`
//! must give the events trace-cmd 3.1.6 printed in `report-R.txt`: same
//! order, buffer, CPU, time (rounded to the µs printed) and lost-events
//! markers.
//! Event text is the renderer's business and is not compared here.

use std::path::{Path, PathBuf};

use tracemux_core::model::{Record, RecordSource};
use tracemux_tracedat::reader::{ReadOptions, Reader};
use tracemux_tracedat::{DataKind, TraceDat};

fn fixtures() -> Vec<PathBuf> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/synthetic");
    let mut v = tracemux_testkit::sorted_entries(&base);
    v.retain(|p| p.join("trace.dat").exists());
    v
}

/// One line of `report -R`: (buffer, cpu, µs) of an event, or a lost
/// marker (cpu, count or None for unknown).
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Event { buffer: String, cpu: u32, us: u64 },
    Lost { cpu: u32, count: Option<u64> },
}

fn parse_report(text: &str) -> Vec<Line> {
    let mut v = Vec::new();
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("CPU:") {
            let (cpu, rest) = rest.split_once(' ').unwrap();
            let n = rest
                .trim_start_matches('[')
                .trim_end_matches("EVENTS DROPPED]")
                .trim();
            v.push(Line::Lost {
                cpu: cpu.parse().unwrap(),
                count: (!n.is_empty()).then(|| n.parse().unwrap()),
            });
            continue;
        }
        // "[buf:] comm-pid [ccc] secs.usecs: event: ..."
        let Some(open) = l.find(" [") else { continue };
        let close = open + l[open..].find(']').unwrap();
        let Ok(cpu) = l[open + 2..close].parse::<u32>() else {
            continue;
        };
        let ts = l[close + 1..].trim_start();
        let ts = &ts[..ts.find(':').unwrap()];
        let (s, us) = ts.split_once('.').unwrap();
        let us = s.trim().parse::<u64>().unwrap() * 1_000_000 + us.parse::<u64>().unwrap();
        let buffer = if l.starts_with(' ') {
            String::new()
        } else {
            l[..l.find(':').unwrap()].to_string()
        };
        v.push(Line::Event { buffer, cpu, us });
    }
    v
}

fn read(data: &[u8]) -> Vec<Line> {
    let t = TraceDat::parse(data, true).expect("parse");
    let mut r = Reader::new(&t, &ReadOptions::default()).expect("reader");
    let names: Vec<String> = {
        let m = r.meta();
        m.streams
            .iter()
            .map(|s| m.buffers[s.buffer as usize].name.clone())
            .collect()
    };
    let mut v = Vec::new();
    while let Some(rec) = r.next_record().expect("record") {
        // trace-cmd prints neither time nor CPU for an event of unknown id
        if matches!(&rec, Record::Event(e) if e.class.is_none()) {
            continue;
        }
        v.push(match rec {
            Record::Event(e) => Line::Event {
                buffer: names[e.stream as usize].clone(),
                cpu: e.cpu,
                // libtraceevent rounds to the nearest µs
                us: (e.ts + 500) / 1000,
            },
            Record::Lost(l) => Line::Lost {
                cpu: l.cpu,
                count: l.count,
            },
            Record::Damage(e) => panic!("damage: {e}"),
        });
    }
    v
}

fn check(dir: &Path) {
    let data = std::fs::read(dir.join("trace.dat")).unwrap();
    // (event text may hold any bytes: allevents-* print random strings)
    let report =
        String::from_utf8_lossy(&std::fs::read(dir.join("report-R.txt")).unwrap()).into_owned();
    let t = TraceDat::parse(&data, true).expect("parse");
    if t.kind == DataKind::Latency {
        // trace-cmd prints "cpus=N", the text and a newline. A v6 file with
        // a TRACECLOCK option loses the first 8 bytes of the text: trace-cmd
        // reads them as the size of a flyrecord clock trailer, fails to
        // allocate that much and goes on from there (init_data_v6).
        let text = t.latency_text.as_deref().expect("latency text");
        let skip = if t.version == 6 && t.trace_clock().is_some() {
            8
        } else {
            0
        };
        let body = report.split_once('\n').unwrap().1;
        let want = format!("{}\n", String::from_utf8_lossy(&text[skip..]));
        assert_eq!(want, body, "{}", dir.display());
        return;
    }
    let want = parse_report(&report);
    assert!(!want.is_empty());
    let got = read(&data);
    assert_eq!(got.len(), want.len(), "{}: record count", dir.display());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "{}: record {i}", dir.display());
    }
}

#[test]
fn reader_matches_trace_cmd() {
    let dirs = fixtures();
    assert!(dirs.len() >= 10, "expected the synthetic fixtures");
    for dir in dirs {
        check(&dir);
    }
}
