//! JSON lines: one object per record.
//!
//! Schema (see the README):
//! `{"type":"event","ts":NS,"cpu":N,"buffer":"NAME","system":"S","event":"E","pid":P,"comm":"C","fields":{...}}`
//! and `{"type":"lost","ts":NS,"cpu":N,"buffer":"NAME","count":N|null}`.
//! Integer fields are JSON numbers, character data strings, arrays of
//! integers JSON arrays, other bytes arrays of byte values.

use crate::fmt::dec;
use tracemux_core::model::{Event, Lost, TraceMeta, Value};

/// Append `s` as a JSON string literal (invalid UTF-8 is replaced).
pub fn json_str(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    let s = String::from_utf8_lossy(s);
    for ch in s.chars() {
        match ch {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
            }
            c => {
                let mut b = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
    out.push(b'"');
}

fn buffer_name(meta: &TraceMeta, stream: u32) -> &str {
    meta.streams
        .get(stream as usize)
        .and_then(|s| meta.buffers.get(s.buffer as usize))
        .map_or("", |b| b.name.as_str())
}

pub fn write_event(out: &mut Vec<u8>, meta: &TraceMeta, ev: &Event<'_>) {
    out.extend_from_slice(b"{\"type\":\"event\",\"ts\":");
    dec(out, ev.ts);
    out.extend_from_slice(b",\"cpu\":");
    dec(out, ev.cpu);
    out.extend_from_slice(b",\"buffer\":");
    json_str(out, buffer_name(meta, ev.stream).as_bytes());
    match ev.class {
        Some(c) => {
            out.extend_from_slice(b",\"system\":");
            json_str(out, c.system.as_bytes());
            out.extend_from_slice(b",\"event\":");
            json_str(out, c.name.as_bytes());
        }
        None => {
            out.extend_from_slice(b",\"system\":null,\"event\":null,\"type_id\":");
            dec(out, ev.type_id);
        }
    }
    out.extend_from_slice(b",\"pid\":");
    dec(out, ev.pid);
    out.extend_from_slice(b",\"comm\":");
    match (ev.pid, meta.tasks.get(ev.pid)) {
        (0, _) => json_str(out, b"<idle>"),
        (_, Some(c)) => json_str(out, c.as_bytes()),
        (_, None) => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"fields\":{");
    if let Some(c) = ev.class {
        for (i, f) in c.fields.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            json_str(out, f.name.as_bytes());
            out.push(b':');
            match f.value(ev.data, ev.endian) {
                Some(Value::Unsigned(v)) => dec(out, v),
                Some(Value::Signed(v)) => dec(out, v),
                Some(Value::Float(v)) if v.is_finite() => {
                    out.extend_from_slice(v.to_string().as_bytes())
                }
                Some(Value::Float(_)) => out.extend_from_slice(b"null"),
                Some(Value::Bool(b)) => out.extend_from_slice(if b { b"true" } else { b"false" }),
                Some(Value::Str(s)) => json_str(out, s),
                Some(
                    v @ Value::IntArray {
                        data, elem_size, ..
                    },
                ) => {
                    out.push(b'[');
                    let n = data.len() / elem_size.max(1) as usize;
                    for j in 0..n {
                        if j > 0 {
                            out.push(b',');
                        }
                        match v.array_elem(j) {
                            Some(x) => dec(out, x),
                            None => out.extend_from_slice(b"null"),
                        }
                    }
                    out.push(b']');
                }
                Some(Value::Bytes(b)) => {
                    out.push(b'[');
                    for (j, x) in b.iter().enumerate() {
                        if j > 0 {
                            out.push(b',');
                        }
                        dec(out, *x);
                    }
                    out.push(b']');
                }
                None => out.extend_from_slice(b"null"),
            }
        }
    }
    out.extend_from_slice(b"}}\n");
}

pub fn write_lost(out: &mut Vec<u8>, meta: &TraceMeta, l: &Lost) {
    out.extend_from_slice(b"{\"type\":\"lost\",\"ts\":");
    dec(out, l.ts);
    out.extend_from_slice(b",\"cpu\":");
    dec(out, l.cpu);
    out.extend_from_slice(b",\"buffer\":");
    json_str(out, buffer_name(meta, l.stream).as_bytes());
    out.extend_from_slice(b",\"count\":");
    match l.count {
        Some(c) => dec(out, c),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        let mut o = Vec::new();
        json_str(&mut o, b"a\"b\\\n\x01\xff");
        assert_eq!(
            String::from_utf8(o).unwrap(),
            "\"a\\\"b\\\\\\n\\u0001\u{fffd}\""
        );
    }
}
