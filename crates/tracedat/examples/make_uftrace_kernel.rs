//! Adds synthetic kernel data (what `uftrace record -k` saves) to a copy of
//! a uftrace data directory, for the fixtures of
//! `tests/fixtures/uftrace/kernel/`: this VM cannot record kernel function
//! data, so the files are written from the formats uftrace 0.13 reads.
//!
//! ```sh
//! cargo run -p tracemux-tracedat --example make_uftrace_kernel -- SRC_DIR OUT_DIR [VARIANT]
//! ```
//!
//! copies the files of `SRC_DIR` (a `uftrace.data` directory; the
//! recording `tests/fixtures/uftrace/recorded/pg-dlopen`) to `OUT_DIR`, sets
//! the KERNEL bit in the `info` header's feature mask and writes:
//!
//! - `kernel_header`: `PAGE_SIZE`, `LONG_SIZE` and `ENDIAN` lines, then each
//!   tracefs file as a `TRACEFS: <path>: <length>` line followed by the
//!   file's bytes (`events/header_page`, the funcgraph_entry/exit formats and
//!   the formats of the enabled events, here irq_handler_entry/exit);
//! - `kernel-cpu0.dat`, `kernel-cpu1.dat`: ring-buffer pages (4096 bytes,
//!   8-byte `commit`, little-endian) as `trace_pipe_raw` gives them, packed
//!   by `tracemux_tracedat::writer::PagePacker`;
//! - `kallsyms`: a few kernel symbols in `/proc/kallsyms` form.
//!
//! The records are on the recording's one task (11362), at times that fall
//! inside its user functions (printf, dlclose), plus records outside any
//! user function (hidden by uftrace unless `--kernel-full`) and records of
//! another pid (never shown). `VARIANT` `lost` also gives the second page of
//! CPU 1 a missed-events count. The output is deterministic.

use std::path::Path;

use tracemux_core::bytes::Endian;
use tracemux_tracedat::writer::text::header_page;
use tracemux_tracedat::writer::{Item, Missed, PageFormat, PagePacker};

mod formats;

const ID_ENTRY: u16 = 11;
const ID_EXIT: u16 = 10;
const ID_IRQ_ENTRY: u16 = 225;
const ID_IRQ_EXIT: u16 = 224;

const TID: i32 = 11362;
const OTHER_PID: i32 = 999;

/// (address, type, name) of the saved kallsyms, in address order.
const KSYMS: &[(u64, char, &str)] = &[
    (0xffffffff81000000, 'T', "_stext"),
    (0xffffffff81001000, 'T', "do_idle"),
    (0xffffffff81002000, 'T', "__x64_sys_brk"),
    (0xffffffff81003000, 'T', "__x64_sys_write"),
    (0xffffffff81003400, 'T', "ksys_write"),
    (0xffffffff81003800, 't', "vfs_write"),
    (0xffffffff81004000, 'T', "__x64_sys_munmap"),
    (0xffffffff81004400, 'T', "__vm_munmap"),
    (0xffffffff81005000, 'T', "_etext"),
    (0xffffffffc0001000, 't', "virtnet_poll\t[virtio_net]"),
];

fn ksym(name: &str) -> u64 {
    KSYMS
        .iter()
        .find(|(_, _, n)| *n == name)
        .map(|(a, _, _)| *a)
        .expect("symbol in KSYMS")
}

fn common(id: u16, pid: i32) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&id.to_le_bytes());
    v.push(0); // flags
    v.push(0); // preempt count
    v.extend_from_slice(&pid.to_le_bytes());
    v
}

fn entry(pid: i32, func: &str, depth: u32) -> Vec<u8> {
    let mut v = common(ID_ENTRY, pid);
    v.extend_from_slice(&ksym(func).to_le_bytes());
    v.extend_from_slice(&depth.to_le_bytes());
    v.extend_from_slice(&[0; 4]);
    v
}

fn exit(pid: i32, func: &str, depth: u32, calltime: u64, rettime: u64) -> Vec<u8> {
    let mut v = common(ID_EXIT, pid);
    v.extend_from_slice(&ksym(func).to_le_bytes());
    v.extend_from_slice(&depth.to_le_bytes());
    v.extend_from_slice(&0u32.to_le_bytes()); // overrun
    v.extend_from_slice(&calltime.to_le_bytes());
    v.extend_from_slice(&rettime.to_le_bytes());
    v
}

fn irq_entry(pid: i32, irq: i32, name: &str) -> Vec<u8> {
    let mut v = common(ID_IRQ_ENTRY, pid);
    v.extend_from_slice(&irq.to_le_bytes());
    let len = name.len() as u32 + 1;
    v.extend_from_slice(&(16u32 | (len << 16)).to_le_bytes());
    v.extend_from_slice(name.as_bytes());
    v.push(0);
    v
}

fn irq_exit(pid: i32, irq: i32, ret: i32) -> Vec<u8> {
    let mut v = common(ID_IRQ_EXIT, pid);
    v.extend_from_slice(&irq.to_le_bytes());
    v.extend_from_slice(&ret.to_le_bytes());
    v
}

/// A function call on `pid`: entry at `t0`, exit at `t1`.
fn call(out: &mut Vec<(u64, Vec<u8>)>, pid: i32, func: &str, depth: u32, t0: u64, t1: u64) {
    out.push((t0, entry(pid, func, depth)));
    out.push((t1, exit(pid, func, depth, t0, t1)));
}

fn cpu0() -> Vec<(u64, Vec<u8>)> {
    let mut v = Vec::new();
    // before the first user function: hidden unless --kernel-full
    call(
        &mut v,
        TID,
        "__x64_sys_brk",
        0,
        8322321770000,
        8322321771000,
    );
    // another process: never shown
    call(
        &mut v,
        OTHER_PID,
        "do_idle",
        0,
        8322321779000,
        8322321779500,
    );
    // inside printf (8322.322034996 .. 8322.322040845)
    v.push((8322322036000, entry(TID, "__x64_sys_write", 0)));
    v.push((8322322036100, entry(TID, "ksys_write", 1)));
    call(&mut v, TID, "vfs_write", 2, 8322322036200, 8322322037800);
    v.push((
        8322322037900,
        exit(TID, "ksys_write", 1, 8322322036100, 8322322037900),
    ));
    v.push((
        8322322038000,
        exit(TID, "__x64_sys_write", 0, 8322322036000, 8322322038000),
    ));
    v.sort_by_key(|(t, _)| *t);
    v
}

fn cpu1() -> Vec<(u64, Vec<u8>)> {
    let mut v = Vec::new();
    // inside dlclose (8322.322041065 .. 8322.322059983)
    v.push((8322322045000, entry(TID, "__x64_sys_munmap", 0)));
    v.push((8322322046000, irq_entry(TID, 24, "virtio0-input.0")));
    v.push((8322322046500, irq_exit(TID, 24, 1)));
    call(&mut v, TID, "__vm_munmap", 1, 8322322047000, 8322322048000);
    v.push((
        8322322050000,
        exit(TID, "__x64_sys_munmap", 0, 8322322045000, 8322322050000),
    ));
    // an interrupt on the other pid: not shown
    v.push((8322322051000, irq_entry(OTHER_PID, 25, "virtio0-output.0")));
    v.push((8322322051200, irq_exit(OTHER_PID, 25, 0)));
    v
}

fn pages(events: &[(u64, Vec<u8>)], lost_at: Option<(usize, u64)>) -> Vec<u8> {
    let fmt = PageFormat {
        endian: Endian::Little,
        commit_size: 8,
        page_size: 4096,
    };
    let mut p = PagePacker::new(fmt).expect("page format");
    for (i, (t, payload)) in events.iter().enumerate() {
        if let Some((at, n)) = lost_at {
            if i == at {
                p.push(&Item::NewPage(Missed::Count(n))).expect("new page");
            }
        }
        p.event(*t, payload).expect("event fits");
    }
    p.finish()
}

fn tracefs(out: &mut Vec<u8>, path: &str, text: &str) {
    out.extend_from_slice(format!("TRACEFS: {path}: {}\n", text.len()).as_bytes());
    out.extend_from_slice(text.as_bytes());
}

fn kernel_header() -> Vec<u8> {
    let mut out = b"PAGE_SIZE: 4096\nLONG_SIZE: 8\nENDIAN: LE\n".to_vec();
    tracefs(&mut out, "events/header_page", &header_page(8, 4096));
    for (system, event) in [
        ("ftrace", "funcgraph_entry"),
        ("ftrace", "funcgraph_exit"),
        ("irq", "irq_handler_exit"),
        ("irq", "irq_handler_entry"),
    ] {
        let path = format!("events/{system}/{event}/format");
        tracefs(
            &mut out,
            &path,
            &formats::text(&format!("{system}_{event}")),
        );
    }
    out
}

fn kallsyms() -> String {
    KSYMS
        .iter()
        .map(|(a, t, n)| format!("{a:016x} {t} {n}\n"))
        .collect()
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: make_uftrace_kernel SRC_DIR OUT_DIR [lost]");
        std::process::exit(2);
    }
    let (src, out) = (Path::new(&args[0]), Path::new(&args[1]));
    let lost = args.get(2).map(String::as_str) == Some("lost");
    std::fs::create_dir_all(out)?;
    let mut names: Vec<_> = std::fs::read_dir(src)?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .map(|e| e.file_name())
        .collect();
    names.sort();
    for name in names {
        std::fs::copy(src.join(&name), out.join(&name))?;
    }
    // feature mask: u64 at offset 16 of the 40-byte header; KERNEL is bit 2
    let mut info = std::fs::read(out.join("info"))?;
    if info.len() < 40 {
        eprintln!("{}: not a uftrace info file", src.join("info").display());
        std::process::exit(1);
    }
    info[16] |= 1 << 2;
    std::fs::write(out.join("info"), info)?;
    std::fs::write(out.join("kernel_header"), kernel_header())?;
    std::fs::write(out.join("kernel-cpu0.dat"), pages(&cpu0(), None))?;
    let lost_at = lost.then_some((3, 7));
    std::fs::write(out.join("kernel-cpu1.dat"), pages(&cpu1(), lost_at))?;
    std::fs::write(out.join("kallsyms"), kallsyms())?;
    Ok(())
}
