//! The print fmt engine on every event format of the corpus (skipped, with
//! a note, when the corpus is not next to the repository).
//!
//! Which formats fail to parse is libtraceevent 1.7.1's verdict (with the
//! plugins `trace-cmd report` loads), obtained by parsing the same formats
//! with the library; it is cross-checked here against the `[FAILED TO
//! PARSE]` lines of the corpus' `trace-cmd report` outputs.

mod common;

use std::collections::BTreeSet;

/// Events whose print fmt libtraceevent fails to parse, per trace.
fn expected_failed(trace: &str) -> &'static [&'static str] {
    match trace {
        "v7-extract-all-events" => &[
            // TAB characters inside the format string end it early
            "ma_op",
            "ma_read",
            "ma_write",
            // a function no plugin provides
            "mc_event",
            // "({ ... })" statement expressions
            "kvm_mmu_get_page",
            "kvm_mmu_prepare_zap_page",
            "kvm_mmu_sync_page",
            "kvm_mmu_unsync_page",
            // __print_symbolic(x, { }): an empty entry
            "kvm_inj_exception",
            // sizeof(u64) is not among the sizeof forms handled
            "dma_alloc_sgt",
            "dma_free_sgt",
            "dma_map_sg",
            "dma_map_sg_err",
            "dma_sync_sg_for_cpu",
            "dma_sync_sg_for_device",
            "dma_unmap_sg",
        ],
        _ => &[],
    }
}

/// Event names on `[FAILED TO PARSE]` lines of a `trace-cmd report` output.
fn failed_in_report(report: &str) -> BTreeSet<String> {
    let mut v = BTreeSet::new();
    for line in report.lines() {
        if let Some(i) = line.find(" [FAILED TO PARSE]") {
            let head = line[..i].trim_end();
            if let Some((_, name)) = head.rsplit_once(' ') {
                v.insert(name.trim_end_matches(':').to_string());
            }
        }
    }
    v
}

#[test]
fn corpus_print_fmts_fail_like_libtraceevent() {
    let Some(dir) = common::corpus_dir() else {
        eprintln!("note: corpus not found (../shared/corpus/tracedat next to the repository); test skipped");
        return;
    };
    let mut total = 0;
    for trace in common::traces(&dir) {
        let tdir = dir.join(&trace);
        let Some(events) = common::read_text(&tdir, "dump-events.txt") else {
            continue;
        };
        let formats = common::split_dump(&events);
        assert!(!formats.is_empty(), "{trace}: no formats found");
        let mut failed = BTreeSet::new();
        let mut names = BTreeSet::new();
        for d in &formats {
            let (f, p) = common::build(d, 8)
                .unwrap_or_else(|| panic!("{trace}: format does not parse:\n{}", d.text));
            total += 1;
            names.insert(f.name.clone());
            if p.failed() {
                failed.insert(f.name.clone());
            }
            // printing never panics, whatever the record holds
            let symbols = tracemux_core::tables::SymbolTable::default();
            let printk = tracemux_core::tables::PrintkTable::default();
            let ctx = tracemux_core::model::PrintCtx::new(
                tracemux_core::bytes::Endian::Little,
                8,
                &symbols,
                &printk,
                0,
            );
            let mut out = Vec::new();
            for fill in [0u8, 0xff, 0x41] {
                let data = vec![fill; 96];
                for size in [0, 8, 40, 96] {
                    out.clear();
                    use tracemux_core::model::ClassPrinter;
                    p.write_raw_fields(&mut out, &data, size, &ctx);
                    out.clear();
                    p.write_pretty(&mut out, &data, size, &ctx);
                }
            }
        }
        let want: BTreeSet<String> = expected_failed(&trace)
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(failed, want, "{trace}: events failing to parse");
        if let Some(report) = common::read_text(&tdir, "report.txt") {
            let in_report = failed_in_report(&report);
            if !in_report.is_empty() {
                eprintln!("{trace}: [FAILED TO PARSE] in report.txt: {in_report:?}");
            }
            for name in in_report {
                assert!(
                    failed.contains(&name) || !names.contains(&name),
                    "{trace}: {name} is [FAILED TO PARSE] in report.txt"
                );
            }
            for name in &failed {
                let ok = report
                    .lines()
                    .filter(|l| l.contains(&format!(" {name}: ")))
                    .all(|l| l.contains("[FAILED TO PARSE]"));
                assert!(
                    ok,
                    "{trace}: {name} prints without [FAILED TO PARSE] in report.txt"
                );
            }
        }
    }
    eprintln!("{total} formats checked");
}
