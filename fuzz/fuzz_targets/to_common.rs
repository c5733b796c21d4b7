//! What the `to_*` targets share: a fixture damaged by the fuzz input,
//! written to a temporary file (or directory), converted by
//! `tracemux_convert::run` into one output format, as `tracemux convert`
//! does. Each target includes this file with `#[path]`.
//!
//! Input: byte 0 picks the fixture (low 4 bits) and options of the output
//! (high 4 bits, per format); bytes 1..5 a truncation point (0: none);
//! then 5-byte patches (a 32-bit offset, modulo the length, and a byte
//! XORed there). libFuzzer's `-malloc_limit_mb` (set by `run.sh`) makes
//! any allocation sized by a damaged value a crash.

use std::path::{Path, PathBuf};

use tracemux_convert::{Compression, Options, To};

/// trace.dat fixtures (v6, v7, zstd, latency, sched with irqs, plugins).
const TRACEDAT: &[&[u8]] = &[
    include_bytes!("../../tests/fixtures/report-options/sched-irq/trace.dat"),
    include_bytes!("../../tests/fixtures/synthetic/latency-v7/trace.dat"),
    include_bytes!("../../tests/fixtures/synthetic/be-v7-zstd/trace.dat"),
    include_bytes!("../../tests/fixtures/synthetic/be-v6/trace.dat"),
    include_bytes!("../../tests/fixtures/synthetic/plugins-v7/trace.dat"),
    include_bytes!("../../tests/fixtures/synthetic/instances-v6/trace.dat"),
];
const CTF_METADATA: &[u8] =
    include_bytes!("../../tests/fixtures/ctf/lttng-ust-uid/trace/ust/uid/0/64-bit/metadata");
const CTF_STREAM: &[u8] =
    include_bytes!("../../tests/fixtures/ctf/lttng-ust-uid/trace/ust/uid/0/64-bit/ch0_1");
const PERF: &[u8] = include_bytes!("../../tests/fixtures/perf/pipe/perf.data");

fn tmp(to: To) -> PathBuf {
    std::env::temp_dir().join(format!(
        "tracemux-fuzz-to-{to:?}-{}",
        std::process::id()
    ))
}

/// `base` damaged as `input` says (see the module's comment).
pub fn damage(base: &[u8], input: &[u8]) -> Vec<u8> {
    let mut b = base.to_vec();
    let (cut, patches) = match input.split_at_checked(4) {
        Some((c, p)) => (u32::from_le_bytes(c.try_into().unwrap()) as usize, p),
        None => (0, &[][..]),
    };
    for p in patches.chunks_exact(5) {
        let off = u32::from_le_bytes(p[..4].try_into().unwrap()) as usize;
        if !b.is_empty() {
            let i = off % b.len();
            b[i] ^= p[4];
        }
    }
    if cut != 0 {
        b.truncate(cut % (b.len() + 1));
    }
    b
}

fn remove(p: &Path) {
    if p.is_dir() {
        let _ = std::fs::remove_dir_all(p);
    } else {
        let _ = std::fs::remove_file(p);
    }
}

/// One run: the damaged fixture converted into `to`. Errors are fine
/// (damaged input); panics, aborts and huge allocations are not.
pub fn run(data: &[u8], to: To) {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let dir = tmp(to);
    let _ = std::fs::create_dir_all(&dir);
    // trace.dat output only reads trace.dat sources
    let sources = if to == To::Tracedat {
        TRACEDAT.len()
    } else {
        TRACEDAT.len() + 2
    };
    let pick = (sel & 0x0f) as usize % sources;
    let input = if pick < TRACEDAT.len() {
        let p = dir.join("trace.dat");
        if std::fs::write(&p, damage(TRACEDAT[pick], rest)).is_err() {
            return;
        }
        p
    } else if pick == TRACEDAT.len() {
        let p = dir.join("perf.data");
        if std::fs::write(&p, damage(PERF, rest)).is_err() {
            return;
        }
        p
    } else {
        // the metadata damaged would mostly fail to parse: the stream only
        let p = dir.join("ctf");
        let _ = std::fs::create_dir_all(&p);
        if std::fs::write(p.join("metadata"), CTF_METADATA).is_err()
            || std::fs::write(p.join("ch0_1"), damage(CTF_STREAM, rest)).is_err()
        {
            return;
        }
        p
    };
    let out = dir.join("out");
    remove(&out);
    let bits = sel >> 4;
    let to = if to == To::Ctf && bits & 2 != 0 {
        To::Ctf2
    } else {
        to
    };
    let mut o = Options::new(vec![input], out.clone(), to);
    o.force = true;
    o.strict = bits & 8 != 0;
    match to {
        To::Perfetto => {
            o.full_sched = bits & 1 != 0;
            o.named_generic = bits & 2 != 0;
            o.compress = bits & 4 != 0;
        }
        To::Parquet => {
            o.no_events_table = bits & 1 != 0;
            o.partition = bits & 2 != 0;
        }
        To::Tracedat => {
            o.file_version = if bits & 1 != 0 { 6 } else { 7 };
            o.compression = match bits >> 1 & 3 {
                0 => Compression::None,
                1 => Compression::Zlib,
                _ => Compression::Zstd,
            };
        }
        To::Ctf | To::Ctf2 => {
            o.reencode = bits & 1 != 0;
        }
        _ => {
            if bits & 1 != 0 {
                o.events = vec!["sched_switch".into(), "lttng_ust_statedump:bin_info".into()];
            }
        }
    }
    let _ = tracemux_convert::run(&o, &tracemux_convert::NoHooks);
    remove(&out);
}
