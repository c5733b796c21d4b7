//! `uftrace report`: per-function total time, self time and calls (`-s`
//! sort keys, `--avg-total`, `--avg-self`, `-f` fields), and the per-task
//! table of `--task`, byte-identical to uftrace 0.13.
//!
//! ```text
//!   Total time   Self time       Calls  Function
//!   ==========  ==========  ==========  ====================
//!    13.472 ms   13.472 ms          10  linux:schedule
//!    10.442 ms   66.799 us           2  main
//! ```
//!
//! Every function exit (and every schedule event, as `linux:schedule`)
//! adds the frame's duration to the function's entry, found by name; a
//! call under a frame of the same address counts as recursive (its total
//! time is kept apart from the sum, but counts in the average). Functions
//! still running at the end count up to their task's last record. Rows are
//! sorted by the keys in order (largest first; `func` alphabetically),
//! ties in name order.
//!
//! `--threads` is not an option of uftrace 0.13: it says so on stderr and
//! prints the plain report, and so does [`report`] with
//! [`ReportOptions::threads`].

pub mod walk;

use std::collections::HashMap;
use std::io::{self, Write};

use crate::data::UftraceData;
use crate::events::id;
use crate::record::Kind;
use walk::{time_unit, unknown_name, Rec, Stacks, Walk, WalkOptions};

/// Name of the schedule pseudo function.
pub const SCHED_NAME: &str = "linux:schedule";
/// Name of the pre-empted schedule pseudo function.
pub const SCHED_PREEMPT_NAME: &str = "linux:schedule (pre-empted)";

/// `--avg-total` / `--avg-self`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AvgMode {
    #[default]
    None,
    Total,
    Self_,
}

/// Options of `uftrace report`.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// Filters and common options.
    pub walk: WalkOptions,
    /// `-s KEY[,KEY...]`: total, total-avg, total-min, total-max, self,
    /// self-avg, self-min, self-max, call, func, size (with `--avg-*`:
    /// also avg, min, max); with `--task`: total, self, tid, func, name.
    pub sort: Option<String>,
    /// `--avg-total` (true) and `--avg-self`.
    pub avg_total: bool,
    pub avg_self: bool,
    /// `-f FIELD[,FIELD...]` (`+FIELD` adds to the defaults, `none`).
    pub fields: Option<String>,
    /// `--task`: the per-task table.
    pub task: bool,
    /// `--threads`: not a uftrace 0.13 option (see the module doc).
    pub threads: bool,
}

/// A usage error (unknown sort key or field), with uftrace's message.
fn usage(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// Time statistics of one row (`struct report_time_stat`).
#[derive(Debug, Clone, Copy)]
struct TimeStat {
    sum: u64,
    rec: u64,
    avg: u64,
    min: u64,
    max: u64,
}

impl Default for TimeStat {
    fn default() -> Self {
        TimeStat {
            sum: 0,
            rec: 0,
            avg: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl TimeStat {
    fn update(&mut self, t: u64, recursive: bool) {
        if recursive {
            self.rec = self.rec.wrapping_add(t);
        } else {
            self.sum = self.sum.wrapping_add(t);
        }
        self.min = self.min.min(t);
        self.max = self.max.max(t);
    }

    fn finish(&mut self, calls: u64) {
        if let Some(a) = self.sum.wrapping_add(self.rec).checked_div(calls) {
            self.avg = a;
        }
    }
}

/// One row (`struct uftrace_report_node`).
#[derive(Debug, Clone, Default)]
struct Row {
    name: Box<[u8]>,
    total: TimeStat,
    self_: TimeStat,
    call: u64,
    size: u64,
}

/// A fast hash for row names (short, trusted within one run).
#[derive(Default, Clone, Copy)]
struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            h = (h.rotate_left(5) ^ u64::from_le_bytes(a)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
        self.0 = h;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type NameMap = HashMap<Box<[u8]>, usize, std::hash::BuildHasherDefault<NameHasher>>;

/// Rows by name.
#[derive(Default)]
struct Rows {
    rows: Vec<Row>,
    index: NameMap,
}

impl Rows {
    fn get(&mut self, name: &[u8]) -> &mut Row {
        let i = match self.index.get(name) {
            Some(&i) => i,
            None => {
                let i = self.rows.len();
                self.rows.push(Row {
                    name: name.into(),
                    ..Row::default()
                });
                self.index.insert(name.into(), i);
                i
            }
        };
        &mut self.rows[i]
    }

    /// `report_update_node`: add the frame on top of task `ti`'s stack.
    fn update(&mut self, st: &Stacks<'_>, ti: usize, name: &[u8], func_size: Option<u64>) {
        let sc = st.tasks[ti].stack_count;
        let Some(f) = st.get(ti, sc) else { return };
        let mut recursive = false;
        for i in 0..sc {
            let Some(c) = st.get(ti, i) else { break };
            if c.addr == f.addr {
                recursive = true;
                break;
            }
        }
        let total = f.total_time;
        let self_time = f.total_time.wrapping_sub(f.child_time);
        let row = self.get(name);
        row.total.update(total, recursive);
        row.self_.update(self_time, false);
        row.call += 1;
        if let Some(s) = func_size {
            row.size = s;
        }
    }

    /// Rows in name order (uftrace's name tree).
    fn into_sorted_by_name(self) -> Vec<Row> {
        let mut rows = self.rows;
        rows.sort_by(|a, b| a.name.cmp(&b.name));
        rows
    }
}

/// A time of a row: what a time column shows and a time sort key compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Time {
    Total,
    TotalAvg,
    TotalMin,
    TotalMax,
    Self_,
    SelfAvg,
    SelfMin,
    SelfMax,
}

impl Time {
    fn of(self, row: &Row) -> u64 {
        match self {
            Time::Total => row.total.sum,
            Time::TotalAvg => row.total.avg,
            Time::TotalMin => row.total.min,
            Time::TotalMax => row.total.max,
            Time::Self_ => row.self_.sum,
            Time::SelfAvg => row.self_.avg,
            Time::SelfMin => row.self_.min,
            Time::SelfMax => row.self_.max,
        }
    }
}

/// A report column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Time(Time),
    Call,
    Size,
    // --task columns
    TaskTotal,
    TaskSelf,
    TaskTid,
    TaskFuncs,
}

const FIELDS: [(Field, &str, &str); 10] = [
    (Field::Time(Time::Total), "total", "Total time"),
    (Field::Time(Time::TotalAvg), "total-avg", "Total avg"),
    (Field::Time(Time::TotalMin), "total-min", "Total min"),
    (Field::Time(Time::TotalMax), "total-max", "Total max"),
    (Field::Time(Time::Self_), "self", "Self time"),
    (Field::Time(Time::SelfAvg), "self-avg", "Self avg"),
    (Field::Time(Time::SelfMin), "self-min", "Self min"),
    (Field::Time(Time::SelfMax), "self-max", "Self max"),
    (Field::Call, "call", "Calls"),
    (Field::Size, "size", "Size"),
];

const TASK_FIELDS: [(Field, &str, &str); 4] = [
    (Field::TaskTotal, "total", "Total time"),
    (Field::TaskSelf, "self", "Self time"),
    (Field::TaskTid, "tid", "TID"),
    (Field::TaskFuncs, "func", "Num funcs"),
];

/// Columns of field `f`; a task ID takes `tid_len` (`TASK_ID_LEN`).
fn field_len(f: Field, tid_len: usize) -> usize {
    if f == Field::TaskTid {
        tid_len
    } else {
        10
    }
}

fn field_header(f: Field) -> &'static str {
    FIELDS
        .iter()
        .chain(TASK_FIELDS.iter())
        .find(|x| x.0 == f)
        .map_or("", |x| x.2)
}

/// uftrace's `setup_field`: the columns for `-f` (or the defaults).
fn setup_fields(
    spec: Option<&str>,
    defaults: &[Field],
    table: &[(Field, &str, &str)],
) -> Result<Vec<Field>, String> {
    let Some(spec) = spec else {
        return Ok(defaults.to_vec());
    };
    let fields: Vec<Field> = table.iter().map(|t| t.0).collect();
    crate::field::select(spec, &fields, defaults, |f, name| {
        table.iter().any(|t| t.0 == f && t.1 == name)
    })
    .map_err(|name| crate::field::unknown(&name, table.iter().map(|t| t.1)))
}

/// A sort key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Time(Time),
    Call,
    Func,
    Size,
    // --task keys
    Tid,
    Name,
}

fn parse_keys(s: &str, task: bool) -> Option<Vec<Key>> {
    s.split(',')
        .map(|k| {
            Some(match (k, task) {
                ("total", _) => Key::Time(Time::Total),
                ("self", _) => Key::Time(Time::Self_),
                ("func", false) => Key::Func,
                ("func", true) => Key::Call,
                ("total_avg", false) => Key::Time(Time::TotalAvg),
                ("total_min", false) => Key::Time(Time::TotalMin),
                ("total_max", false) => Key::Time(Time::TotalMax),
                ("self_avg", false) => Key::Time(Time::SelfAvg),
                ("self_min", false) => Key::Time(Time::SelfMin),
                ("self_max", false) => Key::Time(Time::SelfMax),
                ("call", false) => Key::Call,
                ("size", false) => Key::Size,
                ("tid", true) => Key::Tid,
                ("name", true) => Key::Name,
                _ => return None,
            })
        })
        .collect()
}

/// uftrace's `convert_sort_keys`.
fn convert_keys(keys: Option<&str>, avg: AvgMode) -> String {
    let Some(keys) = keys else {
        return match avg {
            AvgMode::None => "total",
            AvgMode::Total => "total_avg",
            AvgMode::Self_ => "self_avg",
        }
        .to_string();
    };
    if avg == AvgMode::None {
        return keys.replace('-', "_");
    }
    let pre = if avg == AvgMode::Total {
        "total_"
    } else {
        "self_"
    };
    keys.split(',')
        .map(|k| match k {
            "avg" | "min" | "max" => format!("{pre}{k}"),
            _ => k.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Sort `rows` (in name order) by `keys`: larger first, names ascending;
/// stable, as uftrace's tree keeps ties in insertion (name) order.
fn sort_rows(rows: &mut [Row], keys: &[Key], comm: &dyn Fn(&[u8]) -> Vec<u8>) {
    use std::cmp::Ordering;
    rows.sort_by(|a, b| {
        for k in keys {
            let o = match k {
                Key::Time(t) => t.of(b).cmp(&t.of(a)),
                Key::Call => b.call.cmp(&a.call),
                Key::Size => b.size.cmp(&a.size),
                Key::Func | Key::Tid => a.name.cmp(&b.name),
                Key::Name => comm(&a.name).cmp(&comm(&b.name)),
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    });
}

fn print_header(out: &mut Vec<u8>, fields: &[Field], tl: usize, postfix: &str, newline: bool) {
    if fields.is_empty() {
        return;
    }
    for f in fields {
        let _ = write!(out, "  {:>w$}", field_header(*f), w = field_len(*f, tl));
    }
    let _ = write!(out, "  {postfix}");
    if newline {
        out.push(b'\n');
    }
}

fn print_line(out: &mut Vec<u8>, fields: &[Field], tl: usize) {
    const LINE: &str = "=================================================";
    if fields.is_empty() {
        return;
    }
    for f in fields {
        out.extend_from_slice(b"  ");
        out.extend_from_slice(&LINE.as_bytes()[..field_len(*f, tl)]);
    }
    out.extend_from_slice(b"  ");
    out.extend_from_slice(&LINE.as_bytes()[..20]);
    out.push(b'\n');
}

fn print_fields(out: &mut Vec<u8>, fields: &[Field], tl: usize, row: &Row) {
    for f in fields {
        out.extend_from_slice(b"  ");
        let t = |out: &mut Vec<u8>, v: u64| time_unit(out, v);
        match f {
            Field::Time(time) => t(out, time.of(row)),
            Field::TaskTotal => t(out, row.total.sum),
            Field::TaskSelf => t(out, row.self_.sum),
            Field::Call | Field::TaskFuncs => {
                let _ = write!(out, "{:10}", row.call);
            }
            Field::Size => {
                let _ = write!(out, "{:10}", row.size);
            }
            Field::TaskTid => {
                let _ = write!(out, "{:tl$}", strtol(&row.name));
            }
        }
    }
}

/// `strtol(s, NULL, 10)` of a tid name.
fn strtol(s: &[u8]) -> i64 {
    let t = std::str::from_utf8(s).unwrap_or("");
    t.parse().unwrap_or(0)
}

/// Write `uftrace report` of `data` to `out`; warnings go to `warn`.
/// `-F/-N/-T` items of `opts.walk` are added to the recording's filter
/// tables (hence `&mut`).
///
/// Usage errors are printed on `out` as uftrace prints them on stdout, and
/// returned as `InvalidInput` errors carrying the same text; uftrace then
/// exits 1 (`--avg-total` with `--avg-self`, unknown `-f` field) or 255
/// (unknown `-s` key: the message starts with `Usage: invalid sort key`).
pub fn report(
    data: &mut UftraceData,
    opts: &ReportOptions,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> io::Result<()> {
    if opts.threads {
        writeln!(warn, "uftrace: unrecognized option '--threads'")?;
    }
    let fail = |out: &mut dyn Write, text: String| -> io::Result<()> {
        out.write_all(text.as_bytes())?;
        Err(usage(text.trim_end().to_string()))
    };
    let mut avg = AvgMode::None;
    if opts.avg_total && opts.avg_self {
        return fail(
            out,
            "Usage: --avg-total and --avg-self options should not be used together.\n".into(),
        );
    } else if opts.fields.is_some() && (opts.avg_self || opts.avg_total) {
        writeln!(
            warn,
            "WARN: --avg-total and --avg-self options are ignored when used with -f option."
        )?;
    } else if opts.avg_total {
        avg = AvgMode::Total;
    } else if opts.avg_self {
        avg = AvgMode::Self_;
    }
    let mode = walk::begin(data, &opts.walk, out, warn)?;
    let keys_text = if opts.task {
        opts.sort.clone().unwrap_or_else(|| "total".into())
    } else {
        convert_keys(opts.sort.as_deref(), avg)
    };
    let Some(keys) = parse_keys(&keys_text, opts.task) else {
        let k = opts.sort.as_deref().unwrap_or("");
        return fail(out, format!("Usage: invalid sort key: {k}\n"));
    };
    let fields = if opts.task {
        setup_fields(
            opts.fields.as_deref(),
            &[
                Field::TaskTotal,
                Field::TaskSelf,
                Field::TaskTid,
                Field::TaskFuncs,
            ],
            &TASK_FIELDS,
        )
    } else {
        let defaults: &[Field] = match avg {
            AvgMode::None => &[
                Field::Time(Time::Total),
                Field::Time(Time::Self_),
                Field::Call,
            ],
            AvgMode::Total => &[
                Field::Time(Time::TotalAvg),
                Field::Time(Time::TotalMin),
                Field::Time(Time::TotalMax),
            ],
            AvgMode::Self_ => &[
                Field::Time(Time::SelfAvg),
                Field::Time(Time::SelfMin),
                Field::Time(Time::SelfMax),
            ],
        };
        setup_fields(opts.fields.as_deref(), defaults, &FIELDS)
    };
    // uftrace checks the fields after the walk: nothing is printed before
    let fields = match fields {
        Ok(f) => f,
        Err(m) => return fail(out, m),
    };
    let data: &UftraceData = data;
    let tl = data.flavor.tid_len();
    let mut w = Walk::new(data, &opts.walk, mode);
    let mut buf = Vec::new();
    if opts.task {
        let (rows, comms) = task_rows(&mut w);
        let mut rows = rows.into_sorted_by_name();
        let comm_of = |name: &[u8]| -> Vec<u8> {
            let tid = strtol(name) as i32;
            comms
                .iter()
                .find(|(t, _)| *t == tid)
                .map_or(Vec::new(), |(_, c)| c.clone())
        };
        sort_rows(&mut rows, &keys, &comm_of);
        print_header(&mut buf, &fields, tl, "Task name", true);
        print_line(&mut buf, &fields, tl);
        for row in &rows {
            print_fields(&mut buf, &fields, tl, row);
            let c = comm_of(&row.name);
            let c = &c[..c.iter().position(|&b| b == 0).unwrap_or(c.len())];
            buf.extend_from_slice(b"  ");
            buf.extend_from_slice(c);
            buf.resize(buf.len() + 16usize.saturating_sub(c.len()), b' ');
            buf.push(b'\n');
        }
    } else {
        let rows = function_rows(&mut w, opts.walk.no_libcall);
        let mut rows = rows.into_sorted_by_name();
        for r in &mut rows {
            r.total.finish(r.call);
            r.self_.finish(r.call);
        }
        sort_rows(&mut rows, &keys, &|n| n.to_vec());
        print_header(&mut buf, &fields, tl, "Function", false);
        if !fields.is_empty() {
            buf.push(b'\n');
        }
        print_line(&mut buf, &fields, tl);
        for row in &rows {
            print_fields(&mut buf, &fields, tl, row);
            buf.extend_from_slice(b"  ");
            buf.extend_from_slice(&row.name);
            buf.push(b'\n');
        }
    }
    w.warn_damage(warn)?;
    out.write_all(&buf)
}

/// The rows of the function report (uftrace's `build_function_tree`).
fn function_rows(w: &mut Walk<'_>, no_libcall: bool) -> Rows {
    let mut rows = Rows::default();
    // the symbol size of the last function each task looked up
    let mut func_size: Vec<Option<u64>> = vec![None; w.stacks.tasks.len()];
    let mut name = Vec::new();
    while let Some(it) = w.next_item() {
        let ti = it.task;
        let r = Rec::of(&it);
        let st = &mut w.stacks;
        if r.kind != Kind::Lost {
            st.tasks[ti].timestamp_last = r.time;
        }
        if !st.check_opts(ti, &r) || !st.check_filter(ti, &r) {
            continue;
        }
        match r.kind {
            Kind::Entry => st.check_filter_done(ti, &r),
            Kind::Event => {
                if r.addr != id::PERF_SCHED_IN as u64 {
                    continue;
                }
                let Some(f) = st.get(ti, st.tasks[ti].stack_count) else {
                    continue;
                };
                let n = if f.addr == id::PERF_SCHED_OUT as u64 {
                    SCHED_NAME
                } else if f.addr == id::PERF_SCHED_OUT_PREEMPT as u64 {
                    SCHED_PREEMPT_NAME
                } else {
                    continue;
                };
                rows.update(st, ti, n.as_bytes(), func_size[ti]);
            }
            Kind::Lost => {
                // add the partial durations of the functions before LOST
                let last = st.tasks[ti].timestamp_last;
                st.unwind_lost(ti, |st, f| {
                    insert_sym(st, &mut rows, &mut func_size, &mut name, ti, last, f.addr);
                });
            }
            Kind::Exit => {
                if no_libcall && st.is_plt(ti, r.time, r.addr) {
                    st.check_filter_done(ti, &r);
                    continue;
                }
                insert_sym(st, &mut rows, &mut func_size, &mut name, ti, r.time, r.addr);
                st.check_filter_done(ti, &r);
            }
        }
    }
    // functions still running at the end
    let st = &mut w.stacks;
    for ti in 0..st.tasks.len() {
        let last = st.rstack(ti).0;
        st.close_running(ti, last, true, |st, _, f| {
            if f.addr == id::PERF_SCHED_IN as u64 {
                rows.update(st, ti, SCHED_NAME.as_bytes(), func_size[ti]);
            } else {
                insert_sym(st, &mut rows, &mut func_size, &mut name, ti, last, f.addr);
            }
        });
    }
    rows
}

/// `find_insert_node`: name `addr` and add the top frame to its row.
fn insert_sym(
    st: &mut Stacks<'_>,
    rows: &mut Rows,
    func_size: &mut [Option<u64>],
    name: &mut Vec<u8>,
    ti: usize,
    time: u64,
    addr: u64,
) {
    let sym = st.symbol(ti, time, addr);
    func_size[ti] = sym.map(|s| s.size);
    match sym {
        Some(s) => rows.update(st, ti, s.name.as_bytes(), func_size[ti]),
        None => {
            name.clear();
            unknown_name(name, addr);
            rows.update(st, ti, name, func_size[ti]);
        }
    }
}

/// The rows of `--task` (uftrace's `report_task`), and each task's name.
fn task_rows(w: &mut Walk<'_>) -> (Rows, Vec<(i32, Vec<u8>)>) {
    let mut rows = Rows::default();
    let n = w.stacks.tasks.len();
    // sched-out time and idle time per task; the stamp starts at the
    // task's creation (task.txt), as in uftrace
    let mut stamp: Vec<u64> = w
        .stacks
        .tasks
        .iter()
        .map(|t| {
            w.stacks
                .data
                .sessions
                .find_task(t.tid)
                .map_or(0, |x| x.stamp)
        })
        .collect();
    let mut idle = vec![0u64; n];
    let mut name = Vec::new();
    while let Some(it) = w.next_item() {
        let ti = it.task;
        let r = Rec::of(&it);
        if matches!(r.kind, Kind::Entry | Kind::Lost) {
            continue;
        }
        let st = &mut w.stacks;
        if !st.check_opts(ti, &r) || !st.check_filter(ti, &r) {
            continue;
        }
        st.tasks[ti].timestamp_last = r.time;
        if r.kind == Kind::Event {
            if r.addr == id::PERF_SCHED_OUT as u64 {
                stamp[ti] = r.time;
                continue;
            } else if r.addr == id::PERF_SCHED_IN as u64 {
                if stamp[ti] != 0 {
                    idle[ti] = idle[ti].wrapping_add(r.time.wrapping_sub(stamp[ti]));
                }
                stamp[ti] = 0;
            } else {
                continue;
            }
        }
        tid_name(&mut name, st.tasks[ti].tid);
        rows.update(st, ti, &name, None);
    }
    let st = &mut w.stacks;
    for ti in 0..n {
        let last = st.tasks[ti].timestamp_last;
        st.close_running(ti, last, false, |st, _, f| {
            if f.addr == id::PERF_SCHED_IN as u64 {
                if stamp[ti] != 0 {
                    idle[ti] = idle[ti].wrapping_add(last.wrapping_sub(f.total_time));
                }
                stamp[ti] = 0;
            }
            tid_name(&mut name, st.tasks[ti].tid);
            rows.update(st, ti, &name, None);
        });
    }
    // total = run time (the sum of self times), self = run time - idle
    for row in &mut rows.rows {
        let tid = strtol(&row.name) as i32;
        let ti = st.task_index(tid);
        row.total = row.self_;
        row.self_ = TimeStat {
            sum: row.total.sum.wrapping_sub(ti.map_or(0, |t| idle[t])),
            rec: 0,
            avg: 0,
            min: 0,
            max: 0,
        };
    }
    let comms = st.tasks.iter().map(|t| (t.tid, t.comm.clone())).collect();
    (rows, comms)
}

fn tid_name(buf: &mut Vec<u8>, tid: i32) {
    buf.clear();
    let mut b = itoa::Buffer::new();
    buf.extend_from_slice(b.format(tid).as_bytes());
}
