//! trace-cmd's function tracer and function graph handlers
//! (`function`, `kernel_stack`, `raw_data`, `func_repeats`, `funcgraph_entry`
//! and `funcgraph_exit` with their indentation, overhead marks and
//! durations).

use super::*;

impl<'a> HandlerCall<'a> {
    /// The function plugin's `add_and_get_index` (the `indent` option).
    pub(super) fn indent_index(&self, parent: &str, child: Option<&str>, cpu: u32) -> usize {
        let mut st = self.pl.fstack.lock().unwrap_or_else(|e| e.into_inner());
        let stack = st.slot(cpu);
        let add = |stack: &mut Vec<Option<String>>, child: Option<&str>, pos: usize| {
            let Some(c) = child else { return };
            if pos >= stack.len() {
                let n = stack.len() + 10;
                stack.resize(n, None);
            }
            match &mut stack[pos] {
                Some(s) => {
                    s.clear();
                    s.push_str(c);
                }
                slot => *slot = Some(c.to_string()),
            }
        };
        let mut i = 0;
        while i < stack.len() {
            match &stack[i] {
                Some(s) if s == parent => {
                    add(stack, child, i + 1);
                    return i;
                }
                Some(_) => i += 1,
                None => break,
            }
        }
        add(stack, Some(parent), 0);
        add(stack, child, 1);
        0
    }

    pub(super) fn function(&self, out: &mut Vec<u8>) -> bool {
        let Some(ip) = self.val_or_bang(out, 0) else {
            return PRETTY;
        };
        let func = self.func_name(ip);
        let Some(pip) = self.val_or_bang(out, 1) else {
            return PRETTY;
        };
        let parent = self.func_name(pip);
        let index = match parent {
            Some(par) => self.indent_index(par, func, self.ctx.cpu),
            None => 0,
        };
        out.resize(out.len() + index * 3, b' ');
        match func {
            Some(f) => out.extend_from_slice(f.as_bytes()),
            None => {
                out.extend_from_slice(b"0x");
                put_hex(out, ip);
            }
        }
        DONE
    }

    pub(super) fn kernel_stack(&self, out: &mut Vec<u8>) -> bool {
        let Some(f) = self.any(0) else {
            out.extend_from_slice(b"<CANT FIND FIELD caller>");
            return DONE;
        };
        out.extend_from_slice(b"<stack trace >\n");
        let ls = self.ctx.long_size as usize;
        if ls == 0 {
            return DONE;
        }
        let mut off = f.offset as usize;
        while off < self.size {
            let mut b = [0u8; 8];
            if let Some(src) = self.data.get(off..) {
                let k = ls.min(src.len()).min(8);
                b[..k].copy_from_slice(&src[..k]);
            }
            let addr = if matches!(ls, 1 | 2 | 4 | 8) {
                self.ctx.endian.read_uint(&b, ls).unwrap_or(0)
            } else {
                0
            };
            if (ls == 8 && addr == u64::MAX) || addr as u32 as i32 == -1 {
                break;
            }
            match self.func_name(addr) {
                Some(name) => {
                    out.extend_from_slice(b"=> ");
                    out.extend_from_slice(name.as_bytes());
                    out.extend_from_slice(b" (");
                    put_hex(out, addr);
                    out.extend_from_slice(b")\n");
                }
                None => {
                    out.extend_from_slice(b"=> ");
                    put_hex(out, addr);
                    out.push(b'\n');
                }
            }
            off += ls;
        }
        DONE
    }

    pub(super) fn raw_data(&self, out: &mut Vec<u8>) -> bool {
        let Some(id) = self.val_or_bang(out, 0) else {
            return PRETTY;
        };
        out.extend_from_slice(b"# ");
        put_hex(out, id);
        let Some(f) = self.any(1) else {
            out.extend_from_slice(b"<CANT FIND FIELD buf>");
            return DONE;
        };
        let ls = (self.ctx.long_size as usize).max(1);
        let mut off = f.offset as usize;
        while off < self.size {
            // sizeof(long) bytes (8), or what is left
            let n = 8.min(self.size - off);
            for k in 0..n {
                out.push(b' ');
                put_hex2(out, self.data.get(off + k).copied().unwrap_or(0));
            }
            off += ls;
        }
        DONE
    }

    pub(super) fn func_repeats(&self, out: &mut Vec<u8>) -> bool {
        self.function(out);
        let Some(count) = self.val_or_bang(out, 2) else {
            return PRETTY;
        };
        let Some(top) = self.val_or_bang(out, 3) else {
            return PRETTY;
        };
        let Some(bottom) = self.val_or_bang(out, 4) else {
            return PRETTY;
        };
        out.extend_from_slice(b" (count: ");
        put_i64(out, count as i64);
        out.extend_from_slice(b"  last_ts: ");
        let ts = self.ctx.ts.wrapping_sub((top << 32) | bottom);
        print_time(out, ts, self.ctx.time);
        out.push(b')');
        DONE
    }

    pub(super) fn exit_info(&self) -> Option<&ExitInfo> {
        self.pl
            .exit
            .get_or_init(|| {
                let classes = self.ctx.classes?;
                // tep_find_event_by_name: the first in id order
                let c: &EventClass = classes
                    .iter()
                    .filter(|c| c.system == "ftrace" && c.name == "funcgraph_exit")
                    .min_by_key(|c| c.id)?;
                let own = |n: &str| c.fields.iter().find(|f| f.name == n).cloned();
                let common = |n: &str| c.common_fields.iter().find(|f| f.name == n).cloned();
                Some(ExitInfo {
                    id: c.id,
                    common_type: common("common_type"),
                    common_pid: common("common_pid"),
                    func: own("func"),
                    rettime: own("rettime"),
                    calltime: own("calltime"),
                })
            })
            .as_ref()
    }

    pub(super) fn fgraph_entry(&self, out: &mut Vec<u8>) -> bool {
        let Some(exit) = self.exit_info() else {
            // ret_event_check fails: -1
            return PRETTY;
        };
        let pid = match self.pl.common[2].map(|k| &self.p.common_fields()[k as usize]) {
            Some(f) => match self.read(f) {
                Some(v) => v,
                None => {
                    out.extend_from_slice(b" common_pid=INVALID!");
                    return PRETTY;
                }
            },
            None => {
                out.extend_from_slice(b"<CANT FIND FIELD common_pid>!");
                return PRETTY;
            }
        };
        let Some(func) = self.val_or_bang(out, 0) else {
            return PRETTY;
        };
        // get_return_for_leaf: is the next record this function's return?
        let e = self.ctx.endian;
        let leaf = self.ctx.next.and_then(|next| {
            let rd = |f: &Option<FieldDef>| f.as_ref().and_then(|f| read_field(f, next, e));
            let ty = rd(&exit.common_type)?;
            if ty != exit.id as u64 {
                return None;
            }
            let npid = rd(&exit.common_pid)?;
            if pid as i32 as i64 as u64 != npid {
                return None;
            }
            if rd(&exit.func)? != func {
                return None;
            }
            Some(next)
        });
        // a leaf prints its duration and `();`, a call its `{`
        let end: &[u8] = match leaf {
            Some(next) => {
                if let Some(eff) = self.ctx.effects {
                    eff.borrow_mut().consumed_next = true;
                }
                // a field of the exit, reported as `get_field_val` reports
                let exit_val = |out: &mut Vec<u8>, f: &Option<FieldDef>, name: &str| {
                    let v = f.as_ref().and_then(|f| read_field(f, next, e));
                    if v.is_none() {
                        if f.is_none() {
                            out.extend_from_slice(b"<CANT FIND FIELD ");
                            out.extend_from_slice(name.as_bytes());
                            out.push(b'>');
                        } else {
                            out.push(b' ');
                            out.extend_from_slice(name.as_bytes());
                            out.extend_from_slice(b"=INVALID");
                        }
                        out.push(b'!');
                    }
                    v
                };
                let Some(rettime) = exit_val(out, &exit.rettime, "rettime") else {
                    return DONE;
                };
                let Some(calltime) = exit_val(out, &exit.calltime, "calltime") else {
                    return DONE;
                };
                let duration = rettime.wrapping_sub(calltime);
                graph_overhead(out, duration);
                graph_duration(out, duration);
                b"();"
            }
            None => {
                graph_overhead(out, u64::MAX);
                out.extend_from_slice(b"           |  ");
                b"() {"
            }
        };
        let Some(depth) = self.val_or_bang(out, 1) else {
            return DONE;
        };
        indent(out, depth);
        match self.func_name(func) {
            Some(n) => out.extend_from_slice(n.as_bytes()),
            None => put_hex(out, func),
        }
        out.extend_from_slice(end);
        DONE
    }

    pub(super) fn fgraph_exit(&self, out: &mut Vec<u8>) -> bool {
        if self.exit_info().is_none() {
            return PRETTY;
        }
        let Some(rettime) = self.val_or_bang(out, 0) else {
            return PRETTY;
        };
        let Some(calltime) = self.val_or_bang(out, 1) else {
            return PRETTY;
        };
        let duration = rettime.wrapping_sub(calltime);
        graph_overhead(out, duration);
        graph_duration(out, duration);
        let Some(depth) = self.val_or_bang(out, 2) else {
            return PRETTY;
        };
        indent(out, depth);
        out.push(b'}');
        DONE
    }
}

/// The most blanks a function graph line is indented by. trace-cmd
/// indents by twice the depth the record says; the kernel's depth is far
/// below this (its return stack holds a few hundred calls at most), so
/// only a damaged record reaches the limit, which keeps it from sizing
/// the line (up to 4 GB of blanks).
pub const MAX_GRAPH_INDENT: usize = 1 << 16;

pub(super) fn indent(out: &mut Vec<u8>, depth: u64) {
    let n = (depth.wrapping_mul(2)) as i32;
    if n > 0 {
        out.resize(out.len() + (n as usize).min(MAX_GRAPH_INDENT), b' ');
    }
}

/// trace-cmd's `print_graph_overhead`.
pub(super) fn graph_overhead(out: &mut Vec<u8>, duration: u64) {
    out.extend_from_slice(if duration == u64::MAX {
        b"  "
    } else if duration > 1_000_000_000 {
        b"$ "
    } else if duration > 1_000_000 {
        b"# "
    } else if duration > 100_000 {
        b"! "
    } else if duration > 10_000 {
        b"+ "
    } else {
        b"  "
    });
}

/// trace-cmd's `print_graph_duration`: usecs, `.nsecs` while it fits in 7
/// columns, ` us `, padding, `|  `.
pub(super) fn graph_duration(out: &mut Vec<u8>, duration: u64) {
    let usecs = duration / 1000;
    let rem = duration % 1000;
    let start = out.len();
    put_u64(out, usecs);
    if out.len() - start < 7 {
        out.push(b'.');
        dec_min(out, rem, 3);
    }
    let len = out.len() - start;
    out.extend_from_slice(b" us ");
    for _ in len..7 {
        out.push(b' ');
    }
    out.extend_from_slice(b"|  ");
}

/// `%0Nllu`.
pub(super) fn dec_min(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut b = Vec::with_capacity(20);
    put_u64(&mut b, v);
    for _ in b.len()..width {
        out.push(b'0');
    }
    out.extend_from_slice(&b);
}

/// `%0Nllx`.
pub(super) fn hex_min(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut b = Vec::with_capacity(16);
    put_hex(&mut b, v);
    for _ in b.len()..width {
        out.push(b'0');
    }
    out.extend_from_slice(&b);
}
