//! What `trace-cmd report` 3.1.6 makes of its options before any file is
//! opened: `-i FILE` (repeated: several traces merged by time), `-F
//! FILTER`, `-v`, `--pid`, `--comm`, `--cpu LIST`, `-I`, `-S`,
//! `--ts-offset`, `--ts2secs`, `--ts-diff`.
//!
//! trace-cmd attaches `-F`, `--ts-offset` and `--ts2secs` to input files by
//! their position on the command line, through linked lists whose quirks
//! decide what applies where; [`Plan`] replays that on the order of the
//! options ([`ArgItem`]s, which the command-line parser reads back), and
//! [`Selection`](super::select::Selection) applies the result:
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

use std::path::PathBuf;

use super::{usage, ReportError};
use crate::reader::{time_calc, ReadOptions, TimeCalc};
use crate::TraceDat;

/// The options of `report` whose order does not matter to the plan.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// `-I`, `-S`: hide events in hard and soft interrupt context.
    pub no_irqs: bool,
    pub no_softirqs: bool,
    /// `--ts-diff`.
    pub ts_diff: bool,
    /// `-t`.
    pub nsecs: bool,
    /// `--pid`, `--comm`, `--cpu` values as given (comma lists).
    pub pid: Vec<String>,
    pub comm: Vec<String>,
    pub cpu: Vec<String>,
}

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
pub fn parse_cpulist(s: &str) -> Result<Vec<(u32, u32)>, ReportError> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let digit = |i: &mut usize| -> Result<u32, ReportError> {
        while b.get(*i).is_some_and(|c| c.is_ascii_whitespace()) {
            *i += 1;
        }
        if !b.get(*i).is_some_and(|c| c.is_ascii_digit()) {
            let c = b
                .get(*i)
                .map_or(String::new(), |&c| (c as char).to_string());
            return Err(usage(format!(
                "invalid character '{c}' in cpu string '{s}'"
            )));
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
            return Err(usage("range of cpu numbers must be lower to greater"));
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
    /// The plan from the ordered items and the plain (positional) traces.
    pub fn new(
        items: Vec<ArgItem>,
        traces: &[PathBuf],
        a: &PlanOptions,
    ) -> Result<Plan, ReportError> {
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
                        return Err(usage("Only 1 -v can be used"));
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
                        return Err(usage("--ts-offset must come after -i"));
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
                return Err(usage("a trace given both with -i and as an argument"));
            }
            // several traces as arguments are one timeline when each is a
            // trace: the caller says why they could not be
            if traces.len() > 1 {
                return Err(ReportError::SeveralTraces(traces.len()));
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
