//! Writes the synthetic trace.dat fixtures that exercise trace-cmd's
//! pretty view (`trace-cmd report` without `-R`): events this machine
//! cannot record (function and function graph tracing, trace_printk) and
//! records of every event format of a real kernel.
//!
//! ```sh
//! cargo run -p tracemux-tracedat --example make_pretty_fixtures -- OUT_DIR [FORMATS_TRACE]
//! ```
//!
//! - `OUT_DIR/ftrace-v7/trace.dat`: the `ftrace` events (function,
//!   funcgraph_entry/exit with leaves, nesting and an instance,
//!   kernel_stack, user_stack, bprint, bputs, print, raw_data,
//!   func_repeats, wakeup, context_switch); formats from
//!   `examples/formats/` (kernel 6.18, x86_64).
//! - with `FORMATS_TRACE` (a trace.dat holding many event formats, e.g.
//!   the corpus' `v7-extract-all-events/trace.dat`): `allevents-v7` and
//!   `allevents-be-v7`, two generated records for every event format of
//!   that file (little- and big-endian payloads), with part of its
//!   kallsyms and all of its printk formats; and `plugins-v7`, records
//!   with chosen values for the plugin handlers and helper functions
//!   (sched comms registered before the first lookup, kvm, kvmmmu, kmem,
//!   tlb, futex, and handmade scsi, xen, cfg80211, mac80211 formats) and
//!   an event of unknown id.
//!
//! The output is deterministic.

use std::path::PathBuf;

use tracemux_core::bytes::Endian;
use tracemux_core::model::{FieldDef, FieldFlags};
use tracemux_ftrace::format::parse_format;
use tracemux_tracedat::options::OptionId;
use tracemux_tracedat::writer::{
    BufferData, Compression, CpuStream, Event, Item, TraceFile, TraceOption,
};

mod formats;

// ids of the formats above
const ID_FUNCTION: u16 = 1;
const ID_BPRINT: u16 = 6;
const ID_KERNEL_STACK: u16 = 4;
const ID_USER_STACK: u16 = 13;
const ID_PRINT: u16 = 5;
const ID_FG_EXIT: u16 = 10;
const ID_FG_ENTRY: u16 = 11;
const ID_BPUTS: u16 = 15;
const ID_RAW_DATA: u16 = 19;
const ID_FUNC_REPEATS: u16 = 20;
const ID_WAKEUP: u16 = 3;
const ID_CONTEXT_SWITCH: u16 = 2;
const ID_SWITCH: u16 = 372;

/// Little-endian payload building.
#[derive(Default)]
struct P(Vec<u8>);

impl P {
    fn common(id: u16, flags: u8, pc: u8, pid: i32) -> P {
        let mut p = P::default();
        p.u(id as u64, 2);
        p.0.push(flags);
        p.0.push(pc);
        p.u(pid as u32 as u64, 4);
        p
    }
    fn u(&mut self, v: u64, n: usize) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes()[..n]);
        self
    }
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }
    fn pad_to(&mut self, n: usize) -> &mut Self {
        while self.0.len() % n != 0 {
            self.0.push(0);
        }
        self
    }
    fn done(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.0)
    }
}

const KALLSYMS: &str = "ffffffff81000000 T _stext\n\
ffffffff81100000 T do_syscall_64\n\
ffffffff81100400 T __x64_sys_read\n\
ffffffff81100800 T ksys_read\n\
ffffffff81100c00 T vfs_read\n\
ffffffff81101000 T rw_verify_area\n\
ffffffff81101400 T security_file_permission\n\
ffffffff81101800 T fsnotify_perm\n\
ffffffff81101c00 T __fdget_pos\n\
ffffffff81102000 T mutex_lock\n\
ffffffff81102400 T _cond_resched\n\
ffffffff81102800 T schedule\n\
ffffffff81102c00 T __schedule\n\
ffffffff81103000 T trace_event_raw_event_sched_switch\n\
ffffffff81234560 T tracing_mark_write\n\
ffffffff81300000 T kmalloc_trace\n\
ffffffff81400000 t a_very_long_function_name_that_goes_on_and_on_for_more_than_one_hundred_and_twenty_eight_characters_to_see_truncation_xyz\n\
ffffffff81500000 T trace_printk_caller\n\
ffffffff81600000 T entry_SYSCALL_64_after_hwframe\n";

const A_SYSCALL: u64 = 0xffff_ffff_8110_0000;
const A_SYS_READ: u64 = 0xffff_ffff_8110_0400;
const A_KSYS_READ: u64 = 0xffff_ffff_8110_0800;
const A_VFS_READ: u64 = 0xffff_ffff_8110_0c00;
const A_VERIFY: u64 = 0xffff_ffff_8110_1000;
const A_SECURITY: u64 = 0xffff_ffff_8110_1400;
const A_FSNOTIFY: u64 = 0xffff_ffff_8110_1800;
const A_FDGET: u64 = 0xffff_ffff_8110_1c00;
const A_MUTEX: u64 = 0xffff_ffff_8110_2000;
const A_RESCHED: u64 = 0xffff_ffff_8110_2400;
const A_SCHEDULE: u64 = 0xffff_ffff_8110_2800;
const A_LONG: u64 = 0xffff_ffff_8140_0000;
const A_PRINTK_CALLER: u64 = 0xffff_ffff_8150_0000;
/// Above every symbol: only an exact match would find it.
const A_MODULE: u64 = 0xffff_ffff_a000_1234;

const PRINTK: &str = "0xffffffff82a00000 : \"plain message\\n\"\n\
0xffffffff82a00100 : \"num=%d str=%s hex=%lx\\n\"\n\
0xffffffff82a00200 : \"ptr %pS and %ps here\\n\"\n\
0xffffffff82a00300 : \"width [%5d] [%05d] [%*d] [%.3s] [%x]\\n\"\n\
0xffffffff82a00400 : \"long %lld %llu %llx %Lx %zu %#x %#o %08lx\\n\"\n\
0xffffffff82a00500 : \"char %c pct %% short %hd\\n\"\n\
0xffffffff82a00600 : \"dev %pK name %s\\n\"\n\
0xffffffff82a00700 : \"bputs string\\n\"\n\
0xffffffff82a00800 : \"no newline %u\"\n\
0xffffffff82a00900 : \"tab\\there \\\"quoted\\\" back\\\\slash %d\\n\"\n\
0xffffffff82a00a00 : \"left [%-5d] %s\\n\"\n";

const CMDLINES: &str = "1 systemd\n42 kworker/0:1\n1234 bash\n2345 sleep\n";

/// 618.316094 s.
const T0: u64 = 618_316_094_000;

fn ev(t: u64, p: Vec<u8>) -> Item {
    Item::Event(Event::at(t, p))
}

fn function(pid: i32, flags: u8, ip: u64, parent: u64) -> Vec<u8> {
    P::common(ID_FUNCTION, flags, 1, pid)
        .u(ip, 8)
        .u(parent, 8)
        .done()
}

fn fg_entry(pid: i32, func: u64, depth: u32) -> Vec<u8> {
    P::common(ID_FG_ENTRY, 0, 0, pid)
        .u(func, 8)
        .u(depth as u64, 4)
        .pad_to(8)
        .done()
}

/// A funcgraph_exit of a call that lasted `duration` ns (every call is
/// recorded as made at 5 ms: only the duration is printed).
fn fg_exit(pid: i32, func: u64, depth: u32, duration: u64) -> Vec<u8> {
    const CALLTIME: u64 = 5_000_000;
    P::common(ID_FG_EXIT, 0, 0, pid)
        .u(func, 8)
        .u(depth as u64, 4)
        .u(0, 4)
        .u(CALLTIME, 8)
        .u(CALLTIME + duration, 8)
        .done()
}

fn stack(id: u16, pid: i32, first: u32, callers: &[u64]) -> Vec<u8> {
    let mut p = P::common(id, 0x1, 2, pid);
    p.u(first as u64, 4).u(0, 4);
    for &c in callers {
        p.u(c, 8);
    }
    p.done()
}

/// A wakeup or context_switch (both `struct ctx_switch_entry`) by
/// `prev_pid` (in state `state`), both tasks at priority 120.
fn ctx_switch(id: u16, prev_pid: u64, next_pid: u64, next_cpu: u64, state: u8) -> Vec<u8> {
    P::common(id, 0, 0, prev_pid as i32)
        .u(prev_pid, 4)
        .u(next_pid, 4)
        .u(next_cpu, 4)
        .bytes(&[120, state, 120, 0])
        .done()
}

fn bprint(pid: i32, fmt: u64, args: &[u8]) -> Vec<u8> {
    P::common(ID_BPRINT, 0, 0, pid)
        .u(A_PRINTK_CALLER + 0x24, 8)
        .u(fmt, 8)
        .bytes(args)
        .done()
}

/// The kallsyms, printk formats, command lines and options of the
/// synthetic system the fixtures built from scratch here were "recorded" on.
fn synthetic_system(f: &mut TraceFile) {
    f.kallsyms = KALLSYMS.as_bytes().to_vec();
    f.printk = PRINTK.as_bytes().to_vec();
    f.cmdlines = CMDLINES.as_bytes().to_vec();
    f.options = vec![
        TraceOption::trace_clock("local"),
        TraceOption::text(OptionId::UNAME, "Linux synth 6.18.0-synthetic x86_64"),
        TraceOption::text(OptionId::VERSION, "3.1.6 tracemux-synthetic"),
    ];
}

fn ftrace_fixture() -> TraceFile {
    let mut f = TraceFile::new(7, Endian::Little);
    f.cpus = 2;
    f.ftrace_formats = [
        "function",
        "funcgraph_entry",
        "funcgraph_exit",
        "kernel_stack",
        "user_stack",
        "bprint",
        "bputs",
        "print",
        "raw_data",
        "func_repeats",
        "wakeup",
        "context_switch",
    ]
    .iter()
    .map(|n| formats::text(&format!("ftrace_{n}")).into_bytes())
    .collect();
    f.systems = vec![(
        "sched".to_string(),
        vec![formats::text("sched_sched_switch").into_bytes()],
    )];
    synthetic_system(&mut f);

    // CPU 0: function tracing, stacks, trace_printk and friends
    let mut c0 = Vec::new();
    let mut t = T0;
    let mut at = |step: u64| {
        t += step;
        t
    };
    let fns = [
        (A_KSYS_READ, A_SYS_READ),
        (A_VFS_READ, A_KSYS_READ),
        (A_VERIFY, A_VFS_READ),
        (A_SECURITY, A_VERIFY),
        (A_FSNOTIFY, A_SECURITY),
        (A_FDGET, A_KSYS_READ),
        (A_MUTEX, A_FDGET),
        (A_RESCHED, A_MUTEX),
        (A_VFS_READ, A_KSYS_READ),
        (A_VERIFY, A_VFS_READ),
        (A_MODULE, A_VERIFY),
        (A_SECURITY, 0x0040_1000),
        (A_FSNOTIFY, A_SECURITY),
        (A_LONG, A_FSNOTIFY),
        (A_SCHEDULE, A_LONG),
        (A_SYSCALL + 0x49, A_SCHEDULE + 0x1f),
        (A_MUTEX, A_MODULE),
    ];
    for (i, &(ip, parent)) in fns.iter().enumerate() {
        c0.push(ev(at(700), function(1234, (i % 4) as u8 * 3, ip, parent)));
    }
    c0.push(ev(
        at(900),
        stack(
            ID_KERNEL_STACK,
            1234,
            5,
            &[
                A_SCHEDULE + 0x20,
                A_MUTEX + 0x1c,
                A_MODULE,
                0x0000_7fff_1234_5678,
                A_SYSCALL + 0x7f,
                u64::MAX,
                0,
                0,
            ],
        ),
    ));
    c0.push(ev(
        at(900),
        stack(
            ID_KERNEL_STACK,
            1234,
            8,
            &[
                A_SCHEDULE,
                A_MUTEX,
                A_VFS_READ + 1,
                A_KSYS_READ,
                A_SYS_READ,
                A_SYSCALL,
                A_LONG + 0x10,
                0xffff_ffff_8160_0000,
            ],
        ),
    ));
    c0.push(ev(
        at(900),
        stack(
            ID_KERNEL_STACK,
            2345,
            3,
            &[A_SCHEDULE, 0x1234_5678_ffff_ffff, A_MUTEX, 0, 0, 0, 0, 0],
        ),
    ));
    c0.push(ev(
        at(900),
        stack(
            ID_USER_STACK,
            2345,
            2345,
            &[0x5555_5555_1234, 0x7f00_0000_1000, A_MUTEX, 0, 0, 0, 0, 0],
        ),
    ));
    // trace_printk: every argument kind, then the formats libtraceevent
    // cannot pair with their arguments (which mark bprint failed for good)
    let mut args = P::default();
    args.u((-42i32) as u32 as u64, 4)
        .bytes(b"hello\0")
        .pad_to(4)
        .u(0xdead_beef, 8);
    c0.push(ev(
        at(800),
        bprint(1234, 0xffff_ffff_82a0_0100, &args.done()),
    ));
    c0.push(ev(at(800), bprint(1234, 0xffff_ffff_82a0_0000, &[])));
    args.u(A_VFS_READ + 0x33, 8).u(A_MODULE, 8);
    c0.push(ev(at(800), bprint(42, 0xffff_ffff_82a0_0200, &args.done())));
    args.u(7, 4)
        .u(7, 4)
        .u(6, 4)
        .u(3, 4)
        .bytes(b"abcdef\0")
        .pad_to(4)
        .u(0xabc, 4);
    c0.push(ev(at(800), bprint(42, 0xffff_ffff_82a0_0300, &args.done())));
    args.u((-5i64) as u64, 8)
        .u(u64::MAX, 8)
        .u(0x1234_5678_9abc, 8)
        .u(0xfeed, 8)
        .u(77, 8)
        .u(255, 4)
        .u(8, 4)
        .u(0x42, 8);
    c0.push(ev(at(800), bprint(1, 0xffff_ffff_82a0_0400, &args.done())));
    args.bytes(b"secret\0").pad_to(4).bytes(b"disk\0").pad_to(4);
    c0.push(ev(at(800), bprint(1, 0xffff_ffff_82a0_0600, &args.done())));
    args.u(0x0102_0304, 8).bytes(b"disk\0").pad_to(4);
    c0.push(ev(at(800), bprint(1, 0xffff_ffff_82a0_0600, &args.done())));
    args.u(99, 4);
    c0.push(ev(at(800), bprint(1, 0xffff_ffff_82a0_0800, &args.done())));
    args.u(5, 4);
    c0.push(ev(at(800), bprint(1, 0xffff_ffff_82a0_0900, &args.done())));
    args.u(5, 4);
    c0.push(ev(at(800), bprint(1, 0xffff_ffff_82a0_7777, &args.done())));
    // bputs: a printk string, an unknown address
    for addr in [0xffff_ffff_82a0_0700u64, 0xffff_ffff_82a0_0800, 0x1234] {
        c0.push(ev(
            at(600),
            P::common(ID_BPUTS, 0, 0, 1234)
                .u(A_PRINTK_CALLER + 8, 8)
                .u(addr, 8)
                .done(),
        ));
    }
    // print: one line, no newline, two lines
    for text in [&b"marker one\n\0"[..], b"no newline\0", b"two\nlines\n\0"] {
        c0.push(ev(
            at(600),
            P::common(ID_PRINT, 0, 0, 2345)
                .u(0xffff_ffff_8123_4560, 8)
                .bytes(text)
                .done(),
        ));
    }
    // raw_data: various lengths
    for (id, data) in [
        (0x2au64, &b"raw-marker-payload\0"[..]),
        (7, b"\x01\x02\x03"),
        (0, b""),
    ] {
        c0.push(ev(
            at(600),
            P::common(ID_RAW_DATA, 0, 0, 2345)
                .u(id, 4)
                .bytes(data)
                .done(),
        ));
    }
    // func_repeats
    for (count, top, bottom) in [(3u64, 0u64, 1500u64), (12, 1, 20), (1, 0, 999_999_999)] {
        c0.push(ev(
            at(5_000),
            P::common(ID_FUNC_REPEATS, 0, 0, 1234)
                .u(A_MUTEX, 8)
                .u(A_FDGET + 0x10, 8)
                .u(count, 2)
                .u(top, 2)
                .u(bottom, 4)
                .done(),
        ));
    }
    // old-style ftrace events with plain print fmts
    c0.push(ev(at(700), ctx_switch(ID_WAKEUP, 0, 1234, 1, 1)));
    c0.push(ev(at(700), ctx_switch(ID_CONTEXT_SWITCH, 1234, 0, 0, 2)));
    // the last bprint formats: "%hd" and "%-5d" get no argument from
    // libtraceevent's decoding; the event is then failed for good
    args.u(3, 4);
    c0.push(ev(at(800), bprint(1, 0xffff_ffff_82a0_0500, &args.done())));
    args.u(3, 4).bytes(b"x\0").pad_to(4);
    c0.push(ev(at(800), bprint(1, 0xffff_ffff_82a0_0a00, &args.done())));
    args.u(1, 4).bytes(b"y\0").pad_to(4).u(2, 8);
    c0.push(ev(at(800), bprint(1, 0xffff_ffff_82a0_0100, &args.done())));

    // CPU 1: a function graph of pid 1234, with leaves and nesting
    let mut c1 = Vec::new();
    let mut t = T0 + 100;
    let mut at1 = |step: u64| {
        t += step;
        t
    };
    c1.push(ev(at1(1_000), fg_entry(1234, A_SYSCALL, 0)));
    c1.push(ev(at1(300), fg_entry(1234, A_KSYS_READ, 1)));
    c1.push(ev(at1(300), fg_entry(1234, A_FDGET, 2)));
    c1.push(ev(at1(300), fg_exit(1234, A_FDGET, 2, 450)));
    c1.push(ev(at1(300), fg_entry(1234, A_VFS_READ, 2)));
    c1.push(ev(at1(300), fg_entry(1234, A_VERIFY, 3)));
    c1.push(ev(at1(300), fg_exit(1234, A_VERIFY, 3, 15_001)));
    c1.push(ev(at1(300), fg_entry(1234, A_SECURITY, 3)));
    // the next record is another task's: not a leaf
    c1.push(ev(at1(300), fg_entry(2345, A_SECURITY, 0)));
    c1.push(ev(at1(300), fg_exit(1234, A_SECURITY, 3, 150_000)));
    c1.push(ev(at1(300), fg_exit(2345, A_SECURITY, 0, 100)));
    // the next record is the return of another function: not a leaf
    c1.push(ev(at1(300), fg_entry(1234, A_MUTEX, 3)));
    c1.push(ev(at1(300), fg_exit(1234, A_RESCHED, 3, 2_000_000)));
    c1.push(ev(at1(300), fg_exit(1234, A_MUTEX, 3, 2_500_000)));
    c1.push(ev(at1(300), fg_entry(1234, A_MODULE, 3)));
    c1.push(ev(at1(300), fg_exit(1234, A_MODULE, 3, 9)));
    c1.push(ev(at1(300), fg_entry(1234, 0xffff_ffff_c000_0000, 3)));
    c1.push(ev(
        at1(300),
        fg_exit(1234, 0xffff_ffff_c000_0000, 3, 999_999),
    ));
    c1.push(ev(at1(300), fg_exit(1234, A_VFS_READ, 2, 20_000_000)));
    // a leaf whose return comes after an event of CPU 0 in time
    c1.push(ev(at1(300), fg_entry(1234, A_RESCHED, 2)));
    c1.push(ev(at1(7_000), fg_exit(1234, A_RESCHED, 2, 7_000)));
    c1.push(ev(at1(300), fg_exit(1234, A_KSYS_READ, 1, 123_456_789)));
    c1.push(ev(at1(300), fg_exit(1234, A_SYSCALL, 0, 12_345_678_901)));
    // deep nesting, and an entry at the very end (nothing follows it)
    for d in 0..12u32 {
        c1.push(ev(at1(100), fg_entry(1234, A_SCHEDULE, d)));
    }
    c1.push(ev(at1(100), fg_entry(1234, A_LONG, 12)));
    c1.push(ev(at1(100), fg_exit(1234, A_LONG, 12, 1)));

    let mut top = BufferData::new("", "local");
    top.cpus = vec![
        CpuStream { cpu: 0, items: c0 },
        CpuStream { cpu: 1, items: c1 },
    ];

    // an instance with a function graph: its entries look ahead in the
    // instance only, whatever the top buffer has in between
    let mut i0 = Vec::new();
    let mut t = T0 + 1_050;
    let mut at2 = |step: u64| {
        t += step;
        t
    };
    i0.push(ev(at2(0), fg_entry(42, A_VFS_READ, 0)));
    i0.push(ev(at2(900), fg_exit(42, A_VFS_READ, 0, 900)));
    i0.push(ev(at2(100), fg_entry(42, A_VERIFY, 0)));
    i0.push(ev(at2(2_000), fg_exit(42, A_VERIFY, 0, 30)));
    i0.push(ev(
        at2(100),
        P::common(ID_SWITCH, 0x1, 1, 42)
            .bytes(b"kworker/0:1\0\0\0\0\0")
            .u(42, 4)
            .u(120, 4)
            .u(0x1, 8)
            .bytes(b"newtask\0\0\0\0\0\0\0\0\0")
            .u(777, 4)
            .u(120, 4)
            .done(),
    ));
    i0.push(ev(at2(100), fg_entry(777, A_MUTEX, 0)));
    i0.push(ev(at2(100), fg_exit(777, A_MUTEX, 0, 50)));
    let mut inst = BufferData::new("inst", "local");
    inst.cpus = vec![CpuStream { cpu: 0, items: i0 }];
    f.set_buffers(vec![top, inst]);
    f
}

// -- every event format of a real kernel --------------------------------------

/// xorshift64*
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// What the records point at.
struct Pools {
    syms: Vec<u64>,
    printk: Vec<u64>,
}

fn put(v: &mut [u8], off: usize, x: u64, n: usize, e: Endian) {
    let b = match e {
        Endian::Little => x.to_le_bytes()[..n].to_vec(),
        Endian::Big => x.to_be_bytes()[8 - n..].to_vec(),
    };
    if let Some(d) = v.get_mut(off..off + n) {
        d.copy_from_slice(&b);
    }
}

fn word_value(f: &FieldDef, rng: &mut Rng, pools: &Pools, event: &str) -> u64 {
    let n = f.name.as_str();
    let ty = f.type_name.as_str();
    let size = f.size;
    // lengths that index into the record stay small
    if event == "kvm_emulate_insn" && n == "len" {
        return 1 + rng.below(15);
    }
    let pointerish = f.flags.has(FieldFlags::POINTER)
        || n.contains("ip")
        || n.contains("func")
        || n.contains("call_site")
        || n.contains("caller")
        || n.contains("function")
        || n.contains("addr")
        || n.contains("location");
    if size == 8 && pointerish {
        return match rng.below(8) {
            0 => 0,
            1 => pools.printk[rng.below(pools.printk.len() as u64) as usize],
            2 => 0x0000_7ffd_0000_0000 + rng.below(1 << 20) * 8,
            _ => pools.syms[rng.below(pools.syms.len() as u64) as usize] + rng.below(3) * 0x11,
        };
    }
    if n.contains("flags") || n.contains("gfp") || n.contains("mask") || ty.contains("flags") {
        let bits = size.min(4) * 8;
        let v = rng.next() & rng.next();
        return if bits >= 64 {
            v
        } else {
            v & ((1u64 << bits) - 1)
        };
    }
    if n.contains("pid") {
        return [0u64, 1, 42, 1234, 2345, 31337][rng.below(6) as usize];
    }
    match rng.below(10) {
        0 => 0,
        1 => 1,
        2 if f.flags.has(FieldFlags::SIGNED) => (-(1 + rng.below(20) as i64)) as u64,
        3 => rng.below(256),
        _ => rng.below(16),
    }
}

/// One record of `f` (id `id`), the dynamic data after the fixed part.
fn record(
    id: u32,
    common: &[FieldDef],
    fields: &[FieldDef],
    event: &str,
    rng: &mut Rng,
    pools: &Pools,
    e: Endian,
) -> Vec<u8> {
    let fixed = common
        .iter()
        .chain(fields)
        .map(|f| (f.offset + f.size) as usize)
        .max()
        .unwrap_or(8);
    let mut v = vec![0u8; fixed];
    for f in common {
        let x = match f.name.as_str() {
            "common_type" => id as u64,
            "common_flags" => rng.below(0x20),
            "common_preempt_count" => [0u64, 1, 2, 0x11, 0x21][rng.below(5) as usize],
            "common_pid" => [0u64, 1, 42, 1234, 2345, 31337][rng.below(6) as usize],
            _ => rng.below(4),
        };
        put(&mut v, f.offset as usize, x, f.size.min(8) as usize, e);
    }
    let mut dynamic: Vec<(usize, u32, Vec<u8>, bool)> = Vec::new();
    for f in fields {
        let off = f.offset as usize;
        let fl = f.flags;
        if fl.has(FieldFlags::DYNAMIC) {
            let content = if fl.has(FieldFlags::STRING) || f.type_name.contains("char") {
                let words = ["sda", "eth0", "kworker", "", "a-longer-string-value", "x"];
                let mut s = words[rng.below(words.len() as u64) as usize]
                    .as_bytes()
                    .to_vec();
                s.push(0);
                s
            } else {
                let n = [4usize, 8, 16, 28][rng.below(4) as usize];
                let mut b: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                if n >= 16 && rng.below(2) == 0 {
                    // a sockaddr: AF_INET or AF_INET6 (host byte order)
                    b[0] = if n == 28 { 10 } else { 2 };
                    b[1] = 0;
                }
                b
            };
            dynamic.push((off, f.size, content, fl.has(FieldFlags::RELATIVE)));
            continue;
        }
        if fl.has(FieldFlags::ARRAY) {
            let len = f.size as usize;
            if fl.has(FieldFlags::STRING) {
                let words = ["bash", "kworker/0:1", "swapper/1", "", "a"];
                let s = words[rng.below(words.len() as u64) as usize].as_bytes();
                let n = s.len().min(len.saturating_sub(1));
                v[off..off + n].copy_from_slice(&s[..n]);
            } else if f.elem_size == 8 && len >= 8 {
                for k in 0..len / 8 {
                    let x = word_value(f, rng, pools, event);
                    put(&mut v, off + k * 8, x, 8, e);
                }
            } else {
                for k in 0..len {
                    v[off + k] = rng.next() as u8;
                }
            }
            continue;
        }
        if matches!(f.size, 1 | 2 | 4 | 8) {
            let x = word_value(f, rng, pools, event);
            put(&mut v, off, x, f.size as usize, e);
        }
    }
    for (off, size, content, rel) in dynamic {
        while v.len() % 4 != 0 {
            v.push(0);
        }
        let at = v.len();
        let len = content.len();
        v.extend_from_slice(&content);
        let start = if rel { at - (off + size as usize) } else { at };
        let loc = if size == 2 {
            start as u64
        } else {
            ((len as u64) << 16) | start as u64
        };
        put(&mut v, off, loc, size.min(4) as usize, e);
    }
    v
}

fn allevents(src: &[u8], e: Endian) -> TraceFile {
    let t = tracemux_tracedat::TraceDat::parse(src, false).expect("formats trace parses");
    let mut f = TraceFile::new(7, e);
    f.cpus = 2;
    f.compression = Compression::Zstd;
    tracemux_tracedat::convert::copy_event_formats(&t, &mut f);
    // part of kallsyms: every 300th text symbol
    let mut ks = String::new();
    let mut syms = Vec::new();
    for (i, line) in String::from_utf8_lossy(&t.kallsyms).lines().enumerate() {
        let mut it = line.split_whitespace();
        let (Some(a), Some(k), Some(_)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        if !matches!(k, "T" | "t") || i % 300 != 0 {
            continue;
        }
        if let Ok(addr) = u64::from_str_radix(a, 16) {
            syms.push(addr);
            ks.push_str(line);
            ks.push('\n');
        }
    }
    f.kallsyms = ks.into_bytes();
    f.printk = t.printk.to_vec();
    let printk: Vec<u64> = String::from_utf8_lossy(&t.printk)
        .lines()
        .filter_map(|l| l.split(':').next())
        .filter_map(|a| u64::from_str_radix(a.trim().trim_start_matches("0x"), 16).ok())
        .collect();
    f.cmdlines = CMDLINES.as_bytes().to_vec();
    f.options = vec![
        TraceOption::trace_clock("local"),
        TraceOption::text(OptionId::UNAME, "Linux synth 6.18.0-synthetic x86_64"),
        TraceOption::text(OptionId::VERSION, "3.1.6 tracemux-synthetic"),
    ];
    let pools = Pools { syms, printk };
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut cpus = [Vec::new(), Vec::new()];
    let mut ts = T0;
    let mut formats: Vec<(String, &[u8])> = Vec::new();
    for c in &t.ftrace_formats {
        formats.push(("ftrace".into(), c));
    }
    for (s, v) in &t.systems {
        for c in v {
            formats.push((s.clone(), c));
        }
    }
    for round in 0..2 {
        for (k, (sys, text)) in formats.iter().enumerate() {
            let text = String::from_utf8_lossy(text);
            let Ok(fm) = parse_format(&text, 8, sys == "ftrace") else {
                continue;
            };
            // function graph records would pair up with each other
            if sys == "ftrace" && fm.name.starts_with("funcgraph") {
                continue;
            }
            let p = record(
                fm.id,
                &fm.common_fields,
                &fm.fields,
                &fm.name,
                &mut rng,
                &pools,
                e,
            );
            ts += 1_000 + rng.below(5_000);
            cpus[(k + round) % 2].push(ev(ts, p));
        }
    }
    let mut top = BufferData::new("", "local");
    let [a, b] = cpus;
    top.cpus = vec![
        CpuStream { cpu: 0, items: a },
        CpuStream { cpu: 1, items: b },
    ];
    f.set_buffers(vec![top]);
    f
}

// -- plugin handlers and helper functions, with chosen values ------------------

const COMMON_FIELDS: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n";

/// A format file from `TYPE NAME;OFFSET;SIZE;SIGNED` specs.
fn format_text(name: &str, id: u32, fields: &[&str], print_fmt: &str) -> Vec<u8> {
    let mut t = format!("name: {name}\nID: {id}\nformat:\n{COMMON_FIELDS}\n");
    for f in fields {
        let v: Vec<&str> = f.split(';').collect();
        t.push_str(&format!(
            "\tfield:{};\toffset:{};\tsize:{};\tsigned:{};\n",
            v[0], v[1], v[2], v[3]
        ));
    }
    t.push_str(&format!("\nprint fmt: {print_fmt}\n"));
    t.into_bytes()
}

/// A record of a parsed format: named scalars and strings/byte arrays set,
/// the rest zero. `__data_loc` contents go after the fixed part.
fn build(
    fm: &tracemux_ftrace::format::EventFormat,
    pid: i32,
    flags: u8,
    vals: &[(&str, u64)],
    bytes: &[(&str, &[u8])],
) -> Vec<u8> {
    let e = Endian::Little;
    let fixed = fm
        .common_fields
        .iter()
        .chain(&fm.fields)
        .map(|f| (f.offset + f.size) as usize)
        .max()
        .unwrap_or(8);
    let mut v = vec![0u8; fixed];
    put(&mut v, 0, fm.id as u64, 2, e);
    v[2] = flags;
    v[3] = 1;
    put(&mut v, 4, pid as u32 as u64, 4, e);
    for f in &fm.fields {
        let off = f.offset as usize;
        if let Some((_, x)) = vals.iter().find(|(n, _)| *n == f.name) {
            put(&mut v, off, *x, f.size.min(8) as usize, e);
        }
        if let Some((_, b)) = bytes.iter().find(|(n, _)| *n == f.name) {
            if f.flags.has(FieldFlags::DYNAMIC) {
                while v.len() % 4 != 0 {
                    v.push(0);
                }
                let at = v.len();
                v.extend_from_slice(b);
                let start = if f.flags.has(FieldFlags::RELATIVE) {
                    at - (off + f.size as usize)
                } else {
                    at
                };
                put(&mut v, off, ((b.len() as u64) << 16) | start as u64, 4, e);
            } else {
                let n = b.len().min(f.size as usize);
                v[off..off + n].copy_from_slice(&b[..n]);
            }
        }
    }
    v
}

fn plugins(src: &[u8]) -> TraceFile {
    let t = tracemux_tracedat::TraceDat::parse(src, false).expect("formats trace parses");
    let find = |sys: &str, name: &str| -> Vec<u8> {
        let (_, v) = t.systems.iter().find(|(s, _)| s == sys).expect("system");
        v.iter()
            .find(|c| {
                String::from_utf8_lossy(c)
                    .lines()
                    .next()
                    .is_some_and(|l| l == format!("name: {name}"))
            })
            .unwrap_or_else(|| panic!("{sys}:{name}"))
            .to_vec()
    };
    let mut systems: Vec<(String, Vec<Vec<u8>>)> = vec![
        (
            "sched".into(),
            vec![
                find("sched", "sched_switch"),
                find("sched", "sched_wakeup"),
                format_text(
                    "sched_wakeup_new",
                    906,
                    &[
                        "char comm[16];8;16;0",
                        "pid_t pid;24;4;1",
                        "int prio;28;4;1",
                        "int success;32;4;1",
                        "int target_cpu;36;4;1",
                    ],
                    "\"comm=%s pid=%d\", REC->comm, REC->pid",
                ),
            ],
        ),
        (
            "kvm".into(),
            vec![
                find("kvm", "kvm_exit"),
                find("kvm", "kvm_entry"),
                find("kvm", "kvm_emulate_insn"),
            ],
        ),
        (
            "kvmmmu".into(),
            vec![
                find("kvmmmu", "kvm_mmu_get_page"),
                find("kvmmmu", "kvm_mmu_sync_page"),
                format_text(
                    "kvm_test_pte",
                    904,
                    &["u64 spte;8;8;0"],
                    "\"spte %llx writable %d\", REC->spte, is_writable_pte(REC->spte)",
                ),
            ],
        ),
        (
            "kmem".into(),
            vec![find("kmem", "kmalloc"), find("kmem", "kfree")],
        ),
        ("tlb".into(), vec![find("tlb", "tlb_flush")]),
        ("syscalls".into(), vec![find("syscalls", "sys_enter_futex")]),
        (
            "scsi".into(),
            vec![format_text(
                "scsi_dispatch_cmd_start",
                901,
                &["unsigned int cmd_len;8;4;0", "__data_loc unsigned char[] cmnd;12;4;0"],
                "\"cmnd=(%s raw=%s)\", scsi_trace_parse_cdb(p, __get_dynamic_array(cmnd), REC->cmd_len), __print_hex(__get_dynamic_array(cmnd), REC->cmd_len)",
            )],
        ),
        (
            "xen".into(),
            vec![format_text(
                "xen_mc_entry",
                902,
                &["unsigned int op;8;4;0", "unsigned int nargs;12;4;0"],
                "\"op %u%s, nargs %u\", REC->op, xen_hypercall_name(REC->op), REC->nargs",
            )],
        ),
        (
            "cfg80211".into(),
            vec![format_text(
                "rdev_test_le16",
                903,
                &["__data_loc u8[] buf;8;4;0"],
                "\"val=%d cast=%d\", __le16_to_cpup(__get_dynamic_array(buf)), __le16_to_cpup((__le16 *)__get_dynamic_array(buf))",
            )],
        ),
        (
            "mac80211".into(),
            vec![format_text(
                "drv_bss_info_changed",
                905,
                &[
                    "__data_loc char[] wiphy_name;8;4;0",
                    "__data_loc char[] vif_name;12;4;0",
                    "int vif_type;16;4;1",
                    "bool assoc;20;1;0",
                    "u16 aid;22;2;0",
                    "bool cts;24;1;0",
                    "bool shortpre;25;1;0",
                    "bool shortslot;26;1;0",
                    "u8 dtimper;27;1;0",
                    "u16 bcnint;28;2;0",
                    "u16 assoc_cap;30;2;0",
                    "u32 basic_rates;32;4;0",
                    "bool enable_beacon;36;1;0",
                    "u16 ht_operation_mode;38;2;0",
                ],
                "\"%s vif:%s\", __get_str(wiphy_name), __get_str(vif_name)",
            )],
        ),
    ];
    systems.sort_by(|a, b| a.0.cmp(&b.0));
    let parse =
        |text: &[u8]| parse_format(&String::from_utf8_lossy(text), 8, false).expect("format");
    let fmts: Vec<tracemux_ftrace::format::EventFormat> = systems
        .iter()
        .flat_map(|(_, v)| v.iter().map(|t| parse(t)))
        .collect();
    let fm = |name: &str| fmts.iter().find(|f| f.name == name).expect("format");

    let mut f = TraceFile::new(7, Endian::Little);
    f.cpus = 1;
    f.systems = systems;
    synthetic_system(&mut f);
    let mut items = Vec::new();
    let mut ts = T0;
    let mut add = |p: Vec<u8>| {
        ts += 1_000;
        items.push(ev(ts, p));
    };
    // comms registered before libtraceevent sorts its cmdline list: the
    // first event has pid 0, whose comm needs no lookup
    let switch = |pid: i32, prev: (&[u8], u64), state: u64, next: (&[u8], u64)| {
        build(
            fm("sched_switch"),
            pid,
            0x1,
            &[
                ("prev_pid", prev.1),
                ("prev_prio", 120),
                ("prev_state", state),
                ("next_pid", next.1),
                ("next_prio", 98),
            ],
            &[("prev_comm", prev.0), ("next_comm", next.0)],
        )
    };
    add(switch(0, (b"swapper/0", 0), 0, (b"renamed", 1234)));
    add(switch(0, (b"swapper/0", 0), 0, (b"early-task", 5555)));
    add(build(
        fm("kfree"),
        1234,
        0,
        &[("call_site", A_MUTEX + 0x40), ("ptr", 0x1000)],
        &[],
    ));
    add(build(
        fm("kfree"),
        5555,
        0,
        &[("call_site", 0x1234), ("ptr", 0)],
        &[],
    ));
    add(switch(
        5555,
        (b"early-task", 5555),
        0x402,
        (b"late-task", 6666),
    ));
    add(build(
        fm("sched_wakeup"),
        6666,
        0x3,
        &[("pid", 7777), ("prio", 100), ("target_cpu", 3)],
        &[("comm", b"wakee-with-a-long-name")],
    ));
    add(build(
        fm("sched_wakeup_new"),
        7777,
        0x3,
        &[
            ("pid", 8888),
            ("prio", 120),
            ("success", 1),
            ("target_cpu", 0),
        ],
        &[("comm", b"newborn")],
    ));
    add(switch(
        8888,
        (b"newborn", 8888),
        0x81,
        (b"bash-renamed", 1234),
    ));
    add(switch(1234, (b"x", 1234), 0x100, (b"y", 0)));
    for (isa, reason, rip) in [
        (1u64, 12u64, A_VFS_READ + 4),
        (2, 0x7c, 0x7f00_1234),
        (1, 99, 0),
        (2, 0xffff_ffff, 1),
        (3, 1, 2),
    ] {
        add(build(
            fm("kvm_exit"),
            2345,
            0,
            &[
                ("exit_reason", reason),
                ("isa", isa),
                ("guest_rip", rip),
                ("info1", 0x11),
                ("info2", 0x22),
                ("vcpu_id", 1),
            ],
            &[],
        ));
    }
    add(build(
        fm("kvm_entry"),
        2345,
        0,
        &[("vcpu_id", 3), ("rip", A_SCHEDULE)],
        &[],
    ));
    add(build(
        fm("kvm_emulate_insn"),
        2345,
        0,
        &[
            ("rip", 0xfff0),
            ("csbase", 0xf0000),
            ("len", 3),
            ("flags", 1),
            ("failed", 0),
        ],
        &[("insn", b"\x0f\x01\xd9")],
    ));
    for (role, unsync, created) in [
        (0x0000_0c93u64, 1u64, 1u64),
        (0x0100_f7ff, 0, 0),
        (0x0000_0000, 1, 0),
    ] {
        add(build(
            fm("kvm_mmu_get_page"),
            2345,
            0,
            &[
                ("gfn", 0x1234),
                ("role", role),
                ("root_count", 2),
                ("unsync", unsync),
                ("created", created),
            ],
            &[],
        ));
        add(build(
            fm("kvm_mmu_sync_page"),
            2345,
            0,
            &[
                ("gfn", 0x99),
                ("role", role),
                ("root_count", 7),
                ("unsync", unsync),
            ],
            &[],
        ));
    }
    add(build(
        fm("kvm_test_pte"),
        2345,
        0,
        &[("spte", 0x8000_0000_0000_0003)],
        &[],
    ));
    add(build(
        fm("kmalloc"),
        1234,
        0,
        &[
            ("call_site", A_MUTEX + 0x40),
            ("ptr", 0x1000),
            ("bytes_req", 24),
            ("bytes_alloc", 32),
            ("gfp_flags", 0xcc0),
        ],
        &[],
    ));
    for reason in [0u64, 1, 2, 3, 7] {
        add(build(
            fm("tlb_flush"),
            1234,
            0,
            &[("reason", reason), ("pages", u64::MAX)],
            &[],
        ));
    }
    for op in [0x80u64, 4, 5, 9 | 0x100, 1, 6, 13, 0x8b] {
        add(build(
            fm("sys_enter_futex"),
            1234,
            0,
            &[
                ("uaddr", 0x7ffd_1234_5678),
                ("op", op),
                ("val", 3),
                ("utime", 0x7ffd_0000_1000),
                ("uaddr2", 0x7ffd_0000_2000),
                ("val3", 0xffff_ffff),
            ],
            &[],
        ));
    }
    let cdbs: [&[u8]; 8] = [
        b"\x28\x00\x81\x02\x03\x04\x00\x00\x08\x00",
        b"\x08\x1f\x02\x03\x10\x00",
        b"\x41\x08\x00\x00\x00\x10\x00\x00\x01\x00",
        b"\x88\x20\x00\x00\x00\x01\x80\x00\x00\x01\x00\x00\x01\x00\x00\x00",
        b"\x42\x00\x00\x00\x00\x00\x00\x00\x18\x00",
        b"\x9e\x10\x00\x00\x00\x00\x00\x00\x00\x10\x00\x00\x02\x00\x00\x00",
        b"\x7f\x00\x00\x00\x00\x00\x00\x18\x00\x0d\x40\x00\x00\x00\x00\x00\x00\x00\x00\x10\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x08",
        b"\x12\x00\x00\x00\x24\x00",
    ];
    for cdb in cdbs {
        add(build(
            fm("scsi_dispatch_cmd_start"),
            42,
            0,
            &[("cmd_len", cdb.len() as u64)],
            &[("cmnd", cdb)],
        ));
    }
    for op in [0u64, 11, 13, 24, 40, 55, 99] {
        add(build(
            fm("xen_mc_entry"),
            42,
            0,
            &[("op", op), ("nargs", 2)],
            &[],
        ));
    }
    add(build(
        fm("rdev_test_le16"),
        42,
        0,
        &[],
        &[("buf", b"\x34\x12")],
    ));
    add(build(
        fm("drv_bss_info_changed"),
        42,
        0,
        &[
            ("vif_type", 2),
            ("assoc", 1),
            ("aid", 7),
            ("dtimper", 3),
            ("bcnint", 100),
            ("assoc_cap", 0x431),
            ("basic_rates", 0),
            ("enable_beacon", 1),
            ("ht_operation_mode", 0xffff),
        ],
        &[("wiphy_name", b"phy0\0"), ("vif_name", b"wlan0\0")],
    ));
    // an event id no format has
    let mut unknown = build(fm("kfree"), 1234, 0, &[], &[]);
    unknown[0] = 0xe7;
    unknown[1] = 0x03;
    add(unknown);
    add(switch(1234, (b"bash", 1234), 0, (b"early-task", 5555)));

    let mut top = BufferData::new("", "local");
    top.cpus = vec![CpuStream { cpu: 0, items }];
    f.set_buffers(vec![top]);
    f
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(out) = args.next() else {
        eprintln!("usage: make_pretty_fixtures OUT_DIR [FORMATS_TRACE]");
        std::process::exit(2);
    };
    let mut fixtures = vec![("ftrace-v7".to_string(), ftrace_fixture())];
    if let Some(src) = args.next() {
        let data = std::fs::read(&src).expect("read the formats trace");
        fixtures.push(("allevents-v7".into(), allevents(&data, Endian::Little)));
        fixtures.push(("allevents-be-v7".into(), allevents(&data, Endian::Big)));
        fixtures.push(("plugins-v7".into(), plugins(&data)));
    }
    for (name, f) in fixtures {
        let dir = PathBuf::from(&out).join(&name);
        std::fs::create_dir_all(&dir).expect("create directory");
        let bytes = f.to_bytes().unwrap_or_else(|e| panic!("{name}: {e}"));
        std::fs::write(dir.join("trace.dat"), &bytes).expect("write trace.dat");
        println!("{name}: {} bytes", bytes.len());
    }
}
