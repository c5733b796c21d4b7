//! Time-merged iteration over all tasks and perf events, in the order
//! `uftrace replay` processes them.
//!
//! Each task contributes its next record (after the `-t` time-filter
//! buffering when one is set); perf files contribute their earliest event.
//! The smallest timestamp wins; among tasks, ties go to the task listed
//! first in `info`; a task record wins a tie with a perf event.

use std::collections::VecDeque;

use crate::argspec::trig;
use crate::data::UftraceData;
use crate::events::id;
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

struct PerfSource<'d> {
    reader: PerfReader<'d>,
    head: Option<PerfEvent>,
}

/// The merged stream (peekable, as replay needs to look ahead).
pub struct Merger<'d> {
    data: &'d UftraceData,
    tasks: Vec<TaskSource<'d>>,
    perf: Vec<PerfSource<'d>>,
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
        let mut m = Merger {
            data,
            tasks,
            perf,
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
        }
        it
    }

    /// Change the time of the record at the head of task `i`'s queue (used
    /// for estimated return times) — rarely needed.
    pub fn queue_len(&self, i: usize) -> usize {
        self.tasks[i].queue.len()
    }
}
