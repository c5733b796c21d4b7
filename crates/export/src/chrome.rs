//! Chrome Trace Event Format JSON, streamed: the object
//! `{"displayTimeUnit":"ns","traceEvents":[ ... ]}` with one event per line,
//! written as events come (never built in memory).
//!
//! - uftrace function entry/exit: `B`/`E` on the task's thread (arguments,
//!   address and return value as `args`);
//! - every other event: an instant (`"ph":"i"`, thread scope) named
//!   `system:event` with its payload fields as `args` (CTF and LTT context
//!   scopes as nested objects named as in `report --json`);
//! - `sched_switch` of kernel traces also opens/closes a slice named after
//!   the incoming task on a per-CPU pseudo-process ([`CPU_PID`], one thread
//!   per CPU, category `cpu`), so CPU occupancy shows as it does in Perfetto;
//! - task names as `thread_name` / `process_name` metadata events; losses as
//!   global instants named `lost events`.
//!
//! `ts` is in microseconds written with three decimals: the exact
//! nanosecond time of the model (parse it as a decimal, not a double, to
//! keep every digit); each event also carries its `cpu`.

use std::io::Write;

use tracemux_core::idmap::IdMap;
use tracemux_core::layout::{ClassMap, FieldId};
use tracemux_core::model::{Event, EventClass, Lost, TraceMeta};
use tracemux_core::typed::Scope;

use crate::perfetto::{is_kernel_trace, uftrace_pid};
use crate::tree::{resolve, write_out, Tree};
use tracemux_core::json::json_str;

/// The pseudo-process holding one thread per CPU (CPU slices from
/// `sched_switch`): above any Linux pid.
pub const CPU_PID: i64 = 1_000_000_000;
/// The pseudo-process of events without a thread (one thread per stream).
pub const STREAM_PID: i64 = 1_000_000_001;

/// What a [`ChromeWriter`] wrote.
#[derive(Debug, Default, Clone, Copy)]
pub struct ChromeStats {
    /// Trace events written (metadata and CPU slices included).
    pub records: u64,
    pub bytes: u64,
}

/// A sink of the model writing Chrome Trace Event JSON to `W`.
pub struct ChromeWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    tree: Tree,
    kernel: bool,
    uftrace_pid: Option<i32>,
    /// Per CPU: whether a CPU slice is open, and whether the CPU's thread
    /// was named.
    cpus: IdMap<(bool, bool)>,
    streams_named: IdMap<()>,
    /// What each class's events are written as, by class id.
    classes: ClassMap<ChromeClass>,
    title: Vec<u8>,
    cat: String,
    last_ts: u64,
    first: bool,
    stats: ChromeStats,
}

fn ts(out: &mut Vec<u8>, ns: u64) {
    let _ = write!(out, "{}.{:03}", ns / 1000, ns % 1000);
}

/// How the events of a class are written, and where the fields read are
/// in their trees: made once per class.
struct ChromeClass {
    /// Phase: `B`/`E` for uftrace entries and exits, `i` for the others.
    ph: &'static str,
    /// The event's name (for an entry, its function's, from the event).
    title: Vec<u8>,
    cat: String,
    /// uftrace's `name` (the title, not an argument).
    name: FieldId,
    /// LTTng's `vpid` context, or a `pid` one.
    process: FieldId,
    /// Whether its contexts are written among the arguments.
    typed_schema: bool,
    /// A `sched_switch`: its next task.
    switch: Option<(FieldId, FieldId)>,
}

impl ChromeClass {
    fn of(c: &EventClass) -> ChromeClass {
        let (sys, name) = (c.system.as_str(), c.name.as_str());
        let ph = match (sys, name) {
            ("uftrace", "entry") => "B",
            ("uftrace", "exit") => "E",
            _ => "i",
        };
        let title = if ph != "i" {
            Vec::new()
        } else if sys.is_empty() {
            name.as_bytes().to_vec()
        } else {
            format!("{sys}:{name}").into_bytes()
        };
        ChromeClass {
            ph,
            title,
            cat: if sys.is_empty() { "event" } else { sys }.to_string(),
            name: if ph != "i" {
                resolve(c, Scope::Payload, &["name"])
            } else {
                FieldId::UNKNOWN
            },
            process: resolve(c, Scope::CommonContext, &["vpid", "pid"]),
            typed_schema: c.schema.is_some(),
            switch: (name == "sched_switch").then(|| {
                (
                    resolve(c, Scope::Payload, &["next_tid", "next_pid"]),
                    resolve(c, Scope::Payload, &["next_comm"]),
                )
            }),
        }
    }

    fn reads(&self) -> Reads {
        Reads {
            ph: self.ph,
            name: self.name,
            process: self.process,
            typed_schema: self.typed_schema,
            switch: self.switch,
        }
    }
}

/// What [`ChromeWriter::event`] needs of a class besides its title.
#[derive(Clone, Copy)]
struct Reads {
    ph: &'static str,
    name: FieldId,
    process: FieldId,
    typed_schema: bool,
    switch: Option<(FieldId, FieldId)>,
}

impl Default for Reads {
    fn default() -> Self {
        Reads {
            ph: "i",
            name: FieldId::UNKNOWN,
            process: FieldId::UNKNOWN,
            typed_schema: false,
            switch: None,
        }
    }
}

impl<W: Write> ChromeWriter<W> {
    /// Start the JSON object and name the trace's tasks.
    pub fn new(meta: &TraceMeta, out: W) -> std::io::Result<Self> {
        let uftrace_pid = uftrace_pid(meta);
        let mut w = ChromeWriter {
            out,
            buf: Vec::with_capacity(1 << 16),
            tree: Tree::default(),
            kernel: is_kernel_trace(meta),
            uftrace_pid,
            cpus: IdMap::new(),
            streams_named: IdMap::new(),
            classes: ClassMap::new(),
            title: Vec::new(),
            cat: String::new(),
            last_ts: 0,
            first: true,
            stats: ChromeStats::default(),
        };
        w.buf
            .extend_from_slice(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
        if let Some(pid) = uftrace_pid {
            if let Some(c) = meta.tasks.get(pid) {
                w.meta_event("process_name", pid.into(), pid.into(), c.as_bytes());
            }
        }
        for (tid, comm) in meta.tasks.sorted() {
            let pid = uftrace_pid.unwrap_or(tid);
            w.meta_event("thread_name", pid.into(), tid.into(), comm.as_bytes());
        }
        Ok(w)
    }

    fn sep(&mut self) {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        self.buf.push(b'\n');
        self.stats.records += 1;
    }

    fn meta_event(&mut self, what: &str, pid: i64, tid: i64, name: &[u8]) {
        self.sep();
        self.buf.extend_from_slice(b"{\"name\":\"");
        self.buf.extend_from_slice(what.as_bytes());
        self.buf.extend_from_slice(
            format!("\",\"ph\":\"M\",\"ts\":0,\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":")
                .as_bytes(),
        );
        json_str(&mut self.buf, name);
        self.buf.extend_from_slice(b"}}");
    }

    /// `{"name":NAME,"cat":CAT,"ph":PH,"ts":TS,"pid":P,"tid":T,"cpu":C` (open).
    /// `at`: time (ns), pid, tid, cpu.
    fn head(&mut self, name: &[u8], cat: &str, ph: &str, at: (u64, i64, i64, u32)) {
        let (t, pid, tid, cpu) = at;
        self.sep();
        self.buf.extend_from_slice(b"{\"name\":");
        json_str(&mut self.buf, name);
        self.buf.extend_from_slice(b",\"cat\":");
        json_str(&mut self.buf, cat.as_bytes());
        self.buf.extend_from_slice(b",\"ph\":\"");
        self.buf.extend_from_slice(ph.as_bytes());
        self.buf.extend_from_slice(b"\",\"ts\":");
        ts(&mut self.buf, t);
        let _ = write!(self.buf, ",\"pid\":{pid},\"tid\":{tid},\"cpu\":{cpu}");
    }

    fn drain(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= 1 << 16 {
            write_out(&mut self.out, &mut self.buf, &mut self.stats.bytes)?;
        }
        Ok(())
    }

    /// One event of the model.
    pub fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> std::io::Result<()> {
        self.tree.collect(meta, ev);
        self.last_ts = self.last_ts.max(ev.ts);
        let mut title = std::mem::take(&mut self.title);
        let mut cat = std::mem::take(&mut self.cat);
        title.clear();
        cat.clear();
        let k = match ev.class {
            Some(c) => {
                let k = self
                    .classes
                    .get_or_insert_with(c.index, || ChromeClass::of(c));
                title.extend_from_slice(&k.title);
                cat.push_str(&k.cat);
                k.reads()
            }
            None => {
                let _ = write!(title, "type {}", ev.type_id);
                cat.push_str("event");
                Reads::default()
            }
        };
        // Which thread: the task (its process for uftrace and CTF), else
        // the stream.
        let (pid, tid) = if ev.pid >= 0 {
            let t = &self.tree;
            let pid = self
                .uftrace_pid
                .or_else(|| {
                    t.at(Scope::CommonContext, k.process)
                        .and_then(|i| t.int(i))
                        .map(|v| v as i32)
                })
                .unwrap_or(ev.pid);
            (i64::from(pid), i64::from(ev.pid))
        } else {
            if self.streams_named.get(ev.stream).is_none() {
                self.streams_named.slot(ev.stream);
                let n = format!("stream {} (cpu {})", ev.stream, ev.cpu);
                self.meta_event("thread_name", STREAM_PID, ev.stream.into(), n.as_bytes());
            }
            (STREAM_PID, i64::from(ev.stream))
        };
        let t = &self.tree;
        let (ph, skip_name) = (k.ph, k.ph != "i");
        if skip_name {
            if let Some(i) = t.at(Scope::Payload, k.name) {
                title.extend_from_slice(t.bytes(i));
            }
        }
        self.head(&title, &cat, ph, (ev.ts, pid, tid, ev.cpu));
        self.title = title;
        self.cat = cat;
        if ph == "i" {
            self.buf.extend_from_slice(b",\"s\":\"t\"");
        }
        self.buf.extend_from_slice(b",\"args\":{");
        let t = &self.tree;
        let mut n = 0;
        for i in t.top(Scope::Payload) {
            if skip_name && t.nodes[i].field == k.name {
                continue;
            }
            if n > 0 {
                self.buf.push(b',');
            }
            n += 1;
            json_str(&mut self.buf, t.name(i).as_bytes());
            self.buf.push(b':');
            t.json(i, &mut self.buf);
        }
        if k.typed_schema && self.uftrace_pid.is_none() {
            for scope in [Scope::CommonContext, Scope::SpecificContext] {
                let mut m = 0;
                for i in t.top(scope) {
                    if m == 0 {
                        if n > 0 {
                            self.buf.push(b',');
                        }
                        n += 1;
                        json_str(&mut self.buf, scope.name().as_bytes());
                        self.buf.extend_from_slice(b":{");
                    } else {
                        self.buf.push(b',');
                    }
                    m += 1;
                    json_str(&mut self.buf, t.name(i).as_bytes());
                    self.buf.push(b':');
                    t.json(i, &mut self.buf);
                }
                if m > 0 {
                    self.buf.push(b'}');
                }
            }
        }
        self.buf.extend_from_slice(b"}}");
        if let Some(next) = k.switch.filter(|_| self.kernel) {
            self.cpu_slice(ev, next)?;
        }
        self.drain()
    }

    /// The CPU's slice of the task that `sched_switch` puts on it.
    /// (`next`: the fields of the next task's tid and comm.)
    fn cpu_slice(&mut self, ev: &Event<'_>, next: (FieldId, FieldId)) -> std::io::Result<()> {
        let t = &self.tree;
        let next_pid = t
            .at(Scope::Payload, next.0)
            .and_then(|i| t.int(i))
            .unwrap_or(0);
        let next_comm = t
            .at(Scope::Payload, next.1)
            .map(|i| t.bytes(i).to_vec())
            .unwrap_or_default();
        let c = ev.cpu;
        if !self.cpus.slot(c).1 {
            self.cpus.slot(c).1 = true;
            if !self.cpus.iter().any(|(k, s)| k != c && s.1) {
                self.meta_event("process_name", CPU_PID, 0, b"CPUs");
            }
            let n = format!("CPU {}", ev.cpu);
            self.meta_event("thread_name", CPU_PID, c.into(), n.as_bytes());
        }
        if self.cpus.slot(c).0 {
            self.head(b"", "cpu", "E", (ev.ts, CPU_PID, c.into(), ev.cpu));
            self.buf.push(b'}');
            self.cpus.slot(c).0 = false;
        }
        if next_pid != 0 {
            self.head(&next_comm, "cpu", "B", (ev.ts, CPU_PID, c.into(), ev.cpu));
            self.buf
                .extend_from_slice(format!(",\"args\":{{\"pid\":{next_pid}}}}}").as_bytes());
            self.cpus.slot(c).0 = true;
        }
        Ok(())
    }

    /// Events were lost: a global instant with the count.
    pub fn lost(&mut self, l: &Lost) -> std::io::Result<()> {
        self.head(
            b"lost events",
            "lost",
            "i",
            (l.ts, CPU_PID, l.cpu.into(), l.cpu),
        );
        self.buf
            .extend_from_slice(b",\"s\":\"g\",\"args\":{\"count\":");
        match l.count {
            Some(c) => self.buf.extend_from_slice(c.to_string().as_bytes()),
            None => self.buf.extend_from_slice(b"null"),
        }
        self.buf.extend_from_slice(b"}}");
        self.drain()
    }

    /// Close the open CPU slices and the JSON; returns what was written.
    pub fn finish(mut self) -> std::io::Result<(W, ChromeStats)> {
        let open: Vec<u32> = self
            .cpus
            .iter()
            .filter(|(_, s)| s.0)
            .map(|(c, _)| c)
            .collect();
        for c in open {
            let t = self.last_ts;
            self.head(b"", "cpu", "E", (t, CPU_PID, c.into(), c));
            self.buf.push(b'}');
        }
        self.buf.extend_from_slice(b"\n]}\n");
        write_out(&mut self.out, &mut self.buf, &mut self.stats.bytes)?;
        self.out.flush()?;
        Ok((self.out, self.stats))
    }
}
