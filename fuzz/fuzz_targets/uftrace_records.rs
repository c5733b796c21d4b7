//! uftrace records: the input is the `<tid>.dat` of every task of a fixed
//! small recording (the pg-args-retval fixture: integer, hex, float,
//! double and string arguments and return values, auto-args, three
//! tasks). Each task reads the input from its own starting offset, taken
//! from the first six bytes, so the tasks differ; the records, argument
//! blobs, merge and replay printing all run over it.
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use tracemux_uftrace::replay::{replay_data, ReplayOptions};
use tracemux_uftrace::{MergeOptions, Merger, TaskReader, UftraceData};

fuzz_target!(|input: &[u8]| {
    if input.len() < 6 {
        return;
    }
    let body = &input[6..];
    let Ok(mut data) = fixture::recording(&DATA, "corpus/pg-args-retval").lock() else {
        return;
    };
    let n = data.tasks.len();
    for (i, t) in data.tasks.iter_mut().enumerate() {
        let k = 2 * (i % 3);
        let skip = (u16::from_le_bytes([input[k], input[k + 1]]) as usize * 8).min(body.len());
        t.data = Some(Box::new(body[skip..].to_vec()));
    }
    for task in 0..n {
        let mut r = TaskReader::new(&data, task);
        while let Some(rec) = r.next_record() {
            let _ = data.symbol(r.tid, rec.time, rec.addr);
            let _ = data.arg_specs(r.tid, rec.time, rec.addr);
        }
    }
    {
        let mut m = Merger::new(&data, &MergeOptions::default());
        while m.next_item().is_some() {}
        let _ = m.take_damage();
    }
    let opts = ReplayOptions::default();
    let _ = replay_data(&mut data, &opts, &mut std::io::sink(), &mut std::io::sink());
});

/// The fixture recording, opened by the first run.
static DATA: OnceLock<Mutex<UftraceData>> = OnceLock::new();

#[path = "fixture.rs"]
mod fixture;
