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

use crate::model::SourceFn;
use crate::open::{map, sniff, Kind, Releaser};
use crate::out::Outcome;

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
        Kind::Ltt => crate::ltt::with_model_source(first, strict, f),
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
