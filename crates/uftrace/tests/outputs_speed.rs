//! Speed check of the dump/report/graph outputs on a large recording
//! (not a test of correctness; never run by default):
//!
//! ```sh
//! UFTRACE_BENCH_DIR=bench/out/uftrace-big \
//!   cargo test --release -p tracemux-uftrace --test outputs_speed -- --ignored --nocapture
//! ```
//!
//! Prints the wall time of each output written to a sink, and records/s
//! against the record count of the raw dump. `UFTRACE_BENCH_ONLY=NAME`
//! runs one output; `UFTRACE_BENCH_KEEP=DIR` also writes each output to
//! `DIR/NAME.txt` (untimed) to compare with uftrace's.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use tracemux_uftrace::chrome::ChromeOptions;
use tracemux_uftrace::dump::{dump, DumpOptions};
use tracemux_uftrace::flame::FlameOptions;
use tracemux_uftrace::graph::{graph, GraphOptions};
use tracemux_uftrace::report::walk::WalkView;
use tracemux_uftrace::report::{report, ReportOptions};
use tracemux_uftrace::{Demangle, OpenOptions, UftraceData};

/// Counts bytes (and lines), discards them.
#[derive(Default)]
struct Count {
    bytes: u64,
    lines: u64,
    count_lines: bool,
}

impl Write for Count {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.bytes += b.len() as u64;
        if self.count_lines {
            self.lines += b.iter().filter(|&&c| c == b'\n').count() as u64;
        }
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn open(dir: &Path) -> UftraceData {
    let o = OpenOptions {
        demangle: Demangle::Simple,
        strict: false,
    };
    UftraceData::open(dir, o).expect("open")
}

type Output = fn(&mut UftraceData, &mut dyn Write, &mut dyn Write) -> std::io::Result<()>;

fn outputs() -> Vec<(&'static str, Output)> {
    vec![
        ("dump", |d, o, w| dump(d, &DumpOptions::default(), o, w)),
        ("chrome", |d, o, w| {
            ChromeOptions::default().write_view(d, o, w)
        }),
        ("flame", |d, o, w| {
            FlameOptions::default().write_view(d, o, w)
        }),
        ("report", |d, o, w| {
            report(d, &ReportOptions::default(), o, w)
        }),
        ("report-task", |d, o, w| {
            let opts = ReportOptions {
                task: true,
                ..ReportOptions::default()
            };
            report(d, &opts, o, w)
        }),
        ("graph", |d, o, w| graph(d, &GraphOptions::default(), o, w)),
        ("graph-main", |d, o, w| {
            let opts = GraphOptions {
                func: Some("main".into()),
                ..GraphOptions::default()
            };
            graph(d, &opts, o, w)
        }),
    ]
}

#[test]
#[ignore]
fn speed() {
    let Some(dir) = std::env::var_os("UFTRACE_BENCH_DIR") else {
        eprintln!("UFTRACE_BENCH_DIR not set");
        return;
    };
    let dir = PathBuf::from(dir);
    let t = Instant::now();
    let mut data = open(&dir);
    eprintln!("open: {:.3}s", t.elapsed().as_secs_f64());
    // the records, as the raw dump shows them (UFTRACE_BENCH_RECORDS skips
    // the counting pass)
    let records = match std::env::var("UFTRACE_BENCH_RECORDS") {
        Ok(n) => n.parse().expect("UFTRACE_BENCH_RECORDS"),
        Err(_) => {
            let mut c = Count {
                count_lines: true,
                ..Count::default()
            };
            dump(&mut data, &DumpOptions::default(), &mut c, &mut Vec::new()).expect("dump");
            c.lines
        }
    };
    let only = std::env::var("UFTRACE_BENCH_ONLY").ok();
    for (name, f) in outputs() {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let mut data2 = open(&dir);
        let mut c = Count::default();
        let mut w = Vec::new();
        let t = Instant::now();
        f(&mut data2, &mut c, &mut w).expect(name);
        let s = t.elapsed().as_secs_f64();
        eprintln!(
            "{name}: {s:.3}s, {} bytes, {:.2} M records/s",
            c.bytes,
            records as f64 / s / 1e6
        );
        if let Some(k) = std::env::var_os("UFTRACE_BENCH_KEEP") {
            let path = Path::new(&k).join(format!("{name}.txt"));
            let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
            let mut data3 = open(&dir);
            f(&mut data3, &mut file, &mut Vec::new()).expect(name);
        }
    }
}
