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
        let all = ascii((x >> 32) as u32) as u128 | (ascii(x as u32) as u128) << 64;
        let l = out.len();
        out.extend_from_slice(&(all >> (8 * (16 - n))).to_le_bytes());
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

#[cfg(test)]
mod tests {
    use super::*;

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
