//! The function-stack walk that every uftrace output shares: `uftrace
//! replay`, `report`, `graph` and `dump` (`--chrome`, `--flame-graph`,
//! `--graphviz`, and per task the raw dump).
//!
//! uftrace keeps, for every task, an array of `max_stack` frames (address,
//! start time then duration, child time, flags) and a stack count. Each
//! record is first *consumed* (times accounted, stack count moved), then the
//! command asks whether the record passes the options and filters, handles
//! it, and tells the stack it is done with it (which may move the display
//! depth or, for `exec`/`longjmp`, reset the stack). The outputs depend on
//! every detail of this bookkeeping, including frames left stale by earlier
//! calls at the same depth, so this module follows uftrace 0.13 step by step
//! (its `utils/fstack.c`), kernel records (`-k` data) included: they
//! count on top of the user stack, are hidden outside user functions
//! unless `--kernel-full`, and only they pass `--kernel-only`.
//!
//! Nothing here allocates per record: a task's frame array grows only to the
//! deepest nesting seen.
//!
//! # Wiring the outputs into the CLI
//!
//! Every output takes the opened recording (`&mut UftraceData`: `-F/-N/-T`
//! add entries to its filter tables, so open it once per output), an
//! options struct with a [`WalkOptions`] inside, the output writer (stdout)
//! and a warning writer (stderr). Open the recording with
//! `OpenOptions { demangle: --demangle (default Simple), .. }`.
//!
//! | command line | function |
//! |---|---|
//! | `tracemux report DIR` (= `uftrace replay`) | [`crate::replay::replay_data`] |
//! | `tracemux dump --records DIR` (= `uftrace dump`) | [`crate::dump::dump`] |
//! | `tracemux dump --chrome DIR` | [`crate::chrome::ChromeOptions`] (a [`WalkView`]) |
//! | `tracemux dump --flame-graph DIR [--sample-time T]` | [`crate::flame::FlameOptions`] (a [`WalkView`]) |
//! | `tracemux dump --graphviz DIR` | [`crate::graph::graphviz::GraphvizOptions`] (a [`WalkView`]) |
//! | `tracemux stats DIR` (= `uftrace report`) `[-s KEYS] [--avg-total\|--avg-self] [-f FIELDS] [--task] [--threads]` | [`crate::report::report`] |
//! | `tracemux stats --graph [FUNC] DIR` (= `uftrace graph`) `[-f FIELDS]` | [`crate::graph::graph`] |
//!
//! Flags every one of them takes, into [`WalkOptions`] (uftrace's names):
//! `-F/--filter FUNC` and `-N/--notrace FUNC` (repeatable; join them with
//! `;` in command-line order, `-N` items prefixed with `!`, into
//! `filter`), `-T/--trigger FUNC@ACT` (`trigger`, `;`-joined),
//! `-D/--depth N`, `-t/--time-filter TIME` (`crate::argspec::parse_time`
//! with unit `us` by default → ns), `--tid TID[,TID]`, `--no-libcall`,
//! `--no-event`, `--no-sched`, `--event-full`, `--match regex|glob`;
//! dump and chrome also `--no-args`. uftrace ignores the options placed
//! after `graph FUNC`; a CLI of ours need not.
//!
//! Errors: an `io::Error` of kind `InvalidInput` is a usage error whose
//! text was already printed on the output as uftrace prints it (exit 1, or
//! 255 for `Usage: invalid sort key`); other errors are write errors (a
//! closed pipe is not an error for the CLI).

mod stacks;

use std::io::{self, Write};

pub use stacks::{FStack, Rec, Stacks, TaskState};

use crate::argspec::{trig, FilterMode};
use crate::data::UftraceData;
use crate::events::id;
use crate::merge::{Item, MergeOptions, Merger, Source};
use crate::record::{Damage, Kind};
use crate::PatternType;

/// Frame flags (uftrace's `FSTACK_FL_*`).
pub mod fl {
    pub const FILTERED: u32 = 1 << 0;
    pub const NOTRACE: u32 = 1 << 1;
    pub const NORECORD: u32 = 1 << 2;
    pub const EXEC: u32 = 1 << 3;
    pub const LONGJMP: u32 = 1 << 4;
}

/// uftrace's default `-D` (and `--max-stack`) value.
pub const DEFAULT_DEPTH: i32 = 1024;

/// Options every walking command accepts (uftrace's common analysis
/// options). The defaults are uftrace's.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// `-F NAME` items and `-N NAME` items (the latter prefixed with `!`),
    /// joined with `;` in command-line order.
    pub filter: Option<String>,
    /// `-T` triggers (`NAME@action,...`).
    pub trigger: Option<String>,
    /// `-D`: max depth.
    pub depth: i32,
    /// `-t`: time filter in ns.
    pub time_filter: u64,
    /// `--tid`: only these tasks.
    pub tids: Option<Vec<i32>>,
    /// `--no-libcall`: skip PLT (library) calls.
    pub no_libcall: bool,
    /// `--no-event`: skip events.
    pub no_event: bool,
    /// `--no-sched`: skip schedule events.
    pub no_sched: bool,
    /// `--event-full`: keep events outside user functions.
    pub event_full: bool,
    /// `--kernel-full`: keep kernel functions outside user functions.
    pub kernel_full: bool,
    /// `--kernel-only`: kernel records only.
    pub kernel_only: bool,
    /// `--match`: pattern type of `-F/-N/-T`.
    pub pattern: PatternType,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            filter: None,
            trigger: None,
            depth: DEFAULT_DEPTH,
            time_filter: 0,
            tids: None,
            no_libcall: false,
            no_event: false,
            no_sched: false,
            event_full: false,
            kernel_full: false,
            kernel_only: false,
            pattern: PatternType::Regex,
        }
    }
}

impl WalkOptions {
    /// Whether any filter option is set (uftrace's `opts_has_filter`).
    pub fn has_filter(&self) -> bool {
        self.filter.is_some()
            || self.trigger.is_some()
            || self.time_filter != 0
            || self.depth != DEFAULT_DEPTH
    }
}

/// Install the `-F/-N/-T` items of `opts` in the recording's filter tables
/// and return the resulting filter mode, as uftrace's
/// `fstack_setup_filters`. When the filters add no entry to the tables (or
/// the triggers no new one), uftrace prints `Usage: failed to set filter
/// or trigger: ...` on stdout and goes on; so does this, on `out`. (A
/// filter that matches nothing in a recording with argument specs does not
/// count as failed: uftrace counts every entry of the tables.)
pub fn setup_filters(
    data: &mut UftraceData,
    opts: &WalkOptions,
    out: &mut dyn Write,
) -> io::Result<FilterMode> {
    let mut mode = FilterMode::None;
    let mut apply = |modes: Vec<FilterMode>| {
        for m in modes {
            if m == FilterMode::In {
                mode = FilterMode::In;
            } else if mode == FilterMode::None {
                mode = FilterMode::Out;
            }
        }
    };
    let count = |d: &UftraceData| -> usize {
        d.sessions
            .sessions
            .iter()
            .map(|s| s.filters.entries.len())
            .sum()
    };
    // uftrace gives up after filters that set nothing (the triggers are
    // not installed then), and after triggers when the tables are still
    // empty (a trigger on a function the filters hold adds no entry)
    let mut failed = false;
    if let Some(f) = &opts.filter {
        apply(data.add_triggers(f, trig::FILTER, opts.pattern, false));
        failed = count(data) == 0;
    }
    if let (Some(t), false) = (&opts.trigger, failed) {
        apply(data.add_triggers(t, 0, opts.pattern, false));
        failed = count(data) == 0;
    }
    if failed {
        out.write_all(b"Usage: failed to set filter or trigger: ")?;
        let mut or = "";
        if let Some(f) = &opts.filter {
            out.write_all(f.as_bytes())?;
            or = " or ";
        }
        if let Some(t) = &opts.trigger {
            out.write_all(or.as_bytes())?;
            out.write_all(t.as_bytes())?;
        }
        out.write_all(b"\n")?;
    }
    Ok(mode)
}

/// The start of every output: the damage found when opening the recording
/// goes to `warn`, then the `-F/-N/-T` items of `opts` are installed (see
/// [`setup_filters`]).
pub fn begin(
    data: &mut UftraceData,
    opts: &WalkOptions,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> io::Result<FilterMode> {
    warn_damage(warn, &data.damage)?;
    setup_filters(data, opts, out)
}

/// What a view drawn from one walk gets once [`begin`] has run: the
/// recording (its filter tables set), the filter mode and the two writers.
pub struct Walked<'a> {
    pub data: &'a UftraceData,
    pub mode: FilterMode,
    pub out: &'a mut dyn Write,
    pub warn: &'a mut dyn Write,
}

/// The `uftrace dump` views drawn from one walk of the recording
/// (`--chrome`, `--flame-graph`, `--graphviz`): their options implement
/// this, and [`WalkView::write_view`] runs them.
pub trait WalkView {
    /// The filters and common options.
    fn walk_options(&self) -> &WalkOptions;

    /// Write the view once [`begin`] has installed the filters.
    fn render(&self, w: Walked<'_>) -> io::Result<()>;

    /// Write the view of `data` to `out`; warnings and damage go to `warn`.
    /// `-F/-N/-T` items of the walk options are added to the recording's
    /// filter tables (hence `&mut`).
    fn write_view(
        &self,
        data: &mut UftraceData,
        out: &mut dyn Write,
        warn: &mut dyn Write,
    ) -> io::Result<()> {
        let mode = begin(data, self.walk_options(), out, warn)?;
        self.render(Walked {
            data,
            mode,
            out,
            warn,
        })
    }
}

/// One `uftrace: ...` line on `warn` for each piece of damage.
pub fn warn_damage(warn: &mut dyn Write, damage: &[Damage]) -> io::Result<()> {
    for d in damage {
        writeln!(warn, "uftrace: {d}")?;
    }
    Ok(())
}

/// A merged walk: the [`Merger`] plus the [`Stacks`] it feeds.
pub struct Walk<'d> {
    /// The records of all tasks and perf files in time order.
    pub merger: Merger<'d>,
    /// The stacks the records go through.
    pub stacks: Stacks<'d>,
}

impl<'d> Walk<'d> {
    /// The walk over every task of `data` (after [`setup_filters`]).
    pub fn new(data: &'d UftraceData, opts: &WalkOptions, filter_mode: FilterMode) -> Walk<'d> {
        let mo = MergeOptions {
            time_filter: opts.time_filter,
            tids: opts.tids.clone(),
        };
        Walk {
            merger: Merger::new(data, &mo),
            stacks: Stacks::new(data, opts, filter_mode),
        }
    }

    /// Report the damage found in the data files while walking on `warn`.
    pub fn warn_damage(&mut self, warn: &mut dyn Write) -> io::Result<()> {
        warn_damage(warn, &self.merger.take_damage())
    }

    /// `read_rstack`: the next record in time order, already consumed.
    #[inline]
    pub fn next_item(&mut self) -> Option<Item<'d>> {
        let it = self.merger.next_item()?;
        self.stacks.consume_item(&it);
        Some(it)
    }
}

/// What `uftrace dump`'s replay-order outputs (`--chrome`,
/// `--flame-graph`, `--graphviz`) do with each record (uftrace's
/// `uftrace_dump_ops`).
pub trait DumpOps {
    /// A function entry or exit (or LOST record) named `name`, or a
    /// schedule event (`r.kind == Event`) named `linux:schedule`; `blob`
    /// holds its arguments or return value.
    fn task_rstack(&mut self, st: &mut Stacks<'_>, ti: usize, name: &[u8], r: &Rec, blob: &[u8]);
    /// A perf event other than sched-in/out.
    fn perf_event(&mut self, _st: &mut Stacks<'_>, _ti: usize, _ev: &crate::perf::PerfEvent) {}
}

/// uftrace's `do_dump_replay` without header and footer: every record in
/// time order through `ops`, then exits at each task's last time for the
/// functions still running.
pub fn dump_replay(w: &mut Walk<'_>, ops: &mut dyn DumpOps, no_libcall: bool) {
    let mut name = Vec::new();
    while let Some(it) = w.next_item() {
        let ti = it.task;
        let r = Rec::of(&it);
        let st = &mut w.stacks;
        st.tasks[ti].timestamp_last = r.time;
        if !st.check_opts(ti, &r) || !st.check_filter(ti, &r) {
            continue;
        }
        if r.kind == Kind::Event {
            if r.addr == id::PERF_SCHED_IN as u64 || r.addr == id::PERF_SCHED_OUT as u64 {
                ops.task_rstack(st, ti, b"linux:schedule", &r, &[]);
            } else if let Source::Perf(ev) = &it.source {
                ops.perf_event(st, ti, ev);
            }
        } else {
            replay_func(st, ops, ti, &r, it.rec.data, no_libcall, &mut name);
        }
        st.check_filter_done(ti, &r);
    }
    remaining_exits(&mut w.stacks, ops, no_libcall, &mut name);
}

/// `dump_replay_func`: name the function and hand it to `ops`.
fn replay_func(
    st: &mut Stacks<'_>,
    ops: &mut dyn DumpOps,
    ti: usize,
    r: &Rec,
    blob: &[u8],
    no_libcall: bool,
    name: &mut Vec<u8>,
) {
    let sym = st.symbol(ti, r.time, r.addr);
    if no_libcall && sym.is_some_and(|s| s.is_plt()) {
        return;
    }
    match sym {
        // the name is borrowed from the recording: no copy per record
        Some(s) => ops.task_rstack(st, ti, s.name.as_bytes(), r, blob),
        None => {
            name.clear();
            unknown_name(name, r.addr);
            ops.task_rstack(st, ti, name, r, blob);
        }
    }
}

/// Exits of the functions still running at the end, at each task's last
/// time (the end of uftrace's `do_dump_replay`).
fn remaining_exits(
    st: &mut Stacks<'_>,
    ops: &mut dyn DumpOps,
    no_libcall: bool,
    name: &mut Vec<u8>,
) {
    for ti in 0..st.tasks.len() {
        let last = st.tasks[ti].timestamp_last;
        st.close_running(ti, last, false, |st, _, f| {
            let r = Rec {
                kind: Kind::Exit,
                time: last,
                addr: f.addr,
                depth: 0,
                more: false,
                user: true,
                kernel: false,
            };
            st.set_rstack(ti, last, f.addr);
            if st.check_opts(ti, &r) && st.check_filter(ti, &r) {
                replay_func(st, ops, ti, &r, &[], no_libcall, name);
                st.check_filter_done(ti, &r);
            }
        });
    }
}

/// What the argument formatters need to resolve pointers (to function
/// names) and enums: the task, the record's time and the function.
pub struct ArgCtx<'a> {
    pub data: &'a UftraceData,
    pub tid: i32,
    pub time: u64,
    /// Address of the function whose arguments are printed.
    pub func: u64,
}

impl ArgCtx<'_> {
    /// The name of the function at `addr` (`task_find_sym_addr`).
    pub fn sym(&self, addr: u64) -> Option<&str> {
        let s = self.data.session_at(self.tid, self.time)?;
        self.data.symbol_in(s, self.time, addr).map(|s| &*s.name)
    }

    /// `get_enum_string` of `val` when the function's module is known
    /// (`None`: uftrace prints the raw value instead).
    /// `val` as [`crate::args::ArgContext::enum_text`] has it.
    pub fn enum_of(&self, name: &str, val: i64) -> Option<String> {
        let s = self.data.session_at(self.tid, self.time)?;
        let m = self.data.find_map(s, self.func)?;
        let mi = m.module?;
        let wide = self.data.flavor.newer();
        Some(
            self.data.modules[mi]
                .debug
                .enums
                .format_as(name, val, wide)
                .or_else(|| self.data.auto_args.enums.format_as(name, val, wide))
                .unwrap_or_else(|| val.to_string()),
        )
    }
}

impl crate::args::ArgContext for ArgCtx<'_> {
    fn symbol_name(&self, addr: u64) -> Option<&str> {
        self.sym(addr)
    }
    fn enum_text(&self, name: &str, val: i64) -> Option<String> {
        self.enum_of(name, val)
    }
    fn wide_enums(&self) -> bool {
        self.data.flavor.newer()
    }
}

/// Append `<hex>`, uftrace's name of an address without a symbol.
pub fn unknown_name(buf: &mut Vec<u8>, addr: u64) {
    let _ = write!(buf, "<{addr:x}>");
}

/// uftrace's `print_time_unit` (10 columns; the value is taken as signed
/// and printed as its absolute value, as uftrace does: a duration gone
/// negative in damaged data prints as a small one).
pub fn time_unit(out: &mut Vec<u8>, nsec: u64) {
    if nsec == 0 {
        out.extend_from_slice(b"          ");
        return;
    }
    const UNITS: [&[u8]; 5] = [b"us", b"ms", b" s", b" m", b" h"];
    const LIMIT: [u64; 6] = [1000, 1000, 1000, 60, 24, i32::MAX as u64];
    let mut delta = (nsec as i64).unsigned_abs();
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
    let idx = idx.min(UNITS.len() - 1);
    if delta > 999 {
        delta = 999;
        small = 999;
    }
    // both are below 1000 here: "%3d.%03d"
    let digit = |v: u64| b'0' + v as u8;
    let lead = |v: u64, zero: bool| if zero { b' ' } else { digit(v) };
    out.extend_from_slice(&[
        lead(delta / 100, delta < 100),
        lead(delta / 10 % 10, delta < 10),
        digit(delta % 10),
        b'.',
        digit(small / 100),
        digit(small / 10 % 10),
        digit(small % 10),
        b' ',
    ]);
    out.extend_from_slice(UNITS[idx]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tu(n: u64) -> String {
        let mut v = Vec::new();
        time_unit(&mut v, n);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn time_units() {
        assert_eq!(tu(0), "          ");
        assert_eq!(tu(480), "  0.480 us");
        assert_eq!(tu(13_472_000), " 13.472 ms");
        assert_eq!(tu(2_000_000_000), "  2.000  s");
        // negative values (wrapped) print as their absolute value
        assert_eq!(tu(0u64.wrapping_sub(842)), "  0.842 us");
        assert_eq!(tu(7), "  0.007 us");
        assert_eq!(tu(59_000_000_000), " 59.000  s");
        assert_eq!(tu(i64::MIN as u64), "999.999  h");
    }
}
