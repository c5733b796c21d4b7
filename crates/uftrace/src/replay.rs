//! `uftrace replay`: the call graph of every task, merged by time, with
//! durations, arguments and return values, byte-identical to uftrace 0.13.
//!
//! Records go through the walk the other outputs share
//! ([`crate::report::walk`]): consumed in merge order into each task's
//! function stack (durations are computed when the exit is consumed), then
//! shown or hidden by uftrace's filters (`-F/-N/-T`, `-D`, `-t`, `--tid`,
//! `--no-libcall`). What is replay's own: a function whose exit is the
//! next shown record of its task prints as a leaf line (`f();`, uftrace's
//! `fstack_skip` looks ahead for it), a sched-out followed by its sched-in
//! as one event, and the functions left running at the end.

use std::io::{self, Write};

use std::path::Path;
use tracemux_core::digits;

use tracemux_core::Endian;

use crate::args::format_values;
use crate::data::{Loader, OpenOptions, ReadLoader, UftraceData};
use crate::events::{data_text, id, is_sched_event};
use crate::merge::{Item, Source};
use crate::record::{Kind, Record};
use crate::report::walk::{
    begin, fl, time_unit, unknown_name, ArgCtx, Rec, Walk, WalkOptions, DEFAULT_DEPTH,
};
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
    let table = FIELD_TABLE.map(|f| f.0);
    crate::field::select(s, &table, &[Field::Duration, Field::Tid], |f, name| {
        FIELD_TABLE[f as usize].1 == name
    })
}

/// Options of `uftrace replay`.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Filters and the options every walking command takes (`-F -N -T -D
    /// -t --tid --no-libcall --no-event --match`).
    pub walk: WalkOptions,
    /// `-f`; `None` = duration and tid.
    pub fields: Option<Vec<Field>>,
    /// Show arguments and return values (on by default; `--no-args` turns
    /// it off). `-a` changes nothing when replaying.
    pub show_args: bool,
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
            walk: WalkOptions::default(),
            fields: None,
            show_args: true,
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
        let w = &mut o.walk;
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
                "--no-libcall" => w.no_libcall = true,
                "--no-event" => w.no_event = true,
                "--kernel-full" => w.kernel_full = true,
                "--kernel-skip-out" => w.kernel_full = false,
                "--kernel-only" => w.kernel_only = true,
                "--no-comment" => o.no_comment = true,
                "--no-merge" => o.no_merge = true,
                "-F" | "--filter" => filter.push(val(&mut i)?),
                "-N" | "--notrace" => filter.push(format!("!{}", val(&mut i)?)),
                "-T" | "--trigger" => trigger.push(val(&mut i)?),
                "-D" | "--depth" => {
                    let v = val(&mut i)?;
                    let d = crate::header::c_atol(&v) as i32;
                    w.depth = if d <= 0 || d >= 65535 {
                        DEFAULT_DEPTH
                    } else {
                        d
                    };
                }
                "-t" | "--time-filter" => {
                    w.time_filter = crate::argspec::parse_time(&val(&mut i)?, 3)
                }
                "--tid" => {
                    let v = val(&mut i)?;
                    let tids = w.tids.get_or_insert_with(Vec::new);
                    for t in v.split([',', ';', ':']) {
                        tids.push(crate::header::c_atol(t) as i32);
                    }
                }
                "--demangle" => {
                    o.demangle = Demangle::parse(&val(&mut i)?).unwrap_or(Demangle::Simple);
                }
                "--match" => {
                    w.pattern = match val(&mut i)?.as_str() {
                        "glob" => PatternType::Glob,
                        _ => PatternType::Regex,
                    }
                }
                _ => return Err(format!("unsupported replay option '{a}'")),
            }
            i += 1;
        }
        if !filter.is_empty() {
            w.filter = Some(filter.join(";"));
        }
        if !trigger.is_empty() {
            w.trigger = Some(trigger.join(";"));
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

/// Write the replay of an opened recording.
pub fn replay_data(
    data: &mut UftraceData,
    opts: &ReplayOptions,
    out: &mut dyn Write,
    warn: &mut dyn Write,
) -> io::Result<()> {
    let filter_mode = begin(data, &opts.walk, out, warn)?;
    let data: &UftraceData = data;
    let mut r = Replay {
        walk: Walk::new(data, &opts.walk, filter_mode),
        data,
        opts,
        first: 0,
        fields: opts
            .fields
            .clone()
            .unwrap_or_else(|| vec![Field::Duration, Field::Tid]),
        line: Vec::with_capacity(BLOCK + 4096),
        name_buf: Vec::with_capacity(256),
        args_buf: Vec::with_capacity(256),
        ret_buf: Vec::with_capacity(256),
        endian: data.endian(),
    };
    r.run(out)?;
    out.flush()?;
    r.walk.warn_damage(warn)
}

/// The replay printer: the shared walk plus what only replay keeps.
struct Replay<'d, 'o> {
    walk: Walk<'d>,
    data: &'d UftraceData,
    opts: &'o ReplayOptions,
    /// Time of the first record inside a function (the `elapsed` field's
    /// origin).
    first: u64,
    fields: Vec<Field>,
    /// The text of the current record.
    line: Vec<u8>,
    /// Scratch buffers reused for every line (no allocation per record).
    name_buf: Vec<u8>,
    args_buf: Vec<u8>,
    ret_buf: Vec<u8>,
    endian: Endian,
}

/// Bytes of output gathered before they are written.
const BLOCK: usize = 1 << 16;

/// Append `v` right-aligned in `width` columns, zero-padded to `zeros` digits.
fn push_num(out: &mut Vec<u8>, v: u64, width: usize, zeros: usize) {
    let n = digits::decimal_len(v).max(zeros);
    if n < width {
        out.resize(out.len() + (width - n), b' ');
    }
    digits::put_padded(out, v, zeros);
}

/// Append `v` in lower-case hex right-aligned in `width` columns.
fn push_hex(out: &mut Vec<u8>, v: u64, width: usize) {
    let n = (64 - v.leading_zeros()).max(1).div_ceil(4) as usize;
    if n < width {
        out.resize(out.len() + (width - n), b' ');
    }
    digits::put_hex(out, v, digits::HEX_LOWER);
}

fn pad_left(out: &mut Vec<u8>, s: &[u8], width: usize) {
    for _ in s.len()..width {
        out.push(b' ');
    }
    out.extend_from_slice(s);
}

impl<'d> Replay<'d, '_> {
    /// `read_rstack`: the next record in time order, consumed.
    fn next_item(&mut self) -> Option<Item<'d>> {
        let it = self.walk.merger.next_item()?;
        self.consume(&it);
        Some(it)
    }

    fn consume(&mut self, it: &Item<'d>) {
        let st = &mut self.walk.stacks;
        // the elapsed time counts from the first record that is not an
        // event (or, unless --kernel-full, a kernel record) outside every
        // function
        let outside = st.tasks[it.task].stack_count == 0
            && (it.rec.kind == Kind::Event || (st.kernel_skip_out && Rec::of(it).kernel));
        if !outside && (self.first == 0 || self.first > it.rec.time) {
            self.first = it.rec.time;
        }
        st.consume_item(it);
        if let Source::Perf(ev) = &it.source {
            // replay's task name keeps 15 bytes of a COMM event's name
            if ev.comm().is_some() {
                st.tasks[it.task].comm.truncate(15);
            }
        }
    }

    fn run(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.walk.merger.peek().is_some() && !self.fields.is_empty() {
            let mut sep: &[u8] = b"#";
            for f in &self.fields {
                out.write_all(sep)?;
                let head = match f {
                    Field::Tid if self.data.flavor.newer() => "   TID   ",
                    _ => FIELD_TABLE[*f as usize].2,
                };
                out.write_all(head.as_bytes())?;
                sep = b" ";
            }
            out.write_all(b"   FUNCTION\n")?;
        }
        let mut prev_time = 0u64;
        // Lines gather in `line` and go out in blocks.
        self.line.clear();
        while let Some(it) = self.next_item() {
            let ti = it.task;
            if !self.walk.stacks.check_opts(ti, &Rec::of(&it)) {
                continue;
            }
            if it.rec.time != 0 {
                if prev_time > it.rec.time {
                    self.inverted_time(ti);
                }
                prev_time = it.rec.time;
            }
            self.print_item(&it);
            if self.line.len() >= BLOCK {
                out.write_all(&self.line)?;
                self.line.clear();
            }
        }
        self.remaining_stack();
        out.write_all(&self.line)
    }

    /// The warning line before a record older than the one before it.
    fn inverted_time(&mut self, ti: usize) {
        if !self.fields.is_empty() {
            for f in &self.fields {
                let len = match f {
                    Field::Tid => self.data.flavor.tid_len() + 2,
                    _ => FIELD_LEN[*f as usize],
                };
                for _ in 0..len + 1 {
                    self.line.push(b' ');
                }
            }
            self.line.extend_from_slice(b" | ");
        }
        let d = (self.walk.stacks.tasks[ti].display_depth + 1) * 2;
        self.line.push(b' ');
        self.indent(d / 2);
        self.line
            .extend_from_slice(b"/* inverted time: broken data? */\n");
    }

    fn print_item(&mut self, it: &Item<'d>) {
        let ti = it.task;
        let rec = it.rec;
        let st = &mut self.walk.stacks;
        if rec.kind == Kind::Lost {
            // LOST records outside user functions are not shown
            if st.kernel_skip_out && st.tasks[ti].user_stack_count == 0 {
                return;
            }
            let depth = st.tasks[ti].display_depth + 1;
            self.print_fields(ti, None, None);
            self.indent(depth);
            let n = rec.addr as i32;
            if n > 0 {
                let _ = writeln!(self.line, "/* LOST {n} records!! */");
            } else {
                self.line.extend_from_slice(b"/* LOST some records!! */\n");
            }
            return;
        }
        if rec.kind != Kind::Event && self.opts.walk.no_libcall && st.is_plt(ti, rec.time, rec.addr)
        {
            return;
        }
        let t = &mut st.tasks[ti];
        t.timestamp_last = t.timestamp;
        t.timestamp = rec.time;
        match rec.kind {
            Kind::Entry => {
                let mut name = std::mem::take(&mut self.name_buf);
                name.clear();
                self.symname(ti, &rec, &mut name);
                self.print_entry(it, &name);
                self.name_buf = name;
            }
            Kind::Exit => self.print_exit(it),
            Kind::Event => self.print_event(it),
            Kind::Lost => {}
        }
    }

    fn print_entry(&mut self, it: &Item<'d>, name: &[u8]) {
        let ti = it.task;
        let rec = it.rec;
        if !self.walk.stacks.entry(ti, &Rec::of(it)) {
            return;
        }
        let depth = self.walk.stacks.tasks[ti].display_depth;
        let needs_paren = name.last() != Some(&b')') || rec.more;
        let sc = self.walk.stacks.tasks[ti].stack_count;
        let next = if self.opts.no_merge {
            None
        } else {
            self.skip(ti, it, rec.depth as i32)
        };
        let leaf = next.filter(|n| {
            n.task == ti
                && !matches!(n.source, Source::Perf(_))
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
            self.next_item();
            let mut retval = self.return_value(ti, &exit.rec);
            retval.push(b';');
            let f = self.walk.stacks.get(ti, sc - 1).unwrap_or_default();
            self.print_fields(ti, Some(f.addr), Some(f.total_time));
            self.indent(depth);
            self.line.extend_from_slice(name);
            self.line.extend_from_slice(&args);
            self.line.extend_from_slice(&retval);
            self.line.push(b'\n');
            self.ret_buf = retval;
            self.walk.stacks.exit(ti);
        } else {
            let f = self.walk.stacks.get(ti, sc - 1).unwrap_or_default();
            self.print_fields(ti, Some(f.addr), None);
            self.indent(depth);
            self.line.extend_from_slice(name);
            self.line.extend_from_slice(&args);
            self.line.extend_from_slice(b" {\n");
            self.walk.stacks.update(Kind::Entry, ti, sc - 1);
        }
        self.args_buf = args;
    }

    /// ` = VALUE` of an exit record with a return value shown (empty
    /// otherwise), in the reused buffer `ret_buf` (give it back after use).
    fn return_value(&mut self, ti: usize, rec: &Record<'d>) -> Vec<u8> {
        let mut retval = std::mem::take(&mut self.ret_buf);
        retval.clear();
        if rec.more && self.opts.show_args {
            retval.extend_from_slice(b" = ");
            self.values(ti, rec, true, &mut retval);
        }
        retval
    }

    fn print_exit(&mut self, it: &Item<'d>) {
        let ti = it.task;
        let rec = it.rec;
        let st = &mut self.walk.stacks;
        let sc = st.tasks[ti].stack_count;
        let shown = st.get(ti, sc).filter(|f| f.flags & fl::NORECORD == 0);
        if let (Some(f), true) = (shown, st.enabled) {
            let depth = st.update(Kind::Exit, ti, sc);
            let mut retval = self.return_value(ti, &rec);
            if !retval.is_empty() {
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
                self.symname(ti, &rec, &mut name);
                self.line.extend_from_slice(&name);
                self.name_buf = name;
                self.line.extend_from_slice(b" */");
            }
            self.line.push(b'\n');
        }
        self.walk.stacks.exit(ti);
    }

    fn print_event(&mut self, it: &Item<'d>) {
        let ti = it.task;
        let mut rec = it.rec;
        let mut depth = self.walk.stacks.tasks[ti].display_depth;
        if !self.walk.stacks.check_filter(ti, &Rec::of(it)) {
            return;
        }
        let mut evt = rec.addr as u32;
        if (evt == id::PERF_SCHED_OUT || evt == id::PERF_SCHED_OUT_PREEMPT) && !self.opts.no_merge {
            // a sched-out followed by its sched-in prints as one line
            let next = self.skip(ti, it, 0);
            if next.is_some_and(|n| n.task == ti && n.rec.addr == id::PERF_SCHED_IN as u64) {
                self.next_item();
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
        let st = &self.walk.stacks;
        let Some(f) = st.get(ti, st.tasks[ti].stack_count) else {
            return;
        };
        if !st.enabled || f.flags & fl::NORECORD != 0 {
            return;
        }
        if evt == id::PERF_SCHED_IN && f.total_time != 0 {
            self.print_fields(ti, Some(f.addr), Some(f.total_time));
        } else {
            self.print_fields(ti, None, None);
        }
        self.indent(depth);
        self.line.extend_from_slice(b"/* ");
        let a = rec.addr as u32;
        if let (Source::Kernel { .. }, Some(kd)) = (it.source, &self.data.kernel) {
            // a kernel tracepoint: `system:name (text)`
            if let Some(e) = kd.event(rec.addr) {
                self.line.extend_from_slice(e.system.as_bytes());
                self.line.push(b':');
                self.line.extend_from_slice(e.name.as_bytes());
            }
            self.line.extend_from_slice(b" (");
            self.line.extend_from_slice(rec.data);
            self.line.extend_from_slice(b") */\n");
            return;
        }
        if let Some(name) = self.data.user_events.name(a) {
            self.line.extend_from_slice(name.as_bytes());
        }
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
            } else if a == id::WATCH_VAR {
                let lp64 = self.data.header.is_lp64();
                let tid = self.walk.stacks.tasks[ti].tid;
                let addr = crate::events::watch_var_addr(rec.data, self.endian, lp64);
                let name = self
                    .data
                    .session_at(tid, rec.time)
                    .and_then(|s| self.data.symbol_in(s, rec.time, addr))
                    .map(|s| &*s.name);
                self.line.extend_from_slice(b" (");
                crate::events::watch_var(&mut self.line, rec.data, self.endian, lp64, name);
                self.line.push(b')');
            } else {
                let mark = self.line.len();
                self.line.extend_from_slice(b" (");
                if data_text(&mut self.line, a, rec.data, self.endian, true) {
                    self.line.push(b')');
                } else {
                    self.line.truncate(mark);
                }
            }
        }
        self.line.extend_from_slice(b" */\n");
    }

    /// uftrace's `fstack_skip`: consume the hidden records after the
    /// current one and return the next shown item (peeked, not consumed).
    fn skip(&mut self, ti: usize, cur: &Item<'d>, curr_depth: i32) -> Option<Item<'d>> {
        let st = &self.walk.stacks;
        let f = st.get(ti, st.tasks[ti].stack_count - 1)?;
        if f.flags & (fl::EXEC | fl::LONGJMP) != 0 {
            return None;
        }
        let mut next = self.walk.merger.peek()?;
        loop {
            let same_src = matches!(
                (cur.source, next.source),
                (Source::User, Source::User)
                    | (Source::Perf(_), Source::Perf(_))
                    | (Source::Kernel { .. }, Source::Kernel { .. })
            ) && (cur.rec.kind == Kind::Lost) == (next.rec.kind == Kind::Lost);
            if next.task == ti && same_src && curr_depth >= next.rec.depth as i32 {
                break;
            }
            let nt = next.task;
            let st = &mut self.walk.stacks;
            let outside = st.tasks[nt].user_stack_count == 0;
            let hidden = outside
                && (next.rec.kind == Kind::Event || (st.kernel_skip_out && Rec::of(&next).kernel));
            if !hidden {
                if next.rec.kind == Kind::Lost {
                    return None;
                }
                let libcall =
                    self.opts.walk.no_libcall && st.is_plt(ti, next.rec.time, next.rec.addr);
                if !libcall && !st.check_skip(nt, &Rec::of(&next)) {
                    break;
                }
            }
            let n = self.next_item()?;
            let st = &mut self.walk.stacks;
            match n.rec.kind {
                Kind::Entry => {
                    st.entry(nt, &Rec::of(&n));
                }
                Kind::Exit => st.exit(nt),
                _ => {}
            }
            if !st.enabled {
                return None;
            }
            next = self.walk.merger.peek()?;
        }
        Some(next)
    }

    /// The name of the function of `rec` (`<addr>` without a symbol).
    fn symname(&mut self, ti: usize, rec: &Record<'_>, buf: &mut Vec<u8>) {
        match self.walk.stacks.symbol(ti, rec.time, rec.addr) {
            Some(s) => buf.extend_from_slice(s.name.as_bytes()),
            None => unknown_name(buf, rec.addr),
        }
    }

    /// Print the selected fields for `ti`; `dur` is the duration to show
    /// (`None` = blank).
    fn print_fields(&mut self, ti: usize, addr: Option<u64>, dur: Option<u64>) {
        if self.fields.is_empty() {
            return;
        }
        let t = &self.walk.stacks.tasks[ti];
        let line = &mut self.line;
        let tid_len = self.data.flavor.tid_len();
        for f in &self.fields {
            line.push(b' ');
            match f {
                Field::Duration => time_unit(line, dur.unwrap_or(0)),
                Field::Tid => {
                    line.push(b'[');
                    if t.tid >= 0 {
                        push_num(line, t.tid as u64, tid_len, 0);
                    } else {
                        let mut b = itoa::Buffer::new();
                        pad_left(line, b.format(t.tid).as_bytes(), tid_len);
                    }
                    line.push(b']');
                }
                Field::Addr => match addr {
                    // uftrace records (truncated) 48-bit addresses
                    Some(a) => push_hex(line, a & ((1 << 48) - 1), 12),
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
                Field::Task => pad_left(line, String::from_utf8_lossy(&t.comm).as_bytes(), 15),
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
                        } else if self.data.flavor.newer() {
                            // 0.17+: a library loaded by dlopen() names itself
                            if let Some(m) = self.data.dlopen_module(s, t.timestamp, a) {
                                name = basename(&m.path);
                            }
                        }
                    }
                    let b = name.as_bytes();
                    pad_left(line, &b[..b.len().min(16)], 16);
                }
            }
        }
        line.extend_from_slice(b" | ");
    }

    fn indent(&mut self, depth: i32) {
        let n = depth.max(0) as usize * 2;
        self.line.resize(self.line.len() + n, b' ');
    }

    fn values(&self, ti: usize, rec: &Record<'d>, retval: bool, out: &mut Vec<u8>) {
        let tid = self.walk.stacks.tasks[ti].tid;
        let Some(specs) = self.data.arg_specs(tid, rec.time, rec.addr) else {
            return;
        };
        let ctx = ArgCtx {
            data: self.data,
            tid,
            time: rec.time,
            func: rec.addr,
        };
        format_values(out, specs, rec.data, retval, self.endian, &ctx);
    }

    /// Which frames of task `ti` `print_remaining_stack` lists: `None` for
    /// none, else how many frames at the bottom it leaves out (those
    /// without an address).
    fn remaining_base(&self, ti: usize) -> Option<i32> {
        let st = &self.walk.stacks;
        let t = &st.tasks[ti];
        if !t.has_stack || t.stack_count <= 0 {
            return None;
        }
        if t.stack_count == 1 {
            if let Some(f) = st.get(ti, 0) {
                if f.addr == id::PERF_SCHED_OUT as u64
                    || f.addr == id::PERF_SCHED_OUT_PREEMPT as u64
                {
                    return None;
                }
            }
        }
        let mut zero = 0;
        for k in 0..t.stack_count {
            match st.get(ti, k) {
                Some(f) if f.addr != 0 => break,
                _ => zero += 1,
            }
        }
        (zero < t.stack_count).then_some(zero)
    }

    /// uftrace's `print_remaining_stack`.
    fn remaining_stack(&mut self) {
        let tasks = self.walk.stacks.tasks.len();
        if (0..tasks).all(|ti| self.remaining_base(ti).is_none()) {
            return;
        }
        self.line
            .extend_from_slice(b"\nuftrace stopped tracing with remaining functions\n================================================\n");
        for ti in 0..tasks {
            let Some(zero) = self.remaining_base(ti) else {
                continue;
            };
            let st = &self.walk.stacks;
            let tid = st.tasks[ti].tid;
            let _ = writeln!(self.line, "task: {tid}");
            let mut sc = st.tasks[ti].stack_count;
            while sc > 0 {
                sc -= 1;
                let Some(f) = st.get(ti, sc) else {
                    continue;
                };
                let _ = write!(self.line, "[{}] ", sc - zero);
                let sym = self
                    .data
                    .session_at(tid, f.total_time)
                    .and_then(|s| self.data.symbol_in(s, f.total_time, f.addr));
                match (sym, f.addr as u32) {
                    (Some(s), _) => self.line.extend_from_slice(s.name.as_bytes()),
                    (None, id::PERF_SCHED_IN | id::PERF_SCHED_OUT | id::PERF_SCHED_BOTH)
                        if f.addr < 1 << 32 =>
                    {
                        self.line.extend_from_slice(b"linux:schedule")
                    }
                    (None, id::PERF_SCHED_OUT_PREEMPT | id::PERF_SCHED_BOTH_PREEMPT)
                        if f.addr < 1 << 32 =>
                    {
                        self.line.extend_from_slice(b"linux:schedule (pre-empted)")
                    }
                    (None, _) => unknown_name(&mut self.line, f.addr),
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
