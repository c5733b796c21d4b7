//! `report` of one trace.dat in trace-cmd's views, printed on several
//! threads with the bytes one thread prints.
//!
//! The calling thread reads and selects the events in order and hands them
//! out in batches (where each event's bytes live, not the bytes: a mapped
//! file region is shared, a decompressed chunk is copied once); workers
//! print the batches, each with its own printer; the calling thread takes
//! the texts back in order. What one event's text depends on from the events
//! before it is the comm of the pretty view's task column (the sched
//! plugin registers comms as it prints): the workers leave that column
//! out, and the calling thread writes it in, in order
//! ([`TaskColumns::stitch`]). The rest of a printer's state stays within a
//! batch (a lost-events line and the event after it go together). From the
//! first event whose printer looks at the next record (function graph),
//! the calling thread prints every event itself, as one thread does. Views
//! with state across events beyond that (`--ts-diff`, several files or
//! instances with their prefixes) are printed on one thread by the caller.

use std::collections::VecDeque;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

use tracemux_core::model::{Event, Lost, Record, RecordSource, TraceMeta};
use tracemux_core::text::{Release, Releaser, Text};
use tracemux_core::Endian;
use tracemux_render::tracecmd::{Deferred, TaskColumns, TimeFormat, TraceCmdPrinter};

use super::{trace_error, ReportError};
use crate::reader::{ext_of, EventBytes, Reader};

type Result<T> = std::result::Result<T, ReportError>;

/// Batches a worker may have waiting for it, and printed texts waiting for
/// the calling thread.
const QUEUE: usize = 2;

/// How the events are printed.
#[derive(Clone, Copy)]
pub struct View {
    pub time: TimeFormat,
    pub raw: bool,
    pub latency: bool,
    /// The byte order of the file.
    pub endian: Endian,
}

/// The bytes events are cut from: a region of the mapped file, or a copy of
/// a decompressed chunk.
enum Block<'m> {
    Mapped(&'m [u8]),
    Chunk(Arc<[u8]>),
}

impl Block<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Block::Mapped(b) => b,
            Block::Chunk(b) => b,
        }
    }
}

/// What an event's printing needs besides its bytes.
#[derive(Clone, Copy)]
struct Head {
    ts: u64,
    stream: u32,
    cpu: u32,
    type_id: u32,
    pid: i32,
}

impl Head {
    fn of(ev: &Event<'_>) -> Head {
        Head {
            ts: ev.ts,
            stream: ev.stream,
            cpu: ev.cpu,
            type_id: ev.type_id,
            pid: ev.pid,
        }
    }

    /// The event again, its payload `data` and the bytes after it `ext`.
    fn event<'b>(
        self,
        meta: &'b TraceMeta,
        view: View,
        data: &'b [u8],
        ext: &'b [u8],
    ) -> Event<'b> {
        Event {
            ts: self.ts,
            stream: self.stream,
            cpu: self.cpu,
            type_id: self.type_id,
            class: meta.classes.get(self.type_id),
            pid: self.pid,
            data,
            ext,
            endian: view.endian,
            file_pos: 0,
            tape: None,
            raw_ts: None,
        }
    }
}

/// One event, located in a block of its batch, or a lost-events line.
enum Item {
    Event {
        head: Head,
        block: u32,
        start: usize,
        len: usize,
    },
    Lost(Lost),
}

#[derive(Default)]
struct Batch<'m> {
    blocks: Vec<Block<'m>>,
    items: Vec<Item>,
}

/// A printed batch: its text and the task columns left out of it, the batch
/// itself (to print again), and the sticky changes of the workers'
/// printers when it was done (see [`ClassPrinter::sticky_changes`]).
///
/// [`ClassPrinter::sticky_changes`]: tracemux_core::model::ClassPrinter::sticky_changes
struct Printed<'m> {
    text: Vec<u8>,
    deferred: Deferred,
    batch: Batch<'m>,
    sticky: u64,
}

/// Print `batch` with `p` into a text and the task columns it left out.
fn print(
    p: &mut TraceCmdPrinter,
    meta: &TraceMeta,
    view: View,
    batch: &Batch<'_>,
) -> (Vec<u8>, Deferred) {
    let mut text = Vec::with_capacity(batch.items.len() * 128);
    for item in &batch.items {
        match *item {
            Item::Lost(l) => p.write_lost(&mut text, meta, &l),
            Item::Event {
                head,
                block,
                start,
                len,
            } => {
                let blk = batch.blocks[block as usize].bytes();
                let ev = head.event(
                    meta,
                    view,
                    &blk[start..start + len],
                    ext_of(blk, start, len),
                );
                if view.raw {
                    p.write_raw(&mut text, meta, &ev, ev.ext);
                } else {
                    p.write_pretty(&mut text, meta, &ev, None);
                }
            }
        }
    }
    (text, p.take_deferred())
}

/// The sticky flags of the printers of `meta`, per class.
fn sticky(meta: &TraceMeta) -> Vec<Vec<bool>> {
    meta.classes
        .iter()
        .map(|c| c.printer.as_ref().map(|p| p.sticky()).unwrap_or_default())
        .collect()
}

/// Put the sticky flags of the printers of `meta` back as [`sticky`] gave them.
fn set_sticky(meta: &TraceMeta, flags: &[Vec<bool>]) {
    for (c, f) in meta.classes.iter().zip(flags) {
        if let Some(p) = c.printer.as_ref() {
            p.set_sticky(f);
        }
    }
}

/// Sticky flags changed by the printers of `meta` so far.
fn sticky_changes(meta: &TraceMeta) -> u64 {
    meta.classes
        .iter()
        .filter_map(|c| c.printer.as_ref())
        .map(|p| p.sticky_changes())
        .sum()
}

/// The workers and the batches in flight, in order.
struct Pool<'m, 'f> {
    to: Vec<SyncSender<Batch<'m>>>,
    from: Vec<Receiver<Printed<'m>>>,
    /// Workers holding a batch, oldest first, with what the reader had
    /// read when the batch was sent (its bytes may go once it is printed).
    inflight: VecDeque<(usize, Vec<(u64, u64)>)>,
    next: usize,
    view: View,
    cols: TaskColumns,
    /// The calling thread prints every event itself (from the first event
    /// that looks ahead).
    here: bool,
    /// The sticky changes of the printers (`meta`'s) that the batches in
    /// flight may have seen, and the flags then: a batch that ends with
    /// more changes may have seen flags set by batches after it. When one
    /// does, the workers finish what they hold, the flags are put back, and
    /// the batches in flight are printed again here, in order; then the
    /// workers go on.
    sticky: u64,
    flags: Vec<Vec<bool>>,
    /// The calling thread's printer.
    mine: Option<TraceCmdPrinter>,
    release: &'f dyn Release,
    releaser: Releaser,
}

impl<'m> Pool<'m, '_> {
    /// Hand `batch` to the next worker, first taking back a printed batch
    /// when every queue is full.
    fn send(
        &mut self,
        batch: Batch<'m>,
        consumed: Vec<(u64, u64)>,
        out: &mut Text<'_>,
        meta: &TraceMeta,
    ) -> Result<()> {
        if batch.items.is_empty() {
            return Ok(());
        }
        if self.inflight.len() >= self.to.len() * QUEUE {
            self.take(out, meta)?;
        }
        if self.here {
            return self.print_here(&batch, out, meta);
        }
        let w = self.next;
        self.next = (w + 1) % self.to.len();
        if self.to[w].send(batch).is_err() {
            return Err(ReportError::Internal("a printing thread stopped".into()));
        }
        self.inflight.push_back((w, consumed));
        Ok(())
    }

    /// Print `batch` on this thread.
    fn print_here(
        &mut self,
        batch: &Batch<'_>,
        out: &mut Text<'_>,
        meta: &TraceMeta,
    ) -> Result<()> {
        let view = self.view;
        let p = self.mine.get_or_insert_with(|| printer(meta, view));
        let (text, deferred) = print(p, meta, view, batch);
        self.cols.stitch(out.buf(), meta, &text, &deferred);
        out.maybe_flush()?;
        Ok(())
    }

    /// Take back the oldest printed batch and write it; when it may have
    /// seen a sticky flag set too early, print it and every batch after it
    /// again, here.
    fn take(&mut self, out: &mut Text<'_>, meta: &TraceMeta) -> Result<()> {
        let Some((w, consumed)) = self.inflight.pop_front() else {
            return Ok(());
        };
        let Ok(p) = self.from[w].recv() else {
            return Err(ReportError::Internal("a printing thread stopped".into()));
        };
        // Drop what was read before this batch was sent from memory (not
        // earlier: a page dropped while a worker reads it comes back, and
        // then would stay).
        self.releaser.release(self.release, &consumed);
        if p.sticky == self.sticky {
            self.cols.stitch(out.buf(), meta, &p.text, &p.deferred);
            out.maybe_flush()?;
            return Ok(());
        }
        // collect what the workers hold, so that nothing prints meanwhile
        let mut again = vec![p.batch];
        while let Some((w, consumed)) = self.inflight.pop_front() {
            let Ok(p) = self.from[w].recv() else {
                return Err(ReportError::Internal("a printing thread stopped".into()));
            };
            self.releaser.release(self.release, &consumed);
            again.push(p.batch);
        }
        set_sticky(meta, &self.flags);
        for b in &again {
            self.print_here(b, out, meta)?;
        }
        self.sticky = sticky_changes(meta);
        self.flags = sticky(meta);
        Ok(())
    }

    /// Write every batch in flight.
    fn drain(&mut self, out: &mut Text<'_>, meta: &TraceMeta) -> Result<()> {
        while !self.inflight.is_empty() {
            self.take(out, meta)?;
        }
        Ok(())
    }
}

/// What [`report`] prints and how.
pub struct Job<'a> {
    /// The trace (for messages) and where its bytes read can be given back.
    pub path: &'a std::path::Path,
    pub release: &'a dyn Release,
    /// The reader's metadata.
    pub meta: &'a TraceMeta,
    pub view: View,
    /// Per type id: the classes whose pretty view must be printed in order
    /// ([`ClassPrinter::wants_next`], [`ClassPrinter::stateful`]).
    ///
    /// [`ClassPrinter::wants_next`]: tracemux_core::model::ClassPrinter::wants_next
    /// [`ClassPrinter::stateful`]: tracemux_core::model::ClassPrinter::stateful
    pub serial: &'a [bool],
    /// Worker threads, and events per batch handed to one.
    pub threads: usize,
    pub batch_events: usize,
}

/// Print the events of `reader` (one trace.dat) as `report`'s trace-cmd
/// views do, on `job.threads` worker threads; `keep` is the selection,
/// `warn` gets the damage found. Returns whether damage was reported.
pub fn report(
    job: &Job<'_>,
    reader: &mut Reader<'_>,
    out: &mut Text<'_>,
    keep: &mut dyn FnMut(&TraceMeta, &Event<'_>) -> bool,
    warn: &mut dyn FnMut(&str),
) -> Result<bool> {
    let (meta, view) = (job.meta, job.view);
    std::thread::scope(|sc| {
        let mut pool = Pool {
            to: Vec::new(),
            from: Vec::new(),
            inflight: VecDeque::new(),
            next: 0,
            view,
            cols: TaskColumns::new(view.latency),
            here: false,
            sticky: sticky_changes(meta),
            flags: sticky(meta),
            mine: None,
            release: job.release,
            releaser: Releaser::default(),
        };
        // A batch whose printing may have seen a sticky flag set (by
        // itself or by any later batch) ends after it was set, and says so;
        // it is then printed again with printers that have changed nothing.
        for _ in 0..job.threads {
            let (tx, rx) = sync_channel::<Batch<'_>>(QUEUE);
            let (ptx, prx) = sync_channel::<Printed<'_>>(QUEUE);
            sc.spawn(move || {
                let mut p = printer(meta, view);
                for batch in rx {
                    let (text, deferred) = print(&mut p, meta, view, &batch);
                    let sticky = sticky_changes(meta);
                    let done = Printed {
                        text,
                        deferred,
                        batch,
                        sticky,
                    };
                    if ptx.send(done).is_err() {
                        break;
                    }
                }
            });
            pool.to.push(tx);
            pool.from.push(prx);
        }
        let res = feed(job, reader, out, keep, warn, &mut pool);
        // the workers end when their queues close
        pool.to.clear();
        res
    })
}

/// A printer of `view` that leaves the task columns to [`TaskColumns`].
fn printer(meta: &TraceMeta, view: View) -> TraceCmdPrinter {
    let mut p = TraceCmdPrinter::new(meta, view.time);
    if view.latency {
        p.set_latency(meta, true);
    }
    if !view.raw {
        p.defer_task_columns();
    }
    p
}

/// The calling thread's part of [`report`].
fn feed<'m>(
    job: &Job<'_>,
    reader: &mut Reader<'m>,
    out: &mut Text<'_>,
    keep: &mut dyn FnMut(&TraceMeta, &Event<'_>) -> bool,
    warn: &mut dyn FnMut(&str),
    pool: &mut Pool<'m, '_>,
) -> Result<bool> {
    let (path, meta, serial) = (job.path, job.meta, job.serial);
    let batch_len = job.batch_events.max(1);
    let mut batch = Batch::default();
    // per stream: the chunk copied last ((serial, bytes)), and the block
    // index of the stream's bytes in the current batch
    let mut chunks: Vec<Option<(u64, Arc<[u8]>)>> = Vec::new();
    let mut in_batch: Vec<Option<u32>> = Vec::new();
    let mut pending: Option<Lost> = None;
    let mut damaged = false;
    let view = pool.view;
    let mut text: Vec<u8> = Vec::new();
    let mut held: Vec<u8> = Vec::new();
    let mut n: u64 = 0;
    loop {
        n += 1;
        if pool.here && n % 65536 == 0 {
            pool.releaser.release(pool.release, &reader.consumed());
        }
        let rec = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                pool.send(std::mem::take(&mut batch), reader.consumed(), out, meta)?;
                pool.drain(out, meta)?;
                out.flush()?;
                return Err(trace_error(path, e));
            }
        };
        let ev = match rec {
            Record::Event(ev) => ev,
            Record::Lost(l) => {
                pending = Some(l);
                continue;
            }
            Record::Damage(e) => {
                pool.send(std::mem::take(&mut batch), reader.consumed(), out, meta)?;
                in_batch.iter_mut().for_each(|b| *b = None);
                pool.drain(out, meta)?;
                out.flush()?;
                warn(&format!("{}: {}", path.display(), e));
                damaged = true;
                continue;
            }
        };
        // trace-cmd prints a loss marker only with the event after it
        let lost = pending.take();
        if !keep(meta, &ev) {
            continue;
        }
        let head = Head::of(&ev);
        let (stream, type_id) = (ev.stream, ev.type_id);
        let in_order = !view.raw && serial.get(type_id as usize).copied().unwrap_or(false);
        if in_order && !pool.here {
            pool.send(std::mem::take(&mut batch), Vec::new(), out, meta)?;
            pool.drain(out, meta)?;
            pool.here = true;
        }
        if pool.here {
            let p = pool.mine.get_or_insert_with(|| printer(meta, view));
            let looks_ahead = meta
                .classes
                .get(type_id)
                .and_then(|c| c.printer.as_ref())
                .is_some_and(|c| c.wants_next());
            text.clear();
            if let Some(l) = lost {
                p.write_lost(&mut text, meta, &l);
            }
            if view.raw {
                p.write_raw(&mut text, meta, &ev, ev.ext);
            } else if !looks_ahead {
                p.write_pretty(&mut text, meta, &ev, None);
            } else {
                // (function graph entries: trace-cmd looks at the next
                // record of the buffer to print leaf functions on one line)
                held.clear();
                held.extend_from_slice(&ev.ext[..ev.ext.len().min(ev.data.len() + 256)]);
                let copy = head.event(meta, view, &held[..ev.data.len()], &held);
                let next = reader.peek_same_buffer(stream);
                if p.write_pretty(&mut text, meta, &copy, next) {
                    reader.consume_peeked();
                }
            }
            let deferred = p.take_deferred();
            pool.cols.stitch(out.buf(), meta, &text, &deferred);
            out.maybe_flush()?;
            continue;
        }
        let Some((bytes, start, len)) = reader.last_event_bytes() else {
            return Err(ReportError::Internal(format!(
                "{}: the reader lost its event",
                path.display()
            )));
        };
        let s = stream as usize;
        if in_batch.len() <= s {
            in_batch.resize(s + 1, None);
            chunks.resize(s + 1, None);
        }
        let block = match (in_batch[s], bytes) {
            (Some(b), EventBytes::Mapped(_)) => b,
            (Some(b), EventBytes::Chunk { serial, .. })
                if chunks[s].as_ref().is_some_and(|c| c.0 == serial) =>
            {
                b
            }
            (_, bytes) => {
                let blk = match bytes {
                    EventBytes::Mapped(region) => Block::Mapped(region),
                    EventBytes::Chunk { serial, bytes, .. } => {
                        let c = match &chunks[s] {
                            Some((have, c)) if *have == serial => c.clone(),
                            _ => {
                                let c: Arc<[u8]> = bytes.into();
                                chunks[s] = Some((serial, c.clone()));
                                c
                            }
                        };
                        Block::Chunk(c)
                    }
                };
                batch.blocks.push(blk);
                let b = (batch.blocks.len() - 1) as u32;
                in_batch[s] = Some(b);
                b
            }
        };
        if let Some(l) = lost {
            batch.items.push(Item::Lost(l));
        }
        batch.items.push(Item::Event {
            head,
            block,
            start,
            len,
        });
        if batch.items.len() >= batch_len {
            pool.send(std::mem::take(&mut batch), reader.consumed(), out, meta)?;
            in_batch.iter_mut().for_each(|b| *b = None);
        }
    }
    pool.send(batch, Vec::new(), out, meta)?;
    pool.drain(out, meta)?;
    out.flush()?;
    Ok(damaged)
}
