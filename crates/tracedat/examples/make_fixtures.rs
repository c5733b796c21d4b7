//! Writes the synthetic trace.dat fixtures of `tests/fixtures/synthetic/`
//! with `tracemux_tracedat::writer`: layouts the recording machine cannot
//! produce (big-endian, 32-bit, other page sizes, latency, time options,
//! every ring-buffer record type, instances in v6).
//!
//! ```sh
//! cargo run -p tracemux-tracedat --example make_fixtures -- OUT_DIR [NAME...]
//! ```
//!
//! writes `OUT_DIR/<name>/trace.dat` for every fixture (or the named ones).
//! The output is deterministic. The event formats in `examples/formats/`
//! are copied from a real recording (kernel 6.18, x86_64).

use std::path::PathBuf;

use tracemux_core::bytes::Endian;
use tracemux_tracedat::options::{OptionId, TimeShift, TimeShiftCpu, Tsc2Nsec};
use tracemux_tracedat::writer::{
    BufferData, Compression, CpuStream, Event, Item, Missed, TraceData, TraceFile, TraceOption,
};

mod formats;

const ID_PRINT: u16 = 5;
const ID_IRQ_EXIT: u16 = 224;
const ID_IRQ_ENTRY: u16 = 225;
const ID_SWITCH: u16 = 372;
const ID_WAKEUP: u16 = 374;

/// Encodes event payloads for one endianness and `long` size.
#[derive(Clone, Copy)]
struct Enc {
    e: Endian,
    long: usize,
}

impl Enc {
    fn put(&self, v: &mut Vec<u8>, x: u64, n: usize) {
        match self.e {
            Endian::Little => v.extend_from_slice(&x.to_le_bytes()[..n]),
            Endian::Big => v.extend_from_slice(&x.to_be_bytes()[8 - n..]),
        }
    }
    fn common(&self, id: u16, flags: u8, pid: i32) -> Vec<u8> {
        let mut v = Vec::new();
        self.put(&mut v, id as u64, 2);
        v.push(flags);
        v.push(0); // preempt count
        self.put(&mut v, pid as u32 as u64, 4);
        v
    }
    fn comm(v: &mut Vec<u8>, s: &str) {
        let mut b = s.as_bytes().to_vec();
        b.resize(16, 0);
        v.extend_from_slice(&b);
    }
    fn switch(&self, prev: (&str, i32), state: u64, next: (&str, i32)) -> Vec<u8> {
        let mut v = self.common(ID_SWITCH, 0, prev.1);
        Self::comm(&mut v, prev.0);
        self.put(&mut v, prev.1 as u32 as u64, 4);
        self.put(&mut v, 120, 4);
        self.put(&mut v, state, self.long);
        Self::comm(&mut v, next.0);
        self.put(&mut v, next.1 as u32 as u64, 4);
        self.put(&mut v, 120, 4);
        v
    }
    fn wakeup(&self, pid: i32, task: (&str, i32), cpu: u32) -> Vec<u8> {
        let mut v = self.common(ID_WAKEUP, 0x3, pid);
        Self::comm(&mut v, task.0);
        self.put(&mut v, task.1 as u32 as u64, 4);
        self.put(&mut v, 120, 4);
        self.put(&mut v, cpu as u64, 4);
        v
    }
    fn irq_entry(&self, pid: i32, irq: u32, name: &str) -> Vec<u8> {
        let mut v = self.common(ID_IRQ_ENTRY, 0x9, pid);
        self.put(&mut v, irq as u64, 4);
        // __data_loc: length << 16 | offset
        let len = name.len() as u64 + 1;
        self.put(&mut v, (len << 16) | 16, 4);
        v.extend_from_slice(name.as_bytes());
        v.push(0);
        v
    }
    fn irq_exit(&self, pid: i32, irq: u32) -> Vec<u8> {
        let mut v = self.common(ID_IRQ_EXIT, 0x9, pid);
        self.put(&mut v, irq as u64, 4);
        self.put(&mut v, 1, 4);
        v
    }
    fn print(&self, pid: i32, msg: &str) -> Vec<u8> {
        let mut v = self.common(ID_PRINT, 0, pid);
        let ip = if self.long == 8 {
            0xffff_ffff_8123_4560
        } else {
            0xc123_4560
        };
        self.put(&mut v, ip, self.long);
        v.extend_from_slice(msg.as_bytes());
        v.push(0);
        v
    }
}

/// Format files for a `long` size: 32-bit kernels have 4-byte longs, so
/// `sched_switch.prev_state` and `print.ip` shrink and the fields after
/// them move.
/// Event systems with their format files.
type Systems = Vec<(String, Vec<Vec<u8>>)>;

fn formats(long: usize) -> (Vec<Vec<u8>>, Systems) {
    let fix = |name: &str, subs: &[(&str, &str)]| {
        let mut s = formats::text(name);
        if long == 4 {
            for (a, b) in subs {
                assert!(s.contains(a), "{a}");
                s = s.replace(a, b);
            }
        }
        s.into_bytes()
    };
    let switch = fix(
        "sched_sched_switch",
        &[
            (
                "prev_state;\toffset:32;\tsize:8;",
                "prev_state;\toffset:32;\tsize:4;",
            ),
            ("next_comm[16];\toffset:40;", "next_comm[16];\toffset:36;"),
            ("next_pid;\toffset:56;", "next_pid;\toffset:52;"),
            ("next_prio;\toffset:60;", "next_prio;\toffset:56;"),
        ],
    );
    let print = fix(
        "ftrace_print",
        &[
            ("ip;\toffset:8;\tsize:8;", "ip;\toffset:8;\tsize:4;"),
            ("buf[];\toffset:16;", "buf[];\toffset:12;"),
        ],
    );
    let systems = vec![
        (
            "sched".to_string(),
            vec![switch, formats::text("sched_sched_wakeup").into_bytes()],
        ),
        (
            "irq".to_string(),
            vec![
                formats::text("irq_irq_handler_exit").into_bytes(),
                formats::text("irq_irq_handler_entry").into_bytes(),
            ],
        ),
    ];
    (vec![print], systems)
}

const CMDLINES: &str = "1 systemd\n42 kworker/0:1\n1234 bash\n2345 sleep\n";
const KALLSYMS_64: &str = "ffffffff81000000 T _stext\n\
ffffffff8108e2a0 T do_nanosleep\n\
ffffffff81234560 T tracing_mark_write\n\
ffffffff81600000 T schedule\n";
const KALLSYMS_32: &str = "c1000000 T _stext\n\
c108e2a0 T do_nanosleep\n\
c1234560 T tracing_mark_write\n\
c1600000 T schedule\n";

/// A base file: the given layout, realistic formats, small tables and
/// the usual options (clock, uname, version, trace id).
fn base(version: u32, e: Endian, long: u8, comp: Compression, clock: &str) -> TraceFile {
    let mut f = TraceFile::new(version, e);
    f.long_size = long;
    f.commit_size = long;
    f.compression = comp;
    f.cpus = 2;
    let (ftrace, systems) = formats(long as usize);
    f.ftrace_formats = ftrace;
    f.systems = systems;
    f.kallsyms = if long == 8 { KALLSYMS_64 } else { KALLSYMS_32 }
        .as_bytes()
        .to_vec();
    f.printk = b"0xffffffff82a0b1c0 : \"synthetic printk %d\\n\"\n".to_vec();
    f.cmdlines = CMDLINES.as_bytes().to_vec();
    let machine = match (e, long) {
        (Endian::Big, 8) => "ppc64",
        (Endian::Big, _) => "ppc",
        (_, 4) => "i686",
        _ => "x86_64",
    };
    f.options = vec![
        TraceOption::trace_clock(clock),
        TraceOption::text(
            OptionId::UNAME,
            &format!("Linux synth 6.1.0-synthetic {machine}"),
        ),
        TraceOption::text(OptionId::VERSION, "3.1.6 tracemux-synthetic"),
        TraceOption::U64 {
            id: OptionId::TRACEID.0,
            value: 0x5EED_0000_0000_0001,
        },
    ];
    f
}

/// A small workload on `cpu`: `rounds` × (irq entry/exit, wakeup, switch
/// there and back, a print), a few µs apart, from raw time `start`. With
/// `gap`, every `gap`-th round is 0.2 s later (a TIME_EXTEND).
fn workload(enc: Enc, cpu: u32, start: u64, rounds: usize, gap: Option<usize>) -> Vec<Item> {
    let bash = ("bash", 1234);
    let other = if cpu == 0 {
        ("kworker/0:1", 42)
    } else {
        ("sleep", 2345)
    };
    let mut t = start;
    let mut v = Vec::new();
    let mut ev = |t: u64, p: Vec<u8>| v.push(Item::Event(Event::at(t, p)));
    for r in 0..rounds {
        if gap.is_some_and(|g| r > 0 && r % g == 0) {
            t += 200_000_000;
        }
        ev(t, enc.irq_entry(bash.1, 24 + cpu, "virtio0-input.0"));
        ev(t + 1_250, enc.irq_exit(bash.1, 24 + cpu));
        ev(t + 2_000, enc.wakeup(bash.1, other, cpu));
        ev(t + 3_100, enc.switch(bash, 1, other));
        ev(t + 9_800, enc.switch(other, 0x80, bash));
        ev(
            t + 10_400,
            enc.print(bash.1, &format!("round {r} on cpu {cpu}\n")),
        );
        t += 25_000 + 1_000 * cpu as u64;
    }
    v
}

/// `f`'s buffers: the top one (clock "local") with `top_rounds.0` rounds of
/// the workload on CPU 0 from T0 and on CPU 1 from `T0 + top_rounds.1`, then `inst`
/// with `inst_cpu1.0` rounds on its CPU 1 from `T0 + inst_cpu1.1`.
fn top_and_instance(
    f: &mut TraceFile,
    enc: Enc,
    top_rounds: (usize, u64),
    mut inst: BufferData,
    inst_cpu1: (usize, u64),
) {
    let (n, t1) = top_rounds;
    let streams = vec![
        (0, workload(enc, 0, T0, n, None)),
        (1, workload(enc, 1, T0 + t1, n, None)),
    ];
    inst.cpus = vec![CpuStream {
        cpu: 1,
        items: workload(enc, 1, T0 + inst_cpu1.1, inst_cpu1.0, None),
    }];
    f.set_buffers(vec![top("local", streams), inst]);
}

fn top(clock: &str, streams: Vec<(u32, Vec<Item>)>) -> BufferData {
    let mut b = BufferData::new("", clock);
    b.cpus = streams
        .into_iter()
        .map(|(cpu, items)| CpuStream { cpu, items })
        .collect();
    b
}

/// 618.316094 s: where a real recording of this machine started.
const T0: u64 = 618_316_094_000;

fn simple(name: &str, version: u32, e: Endian, long: u8, comp: Compression) -> (String, TraceFile) {
    let mut f = base(version, e, long, comp, "local");
    let enc = Enc {
        e,
        long: long as usize,
    };
    f.set_buffers(vec![top(
        "local",
        vec![
            (0, workload(enc, 0, T0, 24, Some(10))),
            (1, workload(enc, 1, T0 + 3_000, 24, None)),
        ],
    )]);
    (name.into(), f)
}

fn fixtures() -> Vec<(String, TraceFile)> {
    let le = Endian::Little;
    let mut v = vec![
        simple("be-v6", 6, Endian::Big, 8, Compression::None),
        simple("be-v7-zstd", 7, Endian::Big, 8, Compression::Zstd),
        simple("long4-v7", 7, le, 4, Compression::None),
    ];
    let enc = Enc { e: le, long: 8 };

    // 8 KiB pages for the top buffer (header page size), 16 KiB pages for
    // an instance (per-buffer page size in its BUFFER option).
    let mut f = base(7, le, 8, Compression::None, "local");
    f.page_size = 8192;
    let mut inst = BufferData::new("big", "local");
    inst.page_size = Some(16384);
    top_and_instance(&mut f, enc, (32, 500), inst, (62, 777));
    v.push(("page8k-v7".into(), f));

    // Latency (text) data.
    let text = latency_text();
    for (name, version, comp) in [
        ("latency-v6", 6, Compression::None),
        ("latency-v6-noclock", 6, Compression::None),
        ("latency-v7", 7, Compression::None),
        ("latency-v7-zstd", 7, Compression::Zstd),
    ] {
        let mut f = base(version, le, 8, comp, "local");
        if name.ends_with("noclock") {
            // without TRACECLOCK, trace-cmd does not read a clock trailer
            f.options
                .retain(|o| !matches!(o, TraceOption::Raw { id: 4, .. }));
        }
        f.data = TraceData::Latency {
            clock: "local".into(),
            text: text.clone(),
        };
        v.push((name.into(), f));
    }

    // x86-tsc clock with TSC2NSEC (2.5 GHz: ns = tsc * 6710886 >> 24),
    // OFFSET (ns) and DATE (µs, hex).
    let mut f = base(7, le, 8, Compression::None, "x86-tsc");
    f.options.push(TraceOption::Tsc2Nsec(Tsc2Nsec {
        mult: 6_710_886,
        shift: 24,
        offset: 1_545_790_235_000,
    }));
    f.options.push(TraceOption::offset_ns(250_000));
    f.options.push(TraceOption::date_us(0x6_4B2D_1C7E_0F00));
    let tsc0 = T0 * 5 / 2;
    f.set_buffers(vec![top(
        "x86-tsc",
        vec![
            (0, workload(enc, 0, tsc0, 20, Some(7))),
            (1, workload(enc, 1, tsc0 + 4_000, 20, None)),
        ],
    )]);
    v.push(("tsc2nsec-offset-date-v7".into(), f));

    // TIME_SHIFT: 2 CPUs, 3 samples each, interpolation, fraction arrays.
    let mut f = base(7, le, 8, Compression::None, "local");
    // Samples at T0, +100 µs and +150 µs: events fall before, between and
    // after them (the workload lasts about 200 µs).
    let cpu = |off: [i64; 3], frac: i64| TimeShiftCpu {
        times: vec![T0 as i64, T0 as i64 + 100_000, T0 as i64 + 150_000],
        offsets: off.to_vec(),
        scalings: vec![1 << frac, 1 << frac, 1 << frac],
        fractions: vec![frac, frac, frac],
    };
    f.options.push(TraceOption::TimeShift(TimeShift {
        peer_trace_id: 0x5EED_0000_0000_0002,
        flags: 1, // TRACECMD_TSYNC_FLAG_INTERPOLATE
        cpus: vec![
            cpu([-1_000_000, -1_050_000, -1_060_000], 0),
            cpu([2_000_000, 2_010_000, 2_030_000], 4),
        ],
    }));
    f.set_buffers(vec![top(
        "local",
        vec![
            (0, workload(enc, 0, T0, 8, None)),
            (1, workload(enc, 1, T0 + 2_000, 8, None)),
        ],
    )]);
    v.push(("timeshift-v7".into(), f));

    v.push(("padding-timestamp-v7".into(), padding_timestamp()));
    v.push(("instances-v6".into(), instances_v6()));
    v
}

/// Padding (with and without a time delta), absolute TIME_STAMP records
/// (one going back in time), explicit TIME_EXTENDs, type_len 0 events,
/// missed events: a stored count on a page that starts with an event, an
/// unknown count, and a stored count on a page that starts with padding
/// (trace-cmd does not report that one).
fn padding_timestamp() -> TraceFile {
    let le = Endian::Little;
    let enc = Enc { e: le, long: 8 };
    let mut f = base(7, le, 8, Compression::None, "local");
    let bash = ("bash", 1234);
    let kw = ("kworker/0:1", 42);
    let ev = |t, p| Item::Event(Event::at(t, p));
    let mut c0 = vec![Item::NewPage(Missed::Count(1234))];
    c0.push(ev(T0, enc.print(1234, "first after 1234 lost\n")));
    c0.push(Item::Padding { delta: 0, len: 12 });
    c0.push(ev(T0 + 1_000, enc.switch(bash, 1, kw)));
    c0.push(Item::Padding { delta: 500, len: 4 });
    c0.push(Item::Event(Event::after(
        1_000,
        enc.print(42, "1000 after a padding with delta 500\n"),
    )));
    c0.push(Item::TimeStamp(T0 + 50_000));
    c0.push(Item::Event(Event::after(
        0,
        enc.print(42, "at an absolute time stamp\n"),
    )));
    c0.push(Item::Event(
        Event::at(T0 + 51_000, enc.irq_exit(42, 24)).long(),
    ));
    c0.push(Item::Event(
        Event::at(T0 + 52_000, enc.print(42, "long form (type_len 0)\n")).long(),
    ));
    c0.push(Item::TimeExtend(300_000_000));
    c0.push(Item::Event(Event::after(
        10,
        enc.print(42, "after an explicit time extend\n"),
    )));
    c0.push(Item::NewPage(Missed::Unknown));
    c0.push(ev(T0 + 400_000_000, enc.print(42, "after unknown lost\n")));
    c0.push(ev(T0 + 400_001_000, enc.switch(kw, 0, bash)));
    c0.push(Item::NewPage(Missed::Count(77)));
    c0.push(Item::Padding { delta: 0, len: 8 });
    c0.push(ev(
        T0 + 500_000_000,
        enc.print(1234, "77 lost, page starts with padding\n"),
    ));
    let long_msg = format!(
        "a message too long for type_len 1..28: {}\n",
        "x".repeat(100)
    );
    c0.push(ev(T0 + 500_002_000, enc.print(1234, &long_msg)));
    let mut c1 = vec![ev(T0 + 20_000, enc.wakeup(0, bash, 0))];
    c1.push(ev(T0 + 30_000, enc.print(2345, "cpu1 before going back\n")));
    // back in time by 5 µs (TIME_STAMP)
    c1.push(ev(T0 + 25_000, enc.print(2345, "cpu1 5us earlier\n")));
    c1.push(ev(T0 + 40_000, enc.irq_entry(0, 25, "eth0")));
    c1.push(Item::NewPage(Missed::Count(5)));
    c1.push(ev(T0 + 60_000, enc.irq_exit(0, 25)));
    f.set_buffers(vec![top("local", vec![(0, c0), (1, c1)])]);
    f
}

/// A v6 file with one instance ("inst", BUFFER option pointing at its own
/// flyrecord block) and CPUSTAT options like trace-cmd writes them.
fn instances_v6() -> TraceFile {
    let le = Endian::Little;
    let enc = Enc { e: le, long: 8 };
    let mut f = base(6, le, 8, Compression::None, "local");
    for (buf, cpu) in [("", 0), ("", 1), ("inst", 0), ("inst", 1)] {
        if !buf.is_empty() && cpu == 0 {
            f.options.push(TraceOption::text(
                OptionId::CPUSTAT,
                &format!("\nBuffer: {buf}\n\n"),
            ));
        }
        f.options.push(TraceOption::text(
            OptionId::CPUSTAT,
            &format!(
                "CPU: {cpu}\nentries: 0\noverrun: 0\ncommit overrun: 0\nbytes: 0\n\
                 oldest event ts:   618.316094\nnow ts:   619.000000\n\
                 dropped events: 0\nread events: 240\n"
            ),
        ));
    }
    let inst = BufferData::new("inst", "local");
    top_and_instance(&mut f, enc, (10, 700), inst, (10, 1_500));
    f
}

/// A latency-format `trace` file (the tracefs text), irqsoff tracer style.
fn latency_text() -> Vec<u8> {
    let mut s = String::from(
        "# tracer: irqsoff\n#\n\
         # irqsoff latency trace v1.1.5 on 6.1.0-synthetic\n\
         # --------------------------------------------------------------------\n\
         # latency: 23 us, #6/6, CPU#0 | (M:desktop VP:0, KP:0, SP:0 HP:0 #P:2)\n\
         #    -----------------\n\
         #    | task: bash-1234 (uid:0 nice:0 policy:0 rt_prio:0)\n\
         #    -----------------\n\
         #  => started at: _raw_spin_lock_irqsave\n\
         #  => ended at:   _raw_spin_unlock_irqrestore\n#\n#\n\
         #                    _------=> CPU#            \n\
         #                   / _-----=> irqs-off        \n\
         #                  | / _----=> need-resched    \n\
         #                  || / _---=> hardirq/softirq \n\
         #                  ||| / _--=> preempt-depth   \n\
         #                  |||| /     delay           \n\
         #  cmd     pid     ||||| time  |   caller      \n\
         #     \\   /        |||||  \\    |   /           \n",
    );
    let funcs = [
        "_raw_spin_lock_irqsave",
        "try_to_wake_up",
        "select_task_rq_fair",
        "ttwu_do_activate",
        "_raw_spin_unlock_irqrestore",
    ];
    for (i, f) in funcs.iter().enumerate() {
        s.push_str(&format!(
            "    bash-1234      0d...    {:2}us : {f} <-__wake_up_common\n",
            i * 4
        ));
    }
    s.push_str(
        "    bash-1234      0d...   23us : trace_hardirqs_on <-_raw_spin_unlock_irqrestore\n",
    );
    s.push_str("\n => _raw_spin_unlock_irqrestore\n => try_to_wake_up\n => __wake_up_common\n");
    s.into_bytes()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(out) = args.next() else {
        eprintln!("usage: make_fixtures OUT_DIR [NAME...]");
        std::process::exit(2);
    };
    let only: Vec<String> = args.collect();
    for (name, f) in fixtures() {
        if !only.is_empty() && !only.contains(&name) {
            continue;
        }
        let dir = PathBuf::from(&out).join(&name);
        std::fs::create_dir_all(&dir).expect("create directory");
        let bytes = f.to_bytes().unwrap_or_else(|e| panic!("{name}: {e}"));
        std::fs::write(dir.join("trace.dat"), &bytes).expect("write trace.dat");
        println!("{name}: {} bytes", bytes.len());
    }
}
