//! Writes a large trace.dat for the scale benchmark (`bench/bench-scale.sh`):
//! the records of a source trace.dat (its top buffer, at most 64 MB of them
//! per CPU), repeated with each repetition shifted in time past the one
//! before, until the output holds about SIZE_MB of ring-buffer pages.
//!
//! ```sh
//! cargo run --release -p tracemux-tracedat --example scale -- SRC.dat OUT.dat SIZE_MB
//! ```
//!
//! The output is a version 6 file with the source's metadata (formats,
//! kallsyms, cmdlines, options), written by the project's writer
//! (`PagePacker`, pages spilled to a file beside the output and streamed
//! by `TraceFile::write_spilled`), so memory stays flat at any size.

use std::fs::File;

use tracemux_tracedat::convert::{buffer_clock, for_each_raw, trace_file_from};
use tracemux_tracedat::writer::{BufferData, Compression, PagePacker, PageSpill};
use tracemux_tracedat::TraceDat;

/// Records kept from the source, per CPU.
const SOURCE_CAP: usize = 64 << 20;

/// A CPU's records: (raw time, payload).
type Records = Vec<(u64, Vec<u8>)>;

/// Pages handed to the spill file in pieces of this size.
const SPILL_AT: usize = 1 << 20;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: scale SRC.dat OUT.dat SIZE_MB");
        std::process::exit(2);
    }
    if let Err(e) = run(&args[1], &args[2], &args[3]) {
        eprintln!("scale: {e}");
        std::process::exit(1);
    }
}

fn run(src: &str, out: &str, size_mb: &str) -> Result<(), String> {
    let target: u64 = size_mb
        .parse::<u64>()
        .map_err(|e| format!("SIZE_MB: {e}"))?
        << 20;
    let data = std::fs::read(src).map_err(|e| format!("{src}: {e}"))?;
    let t = TraceDat::parse(&data, false).map_err(|e| format!("{src}: {e}"))?;
    let b = t
        .buffers
        .iter()
        .find(|b| b.name.is_empty() && !b.latency)
        .ok_or(format!("{src}: no top-level flyrecord buffer"))?;
    // the records of each CPU with their raw times
    let mut cpus: Vec<(u32, Records)> = Vec::new();
    let (mut lo, mut hi, mut bytes) = (u64::MAX, 0u64, 0u64);
    for c in &b.cpus {
        let mut recs = Vec::new();
        let mut kept = 0usize;
        let mut damage = Vec::new();
        let _ = for_each_raw(
            &t,
            b,
            c,
            false,
            &mut damage,
            &mut |r| {
                if kept < SOURCE_CAP {
                    kept += r.data.len() + 8;
                    recs.push((r.ts, r.data.to_vec()));
                }
                Ok(())
            },
            &mut |_| {},
        );
        if let (Some(f), Some(l)) = (recs.first(), recs.last()) {
            lo = lo.min(f.0);
            hi = hi.max(l.0);
        }
        bytes += kept as u64;
        cpus.push((c.cpu, recs));
    }
    if bytes == 0 {
        return Err(format!("{src}: no records"));
    }
    let reps = target.div_ceil(bytes).max(1);
    let span = hi - lo + 1;
    let (mut f, _) = trace_file_from(&t, 6, Compression::None);
    let mut buf = BufferData::new("", &buffer_clock(&t, b));
    let fmt = f.page_format(&buf);
    let spill_path = format!("{out}.spill");
    let spill_file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&spill_path)
        .map_err(|e| format!("{spill_path}: {e}"))?;
    let mut spill = PageSpill::new(spill_file);
    let io = |e: std::io::Error| format!("{spill_path}: {e}");
    for (cpu, recs) in &cpus {
        let start = spill.len();
        let mut packer = PagePacker::new(fmt).map_err(|e| e.0)?;
        for rep in 0..reps {
            for (ts, payload) in recs {
                packer.event(ts + rep * span, payload).map_err(|e| e.0)?;
                if packer.closed_len() >= SPILL_AT {
                    spill.append(&packer.take_pages()).map_err(io)?;
                }
            }
        }
        spill.append(&packer.finish()).map_err(io)?;
        if spill.len() > start {
            buf.spilled.push((*cpu, start, spill.len() - start));
        }
    }
    f.set_buffers(vec![buf]);
    let mut w = File::create(out).map_err(|e| format!("{out}: {e}"))?;
    f.write_spilled(&mut w, &mut spill)
        .map_err(|e| format!("{out}: {}", e.0))?;
    let _ = std::fs::remove_file(&spill_path);
    eprintln!(
        "scale: {out}: {reps} repetitions of {} records",
        cpus.iter().map(|c| c.1.len()).sum::<usize>()
    );
    Ok(())
}
