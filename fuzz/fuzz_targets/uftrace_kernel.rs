//! uftrace kernel data (`-k`): the input is cut into `kernel_header`,
//! `kernel-cpu0.dat` and `kernel-cpu1.dat` (two little-endian `u16`
//! lengths first: the header's and CPU 0's; CPU 1 gets the rest), parsed
//! with `tracemux_uftrace::kernel::parse` in place of the kernel data of
//! the synthetic pg-dlopen-k recording, then merged with its user records
//! and printed by replay (default and `--kernel-full`) and dump.
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use tracemux_uftrace::dump::{dump, DumpOptions};
use tracemux_uftrace::replay::{replay_data, ReplayOptions};
use tracemux_uftrace::{kernel, Demangle, MergeOptions, Merger, UftraceData};

fuzz_target!(|input: &[u8]| {
    if input.len() < 4 {
        return;
    }
    let hl = u16::from_le_bytes([input[0], input[1]]) as usize;
    let c0 = u16::from_le_bytes([input[2], input[3]]) as usize;
    let body = &input[4..];
    let (header, rest) = body.split_at(hl.min(body.len()));
    let (cpu0, cpu1) = rest.split_at(c0.min(rest.len()));
    let Ok(mut data) = fixture::recording(&DATA, "kernel/pg-dlopen-k").lock() else {
        return;
    };
    let tids: Vec<i32> = data.tasks.iter().map(|t| t.tid).collect();
    let cpus = [("kernel-cpu0.dat", Ok(cpu0)), ("kernel-cpu1.dat", Ok(cpu1))];
    let mut damage = Vec::new();
    let kallsyms = b"ffffffff81000000 T _stext\nffffffff81003000 T __x64_sys_write\n";
    data.kernel = kernel::parse(
        header,
        &cpus,
        Some(kallsyms),
        &tids,
        Demangle::Simple,
        &mut damage,
    );
    {
        let mut m = Merger::new(&data, &MergeOptions::default());
        while m.next_item().is_some() {}
    }
    let sink = &mut std::io::sink();
    let _ = replay_data(
        &mut data,
        &ReplayOptions::default(),
        sink,
        &mut std::io::sink(),
    );
    if let Ok(full) = ReplayOptions::from_args(&["--kernel-full"]) {
        let _ = replay_data(&mut data, &full, sink, &mut std::io::sink());
    }
    let _ = dump(
        &mut data,
        &DumpOptions::default(),
        sink,
        &mut std::io::sink(),
    );
});

/// The fixture recording, opened by the first run.
static DATA: OnceLock<Mutex<UftraceData>> = OnceLock::new();

#[path = "fixture.rs"]
mod fixture;
