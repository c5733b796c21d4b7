//! `convert --to ctf` / `--to ctf2`, checked without babeltrace2: every
//! fixture that tests/convert/check-ctf.sh ran through babeltrace2 is
//! converted again, and `tracemux report` of the CTF output (the CTF
//! reader's printer, byte-identical to babeltrace2 2.0.4) must give what
//! babeltrace2 printed: the stored first lines (`NAME.head.txt`) and the
//! `cksum` and line count of the whole output (`NAME.cksum`). The CTF 2
//! output must read back to the same text. Fixtures: trace.dat
//! (tracedat, synthetic), the hand-built LTT trace, uftrace (recorded,
//! corpus) and CTF (`convert_ctf_from_ctf` compares those with
//! babeltrace2's output of the original).

mod common;

use std::path::{Path, PathBuf};

/// POSIX `cksum`: CRC-32 (polynomial 0x04C11DB7, MSB first) of the bytes
/// then of the length, complemented.
fn cksum(data: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = (i as u32) << 24;
        for _ in 0..8 {
            c = if c & 0x8000_0000 != 0 {
                (c << 1) ^ 0x04C1_1DB7
            } else {
                c << 1
            };
        }
        *t = c;
    }
    let mut crc = 0u32;
    let mut step = |b: u8| crc = (crc << 8) ^ table[((crc >> 24) as u8 ^ b) as usize];
    for &b in data {
        step(b);
    }
    let mut n = data.len() as u64;
    while n > 0 {
        step(n as u8);
        n >>= 8;
    }
    !crc
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "tracemux-convert-ctf-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The fixtures with stored babeltrace2 outputs: (name, trace path).
fn fixtures(scratch: &Path) -> Vec<(String, PathBuf)> {
    let root = common::repo_root();
    let expected = root.join("tests/fixtures/convert");
    let mut v = Vec::new();
    // the traces `inner` of the fixtures in `dir` that have a stored
    // output, named `PREFIX-FIXTURE`
    let add = |v: &mut Vec<(String, PathBuf)>, prefix: &str, dir: &str, inner: &str| {
        for d in tracemux_testkit::sorted_entries(&root.join("tests/fixtures").join(dir)) {
            let name = format!("{prefix}-{}", d.file_name().unwrap().to_string_lossy());
            if d.join(inner).exists() && expected.join(format!("{name}.cksum")).exists() {
                v.push((name, d.join(inner)));
            }
        }
    };
    for kind in ["tracedat", "synthetic"] {
        add(&mut v, kind, kind, "trace.dat");
    }
    if expected.join("ltt-hand-built.cksum").exists() {
        let src = root.join("tests/fixtures/ltt/hand-built");
        let dir = scratch.join("ltt-hand-built");
        std::fs::create_dir_all(dir.join("control")).unwrap();
        for f in ["control/facilities_0", "cpu_0", "cpu_2"] {
            let text = std::fs::read_to_string(src.join(format!("{f}.hex"))).unwrap();
            std::fs::write(dir.join(f), common::parse_hex(&text)).unwrap();
        }
        v.push(("ltt-hand-built".into(), dir));
    }
    // uftrace: `args` (an array of variants) and `retval` (an optional
    // of a variant) in the structures the writer puts around them
    for kind in ["recorded", "corpus"] {
        add(
            &mut v,
            &format!("uftrace-{kind}"),
            &format!("uftrace/{kind}"),
            "uftrace.data",
        );
    }
    // CTF sources (against babeltrace2's output of the original:
    // `convert_ctf_from_ctf`; here against its output of the conversion)
    add(&mut v, "ctf", "ctf", "trace");
    v
}

fn run(args: &[&str]) -> std::process::Output {
    common::tracemux(args, Path::new("."))
}

/// Convert `src` to `out` (`to`: ctf or ctf2) and print it with `report`.
fn convert_and_report(src: &Path, out: &Path, to: &str) -> Result<Vec<u8>, String> {
    // (--reencode: CTF sources too go through the writer, not a packet copy)
    let o = common::convert(src, out, to, "--reencode");
    if !out.join("metadata").exists() {
        return Err(format!(
            "convert --to {to}: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    let has_streams = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .any(|e| e.file_name() != "metadata");
    if !has_streams {
        return Ok(Vec::new());
    }
    let r = run(&["report", out.to_str().unwrap()]);
    if !r.status.success() {
        return Err(format!(
            "report of --to {to}: {}",
            String::from_utf8_lossy(&r.stderr)
        ));
    }
    Ok(r.stdout)
}

#[test]
fn ctf_output_reads_as_babeltrace2_read_it() {
    let scratch = tmp("ctf");
    let expected = common::repo_root().join("tests/fixtures/convert");
    let list = fixtures(&scratch);
    assert!(
        list.len() >= 40,
        "fixtures with stored outputs: {}",
        list.len()
    );
    assert!(
        list.iter()
            .filter(|(n, _)| n.starts_with("uftrace-"))
            .count()
            >= 12,
        "uftrace fixtures with stored outputs"
    );
    let mut failures = Vec::new();
    for (name, src) in &list {
        let got = match convert_and_report(src, &scratch.join(format!("{name}.ctf")), "ctf") {
            Ok(g) => g,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let head = std::fs::read(expected.join(format!("{name}.head.txt"))).unwrap();
        let sum = std::fs::read_to_string(expected.join(format!("{name}.cksum"))).unwrap();
        let want: Vec<u64> = sum.split_whitespace().map(|w| w.parse().unwrap()).collect();
        let lines = got.iter().filter(|&&b| b == b'\n').count() as u64;
        let got_head: Vec<u8> = {
            let mut n = 0;
            let end = got
                .iter()
                .position(|&b| {
                    n += (b == b'\n') as usize;
                    n == 100
                })
                .map_or(got.len(), |p| p + 1);
            got[..end].to_vec()
        };
        if got_head != head {
            failures.push(format!(
                "{name}: first lines differ: {}",
                common::first_diff(&head, &got_head)
            ));
        } else if [u64::from(cksum(&got)), got.len() as u64, lines] != want[..] {
            failures.push(format!(
                "{name}: cksum/bytes/lines {} {} {lines}, babeltrace2 {sum}",
                cksum(&got),
                got.len()
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn ctf2_output_reads_back_like_ctf() {
    let scratch = tmp("ctf2");
    let list = fixtures(&scratch);
    let mut failures = Vec::new();
    for (name, src) in &list {
        let one = convert_and_report(src, &scratch.join(format!("{name}.ctf")), "ctf");
        let two = convert_and_report(src, &scratch.join(format!("{name}.ctf2")), "ctf2");
        match (one, two) {
            (Ok(a), Ok(b)) if a == b => {}
            (Ok(a), Ok(b)) => failures.push(format!("{name}: {}", common::first_diff(&a, &b))),
            (a, b) => failures.push(format!("{name}: {:?} / {:?}", a.err(), b.err())),
        }
        let _ = std::fs::remove_dir_all(scratch.join(format!("{name}.ctf")));
        let _ = std::fs::remove_dir_all(scratch.join(format!("{name}.ctf2")));
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn cksum_is_posix() {
    // `printf 'hello\n' | cksum` -> 3015617425 6
    assert_eq!(cksum(b"hello\n"), 3_015_617_425);
    assert_eq!(cksum(b""), 4_294_967_295);
}
