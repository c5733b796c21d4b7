//! Integers as decimal text, appended to a byte buffer on the printers'
//! hot paths.
//!
//! A text printer appends many short numbers; appending each from a
//! variable-length slice costs a `memcpy` call per number, and writing
//! digits one by one into a buffer that is then copied stalls the copy
//! (store forwarding). These functions compute up to eight digits at once
//! in a register and append them with one 8-byte store, then cut the
//! buffer back to the digits written.

/// The eight decimal digits of `x` (below 10^8) as ASCII in a `u64`,
/// the most significant digit in the lowest byte (first in memory when
/// stored little-endian), leading zeros included.
///
/// Computed in registers, all lanes at once: the number is split into two
/// 32-bit lanes of four digits, each into two 16-bit lanes of two digits,
/// each into two bytes. Division by 100 of a value below 10,000 is
/// `(v * 5243) >> 19` and by 10 of a value below 100 is `(v * 103) >> 10`
/// (both exact in those ranges); what spills from one lane into the next
/// is masked off.
#[inline]
fn eight(x: u64) -> u64 {
    let v = (x / 10_000) | ((x % 10_000) << 32);
    let h = ((v * 5243) >> 19) & 0x0000_007F_0000_007F;
    let v = h | ((v - h * 100) << 16);
    let t = ((v * 103) >> 10) & 0x000F_000F_000F_000F;
    let v = t | ((v - t * 10) << 8);
    v + 0x3030_3030_3030_3030
}

/// The eight decimal digits of `x` (below 10^8) as ASCII, leading zeros
/// included, for a caller that writes them at a place of its own.
#[inline(always)]
pub fn eight_digits(x: u64) -> [u8; 8] {
    eight(x).to_le_bytes()
}

/// Powers of ten that fit in a `u64`.
const POW10: [u64; 20] = {
    let mut p = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// How many decimal digits `x` has (at least 1).
#[inline]
pub fn decimal_len(x: u64) -> usize {
    // From the number of bits: log10(2) is about 1233 / 4096, which gives
    // the number of digits of 2^(bits-1), or one less.
    let bits = 64 - (x | 1).leading_zeros();
    let t = (bits * 1233) >> 12;
    (t as usize + (x >= POW10[t as usize]) as usize).max(1)
}

/// Append the last `n` (1 to 8) of the eight digits in `d` (see
/// [`eight`]) with one 8-byte store.
#[inline(always)]
fn append(out: &mut Vec<u8>, d: u64, n: usize) {
    let l = out.len();
    out.extend_from_slice(&(d >> (8 * (8 - n))).to_le_bytes());
    out.truncate(l + n);
}

/// Append `x` with exactly `n` digits (`n` at least `decimal_len(x)`,
/// at most 20): zeros in front.
#[inline]
fn put_n(out: &mut Vec<u8>, x: u64, n: usize) {
    const E8: u64 = 100_000_000;
    // Eight digits at a time, each group stored straight into `out` (a
    // group made in a scratch array and copied from there would be read
    // back before its stores are done, which stalls).
    if n <= 8 {
        append(out, eight(x), n);
    } else if n == 9 {
        // (the nanoseconds of every timestamp)
        out.push(b'0' + (x / E8) as u8);
        append(out, eight(x % E8), 8);
    } else if n <= 16 {
        append(out, eight(x / E8), n - 8);
        append(out, eight(x % E8), 8);
    } else {
        let rest = x % (E8 * E8);
        append(out, eight(x / (E8 * E8)), n - 16);
        append(out, eight(rest / E8), 8);
        append(out, eight(rest % E8), 8);
    }
}

/// Append `x` in decimal.
///
/// Inlined where it is called: most numbers a printer writes are short,
/// and for them a call (with the registers it saves) costs more than the
/// digits. Numbers of nine digits and more take a call.
#[inline(always)]
pub fn put_u64(out: &mut Vec<u8>, x: u64) {
    if x < 10 {
        out.push(b'0' + x as u8);
    } else if x < 100_000_000 {
        append(out, eight(x), decimal_len(x));
    } else {
        put_long(out, x);
    }
}

/// [`put_u64`] of numbers of nine digits and more.
#[inline(never)]
fn put_long(out: &mut Vec<u8>, x: u64) {
    put_n(out, x, decimal_len(x));
}

/// Append `x` in decimal, with a `-` when negative.
#[inline]
pub fn put_i64(out: &mut Vec<u8>, x: i64) {
    if x < 0 {
        out.push(b'-');
    }
    put_u64(out, x.unsigned_abs());
}

/// Append `x` in decimal with at least `width` digits (zeros in front).
#[inline]
pub fn put_padded(out: &mut Vec<u8>, x: u64, width: usize) {
    if width < 20 && x < POW10[width] {
        // (fits the width: no need to count its digits)
        put_n(out, x, width.max(1));
        return;
    }
    let n = decimal_len(x);
    if width > 20 {
        out.resize(out.len() + (width - n.max(20)), b'0');
    }
    put_n(out, x, n.max(width.min(20)));
}

/// Lower-case hexadecimal digits.
pub const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";
/// Upper-case hexadecimal digits.
pub const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Append `x` in hexadecimal (no prefix) with the digits of `table`
/// ([`HEX_LOWER`] or [`HEX_UPPER`]), built in a register.
#[inline]
pub fn put_hex(out: &mut Vec<u8>, x: u64, table: &[u8; 16]) {
    let n = (64 - x.leading_zeros()).max(1).div_ceil(4) as usize;
    // The two usual tables: every digit at once (what follows a digit
    // below 10 in ASCII is 7 places before `A`, 39 before `a`).
    let after_nine = if table == HEX_UPPER {
        7
    } else if table == HEX_LOWER {
        39
    } else {
        0
    };
    if after_nine > 0 {
        let l = out.len();
        out.extend_from_slice(&(hex_ascii(x, after_nine) >> (8 * (16 - n))).to_le_bytes());
        out.truncate(l + n);
        return;
    }
    let mut acc = 0u128;
    let mut v = x;
    for i in (0..n).rev() {
        acc |= (table[(v & 15) as usize] as u128) << (8 * i);
        v >>= 4;
    }
    let l = out.len();
    out.extend_from_slice(&acc.to_le_bytes());
    out.truncate(l + n);
}

/// The sixteen hexadecimal digits of `x` as ASCII in a `u128`, the most
/// significant first in memory; `after_nine` is how far the digit after
/// `9` is from `:` (7 for `A`, 39 for `a`).
#[inline(always)]
fn hex_ascii(x: u64, after_nine: u64) -> u128 {
    let ascii = |v: u32| {
        // one nibble per byte, the most significant last...
        let mut d = v as u64;
        d = (d | (d << 16)) & 0x0000_FFFF_0000_FFFF;
        d = (d | (d << 8)) & 0x00FF_00FF_00FF_00FF;
        d = (d | (d << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
        // ... then a digit per byte (no carry passes a byte)
        let above = ((d + 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101;
        (d + 0x3030_3030_3030_3030 + above * after_nine).swap_bytes()
    };
    ascii((x >> 32) as u32) as u128 | (ascii(x as u32) as u128) << 64
}

// ---------------------------------------------------------------------
// Writing at a place in a slice
//
// A printer that writes many numbers and short texts one after the other
// can make room for all of them at once and write each at a place it
// keeps in a register: no length of a `Vec` to load and store around
// every byte it writes.

/// Bytes from its place that [`write_u64`], [`write_i64`] and
/// [`write_hex_upper`] may write to (the number is shorter: what comes
/// after it is left to be overwritten).
pub const ROOM: usize = 32;

/// The `ROOM` bytes of `buf` from `at`. Panics when `buf` is shorter: the
/// caller makes the room.
#[inline(always)]
fn room(buf: &mut [u8], at: usize) -> &mut [u8; ROOM] {
    let end = at + ROOM;
    match <&mut [u8; ROOM]>::try_from(&mut buf[at..end]) {
        Ok(w) => w,
        Err(_) => unreachable!("a slice of ROOM bytes"),
    }
}

/// Write `x` in decimal at `buf[at..]` (at least [`ROOM`] bytes long);
/// the place after it.
#[inline(always)]
pub fn write_u64(buf: &mut [u8], at: usize, x: u64) -> usize {
    const E8: u64 = 100_000_000;
    let w = room(buf, at);
    if x < 10 {
        w[0] = b'0' + x as u8;
        return at + 1;
    }
    let n = decimal_len(x);
    if n <= 8 {
        w[..8].copy_from_slice(&(eight(x) >> (8 * (8 - n))).to_le_bytes());
    } else if n <= 16 {
        w[..8].copy_from_slice(&(eight(x / E8) >> (8 * (16 - n))).to_le_bytes());
        w[n - 8..n].copy_from_slice(&eight(x % E8).to_le_bytes());
    } else {
        let rest = x % (E8 * E8);
        w[..8].copy_from_slice(&(eight(x / (E8 * E8)) >> (8 * (24 - n))).to_le_bytes());
        w[n - 16..n - 8].copy_from_slice(&eight(rest / E8).to_le_bytes());
        w[n - 8..n].copy_from_slice(&eight(rest % E8).to_le_bytes());
    }
    at + n
}

/// [`write_u64`] with a `-` when `x` is negative (`buf` has [`ROOM`] + 1
/// bytes from `at`).
#[inline(always)]
pub fn write_i64(buf: &mut [u8], at: usize, x: i64) -> usize {
    let mut at = at;
    if x < 0 {
        buf[at] = b'-';
        at += 1;
    }
    write_u64(buf, at, x.unsigned_abs())
}

/// Write `x` in upper-case hexadecimal (no prefix) at `buf[at..]` (at
/// least [`ROOM`] bytes long); the place after it.
#[inline(always)]
pub fn write_hex_upper(buf: &mut [u8], at: usize, x: u64) -> usize {
    let n = (64 - x.leading_zeros()).max(1).div_ceil(4) as usize;
    let w = room(buf, at);
    w[..16].copy_from_slice(&(hex_ascii(x, 7) >> (8 * (16 - n))).to_le_bytes());
    at + n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers written at a place are the numbers appended, and nothing
    /// before the place changes.
    #[test]
    fn written_at_a_place_as_appended() {
        let mut vals: Vec<u64> = vec![0, u64::MAX, u64::MAX - 1, i64::MAX as u64];
        for p in 0..20 {
            let t = 10u64.pow(p);
            vals.extend([t - 1, t, t + 1, t.wrapping_mul(7) / 3]);
        }
        for k in 0..64 {
            vals.extend([(1u64 << k) - 1, 1u64 << k]);
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            vals.extend([x, x >> (x % 64)]);
        }
        for v in vals {
            for at in [0, 3] {
                let mut buf = vec![b'#'; at + ROOM + 1];
                let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
                put_u64(&mut a, v);
                put_i64(&mut b, v as i64);
                put_hex(&mut c, v, HEX_UPPER);
                type Write = fn(&mut [u8], usize, u64) -> usize;
                let writes: [(Write, &Vec<u8>); 3] = [
                    (write_u64, &a),
                    (|b, at, v| write_i64(b, at, v as i64), &b),
                    (write_hex_upper, &c),
                ];
                for (write, want) in writes {
                    let w = write(&mut buf, at, v);
                    assert!(buf[..at].iter().all(|&c| c == b'#'));
                    assert_eq!(&buf[at..w], &want[..], "{v}");
                    buf[at..].fill(b'#');
                }
            }
        }
    }

    #[test]
    fn digit_counts() {
        let mut vals = vec![0u64, u64::MAX];
        for k in 0..64 {
            vals.extend([(1u64 << k) - 1, 1u64 << k, (1u64 << k) + 1]);
        }
        for p in 0..20 {
            let t = 10u64.pow(p);
            vals.extend([t - 1, t, t + 1]);
        }
        for v in vals {
            assert_eq!(decimal_len(v), v.to_string().len(), "{v}");
        }
    }

    #[test]
    fn same_as_std_formatting() {
        let mut vals: Vec<u64> = vec![0, 1, 9, 10, 99, 100, 101, 999, 1000, u64::MAX, u64::MAX - 1];
        for v in 0..200_000u64 {
            let mut o = Vec::new();
            put_u64(&mut o, v * 499);
            assert_eq!(o, (v * 499).to_string().as_bytes());
        }
        for p in 0..20 {
            let t = 10u64.pow(p);
            vals.extend([t - 1, t, t + 1, t.wrapping_mul(7) / 3]);
        }
        for &v in &vals {
            let mut o = Vec::new();
            put_u64(&mut o, v);
            assert_eq!(o, v.to_string().as_bytes());
            for w in 0..23 {
                let mut o = b"x".to_vec();
                put_padded(&mut o, v, w);
                assert_eq!(o, format!("x{v:0w$}").as_bytes(), "{v} {w}");
            }
            let mut o = b"x".to_vec();
            put_hex(&mut o, v, HEX_LOWER);
            assert_eq!(o, format!("x{v:x}").as_bytes());
            let mut o = Vec::new();
            put_hex(&mut o, v, HEX_UPPER);
            assert_eq!(o, format!("{v:X}").as_bytes());
            for s in [v as i64, (v as i64).wrapping_neg(), i64::MIN, i64::MAX] {
                let mut o = Vec::new();
                put_i64(&mut o, s);
                assert_eq!(o, s.to_string().as_bytes());
            }
        }
    }
}
