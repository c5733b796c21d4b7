//! `tracemux.convert()`: `tracemux convert` from Python, through the same
//! library (`tracemux-convert`), with the GIL released.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use tracemux_convert::{Compression, DatasetLayout, Hooks, Options, SchemaKind, To};

use crate::errors;

/// Damage and notes kept for `warnings` (issued once the GIL is back);
/// Ctrl-C checked at every progress report.
#[derive(Default)]
struct Collect {
    warnings: Mutex<Vec<String>>,
}

impl Collect {
    fn push(&self, msg: String) {
        if let Ok(mut w) = self.warnings.lock() {
            w.push(msg);
        }
    }
}

impl Hooks for Collect {
    fn progress(
        &self,
        _events: u64,
        _read: Option<tracemux_core::model::Progress>,
    ) -> tracemux_convert::Result<()> {
        errors::check_signals_for_convert()
    }
    fn damage(&self, input: &Path, e: &tracemux_core::Error) {
        self.push(format!("{}: {e}", input.display()));
    }
    fn note(&self, msg: &str) {
        self.push(msg.to_string());
    }
    fn left_out(&self, input: &Path, msg: &str) {
        self.push(format!("{}: {msg}", input.display()));
    }
}

/// Convert a trace (or several: CTF traces merged by time, Parquet
/// partitions) into `to`: "ctf", "ctf2", "tracedat", "jsonl", "perfetto",
/// "chrome" or "parquet", exactly as `tracemux convert` does. Damage is a
/// `tracemux.TraceWarning` (with `strict=True`, a `TraceError`). Returns
/// the counts of what was written.
#[pyfunction]
#[pyo3(signature = (
    inputs, output, to, *, force = false, strict = false, begin = None, end = None,
    events = None, file_version = 7, compression = "zstd", reencode = false,
    partition = false, events_table = true, full_sched = false, named_generic = false, compress = false,
    layout = None, schema = None, file_size = None
))]
#[allow(clippy::too_many_arguments)]
pub fn convert<'py>(
    py: Python<'py>,
    inputs: &Bound<'py, PyAny>,
    output: PathBuf,
    to: &str,
    force: bool,
    strict: bool,
    begin: Option<u64>,
    end: Option<u64>,
    events: Option<Vec<String>>,
    file_version: u32,
    compression: &str,
    reencode: bool,
    partition: bool,
    events_table: bool,
    full_sched: bool,
    named_generic: bool,
    compress: bool,
    layout: Option<&str>,
    schema: Option<&str>,
    file_size: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let inputs: Vec<PathBuf> = if let Ok(p) = inputs.extract::<PathBuf>() {
        vec![p]
    } else {
        inputs.extract::<Vec<PathBuf>>()?
    };
    let bad = |m: String| pyo3::exceptions::PyValueError::new_err(m);
    let to: To = to.parse().map_err(bad)?;
    let compression: Compression = compression.parse().map_err(bad)?;
    let layout: DatasetLayout = match layout {
        Some(l) => l.parse().map_err(bad)?,
        None => DatasetLayout::default(),
    };
    let schema: Option<SchemaKind> = schema.map(|s| s.parse().map_err(bad)).transpose()?;
    if file_size == Some(0) {
        return Err(bad("file_size: 0 bytes".into()));
    }
    if inputs.is_empty() {
        return Err(bad("no trace given".into()));
    }
    let file = inputs[0].display().to_string();
    if output.exists() && !force {
        let msg = format!(
            "{}: the output exists (force=True replaces it)",
            output.display()
        );
        return Err(errors::trace_error(py, &msg, &errors::Place::default()));
    }
    let o = Options {
        inputs,
        output,
        to,
        force,
        strict,
        begin,
        end,
        events: events.unwrap_or_default(),
        file_version,
        compression,
        reencode,
        partition,
        layout,
        schema,
        file_size,
        clock_offsets: Vec::new(),
        no_events_table: !events_table,
        full_sched,
        named_generic,
        compress,
        // (what `tracemux.spark` sets for a task of one core)
        threads: std::env::var("TRACEMUX_THREADS")
            .ok()
            .and_then(|v| v.trim().parse().ok()),
        batch_events: None,
    };
    let hooks = Collect::default();
    let res = py.detach(|| tracemux_convert::run(&o, &hooks));
    let warnings = hooks.warnings.into_inner().unwrap_or_default();
    for w in &warnings {
        errors::warn(py, w)?;
    }
    let s = res.map_err(|e| errors::convert_to_py(py, e, Some(&file)))?;
    let d = PyDict::new(py);
    match &s.copied {
        Some(c) => {
            d.set_item("events", py.None())?;
            let copied = PyDict::new(py);
            copied.set_item("traces", c.traces)?;
            copied.set_item("files", c.files)?;
            copied.set_item("bytes", c.bytes)?;
            d.set_item("copied", copied)?;
        }
        None => {
            d.set_item("events", s.events)?;
            d.set_item("copied", py.None())?;
        }
    }
    d.set_item("skipped", s.skipped)?;
    d.set_item("lost_markers", s.lost_markers)?;
    d.set_item("lost_events", s.lost_events)?;
    d.set_item("damage", s.damage)?;
    Ok(d)
}
