//! Damaged input through the common event model, for every format: each
//! file of a fixture trace (trace.dat; CTF metadata and stream files;
//! uftrace's info, task.txt, map, symbol and data files; LTT tracefiles of
//! a trace made by the fixture writer)
//! truncated at several points and with bytes flipped or zeroed, then
//! `report --json`, `convert --to ctf --reencode` and a conversion into one
//! more format (Perfetto, Chrome, Parquet, JSON lines, trace.dat, in turn)
//! run on it, each under a 1 GB address-space limit (so that an allocation
//! sized by a damaged value fails the run even when Linux would hand the
//! memory out lazily). None may panic, abort or hang (exit 0, or 1 with the
//! damage reported, within a minute); JSON output stays one object per
//! line; no run's peak RSS passes 64 MB.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::repo_root;

/// Copy `src` (a file or a directory tree) to `dst`.
fn copy_tree(src: &Path, dst: &Path) {
    if src.is_dir() {
        std::fs::create_dir_all(dst).unwrap();
        for e in std::fs::read_dir(src).unwrap().flatten() {
            copy_tree(&e.path(), &dst.join(e.file_name()));
        }
    } else {
        std::fs::copy(src, dst).unwrap();
    }
}

/// One damage: its name, a length to cut the file to, bytes to write at an
/// offset.
type Damage = (String, Option<usize>, Option<(usize, Vec<u8>)>);

/// The damages tried on one file of `len` bytes.
fn damages(len: usize) -> Vec<Damage> {
    let mut v = Vec::new();
    for k in [0usize, 1, 2, 3, 5, 8, 13] {
        let at = len * k / 16;
        v.push((format!("cut@{at}"), Some(at), None));
    }
    // a deterministic spread of patches: flipped bytes, zeroed and
    // all-ones runs (extreme length words)
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..9 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if len == 0 {
            break;
        }
        let at = (x as usize) % len;
        let bytes = match i % 3 {
            0 => vec![0xff; 8],
            1 => vec![0; 8],
            _ => vec![(x >> 32) as u8 ^ 0x5a],
        };
        v.push((format!("patch{i}@{at}"), None, Some((at, bytes))));
    }
    v
}

/// How long one run may take before it counts as a hang (the machine may
/// be busy; a healthy run of these small traces takes well under a second).
const HANG: Duration = Duration::from_secs(60);

/// Run the CLI with its output in files (no pipe to drain), killing it
/// when it takes longer than [`HANG`]: `None` then.
fn run(args: &[&str], scratch: &Path) -> Option<std::process::Output> {
    let out = scratch.join("stdout");
    let err = scratch.join("stderr");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tracemux"));
    let mut child = common::limit_address_space(&mut cmd)
        .env("TZ", "UTC")
        .args(args)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("tracemux runs");
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Some(std::process::Output {
        status,
        stdout: std::fs::read(&out).unwrap(),
        stderr: std::fs::read(&err).unwrap(),
    })
}

/// The largest peak RSS of the children this process has waited for, in
/// bytes (Linux counts `ru_maxrss` in KiB). The one `unsafe` of the tests:
/// std has no safe way to ask for it.
#[allow(unsafe_code)]
fn children_peak_rss() -> u64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    assert_eq!(rc, 0);
    ru.ru_maxrss as u64 * 1024
}

/// A trace to damage: its path, files copied over it first (relative path,
/// source), and the files to damage (relative to it; `""`: the trace is
/// one file).
struct Case {
    trace: PathBuf,
    overlay: Vec<(&'static str, PathBuf)>,
    files: Vec<&'static str>,
}

fn case(trace: PathBuf, files: &[&'static str]) -> Case {
    Case {
        trace,
        overlay: Vec::new(),
        files: files.to_vec(),
    }
}

#[test]
fn damaged_inputs_of_every_format_never_crash_the_model_paths() {
    let f = repo_root().join("tests/fixtures");
    let ctf = f.join("ctf/lttng-ust-uid/trace");
    let uft = f.join("uftrace/recorded/pg-args-types/uftrace.data");
    let ltt = common::ltt_trace("damage");
    let cases = [
        case(f.join("tracedat/v7-instance-B/trace.dat"), &[""]),
        // big-endian, version 6, uncompressed pages
        case(f.join("synthetic/be-v6/trace.dat"), &[""]),
        case(
            ctf.clone(),
            &["ust/uid/0/64-bit/metadata", "ust/uid/0/64-bit/ch0_0"],
        ),
        // the same streams described by CTF 2 metadata
        Case {
            trace: ctf,
            overlay: vec![(
                "ust/uid/0/64-bit/metadata",
                f.join("ctf2/translated/lttng-ust-uid/ust/uid/0/64-bit/metadata"),
            )],
            files: vec!["ust/uid/0/64-bit/metadata"],
        },
        case(
            uft,
            &[
                "info",
                "task.txt",
                "sid-3fd97dcb33407cc3.map",
                "args.sym",
                "11151.dat",
                "perf-cpu0.dat",
            ],
        ),
        // kernel data of a `uftrace record -k` directory
        case(
            f.join("uftrace/kernel/pg-dlopen-k/uftrace.data"),
            &["kernel_header", "kernel-cpu0.dat", "kallsyms"],
        ),
        case(ltt, &["cpu_0", "cpu_1", "control/facilities_0"]),
    ];
    let tmp = std::env::temp_dir().join(format!("tracemux-damage-model-{}", std::process::id()));
    let mut runs = 0;
    let mut fails = Vec::new();
    let mut turn = 0usize;
    for Case {
        trace,
        overlay,
        files,
    } in &cases
    {
        for file in files {
            let source = match overlay.iter().find(|(rel, _)| rel == file) {
                Some((_, src)) => src.clone(),
                None if file.is_empty() => trace.clone(),
                None => trace.join(file),
            };
            let orig = std::fs::read(source).unwrap();
            for (name, cut, patch) in damages(orig.len()) {
                let _ = std::fs::remove_dir_all(&tmp);
                std::fs::create_dir_all(&tmp).unwrap();
                let copy = tmp.join("t");
                copy_tree(trace, &copy);
                for (rel, src) in overlay {
                    std::fs::copy(src, copy.join(rel)).unwrap();
                }
                let target = if file.is_empty() {
                    copy.clone()
                } else {
                    copy.join(file)
                };
                let mut b = orig.clone();
                if let Some(c) = cut {
                    b.truncate(c);
                }
                if let Some((at, bytes)) = &patch {
                    for (i, x) in bytes.iter().enumerate() {
                        if let Some(slot) = b.get_mut(at + i) {
                            *slot = *x;
                        }
                    }
                }
                std::fs::write(&target, &b).unwrap();
                let what = format!("{} {file} {name}", trace.display());
                let c = copy.to_str().unwrap();
                let json = run(&["report", "--json", c], &tmp);
                let out = tmp.join("out");
                let conv = run(
                    &[
                        "convert",
                        "-q",
                        "--reencode",
                        "--to",
                        "ctf",
                        "-o",
                        out.to_str().unwrap(),
                        c,
                    ],
                    &tmp,
                );
                // and one more output format per damage, in turn (trace.dat
                // output only from a trace.dat)
                let formats: &[&str] = if file.is_empty() && trace.ends_with("trace.dat") {
                    &["perfetto", "chrome", "parquet", "jsonl", "tracedat"]
                } else {
                    &["perfetto", "chrome", "parquet", "jsonl"]
                };
                let to = formats[turn % formats.len()];
                turn += 1;
                let other = tmp.join("other");
                let conv2 = run(
                    &[
                        "convert",
                        "-q",
                        "--to",
                        to,
                        "-o",
                        other.to_str().unwrap(),
                        c,
                    ],
                    &tmp,
                );
                runs += 3;
                let (Some(json), Some(conv), Some(conv2)) = (json, conv, conv2) else {
                    fails.push(format!("{what}: no result within {HANG:?}"));
                    continue;
                };
                let to_cmd = format!("convert --to {to}");
                for (cmd, o) in [
                    ("report --json", &json),
                    ("convert --to ctf --reencode", &conv),
                    (to_cmd.as_str(), &conv2),
                ] {
                    let code = o.status.code();
                    let err = String::from_utf8_lossy(&o.stderr);
                    if !matches!(code, Some(0) | Some(1)) || err.contains("panicked") {
                        fails.push(format!(
                            "{what}: {cmd}: exit {code:?}: {}",
                            err.lines().last().unwrap_or("")
                        ));
                    }
                }
                for (n, line) in json.stdout.split(|&c| c == b'\n').enumerate() {
                    if !line.is_empty()
                        && serde_json::from_slice::<serde_json::Value>(line).is_err()
                    {
                        fails.push(format!("{what}: report --json line {} is not JSON", n + 1));
                        break;
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(
        fails.is_empty(),
        "{} of {runs} runs failed:\n{}",
        fails.len(),
        fails.join("\n")
    );
    assert!(runs > 300);
    let peak = children_peak_rss();
    assert!(
        peak > 0 && peak <= 64 << 20,
        "a damaged input took {} MB of memory",
        peak >> 20
    );
}

/// Where the CPU numbers of `data`'s buffers are written (the `cpu` word
/// before each CPU's offset and size in a version 7 BUFFER option).
fn cpu_number_offsets(data: &[u8]) -> (Vec<usize>, tracemux_core::Endian) {
    let t = tracemux_tracedat::TraceDat::parse(data, false).unwrap();
    let mut at = Vec::new();
    for b in &t.buffers {
        for c in &b.cpus {
            let mut pat = Vec::new();
            match t.endian {
                tracemux_core::Endian::Little => {
                    pat.extend(c.cpu.to_le_bytes());
                    pat.extend(c.offset.to_le_bytes());
                    pat.extend(c.size.to_le_bytes());
                }
                tracemux_core::Endian::Big => {
                    pat.extend(c.cpu.to_be_bytes());
                    pat.extend(c.offset.to_be_bytes());
                    pat.extend(c.size.to_be_bytes());
                }
            }
            if let Some(i) = data.windows(pat.len()).position(|w| w == pat) {
                at.push(i);
            }
        }
    }
    (at, t.endian)
}

/// Issue 40's one failure: a version 7 trace.dat whose CPU number is
/// damaged (3,221,225,471 and the like) made `convert --to perfetto` ask
/// for 12.9 GB. Every output format of such a file, under the 1 GB
/// address-space limit, ends normally.
#[test]
fn a_damaged_cpu_number_sizes_no_allocation() {
    let f = repo_root().join("tests/fixtures");
    let tmp = std::env::temp_dir().join(format!("tracemux-damage-cpu-{}", std::process::id()));
    let mut fails = Vec::new();
    let mut runs = 0;
    for fixture in ["tracedat/v7-instance-B", "report-options/sched-irq"] {
        let orig = std::fs::read(f.join(fixture).join("trace.dat")).unwrap();
        let (offsets, endian) = cpu_number_offsets(&orig);
        assert!(!offsets.is_empty(), "{fixture}: no CPU number found");
        for (k, &at) in offsets.iter().enumerate() {
            for bad in [0xbfff_ffffu32, 0x7fff_ffff, u32::MAX, 1 << 20] {
                let _ = std::fs::remove_dir_all(&tmp);
                std::fs::create_dir_all(&tmp).unwrap();
                let mut b = orig.clone();
                let word = match endian {
                    tracemux_core::Endian::Little => bad.to_le_bytes(),
                    tracemux_core::Endian::Big => bad.to_be_bytes(),
                };
                b[at..at + 4].copy_from_slice(&word);
                let input = tmp.join("trace.dat");
                std::fs::write(&input, &b).unwrap();
                let i = input.to_str().unwrap();
                for to in [
                    "perfetto", "chrome", "parquet", "jsonl", "ctf", "ctf2", "tracedat", "v6",
                ] {
                    let out = tmp.join(format!("out-{to}"));
                    let o = out.to_str().unwrap();
                    let mut args = vec!["convert", "-q", "--to", to, "-o", o, i];
                    if to == "v6" {
                        args[3] = "tracedat";
                        args.extend(["--file-version", "6"]);
                    }
                    let o = run(&args, &tmp);
                    runs += 1;
                    let what = format!("{fixture} cpu #{k} = {bad:#x}: convert --to {to}");
                    match o {
                        None => fails.push(format!("{what}: no result within {HANG:?}")),
                        Some(o) => {
                            let err = String::from_utf8_lossy(&o.stderr);
                            if !matches!(o.status.code(), Some(0) | Some(1))
                                || err.contains("panicked")
                            {
                                fails.push(format!(
                                    "{what}: {:?} {}: {}",
                                    o.status.code(),
                                    common::died(&o.status).unwrap_or_default(),
                                    err.lines().last().unwrap_or("")
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(runs >= 64);
    assert!(
        fails.is_empty(),
        "{} of {runs} runs failed:\n{}",
        fails.len(),
        fails.join("\n")
    );
}
