//! Bad input: damaged copies of the pg-basic fixture. No panic, no hang;
//! damage is reported with the file and offset; what uftrace prints for the
//! same damage is matched where it keeps going (tests/fixtures/uftrace/damaged).

use std::path::{Path, PathBuf};

use tracemux_uftrace::replay::{replay, ReplayOptions};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/uftrace")
}

/// A fresh copy of pg-basic's uftrace.data in a temporary directory.
fn copy(case: &str) -> PathBuf {
    copy_of("corpus/pg-basic", case)
}

/// A fresh copy of the uftrace.data of fixture `fixture` in a temporary
/// directory named after `case`.
fn copy_of(fixture: &str, case: &str) -> PathBuf {
    let src = fixtures().join(fixture).join("uftrace.data");
    let dst = std::env::temp_dir().join(format!(
        "tracemux-uftrace-damage-{}-{case}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dst);
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
    }
    dst
}

/// A fresh copy of pg-basic's uftrace.data (see [`copy`]) with `patch`
/// applied to the bytes of its file `file`.
fn patched(case: &str, file: &str, patch: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let d = copy(case);
    let p = d.join(file);
    let mut b = std::fs::read(&p).unwrap();
    patch(&mut b);
    std::fs::write(&p, &b).unwrap();
    d
}

fn run(dir: &Path) -> (String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    replay(dir, &ReplayOptions::default(), &mut out, &mut err).unwrap();
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

/// The warnings say all of `words`.
fn assert_says(err: &str, words: &[&str]) {
    for w in words {
        assert!(err.contains(w), "no {w:?} in: {err}");
    }
}

fn zst(path: &Path) -> String {
    String::from_utf8(zstd::decode_all(std::fs::File::open(path).unwrap()).unwrap()).unwrap()
}

#[test]
fn missing_symbol_file_prints_addresses_like_uftrace() {
    let d = copy("nosym");
    std::fs::remove_file(d.join("ufprog_pg.sym")).unwrap();
    let (out, err) = run(&d);
    assert_eq!(out, zst(&fixtures().join("damaged/nosym/replay.txt.zst")));
    assert_says(&err, &["ufprog_pg.sym"]);
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn exit_before_its_entry_prints_the_absolute_duration_like_uftrace() {
    // __cxa_atexit's exit (the 4th record of 1366.dat) moved 5 us before
    // its entry: uftrace 0.13 prints "5.000 us" (print_time_unit takes
    // the negative duration's absolute value)
    let d = patched("inverted", "1366.dat", |b| {
        let entry = u64::from_le_bytes(b[32..40].try_into().unwrap());
        b[48..56].copy_from_slice(&(entry - 5000).to_le_bytes());
    });
    let (out, _) = run(&d);
    let line = out.lines().nth(2).unwrap();
    assert_eq!(line, "   5.000 us [  1366] | __cxa_atexit();");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn truncated_data_file_like_uftrace() {
    let d = copy("trunc");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(d.join("1369.dat"))
        .unwrap();
    f.set_len(5000).unwrap();
    let (out, err) = run(&d);
    assert_eq!(out, zst(&fixtures().join("damaged/trunc/replay.txt.zst")));
    assert_says(&err, &["1369.dat", "offset 0x1380"]);
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn bad_record_magic_is_reported_and_skipped() {
    // type/more/magic/depth of the record at 0x100
    let d = patched("magic", "1369.dat", |b| b[0x108] = 0);
    let (out, err) = run(&d);
    assert_says(&err, &["1369.dat", "magic", "0x100"]);
    // every other task is intact; the damaged task keeps the records after
    // the bad one (uftrace 0.13 drops them)
    let reference = std::fs::read_to_string(fixtures().join("corpus/pg-basic/replay.txt")).unwrap();
    let keep = |s: &str| {
        s.lines()
            .filter(|l| l.contains("[  1366]"))
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(keep(&out), keep(&reference));
    assert!(out.lines().filter(|l| l.contains("[  1369]")).count() > 100);
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn unknown_feature_bit_warns_and_replays() {
    let d = patched("feat", "info", |b| b[18] |= 0x10); // feature bit 20
    let (out, err) = run(&d);
    let reference = std::fs::read_to_string(fixtures().join("corpus/pg-basic/replay.txt")).unwrap();
    assert_eq!(out, reference);
    assert_says(&err, &["unknown feature bits 0x100000", "0x10"]);
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn missing_map_and_task_files_do_not_panic() {
    let d = copy("nomap");
    for e in std::fs::read_dir(&d).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "map") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let (out, err) = run(&d);
    assert_says(&err, &["sid-98d71dad15a9c706.map"]);
    assert!(out.contains("<563251d3f4f0>() {"), "{out}");
    std::fs::remove_file(d.join("task.txt")).unwrap();
    let (out, err) = run(&d);
    assert_says(&err, &["task.txt"]);
    assert!(out.lines().count() > 100);
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn bad_info_is_an_error_not_a_panic() {
    let d = copy("info");
    let p = d.join("info");
    let b = std::fs::read(&p).unwrap();
    for cut in [0, 7, 39, 41, 200] {
        std::fs::write(&p, &b[..cut]).unwrap();
        let mut out = Vec::new();
        let mut err = Vec::new();
        let _ = replay(&d, &ReplayOptions::default(), &mut out, &mut err);
        let _ = tracemux_uftrace::info::info(&d, &mut out, &mut err);
        let _ = tracemux_uftrace::info::info_task(&d, &mut out, &mut err);
    }
    let mut bad = b.clone();
    bad[0] = b'X';
    std::fs::write(&p, &bad).unwrap();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let e = replay(&d, &ReplayOptions::default(), &mut out, &mut err).unwrap_err();
    assert!(e.to_string().contains("magic"), "{e}");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn corrupted_bytes_never_panic() {
    let d = copy("fuzz");
    let names = [
        "1366.dat",
        "1369.dat",
        "perf-cpu0.dat",
        "task.txt",
        "sid-98d71dad15a9c706.map",
        "ufprog_pg.sym",
    ];
    let orig: Vec<Vec<u8>> = names
        .iter()
        .map(|n| std::fs::read(d.join(n)).unwrap())
        .collect();
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    for round in 0..60 {
        let k = round % names.len();
        let mut b = orig[k].clone();
        for _ in 0..8 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if b.is_empty() {
                break;
            }
            let i = (seed as usize) % b.len();
            b[i] = (seed >> 32) as u8;
        }
        if round % 7 == 3 {
            let l = b.len() / 2;
            b.truncate(l);
        }
        std::fs::write(d.join(names[k]), &b).unwrap();
        let mut out = Vec::new();
        let mut err = Vec::new();
        let _ = replay(&d, &ReplayOptions::default(), &mut out, &mut err);
        let _ = tracemux_uftrace::info::info_task(&d, &mut out, &mut err);
        std::fs::write(d.join(names[k]), &orig[k]).unwrap();
    }
    let _ = std::fs::remove_dir_all(d);
}

/// A record, owned: where its bytes end (padding not counted), time,
/// address, depth, blob.
type Owned = (u64, u64, u64, u16, Vec<u8>);

/// The records of task `tid` and the number of damage reports.
fn records(dir: &Path, tid: i32) -> (Vec<Owned>, usize) {
    use tracemux_uftrace::data::{OpenOptions, UftraceData};
    use tracemux_uftrace::reader::TaskReader;
    use tracemux_uftrace::record::Kind;
    let data = UftraceData::open(dir, OpenOptions::default()).expect("the directory opens");
    let task = data.tasks.iter().position(|t| t.tid == tid).unwrap();
    let mut r = TaskReader::new(&data, task);
    let mut v = Vec::new();
    while let Some(rec) = r.next_record() {
        let extra = match (rec.more, rec.kind) {
            (true, Kind::Event) => 2,
            _ => 0,
        };
        let end = rec.offset + 16 + extra + rec.data.len() as u64;
        v.push((end, rec.time, rec.addr, rec.depth, rec.data.to_vec()));
    }
    (v, r.damage.len())
}

/// A data file cut at every 8-byte offset (every record boundary among
/// them, and every place inside a header or an argument blob): every record
/// that ends before the cut is read exactly as in the intact file, nothing
/// after it is made up, and a cut inside a record is reported as damage.
#[test]
fn cut_at_every_record_boundary_keeps_every_record_before_it() {
    for (case, tid) in [
        ("recorded/pg-args-types", 11151),
        ("corpus/pg-args-retval", 1846),
        ("corpus/pg-basic", 1369),
    ] {
        let d = copy_of(case, &format!("cuts-{tid}"));
        let file = d.join(format!("{tid}.dat"));
        let len = std::fs::metadata(&file).unwrap().len();
        let (full, dmg) = records(&d, tid);
        assert_eq!(dmg, 0, "{case}: the intact file reports damage");
        assert!(full.len() > 100, "{case}: {} records", full.len());
        assert!(full.iter().any(|r| !r.4.is_empty()) || case.ends_with("basic"));
        let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
        // cut from the end towards the start: one copy serves every cut
        for cut in (0..len).rev().filter(|c| c % 8 == 0) {
            f.set_len(cut).unwrap();
            let (got, dmg) = records(&d, tid);
            let want: Vec<_> = full.iter().filter(|r| r.0 <= cut).cloned().collect();
            assert_eq!(got, want, "{case} cut at {cut}");
            let padded_end = want.last().map_or(0, |r| r.0.div_ceil(8) * 8);
            if cut > padded_end {
                assert!(dmg > 0, "{case} cut at {cut}: damage not reported");
            }
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
