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

mod events;
mod graph;
mod kvm;

use events::*;
use graph::*;

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
        let h = HandlerCall {
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
struct HandlerCall<'a> {
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

impl<'a> HandlerCall<'a> {
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

    // -- hrtimer ----------------------------------------------------------------

    // -- kmem, tlb, futex ---------------------------------------------------------

    // -- ftrace events ------------------------------------------------------------

    // -- kvm ------------------------------------------------------------------------

    // -- mac80211 -------------------------------------------------------------------
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
