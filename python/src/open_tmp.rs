//! TEMPORARY stand-in for `tracemux-open` (trace.dat only, no mmap) until
//! the integrator's crate lands on main; deleted at that merge.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use tracemux_core::model::RecordSource;
use tracemux_tracedat::reader::{ReadOptions, Reader};
use tracemux_tracedat::TraceDat;

#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    pub strict: bool,
}

pub fn sniff_name(path: &Path) -> Result<String> {
    let data = std::fs::read(path)?;
    if data.starts_with(b"\x17\x08\x44tracing") {
        Ok("trace-cmd trace.dat".into())
    } else {
        bail!("{}: not a trace.dat (temporary opener)", path.display())
    }
}

pub fn with_source<T>(
    paths: &[PathBuf],
    opts: &OpenOptions,
    f: impl FnOnce(&mut dyn RecordSource) -> Result<T>,
) -> Result<T> {
    let path = paths.first().ok_or_else(|| anyhow!("no trace given"))?;
    sniff_name(path)?;
    let data = std::fs::read(path)?;
    let t = TraceDat::parse(&data, opts.strict).map_err(|e| anyhow!("{}: {}", path.display(), e))?;
    let ro = ReadOptions {
        strict: opts.strict,
        ..Default::default()
    };
    let mut r = Reader::new(&t, &ro).map_err(|e| anyhow!("{}: {}", path.display(), e))?;
    f(&mut r)
}
