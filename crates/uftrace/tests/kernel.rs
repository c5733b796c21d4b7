//! Kernel data (`uftrace record -k`): the synthetic recordings of
//! `tests/fixtures/uftrace/kernel/` (see its README: written from the
//! format by `crates/tracedat/examples/make_uftrace_kernel.rs`, the
//! expected outputs are uftrace 0.13's own on them).
//!
//! - every `replay` line of each fixture's `commands.txt`, through the
//!   library, byte for byte (dump, report and graph are in `outputs.rs`,
//!   every command through the CLI in `crates/cli/tests/uftrace.rs`);
//! - what the reader makes of the files (records per CPU, tasks, LOST);
//! - damaged kernel files: cut at every record boundary and at odd
//!   offsets, header lines broken: no panic, damage reported naming the
//!   file, the records before the cut still shown.

use std::path::{Path, PathBuf};

use tracemux_uftrace::dump::{dump, DumpOptions};
use tracemux_uftrace::graph::{graph, GraphOptions};
use tracemux_uftrace::record::Kind;
use tracemux_uftrace::replay::{replay, ReplayOptions};
use tracemux_uftrace::report::{report, ReportOptions};
use tracemux_uftrace::{Demangle, OpenOptions, UftraceData};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/uftrace/kernel")
}

fn dirs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .expect("kernel fixtures")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("uftrace.data/kernel_header").is_file())
        .collect();
    v.sort();
    assert!(v.len() >= 2, "kernel fixtures missing");
    v
}

fn open(p: &Path) -> UftraceData {
    let o = OpenOptions {
        demangle: Demangle::Simple,
        strict: false,
    };
    UftraceData::open(p, o).expect("open")
}

/// `(name, args)` of the `uftrace replay` lines of `commands.txt`.
fn replay_commands(dir: &Path) -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(dir.join("commands.txt")).expect("commands.txt");
    let mut v = Vec::new();
    for line in text.lines() {
        let Some((name, cmd)) = line.split_once(": ") else {
            continue;
        };
        let words: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
        if words.len() < 2 || words[0] != "uftrace" || words[1] != "replay" {
            continue;
        }
        v.push((name.to_string(), words[2..].to_vec()));
    }
    v
}

#[test]
fn replay_outputs() {
    let mut checked = 0;
    let mut fails = Vec::new();
    for dir in dirs() {
        for (name, args) in replay_commands(&dir) {
            let want = std::fs::read(dir.join(format!("{name}.txt"))).expect("expected output");
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let opts = ReplayOptions::from_args(&args).expect("options");
            let mut out = Vec::new();
            let mut warn = Vec::new();
            replay(&dir.join("uftrace.data"), &opts, &mut out, &mut warn).expect("replay");
            checked += 1;
            if out != want {
                fails.push(format!("{}/{name}", dir.display()));
            }
            assert!(warn.is_empty(), "{}", String::from_utf8_lossy(&warn));
        }
    }
    assert!(fails.is_empty(), "differ: {fails:?}");
    assert!(checked >= 18, "only {checked} replay outputs");
}

#[test]
fn reader_view() {
    let d = open(&fixtures().join("pg-dlopen-k/uftrace.data"));
    assert!(d.damage.is_empty(), "{:?}", d.damage);
    let k = d.kernel.as_ref().expect("kernel data");
    assert_eq!((k.page_size, k.long_size, k.big_endian), (4096, 8, false));
    assert_eq!(k.cpus.len(), 2);
    let n: Vec<usize> = k.cpus.iter().map(|c| c.records.len()).collect();
    assert_eq!(n, [10, 8]);
    // records of pid 999 stay (dump shows them), tied to no task
    assert!(k.cpus[0].records.iter().any(|r| r.tid == 999));
    let ev = k.cpus[1]
        .records
        .iter()
        .find(|r| r.kind == Kind::Event)
        .expect("an event");
    assert_eq!(k.text_of(ev), b"irq=24 name=virtio0-input.0");
    let e = k.event(ev.addr).expect("its format");
    assert_eq!((&*e.system, &*e.name), ("irq", "irq_handler_entry"));
    // funcgraph addresses resolve through the saved kallsyms
    let s = d
        .symbol(11362, 8322322036000, k.cpus[0].records[4].addr)
        .expect("kernel symbol");
    assert_eq!(&*s.name, "__x64_sys_write");
    // the lost variant: 7 missed events before the second page of CPU 1
    let d = open(&fixtures().join("pg-dlopen-k-lost/uftrace.data"));
    let k = d.kernel.as_ref().expect("kernel data");
    let missed: Vec<i64> = k.cpus[1].records.iter().filter_map(|r| r.missed).collect();
    assert_eq!(missed, [0, 7]);
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
    }
}

/// Every output over the directory; returns replay's output and all
/// warnings.
fn all_outputs(dir: &Path) -> (Vec<u8>, Vec<u8>) {
    let mut out = Vec::new();
    let mut warn = Vec::new();
    replay(dir, &ReplayOptions::default(), &mut out, &mut warn).expect("replay");
    let mut sink = Vec::new();
    let kf = ReplayOptions::from_args(&["--kernel-full"]).expect("options");
    replay(dir, &kf, &mut sink, &mut warn).expect("replay");
    let mut d = open(dir);
    dump(&mut d, &DumpOptions::default(), &mut sink, &mut warn).expect("dump");
    let mut d = open(dir);
    report(&mut d, &ReportOptions::default(), &mut sink, &mut warn).expect("report");
    let mut d = open(dir);
    graph(&mut d, &GraphOptions::default(), &mut sink, &mut warn).expect("graph");
    (out, warn)
}

/// A kernel-cpu file cut anywhere: the records before the cut are still
/// there (replay shows the kernel functions whose exit survived), the cut
/// is reported with the file's name, nothing panics.
#[test]
fn truncated_kernel_files() {
    let src = fixtures().join("pg-dlopen-k/uftrace.data");
    let tmp = std::env::temp_dir().join(format!("tracemux-ukernel-cut-{}", std::process::id()));
    let full = std::fs::read(src.join("kernel-cpu1.dat")).expect("cpu1");
    let intact = open(&src);
    let recs = &intact.kernel.as_ref().expect("kernel").cpus[1].records;
    // record boundaries (payload offsets minus the 4-byte header) and odd
    // offsets, plus the cut inside the page header
    let mut cuts: Vec<usize> = recs.iter().map(|r| r.offset as usize - 4).collect();
    cuts.extend([0, 1, 7, 13, 17, 61, 101, 150, 4095]);
    cuts.sort();
    cuts.dedup();
    let mut runs = 0;
    for &cut in &cuts {
        copy_dir(&src, &tmp);
        std::fs::write(tmp.join("kernel-cpu1.dat"), &full[..cut.min(full.len())]).expect("write");
        let d = open(&tmp);
        let k = d.kernel.as_ref().expect("still kernel data");
        let kept = &k.cpus[1].records;
        // every record kept is one of the intact file's, in order
        assert!(kept.len() <= recs.len());
        assert_eq!(&recs[..kept.len()], &kept[..], "cut at {cut}");
        if cut > 0 {
            assert!(
                d.damage.iter().any(|x| x.file == "kernel-cpu1.dat"),
                "cut at {cut}: no damage reported"
            );
        }
        let (out, warn) = all_outputs(&tmp);
        // an empty file is no damage: uftrace skips it
        assert_eq!(
            String::from_utf8_lossy(&warn).contains("kernel-cpu1.dat"),
            cut > 0
        );
        // CPU 0's kernel functions are untouched by the cut of CPU 1
        assert!(String::from_utf8_lossy(&out).contains("vfs_write();"));
        runs += 1;
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(runs >= 10);
}

/// A damaged `kernel_header` (cut anywhere, lines broken): either kernel
/// data is read or it is left out with a note; user functions are always
/// shown.
#[test]
fn damaged_kernel_header() {
    let src = fixtures().join("pg-dlopen-k/uftrace.data");
    let tmp = std::env::temp_dir().join(format!("tracemux-ukernel-hdr-{}", std::process::id()));
    let full = std::fs::read(src.join("kernel_header")).expect("header");
    let mut variants: Vec<Vec<u8>> = (0..full.len())
        .step_by(37)
        .map(|n| full[..n].to_vec())
        .collect();
    let text = String::from_utf8_lossy(&full).into_owned();
    variants.push(
        text.replace("TRACEFS: events/header_page", "TRACEFS: events/nonsense")
            .into_bytes(),
    );
    variants.push(text.replace(": 4096\n", ": 0\n").into_bytes());
    variants.push(text.replace("ID: 225", "ID: x").into_bytes());
    variants.push(
        text.replace(
            "TRACEFS: events/ftrace/funcgraph_entry/format: ",
            "TRACEFS: events/ftrace/funcgraph_entry/format: 99999",
        )
        .into_bytes(),
    );
    for v in &variants {
        copy_dir(&src, &tmp);
        std::fs::write(tmp.join("kernel_header"), v).expect("write");
        let d = open(&tmp);
        if d.kernel.is_none() {
            assert!(d.damage.iter().any(|x| x.file == "kernel_header"));
        }
        let (out, _) = all_outputs(&tmp);
        assert!(String::from_utf8_lossy(&out).contains("plugin_helper();"));
    }
    // no kernel-cpu files at all: a note, the user functions as before
    copy_dir(&src, &tmp);
    for c in ["kernel-cpu0.dat", "kernel-cpu1.dat"] {
        std::fs::remove_file(tmp.join(c)).expect("rm");
    }
    let d = open(&tmp);
    assert!(d.kernel.is_none() && !d.damage.is_empty());
    let (out, _) = all_outputs(&tmp);
    let plain = std::fs::read(fixtures().join("../recorded/pg-dlopen/replay.txt")).expect("plain");
    assert_eq!(out, plain);
    let _ = std::fs::remove_dir_all(&tmp);
}
