//! `tracemux info` and `stats` of a trace.dat: the file mapped, the text
//! of [`tracemux_tracedat::info`] printed, the damage reported.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context as _, Result};

use crate::out::{warn_all, Out, Outcome};
use tracemux_open::{map, sniff, Kind, Mapped, Releaser};
use tracemux_tracedat::info::{container_text, event_stats};
use tracemux_tracedat::TraceDat;

/// Hands the pages the reader is done with back (flat memory).
fn release(data: &Mapped) -> impl FnMut(&[(u64, u64)]) + '_ {
    let mut releaser = Releaser::default();
    move |consumed| releaser.release(data, consumed)
}

pub fn run(path: &Path, strict: bool) -> Result<Outcome> {
    match sniff(path)? {
        Kind::TraceDat => {}
        k => bail!(
            "{}: {} traces are not supported yet",
            path.display(),
            k.name()
        ),
    }
    let data = map(path)?;
    let t = TraceDat::parse(&data, strict).with_context(|| path.display().to_string())?;
    let s = container_text(path, &t);
    let mut out = Out::new();
    out.buf().extend_from_slice(s.as_bytes());
    out.flush()?;
    let mut s = String::new();
    let damage = event_stats(&mut s, &t, strict, &mut release(&data))
        .with_context(|| path.display().to_string())?;
    s.push_str("\nDamage\n");
    if damage.is_empty() {
        s.push_str("  none\n");
    }
    for e in &damage {
        let _ = writeln!(s, "  {e}");
    }
    out.buf().extend_from_slice(s.as_bytes());
    out.flush()?;
    Ok(warn_all(path, &damage))
}

/// `tracemux stats` on a trace.dat: the event part of `info` (reads every
/// event: counts per buffer/CPU and per event, lost events, damage).
pub fn stats(path: &Path, strict: bool) -> Result<Outcome> {
    let data = map(path)?;
    let t = TraceDat::parse(&data, strict).with_context(|| path.display().to_string())?;
    let mut s = String::new();
    let damage = event_stats(&mut s, &t, strict, &mut release(&data))
        .with_context(|| path.display().to_string())?;
    let mut out = Out::new();
    out.buf()
        .extend_from_slice(s.strip_prefix('\n').unwrap_or(&s).as_bytes());
    out.flush()?;
    Ok(warn_all(path, &damage))
}
