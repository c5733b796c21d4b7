//! Helpers of the print fmt tests: format files and records built by
//! hand.

use tracemux_core::tables::{Symbol, SymbolTable};

/// The common fields of every event.
const COMMON: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n";

/// The own fields of `sched:sched_switch`.
pub const SCHED_SWITCH_FIELDS: &[&str] = &[
    "char prev_comm[16]; 8 16 0",
    "pid_t prev_pid; 24 4 1",
    "int prev_prio; 28 4 1",
    "long prev_state; 32 8 1",
    "char next_comm[16]; 40 16 0",
    "pid_t next_pid; 56 4 1",
    "int next_prio; 60 4 1",
];

/// The own fields and print fmt of `ftrace:bprint` (trace_printk).
pub const BPRINT_FIELDS: &[&str] = &[
    "unsigned long ip; 8 8 0",
    "const char * fmt; 16 8 0",
    "u32 buf[]; 24 0 0",
];
pub const BPRINT_FMT: &str = "\"%ps: %s\", (void *)REC->ip, REC->fmt";

/// The format file of event `name` (`id`) from compact field specs
/// `"TYPE NAME; OFFSET SIZE SIGNED"`.
pub fn format_text(name: &str, id: u32, fields: &[&str], print_fmt: &str) -> String {
    let mut t = format!("name: {name}\nID: {id}\nformat:\n{COMMON}\n");
    for f in fields {
        let (decl, rest) = f.split_once("; ").unwrap();
        let v: Vec<&str> = rest.split(' ').collect();
        t.push_str(&format!(
            "\tfield:{decl};\toffset:{};\tsize:{};\tsigned:{};\n",
            v[0], v[1], v[2]
        ));
    }
    t.push_str(&format!("\nprint fmt: {print_fmt}\n"));
    t
}

/// A symbol table of `(name, address)`, every symbol of `kind`.
pub fn symbols(kind: char, list: &[(&str, u64)]) -> SymbolTable {
    let mut t = SymbolTable::default();
    for (name, addr) in list {
        t.push(Symbol {
            addr: *addr,
            kind,
            name: name.to_string(),
            module: None,
        });
    }
    t.finish();
    t
}

/// A record of `size` bytes with `parts` (offset, bytes) written into it.
pub fn record(size: usize, parts: &[(usize, &[u8])]) -> Vec<u8> {
    let mut d = vec![0u8; size];
    for (off, b) in parts {
        d[*off..*off + b.len()].copy_from_slice(b);
    }
    d
}
