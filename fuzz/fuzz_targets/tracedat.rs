//! The whole trace.dat path: container, metadata, pages, merge, printing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracemux_core::model::{Record, RecordSource};
use tracemux_render::tracecmd::{TimeFormat, TraceCmdPrinter};
use tracemux_tracedat::reader::{ReadOptions, Reader};
use tracemux_tracedat::TraceDat;

fuzz_target!(|data: &[u8]| {
    let Ok(t) = TraceDat::parse(data, false) else {
        return;
    };
    let Ok(mut r) = Reader::new(&t, &ReadOptions::default()) else {
        return;
    };
    let meta = r.meta().clone();
    let mut p = TraceCmdPrinter::new(&meta, TimeFormat::Usecs);
    let mut out = Vec::new();
    while let Ok(Some(rec)) = r.next_record() {
        match rec {
            Record::Event(ev) => p.write_raw(&mut out, &meta, &ev, ev.ext),
            Record::Lost(l) => p.write_lost(&mut out, &meta, &l),
            Record::Damage(_) => {}
        }
        out.clear();
    }
});
