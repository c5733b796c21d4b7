//! The event handlers and helper functions that `trace-cmd report` uses
//! besides the `print fmt`: those of the plugins libtraceevent 1.7.1 ships
//! (`plugin_sched_switch`, `plugin_hrtimer`, `plugin_function`,
//! `plugin_kmem`, `plugin_tlb`, `plugin_futex`, `plugin_kvm`,
//! `plugin_mac80211`, `plugin_jbd2`, `plugin_scsi`, `plugin_xen`,
//! `plugin_cfg80211`) and trace-cmd 3.1.6's own function graph handlers.
//!
//! A handler prints the event's text in place of the `print fmt`; when it
//! says so (a non-zero return in C) the `print fmt` output follows.

use std::sync::{Mutex, OnceLock};

use tracemux_core::bytes::Endian;
use tracemux_core::model::{EventClass, FieldDef, FieldFlags, PrintCtx, TimeFormat};

use crate::printfmt::printf::{put_hex, put_hex2, put_i64, put_u64};
use crate::printfmt::{FieldRef, FtracePrinter};

/// Which handler an event class has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    SchedSwitch,
    SchedWakeup,
    HrtimerExpire,
    HrtimerStart,
    KmemCallSite,
    TlbFlush,
    Futex,
    Function,
    KernelStack,
    RawData,
    FuncRepeats,
    FgraphEntry,
    FgraphExit,
    KvmExit,
    KvmEntry,
    KvmEmulateInsn,
    KvmNestedVmexit,
    KvmNestedVmexitInject,
    KvmMmuGetPage,
    KvmMmuRole,
    Mac80211BssInfo,
}

/// The field names each handler looks up (indexes below refer to these).
fn names(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::SchedSwitch => &[
            "prev_pid",
            "prev_comm",
            "prev_prio",
            "prev_state",
            "next_pid",
            "next_comm",
            "next_prio",
        ],
        Kind::SchedWakeup => &["pid", "comm", "prio", "success", "target_cpu"],
        Kind::HrtimerExpire => &["timer", "hrtimer", "now", "function"],
        Kind::HrtimerStart => &["timer", "hrtimer", "function", "expires", "softexpires"],
        Kind::KmemCallSite => &["call_site"],
        Kind::TlbFlush => &["pages", "reason"],
        Kind::Futex => &["uaddr", "op", "val", "utime", "uaddr2", "val3"],
        Kind::Function => &["ip", "parent_ip"],
        Kind::KernelStack => &["caller"],
        Kind::RawData => &["id", "buf"],
        Kind::FuncRepeats => &[
            "ip",
            "parent_ip",
            "count",
            "top_delta_ts",
            "bottom_delta_ts",
        ],
        Kind::FgraphEntry => &["func", "depth", "common_pid"],
        Kind::FgraphExit => &["rettime", "calltime", "depth", "func"],
        Kind::KvmExit => &["exit_reason", "isa", "guest_rip", "info1", "info2"],
        Kind::KvmEntry => &["vcpu_id", "rip"],
        Kind::KvmEmulateInsn => &["rip", "csbase", "len", "flags", "failed", "insn"],
        Kind::KvmNestedVmexit => &[
            "rip",
            "exit_code",
            "isa",
            "exit_info1",
            "exit_info2",
            "exit_int_info",
            "exit_int_info_err",
        ],
        Kind::KvmNestedVmexitInject => &[
            "exit_code",
            "isa",
            "exit_info1",
            "exit_info2",
            "exit_int_info",
            "exit_int_info_err",
        ],
        Kind::KvmMmuGetPage => &["created", "gfn", "role", "root_count", "unsync"],
        Kind::KvmMmuRole => &["role", "root_count", "unsync"],
        Kind::Mac80211BssInfo => &[
            "wiphy_name",
            "vif_name",
            "vif_type",
            "assoc",
            "aid",
            "cts",
            "shortpre",
            "shortslot",
            "dtimper",
            "bcnint",
            "assoc_cap",
            "basic_rates",
            "enable_beacon",
            "ht_operation_mode",
        ],
    }
}

/// The handler trace-cmd report uses for `system:name`, if any.
pub(crate) fn kind_for(system: &str, name: &str) -> Option<Kind> {
    Some(match (system, name) {
        ("sched", "sched_switch") => Kind::SchedSwitch,
        ("sched", "sched_wakeup" | "sched_wakeup_new") => Kind::SchedWakeup,
        ("timer", "hrtimer_expire_entry") => Kind::HrtimerExpire,
        ("timer", "hrtimer_start") => Kind::HrtimerStart,
        (
            "kmem",
            "kfree"
            | "kmalloc"
            | "kmalloc_node"
            | "kmem_cache_alloc"
            | "kmem_cache_alloc_node"
            | "kmem_cache_free",
        ) => Kind::KmemCallSite,
        ("tlb", "tlb_flush") => Kind::TlbFlush,
        ("syscalls", "sys_enter_futex") => Kind::Futex,
        // libtraceevent's function plugin is registered after trace-cmd's
        // own function handler and so is the one found
        ("ftrace", "function") => Kind::Function,
        ("ftrace", "kernel_stack") => Kind::KernelStack,
        ("ftrace", "raw_data") => Kind::RawData,
        ("ftrace", "func_repeats") => Kind::FuncRepeats,
        ("ftrace", "funcgraph_entry") => Kind::FgraphEntry,
        ("ftrace", "funcgraph_exit") => Kind::FgraphExit,
        ("kvm", "kvm_exit") => Kind::KvmExit,
        ("kvm", "kvm_entry") => Kind::KvmEntry,
        ("kvm", "kvm_emulate_insn") => Kind::KvmEmulateInsn,
        ("kvm", "kvm_nested_vmexit") => Kind::KvmNestedVmexit,
        ("kvm", "kvm_nested_vmexit_inject") => Kind::KvmNestedVmexitInject,
        ("kvmmmu", "kvm_mmu_get_page") => Kind::KvmMmuGetPage,
        (
            "kvmmmu",
            "kvm_mmu_sync_page"
            | "kvm_mmu_unsync_page"
            | "kvm_mmu_zap_page"
            | "kvm_mmu_prepare_zap_page",
        ) => Kind::KvmMmuRole,
        ("mac80211", "drv_bss_info_changed") => Kind::Mac80211BssInfo,
        _ => return None,
    })
}

/// Where the funcgraph_exit event's fields are (the entry handler reads the
/// record after it to find leaf functions).
#[derive(Debug, Clone)]
struct ExitInfo {
    id: u32,
    common_type: Option<FieldDef>,
    common_pid: Option<FieldDef>,
    func: Option<FieldDef>,
    rettime: Option<FieldDef>,
    calltime: Option<FieldDef>,
}

/// A handler with the fields it uses looked up once.
#[derive(Debug)]
pub(crate) struct Plugin {
    kind: Kind,
    /// `tep_find_field` (own fields) of each name.
    own: Vec<Option<u32>>,
    /// `tep_find_any_field` (common fields first) of each name.
    any: Vec<Option<FieldRef>>,
    /// `tep_find_common_field` of each name.
    common: Vec<Option<u32>>,
    /// The function plugin's per-CPU call stacks (`indent` option).
    fstack: Mutex<tracemux_core::idmap::IdMap<Vec<Option<String>>>>,
    /// funcgraph_entry: the funcgraph_exit event, looked up once.
    exit: OnceLock<Option<ExitInfo>>,
}

impl Plugin {
    pub(crate) fn new(kind: Kind, common: &[FieldDef], own: &[FieldDef]) -> Plugin {
        let ns = names(kind);
        let find_own = |n: &str| own.iter().position(|f| f.name == n).map(|i| i as u32);
        let find_common = |n: &str| common.iter().position(|f| f.name == n).map(|i| i as u32);
        Plugin {
            kind,
            own: ns.iter().map(|n| find_own(n)).collect(),
            any: ns
                .iter()
                .map(|n| {
                    find_common(n)
                        .map(FieldRef::Common)
                        .or_else(|| find_own(n).map(FieldRef::Own))
                })
                .collect(),
            common: ns.iter().map(|n| find_common(n)).collect(),
            fstack: Mutex::new(tracemux_core::idmap::IdMap::new()),
            exit: OnceLock::new(),
        }
    }

    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    /// Print the event; returns whether the `print fmt` output follows.
    pub(crate) fn run(
        &self,
        p: &FtracePrinter,
        out: &mut Vec<u8>,
        data: &[u8],
        size: usize,
        ctx: &PrintCtx<'_>,
    ) -> bool {
        let h = H {
            pl: self,
            p,
            data,
            size,
            ctx,
        };
        match self.kind {
            Kind::SchedSwitch => h.sched_switch(out),
            Kind::SchedWakeup => h.sched_wakeup(out),
            Kind::HrtimerExpire => h.hrtimer_expire(out),
            Kind::HrtimerStart => h.hrtimer_start(out),
            Kind::KmemCallSite => h.kmem_call_site(out),
            Kind::TlbFlush => h.tlb_flush(out),
            Kind::Futex => h.futex(out),
            Kind::Function => h.function(out),
            Kind::KernelStack => h.kernel_stack(out),
            Kind::RawData => h.raw_data(out),
            Kind::FuncRepeats => h.func_repeats(out),
            Kind::FgraphEntry => h.fgraph_entry(out),
            Kind::FgraphExit => h.fgraph_exit(out),
            Kind::KvmExit => h.kvm_exit(out),
            Kind::KvmEntry => h.kvm_entry(out),
            Kind::KvmEmulateInsn => h.kvm_emulate_insn(out),
            Kind::KvmNestedVmexit => h.kvm_nested_vmexit(out),
            Kind::KvmNestedVmexitInject => h.kvm_nested_vmexit_inject(out),
            Kind::KvmMmuGetPage => h.kvm_mmu_get_page(out),
            Kind::KvmMmuRole => h.kvm_mmu_role(out),
            Kind::Mac80211BssInfo => h.mac80211_bss_info(out),
        }
    }
}

/// C's non-zero / zero handler results.
const PRETTY: bool = true;
const DONE: bool = false;

/// One handler call.
struct H<'a> {
    pl: &'a Plugin,
    p: &'a FtracePrinter,
    /// The record and what follows it in its page.
    data: &'a [u8],
    size: usize,
    ctx: &'a PrintCtx<'a>,
}

/// `tep_read_number` of a field (1, 2, 4 or 8 bytes, else not a number);
/// like C, no bounds check against the record (zeros past the page).
fn read_field(f: &FieldDef, data: &[u8], endian: Endian) -> Option<u64> {
    if !matches!(f.size, 1 | 2 | 4 | 8) {
        return None;
    }
    let mut b = [0u8; 8];
    let n = f.size as usize;
    if let Some(src) = data.get(f.offset as usize..) {
        let k = n.min(src.len());
        b[..k].copy_from_slice(&src[..k]);
    }
    endian.read_uint(&b, n)
}

impl<'a> H<'a> {
    fn own(&self, i: usize) -> Option<&'a FieldDef> {
        self.pl.own[i].map(|k| &self.p.fields()[k as usize])
    }

    fn any(&self, i: usize) -> Option<&'a FieldDef> {
        self.pl.any[i].map(|r| match r {
            FieldRef::Common(k) => &self.p.common_fields()[k as usize],
            FieldRef::Own(k) => &self.p.fields()[k as usize],
        })
    }

    fn name(&self, i: usize) -> &'static str {
        names(self.pl.kind)[i]
    }

    fn read(&self, f: &FieldDef) -> Option<u64> {
        read_field(f, self.data, self.ctx.endian)
    }

    /// `get_field_val` on a found (or not) field.
    fn field_val(
        &self,
        out: &mut Vec<u8>,
        f: Option<&FieldDef>,
        i: usize,
        err: bool,
    ) -> Option<u64> {
        let Some(f) = f else {
            if err {
                out.extend_from_slice(b"<CANT FIND FIELD ");
                out.extend_from_slice(self.name(i).as_bytes());
                out.push(b'>');
            }
            return None;
        };
        match self.read(f) {
            Some(v) => Some(v),
            None => {
                if err {
                    out.push(b' ');
                    out.extend_from_slice(self.name(i).as_bytes());
                    out.extend_from_slice(b"=INVALID");
                }
                None
            }
        }
    }

    /// `tep_get_field_val` (own fields).
    fn val(&self, out: &mut Vec<u8>, i: usize, err: bool) -> Option<u64> {
        self.field_val(out, self.own(i), i, err)
    }

    /// [`Self::val`] for a field the handler cannot go without: a missing
    /// or unreadable one is reported, then `!`.
    fn val_or_bang(&self, out: &mut Vec<u8>, i: usize) -> Option<u64> {
        let v = self.val(out, i, true);
        if v.is_none() {
            out.push(b'!');
        }
        v
    }

    /// The fields `0..N` ([`Self::val`]); `None` from the first that fails.
    fn vals<const N: usize>(&self, out: &mut Vec<u8>) -> Option<[u64; N]> {
        let mut a = [0; N];
        for (i, v) in a.iter_mut().enumerate() {
            *v = self.val(out, i, true)?;
        }
        Some(a)
    }

    /// `tep_print_num_field`: `print` formats the value.
    fn num(
        &self,
        out: &mut Vec<u8>,
        i: usize,
        err: bool,
        print: impl FnOnce(&mut Vec<u8>, u64),
    ) -> bool {
        match self.own(i).and_then(|f| self.read(f)) {
            Some(v) => {
                print(out, v);
                true
            }
            None => {
                if err {
                    out.extend_from_slice(b"CAN'T FIND FIELD \"");
                    out.extend_from_slice(self.name(i).as_bytes());
                    out.push(b'"');
                }
                false
            }
        }
    }

    /// `tep_print_func_field(s, " function=%s", ...)`: `name/0x<start - addr>`
    /// or `0x%08llx`.
    fn func_field(&self, out: &mut Vec<u8>, prefix: &[u8], i: usize, err: bool) {
        let Some(v) = self.own(i).and_then(|f| self.read(f)) else {
            if err {
                out.extend_from_slice(b"CAN'T FIND FIELD \"");
                out.extend_from_slice(self.name(i).as_bytes());
                out.push(b'"');
            }
            return;
        };
        out.extend_from_slice(prefix);
        match self.ctx.symbols.find_func(v) {
            Some(sym) => {
                // snprintf into 128 bytes
                let start = out.len();
                out.extend_from_slice(sym.name.as_bytes());
                out.extend_from_slice(b"/0x");
                put_hex(out, sym.addr.wrapping_sub(v));
                out.truncate(start + (out.len() - start).min(127));
            }
            None => {
                out.extend_from_slice(b"0x");
                hex_min(out, v, 8);
            }
        }
    }

    fn func_name(&self, addr: u64) -> Option<&'a str> {
        self.ctx.symbols.find_func(addr).map(|s| s.name)
    }

    // -- sched_switch / sched_wakeup ------------------------------------------

    /// `write_and_save_comm`: `%.*s` of the comm field, registered for `pid`.
    fn comm(&self, out: &mut Vec<u8>, f: &FieldDef, pid: u64) {
        let bytes = self.data.get(f.offset as usize..).unwrap_or(&[]);
        let bytes = &bytes[..(f.size as usize).min(bytes.len())];
        let n = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        out.extend_from_slice(&bytes[..n]);
        if let Some(e) = self.ctx.effects {
            e.borrow_mut().register_comm(pid as i32, &bytes[..n]);
        }
    }

    /// `COMM:PID`, the comm from field `comm` (when the format has it).
    fn comm_pid(&self, out: &mut Vec<u8>, comm: usize, pid: u64) {
        if let Some(f) = self.any(comm) {
            self.comm(out, f, pid);
            out.push(b':');
        }
        put_i64(out, pid as i64);
    }

    fn sched_switch(&self, out: &mut Vec<u8>) -> bool {
        let Some(pid) = self.val_or_bang(out, 0) else {
            return PRETTY;
        };
        self.comm_pid(out, 1, pid);
        out.push(b' ');
        if let Some(v) = self.val(out, 2, true) {
            out.push(b'[');
            put_i64(out, v as i32 as i64);
            out.extend_from_slice(b"] ");
        }
        if let Some(v) = self.val(out, 3, true) {
            write_state(out, v as i32);
        }
        out.extend_from_slice(b" ==> ");
        let Some(pid) = self.val_or_bang(out, 4) else {
            return PRETTY;
        };
        self.comm_pid(out, 5, pid);
        if let Some(v) = self.val(out, 6, true) {
            out.extend_from_slice(b" [");
            put_i64(out, v as i32 as i64);
            out.push(b']');
        }
        DONE
    }

    fn sched_wakeup(&self, out: &mut Vec<u8>) -> bool {
        let Some(pid) = self.val_or_bang(out, 0) else {
            return PRETTY;
        };
        self.comm_pid(out, 1, pid);
        if let Some(v) = self.val(out, 2, true) {
            out.extend_from_slice(b" [");
            put_i64(out, v as i64);
            out.push(b']');
        }
        if let Some(v) = self.val(out, 3, false) {
            out.extend_from_slice(b" success=");
            put_i64(out, v as i64);
        }
        if let Some(v) = self.val(out, 4, false) {
            out.extend_from_slice(b" CPU:");
            dec_min(out, v, 3);
        }
        DONE
    }

    // -- hrtimer ----------------------------------------------------------------

    fn hrtimer_ptr(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"hrtimer=");
        let hex0x = |o: &mut Vec<u8>, v: u64| {
            o.extend_from_slice(b"0x");
            put_hex(o, v);
        };
        if !self.num(out, 0, false, hex0x) {
            self.num(out, 1, true, hex0x);
        }
    }

    fn hrtimer_expire(&self, out: &mut Vec<u8>) -> bool {
        self.hrtimer_ptr(out);
        out.extend_from_slice(b" now=");
        self.num(out, 2, true, put_u64);
        self.func_field(out, b" function=", 3, false);
        DONE
    }

    fn hrtimer_start(&self, out: &mut Vec<u8>) -> bool {
        self.hrtimer_ptr(out);
        self.func_field(out, b" function=", 2, false);
        out.extend_from_slice(b" expires=");
        self.num(out, 3, true, put_u64);
        out.extend_from_slice(b" softexpires=");
        self.num(out, 4, true, put_u64);
        DONE
    }

    // -- kmem, tlb, futex ---------------------------------------------------------

    fn kmem_call_site(&self, out: &mut Vec<u8>) -> bool {
        let Some(v) = self.own(0).and_then(|f| self.read(f)) else {
            return PRETTY;
        };
        if let Some(sym) = self.ctx.symbols.find_func(v) {
            out.push(b'(');
            out.extend_from_slice(sym.name.as_bytes());
            out.extend_from_slice(b"+0x");
            put_hex(out, v.wrapping_sub(sym.addr) as u32 as u64);
            out.extend_from_slice(b") ");
        }
        PRETTY
    }

    fn tlb_flush(&self, out: &mut Vec<u8>) -> bool {
        out.extend_from_slice(b"pages=");
        self.num(out, 0, true, |o, v| put_i64(o, v as i64));
        let Some(v) = self.val(out, 1, true) else {
            // (-1: the print fmt follows)
            return PRETTY;
        };
        out.extend_from_slice(b" reason=");
        out.extend_from_slice(match v {
            0 => b"flush on task switch".as_slice(),
            1 => b"remote shootdown",
            2 => b"local shootdown",
            3 => b"local mm shootdown",
            _ => b"",
        });
        out.extend_from_slice(b" (");
        put_i64(out, v as i64);
        out.push(b')');
        DONE
    }

    fn futex(&self, out: &mut Vec<u8>) -> bool {
        let Some([uaddr, op, val, utime, uaddr2, val3]) = self.vals(out) else {
            return PRETTY;
        };
        let cmd = op & !(128u64 | 256);
        // (name, val, utime, uaddr2, val3): 0 none, 1 "%llu", 2 "0x%08llx"
        const OPS: [(&str, u8, u8, u8, u8); 13] = [
            ("FUTEX_WAIT", 2, 2, 0, 0),
            ("FUTEX_WAKE", 1, 0, 0, 0),
            ("FUTEX_FD", 1, 0, 0, 0),
            ("FUTEX_REQUEUE", 1, 1, 2, 0),
            ("FUTEX_CMP_REQUEUE", 1, 1, 2, 2),
            ("FUTEX_WAKE_OP", 1, 1, 2, 2),
            ("FUTEX_LOCK_PI", 0, 2, 0, 0),
            ("FUTEX_UNLOCK_PI", 0, 0, 0, 0),
            ("FUTEX_TRYLOCK_PI", 0, 0, 0, 0),
            ("FUTEX_WAIT_BITSET", 2, 2, 0, 2),
            ("FUTEX_WAKE_BITSET", 1, 0, 0, 2),
            ("FUTEX_WAIT_REQUEUE_PI", 2, 2, 2, 2),
            ("FUTEX_CMP_REQUEUE_PI", 1, 1, 2, 2),
        ];
        let Some(&(name, fv, fu, fa, f3)) = OPS.get(cmd as usize) else {
            return PRETTY;
        };
        out.extend_from_slice(b"op=");
        out.extend_from_slice(name.as_bytes());
        if op & 128 != 0 {
            out.extend_from_slice(b"|FUTEX_PRIVATE_FLAG");
        }
        if op & 256 != 0 {
            out.extend_from_slice(b"|FUTEX_CLOCK_REALTIME");
        }
        out.extend_from_slice(b" uaddr=0x");
        hex_min(out, uaddr, 8);
        let put = |o: &mut Vec<u8>, label: &[u8], how: u8, v: u64| match how {
            1 => {
                o.extend_from_slice(label);
                put_u64(o, v);
            }
            2 => {
                o.extend_from_slice(label);
                o.extend_from_slice(b"0x");
                hex_min(o, v, 8);
            }
            _ => {}
        };
        put(out, b" val=", fv, val);
        put(out, if fu == 1 { b" val2=" } else { b" utime=" }, fu, utime);
        put(out, b" uaddr2=", fa, uaddr2);
        put(out, b" val3=", f3, val3);
        DONE
    }

    // -- ftrace events ------------------------------------------------------------

    /// The function plugin's `add_and_get_index` (the `indent` option).
    fn indent_index(&self, parent: &str, child: Option<&str>, cpu: u32) -> usize {
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

    fn function(&self, out: &mut Vec<u8>) -> bool {
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

    fn kernel_stack(&self, out: &mut Vec<u8>) -> bool {
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

    fn raw_data(&self, out: &mut Vec<u8>) -> bool {
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

    fn func_repeats(&self, out: &mut Vec<u8>) -> bool {
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

    fn exit_info(&self) -> Option<&ExitInfo> {
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

    fn fgraph_entry(&self, out: &mut Vec<u8>) -> bool {
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

    fn fgraph_exit(&self, out: &mut Vec<u8>) -> bool {
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

    // -- kvm ------------------------------------------------------------------------

    fn exit_reason(&self, out: &mut Vec<u8>, reason: usize, isa: usize) -> bool {
        let Some(val) = self.val(out, reason, true) else {
            return false;
        };
        let isa = self.val(out, isa, false).unwrap_or(1);
        match find_exit_reason(isa, val as i32) {
            Ok(Some(r)) => {
                out.extend_from_slice(b"reason ");
                out.extend_from_slice(r.as_bytes());
            }
            Ok(None) => {
                out.extend_from_slice(b"reason UNKNOWN (");
                put_u64(out, val);
                out.push(b')');
            }
            Err(()) => out.extend_from_slice(b"reason UNKNOWN-ISA"),
        }
        true
    }

    fn kvm_exit(&self, out: &mut Vec<u8>) -> bool {
        if !self.exit_reason(out, 0, 1) {
            return PRETTY;
        }
        let Some(rip) = self.val(out, 2, true) else {
            return PRETTY;
        };
        out.extend_from_slice(b" rip 0x");
        put_hex(out, rip);
        let mut scratch = Vec::new();
        if let (Some(i1), Some(i2)) = (
            self.val(&mut scratch, 3, false),
            self.val(&mut scratch, 4, false),
        ) {
            out.extend_from_slice(b" info ");
            put_hex(out, i1);
            out.push(b' ');
            put_hex(out, i2);
        }
        DONE
    }

    fn kvm_entry(&self, out: &mut Vec<u8>) -> bool {
        self.num(out, 0, true, |o, v| {
            o.extend_from_slice(b" vcpu ");
            put_u64(o, v as u32 as u64);
        });
        let Some(rip) = self.val(out, 1, true) else {
            return PRETTY;
        };
        out.extend_from_slice(b" rip 0x");
        put_hex(out, rip);
        DONE
    }

    fn kvm_emulate_insn(&self, out: &mut Vec<u8>) -> bool {
        let Some([rip, csbase, len, _flags, failed]) = self.vals(out) else {
            return PRETTY;
        };
        // tep_get_field_raw of "insn"
        let Some(f) = self.own(5) else {
            out.extend_from_slice(b"<CANT FIND FIELD insn>");
            return PRETTY;
        };
        let mut off = f.offset as usize;
        if f.flags.has(FieldFlags::DYNAMIC) {
            let loc = read_field(f, self.data, self.ctx.endian).unwrap_or(0);
            off = (loc & 0xffff) as usize;
            if f.flags.has(FieldFlags::RELATIVE) {
                off += (f.offset + f.size) as usize;
            }
        }
        put_hex(out, csbase);
        out.push(b':');
        put_hex(out, rip);
        out.extend_from_slice(b": ");
        // no disassembler: the bytes in hex
        let len = (len as i32).clamp(0, 15) as usize;
        for k in 0..len {
            if k > 0 {
                out.push(b' ');
            }
            put_hex2(out, self.data.get(off + k).copied().unwrap_or(0));
        }
        if failed != 0 {
            out.extend_from_slice(b" FAIL");
        }
        DONE
    }

    fn nested_inject(&self, out: &mut Vec<u8>, base: usize) -> bool {
        if !self.exit_reason(out, base, base + 1) {
            return PRETTY;
        }
        let hexnum = |label: &'static [u8]| {
            move |o: &mut Vec<u8>, v: u64| {
                o.extend_from_slice(label);
                put_hex(o, v);
            }
        };
        self.num(out, base + 2, true, hexnum(b" info1 "));
        self.num(out, base + 3, true, hexnum(b" info2 "));
        self.num(out, base + 4, true, hexnum(b" int_info "));
        self.num(out, base + 5, true, hexnum(b" int_info_err "));
        DONE
    }

    fn kvm_nested_vmexit(&self, out: &mut Vec<u8>) -> bool {
        let Some(rip) = self.val(out, 0, true) else {
            return PRETTY;
        };
        out.extend_from_slice(b" rip ");
        put_hex(out, rip);
        self.nested_inject(out, 1)
    }

    fn kvm_nested_vmexit_inject(&self, out: &mut Vec<u8>) -> bool {
        self.nested_inject(out, 0)
    }

    fn kvm_mmu_get_page(&self, out: &mut Vec<u8>) -> bool {
        let Some(created) = self.val(out, 0, true) else {
            return PRETTY;
        };
        out.extend_from_slice(if created != 0 { b"new " } else { b"existing " });
        let Some(gfn) = self.val(out, 1, true) else {
            return PRETTY;
        };
        out.extend_from_slice(b"sp gfn ");
        put_hex(out, gfn);
        out.push(b' ');
        self.mmu_role(out, 2)
    }

    fn kvm_mmu_role(&self, out: &mut Vec<u8>) -> bool {
        self.mmu_role(out, 0)
    }

    fn mmu_role(&self, out: &mut Vec<u8>, base: usize) -> bool {
        let Some(val) = self.val(out, base, true) else {
            return PRETTY;
        };
        let word = val as u32;
        if self.ctx.endian == Endian::Little {
            const ACCESS: [&str; 8] = ["---", "--x", "w--", "w-x", "-u-", "-ux", "wu-", "wux"];
            let bit = |n: u32| (word >> n) & 1 != 0;
            put_u64(out, (word & 0xf) as u64);
            out.extend_from_slice(b" q");
            put_u64(out, ((word >> 5) & 3) as u64);
            if bit(7) {
                out.extend_from_slice(b" direct");
            }
            out.push(b' ');
            out.extend_from_slice(ACCESS[((word >> 8) & 7) as usize].as_bytes());
            if bit(11) {
                out.extend_from_slice(b" invalid");
            }
            out.push(b' ');
            if !bit(4) {
                out.push(b'!');
            }
            out.extend_from_slice(b"pae ");
            if !bit(12) {
                out.push(b'!');
            }
            out.extend_from_slice(b"nxe ");
            if !bit(13) {
                out.push(b'!');
            }
            out.extend_from_slice(b"wp");
            if bit(14) {
                out.extend_from_slice(b" smep");
            }
            if bit(15) {
                out.extend_from_slice(b" smap");
            }
            if word >> 24 != 0 {
                out.extend_from_slice(b" smm");
            }
        } else {
            out.extend_from_slice(b"WORD: ");
            hex_min(out, word as u64, 8);
        }
        self.num(out, base + 1, true, |o, v| {
            o.extend_from_slice(b" root ");
            put_u64(o, v as u32 as u64);
            o.push(b' ');
        });
        let Some(unsync) = self.val(out, base + 2, true) else {
            return PRETTY;
        };
        // ("%s%c" with a NUL, which ends the printed line)
        out.extend_from_slice(if unsync != 0 { b"unsync" } else { b"sync" });
        DONE
    }

    // -- mac80211 -------------------------------------------------------------------

    fn mac_string(&self, out: &mut Vec<u8>, i: usize) {
        let Some(f) = self.own(i) else {
            out.extend_from_slice(b"NOTFOUND:");
            out.extend_from_slice(self.name(i).as_bytes());
            return;
        };
        let mut off = f.offset as usize;
        let mut len = f.size as usize;
        if f.type_name.starts_with("__data_loc") {
            let Some(v) = self.read(f) else {
                out.extend_from_slice(b"invalid_data_loc");
                return;
            };
            off = (v & 0xffff) as usize;
            len = ((v >> 16) & 0xffff) as usize;
        }
        let b = self.data.get(off..).unwrap_or(&[]);
        let b = &b[..len.min(b.len())];
        let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        out.extend_from_slice(&b[..n]);
    }

    fn mac80211_bss_info(&self, out: &mut Vec<u8>) -> bool {
        self.mac_string(out, 0);
        out.extend_from_slice(b" vif:");
        self.mac_string(out, 1);
        self.num(out, 2, true, |o, v| {
            o.push(b'(');
            put_i64(o, v as i32 as i64);
            o.push(b')');
        });
        let sf = |o: &mut Vec<u8>, i: usize| {
            let n = self.name(i);
            self.num(o, i, false, |o, v| {
                o.extend_from_slice(n.as_bytes());
                o.push(b':');
                put_i64(o, v as i32 as i64);
            });
        };
        let sfx = |o: &mut Vec<u8>, i: usize| {
            let n = self.name(i);
            self.num(o, i, false, |o, v| {
                o.extend_from_slice(n.as_bytes());
                o.push(b':');
                let v = v as u32;
                if v != 0 {
                    o.extend_from_slice(b"0x");
                }
                put_hex(o, v as u64);
            });
        };
        let nl = |o: &mut Vec<u8>| {
            o.push(b'\n');
            o.resize(o.len() + 65, b' ');
        };
        nl(out);
        for i in 3..=8 {
            sf(out, i);
            out.push(b' ');
        }
        nl(out);
        sf(out, 9);
        out.push(b' ');
        sfx(out, 10);
        out.push(b' ');
        sfx(out, 11);
        out.push(b' ');
        sf(out, 12);
        nl(out);
        sf(out, 13);
        DONE
    }
}

/// plugin_sched_switch's `write_state`.
fn write_state(out: &mut Vec<u8>, val: i32) {
    const STATES: &[u8; 8] = b"SDTtZXxW";
    let mut found = false;
    for (i, &c) in STATES.iter().enumerate() {
        if val & (1 << i) == 0 {
            continue;
        }
        if found {
            out.push(b'|');
        }
        found = true;
        out.push(c);
    }
    if !found {
        out.push(b'R');
    }
}

/// The most blanks a function graph line is indented by. trace-cmd
/// indents by twice the depth the record says; the kernel's depth is far
/// below this (its return stack holds a few hundred calls at most), so
/// only a damaged record reaches the limit, which keeps it from sizing
/// the line (up to 4 GB of blanks).
pub const MAX_GRAPH_INDENT: usize = 1 << 16;

fn indent(out: &mut Vec<u8>, depth: u64) {
    let n = (depth.wrapping_mul(2)) as i32;
    if n > 0 {
        out.resize(out.len() + (n as usize).min(MAX_GRAPH_INDENT), b' ');
    }
}

/// trace-cmd's `print_graph_overhead`.
fn graph_overhead(out: &mut Vec<u8>, duration: u64) {
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
fn graph_duration(out: &mut Vec<u8>, duration: u64) {
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
fn dec_min(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut b = Vec::with_capacity(20);
    put_u64(&mut b, v);
    for _ in b.len()..width {
        out.push(b'0');
    }
    out.extend_from_slice(&b);
}

/// `%0Nllx`.
fn hex_min(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut b = Vec::with_capacity(16);
    put_hex(&mut b, v);
    for _ in b.len()..width {
        out.push(b'0');
    }
    out.extend_from_slice(&b);
}

/// libtraceevent's `print_event_time` with the formats trace-cmd gives it.
pub(crate) fn print_time(out: &mut Vec<u8>, ts: u64, time: TimeFormat) {
    let pad = |out: &mut Vec<u8>, v: u64, w: usize, c: u8| {
        let mut b = Vec::with_capacity(20);
        put_u64(&mut b, v);
        for _ in b.len()..w {
            out.push(c);
        }
        out.extend_from_slice(&b);
    };
    match time {
        TimeFormat::Usecs => {
            let t = ts.wrapping_add(500) / 1000;
            pad(out, t / 1_000_000, 5, b' ');
            out.push(b'.');
            pad(out, t % 1_000_000, 6, b'0');
        }
        TimeFormat::Nsecs => {
            pad(out, ts / 1_000_000_000, 5, b' ');
            out.push(b'.');
            pad(out, ts % 1_000_000_000, 9, b'0');
        }
        TimeFormat::Raw => pad(out, ts, 12, b' '),
    }
}

/// plugin_kvm's `find_exit_reason`: Err for an unknown ISA, Ok(None) for an
/// unknown reason.
fn find_exit_reason(isa: u64, val: i32) -> Result<Option<&'static str>, ()> {
    const VMX: &[(&str, i32)] = &[
        ("EXCEPTION_NMI", 0),
        ("EXTERNAL_INTERRUPT", 1),
        ("TRIPLE_FAULT", 2),
        ("PENDING_INTERRUPT", 7),
        ("NMI_WINDOW", 8),
        ("TASK_SWITCH", 9),
        ("CPUID", 10),
        ("HLT", 12),
        ("INVD", 13),
        ("INVLPG", 14),
        ("RDPMC", 15),
        ("RDTSC", 16),
        ("VMCALL", 18),
        ("VMCLEAR", 19),
        ("VMLAUNCH", 20),
        ("VMPTRLD", 21),
        ("VMPTRST", 22),
        ("VMREAD", 23),
        ("VMRESUME", 24),
        ("VMWRITE", 25),
        ("VMOFF", 26),
        ("VMON", 27),
        ("CR_ACCESS", 28),
        ("DR_ACCESS", 29),
        ("IO_INSTRUCTION", 30),
        ("MSR_READ", 31),
        ("MSR_WRITE", 32),
        ("MWAIT_INSTRUCTION", 36),
        ("MONITOR_INSTRUCTION", 39),
        ("PAUSE_INSTRUCTION", 40),
        ("MCE_DURING_VMENTRY", 41),
        ("TPR_BELOW_THRESHOLD", 43),
        ("APIC_ACCESS", 44),
        ("EOI_INDUCED", 45),
        ("EPT_VIOLATION", 48),
        ("EPT_MISCONFIG", 49),
        ("INVEPT", 50),
        ("PREEMPTION_TIMER", 52),
        ("WBINVD", 54),
        ("XSETBV", 55),
        ("APIC_WRITE", 56),
        ("INVPCID", 58),
        ("PML_FULL", 62),
        ("XSAVES", 63),
        ("XRSTORS", 64),
    ];
    const SVM: &[(&str, i32)] = &[
        ("EXIT_READ_CR0", 0x000),
        ("EXIT_READ_CR3", 0x003),
        ("EXIT_READ_CR4", 0x004),
        ("EXIT_READ_CR8", 0x008),
        ("EXIT_WRITE_CR0", 0x010),
        ("EXIT_WRITE_CR3", 0x013),
        ("EXIT_WRITE_CR4", 0x014),
        ("EXIT_WRITE_CR8", 0x018),
        ("EXIT_READ_DR0", 0x020),
        ("EXIT_READ_DR1", 0x021),
        ("EXIT_READ_DR2", 0x022),
        ("EXIT_READ_DR3", 0x023),
        ("EXIT_READ_DR4", 0x024),
        ("EXIT_READ_DR5", 0x025),
        ("EXIT_READ_DR6", 0x026),
        ("EXIT_READ_DR7", 0x027),
        ("EXIT_WRITE_DR0", 0x030),
        ("EXIT_WRITE_DR1", 0x031),
        ("EXIT_WRITE_DR2", 0x032),
        ("EXIT_WRITE_DR3", 0x033),
        ("EXIT_WRITE_DR4", 0x034),
        ("EXIT_WRITE_DR5", 0x035),
        ("EXIT_WRITE_DR6", 0x036),
        ("EXIT_WRITE_DR7", 0x037),
        ("EXIT_EXCP_DE", 0x040),
        ("EXIT_EXCP_DB", 0x041),
        ("EXIT_EXCP_BP", 0x043),
        ("EXIT_EXCP_OF", 0x044),
        ("EXIT_EXCP_BR", 0x045),
        ("EXIT_EXCP_UD", 0x046),
        ("EXIT_EXCP_NM", 0x047),
        ("EXIT_EXCP_DF", 0x048),
        ("EXIT_EXCP_TS", 0x04a),
        ("EXIT_EXCP_NP", 0x04b),
        ("EXIT_EXCP_SS", 0x04c),
        ("EXIT_EXCP_GP", 0x04d),
        ("EXIT_EXCP_PF", 0x04e),
        ("EXIT_EXCP_MF", 0x050),
        ("EXIT_EXCP_AC", 0x051),
        ("EXIT_EXCP_MC", 0x052),
        ("EXIT_EXCP_XF", 0x053),
        ("EXIT_INTR", 0x060),
        ("EXIT_NMI", 0x061),
        ("EXIT_SMI", 0x062),
        ("EXIT_INIT", 0x063),
        ("EXIT_VINTR", 0x064),
        ("EXIT_CR0_SEL_WRITE", 0x065),
        ("EXIT_IDTR_READ", 0x066),
        ("EXIT_GDTR_READ", 0x067),
        ("EXIT_LDTR_READ", 0x068),
        ("EXIT_TR_READ", 0x069),
        ("EXIT_IDTR_WRITE", 0x06a),
        ("EXIT_GDTR_WRITE", 0x06b),
        ("EXIT_LDTR_WRITE", 0x06c),
        ("EXIT_TR_WRITE", 0x06d),
        ("EXIT_RDTSC", 0x06e),
        ("EXIT_RDPMC", 0x06f),
        ("EXIT_PUSHF", 0x070),
        ("EXIT_POPF", 0x071),
        ("EXIT_CPUID", 0x072),
        ("EXIT_RSM", 0x073),
        ("EXIT_IRET", 0x074),
        ("EXIT_SWINT", 0x075),
        ("EXIT_INVD", 0x076),
        ("EXIT_PAUSE", 0x077),
        ("EXIT_HLT", 0x078),
        ("EXIT_INVLPG", 0x079),
        ("EXIT_INVLPGA", 0x07a),
        ("EXIT_IOIO", 0x07b),
        ("EXIT_MSR", 0x07c),
        ("EXIT_TASK_SWITCH", 0x07d),
        ("EXIT_FERR_FREEZE", 0x07e),
        ("EXIT_SHUTDOWN", 0x07f),
        ("EXIT_VMRUN", 0x080),
        ("EXIT_VMMCALL", 0x081),
        ("EXIT_VMLOAD", 0x082),
        ("EXIT_VMSAVE", 0x083),
        ("EXIT_STGI", 0x084),
        ("EXIT_CLGI", 0x085),
        ("EXIT_SKINIT", 0x086),
        ("EXIT_RDTSCP", 0x087),
        ("EXIT_ICEBP", 0x088),
        ("EXIT_WBINVD", 0x089),
        ("EXIT_MONITOR", 0x08a),
        ("EXIT_MWAIT", 0x08b),
        ("EXIT_MWAIT_COND", 0x08c),
        ("EXIT_XSETBV", 0x08d),
        ("EXIT_NPF", 0x400),
        ("EXIT_AVIC_INCOMPLETE_IPI", 0x401),
        ("EXIT_AVIC_UNACCELERATED_ACCESS", 0x402),
        ("EXIT_ERR", -1),
    ];
    let table = match isa {
        1 => VMX,
        2 => SVM,
        _ => return Err(()),
    };
    Ok(table.iter().find(|(_, v)| *v == val).map(|(n, _)| *n))
}

/// Call a helper function registered by a plugin (`tep_register_print_function`):
/// `vals` are the evaluated arguments, `ptrs` their offsets in `data` when
/// they point into the record (`__get_dynamic_array`). Returns the
/// function's value; what it prints goes to `out`.
pub(crate) fn call_print_function(
    out: &mut Vec<u8>,
    name: &str,
    vals: &[u64; 4],
    ptrs: &[Option<usize>; 4],
    data: &[u8],
) -> u64 {
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    match name {
        "__le16_to_cpup" => match ptrs[0] {
            Some(o) => u16::from_le_bytes([byte(o), byte(o + 1)]) as u64,
            None => 0,
        },
        "jbd2_dev_to_name" => {
            let dev = vals[0] as u32;
            put_i64(out, (dev >> 20) as i32 as i64);
            out.push(b':');
            put_i64(out, (dev & ((1 << 20) - 1)) as i32 as i64);
            0
        }
        "jiffies_to_msecs" => {
            put_i64(out, vals[0] as i64);
            vals[0]
        }
        "is_writable_pte" => vals[0] & 2,
        "xen_hypercall_name" => {
            out.extend_from_slice(xen_hypercall_name(vals[0] as u32).as_bytes());
            0
        }
        "scsi_trace_parse_cdb" => {
            if let Some(o) = ptrs[1] {
                let mut cdb = [0u8; 32];
                for (k, c) in cdb.iter_mut().enumerate() {
                    *c = byte(o + k);
                }
                scsi_trace_parse_cdb(out, &cdb);
            }
            0
        }
        _ => 0,
    }
}

fn xen_hypercall_name(op: u32) -> &'static str {
    const NAMES: &[(u32, &str)] = &[
        (0, "(set_trap_table)"),
        (1, "(mmu_update)"),
        (2, "(set_gdt)"),
        (3, "(stack_switch)"),
        (4, "(set_callbacks)"),
        (5, "(fpu_taskswitch)"),
        (6, "(sched_op_compat)"),
        (7, "(dom0_op)"),
        (8, "(set_debugreg)"),
        (9, "(get_debugreg)"),
        (10, "(update_descriptor)"),
        (12, "(memory_op)"),
        (13, "(multicall)"),
        (14, "(update_va_mapping)"),
        (15, "(set_timer_op)"),
        (16, "(event_channel_op_compat)"),
        (17, "(xen_version)"),
        (18, "(console_io)"),
        (19, "(physdev_op_compat)"),
        (20, "(grant_table_op)"),
        (21, "(vm_assist)"),
        (22, "(update_va_mapping_otherdomain)"),
        (23, "(iret)"),
        (24, "(vcpu_op)"),
        (25, "(set_segment_base)"),
        (26, "(mmuext_op)"),
        (27, "(acm_op)"),
        (28, "(nmi_op)"),
        (29, "(sched_op)"),
        (30, "(callback_op)"),
        (31, "(xenoprof_op)"),
        (32, "(event_channel_op)"),
        (33, "(physdev_op)"),
        (34, "(hvm_op)"),
        (48, "(arch_0)"),
        (49, "(arch_1)"),
        (50, "(arch_2)"),
        (51, "(arch_3)"),
        (52, "(arch_4)"),
        (53, "(arch_5)"),
        (54, "(arch_6)"),
        (55, "(arch_7)"),
    ];
    NAMES.iter().find(|(v, _)| *v == op).map_or("", |(_, n)| n)
}

/// plugin_scsi's `scsi_trace_parse_cdb` (its text ends with a NUL).
fn scsi_trace_parse_cdb(out: &mut Vec<u8>, cdb: &[u8; 32]) {
    // C shifts bytes as int: bit 7 << 24 sign-extends into a 64-bit sector_t
    let sh = |b: u8, n: u32| ((b as i32) << n) as i64 as u64;
    let be32 =
        |k: usize| sh(cdb[k], 24) | sh(cdb[k + 1], 16) | sh(cdb[k + 2], 8) | cdb[k + 3] as u64;
    let hi32 = |k: usize| {
        ((cdb[k] as u64) << 56)
            | ((cdb[k + 1] as u64) << 48)
            | ((cdb[k + 2] as u64) << 40)
            | ((cdb[k + 3] as u64) << 32)
    };
    let lba_txlen = |out: &mut Vec<u8>, lba: u64, txlen: u64| {
        out.extend_from_slice(b"lba=");
        put_u64(out, lba);
        out.extend_from_slice(b" txlen=");
        put_u64(out, txlen);
    };
    let protect = |out: &mut Vec<u8>, b: u8| {
        out.extend_from_slice(b" protect=");
        put_u64(out, (b >> 5) as u64);
    };
    let unmap = |out: &mut Vec<u8>, b: u8| {
        out.extend_from_slice(b" unmap=");
        put_u64(out, ((b >> 3) & 1) as u64);
    };
    let misc = |out: &mut Vec<u8>| out.push(b'-');
    let sa32 = ((cdb[8] as u32) << 8) | cdb[9] as u32;
    match cdb[0] {
        0x08 | 0x0a => {
            let lba = (((cdb[1] & 0x1f) as u64) << 16) | ((cdb[2] as u64) << 8) | cdb[3] as u64;
            lba_txlen(out, lba, cdb[4] as u64);
        }
        0x28 | 0x2f | 0x2a | 0x41 => {
            let txlen = ((cdb[7] as u64) << 8) | cdb[8] as u64;
            lba_txlen(out, be32(2), txlen);
            protect(out, cdb[1]);
            if cdb[0] == 0x41 {
                unmap(out, cdb[1]);
            }
        }
        0xa8 | 0xaf | 0xaa => {
            lba_txlen(out, be32(2), be32(6));
            protect(out, cdb[1]);
        }
        0x88 | 0x8f | 0x8a | 0x93 => {
            lba_txlen(out, hi32(2) | be32(6), be32(10));
            protect(out, cdb[1]);
            if cdb[0] == 0x93 {
                unmap(out, cdb[1]);
            }
        }
        0x42 => {
            let regions = ((cdb[7] as u32) << 8) | cdb[8] as u32;
            out.extend_from_slice(b"regions=");
            put_u64(out, (regions.wrapping_sub(8) / 16) as u64);
        }
        0x9e => {
            let cmd = match cdb[1] & 0x1f {
                0x10 => Some("READ_CAPACITY_16"),
                0x12 => Some("GET_LBA_STATUS"),
                _ => None,
            };
            match cmd {
                Some(c) => {
                    out.extend_from_slice(c.as_bytes());
                    out.extend_from_slice(b" lba=");
                    put_u64(out, hi32(2) | be32(6));
                    out.extend_from_slice(b" alloc_len=");
                    put_u64(out, be32(10) as u32 as u64);
                }
                None => out.extend_from_slice(b"UNKNOWN"),
            }
        }
        0x7f => match sa32 {
            0x09 | 0x0a | 0x0b | 0x0d => {
                let cmd = match sa32 {
                    0x09 => "READ",
                    0x0a => "VERIFY",
                    0x0b => "WRITE",
                    _ => "WRITE_SAME",
                };
                out.extend_from_slice(cmd.as_bytes());
                out.extend_from_slice(b"_32 ");
                lba_txlen(out, hi32(12) | be32(16), be32(28));
                protect(out, cdb[10]);
                out.extend_from_slice(b" ei_lbrt=");
                put_u64(out, be32(20) as u32 as u64);
                if sa32 == 0x0d {
                    unmap(out, cdb[10]);
                }
            }
            _ => misc(out),
        },
        _ => misc(out),
    }
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_and_durations() {
        let mut o = Vec::new();
        write_state(&mut o, 0);
        o.push(b' ');
        write_state(&mut o, 1);
        o.push(b' ');
        write_state(&mut o, 0x82);
        assert_eq!(o, b"R S D|W");
        let mut o = Vec::new();
        graph_duration(&mut o, 1234);
        assert_eq!(o, b"1.234 us   |  ");
        let mut o = Vec::new();
        graph_duration(&mut o, 12_345_678_901);
        assert_eq!(o, b"12345678 us |  ");
        let mut o = Vec::new();
        graph_overhead(&mut o, 20_000);
        assert_eq!(o, b"+ ");
    }

    #[test]
    fn times() {
        let mut o = Vec::new();
        print_time(&mut o, 618_316_126_501, TimeFormat::Usecs);
        o.push(b'|');
        print_time(&mut o, 618_316_126_501, TimeFormat::Nsecs);
        o.push(b'|');
        print_time(&mut o, 42, TimeFormat::Raw);
        assert_eq!(o, b"  618.316127|  618.316126501|          42");
    }

    #[test]
    fn scsi_cdb() {
        let mut cdb = [0u8; 32];
        cdb[0] = 0x28;
        cdb[5] = 0x10;
        cdb[8] = 8;
        let mut o = Vec::new();
        scsi_trace_parse_cdb(&mut o, &cdb);
        assert_eq!(o, b"lba=16 txlen=8 protect=0\0");
        let mut o = Vec::new();
        let mut v = [0u64; 4];
        v[0] = (8 << 20) | 1;
        call_print_function(&mut o, "jbd2_dev_to_name", &v, &[None; 4], &[]);
        assert_eq!(o, b"8:1");
    }

    #[test]
    fn cpu_and_bit_masks() {
        let mut o = Vec::new();
        crate::printfmt::cpumask_text(&mut o, &[0x0f, 0x01, 0, 0, 0, 0, 0, 0x80], false);
        assert_eq!(o, b"0-3,8,63");
        let mut o = Vec::new();
        crate::printfmt::cpumask_text(&mut o, &[0xff, 0xff, 0, 1], true);
        assert_eq!(o, b"0,16-31");
        let mut o = Vec::new();
        crate::printfmt::bitmask_text(&mut o, &[1, 2, 3, 4, 5, 6, 7, 8], false);
        assert_eq!(o, b"08070605,04030201");
        let mut o = Vec::new();
        crate::printfmt::bitmask_text(&mut o, &[1, 2, 3, 4, 5], true);
        assert_eq!(o, b"01,02030405");
        let mut o = Vec::new();
        crate::printfmt::bitmask_text(&mut o, &[], false);
        assert_eq!(o, b"");
    }
}
