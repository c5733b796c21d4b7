//! The kernel ring buffer's pages ("sub-buffers"), as stored per CPU in
//! trace.dat flyrecord data and uftrace kernel data.
//!
//! Page header: `u64 timestamp`, then `commit` (4 or 8 bytes, from
//! `header_page`): its low 27 bits are the number of data bytes, bit 31 says
//! events were missed before this page and bit 30 that their count is stored
//! (as a `long`) right after the data. Events: a 32-bit word with a 5-bit
//! `type_len` and a 27-bit `time_delta` (on big-endian kernels `type_len` is
//! in the top bits), then:
//!
//! | type_len | meaning |
//! |---|---|
//! | 0 | data; length (including this word) in `array[0]` |
//! | 1..=28 | data of `type_len * 4` bytes |
//! | 29 | padding; length in `array[0]` |
//! | 30 | time extend: `delta += array[0] << 27` |
//! | 31 | absolute time stamp: `array[0] << 27 | delta`, top 5 bits kept |

use tracemux_core::bytes::Endian;
use tracemux_core::error::{Error, ErrorKind};

const COMMIT_MASK: u64 = (1 << 27) - 1;
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
const TS_SHIFT: u32 = 27;
const TS_MSB: u64 = 0xf8 << 56;

pub const TYPE_PADDING: u32 = 29;
pub const TYPE_TIME_EXTEND: u32 = 30;
pub const TYPE_TIME_STAMP: u32 = 31;

/// How pages of one buffer are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    pub endian: Endian,
    /// 4 or 8: size of `commit` and of the stored missed-events count.
    pub commit_size: u32,
    /// Offset of the event data in a page (12 or 16).
    pub data_offset: u32,
    pub page_size: u32,
}

/// Events missed before a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missed {
    None,
    /// Events were lost, their number is not known.
    Unknown,
    Count(u64),
}

/// One data event from a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawEvent<'a> {
    /// Raw clock value (page timestamp plus the deltas so far).
    pub ts: u64,
    /// Offset of the event header inside the page's data area.
    pub offset: u32,
    /// The event's payload (for ftrace: starts with `common_type`), padded to
    /// a multiple of 4 bytes as stored.
    pub data: &'a [u8],
}

/// A parsed page header and an iterator over the page's events.
#[derive(Debug, Clone)]
pub struct Page<'a> {
    /// Page timestamp (raw clock).
    pub timestamp: u64,
    pub missed: Missed,
    /// The committed data area.
    data: &'a [u8],
    /// Absolute offset (in the file or decompressed stream) of `data[0]`, for errors.
    base: u64,
    layout: PageLayout,
    pos: usize,
    ts: u64,
    done: bool,
}

fn read4(e: Endian, b: &[u8], at: usize) -> Option<u32> {
    e.read_uint(b.get(at..)?, 4).map(|v| v as u32)
}

impl<'a> Page<'a> {
    /// Parse the header of `page` (one page of `layout.page_size` bytes or
    /// less, when the data is cut). `base` is the absolute offset of the page,
    /// used in errors. An error means the header itself is unusable; a
    /// commit size past the page end is reported by the first `next()`.
    pub fn parse(page: &'a [u8], base: u64, layout: PageLayout) -> Result<Page<'a>, Error> {
        let e = layout.endian;
        let hdr = layout.data_offset as usize;
        if page.len() < hdr || hdr < 8 + layout.commit_size as usize {
            return Err(Error::new(ErrorKind::UnexpectedEof, "page header", base));
        }
        let timestamp = e.read_uint(page, 8).unwrap_or(0);
        let flags = e
            .read_uint(&page[8..], layout.commit_size as usize)
            .unwrap_or(0);
        let size = (flags & COMMIT_MASK) as usize;
        let area = &page[hdr..];
        let missed = if flags & MISSED_EVENTS != 0 {
            if flags & MISSED_STORED != 0 {
                match area
                    .get(size..)
                    .and_then(|b| e.read_uint(b, layout.commit_size as usize))
                {
                    Some(n) => Missed::Count(n),
                    None => Missed::Unknown,
                }
            } else {
                Missed::Unknown
            }
        } else {
            Missed::None
        };
        // A commit size past the page is clamped here; `parse_checked` reports it.
        let data = &area[..size.min(area.len())];
        Ok(Page {
            timestamp,
            missed,
            data,
            base: base + hdr as u64,
            layout,
            pos: 0,
            ts: timestamp,
            done: false,
        })
    }

    /// Like [`parse`](Self::parse) but also reports a commit size past the end
    /// of the page as an error together with the (clamped) page.
    pub fn parse_checked(
        page: &'a [u8],
        base: u64,
        layout: PageLayout,
    ) -> (Option<Page<'a>>, Option<Error>) {
        let hdr = layout.data_offset as usize;
        match Page::parse(page, base, layout) {
            Err(e) => (None, Some(e)),
            Ok(p) => {
                let flags = layout
                    .endian
                    .read_uint(page.get(8..).unwrap_or(&[]), layout.commit_size as usize)
                    .unwrap_or(0);
                let size = (flags & COMMIT_MASK) as usize;
                let avail = page.len().saturating_sub(hdr);
                let err = (size > avail).then(|| {
                    Error::invalid(
                        format!("page commit size {size} is larger than the page data area ({avail} bytes)"),
                        "flyrecord page",
                        base + 8,
                    )
                });
                (Some(p), err)
            }
        }
    }

    /// Size of the committed data.
    pub fn size(&self) -> usize {
        self.data.len()
    }

    /// The next data event, skipping padding and time records.
    #[allow(clippy::should_implement_trait)]
    #[inline]
    pub fn next(&mut self) -> Option<Result<RawEvent<'a>, Error>> {
        let data = self.data;
        let mut st = PageState {
            pos: self.pos,
            ts: self.ts,
            done: self.done,
        };
        let r = next_in(data, &mut st, self.layout.endian, self.base);
        self.pos = st.pos;
        self.ts = st.ts;
        self.done = st.done;
        r.map(|r| {
            r.map(|ev| RawEvent {
                ts: ev.ts,
                offset: ev.offset,
                data: &data[ev.start..ev.start + ev.len],
            })
        })
    }

    /// The iteration state, for callers that keep the page bytes themselves.
    pub fn state(&self) -> PageState {
        PageState {
            pos: self.pos,
            ts: self.ts,
            done: self.done,
        }
    }

    /// Byte range of the committed data inside the page.
    pub fn data_range(&self) -> std::ops::Range<usize> {
        let s = self.layout.data_offset as usize;
        s..s + self.data.len()
    }
}

/// Where iteration over a page's committed data stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageState {
    pub pos: usize,
    pub ts: u64,
    pub done: bool,
}

/// A data event located by offsets into the committed data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventLoc {
    pub ts: u64,
    /// Offset of the event header.
    pub offset: u32,
    /// Offset and length of the payload.
    pub start: usize,
    pub len: usize,
}

/// Decode the next data event of `data` (a page's committed data area),
/// skipping padding and time records. `base` is the absolute offset of
/// `data[0]`, for errors. After an error, the state is done.
#[inline]
pub fn next_in(
    data: &[u8],
    st: &mut PageState,
    e: Endian,
    base: u64,
) -> Option<Result<EventLoc, Error>> {
    let damaged = |st: &mut PageState, msg: &str| {
        st.done = true;
        Some(Err(Error::invalid(
            msg.to_string(),
            "flyrecord page",
            base + st.pos as u64,
        )))
    };
    loop {
        if st.done || st.pos >= data.len() {
            return None;
        }
        let at = st.pos;
        let Some(word) = read4(e, data, at) else {
            return damaged(st, "truncated event header");
        };
        let (type_len, delta) = match e {
            Endian::Little => (word & 31, (word >> 5) as u64),
            Endian::Big => (word >> 27, (word & ((1 << 27) - 1)) as u64),
        };
        match type_len {
            TYPE_PADDING => {
                let Some(len) = read4(e, data, at + 4) else {
                    // padding to the end of the page
                    st.done = true;
                    return None;
                };
                st.ts = st.ts.wrapping_add(delta);
                st.pos = at + 4 + len as usize;
            }
            TYPE_TIME_EXTEND | TYPE_TIME_STAMP => {
                let Some(ext) = read4(e, data, at + 4) else {
                    return damaged(st, "truncated time record");
                };
                let v = ((ext as u64) << TS_SHIFT).wrapping_add(delta);
                if type_len == TYPE_TIME_STAMP {
                    st.ts = v | (st.ts & TS_MSB);
                } else {
                    st.ts = st.ts.wrapping_add(v);
                }
                st.pos = at + 8;
            }
            _ => {
                let (start, len) = if type_len == 0 {
                    let Some(len) = read4(e, data, at + 4) else {
                        return damaged(st, "truncated event length");
                    };
                    if len < 4 {
                        return damaged(st, "event length smaller than its header");
                    }
                    (at + 8, ((len as usize - 4) + 3) & !3)
                } else {
                    (at + 4, type_len as usize * 4)
                };
                if start + len > data.len() {
                    return damaged(st, "event extends past the page's data");
                }
                st.ts = st.ts.wrapping_add(delta);
                st.pos = start + len;
                return Some(Ok(EventLoc {
                    ts: st.ts,
                    offset: at as u32,
                    start,
                    len,
                }));
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds pages for tests (little- or big-endian).
    pub struct PageBuilder {
        pub endian: Endian,
        pub commit_size: usize,
        pub data: Vec<u8>,
    }

    impl PageBuilder {
        pub fn new(endian: Endian, commit_size: usize) -> Self {
            PageBuilder {
                endian,
                commit_size,
                data: Vec::new(),
            }
        }
        fn w32(&mut self, v: u32) {
            match self.endian {
                Endian::Little => self.data.extend_from_slice(&v.to_le_bytes()),
                Endian::Big => self.data.extend_from_slice(&v.to_be_bytes()),
            }
        }
        fn hdr(&mut self, type_len: u32, delta: u32) {
            let w = match self.endian {
                Endian::Little => type_len | (delta << 5),
                Endian::Big => (type_len << 27) | delta,
            };
            self.w32(w);
        }
        pub fn event(&mut self, delta: u32, payload: &[u8]) -> &mut Self {
            let padded = (payload.len() + 3) & !3;
            if padded <= 28 * 4 && !payload.is_empty() {
                self.hdr((padded / 4) as u32, delta);
            } else {
                self.hdr(0, delta);
                self.w32(padded as u32 + 4);
            }
            self.data.extend_from_slice(payload);
            self.data
                .resize(self.data.len() + padded - payload.len(), 0);
            self
        }
        pub fn extend(&mut self, delta: u64) -> &mut Self {
            self.hdr(TYPE_TIME_EXTEND, (delta & ((1 << 27) - 1)) as u32);
            self.w32((delta >> 27) as u32);
            self
        }
        pub fn stamp(&mut self, ts: u64) -> &mut Self {
            self.hdr(TYPE_TIME_STAMP, (ts & ((1 << 27) - 1)) as u32);
            self.w32((ts >> 27) as u32);
            self
        }
        /// Padding of `len` bytes after the header word (`len` >= 4).
        pub fn padding(&mut self, delta: u32, len: u32) -> &mut Self {
            self.hdr(TYPE_PADDING, delta);
            self.w32(len);
            self.data.resize(self.data.len() + len as usize - 4, 0);
            self
        }
        pub fn build(&self, ts: u64, page_size: usize, missed: Missed) -> Vec<u8> {
            let mut flags = self.data.len() as u64;
            match missed {
                Missed::None => {}
                Missed::Unknown => flags |= MISSED_EVENTS,
                Missed::Count(_) => flags |= MISSED_EVENTS | MISSED_STORED,
            }
            let mut p = Vec::new();
            let put = |p: &mut Vec<u8>, v: u64, n: usize| match self.endian {
                Endian::Little => p.extend_from_slice(&v.to_le_bytes()[..n]),
                Endian::Big => p.extend_from_slice(&v.to_be_bytes()[8 - n..]),
            };
            put(&mut p, ts, 8);
            put(&mut p, flags, self.commit_size);
            p.extend_from_slice(&self.data);
            if let Missed::Count(n) = missed {
                put(&mut p, n, self.commit_size);
            }
            p.resize(page_size.max(p.len()), 0);
            p
        }
    }

    fn layout(endian: Endian, commit: u32) -> PageLayout {
        PageLayout {
            endian,
            commit_size: commit,
            data_offset: 8 + commit,
            page_size: 4096,
        }
    }

    fn collect(p: &mut Page<'_>) -> Vec<(u64, Vec<u8>)> {
        let mut v = Vec::new();
        while let Some(r) = p.next() {
            let r = r.unwrap();
            v.push((r.ts, r.data.to_vec()));
        }
        v
    }

    #[test]
    fn all_record_types_both_endians() {
        for endian in [Endian::Little, Endian::Big] {
            for commit in [4usize, 8] {
                let mut b = PageBuilder::new(endian, commit);
                b.event(5, &[1, 2, 3, 4])
                    .extend(1 << 30)
                    .event(7, &[9; 200])
                    .padding(3, 8)
                    .stamp(0x0123_4567_89ab)
                    .event(0, &[1, 2, 3, 4, 5, 6, 7, 8]);
                let page = b.build(1000, 4096, Missed::Count(42));
                let mut p = Page::parse(&page, 0, layout(endian, commit as u32)).unwrap();
                assert_eq!(p.missed, Missed::Count(42));
                let ev = collect(&mut p);
                assert_eq!(ev.len(), 3);
                assert_eq!(ev[0], (1005, vec![1, 2, 3, 4]));
                assert_eq!(ev[1].0, 1005 + (1 << 30) + 7);
                assert_eq!(ev[1].1.len(), 200);
                assert_eq!(ev[2].0, 0x0123_4567_89ab);
            }
        }
    }

    #[test]
    fn time_stamp_keeps_top_bits() {
        let mut b = PageBuilder::new(Endian::Little, 8);
        b.stamp(77).event(1, &[0; 4]);
        let page = b.build(0xf800_0000_0000_0000 | 5, 4096, Missed::None);
        let mut p = Page::parse(&page, 0, layout(Endian::Little, 8)).unwrap();
        assert_eq!(collect(&mut p)[0].0, 0xf800_0000_0000_0000 | 78);
    }

    #[test]
    fn missed_unknown_and_damage() {
        let mut b = PageBuilder::new(Endian::Little, 8);
        b.event(1, &[0; 8]);
        let mut page = b.build(0, 64, Missed::Unknown);
        let mut p = Page::parse(&page, 0, layout(Endian::Little, 8)).unwrap();
        assert_eq!(p.missed, Missed::Unknown);
        assert_eq!(collect(&mut p).len(), 1);
        // a length that runs past the committed data
        page[16] = 20; // type_len 20 => 80 bytes
        let mut p = Page::parse(&page, 0, layout(Endian::Little, 8)).unwrap();
        assert!(p.next().unwrap().is_err());
        assert!(p.next().is_none());
        // commit size past the page
        page[8] = 0xff;
        page[9] = 0xff;
        let (pg, err) = Page::parse_checked(&page, 0, layout(Endian::Little, 8));
        assert!(pg.is_some() && err.is_some());
        // header cut
        assert!(Page::parse(&page[..10], 0, layout(Endian::Little, 8)).is_err());
    }
}
