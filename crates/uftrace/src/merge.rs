//! Time-merged iteration over all tasks and perf events, in the order
//! `uftrace replay` processes them.
//!
//! Each task contributes its next record (after the `-t` time-filter
//! buffering when one is set); perf files contribute their earliest event.
//! Kernel data (`-k`) contributes, per CPU, the records uftrace's kernel
//! reader queues (see [`KernelCpuSource`]), a CPU with events missed before
//! its page first giving a LOST record.
//! The smallest timestamp wins; among tasks, ties go to the task listed
//! first in `info`; a task record wins a tie with a kernel record or a perf
//! event, a kernel record (the lowest CPU first) a tie with a perf event.

use std::collections::{HashSet, VecDeque};

use crate::argspec::trig;
use crate::data::UftraceData;
use crate::events::id;
use crate::kernel::{KRecord, KernelData};
use crate::perf::{PerfEvent, PerfKind, PerfReader};
use crate::reader::TaskReader;
use crate::record::{Damage, Kind, Record};

/// Options of the merge.
#[derive(Debug, Clone, Default)]
pub struct MergeOptions {
    /// `-t`: hide functions that ran shorter than this (ns).
    pub time_filter: u64,
    /// `--tid`: only these tasks (others are read for nothing).
    pub tids: Option<Vec<i32>>,
}

/// Where an item came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A `<tid>.dat` record.
    User,
    /// A perf record, converted to an event record.
    Perf(PerfEvent),
    /// A record of `kernel-cpu<cpu>.dat` (funcgraph entry/exit with the full
    /// kernel address, an event whose `data` is its text, or the LOST
    /// record of events missed before a page).
    Kernel { cpu: usize },
}

/// One merged item: the task it belongs to (index into
/// [`UftraceData::tasks`]) and the record.
#[derive(Debug, Clone, Copy)]
pub struct Item<'d> {
    pub task: usize,
    pub rec: Record<'d>,
    pub source: Source,
}

struct FilterStack {
    depth: u16,
    threshold: u64,
}

struct TaskSource<'d> {
    reader: TaskReader<'d>,
    queue: VecDeque<Record<'d>>,
    fstack: Vec<FilterStack>,
    enabled: bool,
    /// Perf events of this task (only with a time filter).
    events: VecDeque<(Record<'d>, PerfEvent)>,
    first_time: Option<u64>,
}

/// uftrace's per-CPU kernel reader state (`read_kernel_cpu`): records are
/// read ahead into `queue` until an exit (or an entry/event of another
/// task than the first read); exits shorter than the time filter take
/// their entry (and the events after it) out of the queue; exits of
/// functions never entered on any CPU are dropped.
#[derive(Default)]
struct KernelCpuSource {
    next: usize,
    queue: VecDeque<KRecord>,
    /// `missed_events[cpu]`: set when a page is loaded, cleared when its
    /// LOST record is consumed.
    missed: i64,
    done: bool,
}

struct PerfSource<'d> {
    reader: PerfReader<'d>,
    head: Option<PerfEvent>,
}

/// The merged stream (peekable, as replay needs to look ahead).
pub struct Merger<'d> {
    data: &'d UftraceData,
    tasks: Vec<TaskSource<'d>>,
    perf: Vec<PerfSource<'d>>,
    kernel: Option<&'d KernelData>,
    kcpus: Vec<KernelCpuSource>,
    /// Kernel functions whose entry was read (`kfunc_tree`).
    kfuncs: HashSet<u64>,
    time_filter: u64,
    /// Cached choice for the current head.
    cur: Option<Choice>,
    /// The best head among the sources other than `cur` (valid while only
    /// the chosen task moves).
    runner_up: Option<(Choice, u64)>,
    /// The task whose head was just consumed, when `runner_up` is valid.
    stay: Option<usize>,
    /// Damage of the perf files.
    pub damage: Vec<Damage>,
}

#[derive(Debug, Clone, Copy)]
enum Choice {
    Task(usize),
    Perf(usize),
    Event(usize),
    Kernel(usize),
}

fn perf_record<'d>(p: &PerfEvent) -> Record<'d> {
    Record {
        time: p.time,
        kind: Kind::Event,
        more: matches!(p.kind, PerfKind::Comm { .. }),
        depth: 0,
        addr: p.event_id() as u64,
        data: &[],
        offset: p.offset,
    }
}

impl<'d> Merger<'d> {
    /// Bytes of the tasks' data files read, and their sizes (what a
    /// progress bar shows; kernel and perf files left out).
    pub fn progress(&self) -> (u64, u64) {
        self.tasks.iter().fold((0, 0), |(d, t), s| {
            let (done, total) = s.reader.progress();
            (d + done, t + total)
        })
    }

    pub fn new(data: &'d UftraceData, opts: &MergeOptions) -> Merger<'d> {
        let mut tasks = Vec::with_capacity(data.tasks.len());
        for i in 0..data.tasks.len() {
            let mut reader = TaskReader::new(data, i);
            let enabled = opts.tids.as_ref().is_none_or(|t| t.contains(&reader.tid));
            let mut first_time = None;
            if !enabled {
                first_time = reader.next_record().map(|r| r.time);
                reader.finish();
            }
            tasks.push(TaskSource {
                reader,
                queue: VecDeque::new(),
                fstack: Vec::new(),
                enabled,
                events: VecDeque::new(),
                first_time,
            });
        }
        let endian = data.endian();
        let perf = data
            .perf
            .iter()
            .map(|p| PerfSource {
                reader: PerfReader::new((*p.data).as_ref(), endian),
                head: None,
            })
            .collect();
        let kcpus = data.kernel.as_ref().map_or(0, |k| k.cpus.len());
        let mut m = Merger {
            data,
            tasks,
            perf,
            kernel: data.kernel.as_ref(),
            kcpus: (0..kcpus).map(|_| KernelCpuSource::default()).collect(),
            kfuncs: HashSet::new(),
            time_filter: opts.time_filter,
            cur: None,
            runner_up: None,
            stay: None,
            damage: Vec::new(),
        };
        if m.time_filter != 0 {
            m.preload_perf();
        }
        m
    }

    /// First record times of tasks excluded by `--tid` (uftrace counts them
    /// for the elapsed-time origin).
    pub fn excluded_first_times(&self) -> impl Iterator<Item = u64> + '_ {
        self.tasks.iter().filter_map(|t| t.first_time)
    }

    /// Damage found so far in data and perf files.
    pub fn take_damage(&mut self) -> Vec<Damage> {
        let mut out = std::mem::take(&mut self.damage);
        for t in &mut self.tasks {
            out.append(&mut t.reader.damage);
        }
        out
    }

    /// Damage found so far in the data file of task `i` and in the perf
    /// files (cheaper than [`Merger::take_damage`] per record).
    pub fn take_task_damage(&mut self, i: usize) -> Vec<Damage> {
        let mut out = std::mem::take(&mut self.damage);
        if let Some(t) = self.tasks.get_mut(i) {
            out.append(&mut t.reader.damage);
        }
        out
    }

    fn task_index(&self, tid: i32) -> Option<usize> {
        self.tasks.iter().position(|t| {
            t.reader.tid == tid && t.enabled && self.data.tasks[t.reader.task].data.is_some()
        })
    }

    /// Next perf event of source `i` that belongs to a traced task.
    fn perf_head(&mut self, i: usize) -> Option<PerfEvent> {
        if let Some(h) = self.perf[i].head {
            return Some(h);
        }
        loop {
            let ev = self.perf[i].reader.next_event();
            let Some(ev) = ev else {
                if let Some(off) = self.perf[i].reader.truncated_at.take() {
                    self.damage.push(Damage {
                        file: std::borrow::Cow::Owned(self.data.perf[i].name.clone()),
                        offset: off,
                        message: "truncated perf record".into(),
                    });
                }
                return None;
            };
            if self.task_index(ev.tid).is_none() {
                continue;
            }
            self.perf[i].head = Some(ev);
            return Some(ev);
        }
    }

    /// With a time filter uftrace first distributes all perf events to
    /// their tasks, dropping sched-out/in pairs shorter than the filter.
    fn preload_perf(&mut self) {
        loop {
            let mut best: Option<(usize, u64)> = None;
            for i in 0..self.perf.len() {
                if let Some(h) = self.perf_head(i) {
                    if best.is_none_or(|(_, t)| h.time < t) {
                        best = Some((i, h.time));
                    }
                }
            }
            let Some((i, _)) = best else { break };
            let ev = self.perf[i].head.take();
            let Some(ev) = ev else { break };
            let Some(ti) = self.task_index(ev.tid) else {
                continue;
            };
            let rec = perf_record(&ev);
            let q = &mut self.tasks[ti].events;
            if let PerfKind::Switch { out: false, .. } = ev.kind {
                if let Some(k) = q.iter().rposition(|(r, _)| {
                    r.addr == id::PERF_SCHED_OUT as u64
                        || r.addr == id::PERF_SCHED_OUT_PREEMPT as u64
                }) {
                    if ev.time - q[k].0.time < self.time_filter {
                        q.truncate(k);
                        continue;
                    }
                }
            }
            q.push_back((rec, ev));
        }
    }

    /// Fill the task's queue as uftrace's `get_task_ustack` does.
    fn fill(&mut self, ti: usize) {
        let data = self.data;
        let tf = self.time_filter;
        let t = &mut self.tasks[ti];
        if !t.queue.is_empty() || !t.enabled {
            return;
        }
        while let Some(rec) = t.reader.next_record() {
            let mut time_filter = tf;
            let mut trig_flags = 0;
            let mut trig_time = 0;
            if matches!(rec.kind, Kind::Entry | Kind::Exit) && tf != 0 {
                if let Some(s) = data.session_at(t.reader.tid, rec.time) {
                    if let Some(e) = data.sessions.sessions[s].filters.find(rec.addr) {
                        trig_flags = e.trigger.flags;
                        trig_time = e.trigger.time;
                    }
                }
            }
            if let Some(fs) = t.fstack.last() {
                time_filter = fs.threshold;
            }
            if trig_flags & trig::TIME_FILTER != 0 {
                time_filter = trig_time;
            }
            match rec.kind {
                Kind::Entry => {
                    t.queue.push_back(rec);
                    if trig_flags & trig::TIME_FILTER != 0 {
                        t.fstack.push(FilterStack {
                            depth: rec.depth,
                            threshold: time_filter,
                        });
                    }
                }
                Kind::Exit => {
                    if t.fstack.last().is_some_and(|f| f.depth == rec.depth) {
                        t.fstack.pop();
                    }
                    let Some(k) = t.queue.iter().rposition(|r| r.kind == Kind::Entry) else {
                        t.queue.push_back(rec);
                        break;
                    };
                    let delta = rec.time.wrapping_sub(t.queue[k].time);
                    if delta < time_filter {
                        if trig_flags & trig::TRACE != 0 {
                            t.queue.push_back(rec);
                            break;
                        }
                        t.queue.truncate(k);
                    } else {
                        t.queue.push_back(rec);
                        break;
                    }
                }
                Kind::Event => {
                    t.queue.push_back(rec);
                    if rec.addr >= id::USER as u64 {
                        break;
                    }
                }
                Kind::Lost => {
                    t.queue.push_back(rec);
                    break;
                }
            }
        }
    }

    fn choose(&mut self) -> Option<Choice> {
        if let Some(c) = self.cur {
            return Some(c);
        }
        if let Some(i) = self.stay.take() {
            // Only task `i` moved since the last scan: keep it while its
            // new head still beats the best of the others.
            self.fill(i);
            if let Some(r) = self.tasks[i].queue.front() {
                let t = r.time;
                let wins = match self.runner_up {
                    None => true,
                    Some((Choice::Task(j), bt)) => t < bt || (t == bt && i < j),
                    Some((_, bt)) => t <= bt,
                };
                if wins {
                    self.cur = Some(Choice::Task(i));
                    return self.cur;
                }
            }
        }
        self.scan()
    }

    /// Look at every source: the smallest head wins (candidates come in
    /// tie-break order, so a strict `<` keeps the earlier one), and the
    /// second smallest is kept for [`Merger::choose`]'s fast path.
    fn scan(&mut self) -> Option<Choice> {
        let mut best: Option<(Choice, u64)> = None;
        let mut second: Option<(Choice, u64)> = None;
        let mut offer = |c: Choice, t: u64| {
            if best.is_none_or(|(_, bt)| t < bt) {
                second = best;
                best = Some((c, t));
            } else if second.is_none_or(|(_, st)| t < st) {
                second = Some((c, t));
            }
        };
        for i in 0..self.tasks.len() {
            self.fill(i);
            if let Some(r) = self.tasks[i].queue.front() {
                offer(Choice::Task(i), r.time);
            }
        }
        if let Some((cpu, t)) = self.kernel_head() {
            offer(Choice::Kernel(cpu), t);
        }
        if self.time_filter == 0 {
            for i in 0..self.perf.len() {
                if let Some(h) = self.perf_head(i) {
                    offer(Choice::Perf(i), h.time);
                }
            }
        } else {
            for (i, t) in self.tasks.iter().enumerate() {
                if let Some((r, _)) = t.events.front() {
                    offer(Choice::Event(i), r.time);
                }
            }
        }
        self.runner_up = second;
        self.cur = best.map(|b| b.0);
        self.cur
    }

    fn item(&mut self, c: Choice) -> Option<Item<'d>> {
        match c {
            Choice::Task(i) => Some(Item {
                task: i,
                rec: *self.tasks[i].queue.front()?,
                source: Source::User,
            }),
            Choice::Perf(i) => {
                let ev = self.perf[i].head?;
                let task = self.task_index(ev.tid)?;
                Some(Item {
                    task,
                    rec: perf_record(&ev),
                    source: Source::Perf(ev),
                })
            }
            Choice::Event(i) => {
                let (rec, ev) = *self.tasks[i].events.front()?;
                Some(Item {
                    task: i,
                    rec,
                    source: Source::Perf(ev),
                })
            }
            Choice::Kernel(cpu) => {
                let kd = self.kernel?;
                let c = &self.kcpus[cpu];
                let r = c.queue.front()?;
                let task = self.task_index(r.tid)?;
                let rec = if c.missed != 0 {
                    Record {
                        time: 0,
                        kind: Kind::Lost,
                        more: false,
                        depth: r.depth,
                        addr: (c.missed as u64) & ((1 << 48) - 1),
                        data: &[],
                        offset: r.offset,
                    }
                } else {
                    let (addr, data) = match r.kind {
                        Kind::Event => (r.addr, kd.text_of(r)),
                        _ => (self.data.kernel_address(r.addr), &[][..]),
                    };
                    Record {
                        time: r.time,
                        kind: r.kind,
                        more: r.kind == Kind::Event,
                        depth: r.depth,
                        addr,
                        data,
                        offset: r.offset,
                    }
                };
                Some(Item {
                    task,
                    rec,
                    source: Source::Kernel { cpu },
                })
            }
        }
    }

    /// uftrace's `read_kernel_cpu`: refill the queue of `cpu` when empty.
    fn kernel_fill(&mut self, cpu: usize) {
        let Some(kd) = self.kernel else { return };
        let c = &mut self.kcpus[cpu];
        if !c.queue.is_empty() || c.done {
            return;
        }
        let recs = &kd.cpus[cpu].records;
        let mut prev_tid: Option<i32> = None;
        while let Some(r) = recs.get(c.next) {
            c.next += 1;
            if let Some(m) = r.missed {
                c.missed = m;
            }
            // get_task_handle: any task of the info list
            let Some(ti) = self.tasks.iter().position(|t| t.reader.tid == r.tid) else {
                continue;
            };
            let prev = *prev_tid.get_or_insert(r.tid);
            let time_filter = self.tasks[ti]
                .fstack
                .last()
                .map_or(self.time_filter, |f| f.threshold);
            match r.kind {
                Kind::Entry => {
                    c.queue.push_back(*r);
                    self.kfuncs.insert(r.addr);
                    if r.tid != prev {
                        break;
                    }
                }
                Kind::Exit => {
                    if !self.kfuncs.contains(&r.addr) {
                        continue;
                    }
                    let Some(k) = c.queue.iter().rposition(|q| q.kind != Kind::Event) else {
                        c.queue.push_back(*r);
                        break;
                    };
                    if r.time.wrapping_sub(c.queue[k].time) < time_filter {
                        c.queue.truncate(k);
                        if r.tid != prev {
                            break;
                        }
                    } else {
                        c.queue.push_back(*r);
                        break;
                    }
                }
                _ => {
                    c.queue.push_back(*r);
                    if r.tid != prev {
                        break;
                    }
                }
            }
            prev_tid = Some(r.tid);
        }
        if c.queue.is_empty() {
            c.done = true;
        }
    }

    /// uftrace's `read_kernel_stack`: the CPU with the oldest queued
    /// record (ties to the lower CPU) and that record's time. Records of
    /// tasks without data (or left out by `--tid`) are dropped here.
    fn kernel_head(&mut self) -> Option<(usize, u64)> {
        self.kernel?;
        loop {
            let mut best: Option<(usize, u64)> = None;
            for cpu in 0..self.kcpus.len() {
                self.kernel_fill(cpu);
                if let Some(r) = self.kcpus[cpu].queue.front() {
                    if best.is_none_or(|(_, t)| r.time < t) {
                        best = Some((cpu, r.time));
                    }
                }
            }
            let (cpu, t) = best?;
            let tid = self.kcpus[cpu].queue.front()?.tid;
            if self.task_index(tid).is_some() {
                return Some((cpu, t));
            }
            self.kcpus[cpu].queue.pop_front();
        }
    }

    /// The next item without consuming it.
    pub fn peek(&mut self) -> Option<Item<'d>> {
        let c = self.choose()?;
        self.item(c)
    }

    /// The next item.
    pub fn next_item(&mut self) -> Option<Item<'d>> {
        let c = self.choose()?;
        let it = self.item(c);
        self.cur = None;
        match c {
            Choice::Task(i) => {
                self.tasks[i].queue.pop_front();
                self.stay = Some(i);
            }
            Choice::Perf(i) => self.perf[i].head = None,
            Choice::Event(i) => {
                self.tasks[i].events.pop_front();
            }
            Choice::Kernel(cpu) => {
                let c = &mut self.kcpus[cpu];
                if c.missed != 0 {
                    c.missed = 0;
                } else {
                    c.queue.pop_front();
                }
            }
        }
        it
    }

    /// Change the time of the record at the head of task `i`'s queue (used
    /// for estimated return times) — rarely needed.
    pub fn queue_len(&self, i: usize) -> usize {
        self.tasks[i].queue.len()
    }
}
