//! Development tool: compare the `print fmt` engine with libtraceevent.
//!
//! `printfmt_oracle dump EVENTS` prints, for each format in EVENTS (the
//! output of `trace-cmd dump --events --ftrace-events`), the parse in the
//! text form of `PrintFmt::dump`: diff it with the same listing produced
//! by a program linked with libtraceevent that walks each event's
//! `print_fmt.args` and `print_cache` (not part of the repository).
//!
//! `printfmt_oracle raw EVENTS ORACLE` checks raw field output: ORACLE has,
//! per event, `== SYS NAME` then `R SIZE HEX` (a record, followed by page
//! bytes) / `O TEXT` (what `tep_print_fields` printed) pairs.

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::HashMap;

use tracemux_core::bytes::Endian;
use tracemux_core::model::{ClassPrinter, PrintCtx};
use tracemux_core::tables::{PrintkTable, Symbol, SymbolTable};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let events = std::fs::read(&args[2]).expect("events file");
    let events = String::from_utf8_lossy(&events);
    let formats = common::split_dump(&events);
    let long_size: u32 = std::env::var("LS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    match args[1].as_str() {
        "dump" => {
            for d in &formats {
                let Some((f, p)) = common::build(d, long_size) else {
                    println!("== {} ?", d.system);
                    continue;
                };
                println!("== {} {}", d.system, f.name);
                print!("{}", p.print_fmt().dump(&f.common_fields, &f.fields));
            }
        }
        "raw" => {
            let mut printers = HashMap::new();
            for d in &formats {
                if let Some((f, p)) = common::build(d, long_size) {
                    printers.insert(format!("{} {}", d.system, f.name), p);
                }
            }
            let (symbols, printk) = oracle_tables();
            let ctx = PrintCtx::new(Endian::Little, long_size, &symbols, &printk, 0);
            let oracle = std::fs::read_to_string(&args[3]).expect("oracle file");
            let (mut cur, mut rec, mut size) = (None, Vec::new(), 0usize);
            let (mut n, mut bad) = (0, 0);
            for line in oracle.lines() {
                if let Some(k) = line.strip_prefix("== ") {
                    cur = printers.get(k);
                } else if let Some(r) = line.strip_prefix("R ") {
                    let (s, hex) = r.split_once(' ').unwrap();
                    size = s.parse().unwrap();
                    rec = (0..hex.len() / 2)
                        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
                        .collect();
                } else if let Some(want) = line.strip_prefix("O ") {
                    let Some(p) = cur else { continue };
                    let mut out = Vec::new();
                    p.write_raw_fields(&mut out, &rec, size, &ctx);
                    let got = escape(&out);
                    n += 1;
                    if got != want {
                        bad += 1;
                        if bad <= 40 {
                            println!("MISMATCH {}\n  want {want}\n  got  {got}", p.name());
                        }
                    }
                }
            }
            println!("{n} records, {bad} mismatches");
        }
        _ => eprintln!("usage: printfmt_oracle dump EVENTS | raw EVENTS ORACLE"),
    }
}

/// The symbols and printk formats the C oracle registers. libtraceevent
/// keeps symbols with equal addresses in reverse registration order.
fn oracle_tables() -> (SymbolTable, PrintkTable) {
    let mut symbols = SymbolTable::default();
    let syms = [
        ("func_a", 0xffffffff81000100u64),
        ("func_b", 0xffffffff81000200),
        ("func_c", 0xffffffff81000400),
        ("func_d", 0xffffffff81000800),
        ("func_c_alias", 0xffffffff81000400),
    ];
    for (name, addr) in syms.iter().rev() {
        symbols.push(Symbol {
            addr: *addr,
            kind: 't',
            name: name.to_string(),
            module: None,
        });
    }
    symbols.finish();
    let mut printk = PrintkTable::default();
    printk.insert(0xffffffff82000000, "hello printk");
    (symbols, printk)
}

fn escape(b: &[u8]) -> String {
    let mut o = String::new();
    for &c in b {
        match c {
            b'\\' => o.push_str("\\\\"),
            0x20..=0x7e => o.push(c as char),
            _ => o.push_str(&format!("\\x{c:02x}")),
        }
    }
    o
}
