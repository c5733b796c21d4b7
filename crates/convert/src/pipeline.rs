//! A conversion on two threads: the source is read on the calling thread,
//! the sink writes on another. Events are copied into batches (their
//! header, their bytes and their recorded values) that go to the sink in
//! the order read, so the output is the one the serial loop gives.
//!
//! Used where reading an event is a good part of the work and its copy is
//! small: formats whose reader records the values of each event (CTF,
//! uftrace, LTT). trace.dat events carry the rest of their ring-buffer page
//! (`ext`), which would cost more to copy than the reading saves.
//!
//! A sink whose output for an event depends on that event and the metadata
//! alone ([`Lines`]: JSON lines) goes further: several workers format
//! batches at once and a writer thread writes their texts in the order read
//! ([`with_line_workers`]). Such a sink needs no `ext`, so trace.dat's
//! events are copied without it.

use std::sync::mpsc::sync_channel;

use crate::{Error, Result};
use tracemux_core::layout::ClassId;
use tracemux_core::model::{Event, EventClass, Format, Lost, RecordSource, TraceMeta};
use tracemux_core::stage;
use tracemux_core::typed::FieldTape;
use tracemux_core::Endian;

use crate::options::To;
use crate::sink::{Sink, Target};

/// Events per batch ([`crate::Options::batch_events`] overrides it: tests
/// use tiny batches), and the batches that may be on their way at once.
const BATCH_EVENTS: usize = 512;
const IN_FLIGHT: usize = 3;
/// A batch goes once it holds this many bytes of events and values.
const BATCH_BYTES: usize = 512 << 10;

/// Whether a conversion of `meta`'s trace into `to` runs on two threads.
/// Not into Parquet: its encoding has a thread of its own already, and
/// the cores are busy (measured: no faster, more memory).
pub(crate) fn wanted(meta: &TraceMeta, to: To, threads: usize) -> bool {
    matches!(
        meta.format,
        Some(Format::Ctf | Format::Uftrace | Format::Ltt)
    ) && to != To::Parquet
        && threads > 1
}

/// Which class an event has, in the sink's copy of the metadata.
enum ClassRef {
    None,
    /// In the sink's copy of the metadata's
    /// [`tracemux_core::model::ClassTable`].
    At(ClassId),
    /// A class that is not in the sink's copy (a reader that made it
    /// later): the event carries its own copy.
    Own(Box<EventClass>),
}

struct Head {
    ts: u64,
    stream: u32,
    cpu: u32,
    type_id: u32,
    class: ClassRef,
    pid: i32,
    /// `ext` in [`Batch::bytes`]; `data` is its first `data_len` bytes.
    at: usize,
    ext_len: usize,
    data_len: usize,
    endian: Endian,
    file_pos: u64,
    tape: Option<usize>,
    raw_ts: Option<u64>,
}

enum Item {
    Event(Head),
    Lost(Lost),
    Damage(String),
}

#[derive(Default)]
struct Batch {
    items: Vec<Item>,
    bytes: Vec<u8>,
    /// Recorded values; the first `tapes_used` belong to this batch's
    /// events, the rest is room kept for the next use.
    tapes: Vec<FieldTape>,
    tapes_used: usize,
    /// Bytes of the recorded values of this batch's events.
    tape_bytes: usize,
    /// The batch's text, made by a line worker (kept with the batch, so
    /// that its room is used again).
    text: Vec<u8>,
}

impl Batch {
    fn clear(&mut self) {
        self.items.clear();
        self.bytes.clear();
        self.tapes_used = 0;
        self.tape_bytes = 0;
        self.text.clear();
    }
    fn full(&self, events: usize) -> bool {
        self.items.len() >= events || self.bytes.len() + self.tape_bytes >= BATCH_BYTES
    }
}

/// The reader's side: events copied into batches for the sink's thread.
pub(crate) struct Feed<'m> {
    /// The sink's copy of the reader's metadata.
    meta: &'m TraceMeta,
    batch: Batch,
    /// The sink's thread, or the line workers (a batch to each in turn;
    /// each gives its batches back to the stage they came by).
    to_sink: Vec<stage::Sender<Batch>>,
    next: usize,
    /// The sink's thread has stopped (on an error).
    stopped: bool,
    batch_events: usize,
    /// The source hands its values over ([`RecordSource::swaps_tapes`]).
    swap: bool,
    /// Where the values of the event just pushed go when they are handed
    /// over.
    pending: Option<usize>,
    /// Copy an event's `data` only, not the bytes after it (`ext`).
    data_only: bool,
}

impl Feed<'_> {
    /// `ev` into the batch (sent in [`Target::settle`]).
    fn push_event(&mut self, ev: &Event<'_>) {
        let class = match ev.class {
            None => ClassRef::None,
            // the sink's copy holds the classes the reader had when it was
            // made: the same ids (a table only grows)
            Some(c) if self.meta.classes.at(c.index).is_some() => ClassRef::At(c.index),
            Some(c) => ClassRef::Own(Box::new(c.clone())),
        };
        let b = &mut self.batch;
        let swap = self.swap;
        let tape = ev.tape.map(|t| {
            if b.tapes.len() == b.tapes_used {
                b.tapes.push(FieldTape::new());
            }
            // a source that swaps hands its values over in `settle`
            if !swap {
                b.tapes[b.tapes_used].copy_from(t);
                b.tape_bytes += t.size();
            }
            b.tapes_used += 1;
            b.tapes_used - 1
        });
        self.pending = tape.filter(|_| swap);
        let at = b.bytes.len();
        // `ext` starts with `data` (the model's promise); copy the longer
        let (ext, data_len) = if !self.data_only
            && ev.ext.as_ptr() == ev.data.as_ptr()
            && ev.ext.len() >= ev.data.len()
        {
            (ev.ext, ev.data.len())
        } else {
            (ev.data, ev.data.len())
        };
        b.bytes.extend_from_slice(ext);
        b.items.push(Item::Event(Head {
            ts: ev.ts,
            stream: ev.stream,
            cpu: ev.cpu,
            type_id: ev.type_id,
            class,
            pid: ev.pid,
            at,
            ext_len: ext.len(),
            data_len,
            endian: ev.endian,
            file_pos: ev.file_pos,
            tape,
            raw_ts: ev.raw_ts,
        }));
    }
    /// `false` when the sink has stopped (its error is what
    /// [`with_sink_thread`] returns).
    fn send_if_full(&mut self) -> bool {
        !self.batch.full(self.batch_events) || self.send()
    }
    fn send(&mut self) -> bool {
        let to = &self.to_sink[self.next];
        self.next = (self.next + 1) % self.to_sink.len();
        let next = to.spare().unwrap_or_default();
        let full = std::mem::replace(&mut self.batch, next);
        self.stopped |= to.send(full).is_err();
        !self.stopped
    }
    fn go_on(&self) -> Result<()> {
        if self.stopped {
            return Err(Error::Stopped("the writer stopped".into()));
        }
        Ok(())
    }
}

impl Target for Feed<'_> {
    fn event(&mut self, _meta: &TraceMeta, ev: &Event<'_>) -> Result<()> {
        self.push_event(ev);
        self.go_on()
    }
    fn settle(&mut self, src: &mut dyn RecordSource) {
        if let Some(i) = self.pending.take() {
            let t = &mut self.batch.tapes[i];
            src.swap_tape(t);
            self.batch.tape_bytes += t.size();
        }
        self.send_if_full();
    }
    fn lost(&mut self, _meta: &TraceMeta, l: &Lost) -> Result<()> {
        self.batch.items.push(Item::Lost(*l));
        self.send_if_full();
        self.go_on()
    }
    fn damage(&mut self, what: &str) {
        self.batch.items.push(Item::Damage(what.to_string()));
        self.send_if_full();
    }
}

/// Run `read` on this thread with a [`Feed`] whose events `sink` writes
/// on another thread, then finish the sink. `meta` is the sink's copy of
/// the reader's metadata; `swap`: the reader hands each event's values over
/// ([`RecordSource::swap_tape`]) instead of their being copied; `batch`:
/// events per batch (a default when `None`). An error of the sink stops
/// the feed (its methods return `false`) and is the result.
pub(crate) fn with_sink_thread(
    meta: &TraceMeta,
    swap: bool,
    batch: Option<usize>,
    sink: Box<dyn Sink + Send>,
    read: impl FnOnce(&mut dyn Target) -> Result<()>,
) -> Result<()> {
    let (to_sink, batches) = stage::stage::<Batch>(IN_FLIGHT, IN_FLIGHT + 1);
    std::thread::scope(|s| {
        let writer = std::thread::Builder::new()
            .name("convert-sink".into())
            .spawn_scoped(s, move || write(meta, sink, batches))?;
        let feed = Feed::new(meta, vec![to_sink], swap, false, batch);
        run_feed(feed, read, writer)
    })
}

/// A sink whose text for an event depends on nothing but the event and the
/// metadata (no state from one event to the next that changes a text), so
/// that batches can be formatted on several threads at once.
pub(crate) trait Lines: Send {
    fn event(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, ev: &Event<'_>);
    fn lost(&mut self, out: &mut Vec<u8>, meta: &TraceMeta, l: &Lost);
}

/// Run `read` on this thread with a [`Feed`] whose batches `workers`
/// threads format, each with a [`Lines`] of `make`; a writer thread writes
/// the texts into `out` in the order the events were read (the bytes one
/// thread writes). Events are copied without `ext` ([`Lines`] needs only
/// `data`). `swap` and `batch` as for [`with_sink_thread`]; a write error
/// stops the feed and is the result.
pub(crate) fn with_line_workers<L: Lines>(
    meta: &TraceMeta,
    swap: bool,
    batch: Option<usize>,
    workers: usize,
    make: impl Fn() -> L,
    mut out: impl std::io::Write + Send,
    read: impl FnOnce(&mut dyn Target) -> Result<()>,
) -> Result<()> {
    let workers = workers.max(1);
    std::thread::scope(|s| {
        let mut to_workers = Vec::new();
        let mut texts = Vec::new();
        let mut backs = Vec::new();
        for k in 0..workers {
            let (tx, batches) = stage::stage::<Batch>(IN_FLIGHT, IN_FLIGHT + 1);
            // the texts go on to the writer, which gives the batches back
            // to this stage
            let (done, text) = sync_channel::<Batch>(IN_FLIGHT);
            backs.push(batches.back());
            let mut lines = make();
            std::thread::Builder::new()
                .name(format!("convert-lines-{k}"))
                .spawn_scoped(s, move || {
                    for mut b in batches.iter() {
                        let mut text = std::mem::take(&mut b.text);
                        for it in &b.items {
                            match it {
                                Item::Event(h) => {
                                    lines.event(&mut text, meta, &event_of(meta, h, &b))
                                }
                                Item::Lost(l) => lines.lost(&mut text, meta, l),
                                Item::Damage(_) => {}
                            }
                        }
                        b.text = text;
                        if done.send(b).is_err() {
                            break;
                        }
                    }
                })?;
            to_workers.push(tx);
            texts.push(text);
        }
        // batch k went to worker k % workers: taken back in that order
        let writer = std::thread::Builder::new()
            .name("convert-write".into())
            .spawn_scoped(s, move || -> Result<()> {
                for k in 0.. {
                    let Ok(mut b) = texts[k % texts.len()].recv() else {
                        break;
                    };
                    out.write_all(&b.text)?;
                    b.clear();
                    let _ = backs[k % backs.len()].try_send(b);
                }
                out.flush()?;
                Ok(())
            })?;
        let feed = Feed::new(meta, to_workers, swap, true, batch);
        run_feed(feed, read, writer)
    })
}

impl<'m> Feed<'m> {
    fn new(
        meta: &'m TraceMeta,
        to_sink: Vec<stage::Sender<Batch>>,
        swap: bool,
        data_only: bool,
        batch: Option<usize>,
    ) -> Feed<'m> {
        Feed {
            meta,
            batch: Batch::default(),
            to_sink,
            next: 0,
            stopped: false,
            batch_events: batch.map_or(BATCH_EVENTS, |n| n.max(1)),
            swap,
            pending: None,
            data_only,
        }
    }
}

/// `read` into `feed`, the last batch sent; then the end of the thread
/// that writes (`writer`) and the result of both.
fn run_feed(
    mut feed: Feed<'_>,
    read: impl FnOnce(&mut dyn Target) -> Result<()>,
    writer: std::thread::ScopedJoinHandle<'_, Result<()>>,
) -> Result<()> {
    let read_result = read(&mut feed);
    if read_result.is_ok() && !feed.batch.items.is_empty() {
        feed.send();
    }
    let stopped = feed.stopped;
    // the writing side finishes when the channels close
    drop(feed);
    let write_result = writer
        .join()
        .unwrap_or_else(|_| Err(Error::Stopped("the writing thread panicked".into())));
    match (read_result, write_result) {
        // the reader stopped because the writer did: the writer's error
        (_, Err(e)) if stopped => Err(e),
        // else the reader's error first: it may be why the sink has less
        (r, w) => r.and(w),
    }
}

/// Event `h` of batch `b` again.
fn event_of<'b>(meta: &'b TraceMeta, h: &'b Head, b: &'b Batch) -> Event<'b> {
    let class = match &h.class {
        ClassRef::None => None,
        ClassRef::At(i) => meta.classes.at(*i),
        ClassRef::Own(c) => Some(&**c),
    };
    let ext = &b.bytes[h.at..h.at + h.ext_len];
    Event {
        ts: h.ts,
        stream: h.stream,
        cpu: h.cpu,
        type_id: h.type_id,
        class,
        pid: h.pid,
        data: &ext[..h.data_len],
        ext,
        endian: h.endian,
        file_pos: h.file_pos,
        tape: h.tape.map(|i| &b.tapes[i]),
        raw_ts: h.raw_ts,
    }
}

fn write(
    meta: &TraceMeta,
    mut sink: Box<dyn Sink + Send>,
    batches: stage::Inbox<Batch>,
) -> Result<()> {
    for mut b in batches.iter() {
        for it in &b.items {
            match it {
                Item::Event(h) => sink.event(meta, &event_of(meta, h, &b))?,
                Item::Lost(l) => sink.lost(meta, l)?,
                Item::Damage(d) => sink.damage(d),
            }
        }
        b.clear();
        batches.give_back(b);
    }
    sink.finish(meta)
}
