//! `convert` from damaged input: a fixture (a trace.dat or a CTF trace)
//! damaged by the fuzz input, read through its model source and streamed
//! into the CTF writer (CTF 1.8 or CTF 2, into a temp dir) and the JSON
//! lines printer (each line checked to parse as JSON).
//!
//! Input: byte 0 picks the fixture and the writer's options, bytes 1..5 a
//! truncation point (0: none), then 5-byte patches (a 32-bit offset,
//! modulo the length, and a byte XORed there).
#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use tracemux_core::model::{Record, RecordSource};
use tracemux_ctf::fs::ReadLoader;
use tracemux_ctf::source::CtfSource;
use tracemux_ctf::writer::{CtfWriter, WriterOptions};
use tracemux_tracedat::reader::{ReadOptions, Reader};
use tracemux_tracedat::TraceDat;

const TRACEDAT: &[&[u8]] = &[
    include_bytes!("../../tests/fixtures/synthetic/latency-v7/trace.dat"),
    include_bytes!("../../tests/fixtures/synthetic/be-v7-zstd/trace.dat"),
    include_bytes!("../../tests/fixtures/report-options/sched-irq/trace.dat"),
];
const CTF_METADATA: &[u8] =
    include_bytes!("../../tests/fixtures/ctf/lttng-ust-uid/trace/ust/uid/0/64-bit/metadata");
const CTF_STREAM: &[u8] =
    include_bytes!("../../tests/fixtures/ctf/lttng-ust-uid/trace/ust/uid/0/64-bit/ch0_1");

/// At most this many records per run (keeps executions fast).
const MAX_RECORDS: usize = 5000;

fn tmp() -> PathBuf {
    std::env::temp_dir().join(format!("tracemux-fuzz-convert-{}", std::process::id()))
}

fn damage(base: &[u8], input: &[u8]) -> Vec<u8> {
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

fn run(src: &mut dyn RecordSource, ctf2: bool, small_packets: bool) {
    let dir = tmp().join("out");
    let _ = std::fs::remove_dir_all(&dir);
    let meta = src.meta().clone();
    let opts = WriterOptions {
        ctf2,
        packet_size: if small_packets { 512 } else { 256 << 10 },
    };
    let mut w = CtfWriter::create(&dir, &meta, opts).ok();
    let mut line = Vec::new();
    for _ in 0..MAX_RECORDS {
        let Ok(Some(rec)) = src.next_record() else {
            break;
        };
        match rec {
            Record::Event(ev) => {
                line.clear();
                tracemux_render::jsonl::write_event(&mut line, &meta, &ev);
                if let Err(e) = serde_json::from_slice::<serde_json::Value>(&line) {
                    panic!(
                        "JSON line does not parse: {e}: {}",
                        String::from_utf8_lossy(&line)
                    );
                }
                if let Some(x) = w.as_mut() {
                    if x.event(&meta, &ev).is_err() {
                        w = None;
                    }
                }
            }
            Record::Lost(l) => {
                line.clear();
                tracemux_render::jsonl::write_lost(&mut line, &meta, &l);
                if let Some(x) = w.as_mut() {
                    if x.lost(&l).is_err() {
                        w = None;
                    }
                }
            }
            Record::Damage(_) => {}
        }
    }
    if let Some(x) = w {
        let _ = x.finish();
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let ctf2 = sel & 0x40 != 0;
    let small = sel & 0x80 != 0;
    let pick = (sel & 0x3f) as usize % (TRACEDAT.len() + 1);
    if pick < TRACEDAT.len() {
        let bytes = damage(TRACEDAT[pick], rest);
        let Ok(t) = TraceDat::parse(&bytes, false) else {
            return;
        };
        let Ok(mut r) = Reader::new(&t, &ReadOptions::default()) else {
            return;
        };
        run(&mut r, ctf2, small);
    } else {
        // the metadata damaged by the patches that fall in its first bytes
        // would mostly fail to parse: damage the stream only
        let dir = tmp().join("in");
        let _ = std::fs::create_dir_all(&dir);
        let stream = damage(CTF_STREAM, rest);
        if std::fs::write(dir.join("metadata"), CTF_METADATA).is_err()
            || std::fs::write(dir.join("ch0_1"), &stream).is_err()
        {
            return;
        }
        let loader = ReadLoader;
        let Ok(traces) = tracemux_ctf::source::open(&[dir], &loader) else {
            return;
        };
        let Ok(mut s) = CtfSource::new(&traces, &loader, false) else {
            return;
        };
        run(&mut s, ctf2, small);
    }
});
