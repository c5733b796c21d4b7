//! The shape of tracemux's pipelines that hand buffers to another thread
//! and get them back: a bounded channel of buffers from one thread to
//! another, and a channel that brings the emptied buffers back for reuse
//! (the stdout writer, the Perfetto encoder, `convert`'s sink thread and
//! line workers). Memory stays bounded (at most
//! `in_flight` buffers on their way, `spare` waiting to be reused) and
//! the hot loop allocates nothing once the buffers have grown.
//!
//! ```
//! use tracemux_core::stage;
//! let (tx, rx) = stage::stage::<Vec<u8>>(4, 4);
//! let writer = std::thread::spawn(move || {
//!     let mut n = 0;
//!     for mut b in rx.iter() {
//!         n += b.len();
//!         b.clear();
//!         rx.give_back(b);
//!     }
//!     n
//! });
//! for i in 0..100u8 {
//!     let mut b = tx.spare().unwrap_or_default();
//!     b.push(i);
//!     tx.send(b).unwrap();
//! }
//! drop(tx);
//! assert_eq!(writer.join().unwrap(), 100);
//! ```

use std::sync::mpsc::{self, Receiver, SyncSender};

/// The sending end: buffers go out, emptied ones come back.
pub struct Sender<T> {
    tx: SyncSender<T>,
    back: Receiver<T>,
}

/// The receiving end: buffers come in, and go back once used.
pub struct Inbox<T> {
    rx: Receiver<T>,
    back: SyncSender<T>,
}

/// A stage: at most `in_flight` buffers on their way (the sender waits
/// beyond that), at most `spare` kept for reuse (more are dropped).
pub fn stage<T>(in_flight: usize, spare: usize) -> (Sender<T>, Inbox<T>) {
    let (tx, rx) = mpsc::sync_channel(in_flight);
    let (back_tx, back) = mpsc::sync_channel(spare);
    (Sender { tx, back }, Inbox { rx, back: back_tx })
}

impl<T> Sender<T> {
    /// Send `item`; it comes back as `Err` when the receiving end is gone
    /// (the other thread stopped: its result says why).
    pub fn send(&self, item: T) -> Result<(), T> {
        self.tx.send(item).map_err(|e| e.0)
    }

    /// A buffer given back, if one is waiting.
    pub fn spare(&self) -> Option<T> {
        self.back.try_recv().ok()
    }
}

impl<T> Inbox<T> {
    /// The next buffer; `None` once the sender is gone and all were taken.
    pub fn recv(&self) -> Option<T> {
        self.rx.recv().ok()
    }

    /// The buffers in order, until the sender is gone.
    pub fn iter(&self) -> mpsc::Iter<'_, T> {
        self.rx.iter()
    }

    /// Give `item` back for reuse (dropped when enough are waiting, or
    /// when the sender is gone).
    pub fn give_back(&self, item: T) {
        let _ = self.back.try_send(item);
    }

    /// The channel that takes buffers back, for a thread that returns
    /// buffers it got from elsewhere.
    pub fn back(&self) -> SyncSender<T> {
        self.back.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A buffer that counts the buffers alive.
    struct Counted(Arc<AtomicUsize>, Vec<u64>);

    impl Counted {
        fn new(alive: &Arc<AtomicUsize>, most: &AtomicUsize) -> Counted {
            let n = alive.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(n, Ordering::SeqCst);
            Counted(alive.clone(), Vec::new())
        }
    }

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn buffers_come_back_and_memory_stays_bounded() {
        let alive = Arc::new(AtomicUsize::new(0));
        let most = AtomicUsize::new(0);
        let (tx, rx) = stage::<Counted>(2, 3);
        let t = std::thread::spawn(move || {
            let mut sum = 0;
            for mut b in rx.iter() {
                sum += b.1.iter().sum::<u64>();
                b.1.clear();
                rx.give_back(b);
            }
            sum
        });
        for i in 0..1000u64 {
            let mut b = tx.spare().unwrap_or_else(|| Counted::new(&alive, &most));
            b.1.push(i);
            tx.send(b).map_err(|_| "receiver gone").unwrap();
        }
        drop(tx);
        assert_eq!(t.join().unwrap(), 999 * 1000 / 2);
        assert_eq!(alive.load(Ordering::SeqCst), 0);
        // in flight, waiting to be reused, the one the receiver holds and
        // the one being filled, at most
        let most = most.load(Ordering::SeqCst);
        assert!(most <= 2 + 3 + 2, "{most} buffers alive at once");
    }

    #[test]
    fn a_stopped_receiver_gives_the_item_back() {
        let (tx, rx) = stage::<u32>(1, 1);
        drop(rx);
        assert_eq!(tx.send(7), Err(7));
        assert_eq!(tx.spare(), None);
    }

    #[test]
    fn a_buffer_given_back_from_elsewhere_is_spare() {
        let (tx, rx) = stage::<Vec<u8>>(1, 2);
        tx.send(vec![1]).unwrap();
        let b = rx.recv().unwrap();
        // another thread (a writer after the workers) gives it back
        let back = rx.back();
        std::thread::spawn(move || back.try_send(b).unwrap())
            .join()
            .unwrap();
        assert_eq!(tx.spare(), Some(vec![1]));
        assert_eq!(tx.spare(), None);
    }
}
