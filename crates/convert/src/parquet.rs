//! [`To::Parquet`](crate::To::Parquet): the tables of `tracemux-table` as a sink.

use std::path::Path;

use anyhow::Result;
use tracemux_core::model::{Event, Lost, TraceMeta};
use tracemux_table::{Layout, TablesWriter, WriteOptions};

use super::Sink;

struct TablesSink(TablesWriter);

impl Sink for TablesSink {
    fn event(&mut self, meta: &TraceMeta, ev: &Event<'_>) -> Result<()> {
        Ok(self.0.event(meta, ev)?)
    }
    fn lost(&mut self, meta: &TraceMeta, l: &Lost) -> Result<()> {
        Ok(self.0.lost(meta, l)?)
    }
    fn damage(&mut self, what: &str) {
        self.0.damage(what);
    }
    fn finish(self: Box<Self>, meta: &TraceMeta) -> Result<()> {
        self.0.finish(meta)?;
        Ok(())
    }
}

/// The Parquet tables of one trace in directory `dir`: flat, or as the
/// partition `trace` of a Hive-partitioned dataset.
pub fn sink(
    meta: &TraceMeta,
    dir: &Path,
    trace: Option<&str>,
    source: &[&Path],
    events_table: bool,
) -> Result<Box<dyn Sink + Send>> {
    let opts = WriteOptions {
        layout: match trace {
            Some(t) => Layout::Hive { trace: t.into() },
            None => Layout::Flat,
        },
        source: source.iter().map(|p| p.display().to_string()).collect(),
        events_table,
        ..Default::default()
    };
    Ok(Box::new(TablesSink(TablesWriter::new(dir, meta, opts)?)))
}

/// The name of a trace's partition: its directory's or file's name
/// (`trace.dat` files go by their directory), with anything but letters,
/// digits, `-`, `_` and `.` made `_`.
pub fn trace_name(input: &Path) -> String {
    let abs = std::fs::canonicalize(input).unwrap_or_else(|_| input.to_path_buf());
    let file = abs.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = match file.as_deref() {
        Some("trace.dat") | Some("metadata") | None => abs
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "trace".into()),
        Some(f) => f.strip_suffix(".dat").unwrap_or(f).to_string(),
    };
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}
