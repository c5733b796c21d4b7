//! `uftrace dump` (the raw view): the file header, then every record of
//! every task file in file order, then every perf record per CPU file,
//! byte-identical to uftrace 0.13.
//!
//! ```text
//! uftrace file header: magic         = 4674726163652100
//! ...
//!
//! reading 10802.dat
//! 8319.089733896  10802: [entry] __monstartup(5586994700a0) depth: 0
//! 8319.089807803  11151: [args ] length = 16
//!   args[0] d64: 0x0000000000000001
//! ...
//!
//! reading perf-cpu0.dat
//! 8319.081076163  10802: [event] linux:task-name(200006)
//! ```
//!
//! Tasks are read one after the other (not merged by time); each record
//! still goes through the function stack ([`crate::report::walk`]) as in
//! uftrace, so `-F/-N/-D/--no-libcall` act the same way. The hot loop
//! formats into one reusable buffer: no allocation per record.
//!
//! Differences from uftrace 0.13, on purpose: a `long double` argument or
//! return value (80 bits) makes uftrace abort (its 8-byte copy overflows);
//! this prints it as 20 hex digits and goes on. `-v` hex dumps and kernel
//! data are not supported.

use std::io::{self, Write};

use tracemux_core::Endian;

use crate::argspec::{ArgFmt, ArgSpec};
use crate::data::UftraceData;
use crate::events::{data_text, is_sched_event};
use crate::perf::PerfReader;
use crate::reader::TaskReader;
use crate::record::Kind;
use crate::report::walk::{begin, unknown_name, ArgCtx, Rec, Stacks, WalkOptions};

/// Options of `uftrace dump` (raw view).
#[derive(Debug, Clone)]
pub struct DumpOptions {
    /// Filters and common options (`-F/-N/-T/-D/--tid/--no-libcall/
    /// --no-event/--no-sched`; `-t` has no effect on the raw dump).
    pub walk: WalkOptions,
    /// Show argument and return value blobs (`--no-args` turns it off).
    pub show_args: bool,
}

impl Default for DumpOptions {
    fn default() -> Self {
        DumpOptions {
            walk: WalkOptions::default(),
            show_args: true,
        }
    }
}

/// Feature bits by name: 0.13 knows the first 12, 0.14+ also `SYM_SIZE`.
const FEAT_NAMES: [&str; 13] = [
    "PLTHOOK",
    "TASK_SESSION",
    "KERNEL",
    "ARGUMENT",
    "RETVAL",
    "SYM_REL_ADDR",
    "MAX_STACK",
    "EVENT",
    "PERF_EVENT",
    "AUTO_ARGS",
    "DEBUG_INFO",
    "ESTIMATE_RETURN",
    "SYM_SIZE",
];

/// Info bits by name: 0.13 knows the first 14, newer ones `UTC_OFFSET`.
const INFO_NAMES: [&str; 15] = [
    "EXE_NAME",
    "EXE_BUILD_ID",
    "EXIT_STATUS",
    "CMDLINE",
    "CPUINFO",
    "MEMINFO",
    "OSINFO",
    "TASKINFO",
    "USAGEINFO",
    "LOADINFO",
    "ARG_SPEC",
    "RECORD_DATE",
    "PATTERN_TYPE",
    "VERSION",
    "UTC_OFFSET",
];

/// A header line of a bit mask: its value, then the names of its bits.
fn mask_line(out: &mut Vec<u8>, label: &str, mask: u64, names: &[&str]) {
    let _ = write!(out, "uftrace file header: {label:<14}= {mask:#x} (");
    let mut first = true;
    for (i, n) in names.iter().enumerate() {
        if mask & (1u64 << i) == 0 {
            continue;
        }
        if !first {
            out.extend_from_slice(b" | ");
        }
        out.extend_from_slice(n.as_bytes());
        first = false;
    }
    out.extend_from_slice(b")\n");
}

fn header(out: &mut Vec<u8>, data: &UftraceData) {
    let h = &data.header;
    out.extend_from_slice(b"uftrace file header: magic         = ");
    for b in crate::header::MAGIC {
        let _ = write!(out, "{b:02x}");
    }
    out.push(b'\n');
    let _ = writeln!(out, "uftrace file header: version       = {}", h.version);
    let _ = writeln!(
        out,
        "uftrace file header: header size   = {}",
        h.header_size
    );
    let (e, en) = match h.endian {
        Endian::Little => (1, "little"),
        Endian::Big => (2, "big"),
    };
    let _ = writeln!(out, "uftrace file header: endian        = {e} ({en})");
    let _ = writeln!(
        out,
        "uftrace file header: class         = {} ({} bit)",
        h.elf_class,
        if h.elf_class == 2 { "64" } else { "32" }
    );
    let (nf, ni) = if data.flavor.newer() {
        (13, 15)
    } else {
        (12, 14)
    };
    mask_line(out, "features", h.feat_mask, &FEAT_NAMES[..nf]);
    mask_line(out, "info", h.info_mask, &INFO_NAMES[..ni]);
    out.push(b'\n');
}

/// `%u.%09u  ` of a timestamp (seconds truncated to 32 bits, as uftrace).
#[inline]
pub(crate) fn put_time(out: &mut Vec<u8>, t: u64) {
    let sec = (t / 1_000_000_000) as u32;
    let nsec = (t % 1_000_000_000) as u32;
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(sec).as_bytes());
    out.push(b'.');
    let mut digits = [b'0'; 9];
    let mut n = nsec;
    for d in digits.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend_from_slice(&digits);
    out.extend_from_slice(b"  ");
}

/// `%5d` of a tid.
#[inline]
pub(crate) fn put_i32_w(out: &mut Vec<u8>, v: i32, width: usize) {
    let mut b = itoa::Buffer::new();
    let s = b.format(v);
    for _ in s.len()..width {
        out.push(b' ');
    }
    out.extend_from_slice(s.as_bytes());
}

/// Lower-case hex without prefix (`%lx`).
#[inline]
pub(crate) fn put_hex(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0u8; 16];
    let n = hex_into(&mut buf, v);
    out.extend_from_slice(&buf[..n]);
}

/// `"00".."99"`.
const DEC2: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// `%lx` of `v` at the start of `out` (at least 16 bytes); returns the
/// number of digits.
#[inline]
fn hex_into(out: &mut [u8], v: u64) -> usize {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digits = if v == 0 {
        1
    } else {
        (67 - v.leading_zeros() as usize) / 4
    };
    let mut x = v;
    let mut i = digits;
    while i >= 2 {
        let b = (x & 0xff) as usize;
        out[i - 2] = HEX[b >> 4];
        out[i - 1] = HEX[b & 15];
        x >>= 8;
        i -= 2;
    }
    if i == 1 {
        out[0] = HEX[(x & 15) as usize];
    }
    digits
}

/// Formats `%u.%09u  ` timestamps, reusing the seconds text while it does
/// not change (consecutive records mostly share it).
struct TimeFmt {
    sec: u32,
    text: [u8; 10],
    len: usize,
}

impl TimeFmt {
    fn new() -> TimeFmt {
        TimeFmt {
            sec: 0,
            text: [b'0'; 10],
            len: 1,
        }
    }

    /// Write the text of `t` at the start of `line` (at least 22 bytes);
    /// returns its length.
    #[inline]
    fn fill(&mut self, line: &mut [u8], t: u64) -> usize {
        let sec = (t / 1_000_000_000) as u32;
        if sec != self.sec {
            let mut b = itoa::Buffer::new();
            let s = b.format(sec).as_bytes();
            self.text[..s.len()].copy_from_slice(s);
            self.len = s.len();
            self.sec = sec;
        }
        let n = self.len;
        line[..n].copy_from_slice(&self.text[..n]);
        line[n] = b'.';
        let ns = (t % 1_000_000_000) as u32;
        // nine digits: one, then four pairs from the table
        line[n + 1] = b'0' + (ns / 100_000_000) as u8;
        let mut r = ns % 100_000_000;
        for k in (0..4).rev() {
            let p = (r % 100) as usize * 2;
            line[n + 2 + k * 2..n + 4 + k * 2].copy_from_slice(&DEC2[p..p + 2]);
            r /= 100;
        }
        line[n + 10] = b' ';
        line[n + 11] = b' ';
        n + 12
    }
}

fn type_name(k: Kind) -> &'static [u8] {
    match k {
        Kind::Exit => b"exit ",
        Kind::Entry => b"entry",
        Kind::Event => b"event",
        Kind::Lost => b"lost ",
    }
}

/// Name of event `id` as `event_get_name` gives it.
pub(crate) fn event_name(out: &mut Vec<u8>, data: &UftraceData, ev: u32) {
    match data.user_events.name(ev) {
        Some(n) => out.extend_from_slice(n.as_bytes()),
        None => {
            let _ = write!(out, "kernel_event:{ev}");
        }
    }
}

/// The raw value of a `size`-byte argument (zero-extended, file order).
fn raw_value(d: &[u8], size: usize, endian: Endian) -> u128 {
    let n = size.min(16).min(d.len());
    let mut v = [0u8; 16];
    v[..n].copy_from_slice(&d[..n]);
    if endian == Endian::Big {
        v[..n].reverse();
    }
    u128::from_le_bytes(v)
}

fn struct_bytes(out: &mut Vec<u8>, d: &[u8], size: usize) {
    for c in 0..size {
        if c % 16 == 0 {
            out.extend_from_slice(b"\n\t");
        }
        let _ = write!(out, "{:02x} ", d.get(c).copied().unwrap_or(0));
        if c % 8 == 7 {
            out.push(b' ');
        }
    }
    out.push(b'\n');
}

/// uftrace's `pr_args` (`retval` false) and `pr_retval` (true).
fn dump_values(
    out: &mut Vec<u8>,
    specs: &[ArgSpec],
    blob: &[u8],
    retval: bool,
    endian: Endian,
    ctx: &ArgCtx<'_>,
) {
    let mut pos = 0usize;
    let mut i = 0;
    for spec in specs {
        if spec.is_retval() != retval {
            continue;
        }
        let d = blob.get(pos..).unwrap_or(&[]);
        let mut size = spec.size as usize;
        let label = |out: &mut Vec<u8>| {
            if retval {
                out.extend_from_slice(b"  retval ");
            } else {
                let _ = write!(out, "  args[{i}] ");
            }
        };
        match spec.fmt {
            ArgFmt::Str | ArgFmt::StdString => {
                let (slen, s) = crate::args::blob_str(d, endian);
                let s = &s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())];
                label(out);
                out.extend_from_slice(if spec.fmt == ArgFmt::StdString {
                    b"std::string: "
                } else {
                    b"str: "
                });
                if s.len() >= 4 && s[..4] == [0xff; 4] {
                    out.extend_from_slice(b"NULL");
                } else {
                    out.extend_from_slice(s);
                }
                out.push(b'\n');
                size = slen + 2;
            }
            ArgFmt::Ptr => {
                let v = raw_value(d, size.min(8), endian) as u64;
                label(out);
                if let Some(n) = ctx.sym(v) {
                    out.extend_from_slice(b"p: ");
                    put_hex(out, v);
                    let _ = writeln!(out, " (&{n})");
                } else if v != 0 {
                    let _ = writeln!(out, "p: {v:#x}");
                } else if retval {
                    out.extend_from_slice(b"p: (nil)\n");
                } else {
                    out.extend_from_slice(b"p: 0\n");
                }
            }
            ArgFmt::Enum if !retval => {
                let v = raw_value(d, size.min(8), endian) as u64 as i64;
                let tn = spec.type_name.as_deref().unwrap_or("");
                // 0.13 passes an `int`, 0.17+ the zero-extended `long long`
                let ev = if ctx.data.flavor.newer() {
                    v
                } else {
                    v as i32 as i64
                };
                match ctx.enum_of(tn, ev) {
                    Some(t) => {
                        label(out);
                        let _ = writeln!(out, "enum {tn}: {t} ({v})");
                    }
                    None => raw_line(out, spec, d, size, endian, &label),
                }
            }
            ArgFmt::Struct => {
                label(out);
                let _ = write!(out, "struct {}:", spec.type_name.as_deref().unwrap_or(""));
                struct_bytes(out, d, size);
            }
            _ => raw_line(out, spec, d, size, endian, &label),
        }
        pos += size.div_ceil(4) * 4;
        i += 1;
    }
}

/// `%c%d: 0x%0*llx` of a value shown raw.
fn raw_line(
    out: &mut Vec<u8>,
    spec: &ArgSpec,
    d: &[u8],
    size: usize,
    endian: Endian,
    label: &dyn Fn(&mut Vec<u8>),
) {
    // uftrace copies the value into a 64-bit integer; wider values (long
    // double) overflow it there, here they print in full
    let v = raw_value(d, size, endian);
    label(out);
    out.push(spec.fmt.spec_char());
    let _ = writeln!(out, "{}: {:#0w$x}", size * 8, v, w = size * 2 + 2);
}

const FLUSH_AT: usize = 1 << 16;

fn flush(buf: &mut Vec<u8>, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(buf)?;
    buf.clear();
    Ok(())
}

/// Write `uftrace dump` of `data` to `out`; damage goes to `warn` (one
/// `uftrace: ...` line each). `-F/-N/-T` items of `opts.walk` are added to
/// the recording's filter tables (hence `&mut`).
pub fn dump(
    data: &mut UftraceData,
    opts: &DumpOptions,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> io::Result<()> {
    let mode = begin(data, &opts.walk, out, warn)?;
    let data: &UftraceData = data;
    let mut st = Stacks::new(data, &opts.walk, mode);
    let mut buf = Vec::with_capacity(FLUSH_AT + 4096);
    header(&mut buf, data);
    let endian = data.endian();
    let show_args = opts.show_args;
    let mut tf = TimeFmt::new();
    for ti in 0..data.tasks.len() {
        let tid = data.tasks[ti].tid;
        buf.extend_from_slice(b"reading ");
        let mut ib = itoa::Buffer::new();
        buf.extend_from_slice(ib.format(tid).as_bytes());
        buf.extend_from_slice(b".dat\n");
        // "%5d: [" of the tid, made once per task
        let mut tid_prefix = Vec::with_capacity(16);
        put_i32_w(&mut tid_prefix, tid, data.flavor.dump_tid_len());
        tid_prefix.extend_from_slice(b": [");
        let mut reader = TaskReader::new(data, ti);
        if !st.tasks[ti].has_stack {
            reader.finish();
        }
        let mut prev_time = 0u64;
        while let Some(rec) = reader.next_record() {
            let r = Rec {
                kind: rec.kind,
                time: rec.time,
                addr: rec.addr,
                depth: rec.depth,
                more: rec.more,
                user: true,
                kernel: false,
            };
            st.consume(ti, &r, None);
            if prev_time > rec.time {
                buf.extend_from_slice(
                    b"\n*************************************\n\
                      * inverted time - data seems broken *\n\
                      *************************************\n\n",
                );
            }
            prev_time = rec.time;
            if !st.check_filter(ti, &r) {
                continue;
            }
            if rec.kind == Kind::Event {
                if !opts.walk.no_event {
                    record_line(&mut buf, data, &mut tf, &tid_prefix, &rec, None);
                    if rec.more && show_args {
                        put_time(&mut buf, rec.time);
                        put_i32_w(&mut buf, tid, data.flavor.dump_tid_len());
                        let _ = writeln!(buf, ": [data ] length = {}", rec.data.len());
                        buf.extend_from_slice(b"  ");
                        event_name(&mut buf, data, rec.addr as u32);
                        let mark = buf.len();
                        buf.extend_from_slice(b": ");
                        if rec.addr == crate::events::id::WATCH_VAR as u64 {
                            let lp64 = data.header.is_lp64();
                            let addr = crate::events::watch_var_addr(rec.data, endian, lp64);
                            let name = st.symbol(ti, rec.time, addr).map(|s| &*s.name);
                            crate::events::watch_var(&mut buf, rec.data, endian, lp64, name);
                        } else if !data_text(&mut buf, rec.addr as u32, rec.data, endian, false) {
                            buf.truncate(mark);
                        }
                        buf.push(b'\n');
                    }
                }
                continue;
            }
            let sym = st.symbol(ti, rec.time, rec.addr);
            if opts.walk.no_libcall && sym.is_some_and(|s| s.is_plt()) {
                st.check_filter_done(ti, &r);
                continue;
            }
            record_line(
                &mut buf,
                data,
                &mut tf,
                &tid_prefix,
                &rec,
                Some(sym.map(|s| &*s.name)),
            );
            if rec.more && show_args && matches!(rec.kind, Kind::Entry | Kind::Exit) {
                let retval = rec.kind == Kind::Exit;
                put_time(&mut buf, rec.time);
                put_i32_w(&mut buf, tid, data.flavor.dump_tid_len());
                let _ = writeln!(
                    buf,
                    ": [{}] length = {}",
                    if retval { "retval" } else { "args " },
                    rec.data.len()
                );
                if let Some(specs) = data.arg_specs(tid, rec.time, rec.addr) {
                    let ctx = ArgCtx {
                        data,
                        tid,
                        time: rec.time,
                        func: rec.addr,
                    };
                    dump_values(&mut buf, specs, rec.data, retval, endian, &ctx);
                }
            }
            st.check_filter_done(ti, &r);
            if buf.len() >= FLUSH_AT {
                flush(&mut buf, out)?;
            }
        }
        for d in reader.damage.drain(..) {
            writeln!(warn, "uftrace: {d}")?;
        }
    }
    kernel_part(&mut buf, data, &mut st, opts, out)?;
    perf_part(&mut buf, data, &st, opts, out)?;
    flush(&mut buf, out)?;
    Ok(())
}

/// The kernel files (`-k` data), one CPU after the other, every record of
/// every pid (uftrace's `dump_raw_kernel_*`): functions with their 48-bit
/// address, events with their id and text, missed events as `lost` lines.
fn kernel_part(
    buf: &mut Vec<u8>,
    data: &UftraceData,
    st: &mut Stacks<'_>,
    opts: &DumpOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    let Some(kd) = &data.kernel else {
        return Ok(());
    };
    buf.push(b'\n');
    let sess = (!data.sessions.sessions.is_empty()).then_some(0);
    for (cpu, kc) in kd.cpus.iter().enumerate() {
        if kc.size == 0 {
            continue;
        }
        let _ = writeln!(buf, "reading kernel-cpu{cpu}.dat");
        for r in &kc.records {
            if let Some(n) = r.missed.filter(|&n| n != 0) {
                put_time(buf, r.time);
                put_i32_w(buf, r.tid, data.flavor.dump_tid_len());
                let _ = writeln!(buf, ": [lost ]: {} events", n as i32);
            }
            if r.kind == Kind::Event && opts.walk.no_event {
                continue;
            }
            put_time(buf, r.time);
            put_i32_w(buf, r.tid, data.flavor.dump_tid_len());
            buf.extend_from_slice(b": [");
            buf.extend_from_slice(type_name(r.kind));
            buf.extend_from_slice(b"] ");
            if r.kind == Kind::Event {
                if let Some(e) = kd.event(r.addr) {
                    let _ = write!(buf, "{}:{}({}) ", e.system, e.name, r.addr);
                    buf.extend_from_slice(kd.text_of(r));
                }
                buf.push(b'\n');
                continue;
            }
            let addr = data.kernel_address(r.addr);
            match sess.and_then(|s| st.symbol_in(s, r.time, addr)) {
                Some(sym) => buf.extend_from_slice(sym.name.as_bytes()),
                None => unknown_name(buf, addr),
            }
            buf.push(b'(');
            put_hex(buf, r.addr & ((1 << 48) - 1));
            let _ = writeln!(buf, ") depth: {}", r.depth);
            if buf.len() >= FLUSH_AT {
                flush(buf, out)?;
            }
        }
    }
    Ok(())
}

/// `TIME  TID: [type] NAME(ADDR) depth: N`; `name` is `None` for events
/// (named by id), `Some(None)` for an address without a symbol.
#[inline]
fn record_line(
    buf: &mut Vec<u8>,
    data: &UftraceData,
    tf: &mut TimeFmt,
    tid_prefix: &[u8],
    rec: &crate::record::Record<'_>,
    name: Option<Option<&str>>,
) {
    // the fixed parts are put together on the stack: one copy each
    let mut head = [0u8; 64];
    let mut n = tf.fill(&mut head, rec.time);
    let p = tid_prefix.len().min(head.len() - n - 7);
    head[n..n + p].copy_from_slice(&tid_prefix[..p]);
    n += p;
    head[n..n + 5].copy_from_slice(type_name(rec.kind));
    head[n + 5] = b']';
    head[n + 6] = b' ';
    buf.extend_from_slice(&head[..n + 7]);
    match name {
        None => event_name(buf, data, rec.addr as u32),
        Some(Some(n)) => buf.extend_from_slice(n.as_bytes()),
        Some(None) => unknown_name(buf, rec.addr),
    }
    let mut tail = [0u8; 40];
    tail[0] = b'(';
    let mut n = 1 + hex_into(&mut tail[1..], rec.addr);
    tail[n..n + 9].copy_from_slice(b") depth: ");
    n += 9;
    let mut ib = itoa::Buffer::new();
    let d = ib.format(rec.depth).as_bytes();
    tail[n..n + d.len()].copy_from_slice(d);
    n += d.len();
    tail[n] = b'\n';
    buf.extend_from_slice(&tail[..n + 1]);
}

/// The perf files, one after the other.
fn perf_part(
    buf: &mut Vec<u8>,
    data: &UftraceData,
    st: &Stacks<'_>,
    opts: &DumpOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    if opts.walk.no_event || data.perf.is_empty() {
        return Ok(());
    }
    let endian = data.endian();
    for (i, pf) in data.perf.iter().enumerate() {
        let bytes: &[u8] = (*pf.data).as_ref();
        if bytes.is_empty() {
            continue;
        }
        if i == 0 {
            buf.push(b'\n');
        }
        // uftrace numbers the files by their place in the glob order
        let _ = writeln!(buf, "reading perf-cpu{i}.dat");
        let mut r = PerfReader::new(bytes, endian);
        while let Some(ev) = r.next_event() {
            let known = st
                .task_index(ev.tid)
                .is_some_and(|t| st.tasks[t].has_stack && data.tasks[t].data.is_some());
            if !known {
                continue;
            }
            let eid = ev.event_id();
            if opts.walk.no_sched && is_sched_event(eid as u64) {
                continue;
            }
            put_time(buf, ev.time);
            put_i32_w(buf, ev.tid, data.flavor.dump_tid_len());
            buf.extend_from_slice(b": [event] ");
            event_name(buf, data, eid);
            let _ = writeln!(buf, "({eid})");
            if buf.len() >= FLUSH_AT {
                flush(buf, out)?;
            }
        }
    }
    Ok(())
}
