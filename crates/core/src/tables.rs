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

/// One symbol: start address, name, and the module it belongs to (if any),
/// as a loader gives it to [`SymbolTable::push`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub addr: u64,
    pub kind: char,
    pub name: String,
    pub module: Option<String>,
}

/// A symbol of a [`SymbolTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolRef<'a> {
    pub addr: u64,
    pub kind: char,
    pub name: &'a str,
    pub module: Option<&'a str>,
}

/// Symbols sorted by address for lookups by address. Cloning is cheap
/// (the symbols are shared): consumers copy a trace's description once per
/// run. Kept compact (a kernel's table is about a hundred thousand
/// symbols): an entry of 24 bytes per symbol, the names in one text, each
/// module's name once.
#[derive(Debug, Clone, Default)]
pub struct SymbolTable {
    inner: Arc<Symbols>,
    sorted: bool,
}

#[derive(Debug, Clone, Default)]
struct Symbols {
    entries: Vec<Entry>,
    names: String,
    modules: Vec<String>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    addr: u64,
    name: u32,
    len: u32,
    kind: char,
    /// 1 + its index in `modules`; 0: none.
    module: u32,
}

impl Symbols {
    fn get(&self, e: &Entry) -> SymbolRef<'_> {
        let (at, len) = (e.name as usize, e.len as usize);
        SymbolRef {
            addr: e.addr,
            kind: e.kind,
            name: self.names.get(at..at + len).unwrap_or(""),
            module: (e.module > 0)
                .then(|| self.modules.get(e.module as usize - 1).map(String::as_str))
                .flatten(),
        }
    }

    fn push(&mut self, s: Symbol) {
        // offsets and lengths are u32: a table past 4 GiB of names keeps
        // what came first
        if self.names.len() + s.name.len() > u32::MAX as usize
            || self.modules.len() >= u32::MAX as usize
        {
            return;
        }
        let module = match s.module {
            None => 0,
            Some(m) => {
                // a module's symbols come together: look at the last one first
                let found = self
                    .modules
                    .iter()
                    .rposition(|k| *k == m)
                    .unwrap_or_else(|| {
                        self.modules.push(m);
                        self.modules.len() - 1
                    });
                found as u32 + 1
            }
        };
        let name = self.names.len() as u32;
        self.names.push_str(&s.name);
        self.entries.push(Entry {
            addr: s.addr,
            name,
            len: s.name.len() as u32,
            kind: s.kind,
            module,
        });
    }
}

impl SymbolTable {
    pub fn push(&mut self, s: Symbol) {
        Arc::make_mut(&mut self.inner).push(s);
        self.sorted = false;
    }
    /// Push all of `syms`, in their order.
    pub fn extend(&mut self, syms: impl IntoIterator<Item = Symbol>) {
        let inner = Arc::make_mut(&mut self.inner);
        for s in syms {
            inner.push(s);
        }
        self.sorted = false;
    }
    /// Sort by address (stable: for equal addresses the first one pushed wins
    /// lookups), and give back the room it grew into. Call once after
    /// loading.
    pub fn finish(&mut self) {
        let inner = Arc::make_mut(&mut self.inner);
        inner.entries.sort_by_key(|e| e.addr);
        inner.entries.shrink_to_fit();
        inner.names.shrink_to_fit();
        self.sorted = true;
    }
    pub fn len(&self) -> usize {
        self.inner.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.inner.entries.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = SymbolRef<'_>> {
        self.inner.entries.iter().map(|e| self.inner.get(e))
    }
    /// The symbol with the greatest address `<= addr`.
    pub fn lookup(&self, addr: u64) -> Option<SymbolRef<'_>> {
        let s = &self.inner.entries;
        debug_assert!(self.sorted || s.is_empty());
        let i = s.partition_point(|e| e.addr <= addr);
        if i == 0 {
            return None;
        }
        // among equal addresses, the first one in load order
        let a = s[i - 1].addr;
        let first = s[..i].partition_point(|e| e.addr < a);
        s.get(first).map(|e| self.inner.get(e))
    }
    /// libtraceevent's `find_func`: a binary search (glibc `bsearch`'s
    /// probe order) that matches an entry when `addr` equals its address or
    /// lies before the next entry's; past the last entry only its exact
    /// address matches. With several symbols at one address the probe order
    /// decides, so the table must be in libtraceevent's order.
    pub fn find_func(&self, addr: u64) -> Option<SymbolRef<'_>> {
        let s = &self.inner.entries;
        let (mut l, mut u) = (0usize, s.len());
        while l < u {
            let idx = (l + u) / 2;
            let next = s.get(idx + 1).map_or(0, |n| n.addr);
            let e = &s[idx];
            if addr == e.addr || (addr > e.addr && addr < next) {
                return Some(self.inner.get(e));
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
    pub fn exact(&self, addr: u64) -> Option<SymbolRef<'_>> {
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
