//! `uftrace dump --chrome`: the Chrome trace-event JSON of a recording,
//! byte-identical to uftrace 0.13.
//!
//! ```text
//! {"traceEvents":[
//! {"ts":0,"ph":"M","pid":10802,"name":"process_name","args":{"name":"[10802] calls_pg"}},
//! ...
//! {"ts":8319089733.896,"ph":"B","pid":10802,"name":"__monstartup"},
//! {"ts":8319089981.207,"ph":"B","pid":10802,"tid":10804,"name":"linux:schedule"},
//! ...
//! ], "displayTimeUnit": "ns", "metadata": {
//! "version":"uftrace v0.13 ( x86_64 dwarf python3 luajit tui perf sched dynamic )",
//! "recorded_time":"Sat Nov 21 17:08:30 2026",
//! "command_line":"uftrace record ..."
//! } }
//! ```
//!
//! Records are walked in time order through the function stack
//! ([`crate::report::walk`]): a function entry is a `B` event, its exit an
//! `E` event (with `"args"` holding the arguments or return value), a
//! sched-out/sched-in pair a `linux:schedule` slice (a pre-empted sched-out
//! gives no `B`, as in uftrace), a perf COMM event new name metadata.
//! Functions still running at the end get their `E` at the task's last
//! time. Lost records make uftrace's output invalid JSON (`,` twice); this
//! does the same and warns the same way.
//!
//! Two fields do not come from the recording: `"version"` is the version
//! string of the uftrace binary (option [`ChromeOptions::version`]), and
//! `"recorded_time"` is the modification time of `uftrace.data/info` in
//! `ctime(3)` format in the local time zone ([`ChromeOptions::zone`], or
//! [`ChromeOptions::recorded_time`] as given).

use std::io::{self, Write};

use tracemux_core::localtime::Zone;

use crate::args::{each_value, format_values};
use crate::argspec::{ArgFmt, ArgSpec};
use crate::data::UftraceData;
use crate::events::id;
use crate::header::{feat, info_bit};
use crate::perf::{PerfEvent, PerfKind, PerfReader};
use crate::record::Kind;
use crate::report::walk::{
    dump_replay, ArgCtx, DumpOps, Rec, Stacks, Walk, WalkOptions, WalkView, Walked,
};

/// Options of `uftrace dump --chrome`.
#[derive(Debug, Clone)]
pub struct ChromeOptions {
    /// Filters and common options.
    pub walk: WalkOptions,
    /// Put arguments and return values in `"args"` (`--no-args`: off).
    pub show_args: bool,
    /// What follows `uftrace ` in `"version"`; empty: the version string
    /// of the flavour's uftrace ([`crate::Flavor::version_string`]).
    pub version: String,
    /// `"recorded_time"` as given; `None`: the modification time of
    /// `info`, formatted as `ctime(3)` in [`Self::zone`].
    pub recorded_time: Option<String>,
    /// The local time zone uftrace would use (the CLI: the process's,
    /// [`Zone::local`]; default UTC).
    pub zone: Zone,
}

impl Default for ChromeOptions {
    fn default() -> Self {
        ChromeOptions {
            walk: WalkOptions::default(),
            show_args: true,
            version: String::new(),
            recorded_time: None,
            zone: Zone::utc(),
        }
    }
}

/// uftrace's `print_json_escaped_char` (note the doubled backslash of
/// `\n`, `\t` and hex escapes: uftrace writes them that way).
pub fn json_escape_byte(out: &mut Vec<u8>, c: u8) {
    match c {
        b'\n' => out.extend_from_slice(b"\\\\n"),
        b'\t' => out.extend_from_slice(b"\\\\t"),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'"' => out.extend_from_slice(b"\\\""),
        0x20..=0x7e => out.push(c),
        _ => {
            let _ = write!(out, "\\\\x{c:02x}");
        }
    }
}

/// Arguments (or the return value) as `get_argspec_string` prints them in
/// JSON mode: strings and characters escaped, the rest as in replay
/// (numbers in the byte order of `ctx.data`).
pub fn json_values(
    out: &mut Vec<u8>,
    specs: &[ArgSpec],
    blob: &[u8],
    retval: bool,
    ctx: &ArgCtx<'_>,
) {
    let endian = ctx.data.endian();
    each_value(out, specs, blob, retval, |out, k, spec, d| match spec.fmt {
        ArgFmt::Str | ArgFmt::StdString => {
            let (slen, s) = crate::args::blob_str(d, endian);
            if slen == 4 && s == [0xff; 4] {
                out.extend_from_slice(b"NULL");
            } else {
                out.extend_from_slice(b"\\\"");
                for &c in s.iter().take_while(|&&c| c != 0) {
                    json_escape_byte(out, c);
                }
                out.extend_from_slice(b"\\\"");
            }
            if spec.fmt == ArgFmt::StdString {
                out.push(b's');
            }
            slen + 2
        }
        ArgFmt::Char => {
            out.push(b'\'');
            json_escape_byte(out, d.first().copied().unwrap_or(0));
            out.push(b'\'');
            1
        }
        _ => {
            // one spec at a time through the replay formatter
            let one = &specs[k..k + 1];
            format_values(out, one, d, retval, endian, ctx);
            spec.size as usize
        }
    });
}

/// Task comm names after the perf COMM events (uftrace's
/// `update_perf_task_comm`: file by file, the last one read wins).
fn perf_comms(data: &UftraceData, tids: Option<&[i32]>) -> Vec<(i32, Vec<u8>)> {
    let mut out: Vec<(i32, Vec<u8>)> = Vec::new();
    if data.header.feat_mask & feat::PERF_EVENT == 0 {
        return out;
    }
    for pf in &data.perf {
        let mut r = PerfReader::new((*pf.data).as_ref(), data.endian());
        while let Some(ev) = r.next_event() {
            let Some(c) = ev.comm() else { continue };
            // records of tasks not read (no file, or not in --tid) are
            // skipped
            let traced = data
                .tasks
                .iter()
                .any(|t| t.tid == ev.tid && t.data.is_some())
                && tids.is_none_or(|v| v.contains(&ev.tid));
            if !traced || data.sessions.find_task(ev.tid).is_none() {
                continue;
            }
            match out.iter_mut().find(|(t, _)| *t == ev.tid) {
                Some(e) => e.1 = c.to_vec(),
                None => out.push((ev.tid, c.to_vec())),
            }
        }
    }
    out
}

struct Chrome<'a, 'w> {
    buf: Vec<u8>,
    out: &'w mut dyn Write,
    err: Option<io::Error>,
    last_comma: bool,
    lost: u32,
    show_args: bool,
    name: Vec<u8>,
    args: Vec<u8>,
    data: &'a UftraceData,
    /// Added to the time of function records (0.19: the recording's UTC
    /// offset, in nanoseconds; 0.13: none).
    utc_offset_ns: u64,
}

impl DumpOps for Chrome<'_, '_> {
    /// `dump_chrome_task_rstack`.
    fn task_rstack(&mut self, st: &mut Stacks<'_>, ti: usize, name: &[u8], r: &Rec, blob: &[u8]) {
        let t = &st.tasks[ti];
        let mut kind = r.kind;
        if kind == Kind::Event {
            if r.addr == id::PERF_SCHED_IN as u64 {
                if t.timestamp_last == 0 {
                    return;
                }
                kind = Kind::Exit;
            } else if r.addr == id::PERF_SCHED_OUT as u64 {
                kind = Kind::Entry;
            } else {
                return;
            }
        }
        self.name.clear();
        if name
            .iter()
            .all(|&c| matches!(c, 0x20..=0x7e) && c != b'"' && c != b'\\')
        {
            self.name.extend_from_slice(name);
        } else {
            for &c in name {
                json_escape_byte(&mut self.name, c);
            }
        }
        if self.last_comma {
            self.buf.extend_from_slice(b",\n");
        }
        self.last_comma = true;
        let ph = match kind {
            Kind::Entry => b'B',
            Kind::Exit => b'E',
            _ => {
                self.lost += 1;
                return;
            }
        };
        let b = &mut self.buf;
        let ts = r.time.wrapping_add(self.utc_offset_ns);
        let mut n = itoa::Buffer::new();
        b.extend_from_slice(b"{\"ts\":");
        b.extend_from_slice(n.format(ts / 1000).as_bytes());
        let ms = (ts % 1000) as u16;
        b.extend_from_slice(&[
            b'.',
            b'0' + (ms / 100) as u8,
            b'0' + (ms / 10 % 10) as u8,
            b'0' + (ms % 10) as u8,
        ]);
        b.extend_from_slice(b",\"ph\":\"");
        b.push(ph);
        b.extend_from_slice(b"\",\"pid\":");
        if t.pid == t.tid {
            b.extend_from_slice(n.format(t.tid).as_bytes());
        } else {
            b.extend_from_slice(n.format(t.pid).as_bytes());
            b.extend_from_slice(b",\"tid\":");
            b.extend_from_slice(n.format(t.tid).as_bytes());
        }
        b.extend_from_slice(b",\"name\":\"");
        b.extend_from_slice(&self.name);
        b.push(b'"');
        let specs = if r.more && self.show_args && r.kind != Kind::Event {
            self.data.arg_specs(t.tid, r.time, r.addr)
        } else {
            None
        };
        match specs {
            Some(specs) => {
                let ctx = ArgCtx {
                    data: self.data,
                    tid: t.tid,
                    time: r.time,
                    func: r.addr,
                };
                self.args.clear();
                let retval = kind == Kind::Exit;
                if !retval {
                    self.args.push(b'(');
                }
                json_values(&mut self.args, specs, blob, retval, &ctx);
                if !retval {
                    self.args.push(b')');
                }
                let b = &mut self.buf;
                b.extend_from_slice(if retval {
                    b",\"args\":{\"retval\":\""
                } else {
                    b",\"args\":{\"arguments\":\""
                });
                b.extend_from_slice(&self.args);
                b.extend_from_slice(b"\"}}");
            }
            None => self.buf.push(b'}'),
        }
        self.flush();
    }

    /// `dump_chrome_perf_event`: a new task name is metadata.
    fn perf_event(&mut self, _st: &mut Stacks<'_>, _ti: usize, ev: &PerfEvent) {
        let PerfKind::Comm { pid, .. } = ev.kind else {
            return;
        };
        let comm = ev.comm().unwrap_or(&[]);
        let tid = ev.tid;
        let b = &mut self.buf;
        if pid == tid {
            for what in ["process_name", "thread_name"] {
                let _ = write!(
                    b,
                    ",\n{{\"ts\":0,\"ph\":\"M\",\"pid\":{tid},\"name\":\"{what}\",\"args\":{{\"name\":\""
                );
                b.extend_from_slice(comm);
                b.extend_from_slice(b"\"}}");
            }
        } else {
            let _ = write!(
                b,
                ",\n{{\"ts\":0,\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"name\":\"thread_name\",\"args\":{{\"name\":\"[{tid}] "
            );
            b.extend_from_slice(comm);
            b.extend_from_slice(b"\"}}");
        }
    }
}

impl Chrome<'_, '_> {
    fn flush(&mut self) {
        if self.buf.len() >= FLUSH_AT && self.err.is_none() {
            if let Err(e) = self.out.write_all(&self.buf) {
                self.err = Some(e);
            }
            self.buf.clear();
        }
    }
}

const FLUSH_AT: usize = 1 << 16;

impl WalkView for ChromeOptions {
    /// `uftrace dump --chrome`.
    fn render(&self, v: Walked<'_>) -> io::Result<()> {
        let (data, out, warn) = (v.data, v.out, v.warn);
        let comms = perf_comms(data, self.walk.tids.as_deref());
        let mut w = Walk::new(data, &self.walk, v.mode);
        let mut c = Chrome {
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            out,
            err: None,
            last_comma: false,
            lost: 0,
            show_args: self.show_args,
            name: Vec::new(),
            args: Vec::new(),
            data,
            utc_offset_ns: match data.flavor {
                crate::Flavor::V0_13 => 0,
                // `strtol(utc_offset) * 1e9` as an unsigned 64-bit number
                _ => (crate::header::c_atol(data.info.utc_offset.as_deref().unwrap_or("0")) as u64)
                    .wrapping_mul(1_000_000_000),
            },
        };
        c.buf.extend_from_slice(b"{\"traceEvents\":[\n");
        for tf in &data.tasks {
            let comm: &[u8] = match comms.iter().find(|(t, _)| *t == tf.tid) {
                Some((_, c)) => c,
                None => data.comm(tf.tid).as_bytes(),
            };
            for what in ["process_name", "thread_name"] {
                let _ = write!(
                    c.buf,
                    "{{\"ts\":0,\"ph\":\"M\",\"pid\":{},\"name\":\"{what}\",\"args\":{{\"name\":\"[{}] ",
                    tf.tid, tf.tid
                );
                c.buf.extend_from_slice(comm);
                c.buf.extend_from_slice(b"\"}},\n");
            }
        }
        dump_replay(&mut w, &mut c, self.walk.no_libcall);
        w.warn_damage(warn)?;
        if let Some(e) = c.err.take() {
            return Err(e);
        }
        footer(&mut c.buf, data, self);
        c.out.write_all(&c.buf)?;
        if c.lost != 0 {
            writeln!(
                warn,
                "uftrace: Some of function trace records are lost. ({} times shown)",
                c.lost
            )?;
            writeln!(
                warn,
                "uftrace: The output json format may not show the correct view in chrome browser."
            )?;
        }
        Ok(())
    }

    fn walk_options(&self) -> &WalkOptions {
        &self.walk
    }
}

fn footer(b: &mut Vec<u8>, data: &UftraceData, opts: &ChromeOptions) {
    let recorded = match &opts.recorded_time {
        Some(t) => t.clone(),
        None => {
            let Ok(m) = std::fs::metadata(data.dir.join("info")) else {
                // uftrace prints no footer when it cannot stat the file
                return;
            };
            let secs = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs() as i64);
            opts.zone
                .localtime(secs)
                .map(|t| t.ctime())
                .unwrap_or_default()
        }
    };
    b.extend_from_slice(b"\n], \"displayTimeUnit\": \"ns\", \"metadata\": {\n");
    let version = match opts.version.as_str() {
        "" => data.flavor.version_string(),
        v => v,
    };
    let _ = writeln!(b, "\"version\":\"uftrace {version}\",");
    let _ = writeln!(b, "\"recorded_time\":\"{recorded}\",");
    if data.header.info_mask & info_bit::CMDLINE != 0 {
        b.extend_from_slice(b"\"command_line\":\"");
        b.extend_from_slice(data.info.cmdline.as_deref().unwrap_or("").as_bytes());
        b.extend_from_slice(b"\"\n");
    }
    b.extend_from_slice(b"} }\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes() {
        let mut v = Vec::new();
        for c in b"a\"\\\n\t\x01" {
            json_escape_byte(&mut v, *c);
        }
        assert_eq!(v, b"a\\\"\\\\\\\\n\\\\t\\\\x01");
    }
}
