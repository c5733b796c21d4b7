//! Evaluating a parsed filter on one event (libtraceevent's `test_filter`),
//! without allocating.

use crate::parse::{CmpKind, ExpKind, FieldRef, Id, Node, OpKind, StrCmp, Tree, Value};
use tracemux_core::model::{sign_extend, Event, EventClass, FieldDef, FieldFlags, TraceMeta};

/// Stand-in for the number libtraceevent uses when `COMM` is compared with
/// a number: the address of the task name.
pub const COMM_ADDRESS: u64 = 0x5555_6666_0000;

/// An evaluation error (libtraceevent then reports neither a match nor a
/// miss, which trace-cmd treats as a miss).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvalError;

pub struct Ctx<'a, 'e> {
    pub meta: &'a TraceMeta,
    pub class: &'a EventClass,
    pub ev: &'a Event<'e>,
}

impl Ctx<'_, '_> {
    fn def(&self, f: FieldRef) -> Option<&FieldDef> {
        match f {
            FieldRef::Common(i) => self.class.common_fields.get(i as usize),
            FieldRef::Own(i) => self.class.fields.get(i as usize),
            _ => None,
        }
    }

    /// `get_value`
    fn value(&self, f: FieldRef) -> u64 {
        match f {
            FieldRef::Comm => COMM_ADDRESS,
            FieldRef::Cpu => self.ev.cpu as u64,
            _ => {
                let Some(d) = self.def(f) else { return 0 };
                read_number(d, self.ev)
            }
        }
    }

    /// The task name of the event (`get_comm`).
    fn comm(&self) -> &[u8] {
        match self.ev.pid {
            0 => b"<idle>",
            p => self
                .meta
                .tasks
                .get(p)
                .map_or(b"<...>".as_slice(), |s| s.as_bytes()),
        }
    }
}

/// `tep_read_number_field` then the sign extension of `get_value`.
pub fn read_number(d: &FieldDef, ev: &Event<'_>) -> u64 {
    let size = d.size as usize;
    if !matches!(size, 1 | 2 | 4 | 8) {
        // libtraceevent leaves the value unset
        return 0;
    }
    let off = d.offset as usize;
    let Some(v) = ev.ext.get(off..).and_then(|b| ev.endian.read_uint(b, size)) else {
        return 0;
    };
    if d.flags.has(FieldFlags::SIGNED) {
        sign_extend(v, size) as u64
    } else {
        v
    }
}

fn cut_nul(s: &[u8]) -> &[u8] {
    match s.iter().position(|&b| b == 0) {
        Some(n) => &s[..n],
        None => s,
    }
}

/// `0x%llx` into a stack buffer.
struct Hex {
    buf: [u8; 18],
    len: usize,
}

impl Hex {
    fn new(v: u64) -> Hex {
        let mut buf = [0u8; 18];
        buf[0] = b'0';
        buf[1] = b'x';
        let digits = if v == 0 {
            1
        } else {
            (67 - v.leading_zeros() as usize) / 4
        };
        for i in 0..digits {
            let d = ((v >> (4 * (digits - 1 - i))) & 0xf) as u8;
            buf[2 + i] = if d < 10 { b'0' + d } else { b'a' + d - 10 };
        }
        Hex {
            buf,
            len: 2 + digits,
        }
    }
    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// The string a field is compared as (`get_field_str`), passed to `f`.
fn with_field_str<R>(cx: &Ctx<'_, '_>, field: FieldRef, f: impl FnOnce(&[u8]) -> R) -> R {
    if let Some(d) = cx.def(field) {
        if d.flags.has(FieldFlags::STRING) {
            let ext = cx.ev.ext;
            let off = d.offset as usize;
            let (mut start, mut len) = (off, d.size as usize);
            if d.flags.has(FieldFlags::DYNAMIC) {
                let loc = ext
                    .get(off..)
                    .and_then(|b| cx.ev.endian.read_uint(b, 4))
                    .unwrap_or(0) as u32;
                len = (loc >> 16) as usize;
                start = (loc & 0xffff) as usize;
                if d.flags.has(FieldFlags::RELATIVE) {
                    start += off + d.size as usize;
                }
            }
            // not NUL-terminated: libtraceevent copies the field's size
            let last = if len == 0 {
                start.checked_sub(1).and_then(|i| ext.get(i))
            } else {
                ext.get(start + len - 1)
            };
            let s = ext.get(start..).unwrap_or(&[]);
            let s = if last.is_some_and(|&b| b != 0) {
                &s[..s.len().min(d.size as usize)]
            } else {
                s
            };
            return f(cut_nul(s));
        }
        let addr = read_number(d, cx.ev);
        if d.flags.has(FieldFlags::POINTER) || d.flags.has(FieldFlags::LONG) {
            if let Some(sym) = cx.meta.symbols.find_func(addr) {
                return f(sym.name.as_bytes());
            }
        }
        return f(Hex::new(addr).as_bytes());
    }
    // the CPU pseudo field (COMM is handled by the caller)
    f(Hex::new(cx.value(field)).as_bytes())
}

/// `test_filter`
pub fn test(t: &Tree, id: Id, cx: &Ctx<'_, '_>) -> Result<bool, EvalError> {
    match &t.nodes[id as usize] {
        Node::Bool(b) => Ok(*b),
        Node::Op { kind, left, right } => {
            let l = |x: &Option<Id>| x.ok_or(EvalError);
            match kind {
                OpKind::And => Ok(test(t, l(left)?, cx)? && test(t, l(right)?, cx)?),
                OpKind::Or => Ok(test(t, l(left)?, cx)? || test(t, l(right)?, cx)?),
                OpKind::Not => Ok(!test(t, l(right)?, cx)?),
            }
        }
        Node::Num { kind, left, right } => {
            let lv = arg_value(t, left.ok_or(EvalError)?, cx);
            let rv = arg_value(t, right.ok_or(EvalError)?, cx);
            let (lv, rv) = (lv?, rv?);
            match kind {
                CmpKind::Eq => Ok(lv == rv),
                CmpKind::Ne => Ok(lv != rv),
                CmpKind::Gt => Ok(lv > rv),
                CmpKind::Lt => Ok(lv < rv),
                CmpKind::Ge => Ok(lv >= rv),
                CmpKind::Le => Ok(lv <= rv),
                CmpKind::Regex | CmpKind::NotRegex => Err(EvalError),
            }
        }
        Node::Str {
            kind,
            field,
            val,
            re,
            ..
        } => {
            let cmp = |s: &[u8]| match kind {
                StrCmp::Match => s == &val[..],
                StrCmp::NotMatch => s != &val[..],
                StrCmp::Regex => re.as_ref().is_some_and(|r| r.is_match(s)),
                StrCmp::NotRegex => !re.as_ref().is_some_and(|r| r.is_match(s)),
            };
            if *field == FieldRef::Comm {
                Ok(cmp(cx.comm()))
            } else {
                Ok(with_field_str(cx, *field, cmp))
            }
        }
        Node::Exp { .. } | Node::Value(_) | Node::Field(_) => Ok(arg_value(t, id, cx)? != 0),
    }
}

/// `get_arg_value`
fn arg_value(t: &Tree, id: Id, cx: &Ctx<'_, '_>) -> Result<u64, EvalError> {
    match &t.nodes[id as usize] {
        Node::Field(f) => Ok(cx.value(*f)),
        Node::Value(Value::Number(n)) => Ok(*n),
        Node::Value(_) => Err(EvalError),
        Node::Exp { kind, left, right } => {
            let l = arg_value(t, left.ok_or(EvalError)?, cx);
            let r = arg_value(t, right.ok_or(EvalError)?, cx);
            let (l, r) = (l?, r?);
            match kind {
                ExpKind::Add => Ok(l.wrapping_add(r)),
                ExpKind::Sub => Ok(l.wrapping_sub(r)),
                ExpKind::Mul => Ok(l.wrapping_mul(r)),
                // libtraceevent divides by zero (a crash)
                ExpKind::Div => l.checked_div(r).ok_or(EvalError),
                ExpKind::Mod => l.checked_rem(r).ok_or(EvalError),
                // x86 masks the shift count
                ExpKind::Rshift => Ok(l.wrapping_shr(r as u32)),
                ExpKind::Lshift => Ok(l.wrapping_shl(r as u32)),
                ExpKind::And => Ok(l & r),
                ExpKind::Or => Ok(l | r),
                ExpKind::Xor => Ok(l ^ r),
                ExpKind::Not => Err(EvalError),
            }
        }
        _ => Err(EvalError),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex() {
        assert_eq!(Hex::new(0).as_bytes(), b"0x0");
        assert_eq!(Hex::new(0xabc).as_bytes(), b"0xabc");
        assert_eq!(Hex::new(u64::MAX).as_bytes(), b"0xffffffffffffffff");
        assert_eq!(Hex::new(0x10).as_bytes(), b"0x10");
    }
}
