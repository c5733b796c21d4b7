//! Make a large CTF 1.8 trace for benchmarks by replicating the packets of
//! a small one (the benchmark inputs are generated, not committed):
//!
//! `cargo run --release -p tracemux-ctf --example ctf_bench_gen -- SRC_TRACE_DIR OUT_DIR COPIES`
//!
//! Every stream file of SRC (one directory with a `metadata` file) is
//! written COPIES times in a row to OUT. In copy `k`, every 64-bit clock
//! field (packet begin/end times, extended event timestamps) is shifted by
//! `k * SPAN` cycles, where SPAN is a multiple of 2^32 larger than the
//! stream's time span (so narrower timestamps, which keep their low bits,
//! stay consistent), and the packet sequence numbers by `k * packets`.

use std::path::PathBuf;

use tracemux_ctf::decode::{IntValue, Kind, Node, Program, Visitor};
use tracemux_ctf::ir::Roles;
use tracemux_ctf::stream::decode_file;

/// Bit offsets (from the file start) of the fields to patch.
#[derive(Default)]
struct Spots {
    base: u64,
    clocks: Vec<u64>,
    seqs: Vec<u64>,
    min: u64,
    max: u64,
}

impl Visitor for Spots {
    fn packet_begin(&mut self, off: u64) {
        self.base = off * 8;
    }
    fn int(&mut self, node: &Node, v: IntValue, at: u64) {
        let Kind::Int { len, .. } = node.kind else {
            return;
        };
        if len != 64 || at % 8 != 0 {
            return;
        }
        let clock = node.mapped_clock
            || node.roles.has(Roles::DEFAULT_CLOCK_TIMESTAMP)
            || node.roles.has(Roles::PACKET_END_DEFAULT_CLOCK_TIMESTAMP)
            || node.roles.has(Roles::PACKET_BEGIN_DEFAULT_CLOCK_TIMESTAMP);
        if clock {
            self.clocks.push(self.base + at);
            if let IntValue::U(x) = v {
                if self.min == 0 || x < self.min {
                    self.min = x;
                }
                self.max = self.max.max(x);
            }
        } else if node.roles.has(Roles::PACKET_SEQUENCE_NUMBER) {
            self.seqs.push(self.base + at);
        }
    }
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() != 3 {
        eprintln!("usage: ctf_bench_gen SRC_TRACE_DIR OUT_DIR COPIES");
        std::process::exit(2);
    }
    let (src, out) = (PathBuf::from(&a[0]), PathBuf::from(&a[1]));
    let copies: u64 = a[2].parse().expect("COPIES");
    let meta = std::fs::read(src.join("metadata")).expect("metadata");
    let tc = tracemux_ctf::tsdl::parse_metadata(&meta).expect("TSDL");
    let le = tc.native_byte_order == tracemux_ctf::ir::ByteOrder::Little;
    let prog = Program::compile(&tc).expect("compile");
    std::fs::create_dir_all(&out).expect("out dir");
    std::fs::write(out.join("metadata"), &meta).expect("write metadata");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&src)
        .expect("read dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "metadata"))
        .collect();
    files.sort();
    let mut spots: Vec<(PathBuf, Vec<u8>, Spots)> = Vec::new();
    let (mut lo, mut hi) = (u64::MAX, 0);
    for f in files {
        let data = std::fs::read(&f).expect("stream");
        let mut s = Spots::default();
        decode_file(&prog, tc.uuid, &data, &mut s).expect("decode");
        lo = lo.min(s.min);
        hi = hi.max(s.max);
        spots.push((f, data, s));
    }
    let span = (((hi - lo) >> 32) + 1) << 32;
    for (f, data, s) in &spots {
        let npk = s.seqs.len() as u64;
        let mut w = Vec::with_capacity(data.len() * copies as usize);
        for k in 0..copies {
            let mut d = data.clone();
            let patch = |d: &mut [u8], bit: u64, add: u64| {
                let i = (bit / 8) as usize;
                let b: [u8; 8] = d[i..i + 8].try_into().unwrap();
                let v = if le {
                    u64::from_le_bytes(b)
                } else {
                    u64::from_be_bytes(b)
                };
                let n = v.wrapping_add(add);
                d[i..i + 8].copy_from_slice(&if le { n.to_le_bytes() } else { n.to_be_bytes() });
            };
            for &b in &s.clocks {
                patch(&mut d, b, k * span);
            }
            for &b in &s.seqs {
                patch(&mut d, b, k * npk);
            }
            w.extend_from_slice(&d);
        }
        let name = f.file_name().unwrap();
        std::fs::write(out.join(name), &w).expect("write stream");
    }
}
