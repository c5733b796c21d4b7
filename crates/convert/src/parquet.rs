//! [`To::Parquet`](crate::To::Parquet): the tables of `tracemux-table` as a sink.

use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::{Error, Result};
use tracemux_core::model::{Event, Lost, TraceMeta};
use tracemux_table::{Dataset, Layout, TablesWriter, WriteOptions};

use super::{DatasetLayout, Options, SchemaKind, Sink};

/// The dataset the traces of the shared layout are written into in turn:
/// a trace's sink takes it and gives it back when it finishes.
pub type Slot = Arc<Mutex<Option<Dataset>>>;

struct TablesSink(TablesWriter, Option<Slot>);

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
        match self.1 {
            Some(slot) => {
                let (_, ds) = self.0.finish_in(meta)?;
                *slot
                    .lock()
                    .map_err(|_| Error::Stopped("dataset lock poisoned".into()))? = Some(ds);
            }
            None => {
                self.0.finish(meta)?;
            }
        }
        Ok(())
    }
}

/// Whether `o` asks for the portable schema: `--schema`, or by default
/// the shared layout's.
fn portable(o: &Options) -> bool {
    match o.schema {
        Some(s) => s == SchemaKind::Portable,
        None => o.layout == DatasetLayout::Shared,
    }
}

/// The writer's options for `o`, in `layout`.
fn write_options(o: &Options, layout: Layout, source: &[&Path]) -> WriteOptions {
    let mut w = WriteOptions {
        layout,
        source: source.iter().map(|p| p.display().to_string()).collect(),
        events_table: !o.no_events_table,
        portable: portable(o),
        encoder_thread: tracemux_core::threads::resolve(o.threads) > 1,
        ..Default::default()
    };
    if let Some(size) = o.file_size {
        w.file_size = size.max(1);
    }
    w
}

/// A shared dataset in `dir`, for the traces of `o` written in turn.
pub fn shared(o: &Options, dir: &Path) -> Result<Slot> {
    let opts = write_options(
        o,
        Layout::Shared {
            trace: String::new(),
        },
        &[],
    );
    Ok(Arc::new(Mutex::new(Some(Dataset::new(dir, &opts)?))))
}

/// Close the files of the shared dataset in `slot` and mark it complete.
pub fn finish_shared(slot: &Slot) -> Result<()> {
    let ds = slot
        .lock()
        .map_err(|_| Error::Stopped("dataset lock poisoned".into()))?
        .take()
        .ok_or_else(|| Error::Stopped("the shared dataset was not given back".into()))?;
    ds.finish()?;
    Ok(())
}

/// The tables of one trace as the trace `trace` of the shared dataset in
/// `slot`.
pub fn shared_sink(
    o: &Options,
    meta: &TraceMeta,
    slot: &Slot,
    trace: &str,
    source: &[&Path],
) -> Result<Box<dyn Sink + Send>> {
    let ds = slot
        .lock()
        .map_err(|_| Error::Stopped("dataset lock poisoned".into()))?
        .take()
        .ok_or_else(|| Error::Stopped("the shared dataset is in use".into()))?;
    let opts = write_options(
        o,
        Layout::Shared {
            trace: trace.into(),
        },
        source,
    );
    Ok(Box::new(TablesSink(
        TablesWriter::in_dataset(ds, meta, opts)?,
        Some(slot.clone()),
    )))
}

/// The Parquet tables of one trace in directory `dir`: flat, or as the
/// partition `trace` of a Hive-partitioned dataset.
pub fn sink(
    o: &Options,
    meta: &TraceMeta,
    dir: &Path,
    trace: Option<&str>,
    source: &[&Path],
) -> Result<Box<dyn Sink + Send>> {
    let layout = match trace {
        Some(t) => Layout::Hive { trace: t.into() },
        None => Layout::Flat,
    };
    let opts = write_options(o, layout, source);
    Ok(Box::new(TablesSink(
        TablesWriter::new(dir, meta, opts)?,
        None,
    )))
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
