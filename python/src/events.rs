//! `Trace.events()`: events one by one as light Python objects.
//!
//! The readers borrow memory maps, so a source cannot outlive the call that
//! opened it. A worker thread opens the trace, reads it and sends owned
//! batches over a bounded channel (two batches ahead: memory stays flat
//! whatever the trace size); the iterator turns them into `Event` objects.
//! Decoding happens on the worker, without the GIL; the iterator waits for
//! a batch with the GIL released and checks for Ctrl-C between batches.
//! Dropping the iterator drops the receiver, and the worker stops at its
//! next send.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString};
use tracemux_core::layout::ClassMap;
use tracemux_core::model::{
    Event as ModelEvent, EventClass, Lost as ModelLost, Record, RecordSource, TraceMeta,
};

use crate::errors::{self, Place};
use crate::opener as open;

/// Events per batch sent by the worker.
const BATCH: usize = 4096;

/// Which events `events()` yields.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub begin: Option<u64>,
    pub end: Option<u64>,
    /// `name` or `system:name`.
    pub events: Option<Vec<String>>,
    pub cpus: Option<Vec<u32>>,
    pub pids: Option<Vec<i32>>,
    /// Yield lost-event markers too (only the time range and CPUs select
    /// them: a loss has no pid or class).
    pub lost: bool,
}

impl Filter {
    fn class_wanted(&self, c: Option<&EventClass>) -> bool {
        let Some(want) = &self.events else {
            return true;
        };
        let Some(c) = c else { return false };
        want.iter().any(|w| match w.split_once(':') {
            Some((sys, name)) => sys == c.system && name == c.name,
            None => *w == c.name,
        })
    }
    fn keeps(&self, ev: &ModelEvent<'_>) -> bool {
        !(self.begin.is_some_and(|b| ev.ts < b)
            || self.end.is_some_and(|e| ev.ts > e)
            || self.cpus.as_ref().is_some_and(|c| !c.contains(&ev.cpu))
            || self.pids.as_ref().is_some_and(|p| !p.contains(&ev.pid)))
    }
    fn keeps_lost(&self, l: &ModelLost) -> bool {
        self.lost
            && !(self.begin.is_some_and(|b| l.ts < b)
                || self.end.is_some_and(|e| l.ts > e)
                || self.cpus.as_ref().is_some_and(|c| !c.contains(&l.cpu)))
    }
}

/// One event, owned; its payload is a range of [`Batch::payload`].
struct Ev {
    ts: u64,
    cpu: u32,
    pid: i32,
    /// Index into the classes sent so far (`u32::MAX`: no class).
    class: u32,
    type_id: u32,
    payload: std::ops::Range<usize>,
}

enum Item {
    Event(Ev),
    Lost(ModelLost),
    /// Damage read around (lenient mode).
    Damage(String),
}

#[derive(Default)]
struct Batch {
    /// Classes seen for the first time in this batch: (system, name).
    new_classes: Vec<(String, String)>,
    items: Vec<Item>,
    payload: Vec<u8>,
}

enum Msg {
    Batch(Batch),
    /// Reading stopped on an error (message, place).
    Error(String, Place),
}

/// The worker: open `paths`, read every record, send batches.
fn work(paths: Vec<PathBuf>, strict: bool, filter: Filter, tx: SyncSender<Msg>) {
    let res = on_worker(&paths, strict, |src, file| {
        let meta: TraceMeta = src.meta().clone();
        // class -> (index sent, wanted)
        let mut classes: ClassMap<(u32, bool)> = ClassMap::new();
        let mut sent = 0u32;
        let mut batch = Batch::default();
        let mut json = tracemux_render::jsonl::JsonWriter::new();
        loop {
            let rec = match src.next_record() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => {
                    let _ = tx.send(Msg::Batch(std::mem::take(&mut batch)));
                    let _ = tx.send(Msg::Error(format!("{file}: {e}"), Place::of(file, &e)));
                    return Ok(());
                }
            };
            match rec {
                Record::Event(ev) => {
                    if !filter.keeps(&ev) {
                        continue;
                    }
                    let class = match ev.class {
                        Some(c) => {
                            let (idx, wanted) = *classes.get_or_insert_with(c.index, || {
                                batch.new_classes.push((c.system.clone(), c.name.clone()));
                                sent += 1;
                                (sent - 1, filter.class_wanted(Some(c)))
                            });
                            if !wanted {
                                continue;
                            }
                            idx
                        }
                        None if filter.class_wanted(None) => u32::MAX,
                        None => continue,
                    };
                    let start = batch.payload.len();
                    json.payload(&mut batch.payload, &meta, &ev);
                    batch.items.push(Item::Event(Ev {
                        ts: ev.ts,
                        cpu: ev.cpu,
                        pid: ev.pid,
                        class,
                        type_id: ev.type_id,
                        payload: start..batch.payload.len(),
                    }));
                }
                Record::Lost(l) => {
                    if filter.keeps_lost(&l) {
                        batch.items.push(Item::Lost(l));
                    }
                }
                Record::Damage(e) => {
                    if strict {
                        let _ = tx.send(Msg::Batch(std::mem::take(&mut batch)));
                        let _ = tx.send(Msg::Error(format!("{file}: {e}"), Place::of(file, &e)));
                        return Ok(());
                    }
                    batch.items.push(Item::Damage(format!("{file}: {e}")));
                }
            }
            if batch.items.len() >= BATCH
                && tx.send(Msg::Batch(std::mem::take(&mut batch))).is_err()
            {
                // the iterator is gone
                return Ok(());
            }
        }
        let _ = tx.send(Msg::Batch(batch));
        Ok(())
    });
    if let Err((msg, place)) = res {
        let _ = tx.send(Msg::Error(msg, place));
    }
}

/// Open `paths` on this (worker) thread and run `f` on the source and the
/// name of the first file; an error of either comes back as the message
/// and place of a `TraceError`.
pub(crate) fn on_worker(
    paths: &[PathBuf],
    strict: bool,
    f: impl FnOnce(&mut dyn RecordSource, &str) -> anyhow::Result<()>,
) -> Result<(), (String, Place)> {
    let file = paths
        .first()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let opts = open::OpenOptions {
        strict,
        ..Default::default()
    };
    open::with_source(paths, &opts, |src| f(src, &file))
        .map_err(|e| (format!("{e:#}"), Place::of_anyhow(Some(&file), &e)))
}

/// Wait for the next message with the GIL released, checking for Ctrl-C
/// every tenth of a second. `None`: the worker is done (or the receiver
/// closed).
pub(crate) fn recv<T: Send>(
    py: Python<'_>,
    rx: &Mutex<Option<Receiver<T>>>,
) -> PyResult<Option<T>> {
    loop {
        let got = py.detach(|| {
            let guard = rx.lock().unwrap_or_else(|p| p.into_inner());
            match guard.as_ref() {
                Some(rx) => rx.recv_timeout(Duration::from_millis(100)),
                None => Err(RecvTimeoutError::Disconnected),
            }
        });
        match got {
            Ok(m) => return Ok(Some(m)),
            Err(RecvTimeoutError::Disconnected) => return Ok(None),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
        }
    }
}

/// An event: `ts` (ns), `cpu`, `pid`, `comm`, `system`, `name`, and
/// `fields`, the payload as `tracemux report --json` gives it (parsed on
/// first access).
#[pyclass(frozen, module = "tracemux", name = "Event")]
pub struct Event {
    #[pyo3(get)]
    ts: u64,
    #[pyo3(get)]
    cpu: u32,
    #[pyo3(get)]
    pid: i32,
    #[pyo3(get)]
    comm: Option<Py<PyString>>,
    #[pyo3(get)]
    system: Option<Py<PyString>>,
    #[pyo3(get)]
    name: Option<Py<PyString>>,
    /// The stored type id (for events of no known class).
    #[pyo3(get)]
    type_id: u32,
    payload: Py<PyBytes>,
    fields: PyOnceLock<Py<PyAny>>,
}

static JSON_LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

#[pymethods]
impl Event {
    /// The payload's fields as a dict, exactly as in `tracemux report --json`.
    #[getter]
    fn fields(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let f = self.fields.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            let loads = JSON_LOADS.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
                Ok(py.import("json")?.getattr("loads")?.unbind())
            })?;
            loads.call1(py, (self.payload.clone_ref(py),))
        })?;
        Ok(f.clone_ref(py))
    }

    /// The fields as `report --json` wrote them (JSON text).
    #[getter]
    fn fields_json(&self, py: Python<'_>) -> Py<PyBytes> {
        self.payload.clone_ref(py)
    }

    /// All of it as a dict.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("ts", self.ts)?;
        d.set_item("cpu", self.cpu)?;
        d.set_item("pid", self.pid)?;
        d.set_item("comm", &self.comm)?;
        d.set_item("system", &self.system)?;
        d.set_item("name", &self.name)?;
        d.set_item("fields", self.fields(py)?)?;
        Ok(d)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let s = |o: &Option<Py<PyString>>| {
            o.as_ref()
                .map(|s| s.bind(py).to_string())
                .unwrap_or_else(|| "None".into())
        };
        format!(
            "Event(ts={}, cpu={}, pid={}, comm={}, name={}:{}, fields={})",
            self.ts,
            self.cpu,
            self.pid,
            s(&self.comm),
            s(&self.system),
            s(&self.name),
            String::from_utf8_lossy(self.payload.bind(py).as_bytes())
        )
    }
}

/// Events lost before `ts` on `cpu` (`events(lost=True)`): the ring
/// buffer overran or a packet was discarded. `count`: how many, when the
/// tracer counted them. As `report --json`'s `{"type":"lost"}` lines.
#[pyclass(frozen, module = "tracemux", name = "Lost")]
pub struct Lost {
    #[pyo3(get)]
    ts: u64,
    #[pyo3(get)]
    cpu: u32,
    #[pyo3(get)]
    buffer: String,
    #[pyo3(get)]
    count: Option<u64>,
}

#[pymethods]
impl Lost {
    /// All of it as a dict.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("ts", self.ts)?;
        d.set_item("cpu", self.cpu)?;
        d.set_item("buffer", &self.buffer)?;
        d.set_item("count", self.count)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        let count = self.count.map_or("None".to_string(), |c| c.to_string());
        format!(
            "Lost(ts={}, cpu={}, buffer={:?}, count={count})",
            self.ts, self.cpu, self.buffer
        )
    }
}

/// The iterator `Trace.events()` returns.
#[pyclass(module = "tracemux", name = "EventIterator")]
pub struct EventIter {
    rx: Mutex<Option<Receiver<Msg>>>,
    meta: Arc<TraceMeta>,
    classes: Vec<(Py<PyString>, Py<PyString>)>,
    comms: HashMap<i32, Option<Py<PyString>>>,
    items: std::vec::IntoIter<Item>,
    payload: Vec<u8>,
}

impl EventIter {
    pub fn start(paths: Vec<PathBuf>, strict: bool, meta: Arc<TraceMeta>, filter: Filter) -> Self {
        let (tx, rx) = sync_channel(2);
        std::thread::spawn(move || work(paths, strict, filter, tx));
        EventIter {
            rx: Mutex::new(Some(rx)),
            meta,
            classes: Vec::new(),
            comms: HashMap::new(),
            items: Vec::new().into_iter(),
            payload: Vec::new(),
        }
    }

    fn comm(&mut self, py: Python<'_>, pid: i32) -> Option<Py<PyString>> {
        let meta = &self.meta;
        self.comms
            .entry(pid)
            .or_insert_with(|| {
                tracemux_render::jsonl::task_name(meta, pid).map(|c| PyString::new(py, c).unbind())
            })
            .as_ref()
            .map(|s| s.clone_ref(py))
    }

    /// The next batch; `false` at the end.
    fn refill(&mut self, py: Python<'_>) -> PyResult<bool> {
        match recv(py, &self.rx)? {
            Some(Msg::Batch(b)) => {
                for (sys, name) in b.new_classes {
                    self.classes.push((
                        PyString::new(py, &sys).unbind(),
                        PyString::new(py, &name).unbind(),
                    ));
                }
                self.items = b.items.into_iter();
                self.payload = b.payload;
                Ok(true)
            }
            Some(Msg::Error(msg, place)) => {
                self.close();
                Err(errors::trace_error(py, &msg, &place))
            }
            None => {
                self.close();
                Ok(false)
            }
        }
    }

    fn close(&mut self) {
        *self.rx.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

#[pymethods]
impl EventIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        loop {
            match self.items.next() {
                Some(Item::Event(ev)) => {
                    let (system, name) = match self.classes.get(ev.class as usize) {
                        Some((s, n)) => (Some(s.clone_ref(py)), Some(n.clone_ref(py))),
                        None => (None, None),
                    };
                    let payload = PyBytes::new(py, &self.payload[ev.payload.clone()]).unbind();
                    let ev = Event {
                        ts: ev.ts,
                        cpu: ev.cpu,
                        pid: ev.pid,
                        comm: self.comm(py, ev.pid),
                        system,
                        name,
                        type_id: ev.type_id,
                        payload,
                        fields: PyOnceLock::new(),
                    };
                    return Ok(Some(Py::new(py, ev)?.into_any()));
                }
                Some(Item::Lost(l)) => {
                    let lost = Lost {
                        ts: l.ts,
                        cpu: l.cpu,
                        buffer: tracemux_render::jsonl::buffer_name(&self.meta, l.stream).into(),
                        count: l.count,
                    };
                    return Ok(Some(Py::new(py, lost)?.into_any()));
                }
                Some(Item::Damage(msg)) => errors::warn(py, &msg)?,
                None => {
                    if !self.refill(py)? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Stop reading (the worker ends at its next batch).
    fn close_(&mut self) {
        self.close();
    }
}
