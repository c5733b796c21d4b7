//! Damaged input: clear errors naming the file, section and offset, no
//! panic; lenient mode keeps every intact block, strict mode stops.

use tracemux_core::error::ErrorKind;
use tracemux_core::Endian;
use tracemux_ltt::report::{report_trace, summarize, ReportOptions};
use tracemux_ltt::trace::{FileBytes, Merged};
use tracemux_ltt::tracefile::Item;
use tracemux_ltt::writer::{Arg, Built, TraceDesc};
use tracemux_ltt::Trace;
use tracemux_testkit::Rng;

const BS: usize = 256;

fn desc(big: bool) -> TraceDesc {
    let mut d = TraceDesc::default();
    d.endian = if big { Endian::Big } else { Endian::Little };
    d.block_size = BS as u32;
    d.alignment = 8;
    let f = d.facility("fs");
    let open = d.event(f, "open", "fd %d name %s");
    let k = d.facility("kernel");
    let irq = d.event(k, "irq", "irq %u");
    for i in 0..30u64 {
        d.push(
            0,
            2000 + i * 100,
            open,
            vec![Arg::I(i as i64), Arg::Str(b"/some/file".to_vec())],
        );
        d.push(0, 2050 + i * 100, irq, vec![Arg::U(i)]);
        if i % 3 == 0 {
            d.push(1, 2060 + i * 100, irq, vec![Arg::U(100 + i)]);
        }
    }
    d
}

fn built() -> Built {
    desc(false).build().unwrap()
}

fn open_files(files: &[(String, Vec<u8>)], strict: bool) -> tracemux_core::Result<Trace> {
    Trace::from_files(
        files
            .iter()
            .map(|(n, d)| (n.clone(), Box::new(d.clone()) as FileBytes))
            .collect(),
        strict,
    )
}

fn file_mut<'a>(files: &'a mut [(String, Vec<u8>)], name: &str) -> &'a mut Vec<u8> {
    &mut files.iter_mut().find(|f| f.0 == name).unwrap().1
}

/// (events of `name` as (tsc, facility, event), damage) read leniently.
fn read_file(t: &Trace, name: &str) -> (Vec<(u64, u8, u8)>, Vec<tracemux_core::Error>) {
    let i = t.files().iter().position(|f| f.name == name).unwrap();
    let mut ev = Vec::new();
    let mut dmg = Vec::new();
    if let Some(mut s) = t.stream(i) {
        while let Some(item) = s.next_item().unwrap() {
            match item {
                Item::Event(e) => ev.push((e.tsc, e.facility, e.event)),
                Item::Damage(e) => dmg.push(e),
                Item::Block(..) => {}
            }
        }
    }
    (ev, dmg)
}

/// Report leniently and strictly; (lenient text, warnings, strict result).
fn both(files: &[(String, Vec<u8>)]) -> (String, String, Result<String, tracemux_core::Error>) {
    let t = open_files(files, false).unwrap();
    let mut out = Vec::new();
    let mut warn = Vec::new();
    report_trace(&t, &ReportOptions::default(), &mut out, &mut warn).unwrap();
    let strict = open_files(files, true).and_then(|t| {
        let mut o = Vec::new();
        let opts = ReportOptions {
            strict: true,
            ..Default::default()
        };
        report_trace(&t, &opts, &mut o, &mut Vec::new()).map(|_| String::from_utf8(o).unwrap())
    });
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(warn).unwrap(),
        strict,
    )
}

#[test]
fn wrong_magic_in_the_first_block() {
    let mut b = built();
    file_mut(&mut b.files, "cpu_0")[40] ^= 0xff;
    let t = open_files(&b.files, false).unwrap();
    let p = &t.problems()[0];
    assert_eq!(p.kind, ErrorKind::BadMagic);
    assert_eq!(p.section, "cpu_0: trace header");
    assert_eq!(p.offset, 40);
    // the other tracefiles are read
    assert_eq!(read_file(&t, "cpu_1").0.len(), 10);
    let (text, warn, strict) = both(&b.files);
    assert!(
        warn.contains("bad magic number in section 'cpu_0: trace header' at offset 0x28"),
        "{warn}"
    );
    assert_eq!(
        text.lines().filter(|l| l.contains("kernel:irq")).count(),
        10
    );
    let e = strict.unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::BadMagic, 40));
}

#[test]
fn wrong_magic_in_a_later_block_skips_that_block_only() {
    let b0 = built();
    let (intact, _) = read_file(&b0.open(false).unwrap(), "cpu_0");
    let mut b = built();
    let cpu0 = file_mut(&mut b.files, "cpu_0");
    assert!(cpu0.len() >= 3 * BS);
    cpu0[BS + 40] = 0;
    let t = open_files(&b.files, false).unwrap();
    let (ev, dmg) = read_file(&t, "cpu_0");
    assert_eq!(dmg.len(), 1);
    assert_eq!(dmg[0].kind, ErrorKind::BadMagic);
    assert_eq!(dmg[0].section, "cpu_0: block 1 trace header");
    assert_eq!(dmg[0].offset, (BS + 40) as u64);
    // blocks 0 and 2.. are kept whole
    let per_block = count_per_block(&b0, "cpu_0");
    let mut want = intact.clone();
    want.drain(per_block[0]..per_block[0] + per_block[1]);
    assert_eq!(ev, want);
    let (_, _, strict) = both(&b.files);
    assert_eq!(strict.unwrap_err().offset, (BS + 40) as u64);
}

/// Number of events in each block of `name`.
fn count_per_block(b: &Built, name: &str) -> Vec<usize> {
    let t = b.open(true).unwrap();
    let i = t.files().iter().position(|f| f.name == name).unwrap();
    let mut s = t.stream(i).unwrap();
    let mut v = Vec::new();
    while let Some(item) = s.next_item().unwrap() {
        match item {
            Item::Block(..) => v.push(0),
            Item::Event(_) => *v.last_mut().unwrap() += 1,
            Item::Damage(e) => panic!("{e}"),
        }
    }
    v
}

#[test]
fn block_size_past_the_end_of_the_file() {
    let mut b = built();
    let cpu1 = file_mut(&mut b.files, "cpu_1");
    let len = cpu1.len();
    cpu1[36..40].copy_from_slice(&(1u32 << 20).to_le_bytes());
    let t = open_files(&b.files, false).unwrap();
    let (_, dmg) = read_file(&t, "cpu_1");
    assert!(!dmg.is_empty());
    let last = dmg.last().unwrap();
    assert_eq!(last.kind, ErrorKind::UnexpectedEof);
    assert_eq!(last.offset, len as u64);
    assert!(
        last.to_string()
            .starts_with("unexpected end of data in section 'cpu_1: block 0 (the file ends"),
        "{last}"
    );
    let (_, _, strict) = both(&b.files);
    let e = strict.unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::UnexpectedEof, len as u64));
}

#[test]
fn a_block_whose_size_differs() {
    let mut b = built();
    let cpu0 = file_mut(&mut b.files, "cpu_0");
    cpu0[2 * BS + 36..2 * BS + 40].copy_from_slice(&999u32.to_le_bytes());
    let t = open_files(&b.files, false).unwrap();
    let (_, dmg) = read_file(&t, "cpu_0");
    assert_eq!(dmg.len(), 1);
    assert_eq!(dmg[0].section, "cpu_0: block 2 header");
    assert_eq!(dmg[0].offset, (2 * BS + 36) as u64);
    assert!(dmg[0]
        .to_string()
        .contains("buf_size 999 differs from the file's block size 256"));
}

#[test]
fn lost_size_too_large() {
    let mut b = built();
    let cpu0 = file_mut(&mut b.files, "cpu_0");
    cpu0[BS + 32..BS + 36].copy_from_slice(&200u32.to_le_bytes());
    let t = open_files(&b.files, false).unwrap();
    let (_, dmg) = read_file(&t, "cpu_0");
    assert_eq!(dmg.len(), 1);
    assert_eq!(dmg[0].offset, (BS + 32) as u64);
}

#[test]
fn an_event_crossing_the_block_end() {
    let b0 = built();
    let (intact, _) = read_file(&b0.open(false).unwrap(), "cpu_0");
    let per_block = count_per_block(&b0, "cpu_0");
    let mut b = built();
    // the second event of block 1: find its header by walking the block
    let t = b0.open(true).unwrap();
    let i = t.files().iter().position(|f| f.name == "cpu_0").unwrap();
    let mut s = t.stream(i).unwrap();
    let mut offs = Vec::new();
    while let Some(item) = s.next_item().unwrap() {
        if let Item::Event(e) = item {
            if e.block == 1 {
                offs.push(e.offset as usize);
            }
        }
    }
    let at = offs[1];
    let cpu0 = file_mut(&mut b.files, "cpu_0");
    // 64-bit timestamp, facility, event, then event_size
    cpu0[at + 10..at + 12].copy_from_slice(&500u16.to_le_bytes());
    let t = open_files(&b.files, false).unwrap();
    let (ev, dmg) = read_file(&t, "cpu_0");
    assert_eq!(dmg.len(), 1);
    assert_eq!(dmg[0].section, "cpu_0: block 1 event header");
    assert_eq!(dmg[0].offset, at as u64);
    assert!(
        dmg[0].to_string().contains("event of 500 bytes"),
        "{}",
        dmg[0]
    );
    assert!(dmg[0]
        .to_string()
        .contains("crosses the end of the block's events"));
    // block 1 keeps its first event; the rest of the file is intact
    let mut want = intact.clone();
    want.drain(per_block[0] + 1..per_block[0] + per_block[1]);
    assert_eq!(ev, want);
    let (_, _, strict) = both(&b.files);
    assert_eq!(strict.unwrap_err().offset, at as u64);
}

#[test]
fn an_event_header_crossing_the_block_end() {
    let mut b = built();
    let cpu0 = file_mut(&mut b.files, "cpu_0");
    // leave 5 bytes of events in block 0: not even a header
    let lost = (BS - 101 - 3 - 5) as u32;
    cpu0[32..36].copy_from_slice(&lost.to_le_bytes());
    let t = open_files(&b.files, false).unwrap();
    let (_, dmg) = read_file(&t, "cpu_0");
    assert_eq!(dmg.len(), 1);
    assert_eq!(dmg[0].offset, 104);
    assert!(
        dmg[0]
            .to_string()
            .contains("event header of 12 bytes crosses"),
        "{}",
        dmg[0]
    );
}

#[test]
fn unknown_facility_is_kept_raw() {
    let mut d = desc(true);
    d.push_raw("cpu_1", 5000, 77, 1, vec![1, 2, 3]);
    d.push_raw("cpu_1", 5001, 77, 1, vec![]);
    d.push_raw("cpu_1", 5002, 1, 9, vec![0xff]);
    let b = d.build().unwrap();
    let (text, warn, strict) = both(&b.files);
    assert!(
        text.contains(" facility_77:event_1: { cpu_id = 1 }, { _size = 3, _raw = \"010203\" }\n")
    );
    assert!(text.contains(" facility_77:event_1: { cpu_id = 1 }, { _size = 0, _raw = \"\" }\n"));
    assert!(text.contains(" fs:event_9: { cpu_id = 1 }, { _size = 1, _raw = \"ff\" }\n"));
    // one warning per type, naming the file and offset
    assert_eq!(
        warn.matches("unknown facility 77 (event 1)").count(),
        1,
        "{warn}"
    );
    assert_eq!(
        warn.matches("facility 1 (fs) has no event 9").count(),
        1,
        "{warn}"
    );
    assert!(warn.contains("in section 'cpu_1: event header' at offset 0x"));
    let e = strict.unwrap_err();
    assert_eq!(e.section, "cpu_1: event header");
}

#[test]
fn payloads_that_do_not_match_their_format() {
    let mut d = desc(false);
    let f = d.facility("odd");
    let flt = d.event(f, "float", "x %u");
    d.push(1, 9000, flt, vec![Arg::U(5)]);
    let mut b = d.build().unwrap();
    // make the format unusable: "x %u" -> "x %f" in the facilities file
    let fac = file_mut(&mut b.files, "control/facilities_0");
    let pos = fac.windows(5).position(|w| w == b"x %u\0").unwrap();
    fac[pos + 3] = b'f';
    let (text, warn, strict) = both(&b.files);
    assert!(
        text.contains(" odd:float: { cpu_id = 1 }, { _size = 4, _raw = \"05000000\" }\n"),
        "{text}"
    );
    assert!(warn.contains("odd:float event of 4 bytes does not match its format (format unusable: unsupported conversion '%f')"), "{warn}");
    assert!(strict.is_err());

    // a payload that ends inside a field
    let mut d = desc(false);
    let f = d.facility("short");
    let e = d.event(f, "e", "a %u b %u");
    d.push(1, 9000, e, vec![Arg::U(5), Arg::U(0x0101_0101)]);
    let mut b = d.build().unwrap();
    let fac = file_mut(&mut b.files, "control/facilities_0");
    let pos = fac.windows(10).position(|w| w == b"a %u b %u\0").unwrap();
    fac[pos + 8] = b's'; // b is now a string with no NUL in the payload
    let (text, warn, _) = both(&b.files);
    assert!(
        text.contains(" short:e: { cpu_id = 1 }, { _size = 8, _raw = \"0500000001010101\" }\n"),
        "{text}"
    );
    assert!(
        warn.contains("unterminated string at payload offset 4"),
        "{warn}"
    );
}

#[test]
fn invalid_trace_headers() {
    for (off, val, what) in [
        (56usize, 3u8, "arch_size 3"),
        (60, 2, "has_heartbeat 2"),
        (65, 0, "freq_scale is 0"),
    ] {
        let mut b = built();
        let cpu0 = file_mut(&mut b.files, "cpu_0");
        if off == 65 {
            cpu0[65..69].fill(val);
        } else {
            cpu0[off] = val;
        }
        let t = open_files(&b.files, false).unwrap();
        let p = &t.problems()[0];
        assert!(p.to_string().contains(what), "{p}");
        assert_eq!(p.section, "cpu_0: trace header");
        assert_eq!(p.offset, off as u64);
        assert!(open_files(&b.files, true).is_err());
    }
    // a block whose trace header differs from the first block's
    let mut b = built();
    let cpu0 = file_mut(&mut b.files, "cpu_0");
    cpu0[BS + 77] ^= 1; // start_tsc
    let t = open_files(&b.files, false).unwrap();
    let (_, dmg) = read_file(&t, "cpu_0");
    assert_eq!(dmg.len(), 1);
    assert_eq!(dmg[0].section, "cpu_0: block 1 trace header");
    // a tracefile whose header differs from the others'
    let mut b = built();
    let n = file_mut(&mut b.files, "cpu_1").len() / BS;
    let cpu1 = file_mut(&mut b.files, "cpu_1");
    for k in 0..n {
        cpu1[k * BS + 93] ^= 1; // start_time seconds
    }
    let t = open_files(&b.files, false).unwrap();
    assert!(t.problems()[0]
        .to_string()
        .contains("differs from the other tracefiles'"));
    assert!(open_files(&b.files, true).is_err());
}

#[test]
fn truncated_at_every_offset() {
    let b0 = built();
    let (intact, _) = read_file(&b0.open(false).unwrap(), "cpu_0");
    let per_block = count_per_block(&b0, "cpu_0");
    let len = b0.files.iter().find(|f| f.0 == "cpu_0").unwrap().1.len();
    for cut in 0..len {
        let mut b = b0.clone();
        file_mut(&mut b.files, "cpu_0").truncate(cut);
        let t = open_files(&b.files, false).unwrap();
        let whole_blocks = cut / BS;
        let kept: usize = per_block[..whole_blocks].iter().sum();
        let at_boundary = cut % BS == 0;
        if cut > 0 && cut < 101 {
            assert_eq!(t.problems().len(), 1, "cut {cut}");
            assert_eq!(t.problems()[0].section, "cpu_0: trace header");
            assert!(open_files(&b.files, true).is_err());
            continue;
        }
        let (ev, dmg) = read_file(&t, "cpu_0");
        // a prefix of the intact events, at least those of whole blocks
        assert!(ev.len() >= kept, "cut {cut}: {} < {kept}", ev.len());
        assert_eq!(ev[..], intact[..ev.len()], "cut {cut}");
        assert_eq!(dmg.is_empty(), at_boundary, "cut {cut}: {dmg:?}");
        for d in &dmg {
            assert!(d.section.starts_with("cpu_0: block"), "{d}");
            assert!(d.offset as usize <= cut);
        }
        // report does not fail and the other tracefile is whole
        let mut out = Vec::new();
        report_trace(&t, &ReportOptions::default(), &mut out, &mut Vec::new()).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("cpu_id = 1").count(), 10, "cut {cut}");
        // strict: an error exactly when the cut is inside a block
        let st = open_files(&b.files, true).and_then(|t| {
            report_trace(
                &t,
                &ReportOptions {
                    strict: true,
                    ..Default::default()
                },
                &mut Vec::new(),
                &mut Vec::new(),
            )
        });
        assert_eq!(st.is_err(), !at_boundary, "cut {cut}");
    }
}

#[test]
fn facilities_truncated_at_every_offset() {
    let b0 = built();
    let len = b0.files[0].1.len();
    assert_eq!(b0.files[0].0, "control/facilities_0");
    for cut in 0..len {
        let mut b = b0.clone();
        b.files[0].1.truncate(cut);
        let t = open_files(&b.files, false).unwrap();
        let s = summarize(&t).unwrap();
        let cpu: u64 = s
            .files
            .iter()
            .filter(|f| f.name.starts_with("cpu"))
            .map(|f| f.events)
            .sum();
        assert_eq!(cpu, 70, "cut {cut}");
        let mut out = Vec::new();
        report_trace(&t, &ReportOptions::default(), &mut out, &mut Vec::new()).unwrap();
    }
}

#[test]
fn random_damage_never_panics() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // LTT_DAMAGE_ROUNDS=100000 for a longer run
    let rounds: usize = std::env::var("LTT_DAMAGE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    for big in [false, true] {
        let b0 = desc(big).build().unwrap();
        for _ in 0..rounds {
            let mut b = b0.clone();
            let n = 1 + rng.next_u64() % 8;
            for _ in 0..n {
                let f = (rng.next_u64() % b.files.len() as u64) as usize;
                let data = &mut b.files[f].1;
                if data.is_empty() {
                    continue;
                }
                let at = (rng.next_u64() % data.len() as u64) as usize;
                match rng.next_u64() % 4 {
                    0 => data[at] = rng.next_u64() as u8,
                    1 => data[at] ^= 1 << (rng.next_u64() % 8),
                    2 => data.truncate(at),
                    _ => data[at] = 0xff,
                }
            }
            for strict in [false, true] {
                if let Ok(t) = open_files(&b.files, strict) {
                    let mut out = Vec::new();
                    let opts = ReportOptions {
                        strict,
                        ..Default::default()
                    };
                    let _ = report_trace(&t, &opts, &mut out, &mut Vec::new());
                    let _ = summarize(&t);
                    let mut m = t.events();
                    while let Ok(Some(x)) = m.next_merged() {
                        if let Merged::Event(e) = x {
                            assert!(e.raw.payload.len() == e.raw.size as usize);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn no_trace_here() {
    let dir = std::env::temp_dir().join(format!("tracemux-ltt-empty-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("control")).unwrap();
    std::fs::write(dir.join("README"), "not a trace").unwrap();
    let e = Trace::open(&dir, &Default::default()).err().unwrap();
    assert!(e.to_string().contains("no LTT tracefile"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
    let e = Trace::open(&dir, &Default::default()).err().unwrap();
    assert!(matches!(e.kind, ErrorKind::Io(_)));
}
