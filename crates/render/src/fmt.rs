//! Small allocation-free formatting helpers.

pub use tracemux_core::bytes::put_small;

/// Append `v` in decimal.
#[inline]
pub fn dec(out: &mut Vec<u8>, v: impl itoa::Integer) {
    let mut b = itoa::Buffer::new();
    put_small(out, b.format(v).as_bytes());
}

/// Append `v` in decimal, right-aligned in `width` with `pad`.
#[inline]
pub fn dec_pad(out: &mut Vec<u8>, v: impl itoa::Integer, width: usize, pad: u8) {
    let mut b = itoa::Buffer::new();
    let s = b.format(v).as_bytes();
    if s.len() < width {
        // C pads negative numbers with zeros after the sign
        if pad == b'0' && s.first() == Some(&b'-') {
            out.push(b'-');
            out.resize(out.len() + width - s.len(), b'0');
            out.extend_from_slice(&s[1..]);
            return;
        }
        out.resize(out.len() + width - s.len(), pad);
    }
    put_small(out, s);
}

/// Append `v` in decimal, left-aligned in `width`.
#[inline]
pub fn dec_left(out: &mut Vec<u8>, v: impl itoa::Integer, width: usize) {
    let start = out.len();
    dec(out, v);
    let n = out.len() - start;
    if n < width {
        out.resize(out.len() + width - n, b' ');
    }
}

/// Append `s` right-aligned in `width` (never truncated), like `%*s`.
#[inline]
pub fn str_right(out: &mut Vec<u8>, s: &[u8], width: usize) {
    if s.len() < width {
        out.resize(out.len() + width - s.len(), b' ');
    }
    put_small(out, s);
}

/// Append `v` in lowercase hex without prefix.
#[inline]
pub fn hex(out: &mut Vec<u8>, v: u64) {
    const D: &[u8; 16] = b"0123456789abcdef";
    if v == 0 {
        out.push(b'0');
        return;
    }
    let n = (64 - v.leading_zeros()).div_ceil(4) as usize;
    for i in (0..n).rev() {
        out.push(D[((v >> (i * 4)) & 15) as usize]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding() {
        let mut o = Vec::new();
        dec_pad(&mut o, 42u32, 5, b' ');
        dec_pad(&mut o, 7u32, 3, b'0');
        dec_pad(&mut o, -7i32, 4, b'0');
        dec_left(&mut o, 15i32, 5);
        str_right(&mut o, b"ab", 4);
        hex(&mut o, 0xabc);
        hex(&mut o, 0);
        assert_eq!(String::from_utf8(o).unwrap(), "   42007-00715     ababc0");
    }
}
