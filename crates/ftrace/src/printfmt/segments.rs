//! Cutting the format string into segments, as libtraceevent's
//! `parse_args` / `parse_arg_format` / `parse_arg_string` /
//! `parse_arg_format_pointer` do.
//!
//! What libtraceevent accepts in a conversion: flags `#`, `-`, `0`, digits
//! and `.` (width/precision), `*` (taking an argument), length modifiers
//! `h l L z Z`, then one of `d u i x X o` (integer), `p` (plus extension
//! letters), `s`. Any other character (including `c`, `+`, space, `j`, `t`)
//! ends the conversion and is shown as the literal `>X<`. A conversion
//! without an argument left marks the event failed.

use super::ast::{PrintFmt, SegKind, Segment};

/// Returns the segments and whether libtraceevent would mark the event
/// failed while building them.
pub(crate) fn parse_args(pf: &PrintFmt) -> (Vec<Segment>, bool) {
    let f = pf.format.as_bytes();
    // (C strings: stop at a NUL)
    let f = &f[..f.iter().position(|&b| b == 0).unwrap_or(f.len())];
    let mut st = State {
        segs: Vec::new(),
        next_arg: 0,
        nargs: pf.args.len(),
        failed: false,
    };
    let mut pos = 0;
    let mut len = f.len() as isize;
    while pos < f.len() {
        let ret = if f[pos] == b'%' && f.get(pos + 1) != Some(&b'%') {
            st.parse_arg_format(&f[pos..])
        } else {
            st.parse_arg_string(&f[pos..])
        };
        len -= ret as isize;
        if len > 0 {
            pos += ret;
        } else {
            break;
        }
    }
    (st.segs, st.failed)
}

struct State {
    segs: Vec<Segment>,
    next_arg: usize,
    nargs: usize,
    failed: bool,
}

fn lit(s: Vec<u8>) -> Segment {
    Segment {
        kind: SegKind::Literal,
        text: String::from_utf8_lossy(&s).into_owned(),
        arg: None,
        len_arg: None,
        ls: 0,
    }
}

impl State {
    /// A conversion of the next argument.
    fn push_conv(&mut self, kind: SegKind, text: String, len_arg: Option<usize>, ls: i32) {
        let arg = self.take_arg();
        self.segs.push(Segment {
            kind,
            text,
            arg,
            len_arg,
            ls,
        });
    }

    fn take_arg(&mut self) -> Option<usize> {
        if self.next_arg < self.nargs {
            self.next_arg += 1;
            Some(self.next_arg - 1)
        } else {
            None
        }
    }

    fn has_arg(&self) -> bool {
        self.next_arg < self.nargs
    }

    /// Literal text up to the next conversion; returns the bytes consumed.
    fn parse_arg_string(&mut self, f: &[u8]) -> usize {
        let mut s = Vec::new();
        let mut ret = 0;
        let mut i = 0;
        while i < f.len() {
            let c = f[i];
            if c == b'\\' {
                i += 1;
                ret += 1;
                let Some(&e) = f.get(i) else { break };
                s.push(match e {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    other => other,
                });
            } else if c == b'%' {
                if f.get(i + 1) == Some(&b'%') {
                    s.push(b'%');
                    i += 1;
                    ret += 1;
                } else {
                    break;
                }
            } else {
                s.push(c);
            }
            ret += 1;
            i += 1;
        }
        self.segs.push(lit(s));
        ret
    }

    /// One conversion starting at `f[0] == '%'`; returns the bytes consumed.
    fn parse_arg_format(&mut self, f: &[u8]) -> usize {
        let mut len_arg = None;
        let mut ls = 0i32;
        let mut ret = 1;
        let mut i = 1;
        let spec = |i: usize, limit: usize, failed: &mut bool| {
            let mut n = i + 1;
            if n > limit {
                *failed = true;
                n = 31;
            }
            String::from_utf8_lossy(&f[..n.min(f.len())]).into_owned()
        };
        while i < f.len() {
            match f[i] {
                b'#' | b'.' | b'0'..=b'9' | b'-' => {}
                b'h' => ls -= 1,
                b'l' => ls += 1,
                b'L' => ls = 2,
                b'z' | b'Z' => ls = 1,
                b'*' => {
                    if !self.has_arg() || len_arg.is_some() {
                        self.failed = true;
                        return ret;
                    }
                    len_arg = self.take_arg();
                }
                b'p' => {
                    if !self.has_arg() {
                        self.failed = true;
                        return ret;
                    }
                    let res = parse_arg_format_pointer(&f[i + 1..]);
                    i += res;
                    ret += res;
                    let text = spec(i, 31, &mut self.failed);
                    self.push_conv(SegKind::Pointer, text, len_arg, ls);
                    return ret + 1;
                }
                b'd' | b'u' | b'i' | b'x' | b'X' | b'o' => {
                    if !self.has_arg() {
                        self.failed = true;
                        return ret;
                    }
                    let text = spec(i, 30, &mut self.failed);
                    if !(-2..=2).contains(&ls) {
                        // "bad count"
                        self.failed = true;
                    }
                    self.push_conv(SegKind::Digit, text, len_arg, ls);
                    return ret + 1;
                }
                b's' => {
                    if !self.has_arg() {
                        self.failed = true;
                        return ret;
                    }
                    let text = spec(i, 31, &mut self.failed);
                    self.push_conv(SegKind::String, text, len_arg, 0);
                    return ret + 1;
                }
                c => {
                    self.segs.push(lit(vec![b'>', c, b'<']));
                    return ret + 1;
                }
            }
            ret += 1;
            i += 1;
        }
        ret
    }
}

/// How many extension letters after `%p` belong to the conversion.
pub(crate) fn parse_arg_format_pointer(f: &[u8]) -> usize {
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    let mut ret = 0;
    match at(0) {
        b'F' | b'S' | b'f' | b's' => ret += 1,
        b'M' | b'm' => {
            if matches!(at(1), b'R' | b'F') {
                ret += 1;
            }
            ret += 1;
        }
        b'I' | b'i' => {
            let mut index = 2;
            let (mut part4, mut part6) = (false, false);
            match at(1) {
                b'S' => {
                    while matches!(at(index), b'p' | b'f' | b's') {
                        ret += 1;
                        index += 1;
                    }
                    part4 = true;
                }
                b'4' => part4 = true,
                b'6' => part6 = true,
                _ => {}
            }
            if part4 {
                if matches!(at(index), b'h' | b'n' | b'l' | b'b') {
                    ret += 1;
                    index += 1;
                }
                if at(1) == b'4' {
                    ret += 1;
                } else {
                    part6 = true;
                }
            }
            if part6 {
                if at(index) == b'c' {
                    ret += 1;
                }
                ret += 1;
            }
            ret += 1;
        }
        b'U' => {
            if matches!(at(1), b'L' | b'l' | b'B' | b'b') {
                ret += 1;
            }
            ret += 1;
        }
        b'h' => {
            if matches!(at(1), b'C' | b'D' | b'N') {
                ret += 1;
            }
            ret += 1;
        }
        _ => {}
    }
    ret
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_extensions() {
        let n = |s: &str| parse_arg_format_pointer(s.as_bytes());
        assert_eq!(n("s: %s"), 1);
        assert_eq!(n("K"), 0);
        assert_eq!(n("B"), 0);
        assert_eq!(n("MR"), 2);
        assert_eq!(n("I4"), 2);
        assert_eq!(n("i4h"), 3);
        assert_eq!(n("I6c"), 3);
        assert_eq!(n("ISpc"), 4);
        assert_eq!(n("I"), 1);
        assert_eq!(n("Ub"), 2);
        assert_eq!(n("hD"), 2);
    }
}
