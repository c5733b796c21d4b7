//! Any trace as a source of the common event model
//! ([`tracemux_core::model::RecordSource`]), whatever its format.
//!
//! The sources borrow from memory-mapped files, so they are handed to a
//! callback rather than returned. To consume one from elsewhere (an
//! iterator, an async stream), run [`with_source`] on a thread of its own
//! and send owned data out of the callback.

use std::path::{Path, PathBuf};

use tracemux_core::model::{Progress, RecordSource, TraceMeta};
use tracemux_tracedat::reader::{ReadOptions, Reader};
use tracemux_tracedat::TraceDat;

use crate::error::Error;
use crate::kind::{map, sniff, Kind, Mapped, Releaser};
use crate::loaders::{ltt_load, open_uftrace, CtfMapLoader};

/// How to open.
#[derive(Default, Clone, Copy)]
pub struct OpenOptions<'a> {
    /// Damage is an error (otherwise it is skipped and reported as
    /// [`tracemux_core::model::Record::Damage`]).
    pub strict: bool,
    /// Told what was forgiven while opening (CTF metadata read leniently),
    /// one message at a time; nothing is said when `None`.
    pub on_note: Option<&'a dyn Fn(&str)>,
    /// Offsets given by the user for inputs of a timeline (`INPUT=NS`:
    /// ns added to that input's timestamps), by the input's path as given.
    pub clock_offsets: &'a [(String, i64)],
    /// The caller never turns an address into a symbol name: a format
    /// may leave its kernel symbol table unread (trace.dat's kallsyms),
    /// to save its memory.
    pub no_symbols: bool,
}

/// Open `paths` as one source of one format.
pub(crate) fn one<T, E: From<Error>>(
    paths: &[PathBuf],
    opts: &OpenOptions<'_>,
    f: impl FnOnce(&mut dyn RecordSource) -> Result<T, E>,
) -> Result<T, E> {
    let Some(first) = paths.first() else {
        return Err(Error::Refused("no trace given".into()).into());
    };
    let kind = sniff(first)?;
    if paths.len() > 1 && !matches!(kind, Kind::Ctf { .. }) {
        return Err(Error::Refused(format!(
            "{}: several {} traces cannot be read as one source",
            first.display(),
            kind.name()
        ))
        .into());
    }
    let strict = opts.strict;
    match kind {
        Kind::TraceDat => tracedat(first, strict, opts.no_symbols, f),
        Kind::Ltt => {
            let load = |p: &Path| ltt_load(p);
            let trace = tracemux_ltt::Trace::open(
                first,
                &tracemux_ltt::OpenOptions {
                    strict,
                    loader: Some(&load),
                },
            )
            .map_err(|e| Error::trace(first, e))?;
            f(&mut tracemux_ltt::source::LttSource::new(&trace))
        }
        Kind::Ctf { .. } => {
            let loader = CtfMapLoader::default();
            let traces = tracemux_ctf::source::open(paths, &loader).map_err(Error::from)?;
            let mut src = tracemux_ctf::source::CtfSource::new(&traces, &loader, strict)
                .map_err(Error::from)?;
            if let Some(note) = opts.on_note {
                for n in traces.iter().flat_map(|t| &t.notes) {
                    note(&n.message());
                }
            }
            f(&mut src)
        }
        Kind::Perf => {
            let data = map(first)?;
            let p =
                tracemux_perf::PerfData::open(&data, strict).map_err(|e| Error::trace(first, e))?;
            let mut src = PerfReleasing {
                src: tracemux_perf::source::PerfSource::new(&p, strict),
                map: &data,
                done: 0,
                n: 0,
            };
            f(&mut src)
        }
        Kind::Uftrace => {
            let data = open_uftrace(first, tracemux_uftrace::Demangle::Simple, strict)?;
            f(&mut tracemux_uftrace::source::UftraceSource::new(
                &data, strict,
            ))
        }
    }
}

fn tracedat<T, E: From<Error>>(
    path: &Path,
    strict: bool,
    no_symbols: bool,
    f: impl FnOnce(&mut dyn RecordSource) -> Result<T, E>,
) -> Result<T, E> {
    let data = map(path)?;
    let t = TraceDat::parse(&data, strict).map_err(|e| Error::trace(path, e))?;
    let opts = ReadOptions {
        strict,
        no_symbols,
        ..Default::default()
    };
    let r = Reader::new(&t, &opts).map_err(|e| Error::trace(path, e))?;
    // the headers before the first stream (formats, kallsyms, saved
    // cmdlines: megabytes on a kernel trace) are in the trace's
    // description now; their pages go back too
    if let Some(first) = r.consumed().iter().map(|&(start, _)| start).min() {
        data.release(0, first);
    }
    let mut src = Releasing {
        r,
        map: &data,
        rel: Releaser::default(),
        n: 0,
    };
    f(&mut src)
}

/// A trace.dat reader that hands the pages it has read back to the
/// system as it goes (memory stays flat whatever the file size), as
/// `report` does.
struct Releasing<'a, 'd> {
    r: Reader<'d>,
    map: &'a Mapped,
    rel: Releaser,
    n: u32,
}

impl RecordSource for Releasing<'_, '_> {
    fn meta(&self) -> &TraceMeta {
        self.r.meta()
    }
    fn progress(&self) -> Option<Progress> {
        RecordSource::progress(&self.r)
    }
    fn next_record(&mut self) -> tracemux_core::Result<Option<tracemux_core::model::Record<'_>>> {
        self.n = self.n.wrapping_add(1);
        if self.n % 8192 == 0 {
            self.rel.release(self.map, &self.r.consumed());
        }
        self.r.next_record()
    }
}

/// A perf.data source that hands the pages it has read back to the system.
struct PerfReleasing<'m, 'p, 'd> {
    src: tracemux_perf::source::PerfSource<'p, 'd>,
    map: &'m Mapped,
    done: u64,
    n: u32,
}

impl RecordSource for PerfReleasing<'_, '_, '_> {
    fn meta(&self) -> &TraceMeta {
        self.src.meta()
    }
    fn progress(&self) -> Option<Progress> {
        self.src.progress()
    }
    fn next_record(&mut self) -> tracemux_core::Result<Option<tracemux_core::model::Record<'_>>> {
        self.n = self.n.wrapping_add(1);
        if self.n % 8192 == 0 {
            let to = self.src.consumed_to();
            if to > self.done + (2 << 20) {
                self.map.release(self.done, to);
                self.done = to;
            }
        }
        self.src.next_record()
    }
}
