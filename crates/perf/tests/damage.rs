//! Bad input: every fixture cut at every record boundary (and inside each
//! record), and every record's size field damaged. Lenient reading goes on
//! and reports the damage; strict reading stops with an error naming the
//! offset; nothing panics.

use tracemux_core::model::{Record, RecordSource};
use tracemux_perf::script::{script, ScriptOptions};
use tracemux_perf::source::PerfSource;
use tracemux_perf::PerfData;

fn fixtures() -> Vec<(String, Vec<u8>)> {
    tracemux_testkit::sorted_entries(&tracemux_testkit::fixtures().join("perf"))
        .into_iter()
        .filter_map(|d| {
            let b = std::fs::read(d.join("perf.data")).ok()?;
            Some((d.file_name()?.to_string_lossy().into_owned(), b))
        })
        .collect()
}

/// (offset of the record header, size) of every record in file order.
fn boundaries(data: &[u8]) -> Vec<(usize, usize)> {
    let p = PerfData::open(data, true).unwrap();
    let mut r = p.records().unordered();
    let mut v = Vec::new();
    while let Some(x) = r.next_record() {
        if !x.compressed {
            v.push((x.offset as usize, x.body.len() + 8));
        }
    }
    assert!(r.damage.is_empty());
    v
}

/// Read `data` every way: script (lenient and strict), the model source.
/// Returns (lenient damage count, strict failed).
fn read_all(data: &[u8]) -> (usize, bool) {
    // the fixtures' symbols (never this machine's /proc/kallsyms)
    let root = tracemux_testkit::fixtures().join("perf");
    let opts = ScriptOptions {
        symfs: Some(root.join("symfs")),
        kallsyms: Some(root.join("kallsyms")),
        ..ScriptOptions::default()
    };
    let mut damage = 0;
    let strict_failed = match PerfData::open(data, true) {
        Err(_) => true,
        Ok(p) => {
            let o = ScriptOptions {
                strict: true,
                ..opts.clone()
            };
            script(&p, &o, &mut std::io::sink()).is_err()
        }
    };
    if let Ok(p) = PerfData::open(data, false) {
        if let Ok(r) = script(&p, &opts, &mut std::io::sink()) {
            damage += r.damage.len();
        }
        let mut src =
            PerfSource::new(&p, false).with_symbols(opts.symfs.clone(), opts.kallsyms.clone());
        let mut n = 0;
        while let Ok(Some(rec)) = src.next_record() {
            if matches!(rec, Record::Damage(_)) {
                n += 1;
            }
        }
        damage = damage.max(n);
    } else {
        damage += 1;
    }
    (damage, strict_failed)
}

#[test]
fn intact_fixtures_have_no_damage() {
    for (name, data) in fixtures() {
        assert_eq!(read_all(&data), (0, false), "{name}");
    }
}

#[test]
fn cut_at_every_record_boundary_and_inside() {
    let mut cases = 0;
    for (name, data) in fixtures() {
        // a pipe has no stated size: a cut between records cannot be told
        // from the end (perf cannot either)
        let pipe = data.get(8..16) == Some(&16u64.to_le_bytes()[..]);
        for (off, size) in boundaries(&data) {
            for cut in [off, off + 4, off + size / 2] {
                if cut >= data.len() || (pipe && cut == off) {
                    continue;
                }
                let (damage, strict_failed) = read_all(&data[..cut]);
                cases += 1;
                assert!(damage > 0, "{name} cut at {cut:#x}: no damage reported");
                assert!(
                    strict_failed,
                    "{name} cut at {cut:#x}: --strict did not fail"
                );
            }
        }
    }
    assert!(cases > 1000, "{cases}");
}

#[test]
fn damaged_record_sizes() {
    let mut cases = 0;
    for (name, data) in fixtures() {
        for (off, _) in boundaries(&data) {
            for bad in [0u16, 3, 0xffff] {
                let mut d = data.clone();
                d[off + 6..off + 8].copy_from_slice(&bad.to_le_bytes());
                let (damage, strict_failed) = read_all(&d);
                cases += 1;
                // a size of 0xffff may still fit inside the data section
                // (then the records after it are misread, and damage shows
                // later or not at all); 0 and 3 are always damage
                if bad != 0xffff {
                    assert!(
                        damage > 0,
                        "{name} size {bad} at {off:#x}: no damage reported"
                    );
                    assert!(
                        strict_failed,
                        "{name} size {bad} at {off:#x}: --strict did not fail"
                    );
                }
            }
        }
    }
    assert!(cases > 1000, "{cases}");
}

#[test]
fn garbage_in_every_header_byte() {
    for (name, data) in fixtures() {
        let n = if data.len() > 104 && &data[8..16] != 16u64.to_le_bytes().as_slice() {
            104
        } else {
            16
        };
        for i in 0..n {
            for v in [0u8, 0xff, 0x7f] {
                let mut d = data.clone();
                d[i] = v;
                let _ = read_all(&d);
            }
        }
        let _ = name;
    }
}

#[test]
fn empty_and_tiny_inputs_are_errors() {
    for b in [
        &b""[..],
        b"PERFILE2",
        b"PERFILE2\x10\0\0\0\0\0\0\0",
        b"not a perf file at all",
    ] {
        match PerfData::open(b, false) {
            Err(e) => assert!(!e.to_string().is_empty()),
            Ok(p) => {
                script(&p, &ScriptOptions::default(), &mut std::io::sink()).unwrap();
            }
        }
    }
}
