//! Throughput of decoding (`stats`) and of the babeltrace2 text output on
//! one trace, best of N runs, files read once:
//! `cargo run --release -p tracemux-ctf --example ctf_bench -- TRACE [RUNS]`.

use std::path::PathBuf;

use tracemux_ctf::decode::NullVisitor;
use tracemux_ctf::fs::{discover, open_traces, FileBytes, Loader};
use tracemux_ctf::stream::{Step, StreamDecoder};

/// Serves files already in memory.
struct Cached(std::collections::HashMap<PathBuf, std::sync::Arc<Vec<u8>>>);

struct Shared(std::sync::Arc<Vec<u8>>);
impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Loader for Cached {
    fn load(&self, path: &std::path::Path) -> std::io::Result<FileBytes> {
        match self.0.get(path) {
            Some(d) => Ok(Box::new(Shared(d.clone()))),
            None => Ok(Box::new(std::fs::read(path)?)),
        }
    }
}

/// CPU time of this thread so far (seconds), from /proc (the machine is
/// shared: wall time says little).
fn cpu() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .next()
                .and_then(|x| x.parse::<f64>().ok())
        })
        .map(|ns| ns / 1e9)
        .unwrap_or(0.0)
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let path = PathBuf::from(&a[0]);
    let runs: usize = a.get(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let found = discover(std::slice::from_ref(&path)).unwrap();
    let mut cache = std::collections::HashMap::new();
    for f in &found {
        for e in std::fs::read_dir(&f.dir).unwrap().flatten() {
            if e.path().is_file() {
                cache.insert(
                    e.path(),
                    std::sync::Arc::new(std::fs::read(e.path()).unwrap()),
                );
            }
        }
    }
    let loader = Cached(cache);
    let traces = open_traces(&found, std::slice::from_ref(&path), &loader, (0, 0)).unwrap();
    let mut best = f64::MAX;
    let mut events = 0u64;
    for _ in 0..runs {
        let t0 = cpu();
        events = 0;
        for t in &traces {
            for g in &t.streams {
                let files: Vec<&[u8]> = g.files.iter().map(|&f| (*t.files[f].1).as_ref()).collect();
                let mut dec = StreamDecoder::new(&t.prog, t.tc.uuid, files, g.packets.clone());
                loop {
                    match dec.advance(&mut NullVisitor).unwrap() {
                        Step::Event { .. } => events += 1,
                        Step::End => break,
                        _ => {}
                    }
                }
            }
        }
        best = best.min(cpu() - t0);
    }
    println!(
        "decode: {events} events, {:.3} s CPU, {:.1} M events/s",
        best,
        events as f64 / best / 1e6
    );
    // One thread: the CPU time of this thread is the whole cost.
    let opts = tracemux_ctf::text::TextOptions {
        threads: Some(1),
        ..Default::default()
    };
    let mut best = f64::MAX;
    for _ in 0..runs {
        let t0 = cpu();
        let mut sink = std::io::sink();
        let mut err = Vec::new();
        tracemux_ctf::text::report_with_loader(
            std::slice::from_ref(&path),
            &opts,
            &loader,
            &mut sink,
            &mut err,
        )
        .unwrap();
        best = best.min(cpu() - t0);
    }
    println!(
        "text:   {events} events, {:.3} s CPU, {:.2} M events/s",
        best,
        events as f64 / best / 1e6
    );
}
