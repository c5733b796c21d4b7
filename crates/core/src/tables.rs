//! Name tables printers resolve through: task names by pid, kernel symbols
//! by address.

use std::collections::HashMap;
use std::sync::Arc;

/// Texts by a number: task names by pid ([`TaskTable`]), printk formats by
/// address ([`PrintkTable`]).
#[derive(Debug, Clone)]
pub struct TextTable<K> {
    map: HashMap<K, String>,
}

impl<K> Default for TextTable<K> {
    fn default() -> Self {
        TextTable {
            map: HashMap::new(),
        }
    }
}

impl<K: Copy + Eq + Ord + std::hash::Hash> TextTable<K> {
    pub fn insert(&mut self, key: K, text: impl Into<String>) {
        self.map.insert(key, text.into());
    }
    #[inline]
    pub fn get(&self, key: K) -> Option<&str> {
        self.map.get(&key).map(|s| s.as_str())
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    /// All entries sorted by key.
    pub fn sorted(&self) -> Vec<(K, &str)> {
        let mut v: Vec<_> = self.map.iter().map(|(&k, t)| (k, t.as_str())).collect();
        v.sort_unstable_by_key(|e| e.0);
        v
    }
}

/// Task (command) names by pid, as recorded (ftrace saved_cmdlines,
/// uftrace task.txt...).
pub type TaskTable = TextTable<i32>;

/// Format strings of `trace_printk()` call sites by address (ftrace
/// `printk_formats`), used by `bprint` events that store only the address.
pub type PrintkTable = TextTable<u64>;

/// One symbol: start address, name, and the module it belongs to (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub addr: u64,
    pub kind: char,
    pub name: String,
    pub module: Option<String>,
}

/// Symbols sorted by address for lookups by address. Cloning is cheap
/// (the symbols are shared): consumers copy a trace's description once per
/// run, and a kernel's symbol table is tens of megabytes.
#[derive(Debug, Clone, Default)]
pub struct SymbolTable {
    syms: Arc<Vec<Symbol>>,
    sorted: bool,
}

impl SymbolTable {
    pub fn push(&mut self, s: Symbol) {
        Arc::make_mut(&mut self.syms).push(s);
        self.sorted = false;
    }
    /// Sort by address (stable: for equal addresses the first one pushed wins
    /// lookups). Call once after loading.
    pub fn finish(&mut self) {
        Arc::make_mut(&mut self.syms).sort_by_key(|s| s.addr);
        self.sorted = true;
    }
    pub fn len(&self) -> usize {
        self.syms.len()
    }
    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = &Symbol> {
        self.syms.iter()
    }
    /// The symbol with the greatest address `<= addr`.
    pub fn lookup(&self, addr: u64) -> Option<&Symbol> {
        debug_assert!(self.sorted || self.syms.is_empty());
        let i = self.syms.partition_point(|s| s.addr <= addr);
        if i == 0 {
            return None;
        }
        // among equal addresses, the first one in load order
        let a = self.syms[i - 1].addr;
        let first = self.syms[..i].partition_point(|s| s.addr < a);
        self.syms.get(first)
    }
    /// libtraceevent's `find_func`: a binary search (glibc `bsearch`'s
    /// probe order) that matches an entry when `addr` equals its address or
    /// lies before the next entry's; past the last entry only its exact
    /// address matches. With several symbols at one address the probe order
    /// decides, so the table must be in libtraceevent's order.
    pub fn find_func(&self, addr: u64) -> Option<&Symbol> {
        let s = &self.syms;
        let (mut l, mut u) = (0usize, s.len());
        while l < u {
            let idx = (l + u) / 2;
            let next = s.get(idx + 1).map_or(0, |n| n.addr);
            let e = &s[idx];
            if addr == e.addr || (addr > e.addr && addr < next) {
                return Some(e);
            }
            if addr < e.addr {
                u = idx;
            } else {
                l = idx + 1;
            }
        }
        None
    }

    /// The symbol starting exactly at `addr`.
    pub fn exact(&self, addr: u64) -> Option<&Symbol> {
        self.lookup(addr).filter(|s| s.addr == addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_by_address() {
        let mut t = SymbolTable::default();
        for (a, n) in [(0x30, "c"), (0x10, "a"), (0x20, "b"), (0x20, "b2")] {
            t.push(Symbol {
                addr: a,
                kind: 't',
                name: n.into(),
                module: None,
            });
        }
        t.finish();
        assert!(t.lookup(0x5).is_none());
        assert_eq!(t.lookup(0x10).unwrap().name, "a");
        assert_eq!(t.lookup(0x25).unwrap().name, "b");
        assert_eq!(t.lookup(0x1000).unwrap().name, "c");
        assert!(t.exact(0x25).is_none());
    }
}
