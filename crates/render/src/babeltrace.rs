//! The babeltrace2 text style (`sink.text.pretty`) for events of the common
//! model, so that a trace of any format can be printed the way babeltrace2
//! prints CTF:
//!
//! `[HH:MM:SS.nnnnnnnnn] (+S.nnnnnnnnn) system:name: { cpu_id = N }, { field = value, ... }`
//!
//! The first event's delta is `(+?.?????????)`. Times are the event
//! timestamps taken as nanoseconds since the Unix epoch and shown as UTC
//! time of day (a trace.dat timestamp counts from boot, so its "time of
//! day" is the time since boot, as babeltrace2 shows clocks without an
//! epoch origin). Integers are decimal, or `0x` + upper-case hex for
//! pointers and fields their producer marked hexadecimal; character data
//! is a quoted string with babeltrace2's escapes; integer arrays are
//! `[ [0] = v, [1] = v ]`. CTF traces are printed by the CTF reader's own
//! printer, which matches babeltrace2 byte for byte; this one is for the
//! other formats.

use tracemux_core::model::{
    visit_fields, Base, Event, FieldVisitor, Lost, PrintCtx, TraceMeta, Value,
};

use crate::fmt::{dec, dec_pad};

/// Prints events of one trace in the babeltrace2 text style.
#[derive(Debug, Default)]
pub struct BabeltracePrinter {
    last_ts: Option<u64>,
    /// No `(+delta)` column (babeltrace2's `--no-delta`).
    pub no_delta: bool,
}

impl BabeltracePrinter {
    pub fn new() -> Self {
        Self::default()
    }

    /// One event line.
    pub fn write_event(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, ev: &Event<'_>) {
        out.push(b'[');
        time_of_day(out, ev.ts);
        out.push(b']');
        if !self.no_delta {
            out.extend_from_slice(b" (");
            match self.last_ts {
                Some(prev) if ev.ts >= prev => {
                    out.push(b'+');
                    seconds(out, ev.ts - prev);
                }
                Some(prev) => {
                    out.push(b'-');
                    seconds(out, prev - ev.ts);
                }
                None => out.extend_from_slice(b"+?.?????????"),
            }
            out.push(b')');
        }
        self.last_ts = Some(ev.ts);
        out.push(b' ');
        match ev.class {
            Some(c) => {
                if !c.system.is_empty() {
                    out.extend_from_slice(c.system.as_bytes());
                    out.push(b':');
                }
                out.extend_from_slice(c.name.as_bytes());
            }
            None => {
                out.extend_from_slice(b"<unknown event ");
                dec(out, ev.type_id);
                out.push(b'>');
            }
        }
        out.extend_from_slice(b": { cpu_id = ");
        dec(out, ev.cpu);
        out.extend_from_slice(b" }");
        let ctx = PrintCtx {
            ts: ev.ts,
            classes: Some(&meta.classes),
            ..PrintCtx::new(
                ev.endian,
                meta.long_size,
                &meta.symbols,
                &meta.printk,
                ev.cpu,
            )
        };
        let mut fields = Fields { out, n: 0 };
        if visit_fields(ev, &ctx, &mut fields) {
            let n = fields.n;
            if n > 0 {
                out.extend_from_slice(b" }");
            }
        } else {
            out.extend_from_slice(b", { payload_size = ");
            dec(out, ev.data.len());
            out.extend_from_slice(b" }");
        }
        out.push(b'\n');
    }

    /// A loss marker, as a line of its own (babeltrace2 reports discarded
    /// events as a warning; in a text stream of another format there is no
    /// stderr position to match, so it is kept in band).
    pub fn write_lost(&mut self, out: &mut Vec<u8>, l: &Lost) {
        out.extend_from_slice(b"WARNING: Tracer discarded ");
        match l.count {
            Some(n) => dec(out, n),
            None => out.extend_from_slice(b"an unknown number of"),
        }
        out.extend_from_slice(b" events before [");
        time_of_day(out, l.ts);
        out.extend_from_slice(b"] on CPU ");
        dec(out, l.cpu);
        out.extend_from_slice(b".\n");
    }
}

struct Fields<'o> {
    out: &'o mut Vec<u8>,
    n: usize,
}

impl FieldVisitor for Fields<'_> {
    fn field(&mut self, name: &str, base: Base, value: Value<'_>) {
        self.out
            .extend_from_slice(if self.n == 0 { b", { " } else { b", " });
        self.n += 1;
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b" = ");
        write_value(self.out, base, value);
    }
}

fn int(out: &mut Vec<u8>, base: Base, v: i128) {
    match base {
        Base::Hex => {
            out.extend_from_slice(b"0x");
            out.extend_from_slice(format!("{:X}", v as u64).as_bytes());
        }
        Base::Oct => {
            out.push(b'0');
            out.extend_from_slice(format!("{:o}", v as u64).as_bytes());
        }
        Base::Bin => {
            out.extend_from_slice(b"0b");
            out.extend_from_slice(format!("{:b}", v as u64).as_bytes());
        }
        Base::Dec => dec(out, v),
    }
}

/// One value in babeltrace2's notation.
pub fn write_value(out: &mut Vec<u8>, base: Base, value: Value<'_>) {
    match value {
        Value::Unsigned(u) => int(out, base, u as i128),
        Value::Signed(i) => int(out, base, i as i128),
        Value::Float(f) => out.extend_from_slice(format!("{f}").as_bytes()),
        Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Value::Str(s) => quoted(out, s),
        v @ Value::IntArray {
            data, elem_size, ..
        } => {
            let n = data.len() / elem_size.max(1) as usize;
            out.push(b'[');
            for i in 0..n {
                out.extend_from_slice(if i == 0 { b" [" } else { b", [" });
                dec(out, i);
                out.extend_from_slice(b"] = ");
                int(out, base, v.array_elem(i).unwrap_or(0));
            }
            out.extend_from_slice(b" ]");
        }
        Value::Bytes(b) => {
            out.push(b'[');
            for (i, x) in b.iter().enumerate() {
                out.extend_from_slice(if i == 0 { b" [" } else { b", [" });
                dec(out, i);
                out.extend_from_slice(b"] = ");
                int(out, base, *x as i128);
            }
            out.extend_from_slice(b" ]");
        }
    }
}

/// A double-quoted string with babeltrace2's escapes (`\"`, `\\`, `\n`,
/// `\t`... and `\xHH` for other control bytes); UTF-8 is kept.
pub fn quoted(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &c in s {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0b => out.extend_from_slice(b"\\v"),
            0x0c => out.extend_from_slice(b"\\f"),
            c if c < 0x20 || c == 0x7f => {
                out.extend_from_slice(format!("\\x{c:02x}").as_bytes());
            }
            c => out.push(c),
        }
    }
    out.push(b'"');
}

/// `HH:MM:SS.nnnnnnnnn` of `ns` since the epoch, UTC.
pub fn time_of_day(out: &mut Vec<u8>, ns: u64) {
    let secs = ns / 1_000_000_000;
    let day = secs % 86_400;
    dec_pad(out, day / 3600, 2, b'0');
    out.push(b':');
    dec_pad(out, day / 60 % 60, 2, b'0');
    out.push(b':');
    dec_pad(out, day % 60, 2, b'0');
    out.push(b'.');
    dec_pad(out, ns % 1_000_000_000, 9, b'0');
}

/// `S.nnnnnnnnn`.
fn seconds(out: &mut Vec<u8>, ns: u64) {
    dec(out, ns / 1_000_000_000);
    out.push(b'.');
    dec_pad(out, ns % 1_000_000_000, 9, b'0');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_and_strings() {
        let mut o = Vec::new();
        time_of_day(&mut o, 86_400_000_000_000 + 3_723_000_000_042);
        assert_eq!(o, b"01:02:03.000000042");
        o.clear();
        quoted(&mut o, b"a\"b\\c\td\x01");
        assert_eq!(o, b"\"a\\\"b\\\\c\\td\\x01\"");
        o.clear();
        write_value(&mut o, Base::Hex, Value::Unsigned(0x7f));
        assert_eq!(o, b"0x7F");
    }
}
