//! Tables derived from the scheduler's events, after Perfetto's trace
//! processor: `thread`, `process`, `sched_slice` and `thread_state`.
//!
//! One pass over the trace reads the events of these classes (any system;
//! only the fields below are decoded): `sched_switch`, `sched_wakeup`,
//! `sched_wakeup_new`, `sched_waking`, `sched_process_fork`,
//! `task_newtask`, `task_rename`, `sched_process_exec`,
//! `sched_process_exit`, `sched_process_free`.
//!
//! - `sched_slice` (`ts`, `dur`, `cpu`, `utid`, `tid`, `end_state`,
//!   `priority`): a task on a CPU from the `sched_switch` that put it there
//!   (`priority` is that event's `next_prio`) to the next `sched_switch` on
//!   that CPU, whose `prev_state` is the `end_state`: `R` (preempted,
//!   runnable), `R+` (preempted with the kernel's `TASK_REPORT_MAX` bit,
//!   0x100), else the letters of the kernel's state bits (0x01 `S`, 0x02
//!   `D`, 0x04 `T`, 0x08 `t`, 0x10 `X`, 0x20 `Z`, 0x40 `P`, 0x80 `I`) joined
//!   by `|`, as the kernel's `print fmt` of `sched_switch` shows them. The
//!   idle task (tid 0) has slices too. A slice still running at the end of
//!   the trace has `dur` -1 and no `end_state`.
//! - `thread_state` (`ts`, `dur`, `cpu`, `utid`, `tid`, `state`): each
//!   task's states over time, from the events: `Running` (with its `cpu`)
//!   from a switch in to the switch out; then the switch's `end_state`
//!   until the task is woken (`R`, by `sched_wakeup*`/`sched_waking`) or
//!   switched in again. The idle task has no states; a dead task (`X`,
//!   `Z`) no state after its last switch. States open at the end of the
//!   trace have `dur` -1.
//! - `thread` (`utid`, `tid`, `name`, `start_ts`, `end_ts`, `upid`): one
//!   row per task lifetime. A tid gets a new `utid` when it is created
//!   again (`task_newtask`/`sched_process_fork` naming it as the child)
//!   or seen after `sched_process_free`: pid reuse makes two rows.
//!   `start_ts` is its creation if the trace has it, `end_ts` its
//!   `sched_process_exit` (else `sched_process_free`); `name` the last
//!   name events gave it. `utid` 0 is the idle task.
//! - `process` (`upid`, `pid`, `name`, `start_ts`, `end_ts`,
//!   `parent_upid`): processes known from `task_newtask` without
//!   `CLONE_THREAD` (its threads are the tasks created with
//!   `CLONE_THREAD` by a task of it) and from `sched_process_exec`. A
//!   thread of unknown process has no `upid`: scheduler events alone do
//!   not say which process a task belongs to.

use std::collections::HashMap;
use std::sync::Arc;

use crate::Result;
use async_trait::async_trait;
use datafusion::arrow::array::{
    ArrayRef, Int32Builder, Int64Builder, StringBuilder, UInt32Builder,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{Session, TableProvider};
use datafusion::error::Result as DfResult;
use datafusion::execution::context::SessionContext;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Expr, TableType};
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::{ExecutionPlan, SendableRecordBatchStream};
use tracemux_core::layout::FieldRef;
use tracemux_core::model::{visit_fields, Base, Event, PrintCtx, Record, TraceMeta, Value};
use tracemux_core::typed::{FieldVisitor, Scope};

use crate::opener::Opener;
use crate::provider::spawn_stream;

/// The derived tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Derived {
    Thread,
    Process,
    SchedSlice,
    ThreadState,
}

impl Derived {
    pub const ALL: [Derived; 4] = [
        Derived::Thread,
        Derived::Process,
        Derived::SchedSlice,
        Derived::ThreadState,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Derived::Thread => "thread",
            Derived::Process => "process",
            Derived::SchedSlice => "sched_slice",
            Derived::ThreadState => "thread_state",
        }
    }

    pub fn schema(self) -> SchemaRef {
        let f = |n: &str, t: DataType, null: bool| Field::new(n, t, null);
        use DataType::*;
        Arc::new(Schema::new(match self {
            Derived::Thread => vec![
                f("utid", UInt32, false),
                f("tid", Int32, false),
                f("name", Utf8, true),
                f("start_ts", Int64, true),
                f("end_ts", Int64, true),
                f("upid", UInt32, true),
            ],
            Derived::Process => vec![
                f("upid", UInt32, false),
                f("pid", Int32, false),
                f("name", Utf8, true),
                f("start_ts", Int64, true),
                f("end_ts", Int64, true),
                f("parent_upid", UInt32, true),
            ],
            Derived::SchedSlice => vec![
                f("ts", Int64, false),
                f("dur", Int64, false),
                f("cpu", UInt32, false),
                f("utid", UInt32, false),
                f("tid", Int32, false),
                f("end_state", Utf8, true),
                f("priority", Int32, true),
            ],
            Derived::ThreadState => vec![
                f("ts", Int64, false),
                f("dur", Int64, false),
                f("cpu", UInt32, true),
                f("utid", UInt32, false),
                f("tid", Int32, false),
                f("state", Utf8, false),
            ],
        }))
    }
}

/// Register the derived tables of a trace whose metadata is `meta` (all
/// of them, empty when the trace has no scheduler events).
pub fn register(ctx: &SessionContext, opener: Arc<dyn Opener>, _meta: &TraceMeta) -> Result<()> {
    for d in Derived::ALL {
        // a class table of the same name wins
        if ctx.table_exist(d.name())? {
            continue;
        }
        ctx.register_table(
            d.name(),
            Arc::new(DerivedTable {
                opener: opener.clone(),
                which: d,
            }),
        )?;
    }
    Ok(())
}

struct DerivedTable {
    opener: Arc<dyn Opener>,
    which: Derived,
}

impl std::fmt::Debug for DerivedTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DerivedTable({})", self.which.name())
    }
}

#[async_trait]
impl TableProvider for DerivedTable {
    fn schema(&self) -> SchemaRef {
        self.which.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let part = Arc::new(DerivedPartition {
            opener: self.opener.clone(),
            which: self.which,
            schema: self.which.schema(),
        });
        let exec = StreamingTableExec::try_new(
            self.which.schema(),
            vec![part],
            projection,
            [],
            false,
            limit,
        )?;
        Ok(Arc::new(exec))
    }
}

struct DerivedPartition {
    opener: Arc<dyn Opener>,
    which: Derived,
    schema: SchemaRef,
}

impl std::fmt::Debug for DerivedPartition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DerivedPartition({})", self.which.name())
    }
}

impl PartitionStream for DerivedPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let which = self.which;
        spawn_stream(
            self.opener.clone(),
            self.schema.clone(),
            move |src, send| {
                let meta = src.meta().clone();
                let mut m = Model::new(which);
                while let Some(rec) = src.next_record()? {
                    if let Record::Event(ev) = rec {
                        m.event(&meta, &ev);
                    }
                    if m.out.rows >= BATCH && !send(m.out.batch(which)?) {
                        return Ok(());
                    }
                }
                m.finish();
                if m.out.rows > 0 {
                    send(m.out.batch(which)?);
                }
                Ok(())
            },
        )
    }
}

const BATCH: usize = 8192;

/// The fields the model reads, by name.
const NAMES: [&str; 19] = [
    "prev_comm",
    "prev_pid",
    "prev_tid",
    "prev_prio",
    "prev_state",
    "next_comm",
    "next_pid",
    "next_tid",
    "next_prio",
    "pid",
    "tid",
    "comm",
    "parent_pid",
    "child_pid",
    "child_tid",
    "child_comm",
    "newcomm",
    "clone_flags",
    "filename",
];

/// The payload fields of [`NAMES`] of one event.
#[derive(Default)]
struct Fields {
    ints: [Option<i64>; NAMES.len()],
    strs: [Option<String>; NAMES.len()],
    payload: bool,
    depth: u32,
}

impl Fields {
    fn clear(&mut self) {
        self.ints = [None; NAMES.len()];
        for s in self.strs.iter_mut().flatten() {
            s.clear();
        }
        self.payload = false;
        self.depth = 0;
    }
    fn int(&self, names: &[&str]) -> Option<i64> {
        names
            .iter()
            .find_map(|n| NAMES.iter().position(|x| x == n).and_then(|i| self.ints[i]))
    }
    fn pid(&self, names: &[&str]) -> Option<i32> {
        self.int(names).and_then(|v| i32::try_from(v).ok())
    }
    fn str(&self, name: &str) -> Option<&str> {
        let i = NAMES.iter().position(|x| *x == name)?;
        self.strs[i].as_deref().filter(|s| !s.is_empty())
    }
}

impl FieldVisitor for Fields {
    fn wants(&self, f_: FieldRef<'_>) -> bool {
        let scope = f_.scope();
        let name = f_.name();
        scope == Scope::Payload && NAMES.contains(&name)
    }
    fn scope_begin(&mut self, scope: Scope) {
        self.payload = scope == Scope::Payload;
    }
    fn field(&mut self, f_: FieldRef<'_>, _base: Base, value: Value<'_>) {
        let name = f_.name();
        if !self.payload || self.depth > 0 {
            return;
        }
        let Some(i) = NAMES.iter().position(|n| *n == name) else {
            return;
        };
        match value {
            Value::Signed(v) => self.ints[i] = Some(v),
            Value::Unsigned(v) => self.ints[i] = Some(v as i64),
            Value::Str(b) | Value::Bytes(b) => {
                let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                let s = self.strs[i].get_or_insert_with(String::new);
                s.clear();
                s.push_str(&String::from_utf8_lossy(&b[..end]));
            }
            _ => {}
        }
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

/// `prev_state` as the kernel prints it.
pub fn end_state(v: i64) -> String {
    const LETTERS: [&str; 8] = ["S", "D", "T", "t", "X", "Z", "P", "I"];
    let bits = v & 0xff;
    if bits == 0 {
        return if v & 0x100 != 0 { "R+" } else { "R" }.into();
    }
    let mut s = String::new();
    for (i, l) in LETTERS.iter().enumerate() {
        if bits & (1 << i) != 0 {
            if !s.is_empty() {
                s.push('|');
            }
            s.push_str(l);
        }
    }
    s
}

struct Thread {
    tid: i32,
    name: Option<String>,
    start_ts: Option<i64>,
    end_ts: Option<i64>,
    upid: Option<u32>,
    /// Created by `task_newtask`, its `sched_process_fork` not seen yet.
    fork_pending: bool,
    /// The state row open for it: (since, cpu, state).
    state: Option<(i64, Option<u32>, String)>,
}

struct Process {
    pid: i32,
    name: Option<String>,
    start_ts: Option<i64>,
    end_ts: Option<i64>,
    parent: Option<u32>,
}

/// Rows of the table being made.
#[derive(Default)]
struct Out {
    rows: usize,
    ts: Int64Builder,
    dur: Int64Builder,
    cpu: UInt32Builder,
    utid: UInt32Builder,
    tid: Int32Builder,
    text: StringBuilder,
    prio: Int32Builder,
    /// The `thread` or `process` table, made at the end.
    table: Option<RecordBatch>,
}

impl Out {
    fn batch(&mut self, which: Derived) -> Result<RecordBatch> {
        self.rows = 0;
        let cols: Vec<ArrayRef> = match which {
            Derived::SchedSlice => vec![
                Arc::new(self.ts.finish()),
                Arc::new(self.dur.finish()),
                Arc::new(self.cpu.finish()),
                Arc::new(self.utid.finish()),
                Arc::new(self.tid.finish()),
                Arc::new(self.text.finish()),
                Arc::new(self.prio.finish()),
            ],
            Derived::ThreadState => vec![
                Arc::new(self.ts.finish()),
                Arc::new(self.dur.finish()),
                Arc::new(self.cpu.finish()),
                Arc::new(self.utid.finish()),
                Arc::new(self.tid.finish()),
                Arc::new(self.text.finish()),
            ],
            // thread and process are made at the end (`Model::finish`)
            Derived::Thread | Derived::Process => {
                return Ok(self
                    .table
                    .take()
                    .unwrap_or_else(|| RecordBatch::new_empty(which.schema())))
            }
        };
        Ok(RecordBatch::try_new(which.schema(), cols)?)
    }
}

/// The scheduler's view of the trace, built event by event.
struct Model {
    which: Derived,
    f: Fields,
    threads: Vec<Thread>,
    /// tid to its current thread (utid).
    live: HashMap<i32, u32>,
    processes: Vec<Process>,
    /// Per CPU: the slice running (since, utid, priority).
    running: tracemux_core::idmap::IdMap<Option<(i64, u32, Option<i32>)>>,
    last_ts: i64,
    out: Out,
}

impl Model {
    fn new(which: Derived) -> Model {
        let mut m = Model {
            which,
            f: Fields::default(),
            threads: Vec::new(),
            live: HashMap::new(),
            processes: Vec::new(),
            running: Default::default(),
            last_ts: 0,
            out: Out::default(),
        };
        m.new_thread(0, None);
        m.threads[0].name = Some("swapper".into());
        m
    }

    fn new_thread(&mut self, tid: i32, start: Option<i64>) -> u32 {
        let utid = self.threads.len() as u32;
        self.threads.push(Thread {
            tid,
            name: None,
            start_ts: start,
            end_ts: None,
            upid: None,
            fork_pending: false,
            state: None,
        });
        self.live.insert(tid, utid);
        utid
    }

    /// The current thread of `tid` (a new one if none is live).
    fn utid(&mut self, tid: i32) -> u32 {
        match self.live.get(&tid) {
            Some(&u) => u,
            None => self.new_thread(tid, None),
        }
    }

    fn name(&mut self, tid: Option<i32>, name: Option<&str>) {
        if let (Some(tid), Some(name)) = (tid, name) {
            if tid != 0 {
                let u = self.utid(tid) as usize;
                self.threads[u].name = Some(name.to_string());
            }
        }
    }

    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) {
        let Some(class) = ev.class else { return };
        let kind = class.name.as_str();
        if !matches!(
            kind,
            "sched_switch"
                | "sched_wakeup"
                | "sched_wakeup_new"
                | "sched_waking"
                | "sched_process_fork"
                | "task_newtask"
                | "task_rename"
                | "sched_process_exec"
                | "sched_process_exit"
                | "sched_process_free"
        ) {
            return;
        }
        self.f.clear();
        let ctx = PrintCtx::of(meta, ev);
        visit_fields(ev, &ctx, &mut self.f);
        let ts = ev.ts as i64;
        self.last_ts = ts;
        match kind {
            "sched_switch" => self.switch(ts, ev.cpu),
            "sched_wakeup" | "sched_wakeup_new" | "sched_waking" => {
                let tid = self.f.pid(&["pid", "tid"]);
                let comm = self.f.str("comm").map(str::to_string);
                self.name(tid, comm.as_deref());
                if let Some(tid) = tid.filter(|&t| t != 0) {
                    let u = self.utid(tid);
                    let sleeping = match &self.threads[u as usize].state {
                        Some((_, _, s)) => s != "Running" && !s.starts_with('R'),
                        None => true,
                    };
                    if sleeping {
                        self.set_state(u, ts, None, "R");
                    }
                }
            }
            "task_newtask" => {
                let Some(child) = self.f.pid(&["pid", "tid"]) else {
                    return;
                };
                let flags = self.f.int(&["clone_flags"]).unwrap_or(0);
                let creator = self.utid(ev.pid);
                self.end_thread(child, ts, false);
                let u = self.new_thread(child, Some(ts));
                self.threads[u as usize].fork_pending = true;
                self.threads[u as usize].name = self.f.str("comm").map(str::to_string);
                const CLONE_THREAD: i64 = 0x10000;
                let parent_upid = self.threads[creator as usize].upid;
                self.threads[u as usize].upid = if flags & CLONE_THREAD != 0 {
                    parent_upid
                } else {
                    Some(self.new_process(child, Some(ts), parent_upid))
                };
                if flags & CLONE_THREAD == 0 {
                    let p = self.threads[u as usize].upid.unwrap_or(0) as usize;
                    self.processes[p].name = self.threads[u as usize].name.clone();
                }
            }
            "sched_process_fork" => {
                let Some(child) = self.f.pid(&["child_pid", "child_tid"]) else {
                    return;
                };
                let pending = self
                    .live
                    .get(&child)
                    .is_some_and(|&u| self.threads[u as usize].fork_pending);
                let u = if pending {
                    self.live[&child]
                } else {
                    self.end_thread(child, ts, false);
                    self.new_thread(child, Some(ts))
                };
                self.threads[u as usize].fork_pending = false;
                if let Some(c) = self.f.str("child_comm") {
                    self.threads[u as usize].name = Some(c.to_string());
                }
            }
            "task_rename" => {
                let tid = self.f.pid(&["pid", "tid"]).or(Some(ev.pid));
                let comm = self.f.str("newcomm").map(str::to_string);
                self.name(tid, comm.as_deref());
            }
            "sched_process_exec" => {
                let tid = self.f.pid(&["pid", "tid"]).unwrap_or(ev.pid);
                let u = self.utid(tid) as usize;
                let name = self
                    .f
                    .str("filename")
                    .map(|f| f.rsplit('/').next().unwrap_or(f).to_string());
                let upid = match self.threads[u].upid {
                    Some(p) if self.processes[p as usize].pid == tid => p,
                    _ => self.new_process(tid, None, None),
                };
                self.threads[u].upid = Some(upid);
                if name.is_some() {
                    self.processes[upid as usize].name = name;
                }
            }
            "sched_process_exit" => {
                let tid = self.f.pid(&["pid", "tid"]).unwrap_or(ev.pid);
                if let Some(&u) = self.live.get(&tid) {
                    let t = &mut self.threads[u as usize];
                    t.end_ts.get_or_insert(ts);
                    if let Some(p) = t.upid {
                        if self.processes[p as usize].pid == tid {
                            self.processes[p as usize].end_ts.get_or_insert(ts);
                        }
                    }
                }
            }
            "sched_process_free" => {
                if let Some(tid) = self.f.pid(&["pid", "tid"]) {
                    self.end_thread(tid, ts, true);
                }
            }
            _ => {}
        }
    }

    fn new_process(&mut self, pid: i32, start: Option<i64>, parent: Option<u32>) -> u32 {
        self.processes.push(Process {
            pid,
            name: None,
            start_ts: start,
            end_ts: None,
            parent,
        });
        (self.processes.len() - 1) as u32
    }

    /// The live thread of `tid` is over (freed, or its tid taken by a new
    /// task).
    fn end_thread(&mut self, tid: i32, ts: i64, freed: bool) {
        if tid == 0 {
            return;
        }
        if let Some(u) = self.live.remove(&tid) {
            let t = &mut self.threads[u as usize];
            if freed {
                t.end_ts.get_or_insert(ts);
            }
            self.close_state(u, ts);
        }
    }

    fn switch(&mut self, ts: i64, cpu: u32) {
        let prev = self.f.pid(&["prev_pid", "prev_tid"]);
        let next = self.f.pid(&["next_pid", "next_tid"]);
        let pc = self.f.str("prev_comm").map(str::to_string);
        let nc = self.f.str("next_comm").map(str::to_string);
        self.name(prev, pc.as_deref());
        self.name(next, nc.as_deref());
        let state = self.f.int(&["prev_state"]).map(end_state);
        let prev_u = prev.map(|p| self.utid(p));
        if let Some((since, u, prio)) = self.running.slot(cpu).take() {
            if self.which == Derived::SchedSlice {
                let st = if Some(u) == prev_u {
                    state.as_deref()
                } else {
                    None
                };
                self.slice(since, ts - since, cpu, u, st, prio);
            }
        }
        if let (Some(u), Some(tid)) = (prev_u, prev) {
            if tid != 0 {
                match state.as_deref() {
                    Some(s) if s.contains('X') || s.contains('Z') => self.close_state(u, ts),
                    Some(s) => self.set_state(u, ts, None, s),
                    None => self.close_state(u, ts),
                }
            }
        }
        if let Some(tid) = next {
            let u = self.utid(tid);
            let prio = self
                .f
                .int(&["next_prio"])
                .and_then(|p| i32::try_from(p).ok());
            *self.running.slot(cpu) = Some((ts, u, prio));
            if tid != 0 {
                self.set_state(u, ts, Some(cpu), "Running");
            }
        }
    }

    fn slice(&mut self, ts: i64, dur: i64, cpu: u32, u: u32, st: Option<&str>, prio: Option<i32>) {
        let o = &mut self.out;
        o.ts.append_value(ts);
        o.dur.append_value(dur);
        o.cpu.append_value(cpu);
        o.utid.append_value(u);
        o.tid.append_value(self.threads[u as usize].tid);
        o.text.append_option(st);
        o.prio.append_option(prio);
        o.rows += 1;
    }

    /// Close the state row open for thread `u` at `ts`.
    fn close_state(&mut self, u: u32, ts: i64) {
        if let Some((since, cpu, s)) = self.threads[u as usize].state.take() {
            self.state_row(u, since, ts - since, cpu, &s);
        }
    }

    fn set_state(&mut self, u: u32, ts: i64, cpu: Option<u32>, s: &str) {
        self.close_state(u, ts);
        self.threads[u as usize].state = Some((ts, cpu, s.to_string()));
    }

    fn state_row(&mut self, u: u32, ts: i64, dur: i64, cpu: Option<u32>, s: &str) {
        if self.which != Derived::ThreadState {
            return;
        }
        let o = &mut self.out;
        o.ts.append_value(ts);
        o.dur.append_value(dur);
        o.cpu.append_option(cpu);
        o.utid.append_value(u);
        o.tid.append_value(self.threads[u as usize].tid);
        o.text.append_value(s);
        o.rows += 1;
    }

    /// The rows still open, and the thread or process table.
    fn finish(&mut self) {
        match self.which {
            Derived::SchedSlice => {
                for cpu in self.running.ids() {
                    if let Some((since, u, prio)) = self.running.slot(cpu).take() {
                        self.slice(since, -1, cpu, u, None, prio);
                    }
                }
            }
            Derived::ThreadState => {
                for u in 0..self.threads.len() {
                    if let Some((since, cpu, s)) = self.threads[u].state.take() {
                        self.state_row(u as u32, since, -1, cpu, &s);
                    }
                }
            }
            Derived::Thread => {
                let rows = self.threads.iter().map(|t| Who {
                    id: t.tid,
                    name: t.name.as_deref(),
                    start_ts: t.start_ts,
                    end_ts: t.end_ts,
                    up: t.upid,
                });
                self.out.table = who_batch(Derived::Thread.schema(), rows);
                self.out.rows = self.threads.len();
            }
            Derived::Process => {
                let rows = self.processes.iter().map(|p| Who {
                    id: p.pid,
                    name: p.name.as_deref(),
                    start_ts: p.start_ts,
                    end_ts: p.end_ts,
                    up: p.parent,
                });
                self.out.table = who_batch(Derived::Process.schema(), rows);
                self.out.rows = self.processes.len();
            }
        }
    }
}

/// A row of `thread` or `process`, which have the same shape: (utid |
/// upid: the row's index, tid | pid, name, start_ts, end_ts, upid |
/// parent_upid).
struct Who<'a> {
    id: i32,
    name: Option<&'a str>,
    start_ts: Option<i64>,
    end_ts: Option<i64>,
    up: Option<u32>,
}

fn who_batch<'a>(schema: SchemaRef, rows: impl Iterator<Item = Who<'a>>) -> Option<RecordBatch> {
    let mut index = UInt32Builder::new();
    let mut id = Int32Builder::new();
    let mut name = StringBuilder::new();
    let mut start = Int64Builder::new();
    let mut end = Int64Builder::new();
    let mut up = UInt32Builder::new();
    for (i, r) in rows.enumerate() {
        index.append_value(i as u32);
        id.append_value(r.id);
        name.append_option(r.name);
        start.append_option(r.start_ts);
        end.append_option(r.end_ts);
        up.append_option(r.up);
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(index.finish()),
        Arc::new(id.finish()),
        Arc::new(name.finish()),
        Arc::new(start.finish()),
        Arc::new(end.finish()),
        Arc::new(up.finish()),
    ];
    RecordBatch::try_new(schema, cols).ok()
}
