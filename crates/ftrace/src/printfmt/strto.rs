//! C's `strtoull(s, NULL, 0)` / `strtoll(s, NULL, 0)`: leading spaces, an
//! optional sign, `0x` hex / `0` octal / decimal, stop at the first
//! non-digit, saturate on overflow; and `atoll` (decimal only).

/// Magnitude and sign; `None` magnitude on overflow. `pick_base`: `0x`
/// hex, `0` octal, else decimal (C's base 0); otherwise decimal.
fn parse(s: &str, pick_base: bool) -> (bool, Option<u64>) {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && (b[i] == b' ' || (9..=13).contains(&b[i])) {
        i += 1;
    }
    let mut neg = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        neg = b[i] == b'-';
        i += 1;
    }
    let mut base = 10u64;
    if pick_base && i < b.len() && b[i] == b'0' {
        if matches!(b.get(i + 1), Some(b'x' | b'X'))
            && b.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit())
        {
            base = 16;
            i += 2;
        } else {
            base = 8;
        }
    }
    let mut v: Option<u64> = Some(0);
    while i < b.len() {
        let d = match b[i] {
            c @ b'0'..=b'9' => (c - b'0') as u64,
            c @ b'a'..=b'f' => (c - b'a' + 10) as u64,
            c @ b'A'..=b'F' => (c - b'A' + 10) as u64,
            _ => break,
        };
        if d >= base {
            break;
        }
        v = v
            .and_then(|v| v.checked_mul(base))
            .and_then(|v| v.checked_add(d));
        i += 1;
    }
    (neg, v)
}

pub fn strtoull(s: &str) -> u64 {
    match parse(s, true) {
        (_, None) => u64::MAX,
        (true, Some(v)) => v.wrapping_neg(),
        (false, Some(v)) => v,
    }
}

pub fn strtoll(s: &str) -> i64 {
    signed(parse(s, true))
}

/// C `atoll` (as glibc's, saturating): optional spaces and sign, then
/// decimal digits.
pub fn atoll(s: &str) -> i64 {
    signed(parse(s, false))
}

fn signed(parsed: (bool, Option<u64>)) -> i64 {
    match parsed {
        (false, None) => i64::MAX,
        (true, None) => i64::MIN,
        (false, Some(v)) => i64::try_from(v).unwrap_or(i64::MAX),
        (true, Some(v)) => {
            if v > 1u64 << 63 {
                i64::MIN
            } else {
                (v as i64).wrapping_neg()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_c() {
        assert_eq!(strtoull("0x1f"), 31);
        assert_eq!(strtoull("010"), 8);
        assert_eq!(strtoull("1U"), 1);
        assert_eq!(strtoull(" -1"), u64::MAX);
        assert_eq!(strtoull("0x"), 0);
        assert_eq!(strtoull("abc"), 0);
        assert_eq!(strtoull("99999999999999999999"), u64::MAX);
        assert_eq!(strtoll("0xffffffffffffffff"), i64::MAX);
        assert_eq!(strtoll("-5"), -5);
        assert_eq!(strtoll("-9223372036854775808"), i64::MIN);
        assert_eq!(strtoll("09"), 0);
        assert_eq!(atoll(" -12ab"), -12);
        assert_eq!(atoll("010"), 10);
        assert_eq!(atoll("0x10"), 0);
        assert_eq!(atoll("-99999999999999999999"), i64::MIN);
    }
}
