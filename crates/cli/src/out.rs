//! What every command shares at its end: the buffered stdout writer
//! ([`Out`]), damage warnings on stderr ([`warn`]), what a command hands
//! back ([`Outcome`]) and the exit code made of it ([`finish`]).
//!
//! The modules of the binary depend on this one; it depends on none of
//! them.

use std::io::{self, Write};
use std::process::ExitCode;

use tracemux_core::stage;

/// Outcome of a command: success, or success with damage reported (exit 1).
pub enum Outcome {
    Ok,
    Damaged,
}

impl Outcome {
    /// `Damaged` when `damaged`, else `Ok`.
    pub fn damaged_if(damaged: bool) -> Outcome {
        if damaged {
            Outcome::Damaged
        } else {
            Outcome::Ok
        }
    }
}

/// The exit code: 0 success, 1 damage reported or an error, 2 bad usage
/// (from clap). A closed pipe is not an error.
pub fn finish(res: anyhow::Result<Outcome>) -> ExitCode {
    match res {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Damaged) => ExitCode::from(1),
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            let _ = io::stdout().flush();
            eprintln!("tracemux: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .or_else(|| c.downcast_ref::<tracemux_convert::Error>()?.io())
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Large buffered stdout writes: sinks fill a Vec, which is handed to a
/// writer thread in blocks, so formatting and writing overlap (the machine
/// this runs on usually has a core to spare).
pub struct Out {
    buf: Vec<u8>,
    tx: Option<stage::Sender<Vec<u8>>>,
    writer: Option<std::thread::JoinHandle<io::Result<()>>>,
    /// The reader of stdout went away (`tracemux report ... | head`).
    closed: bool,
}

/// Bytes handed to the writer thread at once.
pub const BLOCK: usize = 1 << 19;

type Writer = (
    stage::Sender<Vec<u8>>,
    std::thread::JoinHandle<io::Result<()>>,
);

/// A thread that writes blocks to stdout and hands the emptied buffers back.
fn spawn_writer() -> Writer {
    let (tx, rx) = stage::stage::<Vec<u8>>(4, 5);
    let writer = std::thread::spawn(move || -> io::Result<()> {
        let stdout = io::stdout();
        for mut b in rx.iter() {
            let mut l = stdout.lock();
            l.write_all(&b)?;
            l.flush()?;
            b.clear();
            rx.give_back(b);
        }
        Ok(())
    });
    (tx, writer)
}

impl Default for Out {
    fn default() -> Self {
        Self::new()
    }
}

impl Out {
    pub fn new() -> Self {
        let (tx, writer) = spawn_writer();
        Out {
            buf: Vec::with_capacity(BLOCK + (64 << 10)),
            tx: Some(tx),
            writer: Some(writer),
            closed: false,
        }
    }
    /// Whether a write failed because the reader of stdout went away
    /// (for callers whose errors lose the I/O error's kind).
    pub fn closed(&self) -> bool {
        self.closed
    }
    #[inline]
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }
    #[inline]
    pub fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= BLOCK {
            self.send()?;
        }
        Ok(())
    }
    fn send(&mut self) -> io::Result<()> {
        let next = self
            .tx
            .as_ref()
            .and_then(|tx| tx.spare())
            .unwrap_or_else(|| Vec::with_capacity(BLOCK + (64 << 10)));
        let full = std::mem::replace(&mut self.buf, next);
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(full).is_ok());
        if !sent {
            // the writer stopped: report why (a closed pipe, usually)
            let e = self
                .finish_writer()
                .err()
                .unwrap_or_else(|| io::Error::from(io::ErrorKind::BrokenPipe));
            self.closed |= e.kind() == io::ErrorKind::BrokenPipe;
            return Err(e);
        }
        Ok(())
    }
    fn finish_writer(&mut self) -> io::Result<()> {
        self.tx = None;
        match self.writer.take() {
            Some(h) => h
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("writer thread panicked"))),
            None => Ok(()),
        }
    }
    /// Write out the block `b` without copying it when nothing is waiting
    /// in the buffer (`b` is then swapped with an empty buffer of
    /// [`BLOCK`] bytes); `b` is left empty.
    pub fn put_block(&mut self, b: &mut Vec<u8>) -> io::Result<()> {
        if !self.buf.is_empty() || b.len() < BLOCK / 2 {
            self.buf.extend_from_slice(b);
            b.clear();
            return self.maybe_flush();
        }
        std::mem::swap(&mut self.buf, b);
        self.send()
    }
    /// Write out everything so far and wait until it is written (before
    /// anything goes to stderr, so that messages appear in order).
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.send()?;
        }
        // wait for the writer to drain, then start a new one
        self.finish_writer()?;
        let (tx, writer) = spawn_writer();
        self.tx = Some(tx);
        self.writer = Some(writer);
        Ok(())
    }
}

impl Write for Out {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        self.maybe_flush()?;
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Out::flush(self)
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        let _ = self.finish_writer();
    }
}

/// Report damage on stderr, one line each.
pub fn warn(path: &std::path::Path, e: &tracemux_core::Error) {
    eprintln!("tracemux: {}: {}", path.display(), e);
}

/// Report every damage of `path` on stderr; `Damaged` if there was any.
pub fn warn_all(path: &std::path::Path, damage: &[tracemux_core::Error]) -> Outcome {
    for e in damage {
        warn(path, e);
    }
    Outcome::damaged_if(!damage.is_empty())
}

/// The printer's buffers go to the writer thread as they are.
impl tracemux_core::text::TextOut for Out {
    fn block(&mut self, buf: &mut Vec<u8>) -> std::io::Result<()> {
        self.put_block(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Out::flush(self)
    }
    fn block_size(&self) -> usize {
        BLOCK
    }
}
