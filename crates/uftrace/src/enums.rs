//! Enum definitions of argument specs (`enum NAME { A = 1, B, ... }`, from
//! the `-A`/`-R` options and the `.dbg` files), and the names of values.

use std::collections::BTreeMap;

/// Enum definitions by name (`enum NAME { A = 1, B, ... }`).
#[derive(Debug, Clone, Default)]
pub struct EnumDefs {
    /// Values sorted by descending value (as uftrace keeps them).
    defs: BTreeMap<String, Vec<(i64, String)>>,
}

fn enum_tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_punctuation() && c != b'_' && c != b'-' {
            out.push(&s[i..i + 1]);
            i += 1;
        } else {
            let st = i;
            while i < b.len() && !b" \n\t=,{};".contains(&b[i]) {
                i += 1;
            }
            if i == st {
                i += 1;
                continue;
            }
            out.push(&s[st..i]);
        }
    }
    out
}

impl EnumDefs {
    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }

    /// Parse `enum a { X, Y = 3 };enum b {...}`; false on a syntax error
    /// (definitions parsed before it are kept).
    pub fn parse(&mut self, s: &str) -> bool {
        for part in s.split(';') {
            let toks = enum_tokens(part);
            if toks.is_empty() {
                continue;
            }
            if toks[0] != "enum" || toks.len() < 3 || toks[2] != "{" {
                return false;
            }
            let name = toks[1].to_string();
            let mut vals: Vec<(i64, String)> = Vec::new();
            let mut i = 3;
            let mut next: i64 = 0;
            let mut closed = false;
            while i < toks.len() {
                if toks[i] == "}" {
                    closed = true;
                    break;
                }
                let id = toks[i].to_string();
                i += 1;
                let mut val = next;
                match toks.get(i) {
                    Some(&"=") => {
                        let Some(n) = toks.get(i + 1) else {
                            return false;
                        };
                        val = parse_c_int(n);
                        i += 2;
                        if toks.get(i) == Some(&",") {
                            i += 1;
                        }
                    }
                    Some(&",") => i += 1,
                    Some(&"}") => {}
                    _ => return false,
                }
                let pos = vals
                    .iter()
                    .position(|(v, _)| *v <= val)
                    .unwrap_or(vals.len());
                vals.insert(pos, (val, id));
                next = val + 1;
            }
            if !closed {
                return false;
            }
            self.defs.entry(name).or_insert(vals);
        }
        true
    }

    /// The text uftrace 0.13 prints for `val` of enum `name`, or `None`
    /// when there is no such enum (`convert_enum_val` of an `int`).
    pub fn format(&self, name: &str, val: i32) -> Option<String> {
        self.format_as(name, val as i64, false)
    }

    /// [`Enums::format`] of a value as wide as `long` when `wide` (uftrace
    /// 0.17+ passes the value zero-extended from its size to a `long` and
    /// prints unknown parts with `%#lx`, so an enum value of -1 stored in
    /// 4 bytes is 0xffffffff there), else of an `int` (0.13).
    pub fn format_as(&self, name: &str, val: i64, wide: bool) -> Option<String> {
        let vals = self.defs.get(name)?;
        let mut v = val;
        if let Some((_, s)) = vals.iter().find(|(x, _)| *x == v) {
            return Some(s.clone());
        }
        let hex = |v: i64| {
            if wide {
                format!("{:#x}", v as u64)
            } else {
                format!("{:#x}", v as i32 as u32)
            }
        };
        let mut out = String::new();
        for (x, s) in vals {
            if *x <= v {
                v = v.wrapping_sub(*x);
                if !wide {
                    v = v as i32 as i64;
                }
                if !out.is_empty() {
                    out.push('|');
                }
                out.push_str(s);
            }
            if v == 0 {
                break;
            }
        }
        if !out.is_empty() && v != 0 {
            out.push('+');
            out.push_str(&hex(v));
        } else if out.is_empty() {
            if val.unsigned_abs() > 100000 {
                out = hex(val);
            } else {
                out = val.to_string();
            }
        }
        Some(out)
    }
}

fn parse_c_int(s: &str) -> i64 {
    let (neg, t) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).unwrap_or(0)
    } else if t.len() > 1 && t.starts_with('0') {
        i64::from_str_radix(&t[1..], 8).unwrap_or(0)
    } else {
        t.parse().unwrap_or(0)
    };
    if neg {
        -v
    } else {
        v
    }
}
