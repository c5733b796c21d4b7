//! Write a small legacy LTT trace directory with the fixture writer.
//!
//! ```sh
//! cargo run -p tracemux-ltt --example make_ltt_fixture -- OUT_DIR [--big] [--arch32] \
//!     [--heartbeat] [--aligned] [--flight] [--block-size N] [--rounds N]
//! ```
//!
//! `--rounds N` (default 40) scales the number of events (about 2.4 per
//! round), for speed checks.
//!
//! The trace has CPUs 0, 1 and 3 (CPU 2 missing, as with hotplug), the
//! `control/facilities_0` and `control/processes_0` tracefiles, three
//! facilities, and events of every field kind. With `--heartbeat` the
//! events of CPU 3 are more than 2^32 cycles apart (heartbeats are added);
//! with `--flight` the first block of CPU 0 is dropped as overwritten.

use std::path::PathBuf;

use tracemux_core::Endian;
use tracemux_ltt::writer::{Arg, TraceDesc};

fn main() {
    let mut args = std::env::args().skip(1);
    let mut out: Option<PathBuf> = None;
    let mut rounds = 40u64;
    let mut d = TraceDesc::default();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--big" => d.endian = Endian::Big,
            "--arch32" => d.arch_size = 4,
            "--heartbeat" => d.heartbeat = true,
            "--aligned" => d.alignment = d.arch_size,
            "--flight" => d.flight_recorder = true,
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| usage("--rounds needs a number"))
            }
            "--block-size" => {
                d.block_size = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| usage("--block-size needs a number"))
            }
            s if s.starts_with('-') => usage(&format!("unknown option {s}")),
            s => out = Some(PathBuf::from(s)),
        }
    }
    if d.alignment != 0 {
        d.alignment = d.arch_size;
    }
    let Some(out) = out else {
        usage("no output directory")
    };
    if d.flight_recorder && d.block_size > 512 {
        d.block_size = 512;
    }

    let kernel = d.facility("kernel");
    let fs = d.facility("fs");
    let proc_ = d.facility("process");
    let irq = d.event(kernel, "irq_entry", "irq_id %u kernel_mode %c");
    let sched = d.event(
        kernel,
        "sched_schedule",
        "prev_pid %d next_pid %d prev_state %ld",
    );
    let open = d.event(fs, "open", "fd %d filename %s");
    let addr = d.event(fs, "mmap", "addr %p len %zu prot %o flags %lx");
    let fork = d.event(proc_, "fork", "parent_pid %d child_pid %d comm %s");
    let state = d.event(proc_, "state_dump", "pid %d name %s mode %hhu");

    let mut t = d.start_tsc;
    for i in 0..rounds {
        t += 1_500;
        let cpu = if i % 3 == 2 { 3 } else { (i % 2) as u32 };
        d.push(cpu, t, irq, vec![Arg::U(i % 16), Arg::U(i & 1)]);
        d.push(
            cpu,
            t + 10,
            sched,
            vec![Arg::I(i as i64), Arg::I(-(i as i64)), Arg::I(1)],
        );
        if i % 5 == 0 {
            d.push(
                cpu,
                t + 20,
                open,
                vec![
                    Arg::I(3 + i as i64),
                    Arg::Str(format!("/tmp/f\"{i}\"\t").into_bytes()),
                ],
            );
            d.push(
                cpu,
                t + 30,
                addr,
                vec![
                    Arg::U(0x7f00_0000_1000 + i),
                    Arg::U(4096),
                    Arg::U(0o644),
                    Arg::U(0x22),
                ],
            );
        }
    }
    d.push_to(
        "control/processes_0",
        d.start_tsc,
        state,
        vec![Arg::I(1), Arg::Str(b"init".to_vec()), Arg::U(2)],
    );
    d.push_to(
        "control/processes_0",
        t + 100,
        fork,
        vec![Arg::I(1), Arg::I(1234), Arg::Str(b"sh".to_vec())],
    );
    if d.heartbeat {
        // 10 s at 1 GHz: more than 2^32 cycles later
        d.push(3, t + 10_000_000_000, irq, vec![Arg::U(9), Arg::U(0)]);
    }
    if d.flight_recorder {
        d.overwrite_blocks("cpu_0", 1);
    }
    let built = d.build().unwrap_or_else(|e| usage(&e));
    built
        .write_dir(&out)
        .unwrap_or_else(|e| usage(&e.to_string()));
    println!(
        "{} tracefiles, {} events written to {}",
        built.files.len(),
        built.expected.len(),
        out.display()
    );
}

fn usage(msg: &str) -> ! {
    eprintln!("make_ltt_fixture: {msg}");
    eprintln!("usage: make_ltt_fixture OUT_DIR [--big] [--arch32] [--heartbeat] [--aligned] [--flight] [--block-size N] [--rounds N]");
    std::process::exit(2);
}
