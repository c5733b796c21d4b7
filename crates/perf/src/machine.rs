//! perf's picture of the traced machine, built from the records as they are
//! delivered (util/machine.c, util/thread.c, util/maps.c of perf 6.1):
//!
//! - Threads are keyed by tid. A thread first seen in a record gets the
//!   comm `:<tid>` (not "set"); tid 0 starts as `swapper` (perf script
//!   registers the idle thread). A thread whose pid differs from its tid
//!   shares the maps of its group leader (created if needed).
//! - COMM sets the comm. FORK replaces any thread of the child's tid with a
//!   new one that takes the parent's comm if the parent's was set, and a
//!   copy of the parent's maps when the child is another process (not for
//!   synthesized forks, `misc` bit 13). EXIT marks the thread exited; it
//!   stays findable.
//! - MMAP/MMAP2 of pid -1 with a `[kernel.kallsyms]` name make the kernel
//!   map; others add a map to the thread's process, removing or cutting the
//!   maps it overlaps (`maps__fixup_overlappings`).
//! - Symbols of a dso are loaded on first use: the kernel's from the
//!   kallsyms file, moved by the difference between the kernel map's
//!   `pgoff` (the recorded `_text`) and the file's `_text`; a file's from
//!   the ELF at its path under `--symfs`.

use std::collections::HashMap;
use std::path::PathBuf;

use tracemux_core::{Cursor, Endian, Result};

use crate::consts::rec;
use crate::records::RawRecord;
use crate::symbols::{self, Symbols};

/// A fast hasher for thread ids (perf.data records carry millions of
/// them; SipHash showed in profiles): a multiply and a rotate.
#[derive(Default, Clone, Copy)]
pub struct TidHasher(u64);

impl std::hash::Hasher for TidHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_i32(&mut self, v: i32) {
        self.0 = (self.0.rotate_left(5) ^ v as u32 as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type TidMap<V> = HashMap<i32, V, std::hash::BuildHasherDefault<TidHasher>>;

/// Index of a dso in [`Machine::dsos`].
pub type DsoId = usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Map {
    pub start: u64,
    pub end: u64,
    pub pgoff: u64,
    pub dso: DsoId,
}

impl Map {
    /// perf's `map_ip`: the address in the dso (file offset for user maps;
    /// the address itself for kernel maps).
    pub fn map_ip(&self, ip: u64, kernel: bool) -> u64 {
        if kernel {
            ip
        } else {
            ip.wrapping_sub(self.start).wrapping_add(self.pgoff)
        }
    }
}

/// A dso: a file or a special name (`[kernel.kallsyms]`, `[vdso]`...).
#[derive(Debug)]
pub struct Dso {
    pub name: String,
    pub kernel: bool,
    syms: Option<Symbols>,
}

/// The maps of one process, sorted by start.
#[derive(Debug, Clone, Default)]
pub struct Maps {
    pub maps: Vec<Map>,
}

impl Maps {
    pub fn find(&self, ip: u64) -> Option<&Map> {
        let i = self.maps.partition_point(|m| m.start <= ip);
        let m = self.maps.get(i.checked_sub(1)?)?;
        (ip < m.end).then_some(m)
    }

    /// Insert `new`, removing or cutting the maps it overlaps.
    pub fn insert(&mut self, new: Map) {
        if new.end <= new.start {
            return;
        }
        let mut out = Vec::with_capacity(self.maps.len() + 2);
        for m in self.maps.drain(..) {
            if m.end <= new.start || m.start >= new.end {
                out.push(m);
                continue;
            }
            if m.start < new.start {
                out.push(Map {
                    end: new.start,
                    ..m
                });
            }
            if m.end > new.end {
                out.push(Map {
                    start: new.end,
                    pgoff: m.pgoff.wrapping_add(new.end - m.start),
                    ..m
                });
            }
        }
        out.push(new);
        out.sort_by_key(|m| m.start);
        self.maps = out;
    }
}

/// One thread.
#[derive(Debug, Clone)]
pub struct Thread {
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
    pub comm_set: bool,
    pub exited: bool,
    /// Index into [`Machine::maps`].
    pub maps: usize,
}

/// Threads, maps and dsos.
#[derive(Debug, Default)]
pub struct Machine {
    pub threads: TidMap<Thread>,
    pub maps: Vec<Maps>,
    pub dsos: Vec<Dso>,
    dso_ids: HashMap<String, DsoId>,
    pub kernel_maps: Maps,
    /// The kernel map's recorded `_text` (its pgoff), when seen.
    pub kernel_text: Option<u64>,
    pub symfs: Option<PathBuf>,
    pub kallsyms: Option<PathBuf>,
    /// The recording's build ids by file name (HEADER_BUILD_ID).
    pub build_ids: HashMap<String, Vec<u8>>,
}

/// What an address resolves to.
#[derive(Debug, Clone, Copy)]
pub struct Resolved<'m> {
    pub map: Option<Map>,
    /// The dso address (`map_ip`), or the address when no map.
    pub addr: u64,
    /// The symbol: (start, name).
    pub sym: Option<(u64, &'m str)>,
    pub dso: Option<&'m str>,
}

impl Machine {
    pub fn new(symfs: Option<PathBuf>, kallsyms: Option<PathBuf>) -> Machine {
        let mut m = Machine {
            symfs,
            kallsyms,
            ..Machine::default()
        };
        let t = m.findnew(0, 0);
        t.comm = "swapper".into();
        t.comm_set = true;
        m
    }

    fn new_thread(&mut self, pid: i32, tid: i32) -> Thread {
        let maps = if pid == tid || pid == -1 {
            self.maps.push(Maps::default());
            self.maps.len() - 1
        } else {
            self.findnew(pid, pid).maps
        };
        Thread {
            pid,
            tid,
            comm: format!(":{tid}"),
            comm_set: false,
            exited: false,
            maps,
        }
    }

    /// perf's `machine__findnew_thread`.
    pub fn findnew(&mut self, pid: i32, tid: i32) -> &mut Thread {
        if let Some(t) = self.threads.get(&tid) {
            if t.pid == -1 && pid != -1 && pid != tid {
                let maps = self.findnew(pid, pid).maps;
                let t = self.threads.get_mut(&tid).expect("present");
                t.pid = pid;
                t.maps = maps;
            } else if t.pid == -1 && pid != -1 {
                self.threads.get_mut(&tid).expect("present").pid = pid;
            }
        } else {
            let t = self.new_thread(pid, tid);
            self.threads.insert(tid, t);
        }
        self.threads.get_mut(&tid).expect("inserted")
    }

    pub fn comm(&mut self, pid: i32, tid: i32, comm: &str) {
        let t = self.findnew(pid, tid);
        t.comm.clear();
        t.comm.push_str(comm);
        t.comm_set = true;
    }

    /// FORK: `clone_maps` false for synthesized forks.
    pub fn fork(&mut self, pid: i32, tid: i32, ppid: i32, ptid: i32, clone_maps: bool) {
        let parent = self.findnew(ppid, ptid).clone();
        let parent = if parent.pid != ppid {
            self.threads.remove(&ptid);
            self.findnew(ppid, ptid).clone()
        } else {
            parent
        };
        self.threads.remove(&tid);
        let t = self.new_thread(pid, tid);
        self.threads.insert(tid, t);
        let child_maps = self.threads[&tid].maps;
        let t = self.threads.get_mut(&tid).expect("inserted");
        if parent.comm_set {
            t.comm.clone_from(&parent.comm);
            t.comm_set = true;
        }
        if clone_maps && child_maps != parent.maps && pid != parent.pid {
            let copy = self.maps[parent.maps].clone();
            self.maps[child_maps] = copy;
        }
    }

    pub fn exit(&mut self, tid: i32) {
        if let Some(t) = self.threads.get_mut(&tid) {
            t.exited = true;
        }
    }

    fn dso(&mut self, name: &str, kernel: bool) -> DsoId {
        if let Some(&id) = self.dso_ids.get(name) {
            return id;
        }
        self.dsos.push(Dso {
            name: name.to_string(),
            kernel,
            syms: None,
        });
        let id = self.dsos.len() - 1;
        self.dso_ids.insert(name.to_string(), id);
        id
    }

    /// MMAP/MMAP2.
    pub fn mmap(&mut self, pid: i32, tid: i32, start: u64, len: u64, pgoff: u64, filename: &str) {
        let end = start.saturating_add(len);
        if pid == -1 || filename.starts_with("[kernel.kallsyms]") && pid <= 0 {
            let (name, is_main) = match filename.strip_prefix("[kernel.kallsyms]") {
                Some(_) => ("[kernel.kallsyms]", true),
                None => (filename, false),
            };
            if is_main {
                self.kernel_text = Some(pgoff);
            }
            let dso = self.dso(name, true);
            self.kernel_maps.insert(Map {
                start,
                end,
                pgoff,
                dso,
            });
            return;
        }
        let dso = self.dso(filename, false);
        let maps = self.findnew(pid, tid).maps;
        self.maps[maps].insert(Map {
            start,
            end,
            pgoff,
            dso,
        });
    }

    fn load(&mut self, dso: DsoId) {
        if self.dsos[dso].syms.is_some() {
            return;
        }
        let d = &self.dsos[dso];
        let syms = if d.kernel && d.name == "[kernel.kallsyms]" {
            let path = self
                .kallsyms
                .clone()
                .unwrap_or_else(|| PathBuf::from("/proc/kallsyms"));
            std::fs::read(path)
                .ok()
                .and_then(|text| {
                    let mut s = symbols::parse_kallsyms(&text)?;
                    let file_text = symbols::kallsyms_addr(&text, "_text");
                    if let (Some(rec), Some(file)) = (self.kernel_text, file_text) {
                        let delta = rec.wrapping_sub(file);
                        if delta != 0 {
                            s.shift(delta);
                        }
                    }
                    Some(s)
                })
                .unwrap_or_default()
        } else if d.name.starts_with('/') {
            let bid = self.build_ids.get(&d.name).map(Vec::as_slice);
            symbols::load_elf(self.symfs.as_deref(), &d.name, bid).unwrap_or_default()
        } else {
            Symbols::default()
        };
        self.dsos[dso].syms = Some(syms);
    }

    /// Resolve `ip` of thread `tid` in `kernel` or user space.
    pub fn resolve(&mut self, tid: i32, ip: u64, kernel: bool) -> Resolved<'_> {
        let map = if kernel {
            self.kernel_maps.find(ip).copied()
        } else {
            self.threads
                .get(&tid)
                .and_then(|t| self.maps[t.maps].find(ip).copied())
        };
        let Some(map) = map else {
            return Resolved {
                map: None,
                addr: ip,
                sym: None,
                dso: None,
            };
        };
        self.load(map.dso);
        let d = &mut self.dsos[map.dso];
        let addr = map.map_ip(ip, d.kernel);
        let sym = d.syms.as_mut().and_then(|s| {
            let i = s.find(addr)?;
            let start = s.syms[i].start;
            Some((start, s.name(i)))
        });
        Resolved {
            map: Some(map),
            addr,
            sym,
            dso: Some(&d.name),
        }
    }
}

impl Machine {
    /// A machine for `p`: its recorded build ids, `symfs` and `kallsyms`
    /// as `perf script`'s options give them.
    pub fn for_data(
        p: &crate::PerfData<'_>,
        symfs: Option<PathBuf>,
        kallsyms: Option<PathBuf>,
    ) -> Machine {
        let mut m = Machine::new(symfs, kallsyms);
        m.build_ids = p
            .features
            .build_ids
            .iter()
            .map(|b| (b.filename.clone(), b.id.clone()))
            .collect();
        m
    }

    /// Apply a COMM, FORK, EXIT, MMAP or MMAP2 record (others are
    /// ignored), as `perf script` does before printing anything.
    pub fn apply(&mut self, r: &RawRecord<'_>, e: Endian) -> Result<()> {
        let mut c = Cursor::with_base(r.body, r.offset + 8, e, "record");
        match r.type_ {
            rec::COMM => {
                let pid = c.u32()? as i32;
                let tid = c.u32()? as i32;
                let name = String::from_utf8_lossy(c.cstr()?).into_owned();
                self.comm(pid, tid, &name);
            }
            rec::FORK | rec::EXIT => {
                let pid = c.u32()? as i32;
                let ppid = c.u32()? as i32;
                let tid = c.u32()? as i32;
                let ptid = c.u32()? as i32;
                if r.type_ == rec::FORK {
                    self.fork(pid, tid, ppid, ptid, r.misc & (1 << 13) == 0);
                } else {
                    self.findnew(pid, tid);
                    self.exit(tid);
                }
            }
            rec::MMAP | rec::MMAP2 => {
                let pid = c.u32()? as i32;
                let tid = c.u32()? as i32;
                let start = c.u64()?;
                let len = c.u64()?;
                let pgoff = c.u64()?;
                if r.type_ == rec::MMAP2 {
                    c.bytes(32)?;
                }
                let name = String::from_utf8_lossy(c.cstr()?).into_owned();
                self.mmap(pid, tid, start, len, pgoff, &name);
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_maps_are_cut() {
        let mut m = Maps::default();
        m.insert(Map {
            start: 0x1000,
            end: 0x5000,
            pgoff: 0,
            dso: 0,
        });
        m.insert(Map {
            start: 0x2000,
            end: 0x3000,
            pgoff: 0,
            dso: 1,
        });
        assert_eq!(m.maps.len(), 3);
        assert_eq!(m.find(0x1800).unwrap().dso, 0);
        assert_eq!(m.find(0x2800).unwrap().dso, 1);
        let after = m.find(0x3800).unwrap();
        assert_eq!((after.dso, after.pgoff), (0, 0x2000));
        assert!(m.find(0x5000).is_none());
    }

    #[test]
    fn threads_comms_forks() {
        let mut m = Machine::new(None, None);
        assert_eq!(m.findnew(0, 0).comm, "swapper");
        assert_eq!(m.findnew(5, 7).comm, ":7");
        m.comm(5, 5, "leader");
        m.fork(5, 8, 5, 5, true);
        assert_eq!(m.threads[&8].comm, "leader");
        assert_eq!(m.threads[&8].maps, m.threads[&5].maps);
        m.mmap(5, 5, 0x1000, 0x1000, 0, "/bin/x");
        m.fork(9, 9, 5, 5, true);
        assert_ne!(m.threads[&9].maps, m.threads[&5].maps);
        assert_eq!(m.resolve(9, 0x1800, false).dso, Some("/bin/x"));
        assert_eq!(m.resolve(9, 0x1800, false).addr, 0x800);
    }
}
