//! `trace-cmd report` style output (trace-cmd 3.1.6 with libtraceevent 1.7.1).
//!
//! One line per event: an instance prefix when the file has instances,
//! `%16s-%-5d [%03d]`, the timestamp, the event name padded to 20 columns,
//! then the fields. Lost events are shown as `CPU:N [M EVENTS DROPPED]`
//! before the first event after the loss.

use crate::fmt::{dec, dec_left, dec_pad, str_right};
use tracemux_core::model::{Event, Lost, PrintCtx, TraceMeta, Value};

/// How timestamps are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeFormat {
    /// `secs.usecs`, rounded to the nearest microsecond (the default for
    /// nanosecond clocks).
    Usecs,
    /// `secs.nsecs` (`-t`).
    Nsecs,
    /// The raw clock value (`x86-tsc`, `counter`, ... clocks).
    Raw,
}

/// The trace-cmd style printer, with its small amount of state.
#[derive(Debug, Clone)]
pub struct TraceCmdPrinter {
    pub time: TimeFormat,
    /// Buffer names (index = `BufferInfo` index); empty for the top buffer.
    names: Vec<String>,
    /// Width of the instance-name column; `None` when the file has no instances.
    prefix_width: Option<usize>,
    skip_prefix: bool,
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
        }
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

    /// One event in the raw (`-R`) view.
    pub fn write_raw(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, ev: &Event<'_>, ext: &[u8]) {
        self.prefix(out, meta, ev.stream);
        let Some(class) = ev.class else {
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
        str_right(out, comm, 16);
        out.push(b'-');
        dec_left(out, ev.pid, 5);
        out.extend_from_slice(b" [");
        dec_pad(out, ev.cpu, 3, b'0');
        out.push(b']');
        self.write_time(out, ev.ts);
        out.push(b' ');
        out.extend_from_slice(class.name.as_bytes());
        out.extend_from_slice(b": ");
        if class.name.len() < 20 {
            out.resize(out.len() + 20 - class.name.len(), b' ');
        }
        let start = out.len();
        match &class.printer {
            Some(p) => {
                let ctx = PrintCtx {
                    endian: ev.endian,
                    long_size: meta.long_size,
                    symbols: &meta.symbols,
                    printk: &meta.printk,
                    cpu: ev.cpu,
                };
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

/// ` name=value` for each field, from the decoded values (used when the
/// format provides no printer of its own).
pub fn generic_fields(out: &mut Vec<u8>, class: &tracemux_core::model::EventClass, ev: &Event<'_>) {
    for f in &class.fields {
        out.push(b' ');
        out.extend_from_slice(f.name.as_bytes());
        out.push(b'=');
        match f.value(ev.data, ev.endian) {
            Some(Value::Unsigned(v)) => dec(out, v),
            Some(Value::Signed(v)) => dec(out, v),
            Some(Value::Float(v)) => out.extend_from_slice(v.to_string().as_bytes()),
            Some(Value::Str(s)) => out.extend_from_slice(s),
            Some(Value::Bytes(b)) | Some(Value::IntArray { data: b, .. }) => {
                out.extend_from_slice(b"ARRAY[");
                for (i, x) in b.iter().enumerate() {
                    if i > 0 {
                        out.extend_from_slice(b", ");
                    }
                    out.extend_from_slice(format!("{x:02x}").as_bytes());
                }
                out.push(b']');
            }
            None => {}
        }
    }
}
