//! Formatting argument and return values as `uftrace replay` prints them
//! (`(1, "str", 0x7ff..., &func)` and ` = 6;`).

use std::io::Write;

use crate::argspec::{ArgFmt, ArgSpec};
use tracemux_core::Endian;

/// What the formatter needs to resolve pointers and enums.
pub trait ArgContext {
    /// Name of the function at `addr` (for pointer arguments: `&name`).
    fn symbol_name(&self, addr: u64) -> Option<&str>;
    /// Text for value `val` of enum `name` (`None`: no map for the function,
    /// printed as `<ENUM?> hex`).
    /// `val` is the value as the uftrace being followed passes it: an
    /// `int` (0.13) or zero-extended from its size to a `long` (0.17+, see
    /// [`ArgContext::wide_enums`]).
    fn enum_text(&self, name: &str, val: i64) -> Option<String>;
    /// Whether enum values are `long`s zero-extended from their size
    /// (uftrace 0.17+) instead of `int`s (0.13).
    fn wide_enums(&self) -> bool {
        false
    }
}

fn read_le(data: &[u8], size: usize, endian: Endian) -> [u8; 16] {
    let mut v = [0u8; 16];
    let n = size.min(16).min(data.len());
    v[..n].copy_from_slice(&data[..n]);
    if endian == Endian::Big && n > 1 {
        v[..n].reverse();
    }
    v
}

fn as_i64(v: &[u8; 16]) -> i64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&v[..8]);
    i64::from_le_bytes(b)
}

/// Print an integer the way `printf("%#" LM FMT, v)` does for `long`/`long long`.
fn print_int(out: &mut Vec<u8>, raw: i64, size: usize, fmt: u8) {
    // the length modifier is picked from the spec size
    let (signed, unsigned): (i64, u64) = match size {
        1 => (raw as i8 as i64, raw as u8 as u64),
        2 => (raw as i16 as i64, raw as u16 as u64),
        8 => (raw, raw as u64),
        _ => (raw as i32 as i64, raw as u32 as u64),
    };
    match fmt {
        b'x' => {
            if unsigned == 0 {
                out.push(b'0');
            } else {
                let _ = write!(out, "{unsigned:#x}");
            }
        }
        b'o' => {
            // `%#o`: a leading 0 unless the value is 0
            if unsigned == 0 {
                out.push(b'0');
            } else {
                let _ = write!(out, "0{unsigned:o}");
            }
        }
        b'u' => {
            let mut b = itoa::Buffer::new();
            out.extend_from_slice(b.format(unsigned).as_bytes());
        }
        _ => {
            let mut b = itoa::Buffer::new();
            out.extend_from_slice(b.format(signed).as_bytes());
        }
    }
}

fn print_escaped(out: &mut Vec<u8>, c: u8) {
    match c {
        0 => out.extend_from_slice(b"\\0"),
        8 => out.extend_from_slice(b"\\b"),
        b'\n' => out.extend_from_slice(b"\\n"),
        c => out.push(c),
    }
}

/// C `%f` of a double (6 decimals; `inf`/`nan` as glibc prints them).
pub fn print_float(out: &mut Vec<u8>, v: f64) {
    if !tracemux_core::bytes::put_nonfinite(out, v) {
        let _ = write!(out, "{v:.6}");
    }
}

/// x87 80-bit extended value to f64.
pub(crate) fn f80_to_f64(b: &[u8; 16]) -> f64 {
    let mut m = [0u8; 8];
    m.copy_from_slice(&b[..8]);
    let mant = u64::from_le_bytes(m);
    let se = u16::from_le_bytes([b[8], b[9]]);
    let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = (se & 0x7fff) as i32;
    if exp == 0 && mant == 0 {
        return sign * 0.0;
    }
    if exp == 0x7fff {
        return if mant << 1 == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    sign * (mant as f64) * 2f64.powi(exp - 16383 - 63)
}

/// Append the formatted values of `specs` (arguments, or the first return
/// value when `retval`) decoded from `data`.
///
/// Arguments come out as `(a, b)`; a return value as ` = v` (the caller adds
/// the `;`). `data` is the blob that followed the record.
pub fn format_values(
    out: &mut Vec<u8>,
    specs: &[ArgSpec],
    data: &[u8],
    retval: bool,
    endian: Endian,
    ctx: &dyn ArgContext,
) {
    each_value(out, specs, data, retval, |out, _, spec, d| {
        let mut size = spec.size as usize;
        match spec.fmt {
            ArgFmt::Str | ArgFmt::StdString => {
                let slen = match d.get(..2) {
                    Some(b) => endian.u16([b[0], b[1]]) as usize,
                    None => 0,
                };
                let s = d.get(2..2 + slen).unwrap_or(&[]);
                if slen == 4 && s == [0xff; 4] {
                    out.extend_from_slice(b"NULL");
                } else {
                    out.push(b'"');
                    let s = &s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())];
                    if s.iter().any(|&c| c & 0x80 != 0) {
                        out.extend_from_slice(s);
                    } else {
                        for &c in s {
                            print_escaped(out, c);
                        }
                    }
                    out.push(b'"');
                }
                if spec.fmt == ArgFmt::StdString {
                    out.push(b's');
                }
                size = slen + 2;
            }
            ArgFmt::Char => {
                let c = d.first().copied().unwrap_or(0);
                out.push(b'\'');
                print_escaped(out, c);
                out.push(b'\'');
                size = 1;
            }
            ArgFmt::Float => {
                let v = read_le(d, size, endian);
                let f = match size {
                    4 => f32::from_le_bytes([v[0], v[1], v[2], v[3]]) as f64,
                    8 => f64::from_le_bytes([v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]]),
                    10 => f80_to_f64(&v),
                    _ => f64::NAN,
                };
                if matches!(size, 4 | 8 | 10) {
                    print_float(out, f);
                }
            }
            ArgFmt::Ptr => {
                let v = as_i64(&read_le(d, size, endian));
                let v = if size == 4 { v as u32 as u64 } else { v as u64 };
                if let Some(name) = ctx.symbol_name(v) {
                    out.push(b'&');
                    out.extend_from_slice(name.as_bytes());
                } else if v != 0 {
                    let _ = write!(out, "{v:#x}");
                } else {
                    out.push(b'0');
                }
            }
            ArgFmt::Enum => {
                let raw = as_i64(&read_le(d, size, endian));
                let v = if ctx.wide_enums() {
                    raw
                } else {
                    raw as i32 as i64
                };
                match ctx.enum_text(spec.type_name.as_deref().unwrap_or(""), v) {
                    Some(s) => out.extend_from_slice(s.as_bytes()),
                    None => {
                        let _ = write!(out, "<ENUM?> {:x}", raw as i32 as u32);
                    }
                }
            }
            ArgFmt::Struct => {
                if let Some(t) = &spec.type_name {
                    if &**t != "<lambda" {
                        out.extend_from_slice(t.as_bytes());
                    }
                }
                out.extend_from_slice(if spec.size != 0 { b"{...}" } else { b"{}" });
            }
            ArgFmt::Auto | ArgFmt::Sint | ArgFmt::Uint | ArgFmt::Hex | ArgFmt::Oct => {
                let raw = as_i64(&read_le(d, size, endian));
                // `val.i` is the zero-extended value (memcpy into a long)
                let mut fmt = spec.fmt.spec_char();
                let mut psize = size;
                match spec.fmt {
                    ArgFmt::Auto if !(-100000..=100000).contains(&raw) => {
                        fmt = b'x';
                        let u = raw as u64;
                        if u > 0xffff_0000 && u <= 0xffff_ffff {
                            fmt = b'd';
                            psize = 4;
                        }
                    }
                    ArgFmt::Uint if raw as u64 > 100000 => fmt = b'x',
                    _ => {}
                }
                print_int(out, raw, psize, fmt);
            }
        }
        size
    });
}

/// A string argument of a blob: its stored length and bytes (what is
/// there when the blob is shorter than the length says), as dump and
/// chrome read it.
pub(crate) fn blob_str(d: &[u8], endian: Endian) -> (usize, &[u8]) {
    let slen = d
        .get(..2)
        .map(|b| endian.u16([b[0], b[1]]) as usize)
        .unwrap_or(0);
    (
        slen,
        d.get(2..2 + slen).unwrap_or(d.get(2..).unwrap_or(&[])),
    )
}

/// The values [`format_values`] lists: the arguments (or the first return
/// value when `retval`) of `specs` in `data`, `, `-separated on `out`.
/// `value(out, index in specs, spec, data from the value on)` appends one
/// and returns its size (values are 4-byte aligned).
pub(crate) fn each_value(
    out: &mut Vec<u8>,
    specs: &[ArgSpec],
    data: &[u8],
    retval: bool,
    mut value: impl FnMut(&mut Vec<u8>, usize, &ArgSpec, &[u8]) -> usize,
) {
    let mut first = true;
    let mut pos = 0usize;
    for (k, spec) in specs.iter().enumerate() {
        if spec.is_retval() != retval {
            continue;
        }
        if !first {
            out.extend_from_slice(b", ");
        }
        first = false;
        let d = data.get(pos..).unwrap_or(&[]);
        let size = value(out, k, spec, d);
        pos += size.div_ceil(4) * 4;
        if retval {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::argspec::parse_argspec;

    struct NoCtx;
    impl ArgContext for NoCtx {
        fn symbol_name(&self, _: u64) -> Option<&str> {
            None
        }
        fn enum_text(&self, _: &str, _: i64) -> Option<String> {
            None
        }
    }

    fn fmt(spec: &str, data: &[u8]) -> String {
        let s = vec![parse_argspec(spec, true).unwrap()];
        let mut out = Vec::new();
        format_values(
            &mut out,
            &s,
            data,
            spec.starts_with("retval"),
            Endian::Little,
            &NoCtx,
        );
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn values() {
        assert_eq!(fmt("arg1", &2u64.to_le_bytes()), "2");
        assert_eq!(
            fmt("arg1", &0x7ffc103c7cc8u64.to_le_bytes()),
            "0x7ffc103c7cc8"
        );
        assert_eq!(fmt("arg1", &(-5i64).to_le_bytes()), "-5");
        assert_eq!(fmt("arg1/d32", &0xffff_fffeu32.to_le_bytes()), "-2");
        assert_eq!(fmt("arg1/x", &0u64.to_le_bytes()), "0");
        assert_eq!(fmt("arg1/s", b"\x03\x00a\nb"), "\"a\\nb\"");
        assert_eq!(fmt("arg1/s", b"\x04\x00\xff\xff\xff\xff"), "NULL");
        assert_eq!(fmt("fparg1", &0.5f64.to_le_bytes()), "0.500000");
        assert_eq!(fmt("fparg1/32", &0.5f32.to_le_bytes()), "0.500000");
        assert_eq!(fmt("arg1/c", b"x"), "'x'");
        assert_eq!(fmt("arg1/p", &0u64.to_le_bytes()), "0");
        assert_eq!(fmt("arg1/u", &200000u64.to_le_bytes()), "0x30d40");
    }
}
