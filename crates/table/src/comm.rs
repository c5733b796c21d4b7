//! Task names over time.
//!
//! A trace's task table ([`TraceMeta::tasks`]) says what each task was
//! called at the end of the recording (trace-cmd's saved cmdlines, uftrace's
//! task records). Tasks rename themselves (`exec`, `prctl`), and pids are
//! reused, so a row's `comm` is what the scheduler's own events said last
//! about that task before the row: `sched_switch` (both tasks),
//! `sched_wakeup`/`sched_waking`/`sched_wakeup_new`, `task_rename`,
//! `task_newtask` and `sched_process_fork` (the child), in their ftrace and
//! LTTng spellings. Tasks no such event has named yet fall back to the
//! task table.

use std::collections::HashMap;
use std::sync::Arc;

use tracemux_core::layout::FieldRef;
use tracemux_core::model::{visit_fields, Base, Event, EventClass, PrintCtx, TraceMeta, Value};
use tracemux_core::typed::{FieldVisitor, Scope};

/// (comm field, pid field names) pairs an event class names tasks with.
pub type Rule = &'static [(&'static str, &'static [&'static str])];

/// The task-naming fields of `class`, if it is one of the scheduler events
/// that name tasks.
pub fn rule(class: &EventClass) -> Option<Rule> {
    const SWITCH: Rule = &[
        ("prev_comm", &["prev_pid", "prev_tid"]),
        ("next_comm", &["next_pid", "next_tid"]),
    ];
    const WAKEUP: Rule = &[("comm", &["pid", "tid"])];
    const RENAME: Rule = &[("newcomm", &["pid", "tid"])];
    const FORK: Rule = &[("child_comm", &["child_pid", "child_tid"])];
    Some(match class.name.as_str() {
        "sched_switch" => SWITCH,
        "sched_wakeup" | "sched_waking" | "sched_wakeup_new" | "task_newtask" => WAKEUP,
        "task_rename" => RENAME,
        "sched_process_fork" => FORK,
        _ => return None,
    })
}

/// The names tasks have had so far.
#[derive(Debug, Default)]
pub struct Comms {
    seen: HashMap<i32, Arc<str>>,
    /// Reused between events.
    found: Found,
    /// Renames seen (a task's name changed), for the summary.
    pub renames: u64,
}

impl Comms {
    /// The name of task `pid` now: `<idle>` for pid 0 (as `report --json`
    /// shows it), what the scheduler said last, else the task table.
    pub fn get<'a>(&'a self, meta: &'a TraceMeta, pid: i32) -> Option<&'a str> {
        if pid == 0 {
            return Some("<idle>");
        }
        match self.seen.get(&pid) {
            Some(c) => Some(c),
            None => meta.tasks.get(pid),
        }
    }

    /// Learn the task names `ev` (of a class with `rule`) gives.
    pub fn learn(&mut self, meta: &TraceMeta, ev: &Event<'_>, rule: Rule) {
        self.found.clear();
        self.found.rule = rule;
        let ctx = PrintCtx::of(meta, ev);
        visit_fields(ev, &ctx, &mut self.found);
        for (i, (_, _)) in rule.iter().enumerate() {
            let (Some(pid), true) = (self.found.pids[i], self.found.named[i]) else {
                continue;
            };
            let comm = self.found.comms[i].as_str();
            if pid <= 0 || comm.is_empty() {
                continue;
            }
            match self.seen.get(&pid) {
                Some(c) if **c == *comm => {}
                Some(_) => {
                    self.renames += 1;
                    self.seen.insert(pid, Arc::from(comm));
                }
                None => {
                    self.seen.insert(pid, Arc::from(comm));
                }
            }
        }
    }
}

/// The payload's naming fields of one event.
#[derive(Debug, Default)]
struct Found {
    rule: Rule,
    pids: [Option<i32>; 2],
    /// The names (buffers reused between events: no allocation per event).
    comms: [String; 2],
    named: [bool; 2],
    payload: bool,
    depth: u32,
}

impl Found {
    fn clear(&mut self) {
        self.pids = [None; 2];
        self.named = [false; 2];
        self.payload = false;
        self.depth = 0;
    }
}

impl FieldVisitor for Found {
    fn field(&mut self, f_: FieldRef<'_>, _base: Base, value: Value<'_>) {
        let name = f_.name();
        if !self.payload || self.depth > 0 {
            return;
        }
        for (i, (comm, pids)) in self.rule.iter().enumerate().take(2) {
            if name == *comm {
                if let Value::Str(b) | Value::Bytes(b) = value {
                    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                    self.comms[i].clear();
                    self.comms[i].push_str(&String::from_utf8_lossy(&b[..end]));
                    self.named[i] = true;
                }
            } else if pids.contains(&name) {
                self.pids[i] = match value {
                    Value::Signed(v) => i32::try_from(v).ok(),
                    Value::Unsigned(v) => i32::try_from(v).ok(),
                    _ => None,
                };
            }
        }
    }
    fn scope_begin(&mut self, scope: Scope) {
        self.payload = scope == Scope::Payload;
    }
    fn struct_begin(&mut self, _f: FieldRef<'_>) {
        self.depth += 1;
    }
    fn struct_end(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
    fn array_begin(&mut self, _f: FieldRef<'_>, _len: u64) {
        self.depth += 1;
    }
    fn array_end(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}
