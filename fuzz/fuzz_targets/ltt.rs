//! Legacy LTT: a whole trace (facilities file + two CPU tracefiles cut from
//! the input), blocks, event headers, markers, merge, report and info.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracemux_core::model::{Record, RecordSource};
use tracemux_ltt::report::{report_trace, summarize, ReportOptions};
use tracemux_ltt::source::LttSource;
use tracemux_ltt::trace::FileBytes;
use tracemux_ltt::Trace;

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    // two split points from the first four bytes
    let rest = &data[4..];
    let a = (u16::from_le_bytes([data[0], data[1]]) as usize).min(rest.len());
    let b = (u16::from_le_bytes([data[2], data[3]]) as usize).clamp(a, rest.len());
    for strict in [false, true] {
        let files: Vec<(String, FileBytes)> = vec![
            ("control/facilities_0".into(), Box::new(rest[..a].to_vec())),
            ("cpu_0".into(), Box::new(rest[a..b].to_vec())),
            ("cpu_1".into(), Box::new(rest[b..].to_vec())),
        ];
        let Ok(t) = Trace::from_files(files, strict) else {
            continue;
        };
        let opts = ReportOptions {
            strict,
            ..Default::default()
        };
        let _ = report_trace(&t, &opts, &mut std::io::sink(), &mut std::io::sink());
        let _ = summarize(&t);
        let symbols = tracemux_core::tables::SymbolTable::default();
        let printk = tracemux_core::tables::PrintkTable::default();
        let mut src = LttSource::new(&t);
        let mut out = Vec::new();
        while let Ok(Some(r)) = src.next_record() {
            if let Record::Event(ev) = r {
                if let Some(p) = ev.class.and_then(|c| c.printer.as_ref()) {
                    let ctx = tracemux_core::model::PrintCtx::new(
                        ev.endian, 8, &symbols, &printk, ev.cpu,
                    );
                    p.write_raw_fields(&mut out, ev.data, ev.data.len(), &ctx);
                    out.clear();
                }
            }
        }
    }
});
