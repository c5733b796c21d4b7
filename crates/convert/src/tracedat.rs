//! [`To::Tracedat`](crate::To::Tracedat): a trace.dat rewritten as trace-cmd writes it
//! (another file version or compression, optionally trimmed), through
//! `tracemux_tracedat::convert` rather than the common model, since the
//! output keeps every piece of the source's metadata.
//!
//! Memory stays bounded whatever the size of the trace: the packed pages
//! of each CPU go to a spill file next to the output (unlinked at once),
//! the output is written as it goes, and the source's mapped pages are
//! let go once their records are read.

use std::fs::{File, OpenOptions};
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crate::{Error, Result};
use tracemux_tracedat::convert::{convert_spilled, ConvertOptions};
use tracemux_tracedat::writer::{Compression as WCompression, PageSpill};
use tracemux_tracedat::TraceDat;

use super::{Compression, Hooks, Options, Summary};

/// Convert `a.inputs[0]` into the trace.dat `tmp` (the caller renames it).
pub fn run(a: &Options, tmp: &Path, summary: &mut Summary, hooks: &dyn Hooks) -> Result<()> {
    if a.inputs.len() != 1 {
        return Err(Error::Refused("--to tracedat takes one input".into()));
    }
    let input = &a.inputs[0];
    if input.is_dir() {
        return Err(Error::Refused(format!(
            "{}: --to tracedat needs a trace.dat source",
            input.display()
        )));
    }
    let map = tracemux_open::map(input)?;
    if !tracemux_tracedat::sniff(&map) {
        return Err(Error::Refused(format!(
            "{}: --to tracedat needs a trace.dat source",
            input.display()
        )));
    }
    let compression = match (a.file_version, a.compression) {
        (6, _) => WCompression::None,
        (7, Compression::None) => WCompression::None,
        (7, Compression::Zstd) => WCompression::Zstd,
        (7, Compression::Zlib) => WCompression::Zlib,
        (v, _) => return Err(Error::Refused(format!("--file-version {v}: 6 or 7"))),
    };
    let t = TraceDat::parse(&map, a.strict).map_err(|e| Error::input(input.display(), e))?;
    let opts = ConvertOptions {
        version: a.file_version,
        compression,
        begin: a.begin,
        end: a.end,
        events: a.events.clone(),
        strict: a.strict,
    };
    let spill_path = PathBuf::from(format!("{}.spill", tmp.display()));
    let spill_file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&spill_path)
        .map_err(|e| Error::file(&spill_path, "create", e))?;
    // unlinked at once on Unix (the open file stays usable); elsewhere at the end
    let unlinked = std::fs::remove_file(&spill_path).is_ok();
    let mut spill = PageSpill::new(spill_file);
    let converted = convert_spilled(&t, &opts, &mut spill, &mut |offset, len| {
        map.release(offset, offset.saturating_add(len))
    });
    let (file, st) = match converted {
        Ok(x) => x,
        Err(e) => {
            if !unlinked {
                let _ = std::fs::remove_file(&spill_path);
            }
            return Err(Error::input(input.display(), e));
        }
    };
    for e in &st.damage {
        hooks.damage(input, e);
    }
    for id in &st.dropped_options {
        hooks.left_out(
            input,
            &format!("option {id} refers to a section that is not carried over; left out"),
        );
    }
    let res = File::create(tmp)
        .map_err(|e| Error::file(tmp, "create", e))
        .and_then(|out| {
            let mut out = BufWriter::with_capacity(1 << 20, out);
            file.write_spilled(&mut out, &mut spill)
                .map_err(|e| Error::file(tmp, "write", e))?;
            out.into_inner()
                .map_err(|e| Error::file(tmp, "write", e.into_error()))?;
            Ok(())
        });
    drop(spill);
    if !unlinked {
        let _ = std::fs::remove_file(&spill_path);
    }
    res?;
    summary.events = st.events;
    summary.skipped = st.skipped;
    summary.lost_markers = st.lost_markers;
    summary.lost_events = st.lost_events;
    summary.damage = st.damage.len() as u64;
    Ok(())
}
