//! Merging several record sources (several trace files) into one time
//! order, as `trace-cmd report -i A -i B` does: the record with the
//! smallest timestamp first; on equal timestamps the earlier source.

use crate::bytes::Endian;
use crate::error::{Error, Result};
use crate::layout::ClassId;
use crate::model::{
    Event, EventClass, Lost, Progress, Record, RecordSource, StreamInfo, TraceMeta,
};
use crate::timeline::InputInfo;
use crate::typed::FieldTape;

/// A record source that can tell the timestamp of its next record without
/// handing it out.
pub trait PeekSource: RecordSource {
    /// The timestamp of the record [`RecordSource::next_record`] would
    /// return next, `None` at the end. A pending damage report peeks as 0,
    /// so that it is reported at once.
    fn peek_ts(&mut self) -> Result<Option<u64>>;
}

/// A k-way merge of sources by timestamp. Lost-event markers stay right
/// before the event they precede (a source gives both the same timestamp,
/// and ties go to the source that had the marker).
pub struct Merge<S> {
    sources: Vec<S>,
}

impl<S: PeekSource> Merge<S> {
    pub fn new(sources: Vec<S>) -> Self {
        Merge { sources }
    }

    pub fn sources(&self) -> &[S] {
        &self.sources
    }

    pub fn sources_mut(&mut self) -> &mut [S] {
        &mut self.sources
    }

    pub fn into_sources(self) -> Vec<S> {
        self.sources
    }

    /// The source index the next record comes from, `None` at the end.
    pub fn peek_source(&mut self) -> Result<Option<usize>> {
        let mut best: Option<(u64, usize)> = None;
        for (i, s) in self.sources.iter_mut().enumerate() {
            if let Some(ts) = s.peek_ts()? {
                if best.is_none_or(|(b, _)| ts < b) {
                    best = Some((ts, i));
                }
            }
        }
        Ok(best.map(|(_, i)| i))
    }

    /// The next record of all sources in time order, with the index of the
    /// source it comes from.
    pub fn next_record(&mut self) -> Result<Option<(usize, Record<'_>)>> {
        // one source: nothing to merge (and no need to peek)
        if self.sources.len() == 1 {
            return Ok(self.sources[0].next_record()?.map(|r| (0, r)));
        }
        let Some(i) = self.peek_source()? else {
            return Ok(None);
        };
        Ok(self.sources[i].next_record()?.map(|r| (i, r)))
    }
}

/// Several traces of any formats as one source: every input's records in
/// its own order, each input shifted by one constant
/// ([`crate::timeline::align`]), merged by time (ties: the earlier input
/// first). The merged description holds every input's classes, streams,
/// buffers and tasks; [`TraceMeta::inputs`] says which streams are whose.
///
/// A source's record borrows it until the next call, so each input's next
/// record is kept here as a copy (its bytes and recorded values) until it
/// is the earliest: a copy per event, in buffers that are reused.
pub struct Timeline<'s> {
    inputs: Vec<Slot<'s>>,
    meta: TraceMeta,
    cur: Held,
    /// The input whose record was handed out last (read again next).
    last: Option<usize>,
}

struct Slot<'s> {
    src: &'s mut dyn RecordSource,
    shift: i64,
    /// The input's class index -> the merged one.
    classes: Vec<ClassId>,
    stream_base: u32,
    held: Held,
    state: SlotState,
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum SlotState {
    Empty,
    Held,
    End,
}

/// An owned copy of a record.
#[derive(Default)]
struct Held {
    kind: HeldKind,
    ts: u64,
    stream: u32,
    cpu: u32,
    type_id: u32,
    class: Option<ClassId>,
    pid: i32,
    data: Vec<u8>,
    endian: Option<Endian>,
    file_pos: u64,
    tape: FieldTape,
    has_tape: bool,
    raw_ts: Option<u64>,
    count: Option<u64>,
    damage: Option<Error>,
}

#[derive(Default, PartialEq, Eq, Clone, Copy)]
enum HeldKind {
    #[default]
    Event,
    Lost,
    Damage,
}

impl<'s> Timeline<'s> {
    /// Merge `inputs` (each with its name, shift and description of its
    /// clock).
    pub fn new(inputs: Vec<(&'s mut dyn RecordSource, InputInfo)>) -> Timeline<'s> {
        let mut meta = TraceMeta::default();
        let mut slots = Vec::with_capacity(inputs.len());
        for (src, mut info) in inputs {
            let m = src.meta();
            let stream_base = meta.streams.len() as u32;
            let buffer_base = meta.buffers.len() as u32;
            let mut classes = Vec::with_capacity(m.classes.len());
            for c in m.classes.iter() {
                classes.push(meta.classes.next_id());
                meta.classes.push(c.clone());
            }
            meta.buffers.extend(m.buffers.iter().cloned());
            meta.streams.extend(m.streams.iter().map(|s| StreamInfo {
                buffer: s.buffer + buffer_base,
                cpu: s.cpu,
            }));
            for (tid, comm) in m.tasks.sorted() {
                if meta.tasks.get(tid).is_none() {
                    meta.tasks.insert(tid, comm);
                }
            }
            for (&t, &g) in &m.tgids {
                meta.tgids.entry(t).or_insert(g);
            }
            // a uftrace recording's tasks are threads of its first task
            // (as its task.txt says and its writers take it)
            if m.format == Some(crate::model::Format::Uftrace) {
                if let Some(&(pid, _)) = m.tasks.sorted().first() {
                    for (tid, _) in m.tasks.sorted() {
                        meta.tgids.entry(tid).or_insert(pid);
                    }
                }
            }
            if meta.symbols.is_empty() && !m.symbols.is_empty() {
                meta.symbols = m.symbols.clone();
            }
            if meta.printk.is_empty() && !m.printk.is_empty() {
                meta.printk = m.printk.clone();
            }
            meta.cpus = meta.cpus.max(m.cpus);
            meta.long_size = meta.long_size.max(m.long_size);
            meta.endian = meta.endian.or(m.endian);
            meta.uname = meta.uname.take().or_else(|| m.uname.clone());
            meta.tracer_version = meta
                .tracer_version
                .take()
                .or_else(|| m.tracer_version.clone());
            // the timeline's clock is the first input's: its own clock
            // (with its offset from its origin), or one named after what
            // the file says; the other inputs' clocks are in their
            // [`InputInfo::clock`] (their offsets no longer describe the
            // merged times)
            if slots.is_empty() {
                meta.clocks
                    .push(
                        m.clocks
                            .first()
                            .cloned()
                            .unwrap_or_else(|| crate::model::ClockInfo {
                                name: info.clock.clock.clone(),
                                freq: 1_000_000_000,
                                description: Some(info.clock.source.clone()),
                                ..Default::default()
                            }),
                    );
            }
            for kv in &m.env {
                if !meta.env.iter().any(|(k, _)| *k == kv.0) {
                    meta.env.push(kv.clone());
                }
            }
            info.streams = stream_base..meta.streams.len() as u32;
            info.format = m.format;
            meta.inputs.push(info.clone());
            slots.push(Slot {
                shift: info.shift_ns,
                src,
                classes,
                stream_base,
                held: Held::default(),
                state: SlotState::Empty,
            });
        }
        Timeline {
            inputs: slots,
            meta,
            cur: Held::default(),
            last: None,
        }
    }

    /// Read input `i`'s next record into its slot.
    fn fill(&mut self, i: usize) -> Result<()> {
        let slot = &mut self.inputs[i];
        let swaps = slot.src.swaps_tapes();
        let rec = match slot.src.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => {
                slot.state = SlotState::End;
                return Ok(());
            }
            Err(e) => {
                slot.state = SlotState::End;
                return Err(e);
            }
        };
        let h = &mut slot.held;
        let mut late: Option<EventClass> = None;
        match rec {
            Record::Event(ev) => {
                h.kind = HeldKind::Event;
                h.ts = ev.ts.saturating_add_signed(slot.shift);
                h.stream = ev.stream.saturating_add(slot.stream_base);
                h.cpu = ev.cpu;
                h.type_id = ev.type_id;
                h.class = match ev.class {
                    Some(c) => match slot.classes.get(c.index.index()) {
                        Some(&id) => Some(id),
                        None => {
                            // a class the source added after its start
                            late = Some(c.clone());
                            None
                        }
                    },
                    None => None,
                };
                h.pid = ev.pid;
                h.data.clear();
                h.data.extend_from_slice(ev.data);
                h.endian = Some(ev.endian);
                h.file_pos = ev.file_pos;
                h.has_tape = ev.tape.is_some();
                if let Some(t) = ev.tape {
                    if !swaps {
                        h.tape.copy_from(t);
                    }
                }
                h.raw_ts = ev.raw_ts;
            }
            Record::Lost(l) => {
                h.kind = HeldKind::Lost;
                h.ts = l.ts.saturating_add_signed(slot.shift);
                h.stream = l.stream.saturating_add(slot.stream_base);
                h.cpu = l.cpu;
                h.count = l.count;
                h.has_tape = false;
            }
            Record::Damage(e) => {
                h.kind = HeldKind::Damage;
                h.damage = Some(e);
                h.has_tape = false;
            }
        }
        if h.kind == HeldKind::Event && h.has_tape && swaps {
            slot.src.swap_tape(&mut h.tape);
        }
        if let Some(c) = late {
            let id = self.meta.classes.next_id();
            let mut want = slot.classes.len();
            // classes the source knows now, up to this one
            let src_meta = slot.src.meta();
            while want <= c.index.index() {
                let cl = src_meta.classes.at(ClassId::new(want as u32)).cloned();
                slot.classes.push(self.meta.classes.next_id());
                self.meta.classes.push(cl.unwrap_or_else(|| c.clone()));
                want += 1;
            }
            let _ = id;
            slot.held.class = slot.classes.get(c.index.index()).copied();
        }
        slot.state = SlotState::Held;
        Ok(())
    }
}

impl RecordSource for Timeline<'_> {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn progress(&self) -> Option<Progress> {
        // every input's, or none (a total without one input's is no total)
        self.inputs
            .iter()
            .try_fold(Progress::default(), |acc, s| Some(acc + s.src.progress()?))
    }

    fn next_record(&mut self) -> Result<Option<Record<'_>>> {
        if let Some(i) = self.last.take() {
            self.inputs[i].state = SlotState::Empty;
        }
        for i in 0..self.inputs.len() {
            if self.inputs[i].state == SlotState::Empty {
                self.fill(i)?;
            }
        }
        let mut best: Option<(u64, usize)> = None;
        for (i, s) in self.inputs.iter().enumerate() {
            if s.state != SlotState::Held {
                continue;
            }
            // damage is reported at once
            let ts = if s.held.kind == HeldKind::Damage {
                0
            } else {
                s.held.ts
            };
            if best.is_none_or(|(b, _)| ts < b) {
                best = Some((ts, i));
            }
        }
        let Some((_, i)) = best else {
            return Ok(None);
        };
        std::mem::swap(&mut self.cur, &mut self.inputs[i].held);
        self.last = Some(i);
        let h = &mut self.cur;
        Ok(Some(match h.kind {
            HeldKind::Damage => Record::Damage(
                h.damage
                    .take()
                    .unwrap_or_else(|| Error::invalid("damage", "timeline", 0)),
            ),
            HeldKind::Lost => Record::Lost(Lost {
                stream: h.stream,
                cpu: h.cpu,
                ts: h.ts,
                count: h.count,
            }),
            HeldKind::Event => Record::Event(Event {
                ts: h.ts,
                stream: h.stream,
                cpu: h.cpu,
                type_id: h.type_id,
                class: h.class.and_then(|c| self.meta.classes.at(c)),
                pid: h.pid,
                data: &h.data,
                ext: &h.data,
                endian: h.endian.unwrap_or(Endian::Little),
                file_pos: h.file_pos,
                tape: h.has_tape.then_some(&h.tape),
                raw_ts: h.raw_ts,
            }),
        }))
    }

    fn swaps_tapes(&self) -> bool {
        true
    }

    fn swap_tape(&mut self, t: &mut FieldTape) {
        if self.cur.has_tape {
            std::mem::swap(&mut self.cur.tape, t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records as (ts, is_lost).
    struct Fake {
        meta: TraceMeta,
        recs: Vec<(u64, bool)>,
        pos: usize,
    }

    impl RecordSource for Fake {
        fn meta(&self) -> &TraceMeta {
            &self.meta
        }
        fn next_record(&mut self) -> Result<Option<Record<'_>>> {
            let Some(&(ts, lost)) = self.recs.get(self.pos) else {
                return Ok(None);
            };
            self.pos += 1;
            let l = Lost {
                stream: 0,
                cpu: 0,
                ts,
                count: if lost { Some(1) } else { None },
            };
            Ok(Some(Record::Lost(l)))
        }
    }

    impl PeekSource for Fake {
        fn peek_ts(&mut self) -> Result<Option<u64>> {
            Ok(self.recs.get(self.pos).map(|r| r.0))
        }
    }

    fn fake(recs: &[(u64, bool)]) -> Fake {
        Fake {
            meta: TraceMeta::default(),
            recs: recs.to_vec(),
            pos: 0,
        }
    }

    #[test]
    fn merges_by_time_earlier_source_first() {
        let a = fake(&[(1, false), (5, false), (5, false), (9, false)]);
        let b = fake(&[(0, false), (5, true), (5, false), (6, false)]);
        let mut m = Merge::new(vec![a, b]);
        let mut got = Vec::new();
        while let Some((i, r)) = m.next_record().unwrap() {
            let Record::Lost(l) = r else { unreachable!() };
            got.push((i, l.ts, l.count.is_some()));
        }
        assert_eq!(
            got,
            vec![
                (1, 0, false),
                (0, 1, false),
                (0, 5, false),
                (0, 5, false),
                (1, 5, true),
                (1, 5, false),
                (1, 6, false),
                (0, 9, false)
            ]
        );
    }
}
