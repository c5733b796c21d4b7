//! Which events `tracemux report` shows, and from which files, as
//! `trace-cmd report` 3.1.6 decides it: `-i FILE` (repeated: several traces
//! merged by time), `-F FILTER`, `-v`, `--pid`, `--comm`, `--cpu LIST`,
//! `-I`, `-S`, `--ts-offset`, `--ts2secs`, `--ts-diff` (the metadata
//! listings `-E`, `--events`, `-P`, `-f` and `--check-events` are
//! `tracemux_tracedat::listing`).
//!
//! trace-cmd attaches `-F`, `--ts-offset` and `--ts2secs` to input files by
//! their position on the command line, through linked lists whose quirks
//! decide what applies where; [`Plan`] replays that on the argument order
//! (read back from clap), and [`Selection`] applies the result:
//!
//! - a `-F` before the first `-i` (or with the trace as a plain argument)
//!   applies to the first file; between `-i` options, to the file before it;
//!   with a single `-i FILE`, a `-F` after it is ignored (unless another
//!   `-F` came before `-i`);
//! - `-v` makes the `-F` options after it negative;
//! - `--pid`/`--comm` add one positive filter to the first file only;
//! - `--ts-offset` applies to the file before it, but not to the first one
//!   (it is ignored with a single file); `--ts2secs` likewise, except that
//!   before a second `-i` it applies to every file;
//! - `--cpu` numbers the CPUs of all buffers of all files one after the
//!   other (files in order, then the instances of each file);
//! - the buffers (instances) of a file share its filters.

// Until report.rs calls into this module, only its tests use it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use clap::{ArgMatches, Args, Command};

use tracemux_core::model::{Event, TraceMeta};
use tracemux_filter::FilterSet;
use tracemux_tracedat::reader::{time_calc, ReadOptions, TimeCalc};
use tracemux_tracedat::{OptionId, TraceDat};

use crate::report_args::ReportArgs;
use tracemux_tracedat::tracecmd::tracecmd_cpus;

/// One input file and what applies to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputPlan {
    pub path: PathBuf,
    /// `--ts-offset` for this file (ns).
    pub ts_offset: i64,
    /// `--ts2secs` for this file, if any (0: none, as in trace-cmd).
    pub ts2secs: u64,
}

/// The command-line items whose order matters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgItem {
    /// `-i FILE`
    Input(PathBuf),
    /// `-F FILTER`
    Filter(String),
    /// `-v`
    Invert,
    /// `--ts-offset N`
    TsOffset(String),
    /// `--ts2secs HZ`
    Ts2secs(String),
}

/// trace-cmd's filter string lists (`filter_strings` and each input's
/// `filter_str`), including how they share nodes.
#[derive(Debug, Clone, Default)]
struct Lists {
    global: Option<usize>,
    /// Where the next global filter is linked (`filter_next`).
    global_next: Slot,
    items: Vec<(Option<usize>, Slot)>,
    nodes: Vec<(String, bool, Option<usize>)>,
}

#[derive(Debug, Clone, Copy, Default)]
enum Slot {
    #[default]
    Global,
    Item(usize),
    Node(usize),
}

impl Lists {
    fn set(&mut self, slot: Slot, n: usize) {
        match slot {
            Slot::Global => self.global = Some(n),
            Slot::Item(k) => self.items[k].0 = Some(n),
            Slot::Node(m) => self.nodes[m].2 = Some(n),
        }
    }

    /// `add_filter`
    fn add(&mut self, item: Option<usize>, text: &str, neg: bool) {
        let n = self.nodes.len();
        self.nodes.push((text.to_string(), neg, None));
        match item {
            Some(k) => {
                let s = self.items[k].1;
                self.set(s, n);
                self.items[k].1 = Slot::Node(n);
            }
            None => {
                self.set(self.global_next, n);
                self.global_next = Slot::Node(n);
            }
        }
    }

    /// `add_input`
    fn add_item(&mut self) -> usize {
        let k = self.items.len();
        self.items.push((None, Slot::Item(k)));
        k
    }

    /// `add_first_input`: the item starts with the global list.
    fn add_first_item(&mut self) -> usize {
        let k = self.add_item();
        self.items[k].0 = self.global;
        if self.global.is_some() {
            self.items[k].1 = self.global_next;
        }
        k
    }

    fn walk(&self, head: Option<usize>) -> Vec<(String, bool)> {
        let mut v = Vec::new();
        let mut cur = head;
        while let Some(n) = cur {
            let (t, neg, next) = &self.nodes[n];
            v.push((t.clone(), *neg));
            cur = *next;
            if v.len() > self.nodes.len() {
                break;
            }
        }
        v
    }
}

/// What the options say, before any file is opened.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The traces, in trace-cmd's order.
    pub inputs: Vec<InputPlan>,
    /// Several `-i`: lines are prefixed with the file (or instance) name.
    pub multi: bool,
    /// `--ts2secs` given before a second `-i` (applies to every file).
    pub ts2secs: u64,
    /// `--cpu` ranges (inclusive), over the numbering of all buffers.
    pub cpus: Option<Vec<(u32, u32)>>,
    pub no_irqs: bool,
    pub no_softirqs: bool,
    pub ts_diff: bool,
    /// `-t` (no rounding of `--ts-diff` values).
    pub nsecs: bool,
    /// `--pid` values and `--comm` names, in trace-cmd's list order.
    pub pids: Vec<String>,
    pub comms: Vec<String>,
    lists: Lists,
}

/// C `atoll`: optional spaces and sign, then decimal digits.
pub use tracemux_ftrace::printfmt::atoll;

/// trace-cmd's `parse_cpulist`: `0,2-3` (`:` also separates).
pub fn parse_cpulist(s: &str) -> Result<Vec<(u32, u32)>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let digit = |i: &mut usize| -> Result<u32> {
        while b.get(*i).is_some_and(|c| c.is_ascii_whitespace()) {
            *i += 1;
        }
        if !b.get(*i).is_some_and(|c| c.is_ascii_digit()) {
            let c = b
                .get(*i)
                .map_or(String::new(), |&c| (c as char).to_string());
            bail!("invalid character '{c}' in cpu string '{s}'");
        }
        let st = *i;
        while b.get(*i).is_some_and(|c| c.is_ascii_digit()) {
            *i += 1;
        }
        // strtoul into an unsigned int
        Ok(s[st..*i].parse::<u64>().unwrap_or(u64::MAX) as u32)
    };
    loop {
        let a = digit(&mut i)?;
        let mut z = a;
        if b.get(i) == Some(&b'-') {
            i += 1;
            z = digit(&mut i)?;
        }
        if a > z {
            bail!("range of cpu numbers must be lower to greater");
        }
        out.push((a, z));
        if matches!(b.get(i), Some(b',' | b':')) {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
    }
    Ok(out)
}

impl Plan {
    /// The plan for `tracemux report`, from the arguments the command was
    /// run with (`std::env::args_os()`): clap's values and the order of the
    /// options.
    pub fn from_env(a: &ReportArgs) -> Result<Plan> {
        let argv: Vec<OsString> = std::env::args_os().skip(1).collect();
        Plan::from_args(a, argv)
    }

    /// Like [`Plan::from_env`] with `argv` starting at the subcommand name
    /// (`report ...`).
    pub fn from_args(a: &ReportArgs, argv: Vec<OsString>) -> Result<Plan> {
        let cmd = ReportArgs::augment_args(Command::new("report"));
        let m = cmd
            .try_get_matches_from(argv)
            .map_err(|e| anyhow!("{}", e.to_string().trim_end()))?;
        let items = arg_items(&m);
        Plan::new(items, &a.traces, a)
    }

    /// The plan from the ordered items and the plain (positional) traces.
    pub fn new(items: Vec<ArgItem>, traces: &[PathBuf], a: &ReportArgs) -> Result<Plan> {
        let mut p = Plan {
            inputs: Vec::new(),
            multi: false,
            ts2secs: 0,
            cpus: None,
            no_irqs: a.no_irqs,
            no_softirqs: a.no_softirqs,
            ts_diff: a.ts_diff,
            nsecs: a.nsecs,
            pids: Vec::new(),
            comms: Vec::new(),
            lists: Lists::default(),
        };
        let mut neg = false;
        let mut last: Option<usize> = None;
        let mut tsoffset: i64 = 0;
        let mut multi = 0;
        for it in items {
            match it {
                ArgItem::Input(path) => {
                    let k = if p.inputs.is_empty() {
                        p.lists.add_first_item()
                    } else {
                        multi += 1;
                        p.lists.add_item()
                    };
                    p.inputs.push(InputPlan {
                        path,
                        ts_offset: if k == 0 { tsoffset } else { 0 },
                        ts2secs: 0,
                    });
                    last = Some(k);
                }
                ArgItem::Filter(f) => p.lists.add(last, &f, neg),
                ArgItem::Invert => {
                    if neg {
                        bail!("Only 1 -v can be used");
                    }
                    neg = true;
                }
                ArgItem::TsOffset(s) => {
                    tsoffset = atoll(&s);
                    if multi > 0 {
                        if let Some(k) = last {
                            p.inputs[k].ts_offset = tsoffset;
                        }
                    }
                    if p.inputs.is_empty() {
                        bail!("--ts-offset must come after -i");
                    }
                }
                ArgItem::Ts2secs(s) => {
                    let v = atoll(&s) as u64;
                    match last {
                        Some(k) if multi > 0 => p.inputs[k].ts2secs = v,
                        _ => p.ts2secs = v,
                    }
                }
            }
        }
        if let Some(t) = traces.first() {
            if !p.inputs.is_empty() {
                bail!("a trace given both with -i and as an argument");
            }
            // several traces as arguments are one timeline when each is a
            // trace (see native.rs): one that is not is said, not dropped
            if traces.len() > 1 {
                for x in &traces[1..] {
                    tracemux_open::sniff(x)?;
                }
                bail!(
                    "{} traces as arguments could not be read as one timeline (give trace-cmd's -i for each trace.dat to merge them as trace-cmd does)",
                    traces.len()
                );
            }
            p.lists.add_first_item();
            p.inputs.push(InputPlan {
                path: t.clone(),
                ts_offset: tsoffset,
                ts2secs: 0,
            });
        }
        if p.inputs.is_empty() {
            p.lists.add_first_item();
            p.inputs.push(InputPlan {
                path: PathBuf::from("trace.dat"),
                ts_offset: tsoffset,
                ts2secs: 0,
            });
        }
        p.multi = multi > 0;
        // trace-cmd pushes each --pid/--comm value at the head of its list
        for v in &a.pid {
            for t in v.split(',').filter(|t| !t.is_empty()) {
                p.pids.insert(0, t.to_string());
            }
        }
        for v in &a.comm {
            for t in v.split(',').filter(|t| !t.is_empty()) {
                p.comms.insert(0, t.to_string());
            }
        }
        if !a.cpu.is_empty() {
            let mut v = Vec::new();
            for c in &a.cpu {
                v.extend(parse_cpulist(c)?);
            }
            p.cpus = Some(v);
        }
        Ok(p)
    }

    /// The `-F` filters of input `i` (text, negative), in order, before
    /// `--pid`/`--comm` are added.
    pub fn filters(&self, i: usize) -> Vec<(String, bool)> {
        let head = if self.multi {
            self.lists.items.get(i).and_then(|x| x.0)
        } else if i == 0 {
            self.lists.global
        } else {
            None
        };
        self.lists.walk(head)
    }

    /// The `--ts2secs` frequency that applies to input `i` (0: none).
    pub fn ts2secs_of(&self, i: usize) -> u64 {
        match self.inputs.get(i).map_or(0, |x| x.ts2secs) {
            0 => self.ts2secs,
            v => v,
        }
    }

    /// The read options of input `i`: `base` with the file's `--ts-offset`.
    pub fn read_options(&self, i: usize, base: &ReadOptions) -> ReadOptions {
        let mut o = base.clone();
        o.ts_offset = self.inputs.get(i).map_or(0, |x| x.ts_offset);
        o
    }

    /// The timestamp correction of input `i` (for `Reader::with_time_calc`):
    /// the file's own, with `--ts-offset` and `--ts2secs` applied.
    pub fn time_calc(&self, i: usize, t: &TraceDat<'_>, base: &ReadOptions) -> TimeCalc {
        let mut c = time_calc(t, &self.read_options(i, base));
        let hz = self.ts2secs_of(i);
        if hz != 0 {
            c.ts2secs = Some(hz);
        }
        c
    }
}

/// The order-sensitive items of a parsed `report` command line.
pub fn arg_items(m: &ArgMatches) -> Vec<ArgItem> {
    let mut v: Vec<(usize, ArgItem)> = Vec::new();
    let mut take = |id: &str, f: &dyn Fn(String) -> ArgItem| {
        if let (Some(idx), Ok(Some(vals))) = (m.indices_of(id), m.try_get_raw(id)) {
            for (i, val) in idx.zip(vals) {
                v.push((i, f(val.to_string_lossy().into_owned())));
            }
        }
    };
    take("input", &|s| ArgItem::Input(PathBuf::from(s)));
    take("filter", &|s| ArgItem::Filter(s));
    take("ts_offset", &|s| ArgItem::TsOffset(s));
    take("ts2secs", &|s| ArgItem::Ts2secs(s));
    if m.get_flag("invert") {
        if let Some(i) = m.index_of("invert") {
            v.push((i, ArgItem::Invert));
        }
    }
    v.sort_by_key(|x| x.0);
    v.into_iter().map(|x| x.1).collect()
}

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

/// What is known of each file when the selection is built.
#[derive(Debug)]
struct FileSel {
    filter: Option<FilterSet>,
    name: String,
    /// Per buffer (index into `TraceMeta::buffers`): its name for line
    /// prefixes (`None`: the top buffer) and the first `--cpu` number of
    /// its CPUs.
    buffers: Vec<(Option<String>, u32)>,
    /// `common_flags` (offset, size), for `-I`/`-S`.
    flags: Option<(usize, usize)>,
    /// ts-diff values are rounded to microseconds (a trace clock is
    /// recorded and `-t` is not given).
    round_diff: bool,
}

/// The per-event selection: filters, CPUs, interrupt contexts, and the
/// per-line decorations that depend on the inputs (file prefixes, cpus=
/// lines, `--ts-diff`).
#[derive(Debug)]
pub struct Selection {
    files: Vec<FileSel>,
    cpus: Option<Vec<(u32, u32)>>,
    no_irqs: bool,
    no_softirqs: bool,
    multi: bool,
    /// Single file: the file has instances (its lines get the prefix).
    instances: bool,
    /// Width of the prefix column, and for each file the width its `cpus=`
    /// line uses.
    width: usize,
    cpus_width: Vec<usize>,
    ts_diff: bool,
    last_ts: u64,
}

const TRACE_FLAG_HARDIRQ: u64 = 0x08;
const TRACE_FLAG_SOFTIRQ: u64 = 0x10;

impl Selection {
    /// Build the selection for the opened inputs (in `plan.inputs` order).
    /// Returns it with the warnings trace-cmd prints on stderr (a `--comm`
    /// name not in the task list); a filter that does not compile is an
    /// error (trace-cmd: "Failed to create event filter").
    pub fn new(
        plan: &Plan,
        files: &[(&TraceDat<'_>, &TraceMeta)],
    ) -> Result<(Selection, Vec<String>)> {
        let mut warnings = Vec::new();
        let mut sel = Selection {
            files: Vec::new(),
            cpus: plan.cpus.clone(),
            no_irqs: plan.no_irqs,
            no_softirqs: plan.no_softirqs,
            multi: plan.multi,
            instances: false,
            width: 0,
            cpus_width: Vec::new(),
            ts_diff: plan.ts_diff,
            last_ts: 0,
        };
        // --cpu numbering: the top buffers of all files, then the instances
        let mut next_cpu: u32 = 0;
        let mut tops = Vec::new();
        for (t, _) in files {
            let n = tracecmd_cpus(t);
            tops.push((next_cpu, n));
            next_cpu = next_cpu.saturating_add(n);
        }
        let names_w = |f: &FileSel| {
            f.buffers
                .iter()
                .filter_map(|b| b.0.as_ref().map(|n| n.len()))
                .max()
                .unwrap_or(0)
        };
        let mut file_w = 0;
        if plan.multi {
            for inp in &plan.inputs[..files.len().min(plan.inputs.len())] {
                file_w = file_w.max(basename(&inp.path.to_string_lossy()).len());
            }
        }
        for (i, (t, meta)) in files.iter().enumerate() {
            let name = plan.inputs.get(i).map_or(String::new(), |x| {
                basename(&x.path.to_string_lossy()).to_string()
            });
            let mut buffers = Vec::new();
            for b in &meta.buffers {
                if b.name.is_empty() {
                    buffers.push((None, tops[i].0));
                } else {
                    let ncpu = t
                        .buffers
                        .iter()
                        .find(|x| x.name == b.name)
                        .map_or(0, |x| x.cpus.iter().map(|c| c.cpu + 1).max().unwrap_or(0));
                    buffers.push((Some(basename(&b.name).to_string()), next_cpu));
                    next_cpu = next_cpu.saturating_add(tops[i].1.max(ncpu));
                }
            }
            let flags = meta.classes.iter().find_map(|c| {
                c.common_fields
                    .iter()
                    .find(|f| f.name == "common_flags")
                    .map(|f| (f.offset as usize, f.size as usize))
            });
            let round_diff = !plan.nsecs
                && plan.ts2secs_of(i) == 0
                && t.options_with(OptionId::TRACECLOCK).next().is_some();
            // the filters; the first file also gets the --pid/--comm filter
            let mut list = plan.filters(i);
            if i == 0 {
                let mut pids: Vec<String> = plan.pids.clone();
                for comm in &plan.comms {
                    let found: Vec<i32> = meta
                        .tasks
                        .sorted()
                        .into_iter()
                        .filter(|(_, c)| *c == comm.as_str())
                        .map(|(p, _)| p)
                        .collect();
                    if found.is_empty() {
                        warnings.push(format!("comm: {comm} not in cmdline list"));
                    }
                    for p in found {
                        pids.insert(0, p.to_string());
                    }
                }
                if !pids.is_empty() {
                    let mut s = String::new();
                    for (k, p) in pids.iter().enumerate() {
                        s.push_str(if k == 0 { ".*:" } else { "||" });
                        s.push_str(&format!("(common_pid=={p})||(pid=={p})||(next_pid=={p})"));
                    }
                    list.push((s, false));
                }
            }
            let filter = if list.is_empty() {
                None
            } else {
                let mut fs = FilterSet::new(meta);
                for (text, neg) in &list {
                    fs.add(meta, text, *neg)
                        .map_err(|_| anyhow!("Failed to create event filter: {text}"))?;
                }
                Some(fs)
            };
            let f = FileSel {
                filter,
                name,
                buffers,
                flags,
                round_diff,
            };
            sel.cpus_width.push(file_w);
            file_w = file_w.max(names_w(&f));
            if i == 0 {
                sel.instances = f.buffers.iter().any(|b| b.0.is_some());
            }
            sel.files.push(f);
        }
        sel.width = if plan.multi {
            file_w
        } else {
            sel.files.first().map_or(0, names_w)
        };
        Ok((sel, warnings))
    }

    /// Whether to show the event (call for every event, in order: the
    /// filters keep state for stack traces). `file` is the index of the
    /// input the event comes from.
    pub fn keep(&mut self, file: usize, meta: &TraceMeta, ev: &Event<'_>) -> bool {
        let Some(f) = self.files.get_mut(file) else {
            return true;
        };
        if let Some(fs) = &mut f.filter {
            if !fs.matches(meta, ev) {
                return false;
            }
        }
        if let Some(cpus) = &self.cpus {
            let b = meta
                .streams
                .get(ev.stream as usize)
                .map_or(0, |s| s.buffer as usize);
            let base = f.buffers.get(b).map_or(0, |x| x.1);
            let n = base.saturating_add(ev.cpu);
            if !cpus.iter().any(|&(a, z)| a <= n && n <= z) {
                return false;
            }
        }
        if self.no_irqs || self.no_softirqs {
            let flags = f.flags.map_or(0, |(off, size)| {
                ev.ext
                    .get(off..)
                    .and_then(|b| ev.endian.read_uint(b, size))
                    .unwrap_or(0)
            });
            if self.no_irqs && flags & TRACE_FLAG_HARDIRQ != 0 {
                return false;
            }
            if self.no_softirqs && flags & TRACE_FLAG_SOFTIRQ != 0 {
                return false;
            }
        }
        true
    }

    /// Whether lines get a file/instance prefix at all.
    pub fn has_prefix(&self) -> bool {
        self.multi || self.instances
    }

    fn put_prefix(out: &mut Vec<u8>, name: Option<&str>, width: usize) {
        match name {
            Some(n) if !n.is_empty() => {
                out.resize(out.len() + width.saturating_sub(n.len()), b' ');
                out.extend_from_slice(n.as_bytes());
                out.extend_from_slice(b": ");
            }
            _ => out.resize(out.len() + width + 2, b' '),
        }
    }

    /// The prefix of an event line (or of a lost-events line) of a stream
    /// of input `file`: the file name when several files are read, the
    /// instance name for instances, right-aligned; nothing when there is
    /// one file without instances.
    pub fn prefix(&self, out: &mut Vec<u8>, file: usize, meta: &TraceMeta, stream: u32) {
        if !self.has_prefix() {
            return;
        }
        let Some(f) = self.files.get(file) else {
            return;
        };
        let b = meta
            .streams
            .get(stream as usize)
            .map_or(0, |s| s.buffer as usize);
        let name = match f.buffers.get(b) {
            Some((Some(n), _)) => Some(n.as_str()),
            _ if self.multi => Some(f.name.as_str()),
            _ => None,
        };
        Self::put_prefix(out, name, self.width);
    }

    /// The `cpus=N` line of input `file` (with its file name when several
    /// files are read).
    pub fn cpus_line(&self, out: &mut Vec<u8>, file: usize, cpus: u32) {
        if self.multi {
            let name = self.files.get(file).map(|f| f.name.as_str());
            Self::put_prefix(out, name, self.cpus_width.get(file).copied().unwrap_or(0));
        }
        out.extend_from_slice(format!("cpus={cpus}\n").as_bytes());
    }

    /// With `--ts-diff`, the column after the timestamp: ` (+DIFF)` padded
    /// to 8 characters after the space (`(+N)` is the time since the
    /// previous shown event, in microseconds when they are shown rounded);
    /// nothing without `--ts-diff`. Call it only for events that are shown.
    pub fn write_ts_diff(&mut self, out: &mut Vec<u8>, file: usize, ts: u64) {
        if !self.ts_diff {
            return;
        }
        let round = self.files.get(file).is_some_and(|f| f.round_diff);
        let ts = if round {
            ts.wrapping_add(500) / 1000
        } else {
            ts
        };
        let start = out.len();
        out.push(b' ');
        if self.last_ts != 0 {
            out.extend_from_slice(
                format!("(+{})", ts.wrapping_sub(self.last_ts) as i64).as_bytes(),
            );
        }
        self.last_ts = ts;
        while out.len() - start < 9 {
            out.push(b' ');
        }
    }
}

/// Whether several inputs are to be read (trace-cmd cannot merge latency
/// traces).
pub fn check_multi_latency(plan: &Plan, t: &TraceDat<'_>, path: &Path) -> Result<()> {
    if plan.multi && t.kind == tracemux_tracedat::DataKind::Latency {
        bail!(
            "{}: latency traces do not work with multiple inputs",
            path.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        a: ReportArgs,
    }

    fn plan(args: &[&str]) -> Result<Plan> {
        let mut argv: Vec<OsString> = vec!["report".into()];
        argv.extend(args.iter().map(OsString::from));
        let w = Wrap::try_parse_from(argv.clone())?;
        Plan::from_args(&w.a, argv)
    }

    fn items(v: &[ArgItem], traces: &[&str]) -> Plan {
        let w = Wrap::try_parse_from(["report", "x"]).unwrap();
        let traces: Vec<PathBuf> = traces.iter().map(PathBuf::from).collect();
        Plan::new(v.to_vec(), &traces, &w.a).unwrap()
    }

    fn inp(s: &str) -> ArgItem {
        ArgItem::Input(s.into())
    }
    fn flt(s: &str) -> ArgItem {
        ArgItem::Filter(s.into())
    }

    #[test]
    fn filters_follow_trace_cmd_lists() {
        // a plain trace argument gets every -F
        let p = plan(&["-R", "-F", "a", "-v", "-F", "b", "t.dat"]).unwrap();
        assert_eq!(p.filters(0), vec![("a".into(), false), ("b".into(), true)]);
        // -i FILE -F: ignored
        let p = plan(&["-i", "t.dat", "-F", "a"]).unwrap();
        assert!(p.filters(0).is_empty());
        // -F -i FILE -F: both
        let p = plan(&["-F", "a", "-i", "t.dat", "-F", "b"]).unwrap();
        assert_eq!(p.filters(0).len(), 2);
        // several files: before the second -i for the first, after for the second
        let p = items(&[flt("a"), inp("x"), flt("b"), inp("y"), flt("c")], &[]);
        assert!(p.multi);
        assert_eq!(p.filters(0), vec![("a".into(), false), ("b".into(), false)]);
        assert_eq!(p.filters(1), vec![("c".into(), false)]);
        let p = items(&[inp("x"), inp("y"), flt("c")], &[]);
        assert!(p.filters(0).is_empty());
        assert_eq!(p.filters(1).len(), 1);
    }

    #[test]
    fn ts_options_follow_trace_cmd() {
        let ts = |s: &str| ArgItem::TsOffset(s.into());
        let hz = |s: &str| ArgItem::Ts2secs(s.into());
        let p = items(&[inp("x"), ts("5")], &[]);
        assert_eq!(p.inputs[0].ts_offset, 0);
        let p = items(&[inp("x"), ts("5"), inp("y"), ts("-7")], &[]);
        assert_eq!((p.inputs[0].ts_offset, p.inputs[1].ts_offset), (0, -7));
        let p = items(&[inp("x"), hz("100"), inp("y")], &[]);
        assert_eq!((p.ts2secs_of(0), p.ts2secs_of(1)), (100, 100));
        let p = items(&[inp("x"), inp("y"), hz("100")], &[]);
        assert_eq!((p.ts2secs_of(0), p.ts2secs_of(1)), (0, 100));
        let w = Wrap::try_parse_from(["report", "x"]).unwrap();
        assert!(Plan::new(vec![ts("5")], &[PathBuf::from("t")], &w.a).is_err());
        assert!(plan(&["--ts-offset", "-5", "-i", "t.dat"]).is_err());
        assert_eq!(
            plan(&["-i", "t.dat", "--ts-offset", "-5"]).unwrap().inputs[0].ts_offset,
            0
        );
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpulist("0,2-3").unwrap(), vec![(0, 0), (2, 3)]);
        assert_eq!(
            parse_cpulist("1 2:4").unwrap(),
            vec![(1, 1), (2, 2), (4, 4)]
        );
        assert_eq!(parse_cpulist("1,").unwrap(), vec![(1, 1)]);
        assert!(parse_cpulist("3-1").is_err());
        assert!(parse_cpulist("a").is_err());
        assert!(parse_cpulist("1x").is_err());
        assert_eq!(atoll(" -12ab"), -12);
    }

    #[test]
    fn pids_are_listed_like_trace_cmd() {
        let p = plan(&["--pid", "1,2", "--pid", "3", "t.dat"]).unwrap();
        assert_eq!(p.pids, vec!["3", "2", "1"]);
    }
}
