//! A small C `printf` for the conversions the `print fmt` engine hands to
//! glibc: integers (`d i u x X o` with flags `- + space # 0`, width,
//! precision, `*`) and strings (`s` with `-`, width, precision). Output goes
//! straight into a byte buffer, without allocating.

/// A parsed printf conversion specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Spec {
    pub minus: bool,
    pub plus: bool,
    pub space: bool,
    pub hash: bool,
    pub zero: bool,
    /// Field width (`None`: not given; `*` is [`Spec::width_star`]).
    pub width: Option<u32>,
    pub width_star: bool,
    /// Precision (`Some(0)` for a bare `.`).
    pub prec: Option<u32>,
    pub prec_star: bool,
    /// The conversion character.
    pub conv: u8,
}

impl Spec {
    /// Parse a glibc conversion `%[flags][width][.prec][length]conv` that
    /// makes up all of `s`. Returns `None` for anything else (glibc then
    /// prints something odd; callers print the text as it is).
    pub fn parse(s: &str) -> Option<Spec> {
        let b = s.as_bytes();
        let mut i = 1;
        if b.first() != Some(&b'%') {
            return None;
        }
        let mut sp = Spec::default();
        while let Some(&c) = b.get(i) {
            match c {
                b'-' => sp.minus = true,
                b'+' => sp.plus = true,
                b' ' => sp.space = true,
                b'#' => sp.hash = true,
                b'0' => sp.zero = true,
                _ => break,
            }
            i += 1;
        }
        let (star, width, n) = star_or_digits(&b[i..]);
        sp.width_star = star;
        if n > 0 && !star {
            sp.width = Some(width);
        }
        i += n;
        if b.get(i) == Some(&b'.') {
            // `.` alone is precision 0
            let (star, prec, n) = star_or_digits(&b[i + 1..]);
            sp.prec_star = star;
            sp.prec = (!star).then_some(prec);
            i += 1 + n;
        }
        match b.get(i) {
            // `h`, `hh`, `l`, `ll`
            Some(&c @ (b'h' | b'l')) => {
                i += 1;
                if b.get(i) == Some(&c) {
                    i += 1;
                }
            }
            Some(b'L' | b'q' | b'j' | b'z' | b'Z' | b't') => i += 1,
            _ => {}
        }
        let conv = *b.get(i)?;
        if i + 1 != b.len()
            || !matches!(conv, b'd' | b'i' | b'u' | b'x' | b'X' | b'o' | b's' | b'p')
        {
            return None;
        }
        sp.conv = conv;
        Some(sp)
    }

    /// No flags, width or precision.
    #[inline]
    pub fn is_plain(&self) -> bool {
        !(self.minus
            || self.plus
            || self.space
            || self.hash
            || self.zero
            || self.width_star
            || self.prec_star)
            && self.width.is_none()
            && self.prec.is_none()
    }

    /// Width and precision after taking a `*` argument (a negative width
    /// means left-justify, a negative precision means none).
    fn resolve(&self, star: Option<i32>) -> (bool, usize, Option<usize>) {
        let mut minus = self.minus;
        let mut width = self.width.unwrap_or(0) as usize;
        let mut prec = self.prec.map(|p| p as usize);
        if let Some(a) = star {
            if self.width_star {
                if a < 0 {
                    minus = true;
                }
                width = a.unsigned_abs() as usize;
            } else if self.prec_star {
                prec = usize::try_from(a).ok();
            }
        }
        (minus, width, prec)
    }
}

/// A `*` or decimal digits at the start of `b`: (whether a star, the
/// number, bytes taken).
fn star_or_digits(b: &[u8]) -> (bool, u32, usize) {
    if b.first() == Some(&b'*') {
        (true, 0, 1)
    } else {
        let (v, n) = digits(b);
        (false, v, n)
    }
}

fn digits(b: &[u8]) -> (u32, usize) {
    let mut v: u32 = 0;
    let mut n = 0;
    while let Some(&c) = b.get(n) {
        if !c.is_ascii_digit() {
            break;
        }
        v = v.saturating_mul(10).saturating_add((c - b'0') as u32);
        n += 1;
    }
    (v, n)
}

/// The most padding one conversion gets. A width or precision is written
/// in the format (up to 4 billion) or taken from the record (`%*d`: up to
/// 2 billion); libtraceevent pads to it whatever it is, which only a
/// damaged record or a broken format asks for in gigabytes: past this
/// limit the padding is cut, so that no line is sized by such a number.
pub const MAX_PAD: usize = 1 << 16;

fn pad(out: &mut Vec<u8>, c: u8, n: usize) {
    out.resize(out.len() + n.min(MAX_PAD), c);
}

/// Format an integer conversion (`d i u x X o`). `val` holds the argument
/// as C passes it; `bits` is the width of the C type it was cast to (8, 16,
/// 32 or 64): signed conversions sign-extend from it, unsigned ones
/// truncate to it.
pub fn fmt_int(out: &mut Vec<u8>, sp: &Spec, star: Option<i32>, val: u64, bits: u32) {
    if sp.is_plain() && star.is_none() {
        // no flags, width or precision: the digits alone
        let v = if bits >= 64 {
            val
        } else {
            val & ((1u64 << bits) - 1)
        };
        match sp.conv {
            b'x' => return put_hex(out, v),
            b'u' => return put_u64(out, v),
            b'd' | b'i' => {
                let s = if bits >= 64 {
                    v as i64
                } else {
                    ((v << (64 - bits)) as i64) >> (64 - bits)
                };
                return put_i64(out, s);
            }
            _ => {}
        }
    }
    let (minus, width, prec) = sp.resolve(star);
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let v = val & mask;
    let (neg, mag) = if matches!(sp.conv, b'd' | b'i') {
        let s = if bits >= 64 {
            v as i64
        } else {
            ((v << (64 - bits)) as i64) >> (64 - bits)
        };
        (s < 0, s.unsigned_abs())
    } else {
        (false, v)
    };
    // digits, least significant first (constant bases: no division
    // instructions for hex and octal, a multiplication for decimal)
    let mut buf = [0u8; 24];
    let mut n = 0;
    let mut m = mag;
    match sp.conv {
        b'x' | b'X' => {
            let digits: &[u8; 16] = if sp.conv == b'X' {
                b"0123456789ABCDEF"
            } else {
                b"0123456789abcdef"
            };
            while m != 0 {
                buf[n] = digits[(m & 15) as usize];
                n += 1;
                m >>= 4;
            }
        }
        b'o' => {
            while m != 0 {
                buf[n] = b'0' + (m & 7) as u8;
                n += 1;
                m >>= 3;
            }
        }
        _ => {
            while m != 0 {
                buf[n] = b'0' + (m % 10) as u8;
                n += 1;
                m /= 10;
            }
        }
    }
    // precision: minimum digits (".0" with 0 prints no digits)
    let min_digits = prec.unwrap_or(1);
    let mut zeros = min_digits.saturating_sub(n);
    if sp.hash && sp.conv == b'o' && zeros == 0 && (n == 0 || buf[n - 1] != b'0') {
        zeros = 1;
    }
    let sign: &[u8] = if neg {
        b"-"
    } else if matches!(sp.conv, b'd' | b'i') && sp.plus {
        b"+"
    } else if matches!(sp.conv, b'd' | b'i') && sp.space {
        b" "
    } else {
        b""
    };
    let prefix: &[u8] = match sp.conv {
        b'x' if sp.hash && mag != 0 => b"0x",
        b'X' if sp.hash && mag != 0 => b"0X",
        _ => b"",
    };
    let body = sign.len() + prefix.len() + zeros + n;
    let fill = width.saturating_sub(body);
    if minus {
        out.extend_from_slice(sign);
        out.extend_from_slice(prefix);
        pad(out, b'0', zeros);
        out.extend(buf[..n].iter().rev());
        pad(out, b' ', fill);
    } else if sp.zero && prec.is_none() {
        out.extend_from_slice(sign);
        out.extend_from_slice(prefix);
        pad(out, b'0', zeros + fill);
        out.extend(buf[..n].iter().rev());
    } else {
        pad(out, b' ', fill);
        out.extend_from_slice(sign);
        out.extend_from_slice(prefix);
        pad(out, b'0', zeros);
        out.extend(buf[..n].iter().rev());
    }
}

/// Format `%s` of `s` (already cut at its NUL).
pub fn fmt_str(out: &mut Vec<u8>, sp: &Spec, star: Option<i32>, s: &[u8]) {
    let (minus, width, prec) = sp.resolve(star);
    let s = match prec {
        Some(p) if p < s.len() => &s[..p],
        _ => s,
    };
    let fill = width.saturating_sub(s.len());
    if !minus {
        pad(out, b' ', fill);
    }
    out.extend_from_slice(s);
    if minus {
        pad(out, b' ', fill);
    }
}

pub use tracemux_core::bytes::put_small;
use tracemux_core::digits;

/// Unsigned and signed decimal.
pub use tracemux_core::digits::{put_i64, put_u64};

/// Lower-case hex without prefix (`%llx`).
#[inline]
pub fn put_hex(out: &mut Vec<u8>, v: u64) {
    digits::put_hex(out, v, digits::HEX_LOWER);
}

/// Two lower-case hex digits (`%02x` of a byte).
#[inline]
pub fn put_hex2(out: &mut Vec<u8>, b: u8) {
    const H: &[u8; 16] = b"0123456789abcdef";
    out.push(H[(b >> 4) as usize]);
    out.push(H[(b & 15) as usize]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(spec: &str, star: Option<i32>, v: i64, bits: u32) -> String {
        let sp = Spec::parse(spec).unwrap();
        let mut o = Vec::new();
        fmt_int(&mut o, &sp, star, v as u64, bits);
        String::from_utf8(o).unwrap()
    }

    #[test]
    fn integers_like_glibc() {
        // expectations from glibc 2.36
        assert_eq!(int("%#o", None, 0, 32), "0");
        assert_eq!(int("%#.0o", None, 0, 32), "0");
        assert_eq!(int("%.0d", None, 0, 32), "");
        assert_eq!(int("%#x", None, 0, 32), "0");
        assert_eq!(int("%#X", None, 255, 32), "0XFF");
        assert_eq!(int("%#5x", None, 255, 32), " 0xff");
        assert_eq!(int("%#05x", None, 255, 32), "0x0ff");
        assert_eq!(int("%-05d", None, 7, 32), "7    ");
        assert_eq!(int("%05.3d", None, 7, 32), "  007");
        assert_eq!(int("%#.3o", None, 8, 32), "010");
        assert_eq!(int("%#o", None, 8, 32), "010");
        assert_eq!(int("%*d", Some(-4), 1, 32), "1   ");
        assert_eq!(int("%.*d", Some(-2), 5, 32), "5");
        assert_eq!(int("%hhd", None, 300, 8), "44");
        assert_eq!(int("%hhu", None, -1, 8), "255");
        assert_eq!(int("%hx", None, -1, 16), "ffff");
        assert_eq!(int("%lld", None, -5, 64), "-5");
        assert_eq!(int("%Lx", None, -1, 64), "ffffffffffffffff");
        assert_eq!(int("%llo", None, 8, 64), "10");
        assert_eq!(int("%d", None, 0xffff_ffff, 32), "-1");
        assert_eq!(int("%u", None, -1, 32), "4294967295");
        assert_eq!(int("%03d", None, 1, 32), "001");
        assert_eq!(int("%08lx", None, 1, 64), "00000001");
        assert_eq!(int("%d", None, i64::MIN, 64), "-9223372036854775808");
        assert!(Spec::parse("%zhd").is_none());
    }

    #[test]
    fn strings_like_glibc() {
        let s = |spec: &str, star, v: &str| {
            let mut o = Vec::new();
            fmt_str(&mut o, &Spec::parse(spec).unwrap(), star, v.as_bytes());
            String::from_utf8(o).unwrap()
        };
        assert_eq!(s("%05s", None, "ab"), "   ab");
        assert_eq!(s("%.3s", None, "abcdef"), "abc");
        assert_eq!(s("%-4s", None, "a"), "a   ");
        assert_eq!(s("%.*s", Some(2), "abc"), "ab");
    }

    #[test]
    fn plain_numbers() {
        let mut o = Vec::new();
        put_u64(&mut o, 0);
        o.push(b' ');
        put_i64(&mut o, i64::MIN);
        o.push(b' ');
        put_hex(&mut o, 0xdead_beef);
        o.push(b' ');
        put_hex2(&mut o, 7);
        assert_eq!(o, b"0 -9223372036854775808 deadbeef 07");
    }
}
