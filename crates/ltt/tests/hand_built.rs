//! The hand-built trace of tests/fixtures/ltt/hand-built: bytes written by
//! hand from the specification, decoded to exactly what their annotations
//! (and the fixture's README) say.

use std::path::{Path, PathBuf};

use tracemux_core::model::Value;
use tracemux_core::Endian;
use tracemux_ltt::report::{report_trace, summarize, ReportOptions};
use tracemux_ltt::trace::FileBytes;
use tracemux_ltt::tracefile::Item;
use tracemux_ltt::Trace;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ltt/hand-built")
}

/// Parse the annotated hex: bytes, `#` comments, `00*N`. Every comment
/// that starts with an offset (`# 0x1a ...`) must give the offset of the
/// first byte of its line.
fn parse_hex(text: &str, name: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let (data, comment) = match line.split_once('#') {
            Some((d, c)) => (d, c.trim()),
            None => (line, ""),
        };
        let start = out.len();
        for tok in data.split_whitespace() {
            if let Some((b, n)) = tok.split_once('*') {
                let b = u8::from_str_radix(b, 16).unwrap();
                let n: usize = n.parse().unwrap();
                out.extend(std::iter::repeat_n(b, n));
            } else {
                assert_eq!(tok.len(), 2, "{name}:{}: token {tok}", ln + 1);
                out.push(u8::from_str_radix(tok, 16).unwrap());
            }
        }
        if out.len() > start {
            if let Some(off) = comment
                .split_whitespace()
                .next()
                .and_then(|w| w.strip_prefix("0x"))
            {
                let off = usize::from_str_radix(off, 16).unwrap();
                assert_eq!(off, start, "{name}:{}: annotated offset", ln + 1);
            }
        }
    }
    out
}

fn load() -> Vec<(String, Vec<u8>)> {
    let dir = fixture_dir();
    let mut files = Vec::new();
    for rel in ["control/facilities_0", "cpu_0", "cpu_2"] {
        let p = dir.join(format!("{rel}.hex"));
        let text = std::fs::read_to_string(&p).unwrap();
        files.push((rel.to_string(), parse_hex(&text, rel)));
    }
    files
}

fn open(strict: bool) -> tracemux_core::Result<Trace> {
    let files = load()
        .into_iter()
        .map(|(n, d)| (n, Box::new(d) as FileBytes))
        .collect();
    Trace::from_files(files, strict)
}

#[test]
fn sizes_are_whole_blocks() {
    let files = load();
    let sizes: Vec<_> = files.iter().map(|(n, d)| (n.as_str(), d.len())).collect();
    assert_eq!(
        sizes,
        [
            ("control/facilities_0", 256),
            ("cpu_0", 320),
            ("cpu_2", 160)
        ]
    );
}

#[test]
fn trace_header_as_annotated() {
    let t = open(false).unwrap();
    let h = t.header().unwrap();
    assert_eq!(h.endian, Endian::Big);
    assert_eq!((h.arch_type, h.arch_variant, h.float_word_order), (2, 0, 0));
    assert_eq!(h.arch_size, 4);
    assert_eq!((h.major_version, h.minor_version), (1, 0));
    assert_eq!((h.flight_recorder, h.has_heartbeat, h.alignment), (0, 1, 4));
    assert_eq!(
        (h.tsc_lsb_truncate, h.tscbits, h.compact_data_shift),
        (0, 0, 0)
    );
    assert_eq!(h.freq_scale, 1);
    assert_eq!(h.start_freq, 500_000_000);
    assert_eq!(h.start_tsc, 0x1_FFFF_FF00);
    assert_eq!(h.start_monotonic, 0);
    assert_eq!((h.start_time_sec, h.start_time_nsec), (1_213_000_000, 500));
    let names: Vec<_> = t.files().iter().map(|f| (f.name.as_str(), f.cpu)).collect();
    assert_eq!(
        names,
        [("control/facilities_0", 0), ("cpu_0", 0), ("cpu_2", 2)]
    );
    let l = t.files()[1].layout.as_ref().unwrap();
    assert_eq!((l.block_size, l.blocks), (160, 2));
    assert_eq!(l.first_block.begin.cycle_count, 0x1_FFFF_FF00);
    assert_eq!(l.first_block.begin.freq, 500_000_000);
    assert_eq!(l.first_block.end.cycle_count, 0x2_0000_0200);
    assert_eq!(l.first_block.end.freq, 500_000_000);
    assert_eq!((l.first_block.lost_size, l.first_block.buf_size), (5, 160));
}

#[test]
fn events_as_annotated() {
    let t = open(false).unwrap();
    // (file, offset, tsc, facility, event, size)
    let want: &[(usize, u64, u64, u8, u8, u16)] = &[
        (0, 0x068, 0x1_FFFF_FF00, 0, 0, 15),
        (0, 0x080, 0x1_FFFF_FF00, 0, 1, 22),
        (0, 0x0A0, 0x1_FFFF_FF00, 0, 0, 18),
        (0, 0x0BC, 0x1_FFFF_FF00, 0, 1, 29),
        (1, 0x068, 0x1_FFFF_FF10, 1, 0, 7),
        (1, 0x078, 0x2_0000_0020, 2, 0, 8),
        (1, 0x088, 0x2_0000_0100, 0, 2, 0),
        (1, 0x090, 0x2_0000_0200, 9, 4, 3),
        (1, 0x108, 0x5_0000_0040, 0, 3, 8),
        (1, 0x118, 0x5_0000_0050, 1, 0, 7),
        (2, 0x068, 0x1_FFFF_FF80, 2, 0, 8),
    ];
    let mut got = Vec::new();
    let mut blocks = Vec::new();
    for i in 0..t.files().len() {
        let mut s = t.stream(i).unwrap();
        while let Some(item) = s.next_item().unwrap() {
            match item {
                Item::Event(e) => {
                    // the payload follows the 8-byte header, aligned on 4
                    let data = e.offset + 8;
                    assert_eq!(e.end, data + e.size as u64);
                    got.push((i, e.offset, e.tsc, e.facility, e.event, e.size))
                }
                Item::Block(h, k, off) => blocks.push((i, k, off, h.lost_size)),
                Item::Damage(e) => panic!("{e}"),
            }
        }
    }
    assert_eq!(got, want);
    assert_eq!(
        blocks,
        [(0, 0, 0, 31), (1, 0, 0, 5), (1, 1, 0xA0, 25), (2, 0, 0, 40)]
    );
    // the types the facilities file names, and their fields
    let reg = t.registry();
    let open = reg.get(1, 0).unwrap();
    assert_eq!(open.full_name, "fs:open");
    assert_eq!(open.format.as_deref(), Some("fd %d name %s"));
    let irq = reg.get(2, 0).unwrap();
    assert_eq!(irq.full_name, "kernel:irq");
    assert!(reg.get(9, 4).is_none());
    let mut s = t.stream(1).unwrap();
    let mut irq_payload = None;
    while let Some(item) = s.next_item().unwrap() {
        if let Item::Event(e) = item {
            if (e.facility, e.event) == (2, 0) {
                irq_payload = Some(e.payload);
            }
        }
    }
    let v: Vec<_> = irq
        .decode(irq_payload.unwrap(), Endian::Big)
        .unwrap()
        .map(|r| r.unwrap())
        .map(|(f, v)| (f.name.clone(), v))
        .collect();
    assert_eq!(
        v,
        [
            ("irq".to_string(), Value::Unsigned(16)),
            ("flags".to_string(), Value::Unsigned(0x8000_0001))
        ]
    );
}

#[test]
fn report_as_annotated() {
    let t = open(false).unwrap();
    let mut out = Vec::new();
    let mut warn = Vec::new();
    let st = report_trace(&t, &ReportOptions::default(), &mut out, &mut warn).unwrap();
    let want = std::fs::read_to_string(fixture_dir().join("expected-report.txt")).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), want);
    assert_eq!(st.events, 11);
    let warn = String::from_utf8(warn).unwrap();
    assert_eq!(
        warn,
        "warning: unknown facility 9 (event 4): no marker_id names it; its events are shown as raw bytes \
         in section 'cpu_0: event header' at offset 0x90\n"
    );
    let s = summarize(&t).unwrap();
    assert_eq!(s.files.iter().map(|f| f.padding).sum::<u64>(), 101);
    assert_eq!(s.files.iter().map(|f| f.blocks).sum::<u64>(), 4);
    let counts: Vec<_> = s.counts.iter().map(|(n, c)| (n.as_str(), *c)).collect();
    assert_eq!(
        counts,
        [
            ("core:marker_id", 2),
            ("core:marker_format", 2),
            ("core:time_heartbeat", 1),
            ("core:time_heartbeat_full", 1),
            ("fs:open", 2),
            ("kernel:irq", 2),
            ("facility_9:event_4 (unknown)", 1)
        ]
    );
}

/// The clock options, as the LTT crate's own printer printed them before
/// the shared printer replaced it: the lines of the heartbeat (no fields:
/// no payload braces) and of the unknown event (raw bytes).
#[test]
fn report_clock_options() {
    let t = open(false).unwrap();
    let cases: [(ReportOptions, [&str; 2]); 4] = [
        (
            ReportOptions {
                clock_cycles: true,
                ..Default::default()
            },
            [
                "[00000000008589934848] (+000000000224) core:time_heartbeat: { cpu_id = 0 }",
                "[00000000008589935104] (+000000000256) facility_9:event_4: { cpu_id = 0 }, { _size = 3, _raw = \"aabbcc\" }",
            ],
        ),
        (
            ReportOptions {
                clock_seconds: true,
                ..Default::default()
            },
            [
                "[1213000000.000001524] (+0.000000448) core:time_heartbeat: { cpu_id = 0 }",
                "[1213000000.000002036] (+0.000000512) facility_9:event_4: { cpu_id = 0 }, { _size = 3, _raw = \"aabbcc\" }",
            ],
        ),
        (
            ReportOptions {
                clock_date: true,
                ..Default::default()
            },
            [
                "[2008-06-09 08:26:40.000001524] (+0.000000448) core:time_heartbeat: { cpu_id = 0 }",
                "[2008-06-09 08:26:40.000002036] (+0.000000512) facility_9:event_4: { cpu_id = 0 }, { _size = 3, _raw = \"aabbcc\" }",
            ],
        ),
        (
            ReportOptions {
                clock_seconds: true,
                no_delta: true,
                ..Default::default()
            },
            [
                "[1213000000.000001524] core:time_heartbeat: { cpu_id = 0 }",
                "[1213000000.000002036] facility_9:event_4: { cpu_id = 0 }, { _size = 3, _raw = \"aabbcc\" }",
            ],
        ),
    ];
    for (opts, want) in cases {
        let mut out = Vec::new();
        report_trace(&t, &opts, &mut out, &mut Vec::new()).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 11);
        assert_eq!(&lines[7..9], &want[..]);
    }
}

#[test]
fn strict_mode_stops_at_the_unknown_facility() {
    let t = open(true).unwrap();
    let mut out = Vec::new();
    let e = report_trace(
        &t,
        &ReportOptions {
            strict: true,
            ..Default::default()
        },
        &mut out,
        &mut Vec::new(),
    )
    .unwrap_err();
    assert_eq!(e.section, "cpu_0: event header");
    assert_eq!(e.offset, 0x90);
}
