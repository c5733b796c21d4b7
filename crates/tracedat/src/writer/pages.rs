//! Packing one CPU's items into kernel ring-buffer pages.
//!
//! The page format is the one `tracemux_ftrace::page` reads: a `u64` page
//! timestamp, a `commit` word (4 or 8 bytes) holding the data length and
//! the missed-events flags, then 4-byte aligned records. See that module
//! for the record types.
//!
//! Packing rules (they decide what a reader must report, so tests rely on
//! them):
//!
//! * A page is opened by the first item that goes into it. If that item is
//!   an event, the page timestamp is the event's time and the event's delta
//!   is 0, so an event that opens a page is always at data offset 0.
//!   Otherwise the page timestamp is the current time.
//! * An event whose time is 2^27 or more after the current time gets a
//!   TIME_EXTEND record right before it (same page) and delta 0. An event
//!   whose time is *before* the current time gets an absolute TIME_STAMP
//!   record (the top 5 bits of the time must then not change).
//! * When a record (with its extend/stamp) does not fit, the page is closed
//!   and the record opens the next page. Pages opened that way never carry
//!   missed-events flags.
//! * [`Item::NewPage`] closes the current page (if one is open) and gives
//!   the next page its missed-events flags. A stored count takes
//!   `commit_size` bytes after the data, so the page reserves room for it.

use super::{Event, Item, Missed, Time, WriteError};
use tracemux_core::bytes::Endian;

/// Bits of the time delta in an event header.
pub const TS_BITS: u32 = 27;
const TS_DELTA_MAX: u64 = (1 << TS_BITS) - 1;
/// The top 5 bits of a time, kept by a TIME_STAMP record.
const TS_MSB: u64 = 0xf8 << 56;
/// Largest payload (rounded to 4) that fits the short form (type_len 1..=28).
pub const MAX_SHORT_PAYLOAD: usize = 28 * 4;

const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;

/// How the pages of one buffer are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageFormat {
    pub endian: Endian,
    /// Size of the page header's `commit` word: 4 or 8.
    pub commit_size: u32,
    pub page_size: u32,
}

impl PageFormat {
    /// Offset of the event data in a page (12 or 16).
    pub fn data_offset(&self) -> usize {
        8 + self.commit_size as usize
    }
}

/// Append `v` as an `n`-byte unsigned integer (n = 1, 2, 4 or 8).
pub(crate) fn put_uint(out: &mut Vec<u8>, e: Endian, v: u64, n: usize) {
    match e {
        Endian::Little => out.extend_from_slice(&v.to_le_bytes()[..n]),
        Endian::Big => out.extend_from_slice(&v.to_be_bytes()[8 - n..]),
    }
}

/// The payload length as stored: rounded up to a multiple of 4.
pub fn stored_len(payload_len: usize) -> usize {
    (payload_len + 3) & !3
}

struct Packer {
    fmt: PageFormat,
    out: Vec<u8>,
    /// Data area of the open page.
    data: Vec<u8>,
    open: bool,
    page_ts: u64,
    page_missed: Missed,
    /// Flags for the next page opened by a record.
    pending: Missed,
    /// The time a reader has reached (page timestamp plus deltas so far).
    now: u64,
}

impl Packer {
    fn capacity(&self) -> usize {
        let reserve = match self.page_missed {
            Missed::Count(_) => self.fmt.commit_size as usize,
            _ => 0,
        };
        self.fmt.page_size as usize - self.fmt.data_offset() - reserve
    }

    fn fits(&self, n: usize) -> bool {
        self.data.len() + n <= self.capacity()
    }

    fn open(&mut self, ts: u64) {
        self.open = true;
        self.page_ts = ts;
        self.now = ts;
        self.data.clear();
        self.page_missed = std::mem::replace(&mut self.pending, Missed::None);
    }

    fn close(&mut self) {
        if !self.open {
            return;
        }
        let e = self.fmt.endian;
        let cs = self.fmt.commit_size as usize;
        let mut commit = self.data.len() as u64;
        match self.page_missed {
            Missed::None => {}
            Missed::Unknown => commit |= MISSED_EVENTS,
            Missed::Count(_) => commit |= MISSED_EVENTS | MISSED_STORED,
        }
        let start = self.out.len();
        put_uint(&mut self.out, e, self.page_ts, 8);
        put_uint(&mut self.out, e, commit, cs);
        self.out.extend_from_slice(&self.data);
        if let Missed::Count(n) = self.page_missed {
            put_uint(&mut self.out, e, n, cs);
        }
        self.out.resize(start + self.fmt.page_size as usize, 0);
        self.open = false;
        self.data.clear();
    }

    /// Open a page if none is open, or a new one if `n` bytes do not fit.
    /// Returns true when a page was opened.
    fn make_room(&mut self, n: usize, ts: u64) -> Result<bool, WriteError> {
        if self.open && self.fits(n) {
            return Ok(false);
        }
        self.close();
        self.open(ts);
        if !self.fits(n) {
            return Err(WriteError(format!(
                "a {n}-byte record does not fit in a {}-byte page",
                self.fmt.page_size
            )));
        }
        Ok(true)
    }

    fn word(&mut self, type_len: u32, delta: u64) {
        debug_assert!(delta <= TS_DELTA_MAX);
        let delta = delta as u32;
        let w = match self.fmt.endian {
            Endian::Little => type_len | (delta << 5),
            Endian::Big => (type_len << TS_BITS) | delta,
        };
        put_uint(&mut self.data, self.fmt.endian, w as u64, 4);
    }

    fn u32(&mut self, v: u32) {
        put_uint(&mut self.data, self.fmt.endian, v as u64, 4);
    }

    /// A TIME_EXTEND (`absolute` false) or TIME_STAMP record for `v`.
    fn time_record(&mut self, absolute: bool, v: u64) {
        let t = if absolute {
            TYPE_TIME_STAMP
        } else {
            TYPE_TIME_EXTEND
        };
        self.word(t, v & TS_DELTA_MAX);
        self.u32((v >> TS_BITS) as u32);
    }

    fn event(&mut self, ev: &Event) -> Result<(), WriteError> {
        let ts = match ev.time {
            Time::Abs(t) => t,
            Time::Delta(d) => self.now.wrapping_add(d),
        };
        self.event_at(ts, &ev.payload, ev.long_form)
    }

    fn event_at(&mut self, ts: u64, payload: &[u8], long_form: bool) -> Result<(), WriteError> {
        let padded = stored_len(payload.len());
        let long = long_form || padded == 0 || padded > MAX_SHORT_PAYLOAD;
        let len = padded + if long { 8 } else { 4 };
        // What has to precede the event to reach `ts`.
        let pre = if ts >= self.now && ts - self.now <= TS_DELTA_MAX {
            0
        } else {
            8
        };
        if self.make_room(len + pre, ts)? {
            // a fresh page starts at the event's time
        } else if ts < self.now {
            if ts & TS_MSB != self.now & TS_MSB {
                return Err(WriteError(format!(
                    "time goes back from {:#x} to {ts:#x} across the top 5 bits",
                    self.now
                )));
            }
            self.time_record(true, ts);
            self.now = ts;
        } else if ts - self.now > TS_DELTA_MAX {
            let d = ts - self.now;
            if d >> (TS_BITS + 32) != 0 {
                return Err(WriteError(format!(
                    "time delta {d} needs more than 59 bits"
                )));
            }
            self.time_record(false, d);
            self.now = ts;
        }
        let delta = ts - self.now;
        if long {
            self.word(0, delta);
            self.u32(padded as u32 + 4);
        } else {
            self.word((padded / 4) as u32, delta);
        }
        self.data.extend_from_slice(payload);
        self.data
            .resize(self.data.len() + padded - payload.len(), 0);
        self.now = ts;
        Ok(())
    }

    fn item(&mut self, item: &Item) -> Result<(), WriteError> {
        match item {
            Item::Event(ev) => self.event(ev)?,
            Item::Padding { delta, len } => {
                if *len < 4 || len % 4 != 0 || *delta as u64 > TS_DELTA_MAX {
                    return Err(WriteError(format!(
                        "padding length {len} must be a multiple of 4 and >= 4, delta < 2^27"
                    )));
                }
                self.make_room(4 + *len as usize, self.now)?;
                self.word(TYPE_PADDING, *delta as u64);
                self.u32(*len);
                self.data.resize(self.data.len() + *len as usize - 4, 0);
                self.now += *delta as u64;
            }
            Item::TimeStamp(ts) => {
                self.make_room(8, self.now)?;
                self.time_record(true, *ts);
                self.now = (ts & !TS_MSB) | (self.now & TS_MSB);
            }
            Item::TimeExtend(d) => {
                if d >> (TS_BITS + 32) != 0 {
                    return Err(WriteError(format!(
                        "time extend {d} needs more than 59 bits"
                    )));
                }
                self.make_room(8, self.now)?;
                self.time_record(false, *d);
                self.now = self.now.wrapping_add(*d);
            }
            Item::NewPage(m) => {
                self.close();
                self.pending = *m;
            }
        }
        Ok(())
    }
}

/// Pack `items` into whole pages (`fmt.page_size` bytes each). No items
/// give no pages. Errors: a record larger than a page, a padding length
/// that is not a multiple of 4, a time that cannot be encoded.
pub fn pack_pages(items: &[Item], fmt: PageFormat) -> Result<Vec<u8>, WriteError> {
    let mut p = PagePacker::new(fmt)?;
    for item in items {
        p.push(item)?;
    }
    Ok(p.finish())
}

/// [`pack_pages`] one item at a time, for callers that do not keep the
/// items (a converter packing records as it reads them). Pages are
/// appended to an internal buffer: [`PagePacker::take_pages`] hands over
/// the pages closed so far, [`PagePacker::finish`] closes the last one.
pub struct PagePacker(Packer);

impl PagePacker {
    pub fn new(fmt: PageFormat) -> Result<Self, WriteError> {
        if fmt.commit_size != 4 && fmt.commit_size != 8 {
            return Err(WriteError(format!(
                "commit size {} (4 or 8)",
                fmt.commit_size
            )));
        }
        if (fmt.page_size as usize) < fmt.data_offset() + 16 {
            return Err(WriteError(format!("page size {} too small", fmt.page_size)));
        }
        Ok(PagePacker(Packer {
            fmt,
            out: Vec::new(),
            data: Vec::new(),
            open: false,
            page_ts: 0,
            page_missed: Missed::None,
            pending: Missed::None,
            now: 0,
        }))
    }

    pub fn push(&mut self, item: &Item) -> Result<(), WriteError> {
        self.0.item(item)
    }

    /// An event at absolute raw time `ts` (the short header when it fits),
    /// without building an [`Event`].
    pub fn event(&mut self, ts: u64, payload: &[u8]) -> Result<(), WriteError> {
        self.0.event_at(ts, payload, false)
    }

    /// Bytes of the whole pages closed and not taken yet.
    pub fn closed_len(&self) -> usize {
        self.0.out.len()
    }

    /// The whole pages closed so far (the open page stays).
    pub fn take_pages(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.0.out)
    }

    /// Close the open page and return every page not taken yet.
    pub fn finish(mut self) -> Vec<u8> {
        self.0.close();
        self.0.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracemux_ftrace::page::{Page, PageLayout};

    #[test]
    fn packs_and_reads_back() {
        for endian in [Endian::Little, Endian::Big] {
            for commit_size in [4u32, 8] {
                let fmt = PageFormat {
                    endian,
                    commit_size,
                    page_size: 256,
                };
                let mut items = vec![Item::NewPage(Missed::Count(9))];
                for i in 0..20u64 {
                    items.push(Item::Event(Event::at(
                        1000 + i * (1 << 28),
                        vec![i as u8; 13],
                    )));
                }
                let pages = pack_pages(&items, fmt).unwrap();
                assert_eq!(pages.len() % 256, 0);
                let layout = PageLayout {
                    endian,
                    commit_size,
                    data_offset: 8 + commit_size,
                    page_size: 256,
                };
                let mut got = Vec::new();
                for (k, pg) in pages.chunks(256).enumerate() {
                    let mut p = Page::parse(pg, 0, layout).unwrap();
                    assert_eq!(
                        p.missed,
                        if k == 0 {
                            Missed::Count(9)
                        } else {
                            Missed::None
                        }
                    );
                    while let Some(ev) = p.next() {
                        let ev = ev.unwrap();
                        got.push((ev.ts, ev.data.len()));
                    }
                }
                let want: Vec<_> = (0..20u64).map(|i| (1000 + i * (1 << 28), 16)).collect();
                assert_eq!(got, want);
            }
        }
    }
}
