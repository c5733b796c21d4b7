//! `perf-cpu<N>.dat`: perf ring-buffer records uftrace saved per CPU
//! (context switches, task fork/exit and comm changes), each a
//! `perf_event_header` (`u32 type`, `u16 misc`, `u16 size`) and a body
//! ending with the `sample_id` (`u32 pid`, `u32 tid`, `u64 time`).

use tracemux_core::Endian;

const PERF_RECORD_EXIT: u32 = 4;
const PERF_RECORD_FORK: u32 = 7;
const PERF_RECORD_COMM: u32 = 3;
const PERF_RECORD_SWITCH: u32 = 14;
const MISC_SWITCH_OUT: u16 = 1 << 13;
const MISC_SWITCH_OUT_PREEMPT: u16 = 1 << 14;
const MISC_COMM_EXEC: u16 = 1 << 13;

/// What a perf record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfKind {
    /// Context switch (out = switched away; preempt = involuntary).
    Switch {
        out: bool,
        preempt: bool,
    },
    Fork {
        pid: i32,
        ppid: i32,
    },
    Exit {
        pid: i32,
        ppid: i32,
    },
    /// New command name (NUL-padded, at most 16 bytes).
    Comm {
        pid: i32,
        exec: bool,
        comm: [u8; 16],
    },
}

/// One perf record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfEvent {
    pub time: u64,
    pub tid: i32,
    pub kind: PerfKind,
    pub offset: u64,
}

impl PerfEvent {
    /// The uftrace event id this record becomes.
    pub fn event_id(&self) -> u32 {
        use crate::events::id;
        match self.kind {
            PerfKind::Switch {
                out: true,
                preempt: true,
            } => id::PERF_SCHED_OUT_PREEMPT,
            PerfKind::Switch { out: true, .. } => id::PERF_SCHED_OUT,
            PerfKind::Switch { .. } => id::PERF_SCHED_IN,
            PerfKind::Fork { .. } => id::PERF_TASK,
            PerfKind::Exit { .. } => id::PERF_EXIT,
            PerfKind::Comm { .. } => id::PERF_COMM,
        }
    }

    /// The comm of a COMM record, up to its NUL.
    pub fn comm(&self) -> Option<&[u8]> {
        match &self.kind {
            PerfKind::Comm { comm, .. } => {
                let n = comm.iter().position(|&b| b == 0).unwrap_or(comm.len());
                Some(&comm[..n])
            }
            _ => None,
        }
    }
}

/// Sequential reader over one perf file.
#[derive(Debug, Clone)]
pub struct PerfReader<'a> {
    data: &'a [u8],
    pos: usize,
    endian: Endian,
    /// Set when the file ended inside a record.
    pub truncated_at: Option<u64>,
}

impl<'a> PerfReader<'a> {
    pub fn new(data: &'a [u8], endian: Endian) -> Self {
        PerfReader {
            data,
            pos: 0,
            endian,
            truncated_at: None,
        }
    }

    fn u32_at(&self, o: usize) -> Option<u32> {
        let b = self.data.get(o..o + 4)?;
        Some(self.endian.u32([b[0], b[1], b[2], b[3]]))
    }
    fn u64_at(&self, o: usize) -> Option<u64> {
        let b = self.data.get(o..o + 8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Some(self.endian.u64(a))
    }

    /// The next known record (unknown types are skipped).
    pub fn next_event(&mut self) -> Option<PerfEvent> {
        loop {
            let at = self.pos;
            if at + 8 > self.data.len() {
                if at != self.data.len() {
                    self.truncated_at = Some(at as u64);
                }
                self.pos = self.data.len();
                return None;
            }
            let ty = self.u32_at(at)?;
            let misc = self.endian.u16([self.data[at + 4], self.data[at + 5]]);
            let size = self.endian.u16([self.data[at + 6], self.data[at + 7]]) as usize;
            if size < 8 || at + size > self.data.len() {
                self.truncated_at = Some(at as u64);
                self.pos = self.data.len();
                return None;
            }
            self.pos = at + size;
            let body = at + 8;
            let len = size - 8;
            let ev = match ty {
                PERF_RECORD_SWITCH if len >= 16 => PerfEvent {
                    tid: self.u32_at(body + 4)? as i32,
                    time: self.u64_at(body + 8)?,
                    kind: PerfKind::Switch {
                        out: misc & MISC_SWITCH_OUT != 0,
                        preempt: misc & MISC_SWITCH_OUT_PREEMPT != 0,
                    },
                    offset: at as u64,
                },
                PERF_RECORD_FORK | PERF_RECORD_EXIT if len >= 24 => {
                    let pid = self.u32_at(body)? as i32;
                    let ppid = self.u32_at(body + 4)? as i32;
                    let tid = self.u32_at(body + 8)? as i32;
                    let time = self.u64_at(body + 16)?;
                    PerfEvent {
                        tid,
                        time,
                        kind: if ty == PERF_RECORD_FORK {
                            PerfKind::Fork { pid, ppid }
                        } else {
                            PerfKind::Exit { pid, ppid }
                        },
                        offset: at as u64,
                    }
                }
                PERF_RECORD_COMM if len >= 24 => {
                    let pid = self.u32_at(body)? as i32;
                    let tid = self.u32_at(body + 4)? as i32;
                    let comm_len = (len - 16).div_ceil(8) * 8;
                    let name_end = (body + comm_len).min(self.pos);
                    let mut comm = [0u8; 16];
                    let src = &self.data[body + 8..name_end.max(body + 8)];
                    let n = src
                        .iter()
                        .position(|&b| b == 0)
                        .unwrap_or(src.len())
                        .min(16);
                    comm[..n].copy_from_slice(&src[..n]);
                    let time = self.u64_at(body + comm_len + 8)?;
                    PerfEvent {
                        tid,
                        time,
                        kind: PerfKind::Comm {
                            pid,
                            exec: misc & MISC_COMM_EXEC != 0,
                            comm,
                        },
                        offset: at as u64,
                    }
                }
                _ => continue,
            };
            return Some(ev);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_switch_and_comm() {
        let mut d = Vec::new();
        d.extend_from_slice(&14u32.to_le_bytes());
        d.extend_from_slice(&(1u16 << 13).to_le_bytes());
        d.extend_from_slice(&24u16.to_le_bytes());
        d.extend_from_slice(&5u32.to_le_bytes());
        d.extend_from_slice(&6u32.to_le_bytes());
        d.extend_from_slice(&100u64.to_le_bytes());
        d.extend_from_slice(&3u32.to_le_bytes());
        d.extend_from_slice(&0u16.to_le_bytes());
        d.extend_from_slice(&40u16.to_le_bytes());
        d.extend_from_slice(&5u32.to_le_bytes());
        d.extend_from_slice(&6u32.to_le_bytes());
        d.extend_from_slice(b"prog\0\0\0\0");
        d.extend_from_slice(&5u32.to_le_bytes());
        d.extend_from_slice(&6u32.to_le_bytes());
        d.extend_from_slice(&200u64.to_le_bytes());
        let mut r = PerfReader::new(&d, Endian::Little);
        let a = r.next_event().unwrap();
        assert_eq!((a.tid, a.time), (6, 100));
        assert!(matches!(
            a.kind,
            PerfKind::Switch {
                out: true,
                preempt: false
            }
        ));
        let b = r.next_event().unwrap();
        assert_eq!(b.comm().unwrap(), b"prog");
        assert_eq!(b.time, 200);
        assert!(r.next_event().is_none());
        let mut r = PerfReader::new(&d[..30], Endian::Little);
        assert!(r.next_event().is_some());
        assert!(r.next_event().is_none());
        assert_eq!(r.truncated_at, Some(24));
    }
}
