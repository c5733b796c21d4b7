//! perf.data: a whole file (either mode), its header, attributes, feature
//! sections, tracing data, records (zstd COMPRESSED records through the
//! decompressor), perf script's text with a few field sets, info, stats and
//! the model source, lenient and strict.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracemux_core::model::RecordSource;
use tracemux_perf::script::{script, ScriptOptions};
use tracemux_perf::source::PerfSource;
use tracemux_perf::{info, PerfData};

fuzz_target!(|data: &[u8]| {
    for strict in [false, true] {
        let Ok(p) = PerfData::open(data, strict) else {
            continue;
        };
        for fields in [vec![], vec!["comm,tid,pid,cpu,time,event,trace,ip,sym,dso,addr,period".to_string()]] {
            let o = ScriptOptions {
                fields,
                strict,
                show_task_events: true,
                show_mmap_events: true,
                ..ScriptOptions::default()
            };
            let _ = script(&p, &o, &mut std::io::sink());
        }
        let _ = info::header_only(&p, &mut std::io::sink());
        let c = p.count();
        let _ = info::stats(&p, &c.records, &c.samples, &mut std::io::sink());
        let _ = info::evlist(&p, &mut std::io::sink());
        let mut src = PerfSource::new(&p, strict);
        while let Ok(Some(_)) = src.next_record() {}
    }
});
