//! tracemux-perf: what `perf record` writes (perf.data, file and pipe mode)
//! and what `perf script` prints of it.
//!
//! The container is read here rather than with the `linux-perf-data` crate
//! (0.13): that crate reads through `io::Read` and copies each record into
//! an owned buffer for its sorter, stops at the first damaged record, and
//! reports errors without the file offset; this project's readers decode in
//! place from the mapped file with its checked byte cursor, go on past
//! damage with the damage reported, and name the offset of every error.
//!
//! Layers: [`header`] (file and pipe headers, attrs, feature table),
//! [`features`] and [`tracing`] (feature sections, TRACING_DATA through
//! `tracemux_ftrace`), [`records`] (records in perf's delivery order, zstd
//! COMPRESSED records), [`sample`] (SAMPLE bodies), [`machine`] (perf's
//! threads, comms and maps), [`symbols`] (ELF and kallsyms symbols),
//! [`fields`] and [`script`] (`perf script`'s field sets and text),
//! [`info`] (`perf report --header-only`, `--stats`), [`source`] (the
//! common event model).
#![forbid(unsafe_code)]

pub mod attr;
pub mod consts;
pub mod events;
pub mod features;
pub mod fields;
pub mod header;
pub mod info;
pub mod machine;
pub mod records;
pub mod sample;
pub mod script;
pub mod source;
pub mod symbols;
pub mod tracing;

use tracemux_core::{Endian, Error, Result};

use crate::consts::{feat, rec};
use crate::features::Features;
use crate::header::{EventAttr, FileHeader};
use crate::records::{IdMap, Records};
use crate::tracing::TracingData;

pub use crate::header::sniff;

/// An opened perf.data: its header, events, features and tracing data; the
/// records are read on demand ([`PerfData::records`]).
pub struct PerfData<'a> {
    pub data: &'a [u8],
    pub header: FileHeader,
    pub events: Vec<EventAttr>,
    pub features: Features,
    pub tracing: Option<TracingData>,
    /// Where the records are: `data[start..end]`.
    pub records_range: (usize, usize),
    /// Damage found while opening (lenient mode).
    pub damage: Vec<Error>,
}

impl<'a> PerfData<'a> {
    /// Open perf.data bytes. Lenient: damage in feature sections or the
    /// tracing data is kept in [`PerfData::damage`]; `strict` makes it an
    /// error. A header that cannot be read is always an error.
    pub fn open(data: &'a [u8], strict: bool) -> Result<PerfData<'a>> {
        let header = header::parse_header(data)?;
        let mut p = PerfData {
            data,
            header,
            events: Vec::new(),
            features: Features::default(),
            tracing: None,
            records_range: (0, 0),
            damage: Vec::new(),
        };
        if p.header.pipe {
            p.records_range = (16, data.len());
            p.scan_pipe();
        } else {
            p.open_file()?;
        }
        p.name_events();
        if strict {
            if let Some(e) = p.damage.first() {
                return Err(e.clone());
            }
        }
        Ok(p)
    }

    pub fn endian(&self) -> Endian {
        self.header.endian()
    }

    fn open_file(&mut self) -> Result<()> {
        let h = &self.header;
        self.events = header::parse_attrs(self.data, h)?;
        let d = h.data.bytes(self.data, "data").map(|_| h.data);
        match d {
            Ok(d) => self.records_range = (d.offset as usize, (d.offset + d.size) as usize),
            Err(e) => {
                // a file cut short: records up to the end, damage reported
                let start = (h.data.offset as usize).min(self.data.len());
                self.records_range = (start, self.data.len());
                self.damage.push(e);
                return Ok(());
            }
        }
        match header::feature_table(self.data, h) {
            Ok(table) => {
                for (id, s) in table {
                    match s.bytes(self.data, feat::name(id).unwrap_or("feature")) {
                        Ok(b) => self.add_feature(id, b, s.offset),
                        Err(e) => self.damage.push(e),
                    }
                }
            }
            Err(e) => self.damage.push(e),
        }
        Ok(())
    }

    fn add_feature(&mut self, id: u32, b: &[u8], offset: u64) {
        if id == feat::TRACING_DATA {
            match tracing::parse_tracing_data(b, offset) {
                Ok(t) => self.tracing = Some(t),
                Err(e) => self.damage.push(e),
            }
            self.features.raw.push((id, offset, Vec::new()));
            return;
        }
        let e = self.endian();
        self.features.add(id, b, offset, e);
        for (_, err) in self.features.errors.drain(..) {
            self.damage.push(err);
        }
    }

    /// Pipe mode: the header records (attributes, tracing data, features,
    /// names) are read from the whole stream first.
    fn scan_pipe(&mut self) {
        let e = self.endian();
        let mut r =
            Records::new(self.data, 16, self.data.len(), e, true, IdMap::default()).unordered();
        let mut attrs = Vec::new();
        let mut feats = Vec::new();
        let mut tracing = None;
        let mut updates = Vec::new();
        while let Some(x) = r.next_record() {
            match x.type_ {
                rec::HEADER_ATTR => {
                    let mut c =
                        tracemux_core::Cursor::with_base(x.body, x.offset + 8, e, "HEADER_ATTR");
                    match attr::Attr::parse(&mut c) {
                        Ok(a) => {
                            let ids = c
                                .rest()
                                .chunks_exact(8)
                                .map(|w| e.u64(w.try_into().unwrap_or([0; 8])))
                                .collect();
                            attrs.push(EventAttr {
                                attr: a,
                                ids,
                                name: None,
                            });
                        }
                        Err(err) => self.damage.push(err),
                    }
                }
                rec::HEADER_TRACING_DATA => tracing = Some((x.extra.to_vec(), x.offset + 16)),
                rec::HEADER_FEATURE if x.body.len() >= 8 => {
                    let id = e.u64(x.body[..8].try_into().unwrap_or([0; 8]));
                    feats.push((id as u32, x.body[8..].to_vec(), x.offset + 16));
                }
                rec::EVENT_UPDATE => updates.push((x.body.to_vec(), x.offset)),
                _ => {}
            }
        }
        self.damage.append(&mut r.damage);
        self.events = attrs;
        if let Some((b, off)) = tracing {
            self.add_feature(feat::TRACING_DATA, &b, off);
        }
        for (id, b, off) in feats {
            self.add_feature(id, &b, off);
        }
        for (b, off) in updates {
            self.event_update(&b, off);
        }
    }

    /// EVENT_UPDATE: u64 type, u64 id, then for type 2 (NAME) the name.
    fn event_update(&mut self, b: &[u8], off: u64) {
        let e = self.endian();
        let mut c = tracemux_core::Cursor::with_base(b, off + 8, e, "EVENT_UPDATE");
        let (Ok(t), Ok(id)) = (c.u64(), c.u64()) else {
            self.damage.push(Error::eof("EVENT_UPDATE", off));
            return;
        };
        if t == 2 {
            let rest = c.rest();
            let end = rest.iter().position(|&x| x == 0).unwrap_or(rest.len());
            let name = String::from_utf8_lossy(&rest[..end]).into_owned();
            if let Some(ev) = self.events.iter_mut().find(|ev| ev.ids.contains(&id)) {
                ev.name = Some(name);
            }
        }
    }

    /// Names: EVENT_DESC's (by position, as perf matches them), else
    /// EVENT_UPDATE's, else perf's name for the attribute.
    fn name_events(&mut self) {
        for (i, ev) in self.events.iter_mut().enumerate() {
            if ev.name.is_none() {
                if let Some(d) = self.features.event_desc.get(i) {
                    ev.name = d.name.clone();
                }
            }
            if ev.name.is_none() {
                ev.name = Some(events::attr_name(&ev.attr, self.tracing.as_ref()));
            }
        }
    }

    /// The name of event `i`.
    pub fn event_name(&self, i: usize) -> &str {
        self.events
            .get(i)
            .and_then(|e| e.name.as_deref())
            .unwrap_or("[unknown]")
    }

    /// The id table records use to find their event.
    pub fn id_map(&self) -> IdMap {
        let mut ids: Vec<(u64, usize)> = self
            .events
            .iter()
            .enumerate()
            .flat_map(|(i, ev)| ev.ids.iter().map(move |&id| (id, i)))
            .collect();
        ids.sort_unstable();
        ids.dedup_by_key(|x| x.0);
        IdMap {
            attrs: self.events.iter().map(|e| e.attr.clone()).collect(),
            ids,
        }
    }

    /// The records in perf's delivery order.
    pub fn records(&self) -> Records<'a> {
        let (s, e) = self.records_range;
        Records::new(
            self.data,
            s,
            e,
            self.endian(),
            self.header.pipe,
            self.id_map(),
        )
    }
}

/// Records read by type and samples per event (one pass over the data).
#[derive(Debug, Default)]
pub struct Counts {
    pub records: std::collections::BTreeMap<u32, u64>,
    /// Per event (index of [`PerfData::events`]).
    pub samples: Vec<u64>,
    /// Per event: (first, last) sample time.
    pub times: Vec<Option<(u64, u64)>>,
    pub lost: u64,
    pub damage: Vec<Error>,
}

impl PerfData<'_> {
    /// Read every record and count.
    pub fn count(&self) -> Counts {
        self.count_with(&mut |_| {})
    }

    /// [`PerfData::count`], telling `release` from time to time the file
    /// offset below which no byte is needed any more.
    pub fn count_with(&self, release: &mut dyn FnMut(u64)) -> Counts {
        let mut c = Counts {
            samples: vec![0; self.events.len()],
            times: vec![None; self.events.len()],
            ..Counts::default()
        };
        let ids = self.id_map();
        let e = self.endian();
        // counts do not depend on the order: records as stored
        let mut r = self.records().unordered();
        let mut n = 0u32;
        loop {
            n = n.wrapping_add(1);
            if n % 65536 == 0 {
                release(r.consumed_to());
            }
            let Some(x) = r.next_record() else { break };
            if x.type_ == rec::SAMPLE {
                if let Some(i) = ids.attr_index(x.type_, x.body, e) {
                    c.samples[i] += 1;
                    if x.time != 0 {
                        let t = &mut c.times[i];
                        *t = Some(
                            t.map_or((x.time, x.time), |(a, b)| (a.min(x.time), b.max(x.time))),
                        );
                    }
                }
            } else if x.type_ == rec::LOST && x.body.len() >= 16 {
                c.lost += e.u64(x.body[8..16].try_into().unwrap_or([0; 8]));
            }
        }
        c.records = std::mem::take(&mut r.counts);
        c.damage = std::mem::take(&mut r.damage);
        c
    }
}
