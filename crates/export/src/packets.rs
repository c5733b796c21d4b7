//! The output side of the Perfetto writer: `TracePacket`s framed as the
//! fields of a `Trace`, zlib-compressed in `compressed_packets` when asked,
//! and written out, all on a thread of its own. Building the packets (the
//! caller's thread) and encoding them (about a third of the work) run side
//! by side; the bytes are the same as one thread writes, since one thread
//! encodes the packets in the order they were sent.

use std::io::{self, Write};
use std::thread::JoinHandle;

use prost::Message;
use tracemux_core::stage;

use crate::proto::{CompactSched, Data, FtraceEvent, TracePacket};
use crate::tree::write_out;

/// Events per `FtraceEventBundle` before it is written.
pub const BUNDLE_EVENTS: usize = 1000;

/// Uncompressed bytes of packets per `compressed_packets` packet.
pub const COMPRESS_CHUNK: usize = 1 << 18;

/// Batches on their way to the encoder (a bound: memory stays flat when
/// encoding is the slower side), and encoded batches on their way back.
const IN_FLIGHT: usize = 4;

/// How much a batch holds before it is sent: events of bundles, other
/// packets count one.
const BATCH_WEIGHT: usize = 4096;

/// Bundle buffers kept for reuse.
const SPARE: usize = 64;

/// A batch of packets: messages to encode, or packets the caller framed
/// itself (in `framed`, in order).
#[derive(Default)]
struct Batch {
    items: Vec<Item>,
    framed: Vec<u8>,
}

// (a packet in place: boxing it would allocate per packet)
#[allow(clippy::large_enum_variant)]
enum Item {
    Packet(TracePacket),
    /// The next this many bytes of [`Batch::framed`].
    Framed(usize),
}

/// Packets sent to the encoder thread in batches; the encoded batches come
/// back (with the buffers of their bundles) for reuse.
pub(crate) struct Packets<W: Write + Send + 'static> {
    batch: Batch,
    weight: usize,
    spare_events: Vec<Vec<FtraceEvent>>,
    spare_compact: Vec<CompactSched>,
    tx: Option<stage::Sender<Batch>>,
    thread: Option<JoinHandle<io::Result<(W, u64)>>>,
}

impl<W: Write + Send + 'static> Packets<W> {
    pub(crate) fn start(out: W, compress: bool) -> io::Result<Self> {
        let (tx, rx) = stage::stage::<Batch>(IN_FLIGHT, IN_FLIGHT);
        let thread = std::thread::Builder::new()
            .name("perfetto-encoder".into())
            .spawn(move || {
                let mut e = Encoder {
                    out,
                    buf: Vec::with_capacity(1 << 17),
                    raw: Vec::new(),
                    compress,
                    bytes: 0,
                };
                for batch in rx.iter() {
                    let mut at = 0;
                    for it in &batch.items {
                        match it {
                            Item::Packet(p) => e.packet(p)?,
                            Item::Framed(n) => {
                                e.framed(&batch.framed[at..at + n])?;
                                at += n;
                            }
                        }
                    }
                    // the caller reuses the buffers; when it has enough,
                    // they are dropped here
                    rx.give_back(batch);
                }
                e.finish()
            })?;
        Ok(Packets {
            batch: Batch::default(),
            weight: 0,
            spare_events: Vec::new(),
            spare_compact: Vec::new(),
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Queue one packet; `weight` is what it holds (events).
    pub(crate) fn push(&mut self, p: TracePacket, weight: usize) -> io::Result<()> {
        self.batch.items.push(Item::Packet(p));
        self.weight += weight.max(1);
        if self.weight >= BATCH_WEIGHT {
            self.send()?;
        }
        Ok(())
    }

    /// Queue one packet that `frame` appends, framed as a field of the
    /// `Trace`, to the buffer it is given.
    pub(crate) fn push_framed(&mut self, frame: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        let start = self.batch.framed.len();
        frame(&mut self.batch.framed);
        let n = self.batch.framed.len() - start;
        self.batch.items.push(Item::Framed(n));
        self.weight += 1;
        if self.weight >= BATCH_WEIGHT {
            self.send()?;
        }
        Ok(())
    }

    /// An empty buffer for a bundle's events: one of a bundle written
    /// before, if there is one.
    pub(crate) fn events_buffer(&mut self) -> Vec<FtraceEvent> {
        self.spare_events
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(BUNDLE_EVENTS))
    }

    /// An empty `compact_sched` of a bundle written before, or a new one.
    pub(crate) fn compact_buffer(&mut self) -> CompactSched {
        self.spare_compact.pop().unwrap_or_default()
    }

    /// Keep the buffers of the bundles of an encoded batch.
    fn recycle(&mut self, batch: &mut Batch) {
        batch.framed.clear();
        for it in batch.items.drain(..) {
            let Item::Packet(p) = it else { continue };
            if let Some(Data::FtraceEvents(b)) = p.data {
                if self.spare_events.len() < SPARE {
                    let mut v = b.event;
                    v.clear();
                    self.spare_events.push(v);
                }
                if let Some(mut c) = b.compact_sched {
                    if self.spare_compact.len() < SPARE {
                        c.clear();
                        self.spare_compact.push(c);
                    }
                }
            }
        }
    }

    fn send(&mut self) -> io::Result<()> {
        if self.batch.items.is_empty() {
            return Ok(());
        }
        let next = match self.tx.as_ref().and_then(|tx| tx.spare()) {
            Some(mut v) => {
                self.recycle(&mut v);
                v
            }
            None => Batch {
                items: Vec::with_capacity(self.batch.items.len()),
                framed: Vec::with_capacity(self.batch.framed.len()),
            },
        };
        let batch = std::mem::replace(&mut self.batch, next);
        self.weight = 0;
        let sent = self.tx.as_ref().map(|tx| tx.send(batch).is_ok());
        match sent {
            Some(true) => Ok(()),
            // the encoder stopped: on an error, which joining it returns
            _ => self.join().map(|_| ()),
        }
    }

    /// Send what is queued, wait for the encoder to write it all and flush;
    /// the output and the bytes written.
    pub(crate) fn finish(mut self) -> io::Result<(W, u64)> {
        self.send()?;
        self.join()
    }

    fn join(&mut self) -> io::Result<(W, u64)> {
        self.tx = None;
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(res)) => res,
            Some(Err(_)) => Err(io::Error::other("the Perfetto encoder thread panicked")),
            None => Err(io::Error::other("the Perfetto encoder stopped earlier")),
        }
    }
}

impl<W: Write + Send + 'static> Drop for Packets<W> {
    /// Dropped without `finish` (an error): wait for the thread, so that
    /// nothing writes into the output after the caller has removed it.
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The encoder thread's state.
struct Encoder<W: Write> {
    out: W,
    buf: Vec<u8>,
    /// Framed packets waiting for compression.
    raw: Vec<u8>,
    compress: bool,
    bytes: u64,
}

impl<W: Write> Encoder<W> {
    /// Frame one packet as `Trace.packet` (field 1, length-delimited).
    fn packet(&mut self, p: &TracePacket) -> io::Result<()> {
        if self.compress {
            frame(p, &mut self.raw)?;
            if self.raw.len() >= COMPRESS_CHUNK {
                self.compress()?;
            }
            return Ok(());
        }
        frame(p, &mut self.buf)?;
        if self.buf.len() >= 1 << 16 {
            self.drain()?;
        }
        Ok(())
    }

    /// A packet framed by the caller.
    fn framed(&mut self, b: &[u8]) -> io::Result<()> {
        let out = if self.compress {
            &mut self.raw
        } else {
            &mut self.buf
        };
        out.extend_from_slice(b);
        if self.compress && self.raw.len() >= COMPRESS_CHUNK {
            self.compress()?;
        } else if !self.compress && self.buf.len() >= 1 << 16 {
            self.drain()?;
        }
        Ok(())
    }

    /// The packets in `raw` as one `compressed_packets` packet.
    fn compress(&mut self) -> io::Result<()> {
        if self.raw.is_empty() {
            return Ok(());
        }
        let mut z = flate2::write::ZlibEncoder::new(
            Vec::with_capacity(self.raw.len() / 4),
            flate2::Compression::fast(),
        );
        z.write_all(&self.raw)?;
        self.raw.clear();
        let p = TracePacket {
            data: Some(Data::CompressedPackets(z.finish()?)),
            ..Default::default()
        };
        frame(&p, &mut self.buf)?;
        self.drain()
    }

    fn drain(&mut self) -> io::Result<()> {
        write_out(&mut self.out, &mut self.buf, &mut self.bytes)
    }

    fn finish(mut self) -> io::Result<(W, u64)> {
        self.compress()?;
        self.drain()?;
        self.out.flush()?;
        Ok((self.out, self.bytes))
    }
}

/// `p` as a field 1 of a `Trace`, appended to `out`.
fn frame(p: &TracePacket, out: &mut Vec<u8>) -> io::Result<()> {
    out.push(0x0a);
    p.encode_length_delimited(out).map_err(io::Error::other)
}
