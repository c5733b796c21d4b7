//! `Trace.table()`: one table of a trace (a class's events, `events`,
//! `lost`) as Arrow data, scanned by `tracemux_table::scan` on a worker
//! thread and handed over batch by batch.
//!
//! A `Table` is a description (table, columns, filters), not data: every
//! `__arrow_c_stream__` call (pyarrow, polars, duckdb...) and every
//! `to_arrow()` reads the trace anew, so a table can be scanned any number
//! of times and never holds more than a few batches.

use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow_array::{ArrayRef, RecordBatch, StructArray};
use arrow_schema::{ArrowError, Field, FieldRef, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyList};
use pyo3_arrow::error::PyArrowResult;
use pyo3_arrow::ffi::{to_schema_pycapsule, to_stream_pycapsule, ArrayReader};
use pyo3_arrow::PyTable;
use tracemux_core::model::{Record, TraceMeta};
use tracemux_table::scan::{tables, Scan, ScanSpec};

use crate::errors::{self, Place};
use crate::events::{on_worker, recv};

enum Msg {
    Batch(RecordBatch),
    /// Damage read around (lenient mode).
    Damage(String),
    Error(String, Place),
}

/// The worker: open the trace, scan the table, send the batches.
fn work(paths: Vec<PathBuf>, strict: bool, spec: ScanSpec, tx: SyncSender<Msg>) {
    let res = on_worker(&paths, strict, |src, file| {
        let meta = src.meta().clone();
        let mut scan = Scan::new(&meta, &spec)?;
        while !scan.is_done() {
            let rec = match src.next_record() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => {
                    let _ = tx.send(Msg::Error(format!("{file}: {e}"), Place::of(file, &e)));
                    return Ok(());
                }
            };
            if let Record::Damage(e) = &rec {
                if strict {
                    let _ = tx.send(Msg::Error(format!("{file}: {e}"), Place::of(file, e)));
                    return Ok(());
                }
                if tx.send(Msg::Damage(format!("{file}: {e}"))).is_err() {
                    return Ok(());
                }
            }
            if let Some(b) = scan.push(&meta, &rec)? {
                if tx.send(Msg::Batch(b)).is_err() {
                    // the reader is gone
                    return Ok(());
                }
            }
        }
        if let Some(b) = scan.finish()? {
            let _ = tx.send(Msg::Batch(b));
        }
        Ok(())
    });
    if let Err((msg, place)) = res {
        let _ = tx.send(Msg::Error(msg, place));
    }
}

/// The batches of one scan as an Arrow C stream reads them (pull, from
/// whichever thread the consumer uses).
struct StreamReader {
    rx: Receiver<Msg>,
    field: FieldRef,
    done: bool,
}

impl Iterator for StreamReader {
    type Item = Result<ArrayRef, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            match self.rx.recv_timeout(Duration::from_millis(100)) {
                Ok(Msg::Batch(b)) => return Some(Ok(Arc::new(StructArray::from(b)) as ArrayRef)),
                Ok(Msg::Damage(msg)) => Python::attach(|py| {
                    // (a warning filter set to "error" cannot stop a C
                    // stream midway; the warning is then dropped)
                    let _ = errors::warn(py, &msg);
                }),
                Ok(Msg::Error(msg, _)) => {
                    self.done = true;
                    return Some(Err(ArrowError::ExternalError(msg.into())));
                }
                Err(RecvTimeoutError::Disconnected) => self.done = true,
                Err(RecvTimeoutError::Timeout) => {
                    if Python::attach(|py| py.check_signals()).is_err() {
                        self.done = true;
                        return Some(Err(ArrowError::ExternalError(
                            "interrupted (KeyboardInterrupt)".into(),
                        )));
                    }
                }
            }
        }
        None
    }
}

impl ArrayReader for StreamReader {
    fn field(&self) -> FieldRef {
        self.field.clone()
    }
}

/// One table of a trace, read on demand. Speaks the Arrow PyCapsule
/// protocol: `pyarrow.table(t)`, `polars.DataFrame(t)`, `duckdb.sql("...
/// FROM t")` read it directly; `to_arrow()`, `to_pandas()`, `to_polars()`
/// are shortcuts.
#[pyclass(frozen, module = "tracemux", name = "Table")]
pub struct Table {
    paths: Vec<PathBuf>,
    strict: bool,
    spec: ScanSpec,
    schema: SchemaRef,
}

impl Table {
    /// Table `name` of trace `meta` with `spec`'s columns and filters (the
    /// columns are checked now).
    pub fn new(
        paths: Vec<PathBuf>,
        strict: bool,
        meta: &TraceMeta,
        spec: ScanSpec,
    ) -> PyResult<Table> {
        let scan = Scan::new(meta, &spec)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        Ok(Table {
            paths,
            strict,
            schema: scan.schema(),
            spec,
        })
    }

    fn start(&self) -> Receiver<Msg> {
        let (tx, rx) = sync_channel(2);
        let (paths, strict, spec) = (self.paths.clone(), self.strict, self.spec.clone());
        std::thread::spawn(move || work(paths, strict, spec, tx));
        rx
    }

    /// Every batch, read here with Ctrl-C and warnings handled as Python
    /// expects.
    fn collect(&self, py: Python<'_>) -> PyResult<PyTable> {
        let rx = Mutex::new(Some(self.start()));
        let mut batches = Vec::new();
        while let Some(m) = recv(py, &rx)? {
            match m {
                Msg::Batch(b) => batches.push(b),
                Msg::Damage(msg) => errors::warn(py, &msg)?,
                Msg::Error(msg, place) => return Err(errors::trace_error(py, &msg, &place)),
            }
        }
        PyTable::try_new(batches, self.schema.clone())
    }
}

/// Resolve what the user calls a table (`sched_switch`, `sched:sched_switch`,
/// or the table's own name `sched__sched_switch`) to the table's name.
pub fn resolve(meta: &TraceMeta, want: &str) -> PyResult<String> {
    let names: Vec<String> = tables(meta).into_iter().map(|(n, _)| n).collect();
    if names.iter().any(|n| n == want) {
        return Ok(want.to_string());
    }
    let hits: Vec<&String> = match want.split_once(':') {
        Some((sys, ev)) => {
            let full = format!("{sys}__{ev}");
            names.iter().filter(|n| **n == full).collect()
        }
        None => {
            let tail = format!("__{want}");
            names.iter().filter(|n| n.ends_with(&tail)).collect()
        }
    };
    match hits.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(pyo3::exceptions::PyKeyError::new_err(format!(
            "no table {want:?} (tables: {})",
            names.join(", ")
        ))),
        many => Err(pyo3::exceptions::PyKeyError::new_err(format!(
            "{want:?} names several tables: {}",
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The tables of `meta` with their columns and Arrow types, per event
/// class (for `Trace.event_classes()`).
pub fn class_schemas<'py>(py: Python<'py>, meta: &TraceMeta) -> PyResult<Bound<'py, PyList>> {
    let l = PyList::empty(py);
    for (c, (table, schema)) in meta.classes.iter().zip(tables(meta)) {
        let d = PyDict::new(py);
        d.set_item("system", &c.system)?;
        d.set_item("name", &c.name)?;
        d.set_item("id", c.id)?;
        d.set_item("table", table)?;
        let cols = PyDict::new(py);
        for f in schema.fields() {
            cols.set_item(f.name(), f.data_type().to_string())?;
        }
        d.set_item("columns", cols)?;
        l.append(d)?;
    }
    Ok(l)
}

#[pymethods]
impl Table {
    /// The table's name (`SYSTEM__EVENT`, `events` or `lost`).
    #[getter]
    fn name(&self) -> &str {
        &self.spec.table
    }

    /// The column names.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    /// The Arrow schema (PyCapsule protocol: `pyarrow.schema(t)`).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyArrowResult<Bound<'py, PyCapsule>> {
        to_schema_pycapsule(py, self.schema.as_ref())
    }

    /// The rows as an Arrow C stream; each call reads the trace anew.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyCapsule>>,
    ) -> PyArrowResult<Bound<'py, PyCapsule>> {
        let field = Field::new_struct("", self.schema.fields().clone(), false)
            .with_metadata(self.schema.metadata().clone());
        let reader = StreamReader {
            rx: self.start(),
            field: Arc::new(field),
            done: false,
        };
        to_stream_pycapsule(py, Box::new(reader), requested_schema)
    }

    /// The whole table as a `pyarrow.Table` (needs pyarrow).
    fn to_arrow<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.collect(py)?.into_pyarrow(py)
    }

    /// The whole table as a pandas DataFrame (needs pyarrow and pandas).
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.to_arrow(py)?.call_method0("to_pandas")
    }

    /// The whole table as a polars DataFrame (needs polars).
    fn to_polars<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let t = self.collect(py)?;
        py.import("polars")?.getattr("DataFrame")?.call1((t,))
    }

    /// Number of rows (reads the table once).
    fn num_rows(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self
            .collect(py)?
            .batches()
            .iter()
            .map(|b| b.num_rows())
            .sum())
    }

    fn __repr__(&self) -> String {
        format!(
            "<tracemux.Table {} ({} columns)>",
            self.spec.table,
            self.schema.fields().len()
        )
    }
}
