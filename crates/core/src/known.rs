//! The one catalogue of well-known events: the scheduler, IRQ, syscall,
//! power, workqueue and ftrace events that sinks give a meaning of their
//! own (Perfetto's typed messages, the task tracker's names and thread
//! groups, the SQL scheduler tables), in the spellings of ftrace and of
//! LTTng's kernel tracer. A class is resolved once ([`KnownClass::of`]):
//! its kind and, for each slot of the kind, the field that fills it; its
//! events' values are then read by id ([`KnownClass::pick`]).
//!
//! Slot `k` of a kind is the `k`th entry of [`Known::slots`]: the first of
//! its names the class has (LTTng names threads `tid` where ftrace says
//! `pid`).

use crate::layout::{ClassLayout, FieldId};
use crate::model::{visit_fields, Event, EventClass, FieldDef, PrintCtx, Value};
use crate::typed::{FieldTape, Scope, TapeStep};

/// The well-known events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Known {
    SchedSwitch,
    SchedWakeup,
    SchedWakeupNew,
    SchedWaking,
    SchedProcessFork,
    SchedProcessExit,
    SchedProcessFree,
    SchedProcessExec,
    TaskNewtask,
    TaskRename,
    SchedMigrateTask,
    CpuFrequency,
    CpuIdle,
    IrqHandlerEntry,
    IrqHandlerExit,
    SoftirqEntry,
    SoftirqExit,
    SysEnter,
    SysExit,
    WorkqueueExecuteStart,
    WorkqueueExecuteEnd,
    /// ftrace's `print` (trace_printk, trace_marker).
    Print,
    FuncgraphEntry,
    FuncgraphExit,
}

/// Most slots of a kind.
pub const SLOTS: usize = 7;

type Names = &'static [&'static [&'static str]];

const SWITCH: Names = &[
    &["prev_comm"],
    &["prev_tid", "prev_pid"],
    &["prev_prio"],
    &["prev_state"],
    &["next_comm"],
    &["next_tid", "next_pid"],
    &["next_prio"],
];
const WAKE: Names = &[
    &["comm"],
    &["tid", "pid"],
    &["prio"],
    &["success"],
    &["target_cpu"],
];
const FORK: Names = &[
    &["parent_comm"],
    &["parent_tid", "parent_pid"],
    &["child_comm"],
    &["child_tid", "child_pid"],
];
const EXIT: Names = &[&["comm"], &["tid", "pid"], &["tgid"], &["prio"]];
const FREE: Names = &[&["comm"], &["tid", "pid"], &["prio"]];
const EXEC: Names = &[&["filename"], &["tid", "pid"], &["old_tid", "old_pid"]];
const NEWTASK: Names = &[
    &["tid", "pid"],
    &["comm"],
    &["clone_flags"],
    &["oom_score_adj"],
];
const RENAME: Names = &[
    &["tid", "pid"],
    &["oldcomm"],
    &["newcomm"],
    &["oom_score_adj"],
];
const MIGRATE: Names = &[
    &["comm"],
    &["tid", "pid"],
    &["prio"],
    &["orig_cpu"],
    &["dest_cpu"],
    &["running"],
    &["load"],
];
const CPU_STATE: Names = &[&["state"], &["cpu_id"]];
const IRQ_ENTRY: Names = &[&["irq"], &["name"], &["handler"]];
const IRQ_EXIT: Names = &[&["irq"], &["ret"]];
const SOFTIRQ: Names = &[&["vec"]];
const SYS_ENTER: Names = &[&["id"], &["args"]];
const SYS_EXIT: Names = &[&["id"], &["ret"]];
const WORK: Names = &[&["work"], &["function"]];
const PRINT: Names = &[&["ip"], &["buf"]];
const FG_ENTRY: Names = &[&["depth"], &["func"]];
const FG_EXIT: Names = &[
    &["calltime"],
    &["depth"],
    &["func"],
    &["overrun"],
    &["rettime"],
];

/// What an event says about task names: the slots of a (name, task) pair.
pub type Naming = &'static [(usize, usize)];

impl Known {
    /// The kind of events of class `c`, by its ftrace (or LTTng) name.
    pub fn of(c: &EventClass) -> Option<Known> {
        use Known::*;
        let ftrace = c.system == "ftrace";
        Some(match c.name.as_str() {
            "sched_switch" => SchedSwitch,
            "sched_wakeup" => SchedWakeup,
            "sched_wakeup_new" => SchedWakeupNew,
            "sched_waking" => SchedWaking,
            "sched_process_fork" => SchedProcessFork,
            "sched_process_exit" => SchedProcessExit,
            "sched_process_free" => SchedProcessFree,
            "sched_process_exec" => SchedProcessExec,
            "task_newtask" => TaskNewtask,
            "task_rename" => TaskRename,
            "sched_migrate_task" => SchedMigrateTask,
            "cpu_frequency" | "power_cpu_frequency" => CpuFrequency,
            "cpu_idle" | "power_cpu_idle" => CpuIdle,
            "irq_handler_entry" => IrqHandlerEntry,
            "irq_handler_exit" => IrqHandlerExit,
            "softirq_entry" | "irq_softirq_entry" => SoftirqEntry,
            "softirq_exit" | "irq_softirq_exit" => SoftirqExit,
            "sys_enter" if c.system == "raw_syscalls" => SysEnter,
            "sys_exit" if c.system == "raw_syscalls" => SysExit,
            "workqueue_execute_start" => WorkqueueExecuteStart,
            "workqueue_execute_end" => WorkqueueExecuteEnd,
            "print" if ftrace => Print,
            "funcgraph_entry" if ftrace => FuncgraphEntry,
            "funcgraph_exit" if ftrace => FuncgraphExit,
            _ => return None,
        })
    }

    /// The names of the kind's slots (each slot: the names it goes by).
    pub fn slots(self) -> Names {
        use Known::*;
        match self {
            SchedSwitch => SWITCH,
            SchedWakeup | SchedWakeupNew | SchedWaking => WAKE,
            SchedProcessFork => FORK,
            SchedProcessExit => EXIT,
            SchedProcessFree => FREE,
            SchedProcessExec => EXEC,
            TaskNewtask => NEWTASK,
            TaskRename => RENAME,
            SchedMigrateTask => MIGRATE,
            CpuFrequency | CpuIdle => CPU_STATE,
            IrqHandlerEntry => IRQ_ENTRY,
            IrqHandlerExit => IRQ_EXIT,
            SoftirqEntry | SoftirqExit => SOFTIRQ,
            SysEnter => SYS_ENTER,
            SysExit => SYS_EXIT,
            WorkqueueExecuteStart | WorkqueueExecuteEnd => WORK,
            Print => PRINT,
            FuncgraphEntry => FG_ENTRY,
            FuncgraphExit => FG_EXIT,
        }
    }

    /// The (name, task) slot pairs by which an event of this kind names
    /// tasks, from the event on: `sched_switch` both tasks, the wakeups
    /// and `task_newtask` the task, `task_rename` its new name,
    /// `sched_process_fork` the child.
    pub fn naming(self) -> Naming {
        use Known::*;
        match self {
            SchedSwitch => &[(0, 1), (4, 5)],
            SchedWakeup | SchedWakeupNew | SchedWaking => &[(0, 1)],
            TaskNewtask => &[(1, 0)],
            TaskRename => &[(2, 0)],
            SchedProcessFork => &[(2, 3)],
            _ => &[],
        }
    }
}

/// A class of a well-known kind, resolved: the field of each slot.
#[derive(Debug, Clone, Copy)]
pub struct KnownClass {
    pub kind: Known,
    /// The field of each slot in the class's layout ([`FieldId::UNKNOWN`]
    /// where it has none).
    pub fields: [FieldId; SLOTS],
    /// For a class of fixed layout, the index of each slot's field in
    /// [`EventClass::fields`] (`u16::MAX` where it has none): its values
    /// are read straight from the record.
    defs: Option<[u16; SLOTS]>,
}

const NO_DEF: u16 = u16::MAX;

/// Whether events of `c` lie at fixed offsets (read from their record).
fn fixed(c: &EventClass) -> bool {
    c.schema.is_none() && c.fields.len() < NO_DEF as usize
}

impl KnownClass {
    /// `c` resolved, when it is of a well-known kind.
    pub fn of(c: &EventClass) -> Option<KnownClass> {
        let kind = Known::of(c)?;
        let layout = c.layout();
        let mut fields = [FieldId::UNKNOWN; SLOTS];
        let mut defs = [NO_DEF; SLOTS];
        for (slot, names) in kind.slots().iter().enumerate() {
            fields[slot] = names
                .iter()
                .find_map(|n| layout.find(Scope::Payload, n))
                .unwrap_or(FieldId::UNKNOWN);
            if let Some(i) = names
                .iter()
                .find_map(|n| c.fields.iter().position(|f| f.name == *n))
            {
                defs[slot] = i as u16;
            }
        }
        Some(KnownClass {
            kind,
            fields,
            defs: fixed(c).then_some(defs),
        })
    }

    /// The slots' values of `ev` (an event of this class). `scratch`
    /// records the values of classes whose own decoder visits them.
    pub fn pick<'s, 'e: 's>(
        &self,
        ev: &Event<'e>,
        ctx: &PrintCtx<'_>,
        scratch: &'s mut FieldTape,
    ) -> Picked<'s> {
        let mut p = Picked::default();
        let Some(c) = ev.class else { return p };
        if let (Some(defs), None) = (self.defs, ev.tape) {
            for (slot, &d) in defs.iter().enumerate() {
                if let Some(f) = c.fields.get(d as usize) {
                    p.values[slot] = Some(record_value(f, ev));
                }
            }
            return p;
        }
        let tape: &'s FieldTape = match ev.tape {
            Some(t) => t,
            None => {
                scratch.clear();
                visit_fields(ev, ctx, scratch);
                scratch
            }
        };
        p.fill(tape, c.layout(), &self.fields);
        p
    }
}

/// A field of a fixed-layout record as visits give it (a field past the
/// end of a damaged record is empty bytes).
fn record_value<'t>(f: &FieldDef, ev: &Event<'t>) -> Value<'t> {
    f.value(ev.data, ev.endian).unwrap_or(Value::Bytes(&[]))
}

/// The values of a [`KnownClass`]'s slots for one event.
#[derive(Debug, Default, Clone, Copy)]
pub struct Picked<'a> {
    pub values: [Option<Value<'a>>; SLOTS],
}

impl<'a> Picked<'a> {
    /// The payload's fields among `fields` (top-level ones) recorded on `t`.
    fn fill(&mut self, t: &'a FieldTape, layout: &'a ClassLayout, fields: &[FieldId; SLOTS]) {
        let mut depth = 0u32;
        for s in t.scope_steps(layout, Scope::Payload) {
            match s {
                TapeStep::Field(f, _, v) | TapeStep::Enum(f, v, _) if depth == 0 => {
                    if let Some(k) = fields.iter().position(|&x| x == f.id) {
                        self.values[k] = Some(v);
                    }
                }
                TapeStep::StructBegin(_)
                | TapeStep::ArrayBegin(..)
                | TapeStep::VariantBegin(..)
                | TapeStep::OptionalBegin(..) => depth += 1,
                s if s.is_end() => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
    }

    /// Slot `k` as an integer (as the value tree reads one: booleans too).
    pub fn int(&self, k: usize) -> Option<i128> {
        match self.values.get(k).copied().flatten()? {
            Value::Unsigned(x) => Some(x as i128),
            Value::Signed(x) => Some(x as i128),
            Value::Bool(x) => Some(x as i128),
            _ => None,
        }
    }

    /// Slot `k` as text (character data up to its first NUL).
    pub fn text(&self, k: usize) -> Option<&'a [u8]> {
        match self.values.get(k).copied().flatten()? {
            Value::Str(b) => Some(&b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]),
            _ => None,
        }
    }

    /// Slot `k` as character data of any kind (text or bytes, up to the
    /// first NUL): what names tasks.
    pub fn name_bytes(&self, k: usize) -> Option<&'a [u8]> {
        match self.values.get(k).copied().flatten()? {
            Value::Str(b) | Value::Bytes(b) => {
                Some(&b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())])
            }
            _ => None,
        }
    }
}
