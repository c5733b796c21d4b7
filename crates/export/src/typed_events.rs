//! The events Perfetto has a message for, and where their fields are.
//!
//! Each message reads its fields by slot: slot `k` is the `k`th entry of
//! the message's name list (the first of its names the event has: LTTng
//! names threads `tid` where ftrace says `pid`). The fields are found in the
//! tree of the event's values ([`Fields::Tree`]), or, for classes of a fixed
//! layout (trace.dat), straight in the record ([`Fields::Record`]), through
//! the field definitions a [`Layout`] found once per class.

use tracemux_core::model::{EventClass, FieldDef, Value};
use tracemux_core::typed::Scope;
use tracemux_core::Endian;

use crate::proto::*;
use crate::tree::{resolve, Kind, Tree};
use tracemux_core::layout::FieldId;

/// The events Perfetto has a message for: the well-known events of the
/// model's one catalogue, each message's slots as the catalogue names them
/// ([`Typed::slots`]).
pub(crate) use tracemux_core::known::Known as Typed;
use tracemux_core::known::SLOTS;

/// Perfetto's message for an event of a well-known kind.
pub(crate) trait ToMessage {
    /// The message of one event, its fields read by slot.
    fn message(self, f: &Fields<'_>) -> FtraceKind;
}

impl ToMessage for Typed {
    fn message(self, f: &Fields<'_>) -> FtraceKind {
        use Typed::*;
        let wake = || SchedWakeupFtraceEvent {
            comm: f.str(0),
            pid: f.i32(1),
            prio: f.i32(2),
            success: f.i32(3),
            target_cpu: f.i32(4),
        };
        let cpu = || CpuFtraceEvent {
            state: f.u32(0),
            cpu_id: f.u32(1),
        };
        let wq = || WorkqueueFtraceEvent {
            work: f.u64(0),
            function: f.u64(1),
        };
        match self {
            SchedSwitch => FtraceKind::SchedSwitch(SchedSwitchFtraceEvent {
                prev_comm: f.str(0),
                prev_pid: f.i32(1),
                prev_prio: f.i32(2),
                prev_state: f.i64(3),
                next_comm: f.str(4),
                next_pid: f.i32(5),
                next_prio: f.i32(6),
            }),
            SchedWakeup => FtraceKind::SchedWakeup(wake()),
            SchedWakeupNew => FtraceKind::SchedWakeupNew(wake()),
            SchedWaking => FtraceKind::SchedWaking(wake()),
            SchedProcessFork => FtraceKind::SchedProcessFork(SchedProcessForkFtraceEvent {
                parent_comm: f.str(0),
                parent_pid: f.i32(1),
                child_comm: f.str(2),
                child_pid: f.i32(3),
            }),
            SchedProcessExit => FtraceKind::SchedProcessExit(SchedProcessExitFtraceEvent {
                comm: f.str(0),
                pid: f.i32(1),
                tgid: f.i32(2),
                prio: f.i32(3),
            }),
            SchedProcessFree => FtraceKind::SchedProcessFree(SchedProcessFreeFtraceEvent {
                comm: f.str(0),
                pid: f.i32(1),
                prio: f.i32(2),
            }),
            SchedProcessExec => FtraceKind::SchedProcessExec(SchedProcessExecFtraceEvent {
                filename: f.str(0),
                pid: f.i32(1),
                old_pid: f.i32(2),
            }),
            TaskNewtask => FtraceKind::TaskNewtask(TaskNewtaskFtraceEvent {
                pid: f.i32(0),
                comm: f.str(1),
                clone_flags: f.u64(2),
                oom_score_adj: f.i32(3),
            }),
            TaskRename => FtraceKind::TaskRename(TaskRenameFtraceEvent {
                pid: f.i32(0),
                oldcomm: f.str(1),
                newcomm: f.str(2),
                oom_score_adj: f.i32(3),
            }),
            SchedMigrateTask => FtraceKind::SchedMigrateTask(SchedMigrateTaskFtraceEvent {
                comm: f.str(0),
                pid: f.i32(1),
                prio: f.i32(2),
                orig_cpu: f.i32(3),
                dest_cpu: f.i32(4),
                running: f.i32(5),
                load: f.u32(6),
            }),
            CpuFrequency => FtraceKind::CpuFrequency(cpu()),
            CpuIdle => FtraceKind::CpuIdle(cpu()),
            IrqHandlerEntry => FtraceKind::IrqHandlerEntry(IrqHandlerEntryFtraceEvent {
                irq: f.i32(0),
                name: f.str(1),
                handler: f.u32(2),
            }),
            IrqHandlerExit => FtraceKind::IrqHandlerExit(IrqHandlerExitFtraceEvent {
                irq: f.i32(0),
                ret: f.i32(1),
            }),
            SoftirqEntry => FtraceKind::SoftirqEntry(SoftirqFtraceEvent { vec: f.u32(0) }),
            SoftirqExit => FtraceKind::SoftirqExit(SoftirqFtraceEvent { vec: f.u32(0) }),
            SysEnter => FtraceKind::SysEnter(SysEnterFtraceEvent {
                id: f.i64(0),
                args: f.ints(1),
            }),
            SysExit => FtraceKind::SysExit(SysExitFtraceEvent {
                id: f.i64(0),
                ret: f.i64(1),
            }),
            WorkqueueExecuteStart => FtraceKind::WorkqueueExecuteStart(wq()),
            WorkqueueExecuteEnd => FtraceKind::WorkqueueExecuteEnd(wq()),
            Print => FtraceKind::Print(PrintFtraceEvent {
                ip: f.u64(0),
                buf: f.str(1),
            }),
            FuncgraphEntry => FtraceKind::FuncgraphEntry(FuncgraphEntryFtraceEvent {
                depth: f.i32(0),
                func: f.u64(1),
            }),
            FuncgraphExit => FtraceKind::FuncgraphExit(FuncgraphExitFtraceEvent {
                calltime: f.u64(0),
                depth: f.i32(1),
                func: f.u64(2),
                overrun: f.u64(3),
                rettime: f.u64(4),
            }),
        }
    }
}

/// Where the fields of a fixed-layout class are (indices into its
/// `fields` or `common_fields`), found by name at its first event.
/// (`NONE` for a field the class does not have).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    /// The typed message's slots.
    slots: [u16; SLOTS],
    /// `common_flags` among the common fields.
    flags: u16,
    /// The payload's `common_pid` or `perf_tid` (for events without a
    /// task).
    pid: u16,
}

const NONE: u16 = u16::MAX;

fn some(i: u16) -> Option<u16> {
    (i != NONE).then_some(i)
}

impl Layout {
    /// The layout of class `c` for its message `typed`; `None` when its
    /// events do not lie at fixed offsets (CTF, uftrace, LTT: read
    /// through the tree).
    pub(crate) fn of(c: &EventClass, typed: Option<Typed>) -> Option<Layout> {
        if c.schema.is_some() || c.common_fields.is_empty() {
            return None;
        }
        if c.fields.len() >= NONE as usize || c.common_fields.len() >= NONE as usize {
            return None;
        }
        let find = |defs: &[FieldDef], names: &[&str]| {
            names
                .iter()
                .find_map(|n| defs.iter().position(|f| f.name == *n))
                .map_or(NONE, |i| i as u16)
        };
        let mut slots = [NONE; SLOTS];
        if let Some(t) = typed {
            for (slot, names) in slots.iter_mut().zip(t.slots()) {
                *slot = find(&c.fields, names);
            }
        }
        Some(Layout {
            slots,
            flags: find(&c.common_fields, &["common_flags"]),
            pid: find(&c.fields, &["common_pid", "perf_tid"]),
        })
    }

    pub(crate) fn flags(&self) -> Option<u16> {
        some(self.flags)
    }

    pub(crate) fn pid(&self) -> Option<u16> {
        some(self.pid)
    }
}

/// Where a class's fields are in the trees of its events: each slot of
/// its typed message, resolved by name once per class.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TreeSlots {
    slots: [FieldId; SLOTS],
}

impl TreeSlots {
    pub(crate) fn of(c: &EventClass, typed: Typed) -> TreeSlots {
        let mut slots = [FieldId::UNKNOWN; SLOTS];
        for (slot, names) in slots.iter_mut().zip(typed.slots()) {
            *slot = resolve(c, Scope::Payload, names);
        }
        TreeSlots { slots }
    }
}

/// The fields of one event, as the typed messages read them.
pub(crate) enum Fields<'a> {
    /// The tree of its values, and where the message's slots are in it.
    Tree(&'a Tree, &'a TreeSlots),
    /// Its record, read through its class's field definitions.
    Record {
        defs: &'a [FieldDef],
        slots: &'a [u16; SLOTS],
        data: &'a [u8],
        endian: Endian,
    },
}

/// A value of the record at field `i` of `defs` (as the tree holds it: a
/// field past the end of a damaged record is empty bytes).
pub(crate) fn record_value<'t>(
    defs: &[FieldDef],
    i: u16,
    data: &'t [u8],
    endian: Endian,
) -> Value<'t> {
    defs[i as usize]
        .value(data, endian)
        .unwrap_or(Value::Bytes(&[]))
}

/// An integer value as the tree's `int` reads it.
pub(crate) fn value_int(v: Value<'_>) -> Option<i128> {
    match v {
        Value::Unsigned(x) => Some(x as i128),
        Value::Signed(x) => Some(x as i128),
        Value::Bool(x) => Some(x as i128),
        _ => None,
    }
}

impl<'a> Fields<'a> {
    /// The fields of the tree `t` for `typed`'s message.
    pub(crate) fn tree(t: &'a Tree, slots: &'a TreeSlots) -> Self {
        Fields::Tree(t, slots)
    }

    /// The fields of record `data` of a fixed-layout class.
    pub(crate) fn record(
        c: &'a EventClass,
        layout: &'a Layout,
        data: &'a [u8],
        endian: Endian,
    ) -> Self {
        Fields::Record {
            defs: &c.fields,
            slots: &layout.slots,
            data,
            endian,
        }
    }

    fn node(t: &Tree, slots: &TreeSlots, slot: usize) -> Option<usize> {
        t.at(Scope::Payload, *slots.slots.get(slot)?)
    }

    fn value(&self, slot: usize) -> Option<Value<'a>> {
        match *self {
            Fields::Record {
                defs,
                slots,
                data,
                endian,
            } => Some(record_value(defs, some(slots[slot])?, data, endian)),
            Fields::Tree(..) => None,
        }
    }

    fn int(&self, slot: usize) -> Option<i128> {
        match self {
            Fields::Tree(t, slots) => Self::node(t, slots, slot).and_then(|i| t.int(i)),
            Fields::Record { .. } => value_int(self.value(slot)?),
        }
    }
    fn i32(&self, slot: usize) -> Option<i32> {
        self.int(slot).map(|v| v as i32)
    }
    fn u32(&self, slot: usize) -> Option<u32> {
        self.int(slot).map(|v| v as u32)
    }
    fn i64(&self, slot: usize) -> Option<i64> {
        self.int(slot).map(|v| v as i64)
    }
    fn u64(&self, slot: usize) -> Option<u64> {
        self.int(slot).map(|v| v as u64)
    }
    fn str(&self, slot: usize) -> Option<String> {
        match self {
            Fields::Tree(t, slots) => Self::node(t, slots, slot)
                .filter(|&i| matches!(t.nodes[i].kind, Kind::Str(..)))
                .map(|i| t.text(i)),
            Fields::Record { .. } => match self.value(slot)? {
                Value::Str(s) => Some(String::from_utf8_lossy(s).into_owned()),
                _ => None,
            },
        }
    }
    /// An array of integers (bytes: each byte); empty when absent.
    fn ints(&self, slot: usize) -> Args {
        match self {
            Fields::Tree(t, slots) => match Self::node(t, slots, slot) {
                Some(i) if t.nodes[i].kind == Kind::Arr => t
                    .children(i)
                    .filter_map(|c| t.int(c))
                    .map(|v| v as u64)
                    .collect(),
                _ => Args::default(),
            },
            Fields::Record { .. } => match self.value(slot) {
                Some(
                    v @ Value::IntArray {
                        data, elem_size, ..
                    },
                ) => (0..data.len() / elem_size.max(1) as usize)
                    .filter_map(|j| v.array_elem(j))
                    .map(|x| x as u64)
                    .collect(),
                Some(Value::Bytes(b)) => b.iter().map(|&x| u64::from(x)).collect(),
                _ => Args::default(),
            },
        }
    }
}
