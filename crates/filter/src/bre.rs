//! POSIX basic regular expressions, as glibc's `regcomp` reads them without
//! `REG_EXTENDED` (with its GNU extensions), translated to the syntax of the
//! `regex` crate.
//!
//! libtraceevent compiles both the event names of a filter (`^NAME$`) and the
//! right side of `=~` / `!~` this way, with `REG_ICASE | REG_NOSUB`: only
//! whether the expression matches matters, so leftmost-longest versus
//! leftmost-first makes no difference.
//!
//! What differs from the `regex` crate's syntax:
//! - `\(` `\)` group, `\{m,n\}` repeats, `\|` alternates, `\+` and `\?`
//!   repeat; unescaped `( ) { } | + ?` are ordinary characters;
//! - `*` is ordinary at the start of the expression or of a group or
//!   alternative; `^` is an anchor only there, `$` only at the end of one;
//! - a backslash inside a bracket expression is an ordinary character;
//! - `\w \W \s \S \b \B \< \> \` \'` are GNU extensions; other escaped
//!   characters stand for themselves.
//!
//! Back-references (`\1`...) cannot be expressed with the `regex` crate and
//! are reported as an error.

use regex::bytes::{Regex, RegexBuilder};

/// Translate a basic regular expression; `Err` when glibc would refuse it
/// (or, for back-references, when it cannot be expressed).
pub fn translate(bre: &str) -> Result<String, String> {
    let p = bre.as_bytes();
    let mut out = String::with_capacity(p.len() * 2 + 8);
    out.push_str("(?s-u)");
    // (output position where the group began, output position of its last atom)
    let mut groups: Vec<usize> = Vec::new();
    // where the last atom starts in `out` (None: no atom to repeat)
    let mut atom: Option<usize> = None;
    // the last atom already has a repeat operator
    let mut repeated = false;
    // at the start of the expression, a group or an alternative
    let mut start = true;
    // right after a `^` anchor (a `*` there is ordinary, a `^` is not an anchor)
    let mut caret = false;
    let mut i = 0;
    while i < p.len() {
        let c = p[i];
        let at_start = start;
        let after_caret = caret;
        start = false;
        caret = false;
        match c {
            b'\\' => {
                let Some(&n) = p.get(i + 1) else {
                    return Err("trailing backslash".into());
                };
                i += 2;
                match n {
                    // a group or an alternative begins
                    b'(' | b'|' => {
                        if n == b'(' {
                            groups.push(out.len());
                        }
                        out.push(n as char);
                        atom = None;
                        repeated = false;
                        start = true;
                        continue;
                    }
                    b')' => {
                        let Some(g) = groups.pop() else {
                            return Err("unmatched \\)".into());
                        };
                        out.push(')');
                        atom = Some(g);
                        repeated = false;
                        continue;
                    }
                    b'{' => {
                        if at_start || atom.is_none() {
                            return Err("invalid preceding regular expression".into());
                        }
                        let (rep, used) = interval(&p[i..])?;
                        i += used;
                        repeat(&mut out, atom, &mut repeated, &rep);
                        continue;
                    }
                    b'+' | b'?' => {
                        if at_start || atom.is_none() {
                            // ordinary character where nothing can be repeated
                            atom = Some(out.len());
                            repeated = false;
                            literal(&mut out, n);
                        } else {
                            repeat(
                                &mut out,
                                atom,
                                &mut repeated,
                                if n == b'+' { "+" } else { "?" },
                            );
                        }
                        continue;
                    }
                    b'1'..=b'9' => return Err("back-references are not supported".into()),
                    b'<' | b'>' | b'b' | b'B' | b'`' | b'\'' => {
                        out.push_str(match n {
                            b'<' => r"\b{start}",
                            b'>' => r"\b{end}",
                            b'b' => r"\b",
                            b'B' => r"\B",
                            b'`' => r"\A",
                            _ => r"\z",
                        });
                        atom = None;
                        repeated = false;
                        continue;
                    }
                    b'w' | b'W' | b's' | b'S' => {
                        atom = Some(out.len());
                        repeated = false;
                        out.push_str(match n {
                            b'w' => "[0-9A-Za-z_]",
                            b'W' => "[^0-9A-Za-z_]",
                            b's' => "[[:space:]]",
                            _ => "[^[:space:]]",
                        });
                        continue;
                    }
                    _ => {
                        atom = Some(out.len());
                        repeated = false;
                        literal(&mut out, n);
                        continue;
                    }
                }
            }
            b'*' => {
                if at_start || after_caret || atom.is_none() {
                    atom = Some(out.len());
                    repeated = false;
                    literal(&mut out, b'*');
                } else {
                    repeat(&mut out, atom, &mut repeated, "*");
                }
                i += 1;
            }
            b'^' if at_start => {
                out.push('^');
                caret = true;
                atom = None;
                i += 1;
            }
            b'$' if i + 1 == p.len()
                || p[i + 1..].starts_with(b"\\)")
                || p[i + 1..].starts_with(b"\\|") =>
            {
                out.push('$');
                atom = None;
                i += 1;
            }
            b'.' => {
                atom = Some(out.len());
                repeated = false;
                out.push('.');
                i += 1;
            }
            b'[' => {
                atom = Some(out.len());
                repeated = false;
                i += bracket(&p[i + 1..], &mut out)? + 1;
            }
            _ => {
                atom = Some(out.len());
                repeated = false;
                literal(&mut out, c);
                i += 1;
            }
        }
    }
    if !groups.is_empty() {
        return Err("unmatched \\(".into());
    }
    Ok(out)
}

/// Compile a basic regular expression, case-insensitive (`REG_ICASE`).
pub fn compile(bre: &str) -> Result<Regex, String> {
    let pat = translate(bre)?;
    RegexBuilder::new(&pat)
        .case_insensitive(true)
        .unicode(false)
        .build()
        .map_err(|e| e.to_string())
}

fn literal(out: &mut String, c: u8) {
    if c.is_ascii_alphanumeric() || c == b'_' || c == b' ' {
        out.push(c as char);
    } else {
        out.push_str(&format!("\\x{{{c:02x}}}"));
    }
}

/// Append a repeat operator to the last atom; a second operator on the same
/// atom applies to the repeated atom (`a**` is `a*`), so the atom is grouped.
fn repeat(out: &mut String, atom: Option<usize>, repeated: &mut bool, op: &str) {
    if *repeated {
        if let Some(a) = atom {
            out.insert_str(a, "(?:");
            out.push(')');
        }
    }
    out.push_str(op);
    *repeated = true;
}

/// `m\}`, `m,\}`, `m,n\}` or `,n\}` (after `\{`): the `regex` repeat and
/// the number of bytes used.
fn interval(p: &[u8]) -> Result<(String, usize), String> {
    let num = |s: &[u8], i: &mut usize| -> Option<u32> {
        let st = *i;
        while *i < s.len() && s[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i == st {
            return None;
        }
        std::str::from_utf8(&s[st..*i]).ok()?.parse().ok()
    };
    let mut i = 0;
    let m = num(p, &mut i);
    let (lo, hi) = if p.get(i) == Some(&b',') {
        i += 1;
        (m.unwrap_or(0), num(p, &mut i))
    } else {
        let Some(m) = m else {
            return Err("invalid interval".into());
        };
        (m, Some(m))
    };
    if !p[i..].starts_with(b"\\}") {
        return Err("unmatched \\{".into());
    }
    if lo > 0x7fff || hi.is_some_and(|h| h < lo || h > 0x7fff) {
        return Err("invalid interval".into());
    }
    let rep = match hi {
        Some(h) if h == lo => format!("{{{lo}}}"),
        Some(h) => format!("{{{lo},{h}}}"),
        None => format!("{{{lo},}}"),
    };
    Ok((rep, i + 2))
}

/// A bracket expression; `p` starts after the `[`. Returns the bytes used
/// (up to and including the closing `]`).
fn bracket(p: &[u8], out: &mut String) -> Result<usize, String> {
    let mut i = 0;
    out.push('[');
    if p.first() == Some(&b'^') {
        out.push('^');
        i += 1;
    }
    let mut first = true;
    let mut items = 0;
    loop {
        let Some(&c) = p.get(i) else {
            return Err("unmatched [".into());
        };
        if c == b']' && !first {
            break;
        }
        first = false;
        // one element: a class, an equivalence class, a collating symbol or a character
        let (lo, used) = if c == b'[' && matches!(p.get(i + 1), Some(b':' | b'=' | b'.')) {
            let kind = p[i + 1];
            let body = &p[i + 2..];
            let Some(end) = body.windows(2).position(|w| w[0] == kind && w[1] == b']') else {
                return Err("unmatched [".into());
            };
            let name = &body[..end];
            let used = end + 4;
            if kind == b':' {
                let n = std::str::from_utf8(name).map_err(|_| "invalid character class")?;
                if !matches!(
                    n,
                    "alpha"
                        | "upper"
                        | "lower"
                        | "digit"
                        | "xdigit"
                        | "space"
                        | "print"
                        | "punct"
                        | "graph"
                        | "cntrl"
                        | "blank"
                        | "alnum"
                ) {
                    return Err("invalid character class".into());
                }
                out.push_str(&format!("[:{n}:]"));
                i += used;
                items += 1;
                continue;
            }
            // [=c=] and [.c.]: a single character
            if name.len() != 1 {
                return Err("invalid collation character".into());
            }
            (name[0], used)
        } else {
            (c, 1)
        };
        i += used;
        // a range?
        if p.get(i) == Some(&b'-') && p.get(i + 1).is_some_and(|&n| n != b']') {
            let (hi, used) = if p[i + 1] == b'[' && matches!(p.get(i + 2), Some(b'=' | b'.')) {
                let kind = p[i + 2];
                let body = &p[i + 3..];
                let Some(end) = body.windows(2).position(|w| w[0] == kind && w[1] == b']') else {
                    return Err("unmatched [".into());
                };
                if end != 1 {
                    return Err("invalid collation character".into());
                }
                (body[0], end + 4)
            } else {
                (p[i + 1], 1)
            };
            if hi < lo {
                return Err("invalid range end".into());
            }
            i += 1 + used;
            class_char(out, lo);
            out.push('-');
            class_char(out, hi);
        } else {
            class_char(out, lo);
        }
        items += 1;
    }
    let _ = items;
    out.push(']');
    Ok(i + 1)
}

fn class_char(out: &mut String, c: u8) {
    if c.is_ascii_alphanumeric() {
        out.push(c as char);
    } else {
        out.push_str(&format!("\\x{{{c:02x}}}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(re: &str, s: &str) -> bool {
        compile(re).unwrap().is_match(s.as_bytes())
    }

    #[test]
    fn basic_syntax() {
        // (BRE, text, whether it matches)
        for (re, text, want) in [
            ("^sched_.*$", "sched_switch", true),
            ("^sched_*$", "sched", true),
            ("^sched_*$", "sched_switch", false),
            ("a+b", "xa+by", true),
            ("a+b", "aab", false),
            ("a\\+b", "aab", true),
            ("^ksoft\\|^rcu", "rcu_preempt", true),
            ("^(ksoft|rcu)", "rcu_preempt", false),
            ("^(ksoft|rcu)", "(ksoft|rcu)x", true),
            ("\\(ab\\)*c", "ababc", true),
            ("^a\\{2,3\\}$", "aaa", true),
            ("^a\\{2,3\\}$", "aaaa", false),
            ("*a", "x*a", true),
            ("^*a", "*a", true),
            ("a**", "b", true),
            ("a$b", "a$b", true),
            ("^^a", "^a", true),
            ("^^a", "a", false),
            ("a^b", "a^b", true),
            ("SCHED", "sched", true),
            ("[[:digit:]]x", "5x", true),
            ("[]a]", "]", true),
            ("[\\]", "\\", true),
            ("[^a-c]", "d", true),
            ("^[^a-c]$", "b", false),
            ("\\<wake", "hrtimer_wakeup wakeup", true),
            ("x\\?y", "y", true),
            (".", "\n", true),
        ] {
            assert_eq!(m(re, text), want, "{re} on {text:?}");
        }
    }

    #[test]
    fn errors() {
        for bad in [
            "[abc",
            "\\(a",
            "a\\)",
            "a\\",
            "[z-a]",
            "a\\{2",
            "\\1",
            "[[:nope:]]",
        ] {
            assert!(compile(bad).is_err(), "{bad}");
        }
    }
}
