//! Any trace as a source of the common event model
//! ([`tracemux_core::model::RecordSource`]), whatever its format: what
//! `report --json`/`--style` and `convert` read through.
//!
//! The sources borrow from memory-mapped files, so they are handed to a
//! callback rather than returned.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use tracemux_core::model::RecordSource;
use tracemux_tracedat::reader::{ReadOptions, Reader};
use tracemux_tracedat::TraceDat;

use crate::open::{map, sniff, Kind, Releaser};
use crate::Outcome;

/// What the callback gets: the opened source.
pub type SourceFn<'a> = &'a mut dyn FnMut(&mut dyn RecordSource) -> Result<Outcome>;

/// Open `paths` (one trace; several only for formats that merge several
/// traces: CTF) and hand the source to `f`.
pub fn with_source(paths: &[PathBuf], strict: bool, f: SourceFn<'_>) -> Result<Outcome> {
    let Some(first) = paths.first() else {
        bail!("no trace given");
    };
    let kind = sniff(first)?;
    if paths.len() > 1 && !matches!(kind, Kind::Ctf { .. }) {
        bail!(
            "{}: several {} traces cannot be read as one yet",
            first.display(),
            kind.name()
        );
    }
    match kind {
        Kind::TraceDat => tracedat(first, strict, f),
        Kind::Ltt => ltt(first, strict, f),
        Kind::Ctf { .. } => crate::ctf::with_model_source(paths, strict, f),
        Kind::Uftrace => crate::uftrace::with_model_source(first, strict, f),
    }
}

fn tracedat(path: &Path, strict: bool, f: SourceFn<'_>) -> Result<Outcome> {
    let data = map(path)?;
    let t = TraceDat::parse(&data, strict).map_err(|e| anyhow!("{}: {}", path.display(), e))?;
    let opts = ReadOptions {
        strict,
        ..Default::default()
    };
    let r = Reader::new(&t, &opts).map_err(|e| anyhow!("{}: {}", path.display(), e))?;
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
    map: &'a crate::open::Mapped,
    rel: Releaser,
    n: u32,
}

impl RecordSource for Releasing<'_, '_> {
    fn meta(&self) -> &tracemux_core::model::TraceMeta {
        self.r.meta()
    }
    fn next_record(&mut self) -> tracemux_core::Result<Option<tracemux_core::model::Record<'_>>> {
        self.n = self.n.wrapping_add(1);
        if self.n % 65536 == 0 {
            self.rel.release(self.map, &self.r.consumed());
        }
        self.r.next_record()
    }
}

fn ltt(path: &Path, strict: bool, f: SourceFn<'_>) -> Result<Outcome> {
    let load = |p: &Path| crate::ltt::load(p);
    let trace = tracemux_ltt::Trace::open(
        path,
        &tracemux_ltt::OpenOptions {
            strict,
            loader: Some(&load),
        },
    )
    .map_err(|e| anyhow!("{}: {}", path.display(), e))?;
    let mut s = tracemux_ltt::source::LttSource::new(&trace);
    f(&mut s)
}

/// The printers of the common model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelStyle {
    /// JSON lines (`schema/jsonl.schema.json`).
    Json,
    /// babeltrace2's text style.
    Babeltrace,
    /// trace-cmd report's line layout, fields as ` name=value`.
    TraceCmd,
}

/// Print every record of `src` on stdout in `style`; damage is reported on
/// stderr (an error with `strict`).
pub fn print_model(
    src: &mut dyn RecordSource,
    style: ModelStyle,
    path: &Path,
    strict: bool,
) -> Result<Outcome> {
    use tracemux_core::model::Record;
    let mut out = crate::Out::new();
    let mut outcome = Outcome::Ok;
    // (the records borrow the source, so its description is copied once)
    let meta = src.meta().clone();
    let mut bt = tracemux_render::babeltrace::BabeltracePrinter::new();
    let mut tc = tracemux_render::tracecmd::TraceCmdPrinter::new(
        &meta,
        tracemux_core::model::TimeFormat::Usecs,
    );
    loop {
        let rec = match src.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                out.flush()?;
                bail!("{}: {}", path.display(), e);
            }
        };
        match (rec, style) {
            (Record::Event(ev), ModelStyle::Json) => {
                tracemux_render::jsonl::write_event(out.buf(), &meta, &ev)
            }
            (Record::Event(ev), ModelStyle::Babeltrace) => bt.write_event(out.buf(), &meta, &ev),
            (Record::Event(ev), ModelStyle::TraceCmd) => {
                tc.write_pretty(out.buf(), &meta, &ev, None);
            }
            (Record::Lost(l), ModelStyle::Json) => {
                tracemux_render::jsonl::write_lost(out.buf(), &meta, &l)
            }
            (Record::Lost(l), ModelStyle::Babeltrace) => bt.write_lost(out.buf(), &l),
            (Record::Lost(l), ModelStyle::TraceCmd) => tc.write_lost(out.buf(), &meta, &l),
            (Record::Damage(e), _) => {
                out.flush()?;
                if strict {
                    bail!("{}: {}", path.display(), e);
                }
                crate::warn(path, &e);
                outcome = Outcome::Damaged;
            }
        }
        out.maybe_flush()?;
    }
    out.flush()?;
    Ok(outcome)
}
