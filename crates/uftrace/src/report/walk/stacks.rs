//! The per-task function stacks (uftrace's `struct uftrace_fstack` arrays
//! and the filter state of `utils/fstack.c`): consuming a record, the
//! filter checks, and the fixups for exec, fork, setjmp and longjmp.

use super::{fl, WalkOptions};
use crate::argspec::{trig, FilterMode};
use crate::data::UftraceData;
use crate::events::id;
use crate::merge::{Item, Source};
use crate::record::Kind;
use crate::symbols::Symbol;

/// One frame of a task's function stack (`struct uftrace_fstack`).
#[derive(Debug, Clone, Copy, Default)]
pub struct FStack {
    pub addr: u64,
    /// Start time while the function runs, its duration once it returned.
    pub total_time: u64,
    pub child_time: u64,
    pub valid: bool,
    pub flags: u32,
    pub orig_depth: i32,
}

/// Whether the last record of a task was a user-level record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    User,
    Kernel,
    Unknown,
}

/// The per-task state (`struct uftrace_task_reader` without the reader).
#[derive(Debug, Clone)]
pub struct TaskState {
    pub tid: i32,
    pub pid: i32,
    pub ppid: i32,
    /// Current command name (task.txt, then perf COMM events).
    pub comm: Vec<u8>,
    /// False for tasks excluded by `--tid` (uftrace gives them no stack).
    pub has_stack: bool,
    stack: Vec<FStack>,
    pub stack_count: i32,
    pub user_stack_count: i32,
    pub display_depth: i32,
    display_depth_set: bool,
    user_display_depth: i32,
    pub fork_display_depth: i32,
    fstack_set: bool,
    fork_handled: bool,
    lost_seen: bool,
    in_count: i32,
    out_count: i32,
    /// Remaining filter depth.
    pub filter_depth: i32,
    ctx: Ctx,
    /// Free for the commands (each sets it as uftrace does).
    pub timestamp: u64,
    /// Free for the commands (each sets it as uftrace does).
    pub timestamp_last: u64,
    /// Time and address of the last record read for this task
    /// (`task->rstack`); see [`Stacks::rstack`].
    rstack_time: u64,
    rstack_addr: u64,
    /// The last record was a perf event: uftrace's `task->rstack` then
    /// points to the one record all perf events are read into.
    rstack_perf: bool,
}

/// A record as the stack sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rec {
    pub kind: Kind,
    pub time: u64,
    pub addr: u64,
    pub depth: u16,
    pub more: bool,
    /// Read from a `<tid>.dat` (not a perf event).
    pub user: bool,
    /// A kernel function or event (`-k` data; not its LOST records).
    pub kernel: bool,
}

impl Rec {
    /// The record of a merged item.
    pub fn of(it: &Item<'_>) -> Rec {
        Rec {
            kind: it.rec.kind,
            time: it.rec.time,
            addr: it.rec.addr,
            depth: it.rec.depth,
            more: it.rec.more,
            user: matches!(it.source, Source::User),
            kernel: matches!(it.source, Source::Kernel { .. }) && it.rec.kind != Kind::Lost,
        }
    }

    /// A perf schedule event seen as a function: sched-out enters the
    /// virtual `linux:schedule`, sched-in returns from it.
    fn as_frame(&self) -> Option<(Kind, u16)> {
        match self.kind {
            Kind::Event => match self.addr {
                a if a == id::PERF_SCHED_OUT as u64 || a == id::PERF_SCHED_OUT_PREEMPT as u64 => {
                    Some((Kind::Entry, 0))
                }
                a if a == id::PERF_SCHED_IN as u64 => Some((Kind::Exit, 0)),
                _ => None,
            },
            k => Some((k, self.depth)),
        }
    }
}

/// Kinds of functions that need fixing up (`fixup_syms` in uftrace).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fixup {
    Exec,
    Setjmp,
    Longjmp,
    Fork,
}

const FIXUP_NAMES: [&str; 17] = [
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

/// Per session: sorted `(start, end, kind)` address ranges of the fixup
/// functions in every loaded module.
fn build_fixups(data: &UftraceData) -> Vec<Vec<(u64, u64, Fixup)>> {
    data.sessions
        .sessions
        .iter()
        .map(|s| {
            let mut v = Vec::new();
            for m in &s.maps.maps {
                let Some(mi) = m.module else { continue };
                for sym in &data.modules[mi].symbols {
                    let n = &*sym.name;
                    if !FIXUP_NAMES.contains(&n) {
                        continue;
                    }
                    let kind = if n.starts_with("exec") {
                        Fixup::Exec
                    } else if n.contains("setjmp") {
                        Fixup::Setjmp
                    } else if n.contains("longjmp") {
                        Fixup::Longjmp
                    } else {
                        Fixup::Fork
                    };
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

/// The stacks of all tasks plus uftrace's global filter state.
pub struct Stacks<'d> {
    /// The recording.
    pub data: &'d UftraceData,
    /// Per task, in the order of [`UftraceData::tasks`].
    pub tasks: Vec<TaskState>,
    max_stack: i32,
    depth: i32,
    /// A frame never used yet (uftrace sets `orig_depth` of every frame
    /// to the `-D` value up front).
    blank: FStack,
    filter_mode: FilterMode,
    /// uftrace's `fstack_enabled` (trace-on/off triggers).
    pub enabled: bool,
    fixups: Vec<Vec<(u64, u64, Fixup)>>,
    setjmp_depth: i32,
    setjmp_count: i32,
    event_skip_out: bool,
    /// Hide kernel records outside user functions (not `--kernel-full`).
    pub kernel_skip_out: bool,
    kernel_only: bool,
    no_event: bool,
    no_sched: bool,
    /// Per task: its own session ranges `(start, end, session)`.
    sess_ranges: Vec<Vec<(u64, u64, usize)>>,
    /// Direct-mapped cache of `(session + 1, addr) -> symbol` for sessions
    /// without dlopen'ed libraries (whose lookups depend on time).
    sym_cache: Vec<(u64, usize, Option<&'d Symbol>)>,
    time_filter: u64,
    /// The record perf events are read into (time, address).
    perf_rstack: (u64, u64),
}

const SYM_CACHE: usize = 4096;

impl<'d> Stacks<'d> {
    /// Stacks for every task of `data` (tasks excluded by `opts.tids` get
    /// none, as in uftrace).
    pub fn new(data: &'d UftraceData, opts: &WalkOptions, filter_mode: FilterMode) -> Stacks<'d> {
        let tasks = data
            .tasks
            .iter()
            .map(|tf| {
                let t = data.sessions.find_task(tf.tid);
                TaskState {
                    tid: tf.tid,
                    pid: t.map_or(0, |t| t.pid),
                    ppid: t.map_or(0, |t| t.ppid),
                    comm: t.map_or(Vec::new(), |t| t.comm.as_bytes().to_vec()),
                    has_stack: opts.tids.as_ref().is_none_or(|v| v.contains(&tf.tid)),
                    stack: Vec::new(),
                    stack_count: 0,
                    user_stack_count: 0,
                    display_depth: 0,
                    display_depth_set: true,
                    user_display_depth: 0,
                    fork_display_depth: 0,
                    fstack_set: false,
                    fork_handled: false,
                    lost_seen: false,
                    in_count: 0,
                    out_count: 0,
                    filter_depth: opts.depth,
                    ctx: Ctx::Unknown,
                    timestamp: 0,
                    timestamp_last: 0,
                    rstack_time: 0,
                    rstack_addr: 0,
                    rstack_perf: false,
                }
            })
            .collect();
        Stacks {
            data,
            tasks,
            max_stack: data.header.max_stack as i32,
            depth: opts.depth,
            blank: FStack {
                orig_depth: opts.depth,
                ..FStack::default()
            },
            filter_mode,
            enabled: true,
            fixups: build_fixups(data),
            setjmp_depth: 0,
            setjmp_count: 0,
            event_skip_out: !opts.event_full,
            kernel_skip_out: !opts.kernel_full,
            kernel_only: opts.kernel_only,
            no_event: opts.no_event,
            no_sched: opts.no_sched,
            sess_ranges: data
                .tasks
                .iter()
                .map(|tf| {
                    data.sessions.find_task(tf.tid).map_or(Vec::new(), |t| {
                        t.srefs
                            .iter()
                            .map(|r| (r.start, r.end, r.session))
                            .collect()
                    })
                })
                .collect(),
            sym_cache: vec![(0, 0, None); SYM_CACHE],
            time_filter: opts.time_filter,
            perf_rstack: (0, 0),
        }
    }

    /// Whether `addr` is in a fixup function (exec, fork, setjmp, ...) of
    /// session `s`.
    pub fn is_fixup(&self, s: usize, addr: u64) -> bool {
        let Some(fx) = self.fixups.get(s) else {
            return false;
        };
        let i = fx.partition_point(|e| e.0 <= addr);
        i.checked_sub(1)
            .is_some_and(|k| fx[k].0 <= addr && addr < fx[k].1)
    }

    /// The session of task `ti` at `time` (`find_task_session`).
    #[inline]
    pub fn session(&self, ti: usize, time: u64) -> Option<usize> {
        for &(st, en, s) in &self.sess_ranges[ti] {
            if st <= time && time < en {
                return Some(s);
            }
        }
        self.data.session_at(self.tasks[ti].tid, time)
    }

    /// The symbol of `addr` for task `ti` at `time` (`task_find_sym_addr`).
    #[inline]
    pub fn symbol(&mut self, ti: usize, time: u64, addr: u64) -> Option<&'d Symbol> {
        let s = self.session(ti, time)?;
        self.symbol_in(s, time, addr)
    }

    /// The symbol of `addr` in session `s` at `time`.
    #[inline]
    pub fn symbol_in(&mut self, s: usize, time: u64, addr: u64) -> Option<&'d Symbol> {
        let data = self.data;
        if !data.sessions.sessions[s].dlopens.is_empty() {
            return data.symbol_in(s, time, addr);
        }
        let h = ((addr >> 2) ^ (addr >> 13) ^ (s as u64).wrapping_mul(0x9e37)) as usize % SYM_CACHE;
        let e = self.sym_cache[h];
        if e.0 == addr && e.1 == s + 1 {
            return e.2;
        }
        let r = data.symbol_in(s, time, addr);
        self.sym_cache[h] = (addr, s + 1, r);
        r
    }

    /// `fstack_get`: frame `idx` of task `ti`, `None` when out of bounds
    /// or the task has no stack.
    #[inline]
    pub fn get(&self, ti: usize, idx: i32) -> Option<FStack> {
        if idx < 0 || idx >= self.max_stack || !self.tasks[ti].has_stack {
            return None;
        }
        Some(
            self.tasks[ti]
                .stack
                .get(idx as usize)
                .copied()
                .unwrap_or(self.blank),
        )
    }

    /// Mutable `fstack_get` (grows the array to `idx`).
    #[inline]
    pub fn get_mut(&mut self, ti: usize, idx: i32) -> Option<&mut FStack> {
        if idx >= self.max_stack || !self.tasks[ti].has_stack {
            return None;
        }
        self.raw_mut(ti, idx)
    }

    /// Frame `idx` without bounds against `max_stack` (uftrace's
    /// `fstack[-1]` pointer arithmetic on a frame it already holds).
    pub(crate) fn raw_mut(&mut self, ti: usize, idx: i32) -> Option<&mut FStack> {
        if idx < 0 {
            return None;
        }
        let blank = self.blank;
        let t = &mut self.tasks[ti];
        let i = idx as usize;
        if i >= t.stack.len() {
            t.stack.resize(i + 1, blank);
        }
        Some(&mut t.stack[i])
    }

    /// Frame `idx` of task `ti` ends `delta` after it began: that is its
    /// total time (its children's time is at most that), and its parent's
    /// children took `delta` more.
    fn end_frame(&mut self, ti: usize, idx: i32, delta: u64) {
        if let Some(f) = self.raw_mut(ti, idx) {
            f.total_time = delta;
            f.child_time = f.child_time.min(delta);
        }
        if idx > 0 {
            if let Some(p) = self.raw_mut(ti, idx - 1) {
                p.child_time = p.child_time.wrapping_add(delta);
            }
        }
    }

    /// Time and address of task `ti`'s last record (`task->rstack`): the
    /// last perf record read, for a task whose last record was one.
    pub fn rstack(&self, ti: usize) -> (u64, u64) {
        let t = &self.tasks[ti];
        if t.rstack_perf {
            self.perf_rstack
        } else {
            (t.rstack_time, t.rstack_addr)
        }
    }

    /// Change the address of task `ti`'s last record (uftrace does, for
    /// schedule events in graphs).
    pub fn set_rstack_addr(&mut self, ti: usize, addr: u64) {
        if self.tasks[ti].rstack_perf {
            self.perf_rstack.1 = addr;
        } else {
            self.tasks[ti].rstack_addr = addr;
        }
    }

    /// Make task `ti`'s last record a user one at `time`, `addr` (the
    /// exits uftrace makes up for functions left running).
    pub fn set_rstack(&mut self, ti: usize, time: u64, addr: u64) {
        let t = &mut self.tasks[ti];
        t.rstack_perf = false;
        t.rstack_time = time;
        t.rstack_addr = addr;
    }

    /// Index of the task with `tid` (`get_task_handle`).
    pub fn task_index(&self, tid: i32) -> Option<usize> {
        self.tasks.iter().position(|t| t.tid == tid)
    }

    /// `fstack_consume` of a record read for task `ti`; `comm` is the new
    /// name a perf COMM event carries.
    pub fn consume(&mut self, ti: usize, r: &Rec, comm: Option<&[u8]>) {
        if let Some(c) = comm {
            let t = &mut self.tasks[ti];
            t.comm.clear();
            t.comm.extend_from_slice(&c[..c.len().min(16)]);
        }
        {
            // without a time filter, perf events are all read into one
            // record that every task's rstack may point to
            let shared = !r.user && !r.kernel && r.kind == Kind::Event && self.time_filter == 0;
            let t = &mut self.tasks[ti];
            t.rstack_perf = shared;
            if shared {
                self.perf_rstack = (r.time, r.addr);
            } else {
                t.rstack_time = r.time;
                t.rstack_addr = r.addr;
            }
        }
        self.account_time(ti, r);
        self.update_stack_count(ti, r);
    }

    /// Consume a merged item.
    pub fn consume_item(&mut self, it: &Item<'_>) {
        let comm = match &it.source {
            Source::Perf(ev) => ev.comm(),
            Source::User | Source::Kernel { .. } => None,
        };
        self.consume(it.task, &Rec::of(it), comm);
    }

    fn account_time(&mut self, ti: usize, r: &Rec) {
        let Some((kind, depth)) = r.as_frame() else {
            return;
        };
        let depth = depth as i32;
        let time = r.time;
        if !self.tasks[ti].fstack_set {
            let ppid = self.tasks[ti].ppid;
            let parent_fdd = if self.tasks[ti].fork_handled {
                None
            } else {
                self.task_index(ppid)
                    .map(|p| self.tasks[p].fork_display_depth)
            };
            let depth_opt = self.depth;
            let t = &mut self.tasks[ti];
            t.stack_count = depth + i32::from(kind == Kind::Exit);
            t.fstack_set = true;
            if !t.fork_handled {
                if let Some(fdd) = parent_fdd {
                    if fdd != 0 {
                        t.display_depth = fdd;
                        t.display_depth_set = true;
                        if r.kernel {
                            t.stack_count = t.stack_count.wrapping_add(t.display_depth);
                        }
                    }
                }
                t.fork_handled = true;
            }
            if r.kernel {
                t.stack_count = t.stack_count.wrapping_add(t.user_stack_count);
            }
            let n = t.stack_count;
            for i in 0..n {
                if let Some(f) = self.get_mut(ti, i) {
                    f.total_time = time;
                    f.child_time = 0;
                    f.valid = true;
                }
            }
            self.tasks[ti].filter_depth = depth_opt;
        }
        if self.tasks[ti].lost_seen {
            if kind == Kind::Lost {
                return;
            }
            let t = &mut self.tasks[ti];
            t.stack_count = depth + i32::from(kind == Kind::Exit);
            if r.kernel {
                t.stack_count = t.stack_count.wrapping_add(t.user_stack_count);
            }
            t.lost_seen = false;
            let base = t.user_stack_count;
            for i in 0..=depth {
                if let Some(f) = self.get_mut(ti, i.wrapping_add(base)) {
                    f.total_time = time.wrapping_sub(1);
                    f.child_time = 0;
                }
            }
        }
        // back from the kernel without its exits: protect from broken
        // kernel records (not for LOST or a schedule event)
        if self.tasks[ti].ctx == Ctx::Kernel
            && !r.kernel
            && r.kind != Kind::Lost
            && r.kind != Kind::Event
        {
            let depth_opt = self.depth;
            let t = &mut self.tasks[ti];
            t.stack_count = t.user_stack_count;
            t.filter_depth = depth_opt.wrapping_sub(t.stack_count);
        }
        if !self.tasks[ti].has_stack {
            return;
        }
        match kind {
            Kind::Entry => {
                let sc = self.tasks[ti].stack_count;
                if let Some(f) = self.get_mut(ti, sc) {
                    f.addr = r.addr;
                    f.total_time = time;
                    f.child_time = 0;
                    f.valid = true;
                }
            }
            Kind::Exit => {
                let sc = self.tasks[ti].stack_count;
                let idx = sc - 1;
                let Some(f) = self.get_mut(ti, idx) else {
                    return;
                };
                let mut delta = time.wrapping_sub(f.total_time);
                if !f.valid {
                    delta = 0;
                }
                f.valid = false;
                self.end_frame(ti, idx, delta);
            }
            Kind::Lost => {
                let t = &mut self.tasks[ti];
                t.lost_seen = true;
                t.display_depth_set = false;
                let (hi, lo) = (t.stack_count, t.user_stack_count);
                let mut lost_time = 0u64;
                let mut i = hi;
                while i >= lo {
                    if let Some(f) = self.get_mut(ti, i) {
                        if lost_time == 0 {
                            lost_time = f.total_time.wrapping_add(1);
                        }
                        let delta = lost_time.wrapping_sub(f.total_time);
                        self.end_frame(ti, i, delta);
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

    fn update_stack_count(&mut self, ti: usize, r: &Rec) {
        let Some((kind, _)) = r.as_frame() else {
            return;
        };
        // a schedule event is turned into a dummy record: never "user"
        let user = r.user && r.kind != Kind::Event;
        let t = &mut self.tasks[ti];
        t.ctx = if user {
            Ctx::User
        } else if r.kernel {
            Ctx::Kernel
        } else {
            Ctx::Unknown
        };
        match kind {
            Kind::Entry => t.stack_count = t.stack_count.wrapping_add(1),
            Kind::Exit if t.stack_count > 0 => t.stack_count = t.stack_count.wrapping_sub(1),
            _ => {}
        }
        if user {
            match kind {
                Kind::Entry => t.user_stack_count = t.user_stack_count.wrapping_add(1),
                Kind::Exit if t.user_stack_count > 0 => {
                    t.user_stack_count = t.user_stack_count.wrapping_sub(1)
                }
                _ => {}
            }
        }
    }

    /// `fstack_check_opts`: whether the record passes `--no-event`,
    /// `--no-sched` and the skipping of events outside user functions.
    pub fn check_opts(&self, ti: usize, r: &Rec) -> bool {
        if self.kernel_only && !r.kernel && r.kind != Kind::Lost {
            return false;
        }
        if self.kernel_skip_out && self.tasks[ti].user_stack_count == 0 && r.kernel {
            return false;
        }
        if self.event_skip_out && self.tasks[ti].user_stack_count == 0 && r.kind == Kind::Event {
            return false;
        }
        if self.no_event && r.kind == Kind::Event {
            return false;
        }
        if self.no_sched && r.kind == Kind::Event && crate::events::is_sched_event(r.addr) {
            return false;
        }
        true
    }

    /// The filter entry of `addr` for task `ti` at `time`:
    /// (flags, mode, depth), and the session index.
    fn trigger_at(&self, ti: usize, time: u64, addr: u64) -> (Option<usize>, u32, FilterMode, i32) {
        let Some(s) = self.session(ti, time) else {
            return (None, 0, FilterMode::None, 0);
        };
        match self.data.sessions.sessions[s].filters.find(addr) {
            Some(e) => (Some(s), e.trigger.flags, e.trigger.fmode, e.trigger.depth),
            None => (Some(s), 0, FilterMode::None, 0),
        }
    }

    /// `fstack_entry`: false when the function is not shown.
    pub fn entry(&mut self, ti: usize, r: &Rec) -> bool {
        let sc = self.tasks[ti].stack_count;
        let od = self.tasks[ti].filter_depth;
        {
            let Some(f) = self.get_mut(ti, sc - 1) else {
                return false;
            };
            f.orig_depth = od;
            f.flags = 0;
        }
        if self.tasks[ti].out_count > 0 {
            if let Some(f) = self.get_mut(ti, sc - 1) {
                f.flags |= fl::NORECORD;
            }
            return false;
        }
        let (sess, flags, fmode, tdepth) = self.trigger_at(ti, r.time, r.addr);
        if let Some(s) = sess {
            let fx = &self.fixups[s];
            let i = fx.partition_point(|e| e.0 <= r.addr);
            if let Some(&(st, en, kind)) = i.checked_sub(1).map(|k| &fx[k]) {
                if st <= r.addr && r.addr < en {
                    match kind {
                        Fixup::Exec => {
                            if let Some(f) = self.get_mut(ti, sc - 1) {
                                f.flags |= fl::EXEC;
                            }
                        }
                        Fixup::Setjmp => {
                            self.setjmp_depth = self.tasks[ti].display_depth.wrapping_add(1);
                            self.setjmp_count = self.tasks[ti].stack_count;
                        }
                        Fixup::Longjmp => {
                            if let Some(f) = self.get_mut(ti, sc - 1) {
                                f.flags |= fl::LONGJMP;
                            }
                        }
                        Fixup::Fork => {
                            self.tasks[ti].fork_display_depth =
                                self.tasks[ti].display_depth.wrapping_add(1);
                        }
                    }
                }
            }
        }
        let set_flag = |s: &mut Self, f: u32| {
            if let Some(fr) = s.get_mut(ti, sc - 1) {
                fr.flags |= f;
            }
        };
        if flags & trig::FILTER != 0 {
            if fmode == FilterMode::In {
                self.tasks[ti].in_count = self.tasks[ti].in_count.wrapping_add(1);
                set_flag(self, fl::FILTERED);
            } else {
                self.tasks[ti].out_count = self.tasks[ti].out_count.wrapping_add(1);
                set_flag(self, fl::NOTRACE | fl::NORECORD);
                return false;
            }
            self.tasks[ti].filter_depth = self.depth;
        } else if self.filter_mode == FilterMode::In && self.tasks[ti].in_count == 0 {
            set_flag(self, fl::NORECORD);
            return false;
        }
        if flags & trig::DEPTH != 0 {
            self.tasks[ti].filter_depth = tdepth;
        }
        if flags & trig::TRACE_ON != 0 {
            self.enabled = true;
        }
        if flags & trig::TRACE_OFF != 0 {
            self.enabled = false;
            self.tasks[ti].display_depth_set = false;
        }
        if !self.enabled {
            return false;
        }
        if self.tasks[ti].filter_depth <= 0 || flags & trig::HIDE != 0 {
            set_flag(self, fl::NORECORD);
            return false;
        }
        let t = &mut self.tasks[ti];
        t.filter_depth = t.filter_depth.wrapping_sub(1);
        if !t.display_depth_set {
            t.display_depth = t.stack_count.wrapping_sub(1).max(0);
            t.display_depth_set = true;
        }
        true
    }

    /// `fstack_exit`.
    pub fn exit(&mut self, ti: usize) {
        let sc = self.tasks[ti].stack_count;
        let Some(f) = self.get_mut(ti, sc) else {
            return;
        };
        let flags = f.flags;
        let od = f.orig_depth;
        f.flags = 0;
        let t = &mut self.tasks[ti];
        if flags & fl::FILTERED != 0 {
            t.in_count = t.in_count.wrapping_sub(1);
        } else if flags & fl::NOTRACE != 0 {
            t.out_count = t.out_count.wrapping_sub(1);
        }
        t.filter_depth = od;
    }

    /// `fstack_update`: move the display depth (and reset the stack after
    /// `exec`/`longjmp`).
    pub fn update(&mut self, kind: Kind, ti: usize, idx: i32) -> i32 {
        let Some(f) = self.get(ti, idx) else {
            return self.tasks[ti].display_depth;
        };
        if kind == Kind::Entry {
            let (sd, sc) = (self.setjmp_depth, self.setjmp_count);
            let t = &mut self.tasks[ti];
            if f.flags & fl::EXEC != 0 {
                t.display_depth = 0;
                t.stack_count = 0;
                t.user_display_depth = 0;
                t.user_stack_count = 0;
            } else if f.flags & fl::LONGJMP != 0 {
                t.display_depth = sd;
                t.stack_count = sc;
                t.user_display_depth = sd;
                t.user_stack_count = sc;
            } else {
                t.display_depth = t.display_depth.wrapping_add(1);
                if t.ctx == Ctx::User {
                    t.user_display_depth = t.user_display_depth.wrapping_add(1);
                }
            }
            if let Some(f) = self.get_mut(ti, idx) {
                f.flags &= !(fl::EXEC | fl::LONGJMP);
            }
        } else {
            let t = &mut self.tasks[ti];
            if !t.display_depth_set {
                t.display_depth = t.stack_count.wrapping_add(1);
                t.display_depth_set = true;
            }
            t.display_depth = t.display_depth.wrapping_sub(1).max(0);
            if t.ctx == Ctx::User {
                t.user_display_depth = t.user_display_depth.wrapping_sub(1).max(0);
            }
        }
        self.tasks[ti].display_depth
    }

    /// `fstack_check_filter`: whether the consumed record is shown.
    pub fn check_filter(&mut self, ti: usize, r: &Rec) -> bool {
        match r.kind {
            Kind::Entry => {
                let sc = self.tasks[ti].stack_count;
                if self.get(ti, sc - 1).is_none() {
                    return false;
                }
                self.entry(ti, r)
            }
            Kind::Exit => {
                let sc = self.tasks[ti].stack_count;
                let Some(f) = self.get(ti, sc) else {
                    return false;
                };
                if f.flags & fl::NORECORD != 0 || !self.enabled {
                    self.exit(ti);
                    return false;
                }
                self.update(Kind::Exit, ti, sc);
                true
            }
            Kind::Event => {
                let t = &self.tasks[ti];
                if t.out_count > 0
                    || t.filter_depth <= 0
                    || (self.filter_mode == FilterMode::In && t.in_count == 0)
                {
                    return false;
                }
                if r.addr == id::PERF_SCHED_IN as u64 || r.addr == id::PERF_SCHED_OUT as u64 {
                    let mut idx = t.stack_count;
                    if r.addr == id::PERF_SCHED_OUT as u64 {
                        idx -= 1;
                    }
                    if self.get(ti, idx).is_none() {
                        return false;
                    }
                }
                true
            }
            Kind::Lost => true,
        }
    }

    /// `fstack_check_filter_done`.
    pub fn check_filter_done(&mut self, ti: usize, r: &Rec) {
        match r.kind {
            Kind::Entry => {
                let sc = self.tasks[ti].stack_count;
                if self.get(ti, sc - 1).is_none() {
                    return;
                }
                self.update(Kind::Entry, ti, sc - 1);
            }
            Kind::Exit => {
                let sc = self.tasks[ti].stack_count;
                if self.get(ti, sc).is_none() {
                    return;
                }
                self.exit(ti);
            }
            _ => {}
        }
    }

    /// `fstack_check_skip`: whether a record ahead of the current one
    /// (not consumed yet) would be hidden, so that replay may consume it
    /// while looking for the exit of a leaf function.
    pub fn check_skip(&self, ti: usize, r: &Rec) -> bool {
        let t = &self.tasks[ti];
        if t.out_count > 0 {
            return true;
        }
        if r.kind == Kind::Exit {
            if t.stack_count < 1 {
                return false;
            }
            return self
                .get(ti, t.stack_count - 1)
                .is_none_or(|f| f.flags & fl::NORECORD != 0);
        }
        let (sess, flags, fmode, _) = self.trigger_at(ti, r.time, r.addr);
        if sess.is_none() {
            return true;
        }
        let mut depth = t.filter_depth;
        if flags & trig::FILTER != 0 {
            if fmode == FilterMode::Out {
                return true;
            }
            depth = self.depth;
        } else if self.filter_mode == FilterMode::In && t.in_count == 0 {
            return true;
        }
        if flags & (trig::DEPTH | trig::TRACE_ON) != 0 {
            return false;
        }
        flags & (trig::TRACE_OFF | trig::HIDE) != 0 || depth <= 0
    }

    /// Turn frame `sc` of a function still running at `last` into its
    /// duration (as uftrace does for the functions left at the end), and
    /// add it to the parent's child time.
    pub fn close_frame(&mut self, ti: usize, sc: i32, last: u64) {
        let Some(f) = self.get_mut(ti, sc) else {
            return;
        };
        let mut total = last.wrapping_sub(f.total_time);
        if f.child_time > total {
            total = f.child_time;
        }
        f.total_time = total;
        if sc > 0 {
            if let Some(p) = self.raw_mut(ti, sc - 1) {
                p.child_time = p.child_time.wrapping_add(total);
            }
        }
    }

    /// Close the functions of task `ti` still running at `last`, as
    /// uftrace's report, graph and dump do at the end: from the top of the
    /// stack down, each frame that started at or before `last` becomes its
    /// duration ([`Stacks::close_frame`]) and goes to `each` with its
    /// index, as it was before. Frames without an address are passed over
    /// unless `unnamed`. The stack count ends below zero.
    pub fn close_running(
        &mut self,
        ti: usize,
        last: u64,
        unnamed: bool,
        mut each: impl FnMut(&mut Self, i32, FStack),
    ) {
        if self.tasks[ti].stack_count == 0 {
            return;
        }
        // no frame above max_stack: start below it (a damaged count may
        // be huge)
        let t = &mut self.tasks[ti];
        t.stack_count = t.stack_count.min(self.max_stack);
        loop {
            let t = &mut self.tasks[ti];
            t.stack_count = t.stack_count.wrapping_sub(1);
            let sc = t.stack_count;
            if sc < 0 {
                break;
            }
            let Some(f) = self.get(ti, sc) else { continue };
            if (f.addr == 0 && !unnamed) || f.total_time > last {
                continue;
            }
            self.close_frame(ti, sc, last);
            each(self, sc, f);
        }
    }

    /// At a LOST record of task `ti`: leave every function down to the
    /// user stack count (uftrace's report and graph), handing `each` the
    /// frames still shown.
    pub fn unwind_lost(&mut self, ti: usize, mut each: impl FnMut(&mut Self, FStack)) {
        while self.tasks[ti].stack_count >= self.tasks[ti].user_stack_count {
            let sc = self.tasks[ti].stack_count;
            if let Some(f) = self.get(ti, sc) {
                if self.enabled && f.valid && f.flags & fl::NORECORD == 0 {
                    each(self, f);
                }
            }
            self.exit(ti);
            let t = &mut self.tasks[ti];
            t.stack_count = t.stack_count.wrapping_sub(1);
        }
    }

    /// Whether `addr` of task `ti` at `time` is a PLT entry (a library
    /// call, skipped by `--no-libcall`).
    pub fn is_plt(&mut self, ti: usize, time: u64, addr: u64) -> bool {
        self.symbol(ti, time, addr).is_some_and(|s| s.is_plt())
    }
}
