//! Sequential record reader for one task's `<tid>.dat`.

use std::borrow::Cow;

use tracemux_core::Endian;

use crate::data::UftraceData;
use crate::record::{arg_blob_len, decode_header, pad8, Damage, Kind, Record, RECORD_MAGIC};

/// How many bytes a reader consumes between two [`DataBytes::release`]
/// calls.
///
/// [`DataBytes::release`]: crate::data::DataBytes::release
pub const RELEASE_STEP: usize = 4 << 20;

/// Reads the records of one task in file order, decoding argument blobs
/// with the recording's spec tables. Damage (bad magic, truncation, a blob
/// without a spec) is collected in [`TaskReader::damage`]; the reader then
/// skips to the next plausible record, so every decodable record is kept.
pub struct TaskReader<'d> {
    data: &'d UftraceData,
    /// Index into [`UftraceData::tasks`].
    pub task: usize,
    pub tid: i32,
    buf: &'d [u8],
    pos: usize,
    endian: Endian,
    last_time: u64,
    /// Bytes before this offset were handed back to the loader.
    released: usize,
    done: bool,
    /// Damage found so far (drain it to report).
    pub damage: Vec<Damage>,
}

impl<'d> TaskReader<'d> {
    pub fn new(data: &'d UftraceData, task: usize) -> TaskReader<'d> {
        let tf = &data.tasks[task];
        TaskReader {
            data,
            task,
            tid: tf.tid,
            buf: tf.bytes(),
            pos: 0,
            endian: data.endian(),
            last_time: 0,
            released: 0,
            done: tf.data.is_none(),
            damage: Vec::new(),
        }
    }

    /// A reader that returns nothing (a task filtered out).
    pub fn finish(&mut self) {
        self.done = true;
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    fn file(&self) -> Cow<'static, str> {
        Cow::Owned(format!("{}.dat", self.tid))
    }

    fn report(&mut self, offset: usize, message: impl Into<String>) {
        let file = self.file();
        self.damage.push(Damage {
            file,
            offset: offset as u64,
            message: message.into(),
        });
    }

    /// Find the next 8-aligned position from `from` that holds a plausible
    /// record (right magic, time not going backwards by much).
    fn resync(&mut self, from: usize) {
        let mut p = from.div_ceil(8) * 8;
        while p + 16 <= self.buf.len() {
            let mut h = [0u8; 16];
            h.copy_from_slice(&self.buf[p..p + 16]);
            let (time, _, _, magic, _, _) = decode_header(&h, self.endian);
            if magic == RECORD_MAGIC && time >= self.last_time && time - self.last_time < 1 << 42 {
                self.pos = p;
                return;
            }
            p += 8;
        }
        self.pos = self.buf.len();
        self.done = true;
    }

    /// Hand the bytes read so far back to the loader (in steps of
    /// [`RELEASE_STEP`], so the call is rare).
    #[cold]
    fn release(&mut self) {
        self.data.tasks[self.task].release(self.released as u64, self.pos as u64);
        self.released = self.pos;
    }

    /// Bytes of the file read, and its size.
    pub fn progress(&self) -> (u64, u64) {
        let total = self.buf.len() as u64;
        let done = if self.done { total } else { self.pos as u64 };
        (done.min(total), total)
    }

    /// The next record, or `None` at the end of the file.
    #[inline]
    pub fn next_record(&mut self) -> Option<Record<'d>> {
        if self.pos - self.released >= RELEASE_STEP {
            self.release();
        }
        loop {
            if self.done {
                return None;
            }
            let at = self.pos;
            let Some(hb) = self.buf.get(at..at + 16) else {
                if at < self.buf.len() {
                    self.report(
                        at,
                        format!("truncated record ({} bytes left)", self.buf.len() - at),
                    );
                }
                self.done = true;
                return None;
            };
            let mut h = [0u8; 16];
            h.copy_from_slice(hb);
            let (time, kind, more, magic, depth, addr) = decode_header(&h, self.endian);
            if magic != RECORD_MAGIC {
                self.report(at, format!("invalid record magic {magic}"));
                self.resync(at + 8);
                continue;
            }
            let body = at + 16;
            let mut rec = Record {
                time,
                kind,
                more,
                depth,
                addr,
                data: &[],
                offset: at as u64,
            };
            let mut next = body;
            if more {
                match kind {
                    Kind::Entry | Kind::Exit => {
                        let specs = self.data.arg_specs(self.tid, time, addr);
                        let Some(specs) = specs else {
                            self.report(at, format!("record missing argument info for {addr:#x}"));
                            self.last_time = time;
                            self.resync(body);
                            // keep the record itself, without its blob
                            rec.more = false;
                            return Some(rec);
                        };
                        let Some(len) =
                            arg_blob_len(self.buf, body, specs, kind == Kind::Exit, self.endian)
                        else {
                            self.report(at, "truncated argument data");
                            self.done = true;
                            return None;
                        };
                        rec.data = &self.buf[body..body + len];
                        next = body + len + pad8(len);
                    }
                    Kind::Event => {
                        let Some(lb) = self.buf.get(body..body + 2) else {
                            self.report(at, "truncated event data");
                            self.done = true;
                            return None;
                        };
                        let len = self.endian.u16([lb[0], lb[1]]) as usize;
                        let Some(d) = self.buf.get(body + 2..body + 2 + len) else {
                            self.report(at, "truncated event data");
                            self.done = true;
                            return None;
                        };
                        rec.data = d;
                        next = body + 2 + len + pad8(len + 2);
                    }
                    Kind::Lost => {}
                }
            }
            self.pos = next.min(self.buf.len());
            if next > self.buf.len() {
                // padding cut off at the end: the record itself is complete
                self.pos = self.buf.len();
            }
            self.last_time = time;
            return Some(rec);
        }
    }
}
