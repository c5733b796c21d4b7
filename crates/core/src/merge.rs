//! Merging several record sources (several trace files) into one time
//! order, as `trace-cmd report -i A -i B` does: the record with the
//! smallest timestamp first; on equal timestamps the earlier source.

use crate::error::Result;
use crate::model::{Record, RecordSource};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Lost, TraceMeta};

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
