//! The one task tracker: task names over time and thread groups, from
//! what the events say (resolved once per class through the catalogue,
//! [`crate::known`]).
//!
//! A trace's task table ([`TraceMeta::tasks`]) says what each task was
//! called at the end of the recording (trace-cmd's saved cmdlines,
//! uftrace's task records). Tasks rename themselves (`exec`, `prctl`) and
//! pids are reused, so a task's name at an event is what the scheduler's
//! own events said last about it before: `sched_switch` (both tasks),
//! `sched_wakeup`/`sched_waking`/`sched_wakeup_new`, `task_rename`,
//! `task_newtask` and `sched_process_fork` (the child), in their ftrace and
//! LTTng spellings ([`Known::naming`]). Tasks no such event has named yet
//! fall back to the task table.
//!
//! Thread groups (the process a thread belongs to, its `tgid`) are known
//! only where the trace says them, never guessed: the trace's own table
//! ([`TraceMeta::tgids`]: uftrace's `task.txt`, perf's records...), a
//! `vpid` beside a `vtid` in an event's context (LTTng), `task_newtask`'s
//! clone flags (a thread, `CLONE_THREAD`, joins its creator's group whose
//! id is known; anything else leads a group of its own) and
//! `sched_process_exec` (the task leads its group after exec).

use std::collections::HashMap;
use std::sync::Arc;

use crate::known::{Known, KnownClass};
use crate::layout::{ClassMap, FieldId};
use crate::model::{Event, EventClass, PrintCtx, TraceMeta, Value};
use crate::typed::{FieldTape, Scope, TapeStep};

/// `CLONE_THREAD` of `clone(2)`'s flags.
const CLONE_THREAD: u64 = 0x0001_0000;

/// What the tracker found out about a class, once.
#[derive(Debug, Clone, Copy)]
struct ClassPlan {
    known: Option<KnownClass>,
    /// The context's thread and process ids (LTTng's `vtid`/`vpid`), when
    /// the class has both.
    context: Option<(FieldId, FieldId)>,
}

impl ClassPlan {
    fn of(c: &EventClass) -> ClassPlan {
        let l = c.layout();
        let find = |names: &[&str]| {
            [Scope::CommonContext, Scope::SpecificContext]
                .iter()
                .find_map(|&s| names.iter().find_map(|n| l.find(s, n)))
        };
        let context = match (find(&["vtid", "tid"]), find(&["vpid", "pid"])) {
            (Some(t), Some(p)) if c.schema.is_some() => Some((t, p)),
            _ => None,
        };
        ClassPlan {
            known: KnownClass::of(c),
            context,
        }
    }
}

/// Task names and thread groups so far.
#[derive(Debug, Default)]
pub struct TaskTracker {
    names: HashMap<i32, Arc<str>>,
    tgids: HashMap<i32, i32>,
    plans: ClassMap<ClassPlan>,
    scratch: FieldTape,
    text: String,
    /// Renames seen (a task's name changed), for summaries.
    pub renames: u64,
}

impl TaskTracker {
    pub fn new() -> TaskTracker {
        TaskTracker::default()
    }

    /// The name of task `pid` now: `<idle>` for pid 0 (as `report --json`
    /// shows it), what the scheduler said last, else the task table.
    #[inline]
    pub fn comm<'a>(&'a self, meta: &'a TraceMeta, pid: i32) -> Option<&'a str> {
        if pid == 0 {
            return Some("<idle>");
        }
        match self.names.get(&pid) {
            Some(c) => Some(c),
            None => meta.tasks.get(pid),
        }
    }

    /// The thread group of task `pid`, when the trace said it.
    pub fn tgid(&self, meta: &TraceMeta, pid: i32) -> Option<i32> {
        match self.tgids.get(&pid) {
            Some(&g) => Some(g),
            None => meta.tgids.get(&pid).copied(),
        }
    }

    /// The thread groups learned from events so far (not those of the
    /// trace's own table, [`TraceMeta::tgids`]), as (tid, tgid) by tid.
    pub fn learned_tgids(&self) -> Vec<(i32, i32)> {
        let mut v: Vec<(i32, i32)> = self.tgids.iter().map(|(&t, &g)| (t, g)).collect();
        v.sort_unstable();
        v
    }

    /// Whether events of `c` can tell the tracker anything (sinks skip
    /// [`TaskTracker::learn`] for the others).
    pub fn learns_from(&mut self, c: &EventClass) -> bool {
        let p = self.plans.get_or_insert_with(c.index, || ClassPlan::of(c));
        p.context.is_some()
            || p.known.is_some_and(|k| {
                !k.kind.naming().is_empty()
                    || matches!(k.kind, Known::TaskNewtask | Known::SchedProcessExec)
            })
    }

    /// Learn what `ev` says about tasks; it holds from `ev` on (a
    /// `sched_switch` names the task it leaves, the event's own).
    pub fn learn(&mut self, meta: &TraceMeta, ev: &Event<'_>) {
        let Some(c) = ev.class else { return };
        let plan = *self.plans.get_or_insert_with(c.index, || ClassPlan::of(c));
        if let Some((tid, pid)) = plan.context {
            if let Some(t) = ev.tape {
                let (mut a, mut b) = (None, None);
                for s in t.steps(c.layout()) {
                    if let TapeStep::Field(f, _, v) = s {
                        if f.id == tid {
                            a = int(v);
                        } else if f.id == pid {
                            b = int(v);
                        }
                    }
                    if a.is_some() && b.is_some() {
                        break;
                    }
                }
                if let (Some(t), Some(p)) = (a, b) {
                    if t > 0 && p > 0 {
                        self.tgids.insert(t, p);
                    }
                }
            }
        }
        let Some(k) = plan.known else { return };
        let naming = k.kind.naming();
        let groups = matches!(k.kind, Known::TaskNewtask | Known::SchedProcessExec);
        if naming.is_empty() && !groups {
            return;
        }
        let ctx = PrintCtx::of(meta, ev);
        let mut scratch = std::mem::take(&mut self.scratch);
        let picked = k.pick(ev, &ctx, &mut scratch);
        for &(name, task) in naming {
            let (Some(pid), Some(comm)) = (
                picked.int(task).and_then(|v| i32::try_from(v).ok()),
                picked.name_bytes(name),
            ) else {
                continue;
            };
            if pid <= 0 || comm.is_empty() {
                continue;
            }
            self.text.clear();
            self.text.push_str(&String::from_utf8_lossy(comm));
            match self.names.get(&pid) {
                Some(c) if **c == *self.text => {}
                Some(_) => {
                    self.renames += 1;
                    self.names.insert(pid, Arc::from(self.text.as_str()));
                }
                None => {
                    self.names.insert(pid, Arc::from(self.text.as_str()));
                }
            }
        }
        match k.kind {
            Known::TaskNewtask => {
                let child = picked.int(0).and_then(|v| i32::try_from(v).ok());
                let flags = picked.int(2).map(|v| v as u64);
                if let (Some(child), Some(flags)) = (child, flags) {
                    if child > 0 {
                        if flags & CLONE_THREAD == 0 {
                            self.tgids.insert(child, child);
                        } else if let Some(g) = self.tgid(meta, ev.pid) {
                            self.tgids.insert(child, g);
                        }
                    }
                }
            }
            Known::SchedProcessExec => {
                if let Some(p) = picked.int(1).and_then(|v| i32::try_from(v).ok()) {
                    if p > 0 {
                        self.tgids.insert(p, p);
                    }
                }
            }
            _ => {}
        }
        self.scratch = scratch;
    }
}

fn int(v: Value<'_>) -> Option<i32> {
    match v {
        Value::Signed(x) => i32::try_from(x).ok(),
        Value::Unsigned(x) => i32::try_from(x).ok(),
        _ => None,
    }
}
