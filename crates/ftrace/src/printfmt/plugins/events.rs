//! The other plugins' handlers: `sched_switch`/`sched_wakeup` (with the
//! task state letters), hrtimer, kmem, tlb, futex, mac80211, and the helpers
//! of xen (hypercall names) and scsi (CDB text).

use super::*;

impl<'a> HandlerCall<'a> {
    pub(super) fn sched_switch(&self, out: &mut Vec<u8>) -> bool {
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

    pub(super) fn sched_wakeup(&self, out: &mut Vec<u8>) -> bool {
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

    pub(super) fn hrtimer_ptr(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"hrtimer=");
        let hex0x = |o: &mut Vec<u8>, v: u64| {
            o.extend_from_slice(b"0x");
            put_hex(o, v);
        };
        if !self.num(out, 0, false, hex0x) {
            self.num(out, 1, true, hex0x);
        }
    }

    pub(super) fn hrtimer_expire(&self, out: &mut Vec<u8>) -> bool {
        self.hrtimer_ptr(out);
        out.extend_from_slice(b" now=");
        self.num(out, 2, true, put_u64);
        self.func_field(out, b" function=", 3, false);
        DONE
    }

    pub(super) fn hrtimer_start(&self, out: &mut Vec<u8>) -> bool {
        self.hrtimer_ptr(out);
        self.func_field(out, b" function=", 2, false);
        out.extend_from_slice(b" expires=");
        self.num(out, 3, true, put_u64);
        out.extend_from_slice(b" softexpires=");
        self.num(out, 4, true, put_u64);
        DONE
    }

    pub(super) fn kmem_call_site(&self, out: &mut Vec<u8>) -> bool {
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

    pub(super) fn tlb_flush(&self, out: &mut Vec<u8>) -> bool {
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

    pub(super) fn futex(&self, out: &mut Vec<u8>) -> bool {
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

    pub(super) fn mac_string(&self, out: &mut Vec<u8>, i: usize) {
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

    pub(super) fn mac80211_bss_info(&self, out: &mut Vec<u8>) -> bool {
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
pub(super) fn write_state(out: &mut Vec<u8>, val: i32) {
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

pub(super) fn xen_hypercall_name(op: u32) -> &'static str {
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
pub(super) fn scsi_trace_parse_cdb(out: &mut Vec<u8>, cdb: &[u8; 32]) {
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
