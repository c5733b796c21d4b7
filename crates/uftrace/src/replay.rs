//! `uftrace replay`: the call graph of every task, merged by time, with
//! durations, arguments and return values, byte-identical to uftrace 0.13.
//!
//! The walk mirrors uftrace's: records are consumed in merge order, each
//! task keeps a function stack (durations are computed when the exit is
//! consumed), a function whose exit is the next record of its task prints
//! as a leaf line (`f();`), filters (`-F/-N`, `-D`, `-t`, `--tid`,
//! `--no-libcall`) act while walking.

use std::io::{self, Write};
use std::path::Path;

use tracemux_core::Endian;

use crate::args::{format_values, ArgContext};
use crate::argspec::{trig, FilterMode};
use crate::data::{Loader, OpenOptions, ReadLoader, UftraceData};
use crate::events::{id, is_sched_event};
use crate::merge::{Item, MergeOptions, Merger, Source};
use crate::record::{Kind, Record};
use crate::symbols::basename;
use crate::{Demangle, PatternType};

/// Output fields (`-f`), in uftrace's table order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Duration,
    Tid,
    Addr,
    Time,
    Delta,
    Elapsed,
    Task,
    Module,
}

const FIELD_TABLE: [(Field, &str, &str); 8] = [
    (Field::Duration, "duration", " DURATION "),
    (Field::Tid, "tid", "   TID  "),
    (Field::Addr, "addr", "   ADDRESS  "),
    (Field::Time, "time", "     TIMESTAMP    "),
    (Field::Delta, "delta", " TIMEDELTA"),
    (Field::Elapsed, "elapsed", "  ELAPSED "),
    (Field::Task, "task", "      TASK NAME"),
    (Field::Module, "module", "     MODULE NAME"),
];

const FIELD_LEN: [usize; 8] = [10, 8, 12, 18, 10, 10, 15, 16];

/// Parse a `-f` value (`none`, `all`, `+tid`, `duration,tid,...`); fields
/// come out in table order, as uftrace prints them. `Err` names the
/// unknown field.
pub fn parse_fields(s: &str) -> Result<Vec<Field>, String> {
    if s == "none" {
        return Ok(Vec::new());
    }
    let mut on = [false; 8];
    let mut rest = s;
    if let Some(r) = s.strip_prefix('+') {
        on[0] = true;
        on[1] = true;
        rest = r;
    }
    for name in rest.split(',') {
        if name == "all" {
            on = [true; 8];
            break;
        }
        match FIELD_TABLE.iter().position(|(_, n, _)| *n == name) {
            Some(i) => on[i] = true,
            None => return Err(name.to_string()),
        }
    }
    Ok(FIELD_TABLE
        .iter()
        .zip(on)
        .filter(|(_, o)| *o)
        .map(|((f, _, _), _)| *f)
        .collect())
}

/// Options of `uftrace replay`.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// `-f`; `None` = duration and tid.
    pub fields: Option<Vec<Field>>,
    /// Show arguments and return values (on by default; `--no-args` turns
    /// it off). `-a` changes nothing when replaying.
    pub show_args: bool,
    /// `--no-libcall`.
    pub no_libcall: bool,
    /// `--no-event`.
    pub no_event: bool,
    /// `-F NAME` items and `-N NAME` items (the latter prefixed with `!`),
    /// joined with `;` in command-line order.
    pub filter: Option<String>,
    /// `-T` triggers (`NAME@action,...`).
    pub trigger: Option<String>,
    /// `-D`: max depth (default 1024).
    pub depth: i32,
    /// `-t`: time filter in ns.
    pub time_filter: u64,
    /// `--tid`.
    pub tids: Option<Vec<i32>>,
    /// `--match`: pattern type of `-F/-N/-T` (default regex).
    pub pattern: PatternType,
    /// `--demangle`.
    pub demangle: Demangle,
    /// `--no-comment`: no `/* name */` after closing braces.
    pub no_comment: bool,
    /// `--no-merge`: never print leaf functions on one line.
    pub no_merge: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            fields: None,
            show_args: true,
            no_libcall: false,
            no_event: false,
            filter: None,
            trigger: None,
            depth: 1024,
            time_filter: 0,
            tids: None,
            pattern: PatternType::Regex,
            demangle: Demangle::Simple,
            no_comment: false,
            no_merge: false,
        }
    }
}

impl ReplayOptions {
    /// Parse uftrace-style replay arguments (`-f F`, `-a`, `--no-libcall`,
    /// `--no-event`, `-F F`, `-N F`, `-T T`, `-D N`, `-t TIME`, `--tid T`,
    /// `--demangle=M`, `--match=regex|glob`, `--no-comment`, `--no-merge`,
    /// `-k`; both `-x V` and `--long=V` forms). `-d DIR` is skipped.
    pub fn from_args(args: &[&str]) -> Result<ReplayOptions, String> {
        let mut o = ReplayOptions::default();
        let mut i = 0;
        let mut filter: Vec<String> = Vec::new();
        let mut trigger: Vec<String> = Vec::new();
        while i < args.len() {
            let a = args[i];
            let (key, inline) = match a.split_once('=') {
                Some((k, v)) if k.starts_with("--") => (k, Some(v.to_string())),
                _ => (a, None),
            };
            let val = |i: &mut usize| -> Result<String, String> {
                if let Some(v) = &inline {
                    return Ok(v.clone());
                }
                *i += 1;
                args.get(*i)
                    .map(|s| s.to_string())
                    .ok_or(format!("{key} needs a value"))
            };
            match key {
                "-d" | "--data" => {
                    val(&mut i)?;
                }
                "-a" | "--auto-args" | "-k" | "--kernel" => {}
                "--no-args" => o.show_args = false,
                "-f" | "--output-fields" => {
                    o.fields = Some(
                        parse_fields(&val(&mut i)?)
                            .map_err(|f| format!("unknown field name '{f}'"))?,
                    )
                }
                "--no-libcall" => o.no_libcall = true,
                "--no-event" => o.no_event = true,
                "--no-comment" => o.no_comment = true,
                "--no-merge" => o.no_merge = true,
                "-F" | "--filter" => filter.push(val(&mut i)?),
                "-N" | "--notrace" => filter.push(format!("!{}", val(&mut i)?)),
                "-T" | "--trigger" => trigger.push(val(&mut i)?),
                "-D" | "--depth" => {
                    let v = val(&mut i)?;
                    let d = crate::header::c_atol(&v) as i32;
                    o.depth = if d <= 0 || d >= 65535 { 1024 } else { d };
                }
                "-t" | "--time-filter" => {
                    o.time_filter = crate::argspec::parse_time(&val(&mut i)?, 3)
                }
                "--tid" => {
                    let v = val(&mut i)?;
                    let tids = o.tids.get_or_insert_with(Vec::new);
                    for t in v.split([',', ';', ':']) {
                        tids.push(crate::header::c_atol(t) as i32);
                    }
                }
                "--demangle" => {
                    o.demangle = Demangle::parse(&val(&mut i)?).unwrap_or(Demangle::Simple);
                }
                "--match" => {
                    o.pattern = match val(&mut i)?.as_str() {
                        "glob" => PatternType::Glob,
                        _ => PatternType::Regex,
                    }
                }
                _ => return Err(format!("unsupported replay option '{a}'")),
            }
            i += 1;
        }
        if !filter.is_empty() {
            o.filter = Some(filter.join(";"));
        }
        if !trigger.is_empty() {
            o.trigger = Some(trigger.join(";"));
        }
        Ok(o)
    }
}

/// Open `dir` and write its replay to `out`; damage and warnings go to
/// `warn` (one line each, prefixed `uftrace: `).
pub fn replay(
    dir: &Path,
    opts: &ReplayOptions,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> io::Result<()> {
    replay_with(dir, opts, &ReadLoader, out, warn)
}

/// [`replay`] with a custom data file loader (the CLI's memory maps).
pub fn replay_with(
    dir: &Path,
    opts: &ReplayOptions,
    loader: &dyn Loader,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> io::Result<()> {
    let oo = OpenOptions {
        demangle: opts.demangle,
        strict: false,
    };
    let mut data = UftraceData::open_with(dir, oo, loader)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    replay_data(&mut data, opts, out, warn)
}

const FL_FILTERED: u32 = 1 << 0;
const FL_NOTRACE: u32 = 1 << 1;
const FL_NORECORD: u32 = 1 << 2;
const FL_EXEC: u32 = 1 << 3;
const FL_LONGJMP: u32 = 1 << 4;

#[derive(Debug, Clone, Copy, Default)]
struct FStack {
    addr: u64,
    valid: bool,
    orig_depth: i32,
    flags: u32,
    total_time: u64,
    child_time: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    User,
    Unknown,
}

#[derive(Debug, Clone)]
struct TaskState {
    tid: i32,
    ppid: i32,
    enabled: bool,
    stack: Vec<FStack>,
    stack_count: i32,
    user_stack_count: i32,
    display_depth: i32,
    user_display_depth: i32,
    display_depth_set: bool,
    fstack_set: bool,
    fork_handled: bool,
    fork_display_depth: i32,
    lost_seen: bool,
    in_count: i32,
    out_count: i32,
    depth: i32,
    ctx: Ctx,
    timestamp: u64,
    timestamp_last: u64,
    comm: String,
}

/// Kinds of fixup functions (exec, setjmp, longjmp, fork).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fixup {
    Exec,
    Setjmp,
    Longjmp,
    Fork,
}

struct Walker<'d> {
    data: &'d UftraceData,
    opts: &'d ReplayOptions,
    merger: Merger<'d>,
    tasks: Vec<TaskState>,
    max_stack: i32,
    filter_mode: FilterMode,
    enabled: bool,
    first: u64,
    fields: Vec<Field>,
    /// Per session: sorted (start, end, kind).
    fixups: Vec<Vec<(u64, u64, Fixup)>>,
    setjmp_depth: i32,
    setjmp_count: i32,
    line: Vec<u8>,
    /// Scratch buffers reused for every line (no allocation per record).
    name_buf: Vec<u8>,
    args_buf: Vec<u8>,
    ret_buf: Vec<u8>,
    endian: Endian,
    /// Direct-mapped cache of symbol lookups: (session, addr) -> symbol.
    sym_cache: Vec<(u64, usize, Option<&'d crate::symbols::Symbol>)>,
}

struct Ctx2<'a> {
    data: &'a UftraceData,
    tid: i32,
    time: u64,
    func: u64,
}

impl ArgContext for Ctx2<'_> {
    fn symbol_name(&self, addr: u64) -> Option<&str> {
        let s = self.data.session_at(self.tid, self.time)?;
        self.data.symbol_in(s, self.time, addr).map(|s| &*s.name)
    }
    fn enum_text(&self, name: &str, val: i32) -> Option<String> {
        let s = self.data.session_at(self.tid, self.time)?;
        let m = self.data.find_map(s, self.func)?;
        let mi = m.module?;
        self.data.modules[mi]
            .debug
            .enums
            .format(name, val)
            .or_else(|| self.data.auto_args.enums.format(name, val))
            .or_else(|| Some(val.to_string()))
    }
}

/// Append `v` right-aligned in `width` columns, zero-padded to `zeros` digits.
fn push_num(out: &mut Vec<u8>, v: u64, width: usize, zeros: usize) {
    let mut b = [0u8; 20];
    let mut i = b.len();
    let mut x = v;
    loop {
        i -= 1;
        b[i] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    while b.len() - i < zeros {
        i -= 1;
        b[i] = b'0';
    }
    for _ in (b.len() - i)..width {
        out.push(b' ');
    }
    out.extend_from_slice(&b[i..]);
}

/// Append `v` in lower-case hex right-aligned in `width` columns.
fn push_hex(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut b = [0u8; 16];
    let mut i = b.len();
    let mut x = v;
    loop {
        i -= 1;
        b[i] = b"0123456789abcdef"[(x & 15) as usize];
        x >>= 4;
        if x == 0 {
            break;
        }
    }
    for _ in (b.len() - i)..width {
        out.push(b' ');
    }
    out.extend_from_slice(&b[i..]);
}

/// Append uftrace's `print_time_unit` text (10 columns).
pub fn time_unit(out: &mut Vec<u8>, nsec: u64) {
    if nsec == 0 {
        out.extend_from_slice(b"          ");
        return;
    }
    const UNITS: [&str; 5] = ["us", "ms", " s", " m", " h"];
    const LIMIT: [u64; 6] = [1000, 1000, 1000, 60, 24, i32::MAX as u64];
    let mut delta = nsec;
    let mut small = 0;
    let mut idx = 0;
    while idx < UNITS.len() {
        small = delta % LIMIT[idx];
        delta /= LIMIT[idx];
        if delta < LIMIT[idx + 1] {
            break;
        }
        idx += 1;
    }
    let idx = idx.min(4);
    if delta > 999 {
        delta = 999;
        small = 999;
    }
    push_num(out, delta, 3, 0);
    out.push(b'.');
    push_num(out, small, 0, 3);
    out.push(b' ');
    out.extend_from_slice(UNITS[idx].as_bytes());
}

fn pad_left(out: &mut Vec<u8>, s: &[u8], width: usize) {
    for _ in s.len()..width {
        out.push(b' ');
    }
    out.extend_from_slice(s);
}

/// Write the replay of an opened recording.
pub fn replay_data(
    data: &mut UftraceData,
    opts: &ReplayOptions,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> io::Result<()> {
    for d in &data.damage {
        writeln!(warn, "uftrace: {d}")?;
    }
    let mut filter_mode = FilterMode::None;
    let mut failed = false;
    if let Some(f) = &opts.filter {
        let modes = data.add_triggers(f, trig::FILTER, opts.pattern, false);
        // uftrace counts every entry of the filter tables (argument specs
        // included): the filter "fails" only when all tables are empty
        let count: usize = data
            .sessions
            .sessions
            .iter()
            .map(|s| s.filters.entries.len())
            .sum();
        failed = count == 0;
        for m in modes {
            if m == FilterMode::In {
                filter_mode = FilterMode::In;
            } else if filter_mode == FilterMode::None {
                filter_mode = FilterMode::Out;
            }
        }
    }
    if let Some(t) = &opts.trigger {
        let modes = data.add_triggers(t, 0, opts.pattern, false);
        let count: usize = data
            .sessions
            .sessions
            .iter()
            .map(|s| s.filters.entries.len())
            .sum();
        if count == 0 {
            failed = true;
        }
        for m in modes {
            if m == FilterMode::In {
                filter_mode = FilterMode::In;
            } else if filter_mode == FilterMode::None {
                filter_mode = FilterMode::Out;
            }
        }
    }
    if failed {
        // uftrace prints this usage message on stdout and goes on
        let mut msg = b"Usage: failed to set filter or trigger: ".to_vec();
        let parts: Vec<&str> = [opts.filter.as_deref(), opts.trigger.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        msg.extend_from_slice(parts.join(" or ").as_bytes());
        msg.push(b'\n');
        out.write_all(&msg)?;
    }
    let data: &UftraceData = data;
    let fixups = build_fixups(data);
    let mo = MergeOptions {
        time_filter: opts.time_filter,
        tids: opts.tids.clone(),
    };
    let merger = Merger::new(data, &mo);
    let tasks = data
        .tasks
        .iter()
        .map(|t| {
            let task = data.sessions.find_task(t.tid);
            TaskState {
                tid: t.tid,
                ppid: task.map_or(0, |t| t.ppid),
                enabled: opts.tids.as_ref().is_none_or(|v| v.contains(&t.tid)),
                stack: Vec::new(),
                stack_count: 0,
                user_stack_count: 0,
                display_depth: 0,
                user_display_depth: 0,
                display_depth_set: true,
                fstack_set: false,
                fork_handled: false,
                fork_display_depth: 0,
                lost_seen: false,
                in_count: 0,
                out_count: 0,
                depth: opts.depth,
                ctx: Ctx::Unknown,
                timestamp: 0,
                timestamp_last: 0,
                comm: task.map_or(String::new(), |t| t.comm.clone()),
            }
        })
        .collect();
    let mut w = Walker {
        data,
        opts,
        merger,
        tasks,
        max_stack: data.header.max_stack as i32,
        filter_mode,
        enabled: true,
        first: 0,
        fields: opts
            .fields
            .clone()
            .unwrap_or_else(|| vec![Field::Duration, Field::Tid]),
        fixups,
        setjmp_depth: 0,
        setjmp_count: 0,
        line: Vec::with_capacity(4096),
        name_buf: Vec::with_capacity(256),
        args_buf: Vec::with_capacity(256),
        ret_buf: Vec::with_capacity(256),
        endian: data.endian(),
        sym_cache: vec![(u64::MAX, usize::MAX, None); 4096],
    };
    let mut bw = io::BufWriter::with_capacity(1 << 18, out);
    w.run(&mut bw)?;
    bw.flush()?;
    drop(bw);
    for d in w.merger.take_damage() {
        writeln!(warn, "uftrace: {d}")?;
    }
    Ok(())
}

fn build_fixups(data: &UftraceData) -> Vec<Vec<(u64, u64, Fixup)>> {
    const NAMES: [&str; 17] = [
        "execl",
        "execlp",
        "execle",
        "execv",
        "execve",
        "execvp",
        "execvpe",
        "setjmp",
        "_setjmp",
        "sigsetjmp",
        "__sigsetjmp",
        "longjmp",
        "siglongjmp",
        "__longjmp_chk",
        "fork",
        "vfork",
        "daemon",
    ];
    data.sessions
        .sessions
        .iter()
        .map(|s| {
            let mut v = Vec::new();
            for m in &s.maps.maps {
                let Some(mi) = m.module else { continue };
                for sym in &data.modules[mi].symbols {
                    if !NAMES.contains(&&*sym.name) {
                        continue;
                    }
                    let n = &*sym.name;
                    let kind = if n.starts_with("exec") {
                        Fixup::Exec
                    } else if n.contains("setjmp") {
                        Fixup::Setjmp
                    } else if n.contains("longjmp") {
                        Fixup::Longjmp
                    } else {
                        Fixup::Fork
                    };
                    // (addresses from damaged files may overflow: wrap, as
                    // the other outputs' walk does)
                    let st = sym.addr.wrapping_add(m.start);
                    v.push((st, st.wrapping_add(sym.size), kind));
                }
            }
            v.sort_by_key(|e| e.0);
            v.dedup_by_key(|e| e.0);
            v
        })
        .collect()
}

impl<'d> Walker<'d> {
    fn fresh(&self) -> FStack {
        FStack {
            orig_depth: self.opts.depth,
            ..FStack::default()
        }
    }

    fn fget(&mut self, ti: usize, idx: i32) -> Option<&mut FStack> {
        if idx < 0 || idx >= self.max_stack || !self.tasks[ti].enabled {
            return None;
        }
        let fill = self.fresh();
        let t = &mut self.tasks[ti];
        let i = idx as usize;
        if i >= t.stack.len() {
            t.stack.resize(i + 1, fill);
        }
        Some(&mut t.stack[i])
    }

    fn fpeek(&self, ti: usize, idx: i32) -> Option<FStack> {
        if idx < 0 || idx >= self.max_stack || !self.tasks[ti].enabled {
            return None;
        }
        Some(
            self.tasks[ti]
                .stack
                .get(idx as usize)
                .copied()
                .unwrap_or_else(|| self.fresh()),
        )
    }

    fn is_plt(&mut self, tid: i32, rec: &Record<'_>) -> bool {
        self.sym(tid, rec.time, rec.addr)
            .is_some_and(|s| s.is_plt())
    }

    /// A perf record turned into a pseudo function record (sched out =
    /// entry, sched in = exit).
    fn as_frame(it: &Item<'_>) -> Option<(Kind, u64, u16)> {
        match it.rec.kind {
            Kind::Event => {
                let a = it.rec.addr as u32;
                if a == id::PERF_SCHED_OUT || a == id::PERF_SCHED_OUT_PREEMPT {
                    Some((Kind::Entry, it.rec.time, 0))
                } else if a == id::PERF_SCHED_IN {
                    Some((Kind::Exit, it.rec.time, 0))
                } else {
                    None
                }
            }
            k => Some((k, it.rec.time, it.rec.depth)),
        }
    }

    /// uftrace's `__fstack_consume` after the merger handed out `it`.
    fn consume(&mut self, it: &Item<'d>) {
        let ti = it.task;
        if let Source::Perf(ev) = it.source {
            if let Some(c) = ev.comm() {
                self.tasks[ti].comm = String::from_utf8_lossy(&c[..c.len().min(15)]).into_owned();
            }
        }
        // first timestamp (events outside functions do not count)
        if !(self.tasks[ti].stack_count == 0 && it.rec.kind == Kind::Event)
            && (self.first == 0 || self.first > it.rec.time)
        {
            self.first = it.rec.time;
        }
        self.account_time(it);
        self.update_stack_count(it);
    }

    fn account_time(&mut self, it: &Item<'d>) {
        let ti = it.task;
        let Some((kind, time, depth)) = Self::as_frame(it) else {
            return;
        };
        let depth = depth as i32;
        if !self.tasks[ti].fstack_set {
            let t = &mut self.tasks[ti];
            t.stack_count = depth;
            if kind == Kind::Exit {
                t.stack_count += 1;
            }
            t.fstack_set = true;
            if !t.fork_handled {
                let ppid = t.ppid;
                let parent_fdd = self
                    .tasks
                    .iter()
                    .find(|p| p.tid == ppid && ppid != 0)
                    .map(|p| p.fork_display_depth);
                let t = &mut self.tasks[ti];
                if let Some(fdd) = parent_fdd {
                    if fdd != 0 {
                        t.display_depth = fdd;
                        t.display_depth_set = true;
                    }
                }
                t.fork_handled = true;
            }
            let n = self.tasks[ti].stack_count;
            for i in 0..n {
                if let Some(f) = self.fget(ti, i) {
                    f.total_time = time;
                    f.child_time = 0;
                    f.valid = true;
                }
            }
            self.tasks[ti].depth = self.opts.depth;
        }
        if self.tasks[ti].lost_seen {
            if kind == Kind::Lost {
                return;
            }
            let t = &mut self.tasks[ti];
            t.stack_count = depth;
            if kind == Kind::Exit {
                t.stack_count += 1;
            }
            t.lost_seen = false;
            let base = t.user_stack_count;
            for i in 0..=depth {
                if let Some(f) = self.fget(ti, i + base) {
                    f.total_time = time.wrapping_sub(1);
                    f.child_time = 0;
                }
            }
        }
        if !self.tasks[ti].enabled {
            return;
        }
        match kind {
            Kind::Entry => {
                let sc = self.tasks[ti].stack_count;
                let addr = it.rec.addr;
                if let Some(f) = self.fget(ti, sc) {
                    f.addr = addr;
                    f.total_time = time;
                    f.child_time = 0;
                    f.valid = true;
                }
            }
            Kind::Exit => {
                let idx = self.tasks[ti].stack_count - 1;
                let Some(f) = self.fget(ti, idx) else { return };
                let mut delta = time.wrapping_sub(f.total_time);
                if !f.valid {
                    delta = 0;
                }
                f.valid = false;
                f.total_time = delta;
                if f.child_time > f.total_time {
                    f.child_time = f.total_time;
                }
                if self.tasks[ti].stack_count > 1 {
                    if let Some(p) = self.fget(ti, idx - 1) {
                        p.child_time = p.child_time.wrapping_add(delta);
                    }
                }
            }
            Kind::Lost => {
                let t = &mut self.tasks[ti];
                t.lost_seen = true;
                t.display_depth_set = false;
                let (hi, lo) = (t.stack_count, t.user_stack_count);
                let mut lost_time = 0u64;
                let mut i = hi;
                while i >= lo {
                    if let Some(f) = self.fget(ti, i) {
                        if lost_time == 0 {
                            lost_time = f.total_time.wrapping_add(1);
                        }
                        let delta = lost_time.wrapping_sub(f.total_time);
                        f.total_time = delta;
                        if f.child_time > f.total_time {
                            f.child_time = f.total_time;
                        }
                        if i > 0 {
                            if let Some(p) = self.fget(ti, i - 1) {
                                p.child_time = p.child_time.wrapping_add(delta);
                            }
                        }
                    }
                    if i == i32::MIN {
                        break;
                    }
                    i -= 1;
                }
            }
            Kind::Event => {}
        }
    }

    fn update_stack_count(&mut self, it: &Item<'d>) {
        let Some((kind, _, _)) = Self::as_frame(it) else {
            return;
        };
        let user = matches!(it.source, Source::User);
        let t = &mut self.tasks[it.task];
        t.ctx = if user { Ctx::User } else { Ctx::Unknown };
        match kind {
            Kind::Entry => t.stack_count += 1,
            Kind::Exit if t.stack_count > 0 => t.stack_count -= 1,
            _ => {}
        }
        if t.ctx == Ctx::User {
            match kind {
                Kind::Entry => t.user_stack_count += 1,
                Kind::Exit if t.user_stack_count > 0 => t.user_stack_count -= 1,
                _ => {}
            }
        }
    }

    fn filter_at(&self, tid: i32, time: u64, addr: u64) -> (u32, FilterMode, i32) {
        let Some(s) = self.data.session_at(tid, time) else {
            return (0, FilterMode::None, 0);
        };
        match self.data.sessions.sessions[s].filters.find(addr) {
            Some(e) => (e.trigger.flags, e.trigger.fmode, e.trigger.depth),
            None => (0, FilterMode::None, 0),
        }
    }

    /// uftrace's `fstack_entry`; returns the trigger flags, or `None` when
    /// the function is not shown.
    fn fstack_entry(&mut self, ti: usize, rec: &Record<'d>) -> Option<u32> {
        let sc = self.tasks[ti].stack_count;
        let orig = self.tasks[ti].depth;
        {
            let f = self.fget(ti, sc - 1)?;
            f.orig_depth = orig;
            f.flags = 0;
        }
        if self.tasks[ti].out_count > 0 {
            self.fget(ti, sc - 1)?.flags |= FL_NORECORD;
            return None;
        }
        let tid = self.tasks[ti].tid;
        let mut flags = 0;
        let mut fmode = FilterMode::None;
        let mut tdepth = 0;
        if let Some(s) = self.data.session_at(tid, rec.time) {
            let fx = &self.fixups[s];
            let i = fx.partition_point(|e| e.0 <= rec.addr);
            if let Some(&(st, en, kind)) = i.checked_sub(1).map(|k| &fx[k]) {
                if st <= rec.addr && rec.addr < en {
                    match kind {
                        Fixup::Exec => self.fget(ti, sc - 1)?.flags |= FL_EXEC,
                        Fixup::Setjmp => {
                            self.setjmp_depth = self.tasks[ti].display_depth + 1;
                            self.setjmp_count = self.tasks[ti].stack_count;
                        }
                        Fixup::Longjmp => self.fget(ti, sc - 1)?.flags |= FL_LONGJMP,
                        Fixup::Fork => {
                            self.tasks[ti].fork_display_depth = self.tasks[ti].display_depth + 1;
                        }
                    }
                }
            }
            (flags, fmode, tdepth) = self.filter_at(tid, rec.time, rec.addr);
        }
        if flags & trig::FILTER != 0 {
            if fmode == FilterMode::In {
                self.tasks[ti].in_count += 1;
                self.fget(ti, sc - 1)?.flags |= FL_FILTERED;
            } else {
                self.tasks[ti].out_count += 1;
                self.fget(ti, sc - 1)?.flags |= FL_NOTRACE | FL_NORECORD;
                return None;
            }
            self.tasks[ti].depth = self.opts.depth;
        } else if self.filter_mode == FilterMode::In && self.tasks[ti].in_count == 0 {
            self.fget(ti, sc - 1)?.flags |= FL_NORECORD;
            return None;
        }
        if flags & trig::DEPTH != 0 {
            self.tasks[ti].depth = tdepth;
        }
        if flags & trig::TRACE_ON != 0 {
            self.enabled = true;
        }
        if flags & trig::TRACE_OFF != 0 {
            self.enabled = false;
            self.tasks[ti].display_depth_set = false;
        }
        if !self.enabled {
            return None;
        }
        if self.tasks[ti].depth <= 0 || flags & trig::HIDE != 0 {
            self.fget(ti, sc - 1)?.flags |= FL_NORECORD;
            return None;
        }
        let t = &mut self.tasks[ti];
        t.depth -= 1;
        if !t.display_depth_set {
            t.display_depth = (t.stack_count - 1).max(0);
            t.display_depth_set = true;
        }
        Some(flags)
    }

    fn fstack_exit(&mut self, ti: usize) {
        let sc = self.tasks[ti].stack_count;
        let Some(f) = self.fget(ti, sc) else { return };
        let fl = f.flags;
        let od = f.orig_depth;
        f.flags = 0;
        let t = &mut self.tasks[ti];
        if fl & FL_FILTERED != 0 {
            t.in_count -= 1;
        } else if fl & FL_NOTRACE != 0 {
            t.out_count -= 1;
        }
        t.depth = od;
    }

    fn fstack_update(&mut self, kind: Kind, ti: usize, idx: i32) -> i32 {
        let Some(f) = self.fpeek(ti, idx) else {
            return self.tasks[ti].display_depth;
        };
        if kind == Kind::Entry {
            let (sd, sc) = (self.setjmp_depth, self.setjmp_count);
            let t = &mut self.tasks[ti];
            if f.flags & FL_EXEC != 0 {
                t.display_depth = 0;
                t.stack_count = 0;
                t.user_display_depth = 0;
                t.user_stack_count = 0;
            } else if f.flags & FL_LONGJMP != 0 {
                t.display_depth = sd;
                t.stack_count = sc;
                t.user_display_depth = sd;
                t.user_stack_count = sc;
            } else {
                t.display_depth += 1;
                if t.ctx == Ctx::User {
                    t.user_display_depth += 1;
                }
            }
            if let Some(f) = self.fget(ti, idx) {
                f.flags &= !(FL_EXEC | FL_LONGJMP);
            }
        } else {
            let t = &mut self.tasks[ti];
            if !t.display_depth_set {
                t.display_depth = t.stack_count + 1;
                t.display_depth_set = true;
            }
            t.display_depth = (t.display_depth - 1).max(0);
            if t.ctx == Ctx::User {
                t.user_display_depth = (t.user_display_depth - 1).max(0);
            }
        }
        self.tasks[ti].display_depth
    }

    /// uftrace's `fstack_check_skip`: -1 skip, 0 show, 1 show (trigger).
    fn check_skip(&mut self, ti: usize, it: &Item<'d>) -> i32 {
        let t = &self.tasks[ti];
        if t.out_count > 0 {
            return -1;
        }
        let rec = &it.rec;
        if rec.kind == Kind::Exit {
            if t.stack_count < 1 {
                return 0;
            }
            let sc = t.stack_count;
            let Some(f) = self.fpeek(ti, sc - 1) else {
                return -1;
            };
            return if f.flags & FL_NORECORD != 0 { -1 } else { 0 };
        }
        let mut depth = t.depth;
        if self.data.session_at(t.tid, rec.time).is_none() {
            return -1;
        }
        let (flags, fmode, _) = self.filter_at(t.tid, rec.time, rec.addr);
        if flags & trig::FILTER != 0 {
            if fmode == FilterMode::Out {
                return -1;
            }
            depth = self.opts.depth;
        } else if self.filter_mode == FilterMode::In && t.in_count == 0 {
            return -1;
        }
        if flags & (trig::DEPTH | trig::TRACE_ON) != 0 {
            return 1;
        }
        if flags & (trig::TRACE_OFF | trig::HIDE) != 0 || depth <= 0 {
            return -1;
        }
        0
    }

    /// uftrace's `fstack_skip`: consume filtered records after the current
    /// one and return the next shown item (peeked, not consumed).
    fn skip(&mut self, ti: usize, cur: &Item<'d>, curr_depth: i32) -> Option<Item<'d>> {
        let sc = self.tasks[ti].stack_count;
        let f = self.fpeek(ti, sc - 1)?;
        if f.flags & (FL_EXEC | FL_LONGJMP) != 0 {
            return None;
        }
        let mut next = self.merger.peek()?;
        loop {
            let same_src = matches!(
                (cur.source, next.source),
                (Source::User, Source::User) | (Source::Perf(_), Source::Perf(_))
            );
            if next.task == ti && same_src && curr_depth >= next.rec.depth as i32 {
                break;
            }
            let nt = next.task;
            let mut consume = false;
            if next.rec.kind == Kind::Event && self.tasks[nt].user_stack_count == 0 {
                consume = true;
            }
            if !consume && next.rec.kind == Kind::Lost {
                return None;
            }
            if !consume
                && self.opts.no_libcall
                && self
                    .sym(self.tasks[ti].tid, next.rec.time, next.rec.addr)
                    .is_some_and(|s| s.is_plt())
            {
                consume = true;
            }
            if !consume && self.check_skip(nt, &next) >= 0 {
                break;
            }
            let n = self.merger.next_item()?;
            self.consume(&n);
            match n.rec.kind {
                Kind::Entry => {
                    let _ = self.fstack_entry(nt, &n.rec);
                }
                Kind::Exit => self.fstack_exit(nt),
                _ => {}
            }
            if !self.enabled {
                return None;
            }
            next = self.merger.peek()?;
        }
        Some(next)
    }

    /// Symbol of a record (cached per session and address).
    fn sym(&mut self, tid: i32, time: u64, addr: u64) -> Option<&'d crate::symbols::Symbol> {
        let data = self.data;
        let s = data.session_at(tid, time)?;
        if !data.sessions.sessions[s].dlopens.is_empty() {
            return data.symbol_in(s, time, addr);
        }
        let slot = ((addr ^ (addr >> 12) ^ (s as u64).wrapping_mul(0x9e37_79b9)) & 4095) as usize;
        let e = self.sym_cache[slot];
        if e.0 == addr && e.1 == s {
            return e.2;
        }
        let r = data.symbol_in(s, time, addr);
        self.sym_cache[slot] = (addr, s, r);
        r
    }

    fn symname(&mut self, tid: i32, rec: &Record<'_>, buf: &mut Vec<u8>) -> Option<bool> {
        match self.sym(tid, rec.time, rec.addr) {
            Some(s) => {
                buf.extend_from_slice(s.name.as_bytes());
                Some(s.is_plt())
            }
            None => {
                buf.push(b'<');
                push_hex(buf, rec.addr, 0);
                buf.push(b'>');
                None
            }
        }
    }

    /// Print the selected fields for `ti`; `dur` is the duration to show
    /// (`None` = blank).
    fn print_fields(&mut self, ti: usize, addr: Option<u64>, dur: Option<u64>) {
        if self.fields.is_empty() {
            return;
        }
        let t = &self.tasks[ti];
        let line = &mut self.line;
        for f in &self.fields {
            line.push(b' ');
            match f {
                Field::Duration => time_unit(line, dur.unwrap_or(0)),
                Field::Tid => {
                    line.push(b'[');
                    if t.tid >= 0 {
                        push_num(line, t.tid as u64, 6, 0);
                    } else {
                        let mut b = itoa::Buffer::new();
                        pad_left(line, b.format(t.tid).as_bytes(), 6);
                    }
                    line.push(b']');
                }
                Field::Addr => match addr {
                    Some(a) => {
                        push_hex(line, a, 12);
                    }
                    None => line.extend_from_slice(&[b' '; 12]),
                },
                Field::Time => {
                    push_num(line, t.timestamp / 1_000_000_000, 8, 0);
                    line.push(b'.');
                    push_num(line, t.timestamp % 1_000_000_000, 0, 9);
                }
                Field::Delta => {
                    let d = if t.timestamp_last != 0 {
                        t.timestamp.wrapping_sub(t.timestamp_last)
                    } else {
                        0
                    };
                    time_unit(line, d);
                }
                Field::Elapsed => time_unit(line, t.timestamp.wrapping_sub(self.first)),
                Field::Task => pad_left(line, t.comm.as_bytes(), 15),
                Field::Module => {
                    let Some(a) = addr else {
                        line.extend_from_slice(&[b' '; 16]);
                        continue;
                    };
                    let mut name: &str = "[unknown]";
                    if let Some(s) = self.data.session_at(t.tid, t.timestamp) {
                        let sm = &self.data.sessions.sessions[s].maps;
                        if sm.is_kernel(a) {
                            name = "[kernel]";
                        } else if let Some(m) = sm.find(a) {
                            name = basename(&m.libname);
                        } else if is_sched_event(a) {
                            name = "[event]";
                        }
                    }
                    let b = name.as_bytes();
                    let b = &b[..b.len().min(16)];
                    pad_left(line, b, 16);
                }
            }
        }
        line.extend_from_slice(b" | ");
    }

    fn indent(&mut self, depth: i32) {
        for _ in 0..(depth.max(0) as usize * 2) {
            self.line.push(b' ');
        }
    }

    fn values(&mut self, ti: usize, rec: &Record<'d>, retval: bool, out: &mut Vec<u8>) {
        let tid = self.tasks[ti].tid;
        let Some(specs) = self.data.arg_specs(tid, rec.time, rec.addr) else {
            return;
        };
        let ctx = Ctx2 {
            data: self.data,
            tid,
            time: rec.time,
            func: rec.addr,
        };
        format_values(out, specs, rec.data, retval, self.endian, &ctx);
    }

    fn run(&mut self, out: &mut dyn Write) -> io::Result<()> {
        // header
        if self.merger.peek().is_some() && !self.fields.is_empty() {
            let mut first = true;
            for f in &self.fields {
                let (_, _, h) = FIELD_TABLE[*f as usize];
                out.write_all(if first { b"#" } else { b" " })?;
                out.write_all(h.as_bytes())?;
                first = false;
            }
            out.write_all(b"   FUNCTION\n")?;
        }
        let _ = FIELD_LEN;
        let mut prev_time = 0u64;
        while let Some(it) = self.merger.next_item() {
            self.consume(&it);
            let ti = it.task;
            if it.rec.kind == Kind::Event {
                if self.opts.no_event {
                    continue;
                }
                if self.tasks[ti].user_stack_count == 0 {
                    continue;
                }
            }
            if it.rec.time != 0 {
                if prev_time > it.rec.time {
                    self.line.clear();
                    if !self.fields.is_empty() {
                        for f in &self.fields {
                            for _ in 0..FIELD_LEN[*f as usize] + 1 {
                                self.line.push(b' ');
                            }
                        }
                        self.line.extend_from_slice(b" | ");
                    }
                    let d = (self.tasks[ti].display_depth + 1) * 2;
                    self.line.push(b' ');
                    self.indent(d / 2);
                    self.line
                        .extend_from_slice(b"/* inverted time: broken data? */\n");
                    out.write_all(&self.line)?;
                }
                prev_time = it.rec.time;
            }
            self.line.clear();
            self.print_item(&it)?;
            out.write_all(&self.line)?;
        }
        self.line.clear();
        self.remaining_stack();
        out.write_all(&self.line)?;
        Ok(())
    }

    fn print_item(&mut self, it: &Item<'d>) -> io::Result<()> {
        let ti = it.task;
        let tid = self.tasks[ti].tid;
        let rec = it.rec;
        if rec.kind == Kind::Lost {
            let depth = self.tasks[ti].display_depth + 1;
            self.print_fields(ti, None, None);
            self.indent(depth);
            let n = rec.addr as i32;
            if n > 0 {
                let _ = writeln!(self.line, "/* LOST {n} records!! */");
            } else {
                self.line.extend_from_slice(b"/* LOST some records!! */\n");
            }
            return Ok(());
        }
        if rec.kind != Kind::Event && self.opts.no_libcall && self.is_plt(tid, &rec) {
            return Ok(());
        }
        {
            let t = &mut self.tasks[ti];
            t.timestamp_last = t.timestamp;
            t.timestamp = rec.time;
        }
        match rec.kind {
            Kind::Entry => self.print_entry(it),
            Kind::Exit => self.print_exit(it),
            Kind::Event => self.print_event(it),
            Kind::Lost => Ok(()),
        }
    }

    fn print_entry(&mut self, it: &Item<'d>) -> io::Result<()> {
        let ti = it.task;
        let tid = self.tasks[ti].tid;
        let rec = it.rec;
        let mut name = std::mem::take(&mut self.name_buf);
        name.clear();
        self.symname(tid, &rec, &mut name);
        let r = self.print_entry_named(it, &name);
        self.name_buf = name;
        r
    }

    fn print_entry_named(&mut self, it: &Item<'d>, name: &[u8]) -> io::Result<()> {
        let ti = it.task;
        let rec = it.rec;
        if self.fstack_entry(ti, &rec).is_none() {
            return Ok(());
        }
        let depth = self.tasks[ti].display_depth;
        let needs_paren = name.last() != Some(&b')') || rec.more;
        let sc = self.tasks[ti].stack_count;
        let next = if self.opts.no_merge {
            None
        } else {
            self.skip(ti, it, rec.depth as i32)
        };
        let leaf = next.filter(|n| {
            n.task == ti
                && matches!(n.source, Source::User)
                && n.rec.depth == rec.depth
                && n.rec.kind == Kind::Exit
        });
        let mut args = std::mem::take(&mut self.args_buf);
        args.clear();
        if rec.more && self.opts.show_args {
            args.push(b'(');
            self.values(ti, &rec, false, &mut args);
            args.push(b')');
        } else if needs_paren {
            args.extend_from_slice(b"()");
        }
        if let Some(exit) = leaf {
            if let Some(n) = self.merger.next_item() {
                self.consume(&n);
            }
            let mut retval = std::mem::take(&mut self.ret_buf);
            retval.clear();
            if exit.rec.more && self.opts.show_args {
                retval.extend_from_slice(b" = ");
                self.values(ti, &exit.rec, true, &mut retval);
            }
            retval.push(b';');
            let f = self.fpeek(ti, sc - 1).unwrap_or_default();
            self.print_fields(ti, Some(f.addr), Some(f.total_time));
            self.indent(depth);
            self.line.extend_from_slice(name);
            self.line.extend_from_slice(&args);
            self.line.extend_from_slice(&retval);
            self.line.push(b'\n');
            self.ret_buf = retval;
            self.fstack_exit(ti);
        } else {
            let f = self.fpeek(ti, sc - 1).unwrap_or_default();
            self.print_fields(ti, Some(f.addr), None);
            self.indent(depth);
            self.line.extend_from_slice(name);
            self.line.extend_from_slice(&args);
            self.line.extend_from_slice(b" {\n");
            self.fstack_update(Kind::Entry, ti, sc - 1);
        }
        self.args_buf = args;
        Ok(())
    }

    fn print_exit(&mut self, it: &Item<'d>) -> io::Result<()> {
        let ti = it.task;
        let tid = self.tasks[ti].tid;
        let rec = it.rec;
        let sc = self.tasks[ti].stack_count;
        let f = self.fpeek(ti, sc);
        if self.enabled {
            if let Some(f) = f.filter(|f| f.flags & FL_NORECORD == 0) {
                let depth = self.fstack_update(Kind::Exit, ti, sc);
                let mut retval = std::mem::take(&mut self.ret_buf);
                retval.clear();
                if rec.more && self.opts.show_args {
                    retval.extend_from_slice(b" = ");
                    self.values(ti, &rec, true, &mut retval);
                    retval.push(b';');
                }
                self.print_fields(ti, Some(f.addr), Some(f.total_time));
                self.indent(depth);
                self.line.push(b'}');
                self.line.extend_from_slice(&retval);
                self.ret_buf = retval;
                if !self.opts.no_comment {
                    self.line.extend_from_slice(b" /* ");
                    let mut name = std::mem::take(&mut self.name_buf);
                    name.clear();
                    self.symname(tid, &rec, &mut name);
                    self.line.extend_from_slice(&name);
                    self.name_buf = name;
                    self.line.extend_from_slice(b" */");
                }
                self.line.push(b'\n');
            }
        }
        self.fstack_exit(ti);
        Ok(())
    }

    fn check_filter_event(&mut self, ti: usize, rec: &Record<'d>) -> bool {
        let t = &self.tasks[ti];
        if t.out_count > 0
            || t.depth <= 0
            || (self.filter_mode == FilterMode::In && t.in_count == 0)
        {
            return false;
        }
        let a = rec.addr as u32;
        if a == id::PERF_SCHED_IN || a == id::PERF_SCHED_OUT {
            let mut idx = t.stack_count;
            if a == id::PERF_SCHED_OUT {
                idx -= 1;
            }
            if self.fpeek(ti, idx).is_none() {
                return false;
            }
        }
        true
    }

    fn print_event(&mut self, it: &Item<'d>) -> io::Result<()> {
        let ti = it.task;
        let mut rec = it.rec;
        let mut depth = self.tasks[ti].display_depth;
        if !self.check_filter_event(ti, &rec) {
            return Ok(());
        }
        let mut evt = rec.addr as u32;
        let mut next = None;
        if (evt == id::PERF_SCHED_OUT || evt == id::PERF_SCHED_OUT_PREEMPT) && !self.opts.no_merge {
            next = self.skip(ti, it, 0);
        }
        if let Some(n) = next {
            if n.task == ti && n.rec.addr == id::PERF_SCHED_IN as u64 {
                if let Some(n) = self.merger.next_item() {
                    self.consume(&n);
                }
                rec.addr = if evt == id::PERF_SCHED_OUT {
                    id::PERF_SCHED_BOTH as u64
                } else {
                    id::PERF_SCHED_BOTH_PREEMPT as u64
                };
                evt = id::PERF_SCHED_IN;
            }
        }
        if evt == id::EXTERN_DATA {
            depth = 0;
        }
        let sc = self.tasks[ti].stack_count;
        let Some(f) = self.fpeek(ti, sc) else {
            return Ok(());
        };
        if !self.enabled || f.flags & FL_NORECORD != 0 {
            return Ok(());
        }
        if evt == id::PERF_SCHED_IN && f.total_time != 0 {
            self.print_fields(ti, Some(f.addr), Some(f.total_time));
        } else {
            self.print_fields(ti, None, None);
        }
        self.indent(depth);
        self.line.extend_from_slice(b"/* ");
        let a = rec.addr as u32;
        let name = self
            .data
            .user_events
            .name(a)
            .map(|c| c.into_owned())
            .unwrap_or_default();
        self.line.extend_from_slice(name.as_bytes());
        if a == id::EXTERN_DATA {
            self.line.extend_from_slice(b": ");
            self.line.extend_from_slice(rec.data);
        } else if a < id::USER {
            if let Source::Perf(ev) = it.source {
                if let Some(c) = ev.comm() {
                    if a == id::PERF_COMM {
                        self.line.extend_from_slice(b" (comm=\"");
                        self.line.extend_from_slice(c);
                        self.line.extend_from_slice(b"\")");
                    }
                }
            } else if let Some(s) = event_data_str(a, rec.data, self.endian) {
                self.line.extend_from_slice(b" (");
                self.line.extend_from_slice(s.as_bytes());
                self.line.push(b')');
            }
        }
        self.line.extend_from_slice(b" */\n");
        Ok(())
    }

    fn remaining_stack(&mut self) {
        let mut total = 0;
        for ti in 0..self.tasks.len() {
            let t = &self.tasks[ti];
            if !t.enabled || t.stack_count <= 0 {
                continue;
            }
            if t.stack_count == 1 {
                if let Some(f) = self.fpeek(ti, 0) {
                    let a = f.addr as u32 as u64;
                    if f.addr == a
                        && (a == id::PERF_SCHED_OUT as u64
                            || a == id::PERF_SCHED_OUT_PREEMPT as u64)
                    {
                        continue;
                    }
                }
            }
            let mut zero = 0;
            for k in 0..t.stack_count {
                match self.fpeek(ti, k) {
                    Some(f) if f.addr != 0 => break,
                    _ => zero += 1,
                }
            }
            total += t.stack_count - zero;
        }
        if total == 0 {
            return;
        }
        self.line
            .extend_from_slice(b"\nuftrace stopped tracing with remaining functions\n================================================\n");
        for ti in 0..self.tasks.len() {
            let t = self.tasks[ti].clone();
            if !t.enabled || t.stack_count <= 0 {
                continue;
            }
            if t.stack_count == 1 {
                if let Some(f) = self.fpeek(ti, 0) {
                    if f.addr == id::PERF_SCHED_OUT as u64
                        || f.addr == id::PERF_SCHED_OUT_PREEMPT as u64
                    {
                        continue;
                    }
                }
            }
            let mut zero = 0;
            for k in 0..t.stack_count {
                match self.fpeek(ti, k) {
                    Some(f) if f.addr != 0 => break,
                    _ => zero += 1,
                }
            }
            if zero == t.stack_count {
                continue;
            }
            let _ = writeln!(self.line, "task: {}", t.tid);
            let mut sc = t.stack_count;
            while sc > 0 {
                sc -= 1;
                let Some(f) = self.fpeek(ti, sc) else {
                    continue;
                };
                let _ = write!(self.line, "[{}] ", sc - zero);
                match self
                    .data
                    .session_at(t.tid, f.total_time)
                    .and_then(|s| self.data.symbol_in(s, f.total_time, f.addr))
                {
                    Some(s) => self.line.extend_from_slice(s.name.as_bytes()),
                    None => {
                        let n = match f.addr as u32 {
                            id::PERF_SCHED_IN | id::PERF_SCHED_OUT | id::PERF_SCHED_BOTH
                                if f.addr < 1 << 32 =>
                            {
                                "linux:schedule".to_string()
                            }
                            id::PERF_SCHED_OUT_PREEMPT | id::PERF_SCHED_BOTH_PREEMPT
                                if f.addr < 1 << 32 =>
                            {
                                "linux:schedule (pre-empted)".to_string()
                            }
                            _ => format!("<{:x}>", f.addr),
                        };
                        self.line.extend_from_slice(n.as_bytes());
                    }
                }
                self.line.push(b'\n');
                if sc == zero {
                    break;
                }
            }
            self.line.push(b'\n');
        }
    }
}

/// Text of builtin event payloads (`event_get_data_str`).
pub fn event_data_str(id_: u32, data: &[u8], endian: Endian) -> Option<String> {
    let u64s = |i: usize| -> u64 {
        data.get(i * 8..i * 8 + 8)
            .map(|b| {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                endian.u64(a)
            })
            .unwrap_or(0)
    };
    Some(match id_ {
        id::PERF_COMM => format!(
            "comm=\"{}\"",
            String::from_utf8_lossy(data.split(|&b| b == 0).next().unwrap_or(&[]))
        ),
        id::READ_PROC_STATM | id::DIFF_PROC_STATM => {
            let d = if id_ == id::DIFF_PROC_STATM { "+" } else { "" };
            format!(
                "vmsize={d}{}KB vmrss={d}{}KB shared={d}{}KB",
                u64s(0),
                u64s(1),
                u64s(2)
            )
        }
        id::READ_PAGE_FAULT | id::DIFF_PAGE_FAULT => {
            let d = if id_ == id::DIFF_PAGE_FAULT { "+" } else { "" };
            format!("major={d}{} minor={d}{}", u64s(0), u64s(1))
        }
        id::READ_PMU_CYCLE | id::DIFF_PMU_CYCLE => {
            let (c, i) = (u64s(0), u64s(1));
            if id_ == id::DIFF_PMU_CYCLE {
                format!(
                    "cycles=+{c} instructions=+{i} IPC={:.2}",
                    i as f32 / c as f32
                )
            } else {
                format!("cycles={c} instructions={i}")
            }
        }
        id::READ_PMU_CACHE | id::DIFF_PMU_CACHE => {
            let (r, m) = (u64s(0), u64s(1));
            if id_ == id::DIFF_PMU_CACHE {
                format!(
                    "refers=+{r} misses=+{m} hit={:.2}%",
                    100.0 * r.wrapping_sub(m) as f64 / r as f64
                )
            } else {
                format!("refers={r} misses={m}")
            }
        }
        id::READ_PMU_BRANCH | id::DIFF_PMU_BRANCH => {
            let (b, m) = (u64s(0), u64s(1));
            if id_ == id::DIFF_PMU_BRANCH {
                format!(
                    "branch=+{b} misses=+{m} predict={:.2}%",
                    100.0 * b.wrapping_sub(m) as f64 / b as f64
                )
            } else {
                format!("branch={b} misses={m}")
            }
        }
        id::WATCH_CPU => {
            let v = data
                .get(..4)
                .map(|b| endian.u32([b[0], b[1], b[2], b[3]]) as i32)
                .unwrap_or(0);
            format!("cpu={v}")
        }
        x if x < id::BUILTIN => String::from_utf8_lossy(data).into_owned(),
        _ => return None,
    })
}
