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
use tracemux_core::model::{Event, Lost, TraceMeta};
use tracemux_core::typed::Scope;

use crate::perfetto::{is_kernel_trace, uftrace_pid};
use crate::tree::{write_out, Tree};
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
    last_ts: u64,
    first: bool,
    stats: ChromeStats,
}

fn ts(out: &mut Vec<u8>, ns: u64) {
    out.extend_from_slice(format!("{}.{:03}", ns / 1000, ns % 1000).as_bytes());
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
        self.buf
            .extend_from_slice(format!(",\"pid\":{pid},\"tid\":{tid},\"cpu\":{cpu}").as_bytes());
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
        let (sys, name) = ev
            .class
            .map_or(("", ""), |c| (c.system.as_str(), c.name.as_str()));
        // Which thread: the task (its process for uftrace and CTF), else
        // the stream.
        let (pid, tid) = if ev.pid >= 0 {
            let t = &self.tree;
            let pid = self
                .uftrace_pid
                .or_else(|| {
                    ["vpid", "pid"]
                        .iter()
                        .find_map(|n| t.find(Scope::CommonContext, n))
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
        let mut title = Vec::new();
        let (ph, skip_name) = match (sys, name) {
            ("uftrace", "entry") => ("B", true),
            ("uftrace", "exit") => ("E", true),
            _ => ("i", false),
        };
        if skip_name {
            if let Some(i) = t.find(Scope::Payload, "name") {
                title.extend_from_slice(t.bytes(i));
            }
        } else if ev.class.is_none() {
            title.extend_from_slice(format!("type {}", ev.type_id).as_bytes());
        } else if sys.is_empty() {
            title.extend_from_slice(name.as_bytes());
        } else {
            title.extend_from_slice(format!("{sys}:{name}").as_bytes());
        }
        let cat = if sys.is_empty() { "event" } else { sys };
        self.head(&title, cat, ph, (ev.ts, pid, tid, ev.cpu));
        if ph == "i" {
            self.buf.extend_from_slice(b",\"s\":\"t\"");
        }
        self.buf.extend_from_slice(b",\"args\":{");
        let t = &self.tree;
        let mut n = 0;
        for i in t.top(Scope::Payload) {
            if skip_name && t.name(i) == "name" {
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
        let typed_schema = ev.class.is_some_and(|c| c.schema.is_some());
        if typed_schema && self.uftrace_pid.is_none() {
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
        if self.kernel && name == "sched_switch" {
            self.cpu_slice(ev)?;
        }
        self.drain()
    }

    /// The CPU's slice of the task that `sched_switch` puts on it.
    fn cpu_slice(&mut self, ev: &Event<'_>) -> std::io::Result<()> {
        let t = &self.tree;
        let next_pid = ["next_tid", "next_pid"]
            .iter()
            .find_map(|n| t.find(Scope::Payload, n))
            .and_then(|i| t.int(i))
            .unwrap_or(0);
        let next_comm = t
            .find(Scope::Payload, "next_comm")
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
