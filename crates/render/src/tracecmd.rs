//! `trace-cmd report` style output (trace-cmd 3.1.6 with libtraceevent 1.7.1).
//!
//! One line per event: an instance prefix when the file has instances,
//! `%16s-%-5d [%03d]`, the timestamp, the event name padded to 20 columns,
//! then the fields. Lost events are shown as `CPU:N [M EVENTS DROPPED]`
//! before the first event after the loss.

use std::cell::RefCell;

use crate::fmt::{dec, dec_left, dec_pad, str_right};
use tracemux_core::layout::FieldRef;
pub use tracemux_core::model::TimeFormat;
use tracemux_core::model::{Effects, Event, FieldDef, Lost, PrintCtx, TraceMeta, Value};

/// The task names of the comm column as libtraceevent keeps them: the saved
/// cmdlines, plus what the pretty view registers on the way (the sched
/// plugin registers the comms it sees in `sched_switch` and
/// `sched_wakeup`). libtraceevent holds a list until the first lookup of a
/// non-zero pid, then a sorted array searched with `bsearch`; an existing
/// pid is never renamed.
#[derive(Debug, Clone, Default)]
pub struct CommTable {
    /// Sorted by pid (stable: for equal pids, the latest registration first).
    arr: Vec<(i32, Box<[u8]>)>,
    /// Registrations before the array exists, in order.
    pending: Vec<(i32, Box<[u8]>)>,
    ready: bool,
}

impl CommTable {
    pub fn new(meta: &TraceMeta) -> Self {
        let arr = meta
            .tasks
            .sorted()
            .into_iter()
            .map(|(p, c)| (p, c.as_bytes().into()))
            .collect();
        CommTable {
            arr,
            pending: Vec::new(),
            ready: false,
        }
    }

    /// glibc's `bsearch` by pid.
    fn bsearch(&self, pid: i32) -> Option<usize> {
        let (mut l, mut u) = (0usize, self.arr.len());
        while l < u {
            let idx = (l + u) / 2;
            let p = self.arr[idx].0;
            if pid < p {
                u = idx;
            } else if pid > p {
                l = idx + 1;
            } else {
                return Some(idx);
            }
        }
        None
    }

    fn init(&mut self) {
        if self.ready {
            return;
        }
        self.ready = true;
        if self.pending.is_empty() {
            return;
        }
        // the list has the latest registration first; qsort is stable
        let mut v: Vec<(i32, Box<[u8]>)> = self.pending.drain(..).rev().collect();
        v.append(&mut self.arr);
        v.sort_by_key(|e| e.0);
        self.arr = v;
    }

    /// `find_cmdline`: the comm shown for `pid`.
    pub fn find(&mut self, pid: i32) -> &[u8] {
        if pid == 0 {
            return b"<idle>";
        }
        self.init();
        match self.bsearch(pid) {
            Some(i) => &self.arr[i].1,
            None => b"<...>",
        }
    }

    /// `tep_register_comm`; false when the comm shown for every pid stays
    /// the same.
    pub fn register(&mut self, pid: i32, comm: &[u8]) -> bool {
        if !self.ready {
            self.pending.push((pid, comm.into()));
            return true;
        }
        if pid == 0 || self.bsearch(pid).is_some() {
            return false;
        }
        let at = self.arr.partition_point(|e| e.0 < pid);
        self.arr.insert(at, (pid, comm.into()));
        true
    }
}

/// The task columns a printer left out ([`TraceCmdPrinter::defer_task_columns`])
/// and the comms it would have registered, for [`TaskColumns::stitch`].
#[derive(Debug, Default)]
pub struct Deferred {
    pub cols: Vec<TaskCol>,
    pub regs: Vec<(i32, Box<[u8]>)>,
}

/// One task column left out: where it goes in the text, for which task and
/// CPU, and the registrations of its event (`regs[previous end..regs_end]`).
#[derive(Debug, Clone, Copy)]
pub struct TaskCol {
    pub at: usize,
    pub pid: i32,
    pub cpu: u32,
    pub regs_end: usize,
}

/// The sequential half of a pretty view printed on several threads: the
/// comm table, and the task columns written from it in event order.
#[derive(Debug, Default)]
pub struct TaskColumns {
    comms: Option<CommTable>,
    latency: bool,
    /// Columns written before, by task and CPU (see [`ColumnCache`]).
    cache: ColumnCache,
}

/// The task columns written last, in slots chosen by task and CPU: a column
/// depends only on the comm table, which changes seldom (a task seen for
/// the first time), so one written before is copied again until then.
#[derive(Debug, Default)]
struct ColumnCache {
    slots: Vec<CachedColumn>,
    /// Bumped when the comm table changes: older slots are stale.
    generation: u32,
}

#[derive(Debug, Clone, Copy)]
struct CachedColumn {
    pid: i32,
    cpu: u32,
    generation: u32,
    len: u8,
    text: [u8; 48],
}

impl ColumnCache {
    const SLOTS: usize = 1024;

    fn slot(pid: i32, cpu: u32) -> usize {
        (pid as u32 as usize)
            .wrapping_mul(31)
            .wrapping_add(cpu as usize)
            % Self::SLOTS
    }

    /// Append the column of `pid` on `cpu` if it is here.
    fn put(&self, out: &mut Vec<u8>, pid: i32, cpu: u32) -> bool {
        let Some(c) = self.slots.get(Self::slot(pid, cpu)) else {
            return false;
        };
        if c.pid != pid || c.cpu != cpu || c.generation != self.generation {
            return false;
        }
        // One copy of fixed size, then cut back.
        let l = out.len();
        out.extend_from_slice(&c.text);
        out.truncate(l + c.len as usize);
        true
    }

    fn keep(&mut self, pid: i32, cpu: u32, text: &[u8]) {
        if text.len() > 48 {
            return;
        }
        if self.slots.is_empty() {
            let empty = CachedColumn {
                pid: 0,
                cpu: 0,
                generation: u32::MAX,
                len: 0,
                text: [0; 48],
            };
            self.slots = vec![empty; Self::SLOTS];
        }
        let c = &mut self.slots[Self::slot(pid, cpu)];
        c.pid = pid;
        c.cpu = cpu;
        c.generation = self.generation;
        c.len = text.len() as u8;
        c.text[..text.len()].copy_from_slice(text);
    }

    fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == u32::MAX {
            self.slots.clear();
            self.generation = 0;
        }
    }
}

impl TaskColumns {
    pub fn new(latency: bool) -> Self {
        TaskColumns {
            comms: None,
            latency,
            cache: ColumnCache::default(),
        }
    }

    /// Append `text` to `out` with the columns `d` left out written in, and
    /// the comms registered, in the order one printer would have done both.
    pub fn stitch(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, text: &[u8], d: &Deferred) {
        let comms = self.comms.get_or_insert_with(|| CommTable::new(meta));
        let (mut from, mut reg) = (0, 0);
        for c in &d.cols {
            out.extend_from_slice(&text[from..c.at]);
            from = c.at;
            if !self.cache.put(out, c.pid, c.cpu) {
                let l = out.len();
                task_column(out, comms.find(c.pid), c.pid, c.cpu, self.latency);
                self.cache.keep(c.pid, c.cpu, &out[l..]);
            }
            for (pid, comm) in &d.regs[reg..c.regs_end] {
                if comms.register(*pid, comm) {
                    self.cache.clear();
                }
            }
            reg = c.regs_end;
        }
        out.extend_from_slice(&text[from..]);
    }
}

/// Where the latency columns come from (the common fields of the event
/// with the lowest id, as libtraceevent takes them).
#[derive(Debug, Clone, Default)]
struct LatencyFields {
    flags: Option<(usize, usize)>,
    pc: Option<(usize, usize)>,
    /// `common_lock_depth`, else `common_migrate_disable` (libtraceevent
    /// reads both through one cached field).
    ld: Option<(usize, usize)>,
    lock_depth: bool,
    migrate_disable: bool,
}

impl LatencyFields {
    fn new(meta: &TraceMeta) -> Self {
        let first = meta.classes.iter().min_by_key(|c| c.id);
        let find = |n: &str| {
            first
                .and_then(|c| c.common_fields.iter().find(|f| f.name == n))
                .map(|f: &FieldDef| (f.offset as usize, f.size as usize))
        };
        let ld = find("common_lock_depth");
        let md = find("common_migrate_disable");
        LatencyFields {
            flags: find("common_flags"),
            pc: find("common_preempt_count"),
            ld: ld.or(md),
            lock_depth: ld.is_some(),
            migrate_disable: ld.is_some() || md.is_some(),
        }
    }
}

/// The trace-cmd style printer, with its small amount of state.
#[derive(Debug)]
pub struct TraceCmdPrinter {
    pub time: TimeFormat,
    /// Buffer names (index = `BufferInfo` index); empty for the top buffer.
    names: Vec<String>,
    /// Width of the instance-name column; `None` when the file has no instances.
    prefix_width: Option<usize>,
    skip_prefix: bool,
    /// Position in `out` just after the timestamp column of the last event
    /// line written (where `--ts-diff` inserts its column).
    pub time_end: usize,
    /// `-l`: the latency columns.
    latency: bool,
    lat: LatencyFields,
    /// The comm column of the pretty view (built on first use).
    comms: Option<CommTable>,
    effects: RefCell<Effects>,
    /// Task columns left for [`TaskColumns::stitch`] (printing on several
    /// threads); `None`: written here.
    deferred: Option<Deferred>,
}

impl TraceCmdPrinter {
    pub fn new(meta: &TraceMeta, time: TimeFormat) -> Self {
        let names: Vec<String> = meta
            .buffers
            .iter()
            .map(|b| b.name.rsplit('/').next().unwrap_or("").to_string())
            .collect();
        let has_instances = meta.buffers.iter().any(|b| !b.name.is_empty());
        let prefix_width = has_instances.then(|| names.iter().map(|n| n.len()).max().unwrap_or(0));
        TraceCmdPrinter {
            time,
            names,
            prefix_width,
            skip_prefix: false,
            time_end: 0,
            latency: false,
            lat: LatencyFields::default(),
            comms: None,
            effects: RefCell::new(Effects::default()),
            deferred: None,
        }
    }

    /// Leave the task column of the pretty view (the comm, which depends
    /// on every event before) out of the text, and keep the comms the
    /// events register, for [`TaskColumns::stitch`]; collect them with
    /// [`TraceCmdPrinter::take_deferred`].
    pub fn defer_task_columns(&mut self) {
        self.deferred = Some(Deferred::default());
    }

    /// The task columns left out since the last call (positions in the
    /// text written since then).
    pub fn take_deferred(&mut self) -> Deferred {
        self.deferred
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Show trace-cmd's latency columns (`report -l`) in the pretty view.
    pub fn set_latency(&mut self, meta: &TraceMeta, on: bool) {
        self.latency = on;
        self.lat = LatencyFields::new(meta);
    }

    /// `data_latency_format`: irqs-off, need-resched, hardirq/softirq,
    /// preempt depth (low and high nibble), then migrate-disable and lock
    /// depth when the events have them.
    fn write_latency(&self, out: &mut Vec<u8>, ev: &Event<'_>) {
        let rd = |f: Option<(usize, usize)>| -> i64 {
            match f {
                Some((o, n)) => ev
                    .data
                    .get(o..)
                    .and_then(|b| ev.endian.read_uint(b, n))
                    .or_else(|| {
                        // past the record: what follows it in the page
                        ev.ext.get(o..).and_then(|b| ev.endian.read_uint(b, n))
                    })
                    .map_or(0, |v| v as u32 as i32 as i64),
                None => -1,
            }
        };
        let flags = rd(self.lat.flags) as i32;
        let pc = rd(self.lat.pc) as u32;
        out.push(if flags & 0x01 != 0 {
            b'd'
        } else if flags & 0x02 != 0 {
            b'X'
        } else {
            b'.'
        });
        out.push(if flags & 0x04 != 0 { b'N' } else { b'.' });
        let (hard, soft) = (flags & 0x08 != 0, flags & 0x10 != 0);
        out.push(match (hard, soft) {
            (true, true) => b'H',
            (true, false) => b'h',
            (false, true) => b's',
            _ => b'.',
        });
        if pc & 0xf != 0 {
            crate::fmt::hex(out, (pc & 0xf) as u64);
        } else {
            out.push(b'.');
        }
        if pc & 0xf0 != 0 {
            crate::fmt::hex(out, (pc >> 4) as u64);
        } else {
            out.push(b'.');
        }
        let ld = rd(self.lat.ld) as i32;
        for exists in [self.lat.migrate_disable, self.lat.lock_depth] {
            if exists {
                if ld < 0 {
                    out.push(b'.');
                } else {
                    dec(out, ld);
                }
            }
        }
    }

    /// One event in the pretty (default) view: the comm, pid, CPU (or the
    /// latency columns), time, name, then the event's own text (plugin
    /// handler or print fmt). `next` is the record that follows in the
    /// same buffer, when the class asked for it
    /// ([`tracemux_core::model::ClassPrinter::wants_next`]). Returns
    /// whether the printer used `next` up (the caller must then skip it).
    pub fn write_pretty(
        &mut self,
        out: &mut Vec<u8>,
        meta: &TraceMeta,
        ev: &Event<'_>,
        next: Option<&[u8]>,
    ) -> bool {
        self.prefix(out, meta, ev.stream);
        let Some(class) = ev.class else {
            out.extend_from_slice(if self.latency {
                b"[UNKNOWN EVENT][UNKNOWN EVENT][UNKNOWN EVENT] (NULL):               [UNKNOWN EVENT]\n".as_slice()
            } else {
                b"[UNKNOWN EVENT][UNKNOWN EVENT] (NULL):               [UNKNOWN EVENT]\n"
            });
            return false;
        };
        match self.deferred.as_mut() {
            Some(d) => d.cols.push(TaskCol {
                at: out.len(),
                pid: ev.pid,
                cpu: ev.cpu,
                regs_end: d.regs.len(),
            }),
            None => {
                let comms = self.comms.get_or_insert_with(|| CommTable::new(meta));
                task_column(out, comms.find(ev.pid), ev.pid, ev.cpu, self.latency);
            }
        }
        if self.latency {
            self.write_latency(out, ev);
        }
        self.write_time_and_name(out, ev.ts, &class.name);
        let mut consumed = false;
        match &class.printer {
            Some(p) => {
                self.effects.get_mut().clear();
                let ctx = PrintCtx {
                    endian: ev.endian,
                    long_size: meta.long_size,
                    symbols: &meta.symbols,
                    printk: &meta.printk,
                    cpu: ev.cpu,
                    ts: ev.ts,
                    time: self.time,
                    classes: Some(&meta.classes),
                    next,
                    effects: Some(&self.effects),
                };
                if !p.write_pretty(out, ev.ext, ev.data.len(), &ctx) {
                    p.write_raw_fields(out, ev.ext, ev.data.len(), &ctx);
                }
                let eff = self.effects.get_mut();
                consumed = eff.consumed_next;
                if !eff.comms.is_empty() {
                    if let Some(d) = self.deferred.as_mut() {
                        d.regs.extend(eff.comms().map(|(pid, c)| (pid, c.into())));
                        if let Some(col) = d.cols.last_mut() {
                            col.regs_end = d.regs.len();
                        }
                    } else {
                        let comms = self.comms.get_or_insert_with(|| CommTable::new(meta));
                        for (pid, c) in eff.comms() {
                            comms.register(pid, c);
                        }
                    }
                }
            }
            None => generic_fields(out, class, ev),
        }
        if out.last() == Some(&b'\n') {
            out.pop();
        }
        out.push(b'\n');
        consumed
    }

    fn prefix(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, stream: u32) {
        if std::mem::take(&mut self.skip_prefix) {
            return;
        }
        let Some(w) = self.prefix_width else { return };
        let b = meta
            .streams
            .get(stream as usize)
            .map_or(0, |s| s.buffer as usize);
        let name = self.names.get(b).map_or("", |s| s.as_str());
        if name.is_empty() || meta.buffers.get(b).is_some_and(|b| b.name.is_empty()) {
            out.resize(out.len() + w + 2, b' ');
        } else {
            str_right(out, name.as_bytes(), w);
            out.extend_from_slice(b": ");
        }
    }

    /// `CPU:N [M EVENTS DROPPED]` (the next event line then has no prefix).
    pub fn write_lost(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, l: &Lost) {
        // trace-cmd keeps the count in an int
        let n = match l.count {
            Some(c) => c as u32 as i32,
            None => -1,
        };
        if n == 0 {
            return;
        }
        self.prefix(out, meta, l.stream);
        out.extend_from_slice(b"CPU:");
        dec(out, l.cpu);
        if n > 0 {
            out.extend_from_slice(b" [");
            dec(out, n);
            out.extend_from_slice(b" EVENTS DROPPED]\n");
        } else {
            out.extend_from_slice(b" [EVENTS DROPPED]\n");
        }
        self.skip_prefix = true;
    }

    /// Write the timestamp column (with its leading space and trailing colon).
    pub fn write_time(&self, out: &mut Vec<u8>, ts: u64) {
        match self.time {
            TimeFormat::Usecs => {
                let t = ts.wrapping_add(500) / 1000;
                out.push(b' ');
                dec_pad(out, t / 1_000_000, 5, b' ');
                out.push(b'.');
                dec_pad(out, t % 1_000_000, 6, b'0');
            }
            TimeFormat::Nsecs => {
                out.push(b' ');
                dec_pad(out, ts / 1_000_000_000, 5, b' ');
                out.push(b'.');
                dec_pad(out, ts % 1_000_000_000, 9, b'0');
            }
            TimeFormat::Raw => dec_pad(out, ts, 12, b' '),
        }
        out.push(b':');
    }

    /// `common_flags` as `-R -l` shows it (-1 when the format has none).
    fn raw_flags(&self, ev: &Event<'_>) -> i64 {
        self.lat.flags.map_or(-1i64, |(o, n)| {
            ev.ext
                .get(o..)
                .and_then(|b| ev.endian.read_uint(b, n))
                .map_or(0, |v| v as u32 as i32 as i64)
        })
    }

    /// The timestamp column (remembering where it ends, for `--ts-diff`)
    /// and the event name padded to 20 columns.
    fn write_time_and_name(&mut self, out: &mut Vec<u8>, ts: u64, name: &str) {
        self.write_time(out, ts);
        self.time_end = out.len();
        out.push(b' ');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        if name.len() < 20 {
            out.resize(out.len() + 20 - name.len(), b' ');
        }
    }

    /// One event in the raw (`-R`) view.
    pub fn write_raw(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, ev: &Event<'_>, ext: &[u8]) {
        self.prefix(out, meta, ev.stream);
        let Some(class) = ev.class else {
            if self.latency {
                out.extend_from_slice(b"[UNKNOWN EVENT]-0x");
                let flags = self.raw_flags(ev);
                crate::fmt::hex(out, flags as u32 as u64);
                out.extend_from_slice(b"[UNKNOWN EVENT] (NULL):               [UNKNOWN EVENT]\n");
                return;
            }
            out.extend_from_slice(
                b"[UNKNOWN EVENT][UNKNOWN EVENT] (NULL):               [UNKNOWN EVENT]\n",
            );
            return;
        };
        let comm: &[u8] = match ev.pid {
            0 => b"<idle>",
            p => meta
                .tasks
                .get(p)
                .map_or(b"<...>".as_slice(), |c| c.as_bytes()),
        };
        task_column(out, comm, ev.pid, ev.cpu, self.latency);
        if self.latency {
            // and the raw flags
            out.extend_from_slice(b"-0x");
            let flags = self.raw_flags(ev);
            crate::fmt::hex(out, flags as u32 as u64);
        }
        self.write_time_and_name(out, ev.ts, &class.name);
        let start = out.len();
        match &class.printer {
            Some(p) => {
                let ctx = PrintCtx::of(meta, ev);
                p.write_raw_fields(out, ext, ev.data.len(), &ctx);
            }
            None => generic_fields(out, class, ev),
        }
        if out.len() > start && out.last() == Some(&b'\n') {
            out.pop();
        }
        out.push(b'\n');
    }
}

/// The task column of the pretty view: `%16s-%-5d [%03d]`, or with the
/// latency columns `%8.8s-%-5d %3d`.
fn task_column(out: &mut Vec<u8>, comm: &[u8], pid: i32, cpu: u32, latency: bool) {
    if latency {
        str_right(out, &comm[..comm.len().min(8)], 8);
        out.push(b'-');
        dec_left(out, pid, 5);
        out.push(b' ');
        dec_pad(out, cpu, 3, b' ');
    } else {
        write_task(out, comm, pid, cpu);
    }
}

/// The `%16s-%-5d [%03d]` task and CPU column.
fn write_task(out: &mut Vec<u8>, comm: &[u8], pid: i32, cpu: u32) {
    str_right(out, comm, 16);
    out.push(b'-');
    dec_left(out, pid, 5);
    out.extend_from_slice(b" [");
    dec_pad(out, cpu, 3, b'0');
    out.push(b']');
}

/// ` name=value` for each field, from the decoded values (used when the
/// format provides no printer of its own): the fixed-layout fields, or for
/// typed formats (CTF, uftrace) every payload value, structure members as
/// `outer.inner=v`, arrays as `name=[v, v]`.
pub fn generic_fields(out: &mut Vec<u8>, class: &tracemux_core::model::EventClass, ev: &Event<'_>) {
    if ev.tape.is_some() || class.schema.is_some() {
        let symbols = tracemux_core::tables::SymbolTable::default();
        let printk = tracemux_core::tables::PrintkTable::default();
        let ctx = PrintCtx::new(ev.endian, 8, &symbols, &printk, ev.cpu);
        let mut v = TypedFields {
            out,
            in_payload: false,
            path: Vec::new(),
            array_depth: 0,
            first_in_array: false,
        };
        tracemux_core::model::visit_fields(ev, &ctx, &mut v);
        return;
    }
    for f in &class.fields {
        out.push(b' ');
        out.extend_from_slice(f.name.as_bytes());
        out.push(b'=');
        if let Some(v) = f.value(ev.data, ev.endian) {
            plain_value(out, v);
        }
    }
}

fn plain_value(out: &mut Vec<u8>, v: Value<'_>) {
    match v {
        Value::Unsigned(v) => dec(out, v),
        Value::Signed(v) => dec(out, v),
        Value::Float(v) => out.extend_from_slice(v.to_string().as_bytes()),
        Value::Bool(b) => dec(out, u8::from(b)),
        Value::Str(s) => out.extend_from_slice(s),
        Value::Bytes(b) | Value::IntArray { data: b, .. } => {
            out.extend_from_slice(b"ARRAY[");
            for (i, x) in b.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                out.extend_from_slice(format!("{x:02x}").as_bytes());
            }
            out.push(b']');
        }
    }
}

/// The payload of a typed event as ` name=value` pairs.
struct TypedFields<'o> {
    out: &'o mut Vec<u8>,
    in_payload: bool,
    /// Names of the enclosing structures (prefixes of member names).
    path: Vec<String>,
    array_depth: u32,
    first_in_array: bool,
}

impl TypedFields<'_> {
    fn name(&mut self, name: &str) {
        if self.array_depth > 0 {
            if !self.first_in_array {
                self.out.extend_from_slice(b", ");
            }
            self.first_in_array = false;
            return;
        }
        self.out.push(b' ');
        for p in &self.path {
            self.out.extend_from_slice(p.as_bytes());
            self.out.push(b'.');
        }
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(b'=');
    }
}

impl tracemux_core::model::FieldVisitor for TypedFields<'_> {
    fn field(&mut self, f_: FieldRef<'_>, base: tracemux_core::model::Base, value: Value<'_>) {
        let name = f_.name();
        if !self.in_payload {
            return;
        }
        self.name(name);
        match (base, value) {
            (tracemux_core::model::Base::Hex, Value::Unsigned(v)) => {
                self.out.extend_from_slice(format!("0x{v:x}").as_bytes())
            }
            (_, v) => plain_value(self.out, v),
        }
    }
    fn enum_field(&mut self, f_: FieldRef<'_>, value: Value<'_>, labels: &[&str]) {
        let name = f_.name();
        if !self.in_payload {
            return;
        }
        self.name(name);
        match labels.first() {
            Some(l) => self.out.extend_from_slice(l.as_bytes()),
            None => plain_value(self.out, value),
        }
    }
    fn scope_begin(&mut self, scope: tracemux_core::typed::Scope) {
        self.in_payload = scope == tracemux_core::typed::Scope::Payload;
        self.path.clear();
        self.array_depth = 0;
    }
    fn scope_end(&mut self, _scope: tracemux_core::typed::Scope) {
        self.in_payload = false;
    }
    fn struct_begin(&mut self, f_: FieldRef<'_>) {
        let name = f_.name();
        if self.in_payload && self.array_depth == 0 {
            self.path.push(name.to_string());
        }
    }
    fn struct_end(&mut self) {
        if self.in_payload && self.array_depth == 0 {
            self.path.pop();
        }
    }
    fn array_begin(&mut self, f_: FieldRef<'_>, _len: u64) {
        let name = f_.name();
        if !self.in_payload {
            return;
        }
        if self.array_depth == 0 {
            self.name(name);
        } else {
            self.name("");
        }
        self.out.push(b'[');
        self.array_depth += 1;
        self.first_in_array = true;
    }
    fn array_end(&mut self) {
        if !self.in_payload {
            return;
        }
        self.array_depth = self.array_depth.saturating_sub(1);
        self.first_in_array = false;
        self.out.push(b']');
    }
}
