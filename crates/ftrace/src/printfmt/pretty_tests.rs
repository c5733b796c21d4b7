//! Tests of the pretty view (`trace-cmd report` without `-R`) on records
//! built by hand. The expectations follow libtraceevent 1.7.1 and the
//! plugins trace-cmd 3.1.6 loads; the same code paths are compared with the
//! real trace-cmd on whole files in `tests/fixtures/synthetic/`
//! (`ftrace-v7`, `plugins-v7`, `allevents-v7`).

use std::cell::RefCell;
use std::sync::Arc;

use tracemux_core::bytes::Endian;
use tracemux_core::model::{ClassTable, Effects, EventClass, PrintCtx, TimeFormat};
use tracemux_core::tables::{PrintkTable, SymbolTable};

use super::test_util::{self, format_text, record};
use crate::format::parse_format;

/// A format from `"TYPE NAME; OFFSET SIZE SIGNED"` field specs.
fn format(system: &str, name: &str, id: u32, fields: &[&str], print_fmt: &str) -> EventClass {
    let t = format_text(name, id, fields, print_fmt);
    let f = parse_format(&t, 8, system == "ftrace").unwrap();
    crate::event_class(&f, system, 8)
}

fn symbols() -> SymbolTable {
    test_util::symbols(
        'T',
        &[
            ("vfs_read", 0xffff_ffff_8110_0c00u64),
            ("ksys_read", 0xffff_ffff_8110_0800),
            ("schedule", 0xffff_ffff_8110_2800),
        ],
    )
}

/// The record: common fields then `parts` at their offsets.
fn rec(id: u16, pid: i32, size: usize, parts: &[(usize, &[u8])]) -> Vec<u8> {
    let (id, pid) = (id.to_le_bytes(), pid.to_le_bytes());
    let mut all: Vec<(usize, &[u8])> = vec![(0, &id), (4, &pid)];
    all.extend_from_slice(parts);
    record(size, &all)
}

struct Env {
    symbols: SymbolTable,
    printk: PrintkTable,
    classes: ClassTable,
    effects: RefCell<Effects>,
}

impl Env {
    fn new() -> Env {
        Env {
            symbols: symbols(),
            printk: PrintkTable::default(),
            classes: ClassTable::new(),
            effects: RefCell::new(Effects::default()),
        }
    }

    fn ctx<'a>(&'a self, next: Option<&'a [u8]>) -> PrintCtx<'a> {
        PrintCtx {
            ts: 618_316_126_501,
            time: TimeFormat::Usecs,
            classes: Some(&self.classes),
            next,
            effects: Some(&self.effects),
            ..PrintCtx::new(Endian::Little, 8, &self.symbols, &self.printk, 0)
        }
    }

    fn pretty(&self, c: &EventClass, d: &[u8]) -> String {
        self.pretty_next(c, d, None)
    }

    fn pretty_next(&self, c: &EventClass, d: &[u8], next: Option<&[u8]>) -> String {
        let mut out = Vec::new();
        self.effects.borrow_mut().clear();
        let p = c.printer.as_ref().unwrap();
        assert!(p.write_pretty(&mut out, d, d.len(), &self.ctx(next)));
        String::from_utf8(out).unwrap()
    }
}

#[test]
fn flags_symbols_and_conditions() {
    let c = format(
        "test",
        "flags",
        900,
        &["unsigned int flags; 8 4 0", "int mode; 12 4 1", "int x; 16 4 1"],
        "\"f=%s m=%s c=%s n=%d\", __print_flags(REC->flags, \"|\", { 1, \"A\" }, { 2, \"B\" }, { 4, \"C\" }), __print_symbolic(REC->mode, { 0, \"ZERO\" }, { 1, \"ONE\" }), REC->x ? \"yes\" : \"no\", (REC->x + 3) * 2",
    );
    let e = Env::new();
    let d = rec(
        900,
        1,
        20,
        &[
            (8, &13u32.to_le_bytes()),
            (12, &1i32.to_le_bytes()),
            (16, &4i32.to_le_bytes()),
        ],
    );
    assert_eq!(e.pretty(&c, &d), "f=A|C|0x8 m=ONE c=yes n=14");
    let d = rec(900, 1, 20, &[(12, &2i32.to_le_bytes())]);
    assert_eq!(e.pretty(&c, &d), "f= m=0x2 c=no n=6");
}

#[test]
fn hex_arrays_and_strings() {
    let c = format(
        "test",
        "arrays",
        901,
        &[
            "__data_loc u8[] buf; 8 4 0",
            "__data_loc u32[] arr; 12 4 0",
            "__data_loc char[] name; 16 4 0",
        ],
        "\"%s|%s|%s|%-6s|%.2s\", __print_hex(__get_dynamic_array(buf), __get_dynamic_array_len(buf)), __print_hex_str(__get_dynamic_array(buf), 2), __print_array(__get_dynamic_array(arr), 3, 4), __get_str(name), __get_str(name)",
    );
    let e = Env::new();
    let mut arr = Vec::new();
    for v in [1u32, 2, 300] {
        arr.extend_from_slice(&v.to_le_bytes());
    }
    let d = rec(
        901,
        1,
        48,
        &[
            (8, &((4u32 << 16) | 20).to_le_bytes()),
            (12, &((12u32 << 16) | 24).to_le_bytes()),
            (16, &((5u32 << 16) | 36).to_le_bytes()),
            (20, b"\xde\xad\xbe\xef"),
            (24, &arr),
            (36, b"eth0\0"),
        ],
    );
    assert_eq!(e.pretty(&c, &d), "de ad be ef|dead|1 2 300|eth0  |et");
}

#[test]
fn bit_and_cpu_masks() {
    let c = format(
        "test",
        "masks",
        902,
        &[
            "__data_loc unsigned long[] mask; 8 4 0",
            "__data_loc cpumask_t cpus; 12 4 0",
        ],
        "\"mask=%s cpus=%s\", __get_bitmask(mask), __get_cpumask(cpus)",
    );
    let e = Env::new();
    let d = rec(
        902,
        1,
        32,
        &[
            (8, &((8u32 << 16) | 16).to_le_bytes()),
            (12, &((8u32 << 16) | 24).to_le_bytes()),
            (16, &0x1_0000_000fu64.to_le_bytes()),
            (24, &0x8000_0000_0000_0f0bu64.to_le_bytes()),
        ],
    );
    assert_eq!(
        e.pretty(&c, &d),
        "mask=00000001,0000000f cpus=0-1,3,8-11,63"
    );
}

#[test]
fn pointer_extensions() {
    let c = format(
        "test",
        "ptrs",
        903,
        &[
            "u8 mac[6]; 8 6 0",
            "__u8 saddr[4]; 16 4 0",
            "__u8 daddr6[16]; 20 16 0",
            "u8 uuid[16]; 36 16 0",
            "void * fn; 56 8 0",
            "void * p; 64 8 0",
        ],
        "\"%pM %pI4 %pI6c %pU %pS %ps %p %p\", REC->mac, REC->saddr, REC->daddr6, REC->uuid, REC->fn, REC->fn, REC->p, REC->fn",
    );
    let e = Env::new();
    let v6 = std::net::Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1).octets();
    let uuid: Vec<u8> = (0u8..16).collect();
    let d = rec(
        903,
        1,
        72,
        &[
            (8, b"\x00\x1b\x21\x3a\x4b\x5c"),
            (16, &[192, 168, 1, 20]),
            (20, &v6),
            (36, &uuid),
            (56, &0xffff_ffff_8110_0c21u64.to_le_bytes()),
        ],
    );
    assert_eq!(
        e.pretty(&c, &d),
        "00:1b:21:3a:4b:5c 192.168.1.20 2001:db8::1 00010203-0405-0607-0809-0a0b0c0d0e0f vfs_read+0x21 vfs_read (nil) 0xffffffff81100c21"
    );
}

#[test]
fn failed_formats_print_the_raw_fields() {
    let c = format(
        "test",
        "bad",
        904,
        &["int x; 8 4 1"],
        "\"%d\", no_such_function(REC->x)",
    );
    let e = Env::new();
    let d = rec(904, 1, 12, &[(8, &(-3i32).to_le_bytes())]);
    assert_eq!(e.pretty(&c, &d), "[FAILED TO PARSE] x=-3");
}

#[test]
fn helper_functions_of_plugins() {
    let c = format(
        "jbd2",
        "test",
        905,
        &["dev_t dev; 8 4 0", "unsigned long j; 16 8 0"],
        "\"dev %s j %s %lu\", jbd2_dev_to_name(REC->dev), jiffies_to_msecs(REC->j), jiffies_to_msecs(REC->j) + 1",
    );
    let e = Env::new();
    let d = rec(
        905,
        1,
        24,
        &[
            (8, &((8u32 << 20) | 3).to_le_bytes()),
            (16, &250u64.to_le_bytes()),
        ],
    );
    assert_eq!(e.pretty(&c, &d), "dev 8:3 j 250 251");
}

fn sched_switch() -> EventClass {
    format(
        "sched",
        "sched_switch",
        372,
        test_util::SCHED_SWITCH_FIELDS,
        "\"prev_comm=%s\", REC->prev_comm",
    )
}

#[test]
fn sched_switch_plugin_registers_comms() {
    let c = sched_switch();
    let e = Env::new();
    let d = rec(
        372,
        12,
        64,
        &[
            (8, b"kworker/u4:2\0"),
            (24, &12i32.to_le_bytes()),
            (28, &120i32.to_le_bytes()),
            (32, &0x82i64.to_le_bytes()),
            (40, b"0123456789abcdefXX"),
            (56, &99i32.to_le_bytes()),
            (60, &98i32.to_le_bytes()),
        ],
    );
    // 16 characters without a NUL: the comm stops at the field's end
    assert_eq!(
        e.pretty(&c, &d),
        "kworker/u4:2:12 [120] D|W ==> 0123456789abcdef:99 [98]"
    );
    let eff = e.effects.borrow();
    let got: Vec<(i32, &[u8])> = eff.comms().collect();
    assert_eq!(
        got,
        vec![(12, &b"kworker/u4:2"[..]), (99, &b"0123456789abcdef"[..])]
    );
}

#[test]
fn function_graph_leaves_use_the_next_record() {
    let entry = format(
        "ftrace",
        "funcgraph_entry",
        11,
        &["unsigned long func; 8 8 0", "unsigned int depth; 16 4 0"],
        "\"--> %ps (%u)\", (void *)REC->func, REC->depth",
    );
    let exit = format(
        "ftrace",
        "funcgraph_exit",
        10,
        &[
            "unsigned long func; 8 8 0",
            "unsigned int depth; 16 4 0",
            "unsigned int overrun; 20 4 0",
            "unsigned long long calltime; 24 8 0",
            "unsigned long long rettime; 32 8 0",
        ],
        "\"<-- %ps (%u)\", (void *)REC->func, REC->depth",
    );
    assert!(entry.printer.as_ref().unwrap().wants_next());
    let mut e = Env::new();
    e.classes.push(exit.clone());
    e.classes.push(entry.clone());
    let vfs = 0xffff_ffff_8110_0c00u64.to_le_bytes();
    let ent = rec(11, 7, 24, &[(8, &vfs), (16, &2u32.to_le_bytes())]);
    let ret = rec(
        10,
        7,
        40,
        &[
            (8, &vfs),
            (24, &1_000u64.to_le_bytes()),
            (32, &13_345u64.to_le_bytes()),
        ],
    );
    assert_eq!(
        e.pretty_next(&entry, &ent, Some(&ret)),
        "+ 12.345 us  |      vfs_read();"
    );
    assert!(e.effects.borrow().consumed_next);
    // another task's return: a nested entry
    let other = rec(10, 8, 40, &[(8, &vfs)]);
    assert_eq!(
        e.pretty_next(&entry, &ent, Some(&other)),
        "             |      vfs_read() {"
    );
    assert!(!e.effects.borrow().consumed_next);
    assert_eq!(e.pretty(&exit, &ret), "+ 12.345 us  |  }");
}

#[test]
fn kernel_stack_lists_the_callers() {
    let c = format(
        "ftrace",
        "kernel_stack",
        4,
        &["int size; 8 4 1", "unsigned long caller[8]; 16 64 0"],
        "\"\\t=> %ps\\n\", (void *)REC->caller[0]",
    );
    let e = Env::new();
    let mut callers = Vec::new();
    // (above the highest symbol only its exact address resolves)
    for a in [
        0xffff_ffff_8110_0c10u64,
        0xffff_ffff_8110_2810,
        0x1234,
        u64::MAX,
        5,
    ] {
        callers.extend_from_slice(&a.to_le_bytes());
    }
    let d = rec(4, 1, 80, &[(16, &callers)]);
    assert_eq!(
        e.pretty(&c, &d),
        "<stack trace >\n=> vfs_read (ffffffff81100c10)\n=> ffffffff81102810\n=> 1234\n"
    );
}

#[test]
fn bprint_formats_come_from_the_printk_table() {
    let c = format(
        "ftrace",
        "bprint",
        6,
        test_util::BPRINT_FIELDS,
        test_util::BPRINT_FMT,
    );
    let mut e = Env::new();
    e.printk
        .insert(0xffff_ffff_82a0_0100, "n=%d s=%s x=%08lx\\n");
    let mut args = Vec::new();
    args.extend_from_slice(&(-7i32).to_le_bytes());
    args.extend_from_slice(b"hi\0\0");
    args.extend_from_slice(&0xbeefu64.to_le_bytes());
    let d = rec(
        6,
        1,
        24 + args.len(),
        &[
            (8, &0xffff_ffff_8110_0800u64.to_le_bytes()),
            (16, &0xffff_ffff_82a0_0100u64.to_le_bytes()),
            (24, &args),
        ],
    );
    assert_eq!(e.pretty(&c, &d), "ksys_read: n=-7 s=hi x=0000beef");
    // a format not in the table
    let d = rec(6, 1, 24, &[(16, &0x42u64.to_le_bytes())]);
    assert_eq!(e.pretty(&c, &d), "0x0: (NO FORMAT FOUND at 42)\n");
}

#[test]
fn classes_without_plugin_or_lookahead() {
    let c = Arc::new(sched_switch());
    assert!(!c.printer.as_ref().unwrap().wants_next());
}
