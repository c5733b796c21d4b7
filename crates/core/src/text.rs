//! Text handed out a block at a time, and the pages of an input given back
//! as it is read: what every printer of a long trace shares.
//!
//! A printer appends to a [`Text`], which hands its buffer to a
//! [`TextOut`] whenever a block is full (the binary's writer thread takes
//! the buffer itself and returns an empty one, so the text is never
//! copied). A reader of a mapped file reports the byte ranges it has
//! consumed per stream; a [`Releaser`] gives them back to the
//! [`Release`] of the file in steps, so the resident set stays flat.

use std::io::{self, Write};

/// Where the text goes, a buffer at a time: a writer that can take the
/// buffer itself spares a copy of the whole text.
pub trait TextOut {
    /// Write `buf` and leave it empty (it may be another buffer then).
    fn block(&mut self, buf: &mut Vec<u8>) -> io::Result<()>;
    fn flush(&mut self) -> io::Result<()>;
    /// Bytes the printer gathers before it hands them over.
    fn block_size(&self) -> usize {
        1 << 16
    }
}

/// A [`TextOut`] over any writer (each block is copied into it).
pub struct Copying<'a>(pub &'a mut dyn Write);

impl TextOut for Copying<'_> {
    fn block(&mut self, buf: &mut Vec<u8>) -> io::Result<()> {
        self.0.write_all(buf)?;
        buf.clear();
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// A printer's buffer in front of a [`TextOut`].
pub struct Text<'a> {
    buf: Vec<u8>,
    out: &'a mut dyn TextOut,
    size: usize,
}

impl<'a> Text<'a> {
    pub fn new(out: &'a mut dyn TextOut) -> Text<'a> {
        let size = out.block_size().max(1);
        Text {
            buf: Vec::with_capacity(size + size / 4),
            out,
            size,
        }
    }

    /// The buffer to append to.
    #[inline]
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Hand the buffer over when a block is full.
    #[inline]
    pub fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= self.size {
            self.out.block(&mut self.buf)?;
        }
        Ok(())
    }

    /// Hand over what is buffered and flush the output (before a warning
    /// on stderr, so that both streams interleave in order).
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.out.block(&mut self.buf)?;
        }
        self.out.flush()
    }
}

/// Bytes that can be given back once read: the pages of a read-only file
/// mapping are dropped from the process (the kernel reloads them from the
/// page cache if they are touched again). Bytes in memory keep everything.
pub trait Release {
    /// `[start, end)` has been read and will rarely be looked at again (a
    /// later access must still see the same bytes).
    fn release(&self, start: u64, end: u64);
}

impl Release for [u8] {
    fn release(&self, _start: u64, _end: u64) {}
}

impl Release for Vec<u8> {
    fn release(&self, _start: u64, _end: u64) {}
}

/// Bytes of a stream read before they are released.
const RELEASE_STEP: u64 = 2 << 20;

/// Tracks what has been released so far, per stream.
#[derive(Default)]
pub struct Releaser {
    done: Vec<u64>,
}

impl Releaser {
    /// Release what the streams have consumed (`[start, end)` per stream)
    /// beyond what was released before.
    pub fn release(&mut self, bytes: &dyn Release, consumed: &[(u64, u64)]) {
        if self.done.len() < consumed.len() {
            self.done.resize(consumed.len(), 0);
        }
        for (i, &(start, end)) in consumed.iter().enumerate() {
            let from = self.done[i].max(start);
            // in steps of at least 2 MiB (a madvise call per step; per
            // stream, so a trace of N CPUs keeps up to N steps mapped)
            if end > from + RELEASE_STEP {
                bytes.release(from, end);
                self.done[i] = end;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn text_hands_over_full_blocks_and_everything_on_flush() {
        struct Blocks(Vec<Vec<u8>>, usize);
        impl TextOut for Blocks {
            fn block(&mut self, buf: &mut Vec<u8>) -> io::Result<()> {
                self.0.push(std::mem::take(buf));
                Ok(())
            }
            fn flush(&mut self) -> io::Result<()> {
                self.1 += 1;
                Ok(())
            }
            fn block_size(&self) -> usize {
                4
            }
        }
        let mut b = Blocks(Vec::new(), 0);
        let mut t = Text::new(&mut b);
        t.buf().extend_from_slice(b"abc");
        t.maybe_flush().unwrap();
        t.buf().extend_from_slice(b"de");
        t.maybe_flush().unwrap();
        t.buf().push(b'f');
        t.flush().unwrap();
        t.flush().unwrap();
        assert_eq!(b.0, vec![b"abcde".to_vec(), b"f".to_vec()]);
        assert_eq!(b.1, 2);
    }

    #[test]
    fn releaser_gives_back_in_steps() {
        struct Log(RefCell<Vec<(u64, u64)>>);
        impl Release for Log {
            fn release(&self, start: u64, end: u64) {
                self.0.borrow_mut().push((start, end));
            }
        }
        let log = Log(RefCell::new(Vec::new()));
        let mut r = Releaser::default();
        r.release(&log, &[(0, 1 << 20)]);
        assert!(log.0.borrow().is_empty());
        r.release(&log, &[(0, 3 << 20), (100, 200)]);
        r.release(&log, &[(0, (3 << 20) + 10)]);
        assert_eq!(*log.0.borrow(), vec![(0, 3 << 20)]);
        r.release(&log, &[(0, 6 << 20)]);
        assert_eq!(log.0.borrow()[1], (3 << 20, 6 << 20));
    }
}
