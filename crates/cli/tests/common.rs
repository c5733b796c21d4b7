//! Shared helpers for the integration tests: finding fixtures and reading
//! (possibly zstd-compressed) reference outputs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Fixture directories of a kind (`tracedat`, `synthetic`): the ones in the
/// repository, plus those of `../shared/corpus/<kind>` when it exists (the
/// full corpus; not needed on a fresh clone).
pub fn fixture_dirs(kind: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let local = repo_root().join("tests/fixtures").join(kind);
    let shared = repo_root().join("../shared/corpus").join(kind);
    for base in [local, shared] {
        for d in tracemux_testkit::sorted_entries(&base) {
            if !d.join("trace.dat").exists() {
                continue;
            }
            let name = d.file_name().unwrap().to_string_lossy().into_owned();
            if seen.insert(name) {
                dirs.push(d);
            }
        }
    }
    dirs
}

/// A reference output: `NAME.txt`, or `NAME.txt.zst` decompressed.
pub fn reference(dir: &Path, name: &str) -> Option<Vec<u8>> {
    let plain = dir.join(format!("{name}.txt"));
    if let Ok(b) = std::fs::read(&plain) {
        return Some(b);
    }
    let z = dir.join(format!("{name}.txt.zst"));
    let b = std::fs::read(z).ok()?;
    Some(zstd::stream::decode_all(&b[..]).expect("reference decompresses"))
}

/// The number at the end of a fixture's `event-count.txt` (`events: N`);
/// `None` when the fixture has none.
pub fn event_count(dir: &Path) -> Option<u64> {
    let text = String::from_utf8(reference(dir, "event-count")?).ok()?;
    text.rsplit([' ', ':']).next()?.trim().parse().ok()
}

/// The number after `prefix` on the first line of `tracemux stats`
/// output that starts with it (`events `, `lost events `).
pub fn stats_number(text: &str, prefix: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(prefix))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// The CTF fixtures with babeltrace2's outputs (`trace/` and
/// `exit-codes.txt`), sorted.
pub fn ctf_dirs() -> Vec<PathBuf> {
    let root = repo_root().join("tests/fixtures/ctf");
    let mut v = tracemux_testkit::sorted_entries(&root);
    v.retain(|p| p.join("trace").is_dir() && p.join("exit-codes.txt").exists());
    v
}

/// Run the `tracemux` binary. Local times are those of UTC (the reference
/// outputs were made there), whatever zone the test machine is in.
pub fn tracemux(args: &[&str], cwd: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tracemux"))
        .env("TZ", "UTC")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("tracemux runs")
}

/// `tracemux convert -q OPTION SRC --to TO -o OUT`.
pub fn convert(src: &Path, out: &Path, to: &str, option: &str) -> std::process::Output {
    tracemux(
        &[
            "convert",
            "-q",
            option,
            src.to_str().unwrap(),
            "--to",
            to,
            "-o",
            out.to_str().unwrap(),
        ],
        Path::new("."),
    )
}

/// Fail unless `got` and `want` are the same lines, showing the first
/// difference.
pub fn assert_same_lines(got: &[String], want: &[String]) {
    assert!(
        got == want,
        "{} lines, want {}: {}",
        got.len(),
        want.len(),
        first_diff(want.join("\n").as_bytes(), got.join("\n").as_bytes())
    );
}

/// Fail listing every entry of `failures`, after their count and `what`
/// (`"of 12 differ"`).
pub fn assert_no_failures(failures: &[String], what: &str) {
    assert!(
        failures.is_empty(),
        "{} {what}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

pub use tracemux_testkit::first_diff;

/// An LTT trace made by the fixture writer (no recorder survives):
/// big-endian, 32-bit, with heartbeats; `fs:open` events (a quote in their
/// names) on three CPUs, `kernel:irq_entry` events on two.
pub fn ltt_trace(tag: &str) -> PathBuf {
    use tracemux_ltt::writer::{Arg, TraceDesc};
    let mut d = TraceDesc::default();
    d.endian = tracemux_core::Endian::Big;
    d.arch_size = 4;
    d.heartbeat = true;
    let fs = d.facility("fs");
    let open = d.event(fs, "open", "fd %d name %s mode %x");
    let kernel = d.facility("kernel");
    let irq = d.event(kernel, "irq_entry", "irq_id %u");
    for i in 0..50u64 {
        let name = format!("/f\"{i}").into_bytes();
        let args = vec![Arg::I(-(i as i64)), Arg::Str(name), Arg::U(0o644)];
        d.push((i % 3) as u32, 1_000 + i * 7_919, open, args);
        d.push((i % 2) as u32, 2_000 + i * 5_003, irq, vec![Arg::U(i)]);
    }
    let built = d.build().unwrap();
    let dir = std::env::temp_dir().join(format!("tracemux-{tag}-ltt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    built.write_dir(&dir).unwrap();
    dir
}

/// The format of a fixture (CTF from the kernel apart: it has ftrace's events).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixtureKind {
    TraceDat,
    KernelCtf,
    Ctf,
    Uftrace,
    Ltt,
    /// perf.data with samples only.
    Perf,
    /// perf.data with tracepoints (its tracing data): a kernel trace.
    PerfTp,
}

/// Bytes from annotated hex text (`#` comments, `BYTE*COUNT` runs).
pub fn parse_hex(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for line in text.lines() {
        for tok in line.split('#').next().unwrap_or("").split_whitespace() {
            if let Some((b, n)) = tok.split_once('*') {
                let b = u8::from_str_radix(b, 16).unwrap();
                out.extend(std::iter::repeat_n(b, n.parse().unwrap()));
            } else {
                out.push(u8::from_str_radix(tok, 16).unwrap());
            }
        }
    }
    out
}

/// `root/*/inner` where `marker` exists inside, sorted; none when `root`
/// cannot be read.
pub fn inner_dirs(root: &Path, inner: &str, marker: &str) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path().join(inner))
        .filter(|p| p.join(marker).exists())
        .collect();
    v.sort();
    v
}

/// The name of the directory holding `p`.
fn parent_name(p: &Path) -> String {
    p.parent()
        .and_then(|d| d.file_name())
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// Every fixture of every format: (name, path, kind); the hand-built LTT
/// trace is assembled from its annotated hex in `scratch`.
pub fn every_fixture(scratch: &Path) -> Vec<(String, PathBuf, FixtureKind)> {
    let root = repo_root().join("tests/fixtures");
    let mut v = Vec::new();
    for kind in ["tracedat", "synthetic"] {
        for d in fixture_dirs(kind) {
            if d.starts_with(root.as_path()) {
                let n = format!("{kind}-{}", d.file_name().unwrap().to_string_lossy());
                v.push((n, d.join("trace.dat"), FixtureKind::TraceDat));
            }
        }
    }
    for p in inner_dirs(&root.join("ctf"), "trace", ".") {
        let n = parent_name(&p);
        let k = if n.starts_with("perf-") {
            FixtureKind::KernelCtf
        } else {
            FixtureKind::Ctf
        };
        v.push((format!("ctf-{n}"), p, k));
    }
    for sub in ["recorded", "corpus"] {
        let root = root.join("uftrace").join(sub);
        for p in inner_dirs(&root, "uftrace.data", "info") {
            v.push((
                format!("uftrace-{}", parent_name(&p)),
                p,
                FixtureKind::Uftrace,
            ));
        }
    }
    let src = root.join("ltt/hand-built");
    let dir = scratch.join("ltt-hand-built");
    std::fs::create_dir_all(dir.join("control")).unwrap();
    for f in ["control/facilities_0", "cpu_0", "cpu_2"] {
        let text = std::fs::read_to_string(src.join(format!("{f}.hex"))).unwrap();
        std::fs::write(dir.join(f), parse_hex(&text)).unwrap();
    }
    v.push(("ltt-hand-built".into(), dir, FixtureKind::Ltt));
    for d in tracemux_testkit::sorted_entries(&root.join("perf")) {
        if d.join("perf.data").is_file() {
            let n = format!("perf-{}", d.file_name().unwrap().to_string_lossy());
            let b = std::fs::read(d.join("perf.data")).unwrap();
            let tp = b.windows(10).any(|w| w == b"\x17\x08Dtracing");
            let k = if tp {
                FixtureKind::PerfTp
            } else {
                FixtureKind::Perf
            };
            v.push((n, d.join("perf.data"), k));
        }
    }
    v
}

/// `report --json` of a trace: its lines, parsed.
pub fn report_json(src: &Path) -> Vec<serde_json::Value> {
    let o = tracemux(&["report", "--json", src.to_str().unwrap()], &repo_root());
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("report --json line parses"))
        .collect()
}

/// The address space a child of the damage sweeps may take: a damaged
/// value that sizes an allocation then fails the run at once (an abort),
/// where without a limit Linux would hand out the memory lazily and the
/// run would look clean.
pub const CHILD_ADDRESS_SPACE: u64 = 1 << 30;

/// `cmd`'s child limited to [`CHILD_ADDRESS_SPACE`] bytes of address space
/// (`setrlimit(RLIMIT_AS)` between fork and exec).
#[allow(unsafe_code)]
pub fn limit_address_space(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec and
    // only calls setrlimit, which is async-signal-safe and allocates
    // nothing.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: CHILD_ADDRESS_SPACE as libc::rlim_t,
                rlim_max: CHILD_ADDRESS_SPACE as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// Whether `st` is the end of a child that ran out of address space or
/// was killed by a signal (an abort: `memory allocation of N bytes
/// failed`).
pub fn died(st: &std::process::ExitStatus) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    st.signal().map(|s| format!("killed by signal {s}"))
}
