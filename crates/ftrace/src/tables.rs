//! The text tables ftrace exports and trace-cmd stores: `kallsyms`,
//! `printk_formats` and `saved_cmdlines`.

use tracemux_core::tables::{PrintkTable, Symbol, SymbolTable, TaskTable};

fn hex(s: &str) -> Option<u64> {
    let s = s.trim();
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    u64::from_str_radix(s, 16).ok()
}

/// Parse `/proc/kallsyms` text (`ADDR TYPE NAME [\t[MODULE]]` lines) the
/// way libtraceevent loads it, so that lookups resolve to the same names:
/// absolute symbols (`A`/`a`) and names starting with `$` are skipped, the
/// first line that does not parse ends the table (returned as `Some(line
/// number)`), and symbols sharing an address are kept in reverse file order.
pub fn parse_kallsyms(text: &[u8], out: &mut SymbolTable) -> Option<usize> {
    let mut syms = Vec::new();
    let mut stopped = None;
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let line = String::from_utf8_lossy(line);
        let mut it = line.split_ascii_whitespace();
        let (Some(addr), Some(kind), Some(name)) = (it.next(), it.next(), it.next()) else {
            stopped = Some(i + 1);
            break;
        };
        let (Some(addr), Some(kind)) = (hex(addr), kind.chars().next()) else {
            stopped = Some(i + 1);
            break;
        };
        if kind == 'A' || kind == 'a' || name.starts_with('$') {
            continue;
        }
        let module = it
            .next()
            .map(|m| m.trim_start_matches('[').trim_end_matches(']').to_string());
        syms.push(Symbol {
            addr,
            kind,
            name: name.to_string(),
            module,
        });
    }
    // libtraceevent prepends each symbol to a list and then sorts it
    // stably by address: equal addresses end up in reverse file order.
    out.extend(syms.into_iter().rev());
    out.finish();
    stopped
}

/// Call `parse` on every non-empty line of `text` (invalid UTF-8
/// replaced); the number of lines it refused (returned `None` for).
fn parse_lines(text: &[u8], mut parse: impl FnMut(&str) -> Option<()>) -> usize {
    text.split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .filter(|line| parse(&String::from_utf8_lossy(line)).is_none())
        .count()
}

/// Parse `printk_formats` text (`0xADDR : "FORMAT"` lines). The format is
/// stored with its quotes removed (the escapes are kept as written).
pub fn parse_printk(text: &[u8], out: &mut PrintkTable) -> usize {
    parse_lines(text, |line| {
        let (addr, fmt) = line.split_once(" : ")?;
        let addr = hex(addr)?;
        let fmt = fmt.trim();
        let fmt = fmt.strip_prefix('"').unwrap_or(fmt);
        let fmt = fmt.strip_suffix('"').unwrap_or(fmt);
        out.insert(addr, fmt);
        Some(())
    })
}

/// Parse `saved_cmdlines` text (`PID COMM` lines; COMM may contain spaces).
pub fn parse_cmdlines(text: &[u8], out: &mut TaskTable) -> usize {
    parse_lines(text, |line| {
        let (pid, comm) = line.split_once(' ')?;
        out.insert(pid.trim().parse::<i32>().ok()?, comm);
        Some(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tables() {
        let mut s = SymbolTable::default();
        let stop = parse_kallsyms(
            b"ffffffff81000000 T _text\n0000000000000001 A abs\nffffffffc0001000 t foo\t[bar]\nbogus\nffffffffc0002000 t lost\n",
            &mut s,
        );
        assert_eq!(stop, Some(4));
        assert_eq!(s.len(), 2);
        assert_eq!(s.lookup(0xffffffffc0001010).unwrap().module, Some("bar"));
        let mut p = PrintkTable::default();
        parse_printk(b"0xffffffff8281972f : \"thaw %d\\n\"\n", &mut p);
        assert_eq!(p.get(0xffffffff8281972f), Some("thaw %d\\n"));
        let mut t = TaskTable::default();
        parse_cmdlines(b"5607 sleep\n12 opt cgu.06\n", &mut t);
        assert_eq!(t.get(12), Some("opt cgu.06"));
    }
}
