//! babeltrace2's text output (`sink.text.pretty`).

/// `v` as C's `printf("%g", v)` prints it: 6 significant digits, `%e`
/// style when the exponent is below -4 or at least 6, trailing zeros
/// removed.
pub fn fmt_g(v: f64) -> String {
    let mut s = String::new();
    push_g(&mut s, v);
    s
}

/// Append `v` formatted as `%g`.
pub fn push_g(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str(if v.is_sign_negative() { "-nan" } else { "nan" });
        return;
    }
    if v.is_infinite() {
        out.push_str(if v < 0.0 { "-inf" } else { "inf" });
        return;
    }
    if v == 0.0 {
        out.push_str(if v.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    // The exponent C would use: that of `%.5e`.
    let e = format!("{v:.5e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let x: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&x) {
        let prec = (5 - x) as usize;
        let f = format!("{v:.prec$}");
        out.push_str(strip_zeros(&f));
    } else {
        out.push_str(strip_zeros(mant));
        out.push('e');
        out.push(if x < 0 { '-' } else { '+' });
        let a = x.unsigned_abs();
        if a < 10 {
            out.push('0');
        }
        out.push_str(&a.to_string());
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
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
            (2.818281828, "2.81828"),
            (999999.5, "1e+06"),
        ] {
            assert_eq!(fmt_g(v), want, "{v}");
        }
    }
}
