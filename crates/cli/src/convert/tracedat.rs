//! `convert --to tracedat`: a trace.dat rewritten as trace-cmd writes it
//! (another file version or compression, optionally trimmed), through
//! `tracemux_tracedat::convert` rather than the common model, since the
//! output keeps every piece of the source's metadata.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use tracemux_tracedat::convert::{convert, ConvertOptions};
use tracemux_tracedat::writer::Compression as WCompression;
use tracemux_tracedat::TraceDat;

use super::{Compression, ConvertArgs, Summary};
use crate::Outcome;

/// Convert `a.inputs[0]` into the trace.dat `tmp` (the caller renames it).
pub fn run(a: &ConvertArgs, tmp: &Path, summary: &mut Summary) -> Result<Outcome> {
    if a.inputs.len() != 1 {
        bail!("--to tracedat takes one input");
    }
    let input = &a.inputs[0];
    if input.is_dir() {
        bail!(
            "{}: --to tracedat needs a trace.dat source",
            input.display()
        );
    }
    let map = crate::open::map(input)?;
    if !tracemux_tracedat::sniff(&map) {
        bail!(
            "{}: --to tracedat needs a trace.dat source",
            input.display()
        );
    }
    let compression = match (a.file_version, a.compression) {
        (6, _) => WCompression::None,
        (7, Compression::None) => WCompression::None,
        (7, Compression::Zstd) => WCompression::Zstd,
        (7, Compression::Zlib) => WCompression::Zlib,
        (v, _) => bail!("--file-version {v}: 6 or 7"),
    };
    let t = TraceDat::parse(&map, a.strict).map_err(|e| anyhow!("{}: {e}", input.display()))?;
    let opts = ConvertOptions {
        version: a.file_version,
        compression,
        begin: a.begin,
        end: a.end,
        events: a.events.clone(),
        strict: a.strict,
    };
    let (file, st) = convert(&t, &opts).map_err(|e| anyhow!("{}: {e}", input.display()))?;
    let mut outcome = Outcome::Ok;
    for e in &st.damage {
        crate::warn(input, e);
        outcome = Outcome::Damaged;
    }
    for id in &st.dropped_options {
        eprintln!(
            "tracemux: {}: option {id} refers to a section that is not carried over; left out",
            input.display()
        );
    }
    let bytes = file
        .to_bytes()
        .map_err(|e| anyhow!("{}: cannot write: {e}", tmp.display()))?;
    drop(file);
    std::fs::write(tmp, &bytes).with_context(|| format!("{}: cannot write", tmp.display()))?;
    summary.events = st.events;
    summary.skipped = st.skipped;
    summary.lost_markers = st.lost_markers;
    summary.lost_events = st.lost_events;
    summary.damage = st.damage.len() as u64;
    Ok(outcome)
}
