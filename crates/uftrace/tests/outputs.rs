//! Golden tests of the `uftrace dump` (raw, `--chrome`, `--flame-graph`),
//! `uftrace report` and `uftrace graph` outputs against uftrace 0.13's own
//! outputs on the recordings under `tests/fixtures/uftrace/recorded/` (in
//! the repository), `tests/fixtures/uftrace/corpus/` (skipped when a
//! directory is absent) and the synthetic kernel-data recordings of
//! `tests/fixtures/uftrace/kernel/`.
//!
//! Each output is compared byte for byte; `dump --chrome` is compared with
//! its `recorded_time` line set apart (it is the modification time of
//! `uftrace.data/info`, which a checkout changes), and also parsed as JSON.
//! `UFTRACE_OUTPUTS_VERBOSE=1` prints the first differing lines.

use std::path::{Path, PathBuf};

use tracemux_testkit::{first_diff, sorted_entries};
use tracemux_uftrace::chrome::ChromeOptions;
use tracemux_uftrace::dump::{dump, DumpOptions};
use tracemux_uftrace::flame::FlameOptions;
use tracemux_uftrace::graph::graphviz::GraphvizOptions;
use tracemux_uftrace::graph::{graph, GraphOptions};
use tracemux_uftrace::report::walk::WalkView;
use tracemux_uftrace::report::{report, ReportOptions};
use tracemux_uftrace::{Demangle, OpenOptions, UftraceData};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/uftrace")
}

/// Whether the C++ demangler is there yet (the reader's job; until it is,
/// the recordings with mangled names are skipped, and said so).
fn demangler_ready() -> bool {
    let n = tracemux_uftrace::demangle::demangle("_ZNK3geo3VecplERKS0_", Demangle::Simple);
    n == "geo::Vec::operator+"
}

/// Recording directories (those holding a `uftrace.data`).
fn recordings() -> Vec<PathBuf> {
    ["recorded", "newer", "corpus", "kernel"]
        .iter()
        .flat_map(|set| sorted_entries(&fixtures().join(set)))
        .filter(|p| p.join("uftrace.data/info").is_file())
        .filter(|p| {
            let cxx = p.ends_with("cxx-demangle");
            if cxx && !demangler_ready() {
                eprintln!("skipping {} (no C++ demangler yet)", p.display());
            }
            !cxx || demangler_ready()
        })
        .collect()
}

fn expected(dir: &Path, name: &str) -> Option<Vec<u8>> {
    if let Ok(b) = std::fs::read(dir.join(format!("{name}.txt"))) {
        return Some(b);
    }
    let z = std::fs::read(dir.join(format!("{name}.txt.zst"))).ok()?;
    Some(zstd::decode_all(&z[..]).expect("zstd"))
}

fn open(dir: &Path, demangle: tracemux_uftrace::Demangle) -> UftraceData {
    let o = OpenOptions {
        demangle,
        strict: false,
    };
    UftraceData::open(&dir.join("uftrace.data"), o).expect("open")
}

/// The recordings that have the golden file `name`: (directory, the
/// recording opened with names demangled `Simple`, the golden output).
fn goldens(name: &str) -> impl Iterator<Item = (PathBuf, UftraceData, Vec<u8>)> + '_ {
    recordings().into_iter().filter_map(move |dir| {
        let want = expected(&dir, name)?;
        let data = open(&dir, Demangle::Simple);
        Some((dir, data, want))
    })
}

fn label(dir: &Path) -> String {
    let p = dir.parent().and_then(|p| p.file_name()).unwrap_or_default();
    format!(
        "{}/{}",
        p.to_string_lossy(),
        dir.file_name().unwrap_or_default().to_string_lossy()
    )
}

#[derive(Default)]
struct Results {
    fails: Vec<String>,
    passes: usize,
}

impl Results {
    fn check(&mut self, what: &str, got: &[u8], want: &[u8]) {
        if got == want {
            self.passes += 1;
        } else {
            self.fails
                .push(format!("{what}: {}", first_diff(want, got)));
        }
    }

    fn finish(self, test: &str) {
        if std::env::var_os("UFTRACE_OUTPUTS_VERBOSE").is_some() || !self.fails.is_empty() {
            eprintln!(
                "{test}: {} passed, {} failed",
                self.passes,
                self.fails.len()
            );
        }
        assert!(
            self.fails.is_empty(),
            "{} mismatches:\n{}",
            self.fails.len(),
            self.fails.join("\n")
        );
        assert!(self.passes > 0, "{test}: no fixture compared");
    }
}

fn run<F>(f: F) -> Vec<u8>
where
    F: FnOnce(&mut Vec<u8>, &mut Vec<u8>) -> std::io::Result<()>,
{
    let mut out = Vec::new();
    let mut warn = Vec::new();
    f(&mut out, &mut warn).expect("output");
    out
}

#[test]
fn raw_dump() {
    let mut r = Results::default();
    for (dir, mut data, want) in goldens("dump") {
        let got = run(|o, w| dump(&mut data, &DumpOptions::default(), o, w));
        let aborted = std::fs::read_to_string(dir.join("exit-codes.txt"))
            .unwrap_or_default()
            .lines()
            .any(|l| l.starts_with("dump:") && !l.ends_with("exit 0"));
        if aborted {
            // uftrace aborted (long double): its output is a prefix of ours
            let n = want.len().min(got.len());
            r.check(&format!("{} dump (prefix)", label(&dir)), &got[..n], &want);
        } else {
            r.check(&format!("{} dump", label(&dir)), &got, &want);
        }
    }
    r.finish("raw_dump");
}

/// `"recorded_time":"..."` lines replaced by a marker (see the module doc).
fn without_recorded_time(b: &[u8]) -> (Vec<u8>, Vec<String>) {
    let mut out = Vec::new();
    let mut times = Vec::new();
    for line in b.split_inclusive(|&c| c == b'\n') {
        if line.starts_with(b"\"recorded_time\":") {
            times.push(String::from_utf8_lossy(line).into_owned());
            out.extend_from_slice(b"\"recorded_time\":<set apart>\n");
        } else {
            out.extend_from_slice(line);
        }
    }
    (out, times)
}

/// Whether a `"recorded_time"` line has ctime(3)'s layout:
/// `"recorded_time":"Www Mmm dd hh:mm:ss yyyy",`.
fn ctime_shaped(line: &str) -> bool {
    let Some(t) = line
        .strip_prefix("\"recorded_time\":\"")
        .and_then(|t| t.strip_suffix("\",\n"))
    else {
        return false;
    };
    let b = t.as_bytes();
    b.len() == 24
        && b.iter().enumerate().all(|(i, &c)| match i {
            0 | 4 => c.is_ascii_uppercase(),
            1 | 2 | 5 | 6 => c.is_ascii_lowercase(),
            3 | 7 | 10 | 19 => c == b' ',
            8 => c == b' ' || c.is_ascii_digit(),
            13 | 16 => c == b':',
            _ => c.is_ascii_digit(),
        })
}

#[test]
fn ctime_shape() {
    assert!(ctime_shaped(
        "\"recorded_time\":\"Sat Nov 21 17:08:30 2026\",\n"
    ));
    assert!(ctime_shaped(
        "\"recorded_time\":\"Mon Feb  2 07:08:30 2026\",\n"
    ));
    assert!(!ctime_shaped(
        "\"recorded_time\":\"Sat Nov 21 17:08:30 26\",\n"
    ));
}

#[test]
fn chrome_json() {
    let mut r = Results::default();
    for (dir, mut data, want) in goldens("dump-chrome") {
        let got = run(|o, w| ChromeOptions::default().write_view(&mut data, o, w));
        let (g, gt) = without_recorded_time(&got);
        let (w, wt) = without_recorded_time(&want);
        r.check(&format!("{} dump-chrome", label(&dir)), &g, &w);
        // Given uftrace's own recorded time, the whole output is identical,
        // that line included.
        if let [t] = wt.as_slice() {
            let t = t.trim_end().trim_start_matches("\"recorded_time\":\"");
            let t = t.trim_end_matches("\",").to_string();
            let opts = ChromeOptions {
                recorded_time: Some(t),
                ..ChromeOptions::default()
            };
            let mut data = open(&dir, Demangle::Simple);
            let exact = run(|o, w| opts.write_view(&mut data, o, w));
            r.check(
                &format!("{} dump-chrome (uftrace's time)", label(&dir)),
                &exact,
                &want,
            );
        }
        // By default the time is the modification time of `info` (which a
        // checkout sets to the time of the clone, so it is compared with the
        // file's own time, never with the day uftrace recorded it), in
        // ctime(3)'s layout.
        let mtime = std::fs::metadata(dir.join("uftrace.data/info"))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs() as i64);
        let expect_line = format!(
            "\"recorded_time\":\"{}\",\n",
            tracemux_core::localtime::gmtime(mtime)
                .map(|t| t.ctime())
                .unwrap_or_default()
        );
        let ok = gt.len() == 1 && gt[0] == expect_line && ctime_shaped(&gt[0]);
        let what = format!("{} dump-chrome recorded_time", label(&dir));
        r.check(&what, &[u8::from(ok)], &[1]);
        // and as JSON: the same events in the same order
        let gj: Result<serde_json::Value, _> = serde_json::from_slice(&got);
        let wj: Result<serde_json::Value, _> = serde_json::from_slice(&want);
        match (gj, wj) {
            (Ok(mut a), Ok(mut b)) => {
                a["metadata"]["recorded_time"] = serde_json::Value::Null;
                b["metadata"]["recorded_time"] = serde_json::Value::Null;
                let what = format!("{} dump-chrome (JSON)", label(&dir));
                r.check(&what, &[u8::from(a == b)], &[1]);
            }
            (Err(_), Err(_)) => {}
            (a, b) => r.fails.push(format!(
                "{} dump-chrome: JSON parses differently: ours {:?}, uftrace's {:?}",
                label(&dir),
                a.err(),
                b.err()
            )),
        }
    }
    r.finish("chrome_json");
}

/// Test `test`: `view` of every recording that has the golden file `name`.
fn golden_view(test: &str, name: &str, view: &dyn WalkView) {
    let mut r = Results::default();
    for (dir, mut data, want) in goldens(name) {
        let got = run(|o, w| view.write_view(&mut data, o, w));
        r.check(&format!("{} {name}", label(&dir)), &got, &want);
    }
    r.finish(test);
}

#[test]
fn flame() {
    golden_view("flame", "dump-flame-graph", &FlameOptions::default());
}

#[test]
fn reports() {
    let mut r = Results::default();
    let cases: [(&str, ReportOptions); 4] = [
        ("report", ReportOptions::default()),
        (
            "report-call",
            ReportOptions {
                sort: Some("call".into()),
                ..ReportOptions::default()
            },
        ),
        (
            "report-task",
            ReportOptions {
                task: true,
                ..ReportOptions::default()
            },
        ),
        (
            "report-threads",
            ReportOptions {
                threads: true,
                ..ReportOptions::default()
            },
        ),
    ];
    let full = ("report-demangle-full", ReportOptions::default());
    for dir in recordings() {
        for (name, opts) in cases.iter().chain([&full]) {
            let Some(want) = expected(&dir, name) else {
                continue;
            };
            let dm = if name.ends_with("demangle-full") {
                Demangle::Full
            } else {
                Demangle::Simple
            };
            let mut data = open(&dir, dm);
            let mut out = Vec::new();
            let mut warn = Vec::new();
            report(&mut data, opts, &mut out, &mut warn).expect("report");
            r.check(&format!("{} {name}", label(&dir)), &out, &want);
            if let Ok(e) = std::fs::read(dir.join(format!("{name}.stderr"))) {
                r.check(&format!("{} {name} (stderr)", label(&dir)), &warn, &e);
            }
        }
    }
    r.finish("reports");
}

#[test]
fn graphs() {
    let mut r = Results::default();
    for dir in recordings() {
        for (name, func, dm) in [
            ("graph", None, Demangle::Simple),
            ("graph-main", Some("main"), Demangle::Simple),
            ("graph-demangle-full", None, Demangle::Full),
        ] {
            let Some(want) = expected(&dir, name) else {
                continue;
            };
            let mut data = open(&dir, dm);
            let opts = GraphOptions {
                func: func.map(String::from),
                ..GraphOptions::default()
            };
            let got = run(|o, w| graph(&mut data, &opts, o, w));
            r.check(&format!("{} {name}", label(&dir)), &got, &want);
        }
    }
    r.finish("graphs");
}

#[test]
fn graphviz_dot() {
    golden_view("graphviz_dot", "dump-graphviz", &GraphvizOptions::default());
}

/// A tiny deterministic generator for the corruption test.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
    }
}

/// Every output over damaged copies of the recordings: bytes flipped in
/// the data files, files cut at odd lengths, whole records of garbage.
/// Nothing may panic; damage is reported on the warning writer.
#[test]
fn damaged_data_never_panics() {
    let tmp = std::env::temp_dir().join(format!("tracemux-uftrace-outputs-{}", std::process::id()));
    let mut rng = Lcg(0x5eed);
    let mut runs = 0;
    for dir in recordings().into_iter().take(4) {
        let src = dir.join("uftrace.data");
        for round in 0..12 {
            let _ = std::fs::remove_dir_all(&tmp);
            copy_dir(&src, &tmp);
            let mut files: Vec<PathBuf> = std::fs::read_dir(&tmp)
                .expect("read_dir")
                .flatten()
                .map(|e| e.path())
                .filter(|p| round % 4 == 3 || p.extension().is_some_and(|x| x == "dat"))
                .collect();
            files.sort();
            for f in &files {
                let mut b = std::fs::read(f).expect("read");
                if b.is_empty() {
                    continue;
                }
                match round % 4 {
                    0 | 3 => {
                        for _ in 0..8 {
                            let i = rng.next() as usize % b.len();
                            b[i] ^= 1 << (rng.next() % 8);
                        }
                    }
                    1 => {
                        let n = rng.next() as usize % b.len();
                        b.truncate(n | 1);
                    }
                    _ => {
                        let i = (rng.next() as usize % b.len()) & !15;
                        for k in i..(i + 48).min(b.len()) {
                            b[k] = rng.next() as u8;
                        }
                    }
                }
                std::fs::write(f, &b).expect("write");
            }
            let o = OpenOptions {
                demangle: Demangle::Simple,
                strict: false,
            };
            let Ok(mut data) = UftraceData::open(&tmp, o) else {
                continue;
            };
            let mut out = Vec::new();
            let mut warn = Vec::new();
            let _ = dump(&mut data, &DumpOptions::default(), &mut out, &mut warn);
            let _ = ChromeOptions::default().write_view(&mut data, &mut out, &mut warn);
            let _ = FlameOptions::default().write_view(&mut data, &mut out, &mut warn);
            let _ = GraphvizOptions::default().write_view(&mut data, &mut out, &mut warn);
            let _ = report(&mut data, &ReportOptions::default(), &mut out, &mut warn);
            let task = ReportOptions {
                task: true,
                ..ReportOptions::default()
            };
            let _ = report(&mut data, &task, &mut out, &mut warn);
            let _ = graph(&mut data, &GraphOptions::default(), &mut out, &mut warn);
            let main = GraphOptions {
                func: Some("main".into()),
                ..GraphOptions::default()
            };
            let _ = graph(&mut data, &main, &mut out, &mut warn);
            runs += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(runs > 0);
}
