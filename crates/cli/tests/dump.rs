//! `tracemux dump` against the outputs of `trace-cmd dump` 3.1.6 (byte for
//! byte), and `tracemux info` against what the references say about each
//! trace.

mod common;
use common::*;

use std::path::{Path, PathBuf};

/// Reference name and the trace-cmd dump flags that made it (exit-codes.txt).
const DUMPS: &[(&str, &[&str])] = &[
    ("dump-summary", &["--summary"]),
    ("dump-options", &["--options"]),
    ("dump-flyrecord", &["--flyrecord"]),
    ("dump-clock", &["--clock"]),
    ("dump-headers", &["--head-page", "--head-event"]),
    ("dump-cmdlines", &["--cmd-lines"]),
    ("dump-systems", &["--systems"]),
    ("dump-events", &["--ftrace-events", "--events"]),
    ("dump-printk", &["--printk"]),
    ("dump-validate", &["-v"]),
];

/// The trace directories: the repository's fixtures and, when it exists,
/// the shared corpus.
fn dirs() -> Vec<PathBuf> {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/tracedat");
    if !shared.is_dir() {
        eprintln!(
            "note: {} does not exist; testing the repository fixtures only",
            shared.display()
        );
    }
    fixture_dirs("tracedat")
}

fn name(d: &Path) -> String {
    d.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn dump_matches_trace_cmd() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for d in dirs() {
        for (reference_name, flags) in DUMPS {
            let Some(want) = reference(&d, reference_name) else {
                continue;
            };
            let mut args = vec!["dump", "-i", "trace.dat"];
            args.extend_from_slice(flags);
            let out = tracemux(&args, &d);
            checked += 1;
            if !out.status.success() {
                failures.push(format!(
                    "{} {reference_name}: exit {:?}: {}",
                    name(&d),
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            } else if out.stdout != want {
                failures.push(format!(
                    "{} {reference_name}: {}",
                    name(&d),
                    first_diff(&want, &out.stdout)
                ));
            }
        }
    }
    eprintln!("{checked} dumps compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// dump-kallsyms-head.txt holds, for `trace-cmd dump --kallsyms` without
/// its first line: line count, byte count and sha256, then its first 20
/// lines; then the first line.
#[test]
fn dump_kallsyms_matches_trace_cmd() {
    let mut failures = Vec::new();
    for d in dirs() {
        let Some(head) = reference(&d, "dump-kallsyms-head") else {
            continue;
        };
        let out = tracemux(&["dump", "-i", "trace.dat", "--kallsyms"], &d);
        assert!(out.status.success(), "{}", name(&d));
        let all = &out.stdout;
        let nl = all.iter().position(|&b| b == b'\n').unwrap_or(all.len());
        let (first, rest) = (&all[..nl + 1], &all[nl + 1..]);
        let lines = rest.iter().filter(|&&b| b == b'\n').count();
        let mut want = format!(
            "lines: {}  bytes: {}  sha256: {}\n",
            lines,
            rest.len(),
            hex(&sha256(rest))
        )
        .into_bytes();
        let twenty = rest
            .split_inclusive(|&b| b == b'\n')
            .take(20)
            .flatten()
            .copied();
        want.extend(twenty);
        want.extend_from_slice(first);
        if want != head {
            failures.push(format!("{}: {}", name(&d), first_diff(&head, &want)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn dump_arguments() {
    let Some(d) = dirs().into_iter().next() else {
        eprintln!("note: no trace.dat fixtures");
        return;
    };
    let summary = tracemux(&["dump", "-i", "trace.dat", "--summary"], &d);
    assert!(summary.status.success());
    // no flag means --summary; the trace may be given as an argument
    let plain = tracemux(&["dump", "trace.dat"], &d);
    assert_eq!(plain.stdout, summary.stdout);
    // the file name is printed as given
    let p = d.join("trace.dat");
    let full = tracemux(&["dump", p.to_str().unwrap()], &d);
    let want = format!("\n Tracing meta data in file {}:\n", p.display());
    assert!(full.stdout.starts_with(want.as_bytes()));
    // several flags print in trace-cmd's order, whatever their order here
    let a = tracemux(&["dump", "trace.dat", "--cmd-lines", "--options"], &d);
    let b = tracemux(&["dump", "trace.dat", "--options", "--cmd-lines"], &d);
    assert_eq!(a.stdout, b.stdout);
    // (v6 stores the command lines before the options, v7 after)
    let opts = reference(&d, "dump-options").unwrap();
    let cmd = reference(&d, "dump-cmdlines").unwrap();
    assert!(
        a.stdout == [&opts[..], &cmd[..]].concat() || a.stdout == [&cmd[..], &opts[..]].concat()
    );
    // both inputs at once is an error
    let err = tracemux(&["dump", "-i", "trace.dat", "trace.dat"], &d);
    assert!(!err.status.success());
}

/// The bytes of the first trace of [`dirs`] and a scratch directory
/// `name` to write damaged copies of it in; `None` without traces.
fn first_trace_in(name: &str) -> Option<(Vec<u8>, PathBuf)> {
    let d = dirs().into_iter().next()?;
    let data = std::fs::read(d.join("trace.dat")).unwrap();
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&tmp).unwrap();
    Some((data, tmp))
}

/// A cut file: what is printed is what the intact file prints up to where
/// the cut is met, the damage is on stderr and the exit status is 1.
#[test]
fn dump_truncated() {
    let Some((data, tmp)) = first_trace_in("dump-truncated") else {
        return;
    };
    std::fs::write(tmp.join("trace.dat"), &data).unwrap();
    let full = tracemux(&["dump", "trace.dat", "--all"], &tmp);
    assert!(full.status.success());
    for cut in [
        0usize,
        5,
        17,
        40,
        300,
        5000,
        data.len() / 2,
        data.len() - 64,
    ] {
        std::fs::write(tmp.join("trace.dat"), &data[..cut]).unwrap();
        let out = tracemux(&["dump", "trace.dat", "--all"], &tmp);
        assert_eq!(out.status.code(), Some(1), "cut at {cut}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("tracemux: trace.dat: "),
            "cut at {cut}: {err}"
        );
        assert!(
            full.stdout.starts_with(&out.stdout),
            "cut at {cut}: {}",
            first_diff(&full.stdout, &out.stdout)
        );
    }
}

/// `key  value` lines of `tracemux info`.
fn info_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let l = l.strip_prefix("  ")?;
        let rest = l.strip_prefix(key)?;
        rest.starts_with("  ").then(|| rest.trim())
    })
}

#[test]
fn info_states_the_facts() {
    let mut failures = Vec::new();
    for d in dirs() {
        let n = name(&d);
        let out = tracemux(&["info", "trace.dat"], &d);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            failures.push(format!("{n}: exit {:?}", out.status.code()));
            continue;
        }
        let summary = String::from_utf8(reference(&d, "dump-summary").unwrap()).unwrap();
        let field = |label: &str| {
            summary
                .lines()
                .find(|l| l.ends_with(label))
                .map(|l| l.trim().trim_end_matches(label).trim().to_string())
        };
        let version = field("[Version]").unwrap();
        let format = info_value(&text, "format").unwrap_or("");
        if !format.ends_with(&format!("version {version}")) {
            failures.push(format!("{n}: format line {format:?}"));
        }
        if let Some(alg) = field("[Compression algorithm]") {
            let ver = field("[Compression version]").unwrap_or_default();
            let want = format!("{alg} {ver}");
            let got = info_value(&text, "compression").unwrap_or("");
            if got != want.trim() {
                failures.push(format!("{n}: compression {got:?}, want {want:?}"));
            }
        }
        // every buffer named in the options
        let options = String::from_utf8(reference(&d, "dump-options").unwrap()).unwrap();
        for l in options.lines().filter(|l| l.ends_with(" [name]")) {
            let quoted = l.trim_end_matches(" [name]");
            let label = if quoted == "\"\"" {
                "\"\" (top)".to_string()
            } else {
                quoted.to_string()
            };
            if !text.lines().any(|t| t.trim_start().starts_with(&label)) {
                failures.push(format!("{n}: buffer {label} not shown"));
            }
        }
        // events (and lost-events markers, which report -R prints as lines)
        let count = common::event_count(&d).unwrap();
        let events: u64 = info_value(&text, "events")
            .and_then(|v| v.parse().ok())
            .unwrap_or(u64::MAX);
        let lost = info_value(&text, "lost events").unwrap_or("");
        let markers: u64 = if lost == "none" {
            0
        } else {
            lost.split(' ').next().unwrap().parse().unwrap_or(u64::MAX)
        };
        if events.wrapping_add(markers) != count {
            failures.push(format!(
                "{n}: {events} events + {markers} lost markers, want {count}"
            ));
        }
        for key in ["trace clock", "first timestamp", "last timestamp"] {
            if info_value(&text, key).is_none() {
                failures.push(format!("{n}: no {key}"));
            }
        }
        if !text.contains("\nDamage\n  none\n") {
            failures.push(format!("{n}: damage reported"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn info_reports_damage() {
    let Some((data, tmp)) = first_trace_in("info-truncated") else {
        return;
    };
    std::fs::write(tmp.join("trace.dat"), &data[..data.len() - 5000]).unwrap();
    let out = tracemux(&["info", "trace.dat"], &tmp);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\nDamage\n") && !text.contains("\nDamage\n  none\n"));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("tracemux: trace.dat: "));
    // --strict stops at the damage
    let out = tracemux(&["info", "--strict", "trace.dat"], &tmp);
    assert_eq!(out.status.code(), Some(1));
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// SHA-256 (FIPS 180-4), enough for comparing with `sha256sum`.
fn sha256(data: &[u8]) -> [u8; 32] {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for i in 0..16 {
            w[i] = u32::from_be_bytes(block[i * 4..i * 4 + 4].try_into().unwrap());
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, v) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(v);
        }
    }
    let mut out = [0u8; 32];
    for (i, v) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&v.to_be_bytes());
    }
    out
}

#[test]
fn sha256_known_answers() {
    assert_eq!(
        hex(&sha256(b"")),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        hex(&sha256(b"abc")),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}
