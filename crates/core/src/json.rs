//! JSON string literals, as every JSON writer of the workspace writes them
//! (`report --json`, Chrome JSON, field trees).

/// Append `s` as a JSON string literal (invalid UTF-8 is replaced).
pub fn json_str(out: &mut Vec<u8>, s: &[u8]) {
    if !s.is_ascii() {
        return json_str_utf8(out, s);
    }
    // ASCII (the usual case): copy the runs between the bytes to escape
    out.push(b'"');
    let mut rest = s;
    while let Some(i) = rest
        .iter()
        .position(|&c| c < 0x20 || c == b'"' || c == b'\\')
    {
        out.extend_from_slice(&rest[..i]);
        match rest[i] {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            c => out.extend_from_slice(format!("\\u{:04x}", c).as_bytes()),
        }
        rest = &rest[i + 1..];
    }
    out.extend_from_slice(rest);
    out.push(b'"');
}

/// [`json_str`] for text with bytes above 0x7f.
fn json_str_utf8(out: &mut Vec<u8>, s: &[u8]) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_fast_path_escapes_as_the_general_one() {
        for s in [&b"plain"[..], b"a\"b\\c\nd\re\tf\x01g\x1f", b"", b"\"\""] {
            let mut fast = Vec::new();
            json_str(&mut fast, s);
            let mut slow = Vec::new();
            json_str_utf8(&mut slow, s);
            assert_eq!(fast, slow);
        }
    }

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
