//! `tracemux.open()` and the `Trace` object: what a trace says about
//! itself, and the ways to read it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use tracemux_core::model::{Record, TraceMeta};

use crate::errors;
use crate::events::{EventIter, Filter};
use crate::opener as open;
use crate::table::Table;
use tracemux_table::scan::ScanSpec;

/// What one pass over every record finds (computed on first need).
#[derive(Debug, Default, Clone)]
struct Stats {
    first_ts: Option<u64>,
    last_ts: Option<u64>,
    events: u64,
    lost_markers: u64,
    lost_events: u64,
    /// Events per `system:name`.
    per_class: BTreeMap<String, u64>,
    damage: Vec<String>,
}

/// A trace opened with [`open`].
#[pyclass(frozen, module = "tracemux", name = "Trace")]
pub struct Trace {
    pub(crate) paths: Vec<PathBuf>,
    pub(crate) strict: bool,
    format: String,
    pub(crate) meta: Arc<TraceMeta>,
    stats: OnceLock<Stats>,
}

impl Trace {
    pub(crate) fn file(&self) -> String {
        self.paths
            .first()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    }

    fn opts(&self) -> open::OpenOptions<'static> {
        open::OpenOptions {
            strict: self.strict,
            ..Default::default()
        }
    }

    fn stats(&self, py: Python<'_>) -> PyResult<&Stats> {
        if let Some(s) = self.stats.get() {
            return Ok(s);
        }
        let file = self.file();
        let strict = self.strict;
        let res = py.detach(|| {
            open::with_source(&self.paths, &self.opts(), |src| {
                let mut s = Stats::default();
                while let Some(rec) = src.next_record().map_err(anyhow::Error::new)? {
                    if s.events % 65536 == 65535 {
                        errors::check_signals()?;
                    }
                    match rec {
                        Record::Event(ev) => {
                            s.events += 1;
                            s.first_ts = Some(s.first_ts.map_or(ev.ts, |t| t.min(ev.ts)));
                            s.last_ts = Some(s.last_ts.map_or(ev.ts, |t| t.max(ev.ts)));
                            let name = ev
                                .class
                                .map(|c| format!("{}:{}", c.system, c.name))
                                .unwrap_or_else(|| format!("<type {}>", ev.type_id));
                            *s.per_class.entry(name).or_default() += 1;
                        }
                        Record::Lost(l) => {
                            s.lost_markers += 1;
                            s.lost_events += l.count.unwrap_or(0);
                        }
                        Record::Damage(e) if strict => return Err(anyhow::Error::new(e)),
                        Record::Damage(e) => s.damage.push(format!("{file}: {e}")),
                    }
                }
                Ok::<_, anyhow::Error>(s)
            })
        });
        let s = res.map_err(|e| errors::to_py(py, e, Some(&file)))?;
        for d in &s.damage {
            errors::warn(py, d)?;
        }
        Ok(self.stats.get_or_init(|| s))
    }
}

/// Open a trace of any format (trace-cmd trace.dat, CTF or an LTTng
/// session, a uftrace data directory, legacy LTT), recognised by content.
/// Several paths are read as one trace (CTF traces, merged by time).
///
/// With `strict=False` (the default) damaged parts are skipped with a
/// `tracemux.TraceWarning`; with `strict=True` they raise `TraceError`.
#[pyfunction]
#[pyo3(name = "open", signature = (path, strict = false))]
pub fn open_trace(py: Python<'_>, path: &Bound<'_, PyAny>, strict: bool) -> PyResult<Trace> {
    let paths: Vec<PathBuf> = if let Ok(p) = path.extract::<PathBuf>() {
        vec![p]
    } else {
        path.extract::<Vec<PathBuf>>()?
    };
    let file = paths
        .first()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let res = py.detach(|| -> anyhow::Result<(String, TraceMeta, Vec<String>)> {
        let first = paths
            .first()
            .ok_or_else(|| anyhow::anyhow!("no trace given"))?;
        let format = open::sniff(first)?.name();
        // what was forgiven while opening (CTF metadata read leniently)
        let notes = std::cell::RefCell::new(Vec::new());
        let note = |n: &str| notes.borrow_mut().push(format!("{file}: {n}"));
        let opts = open::OpenOptions {
            strict,
            on_note: Some(&note),
            ..Default::default()
        };
        let meta = open::with_source(&paths, &opts, |src| {
            Ok::<_, anyhow::Error>(src.meta().clone())
        })?;
        Ok((format, meta, notes.into_inner()))
    });
    let (format, meta, notes) = res.map_err(|e| errors::from_anyhow(py, &e, Some(&file)))?;
    for n in &notes {
        errors::warn(py, n)?;
    }
    Ok(Trace {
        paths,
        strict,
        format,
        meta: Arc::new(meta),
        stats: OnceLock::new(),
    })
}

fn clocks<'py>(py: Python<'py>, meta: &TraceMeta) -> PyResult<Bound<'py, PyList>> {
    let l = PyList::empty(py);
    for c in &meta.clocks {
        let d = PyDict::new(py);
        d.set_item("name", &c.name)?;
        d.set_item("freq", c.freq)?;
        d.set_item("offset_ns", c.offset_ns)?;
        d.set_item("origin_unix_epoch", c.origin_unix_epoch)?;
        d.set_item("description", &c.description)?;
        l.append(d)?;
    }
    Ok(l)
}

#[pymethods]
impl Trace {
    /// The format, as `tracemux info` names it (`trace-cmd trace.dat`,
    /// `CTF 1.8`, `CTF 2`, `uftrace data`, `LTT`).
    #[getter]
    fn format(&self) -> &str {
        &self.format
    }

    /// The paths the trace was opened from.
    #[getter]
    fn paths(&self) -> Vec<PathBuf> {
        self.paths.clone()
    }

    /// Number of CPUs recorded.
    #[getter]
    fn cpus(&self) -> u32 {
        self.meta.cpus
    }

    /// The clocks the timestamps come from (the first is the default):
    /// dicts of name, freq, offset_ns, origin_unix_epoch, description.
    #[getter]
    fn clocks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        clocks(py, &self.meta)
    }

    /// `(first, last)` event timestamp in ns, or None for a trace without
    /// events. Reads every record once (the result is kept).
    #[getter]
    fn time_range(&self, py: Python<'_>) -> PyResult<Option<(u64, u64)>> {
        let s = self.stats(py)?;
        Ok(s.first_ts.zip(s.last_ts))
    }

    /// What the trace says about itself, and what reading all of it finds
    /// (events per class, lost events, damage): a dict.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = &self.meta;
        let s = self.stats(py)?.clone();
        let d = PyDict::new(py);
        d.set_item("paths", self.paths.clone())?;
        d.set_item("format", &self.format)?;
        d.set_item("cpus", m.cpus)?;
        d.set_item("hostname", m.hostname())?;
        d.set_item("uname", &m.uname)?;
        d.set_item("tracer_version", &m.tracer_version)?;
        d.set_item("clocks", clocks(py, m)?)?;
        let buffers = PyList::empty(py);
        for b in &m.buffers {
            let bd = PyDict::new(py);
            bd.set_item("name", &b.name)?;
            bd.set_item("clock", &b.clock)?;
            bd.set_item("cpus", b.cpus)?;
            bd.set_item("page_size", b.page_size)?;
            buffers.append(bd)?;
        }
        d.set_item("buffers", buffers)?;
        let env = PyDict::new(py);
        for (k, v) in &m.env {
            env.set_item(k, v)?;
        }
        d.set_item("env", env)?;
        d.set_item("event_classes", m.classes.len())?;
        d.set_item("tasks", m.tasks.len())?;
        d.set_item("events", s.events)?;
        d.set_item("events_per_class", s.per_class)?;
        d.set_item("lost_markers", s.lost_markers)?;
        d.set_item("lost_events", s.lost_events)?;
        d.set_item("time_range", s.first_ts.zip(s.last_ts))?;
        d.set_item("damage", s.damage)?;
        Ok(d)
    }

    /// The events, in time order, as `Event` objects (ts, cpu, pid, comm,
    /// system, name, fields). `begin`/`end`: ns, inclusive; `events`:
    /// names (`sched_switch` or `sched:sched_switch`); `cpus`, `pids`:
    /// lists to keep. `lost=True`: `Lost` markers (ts, cpu, buffer,
    /// count) come too, in their place in time, as `report --json` has
    /// them; only `begin`/`end` and `cpus` select them.
    #[pyo3(signature = (begin = None, end = None, events = None, cpus = None, pids = None, lost = false))]
    fn events(
        &self,
        begin: Option<u64>,
        end: Option<u64>,
        events: Option<Vec<String>>,
        cpus: Option<Vec<u32>>,
        pids: Option<Vec<i32>>,
        lost: bool,
    ) -> EventIter {
        let filter = Filter {
            begin,
            end,
            events,
            cpus,
            pids,
            lost,
        };
        EventIter::start(self.paths.clone(), self.strict, self.meta.clone(), filter)
    }

    /// The event classes: dicts of system, name, id, table (the name of
    /// its table) and columns (column name -> Arrow type of the table).
    fn event_classes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::table::class_schemas(py, &self.meta)
    }

    /// One table as Arrow data: an event class's events (`sched_switch`,
    /// `sched:sched_switch` or its table name `sched__sched_switch`), one
    /// column per field; `events` (every event, fields as JSON text) or
    /// `lost`. `columns`: the columns to build; `begin`/`end` (ns,
    /// inclusive), `cpus`, `pids`: rows to keep; `limit`: at most that
    /// many rows.
    #[pyo3(signature = (name, columns = None, begin = None, end = None, cpus = None, pids = None, limit = None))]
    #[allow(clippy::too_many_arguments)]
    fn table(
        &self,
        name: &str,
        columns: Option<Vec<String>>,
        begin: Option<i64>,
        end: Option<i64>,
        cpus: Option<Vec<u32>>,
        pids: Option<Vec<i32>>,
        limit: Option<usize>,
    ) -> PyResult<Table> {
        let spec = ScanSpec {
            columns,
            ts_min: begin,
            ts_max: end,
            cpus,
            pids,
            limit,
            ..ScanSpec::table(&crate::table::resolve(&self.meta, name)?)
        };
        Table::new(self.paths.clone(), self.strict, &self.meta, spec)
    }

    /// Every table of the trace (one per event class, `events`, `lost`),
    /// by name; nothing is read until a table is.
    fn tables(&self) -> PyResult<BTreeMap<String, Table>> {
        let mut out = BTreeMap::new();
        for (name, _) in tracemux_table::scan::tables(&self.meta) {
            let t = Table::new(
                self.paths.clone(),
                self.strict,
                &self.meta,
                ScanSpec::table(&name),
            )?;
            out.insert(name, t);
        }
        Ok(out)
    }

    /// The whole trace as text, as `tracemux report --style STYLE` prints
    /// it: `json` (JSON lines, as `--json`), `babeltrace` (babeltrace2's
    /// text) or `trace-cmd` (trace-cmd report's lines). Damage is warned
    /// about (an error with strict=True).
    #[pyo3(signature = (style = "json"))]
    fn report(&self, py: Python<'_>, style: &str) -> PyResult<String> {
        use tracemux_render::style::{ModelPrinter, ModelStyle};
        let style = match style {
            "json" => ModelStyle::Json,
            "babeltrace" => ModelStyle::Babeltrace,
            "trace-cmd" | "tracecmd" => ModelStyle::TraceCmd,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "style {other:?}: one of 'json', 'babeltrace', 'trace-cmd'"
                )))
            }
        };
        let file = self.file();
        let strict = self.strict;
        let res = py.detach(|| {
            open::with_source(&self.paths, &self.opts(), |src| {
                let meta = src.meta().clone();
                let mut p = ModelPrinter::new(&meta, style);
                let mut out = Vec::new();
                let mut damage = Vec::new();
                let mut n = 0u32;
                while let Some(rec) = src.next_record().map_err(anyhow::Error::new)? {
                    n = n.wrapping_add(1);
                    if n % 65536 == 0 {
                        errors::check_signals()?;
                    }
                    match rec {
                        Record::Event(ev) => p.event(&mut out, &meta, &ev),
                        Record::Lost(l) => p.lost(&mut out, &meta, &l),
                        Record::Damage(e) if strict => return Err(anyhow::Error::new(e)),
                        Record::Damage(e) => damage.push(format!("{file}: {e}")),
                    }
                }
                Ok::<_, anyhow::Error>((out, damage))
            })
        });
        let (out, damage) = res.map_err(|e| errors::to_py(py, e, Some(&file)))?;
        for d in &damage {
            errors::warn(py, d)?;
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// Run the SQL statement `query` (DataFusion's dialect) over every
    /// table of the trace (`tables()`' names, plus `thread`, `process`,
    /// `sched_slice`, `thread_state` derived from the scheduler's events)
    /// and return the result as a `pyarrow.Table` (without pyarrow: an
    /// object that speaks the Arrow PyCapsule protocol, for polars or
    /// duckdb). `tables` and `describe TABLE` list tables and columns.
    /// Only when the package was built with the cargo feature `sql`
    /// (NotImplementedError otherwise).
    fn sql<'py>(&self, py: Python<'py>, query: &str) -> PyResult<Bound<'py, PyAny>> {
        let t = crate::sql::run(py, self, query)?;
        if py.import("pyarrow").is_ok() {
            t.into_pyarrow(py)
        } else {
            Ok(Bound::new(py, t)?.into_any())
        }
    }

    fn __repr__(&self) -> String {
        let p: Vec<String> = self.paths.iter().map(|p| p.display().to_string()).collect();
        format!("<tracemux.Trace {} ({})>", p.join(", "), self.format)
    }
}
