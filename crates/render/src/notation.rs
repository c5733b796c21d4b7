//! babeltrace2's notation of single values, shared by its two printers
//! (this crate's [`crate::babeltrace`] over the common model, and the CTF
//! reader's own `tracemux_ctf::text`): integers in a display base, floats
//! as C's `%g`, quoted strings with babeltrace2's escapes.
//!
//! Both printers are byte-for-byte babeltrace2; the CTF one is on the hot
//! path of `report`, so these write straight into the output buffer and
//! never allocate on the common paths.

use std::io::Write as _;

use tracemux_core::digits;
use tracemux_core::model::Base;

/// Upper-case hexadecimal digits (babeltrace2 prints `0xFF`).
pub const HEX: &[u8; 16] = digits::HEX_UPPER;

/// An integer value and its signedness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Int {
    U(u64),
    S(i64),
}

/// An integer of `len` bits in babeltrace2's notation for `base`: decimal;
/// `0x` + upper-case hex masked to whole nibbles of `len`; `0` + octal
/// (a negative value masked to whole octal digits of `len`); `0b` + `len`
/// binary digits.
#[inline]
pub fn int(out: &mut Vec<u8>, base: Base, v: Int, len: u32) {
    let u = match v {
        Int::U(x) => x,
        Int::S(x) => x as u64,
    };
    match base {
        Base::Dec => match v {
            Int::U(x) => digits::put_u64(out, x),
            Int::S(x) => digits::put_i64(out, x),
        },
        Base::Hex => {
            let mut x = u;
            let r = len.saturating_add(3) & !3;
            if r < 64 {
                x &= (1u64 << r) - 1;
            }
            out.extend_from_slice(b"0x");
            radix(out, x, 4);
        }
        Base::Oct => {
            let mut x = u;
            if matches!(v, Int::S(_)) && len < 64 {
                let r = ((len.max(1) - 1) / 3 + 1) * 3;
                if r < 64 {
                    x &= (1u64 << r) - 1;
                }
            }
            out.push(b'0');
            radix(out, x, 3);
        }
        Base::Bin => {
            out.extend_from_slice(b"0b");
            for i in (0..len.clamp(1, 64)).rev() {
                out.push(if u >> i & 1 == 1 { b'1' } else { b'0' });
            }
        }
    }
}

/// `x` in base 2^`bits` (3: octal, 4: hex), upper-case, no prefix.
pub fn radix(out: &mut Vec<u8>, x: u64, bits: u32) {
    if bits == 4 {
        return digits::put_hex(out, x, digits::HEX_UPPER);
    }
    let mask = (1u64 << bits) - 1;
    let n = ((64 - x.leading_zeros()).max(1)).div_ceil(bits) as usize;
    let mut v = x;
    let l = out.len();
    out.resize(l + n, b'0');
    for c in out[l..].iter_mut().rev() {
        *c = HEX[(v & mask) as usize];
        v >>= bits;
    }
}

/// `v` as C's `printf("%g", v)` prints it: 6 significant digits, `%e`
/// style when the exponent is below -4 or at least 6, trailing zeros
/// removed.
pub fn fmt_g(v: f64) -> String {
    let mut s = Vec::new();
    push_g(&mut s, v);
    String::from_utf8(s).unwrap_or_default()
}

/// Append `v` formatted as `%g`.
pub fn push_g(out: &mut Vec<u8>, v: f64) {
    if tracemux_core::bytes::put_nonfinite(out, v) {
        return;
    }
    if v == 0.0 {
        out.extend_from_slice(if v.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    let a = v.abs();
    if a < 1e6 && (a as u32) as f64 == a {
        // (a whole number of at most 6 digits: `%g` prints its digits)
        if v < 0.0 {
            out.push(b'-');
        }
        tracemux_core::digits::put_u64(out, a as u64);
        return;
    }
    if g_fast(out, v) {
        return;
    }
    // The exponent C would use: that of `%.5e`.
    let mut e = [0u8; 40];
    let n = {
        let mut w = &mut e[..];
        let _ = write!(w, "{v:.5e}");
        40 - w.len()
    };
    let e = &e[..n];
    let epos = e.iter().position(|&c| c == b'e').unwrap_or(n);
    let x: i32 = std::str::from_utf8(&e[epos + 1..])
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    if (-4..6).contains(&x) {
        let prec = (5 - x) as usize;
        let start = out.len();
        let _ = write!(out, "{v:.prec$}");
        strip_zeros(out, start);
    } else {
        let start = out.len();
        out.extend_from_slice(&e[..epos]);
        strip_zeros(out, start);
        put_exponent(out, x);
    }
}

const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `%g` without big-number arithmetic: scale to 6 significant digits with
/// one exact-power multiplication or division (correctly rounded, so the
/// result is within 1e-9 of the exact scaled value) and round; give up
/// (`false`) when the value is that close to a rounding tie, or outside
/// the range of exact powers of ten.
fn g_fast(out: &mut Vec<u8>, v: f64) -> bool {
    let a = v.abs();
    // floor(log10(a)), or one off (corrected below): from the binary
    // exponent times log10(2) (78913 / 2^18), with no call to log10.
    let e2 = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let mut x = (e2 * 78913) >> 18;
    if !(-300..=300).contains(&x) || e2 == -1023 {
        return false;
    }
    let scale = |x: i32| -> Option<f64> {
        let k = 5 - x;
        if k >= 0 {
            POW10.get(k as usize).map(|p| a * p)
        } else {
            POW10.get((-k) as usize).map(|p| a / p)
        }
    };
    let Some(mut t) = scale(x) else {
        return false;
    };
    // (the estimate can be one off)
    if t >= 999_999.5 + 1e-7 {
        x += 1;
        t = match scale(x) {
            Some(t) => t,
            None => return false,
        };
    } else if t < 99_999.5 {
        x -= 1;
        t = match scale(x) {
            Some(t) => t,
            None => return false,
        };
    }
    // (t is positive, below 10^7 unless the estimate was far off: then
    // `m` is out of range)
    let fl = (t as u64) as f64;
    let frac = t - fl;
    if (frac - 0.5).abs() < 1e-7 {
        return false;
    }
    let mut m = fl as u64 + (frac > 0.5) as u64;
    if m >= 1_000_000 {
        m /= 10;
        x += 1;
    }
    if !(100_000..1_000_000).contains(&m) {
        return false;
    }
    let mut d = [0u8; 6];
    let mut r = m;
    for i in (0..6).rev() {
        d[i] = b'0' + (r % 10) as u8;
        r /= 10;
    }
    // Significant digits without trailing zeros.
    let mut n = 6;
    while n > 1 && d[n - 1] == b'0' {
        n -= 1;
    }
    if v < 0.0 {
        out.push(b'-');
    }
    if (-4..6).contains(&x) {
        if x >= 0 {
            let int = (x + 1) as usize;
            out.extend_from_slice(&d[..int]);
            if n > int {
                out.push(b'.');
                out.extend_from_slice(&d[int..n]);
            }
        } else {
            out.extend_from_slice(b"0.");
            for _ in 0..(-x - 1) {
                out.push(b'0');
            }
            out.extend_from_slice(&d[..n]);
        }
    } else {
        out.push(d[0]);
        if n > 1 {
            out.push(b'.');
            out.extend_from_slice(&d[1..n]);
        }
        put_exponent(out, x);
    }
    true
}

/// C's exponent of `%e`/`%g`: `e`, the sign, at least two digits.
fn put_exponent(out: &mut Vec<u8>, x: i32) {
    out.push(b'e');
    out.push(if x < 0 { b'-' } else { b'+' });
    let a = x.unsigned_abs();
    if a < 10 {
        out.push(b'0');
    }
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(a).as_bytes());
}

fn strip_zeros(out: &mut Vec<u8>, start: usize) {
    if out[start..].contains(&b'.') {
        while out.last() == Some(&b'0') {
            out.pop();
        }
        if out.last() == Some(&b'.') {
            out.pop();
        }
    }
}

/// The bytes [`quoted`] escapes: controls, DEL, `\\`, `'`, `"` and `?`.
const ESCAPED: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = c < 0x20 || c == 0x7f || matches!(c as u8, b'\\' | b'\'' | b'"' | b'?');
        c += 1;
    }
    t
};

/// The position of the first byte of `s` that [`quoted`] escapes (the
/// length of `s` without one): eight bytes at a time.
#[inline]
fn first_escaped(s: &[u8]) -> usize {
    const L: u64 = 0x0101_0101_0101_0101;
    const H: u64 = 0x8080_8080_8080_8080;
    // (a high bit set in each byte below `n`, or equal to 0; a byte above
    // the first one found may be flagged wrongly: those are looked at one
    // by one)
    let below = |w: u64, n: u64| w.wrapping_sub(L * n) & !w & H;
    let zero = |w: u64| below(w, 1);
    let mut words = s.chunks_exact(8);
    let mut at = 0;
    for ch in &mut words {
        let w = u64::from_le_bytes(<[u8; 8]>::try_from(ch).unwrap_or_default());
        let hit = below(w, 0x20)
            | zero(w ^ (L * 0x7f))
            | zero(w ^ (L * b'"' as u64))
            | zero(w ^ (L * b'\'' as u64))
            | zero(w ^ (L * b'?' as u64))
            | zero(w ^ (L * b'\\' as u64));
        if hit != 0 {
            break;
        }
        at += 8;
    }
    at + s[at..]
        .iter()
        .position(|&c| ESCAPED[c as usize])
        .unwrap_or(s.len() - at)
}

/// A string as babeltrace2 prints it: double-quoted, with C escapes for
/// `\\`, `'`, `"`, `?` and control characters (`\xNN` for the others);
/// other bytes as they are. Stops at the first NUL.
pub fn quoted(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    // Runs of bytes that need no escape are copied at once.
    let mut s = s;
    loop {
        let n = first_escaped(s);
        out.extend_from_slice(&s[..n]);
        if n == s.len() {
            break;
        }
        let c = s[n];
        s = &s[n + 1..];
        match c {
            0 => break,
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\'' => out.extend_from_slice(b"\\'"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'?' => out.extend_from_slice(b"\\?"),
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x1b => out.extend_from_slice(b"\\e"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x0b => out.extend_from_slice(b"\\v"),
            c if c < 0x20 || c == 0x7f => {
                out.extend_from_slice(b"\\x");
                out.push(HEX[(c >> 4) as usize].to_ascii_lowercase());
                out.push(HEX[(c & 15) as usize].to_ascii_lowercase());
            }
            c => out.push(c),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_like_printf() {
        for (v, want) in [
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (1.5, "1.5"),
            (1e-7, "1e-07"),
            (0.333333333, "0.333333"),
            (3.25159265, "3.25159"),
            (-23.0, "-23"),
            (299.792458, "299.792"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (1e100, "1e+100"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (2.818281828, "2.81828"),
            (999999.5, "1e+06"),
        ] {
            assert_eq!(fmt_g(v), want, "{v}");
        }
    }

    #[test]
    fn fast_g_agrees_with_the_exact_path() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        for i in 0..200_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let v = match i % 4 {
                0 => f64::from_bits(seed),
                1 => (seed % 2_000_000) as f64 / 7.0,
                2 => f32::from_bits(seed as u32) as f64,
                _ => (seed % 1000) as f64 * 0.001 + (seed % 7) as f64 * 1e5,
            };
            if !v.is_finite() || v == 0.0 {
                continue;
            }
            let mut fast = Vec::new();
            if g_fast(&mut fast, v) {
                assert_eq!(String::from_utf8(fast).unwrap(), exact_g(v), "{v:e}");
            }
        }
    }

    /// `%g` by the exact path (std's correctly rounded formatting).
    fn exact_g(v: f64) -> String {
        let mut slow = Vec::new();
        let e = format!("{v:.5e}");
        let x: i32 = e.split('e').nth(1).unwrap().parse().unwrap();
        if (-4..6).contains(&x) {
            let prec = (5 - x) as usize;
            slow.extend_from_slice(format!("{v:.prec$}").as_bytes());
            strip_zeros(&mut slow, 0);
        } else {
            let m = e.split('e').next().unwrap();
            slow.extend_from_slice(m.as_bytes());
            strip_zeros(&mut slow, 0);
            slow.extend_from_slice(
                format!("e{}{:02}", if x < 0 { '-' } else { '+' }, x.abs()).as_bytes(),
            );
        }
        String::from_utf8(slow).unwrap()
    }

    /// Whole numbers (printed as digits below a million) and the numbers
    /// next to them print as the exact path does.
    #[test]
    fn whole_numbers_like_printf() {
        let mut checked = 0;
        for k in (0..1_100_000i64).step_by(7).chain(999_990..1_000_010) {
            for v in [k as f64, -(k as f64), k as f64 + 0.5, k as f64 - 1e-9] {
                if v != 0.0 {
                    assert_eq!(fmt_g(v), exact_g(v), "{v:e}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 600_000);
    }

    #[test]
    fn ints_like_bt2() {
        let f = |v, len, base| {
            let mut o = Vec::new();
            int(&mut o, base, v, len);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(f(Int::U(255), 8, Base::Hex), "0xFF");
        assert_eq!(f(Int::S(-1), 8, Base::Hex), "0xFF");
        assert_eq!(f(Int::S(-1), 5, Base::Hex), "0xFF");
        assert_eq!(f(Int::U(0x7f), 64, Base::Hex), "0x7F");
        assert_eq!(f(Int::U(0), 32, Base::Hex), "0x0");
        assert_eq!(f(Int::U(5), 4, Base::Bin), "0b0101");
        assert_eq!(f(Int::S(-1), 4, Base::Oct), "077");
        assert_eq!(f(Int::U(8), 8, Base::Oct), "010");
        assert_eq!(f(Int::S(-5), 8, Base::Dec), "-5");
    }

    /// The escaped bytes are found wherever they are, eight at a time or
    /// not.
    #[test]
    fn first_escaped_finds_every_one() {
        let plain: Vec<u8> = (0..=255u8).filter(|&c| !ESCAPED[c as usize]).collect();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut n = 0;
        for len in 0..40 {
            for c in 0..=255u8 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let mut s: Vec<u8> = (0..len)
                    .map(|i| plain[((x >> (i % 8 * 8)) as usize + i) % plain.len()])
                    .collect();
                let want = if len > 0 {
                    let at = x as usize % len;
                    s[at] = c;
                    if ESCAPED[c as usize] {
                        at
                    } else {
                        len
                    }
                } else {
                    0
                };
                assert_eq!(first_escaped(&s), want, "{s:?}");
                n += 1;
            }
        }
        assert!(n > 10_000);
    }

    #[test]
    fn escapes() {
        let mut o = Vec::new();
        quoted(&mut o, b"a\"b\\c\td\x01?'\0zz");
        assert_eq!(o, b"\"a\\\"b\\\\c\\td\\x01\\?\\'\"");
    }
}
