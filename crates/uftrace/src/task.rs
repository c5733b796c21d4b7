//! Sessions and tasks from `task.txt` (SESS, TASK, FORK, EXEC, DLOP lines).
//!
//! A session is one executable image of a process (a new one after each
//! exec); a task refers to the sessions it ran in, each valid from a
//! timestamp until the next. An address is resolved through the session of
//! the task at the record's time, falling back to the parent's (or thread
//! leader's) sessions.

use crate::symbols::{basename, SessionMaps};

/// One `SESS` line plus what belongs to the session.
#[derive(Debug, Clone, Default)]
pub struct Session {
    pub sid: String,
    pub start_time: u64,
    pub pid: i32,
    pub tid: i32,
    pub exename: String,
    /// The parsed `sid-<sid>.map` (empty when the file is missing).
    pub maps: SessionMaps,
    /// Libraries loaded by `dlopen`: (time, base address, module index),
    /// sorted by time.
    pub dlopens: Vec<DlOpen>,
    /// Triggers and argument specs by address.
    pub filters: crate::argspec::FilterTable,
}

/// A `DLOP` line.
#[derive(Debug, Clone)]
pub struct DlOpen {
    pub time: u64,
    pub base: u64,
    pub libname: String,
    pub module: Option<usize>,
}

/// A session reference of a task.
#[derive(Debug, Clone, Copy)]
pub struct SessRef {
    pub session: usize,
    pub start: u64,
    pub end: u64,
}

/// A task (thread or process).
#[derive(Debug, Clone, Default)]
pub struct Task {
    pub tid: i32,
    pub pid: i32,
    pub ppid: i32,
    /// Command name (at most 15 bytes, as the kernel keeps it).
    pub comm: String,
    /// Time the task was first seen (`TASK`/`FORK` timestamp).
    pub stamp: u64,
    pub srefs: Vec<SessRef>,
}

/// All sessions and tasks of the recording.
#[derive(Debug, Clone, Default)]
pub struct Sessions {
    /// In uftrace's tree order: by pid, then start time.
    pub sessions: Vec<Session>,
    /// Sorted by tid.
    pub tasks: Vec<Task>,
    /// The first session created (in file order).
    pub first: Option<usize>,
}

fn comm_of(exename: &str) -> String {
    let b = basename(exename);
    let mut end = b.len().min(15);
    while !b.is_char_boundary(end) {
        end -= 1;
    }
    b[..end].to_string()
}

/// `sec.nsec` timestamp like `sscanf("%lu.%lu")`: nsec is taken as the
/// integer it is written as.
fn parse_ts(s: &str) -> Option<u64> {
    let (a, b) = s.split_once('.')?;
    let sec: u64 = a.parse().ok()?;
    let nd: String = b.chars().take_while(|c| c.is_ascii_digit()).collect();
    let nsec: u64 = nd.parse().ok()?;
    Some(sec.wrapping_mul(1_000_000_000).wrapping_add(nsec))
}

/// The timestamp and the two ids (`id`, `parent`) of a TASK or FORK line.
fn task_ids(r: &str, id: &str, parent: &str) -> Option<(u64, i32, i32)> {
    let ts = parse_ts(field(r, "timestamp=")?)?;
    Some((
        ts,
        field(r, id)?.parse().ok()?,
        field(r, parent)?.parse().ok()?,
    ))
}

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_ascii_whitespace()
        .find_map(|w| w.strip_prefix(key))
}

fn quoted<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let pos = line.find(key)?;
    let rest = line.get(pos + key.len() + 1..)?;
    Some(match rest.rfind('"') {
        Some(e) => &rest[..e],
        None => rest.trim_end_matches('\n'),
    })
}

impl Sessions {
    /// Parse `task.txt`. Returns the byte offset of the first malformed line
    /// (uftrace stops reading there) if any.
    pub fn parse(&mut self, text: &str, with_dlopen: bool) -> Option<u64> {
        let mut off = 0u64;
        for line in text.split_inclusive('\n') {
            let here = off;
            off += line.len() as u64;
            let ok = if let Some(r) = line.strip_prefix("TASK") {
                task_ids(r, "tid=", "pid=")
                    .map(|(ts, tid, pid)| self.create_task(ts, tid, pid, false))
            } else if let Some(r) = line.strip_prefix("FORK") {
                task_ids(r, "pid=", "ppid=")
                    .map(|(ts, pid, ppid)| self.create_task(ts, pid, ppid, true))
            } else if let Some(r) = line.strip_prefix("SESS") {
                (|| {
                    let ts = parse_ts(field(r, "timestamp=")?)?;
                    let pid = field(r, "pid=")?.parse().ok()?;
                    let sid = field(r, "sid=")?.to_string();
                    let exe = quoted(line, "exename=")?.to_string();
                    self.create_session(ts, pid, sid, exe);
                    Some(())
                })()
            } else if let Some(r) = line.strip_prefix("DLOP") {
                if !with_dlopen {
                    continue;
                }
                (|| {
                    let ts = parse_ts(field(r, "timestamp=")?)?;
                    let sid = field(r, "sid=")?;
                    let base = u64::from_str_radix(field(r, "base=")?, 16).ok()?;
                    let lib = quoted(line, "libname=")?.to_string();
                    let s = self.sessions.iter_mut().find(|s| s.sid == sid)?;
                    let pos = s.dlopens.partition_point(|d| d.time <= ts);
                    s.dlopens.insert(
                        pos,
                        DlOpen {
                            time: ts,
                            base,
                            libname: lib,
                            module: None,
                        },
                    );
                    Some(())
                })()
            } else {
                Some(())
            };
            if ok.is_none() {
                return Some(here);
            }
        }
        None
    }

    fn create_session(&mut self, ts: u64, pid: i32, sid: String, exename: String) {
        let pos = self
            .sessions
            .partition_point(|s| (s.pid, s.start_time) <= (pid, ts));
        let s = Session {
            sid,
            start_time: ts,
            pid,
            tid: pid,
            exename,
            ..Session::default()
        };
        if let Some(t) = self.find_task_mut(pid) {
            t.comm = comm_of(&s.exename);
        }
        self.sessions.insert(pos, s);
        match &mut self.first {
            Some(f) if *f >= pos => *f += 1,
            Some(_) => {}
            None => self.first = Some(pos),
        }
    }

    /// uftrace's `find_session`: the latest session of `pid` started at or
    /// before `ts`.
    fn find_session(&self, pid: i32, ts: u64) -> Option<usize> {
        let i = self
            .sessions
            .partition_point(|s| (s.pid, s.start_time) <= (pid, ts));
        let k = i.checked_sub(1)?;
        (self.sessions[k].pid == pid).then_some(k)
    }

    fn add_ref(t: &mut Task, session: usize, ts: u64) {
        if let Some(last) = t.srefs.last_mut() {
            last.end = ts;
        }
        t.srefs.push(SessRef {
            session,
            start: ts,
            end: u64::MAX,
        });
    }

    fn create_task(&mut self, ts: u64, tid: i32, pid: i32, fork: bool) {
        if let Ok(i) = self.tasks.binary_search_by_key(&tid, |t| t.tid) {
            if let Some(s) = self.find_session(pid, ts) {
                Self::add_ref(&mut self.tasks[i], s, ts);
            }
            return;
        }
        let mut t = Task {
            tid,
            pid: if fork { tid } else { pid },
            ppid: if fork { pid } else { 0 },
            stamp: ts,
            ..Task::default()
        };
        let mut s = self.find_session(pid, ts);
        if s.is_none() {
            if let Some(pt) = self.find_task(pid) {
                if let Some(last) = pt.srefs.last() {
                    if last.start < ts {
                        s = Some(last.session);
                    }
                }
            }
        }
        if let Some(s) = s {
            Self::add_ref(&mut t, s, ts);
            t.comm = comm_of(&self.sessions[s].exename);
        }
        let pos = self.tasks.partition_point(|x| x.tid < tid);
        self.tasks.insert(pos, t);
    }

    /// The task with `tid`.
    pub fn find_task(&self, tid: i32) -> Option<&Task> {
        let i = self.tasks.binary_search_by_key(&tid, |t| t.tid).ok()?;
        Some(&self.tasks[i])
    }

    pub fn find_task_mut(&mut self, tid: i32) -> Option<&mut Task> {
        let i = self.tasks.binary_search_by_key(&tid, |t| t.tid).ok()?;
        Some(&mut self.tasks[i])
    }

    /// The session of task `tid` at time `ts` (own sessions first, then the
    /// parent's or thread leader's).
    pub fn task_session(&self, tid: i32, ts: u64) -> Option<usize> {
        let mut t = self.find_task(tid)?;
        for _ in 0..64 {
            for r in &t.srefs {
                if r.start <= ts && ts < r.end {
                    return Some(r.session);
                }
            }
            let parent = if t.ppid != 0 { t.ppid } else { t.pid };
            if parent == 0 || parent == t.tid {
                break;
            }
            t = self.find_task(parent)?;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_task_txt() {
        let t = "SESS timestamp=10.000000100 pid=5 sid=abc exename=\"/bin/prog\"\n\
                 TASK timestamp=10.000000200 tid=5 pid=5\n\
                 TASK timestamp=10.000000300 tid=6 pid=5\n\
                 FORK timestamp=10.000000400 pid=7 ppid=5\n\
                 DLOP timestamp=10.000000500 tid=6 sid=abc base=7f00 libname=\"/lib/x.so\"\n";
        let mut s = Sessions::default();
        assert_eq!(s.parse(t, true), None);
        assert_eq!(s.tasks.len(), 3);
        assert_eq!(s.find_task(6).unwrap().comm, "prog");
        assert_eq!(s.task_session(6, 10_000_000_350), Some(0));
        assert_eq!(s.task_session(6, 1), None);
        assert_eq!(s.sessions[0].dlopens[0].base, 0x7f00);
        let mut s2 = Sessions::default();
        assert_eq!(s2.parse("TASK timestamp=x tid=1\n", true), Some(0));
    }
}
