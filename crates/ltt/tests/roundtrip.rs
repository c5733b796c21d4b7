//! Writer -> reader round trips in every combination of byte order, arch
//! size, heartbeat, alignment and flight-recorder mode: every event comes
//! back with its name, cycle count, time and field values exactly as
//! written, per tracefile and merged.

use std::collections::HashMap;

use tracemux_core::model::{Record, RecordSource, Value};
use tracemux_core::Endian;
use tracemux_ltt::report::{report_trace, summarize, ReportOptions};
use tracemux_ltt::source::LttSource;
use tracemux_ltt::trace::Merged;
use tracemux_ltt::tracefile::Item;
use tracemux_ltt::writer::{Arg, Built, Expected, TraceDesc};
use tracemux_ltt::Trace;

#[derive(Debug, Clone, Copy)]
struct Combo {
    big: bool,
    arch32: bool,
    heartbeat: bool,
    aligned: bool,
    flight: bool,
}

/// A trace with every field kind, several CPUs (with a gap), control
/// tracefiles and, with heartbeat, gaps of 2^32 cycles and more.
fn describe(c: Combo) -> TraceDesc {
    let mut d = TraceDesc::default();
    d.endian = if c.big { Endian::Big } else { Endian::Little };
    d.arch_size = if c.arch32 { 4 } else { 8 };
    d.heartbeat = c.heartbeat;
    d.flight_recorder = c.flight;
    // not a multiple of 8: alignment is relative to the block start
    d.block_size = 300;
    d.start_freq = 2_400_000_000;
    d.freq_scale = if c.flight { 4 } else { 1 };
    d.start_tsc = 0xffff_fff0;
    d.start_time_sec = 1_213_000_000;
    d.start_time_nsec = 999_999_000;
    d.arch_type = 7;
    d.arch_variant = 3;
    d.float_word_order = 1;
    d.tsc_lsb_truncate = 5;
    d.tscbits = 27;
    d.compact_data_shift = 9;
    d.start_monotonic = 42;
    d.alignment = if c.aligned { d.arch_size } else { 0 };
    let k = d.facility("kernel");
    let fs = d.facility("fs");
    let net = d.facility("net");
    let irq = d.event(k, "irq_entry", "irq_id %u kernel_mode %c");
    let sched = d.event(k, "sched_schedule", "prev %d next %hd state %ld");
    let open = d.event(fs, "open", "fd %d name %s mode %o");
    let mmap = d.event(fs, "mmap", "addr %p len %zu flags %lx big %llu neg %lld");
    let rx = d.event(net, "rx", "%s %hhu #n4u%u tail %s");
    let empty = d.event(net, "nothing", "");
    let mut tsc = d.start_tsc + 3;
    let step = |i: u64| -> u64 {
        if c.heartbeat && i % 7 == 3 {
            // exactly 2^32, and more: heartbeats are needed
            (1u64 << 32) + (i % 2) * 12_345_678_901
        } else if c.heartbeat && i % 7 == 5 {
            (1u64 << 32) - 1
        } else {
            1 + i * 977
        }
    };
    for i in 0..60u64 {
        tsc += step(i);
        let cpu = [0u32, 1, 3][(i % 3) as usize];
        d.push(cpu, tsc, irq, vec![Arg::U(i * 7), Arg::U(i & 1)]);
        d.push(
            cpu,
            tsc + 1,
            sched,
            vec![Arg::I(i as i64), Arg::I(-(i as i64) - 30_000), Arg::I(-1)],
        );
        if i % 4 == 0 {
            d.push(
                cpu,
                tsc + 2,
                open,
                vec![
                    Arg::I(i as i64),
                    Arg::Str(format!("/dev/\"{i}\"\\\n").into_bytes()),
                    Arg::U(0o755),
                ],
            );
            d.push(
                cpu,
                tsc + 2,
                mmap,
                vec![
                    Arg::U(0xdead_beef_cafe_f00d),
                    Arg::U(i << 40),
                    Arg::U(0x8000_0000_0000_0022),
                    Arg::U(u64::MAX - i),
                    Arg::I(i64::MIN + i as i64),
                ],
            );
        }
        if i % 10 == 0 {
            d.push_to(
                "control/network_0",
                tsc + 5,
                rx,
                vec![
                    Arg::Str(b"eth0".to_vec()),
                    Arg::U(300 + i),
                    Arg::U(0x0102_0304),
                    Arg::Str(Vec::new()),
                ],
            );
            d.push_to("control/processes_1", tsc + 5, empty, vec![]);
        }
    }
    d.touch("control/interrupts_0");
    d.touch("cpu_5");
    if c.flight {
        d.overwrite_blocks("cpu_0", 2);
        d.overwrite_blocks("cpu_3", 1);
    }
    d
}

fn combos() -> Vec<Combo> {
    let mut v = Vec::new();
    for bits in 0..32u32 {
        v.push(Combo {
            big: bits & 1 != 0,
            arch32: bits & 2 != 0,
            heartbeat: bits & 4 != 0,
            aligned: bits & 8 != 0,
            flight: bits & 16 != 0,
        });
    }
    v
}

/// The spec's time, computed here on its own.
fn ns_of(d: &TraceDesc, tsc: u64) -> u64 {
    let start = d.start_time_sec as u128 * 1_000_000_000 + d.start_time_nsec as u128;
    let off =
        (tsc - d.start_tsc) as u128 * 1_000_000_000 * d.freq_scale as u128 / d.start_freq as u128;
    (start + off) as u64
}

fn decoded(trace: &Trace, e: &tracemux_ltt::tracefile::RawEvent<'_>, endian: Endian) -> Vec<Arg> {
    let t = trace
        .registry()
        .get(e.facility, e.event)
        .expect("known type");
    t.decode(e.payload, endian)
        .expect("usable format")
        .map(|r| match r.expect("field decodes").1 {
            Value::Unsigned(u) => Arg::U(u),
            Value::Signed(i) => Arg::I(i),
            Value::Str(s) => Arg::Str(s.to_vec()),
            v => panic!("unexpected value {v:?}"),
        })
        .collect()
}

fn check_combo(c: Combo) {
    let d = describe(c);
    let built: Built = d.build().unwrap();
    let trace = built.open(true).unwrap();
    assert!(trace.problems().is_empty(), "{c:?}: {:?}", trace.problems());
    let h = trace.header().unwrap();
    assert_eq!(h.endian, d.endian);
    assert_eq!(h.arch_size, d.arch_size);
    assert_eq!(h.has_heartbeat, d.heartbeat as u8);
    assert_eq!(h.alignment, d.alignment);
    assert_eq!(h.flight_recorder, d.flight_recorder as u8);
    assert_eq!((h.arch_type, h.arch_variant, h.float_word_order), (7, 3, 1));
    assert_eq!(
        (h.tsc_lsb_truncate, h.tscbits, h.compact_data_shift),
        (5, 27, 9)
    );
    assert_eq!((h.start_monotonic, h.start_tsc), (42, d.start_tsc));
    assert_eq!((h.major_version, h.minor_version), (1, 0));

    // per tracefile, in file order
    let mut by_file: HashMap<&str, Vec<&Expected>> = HashMap::new();
    for e in &built.expected {
        by_file.entry(e.file.as_str()).or_default().push(e);
    }
    let mut heartbeats = 0;
    for (i, f) in trace.files().iter().enumerate() {
        let exp = by_file.remove(f.name.as_str()).unwrap_or_default();
        let mut got = Vec::new();
        let mut s = trace.stream(i).unwrap();
        while let Some(item) = s.next_item().unwrap() {
            match item {
                Item::Event(e) => got.push(e),
                Item::Block(..) => {}
                Item::Damage(e) => panic!("{c:?}: damage {e}"),
            }
        }
        assert_eq!(got.len(), exp.len(), "{c:?} {}", f.name);
        for (g, x) in got.iter().zip(&exp) {
            assert_eq!(g.tsc, x.tsc, "{c:?} {} {}", f.name, x.name);
            assert_eq!((g.facility, g.event), (x.facility, x.event));
            assert_eq!(g.payload, &x.payload[..]);
            let name = &trace.registry().get(g.facility, g.event).unwrap().full_name;
            assert_eq!(name, &x.name);
            if x.name == "core:time_heartbeat" {
                heartbeats += 1;
                continue;
            }
            assert_eq!(decoded(&trace, g, h.endian), x.args, "{c:?} {}", x.name);
        }
    }
    assert!(by_file.is_empty(), "{c:?}: files not read: {by_file:?}");
    if c.heartbeat {
        assert!(heartbeats > 10, "{c:?}: {heartbeats} heartbeats");
    } else {
        assert_eq!(heartbeats, 0);
    }

    // merged: every event once, in time order, at the spec's time
    let mut m = trace.events();
    let mut n = 0;
    let mut last = 0;
    let mut lost = 0;
    while let Some(x) = m.next_merged().unwrap() {
        match x {
            Merged::Event(e) => {
                assert_eq!(e.ns, ns_of(&d, e.raw.tsc));
                assert!(e.ns >= last);
                last = e.ns;
                n += 1;
            }
            Merged::Lost(l) => {
                assert!(c.flight);
                assert!(l.to_ns > l.from_ns);
                lost += 1;
            }
            Merged::Damage(e) => panic!("{c:?}: {e}"),
        }
    }
    assert_eq!(n, built.expected.len());
    assert_eq!(lost, if c.flight { 2 } else { 0 });

    // the summary counts the same events
    let s = summarize(&trace).unwrap();
    let mut want: HashMap<&str, u64> = HashMap::new();
    for e in &built.expected {
        *want.entry(e.name.as_str()).or_default() += 1;
    }
    for (name, count) in &s.counts {
        assert_eq!(want.remove(name.as_str()).unwrap_or(0), *count, "{name}");
    }
    assert!(want.is_empty());

    // the report prints one line per event
    let mut out = Vec::new();
    let mut warn = Vec::new();
    let st = report_trace(&trace, &ReportOptions::default(), &mut out, &mut warn).unwrap();
    assert_eq!(st.events as usize, built.expected.len());
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().count(), built.expected.len());
    let warn = String::from_utf8(warn).unwrap();
    assert_eq!(warn.lines().count(), lost, "{warn}");
    assert_eq!((st.warnings, st.lost as usize), (0, lost));

    // and so does the model source
    let mut src = LttSource::new(&trace);
    let mut n = 0;
    while let Some(r) = src.next_record().unwrap() {
        if let Record::Event(e) = r {
            let cl = e.class.unwrap();
            assert_eq!(cl.id, e.type_id);
            n += 1;
        }
    }
    assert_eq!(n, built.expected.len());
}

#[test]
fn every_combination_reads_back() {
    for c in combos() {
        check_combo(c);
    }
}

#[test]
fn report_lines_are_exact() {
    let c = Combo {
        big: true,
        arch32: true,
        heartbeat: true,
        aligned: true,
        flight: false,
    };
    let d = describe(c);
    let trace = d.build().unwrap().open(true).unwrap();
    let mut out = Vec::new();
    report_trace(&trace, &ReportOptions::default(), &mut out, &mut Vec::new()).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // start 08:26:40.999999000; first event 3 + 1 cycles later at 2.4 GHz
    assert_eq!(
        lines[0],
        "[08:26:40.999999000] (+?.?????????) core:marker_id: { cpu_id = 0 }, { facility = \"kernel\", \
         name = \"irq_entry\", facility_id = 1, event_id = 0, int_size = 4, long_size = 4, \
         pointer_size = 4, size_t_size = 4, alignment = 4 }"
    );
    // the first line of each event type, and how it ends
    for (key, end) in [
        (
            "fs:mmap",
            "fs:mmap: { cpu_id = 0 }, { addr = 0xCAFEF00D, len = 0, flags = 0x22, \
             big = 18446744073709551615, neg = -9223372036854775808 }",
        ),
        (
            "fs:open",
            "{ fd = 0, name = \"/dev/\\\"0\\\"\\\\\\n\", mode = 0755 }",
        ),
        (
            "net:rx",
            "{ field_1 = \"eth0\", field_2 = 44, field_3 = 16909060, tail = \"\" }",
        ),
        ("net:nothing", "net:nothing: { cpu_id = 1 }"),
        ("time_heartbeat", "core:time_heartbeat: { cpu_id = 0 }"),
    ] {
        let line = lines.iter().find(|l| l.contains(key)).unwrap();
        assert!(line.ends_with(end), "{line}");
    }
}

#[test]
fn clock_options() {
    let mut d = TraceDesc::default();
    let f = d.facility("f");
    let e = d.event(f, "e", "v %u");
    d.push(0, 1000 + 5, e, vec![Arg::U(1)]);
    d.push(0, 1000 + 86_400_000_000_007, e, vec![Arg::U(2)]);
    let trace = d.build().unwrap().open(true).unwrap();
    let run = |o: &ReportOptions<'_>| {
        let mut out = Vec::new();
        report_trace(&trace, o, &mut out, &mut Vec::new()).unwrap();
        String::from_utf8(out).unwrap()
    };
    let seconds = ReportOptions {
        clock_seconds: true,
        ..Default::default()
    };
    let cycles = ReportOptions {
        clock_cycles: true,
        ..Default::default()
    };
    let date = ReportOptions {
        clock_date: true,
        no_delta: true,
        ..Default::default()
    };
    // (options, the last two lines)
    for (o, want) in [
        (
            &seconds,
            "[1213000000.000000005] (+0.000000005) f:e: { cpu_id = 0 }, { v = 1 }\n\
             [1213086400.000000007] (+86400.000000002) f:e: { cpu_id = 0 }, { v = 2 }\n",
        ),
        (
            &cycles,
            "[00000000000000001005] (+000000000005) f:e: { cpu_id = 0 }, { v = 1 }\n\
             [00000086400000001007] (+86400000000002) f:e: { cpu_id = 0 }, { v = 2 }\n",
        ),
        (
            &date,
            "[2008-06-09 08:26:40.000000005] f:e: { cpu_id = 0 }, { v = 1 }\n\
             [2008-06-10 08:26:40.000000007] f:e: { cpu_id = 0 }, { v = 2 }\n",
        ),
    ] {
        let got = run(o);
        assert!(got.ends_with(want), "{got}");
    }
    let first = run(&cycles);
    assert!(first.starts_with("[00000000000000001000] (+????????????) core:marker_id"));
}

#[test]
fn heartbeat_full_sets_the_whole_counter() {
    let mut d = TraceDesc::default();
    d.heartbeat = true;
    let f = d.facility("f");
    let e = d.event(f, "e", "v %u");
    d.push(0, 2000, e, vec![Arg::U(1)]);
    // a full heartbeat 3 * 2^32 cycles later, then an event right after:
    // the writer inserts plain heartbeats before it (it does not know
    // what the payload means), the reader takes the payload's 64 bits
    let big = 2000 + (3u64 << 32) + 77;
    d.push_raw("cpu_0", big, 0, 3, big.to_le_bytes().to_vec());
    d.push(0, big + 10, e, vec![Arg::U(2)]);
    let trace = d.build().unwrap().open(true).unwrap();
    let mut s = trace
        .stream(
            trace
                .files()
                .iter()
                .position(|f| f.name == "cpu_0")
                .unwrap(),
        )
        .unwrap();
    let mut tscs = Vec::new();
    while let Some(i) = s.next_item().unwrap() {
        if let Item::Event(ev) = i {
            tscs.push((ev.facility, ev.event, ev.tsc));
        }
    }
    assert_eq!(tscs.first(), Some(&(1, 0, 2000)));
    assert_eq!(&tscs[tscs.len() - 2..], &[(0, 3, big), (1, 0, big + 10)]);
}

#[test]
fn a_directory_on_disk() {
    let c = Combo {
        big: false,
        arch32: false,
        heartbeat: false,
        aligned: true,
        flight: false,
    };
    let built = describe(c).build().unwrap();
    let dir = std::env::temp_dir().join(format!("tracemux-ltt-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    built.write_dir(&dir).unwrap();
    // other files: skipped unless they hold LTT blocks
    std::fs::write(dir.join("system.xml"), "<system/>").unwrap();
    std::fs::write(dir.join("control/notes"), "x").unwrap();
    let cpu1 = built.files.iter().find(|f| f.0 == "cpu_1").unwrap();
    std::fs::write(dir.join("control/custom_0"), &cpu1.1).unwrap();
    let trace = Trace::open(&dir, &Default::default()).unwrap();
    let names: Vec<_> = trace.files().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "control/facilities_0",
            "control/interrupts_0",
            "control/network_0",
            "control/processes_1",
            "cpu_0",
            "cpu_1",
            "cpu_3",
            "cpu_5",
            "control/custom_0"
        ]
    );
    // the report from disk equals the report from memory plus cpu_1's
    // events again (from the copy)
    let mut a = Vec::new();
    tracemux_ltt::report(&dir, &ReportOptions::default(), &mut a, &mut Vec::new()).unwrap();
    let n = String::from_utf8(a).unwrap().lines().count();
    let cpu1_events = built.expected.iter().filter(|e| e.file == "cpu_1").count();
    assert_eq!(n, built.expected.len() + cpu1_events);
    let mut i = Vec::new();
    tracemux_ltt::info(&dir, &ReportOptions::default(), &mut i, &mut Vec::new()).unwrap();
    let i = String::from_utf8(i).unwrap();
    assert!(i.contains("  byte order: little-endian\n"), "{i}");
    assert!(i.contains("  fs:open: 20\n"), "{i}");
    assert!(i.contains("  control/custom_0: cpu 0,"), "{i}");
    std::fs::remove_dir_all(&dir).unwrap();
}
