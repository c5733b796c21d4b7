//! libtraceevent's `plugin_kvm`: exits with their reasons per ISA, entries,
//! emulated instructions, nested exits and the MMU's page roles.

use super::*;

impl<'a> HandlerCall<'a> {
    pub(super) fn exit_reason(&self, out: &mut Vec<u8>, reason: usize, isa: usize) -> bool {
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

    pub(super) fn kvm_exit(&self, out: &mut Vec<u8>) -> bool {
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

    pub(super) fn kvm_entry(&self, out: &mut Vec<u8>) -> bool {
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

    pub(super) fn kvm_emulate_insn(&self, out: &mut Vec<u8>) -> bool {
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

    pub(super) fn nested_inject(&self, out: &mut Vec<u8>, base: usize) -> bool {
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

    pub(super) fn kvm_nested_vmexit(&self, out: &mut Vec<u8>) -> bool {
        let Some(rip) = self.val(out, 0, true) else {
            return PRETTY;
        };
        out.extend_from_slice(b" rip ");
        put_hex(out, rip);
        self.nested_inject(out, 1)
    }

    pub(super) fn kvm_nested_vmexit_inject(&self, out: &mut Vec<u8>) -> bool {
        self.nested_inject(out, 0)
    }

    pub(super) fn kvm_mmu_get_page(&self, out: &mut Vec<u8>) -> bool {
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

    pub(super) fn kvm_mmu_role(&self, out: &mut Vec<u8>) -> bool {
        self.mmu_role(out, 0)
    }

    pub(super) fn mmu_role(&self, out: &mut Vec<u8>, base: usize) -> bool {
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
}

/// plugin_kvm's `find_exit_reason`: Err for an unknown ISA, Ok(None) for an
/// unknown reason.
pub(super) fn find_exit_reason(isa: u64, val: i32) -> Result<Option<&'static str>, ()> {
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
